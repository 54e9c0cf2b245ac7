# t/055_await.pl: jobq_await and jobq_await_many with jobq preloaded.
#
# An await is woken by the commit that finishes its job (the shared
# wakeups counter says so), not by a rollback; a queue that keeps no
# completed history still gives the awaiter its result (handed over at
# commit); the procedure holds no snapshot while it sleeps (backend_xmin
# is NULL and VACUUM removes rows deleted meanwhile), unlike the in-
# statement wait of jobq_await_many; 1,000 ids awaited by four sessions
# (jobq_await_many, 250 each: one session per awaiter would be too many
# for a small CI machine) all wake, each once, when one complete_batch
# finishes their jobs; 'attempt' mode returns on a retried failure; a
# cancel, or the client going away, ends the wait at once and frees its
# entries; and the procedure
# works through PgBouncer in transaction pooling (no LISTEN).
use strict;
use warnings;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);
use FindBin;
use lib $FindBin::RealBin;
use JobqTest;

my $node = PostgreSQL::Test::Cluster->new('await');
$node->init;
# the recheck is long: every wakeup below comes from a commit
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'jobq'
jobq.sweeper_databases = ''
jobq.claim_recheck_interval = '60s'
});
$node->start;
$node->safe_psql('postgres', qq{
	CREATE EXTENSION jobq;
	SELECT jobq_create_queue('nohist', completed_retention => '0');
	SELECT jobq_create_queue('retry', max_attempts => 3, backoff_base => '0', backoff_cap => '0');
	CREATE TABLE churn (n int);
});

# start_psql(CONNSTR, SQL): a psql running SQL in the background
sub start_psql
{
	my ($connstr, $sql) = @_;
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[ $node->installed_command('psql'), '-XAtq', '-F', '|', '-d', $connstr, '-c', $sql ],
		'<', \undef, '>', \$out, '2>', \$err);
	return { h => $h, out => \$out, err => \$err };
}

sub finish_psql
{
	my $p = shift;
	$p->{h}->finish;
	my $o = ${ $p->{out} };
	chomp $o;
	return ($o, ${ $p->{err} });
}

# poll(SQL, EXPECTED): JobqTest's wait_for on this node
sub poll { return JobqTest::wait_for($node, @_); }

sub status { return $node->safe_psql('postgres', "SELECT $_[0] FROM jobq_await_status()"); }

sub enqueue_claim
{
	my ($queue, $payload) = @_;
	my $id = $node->safe_psql('postgres', "SELECT jobq_enqueue('$queue', '$payload')");
	my $token = $node->safe_psql('postgres', "SELECT token FROM jobq_claim('$queue', 'w')");
	return ($id, $token);
}

my $db = $node->connstr('postgres');
my $sleeping = "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'CALL %jobq_await(%'"
  . " AND wait_event_type = 'Extension'";

is(status('capacity'), '4096', 'entries reserved (jobq.max_await_ids)');

# 1. Woken by the commit, not before it nor by a rollback; the result of a
# queue without history is handed over; no snapshot held while asleep.
my ($id, $token) = enqueue_claim('nohist', '{"n": 1}');
my $w = start_psql($db, "CALL jobq_await($id, '60 s')");
ok(poll($sleeping, '1'), 'the procedure sleeps');
is($node->safe_psql('postgres',
	"SELECT backend_xmin IS NULL FROM pg_stat_activity WHERE query LIKE 'CALL jobq_await%'"),
	't', 'no xmin while it sleeps');
# rows deleted while it sleeps are removable
$node->safe_psql('postgres', 'INSERT INTO churn SELECT generate_series(1, 1000); DELETE FROM churn');
my ($rc, $vout, $verr) = $node->psql('postgres', 'VACUUM (VERBOSE) churn');
like($verr, qr/tuples: 1000 removed, 0 remain, 0 are dead but not yet removable/,
	'VACUUM removes the rows that died during the wait');
