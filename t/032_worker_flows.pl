# t/032_worker_flows.pl: what jobq-worker hands a handler beyond the payload
# and what a persistent handler may answer beyond done or failed
# (doc/jobq-worker.md): the "rate_limited" answer of the persistent
# protocol (issue 19), through a raw /bin/sh handler and the Python and
# Node handler libraries of client/handlers: the job comes back after
# retry_after seconds with its attempt given back.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use Test::More;
use JobqTest;

my $libs = $ENV{JOBQ_HANDLERS_DIR} // die "JOBQ_HANDLERS_DIR is not set (t/run.sh sets it)";
my $node = new_node('flows');
my $tmp = PostgreSQL::Test::Utils::tempdir();
$node->safe_psql('postgres',
	"SELECT jobq_create_queue('rl', backoff_base => '0', backoff_cap => '0', max_attempts => 3)");

sub write_file
{
	my ($name, $text) = @_;
	my $path = "$tmp/$name";
	open my $fh, '>', $path or die "$path: $!";
	print $fh $text;
	close $fh;
	return $path;
}

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
my $id = $node->safe_psql('postgres', "SELECT jobq_enqueue('rl', '{\"bad\": 1}')");
my $w = start_worker($node, '-q', 'rl', '--persistent', '--', $sh);
ok(wait_log($w, qr/protocol error: "retry_after" must be a number of seconds above 0, at most 31536000/),
	'retry_after 0: protocol error');
is(stop_worker($w, 'TERM'), 0, 'retry_after 0: the worker stops on SIGTERM');
is($node->safe_psql('postgres', "SELECT state || ':' || attempt FROM jobq.jobs WHERE id = $id"),
	'ready:0', 'retry_after 0: the job is released, its attempt given back');

done_testing();
