# t/010_cli.pl: the jobq command-line tool: every command's table and
# --json output, exit codes (0 ok, 1 failed/not found, 2 usage,
# 3 connection), bad usage.
use strict;
use warnings;
use IPC::Run;
use JSON::PP;
use PostgreSQL::Test::Utils;
use Test::More;
use JobqTest;

my $node = new_node('cli');
my ($rc, $out, $err);

sub cli { return run_cli($node, @_); }

($rc, $out) = cli([ 'queue', 'create', 'mails', '--lease', '2', '--max-attempts', '2', '--backoff-base', '0', '--backoff-cap', '0' ]);
is($rc, 0, 'queue create: exit 0');
is($out, "queue mails created\n", 'queue create: message');
($rc, $out, $err) = cli([ 'queue', 'create', 'mails' ]);
is($rc, 1, 'queue create existing: exit 1');
like($err, qr/already exists \(SQLSTATE 42710\)/, 'queue create existing: server error shown');
($rc, $out) = cli([ '--json', 'queue', 'alter', 'mails', '--notify', 'off' ]);
is_deeply(decode_json($out), { queue => 'mails', done => 'altered' }, 'queue alter --json');

# the queue settings of 0.2.0: --set SETTING=VALUE, read by the setting's kind
($rc, $out, $err) = cli([ 'queue', 'create', 'grp', '--set', 'group_mode=fifo', '--set', 'max_running=40',
	'--set', 'rate=10', '--set', 'rate_per=1m', '--set', 'notify_finished=on' ]);
is($rc, 0, 'queue create --set: exit 0') or diag($err);
($rc, $out) = cli([ '--json', 'queues' ]);
my ($grp) = grep { $_->{queue} eq 'grp' } @{ decode_json($out) };
is_deeply([ @$grp{qw(group_mode max_running rate rate_per_s notify_finished group_limit fifo_block)} ],
	[ 'fifo', 40, 10, 60, JSON::PP::true, 1, 'retry_and_dead' ],
	'queues --json: the settings given, and the defaults of the others');
($rc) = cli([ 'queue', 'alter', 'grp', '--set', 'max_running=0', '--set', 'group_order=round_robin' ]);
($rc, $out) = cli([ '--json', 'queues' ]);
($grp) = grep { $_->{queue} eq 'grp' } @{ decode_json($out) };
is_deeply([ @$grp{qw(max_running group_order group_mode)} ], [ 0, 'round_robin', 'fifo' ],
	'queue alter --set: the given ones change, the others stay');
for my $bad ([ 'group_mode=FIFO', 1, qr/group_mode must be one of none, fifo, limit, not "FIFO"/ ],
	[ 'max_running=-1', 2, qr/--set max_running/ ],
	[ 'rate_per=0', 2, qr/--set rate_per/ ],
	[ 'notify_finished=yes', 2, qr/on or off/ ],
	[ 'lease=30', 2, qr/no queue setting "lease=30"/ ],
	[ 'group_mode', 2, qr/give it a value/ ])
{
	($rc, $out, $err) = cli([ 'queue', 'alter', 'grp', '--set', $bad->[0] ]);
	is($rc, $bad->[1], "queue alter --set $bad->[0]: exit $bad->[1]");
	like($err, $bad->[2], "queue alter --set $bad->[0]: says why");
}
($rc, $out) = cli([ '--json', 'queues' ]);
($grp) = grep { $_->{queue} eq 'grp' } @{ decode_json($out) };
is($grp->{group_mode}, 'fifo', 'a refused --set changed nothing');

# enqueue --group: the jobs' group key; --depends-on: one job waiting for others
($rc, $out, $err) = cli([ 'enqueue', 'grp', '--group', 'acct:1' ], qq({"n": 1}\n{"n": 2}\n));
is($rc, 0, 'enqueue --group from stdin: exit 0') or diag($err);
is($node->safe_psql('postgres', q{SELECT string_agg(group_key, ',' ORDER BY id) FROM jobq.jobs WHERE queue = 'grp'}),
	'acct:1,acct:1', 'enqueue --group: every job of stdin in the group');