my $wakeups = status('wakeups');
my $handovers = status('handovers');
my $bg = $node->background_psql('postgres');
$bg->query_safe('BEGIN');
$bg->query_safe("SELECT jobq_complete($id, '$token', '{\"r\": \"rolled back\"}')");
$bg->query_safe('ROLLBACK');
usleep(200_000);
ok($w->{h}->pumpable, 'a rolled-back complete does not end the wait');
is(status('wakeups'), $wakeups, 'a rollback wakes nobody');
$bg->query_safe('BEGIN');
$bg->query_safe("SELECT jobq_complete($id, '$token', '{\"r\": 42}')");
usleep(200_000);
ok($w->{h}->pumpable, 'an uncommitted complete does not end the wait');
$bg->query_safe('COMMIT');
my ($got, $err) = finish_psql($w);
like($got, qr/^completed\|\{"r": 42\}\|\|1\|[^|]+\|f$/,
	'woken by the commit with the result, though the queue keeps no history');
is(status('wakeups') - $wakeups, 1, 'one wakeup');
is(status('handovers') - $handovers, 1, 'one outcome handed over');
is(status('awaiting'), '0', 'entries freed');
# a late awaiter: the result was not kept
is($node->safe_psql('postgres', "SELECT state FROM jobq_await_many(ARRAY[$id]::bigint[], '0')"),
	'purged_or_never', 'asked after the commit: purged_or_never');

# 1b. No lost wakeup when the complete ran before the await registered and
# commits after its first read: the commit wakes the awaiters registered
# since (the job's bucket was empty when the complete looked).
$node->safe_psql('postgres', "SELECT jobq_create_queue('kept')");
($id, $token) = enqueue_claim('kept', '{"n": 11}');
$bg->query_safe('BEGIN');
$bg->query_safe("SELECT jobq_complete($id, '$token', '{\"r\": 11}')");
$wakeups = status('wakeups');
$w = start_psql($db, "CALL jobq_await($id, '60 s')");
ok(poll($sleeping, '1'), 'awaits a job completed by an open transaction');
$bg->query_safe('COMMIT');
($got, $err) = finish_psql($w);
like($got, qr/^completed\|\{"r": 11\}\|\|1\|[^|]+\|f$/, 'completed');
is(status('wakeups') - $wakeups, 1, 'woken by that commit');
is(status('awaiting'), '0', 'entry freed');

# 2. jobq_await_many waits inside its statement, holding its snapshot
# (hence JOBQ_AWAIT_STATEMENT_MAX_S)
($id, $token) = enqueue_claim('nohist', '{"n": 2}');
$w = start_psql($db, "SELECT state, result FROM jobq_await_many(ARRAY[$id]::bigint[], '20 s')");
ok(poll("SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%jobq_await_many(ARRAY[$id]%'"
	  . " AND wait_event_type = 'Extension' AND backend_xmin IS NOT NULL", '1'),
	'the function holds an xmin while it waits');
$node->safe_psql('postgres', "SELECT jobq_complete($id, '$token', '{\"r\": 2}')");
($got, $err) = finish_psql($w);
is($got, 'completed|{"r": 2}', 'jobq_await_many woken with the result');

# 3. 'attempt' mode returns when a failed attempt is retried; 'finished'
# waits through it
($id, $token) = enqueue_claim('retry', '{"n": 3}');
my $wa = start_psql($db, "CALL jobq_await($id, '60 s', mode => 'attempt')");
my $wf = start_psql($db, "CALL jobq_await($id, '60 s')");
ok(poll($sleeping, '2'), 'both sleep');
$node->safe_psql('postgres', "SELECT jobq_fail($id, '$token', 'try again')");
($got, $err) = finish_psql($wa);
like($got, qr/^ready\|\|try again\|1\|\|f$/, "'attempt' returns with the failure");
ok($wf->{h}->pumpable, "'finished' waits on");
$token = $node->safe_psql('postgres', "SELECT token FROM jobq_claim('retry', 'w')");
$node->safe_psql('postgres', "SELECT jobq_fail($id, '$token', 'no', permanent => true)");
($got, $err) = finish_psql($wf);
like($got, qr/^dead\|\|no\|2\|[^|]+\|f$/, "'finished' returns dead with the last error");

