# t/052_notify_relay.pl: the NOTIFY relay (shared_preload_libraries = 'jobq').
#
# In a database with a sweeper, producers no longer NOTIFY themselves: the
# sweeper sends "jobq.<queue>" after their commit.  Checked through the
# sender's PID that psql prints with each notification: the sweeper's where
# it runs, the producer's own where it does not (another database, or while
# the sweeper is down), and the same rules as before for what notifies
# (ready jobs of a notifying, running queue, enqueued, released or failed
# with a retry due at once; once per transaction and queue; nothing on
# rollback).  Completion events (notify_finished) go the same ways, with
# one line per finished job, split under the payload limit.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);

my $node = PostgreSQL::Test::Cluster->new('relay');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'jobq'
jobq.sweeper_databases = 'postgres'
max_prepared_transactions = 2
});
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE other');
for my $db ('postgres', 'other')
{
	$node->safe_psql($db, qq{
		CREATE EXTENSION jobq;
		SELECT jobq_create_queue('q');
		SELECT jobq_create_queue('q2');
		SELECT jobq_create_queue('quiet', notify => false);
		SELECT jobq_create_queue('now', backoff_base => '0');
	});
}

sub sweeper_pid
{
	return $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE backend_type = 'jobq sweeper'");
}

# The sweeper relays from its "started" log line on (it attaches first).
sub wait_sweeper
{
	my $offset = shift // 0;
	$node->wait_for_log(qr/jobq sweeper started for database "postgres"/, $offset);
	return sweeper_pid();
}

# listen_run(DB, CHANNELS, SQL): run SQL in one psql session that LISTENs
# on CHANNELS, then give the relay time to send; returns psql's output
# and the session's PID.
sub listen_run
{
	my ($db, $channels, $sql) = @_;
	my $listen = join('', map { qq{LISTEN "$_";\n} } @$channels);
	# psql prints what arrived after each statement: ten short sleeps give
	# the relay a second
	my $naps = "SELECT pg_sleep(0.1);\n" x 10;
	my $out = $node->safe_psql($db, qq{
		SELECT 'self=' || pg_backend_pid();
		$listen
		$sql
		$naps
		SELECT 'end';
	});
	my ($self) = $out =~ /self=(\d+)/;
	return ($out, $self);
}

# Run $sql as listen_run does; returns the notifications as "channel pid"
# lines, sorted, with the session's own PID written as "self".
sub notifications
{
	my ($out, $self) = listen_run(@_);
	my @got;
	while ($out =~ /Asynchronous notification "([^"]+)" received from server process with PID (\d+)/g)
	{
		push @got, "$1 " . ($2 eq $self ? 'self' : $2);
	}
	return join(',', sort @got);
}

my $relay = wait_sweeper();
ok($relay ne '', 'the sweeper runs');

is(notifications('postgres', ['jobq.q'], "SELECT jobq_enqueue('q', '{}');"),
	"jobq.q $relay", 'one job: notified by the sweeper, not the producer');

is(notifications('postgres', ['jobq.q', 'jobq.q2'], qq{
	BEGIN;
	SELECT jobq_enqueue('q', '{}');
	SELECT jobq_enqueue('q2', '{}');
	SELECT jobq_enqueue('q', '{}');
	SELECT count(*) FROM jobq_enqueue_batch('q', ARRAY['1', '2']::jsonb[]);
	COMMIT;
}), "jobq.q $relay,jobq.q2 $relay", 'one transaction, two queues: one notification each');

is(notifications('postgres', ['jobq.q', 'jobq.quiet'], qq{
	BEGIN;
	SELECT jobq_enqueue('q', '{}');
	ROLLBACK;
	SELECT jobq_enqueue('quiet', '{}');
	SELECT jobq_enqueue('q', '{}', delay => '1 hour');
	BEGIN;
	SAVEPOINT s;
	SELECT jobq_enqueue('quiet', '{}');
	RELEASE s;
	COMMIT;
}), '', 'rollback, notify off, delayed job: nothing');

is(notifications('postgres', ['jobq.q', 'jobq.q2'], qq{
	BEGIN;
	SAVEPOINT a;
	SELECT jobq_enqueue('q', '{}');
	ROLLBACK TO SAVEPOINT a;
	SAVEPOINT b;
	SELECT jobq_enqueue('q2', '{}');
	RELEASE SAVEPOINT b;
	COMMIT;
}), "jobq.q2 $relay", 'an enqueue rolled back to a savepoint notifies nothing, a released one does');

# Release and retry make jobs ready too.
my ($id, $token) = split /\|/, $node->safe_psql('postgres',
	"SELECT id, token FROM jobq_claim('q', 't', 1) ORDER BY id LIMIT 1");