($rc, $out, $err) = cli([ 'enqueue', 'grp', '{}', '--group', 'x' x 257 ]);
is($rc, 2, 'enqueue --group of 257 bytes: exit 2');
like($err, qr/--group takes a key of 1 to 256 bytes, not 257/, 'enqueue --group too long: says why');
cli([ 'queue', 'create', 'flowq' ]);
(undef, my $parent) = cli([ 'enqueue', 'flowq', '{}' ]);
chomp $parent;
($rc, $out, $err) = cli([ 'enqueue', 'flowq', '{"child": 1}', '--depends-on', "$parent,$parent",
	'--on-dep-failure', 'wait' ]);
is($rc, 0, 'enqueue --depends-on: exit 0') or diag($err);
chomp $out;
is($node->safe_psql('postgres', "SELECT state FROM jobq.jobs WHERE id = $out"), 'waiting',
	'enqueue --depends-on: the job waits for its parent');
for my $bad ([ [ '{}', '--depends-on', '1,x' ], qr/--depends-on takes 1 to 10000 job ids/ ],
	[ [ '{}', '--depends-on', '0' ], qr/--depends-on takes 1 to 10000 job ids/ ],
	[ [ '--depends-on', $parent ], qr/--depends-on applies to one job only/ ],
	[ [ '{}', '--on-dep-failure', 'wait' ], qr/--on-dep-failure needs --depends-on/ ],
	[ [ '{}', '--depends-on', $parent, '--key', 'k' ], qr/--depends-on and --key exclude each other/ ])
{
	# no stdin: the CLI refuses before it reads any, and a write to its
	# closed stdin would fail the test with EPIPE
	($rc, $out, $err) = cli([ 'enqueue', 'flowq', @{ $bad->[0] } ]);
	is($rc, 2, "enqueue @{ $bad->[0] }: exit 2") or diag($err);
	like($err, $bad->[1], "enqueue @{ $bad->[0] }: says why");
}
($rc, $out, $err) = cli([ 'enqueue', 'flowq', '{}', '--depends-on', $parent, '--on-dep-failure', 'later' ]);
is($rc, 1, 'enqueue --on-dep-failure later: exit 1 (the server refuses)');
like($err, qr/unknown on_dep_failure "later".*22023/s, 'with the server\'s message and SQLSTATE');
is($node->safe_psql('postgres', q{SELECT count(*) FROM jobq.jobs WHERE queue = 'flowq'}), '2',
	'the refused enqueues added nothing');
($rc, $out, $err) = cli([ 'queue', 'drop', 'flowq', '--force' ]);
is($rc, 0, 'queue drop --force of a queue with a waiting job') or diag($err);
cli([ 'queue', 'drop', 'grp', '--force' ]);

