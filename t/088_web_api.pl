# t/088_web_api.pl: jobq-web (doc/jobq-web.md) driven with curl against a
# real cluster: a non-loopback listen without authentication refuses to
# start; Basic authentication (no or wrong credentials 401, the failure
# limit 429), acting as the user's PostgreSQL role (a read-only user's
# forced POST is 403 and changes nothing); the cross-origin rules of
# every unsafe method (Sec-Fetch-Site, Origin against Host, the
# X-Jobq-Request header); JSON bodies only; the security headers on every
# HTML answer and no-store on the API; job text served as JSON data;
# the bulk actions by ids and by filter in batches, delete and run-now of
# one job, the capped count, the audit trail with the dashboard user as
# actor, a payload past 256 kB cut in the job and whole as a download,
# worker signals and schedule actions (and a viewer refused each);
# --read-only, --prefix, the server-side cache, a statement timeout as 503
# "narrow the filter", and PostgreSQL stopped while polling: /readyz and
# --healthcheck fail, then recover; under valgrind, no memory error or leak.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use JobqTest;
use JSON::PP;
use List::Util ();

my $web = JobqTest::worker_bin() =~ s/jobq-worker$/jobq-web/r;
my $tmp = PostgreSQL::Test::Utils::tempdir();
my $node = new_node('web');
my $connstr = $node->connstr('postgres');

# the connection role has no rights of its own (NOINHERIT): every request
# runs as the role its user maps to
$node->safe_psql('postgres', q{
	CREATE ROLE jobq_web LOGIN NOINHERIT;
	GRANT jobq_admin, jobq_monitor TO jobq_web;
	SELECT jobq_create_queue('mails');
	SELECT jobq_create_queue('big');
	SELECT jobq_enqueue('mails', '{"to": "<img src=x onerror=alert(1)>"}');
});
$node->safe_psql('postgres',
	q{SELECT count(*) FROM generate_series(0, 4) b, LATERAL jobq_enqueue_batch('big',
	    (SELECT array_agg(jsonb_build_object('n', i)) FROM generate_series(b * 10000, b * 10000 + 9999) i))});
my $webconn = "$connstr user=jobq_web";

# start_web(ARGS...): a running jobq-web on a free loopback port;
# start_web_cmd([COMMAND...], ARGS...): the same with a command in front
my $nweb = 0;
sub start_web { return start_web_cmd([], @_); }

