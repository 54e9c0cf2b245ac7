# t/051_blocking_claim.pl: jobq_claim(..., wait => interval).
#
# With jobq preloaded, a claim that finds nothing sleeps on its latch and is
# woken from the commit of an enqueue into one of its queues: not before the
# commit, not on rollback nor for an enqueue rolled back to a savepoint, not
# for other queues, one waiter per job (no thundering herd).  Jobs that
# become ready later (delayed, retried, swept, resumed) wake a waiter as
# well, which then sleeps until they are due; a failure retried at once
# (retry_in => 0) wakes it like a release.
# Cancel and statement_timeout end a wait at once; the server shuts down
# fast with waiters.  Without preload, a wait polls.
use strict;
use warnings;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);

my $node = PostgreSQL::Test::Cluster->new('waits');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'jobq'
jobq.sweeper_databases = ''
jobq.claim_recheck_interval = '1s'
max_connections = 150
});
$node->start;
$node->safe_psql('postgres', qq{
	CREATE EXTENSION jobq;
	SELECT jobq_create_queue('a');
	SELECT jobq_create_queue('b');
});

# start_waiter(NODE, SQL): a psql running SQL in the background
sub start_waiter
{
	my ($n, $sql) = @_;
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[ $n->installed_command('psql'), '-XAtq', '-d', $n->connstr('postgres'), '-c', $sql ],
		'<', \undef, '>', \$out, '2>', \$err);
	return { h => $h, out => \$out, err => \$err, started => time };
}

sub finish_waiter
{
	my $w = shift;
	$w->{h}->finish;
	my $o = ${ $w->{out} };
	chomp $o;
	return ($o, ${ $w->{err} }, time - $w->{started});
}

