# t/029_worker_registry.pl: jobq-worker in the worker registry (issue 16).
#  - it registers (name, host, pid, queues, slots) and its claims carry its
#    registry id, by which jobq_workers lists its running job; the process
#    title shows its state and busy slots;
#  - jobq workers shows a queue whose only live worker is quiet as a
#    backlog with no live worker (jobq_queue_consumers);
#  - quiet while it sleeps in a blocking claim: it hears at once (its
#    heartbeat would come 30 s later), claims nothing after the signal
#    committed, keeps heartbeating, shows quiet; resume: heard at once too
#    (a quiet idle worker waits in a claim the server holds), it claims;
#  - a signal that commits while the worker is between two claims: its next
#    waiting claim returns at once (once), so it hears without waiting for
#    the claim's end or its heartbeat;
#  - stop drains like SIGTERM: the running job completes, exit 0, and it
#    leaves the registry;
#  - kill -9: the registry prunes the dead worker, the prune touches no job
#    (still running, attempt 1), and after the lease a second worker
#    completes the job normally;
#  - reclaim_on_worker_death: kill -9 of a worker holding a job of such a
#    queue requeues the job at the prune (dead_after + a sweep), long
#    before its lease, the attempt counted as a lost lease; its late
#    complete is refused as stale (the queue above, without it: nothing);
#  - a server crash (immediate stop) empties the registry; the workers
#    register again under their ids;
#  - against a database whose jobq SQL is 0.1.0 the worker logs once that
#    there is no registry and runs jobs as before.
# Behaviour is asserted, not speed: the waits are upper bounds.
use strict;
use warnings;
use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);
use JobqTest;

my $node = new_node('registry',
	"shared_preload_libraries = 'jobq'\njobq.sweep_interval = '200ms'\n");
my $dir = PostgreSQL::Test::Utils::tempdir();
$node->safe_psql('postgres',
	"SELECT jobq_create_queue('r', lease => '30 s', backoff_base => '0', backoff_cap => '0')");
my $h = write_handler('h', "cat >/dev/null; [ -e $dir/slow ] && sleep 2; echo '{\"ok\": true}'");

