# t/026_worker_persistent.pl: jobq-worker --persistent (doc/jobq-worker.md,
# "Persistent handlers"): long-lived handler processes that take jobs as
# JSON lines, through the Python and Node handler libraries of
# client/handlers and a raw /bin/sh one.  Each outcome of the protocol
# (completed with a result, retry with a delay, failed for good), jobs
# spread over the processes and run several at a time, a handler process
# that dies mid-job (its jobs fail and are retried, the others go on, it is
# started again), a job over --timeout (its process is replaced, its job
# failed, the process's other job released), protocol errors, SIGTERM, and
# jobs claimed ahead (--prefetch).
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use JobqTest;

my $libs = $ENV{JOBQ_HANDLERS_DIR} // die "JOBQ_HANDLERS_DIR is not set (t/run.sh sets it)";
my $node = new_node('persistent');
my $tmp = PostgreSQL::Test::Utils::tempdir();
$node->safe_psql('postgres',
	"SELECT jobq_create_queue('p', backoff_base => '0', backoff_cap => '0', max_attempts => 3)");

# a clean queue for the next case
sub reset_queue
{
	$node->safe_psql('postgres', "DELETE FROM jobq.jobs; DELETE FROM jobq.history");
}

sub enqueue
{
	my ($payloads) = @_;
	return $node->safe_psql('postgres',
		"SELECT string_agg(id::text, ',' ORDER BY id) FROM jobq_enqueue_batch('p', ARRAY[$payloads]::jsonb[])");
}

# -- Python: every outcome, by payload; pids recorded per job
my $py = write_file('h.py', <<"PY");
import os, sys, time
sys.path.insert(0, "$libs")
import jobq_handler

def handle(job):
    p = job["payload"]
    with open("$tmp/py.pids", "a") as f:
        f.write("%d %d\\n" % (job["id"], os.getpid()))
    if p.get("do") == "retry":
        raise jobq_handler.Retry("later please", delay=3600)
    if p.get("do") == "permanent":
        raise jobq_handler.Permanent("bad input")
    if p.get("do") == "raise":
        raise ValueError("boom")
    if p.get("do") == "crash":
        os._exit(3)
    if p.get("sleep"):
        time.sleep(p["sleep"])
    return {"echo": p, "attempt": job["attempt"]}

jobq_handler.run(handle, jobs=2)
PY

my $ids = enqueue(q{'{"n": 1}', '{"n": 2, "s": "é\u00e9"}', '{"do": "retry"}', '{"do": "permanent"}', '{"do": "raise"}'}
	. join('', map { ", '{\"sleep\": 0.3, \"k\": $_}'" } 1 .. 8));
my ($ok1, $ok2, $retry, $perm, $raise) = split /,/, $ids;
my $w = start_worker($node, '-q', 'p', '-c', '4', '--persistent=2', '--burst', '--', 'python3', $py);
is(stop_worker($w), 0, 'python: --burst drains and exits 0');
is($node->safe_psql('postgres', "SELECT state || ' ' || result::text FROM jobq_job($ok1)"),
	'completed {"echo": {"n": 1}, "attempt": 1}', 'python: completed with the returned result');
is($node->safe_psql('postgres', "SELECT result->'echo'->>'s' FROM jobq_job($ok2)"),
	'éé', 'python: non-ASCII payload and result come through as UTF-8');
is($node->safe_psql('postgres',
	"SELECT state || ' ' || (run_at > now() + interval '3500 s') || ' ' || (errors->-1->>'error') FROM jobq_job($retry)"),
	'ready true later please', 'python: Retry(delay=3600) is retried an hour later, with its error');
is($node->safe_psql('postgres', "SELECT state || ' ' || (errors->-1->>'error') FROM jobq_job($perm)"),
	'dead bad input', 'python: Permanent goes to dead at once');
like($node->safe_psql('postgres', "SELECT state || ' ' || attempt || ' ' || (errors->-1->>'error') FROM jobq_job($raise)"),
	qr/^dead 3 Traceback .*ValueError: boom/s,
	'python: an exception fails the attempt with its traceback, retried until max_attempts');
my %pids = map { (split / /)[1] => 1 } split /\n/, slurp_file("$tmp/py.pids");
is(scalar(keys %pids), 2, 'python: the jobs ran in the two handler processes, never one per job');
like(worker_log($w), qr/handler process 0 \(pid \d+\) ready for 2 job\(s\) at a time/,
	'python: the ready line is logged with its capacity');

# -- a crash mid-job: that process's jobs fail and come back, the other process goes on
reset_queue();
unlink "$tmp/py.pids";
$ids = enqueue(join(',', map { "'{\"n\": $_}'" } 1 .. 20) . q{, '{"do": "crash"}'});
my $crash = (split /,/, $ids)[-1];
# a job in the crashing process fails with it, and both come back at once
# (backoff 0), so the same pair may meet again: the other jobs get more
# attempts than the crashing job's three, which could otherwise take one
# of them down with it
$node->safe_psql('postgres', "UPDATE jobq.jobs SET max_attempts = 10 WHERE payload ? 'n'");
$w = start_worker($node, '-q', 'p', '-c', '4', '--persistent=2', '--', 'python3', $py);
ok(wait_for($node, "SELECT count(*) FROM jobq.history WHERE state = 'completed' AND (payload ? 'n')", '20', 30),
	'crash: every other job completes');
