# t/003_worker_reconnect.pl: the worker's backend is terminated while it
# is idle (it is also the LISTEN backend: F5) and between claim and
# complete (F2); the worker reconnects, re-LISTENs and loses no job.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);
use JobqTest;

my $node = new_node('reconnect');
my $dir = PostgreSQL::Test::Utils::tempdir();
$node->safe_psql('postgres',
	"SELECT jobq_create_queue('r', lease => '5 s', backoff_base => '0', backoff_cap => '0')");
my $h = write_handler('h', "touch $dir/started.\$JOBQ_JOB_ID; [ -e $dir/slow ] && sleep 2; echo '{\"ok\": true}'");

# a long poll interval: only NOTIFY can wake the worker quickly
my $w = start_worker($node, '-q', 'r', '--poll-interval', '60', '--', $h);
ok(wait_for($node, "SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name = 'jobq-worker'"),
	'worker connected');
my $id = $node->safe_psql('postgres', "SELECT jobq_enqueue('r', '{}')");
ok(wait_for($node, "SELECT state = 'completed' FROM jobq_job($id)", 't', 10), 'woken by NOTIFY');

# F5: terminate the (idle, listening) backend
my $old = backend_pid($node);
$node->safe_psql('postgres', "SELECT pg_terminate_backend($old)");
ok(wait_for($node, "SELECT count(*) = 1 FROM pg_stat_activity"
	  . " WHERE application_name = 'jobq-worker' AND pid <> $old"), 'F5: worker reconnected');
my $t0 = time;
$id = $node->safe_psql('postgres', "SELECT jobq_enqueue('r', '{}')");
ok(wait_for($node, "SELECT state = 'completed' FROM jobq_job($id)", 't', 20),
	'F5: job after the reconnect completed');
ok(time - $t0 < 20, 'F5: woken by NOTIFY again (LISTEN re-issued), not by the 60 s poll');
like(worker_log($w), qr/lost the database connection.*reconnected/s, 'F5: logged');

# F2: terminate the backend between claim and complete
open my $fh, '>', "$dir/slow"; close $fh;
$id = $node->safe_psql('postgres', "SELECT jobq_enqueue('r', '{}')");
usleep(50_000) until -e "$dir/started.$id";
$old = backend_pid($node);
$node->safe_psql('postgres', "SELECT pg_terminate_backend($old)");
ok(wait_for($node, "SELECT state FROM jobq_job($id)", 'completed', 30),
	'F2: job claimed before the termination completed after it');
is(job_state($node, $id), 'completed:1', 'F2: one attempt, no duplicate run');
is(stop_worker($w, 'TERM'), 0, 'worker stops with exit 0');

# --no-listen: poll only, still survives a terminated backend
unlink "$dir/slow";
$w = start_worker($node, '-q', 'r', '--no-listen', '--poll-interval', '0.5', '--', $h);
ok(wait_for($node, "SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name = 'jobq-worker'"),
	'--no-listen worker connected');
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_listening_channels()"), '0',
	'(sanity: this session listens on nothing)');
$old = backend_pid($node);
$node->safe_psql('postgres', "SELECT pg_terminate_backend($old)");
$id = $node->safe_psql('postgres', "SELECT jobq_enqueue('r', '{}')");
ok(wait_for($node, "SELECT state FROM jobq_job($id)", 'completed', 20),
	'--no-listen: job completed by polling after the termination');
is(stop_worker($w, 'TERM'), 0, 'worker stops with exit 0');

# The server goes away for a while: the worker waits for it without
# burning CPU, and goes on when it is back.
sub cpu_ticks
{
	my $pid = shift;
	my @f = split ' ', slurp_file("/proc/$pid/stat");
	return $f[13] + $f[14];		# utime + stime, in clock ticks
}
# NB: the server must not stop before this worker has finished connecting
# (that is exit 3, no connection at start): wait until the previous worker's
# backend is gone and this one's has sent a claim.
ok(wait_for($node, "SELECT count(*) = 0 FROM pg_stat_activity WHERE application_name = 'jobq-worker'"),
	'the previous worker is gone');
$w = start_worker($node, '-q', 'r', '-c', '4', '--sweep-interval', '1',
	'--poll-interval', '0.2', '--', $h);
ok(wait_for($node, "SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name = 'jobq-worker' "
	. "AND query LIKE '%jobq_claim%'"),
	'worker connected and claiming');
$node->stop('fast');
sleep 1;
my $ticks = cpu_ticks($w->{pid});
sleep 3;
$ticks = cpu_ticks($w->{pid}) - $ticks;
note("worker CPU while the server was down: $ticks ticks in 3 s");
ok($ticks < 50, 'no busy loop while the server is down (under a sixth of a core)');
$node->start;
$id = $node->safe_psql('postgres', "SELECT jobq_enqueue('r', '{}')");
ok(wait_for($node, "SELECT state FROM jobq_job($id)", 'completed', 60),
	'after the server is back the worker reconnects and runs the job');
is(stop_worker($w, 'TERM'), 0, 'worker stops with exit 0');

done_testing();
