-- jobq_claim_queues: a claim that names several queues merges the queues'
-- scans of jobs_claim_idx and locks and updates only the jobs it takes
-- (extension/direct_claim.c); the statement of several queues (claim.c)
-- claims when the direct claim cannot. Both must take the same jobs in the
-- same order, each with its queue's lease. DEBUG2 says which path a claim
-- took: "N jobs of K queues claimed directly", or nothing (the statement).
\set VERBOSITY terse
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS amcheck;

-- queues with leases of 1, 2 and 3 minutes; 8 jobs each, priorities -1, 0
-- and 1 in turn, enqueued by one statement (one run_at: claim order is
-- priority, then id); in mq-a a delayed job first in line, not due
SELECT count(jobq_create_queue('mq-' || q, lease => (n || ' minutes')::interval,
                               completed_retention => '0')) AS created
FROM unnest(ARRAY['a', 'b', 'c']) WITH ORDINALITY AS x(q, n);
SELECT count(jobq_enqueue('mq-' || q, jsonb_build_object('n', q || g),
                          priority => (g % 3 - 1)::smallint)) AS enqueued
FROM unnest(ARRAY['a', 'b', 'c']) q, generate_series(1, 8) g;
SELECT jobq_enqueue('mq-a', '{"n": "later"}', priority => -9, delay => '1 hour') > 0 AS enqueued;

-- what a claim of max_jobs across queues must return: the ready jobs due
-- in claim order, each with the lease of its queue (or the one given)
CREATE FUNCTION regress_mq_expected(queues text[], max_jobs integer)
RETURNS TABLE (n text, lease interval) LANGUAGE sql AS $$
    SELECT j.payload->>'n', q.lease FROM jobq.jobs j JOIN jobq.queues q ON q.name = j.queue
    WHERE j.queue = ANY (queues) AND j.state = 'ready' AND j.run_at <= now()
    ORDER BY j.priority, j.run_at, j.id LIMIT max_jobs
$$;
CREATE TEMP TABLE regress_mq (path text, pos bigint, id bigint, n text, until timestamptz,
                              lease interval);
-- a claim of 10 across the three queues, recorded as which
CREATE FUNCTION regress_mq_claim(which text) RETURNS bigint LANGUAGE sql AS $$
    WITH c AS (INSERT INTO regress_mq (path, pos, id, n, until)
               SELECT which, c.pos, c.id, c.payload->>'n', c.locked_until
               FROM jobq_claim(ARRAY['mq-c', 'mq-a', 'mq-b'], 'w', 10)
                    WITH ORDINALITY AS c(id, queue, payload, attempt, max_attempts, token,
                                         locked_until, enqueued_at, flow_id, pos)
               RETURNING 1)
    SELECT count(*) FROM c
$$;
-- the lease of each job a claim took (claimed_at as the table has it)
CREATE FUNCTION regress_mq_leases(which text) RETURNS bigint LANGUAGE sql AS $$
    WITH u AS (UPDATE regress_mq r SET lease = r.until - j.claimed_at FROM jobq.jobs j
               WHERE j.id = r.id AND r.path = which RETURNING 1)
    SELECT count(*) FROM u
$$;

-- 1. the same jobs, in the same order, directly and through the statement
-- (the jobs put back between them); the delayed job left
INSERT INTO regress_mq (path, pos, n, lease)
SELECT 'expected', ordinality, n, lease
FROM regress_mq_expected(ARRAY['mq-a', 'mq-b', 'mq-c'], 10) WITH ORDINALITY;
SET client_min_messages = debug2;
SELECT regress_mq_claim('direct') AS claimed;
SET client_min_messages = warning;
SELECT regress_mq_leases('direct') AS leases;
SELECT bt_index_check('jobq.jobs_claim_idx', true), bt_index_check('jobq.jobs_lease_idx', true);
UPDATE jobq.jobs SET state = 'ready', attempt = 0, token = NULL, locked_until = NULL,
                     claimed_at = NULL, worker = NULL
