# t/032_worker_flows.pl: what jobq-worker hands a handler beyond the payload
# and what a persistent handler may answer beyond done or failed
# (doc/jobq-worker.md): the dependency results of a job in a flow, in
# process-per-job mode (the file JOBQ_DEP_RESULTS names) and in the
# persistent protocol (the job's "deps"), through the Python and Node
# handler libraries too, with the exact values its parents returned, and
# megabytes of them for a fan-in; jobs outside flows get neither.  And the
# "rate_limited" answer of the persistent protocol (issue 19), through a
# raw /bin/sh handler and both libraries: the job comes back after
# retry_after seconds with its attempt given back.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use Test::More;
use JobqTest;

my $libs = $ENV{JOBQ_HANDLERS_DIR} // die "JOBQ_HANDLERS_DIR is not set (t/run.sh sets it)";
my $node = new_node('flows');
$node->safe_psql('postgres',
	"SELECT jobq_create_queue('rl', backoff_base => '0', backoff_cap => '0', max_attempts => 3)");

# the state, attempt, how far run_at is ahead (rounded to 10 s) and the
# last error entry of job $id
sub rate_limited_state
{
	my ($id) = @_;
	return $node->safe_psql('postgres',
		"SELECT state || ':' || attempt || ':' || round(extract(epoch FROM run_at - now()) / 10) * 10"
		  . " || ':' || (errors->-1->>'outcome') || ':' || (errors->-1->>'error')"
		  . " FROM jobq.jobs WHERE id = $id");
}

# -- dependency results
$node->safe_psql('postgres', "SELECT jobq_create_queue('fw', backoff_base => '0', backoff_cap => '0')");

# a flow: parents p1 and p2 (results {"from": <ref>, ...}), child c of both;
# and a job outside every flow.  Returns (child id, {ref => id}, lone id).
sub make_flow
{
	my ($tag) = @_;
	my $rows = $node->safe_psql('postgres', qq{
		SELECT string_agg(ref || '=' || id, ',' ORDER BY ref) FROM jobq_flow('[
		  {"ref": "p1", "queue": "fw", "payload": {"role": "parent", "ref": "p1", "tag": "$tag"}},
		  {"ref": "p2", "queue": "fw", "payload": {"role": "parent", "ref": "p2", "tag": "$tag"}},
		  {"ref": "c", "queue": "fw", "payload": {"role": "child", "tag": "$tag"}, "depends_on": ["p1", "p2"]}]')});
	my %id = map { split /=/ } split /,/, $rows;
	my $lone = $node->safe_psql('postgres', qq{SELECT jobq_enqueue('fw', '{"role": "child", "tag": "$tag"}')});
	return ($id{c}, \%id, $lone);
}

# what the child must have seen: its parents' outcomes, keyed by their ids
sub expected_deps
{
	my ($id, $tag) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT jsonb_build_object(
		  '$id->{p1}', jsonb_build_object('state', 'completed', 'result', '{"from": "p1", "tag": "$tag"}'::jsonb),
		  '$id->{p2}', jsonb_build_object('state', 'completed', 'result', '{"from": "p2", "tag": "$tag"}'::jsonb))::text});
}

sub result_of
{
	my ($id) = @_;
	return $node->safe_psql('postgres', "SELECT state || ' ' || coalesce(result::text, 'null') FROM jobq_job($id)");
}

# process mode: a parent prints its result, a child prints the file
# JOBQ_DEP_RESULTS names (or "none"); an inherited JOBQ_DEP_RESULTS is
# not passed on to jobs outside flows
my $proc = write_file('deps.py', <<'PY');
import json, os, sys
p = json.load(sys.stdin)
if p["role"] == "parent":
    print(json.dumps({"from": p["ref"], "tag": p["tag"]}))
