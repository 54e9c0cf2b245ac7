-- jobq_stats: every counter (ready, delayed, running, expired, dead,
-- completed, cancelled, stale_acks), oldest_ready_age, one row per queue
-- or none for an unknown queue; jobq_job for live and finished jobs (never
-- the token); jobq_list with every state filter, max_rows and last_error.
\set VERBOSITY terse
SET client_min_messages = warning;

SELECT jobq_create_queue('sta', lease => '1 second', max_attempts => 1);
SELECT jobq_create_queue('sta-empty');

-- empty queue: zeros and NULL age
SELECT queue, paused, ready, delayed, running, expired, dead, completed, cancelled,
       oldest_ready_age, stale_acks
FROM jobq_stats('sta-empty');
-- unknown queue: 42704, as in every operator call (0.1.0 returned no row)
\set VERBOSITY sqlstate
SELECT count(*) AS unknown FROM jobq_stats('sta-missing');
\set VERBOSITY terse

-- one job in every state
SELECT jobq_enqueue('sta', '{"s": "completed"}') AS jcomp \gset
SELECT jobq_enqueue('sta', '{"s": "dead"}') AS jdead \gset
SELECT jobq_enqueue('sta', '{"s": "expired"}') AS jexp \gset
SELECT jobq_enqueue('sta', '{"s": "running"}') AS jrun \gset
SELECT jobq_enqueue('sta', '{"s": "cancelled"}') AS jcan \gset
SELECT jobq_enqueue('sta', '{"s": "ready"}', priority => 100) AS jready \gset
SELECT jobq_enqueue('sta', '{"s": "delayed"}', delay => '1 hour') AS jdel \gset
SELECT jobq_cancel(:jcan);
SELECT token AS tcomp FROM jobq_claim('sta') \gset
SELECT jobq_complete(:jcomp, :'tcomp', '{"answer": 42}');
SELECT token AS tdead FROM jobq_claim('sta') \gset
SELECT jobq_fail(:jdead, :'tdead', 'it broke');
SELECT token AS texp FROM jobq_claim('sta') \gset
SELECT token AS trun FROM jobq_claim('sta', lease => '1 hour', worker => 'w-1') \gset
SELECT pg_sleep(1.2);
-- stale acknowledgements: two against this queue
SELECT jobq_complete(:jrun, gen_random_uuid()), jobq_extend(:jrun, gen_random_uuid());

SELECT queue, paused, ready, delayed, running, expired, dead, completed, cancelled,
       oldest_ready_age > interval '1 second' AS ready_for_over_1s, stale_acks
FROM jobq_stats('sta');
-- all queues, ordered by name (filtered to this test's)
SELECT queue, ready, running FROM jobq_stats() WHERE queue LIKE 'sta%';
-- paused shows
SELECT jobq_pause('sta-empty');
SELECT queue, paused FROM jobq_stats('sta-empty');

-- oldest_ready_age follows the oldest ready job, not delayed ones
SELECT jobq_enqueue('sta-empty', '{}', delay => '1 hour') > 0 AS delayed;
SELECT ready, delayed, oldest_ready_age FROM jobq_stats('sta-empty');
SELECT jobq_enqueue('sta-empty', '{}') > 0 AS ready;
SELECT ready, delayed, oldest_ready_age >= interval '0' AND oldest_ready_age < interval '1 minute' AS young
FROM jobq_stats('sta-empty');

-- jobq_job: live and finished jobs
SELECT state, payload, attempt, max_attempts, locked_until IS NOT NULL AS leased,
       worker, claimed_at IS NOT NULL AS claimed, finished_at, result
FROM jobq_job(:jrun);
SELECT state, attempt, locked_until, finished_at IS NOT NULL AS finished, result,
       errors
FROM jobq_job(:jcomp);
SELECT state, attempt, errors -> 0 ->> 'error' AS error, result FROM jobq_job(:jdead);
SELECT state, attempt, claimed_at, finished_at IS NOT NULL AS finished FROM jobq_job(:jcan);
SELECT count(*) AS unknown FROM jobq_job(-1);
-- no token column in jobq_job
SELECT count(*) AS token_columns
FROM pg_proc p, unnest(p.proargnames) a
WHERE p.proname = 'jobq_job' AND a = 'token';

-- jobq_list: live jobs by id, then finished ones newest first; each state filter
SELECT id - :jcomp AS n, state, priority, attempt, max_attempts,
       finished_at IS NOT NULL AS finished, last_error
FROM jobq_list('sta');
SELECT s AS state, array_agg(l.id - :jcomp ORDER BY l.id) AS jobs
FROM unnest(ARRAY['ready', 'delayed', 'running', 'completed', 'dead', 'cancelled']) s,
     LATERAL jobq_list('sta', s) l
GROUP BY s ORDER BY s;
-- "expired" is a stats counter, not a list state
SELECT count(*) FROM jobq_list('sta', 'expired');
SELECT count(*) FROM jobq_list('sta', 'READY');
-- max_rows
SELECT array_agg(id - :jcomp) AS first_two FROM jobq_list('sta', max_rows => 2);
SELECT count(*) FROM jobq_list('sta', max_rows => 0);
SELECT count(*) FROM jobq_list('sta', max_rows => 10001);
SELECT count(*) FROM jobq_list('sta', max_rows => 10000);
-- unknown queue: 42704 (0.1.0 returned no row); and jobq_sweep of one
-- (0.1.0 returned zeros)
\set VERBOSITY sqlstate
SELECT count(*) AS unknown FROM jobq_list('sta-missing');
SELECT * FROM jobq_sweep('sta-missing');
\set VERBOSITY terse

-- after a sweep, expired is counted as dead (max_attempts 1)
SELECT * FROM jobq_sweep('sta');
-- jobq_sweep(NULL) sweeps every queue: one row, the totals (nothing left here)
SELECT * FROM jobq_sweep(NULL);
SELECT ready, delayed, running, expired, dead, completed, cancelled, stale_acks FROM jobq_stats('sta');
SELECT jobq_drop_queue('sta', force => true), jobq_drop_queue('sta-empty', force => true);