WHERE queue LIKE 'mq-%' AND state = 'running';
SET jobq.direct_writes = off;
SET client_min_messages = debug2;
SELECT regress_mq_claim('statement') AS claimed;
SET client_min_messages = warning;
SELECT regress_mq_leases('statement') AS leases;
RESET jobq.direct_writes;
SELECT e.pos, e.n, e.lease, d.n = e.n AND d.lease = e.lease AS direct_same,
       s.n = e.n AND s.lease = e.lease AS statement_same
FROM regress_mq e
LEFT JOIN regress_mq d ON d.path = 'direct' AND d.pos = e.pos
LEFT JOIN regress_mq s ON s.path = 'statement' AND s.pos = e.pos
WHERE e.path = 'expected' ORDER BY e.pos;
UPDATE jobq.jobs SET state = 'ready', attempt = 0, token = NULL, locked_until = NULL,
                     claimed_at = NULL, worker = NULL
WHERE queue LIKE 'mq-%' AND state = 'running';

-- 2. a lease given: every job gets it
SET client_min_messages = debug2;
SELECT payload->>'n' AS n FROM jobq_claim(ARRAY['mq-b', 'mq-a'], 'w', 3, lease => '42 seconds');
SET client_min_messages = warning;
SELECT payload->>'n' AS n, locked_until - claimed_at AS lease FROM jobq.jobs
WHERE queue LIKE 'mq-%' AND state = 'running' ORDER BY n;

-- 3. a name given twice, and a queue that does not exist: two queues
SET client_min_messages = debug2;
SELECT payload->>'n' AS n FROM jobq_claim(ARRAY['mq-b', 'mq-none', 'mq-b', 'mq-c'], 'w', 2);
SET client_min_messages = warning;

-- 4. a paused queue among them: the statement, which leaves it out
SELECT jobq_pause('mq-c');
SET client_min_messages = debug2;
SELECT payload->>'n' AS n FROM jobq_claim(ARRAY['mq-c', 'mq-b'], 'w', 2);
SET client_min_messages = warning;
SELECT jobq_resume('mq-c');

-- 5. a queue with groups among them: its own claim first (group_claim.c),
-- then the others directly once it has nothing
SELECT count(jobq_create_queue('mq-fifo', group_mode => 'fifo')) AS created;
SELECT jobq_enqueue('mq-fifo', '{"n": "f1"}', group_key => 'g1') > 0 AS enqueued;
SET client_min_messages = debug2;
SELECT payload->>'n' AS n FROM jobq_claim(ARRAY['mq-fifo', 'mq-c'], 'w', 2);
SELECT payload->>'n' AS n FROM jobq_claim(ARRAY['mq-fifo', 'mq-c'], 'w', 2);
SET client_min_messages = warning;
-- a queue with a group rate only (no groups, no limit) is no grouped queue:
-- claimed with the others, through the statement (the direct claim leaves
-- every queue with a rate to it)
SELECT count(jobq_create_queue('mq-grate', group_rate => 5)) AS created;
SELECT jobq_enqueue('mq-grate', '{"n": "r1"}') > 0 AS enqueued;
SET client_min_messages = debug2;
SELECT payload->>'n' AS n FROM jobq_claim(ARRAY['mq-fifo', 'mq-grate'], 'w', 2);
SET client_min_messages = warning;

-- 6. more than there is: every due job, then nothing; the delayed job stays
SET client_min_messages = debug2;
SELECT count(*) AS claimed FROM jobq_claim(ARRAY['mq-a', 'mq-b', 'mq-c'], 'w', 100);
SELECT count(*) AS claimed FROM jobq_claim(ARRAY['mq-a', 'mq-b', 'mq-c'], 'w', 100);
SET client_min_messages = warning;
SELECT payload->>'n' AS n, state FROM jobq.jobs WHERE queue LIKE 'mq-%' AND state = 'ready';
SELECT bt_index_check('jobq.jobs_claim_idx', true), bt_index_check('jobq.jobs_lease_idx', true),
       bt_index_check('jobq.jobs_pkey', true);

SELECT jobq_drop_queue('mq-' || q, force => true) IS NOT NULL AS dropped
FROM unnest(ARRAY['a', 'b', 'c', 'fifo', 'grate']) q;
DROP FUNCTION regress_mq_expected(text[], integer);
DROP FUNCTION regress_mq_leases(text);
DROP FUNCTION regress_mq_claim(text);
