# t/060_dump_restore.pl: a jobq database survives pg_dump and restore.
#
# A database with queues (non-default settings, one paused), live jobs
# (ready, delayed, running with lease and token) and history (completed,
# dead, cancelled) plus a stale-ack count is dumped in custom format
# (restored with pg_restore) and in plain format (restored with psql) into
# fresh databases.  Each restored database must have every queue with its
# settings, every job and every history row exactly as they were, hand out
# ids above every old one, still fence the running job by its token (the old
# token completes it, a wrong one is refused), and pass a consistency check
# (state invariants, amcheck on every jobq index).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JobqTest;

my $node = new_node('dump');
my $src = 'postgres';

$node->safe_psql($src, q{
	SELECT jobq_create_queue('mails', lease => '10 minutes', max_attempts => 3,
	                         backoff_base => '2 seconds', backoff_cap => '30 minutes',
	                         completed_retention => '7 days', dead_retention => '30 days',
	                         notify => false);
	SELECT jobq_create_queue('reports', lease => '1 hour');
	SELECT jobq_create_queue('idle');
	SELECT jobq_pause('idle');

	-- history: one completed (with a result), one dead, one cancelled
	SELECT jobq_enqueue('mails', '{"n": 1}');
	SELECT jobq_complete(c.id, c.token, '{"sent": true}') FROM jobq_claim('mails', 'w0') c;
	SELECT jobq_enqueue('mails', '{"n": 2}');
	SELECT jobq_fail(c.id, c.token, 'bounced', permanent => true) FROM jobq_claim('mails', 'w0') c;
	SELECT jobq_cancel(jobq_enqueue('mails', '{"n": 3}'));

	-- live: ready (priority, dedupe key), delayed, and one running below
	SELECT jobq_enqueue('mails', '{"n": 4}', priority => -5, dedupe_key => 'welcome:4');
	SELECT jobq_enqueue('mails', '{"n": 5}', delay => '2 days');
	SELECT jobq_enqueue('reports', '{"n": 6}');
	SELECT jobq_enqueue('idle', '{"n": 7}');
});
my ($running_id, $token) = split /\|/, $node->safe_psql($src,
	"SELECT id || '|' || token FROM jobq_claim('reports', 'w1')");
ok($running_id && $token, "job $running_id running with a token");
# a refused complete counts in jobq.stale_acks
is($node->safe_psql($src,
	"SELECT jobq_complete($running_id, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11')"),
	'f', 'a wrong token is refused before the dump');

# What must come back, as text: every row of every table, in a fixed order,
# and the sequence's position.
my %snapshot_sql = (
	queues     => 'SELECT q::text FROM jobq.queues q ORDER BY name',
	jobs       => 'SELECT j::text FROM jobq.jobs j ORDER BY id',
	history    => 'SELECT h::text FROM jobq.history h ORDER BY id',
	stale_acks => 'SELECT s::text FROM jobq.stale_acks s ORDER BY queue, slot',
	stats      => 'SELECT queue, paused, ready, delayed, running, expired, dead, '
	  . 'completed, cancelled, stale_acks FROM jobq_stats() ORDER BY queue',
);
sub snapshot
{
	my ($db) = @_;
	return { map { $_ => $node->safe_psql($db, $snapshot_sql{$_}) } keys %snapshot_sql };
}
my $before = snapshot($src);
is(scalar(split /\n/, $before->{queues}), 3, 'three queues before the dump');
is(scalar(split /\n/, $before->{jobs}), 4, 'four live jobs (ready, delayed, running, paused) before the dump');
is(scalar(split /\n/, $before->{history}), 3, 'three finished jobs before the dump');
isnt($before->{stale_acks}, '', 'a stale-ack count before the dump');
my $max_id = $node->safe_psql($src,
	'SELECT max(id) FROM (SELECT id FROM jobq.jobs UNION ALL SELECT id FROM jobq.history) x');

