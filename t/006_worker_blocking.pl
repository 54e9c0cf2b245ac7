# t/006_worker_blocking.pl: on a server with jobq preloaded, an idle
# worker claims with a server-side wait (jobq_claim(..., wait => ...)),
# woken by the enqueue's commit instead of NOTIFY or polling; its backend
# shows the Extension wait event; SIGTERM, SIGINT and SIGHUP interrupt the
# wait at once.  --wait-mode auto picks it when the server is preloaded and
# the role may read jobq_wait_stats, and LISTEN otherwise.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);
use JobqTest;

my $node = new_node('blocking',
	"shared_preload_libraries = 'jobq'\njobq.sweeper_databases = ''\n");
is($node->safe_psql('postgres', 'SELECT preloaded FROM jobq_wait_stats()'), 't',
	'server has jobq preloaded');
$node->safe_psql('postgres',
	"SELECT jobq_create_queue('b', lease => '30 s', backoff_base => '0', backoff_cap => '0')");
my $dir = PostgreSQL::Test::Utils::tempdir();
my $h = write_handler('h', "cat >/dev/null; echo '{\"ok\": true}'");

my $idle_sql = "SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name = 'jobq-worker'"
  . " AND wait_event_type = 'Extension' AND state = 'active'";

# the poll interval is long: only the commit wakeup can be quick
my $w = start_worker($node, '-q', 'b', '--wait-mode', 'blocking', '--poll-interval', '60',
	'--sweep-interval', '0', '--', $h);
ok(wait_for($node, $idle_sql), 'idle worker waits in a claim: Extension wait event');
is($node->safe_psql('postgres', 'SELECT waiting FROM jobq_wait_stats()'), '1',
	'jobq_wait_stats counts the waiting claim');
my $wakeups = $node->safe_psql('postgres', 'SELECT wakeups FROM jobq_wait_stats()');
my $t0 = time;
my $id = $node->safe_psql('postgres', "SELECT jobq_enqueue('b', '{}')");
ok(wait_for($node, "SELECT state = 'completed' FROM jobq_job($id)", 't', 10),
	'job enqueued later is done');
my $took = time - $t0;
ok($took < 3, "picked up promptly by the blocking claim (${took}s, poll interval 60 s)");
cmp_ok($node->safe_psql('postgres', 'SELECT wakeups FROM jobq_wait_stats()'), '>', $wakeups,
	'the commit woke the waiting claim');
is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_listening_channels()'), '0',
	'(sanity: this session listens on nothing)');

# the worker goes back to waiting; SIGTERM ends the wait at once
ok(wait_for($node, $idle_sql), 'waiting again after the job');
$t0 = time;
is(stop_worker($w, 'TERM'), 0, 'SIGTERM during a blocking wait: exit 0');
$took = time - $t0;
ok($took < 3, "SIGTERM during a blocking wait: prompt (${took}s)");
ok(wait_for($node, 'SELECT waiting = 0 FROM jobq_wait_stats()'), 'no claim left waiting');
like(worker_log($w), qr/waiting for work with blocking claims/, 'wait mode logged');

# SIGHUP interrupts the wait, reconnects, and the worker keeps working
$w = start_worker($node, '-q', 'b', '--wait-mode', 'blocking', '--poll-interval', '60', '--', $h);
ok(wait_for($node, $idle_sql), 'waiting');
my $old = backend_pid($node);
kill 'HUP', $w->{pid};
ok(wait_for($node, "SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name = 'jobq-worker'"
	  . " AND pid <> $old AND wait_event_type = 'Extension'"), 'SIGHUP: new session, waiting again');
$id = $node->safe_psql('postgres', "SELECT jobq_enqueue('b', '{}')");
ok(wait_for($node, "SELECT state = 'completed' FROM jobq_job($id)", 't', 10), 'SIGHUP: still working');

# a terminated backend during the wait: reconnect, wait again
$old = backend_pid($node);
$node->safe_psql('postgres', "SELECT pg_terminate_backend($old)");
ok(wait_for($node, "SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name = 'jobq-worker'"
	  . " AND pid <> $old AND wait_event_type = 'Extension'"), 'terminated during the wait: back');
$id = $node->safe_psql('postgres', "SELECT jobq_enqueue('b', '{}')");
ok(wait_for($node, "SELECT state = 'completed' FROM jobq_job($id)", 't', 10),
	'terminated during the wait: job done after the reconnect');

# SIGINT during the wait: at once, exit 1, nothing claimed
$t0 = time;
is(stop_worker($w, 'INT'), 1, 'SIGINT during a blocking wait: exit 1');
ok(time - $t0 < 3, 'SIGINT: prompt');
ok(wait_for($node, 'SELECT waiting = 0 FROM jobq_wait_stats()'), 'SIGINT: no claim left waiting');
is($node->safe_psql('postgres', "SELECT running FROM jobq_stats('b')"), '0', 'SIGINT: nothing claimed');

# auto (the default): blocking when idle, and LISTEN for when handlers run
$w = start_worker($node, '-q', 'b', '--poll-interval', '60', '--', $h);
ok(wait_for($node, $idle_sql), 'auto on a preloaded server: blocking claim');
like(worker_log($w), qr/blocking claims when idle, LISTEN while handlers run/, 'auto: logged');
$id = $node->safe_psql('postgres', "SELECT jobq_enqueue('b', '{}')");
ok(wait_for($node, "SELECT state = 'completed' FROM jobq_job($id)", 't', 10), 'auto: job done');
is(stop_worker($w, 'TERM'), 0, 'auto: SIGTERM exit 0');

# --no-listen is --wait-mode=poll: no blocking claim, no LISTEN
$w = start_worker($node, '-q', 'b', '--no-listen', '--poll-interval', '0.3', '--', $h);
ok(wait_for($node, "SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name = 'jobq-worker'"
	  . " AND state = 'idle'"), '--no-listen: idle between polls');
$id = $node->safe_psql('postgres', "SELECT jobq_enqueue('b', '{}')");
ok(wait_for($node, "SELECT state = 'completed' FROM jobq_job($id)", 't', 10), '--no-listen: job done');
is(stop_worker($w, 'TERM'), 0, '--no-listen: exit 0');
like(worker_log($w), qr/waiting for work by polling/, '--no-listen: polling logged');

# auto for a role that may not read jobq_wait_stats: LISTEN
$node->safe_psql('postgres', 'CREATE ROLE wrk LOGIN; GRANT jobq_worker TO wrk');
$w = start_worker_cmd($node, [ worker_bin() ], '-q', 'b', '--poll-interval', '60',
	'--sweep-interval', '0', '-d', $node->connstr('postgres') . ' user=wrk', '--', $h);
ok(wait_for($node, "SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name = 'jobq-worker'"
	  . " AND usename = 'wrk' AND state = 'idle'"), 'no jobq_monitor: idle (LISTEN)');
$id = $node->safe_psql('postgres', "SELECT jobq_enqueue('b', '{}')");
ok(wait_for($node, "SELECT state = 'completed' FROM jobq_job($id)", 't', 10),
	'no jobq_monitor: woken by NOTIFY');
is(stop_worker($w, 'TERM'), 0, 'no jobq_monitor: exit 0');
like(worker_log($w), qr/LISTEN and polling: no blocking claim: .*permission denied/,
	'no jobq_monitor: falls back to LISTEN, says why');

done_testing();
