-- jobq_sweep: running jobs whose lease expired go back to ready (after
-- backoff, error "lease expired") or to dead when their attempts are used
-- up; the old token is fenced. History past its queue's retention is
-- purged: completed and cancelled after completed_retention, dead after
-- dead_retention. completed_retention = 0 keeps no completed history.
\set VERBOSITY terse
SET client_min_messages = warning;

SELECT jobq_create_queue('swp', lease => '1 second', max_attempts => 2,
                         backoff_base => '0', backoff_cap => '0');
SELECT jobq_create_queue('swp-other', lease => '1 second');

-- nothing to do
SELECT * FROM jobq_sweep('swp');

SELECT jobq_enqueue('swp', '{"n": 1}') AS j1 \gset
SELECT jobq_enqueue('swp', '{"n": 2}') AS j2 \gset
SELECT jobq_enqueue('swp-other', '{"n": 3}') AS j3 \gset
SELECT token AS t1 FROM jobq_claim('swp') \gset
SELECT token AS t2 FROM jobq_claim('swp', lease => '1 hour') \gset
SELECT token AS t3 FROM jobq_claim('swp-other') \gset
-- leases still valid: nothing swept
SELECT * FROM jobq_sweep();
SELECT pg_sleep(1.2);
SELECT running, expired FROM jobq_stats('swp');
-- a sweep of one queue leaves the others alone
SELECT * FROM jobq_sweep('swp');
SELECT state, attempt, locked_until, errors -> 0 ->> 'error' AS error,
       errors -> 0 -> 'attempt' AS err_attempt, errors -> 0 -> 'truncated' AS truncated,
       run_at <= clock_timestamp() AS ready_now
FROM jobq_job(:j1);
SELECT state, attempt FROM jobq_job(:j2);
SELECT state FROM jobq_job(:j3);
SELECT running, expired FROM jobq_stats('swp-other');
SELECT * FROM jobq_sweep('swp-other');
SELECT state FROM jobq_job(:j3);
-- the expired worker's token is fenced
SELECT jobq_complete(:j1, :'t1') AS complete_stale;
SELECT jobq_extend(:j1, :'t1') AS extend_stale;
SELECT stale_acks FROM jobq_stats('swp');
-- claimed again (attempt 2 of 2), expires again: dead
SELECT attempt FROM jobq_claim('swp') \gset
SELECT :attempt AS attempt;
SELECT pg_sleep(1.2);
SELECT * FROM jobq_sweep();
SELECT state, attempt, finished_at IS NOT NULL AS finished,
       jsonb_path_query_array(errors, '$[*].error') AS errors
FROM jobq_job(:j1);
SELECT ready, running, dead FROM jobq_stats('swp');

-- a complete after the lease ran out, before any sweep, is accepted
SELECT jobq_enqueue('swp', '{"n": "late"}') AS jl \gset
SELECT token AS tl FROM jobq_claim('swp') \gset
SELECT pg_sleep(1.2);
SELECT expired FROM jobq_stats('swp');
SELECT jobq_complete(:jl, :'tl') AS late_complete;
SELECT * FROM jobq_sweep('swp');
SELECT state FROM jobq_job(:jl);

-- max_rows bounds each step
SELECT count(*) FROM jobq_enqueue_batch('swp', ARRAY['1', '2', '3']::jsonb[]);
SELECT count(*) FROM jobq_claim('swp', max_jobs => 3);
SELECT pg_sleep(1.2);
SELECT * FROM jobq_sweep('swp', max_rows => 2);
SELECT * FROM jobq_sweep('swp', max_rows => 2);
SELECT * FROM jobq_sweep('swp', max_rows => 2);
SELECT ready, running FROM jobq_stats('swp');

-- retention: completed_retention 0 keeps nothing at all
SELECT jobq_create_queue('swp-ret', completed_retention => '0', dead_retention => '1 hour');
SELECT jobq_enqueue('swp-ret', '{"n": "done"}') AS jc \gset
SELECT token AS tc FROM jobq_claim('swp-ret') \gset
SELECT jobq_complete(:jc, :'tc');
SELECT count(*) AS history_rows FROM jobq_job(:jc);
SELECT completed FROM jobq_stats('swp-ret');
-- (with no history, a repeated complete reads as stale)
SELECT jobq_complete(:jc, :'tc') AS repeat_without_history;
-- cancelled jobs follow completed_retention (0: purged by the next sweep)
SELECT jobq_enqueue('swp-ret', '{"n": "cancel"}') AS jx \gset
SELECT jobq_cancel(:jx);
-- dead jobs follow dead_retention (1 hour: kept)
SELECT jobq_enqueue('swp-ret', '{"n": "dead"}') AS jd \gset
SELECT token AS td FROM jobq_claim('swp-ret') \gset
SELECT jobq_fail(:jd, :'td', 'fatal', permanent => true);
SELECT dead, completed, cancelled FROM jobq_stats('swp-ret');
SELECT * FROM jobq_sweep('swp-ret');
SELECT dead, completed, cancelled FROM jobq_stats('swp-ret');
SELECT state FROM jobq_job(:jd);
SELECT count(*) AS cancelled_rows FROM jobq_job(:jx);
-- dead_retention 0: purged by the next sweep
SELECT jobq_alter_queue('swp-ret', dead_retention => '0');
SELECT * FROM jobq_sweep('swp-ret');
SELECT count(*) AS dead_rows FROM jobq_job(:jd);

-- completed history is kept within retention and purged after it
SELECT jobq_create_queue('swp-keep', completed_retention => '1 second', dead_retention => '1 hour');
SELECT jobq_enqueue('swp-keep', '{"n": "keep"}') AS jk \gset
SELECT token AS tk FROM jobq_claim('swp-keep') \gset
SELECT jobq_complete(:jk, :'tk');
SELECT * FROM jobq_sweep('swp-keep');
SELECT state FROM jobq_job(:jk);
SELECT pg_sleep(1.2);
SELECT * FROM jobq_sweep();
SELECT count(*) AS purged FROM jobq_job(:jk);
-- the other queues' history was not touched by the global sweep
SELECT queue, dead, completed, cancelled FROM jobq_stats() WHERE queue LIKE 'swp%' ORDER BY queue;
SELECT jobq_drop_queue(q, force => true) FROM unnest(ARRAY['swp', 'swp-keep', 'swp-other', 'swp-ret']) q;
