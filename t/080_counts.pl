# t/080_counts.pl: the shared-memory counts on a preloaded server (issue 14).
#
# After a restart the counters are empty: a queue reads exact = false
# (counted from the tables, with the right numbers) until rebuilt, by
# jobq_counts_reconcile or by the sweeper.  A PREPAREd transaction makes its
# queue's counts not exact, and a rebuild after COMMIT PREPARED makes them
# exact again with the prepared jobs in.  A full table (jobq.max_tracked_queues)
# leaves queues untracked, exact = false but right; dropping queues frees
# their entries.  A row deleted by hand is
# found by the sweeper's periodic rebuild, corrected and logged as drift.
# The live metrics ring counts the commits of the second.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);
use JobqTest;

my $node = new_node('counts', qq{
shared_preload_libraries = 'jobq'
jobq.sweeper_databases = ''
jobq.max_tracked_queues = 16
max_prepared_transactions = 2
});

sub sql { return $node->safe_psql('postgres', $_[0]); }
sub poll { return wait_for($node, @_); }

my $counts = "SELECT ready || '/' || delayed || '/' || running || '/' || completed || '/' || dead"
  . " || ' ' || CASE WHEN exact THEN 't' ELSE 'f' END FROM jobq_counts('q')";

# q: 3 ready, 1 delayed, 1 running, 1 completed, 1 dead
sql(q{
	SELECT jobq_create_queue('q', max_attempts => 1, completed_retention => '1 day', notify => false);
	SELECT jobq_enqueue_batch('q', array_fill('{}'::jsonb, ARRAY[6]));
	SELECT jobq_enqueue('q', '{}', delay => '1 hour');
});
sql(q{WITH c AS (SELECT id, token FROM jobq_claim('q')) SELECT jobq_complete(id, token) FROM c});
sql(q{WITH c AS (SELECT id, token FROM jobq_claim('q')) SELECT jobq_fail(id, token, 'x') FROM c});
sql(q{SELECT count(*) FROM jobq_claim('q', lease => '1 hour')});
is(sql($counts), '3/1/1/1/1 f', 'a queue never rebuilt: counted from the tables, not exact');
is(sql(q{SELECT exact::text || coalesce(drift::text, 'null') FROM jobq_counts_reconcile('q')}),
	'truenull', 'rebuilt: exact, no drift to report (it was not exact before)');
is(sql($counts), '3/1/1/1/1 t', 'exact after the rebuild, the same numbers');

# restart: empty shared memory, the same numbers but not exact until rebuilt
$node->restart;
is(sql($counts), '3/1/1/1/1 f', 'after a restart: not exact, counted from the tables');
sql(q{SELECT jobq_counts_reconcile()});
is(sql($counts), '3/1/1/1/1 t', 'rebuilt after the restart');

# the sweeper rebuilds by itself after a restart
$node->append_conf('postgresql.conf', qq{
jobq.sweeper_databases = 'postgres'
jobq.sweep_interval = '200ms'
});
$node->restart;
ok(poll($counts, '3/1/1/1/1 t', 20), 'after a restart the sweeper rebuilds the counts');

# PREPARE TRANSACTION: not exact while pending, exact after a rebuild
$node->safe_psql('postgres', q{
	BEGIN;
	SELECT jobq_enqueue_batch('q', array_fill('{}'::jsonb, ARRAY[2]));
	PREPARE TRANSACTION 'counts';
});
is(sql($counts), '3/1/1/1/1 f', 'a prepared enqueue: not exact (the prepared jobs not yet in)');
is(sql(q{SELECT CASE WHEN exact THEN 't' ELSE 'f' END FROM jobq_counts_reconcile('q')}), 'f',
	'a rebuild while it is pending leaves the counts not exact');
sql(q{COMMIT PREPARED 'counts'});
is(sql($counts), '5/1/1/1/1 f', 'committed: right numbers, still not exact');
is(sql(q{SELECT CASE WHEN exact THEN 't' ELSE 'f' END FROM jobq_counts_reconcile('q')}), 't',
	'rebuilt after it ended: exact');
is(sql($counts), '5/1/1/1/1 t', 'and the committed jobs are counted');

# the live metrics: this second's commits
sql(q{SELECT jobq_create_queue('m', notify => false)});
sql(q{SELECT jobq_enqueue_batch('m', array_fill('{}'::jsonb, ARRAY[3]))});
sql(q{WITH c AS (SELECT id, token FROM jobq_claim('m', max_jobs => 2)) SELECT jobq_complete(id, token) FROM c});
sql(q{BEGIN; SELECT jobq_claim('m'); ROLLBACK});
is(sql(q{SELECT sum(counters[1]) || '/' || sum(counters[2]) || '/' || sum(counters[3])
	|| '/' || (SELECT sum(w) FROM jobq._metrics_live('m') l2, unnest(l2.wait_hist) w)
	|| '/' || (SELECT sum(r) FROM jobq._metrics_live('m') l3, unnest(l3.run_hist) r)
	FROM jobq._metrics_live('m')}),
	'3/2/2/2/2', 'live metrics: 3 enqueued, 2 claimed (a rolled-back claim is not), 2 completed, 2 waits, 2 runs');

# a full table: 16 entries, more queues than that
sql(q{
	SELECT jobq_create_queue('full-' || g, notify => false) FROM generate_series(1, 20) g;
	SELECT jobq_enqueue('full-' || g, '{}') FROM generate_series(1, 20) g;
	SELECT count(*) FROM jobq_counts_reconcile();
});
my ($untracked, $right) = split /\|/, sql(q{
	SELECT count(*) FILTER (WHERE NOT exact), bool_and(ready = 1 AND running = 0)
	FROM jobq_counts() WHERE queue LIKE 'full-%'});
cmp_ok($untracked, '>=', 4, "a full table: $untracked of 20 queues are untracked, exact = false");
is($right, 't', 'and every one of them is counted right');

# dropped queues give their entries back (the sweeper forgets them), so a
# queue made after the drop is tracked and rebuilt
sql(q{SELECT jobq_drop_queue('full-' || g, force => true) FROM generate_series(1, 20) g});
sql(q{SELECT jobq_create_queue('after-drop', notify => false); SELECT jobq_enqueue('after-drop', '{}')});
ok(poll(q{SELECT ready || ' ' || CASE WHEN exact THEN 't' ELSE 'f' END FROM jobq_counts('after-drop')}, '1 t', 20),
	'the entries of dropped queues are freed: a new queue is tracked and exact');

# drift: a row deleted by hand is found by the sweeper's periodic rebuild
sql(q{ALTER SYSTEM SET jobq.counts_reconcile_interval = '1s'; SELECT pg_reload_conf()});
my $log_offset = -s $node->logfile;
sql(q{DELETE FROM jobq.history WHERE id = (SELECT min(id) FROM jobq.history WHERE queue = 'q' AND state = 'completed')});
ok(poll($counts, '5/1/1/0/1 t', 20), 'the sweeper rebuilt them');
my $logged = 0;
my $deadline = time + 10;
while (time < $deadline && !$logged)
{
	$logged = slurp_file($node->logfile, $log_offset) =~
	  /counts of queue "q" drifted and were corrected.*\n.*DETAIL:  Differences: ready\+delayed 0, running 0, completed -1, dead 0, cancelled 0/;
	usleep(100_000);
}
ok($logged, 'the drift is logged with the difference per state');

$node->stop;
done_testing();
