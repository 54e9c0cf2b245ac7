# t/050_sweeper.pl: the background sweeper (shared_preload_libraries = 'jobq').
#
# A job whose worker vanished comes back within its lease plus the sweep
# interval although no client ever calls jobq_sweep; a failing pass is
# logged and the sweeper goes on (same process); the server stops fast.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);

my $node = PostgreSQL::Test::Cluster->new('sweeper');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'jobq'
jobq.sweeper_databases = 'postgres'
jobq.sweep_interval = '200ms'
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION jobq');

sub poll
{
	my ($sql, $want, $secs) = @_;
	my $deadline = time + ($secs // 30);
	my $got = '';
	while (time < $deadline)
	{
		$got = $node->safe_psql('postgres', $sql);
		return 1 if $got eq $want;
		usleep(50_000);
	}
	diag("timed out: $sql gave '$got', wanted '$want'");
	return 0;
}

ok(poll("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'jobq sweeper'", '1'),
	'one sweeper runs, with its own backend type');
my $sweeper_pid = $node->safe_psql('postgres',
	"SELECT pid FROM pg_stat_activity WHERE backend_type = 'jobq sweeper'");

$node->safe_psql('postgres', qq{
	SELECT jobq_create_queue('q', lease => '1 second', max_attempts => 2, backoff_base => '0');
	SELECT jobq_enqueue('q', '{"n": 1}');
});

# A worker claims the job and is never heard from again.
my $claimed = $node->safe_psql('postgres', "SELECT id || ':' || attempt FROM jobq_claim('q')");
is($claimed, '1:1', 'job claimed, attempt 1');
is($node->safe_psql('postgres', "SELECT count(*) FROM jobq_claim('q')"), '0',
	'not claimable while the lease is valid');
my $t0 = time;
ok(poll("SELECT state || ':' || attempt FROM jobq_job(1)", 'ready:1', 15),
	'the sweeper returned the job to ready without any jobq_sweep call');
my $took = time - $t0;
note(sprintf('job back after %.2f s (lease 1 s, sweep interval 0.2 s)', $took));
is($node->safe_psql('postgres', "SELECT errors -> -1 ->> 'error' FROM jobq_job(1)"),
	'lease expired', 'the reclaim is recorded as an error of the attempt');

# Second crash: no attempts left, so the sweeper moves it to dead.
is($node->safe_psql('postgres', "SELECT attempt FROM jobq_claim('q')"), '2', 'claimed again');
ok(poll("SELECT state FROM jobq_job(1)", 'dead', 15), 'attempts used up: dead');

# A failing pass: a constraint that refuses dead jobs makes every sweep that
# tries to bury job 2 fail.
my $log_offset = -s $node->logfile;
$node->safe_psql('postgres', qq{
	ALTER TABLE jobq.history ADD CONSTRAINT no_dead CHECK (state <> 'dead') NOT VALID;
	SELECT jobq_enqueue('q', '{"n": 2}', max_attempts => 1);
});
is($node->safe_psql('postgres', "SELECT id || ':' || attempt FROM jobq_claim('q')"), '2:1',
	'job 2 claimed, its only attempt');
my $deadline = time + 15;
my $logged = 0;
while (time < $deadline && !$logged)
{
	$logged = slurp_file($node->logfile, $log_offset) =~ /violates check constraint "no_dead"/;
	usleep(100_000);
}
ok($logged, 'the failing sweep is logged');
is($node->safe_psql('postgres', "SELECT state FROM jobq_job(2)"), 'running',
	'the failed pass changed nothing');
$node->safe_psql('postgres', 'ALTER TABLE jobq.history DROP CONSTRAINT no_dead');
ok(poll("SELECT state || ':' || attempt FROM jobq_job(2)", 'dead:1', 15),
	'after the errors the sweeper goes on and buries job 2');
is($node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE backend_type = 'jobq sweeper'"),
	$sweeper_pid, 'same sweeper process: it survived the errors');

# A database without the extension is skipped quietly: drop and recreate.
$node->safe_psql('postgres', 'DROP EXTENSION jobq');
usleep(500_000);
$node->safe_psql('postgres', 'CREATE EXTENSION jobq');
is($node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE backend_type = 'jobq sweeper'"),
	$sweeper_pid, 'sweeper unaffected by the extension coming and going');

my $t1 = time;
$node->stop('fast');
my $stop = time - $t1;
ok($stop < 10, 'server stops fast with the sweeper running');
note(sprintf('fast shutdown took %.2f s', $stop));

done_testing();
