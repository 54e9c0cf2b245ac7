# t/030_health.pl: the jobq_health findings that need other sessions and
# a real sweeper (issue 14; doc/operations.md, "Health").
#
# An idle-in-transaction session holding a snapshot is critical, named by
# its pid, once older than jobq.health_xact_age; a role without
# pg_read_all_stats does not see its state and is told so (visibility),
# with pg_monitor it sees the finding; before that age, the vacuum finding
# over the dead jobs it holds back names it; a prepared transaction is critical;
# the sweeper: ok while it runs, critical in the seconds after it was
# terminated (before the launcher restarts it), ok again after, and a
# warning when the database is not in jobq.sweeper_databases.  jobq health
# exits 2, 1, or 3 when it cannot tell.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);
use IPC::Run;
use JobqTest;

my $node = PostgreSQL::Test::Cluster->new('health');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'jobq'
jobq.sweeper_databases = 'postgres'
jobq.sweep_interval = '200ms'
max_prepared_transactions = 2
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION jobq;
	CREATE ROLE dash LOGIN IN ROLE jobq_monitor;
});

# the findings of a check, as "severity|subject" lines
sub findings
{
	my ($check, %opt) = @_;
	return $node->safe_psql('postgres', qq{
		SET jobq.health_xact_age = '1s';
		SELECT severity || '|' || subject FROM jobq_health()
		WHERE "check" = '$check' ORDER BY 1},
		$opt{user} ? (extra_params => [ '-U', $opt{user} ]) : ());
}

