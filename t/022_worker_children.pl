# t/022_worker_children.pl: each handler runs in its own process group,
# and the group is killed when the handler exits, times out or the worker
# stops: a handler that leaves "(sleep 20) &" behind leaves no sleep
# running.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);
use JobqTest;

my $node = new_node('children');
my $dir = PostgreSQL::Test::Utils::tempdir();
$node->safe_psql('postgres',
	"SELECT jobq_create_queue('c', backoff_base => '0', backoff_cap => '0')");

# alive(PID): the process exists and is not a zombie
sub alive
{
	my $pid = shift;
	return 0 unless kill 0, $pid;
	my $stat = -e "/proc/$pid/stat" ? slurp_file("/proc/$pid/stat") : '';
	return $stat !~ /^\d+ \(.*\) Z/;
}

# gone(PID, [TIMEOUT_S]): wait until PID has gone
sub gone
{
	my ($pid, $timeout) = @_;
	my $deadline = time + ($timeout // 10);
	usleep(50_000) while alive($pid) && time < $deadline;
	return !alive($pid);
}

# a child left behind by a handler that exits 0
my $h = write_handler('leaver', "(sleep 20) & echo \$! > $dir/child.\$JOBQ_JOB_ID; echo '\"done\"'; exit 0");
my $id = $node->safe_psql('postgres', "SELECT jobq_enqueue('c', '{}')");
my $w = start_worker($node, '-q', 'c', '--once', '--', $h);
is(stop_worker($w), 0, 'exit 0: --once ran the job');
is(job_state($node, $id), 'completed:1', 'the job completed');
my $child = slurp_file("$dir/child.$id");
chomp $child;
ok($child =~ /^\d+$/, "the handler's child pid was recorded ($child)");
ok(gone($child, 5), "the handler's leftover child was killed when the handler exited");

# the same while the worker keeps running (the group is killed at once, not at exit)
$w = start_worker($node, '-q', 'c', '--poll-interval', '0.2', '--', $h);
$id = $node->safe_psql('postgres', "SELECT jobq_enqueue('c', '{}')");
ok(wait_for($node, "SELECT state FROM jobq_job($id)", 'completed', 20), 'running worker: job completed');
$child = slurp_file("$dir/child.$id");
chomp $child;
ok(gone($child, 5), 'running worker: the leftover child is gone while the worker runs');
ok(worker_alive($w), 'running worker: the worker is still running');
is(stop_worker($w, 'TERM'), 0, 'running worker: stops with exit 0');

# a handler that times out: its whole group is stopped
my $slow = write_handler('slow', "(sleep 30) & echo \$! > $dir/child.\$JOBQ_JOB_ID; sleep 30");
$id = $node->safe_psql('postgres', "SELECT jobq_enqueue('c', '{}')");
$w = start_worker($node, '-q', 'c', '--timeout', '1', '--kill-after', '1', '--poll-interval', '0.2',
	'--', $slow);
ok(wait_log($w, qr/info: job id=$id queue=c attempt=1\/25 outcome=timeout state=ready /, 20),
	'timeout: the job timed out and is ready again');
is(stop_worker($w, 'TERM'), 0, 'timeout: worker stops with exit 0');
$child = slurp_file("$dir/child.$id");
chomp $child;
ok(gone($child, 5), "timeout: the handler's child was stopped with it");

# the worker stops at once (SIGINT) while a handler and its child run
unlink "$dir/child.$id";
$w = start_worker($node, '-q', 'c', '--poll-interval', '0.2', '--', $slow);
my $deadline = time + 20;
usleep(50_000) until -s "$dir/child.$id" || time > $deadline;
$child = slurp_file("$dir/child.$id");
chomp $child;
ok(alive($child), 'SIGINT: the child runs while its handler runs');
is(stop_worker($w, 'INT'), 1, 'SIGINT: exit 1');
ok(gone($child, 5), "SIGINT: the handler's child was killed with the worker's stop");

# SIGTERM with a short grace: the group is stopped when the grace is over
$id = $node->safe_psql('postgres', "SELECT jobq_enqueue('c', '{}')");
$w = start_worker($node, '-q', 'c', '--poll-interval', '0.2', '--grace', '1', '--kill-after', '1',
	'--', $slow);
$deadline = time + 40;
usleep(50_000) until -s "$dir/child.$id" || time > $deadline;
$child = slurp_file("$dir/child.$id");
chomp $child;
is(stop_worker($w, 'TERM'), 0, 'SIGTERM: exit 0 after the grace');
ok(gone($child, 5), "SIGTERM: the handler's child was stopped when the grace was over");
like(worker_log($w), qr/grace period over: stopping 1 handler\(s\)/, 'SIGTERM: logged');
done_testing();
