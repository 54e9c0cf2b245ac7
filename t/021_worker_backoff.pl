# t/021_worker_backoff.pl: a node that accepts connections but cannot
# write (default_transaction_read_only, as on a standby) makes the worker
# back off: each attempt is refused at connect, the logged delays double
# (0.5, 1, 2, 4, 8 s ... up to 30 s), and the number of attempts in a
# window stays bounded (it was two a second, for ever).  SIGHUP ends the
# wait; once the node is writable again the worker claims.
# (doc/reliability.md F4: a read-only node is a wrong node.)
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);
use JobqTest;

my $node = new_node('backoff');
$node->safe_psql('postgres',
	"SELECT jobq_create_queue('b', backoff_base => '0', backoff_cap => '0')");
my $h = write_handler('h', "echo '{\"ok\": true}'");

my $w = start_worker($node, '-q', 'b', '--poll-interval', '0.5', '--', $h);
ok(wait_for($node, "SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name = 'jobq-worker'"),
	'worker connected');

# the node turns read-only; the worker's session ends
$node->safe_psql('postgres', 'ALTER DATABASE postgres SET default_transaction_read_only = on');
my $old = backend_pid($node);
$node->safe_psql('postgres', "SELECT pg_terminate_backend($old)");
my $t0 = time;
ok(wait_for($node, "SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $old"), 'session ended');
usleep(200_000) while time < $t0 + 20;

my $log = worker_log($w);
my $refused = () = $log =~ /warning: the session is read-only \(default_transaction_read_only=on\); jobq-worker needs a read-write node\n/g;
my @delays = $log =~ /info: reconnecting in (\S+) s\n/g;
note("refused connects in 20 s: $refused; delays: @delays");
ok($refused >= 3, 'the worker keeps trying');
ok($refused <= 6, 'at most 6 attempts in 20 s (0.5 + 1 + 2 + 4 + 8 s of backoff)');
is_deeply([ @delays[ 0 .. 4 ] ], [ '0.5', '1', '2', '4', '8' ], 'the logged backoff doubles');
is(scalar(@delays), $refused + 1, 'one scheduled attempt per failure (and one for the lost session)');
like($log, qr/warning: lost the database connection: .*\n.*info: reconnecting in 0\.5 s\n/,
	'the lost session is logged before the first attempt');
is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_activity WHERE application_name = 'jobq-worker'"),
	'0', 'no session left open on the read-only node');

# writable again: SIGHUP reconnects at once, without waiting out the backoff
$node->safe_psql('postgres',
	'SET default_transaction_read_only = off; ALTER DATABASE postgres RESET default_transaction_read_only');
kill 'HUP', $w->{pid};
ok(wait_for($node, "SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name = 'jobq-worker'", 't', 10),
	'SIGHUP: reconnected now');
ok(wait_log($w, qr/info: reconnected to the database\n/, 10), 'the reconnect is logged');
my $id = $node->safe_psql('postgres', "SELECT jobq_enqueue('b', '{}')");
ok(wait_for($node, "SELECT state FROM jobq_job($id)", 'completed', 20), 'and jobs run again');
is(stop_worker($w, 'TERM'), 0, 'worker stops with exit 0');

# a worker started against a read-only node refuses to run there
$node->safe_psql('postgres', 'ALTER DATABASE postgres SET default_transaction_read_only = on');
$w = start_worker($node, '-q', 'b', '--', $h);
is(stop_worker($w), 3, 'read-only at start: exit 3');
like(worker_log($w), qr/jobq-worker needs a read-write node\n.*could not connect at start, exiting\n/s,
	'read-only at start: says why');
$node->safe_psql('postgres',
	'SET default_transaction_read_only = off; ALTER DATABASE postgres RESET default_transaction_read_only');
done_testing();