sub sql { return $node->safe_psql('postgres', $_[0]); }
sub title { my $p = shift; my $t = -e "/proc/$p/cmdline" ? slurp_file("/proc/$p/cmdline") : ''; $t =~ s/\0+$//; $t =~ s/\0/ /g; return $t; }

# --- registration, claim label, title ------------------------------------
# a 120 s timeout: heartbeats every 30 s, so only the signal can be quick
my $a = start_worker($node, '-q', 'r', '--name', 'reg-a', '--wait-mode', 'blocking',
	'--poll-interval', '60', '--worker-timeout', '120', '--', $h);
ok(wait_log($a, qr/registered as worker ([0-9a-f-]{36})/), 'worker A registered');
my ($ida) = worker_log($a) =~ /registered as worker ([0-9a-f-]{36})/;
is(sql("SELECT name || ' ' || pid || ' ' || queues::text || ' ' || slots || ' ' || state || ' ' || alive
       FROM jobq_workers() WHERE worker_id = '$ida'"),
	"reg-a $a->{pid} {r} 1 running true", 'jobq_workers: name, pid, queues, slots, state, alive');
ok(wait_for($node, "SELECT waiting = 1 FROM jobq_wait_stats()"), 'A waits in a blocking claim');
like(title($a->{pid}), qr/^jobq-worker: running 0\/1 busy r$/, 'title: running 0/1 busy');

# --- quiet during a blocking claim ----------------------------------------
my $hb0 = sql("SELECT heartbeat_at FROM jobq_workers() WHERE worker_id = '$ida'");
my ($rc, $out, $err) = run_cli($node, [ 'worker', 'quiet', 'reg-a' ]);
is("$rc $out", "0 1 worker(s) quiet\n", 'jobq worker quiet reg-a: signalled (committed)');
my $job1 = sql("SELECT jobq_enqueue('r', '{\"n\": 1}')");
ok(wait_log($a, qr/quieted by the worker registry/, 10),
	'A heard quiet at once, not at its next heartbeat (30 s)');
ok(wait_for($node, "SELECT state = 'quiet' FROM jobq_workers() WHERE worker_id = '$ida'"),
	'jobq_workers shows A quiet');
ok(wait_for($node, "SELECT heartbeat_at > '$hb0' FROM jobq_workers() WHERE worker_id = '$ida'"),
	'A heartbeats after the signal');
like(title($a->{pid}), qr/^jobq-worker: quiet 0\/1 busy r$/, 'title: quiet');
($rc, $out) = run_cli($node, [ 'workers', '--json' ]);
like($out, qr/"worker_id":"\Q$ida\E","name":"reg-a",.*"state":"quiet"/, 'jobq workers --json shows A quiet');
($rc, $out) = run_cli($node, [ 'workers' ]);
like($out, qr/^\Q$ida\E\s+reg-a\s+\S+\s+$a->{pid}\s+quiet\s+0\s+1\s+r\s+\d+s\s+yes$/m, 'jobq workers: the table');
like($out, qr/^backlog with no live worker: r, 1 job\(s\) due, not paused \(1 live worker\(s\) name it, all quiet or stopping\)$/m,
	'jobq workers: the queue whose only worker is quiet has a backlog nobody claims');
($rc, $out) = run_cli($node, [ 'workers', '--json' ]);
like($out, qr/"queues":\[\{"queue":"r","paused":false,"ready":1,"running":0,"workers":1,"claiming":0,"slots":0,"unserved":true\}\]\}$/,
	'jobq workers --json: the same in queues');
sleep 2;
is(job_state($node, $job1), 'ready:0', 'quiet: the job enqueued after the signal was not claimed');
unlike(worker_log($a), qr/job id=$job1 /, 'quiet: A ran nothing');
ok(worker_alive($a), 'A keeps running while quiet');

# --- resume -----------------------------------------------------------------
is(sql("SELECT jobq_worker_signal('$ida', 'resume')"), '1', 'resume signalled');
ok(wait_log($a, qr/resumed by the worker registry/, 10), 'A heard resume at once');
ok(wait_for($node, "SELECT state = 'completed' FROM jobq_job($job1)"), 'A ran the job after resume');

# --- a signal that commits between two claims: the next waiting claim
# returns at once, empty (the worker hears at once, not when its wait ends),
# once; the claim after that sleeps held, taking no job
$node->safe_psql('postgres', "SELECT jobq_create_queue('r2')");
my $idx = sql("SELECT worker_id FROM jobq_worker_register('reg-x', queues => ARRAY['r2'])");
is(sql("SELECT jobq_worker_signal('$idx', 'quiet')"), '1', 'X quieted while not in a claim');
sql("SELECT jobq_enqueue('r2', '{}')");
is(sql("SELECT count(*) || ' ' || (clock_timestamp() - statement_timestamp() < interval '30 s')
       FROM jobq_claim('r2', '$idx', 1, wait => '60 s')"),
	'0 true', 'its next waiting claim returns at once, empty: told');
is(sql("SELECT count(*) FROM jobq_claim('r2', '$idx', 1, wait => '1 s')"), '0',
	'the claim after that sleeps held and takes no job');
is(sql("SELECT state FROM jobq.jobs WHERE queue = 'r2'"), 'ready', 'the job stays ready');
is(sql("SELECT jobq_worker_heartbeat('$idx')"), 'quiet', 'the heartbeat answers quiet');
# quiet while X waits in a blocking claim: the claim returns at the signal's
# commit; the delay from the signal's clock to the claim's return is
# measured and shown (FEATURES-0.2.md 5.5 asks for 100 ms; asserted only as
# far below the claim's 60 s wait)
is(sql("SELECT jobq_worker_signal('$idx', 'resume')"), '1', 'X resumed');
is(sql("SELECT jobq_worker_heartbeat('$idx')"), 'running', 'X heard resume');
sql("DELETE FROM jobq.jobs WHERE queue = 'r2'");
my ($wout, $werr) = ('', '');
my $wh = IPC::Run::start([ $node->installed_command('psql'), '-XAtq', '-d', $node->connstr('postgres'),
	'-c', "SELECT count(*) || '|' || extract(epoch FROM clock_timestamp()) FROM jobq_claim('r2', '$idx', 1, wait => '60 s')" ],
	'<', \undef, '>', \$wout, '2>', \$werr);
ok(wait_for($node, "SELECT count(*) = 1 FROM pg_stat_activity WHERE wait_event = 'Extension'"
		. " AND query LIKE '%jobq_claim(''r2''%'"), 'X waits in a blocking claim');
my $signalled = sql("SELECT extract(epoch FROM clock_timestamp()) FROM jobq_worker_signal('$idx', 'quiet')");
$wh->finish;
my ($n_claimed, $returned) = split /\|/, $wout;
my $ms = ($returned - $signalled) * 1000;
diag(sprintf('quiet during a blocking claim: the claim returned %.1f ms after the signal', $ms));
ok($n_claimed eq '0' && $ms < 10_000, 'quiet ends the blocking claim at the signal\'s commit, empty');
sql("SELECT jobq_worker_deregister('$idx'), jobq_drop_queue('r2', force => true)");

# --- the running job of a worker, and stop (drains like SIGTERM) -------------
my $b = start_worker($node, '-q', 'r', '--name', 'reg-b', '--wait-mode', 'blocking',
	'--worker-timeout', '2', '--', $h);
ok(wait_log($b, qr/registered as worker ([0-9a-f-]{36})/), 'worker B registered');
my ($idb) = worker_log($b) =~ /registered as worker ([0-9a-f-]{36})/;
is(sql("SELECT jobq_worker_signal('reg-a', 'quiet')"), '1', 'A quiet again, B takes the jobs');
ok(wait_log($a, qr/quieted by the worker registry.*quieted by the worker registry/s, 10), 'A quiet');
open my $fh, '>', "$dir/slow" or die;
close $fh;
my $job2 = sql("SELECT jobq_enqueue('r', '{\"n\": 2}')");
ok(wait_for($node, "SELECT running = ARRAY[$job2]::bigint[] FROM jobq_workers() WHERE worker_id = '$idb'"),
	'jobq_workers lists the job B runs (claimed with its id as label)');
is(sql("SELECT worker FROM jobq_job($job2)"), $idb, 'the job carries B\'s registry id');
like(title($b->{pid}), qr/^jobq-worker: running 1\/1 busy r$/, 'title: 1/1 busy');
is(sql("SELECT jobq_worker_signal('reg-b', 'stop')"), '1', 'stop signalled while B runs a job');
ok(wait_log($b, qr/stopped by the worker registry/, 10), 'B heard stop at its heartbeat');
is(stop_worker($b), 0, 'B exits 0 after its running job (the SIGTERM path)');
is(job_state($node, $job2), 'completed:1', 'B\'s running job completed');
like(worker_log($b), qr/stopped$/m, 'B logged stopped');
is(sql("SELECT count(*) FROM jobq_workers() WHERE worker_id = '$idb'"), '0', 'B left the registry');

# --- kill -9: pruned, the job untouched, completed by another after its lease
$node->safe_psql('postgres', "SELECT jobq_alter_queue('r', lease => '6 s')");
my $c = start_worker($node, '-q', 'r', '--name', 'reg-c', '--wait-mode', 'blocking',
	'--worker-timeout', '2', '--heartbeat', '0', '--', $h);
ok(wait_log($c, qr/registered as worker ([0-9a-f-]{36})/), 'worker C registered');
my ($idc) = worker_log($c) =~ /registered as worker ([0-9a-f-]{36})/;
my $job3 = sql("SELECT jobq_enqueue('r', '{\"n\": 3}')");
ok(wait_for($node, "SELECT running = ARRAY[$job3]::bigint[] FROM jobq_workers() WHERE worker_id = '$idc'"),
	'C runs the job');
my $lease_end = sql("SELECT locked_until FROM jobq.jobs WHERE id = $job3");
kill 'KILL', $c->{pid};
is(stop_worker($c), 128 + 9, 'C killed with SIGKILL');
ok(wait_for($node, "SELECT count(*) = 0 FROM jobq_workers() WHERE worker_id = '$idc'", 't', 20),
	'the sweeper pruned the dead worker');
is(sql("SELECT state || ':' || attempt || ':' || (locked_until = '$lease_end') || ':' || (worker = '$idc')
       FROM jobq.jobs WHERE id = $job3"),
	'running:1:true:true', 'the prune touched no job: still running, same lease, attempt 1');
is(sql("SELECT jobq_worker_signal('reg-a', 'resume')"), '1', 'A resumed to take over');
ok(wait_for($node, "SELECT state = 'completed' FROM jobq_job($job3)", 't', 30),
	'after the lease the job was swept and completed normally');
is(sql("SELECT attempt || ':' || (worker = '$ida') FROM jobq_job($job3)"), '2:true',
	'by A, at attempt 2');
is(sql("SELECT count(*) FROM jobq.history WHERE state = 'dead'"), '0', 'no job dead');

# --- reclaim_on_worker_death: kill -9 -> requeued at the prune, not after the
# lease (300 s), the attempt counted as a lost lease, the stale complete
# refused.  The section above is the queue without it: nothing changed.
$node->safe_psql('postgres',
	"SELECT jobq_create_queue('rr', lease => '300 s', reclaim_on_worker_death => true)");
my $hslow = write_handler('hslow', "cat >/dev/null; sleep 30; echo '{}'");
my $e = start_worker($node, '-q', 'rr', '--name', 'reg-e', '--worker-timeout', '2', '--', $hslow);
ok(wait_log($e, qr/registered as worker ([0-9a-f-]{36})/), 'worker E registered');
my ($ide) = worker_log($e) =~ /registered as worker ([0-9a-f-]{36})/;
my $jr = sql("SELECT jobq_enqueue('rr', '{\"n\": 5}')");
ok(wait_for($node, "SELECT running = ARRAY[$jr]::bigint[] FROM jobq_workers() WHERE worker_id = '$ide'"),
	'E runs the job of the reclaiming queue');
my $token = sql("SELECT token FROM jobq.jobs WHERE id = $jr");
my $killed_at = time;
kill 'KILL', $e->{pid};
is(stop_worker($e), 128 + 9, 'E killed with SIGKILL');
ok(wait_for($node, "SELECT state = 'ready' FROM jobq.jobs WHERE id = $jr", 't', 60),
	'the job is back to ready');
my $took = time - $killed_at;
ok($took < 60, "requeued at the prune (dead_after 2 s + a sweep), not after its 300 s lease (${took}s)");
is(sql("SELECT count(*) FROM jobq_workers() WHERE worker_id = '$ide'"), '0', 'E was pruned');
is(sql("SELECT attempt || ':' || (errors -> -1 ->> 'error') FROM jobq.jobs WHERE id = $jr"),
	'1:lease expired', 'the attempt counted as a lost lease');
is(sql("SELECT jobq_complete($jr, '$token')"), 'f', 'E\'s late complete is refused as stale');
is(sql("SELECT stale_acks FROM jobq_stats('rr')"), '1', 'and counted in stale_acks');
is(sql("SELECT state FROM jobq.jobs WHERE id = $jr"), 'ready', 'the job is still ready');

# --- a server crash empties the registry; workers register again ----------
unlink "$dir/slow";
is(sql("SELECT count(*) FROM jobq.workers WHERE id = '$ida'"), '1', 'A is registered before the crash');
kill 'STOP', $a->{pid};    # so that it cannot register again before we look
$node->stop('immediate');
$node->start;
is(sql("SELECT count(*) FROM jobq.workers"), '0', 'after the crash the registry is empty');
kill 'CONT', $a->{pid};
ok(wait_log($a, qr/registered again as worker \Q$ida\E/, 60), 'A registered again, under its id');
is(sql("SELECT name || ' ' || state FROM jobq_workers() WHERE worker_id = '$ida'"), 'reg-a running',
	'A is listed again');
my $job4 = sql("SELECT jobq_enqueue('r', '{\"n\": 4}')");
ok(wait_for($node, "SELECT state = 'completed' FROM jobq_job($job4)"), 'A runs jobs after the crash');
is(sql("SELECT worker FROM jobq_job($job4)"), $ida, 'with its registry id as label');
is(stop_worker($a, 'TERM'), 0, 'A stops on SIGTERM');
is(sql("SELECT count(*) FROM jobq_workers()"), '0', 'A deregistered on exit');

# --- a 0.1.0 database: no registry, the worker runs as before ---------------
$node->safe_psql('postgres', 'CREATE DATABASE old');
$node->safe_psql('old', "CREATE EXTENSION jobq VERSION '0.1.0'");
$node->safe_psql('old', "SELECT jobq_create_queue('r')");
my $job5 = $node->safe_psql('old', "SELECT jobq_enqueue('r', '{}')");
my $d = start_worker($node->connstr('old'), '-q', 'r', '--', $h);
ok(wait_log($d, qr/job id=$job5 .*outcome=completed/), '0.1.0: the worker runs the job');
my $log = worker_log($d);
my $n = () = $log =~ /no worker registry/g;
is($n, 1, '0.1.0: "no worker registry" logged once');
like($node->safe_psql('old', "SELECT worker FROM jobq.history WHERE id = $job5"), qr/:\d+$/,
	'0.1.0: the claim label is HOST:PID');
is(stop_worker($d, 'TERM'), 0, '0.1.0: the worker stops on SIGTERM');

done_testing();
