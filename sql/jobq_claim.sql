-- jobq_claim: ordering by (priority, run_at, id), max_jobs, claims from
-- several queues at once, delayed jobs not claimable, paused queues
-- skipped, unknown queues empty, attempt counted at claim, fresh token per
-- claim, lease from the queue or the override, worker label.
\set VERBOSITY terse
SET client_min_messages = warning;

SELECT jobq_create_queue('clm', lease => '2 minutes');
SELECT jobq_create_queue('clm-b', lease => '20 minutes');

-- ordering: priority first, then run_at, then id. A is enqueued before B
-- but failed once (retry at once), so its run_at is later than B's; C1 and
-- C2 come from one batch and share their run_at, so id decides.
SELECT jobq_enqueue('clm', '{"n": "A"}') AS ja \gset
SELECT jobq_enqueue('clm', '{"n": "B"}') AS jb \gset
SELECT id = :ja AS claimed_a, jobq_fail(id, token, 'again', retry_in => '0') AS a_failed
FROM jobq_claim('clm');
SELECT count(*) FROM jobq_enqueue_batch('clm', ARRAY['{"n": "C1"}', '{"n": "C2"}']::jsonb[]);
SELECT jobq_enqueue('clm', '{"n": "p5"}', priority => 5) AS p5 \gset
SELECT jobq_enqueue('clm', '{"n": "p-3"}', priority => -3) AS pm3 \gset
SELECT jobq_enqueue('clm', '{"n": "delayed"}', priority => -1000, delay => '1 hour') AS delayed \gset
SELECT (SELECT run_at FROM jobq_job(:ja)) > (SELECT run_at FROM jobq_job(:jb)) AS a_runs_after_b;
-- one at a time
SELECT payload, attempt, queue FROM jobq_claim('clm');
-- several at once, returned in claim order
SELECT payload, attempt FROM jobq_claim('clm', max_jobs => 3);
SELECT payload, attempt FROM jobq_claim('clm', max_jobs => 10);
-- the delayed job is not claimable; nothing is left
SELECT count(*) AS nothing FROM jobq_claim('clm', max_jobs => 10);
SELECT state, attempt FROM jobq_job(:delayed);

-- the claimed row: token, lease from the queue, claimed_at, worker
SELECT jobq_enqueue('clm', '{"n": "lease"}') AS lj \gset
SELECT id = :lj AS same, token IS NOT NULL AS has_token, attempt, max_attempts,
       locked_until - enqueued_at BETWEEN interval '2 minutes' AND interval '3 minutes' AS queue_lease,
       locked_until BETWEEN clock_timestamp() + interval '1 minute 50 seconds'
                        AND clock_timestamp() + interval '2 minutes' AS lease_from_now
FROM jobq_claim('clm', worker => 'worker-1');
SELECT state, attempt, worker, claimed_at IS NOT NULL AS claimed,
       locked_until - claimed_at AS lease
FROM jobq_job(:lj);
-- lease override
SELECT jobq_enqueue('clm', '{"n": "override"}') AS oj \gset
SELECT locked_until BETWEEN clock_timestamp() + interval '4 seconds'
                        AND clock_timestamp() + interval '5 seconds' AS override_ok
FROM jobq_claim('clm', lease => '5 seconds');
SELECT locked_until - claimed_at AS lease, worker FROM jobq_job(:oj);
-- lease bounds (1 s and 24 h are allowed)
SELECT jobq_enqueue('clm', '{}') > 0 AS ok;
SELECT locked_until - clock_timestamp() <= interval '1 second' AS one_second
FROM jobq_claim('clm', lease => '1 second');
SELECT jobq_enqueue('clm', '{}') > 0 AS ok;
SELECT locked_until - clock_timestamp() BETWEEN interval '23 hours 59 minutes' AND interval '24 hours' AS one_day
FROM jobq_claim('clm', lease => '24 hours');

-- attempt is counted at claim; a fresh token every claim
SELECT jobq_enqueue('clm', '{"n": "again"}', max_attempts => 5) AS aj \gset
SELECT token AS t1, attempt AS a1 FROM jobq_claim('clm') \gset
SELECT :a1 AS attempt_first_claim;
SELECT jobq_fail(:aj, :'t1', 'boom', retry_in => '0');
SELECT token AS t2, attempt AS a2 FROM jobq_claim('clm') \gset
SELECT :a2 AS attempt_second_claim, :'t1' <> :'t2' AS new_token;
SELECT attempt, state FROM jobq_job(:aj);