sub start_web_cmd
{
	my ($front, @args) = @_;
	my $log = "$tmp/web" . ++$nweb . '.log';
	my $h = IPC::Run::start([ @$front, $web, '-d', $webconn, '--listen', '127.0.0.1:0', @args ], '>&', $log);
	my $port;
	for (1 .. 600)
	{
		if (-e $log && slurp_file($log) =~ m{listening on https?://[0-9.]+:(\d+)})
		{
			$port = $1;
			last;
		}
		usleep(50_000);
	}
	die "jobq-web did not start:\n" . (-e $log ? slurp_file($log) : '') unless $port;
	return { h => $h, port => $port, log => $log };
}

# req(W, METHOD, PATH, [HEADERS], [BODY]): (status, headers, body) with curl
# ($scheme and @curl_extra: for TLS, and a source address)
our $scheme = 'http';
our @curl_extra;
sub req
{
	my ($w, $method, $path, $headers, $body) = @_;
	my @cmd = ('curl', '-s', '-S', '--max-time', '20', '-X', $method, '-D', "$tmp/h", '-o', "$tmp/b",
		'-w', '%{http_code}', @curl_extra);
	unlink "$tmp/h", "$tmp/b";
	push @cmd, '-H', $_ for @{ $headers // [] };
	push @cmd, '--data-binary', $body if defined $body;
	push @cmd, "$scheme://127.0.0.1:$w->{port}$path";
	my ($out, $err) = ('', '');
	IPC::Run::run(\@cmd, '>', \$out, '2>', \$err);
	return ($out, (-e "$tmp/h" ? slurp_file("$tmp/h") : ''), (-e "$tmp/b" ? slurp_file("$tmp/b") : ''));
}

sub paused
{
	return $node->safe_psql('postgres', "SELECT paused FROM jobq_queues() WHERE queue = '$_[0]'");
}

# --- a non-loopback listen without authentication refuses to start
{
	my ($out, $err) = ('', '');
	IPC::Run::run([ $web, '-d', $webconn, '--listen', '0.0.0.0:0' ], '>', \$out, '2>', \$err);
	is($? >> 8, 2, 'a non-loopback listen without --auth: exit 2');
	like($err, qr/refusing to listen on 0\.0\.0\.0 without authentication/, '... saying why');
	IPC::Run::run([ $web, '--auth', 'bogus' ], '>', \$out, '2>', \$err);
	like($err, qr/--auth must be none, basic:FILE or proxy:HEADER/, 'an unknown --auth mode is refused');
}

# --- Basic authentication, mapped to PostgreSQL roles
my $hash_a = crypt('s3cret', '$6$saltsaltsalt$');
my $hash_v = crypt('look', '$6$othersalt$');
like($hash_a, qr/^\$6\$/, 'the system crypt makes SHA-512 hashes');
open my $fh, '>', "$tmp/users" or die;
print $fh "# dashboard users\nadmin:$hash_a:jobq_admin\nviewer:$hash_v:jobq_monitor\n";
close $fh;
my $b = start_web('--auth', "basic:$tmp/users", '--listen', '0.0.0.0:0');
# wrong credentials count towards the limit; none at all (a browser's
# first request) do not
my $failures = 0;

my ($code, $hdr, $body) = req($b, 'GET', '/api/session');
is($code, 401, 'no credentials: 401');
like($hdr, qr/^WWW-Authenticate: Basic realm="jobq-web"/mi, '... with a Basic challenge');
use MIME::Base64;
sub basic { return 'Authorization: Basic ' . encode_base64($_[0], ''); }
($code) = req($b, 'GET', '/api/session', [ basic('admin:wrong') ]);
is($code, 401, 'a wrong password: 401');
$failures++;
($code) = req($b, 'GET', '/api/session', [ basic('nobody:s3cret') ]);
is($code, 401, 'an unknown user: 401');
$failures++;
($code) = req($b, 'GET', '/api/session', ['Authorization: Bearer xyz']);
is($code, 401, 'another scheme: 401');
$failures++;

my $auth_admin = basic('admin:s3cret');
my $auth_viewer = basic('viewer:look');

($code, $hdr, $body) = req($b, 'GET', '/api/session', [$auth_admin]);
is($code, 200, 'the right password: 200');
my $s = decode_json($body);
is_deeply([ $s->{user}, $s->{database}{role}, $s->{database}{admin} ? 1 : 0 ], [ 'admin', 'jobq_admin', 1 ],
	'the request runs as the user\'s role (SET ROLE jobq_admin)');
is($s->{endpoints}{counts}, JSON::PP::true, 'the overview counts with jobq_counts where the server has it');
($code, $hdr, $body) = req($b, 'GET', '/api/session', [$auth_viewer]);
$s = decode_json($body);
is_deeply([ $s->{database}{role}, $s->{database}{admin} ? 1 : 0 ], [ 'jobq_monitor', 0 ],
	'the viewer runs as jobq_monitor, without admin rights');

# the read-only role cannot mutate, even through the API
($code, $hdr, $body) = req($b, 'POST', '/api/queues/mails/pause', [ $auth_viewer, 'X-Jobq-Request: 1' ]);
is($code, 403, 'a jobq_monitor user forcing POST pause: 403 (42501 from the server)');
is(paused('mails'), 'f', '... and the queue is not paused');
my $job1 = $node->safe_psql('postgres', "SELECT min(id) FROM jobq_list('mails')");
$node->safe_psql('postgres', "SELECT jobq_cancel($job1)");
($code) = req($b, 'POST', "/api/jobs/$job1/retry", [ $auth_viewer, 'X-Jobq-Request: 1' ]);
is($code, 403, 'a jobq_monitor user forcing POST retry: 403');
is($node->safe_psql('postgres', "SELECT state FROM jobq_job($job1)"), 'cancelled', '... and the job is unchanged');

# cross-origin protection of unsafe methods
($code, $hdr, $body) = req($b, 'POST', '/api/queues/mails/pause',
	[ $auth_admin, 'Sec-Fetch-Site: cross-site', 'X-Jobq-Request: 1' ]);
is($code, 403, 'Sec-Fetch-Site: cross-site: 403 (the custom header does not help)');
($code) = req($b, 'POST', '/api/queues/mails/pause', [ $auth_admin, 'Sec-Fetch-Site: same-site' ]);
is($code, 403, 'Sec-Fetch-Site: same-site: 403');
($code) = req($b, 'POST', '/api/queues/mails/pause', [ $auth_admin, 'Origin: http://evil.example' ]);
is($code, 403, 'a foreign Origin: 403');
($code, $hdr, $body) = req($b, 'POST', '/api/queues/mails/pause', [$auth_admin]);
is($code, 403, 'no Origin, no Sec-Fetch-Site, no X-Jobq-Request: 403');
like($body, qr/X-Jobq-Request: 1/, '... naming the header that would pass');
is(paused('mails'), 'f', 'none of the refused requests paused the queue');
($code, $hdr, $body) = req($b, 'POST', '/api/queues/mails/pause', [ $auth_admin, 'X-Jobq-Request: 1' ]);
is($code, 200, 'with X-Jobq-Request: 1 (curl in an incident): 200');
is(paused('mails'), 't', '... and the queue is paused');
($code) = req($b, 'POST', '/api/queues/mails/resume', [ $auth_admin, "Origin: http://127.0.0.1:$b->{port}" ]);
is($code, 200, 'an Origin equal to Host: 200');
($code) = req($b, 'POST', '/api/queues/mails/pause', [ $auth_admin, 'Sec-Fetch-Site: same-origin' ]);
is($code, 200, 'Sec-Fetch-Site: same-origin: 200');
is(paused('mails'), 't', '... paused');
req($b, 'POST', '/api/queues/mails/resume', [ $auth_admin, 'X-Jobq-Request: 1' ]);

# JSON bodies only, validated
my @post = ($auth_admin, 'X-Jobq-Request: 1');
($code) = req($b, 'POST', '/api/enqueue', [@post], '{"queue": "mails", "payload": 1}');
is($code, 415, 'a body without Content-Type: application/json: 415');
push @post, 'Content-Type: application/json';
($code, $hdr, $body) = req($b, 'POST', '/api/enqueue', [@post], '{"queue": "mails", "payload": ');
is($code, 400, 'a body that is not JSON: 400');
($code, $hdr, $body) = req($b, 'POST', '/api/enqueue', [@post], '{"queue": "mails", "payload": 1, "evil": 2}');
is($code, 400, 'an unknown member: 400');
($code, $hdr, $body) = req($b, 'POST', '/api/enqueue', [@post], '{"queue": "mails", "payload": {"k": 1}, "priority": 5000}');
is($code, 400, 'a priority the server refuses: 400');
like($body, qr/"sqlstate": "22023"/, '... with its SQLSTATE');
($code, $hdr, $body) = req($b, 'POST', '/api/enqueue', [@post],
	'{"queue": "mails", "payload": {"html": "</script><script>alert(1)</script>"}, "priority": 7}');
is($code, 200, 'a valid enqueue: 200');
my $id = decode_json($body)->{id};
is($node->safe_psql('postgres', "SELECT priority || ' ' || (payload->>'html') FROM jobq_job($id)"),
	'7 </script><script>alert(1)</script>', '... the job is in the database as sent');
($code) = req($b, 'POST', '/api/enqueue', [@post], '{"queue": "mails", "payload": "' . ('x' x 70000) . '"}');
is($code, 413, 'a body over 64 kB: 413');
($code, $hdr, $body) = req($b, 'GET', "/api/jobs/$id", [$auth_admin]);
is(decode_json($body)->{payload}{html}, '</script><script>alert(1)</script>', 'the job\'s text comes back as JSON data');
like($hdr, qr/^Content-Type: application\/json/mi, '... as application/json');
like($hdr, qr/^Cache-Control: no-store/mi, 'the API answers with Cache-Control: no-store');
unlike($body, qr/token/, 'a job never shows its token');
($code) = req($b, 'GET', '/api/jobs/999999999', [$auth_admin]);
is($code, 404, 'a job that does not exist: 404');
($code, $hdr, $body) = req($b, 'GET', '/api/jobs?queue=mails&filters=%7B%22nope%22%3A1%7D', [$auth_admin]);
is($code, 400, 'a bad filter: 400');
($code, $hdr, $body) = req($b, 'GET', '/api/jobs?queue=mails&state=cancelled', [$auth_admin]);
is_deeply([ map { $_->{id} } @{ decode_json($body)->{jobs} } ], [$job1], 'GET /api/jobs lists by state');
($code, $hdr, $body) = req($b, 'POST', "/api/jobs/$job1/cancel", [@post], '{}');
is_deeply(decode_json($body), { id => $job1 + 0, changed => JSON::PP::false }, 'cancel of a cancelled job: changed false');

# the schedules of the server, read as the viewer
$node->safe_psql('postgres', "SELECT jobq_schedule('nightly', 'mails', '0 3 * * *', tz => 'Europe/Berlin')");
($code, $hdr, $body) = req($b, 'GET', '/api/schedules', [$auth_viewer]);
is_deeply([ map { "$_->{name} $_->{queue} $_->{expr} $_->{tz}" } @{ decode_json($body) } ],
	['nightly mails 0 3 * * * Europe/Berlin'], 'GET /api/schedules: jobq_schedules()');

# --- bulk actions by ids and by filter, one-job delete and run-now, the
# count of what a filter selects, the audit trail with the dashboard user
$node->safe_psql('postgres', q{
	SELECT jobq_create_queue('bulk', max_attempts => 1);
	SELECT count(*) FROM jobq_enqueue_batch('bulk', (SELECT array_agg(jsonb_build_object('i', i)) FROM generate_series(1, 4) i));
	SELECT count(jobq_fail(c.id, c.token, 'boom')) FROM jobq_claim('bulk', 'w', 4) c;
	SELECT count(*) FROM jobq_enqueue_batch('bulk', (SELECT array_agg('{}'::jsonb) FROM generate_series(1, 5)));
});
my @dead = split /,/, $node->safe_psql('postgres', "SELECT string_agg(id::text, ',' ORDER BY id) FROM jobq_list('bulk', 'dead')");
is(scalar @dead, 4, 'four dead jobs in queue bulk');
my $states = sub { $node->safe_psql('postgres', "SELECT string_agg(state || ':' || n, ' ' ORDER BY state) FROM (SELECT state, count(*) n FROM jobq_list('bulk', NULL, 1000) GROUP BY state) s") };
($code, $hdr, $body) = req($b, 'GET', '/api/jobs/count?queue=bulk&state=dead', [$auth_viewer]);
is_deeply(decode_json($body), { count => 4, capped => JSON::PP::false }, 'GET /api/jobs/count: the dead jobs of bulk, not capped');
($code, $hdr, $body) = req($b, 'POST', '/api/jobs/retry', [ $auth_viewer, 'X-Jobq-Request: 1', 'Content-Type: application/json' ],
	qq{{"ids": [$dead[0]]}});
is($code, 403, 'a jobq_monitor user forcing a bulk retry: 403');
is($states->(), 'dead:4 ready:5', '... and nothing changed');
for my $bad ([ qq{{"ids": [$dead[0]], "queue": "bulk"}}, 'either ids or queue' ], [ '{"ids": 7}', 'array of job ids' ],
	[ '{}', 'either ids or queue' ], [ '{"queue": "bulk", "nope": 1}', 'unknown member' ])
{
	($code, $hdr, $body) = req($b, 'POST', '/api/jobs/retry', [@post], $bad->[0]);
	ok($code == 400 && $body =~ /$bad->[1]/, "a bulk body $bad->[0]: 400, $bad->[1]") or diag("$code $body");
}
($code, $hdr, $body) = req($b, 'POST', '/api/jobs/cancel', [@post], '{"queue": "bulk", "state": "running"}');
is($code, 400, 'a state the action does not take: 400 (the server\'s 22023)');
like($body, qr/"sqlstate": "22023"/, '... with its SQLSTATE');
($code, $hdr, $body) = req($b, 'POST', '/api/jobs/retry', [@post], qq{{"ids": [$dead[0], $dead[1], 999999999]}});
is_deeply(decode_json($body), { affected => 2, skipped => 1 }, 'POST /api/jobs/retry by ids: 2 retried, the unknown one skipped');
is($states->(), 'dead:2 ready:7', '... the database agrees');
# by filter, two jobs a batch: the client loops on next_cursor while more
my ($total, $calls, $after) = (0, 0, undef);
while (1)
{
	my $q = { queue => 'bulk', state => 'ready', max_rows => 2, after => $after };
	($code, $hdr, $body) = req($b, 'POST', '/api/jobs/cancel', [@post], encode_json($q));
	my $r = decode_json($body);
	$total += $r->{affected};
	$calls++;
	last unless $r->{more} && $calls < 10;
	$after = $r->{next_cursor};
}
is("$total $calls", '7 4', 'POST /api/jobs/cancel by filter in batches of 2: 7 cancelled in 4 calls');
is($states->(), 'cancelled:7 dead:2', '... the database agrees');
($code, $hdr, $body) = req($b, 'POST', '/api/jobs/delete', [@post], '{"queue": "bulk", "state": "cancelled", "max_rows": 1000}');
is_deeply(decode_json($body), { affected => 7, more => JSON::PP::false, next_cursor => undef }, 'POST /api/jobs/delete by filter: 7 deleted, no more');
($code, $hdr, $body) = req($b, 'POST', "/api/jobs/$dead[2]/delete", [@post], '{}');
is_deeply(decode_json($body), { id => $dead[2] + 0, changed => JSON::PP::true }, 'POST /api/jobs/ID/delete: deleted');
is($states->(), 'dead:1', '... the database agrees');
my $later = $node->safe_psql('postgres', "SELECT jobq_enqueue('bulk', '{}', delay => '1 hour')");
($code, $hdr, $body) = req($b, 'POST', "/api/jobs/$later/run-now", [@post], '{}');
is_deeply(decode_json($body), { id => $later + 0, changed => JSON::PP::true }, 'POST /api/jobs/ID/run-now: made due');
is($node->safe_psql('postgres', "SELECT run_at <= now() FROM jobq_job($later)"), 't', '... its run_at is now');
# (the one-job delete names its queue: the server finds it before the job
# is gone)
($code, $hdr, $body) = req($b, 'GET', '/api/audit?limit=9', [$auth_admin]);
my @audit = @{ decode_json($body) };
is_deeply([ map { join ' ', $_->{actor}, $_->{role}, $_->{action}, $_->{queue} // '-', $_->{affected} } reverse @audit ],
	[ 'postgres postgres create_queue bulk 1', 'admin jobq_admin retry_many bulk 2',
	  (map { "admin jobq_admin cancel_where bulk $_" } 2, 2, 2, 1),
	  'admin jobq_admin delete_where bulk 7', 'admin jobq_admin delete_many bulk 1', 'admin jobq_admin run_now_many bulk 1' ],
	'GET /api/audit: every action, with the dashboard user as actor, newest first');
($code, $hdr, $body) = req($b, 'GET', '/api/audit?queue=bulk&limit=2&before=' . $audit[1]{id}, [$auth_admin]);
is_deeply([ map { $_->{action} } @{ decode_json($body) } ], [ 'delete_where', 'cancel_where' ],
	'... of one queue, the page before a row id');
($code) = req($b, 'GET', '/api/audit', [$auth_viewer]);
is($code, 403, 'the audit trail is jobq_admin\'s: 403 for the viewer');

# --- queue settings: PATCH /api/queues/Q (jobq_alter_queue), as described by the session
($code, $hdr, $body) = req($b, 'GET', '/api/session', [$auth_admin]);
my %desc = map { $_->{name} => $_ } @{ decode_json($body)->{settings} };
is_deeply([ $desc{lease}{kind}, $desc{max_attempts}{kind}, $desc{notify}{kind}, $desc{group_mode}{kind},
	join(',', @{ $desc{group_mode}{choices} }) ], [ 'SECONDS', 'INTEGER', 'BOOLEAN', 'CHOICE', 'none,fifo,limit' ],
	'the session describes every queue setting (kind, choices) from jobq-contract.h');
my @patch = ($auth_admin, 'X-Jobq-Request: 1', 'Content-Type: application/json');
my $setting = sub { $node->safe_psql('postgres', "SELECT $_[0] FROM jobq_queues() WHERE queue = 'bulk'") };
($code) = req($b, 'PATCH', '/api/queues/bulk', [ $auth_viewer, 'X-Jobq-Request: 1', 'Content-Type: application/json' ],
	'{"max_attempts": 9}');
is("$code " . $setting->('max_attempts'), '403 1', 'the viewer cannot change a setting');
($code, $hdr, $body) = req($b, 'PATCH', '/api/queues/bulk', [@patch],
	'{"max_attempts": 9, "lease": "10 minutes", "notify": false, "group_order": "round_robin", "rate": null}');
is($code, 200, 'PATCH /api/queues/Q: 200');
is(join(' ', map { $setting->($_) } qw(max_attempts lease notify group_order rate)), '9 00:10:00 f round_robin 0',
	'... the settings given are changed, a null one is left as it was');
is($node->safe_psql('postgres', "SELECT actor || ' ' || action FROM jobq_audit(max_rows => 1)"), 'admin alter_queue',
	'... and the audit trail has it');
for my $bad ([ '{"nope": 1}', 400, 'unknown queue setting' ], [ '{"max_attempts": "x"}', 400, 'wrong type' ],
	[ '{"max_attempts": 0}', 400, '22023' ], [ '{"group_mode": "chaos"}', 400, '22023' ])
{
	($code, $hdr, $body) = req($b, 'PATCH', '/api/queues/bulk', [@patch], $bad->[0]);
	ok($code == $bad->[1] && $body =~ /$bad->[2]/, "PATCH $bad->[0]: $bad->[1], $bad->[2]") or diag("$code $body");
}
is($setting->('max_attempts'), '9', 'none of the refused changes changed anything');
# (a change the queue's state refuses, class 55, where the server has one:
# issue 19's group_mode while jobs are live)
($code, $hdr, $body) = req($b, 'PATCH', '/api/queues/bulk', [@patch], '{"group_mode": "fifo"}');
ok($code == 200 || ($code == 409 && $body =~ /"sqlstate": "55006"/), 'a group_mode change: done, or 409 with the server\'s reason')
	or diag("$code $body");
($code) = req($b, 'PATCH', '/api/queues/nosuch', [@patch], '{"max_attempts": 2}');
is($code, 404, 'PATCH of an unknown queue: 404');

# --- groups (issue 19), where the server has them: a FIFO group blocked by
# its dead head, listed, and skipped
($code, $hdr, $body) = req($b, 'GET', '/api/session', [$auth_admin]);
SKIP:
{
	skip 'the server has no groups (issue 19)', 6 unless decode_json($body)->{endpoints}{groups};
	my ($g1, $g2, $g3) = split /,/, (split /\n/, $node->safe_psql('postgres', q{
		SELECT jobq_create_queue('fifoq', max_attempts => 1, group_mode => 'fifo');
		SELECT concat_ws(',', jobq_enqueue('fifoq', '{}', group_key => 'acct-1'),
		  jobq_enqueue('fifoq', '{}', group_key => 'acct-1'), jobq_enqueue('fifoq', '{}', group_key => 'acct-2'));
	}))[-1];
	$node->safe_psql('postgres', "SELECT jobq_fail(c.id, c.token, 'card declined') FROM jobq_claim('fifoq', 'w', 1) c");
	($code, $hdr, $body) = req($b, 'GET', '/api/groups?queue=fifoq', [$auth_viewer]);
	is_deeply([ map { join ' ', $_->{key}, $_->{blocked_by} // '-', $_->{head_id} // '-' } @{ decode_json($body) } ],
		[ "acct-1 $g1 $g2", "acct-2 - $g3" ], 'GET /api/groups: the groups, acct-1 blocked by its dead head');
	($code, $hdr, $body) = req($b, 'GET', '/api/groups?queue=fifoq&blocked=1', [$auth_viewer]);
	is_deeply([ map { $_->{key} } @{ decode_json($body) } ], ['acct-1'], '... blocked=1: only the blocked one');
	($code, $hdr, $body) = req($b, 'GET', '/api/groups/blocked?queue=fifoq', [$auth_viewer]);
	is_deeply([ map { "$_->{key} $_->{blocked_by} $_->{error}" } @{ decode_json($body) } ], ["acct-1 $g1 card declined"],
		'GET /api/groups/blocked: the dead head and its error');
	($code) = req($b, 'POST', '/api/groups/skip-head', [ $auth_viewer, 'X-Jobq-Request: 1', 'Content-Type: application/json' ],
		'{"queue": "fifoq", "key": "acct-1"}');
	is($code, 403, 'the viewer cannot skip a head');
	($code, $hdr, $body) = req($b, 'POST', '/api/groups/skip-head', [@patch], '{"queue": "fifoq", "key": "acct-1"}');
	is(decode_json($body)->{id}, $g1, 'POST /api/groups/skip-head: the dead head cancelled');
	is($node->safe_psql('postgres', "SELECT state FROM jobq_job($g1)") . ' ' .
		$node->safe_psql('postgres', "SELECT count(*) FROM jobq_blocked_groups('fifoq')"), 'cancelled 0',
		'... the database agrees: nothing blocked');
}

# --- flows (issue 18), where the server has them: the jobs of a flow, cancelled
($code, $hdr, $body) = req($b, 'GET', '/api/session', [$auth_admin]);
SKIP:
{
	skip 'the server has no flows (issue 18)', 5 unless decode_json($body)->{endpoints}{flows};
	my %ref = map { split /=/ } split /,/, $node->safe_psql('postgres', q{
		SELECT string_agg(ref || '=' || id, ',') FROM jobq_flow('[
		  {"ref": "pdf", "queue": "mails"}, {"ref": "charge", "queue": "mails"},
		  {"ref": "invoice", "queue": "mails", "depends_on": ["pdf", "charge"]}]')
	});
	# (the flow's id is its first job's; $b is a jobq-web here, so no sort block)
	my $fid = List::Util::min(values %ref);
	($code, $hdr, $body) = req($b, 'GET', "/api/flows/$fid", [$auth_viewer]);
	my $fl = decode_json($body);
	is_deeply([ map { join ' ', $_->{id}, $_->{state}, join('+', @{ $_->{depends_on} // [] }) } @{ $fl->{jobs} } ],
		[ "$ref{pdf} ready ", "$ref{charge} ready ", "$ref{invoice} waiting $ref{pdf}+$ref{charge}" ],
		'GET /api/flows/ID: the jobs of the flow, the last waiting for the other two');
	($code) = req($b, 'GET', '/api/flows/999999999', [$auth_viewer]);
	is($code, 404, 'an unknown flow: 404');
	($code) = req($b, 'POST', "/api/flows/$fid/cancel", [ $auth_viewer, 'X-Jobq-Request: 1' ]);
	is($code, 403, 'the viewer cannot cancel a flow');
	($code, $hdr, $body) = req($b, 'POST', "/api/flows/$fid/cancel", [ $auth_admin, 'X-Jobq-Request: 1' ]);
	is(decode_json($body)->{cancelled}, 3, 'POST /api/flows/ID/cancel: its three jobs cancelled');
	is($node->safe_psql('postgres', "SELECT string_agg(DISTINCT state, ',') FROM jobq_flow_jobs($fid)"), 'cancelled',
		'... the database agrees');
}

# --- a value past 256 kB: cut in the job, whole as a download
my $bigid = $node->safe_psql('postgres', q{SELECT jobq_enqueue('bulk', jsonb_build_object('blob', repeat('x', 300000)))});
($code, $hdr, $body) = req($b, 'GET', "/api/jobs/$bigid", [$auth_admin]);
my $bj = decode_json($body);
ok($bj->{payload_truncated} && length($bj->{payload}) <= 262144, 'a payload of 300 kB comes cut in GET /api/jobs/ID');
($code, $hdr, $body) = req($b, 'GET', "/api/jobs/$bigid/raw/payload", [$auth_admin]);
is(length(decode_json($body)->{blob}), 300000, 'GET /api/jobs/ID/raw/payload: the whole value');
like($hdr, qr/^Content-Disposition: attachment; filename="job-$bigid-payload\.json"/mi, '... as an attachment');
like($hdr, qr/^Cache-Control: no-store/mi, '... not stored');
($code) = req($b, 'GET', "/api/jobs/$bigid/raw/result", [$auth_admin]);
is($code, 404, 'a job without a result: raw/result 404');
($code) = req($b, 'GET', "/api/jobs/$bigid/raw/payload", [$auth_viewer]);
is($code, 403, 'the viewer (no jobq_reader) cannot download a payload: 403');

# --- workers and schedules
my $wid = $node->safe_psql('postgres', "SELECT worker_id FROM jobq_worker_register('billing-1', queues => ARRAY['bulk'])");
($code, $hdr, $body) = req($b, 'POST', "/api/workers/$wid/quiet", [ $auth_viewer, 'X-Jobq-Request: 1' ]);
is($code, 403, 'the viewer cannot quiet a worker');
($code, $hdr, $body) = req($b, 'POST', "/api/workers/$wid/quiet", [ $auth_admin, 'X-Jobq-Request: 1' ]);
is(decode_json($body)->{workers}, 1, 'POST /api/workers/ID/quiet: one worker told');
is($node->safe_psql('postgres', "SELECT state FROM jobq_workers() WHERE worker_id = '$wid'"), 'quiet', '... it is quiet');
($code) = req($b, 'POST', "/api/workers/$wid/dance", [ $auth_admin, 'X-Jobq-Request: 1' ]);
is($code, 404, 'an unknown worker signal: 404');
($code, $hdr, $body) = req($b, 'POST', '/api/schedules/nightly/pause', [ $auth_admin, 'X-Jobq-Request: 1' ]);
is($node->safe_psql('postgres', "SELECT paused FROM jobq_schedules() WHERE name = 'nightly'"), 't',
	'POST /api/schedules/NAME/pause: paused');
($code, $hdr, $body) = req($b, 'POST', '/api/schedules/nightly/resume', [ $auth_admin, 'X-Jobq-Request: 1' ]);
ok(decode_json($body)->{next_run_at}, 'POST /api/schedules/NAME/resume: resumed, with its next run');
($code, $hdr, $body) = req($b, 'POST', '/api/schedules/nightly/trigger', [ $auth_admin, 'X-Jobq-Request: 1' ]);
my $manual = decode_json($body)->{id};
is($node->safe_psql('postgres', "SELECT queue || ' ' || state FROM jobq_job($manual)"), 'mails ready',
	'POST /api/schedules/NAME/trigger: a manual run in its queue');
($code, $hdr, $body) = req($b, 'POST', '/api/schedules/nope/trigger', [ $auth_admin, 'X-Jobq-Request: 1' ]);
is($code, 404, 'an unknown schedule: 404');

# the headers of every HTML answer
for my $p ('/', '/jobs', "/jobs/$id", '/workers', '/schedules', '/audit', '/assets/main.js', '/assets/style.css')
{
	($code, $hdr) = req($b, 'GET', $p, [$auth_admin]);
	is($code, 200, "GET $p: 200");
	like($hdr, qr/^Content-Security-Policy: default-src 'none'; script-src 'self'; style-src 'self';/mi,
		"... with the strict CSP");
	like($hdr, qr/^X-Content-Type-Options: nosniff/mi, '... nosniff');
	like($hdr, qr/^Referrer-Policy: same-origin/mi, '... Referrer-Policy');
}
($code, $hdr, $body) = req($b, 'GET', '/', [$auth_admin]);
unlike($body, qr/<script>|<style|\sstyle=|\son[a-z]+=/i, 'index.html has no inline script or style');
($code) = req($b, 'GET', '/', []);
is($code, 401, 'the UI needs authentication too');

# the failure limit: 10 a minute per address, then 429 even for the right password
while ($failures < 10)
{
	($code) = req($b, 'GET', '/api/session', [ basic('admin:nope') ]);
	is($code, 401, 'the tenth failure: still 401') if $failures == 9;
	$failures++;
}
($code, $hdr) = req($b, 'GET', '/api/session', [$auth_admin]);
is($code, 429, 'after 10 failures in a minute: 429, even with the right password');
like($hdr, qr/^Retry-After: 60/mi, '... with Retry-After');
($code) = req($b, 'GET', '/healthz', []);
is($code, 200, '/healthz needs no authentication');
$b->{h}->signal('TERM');
$b->{h}->finish;

# --- proxy authentication: the user header believed only from the proxy
{
	my ($out, $err) = ('', '');
	IPC::Run::run([ $web, '-d', $webconn, '--auth', 'proxy:X-Forwarded-User' ], '>', \$out, '2>', \$err);
	ok($? >> 8 == 2 && $err =~ /needs --trusted-proxy/, '--auth proxy without --trusted-proxy: exit 2');
	IPC::Run::run([ $web, '-d', $webconn, '--trusted-proxy', '127.0.0.2' ], '>', \$out, '2>', \$err);
	ok($? >> 8 == 2 && $err =~ /go with --auth proxy/, '--trusted-proxy without --auth proxy: exit 2');
	IPC::Run::run([ $web, '--trusted-proxy', '127.0.0.1/33' ], '>', \$out, '2>', \$err);
	ok($? >> 8 == 2 && $err =~ /must be an IP address or ADDR\/BITS/, 'a bad --trusted-proxy: exit 2');
}
open $fh, '>', "$tmp/proxy-roles" or die;
print $fh "# who is who\nadmin:jobq_admin\ncarol:jobq_monitor\n";
close $fh;
my $px = start_web('--auth', 'proxy:X-Forwarded-User', '--trusted-proxy', '127.0.0.2/32',
	'--proxy-roles', "$tmp/proxy-roles", '--listen', '0.0.0.0:0');
($code, $hdr, $body) = req($px, 'GET', '/api/session', ['X-Forwarded-User: admin']);
is($code, 403, 'proxy auth: a request not from the proxy is refused, whatever its header says');
like($body, qr/only through its authenticating proxy/, '... saying so');
{
	local @curl_extra = ('--interface', '127.0.0.2');
	($code, $hdr, $body) = req($px, 'GET', '/api/session', ['X-Forwarded-User: admin']);
	$s = decode_json($body);
	is_deeply([ $code, $s->{user}, $s->{database}{role} ], [ 200, 'admin', 'jobq_admin' ],
		'from the proxy: the user it names, as the role of --proxy-roles');
	($code, $hdr, $body) = req($px, 'POST', '/api/queues/mails/pause', [ 'X-Forwarded-User: carol', 'X-Jobq-Request: 1' ]);
	is($code, 403, 'the proxy\'s jobq_monitor user forcing a pause: 403');
	is(paused('mails'), 'f', '... and the queue is not paused');
	($code) = req($px, 'POST', '/api/queues/mails/pause', [ 'X-Forwarded-User: admin', 'X-Jobq-Request: 1' ]);
	is($code, 200, 'the proxy\'s admin pauses');
	is($node->safe_psql('postgres', "SELECT actor FROM jobq_audit(max_rows => 1)"), 'admin', '... and the audit trail names the proxy\'s user');
	req($px, 'POST', '/api/queues/mails/resume', [ 'X-Forwarded-User: admin', 'X-Jobq-Request: 1' ]);
	($code, $hdr, $body) = req($px, 'GET', '/api/session', ['X-Forwarded-User: mallory']);
	ok($code == 403 && $body =~ /no role/, 'a user --proxy-roles does not name: 403');
	($code, $hdr, $body) = req($px, 'GET', '/api/session', []);
	ok($code == 403 && $body =~ /named no user/, 'no user header from the proxy: 403');
	unlike($hdr, qr/WWW-Authenticate/i, '... and no Basic challenge');
}
$px->{h}->signal('TERM');
$px->{h}->finish;

# --- TLS with a self-signed certificate made here
SKIP:
{
	my ($out, $err) = ('', '');
	IPC::Run::run([ 'openssl', 'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
		'-keyout', "$tmp/key.pem", '-out', "$tmp/cert.pem", '-days', '2', '-subj', '/CN=127.0.0.1',
		'-addext', 'subjectAltName=IP:127.0.0.1' ], '>', \$out, '2>', \$err);
	skip 'openssl cannot make a certificate', 8 unless -s "$tmp/cert.pem";
	IPC::Run::run([ $web, '-d', $webconn, '--tls-cert', "$tmp/cert.pem" ], '>', \$out, '2>', \$err);
	ok($? >> 8 == 2 && $err =~ /--tls-cert and --tls-key go together/, '--tls-cert without --tls-key: exit 2');
	IPC::Run::run([ $web, '-d', $webconn, '--tls-cert', "$tmp/cert.pem", '--tls-key', "$tmp/proxy-roles" ], '>', \$out, '2>', \$err);
	ok($? >> 8 == 1 && $err =~ /is not a PEM file/, 'a key that is not PEM: exit 1');
	my $t = start_web('--tls-cert', "$tmp/cert.pem", '--tls-key', "$tmp/key.pem", '--auth', "basic:$tmp/users");
	like(slurp_file($t->{log}), qr{listening on https://127\.0\.0\.1:}, 'TLS: the start line says https');
	{
		local $scheme = 'https';
		local @curl_extra = ('--cacert', "$tmp/cert.pem");
		($code, $hdr, $body) = req($t, 'GET', '/api/session', [$auth_admin]);
		is($code, 200, 'TLS: curl checking the certificate gets the session');
		($code) = req($t, 'POST', '/api/queues/mails/pause', [ $auth_admin, 'X-Jobq-Request: 1' ]);
		is($code, 200, '... and acts');
		req($t, 'POST', '/api/queues/mails/resume', [ $auth_admin, 'X-Jobq-Request: 1' ]);
	}
	($code) = req($t, 'GET', '/api/session');
	isnt($code, 200, 'TLS: plain http to it gets nothing');
	my $check = sub {
		IPC::Run::run([ $web, '--listen', "127.0.0.1:$t->{port}", '--healthcheck', @_ ], '>', \$out, '2>', \$err);
		return $? >> 8;
	};
	is($check->('--tls-cert', "$tmp/cert.pem", '--tls-key', "$tmp/key.pem"), 0, 'TLS: --healthcheck with --tls-cert: exit 0');
	is($check->(), 1, '... without it (plain http): exit 1');
	$t->{h}->signal('TERM');
	$t->{h}->finish;
}

# --- libjobq-web: the dashboard under /jobq/ of another libmicrohttpd program
SKIP:
{
	my $ex = example_bin('web_embed');
	skip 'examples/web_embed not built', 4 unless -x $ex;
	my $log = "$tmp/embed.log";
	my $h = IPC::Run::start([ $ex, $connstr, '0' ], '>&', $log);
	my $port;
	for (1 .. 200)
	{
		last if -e $log && (($port) = slurp_file($log) =~ m{listening on http://127\.0\.0\.1:(\d+)/});
		usleep(50_000);
	}
	my $e = { port => $port };
	($code, $hdr, $body) = req($e, 'GET', '/');
	like($body, qr/the application's own page/, 'libjobq-web: the program serves its own page at /');
	($code, $hdr, $body) = req($e, 'GET', '/jobq/api/session');
	is($code, 200, '... and the dashboard\'s API under /jobq/');
	($code, $hdr, $body) = req($e, 'GET', '/jobq/jobs');
	like($body, qr{<base href="/jobq/">}, '... and its UI, with the prefix as base');
	($code) = req($e, 'POST', '/jobq/api/queues/mails/pause', ['X-Jobq-Request: 1']);
	is("$code " . paused('mails'), '200 t', '... and its actions');
	req($e, 'POST', '/jobq/api/queues/mails/resume', ['X-Jobq-Request: 1']);
	$h->signal('TERM');
	$h->finish;
}

# --- --read-only, --prefix and a statement timeout (auth none on loopback:
# the connection role's own rights, here a superuser's)
$webconn = $connstr;
my $r = start_web('--read-only', '--prefix', '/jobq/', '--query-timeout', '1ms');
($code) = req($r, 'POST', '/jobq/api/queues/mails/pause', ['X-Jobq-Request: 1']);
is($code, 403, '--read-only: an unsafe method is 403');
is(paused('mails'), 'f', '... and nothing changed');
($code, $hdr, $body) = req($r, 'GET', '/jobq/api/session');
is(decode_json($body)->{read_only}, JSON::PP::true, '--read-only: the session says so (the UI hides actions)');
($code) = req($r, 'GET', '/healthz');
is($code, 404, '--prefix: nothing outside the prefix');
($code, $hdr, $body) = req($r, 'GET', '/jobq/jobs/1');
like($body, qr{<base href="/jobq/">}, '--prefix: the UI\'s base is the prefix');
($code, $hdr, $body) = req($r, 'GET', '/jobq/api/jobs?queue=big&filters=' . '%7B%22payload%22%3A%7B%22n%22%3A-1%7D%7D');
is($code, 503, 'a query over the statement timeout: 503');
like($body, qr/narrow the filter/, '... "narrow the filter"');
unlike(slurp_file($r->{log}), qr/listening.*\n.*(?:ERROR|FATAL):/, 'the database error went to the log');
like(slurp_file($r->{log}), qr/57014 canceling statement due to statement timeout/, '... which has it');
$r->{h}->signal('TERM');
$r->{h}->finish;

# --- the cache, then PostgreSQL stopped while polling
my $c = start_web('--min-refresh', '1h');
my $ready = sub { (req($c, 'GET', '/api/overview'))[2] =~ /"queue":"mails"[^}]*"ready":(\d+)/ ? $1 : 'none' };
my $before = $ready->();
$node->safe_psql('postgres', "SELECT jobq_enqueue('mails', '{}')");
is($ready->(), $before, 'a second poll within --min-refresh is answered from the cache');
($code) = req($c, 'POST', '/api/sweep', ['X-Jobq-Request: 1']);
is($code, 200, 'POST /api/sweep without a body: 200');
is($ready->(), $before + 1, 'an action drops the cache: the next poll queries');

# the per-client limit of actions: a burst of 60, then 429 (one curl, one
# connection, 80 requests back to back)
{
	my @cmd = ('curl', '-s', '-X', 'POST', '-H', 'X-Jobq-Request: 1', '-w', '%{http_code}\n');
	push @cmd, '-o', '/dev/null', "http://127.0.0.1:$c->{port}/api/queues/nope/pause" for 1 .. 80;
	my $out = '';
	IPC::Run::run(\@cmd, '>', \$out);
	my @codes = split /\n/, $out;
	my ($first429) = grep { $codes[$_] == 429 } 0 .. $#codes;
	# (the sweep above took one of the 60)
	is_deeply([ @codes[ 0 .. 58 ] ], [ (404) x 59 ], 'actions: a burst of 60 goes through (here: 404, no such queue)');
	ok(defined $first429 && $first429 >= 59 && $codes[-1] == 429, 'then 429: too many requests from this address');
	($code, $hdr) = req($c, 'GET', '/api/queues');
	is($code, 200, 'reads have a budget of their own');
}

my $check = sub {
	my ($out, $err) = ('', '');
	IPC::Run::run([ $web, '--listen', "127.0.0.1:$c->{port}", '--healthcheck' ], '>', \$out, '2>', \$err);
	return $? >> 8;
};
($code) = req($c, 'GET', '/readyz');
is($code, 200, '/readyz: 200 with the database up');
is($check->(), 0, '--healthcheck: exit 0');
$node->stop('immediate');
($code) = req($c, 'GET', '/readyz');
is($code, 503, 'PostgreSQL stopped: /readyz 503');
($code, $hdr, $body) = req($c, 'GET', '/api/jobs?queue=mails');
is($code, 503, '... an API read 503');
unlike($body, qr/connection|socket|server closed/i, '... saying nothing about the database');
is($check->(), 1, '... --healthcheck exit 1');
($code) = req($c, 'GET', '/healthz');
is($code, 200, '... /healthz still 200 (the process is fine)');
$node->start;
my $ok = 0;
for (1 .. 50)
{
	($code) = req($c, 'GET', '/readyz');
	if ($code == 200) { $ok = 1; last; }
	usleep(200_000);
}
ok($ok, 'PostgreSQL back: /readyz recovers');
# (the cache keeps a failed answer for a second, not for --min-refresh)
usleep(1_100_000);
($code, $hdr, $body) = req($c, 'GET', '/api/jobs?queue=mails');
is($code, 200, '... and a second later the API recovers too (a failure is kept a second, not --min-refresh)');
$c->{h}->signal('TERM');
$c->{h}->finish;
is($?, 0, 'SIGTERM: exit 0');

# --- under valgrind: no memory error and no leak over every kind of answer
SKIP:
{
	skip 'valgrind is not installed', 2 unless grep { -x "$_/valgrind" } split /:/, $ENV{PATH};
	my $vlog = "$tmp/valgrind.log";
	my $v = start_web_cmd([ 'valgrind', '--leak-check=full', '--errors-for-leak-kinds=definite',
		"--log-file=$vlog" ], '--auth', "basic:$tmp/users", '--threads', '2');
	my @ok = ($auth_admin);
	req($v, 'GET', $_, [@ok]) for ('/api/session', '/api/overview', '/api/overview', '/api/queues',
		'/api/jobs?queue=mails', '/api/jobs?queue=mails&filters=%7B%22x%22%3A1%7D', "/api/jobs/$id",
		'/api/jobs/999999', '/api/metrics?queue=mails', '/api/workers', '/api/schedules', '/',
		'/assets/main.js', '/nope', '/readyz');
	req($v, 'GET', '/api/session', [ basic('admin:wrong') ]);
	req($v, 'POST', '/api/enqueue', [ @ok, 'X-Jobq-Request: 1', 'Content-Type: application/json' ],
		'{"queue": "mails", "payload": {"v": 1}}');
	req($v, 'POST', '/api/jobs/retry', [ @ok, 'X-Jobq-Request: 1', 'Content-Type: application/json' ], '{"ids": [1, 2]}');
	req($v, 'POST', '/api/jobs/cancel', [ @ok, 'X-Jobq-Request: 1', 'Content-Type: application/json' ],
		'{"queue": "mails", "state": "ready", "max_rows": 1}');
	req($v, 'GET', $_, [@ok]) for ("/api/jobs/$bigid/raw/payload", '/api/audit', '/api/jobs/count?queue=mails&state=dead');
	req($v, 'POST', "/api/workers/$wid/resume", [ @ok, 'X-Jobq-Request: 1' ]);
	req($v, 'POST', '/api/queues/mails/pause', [ @ok, 'Origin: http://evil' ]);
	req($v, 'POST', '/api/queues/mails/pause', [ $auth_viewer, 'X-Jobq-Request: 1' ]);
	req($v, 'POST', '/api/enqueue', [ @ok, 'X-Jobq-Request: 1', 'Content-Type: application/json' ], 'x' x 70000);
	$v->{h}->signal('TERM');
	$v->{h}->finish;
	my $vg = slurp_file($vlog);
	like($vg, qr/ERROR SUMMARY: 0 errors/, 'valgrind: no memory error');
	like($vg, qr/definitely lost: 0 bytes|no leaks are possible/, 'valgrind: nothing definitely lost');
}

done_testing();