# Invariants a healthy jobq database keeps; each query returns the rows
# that break one (expect none).
my $consistency = q{
	SELECT 'live table holds a finished job ' || id FROM jobq.jobs
	 WHERE state NOT IN ('ready', 'running')
	UNION ALL
	SELECT 'history holds a live job ' || id FROM jobq.history
	 WHERE state IN ('ready', 'running')
	UNION ALL
	SELECT 'running job without lease or token ' || id FROM jobq.jobs
	 WHERE state = 'running' AND (token IS NULL OR locked_until IS NULL OR claimed_at IS NULL)
	UNION ALL
	SELECT 'ready job with a token ' || id FROM jobq.jobs
	 WHERE state = 'ready' AND (token IS NOT NULL OR locked_until IS NOT NULL)
	UNION ALL
	SELECT 'job of an unknown queue ' || id FROM jobq.jobs j
	 WHERE NOT EXISTS (SELECT 1 FROM jobq.queues q WHERE q.name = j.queue)
	UNION ALL
	SELECT 'id both live and finished ' || id FROM jobq.jobs JOIN jobq.history USING (id)
	UNION ALL
	SELECT 'sequence behind the ids'
	 WHERE (SELECT last_value FROM jobq.jobs_id_seq) <
	       (SELECT max(id) FROM (SELECT id FROM jobq.jobs UNION ALL SELECT id FROM jobq.history) x)
	UNION ALL
	-- amcheck raises an error for a broken index; every index of jobq is checked
	SELECT 'fewer than five indexes checked'
	 WHERE (SELECT count(*) FROM (
	          SELECT bt_index_check(i.indexrelid, heapallindexed => true)
	            FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
	           WHERE c.relnamespace = 'jobq'::regnamespace AND c.relam = (SELECT oid FROM pg_am WHERE amname = 'btree')) x) < 5;
};
$node->safe_psql($src, 'CREATE EXTENSION amcheck');
is($node->safe_psql($src, $consistency), '', 'the source database is consistent');

my $dir = PostgreSQL::Test::Utils::tempdir();
my %restore = (
	custom => sub {
		my ($db) = @_;
		$node->command_ok([ 'pg_dump', '-Fc', '-f', "$dir/jobq.dump", '-d', $node->connstr($src) ],
			'pg_dump custom format');
		$node->command_ok([ 'pg_restore', '--exit-on-error', '-d', $node->connstr($db), "$dir/jobq.dump" ],
			'pg_restore into a fresh database');
	},
	plain => sub {
		my ($db) = @_;
		$node->command_ok([ 'pg_dump', '-Fp', '-f', "$dir/jobq.sql", '-d', $node->connstr($src) ],
			'pg_dump plain format');
		$node->command_ok([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-f', "$dir/jobq.sql",
				'-d', $node->connstr($db) ],
			'psql restores the plain dump into a fresh database');
	},
);

for my $format (sort keys %restore)
{
	my $db = "restored_$format";
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$restore{$format}->($db);

	my $after = snapshot($db);
	for my $what (sort keys %snapshot_sql)
	{
		is($after->{$what}, $before->{$what}, "$format: $what came back as they were");
	}
	is($node->safe_psql($db, $consistency), '', "$format: the restored database is consistent");

	my $new_id = $node->safe_psql($db, "SELECT jobq_enqueue('reports', '{\"n\": 8}')");
	cmp_ok($new_id, '>', $max_id, "$format: a new job's id ($new_id) is above every old one ($max_id)");
	my $new_batch = $node->safe_psql($db,
		"SELECT min(id) FROM jobq_enqueue_batch('reports', ARRAY['{}', '{}']::jsonb[])");
	cmp_ok($new_batch, '>', $new_id, "$format: batch enqueues go on from there");

	# the running job is still fenced by its token
	is($node->safe_psql($db,
		"SELECT jobq_extend($running_id, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11') IS NULL"),
		't', "$format: a wrong token cannot extend the running job");
	is($node->safe_psql($db,
		"SELECT jobq_complete($running_id, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11')"),
		'f', "$format: a wrong token cannot complete it");
	is($node->safe_psql($db, "SELECT jobq_complete($running_id, '$token', '{\"ok\": 1}')"),
		't', "$format: the old token completes it");
	is($node->safe_psql($db, "SELECT state || ' ' || (result ->> 'ok') FROM jobq_job($running_id)"),
		'completed 1', "$format: the job is completed with its result");

	# the restored queues work: a claim honours the restored paused flag
	is($node->safe_psql($db, "SELECT count(*) FROM jobq_claim('idle')"), '0',
		"$format: the paused queue is still paused");
	is($node->safe_psql($db,
		"SELECT string_agg(payload ->> 'n', ',' ORDER BY id) FROM jobq_claim('mails', max_jobs => 10)"),
		'4', "$format: a claim takes the ready job, not the delayed one");
	is($node->safe_psql($db, $consistency), '', "$format: still consistent after work");
}

done_testing();