-- multi-queue claim: the best jobs across the queues
SELECT jobq_enqueue('clm', '{"n": "a-p2"}', priority => 2) > 0 AS ok;
SELECT jobq_enqueue('clm-b', '{"n": "b-p1"}', priority => 1) > 0 AS ok;
SELECT jobq_enqueue('clm-b', '{"n": "b-p3"}', priority => 3) > 0 AS ok;
SELECT jobq_enqueue('clm', '{"n": "a-p4"}', priority => 4) > 0 AS ok;
SELECT queue, payload, locked_until - clock_timestamp() > interval '10 minutes' AS long_lease
FROM jobq_claim(ARRAY['clm', 'clm-b', 'clm-missing'], max_jobs => 2);
SELECT queue, payload FROM jobq_claim(ARRAY['clm-b', 'clm'], max_jobs => 5);
-- unknown queues: empty, not an error
SELECT count(*) AS unknown FROM jobq_claim('clm-missing');
SELECT count(*) AS unknown FROM jobq_claim(ARRAY['clm-missing', 'clm-missing-2']);

-- paused queue is skipped, also in a multi-queue claim
SELECT jobq_enqueue('clm-b', '{"n": "b-paused"}') > 0 AS ok;
SELECT jobq_enqueue('clm', '{"n": "a-while-b-paused"}') > 0 AS ok;
SELECT jobq_pause('clm-b');
SELECT count(*) AS from_paused FROM jobq_claim('clm-b');
SELECT queue, payload FROM jobq_claim(ARRAY['clm', 'clm-b'], max_jobs => 5);
SELECT jobq_resume('clm-b');
SELECT queue, payload, attempt FROM jobq_claim('clm-b');

-- a claim rolled back leaves the job ready and claimable at once
SELECT jobq_enqueue('clm', '{"n": "rollback"}') AS rj \gset
BEGIN;
SELECT count(*) FROM jobq_claim('clm');
ROLLBACK;
SELECT state, attempt FROM jobq_job(:rj);
SELECT payload, attempt FROM jobq_claim('clm');

-- claimed jobs are not claimed again while their lease runs
SELECT count(*) AS running_not_reclaimed FROM jobq_claim(ARRAY['clm', 'clm-b'], max_jobs => 1000);
SELECT ready, delayed, running FROM jobq_stats('clm');

-- every claimed job gets a token of its own, a random version-4 UUID, also
-- when claims take fewer jobs than max_jobs (tokens come from a pool, and a
-- claim spends only those of the jobs it returns), from one queue or several
SELECT jobq_create_queue('clm-tok');
SELECT count(*) FROM jobq_enqueue_batch('clm-tok', array_fill('{}'::jsonb, ARRAY[1200]));
CREATE TEMP TABLE clm_tokens AS
SELECT id, token FROM jobq_claim('clm-tok', max_jobs => 1000);
INSERT INTO clm_tokens SELECT id, token FROM jobq_claim('clm-tok', max_jobs => 3);
INSERT INTO clm_tokens SELECT id, token FROM jobq_claim(ARRAY['clm-tok', 'clm'], max_jobs => 7);
INSERT INTO clm_tokens SELECT id, token FROM jobq_claim('clm-tok', max_jobs => 1000);
INSERT INTO clm_tokens SELECT id, token FROM jobq_claim('clm-tok', max_jobs => 1000);
SELECT count(*) AS claimed, count(DISTINCT id) AS jobs, count(DISTINCT token) AS tokens,
       bool_and(substr(token::text, 15, 1) = '4') AS version_4,
       bool_and(substr(token::text, 20, 1) IN ('8', '9', 'a', 'b')) AS rfc4122_variant
FROM clm_tokens;
SELECT count(*) AS tokens_match_rows
FROM clm_tokens c JOIN jobq.jobs j ON j.id = c.id AND j.token = c.token;
DROP TABLE clm_tokens;
SELECT jobq_drop_queue('clm-tok', force => true);

-- clean up: no running job of this test may expire into a later test
SELECT jobq_drop_queue('clm', force => true), jobq_drop_queue('clm-b', force => true);