# 4. A cancel ends the wait at once, with its error, and frees the entry
($id, $token) = enqueue_claim('retry', '{"n": 4}');
$w = start_psql($db, "CALL jobq_await($id, '60 s')");
ok(poll($sleeping, '1'), 'sleeps until cancelled');
$node->safe_psql('postgres',
	"SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE 'CALL jobq_await%'");
($got, $err) = finish_psql($w);
like($err, qr/canceling statement due to user request/, 'cancelled with its usual error');
is(status('awaiting'), '0', 'the cancelled await freed its entry');

# 4b. A client that goes away mid-wait frees its backend at once, not at
# the recheck (60 s here, longer than poll's 30 s)
$w = start_psql($db, "CALL jobq_await($id, '60 s')");
ok(poll($sleeping, '1'), 'sleeps until its client goes away');
$w->{h}->kill_kill;
ok(poll("SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'CALL %jobq_await(%'", '0'),
	'the backend of a vanished client ends');
is(status('awaiting'), '0', 'and its entry is freed');

# 5. 1,000 ids in four sessions, finished by one complete_batch of a queue
# without history: every session gets all its results, every entry is
# woken and handed its outcome exactly once.
my $ids = $node->safe_psql('postgres', q{
	SELECT string_agg(jobq_enqueue('nohist', jsonb_build_object('i', g))::text, ',' ORDER BY g)
	FROM generate_series(1, 1000) g});
my @ids = split /,/, $ids;
$node->safe_psql('postgres', q{
	CREATE TABLE claimed AS SELECT id, token FROM jobq_claim('nohist', 'w', max_jobs => 1000)});
is($node->safe_psql('postgres', 'SELECT count(*) FROM claimed'), '1000', '1,000 jobs running');
$wakeups = status('wakeups');
$handovers = status('handovers');
my @sessions;
for my $s (0 .. 3)
{
	my $list = join(',', @ids[ $s * 250 .. $s * 250 + 249 ]);
	push @sessions, start_psql($db,
		"SELECT count(*) FILTER (WHERE state = 'completed' AND result = jsonb_build_object('done', id))"
		  . " FROM jobq_await_many('{$list}', '25 s')");
}
ok(poll('SELECT awaiting FROM jobq_await_status()', '1000'), '1,000 ids awaited');
$node->safe_psql('postgres', q{
	SELECT count(*) FROM jobq_complete_batch(
		(SELECT array_agg(id ORDER BY id) FROM claimed),
		(SELECT array_agg(token ORDER BY id) FROM claimed),
		(SELECT array_agg(jsonb_build_object('done', id) ORDER BY id) FROM claimed))});
my $all = 0;
for my $p (@sessions)
{
	($got, $err) = finish_psql($p);
	$all += $got if $got =~ /^\d+$/;
	diag($err) if $err ne '';
}
is($all, 1000, 'every awaiter got its completed result');
is(status('wakeups') - $wakeups, 1000, 'each entry woken once');
is(status('handovers') - $handovers, 1000, 'each outcome handed over once');
is(status('awaiting'), '0', 'all entries freed');