# poll: wait until findings($check) matches $re (a wait, not a timing
# assertion: the test only asserts what is eventually reported)
sub poll
{
	my ($check, $re, %opt) = @_;
	my $deadline = time + ($opt{secs} // 30);
	my $got = '';
	while (time < $deadline)
	{
		$got = findings($check, %opt);
		return 1 if $got =~ $re;
		usleep(50_000);
	}
	diag("timed out: $check gave '$got'");
	return 0;
}

# --- the sweeper runs
ok(poll('sweeper', qr/^ok\|postgres$/), 'sweeper: ok while it runs');

# --- an idle-in-transaction session holding a snapshot
like(findings('xmin_horizon'), qr/^ok\|database$/, 'xmin_horizon: ok with nobody holding it');
my $idle = $node->background_psql('postgres');
$idle->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
my $pid = $idle->query_safe('SELECT pg_backend_pid()');
ok(poll('xmin_horizon', qr/^critical\|pid $pid$/m),
	'an idle-in-transaction session is critical, with its pid');
like($node->safe_psql('postgres', qq{
	SET jobq.health_xact_age = '1s';
	SELECT detail || ' / ' || advice FROM jobq_health() WHERE subject = 'pid $pid'}),
	qr/idle in transaction.*pg_terminate_backend/, 'the finding says what it is and what to do');
# the CLI with the same threshold, through the connection's options
$ENV{PGOPTIONS} = '-c jobq.health_xact_age=1s';
my ($code, $out) = run_cli($node, ['health']);
is($code, 2, 'jobq health exits 2 on a critical finding');
like($out, qr/^critical +xmin_horizon +pid $pid: .*\n +-> The session does nothing/m,
	'and prints the finding with what to do under it');

# a monitor without pg_read_all_stats cannot see the session's state: it
# is told so, and the young snapshot alone is no finding
is(findings('xmin_horizon', user => 'dash'), 'ok|database',
	'hidden from a plain monitor: no finding');
like(findings('visibility', user => 'dash'), qr/^ok\|dash$/, 'and a visibility row says so');
$node->safe_psql('postgres', 'GRANT pg_monitor TO dash');
like(findings('xmin_horizon', user => 'dash'), qr/^critical\|pid $pid$/m,
	'with pg_monitor the monitor sees the finding');
is(findings('visibility', user => 'dash'), '', 'and no visibility row');

$idle->query_safe('COMMIT');
$idle->quit;
ok(poll('xmin_horizon', qr/^ok\|database$/), 'ok again once the transaction ends');

# --- dead jobs held back by a session idle in transaction for less than
# jobq.health_xact_age (5 minutes here): no xmin_horizon finding yet, but
# the vacuum finding names it as the oldest holder (issue 20)
my $young = $node->background_psql('postgres');
$young->query_safe('BEGIN');
my $ypid = $young->query_safe('SELECT pg_backend_pid() FROM txid_current()');
$node->safe_psql('postgres', q{
	SELECT jobq_create_queue('churn', completed_retention => '0');
	SELECT count(*) FROM jobq_enqueue_batch('churn', ARRAY(SELECT '{}'::jsonb FROM generate_series(1, 1500)));
	WITH c AS (SELECT array_agg(id) i, array_agg(token) t FROM jobq_claim('churn', 'w', 1000))
	SELECT count(*) FROM c, jobq_complete_batch(c.i, c.t);
	WITH c AS (SELECT array_agg(id) i, array_agg(token) t FROM jobq_claim('churn', 'w', 1000))
	SELECT count(*) FROM c, jobq_complete_batch(c.i, c.t);
});
# a session whose snapshot begins at the horizon the first one holds has
# the same age; the holder is the one whose transaction began first
my $victim = $node->background_psql('postgres');
$victim->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
$victim->query_safe('SELECT count(*) FROM jobq.jobs');
my $vacuum_advice = q{
	SET jobq.health_dead_tuples = 1000;
	SELECT severity || '|' || advice FROM jobq_health()
	WHERE "check" = 'vacuum' AND subject = 'jobq.jobs'};
my $advice = '';
my $deadline = time + 30;
while (time < $deadline)
{
	# the dead rows count once the sessions that made them report (at exit)
	$advice = $node->safe_psql('postgres', $vacuum_advice);
	last if $advice =~ /^warning/;
	usleep(100_000);
}
like($advice, qr/^warning\|Vacuum cannot remove rows that died after the oldest xmin holder began, pid $ypid \(.*\), idle in transaction, its transaction open for .*: if it is idle in transaction or runs long, end it/,
	'dead jobs: the vacuum finding names the young idle-in-transaction session holding them');
is($node->safe_psql('postgres', q{
	SELECT severity || '|' || subject FROM jobq_health() WHERE "check" = 'xmin_horizon'}),
	'ok|database', 'before jobq.health_xact_age it is no xmin_horizon finding of its own');
$victim->query_safe('COMMIT');
$victim->quit;
$young->query_safe('ROLLBACK');
$young->quit;

# --- a prepared transaction
$node->safe_psql('postgres', q{
	BEGIN; SELECT jobq_create_queue('prep'); PREPARE TRANSACTION 'forgotten'});
ok(poll('xmin_horizon', qr/^critical\|prepared transaction "forgotten"$/m),
	'a prepared transaction is critical');
$node->safe_psql('postgres', q{ROLLBACK PREPARED 'forgotten'});
ok(poll('xmin_horizon', qr/^ok\|database$/), 'ok again once it is rolled back');

# --- the sweeper stops: critical until the launcher restarts it
# --- a backlog hides no dead rows: live jobs outnumber the dead ones, and
# autovacuum is off for jobq.jobs, so the vacuum of those dead rows is
# overdue (issue 20: the warning used to need more dead rows than live)
$node->safe_psql('postgres', q{
	ALTER TABLE jobq.jobs SET (autovacuum_enabled = false);
	VACUUM jobq.jobs;
	SELECT count(*) FROM jobq_enqueue_batch('churn', ARRAY(SELECT '{}'::jsonb FROM generate_series(1, 1000)));
	SELECT count(*) FROM jobq_enqueue_batch('churn', ARRAY(SELECT '{}'::jsonb FROM generate_series(1, 1000)));
	SELECT count(*) FROM jobq_enqueue_batch('churn', ARRAY(SELECT '{}'::jsonb FROM generate_series(1, 1000)));
	WITH c AS (SELECT array_agg(id) i, array_agg(token) t FROM jobq_claim('churn', 'w', 600))
	SELECT count(*) FROM c, jobq_complete_batch(c.i, c.t);
});
my $backlog = q{
	SET jobq.health_dead_tuples = 300;
	SELECT severity || '|' || detail FROM jobq_health()
	WHERE "check" = 'vacuum' AND subject = 'jobq.jobs'};
my $vac = '';
$deadline = time + 30;
while (time < $deadline)
{
	$vac = $node->safe_psql('postgres', $backlog);
	last if $vac =~ /^warning/;
	usleep(100_000);
}
like($vac, qr/^warning\|(\d+) dead and (\d+) live rows/,
	'a backlog: a warning with autovacuum off for the table');
my ($dead, $live) = $vac =~ /(\d+) dead and (\d+) live/;
cmp_ok($live, '>', $dead, 'although the live rows outnumber the dead ones');
$node->safe_psql('postgres', 'ALTER TABLE jobq.jobs RESET (autovacuum_enabled)');
like($node->safe_psql('postgres', $backlog), qr/^ok\|/,
	'autovacuum on and the table vacuumed within ten naptimes: nothing to do yet');

$node->safe_psql('postgres',
	"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE backend_type = 'jobq sweeper'");
ok(poll('sweeper', qr/^critical\|postgres$/, secs => 4),
	'sweeper: critical while it is not running');
ok(poll('sweeper', qr/^ok\|postgres$/), 'ok again once the launcher restarted it');

# --- a database that is not in jobq.sweeper_databases
$node->append_conf('postgresql.conf', "jobq.sweeper_databases = 'elsewhere'");
$node->restart;
is(findings('sweeper'), 'warning|postgres', 'sweeper: a warning for an unlisted database');
($code) = run_cli($node, ['health']);
is($code, 1, 'jobq health exits 1 on a warning');
$node->safe_psql('postgres', 'REVOKE jobq_monitor FROM dash; REVOKE pg_monitor FROM dash');
my $dash = $node->connstr('postgres') . ' user=dash';
IPC::Run::run([ cli_bin(), '-d', $dash, 'health' ], '>', \$out, '2>', \my $err);
is($? >> 8, 3, 'and 3 when it cannot tell (the role may not call it)');
like($err, qr/permission denied.*42501/, 'saying why');

$node->stop;
done_testing();
