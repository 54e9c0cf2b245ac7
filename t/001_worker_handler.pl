# t/001_worker_handler.pl: every way a handler can end, and --once,
# --max, --burst.
#
# Handler protocol: payload on stdin, JOBQ_* in the environment; exit 0 =
# completed with stdout as result (JSON when it parses, else a JSON
# string), 75 = retry later, 65 = dead at once, 69 = rate limited (back
# after JOBQ_RETRY_AFTER seconds, the attempt not counted), other exit or a
# signal = failed and retried, --timeout = stopped and failed.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use Test::More;
use JobqTest;

my $node = new_node('handler');
$node->safe_psql('postgres',
	"SELECT jobq_create_queue('h', lease => '5 s', max_attempts => 5, backoff_base => '0', backoff_cap => '0')");

# one handler that behaves as its payload says
my $h = write_handler('h', <<'SH');
p=$(cat)
case "$p" in
  *'"json"'*)   echo "{\"id\": $JOBQ_JOB_ID, \"queue\": \"$JOBQ_QUEUE\", \"attempt\": $JOBQ_ATTEMPT, \"max\": $JOBQ_MAX_ATTEMPTS, \"in\": $p}" ;;
  *'"text"'*)   echo "plain words" ;;
  *'"empty"'*)  exit 0 ;;
  *'"retry"'*)  echo "try later please" >&2; exit 75 ;;
  *'"perm"'*)   echo "bad input" >&2; exit 65 ;;
  *'"429"'*)    echo "JOBQ_RETRY_AFTER=600"; echo "too many requests" >&2; exit 69 ;;
  *'"other"'*)  echo "line one" >&2; echo "it broke" >&2; exit 3 ;;
  *'"signal"'*) kill -SEGV $$ ;;
  *'"sleep"'*)  sleep 30 ;;
esac
SH

sub enqueue
{
	my ($payload) = @_;
	return $node->safe_psql('postgres', "SELECT jobq_enqueue('h', '$payload')");
}

sub run_once
{
	my ($id, @extra) = @_;
	my $w = start_worker($node, '-q', 'h', '--once', @extra, '--', $h);
	my $rc = stop_worker($w);
	is($rc, 0, "worker --once exits 0 (job $id)");
	return $w;
}

# exit 0 with JSON: result stored as jsonb; environment set
my $id = enqueue('{"json": 1}');
my $w = run_once($id);
is(job_state($node, $id), 'completed:1', 'exit 0: completed');
is($node->safe_psql('postgres', "SELECT result::text FROM jobq_job($id)"),
	qq({"id": $id, "in": {"json": 1}, "max": 5, "queue": "h", "attempt": 1}),
	'exit 0: stdout is the JSON result; JOBQ_* environment set');
like(worker_log($w), qr/job id=$id queue=h attempt=1\/5 outcome=completed state=completed duration=\S+s/,
	'one log line with id, queue, attempt, outcome, duration');

# exit 0 with text: stored as a JSON string
$id = enqueue('{"text": 1}');
run_once($id);
is($node->safe_psql('postgres', "SELECT result::text FROM jobq_job($id)"),
	'"plain words"', 'exit 0, not JSON: result stored as a JSON string');

# exit 0, no output: NULL result
$id = enqueue('{"empty": 1}');
run_once($id);
is($node->safe_psql('postgres', "SELECT state || ':' || (result IS NULL) FROM jobq_job($id)"),
	'completed:true', 'exit 0, empty stdout: completed with a null result');

# exit 75: ready again, error kept
$id = enqueue('{"retry": 1}');
$w = run_once($id);
is(job_state($node, $id), 'ready:1', 'exit 75: back to ready');
like($node->safe_psql('postgres', "SELECT errors::text FROM jobq_job($id)"),
	qr/retry later.*try later please/, 'exit 75: error says retry, with stderr');
like(worker_log($w), qr/outcome=retry state=ready/, 'exit 75 logged as retry');
# NB: failed jobs are ready again at once (backoff 0): take each out of the
# way so that the next --once claims the next case
$node->safe_psql('postgres', "SELECT jobq_cancel($id)");

# exit 65: dead at once although attempts are left
$id = enqueue('{"perm": 1}');
run_once($id);
is(job_state($node, $id), 'dead:1', 'exit 65: dead at once');
like($node->safe_psql('postgres', "SELECT errors::text FROM jobq_job($id)"),
	qr/permanently.*bad input/, 'exit 65: error kept');

# exit 69: rate limited, ready again after JOBQ_RETRY_AFTER, attempt given back
$id = enqueue('{"429": 1}');
$w = run_once($id);
is($node->safe_psql('postgres',
		"SELECT state || ':' || attempt || ':' || (run_at > now() + interval '590 s') FROM jobq.jobs WHERE id = $id"),
	'ready:0:true', 'exit 69: ready after JOBQ_RETRY_AFTER, the attempt not counted');