($rc, $out) = cli([ 'enqueue', 'mails', '{"to": "a@b.c"}' ]);
is($rc, 0, 'enqueue: exit 0');
like($out, qr/^\d+\n$/, 'enqueue: prints the id');
my $id1 = $out + 0;
($rc, $out) = cli([ 'enqueue', 'mails', '--json' ], qq({"n": 1}\n\n{"n": "two \\" quote"}\n));
is($rc, 0, 'enqueue from stdin: exit 0');
my $ids = decode_json($out);
is(scalar @$ids, 2, 'enqueue from stdin: one job per non-empty line');
is($ids->[0]{created}, JSON::PP::true, 'enqueue --json: created flag');
($rc, $out, $err) = cli([ 'enqueue', 'mails', '{bad' ]);
is($rc, 1, 'enqueue invalid JSON: exit 1');
like($err, qr/22P02/, 'enqueue invalid JSON: SQLSTATE shown');
($rc) = cli([ 'enqueue', 'nosuchqueue', '{}' ]);
is($rc, 1, 'enqueue unknown queue: exit 1');
($rc, $out) = cli([ 'enqueue', 'mails', '{}', '--key', 'k1', '--priority', '5', '--delay', '3600' ]);
my $delayed = $out + 0;
($rc, $out) = cli([ 'enqueue', 'mails', '{}', '--key', 'k1' ]);
is($out + 0, $delayed, 'enqueue --key: same live key gives the same id');
($rc, $out, $err) = cli([ 'enqueue', 'mails', '{}', '--delay', '1', '--run-at', 'now' ]);
is($rc, 2, 'enqueue --delay with --run-at: usage error');

($rc, $out) = cli([ 'stats' ]);
is($rc, 0, 'stats: exit 0');
like($out, qr/^queue\s+paused\s+ready\s+delayed\s+running.*\n-+\s+-+.*\nmails\s+3\s+1\s+0/s,
	'stats: aligned table');
($rc, $out) = cli([ 'stats', 'mails', '--json' ]);
my $st = decode_json($out);
is($st->[0]{ready}, 3, 'stats --json: numbers');
is($st->[0]{paused}, JSON::PP::false, 'stats --json: booleans');
($rc, $out, $err) = cli([ 'stats', 'nope' ]);
is($rc, 1, 'stats unknown queue: exit 1');

($rc, $out) = cli([ 'list', 'mails' ]);
like($out, qr/^id\s+state\s+priority.*\n-+.*\n\s*$id1\s+ready\s+0/s, 'list: table');
($rc, $out) = cli([ 'list', 'mails', '--state', 'delayed', '--json' ]);
is_deeply([ map { $_->{id} } @{ decode_json($out) } ], [$delayed], 'list --state delayed --json');
($rc, $out, $err) = cli([ 'list', 'mails', '--state', 'bogus' ]);
is($rc, 1, 'list bad state: exit 1');

($rc, $out) = cli([ 'show', $id1 ]);
like($out, qr/^id\s+$id1\nqueue\s+mails\nstate\s+ready\npayload\s+\{"to": "a\@b.c"\}/, 'show: record');
($rc, $out) = cli([ 'show', $id1, '--json' ]);
is(decode_json($out)->{payload}{to}, 'a@b.c', 'show --json: payload as JSON');
($rc, $out, $err) = cli([ 'show', '999999' ]);
is($rc, 1, 'show unknown: exit 1');
like($err, qr/no job 999999/, 'show unknown: message');
($rc) = cli([ 'show', 'abc' ]);
is($rc, 2, 'show non-number: exit 2');

# make a dead job: claim and fail it permanently
$node->safe_psql('postgres',
	"SELECT jobq_fail(id, token, 'boom', NULL, true) FROM jobq_claim('mails', 't', 1)");
($rc, $out) = cli([ 'list', 'mails', '--state', 'dead' ]);
like($out, qr/dead\s.*boom/, 'list dead: last_error shown');
# pages and filters (doc/jobq.md, Listing jobs)
($rc, $out) = cli([ 'list', 'mails', '--limit', '1' ]);
my ($cursor) = $out =~ /^next: --after (\S+)$/m;
ok(defined $cursor, 'list --limit 1: prints the next cursor');
($rc, $out) = cli([ 'list', 'mails', '--limit', '1', '--after', $cursor, '--json' ]);
my $page2 = decode_json($out);
isnt($page2->[0]{id}, undef, 'list --after: the next page');
unlike($out, qr/"id":\Q$id1\E,/, 'list --after: not the first page again');
($rc, $out) = cli([ 'list', 'mails', '--state', 'dead', '--error', 'BOOM', '--worker', 't', '--since', '1h' ]);
like($out, qr/^\s*$id1\s+dead\s.*\bt\s+boom$/m, 'list filters: error, worker, since');
($rc, $out) = cli([ 'list', 'mails', '--state', 'dead', '--worker', 'nobody' ]);
unlike($out, qr/boom/, 'list filters: another worker lists nothing');
($rc, $out, $err) = cli([ 'list', 'mails', '--priority', '1..x' ]);
is($rc, 2, 'list bad --priority: exit 2');
($rc, $out, $err) = cli([ 'list', 'mails', '--after', 'nonsense' ]);
is($rc, 1, 'list bad cursor: exit 1');
like($err, qr/invalid list cursor/, 'list bad cursor: the server says why');
($rc, $out) = cli([ 'show', $id1 ]);
like($out, qr/^attempts:\nattempt\s+worker\s+claimed_at\s+finished_at\s+outcome\s+error\n[- ]+\n\s+1\s+t\s+\S+ \S+\s+\S+ \S+\s+failed\s+boom\n/m,
	'show: the attempt timeline');
($rc, $out) = cli([ 'retry', $id1 ]);
is($rc, 0, 'retry dead job: exit 0');
($rc, $out, $err) = cli([ 'retry', $id1 ]);
is($rc, 1, 'retry a ready job: exit 1');
like($err, qr/job $id1 is ready/, 'retry a ready job: says why');
($rc, $out) = cli([ 'retry', '--queue', 'mails', '--json' ]);
is_deeply(decode_json($out), { queue => 'mails', retried => 0 }, 'retry --queue --json');

($rc, $out) = cli([ 'cancel', $delayed ]);
is($out, "job $delayed cancelled\n", 'cancel: exit 0');
($rc) = cli([ 'cancel', $delayed ]);
is($rc, 1, 'cancel twice: exit 1');
($rc, $out) = cli([ 'purge', 'mails', '--state', 'cancelled', '--json' ]);
is_deeply(decode_json($out), { queue => 'mails', purged => 1 }, 'purge --json');

($rc, $out) = cli([ 'queue', 'pause', 'mails' ]);
is($out, "queue mails paused\n", 'pause');
($rc, $out) = cli([ 'queues' ]);
like($out, qr/^queue\s+lease\s+max_attempts.*\nmails\s+00:00:02\s+2\s.*yes\s+off\n/s, 'queues: table');
($rc, $out) = cli([ 'queues', '--json' ]);
is(decode_json($out)->[0]{lease_s}, 2, 'queues --json');
cli([ 'queue', 'resume', 'mails' ]);
($rc, $out) = cli([ 'sweep', 'mails' ]);
like($out, qr/^requeued\s+dead\s+purged\n-+\s+-+\s+-+\n\s+0\s+0\s+\d+\n$/, 'sweep: table');
($rc, $out) = cli([ 'sweep', '--json' ]);
is(ref decode_json($out), 'ARRAY', 'sweep --json');

($rc, $out, $err) = cli([ 'queue', 'drop', 'mails' ]);
is($rc, 1, 'drop with live jobs: exit 1');
($rc, $out) = cli([ 'queue', 'drop', 'mails', '--force' ]);
is($rc, 0, 'drop --force: exit 0');

# usage and connection errors
($rc, $out, $err) = cli([]);
is($rc, 2, 'no command: exit 2');
like($err, qr/Try "jobq --help"/, 'no command: hint');
($rc) = cli([ 'frobnicate' ]);
is($rc, 2, 'unknown command: exit 2');
($rc) = cli([ 'stats', '--state', 'x' ]);
is($rc, 2, 'option of another command: exit 2');
($rc) = cli([ 'list' ]);
is($rc, 2, 'missing argument: exit 2');
($rc) = cli([ '--bogus' ]);
is($rc, 2, 'unknown option: exit 2');
IPC::Run::run([ cli_bin(), '--help' ], '>', \$out, '2>', \$err);
is($? >> 8, 0, '--help: exit 0');
like($out, qr/enqueue QUEUE \[JSON\]/, '--help: lists commands');
IPC::Run::run([ cli_bin(), '-V' ], '>', \$out, '2>', \$err);
is($? >> 8, 0, '-V: exit 0');
IPC::Run::run([ cli_bin(), '-d', 'host=/nonexistent', 'stats' ], '>', \$out, '2>', \$err);
is($? >> 8, 3, 'cannot connect: exit 3');

# -V: both tools print the version of the libjobq they run on, which is
# the release's (make checkver keeps jobq-client.h and jobq.control equal)
my $release = $node->safe_psql('postgres',
	"SELECT default_version FROM pg_available_extensions WHERE name = 'jobq'");
($rc, $out) = cli([ '-V' ]);
is($out, "jobq (jobq) $release\n", 'jobq -V: the release version');
{
	my ($o, $e) = ('', '');
	IPC::Run::run([ worker_bin(), '-V' ], '>', \$o, '2>', \$e);
	is($o, "jobq-worker (jobq) $release\n", 'jobq-worker -V: the release version');
}

done_testing();