is(notifications('postgres', ['jobq.q'], "SELECT jobq_release($id, '$token');"),
	"jobq.q $relay", 'a released job: notified by the sweeper');

# A failure retried at once wakes listeners like a release does; one
# retried later, or in a queue that does not notify or is paused, does not.
# claim_one(DB, QUEUE): the "id, 'token'" of a job claimed from QUEUE
sub claim_one
{
	my ($db, $queue) = @_;
	$node->safe_psql($db, "SELECT jobq_enqueue('$queue', '{}')");
	my ($i, $t) = split /\|/, $node->safe_psql($db,
		"SELECT id, token FROM jobq_claim('$queue', 't', 1)");
	return "$i, '$t'";
}
is(notifications('postgres', ['jobq.q'],
		'SELECT jobq_fail(' . claim_one('postgres', 'q') . ", 'e', retry_in => '0');"),
	"jobq.q $relay", 'a failure retried at once (retry_in => 0): notified by the sweeper');
is(notifications('postgres', ['jobq.now'],
		'SELECT jobq_fail(' . claim_one('postgres', 'now') . ", 'e');"),
	"jobq.now $relay", 'a failure whose backoff is 0: notified');
is(notifications('other', ['jobq.q'],
		'SELECT jobq_fail(' . claim_one('other', 'q') . ", 'e', retry_in => '0');"),
	'jobq.q self', 'retry_in => 0 without a sweeper: the producer notifies itself');
is(notifications('postgres', ['jobq.q', 'jobq.quiet'],
		'SELECT jobq_fail(' . claim_one('postgres', 'q') . ", 'e', retry_in => '1 hour');\n"
		. 'SELECT jobq_fail(' . claim_one('postgres', 'quiet') . ", 'e', retry_in => '0');"),
	'', 'a failure retried later, or in a queue with notify off: nothing');
my $paused_fail = 'SELECT jobq_fail(' . claim_one('postgres', 'q2') . ", 'e', retry_in => '0');";
$node->safe_psql('postgres', "SELECT jobq_pause('q2')");
is(notifications('postgres', ['jobq.q2'], $paused_fail), '',
	'a failure retried at once in a paused queue: nothing');
$node->safe_psql('postgres', "SELECT jobq_resume('q2')");

# A database without a sweeper: the producer notifies as before.
is(notifications('other', ['jobq.q'], "SELECT jobq_enqueue('q', '{}');"),
	'jobq.q self', 'database without a sweeper: the producer notifies itself');

# More queues in flight than the relay holds (64): it notifies every queue
# with notify on, so none is missed.
my @many = map { "m$_" } 1 .. 70;
$node->safe_psql('postgres', join('', map { "SELECT jobq_create_queue('$_');\n" } @many));
my $enq = join('', map { "SELECT jobq_enqueue('$_', '{}');\n" } @many);
my $got = notifications('postgres', [map { "jobq.$_" } @many], "BEGIN;\n${enq}COMMIT;");
my @lines = split /,/, $got;
is(scalar(@lines), 70, '70 queues in one transaction: 70 notifications');
is(scalar(grep { / $relay$/ } @lines), 70, '... all sent by the sweeper');

# A prepared transaction: the relay forgets its notes (PREPARE with a NOTIFY
# of its own would be refused); the job is there after COMMIT PREPARED.
$node->safe_psql('postgres', qq{
	BEGIN;
	SELECT jobq_enqueue('q2', '{"prepared": true}');
	PREPARE TRANSACTION 'p1';
});
$node->safe_psql('postgres', "COMMIT PREPARED 'p1'");
is($node->safe_psql('postgres',
		"SELECT count(*) FROM jobq.jobs WHERE payload = '{\"prepared\": true}'"),
	'1', 'an enqueue in a prepared transaction commits');
# the same session goes on enqueueing after its PREPARE (notes are reset)
is(notifications('postgres', ['jobq.q'], qq{
	BEGIN;
	SELECT jobq_enqueue('q2', '{}', delay => '1 hour');
	PREPARE TRANSACTION 'p2';
	SELECT jobq_enqueue('q', '{}');
	COMMIT PREPARED 'p2';
}), "jobq.q $relay", 'after a PREPARE in the same session, the next enqueue is relayed');

