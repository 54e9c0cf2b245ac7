# t/061_upgrade.pl: the clients of this release against a database whose
# jobq SQL is still 0.1.0, and across ALTER EXTENSION jobq UPDATE.
#
# libjobq finds no jobq_server_version() in a 0.1.0 database and works
# with it as 0.1.0: the jobq CLI reads stats, jobq-worker drains a queue.
# Then a worker keeps running while the database is updated under it: the
# job it holds (claimed before the update, its handler still busy) is
# completed after the update with its old token, and the jobs enqueued after
# the update are done by the same worker, in the same session.  New
# connections see the new SQL version.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep time);
use JobqTest;

my $node = PostgreSQL::Test::Cluster->new('upgrade');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = ''\n");
$node->start;
$node->safe_psql('postgres', "CREATE EXTENSION jobq VERSION '0.1.0'");
is($node->safe_psql('postgres', "SELECT extversion FROM pg_extension WHERE extname = 'jobq'"),
	'0.1.0', 'the database runs the 0.1.0 SQL');

$node->safe_psql('postgres', q{
	SELECT jobq_create_queue('up', lease => '30 s', backoff_base => '0');
	SELECT jobq_enqueue('up', pg_catalog.jsonb_build_object('n', n)) FROM generate_series(1, 5) n;
});

# the queue functions of 0.1.0's SQL, served by the new library
$node->safe_psql('postgres', "SELECT jobq_alter_queue('up', max_attempts => 7)");
is($node->safe_psql('postgres', "SELECT max_attempts || ' ' || lease FROM jobq_queues() WHERE queue = 'up'"),
	'7 00:00:30', 'jobq_alter_queue and jobq_queues work on the 0.1.0 SQL');
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_attribute WHERE attrelid = 'jobq.queues'::regclass AND attname = 'group_mode'"),
	'0', 'which has no 0.2.0 queue settings');

my ($rc, $out, $err) = run_cli($node, [ 'queue', 'alter', 'up', '--max-attempts', '7' ]);
is($rc, 0, 'jobq queue alter of a 0.1.0 setting works against 0.1.0') or diag($err);
($rc, $out, $err) = run_cli($node, [ 'queue', 'alter', 'up', '--set', 'max_running=3' ]);
is($rc, 1, 'a setting of 0.2.0 is refused against 0.1.0');
like($err, qr/no queue settings of 0\.2\.0 \(ALTER EXTENSION jobq UPDATE adds them\)/, 'saying what to do');

($rc, $out, $err) = run_cli($node, [ 'stats', 'up', '--json' ]);
is($rc, 0, 'jobq stats works against 0.1.0') or diag($err);
like($out, qr/"ready":\s*5/, 'and reads the five ready jobs');

# a handler that, on the job whose payload says "slow", says it started and
# waits for the test's go-ahead (at most a minute)
my $dir = PostgreSQL::Test::Utils::tempdir();
my ($started, $go) = ("$dir/slow.started", "$dir/slow.go");
my $h = write_handler('h', <<SH);
p=\$(cat)
case "\$p" in
  *slow*) touch $started; i=0; while [ ! -e $go ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done ;;
esac
echo "{\\"done\\": \$JOBQ_JOB_ID}"
SH

my $w = start_worker($node, '-q', 'up', '--burst', '--', $h);
is(stop_worker($w), 0, 'jobq-worker --burst drains the 0.1.0 queue and exits 0');
is($node->safe_psql('postgres', "SELECT count(*) FROM jobq.history WHERE queue = 'up' AND state = 'completed'"),
	'5', 'all five jobs completed');
unlike(worker_log($w), qr/version/i, 'no version complaint from the worker');

# A worker holds a running job while the database is updated.
my $slow = $node->safe_psql('postgres', "SELECT jobq_enqueue('up', '{\"slow\": true}')");
$w = start_worker($node, '-q', 'up', '--', $h);
ok(wait_for($node, "SELECT state = 'running' FROM jobq.jobs WHERE id = $slow"),
	'the slow job is running');
my $deadline = time() + 30;
sleep 0.1 while !-e $started && time() < $deadline;
ok(-e $started, 'its handler started');
my $token = $node->safe_psql('postgres', "SELECT token FROM jobq.jobs WHERE id = $slow");

$node->safe_psql('postgres', 'ALTER EXTENSION jobq UPDATE');
is($node->safe_psql('postgres', 'SELECT sql_version || \' \' || library_version FROM jobq_server_version()'),
	'0.2.0 0.2.0', 'updated while the worker runs');
is($node->safe_psql('postgres', "SELECT state FROM jobq.jobs WHERE id = $slow"), 'running',
	'the slow job is still running');
is($node->safe_psql('postgres', "SELECT max_attempts || ' ' || group_mode || ' ' || max_running || ' ' || notify_finished FROM jobq_queues() WHERE queue = 'up'"),
	'7 none 0 false', 'the queue keeps its settings and has the 0.2.0 ones at their defaults');
$node->safe_psql('postgres', "SELECT jobq_alter_queue('up', max_running => 5)");
is($node->safe_psql('postgres', "SELECT max_running || ' ' || max_attempts FROM jobq_queues() WHERE queue = 'up'"),
	'5 7', 'and takes them on alter');
$node->safe_psql('postgres', "SELECT jobq_alter_queue('up', max_running => 0)");
open my $fh, '>', $go or die "$go: $!";
close $fh;

ok(wait_for($node, "SELECT state FROM jobq_job($slow)", 'completed', 30),
	'the job claimed before the update is completed after it');
is($node->safe_psql('postgres', "SELECT token = '$token' FROM jobq.history WHERE id = $slow"),
	't', 'with the token of its claim');
$node->safe_psql('postgres',
	"SELECT jobq_enqueue('up', pg_catalog.jsonb_build_object('after', n)) FROM generate_series(1, 3) n");
ok(wait_for($node, "SELECT count(*) FROM jobq.jobs WHERE queue = 'up'", '0', 30),
	'the same worker does the jobs enqueued after the update');
is($node->safe_psql('postgres', "SELECT sum(stale_acks) FROM jobq_stats('up')"), '0',
	'no acknowledgement was refused');
is(stop_worker($w, 'TERM'), 0, 'the worker stops cleanly');
unlike(worker_log($w), qr/error|could not/i, 'its log has no error');

($rc, $out, $err) = run_cli($node, [ 'stats', 'up', '--json' ]);
is($rc, 0, 'jobq stats works after the update') or diag($err);
like($out, qr/"completed":\s*9/, 'and counts the nine completed jobs');

done_testing();
