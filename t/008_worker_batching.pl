# t/008_worker_batching.pl: jobq-worker fills its slots with one claim
# (default --batch = --concurrency), refills them as handlers finish, and
# reports finished jobs in batches (one jobq_complete_batch or
# jobq_complete_and_claim for several), with each job's own result and
# the stale handling of single completions.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);
use JobqTest;

my $node = new_node('batching', "log_statement = 'all'\n");
my $dir = PostgreSQL::Test::Utils::tempdir();

# 1. slots fill: --concurrency 4, 8 jobs whose handler sleeps 1 s; the
# handler records when it started and ended
$node->safe_psql('postgres', q{
	SELECT jobq_create_queue('f', lease => '30 s');
	SELECT jobq_enqueue('f', '{}') FROM generate_series(1, 8);
});
my $h = write_handler('slow',
	"s=\$(date +%s.%N); sleep 1; echo \"\$s \$(date +%s.%N)\" > $dir/run.\$JOBQ_JOB_ID");
my $w = start_worker($node, '-q', 'f', '-c', '4', '--burst', '--', $h);
is(stop_worker($w), 0, 'fill: worker exits 0');
is($node->safe_psql('postgres', "SELECT completed FROM jobq_stats('f')"), '8', 'fill: 8 jobs completed');
like(worker_log($w), qr/concurrency=4 batch=4/, 'fill: --batch defaults to --concurrency');
my @runs;
for my $f (glob "$dir/run.*")
{
	my ($s, $e) = split ' ', slurp_file($f);
	push @runs, [ $s, $e ];
}
is(scalar @runs, 8, 'fill: 8 handlers ran');
# the most handlers running at one moment (at some handler's start)
my $most = 0;
for my $r (@runs)
{
	my $n = grep { $_->[0] <= $r->[0] && $r->[0] < $_->[1] } @runs;
	$most = $n if $n > $most;
}
is($most, 4, 'fill: 4 handlers overlapped, never more');
my @starts = sort { $a <=> $b } map { $_->[0] } @runs;
ok($starts[3] - $starts[0] < 0.9, 'fill: the first 4 started together (' . sprintf('%.3f', $starts[3] - $starts[0]) . ' s apart)');
ok($starts[7] - $starts[4] < 0.9, 'fill: the next 4 too (' . sprintf('%.3f', $starts[7] - $starts[4]) . ' s apart)');

# 2. a batch of completions lands, with a result per job: JSON results
# stored as JSON, plain text as a JSON string, no output as NULL
$node->safe_psql('postgres', q{
	SELECT jobq_create_queue('r', lease => '30 s');
	SELECT jobq_enqueue('r', '{}') FROM generate_series(1, 12);
});
# all 12 handlers wait on a FIFO and finish together when the test closes it
my $fifo = "$dir/go";
system('mkfifo', $fifo) == 0 or die "mkfifo: $!";
$h = write_handler('res', qq{touch $dir/res.\$JOBQ_JOB_ID; cat $fifo >/dev/null
case \$((JOBQ_JOB_ID % 3)) in
0) echo "{\\"id\\": \$JOBQ_JOB_ID}" ;;
1) echo "plain \$JOBQ_JOB_ID" ;;
esac});
my $logpos = -s $node->logfile;
$w = start_worker($node, '-q', 'r', '-c', '12', '--burst', '--', $h);
my $t0 = time;
usleep(50_000) while scalar(my @s = glob "$dir/res.*") < 12 && time - $t0 < 60;
usleep(300_000);				# every handler is blocked opening the FIFO
open my $ff, '>', $fifo or die "$fifo: $!";
close $ff;
is(stop_worker($w), 0, 'batch: worker exits 0');
is($node->safe_psql('postgres', "SELECT completed FROM jobq_stats('r')"), '12', 'batch: 12 jobs completed');
my $bad = $node->safe_psql('postgres', q{
	SELECT count(*) FROM jobq_list('r', 'completed') l, jobq_job(l.id) j
	WHERE j.result IS DISTINCT FROM CASE l.id % 3
		WHEN 0 THEN jsonb_build_object('id', l.id)
		WHEN 1 THEN to_jsonb('plain ' || l.id) END});
is($bad, '0', 'batch: every job has its own result');
my $slog = substr(slurp_file($node->logfile), $logpos);
my $batches = () = $slog =~ /jobq_complete_batch(?:_positions)?\(/g;
my $singles = () = $slog =~ /jobq_complete\(/g;
ok($batches >= 1, "batch: completions sent as batches ($batches batch, $singles single statements)");
ok($batches + $singles < 12, 'batch: fewer statements than jobs');
is(scalar(() = worker_log($w) =~ /outcome=completed state=completed/g), 12, 'batch: one log line per job');

# 3. a batch whose tokens were refused: state=stale, nothing changed
$node->safe_psql('postgres', q{
	SELECT jobq_create_queue('s', lease => '1 s');
	SELECT jobq_enqueue('s', '{}') FROM generate_series(1, 2);
});
$h = write_handler('stale', "touch $dir/stale.\$JOBQ_JOB_ID; sleep 2.5");
$w = start_worker($node, '-q', 's', '-c', '2', '--max', '2', '--heartbeat', '0',
	'--sweep-interval', '0', '--', $h);
ok(wait_for($node, "SELECT running = 2 FROM jobq_stats('s')"), 'stale: both running');
usleep(1_300_000);
is($node->safe_psql('postgres', "SELECT requeued FROM jobq_sweep('s')"), '2', 'stale: swept');
is(stop_worker($w), 0, 'stale: worker exits 0');
is(scalar(() = worker_log($w) =~ /outcome=completed state=stale/g), 2, 'stale: both logged state=stale');
is($node->safe_psql('postgres', "SELECT ready || '/' || completed FROM jobq_stats('s')"), '2/0',
	'stale: the jobs stay ready');

done_testing();