# Completion events (notify_finished): "jobq.finished.<queue>" with a line
# "<id> <state>" per finished job, after the commit, by the relay where
# there is one and by the finishing session itself where not; never for a
# rollback (of the transaction or of a savepoint), never for a queue
# without the setting; many jobs of one commit packed into notifications
# under the payload limit.  events(DB, CHANNELS, SQL): "channel pid" ->
# the payloads' lines, sorted, and the payload sizes.
sub events
{
	my ($out, $self) = listen_run(@_);
	my (%lines, @sizes);
	while ($out =~ /Asynchronous notification "([^"]+)" with payload "(.*?)" received from server process with PID (\d+)/gs)
	{
		my $key = "$1 " . ($3 eq $self ? 'self' : $3);
		push @{ $lines{$key} }, split(/\n/, $2);
		push @sizes, length($2);
	}
	$lines{$_} = [ sort @{ $lines{$_} } ] for keys %lines;
	return (\%lines, \@sizes);
}

for my $case ([ 'postgres', $relay ], [ 'other', 'self' ])
{
	my ($db, $sender) = @$case;
	my $sql = sub { return $node->safe_psql($db, $_[0]); };
	$sql->("SELECT jobq_create_queue('ev', max_attempts => 1, notify_finished => true)");
	$sql->("SELECT jobq_create_queue('evoff', max_attempts => 1)");
	$sql->("SELECT count(*) FROM jobq_enqueue_batch('ev', array_fill('{}'::jsonb, ARRAY[604]))");
	$sql->("SELECT jobq_enqueue('evoff', '{}')");
	my @ev = map { [ split /\|/ ] } split /\n/,
		$sql->("SELECT id, token FROM jobq_claim('ev', 't', 1000) ORDER BY id");
	my ($off) = map { [ split /\|/ ] } $sql->("SELECT id, token FROM jobq_claim('evoff', 't', 1)");
	# a job whose one attempt's lease runs out: the sweep ends it dead
	my $lost = $sql->("SELECT jobq_enqueue('ev', '{}')");
	$sql->("SELECT count(*) FROM jobq_claim('ev', 't', 1, lease => '1 second')");
	my $ready = $sql->("SELECT jobq_enqueue('ev', '{}')");
	my @batch = @ev[ 4 .. 603 ];
	my $ids = join(',', map { $_->[0] } @batch);
	my $tokens = join(',', map { "'$_->[1]'" } @batch);
	my ($got, $sizes) = events($db, [ 'jobq.finished.ev', 'jobq.finished.evoff' ], qq{
		SELECT jobq_complete($ev[0][0], '$ev[0][1]', '{"secret": 1}');
		SELECT jobq_fail($ev[1][0], '$ev[1][1]', 'boom');
		BEGIN;
		SELECT jobq_complete($ev[2][0], '$ev[2][1]');
		ROLLBACK;
		BEGIN;
		SAVEPOINT s;
		SELECT jobq_complete($ev[3][0], '$ev[3][1]');
		ROLLBACK TO SAVEPOINT s;
		SELECT jobq_cancel($ready);
		COMMIT;
		SELECT jobq_complete($off->[0], '$off->[1]');
		SELECT count(*) FROM jobq_complete_batch(ARRAY[$ids]::bigint[], ARRAY[$tokens]::uuid[]);
		SELECT pg_sleep(1.2);
		SELECT dead FROM jobq_sweep('ev');
	});
	my @want = sort("$ev[0][0] completed", "$ev[1][0] dead", "$ready cancelled", "$lost dead",
		map { "$_->[0] completed" } @batch);
	is(join(',', sort keys %$got), "jobq.finished.ev $sender",
		"$db: events only on the channel of the queue with notify_finished, sent by "
		  . ($sender eq 'self' ? 'the session itself (no relay)' : 'the relay'));
	is_deeply($got->{"jobq.finished.ev $sender"}, \@want,
		"$db: one line per finished job (completed, dead, cancelled, dead in a sweep), none for the rolled-back completes");
	ok(@$sizes >= 2 && !grep({ $_ > 7900 } @$sizes),
		"$db: 604 events in " . scalar(@$sizes) . " notifications of at most 7900 bytes");
	unlike(join('', map { @$_ } values %$got), qr/secret|boom/, "$db: no result, no error in the events");
}

# The sweeper stops: producers notify themselves until it is back (5 s).
my $log_offset = -s $node->logfile;
kill 'TERM', $relay;
my $deadline = time + 10;
usleep(20_000) while (sweeper_pid() ne '' && time < $deadline);
is(notifications('postgres', ['jobq.q'], "SELECT jobq_enqueue('q', '{}');"),
	'jobq.q self', 'sweeper down: the producer notifies itself');
my $relay2 = wait_sweeper($log_offset);
ok($relay2 ne '' && $relay2 ne $relay, 'the sweeper is restarted');
is(notifications('postgres', ['jobq.q'], "SELECT jobq_enqueue('q', '{}');"),
	"jobq.q $relay2", 'the restarted sweeper relays again');

$node->stop('fast');
done_testing();