elif "JOBQ_DEP_RESULTS" in os.environ:
    with open(os.environ["JOBQ_DEP_RESULTS"]) as f:
        deps = json.load(f)
    if p.get("digest"):
        print(json.dumps({"parents": len(deps), "bytes": sum(len(d["result"]["pad"]) for d in deps.values())}))
    else:
        print(json.dumps(deps))
else:
    print(json.dumps("none"))
PY
chmod 0755, $proc;

my ($child, $id, $lone) = make_flow('proc');
{
	local $ENV{JOBQ_DEP_RESULTS} = '/nonexistent';
	my $w = start_worker($node, '-q', 'fw', '-c', '2', '--', 'python3', $proc);
	ok(wait_for($node, "SELECT state = 'completed' FROM jobq_job($child)"), 'process mode: the child ran') or diag(worker_log($w));
	ok(wait_for($node, "SELECT state = 'completed' FROM jobq_job($lone)"), 'process mode: the lone job ran');
	is(stop_worker($w, 'TERM'), 0, 'process mode: the worker stops');
}
is(result_of($child), 'completed ' . expected_deps($id, 'proc'),
	'process mode: the child read its parents\' exact results from JOBQ_DEP_RESULTS');
is(result_of($lone), 'completed "none"', 'process mode: a job outside flows has no JOBQ_DEP_RESULTS');

# a fan-in of 20 parents of 60,000 bytes each (completed by SQL): 1.2 MB
# of results, past what a pipe or an environment variable takes
$node->safe_psql('postgres', "SELECT jobq_create_queue('fwbig')");
my $fan = $node->safe_psql('postgres', q{
	SELECT id FROM jobq_flow((SELECT jsonb_agg(jsonb_build_object('ref', 'p' || i, 'queue', 'fwbig',
	    'payload', '{}'::jsonb)) FROM generate_series(1, 20) i)
	  || jsonb_build_array(jsonb_build_object('ref', 'c', 'queue', 'fw',
	       'payload', '{"role": "child", "digest": true}'::jsonb,
	       'depends_on', (SELECT jsonb_agg('p' || i) FROM generate_series(1, 20) i))))
	WHERE ref = 'c'});
is($node->safe_psql('postgres', q{
	CREATE TEMP TABLE c AS SELECT id, token FROM jobq_claim('fwbig', max_jobs => 20);
	SELECT count(*) FILTER (WHERE jobq_complete(id, token, jsonb_build_object('pad', repeat('x', 60000)))) FROM c}),
	'20', 'fan-in: the 20 parents complete with their results');
my $fw = start_worker($node, '-q', 'fw', '--', 'python3', $proc);
ok(wait_for($node, "SELECT state = 'completed' FROM jobq_job($fan)"), 'fan-in: the child ran');
is(stop_worker($fw, 'TERM'), 0, 'fan-in: the worker stops');
is(result_of($fan), 'completed {"bytes": 1200000, "parents": 20}',
	'fan-in: the child read all 1.2 MB of its 20 parents\' results');

# the persistent protocol: the job's "deps", through both libraries; a
# parent returns {"from": ref, "tag": tag}, a child its deps (or "none")
my $pylib = write_file('deps_lib.py', <<"PY");
import sys
sys.path.insert(0, "$libs")
import jobq_handler

def handle(job):
    p = job["payload"]
    if p["role"] == "parent":
        return {"from": p["ref"], "tag": p["tag"]}
    return job.get("deps", "none")

