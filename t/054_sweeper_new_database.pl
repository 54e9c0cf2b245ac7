# t/054_sweeper_new_database.pl: the sweeper of a database created after
# the server started (issue 13, bug 12).
#
# jobq.sweeper_databases names a database that does not exist yet.  The
# sweeper launcher waits for it without any FATAL in the log (before, the
# sweeper tried to connect, failed with FATAL and was retried every 5 s, so
# it came 8-19 s late), starts its sweeper within the launcher's check
# interval (1 s) once the database is created, and stops it for good when
# the database is dropped; a terminated sweeper comes back after 5 s, and so
# do the sweepers of a terminated launcher.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);
use JobqTest;

my $node = PostgreSQL::Test::Cluster->new('newdb');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'jobq'
jobq.sweeper_databases = 'postgres, later'
jobq.sweep_interval = '200ms'
});
$node->start;

my $sweeper_of = "SELECT coalesce(string_agg(pid::text, ','), '') FROM pg_stat_activity"
  . " WHERE backend_type = 'jobq sweeper' AND datname = '%s'";
my $launcher = "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'jobq sweeper launcher'";

ok(wait_for($node, sprintf("SELECT ($sweeper_of) <> ''", 'postgres'), 't'), 'the sweeper of postgres runs');
is($node->safe_psql('postgres', $launcher), '1', 'one launcher');
my $deadline = time + 10;
usleep(100_000)
  until slurp_file($node->logfile) =~ /database "later" waits for the database to be created/
  || time > $deadline;
sleep 3;	# the old code tried to connect to "later" and failed every 5 s
my @said = slurp_file($node->logfile) =~ /LOG:  jobq sweeper for database "later" waits for the database to be created/g;
is(scalar(@said), 1, 'the missing database is logged once, as a LOG');
unlike(slurp_file($node->logfile), qr/FATAL/, 'no FATAL in the server log');

# The database is created: its sweeper starts within the check interval.
my $t0 = time;
$node->safe_psql('postgres', 'CREATE DATABASE later');
ok(wait_for($node, sprintf("SELECT ($sweeper_of) <> ''", 'later'), 't', 10),
	'the sweeper of the new database runs');
my $took = time - $t0;
note(sprintf('sweeper of the new database running %.2f s after CREATE DATABASE (check interval 1 s)',
	$took));
ok($took < 5, 'within the check interval, not after a 5 s restart');

# and it sweeps there
$node->safe_psql('later', qq{
	CREATE EXTENSION jobq;
	SELECT jobq_create_queue('q', lease => '1 second', backoff_base => '0');
	SELECT jobq_enqueue('q', '{}');
});
is($node->safe_psql('later', "SELECT attempt FROM jobq_claim('q')"), '1', 'a job claimed and abandoned');
$deadline = time + 15;
my $state = '';
while (time < $deadline)
{
	$state = $node->safe_psql('later', "SELECT state || ':' || attempt FROM jobq_job(1)");
	last if $state eq 'ready:1';
	usleep(100_000);
}
is($state, 'ready:1', 'the sweeper of the new database requeued it');
unlike(slurp_file($node->logfile), qr/FATAL/, 'still no FATAL');

# A terminated sweeper comes back after 5 s.
my $pid = $node->safe_psql('postgres', sprintf($sweeper_of, 'later'));
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
ok(wait_for($node, sprintf("SELECT ($sweeper_of) NOT IN ('', '$pid')", 'later'), 't', 20),
	'a terminated sweeper is started again');

# Terminating the launcher stops its sweepers; they come back with it.
my $old = $node->safe_psql('postgres', sprintf($sweeper_of, 'postgres'));
$node->safe_psql('postgres',
	"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE backend_type = 'jobq sweeper launcher'");
ok(wait_for($node, sprintf("SELECT ($sweeper_of) NOT IN ('', '$old')", 'postgres'), 't', 30),
	'after the launcher is terminated, a new sweeper runs');
is($node->safe_psql('postgres', $launcher), '1', 'and one launcher');
is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'jobq sweeper'"),
	'2', 'one sweeper per database, no more');

# Dropped: its sweeper ends and is not started again, without FATALs.
$node->safe_psql('postgres', 'DROP DATABASE later WITH (FORCE)');
ok(wait_for($node, sprintf("SELECT ($sweeper_of) = ''", 'later'), 't', 10), 'the sweeper of a dropped database ends');
my $log_offset = -s $node->logfile;
sleep 7;	# past the restart delay
is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'jobq sweeper'"),
	'1', 'it is not started again while the database is missing');
unlike(slurp_file($node->logfile, $log_offset), qr/FATAL/, 'no FATAL after the drop');

# created again: back
$node->safe_psql('postgres', 'CREATE DATABASE later');
ok(wait_for($node, sprintf("SELECT ($sweeper_of) <> ''", 'later'), 't', 10),
	'the database created again gets its sweeper again');

$node->stop('fast');
# NB: a fast stop may end a session or a sweeper in the middle of a statement
# ("terminating ... due to administrator command", FATAL by its nature):
# that is the stop, not a failed connection
my $log = join '', grep { !/due to administrator command/ } split /^/, slurp_file($node->logfile);
unlike($log, qr/FATAL/, 'no FATAL in the whole run (but the stop\'s own)');
done_testing();
