# t/004_worker_signals.pl: SIGTERM lets the running job finish and
# releases claimed jobs not started; grace expiry; SIGINT stops at once.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);
use JobqTest;

my $node = new_node('signals');
my $dir = PostgreSQL::Test::Utils::tempdir();
$node->safe_psql('postgres',
	"SELECT jobq_create_queue('s', lease => '30 s', backoff_base => '0', backoff_cap => '0')");
my $h = write_handler('h', "touch $dir/started.\$JOBQ_JOB_ID; sleep \$(cat | sed 's/[^0-9]//g'); echo '\"done\"'");

# graceful: 3 claimed at once, 1 running; SIGTERM
my @ids = split /\n/, $node->safe_psql('postgres',
	"SELECT jobq_enqueue('s', '2') FROM generate_series(1, 3)");
my $w = start_worker($node, '-q', 's', '--batch', '3', '--', $h);
usleep(50_000) until -e "$dir/started.$ids[0]";
kill 'TERM', $w->{pid};
is(stop_worker($w), 0, 'SIGTERM: exit 0');
is(job_state($node, $ids[0]), 'completed:1', 'SIGTERM: the running job finished');
is(job_state($node, $ids[1]), 'ready:0', 'SIGTERM: claimed, not started: released');
is(job_state($node, $ids[2]), 'ready:0', 'SIGTERM: the other one too');
$node->safe_psql('postgres', "SELECT jobq_cancel(id) FROM jobq_list('s', 'ready')");

# grace over: the handler is stopped and its job released
my $id = $node->safe_psql('postgres', "SELECT jobq_enqueue('s', '60')");
$w = start_worker($node, '-q', 's', '--grace', '1', '--kill-after', '1', '--', $h);
usleep(50_000) until -e "$dir/started.$id";
my $t0 = time;
kill 'TERM', $w->{pid};
is(stop_worker($w), 0, 'grace over: exit 0');
ok(time - $t0 < 10, 'grace over: did not wait for the handler');
is(job_state($node, $id), 'ready:0', 'grace over: job released, attempt given back');
like(worker_log($w), qr/outcome=interrupted state=released/, 'grace over: logged');
$node->safe_psql('postgres', "SELECT jobq_cancel($id)");

# SIGINT: at once; the job stays running until its lease
$id = $node->safe_psql('postgres', "SELECT jobq_enqueue('s', '60')");
$w = start_worker($node, '-q', 's', '--', $h);
usleep(50_000) until -e "$dir/started.$id";
kill 'INT', $w->{pid};
is(stop_worker($w), 1, 'SIGINT: exit 1 at once');
is(job_state($node, $id), 'running:1', 'SIGINT: job left to its lease');

# second SIGTERM: at once
$node->safe_psql('postgres', "SELECT jobq_enqueue('s', '60')");
$w = start_worker($node, '-q', 's', '--lease', '2', '--', $h);
ok(wait_for($node, "SELECT running >= 2 FROM jobq_stats('s')"), 'job running');
kill 'TERM', $w->{pid};
usleep(300_000);
kill 'TERM', $w->{pid};
is(stop_worker($w), 1, 'second SIGTERM: exit 1 at once');

# SIGHUP: logs its state and reconnects, keeps working
$w = start_worker($node, '-q', 's', '--poll-interval', '0.5', '--', $h);
ok(wait_for($node, "SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name = 'jobq-worker'"), 'up');
kill 'HUP', $w->{pid};
$id = $node->safe_psql('postgres', "SELECT jobq_enqueue('s', '0')");
ok(wait_for($node, "SELECT state FROM jobq_job($id)", 'completed'), 'SIGHUP: still working');
kill 'TERM', $w->{pid};
is(stop_worker($w), 0, 'exit 0');
like(worker_log($w), qr/SIGHUP: running=/, 'SIGHUP logged');

done_testing();