ok(wait_log($w, qr/handler process \d \(pid \d+\): handler process exited with code 3 with \d job/),
	'crash: the death of the process is logged with its jobs');
ok(wait_for($node, "SELECT state || ' ' || attempt || ' ' || (errors->0->>'error') FROM jobq_job($crash)",
	'dead 3 handler process exited with code 3', 30),
	'crash: the crashing job failed with the reason, each of its 3 attempts');
ok(wait_log($w, qr/handler process \d \(pid \d+\) ready.*\n(?s:.*)handler process \d \(pid \d+\) ready.*\n(?s:.*)exited with code 3(?s:.*)ready for 2/),
	'crash: the process is started again');
is(stop_worker($w, 'TERM'), 0, 'crash: SIGTERM stops the worker, exit 0');

# -- a timeout: the process is replaced, its job failed, the other job of
# the process (started a second later, so in flight when the first overruns)
# released
reset_queue();
my $slow = $node->safe_psql('postgres', q{SELECT jobq_enqueue('p', '{"sleep": 30}')});
my $other = $node->safe_psql('postgres', q{SELECT jobq_enqueue('p', '{"sleep": 1.5}', delay => '1 s')});
$w = start_worker($node, '-q', 'p', '-c', '2', '--persistent=1', '-t', '2s', '--kill-after', '1s',
	'--poll-interval', '0.2s', '--', 'python3', $py);
ok(wait_for($node, "SELECT (errors->0->>'error') LIKE 'handler timed out after 2 s%' FROM jobq_job($slow)", 't', 30),
	'timeout: the overrunning job failed "timed out"');
ok(wait_for($node, "SELECT state FROM jobq_job($other)", 'completed', 30),
	'timeout: the other job of the stopped process was released, not failed, and ran again');
is($node->safe_psql('postgres', "SELECT coalesce(jsonb_array_length(errors), 0) FROM jobq_job($other)"), '0',
	'timeout: the released job carries no error');
$node->safe_psql('postgres', "SELECT jobq_cancel($slow)");
is(stop_worker($w, 'TERM'), 0, 'timeout: exit 0');

# -- Node: results and errors, several jobs at a time in one process
reset_queue();
my $js = write_file('h.js', <<"JS");
const { run, Retry, Permanent } = require('$libs/jobq-handler');
let inflight = 0, most = 0;
run(async (job) => {
  inflight++; most = Math.max(most, inflight);
  await new Promise((r) => setTimeout(r, 50));
  inflight--;
  if (job.payload.do === 'permanent') throw new Permanent('no such user');
  if (job.payload.do === 'retry') throw new Retry('busy', 7200);
  return { n: job.payload.n, most };
}, { jobs: 8 });
JS
$ids = enqueue(join(',', map { "'{\"n\": $_}'" } 1 .. 16) . q{, '{"do": "permanent"}', '{"do": "retry"}'});
my @ids = split /,/, $ids;
$w = start_worker($node, '-q', 'p', '-c', '8', '--persistent=1', '--burst', '--', 'node', $js);
is(stop_worker($w), 0, 'node: --burst drains and exits 0');
is($node->safe_psql('postgres', "SELECT count(*) FROM jobq.history WHERE state = 'completed'"), '16',
	'node: every job completed');
cmp_ok($node->safe_psql('postgres', "SELECT max((result->>'most')::int) FROM jobq.history WHERE result ? 'most'"),
	'>', 1, 'node: one process ran several jobs at a time');
is($node->safe_psql('postgres', "SELECT state || ' ' || (errors->-1->>'error') FROM jobq_job($ids[16])"),
	'dead no such user', 'node: Permanent goes to dead');
is($node->safe_psql('postgres', "SELECT state || ' ' || (run_at > now() + interval '7000 s') FROM jobq_job($ids[17])"),
	'ready true', 'node: Retry with a delay');

# -- protocol errors: a raw handler that answers garbage; its job is released
reset_queue();
my $bad = write_handler('bad', 'echo \'{"ready": true}\'; read line; echo "this is not json"; sleep 60');
my $id = $node->safe_psql('postgres', "SELECT jobq_enqueue('p', '{}')");
$w = start_worker($node, '-q', 'p', '--persistent', '--kill-after', '1s', '--', $bad);
ok(wait_log($w, qr/error: handler process 0 \(pid \d+\): protocol error: not a JSON object: this is not json/),
	'protocol: a line that is not JSON is an error, logged with the line');
ok(wait_for($node, "SELECT state || ' ' || attempt FROM jobq_job($id)", 'ready 0', 30),
	'protocol: the job of a broken process is released (attempt given back)');
