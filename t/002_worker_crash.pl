# t/002_worker_crash.pl: a worker killed with SIGKILL mid-job (F1), and a
# poison job whose handler kills its worker on every attempt (S6).
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);
use JobqTest;

my $node = new_node('crash');
my $dir = PostgreSQL::Test::Utils::tempdir();
$node->safe_psql('postgres',
	"SELECT jobq_create_queue('c', lease => '2 s', max_attempts => 3, backoff_base => '0', backoff_cap => '0')");

# F1 ---------------------------------------------------------------------
my $h = write_handler('slow', "echo \$\$ > $dir/handler.pid; sleep 60");
my $id = $node->safe_psql('postgres', "SELECT jobq_enqueue('c', '{}')");
my $w = start_worker($node, '-q', 'c', '--lease', '2', '--heartbeat', '0.5', '--', $h);
ok(wait_for($node, "SELECT state = 'running' FROM jobq_job($id)"), 'F1: job running');
usleep(100_000) until -s "$dir/handler.pid";
my $token = $node->safe_psql('postgres', "SELECT token FROM jobq.jobs WHERE id = $id");
sleep 2;    # the heartbeat keeps the 2 s lease alive meanwhile
is(job_state($node, $id), 'running:1', 'F1: heartbeat kept the job running past its lease');

kill 'KILL', $w->{pid};
is(stop_worker($w), 128 + 9, 'F1: worker killed with SIGKILL');
my $hpid = slurp_file("$dir/handler.pid");
chomp $hpid;
# (a dead handler may linger as a zombie if nobody reaps orphans here)
my $hstate = '';
for (1 .. 30)
{
	$hstate = -e "/proc/$hpid/stat" ? (split / /, slurp_file("/proc/$hpid/stat"))[2] : 'gone';
	last if $hstate eq 'gone' || $hstate eq 'Z';
	usleep(100_000);
}
like($hstate, qr/^(gone|Z)$/, 'F1: the handler died with its worker');

is($node->safe_psql('postgres', "SELECT count(*) FROM jobq_claim('c', 'test', 1, '5 s')"),
	'0', 'F1: not claimable before the lease ends');
ok(wait_for($node, "SELECT locked_until < clock_timestamp() FROM jobq.jobs WHERE id = $id"),
	'F1: lease ran out');
$node->safe_psql('postgres', "SELECT jobq_sweep('c')");
my ($nid, $attempt, $ntoken) = split /\|/,
  $node->safe_psql('postgres', "SELECT id, attempt, token FROM jobq_claim('c', 'test', 1, '30 s')");
is($nid, $id, 'F1: claimable after the lease');
is($attempt, 2, 'F1: with attempt + 1');
is($node->safe_psql('postgres', "SELECT jobq_complete($id, '$token')"), 'f',
	'F1: the dead worker\'s token is fenced (complete)');
is($node->safe_psql('postgres', "SELECT jobq_extend($id, '$token') IS NULL"), 't',
	'F1: the dead worker\'s token is fenced (extend)');
is($node->safe_psql('postgres', "SELECT jobq_complete($id, '$ntoken')"), 't',
	'F1: the new token completes');

# S6 ---------------------------------------------------------------------
# The poison job kills its worker every time; a supervisor loop restarts
# the worker (as systemd would).  Short leases and sweeps bring the job
# back until its attempts are used up; the other jobs keep flowing.
my $poison = write_handler('poison', <<'SH');
p=$(cat)
case "$p" in
  *poison*) kill -9 $PPID; sleep 10 ;;
  *) echo '"ok"' ;;
esac
SH
my $pid_poison = $node->safe_psql('postgres',
	"SELECT jobq_enqueue('c', '{\"poison\": true}', priority => -1)");
$node->safe_psql('postgres',
	"SELECT jobq_enqueue('c', ('{\"n\": ' || g || '}')::jsonb) FROM generate_series(1, 6) g");
my $deadline = time + 90;
my $restarts = 0;
while (time < $deadline)
{
	last if $node->safe_psql('postgres',
		"SELECT (SELECT state FROM jobq_job($pid_poison)) = 'dead'"
		  . " AND (SELECT completed FROM jobq_stats('c')) >= 7") eq 't';
	$w = start_worker($node, '-q', 'c', '--burst', '--lease', '1', '--sweep-interval', '0.3',
		'--poll-interval', '0.3', '--', $poison);
	$restarts++ if stop_worker($w) == 128 + 9;
	usleep(200_000);
}
is(job_state($node, $pid_poison), 'dead:3', 'S6: poison job dead at max attempts (3)');
like($node->safe_psql('postgres', "SELECT errors::text FROM jobq_job($pid_poison)"),
	qr/lease expired/, 'S6: its error says the lease expired');
is($node->safe_psql('postgres',
	"SELECT count(*) FROM jobq_list('c', 'completed') WHERE id > $pid_poison"),
	'6', 'S6: every other job of the queue completed');
ok($restarts >= 3, "S6: the worker was killed and restarted ($restarts runs)");

done_testing();