# 6. Through PgBouncer in transaction pooling: the procedure commits and
# sleeps inside one CALL, which holds its server connection throughout.
SKIP:
{
	my $pgbouncer = `command -v pgbouncer` || (-x '/usr/sbin/pgbouncer' ? '/usr/sbin/pgbouncer' : '');
	chomp $pgbouncer;
	skip 'pgbouncer not installed', 2 if $pgbouncer eq '';
	my $dir = PostgreSQL::Test::Utils::tempdir();
	my $port = PostgreSQL::Test::Cluster::get_free_port();
	my ($host, $pgport) = ($node->host, $node->port);
	PostgreSQL::Test::Utils::append_to_file("$dir/pgbouncer.ini", qq{
[databases]
postgres = host=$host port=$pgport dbname=postgres
[pgbouncer]
listen_addr =
listen_port = $port
unix_socket_dir = $dir
auth_type = trust
auth_file = $dir/userlist.txt
pool_mode = transaction
default_pool_size = 3
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
});
	PostgreSQL::Test::Utils::append_to_file("$dir/userlist.txt", qq{"$ENV{USER}" ""\n});
	my $pgb = IPC::Run::start([ $pgbouncer, '-q', "$dir/pgbouncer.ini" ], '<', \undef, '>', \my $o, '2>', \my $e);
	my $i = 0;
	usleep(100_000) while !-S "$dir/.s.PGSQL.$port" && $i++ < 100;
	my $via = "host=$dir port=$port dbname=postgres";
	($id, $token) = enqueue_claim('nohist', '{"n": 6}');
	$w = start_psql($via, "CALL jobq_await($id, '60 s')");
	ok(poll($sleeping, '1'), 'awaiting through PgBouncer');
	my ($c_out, $c_err) = ('', '');
	IPC::Run::run([ $node->installed_command('psql'), '-XAtq', '-d', $via, '-c',
		"SELECT jobq_complete($id, '$token', '{\"via\": \"pgbouncer\"}')" ], '>', \$c_out, '2>', \$c_err);
	($got, $err) = finish_psql($w);
	like($got, qr/^completed\|\{"via": "pgbouncer"\}\|/, 'woken with the result through PgBouncer');
	$pgb->kill_kill;
}

# 7. The CLI: jobq enqueue --wait prints the result (handed over: the queue
# keeps no history) and exits 0; jobq await exits per outcome.
{
	my $bgw = $node->background_psql('postgres');
	my $h = IPC::Run::start([ JobqTest::cli_bin(), '-d', $db, 'enqueue', 'nohist', '{"cli": 1}',
		'--wait', '30s' ], '<', \undef, '>', \my $cout, '2>', \my $cerr);
	ok(poll($sleeping, '1'), 'jobq enqueue --wait awaits');
	$bgw->query_safe(q{SELECT jobq_complete(id, token, '{"from": "cli"}') FROM jobq_claim('nohist', 'w')});
	$h->finish;
	is($? >> 8, 0, 'enqueue --wait: exit 0 for a completed job');
	is($cout, qq({"from": "cli"}\n), 'and prints its result');
	$bgw->quit;
	($id, $token) = enqueue_claim('retry', '{"n": 7}');
	my ($code, $out, $cerr2) = JobqTest::run_cli($node, [ 'await', $id, '--timeout', '0' ]);
	is($code, 6, 'await: exit 6 while not finished');
	like($cerr2, qr/job $id is still running after 0s/, 'and says so');
	$node->safe_psql('postgres', "SELECT jobq_fail($id, '$token', 'bad input', permanent => true)");
	($code, $out, $cerr2) = JobqTest::run_cli($node, [ 'await', $id, '--json' ]);
	is($code, 4, 'await: exit 4 for a dead job');
	like($out, qr/^\{"id":$id,"state":"dead","result":null,"last_error":"bad input","attempt":1,/,
		'--json: the outcome as one object');
	my $ready = $node->safe_psql('postgres', "SELECT jobq_enqueue('retry', '{}')");
	$node->safe_psql('postgres', "SELECT jobq_cancel($ready)");
	($code) = JobqTest::run_cli($node, [ 'await', $ready ]);
	is($code, 5, 'await: exit 5 for a cancelled job');
	my $gone = $node->safe_psql('postgres', "BEGIN; SELECT jobq_enqueue('retry', '{}'); ROLLBACK");
	($code, $out, $cerr2) = JobqTest::run_cli($node, [ 'await', $gone ]);
	is($code, 7, 'await: exit 7 for an id in no table');
}

$node->stop('fast');
done_testing();