is(stop_worker($w, 'TERM'), 0, 'protocol: SIGTERM, exit 0');
reset_queue();

my $noready = write_handler('noready', 'read line; echo "{\"id\": 1, \"status\": \"completed\"}"; sleep 60');
$id = $node->safe_psql('postgres', "SELECT jobq_enqueue('p', '{}')");
$w = start_worker($node, '-q', 'p', '--persistent', '--', $noready);
usleep(500_000);
is($node->safe_psql('postgres', "SELECT state FROM jobq_job($id)"), 'ready',
	'protocol: no job goes to a process before its ready line');
is(stop_worker($w, 'TERM'), 0, 'protocol: SIGTERM while a process was never ready, exit 0');
is($node->safe_psql('postgres', "SELECT state || ' ' || attempt FROM jobq_job($id)"), 'ready 0',
	'protocol: the job was never claimed');

# -- claiming ahead (--prefetch): jobs claimed while the slots are full wait
# for a slot, their leases kept; SIGTERM gives them back with their attempt
reset_queue();
enqueue(join(',', q{'{"n": 0}'}, map { "'{\"sleep\": 3, \"k\": $_}'" } 1 .. 5));
$w = start_worker($node, '-q', 'p', '-c', '1', '--persistent=1', '--prefetch=2', '--', 'python3', $py);
ok(wait_for($node, "SELECT count(*) FROM jobq.jobs WHERE state = 'running'", '3', 30),
	'prefetch: -c 1 --prefetch=2 holds its running job and two claimed ahead');
is($node->safe_psql('postgres', "SELECT count(*) FROM jobq.jobs WHERE state = 'running'"), '3',
	'prefetch: and no more');
is(stop_worker($w, 'TERM'), 0, 'prefetch: SIGTERM, exit 0');
is($node->safe_psql('postgres',
	"SELECT string_agg(state || ' ' || attempt, ',' ORDER BY state) FROM "
	  . "(SELECT state::text, attempt FROM jobq.jobs UNION ALL SELECT state::text, attempt FROM jobq.history) j"),
	'completed 1,completed 1,ready 0,ready 0,ready 0,ready 0',
	'prefetch: the running job finished, the two claimed ahead were released with their attempt given back');

# --prefetch=auto: ahead while the jobs are short, not once they take longer
reset_queue();
enqueue(join(',', (map { "'{\"n\": $_}'" } 1 .. 20), (map { "'{\"sleep\": 0.2, \"k\": $_}'" } 1 .. 6)));
$w = start_worker($node, '-q', 'p', '-c', '2', '--persistent=1', '--burst', '--', 'python3', $py);
is(stop_worker($w), 0, 'prefetch auto: --burst drains and exits 0');
like(worker_log($w),
	qr/info: claiming up to 2 job\(s\) ahead: jobs take [0-9.]+ ms on average(?s:.*)info: no longer claiming ahead: jobs take [0-9.]+ ms on average/,
	'prefetch auto: on with the short jobs, off once jobs take longer than 50 ms');

# -- under valgrind: the worker's side of every outcome, a crash and a restart, with no leak
# and no memory error
SKIP:
{
	my $vg = `command -v valgrind 2>/dev/null`;
	chomp $vg;
	skip 'valgrind not installed', 2 unless $vg;
	reset_queue();
	enqueue(join(',', map { "'{\"n\": $_}'" } 1 .. 40)
		  . q{, '{"do": "retry"}', '{"do": "permanent"}', '{"do": "raise"}', '{"do": "crash"}'});
	$w = start_worker_cmd($node,
		[ $vg, '--quiet', '--leak-check=full', '--show-leak-kinds=definite,indirect',
		  '--errors-for-leak-kinds=definite,indirect', '--error-exitcode=99',
		  '--child-silent-after-fork=yes', '--trace-children=no', worker_bin() ],
		'-q', 'p', '-c', '4', '--persistent=2', '--burst', '--', 'python3', $py);
	is(stop_worker($w), 0, 'valgrind: --persistent drains every outcome and exits 0, no leak, no error');
	is($node->safe_psql('postgres', "SELECT count(*) FROM jobq.history WHERE state = 'completed'"),
		'40', 'valgrind: every ordinary job completed');
}

# -- bad usage
my ($out, $err) = ('', '');
IPC::Run::run([ worker_bin(), '-q', 'p', '--persistent=0', '--', '/bin/true' ], '>', \$out, '2>', \$err);
is($? >> 8, 2, '--persistent=0: usage error, exit 2');
like($err, qr/--persistent must be a whole number between 1 and 1000, not "0"/, '--persistent=0: says the range');
IPC::Run::run([ worker_bin(), '-q', 'p', '--persistent', '--prefetch=ahead', '--', '/bin/true' ], '>', \$out, '2>', \$err);
is($? >> 8, 2, '--prefetch=ahead: usage error, exit 2');
like($err, qr/--prefetch must be a whole number between 0 and 1000, not "ahead"/, '--prefetch: says the range');
done_testing();
