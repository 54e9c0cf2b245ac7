# t/034_worker_checkpoint.pl: checkpoints through jobq-worker (issue 18,
# doc/flows.md "Checkpoints", doc/jobq-worker.md): a persistent Python
# handler checkpoints after each step, its worker is killed with SIGKILL
# mid-job, and the next attempt resumes from the last checkpoint; a
# process handler of a retried job finds the state in the file named by
# JOBQ_CHECKPOINT_FILE (removed after the job), a first attempt has none;
# the Node library's checkpoint call stores its state.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use JobqTest;

my $libs = $ENV{JOBQ_HANDLERS_DIR} // die "JOBQ_HANDLERS_DIR is not set (t/run.sh sets it)";
my $node = new_node('checkpoint');
my $tmp = PostgreSQL::Test::Utils::tempdir();
$node->safe_psql('postgres',
	"SELECT jobq_create_queue('ck', lease => '2 s', backoff_base => '0', backoff_cap => '0', max_attempts => 3)");

# -- persistent Python: five steps, a checkpoint after each; the first
# attempt stalls after step 3 and its worker is killed there
my $py = write_file('steps.py', <<"PY");
import sys, time
sys.path.insert(0, "$libs")
import jobq_handler

def handle(job):
    start = (job.get("checkpoint") or {}).get("step", 0)
    with open("$tmp/steps.log", "a") as f:
        f.write("attempt %d starts after step %d\\n" % (job["attempt"], start))
    for step in range(start + 1, 6):
        jobq_handler.checkpoint(job, {"step": step})
        if step == 3 and job["attempt"] == 1:
            time.sleep(120)
    return {"resumed_after": start, "attempt": job["attempt"]}

jobq_handler.run(handle)
PY
my $id = $node->safe_psql('postgres', "SELECT jobq_enqueue('ck', '{\"steps\": 5}')");
my $w = start_worker($node, '-q', 'ck', '--persistent', '--lease', '2', '--heartbeat', '0.5',
	'--', 'python3', $py);
ok(wait_for($node, "SELECT state->>'step' = '3' FROM jobq.checkpoints WHERE id = $id"),
	'python: the first attempt checkpointed step 3');
is($node->safe_psql('postgres', "SELECT attempt FROM jobq.checkpoints WHERE id = $id"),
	'1', 'python: stored by attempt 1');
kill 'KILL', $w->{pid};
is(stop_worker($w), 128 + 9, 'python: worker killed with SIGKILL mid-job');
ok(wait_for($node, "SELECT locked_until < clock_timestamp() FROM jobq.jobs WHERE id = $id"),
	'python: the lease ran out');
$node->safe_psql('postgres', "SELECT jobq_sweep('ck')");
$w = start_worker($node, '-q', 'ck', '--persistent', '--burst', '--', 'python3', $py);
is(stop_worker($w), 0, 'python: the second worker drains the queue');
is($node->safe_psql('postgres', "SELECT state || ' ' || result::text FROM jobq.history WHERE id = $id"),
	'completed {"attempt": 2, "resumed_after": 3}',
	'python: the second attempt resumed after step 3');
is(slurp_file("$tmp/steps.log"), "attempt 1 starts after step 0\nattempt 2 starts after step 3\n",
	'python: each attempt started where the last checkpoint left it');
is($node->safe_psql('postgres', "SELECT attempt || ' ' || state::text FROM jobq.checkpoints WHERE id = $id"),
	'2 {"step": 5}', 'python: the last checkpoint is kept with the finished job');

# -- a process handler: the state of the attempt before in JOBQ_CHECKPOINT_FILE
my $sh = write_file('cat.sh', <<"SH");
#!/bin/sh
cat >/dev/null
echo "\${JOBQ_CHECKPOINT_FILE:-none}" >> $tmp/files.log
if [ -n "\$JOBQ_CHECKPOINT_FILE" ]; then cat "\$JOBQ_CHECKPOINT_FILE"; else echo '"no checkpoint"'; fi
SH
chmod 0755, $sh;
my $first = $node->safe_psql('postgres', "SELECT jobq_enqueue('ck', '{}', priority => -1)");
my $second = $node->safe_psql('postgres', "SELECT jobq_enqueue('ck', '{}')");
# the second job's first attempt checkpoints and fails (by hand, in SQL)
$node->safe_psql('postgres', "UPDATE jobq.jobs SET priority = -2 WHERE id = $second");
$node->safe_psql('postgres',
	"SELECT jobq_checkpoint(id, token, '{\"copied\": 1000}'), jobq_fail(id, token, 'crashed')"
	  . " FROM jobq_claim('ck', 'sql', 1)");
$w = start_worker($node, '-q', 'ck', '--burst', '--', $sh);
is(stop_worker($w), 0, 'process: --burst exits 0');
is($node->safe_psql('postgres', "SELECT result::text FROM jobq.history WHERE id = $second"),
	'{"copied": 1000}', 'process: a retried job reads its checkpoint from JOBQ_CHECKPOINT_FILE');
is($node->safe_psql('postgres', "SELECT result::text FROM jobq.history WHERE id = $first"),
	'"no checkpoint"', 'process: a first attempt has no JOBQ_CHECKPOINT_FILE');
my @files = split /\n/, slurp_file("$tmp/files.log");
is(scalar(grep { $_ ne 'none' } @files), 1, 'process: one job had a checkpoint file');
ok(!grep({ $_ ne 'none' && -e $_ } @files), 'process: the file is removed after the job');

# -- Node: the library's checkpoint call
SKIP:
{
	skip 'node is not installed', 2 if system('node --version >/dev/null 2>&1') != 0;
	my $js = write_file('ck.js', <<"JS");
const { run, checkpoint } = require('$libs/jobq-handler');
run(async (job) => { checkpoint(job, { from: 'node' }); return job.checkpoint || null; });
JS
	my $nid = $node->safe_psql('postgres', "SELECT jobq_enqueue('ck', '{}')");
	$w = start_worker($node, '-q', 'ck', '--persistent', '--burst', '--', 'node', $js);
	is(stop_worker($w), 0, 'node: --burst exits 0');
	is($node->safe_psql('postgres', "SELECT state::text FROM jobq.checkpoints WHERE id = $nid"),
		'{"from": "node"}', 'node: checkpoint() stored the state');
}

done_testing();