like($node->safe_psql('postgres', "SELECT errors->-1->>'outcome' || ': ' || (errors->-1->>'error') FROM jobq.jobs WHERE id = $id"),
	qr/^rate limited: handler was rate limited \(exit code 69\), back in 600 s\ntoo many requests/,
	'exit 69: the attempt is recorded as rate limited, with stderr');
like(worker_log($w), qr/outcome=rate limited state=ready/, 'exit 69 logged as rate limited');
$node->safe_psql('postgres', "SELECT jobq_cancel($id)");

# any other exit: failed, retried, stderr tail as error
$id = enqueue('{"other": 1}');
run_once($id);
is(job_state($node, $id), 'ready:1', 'exit 3: failed, ready for a retry');
like($node->safe_psql('postgres', "SELECT errors->-1->>'error' FROM jobq_job($id)"),
	qr/exited with code 3\nline one\nit broke/, 'exit 3: stderr tail is the error');
$node->safe_psql('postgres', "SELECT jobq_cancel($id)");

# killed by a signal
$id = enqueue('{"signal": 1}');
$w = run_once($id);
is(job_state($node, $id), 'ready:1', 'signal: failed, ready for a retry');
like($node->safe_psql('postgres', "SELECT errors::text FROM jobq_job($id)"),
	qr/killed by signal 11/, 'signal: error names the signal');
like(worker_log($w), qr/outcome=signal/, 'signal logged');
$node->safe_psql('postgres', "SELECT jobq_cancel($id)");

# timeout: SIGTERM to the handler, failed
$id = enqueue('{"sleep": 1}');
my $t0 = time;
$w = run_once($id, '--timeout', '1');
ok(time - $t0 < 15, 'timeout: the handler was stopped');
is(job_state($node, $id), 'ready:1', 'timeout: failed, ready for a retry');
like($node->safe_psql('postgres', "SELECT errors::text FROM jobq_job($id)"),
	qr/timed out after 1 s/, 'timeout: error says so');
like(worker_log($w), qr/outcome=timeout/, 'timeout logged');
$node->safe_psql('postgres', "SELECT jobq_cancel($id)");

# the handler cannot be executed at all: refused at start, the job is
# untouched (t/024_worker_handler_missing.pl has the cases)
$id = enqueue('{"json": 2}');
$w = start_worker($node, '-q', 'h', '--once', '--', '/nonexistent/handler');
is(stop_worker($w), 2, 'missing handler: the worker refuses to start (exit 2)');
is(job_state($node, $id), 'ready:0', 'missing handler: the job was not claimed');
$node->safe_psql('postgres', "SELECT jobq_cancel($id)");

# --max N runs exactly N jobs; --burst drains and exits
$node->safe_psql('postgres', "SELECT jobq_purge('h'); SELECT jobq_cancel(id) FROM jobq_list('h', 'ready') ");
$node->safe_psql('postgres',
	"SELECT jobq_enqueue('h', ('{\"json\": ' || g || '}')::jsonb) FROM generate_series(1, 5) g");
$w = start_worker($node, '-q', 'h', '--max', '2', '--', $h);
is(stop_worker($w), 0, '--max 2 exits 0');
is($node->safe_psql('postgres', "SELECT count(*) FROM jobq_list('h', 'completed')"), '2',
	'--max 2 ran two jobs');
$w = start_worker($node, '-q', 'h', '--burst', '-c', '3', '--', $h);
is(stop_worker($w), 0, '--burst exits 0');
is($node->safe_psql('postgres', "SELECT ready + running FROM jobq_stats('h')"), '0',
	'--burst drained the queue');
is($node->safe_psql('postgres', "SELECT count(*) FROM jobq_list('h', 'completed')"), '5',
	'all five completed');

# bad usage, help, version
my ($out, $err) = ('', '');
IPC::Run::run([ worker_bin(), '--bogus' ], '>', \$out, '2>', \$err);
is($? >> 8, 2, 'bad option: exit 2');
like($err, qr/Try "jobq-worker --help"/, 'bad option: hint');
IPC::Run::run([ worker_bin(), '-q', 'h' ], '>', \$out, '2>', \$err);
is($? >> 8, 2, 'no handler: exit 2');
IPC::Run::run([ worker_bin(), '-q', 'h', '--lease', 'x', '--', 'true' ], '>', \$out, '2>', \$err);
is($? >> 8, 2, 'bad --lease: exit 2');
IPC::Run::run([ worker_bin(), '--help' ], '>', \$out, '2>', \$err);
is($? >> 8, 0, '--help exits 0');
like($out, qr/--concurrency=N/, '--help lists options');
IPC::Run::run([ worker_bin(), '-V' ], '>', \$out, '2>', \$err);
is($? >> 8, 0, '-V exits 0');
like($out, qr/jobq-worker \(jobq\) \d+\.\d+/, '-V prints the version');
IPC::Run::run([ worker_bin(), '-d', 'host=/nonexistent', '-q', 'h', '--once', '--', 'true' ],
	'>', \$out, '2>', \$err);
is($? >> 8, 3, 'cannot connect at start: exit 3');

done_testing();
