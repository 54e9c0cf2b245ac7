# t/076_schedules.pl: schedules fired by the background sweeper
# (shared_preload_libraries = 'jobq'), issue 17.
#
# The sweep interval is a minute: a schedule's first tick comes from the
# wake-up its commit gives the sweeper, not from a sweep pass.
#
# 1. '@every 1s', the postmaster killed (-9) for about 10 s and started
#    again: the ticks of the outage give at most one (catch-up) job, the
#    others are counted as missed, no tick has two jobs, and ticking goes
#    on after the restart.
# 2. The sweeper plus JOBQ_TEST_TICK_SESSIONS sessions (default 4) calling
#    jobq_cron_tick() in a loop (pgbench) for JOBQ_TEST_TICK_SECS seconds
#    (default 20; the issue's run is 8 sessions for 60 s: set both): exactly one job per tick, the ticks
#    consecutive (catchup 'all', so a late tick still fires).
# 3. A streaming standby with the same settings ticks nothing while in
#    recovery (its sweeper starts at the promotion) and fires the schedule
#    once promoted, one job per tick, at most one for the gap.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use JobqTest;

my $tick_secs = $ENV{JOBQ_TEST_TICK_SECS} // 20;
my $tick_sessions = $ENV{JOBQ_TEST_TICK_SESSIONS} // 4;

my $node = PostgreSQL::Test::Cluster->new('schedules');
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'jobq'
jobq.sweeper_databases = 'postgres'
jobq.sweep_interval = '1min'
});
$node->start;
$node->safe_psql('postgres', qq{
	CREATE EXTENSION jobq;
	SELECT jobq_create_queue('cron');
});

# the ticks of a schedule's jobs, live or finished, from their dedupe keys
sub ticks_sql
{
	my ($name) = @_;
	return qq{(SELECT substr(dedupe_key, length('schedule:$name:') + 1)::timestamptz AS tick
	           FROM jobq.jobs WHERE dedupe_key LIKE 'schedule:$name:%'
	           UNION ALL
	           SELECT substr(dedupe_key, length('schedule:$name:') + 1)::timestamptz
	           FROM jobq.history WHERE dedupe_key LIKE 'schedule:$name:%') t};
}

sub no_duplicates
{
	my ($n, $name, $what) = @_;
	is($n->safe_psql('postgres',
			"SELECT count(*) = count(DISTINCT tick) FROM " . ticks_sql($name)),
		't', "$what: no tick has two jobs");
}

# --- 1. kill -9 of the postmaster ----------------------------------------
$node->safe_psql('postgres', "SELECT jobq_schedule('kill9', 'cron', '\@every 1s')");
ok(wait_for($node, "SELECT count(*) >= 3 FROM " . ticks_sql('kill9'), 't', 20),
	'the sweeper fires an @every 1s schedule at once (woken by the commit)');
my $last_before = $node->safe_psql('postgres',
	"SELECT extract(epoch FROM max(tick)) FROM " . ticks_sql('kill9'));
$node->kill9;
sleep 10;
my $restart_at = time;
$node->start;
ok(wait_for($node, "SELECT count(*) >= 3 FROM " . ticks_sql('kill9')
			. " WHERE tick > to_timestamp($restart_at)", 't'),
	'ticking goes on after the restart');
my $outage_jobs = $node->safe_psql('postgres',
	"SELECT count(*) FROM " . ticks_sql('kill9')
	  . " WHERE tick > to_timestamp($last_before) AND tick <= to_timestamp($restart_at)");
cmp_ok($outage_jobs, '<=', 1, "the outage's ticks gave at most one job ($outage_jobs)");
cmp_ok($node->safe_psql('postgres', "SELECT missed_ticks FROM jobq_schedules() WHERE name = 'kill9'"),
	'>=', 8, 'the others are counted as missed');
no_duplicates($node, 'kill9', 'after the crash');
$node->safe_psql('postgres', "SELECT jobq_unschedule('kill9')");

# --- 2. the sweeper and four ticking sessions ------------------------------
$node->safe_psql('postgres',
	"SELECT jobq_schedule('race', 'cron', '\@every 1s', catchup => 'all')");
my $script = $node->basedir . '/tick.sql';
open(my $fh, '>', $script) or die "$script: $!";
print $fh "SELECT count(*) FROM jobq_cron_tick();\n";
close $fh;
$node->command_ok(
	[ 'pgbench', '-n', '-c', $tick_sessions, '-j', '2', '-T', $tick_secs, '-R', '200', '-f', $script,
	  '-d', 'postgres' ],
	"$tick_sessions sessions tick in a loop for $tick_secs s");
$node->safe_psql('postgres', "SELECT jobq_pause_schedule('race')");
my ($jobs, $span) = split /\|/, $node->safe_psql('postgres',
	"SELECT count(*), extract(epoch FROM max(tick) - min(tick))::int + 1 FROM " . ticks_sql('race'));
cmp_ok($jobs, '>=', $tick_secs - 2, "about one job a second ($jobs in $tick_secs s)");
is($jobs, $span, 'one job per tick, the ticks consecutive');
no_duplicates($node, 'race', 'under racing tickers');

# --- 3. a standby ticks nothing until promoted -------------------------------
$node->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('schedules_standby');
$standby->init_from_backup($node, 'b', has_streaming => 1);
$standby->start;
$node->safe_psql('postgres', "SELECT jobq_schedule('standby', 'cron', '\@every 1s')");
$node->wait_for_catchup($standby);
# the primary goes away; the standby stays in recovery, where the
# sweeper (which ticks) does not run
$node->stop('fast');
my $before = $standby->safe_psql('postgres', "SELECT count(*) FROM " . ticks_sql('standby'));
sleep 2;
is($standby->safe_psql('postgres', "SELECT count(*) FROM " . ticks_sql('standby')), $before,
	'in recovery nothing is fired');
is($standby->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'jobq sweeper'"), '0',
	'no sweeper runs in recovery');
my $last_replicated = $standby->safe_psql('postgres',
	"SELECT coalesce(extract(epoch FROM max(tick)), 0) FROM " . ticks_sql('standby'));
my $promote_at = time;
$standby->promote;
ok(wait_for($standby, "SELECT count(*) >= 3 FROM " . ticks_sql('standby'), 't'),
	'promoted: the schedule fires');
no_duplicates($standby, 'standby', 'after the promotion');
cmp_ok($standby->safe_psql('postgres',
		"SELECT count(*) FROM " . ticks_sql('standby')
		  . " WHERE tick > to_timestamp($last_replicated) AND tick <= to_timestamp($promote_at)"),
	'<=', 1, 'the ticks of the gap gave at most one catch-up job');

$standby->stop;
done_testing();
