-- jobq_admin: operating on finished jobs. jobq_retry(id) re-drives a dead
-- job (attempt 0, ready now, errors kept; false for anything not dead),
-- jobq_retry(queue) re-drives all dead jobs of a queue, jobq_cancel
-- (ready, delayed and dead -> cancelled; running, finished and unknown:
-- false), jobq_purge (by state and age; live jobs never purged).
\set VERBOSITY terse
SET client_min_messages = warning;

SELECT jobq_create_queue('adm', max_attempts => 1);
SELECT jobq_create_queue('adm-live');

-- in adm: three dead jobs and a completed one; in adm-live: a ready, a
-- delayed and a running job
SELECT array_agg(id ORDER BY id) AS dead_ids
FROM jobq_enqueue_batch('adm', ARRAY['{"d": 1}', '{"d": 2}', '{"d": 3}']::jsonb[]) \gset
SELECT count(*) FILTER (WHERE jobq_fail(id, token, 'failed ' || (payload ->> 'd')) = 'dead') AS died
FROM jobq_claim('adm', max_jobs => 3);
SELECT jobq_enqueue('adm', '{"c": 1}') AS jc \gset
SELECT jobq_complete(id, token) FROM jobq_claim('adm');
SELECT jobq_enqueue('adm-live', '{"r": 1}', max_attempts => 5) AS jr \gset
SELECT jobq_enqueue('adm-live', '{"r": "delayed"}', delay => '1 day') AS jdl \gset
SELECT jobq_enqueue('adm-live', '{"run": 1}', priority => -1) AS jrun \gset
SELECT id = :jrun AS claimed_running, token AS trun FROM jobq_claim('adm-live') \gset
SELECT :'claimed_running' AS claimed_running;
SELECT queue, ready, delayed, running, dead, completed, cancelled FROM jobq_stats() WHERE queue LIKE 'adm%' ORDER BY queue;

-- retry by id
SELECT (:'dead_ids'::bigint[])[1] AS d1, (:'dead_ids'::bigint[])[2] AS d2,
       (:'dead_ids'::bigint[])[3] AS d3 \gset
SELECT jobq_retry(:d1) AS retried;
SELECT state, attempt, max_attempts, finished_at, run_at <= clock_timestamp() AS ready_now,
       run_at > enqueued_at AS run_at_reset, errors -> 0 ->> 'error' AS kept_error, payload
FROM jobq_job(:d1);
SELECT jobq_retry(:d1) AS again_not_dead;
SELECT jobq_retry(:jc) AS completed_job;
SELECT jobq_retry(:jr) AS ready_job;
SELECT jobq_retry(:jrun) AS running_job;
SELECT jobq_retry(-42) AS unknown_job;
-- the re-driven job is claimable and runs again from attempt 1
SELECT id = :d1 AS same_job, attempt, payload FROM jobq_claim('adm');
SELECT state FROM jobq_job(:d1);

-- retry by queue: all dead jobs of that queue, count returned
SELECT jobq_retry('adm') AS retried;
SELECT jobq_retry('adm') AS none_left;
SELECT id - :d1 AS n, state, attempt FROM jobq_list('adm') WHERE id IN (:d2, :d3) ORDER BY id;
\set VERBOSITY sqlstate
SELECT jobq_retry('adm-missing');
\set VERBOSITY terse

-- cancel: ready, delayed -> cancelled
SELECT jobq_cancel(:jr) AS ready_cancelled;
SELECT jobq_cancel(:jdl) AS delayed_cancelled;
SELECT state, finished_at IS NOT NULL AS finished, payload FROM jobq_job(:jr);
-- running: false, unchanged, token still valid
SELECT jobq_cancel(:jrun) AS running_cancelled;
SELECT state FROM jobq_job(:jrun);
-- completed, cancelled, unknown: false
SELECT jobq_cancel(:jc) AS completed, jobq_cancel(:jr) AS cancelled_again, jobq_cancel(-42) AS unknown;
-- dead -> cancelled (no longer retryable)
SELECT id AS jd, token AS td FROM jobq_claim('adm') WHERE id = :d2 \gset
SELECT jobq_fail(:jd, :'td', 'dies again');
SELECT jobq_cancel(:d2) AS dead_cancelled;
SELECT state FROM jobq_job(:d2);
SELECT jobq_retry(:d2) AS retry_cancelled;
-- a cancelled job cannot be claimed; its dead_ids sibling d3 can (and dies)
SELECT id = :d3 AS d3, jobq_fail(id, token, 'dies for the purge') AS outcome FROM jobq_claim('adm');
SELECT jobq_complete(:jrun, :'trun') AS running_completes;
SELECT queue, ready, delayed, running, dead, completed, cancelled FROM jobq_stats() WHERE queue LIKE 'adm%' ORDER BY queue;

-- purge: by state, by age, never live jobs
SELECT jobq_purge('adm', 'dead') AS dead_purged;
SELECT jobq_purge('adm', 'cancelled', older_than => '1 hour') AS too_young;
SELECT jobq_purge('adm', 'cancelled') AS cancelled_purged;
SELECT dead, completed, cancelled FROM jobq_stats('adm');
SELECT jobq_enqueue('adm', '{"live": 1}') AS jl \gset
SELECT jobq_purge('adm') AS all_finished;
SELECT ready, running, dead, completed, cancelled FROM jobq_stats('adm');
SELECT state FROM jobq_job(:jl);
SELECT count(*) AS gone FROM jobq_job(:jc);
-- purge errors: state not finished, unknown queue, negative age
SELECT jobq_purge('adm', 'ready');
SELECT jobq_purge('adm', 'running');
SELECT jobq_purge('adm', 'bogus');
SELECT jobq_purge('adm', 'completed', older_than => '-1 day');
SELECT jobq_purge('adm', older_than => NULL);
\set VERBOSITY sqlstate
SELECT jobq_purge('adm-missing');
\set VERBOSITY terse
SELECT ready FROM jobq_stats('adm');

SELECT jobq_drop_queue('adm', force => true), jobq_drop_queue('adm-live', force => true);
