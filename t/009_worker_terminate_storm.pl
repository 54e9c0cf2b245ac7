# t/009_worker_terminate_storm.pl: F2 at every point.  While jobq-worker
# drains 400 jobs, its backend is terminated again and again at random
# moments (every 20-120 ms), so terminations land during claims, during
# completes, between them and while idle.  Each claim and complete is one
# atomic statement: afterwards every job is completed exactly once, none is
# lost, and no claim ran twice (a job runs again only under a new attempt,
# after its lease ran out).
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);
use JobqTest;

my $node = new_node('storm');
my $dir = PostgreSQL::Test::Utils::tempdir();
my $jobs = 400;
$node->safe_psql('postgres', qq{
	SELECT jobq_create_queue('s', lease => '2 s', max_attempts => 50,
	                         backoff_base => '0', backoff_cap => '0');
	SELECT count(*) FROM jobq_enqueue_batch('s',
	    (SELECT array_agg(jsonb_build_object('n', g)) FROM generate_series(1, $jobs) g));
});
my $h = write_handler('h', "echo \"\$JOBQ_JOB_ID \$JOBQ_ATTEMPT\" >> $dir/runs; sleep 0.1; echo '{}'");

my $w = start_worker($node, '-q', 's', '-c', '4', '--sweep-interval', '1',
	'--poll-interval', '0.2', '--', $h);

my ($terminated, $deadline) = (0, time + 120);
while (time < $deadline)
{
	my $left = $node->safe_psql('postgres',
		"SELECT ready + delayed + running FROM jobq_stats('s')");
	last if $left == 0;
	$terminated += $node->safe_psql('postgres',
		"SELECT count(*) FROM (SELECT pid FROM pg_stat_activity"
		  . " WHERE application_name = 'jobq-worker' OFFSET 0) w"	# filter first
		  . " WHERE pg_terminate_backend(w.pid)");
	usleep(20_000 + int(rand(100_000)));
}
note("backends terminated: $terminated");
ok($terminated >= 10, "the worker's backend was terminated many times ($terminated)");

ok(wait_for($node, "SELECT ready + delayed + running FROM jobq_stats('s')", '0', 60),
	'the queue drained');
is($node->safe_psql('postgres', "SELECT completed || '/' || dead FROM jobq_stats('s')"),
	"$jobs/0", 'every job completed, none dead');
is($node->safe_psql('postgres',
		"SELECT count(DISTINCT id) FROM jobq.history WHERE queue = 's' AND state = 'completed'"),
	$jobs, 'each job completed once');

# executions: (job, attempt) pairs; a pair seen twice is a claim run twice
my (%runs, %by_job);
open my $fh, '<', "$dir/runs" or die "$dir/runs: $!";
while (<$fh>)
{
	my ($id, $attempt) = split;
	$runs{"$id/$attempt"}++;
	$by_job{$id}++;
}
close $fh;
is(scalar(keys %by_job), $jobs, 'every job ran');
is(scalar(grep { $runs{$_} > 1 } keys %runs), 0,
	'no claim ran twice: re-runs only under a new attempt');
my $reruns = 0;
$reruns += $by_job{$_} - 1 for keys %by_job;
note("jobs run more than once (after a lease expired): $reruns");
like(worker_log($w), qr/reconnected/, 'the worker logged its reconnects');
is(stop_worker($w, 'TERM'), 0, 'worker stops with exit 0');

done_testing();
