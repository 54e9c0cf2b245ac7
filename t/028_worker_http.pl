# t/028_worker_http.pl: jobq-http, the HTTP delivery of jobs
# (doc/jobq-http.md) under jobq-worker --persistent, against a real HTTP
# server on loopback (t/http_receiver.py): the payload POSTed with the
# job's headers and an HMAC signature the receiver verifies; 2xx completes
# with the body as the result; 429 and 503 retry after Retry-After; other
# 4xx fail for good; 5xx and timeouts retry; connections are reused; bad
# options are refused.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use JobqTest;
use JSON::PP;

my $node = new_node('http');
my $tmp = PostgreSQL::Test::Utils::tempdir();
my $http = JobqTest::worker_bin() =~ s/jobq-worker$/jobq-http/r;
$node->safe_psql('postgres',
	"SELECT jobq_create_queue('hooks', max_attempts => 5, backoff_base => '0', backoff_cap => '0')");

open my $fh, '>', "$tmp/key" or die;
print $fh "s3cret key\n";
close $fh;
my $receiver = IPC::Run::start([ 'python3', "$ENV{TESTDIR}/t/http_receiver.py", "$tmp/port",
	"$tmp/requests.log", "$tmp/key" ], '>&', "$tmp/receiver.out");
usleep(50_000) until -s "$tmp/port";
my $port = slurp_file("$tmp/port");
my $url = "http://127.0.0.1:$port/hook";

sub requests
{
	return [] unless -e "$tmp/requests.log";
	return [ map { decode_json($_) } split /\n/, slurp_file("$tmp/requests.log") ];
}

my @p = ('{"n": 1}', '{"n": 2, "body": "plain text"}', '{"code": 201, "body": ""}',
	'{"code": 404, "body": "no such hook"}', '{"code": 429, "retry_after": "120"}',
	'{"code": 503, "retry_after": "Wed, 21 Oct 2099 07:28:00 GMT"}', '{"code": 500, "body": "oops"}',
	'{"sleep": 3}', '{"code": 302}');
my $ids = $node->safe_psql('postgres',
	"SELECT string_agg(id::text, ',' ORDER BY id) FROM jobq_enqueue_batch('hooks', ARRAY["
	  . join(',', map { "'$_'" } @p) . ']::jsonb[])');
my @id = split /,/, $ids;
my $w = start_worker($node, '-q', 'hooks', '-c', '16', '--persistent=1', '--burst',
	'--', $http, '--secret-file', "$tmp/key", '--timeout', '1s', '--header', 'X-Extra: yes', $url);
is(stop_worker($w), 0, 'the worker drains the queue through jobq-http and exits 0');

sub job { return $node->safe_psql('postgres', "SELECT $_[1] FROM jobq_job($_[0])"); }

is(job($id[0], "state || ' ' || result::text"), 'completed {"got": {"n": 1}}',
	'2xx: completed, the JSON body is the result');
is(job($id[1], "state || ' ' || result::text"), 'completed "plain text"',
	'2xx: a body that is not JSON is stored as a JSON string');
is(job($id[2], "state || ' ' || coalesce(result::text, 'NULL')"), 'completed NULL',
	'201 with an empty body: completed, result NULL');
is(job($id[3], "state || ' ' || (errors->-1->>'error')"), 'dead HTTP 404: no such hook',
	'404: failed for good, with the status and the body');
is(job($id[4], "state || ' ' || (run_at BETWEEN now() + interval '100 s' AND now() + interval '130 s')"),
	'ready true', '429 with Retry-After: 120: retried in 120 s');
is(job($id[5], "state || ' ' || (run_at > now() + interval '300 days')"),
	'ready true', '503 with an HTTP-date Retry-After: retried then (capped at the longest delay)');
is(job($id[6], "state || ' ' || attempt || ' ' || (errors->0->>'error')"), 'dead 5 HTTP 500: oops',
	'500: retried until its attempts ran out');
like(job($id[7], "state || ' ' || (errors->0->>'error')"), qr/^dead HTTP request failed: Timeout was reached/,
	'a response slower than --timeout: retried as a failure');
is(job($id[8], "state || ' ' || (errors->-1->>'error')"), 'dead HTTP 302: redirects are not followed',
	'302: failed for good, not followed');

my $reqs = requests();
my ($first) = grep { $_->{id} eq $id[0] } @$reqs;
is($first->{queue} . ' ' . $first->{attempt} . ' ' . $first->{type} . ' ' . $first->{extra},
	'hooks 1 application/json yes', 'the request carries the job\'s headers and --header');
ok((grep { $_->{signed} && $_->{sig_ok} } @$reqs) == @$reqs,
	'every request is signed, and each signature checks out at the receiver');

# many jobs, at once: throughput over reused connections, every one delivered once
$node->safe_psql('postgres', "DELETE FROM jobq.jobs; DELETE FROM jobq.history");
unlink "$tmp/requests.log";
$node->safe_psql('postgres',
	"SELECT count(*) FROM jobq_enqueue_batch('hooks', ARRAY(SELECT jsonb_build_object('k', i) FROM generate_series(1, 500) i))");
$w = start_worker($node, '-q', 'hooks', '-c', '32', '--persistent=1', '--burst',
	'--', $http, '--jobs', '32', $url);
is(stop_worker($w), 0, '500 jobs: exit 0');
is($node->safe_psql('postgres', "SELECT count(*) FROM jobq.history WHERE state = 'completed'"), '500',
	'500 jobs: all completed');
$reqs = requests();
is(scalar(@$reqs), 500, '500 jobs: 500 requests, none twice');
my %ports = map { $_->{client_port} => 1 } @$reqs;
cmp_ok(scalar(keys %ports), '<', 50,
	'500 jobs: connections are reused (' . scalar(keys %ports) . ' connections for 500 requests, --jobs 32)');
ok(!(grep { $_->{signed} } @$reqs), 'without --secret-file no request is signed');

# bad options: exit 2 with a message, before anything is sent
for my $case ([ [ 'ftp://x' ], qr/the URL must start with http:\/\/ or https:\/\// ],
	[ [], qr/one URL expected/ ],
	[ [ '--jobs', '0', $url ], qr/--jobs must be a whole number between 1 and 1000, not "0"/ ],
	[ [ '--header', 'no colon', $url ], qr/--header must be "NAME: VALUE"/ ],
	[ [ '--secret-file', "$tmp/none", $url ], qr/could not open --secret-file/ ],
	[ [ '--timeout', 'soon', $url ], qr/invalid duration "soon" for --timeout/ ])
{
	my ($out, $err) = ('', '');
	IPC::Run::run([ $http, @{ $case->[0] } ], '<', \'', '>', \$out, '2>', \$err);
	is($? >> 8, 2, "jobq-http @{$case->[0]}: exit 2");
	like($err, $case->[1], "jobq-http @{$case->[0]}: says why");
}
$receiver->kill_kill;
done_testing();