sub poll
{
	my ($n, $sql, $want, $secs) = @_;
	my $deadline = time + ($secs // 30);
	my $got = '';
	while (time < $deadline)
	{
		$got = $n->safe_psql('postgres', $sql);
		return 1 if $got eq $want;
		usleep(20_000);
	}
	diag("timed out: $sql gave '$got', wanted '$want'");
	return 0;
}

my $claim_a = "SELECT coalesce(string_agg(id::text, ','), 'none') FROM jobq_claim('a', wait => '%s')";
my $waiting = 'SELECT waiting FROM jobq_wait_stats()';

is($node->safe_psql('postgres', 'SELECT preloaded FROM jobq_wait_stats()'), 't', 'latch waits available');

# 1. Woken by the commit, not before it.
my $w = start_waiter($node, sprintf($claim_a, '30 s'));
ok(poll($node, $waiting, '1'), 'claim waits');
my $producer = $node->background_psql('postgres');
$producer->query_safe('BEGIN');
my $id = $producer->query_safe("SELECT jobq_enqueue('a', '{\"n\": 1}')");
usleep(500_000);
ok($w->{h}->pumpable, 'still waiting while the enqueue is uncommitted');
is($node->safe_psql('postgres', $waiting), '1', 'waiter registered until commit');
my $t0 = time;
$producer->query_safe('COMMIT');
my ($got, $err, undef) = finish_waiter($w);
my $latency = time - $t0;
is($got, $id, 'the waiting claim got the job enqueued by the commit');
note(sprintf('commit to claim return: %.1f ms', $latency * 1000));
ok($latency < 5, 'woken promptly by the commit, not by the end of the wait');

# 2. Not woken by a rollback.
my $wakeups0 = $node->safe_psql('postgres', 'SELECT wakeups FROM jobq_wait_stats()');
$w = start_waiter($node, sprintf($claim_a, '2 s'));
ok(poll($node, $waiting, '1'), 'claim waits again');
$producer->query_safe('BEGIN');
$producer->query_safe("SELECT jobq_enqueue('a', '{\"n\": 2}')");
$producer->query_safe('ROLLBACK');
($got, $err, my $took) = finish_waiter($w);
is($got, 'none', 'a rolled-back enqueue gives nothing');
ok($took >= 1.9, 'the waiter slept its whole wait');
is($node->safe_psql('postgres', 'SELECT wakeups FROM jobq_wait_stats()'), $wakeups0,
	'a rollback wakes nobody');

# 2b. A rolled-back savepoint takes its wakeups with it, as it takes its
# jobs: nobody is woken for a job that never committed.  What one released
# savepoint noted is woken for at commit.
$w = start_waiter($node, sprintf($claim_a, '30 s'));
ok(poll($node, $waiting, '1'), 'claim waits (savepoints)');
$producer->query_safe('BEGIN');
$producer->query_safe('SAVEPOINT s');
$producer->query_safe("SELECT jobq_enqueue('a', '{\"savepoint\": 1}')");
$producer->query_safe('ROLLBACK TO SAVEPOINT s');
$producer->query_safe('COMMIT');
# an exception block is a subtransaction too
$producer->query_safe(q{
	DO $$BEGIN
		PERFORM jobq_enqueue('a', '{"savepoint": 2}');
		RAISE EXCEPTION 'undo';
	EXCEPTION WHEN raise_exception THEN NULL;
	END$$});
# released into a savepoint that is then rolled back
$producer->query_safe('BEGIN');
$producer->query_safe('SAVEPOINT outer_sp');
$producer->query_safe('SAVEPOINT inner_sp');
$producer->query_safe("SELECT jobq_enqueue('a', '{\"savepoint\": 3}')");
$producer->query_safe('RELEASE SAVEPOINT inner_sp');
$producer->query_safe('ROLLBACK TO SAVEPOINT outer_sp');
$producer->query_safe('COMMIT');
usleep(300_000);
is($node->safe_psql('postgres', 'SELECT wakeups FROM jobq_wait_stats()'), $wakeups0,
	'enqueues rolled back to a savepoint wake nobody');
ok($w->{h}->pumpable, 'the waiter sleeps on');
is($node->safe_psql('postgres', "SELECT count(*) FROM jobq.jobs WHERE queue = 'a' AND state = 'ready'"), '0',
	'and no job is there');
# rolled back, then enqueued again in the same transaction: one wakeup
$producer->query_safe('BEGIN');
$producer->query_safe('SAVEPOINT s');
$producer->query_safe("SELECT jobq_enqueue('a', '{\"savepoint\": 4}')");
$producer->query_safe('ROLLBACK TO SAVEPOINT s');
$producer->query_safe('SAVEPOINT s2');
$id = $producer->query_safe("SELECT jobq_enqueue('a', '{\"savepoint\": 5}')");
$producer->query_safe('RELEASE SAVEPOINT s2');
$t0 = time;
$producer->query_safe('COMMIT');
($got, $err, undef) = finish_waiter($w);
is($got, $id, 'an enqueue in a released savepoint wakes the waiter at commit');
ok(time - $t0 < 5, 'promptly');
is($node->safe_psql('postgres', 'SELECT wakeups FROM jobq_wait_stats()'), $wakeups0 + 1,
	'one wakeup, for the job that committed');
$wakeups0 = $node->safe_psql('postgres', 'SELECT wakeups FROM jobq_wait_stats()');

# 3. The right queue only.
$w = start_waiter($node, sprintf($claim_a, '30 s'));
ok(poll($node, $waiting, '1'), 'waiting on queue a');
$node->safe_psql('postgres', "SELECT jobq_enqueue('b', '{}')");
usleep(300_000);
is($node->safe_psql('postgres', 'SELECT wakeups FROM jobq_wait_stats()'), $wakeups0,
	'an enqueue into queue b does not wake a waiter of queue a');
ok($w->{h}->pumpable, 'still waiting');
$id = $node->safe_psql('postgres', "SELECT jobq_enqueue('a', '{}')");
($got) = finish_waiter($w);
is($got, $id, 'woken by queue a');

# 4. Cancel and statement_timeout end the wait at once.
$w = start_waiter($node, sprintf($claim_a, '60 s'));
ok(poll($node, $waiting, '1'), 'waiting');
my $pid = $node->safe_psql('postgres',
	"SELECT pid FROM pg_stat_activity WHERE query LIKE '%jobq_claim(''a''%' AND pid <> pg_backend_pid()");
is($node->safe_psql('postgres',
		"SELECT wait_event_type FROM pg_stat_activity WHERE pid = $pid"),
	'Extension', 'the wait shows as an Extension wait event');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
($got, $err, $took) = finish_waiter($w);
like($err, qr/canceling statement due to user request/, 'pg_cancel_backend ends the wait');
ok($took < 10, 'at once');
is($node->safe_psql('postgres', $waiting), '0', 'the cancelled waiter left its slot');

$w = start_waiter($node,
	"SET statement_timeout = '300ms'; " . sprintf($claim_a, '60 s'));
($got, $err, $took) = finish_waiter($w);
like($err, qr/canceling statement due to statement timeout/, 'statement_timeout ends the wait');
ok($took < 10, 'at once');
is($node->safe_psql('postgres', $waiting), '0', 'slot freed');

# 4b. A client that dies mid-wait does not keep its backend for the wait.
$w = start_waiter($node, sprintf($claim_a, '300 s'));
ok(poll($node, $waiting, '1'), 'waiting for 300 s');
$pid = $node->safe_psql('postgres',
	"SELECT pid FROM pg_stat_activity WHERE query LIKE '%jobq_claim(''a''%' AND pid <> pg_backend_pid()");
kill 'KILL', $w->{h}->{KIDS}[0]{PID};
eval { $w->{h}->finish; };
ok(poll($node, "SELECT count(*) FROM pg_stat_activity WHERE pid = $pid", '0', 15),
	'the backend of a vanished client ends within the recheck interval');
is($node->safe_psql('postgres', $waiting), '0', 'and its slot is free');

# 5. Many waiters and a burst: one wakeup per job, no herd.
my $n_waiters = 100;
# a long wait: on a loaded machine starting 100 psql processes takes a while,
# and no waiter may give up before the jobs arrive
my @ws = map { start_waiter($node, sprintf($claim_a, '240 s')) } 1 .. $n_waiters;
ok(poll($node, $waiting, "$n_waiters", 180), "$n_waiters claims wait");
$wakeups0 = $node->safe_psql('postgres', 'SELECT wakeups FROM jobq_wait_stats()');
$node->safe_psql('postgres',
	"SELECT count(*) FROM jobq_enqueue_batch('a', (SELECT array_agg('{}'::jsonb) FROM generate_series(1, 20)))");
ok(poll($node, $waiting, $n_waiters - 20, 60), '20 jobs in one commit: 20 waiters leave');
my $wakeups = $node->safe_psql('postgres', 'SELECT wakeups FROM jobq_wait_stats()') - $wakeups0;
is($wakeups, 20, 'exactly 20 wakeups for 20 jobs');
note(sprintf('wakeups per job in the burst: %.2f', $wakeups / 20));
# 80 more jobs, one per transaction: every remaining waiter gets one
$node->safe_psql('postgres', "SELECT jobq_enqueue('a', '{}') FROM generate_series(1, 80)");
my %seen;
my $with_job = 0;
for my $x (@ws)
{
	my ($o) = finish_waiter($x);
	next if $o eq 'none';
	$with_job++;
	$seen{$_}++ for split /,/, $o;
}
is($with_job, $n_waiters, 'every waiter got a job');
is(scalar(grep { $seen{$_} > 1 } keys %seen), 0, 'no job went to two waiters');
$wakeups = $node->safe_psql('postgres', 'SELECT wakeups FROM jobq_wait_stats()') - $wakeups0;
note("wakeups for 100 jobs and 100 waiters: $wakeups");
ok($wakeups <= 100, 'no more wakeups than jobs');

# 6. Jobs that become ready later wake a waiter too, which then sleeps until
# they are due: no polling.  The recheck interval is set to 60 s in these
# waiters, so only the commit's wakeup can make them claim in time.
my $claim_c = "SET jobq.claim_recheck_interval = '60s'; "
  . "SELECT coalesce(string_agg(id::text, ','), 'none') FROM jobq_claim('c', wait => '%s')";
$node->safe_psql('postgres', "SELECT jobq_create_queue('c', lease => '1 second', backoff_base => '0')");

# 6a. a delayed job enqueued during the wait
$w = start_waiter($node, sprintf($claim_c, '30 s'));
ok(poll($node, $waiting, '1'), 'waiting on queue c (recheck 60 s)');
$t0 = time;
$id = $node->safe_psql('postgres', "SELECT jobq_enqueue('c', '{}', delay => '1 second')");
($got) = finish_waiter($w);
my $after = time - $t0;
is($got, $id, 'a job delayed by 1 s, enqueued during the wait, is claimed');
ok($after >= 1 && $after < 5, 'when it is due, not at the recheck or the end of the wait');
note(sprintf('delayed job claimed %.2f s after its enqueue', $after));

# each case starts from an empty queue (the jobs claimed above are running
# with a 1 s lease and would come back)
my $clear_c = "DELETE FROM jobq.jobs WHERE queue = 'c'";

# 6b. a failure retried after 1 s, and one retried at once (retry_in => 0),
# which wakes the waiter at its commit as a release does
my ($cid, $ctok);
for my $case ([ '1 second', 1, 'when its retry is due' ],
	[ '0', 0, 'promptly after the fail committed' ])
{
	my ($retry_in, $min, $when) = @$case;
	$node->safe_psql('postgres', $clear_c);
	$id = $node->safe_psql('postgres', "SELECT jobq_enqueue('c', '{}')");
	($cid, $ctok) = split /\|/, $node->safe_psql('postgres', "SELECT id, token FROM jobq_claim('c')");
	is($cid, $id, 'claimed without waiting');
	$w = start_waiter($node, sprintf($claim_c, '30 s'));
	ok(poll($node, $waiting, '1'), 'waiting on queue c');
	$t0 = time;
	is($node->safe_psql('postgres', "SELECT jobq_fail($cid, '$ctok', 'boom', retry_in => '$retry_in')"),
		'ready', "failed, retry_in => '$retry_in'");
	($got) = finish_waiter($w);
	$after = time - $t0;
	is($got, $id, "the job failed with retry_in => '$retry_in' is claimed by the waiter");
	ok($after >= $min && $after < 5, $when);
}

# 6c. a lease expired by a sweep (backoff 0: ready at once)
$node->safe_psql('postgres', $clear_c);
$id = $node->safe_psql('postgres', "SELECT jobq_enqueue('c', '{}')");
($cid) = split /\|/, $node->safe_psql('postgres', "SELECT id, token FROM jobq_claim('c')");
is($cid, $id, 'claimed, then abandoned');
$w = start_waiter($node, sprintf($claim_c, '30 s'));
ok(poll($node, $waiting, '1'), 'waiting on queue c');
usleep(1_200_000);	# the 1 s lease runs out
is($node->safe_psql('postgres', 'SELECT requeued FROM jobq_sweep()'), '1', 'the sweep requeues it');
$t0 = time;
($got) = finish_waiter($w);
is($got, $id, 'the requeued job is claimed by the waiter');
ok(time - $t0 < 5, 'promptly after the sweep committed');

# 6d. resuming a paused queue
$node->safe_psql('postgres', $clear_c);
$node->safe_psql('postgres', "SELECT jobq_pause('c')");
$id = $node->safe_psql('postgres', "SELECT jobq_enqueue('c', '{}')");
$w = start_waiter($node, sprintf($claim_c, '30 s'));
ok(poll($node, $waiting, '1'), 'waiting on a paused queue holding a job');
usleep(300_000);
ok($w->{h}->pumpable, 'nothing claimed while paused');
$node->safe_psql('postgres', "SELECT jobq_resume('c')");
$t0 = time;
($got) = finish_waiter($w);
is($got, $id, 'resume wakes the waiter, which claims the job');
ok(time - $t0 < 5, 'promptly after the resume');

# 7. Fast shutdown with waiters present.
@ws = map { start_waiter($node, sprintf($claim_a, '300 s')) } 1 .. 5;
ok(poll($node, $waiting, '5', 60), '5 claims wait');
my $t1 = time;
$node->stop('fast');
my $stop = time - $t1;
ok($stop < 10, 'fast shutdown with waiting claims');
note(sprintf('fast shutdown took %.2f s', $stop));
finish_waiter($_) for @ws;
$producer->quit;

# 8. Without preload, a wait polls and still finds the job.
my $plain = PostgreSQL::Test::Cluster->new('plain');
$plain->init;
$plain->start;
$plain->safe_psql('postgres', "CREATE EXTENSION jobq; SELECT jobq_create_queue('a');");
is($plain->safe_psql('postgres', 'SELECT preloaded FROM jobq_wait_stats()'), 'f', 'not preloaded');
$w = start_waiter($plain, sprintf($claim_a, '30 s'));
usleep(500_000);
$id = $plain->safe_psql('postgres', "SELECT jobq_enqueue('a', '{}')");
$t0 = time;
($got) = finish_waiter($w);
is($got, $id, 'a polling wait finds the job');
ok(time - $t0 < 5, 'within the poll interval, not the whole wait');
$plain->stop('fast');

done_testing();
