-- jobq_counts without preload (the suite's server does not preload jobq):
-- exact counts of the live table, history counted through its index up to
-- the cap (100,001 per state) and exact = false above it; jobq_stats gives
-- the same numbers in its 0.1.0 columns; jobq_counts_reconcile and
-- jobq._metrics_live have nothing to work on (no row); bad input as in the
-- rest of the API. The plans are checked in jobq_explain; the preloaded
-- path by the preloaded isolation schedule and t/080_counts.pl.
\set VERBOSITY terse
SET client_min_messages = warning;

SELECT jobq_create_queue('cnt', lease => '1 second', max_attempts => 1);
SELECT jobq_create_queue('cnt-empty');

-- empty queue: zeros, NULL age, exact
SELECT queue, paused, ready, delayed, running, expired, completed, dead, cancelled,
       oldest_ready_age, exact, as_of <= clock_timestamp() AND as_of > now() - interval '1 minute' AS as_of_now
FROM jobq_counts('cnt-empty');

-- one job in every state
SELECT jobq_enqueue('cnt', '{"s": "completed"}') AS jcomp \gset
SELECT jobq_enqueue('cnt', '{"s": "dead"}') AS jdead \gset
SELECT jobq_enqueue('cnt', '{"s": "expired"}') AS jexp \gset
SELECT jobq_enqueue('cnt', '{"s": "running"}') AS jrun \gset
SELECT jobq_enqueue('cnt', '{"s": "cancelled"}') AS jcan \gset
SELECT jobq_enqueue('cnt', '{"s": "ready"}', priority => 100) AS jready \gset
SELECT jobq_enqueue('cnt', '{"s": "delayed"}', delay => '1 hour') AS jdel \gset
SELECT jobq_cancel(:jcan);
SELECT token AS tcomp FROM jobq_claim('cnt') \gset
SELECT jobq_complete(:jcomp, :'tcomp');
SELECT token AS tdead FROM jobq_claim('cnt') \gset
SELECT jobq_fail(:jdead, :'tdead', 'it broke');
SELECT token AS texp FROM jobq_claim('cnt') \gset
SELECT token AS trun FROM jobq_claim('cnt', lease => '1 hour') \gset
SELECT pg_sleep(1.1);

SELECT queue, paused, ready, delayed, running, expired, completed, dead, cancelled,
       oldest_ready_age > interval '1 second' AS ready_for_over_1s, exact
FROM jobq_counts('cnt');
-- jobq_stats: the same numbers
SELECT s.ready = c.ready AND s.delayed = c.delayed AND s.running = c.running
       AND s.expired = c.expired AND s.completed = c.completed AND s.dead = c.dead
       AND s.cancelled = c.cancelled AS stats_agree
FROM jobq_stats('cnt') s, jobq_counts('cnt') c;
-- every queue, in name order
SELECT queue, ready FROM jobq_counts() WHERE queue LIKE 'cnt%';
SELECT jobq_pause('cnt-empty');
SELECT queue, paused FROM jobq_counts('cnt-empty');

-- history above the cap: counted up to 100,001, exact = false; the live
-- counts stay exact
INSERT INTO jobq.history (id, queue, state, priority, run_at, attempt, max_attempts,
                          enqueued_at, finished_at, payload)
SELECT -g, 'cnt', 'completed', 0, now(), 1, 1, now(), now(), '{}'
FROM generate_series(1, 100005) g;
SELECT ready, delayed, running, completed, dead, cancelled, exact FROM jobq_counts('cnt');
DELETE FROM jobq.history WHERE id < 0;
-- give the pages back: the plans of later tests must not see a big table
VACUUM jobq.history;
SELECT completed, exact FROM jobq_counts('cnt');

-- no counters without preload: nothing to reconcile, no live metrics
SELECT count(*) AS reconciled FROM jobq_counts_reconcile();
SELECT count(*) AS reconciled FROM jobq_counts_reconcile('cnt');
SELECT count(*) AS live_rows FROM jobq._metrics_live();
SELECT count(*) AS live_rows FROM jobq._metrics_live('cnt');

-- bad input: unknown queue 42704, bad names 22023, as everywhere
\set VERBOSITY sqlstate
SELECT * FROM jobq_counts('cnt-missing');
SELECT * FROM jobq_counts('Not A Name');
SELECT * FROM jobq_counts('');
SELECT * FROM jobq_counts_reconcile('cnt-missing');
SELECT * FROM jobq_counts_reconcile('Bad!');
SELECT * FROM jobq._metrics_live('Bad!');
\set VERBOSITY terse

SELECT jobq_drop_queue('cnt', force => true);
SELECT jobq_drop_queue('cnt-empty', force => true);