jobq_handler.run(handle, jobs=2)
PY
my $jslib = write_file('deps_lib.js', <<"JS");
const { run } = require('$libs/jobq-handler');
run(async (job) => {
  const p = job.payload;
  if (p.role === 'parent') return { from: p.ref, tag: p.tag };
  return job.deps === undefined ? 'none' : job.deps;
}, { jobs: 2 });
JS
for my $c ([ 'python', 'python3', $pylib ], [ 'node', 'node', $jslib ])
{
	my ($name, @cmd) = @$c;
	my ($child, $id, $lone) = make_flow($name);
	my $w = start_worker($node, '-q', 'fw', '-c', '2', '--persistent=1', '--', @cmd);
	ok(wait_for($node, "SELECT state = 'completed' FROM jobq_job($child)"), "$name: the child ran");
	ok(wait_for($node, "SELECT state = 'completed' FROM jobq_job($lone)"), "$name: the lone job ran");
	is(stop_worker($w, 'TERM'), 0, "$name: the worker stops");
	is(result_of($child), 'completed ' . expected_deps($id, $name),
		"$name: the child's job has its parents' exact results as \"deps\"");
	is(result_of($lone), 'completed "none"', "$name: a job outside flows has no \"deps\"");
}

# -- the rate-limited answer, from each kind of handler
my $sh = write_file('rl.sh', <<'SH');
#!/bin/sh
echo '{"ready": true}'
while read -r line; do
	id=$(printf '%s' "$line" | sed 's/^{"id":\([0-9]*\),.*/\1/')
	case "$line" in
	*'"plain"'*) echo "{\"id\": $id, \"status\": \"rate_limited\"}" ;;
	*'"bad"'*)   echo "{\"id\": $id, \"status\": \"rate_limited\", \"retry_after\": 0}" ;;
	*)           echo "{\"id\": $id, \"status\": \"rate_limited\", \"retry_after\": 600, \"error\": \"429 from upstream\"}" ;;
	esac
done
SH
chmod 0755, $sh;
my $py = write_file('rl.py', <<"PY");
import sys
sys.path.insert(0, "$libs")
import jobq_handler

def handle(job):
    raise jobq_handler.RateLimited("slow down", retry_after=600)

jobq_handler.run(handle)
PY
my $js = write_file('rl.js', <<"JS");
const { run, RateLimited } = require('$libs/jobq-handler');
run(async (job) => { throw new RateLimited('slow down', 600); });
JS

my @cases = (
	[ 'sh', [$sh], '{"x": 1}', 'ready:0:600:rate limited:429 from upstream' ],
	[ 'sh without retry_after', [$sh], '{"plain": 1}', 'ready:0:60:rate limited:handler was rate limited' ],
	[ 'python', [ 'python3', $py ], '{"x": 1}', 'ready:0:600:rate limited:slow down' ],
	[ 'node', [ 'node', $js ], '{"x": 1}', 'ready:0:600:rate limited:slow down' ]);
for my $c (@cases)
{
	my ($name, $cmd, $payload, $want) = @$c;
	my $id = $node->safe_psql('postgres', "SELECT jobq_enqueue('rl', '$payload')");
	my $w = start_worker($node, '-q', 'rl', '--persistent', '--burst', '--', @$cmd);
	is(stop_worker($w), 0, "$name: --burst exits 0");
	is(rate_limited_state($id), $want,
		"$name: a rate_limited answer puts the job back after retry_after, the attempt not counted");
	like(worker_log($w), qr/job id=$id queue=rl attempt=1\/3 outcome=rate limited state=ready/,
		"$name: logged as rate limited");
	$node->safe_psql('postgres', "SELECT jobq_cancel($id)");
}

# a retry_after out of range is a protocol error: the job is released
my $rid = $node->safe_psql('postgres', "SELECT jobq_enqueue('rl', '{\"bad\": 1}')");
my $w = start_worker($node, '-q', 'rl', '--persistent', '--', $sh);
ok(wait_log($w, qr/protocol error: "retry_after" must be a number of seconds above 0, at most 31536000/),
	'retry_after 0: protocol error');
is(stop_worker($w, 'TERM'), 0, 'retry_after 0: the worker stops on SIGTERM');
is($node->safe_psql('postgres', "SELECT state || ':' || attempt FROM jobq.jobs WHERE id = $rid"),
	'ready:0', 'retry_after 0: the job is released, its attempt given back');

done_testing();
