-- The operator's figures of groups and limits (issue 19): idle group rows
-- removed at the last job's end (and by the reconcile once a rate no
-- longer holds them back), a re-driven job whose place was given again,
-- the groups of jobq_counts.  The races of the removal with enqueues are
-- in specs/iso_group_idle.spec.
\set VERBOSITY terse
SET client_min_messages = warning;

CREATE FUNCTION pg_temp.group_rows(q text) RETURNS bigint
LANGUAGE sql AS $$SELECT count(*) FROM jobq.groups WHERE queue = q$$;
-- claim n jobs of q and complete them in one batch; returns how many
CREATE FUNCTION pg_temp.claim_complete(q text, n int) RETURNS bigint
LANGUAGE sql AS $$
    WITH c AS (SELECT array_agg(id) AS ids, array_agg(token) AS tokens FROM jobq_claim(q, max_jobs => n))
    SELECT count(*) FROM c, LATERAL jobq_complete_batch(c.ids, c.tokens)$$;

-- 1,000 one-off tenants: a row each while they have live jobs, none after
SELECT jobq_create_queue('go_fifo', group_mode => 'fifo');
SELECT count(*) FROM jobq_enqueue_batch('go_fifo', array_fill('{}'::jsonb, ARRAY[1000]),
    group_keys => ARRAY(SELECT 'tenant-' || g FROM generate_series(1, 1000) g));
SELECT pg_temp.group_rows('go_fifo') AS rows_enqueued;
SELECT pg_temp.claim_complete('go_fifo', 600) AS done;
SELECT pg_temp.group_rows('go_fifo') AS rows_left;
SELECT pg_temp.claim_complete('go_fifo', 1000) AS done;
SELECT pg_temp.group_rows('go_fifo') AS rows_left,
       (SELECT count(*) FROM jobq.group_jobs WHERE queue = 'go_fifo') AS line_rows;

-- a group keeps its row while a job waits or runs, and loses it with the
-- last: single complete, fail that retries (stays), fail to dead, cancel
SELECT count(*) FROM jobq_enqueue_batch('go_fifo', array_fill('{}'::jsonb, ARRAY[3]),
    group_keys => ARRAY['a', 'a', 'b']);
SELECT jobq_complete(id, token) FROM jobq_claim('go_fifo', max_jobs => 1);
SELECT key, running, head_id IS NOT NULL AS has_head FROM jobq.groups WHERE queue = 'go_fifo' ORDER BY key;
SELECT jobq_fail(id, token, 'again', retry_in => '1 hour') FROM jobq_claim('go_fifo', max_jobs => 2);
SELECT key, running, head_id IS NOT NULL AS has_head FROM jobq.groups WHERE queue = 'go_fifo' ORDER BY key;
SELECT count(jobq_cancel(id)) FROM jobq.jobs WHERE queue = 'go_fifo';
SELECT pg_temp.group_rows('go_fifo') AS rows_left;

-- a dead head that blocks its FIFO group keeps the row until it is
-- cancelled; a dead job that blocks nothing (limit mode) does not
SELECT jobq_enqueue('go_fifo', '{}', group_key => 'd') IS NOT NULL AS enqueued;
SELECT jobq_fail(id, token, 'fatal', permanent => true) FROM jobq_claim('go_fifo');
SELECT key, running, blocked_by IS NOT NULL AS blocked FROM jobq.groups WHERE queue = 'go_fifo';
SELECT jobq_skip_head('go_fifo', 'd') IS NOT NULL AS skipped;
SELECT pg_temp.group_rows('go_fifo') AS rows_left;

-- a group whose row went and comes back continues above its old places
-- (a new row starts at the clock in microseconds): a dead job retried
-- then goes back to its place, before the jobs enqueued since
SELECT jobq_create_queue('go_limit', group_mode => 'limit', group_limit => 1);
SELECT jobq_enqueue('go_limit', '{"n": "old"}', group_key => 'k') AS old_id \gset
SELECT jobq_fail(id, token, 'fatal', permanent => true) FROM jobq_claim('go_limit');
SELECT pg_temp.group_rows('go_limit') AS rows_after_dead;
SELECT group_seq AS old_seq FROM jobq.history WHERE id = :old_id \gset
SELECT jobq_enqueue('go_limit', '{"n": "new"}', group_key => 'k') IS NOT NULL AS enqueued;
SELECT group_seq > :old_seq AS above_the_old FROM jobq.jobs WHERE queue = 'go_limit';
SELECT jobq_retry(:old_id);
SELECT payload->>'n' AS job, group_seq = :old_seq AS in_its_place
FROM jobq.jobs WHERE queue = 'go_limit' ORDER BY group_seq;
SELECT (SELECT payload->>'n' FROM jobq.jobs j WHERE j.id = gl.id) AS job
FROM jobq.group_jobs gl WHERE queue = 'go_limit' ORDER BY seq;
SELECT payload->>'n' AS first FROM jobq_claim('go_limit');
SELECT jobq_drop_queue('go_limit', force => true);

-- a retried dead job whose place another job holds (only a row written
-- by hand can give it away) goes behind the group's jobs
SELECT jobq_create_queue('go_limit', group_mode => 'limit', group_limit => 1);
SELECT jobq_enqueue('go_limit', '{"n": "old"}', group_key => 'k') AS old_id \gset
SELECT jobq_fail(id, token, 'fatal', permanent => true) FROM jobq_claim('go_limit');
SELECT group_seq AS old_seq FROM jobq.history WHERE id = :old_id \gset
SELECT jobq_enqueue('go_limit', '{"n": "new"}', group_key => 'k') IS NOT NULL AS enqueued;
UPDATE jobq.group_jobs SET seq = :old_seq WHERE queue = 'go_limit';
UPDATE jobq.jobs SET group_seq = :old_seq WHERE queue = 'go_limit';
SELECT jobq_retry(:old_id);
SELECT payload->>'n' AS job, group_seq > :old_seq AS behind
FROM jobq.jobs WHERE queue = 'go_limit' ORDER BY group_seq;
SELECT (SELECT payload->>'n' FROM jobq.jobs j WHERE j.id = gl.id) AS job
FROM jobq.group_jobs gl WHERE queue = 'go_limit' ORDER BY seq;
SELECT payload->>'n' AS first FROM jobq_claim('go_limit');
SELECT * FROM jobq_groups_reconcile('go_limit');
SELECT jobq_drop_queue('go_limit', force => true);

-- a group rate keeps the row of an idle group while it holds claims back
-- (tat ahead); the reconcile removes it once tat passed, and reports no
-- drift for it
SELECT jobq_create_queue('go_rate', group_mode => 'fifo', group_rate => 1, group_rate_per => '1 hour');
SELECT jobq_enqueue('go_rate', '{}', group_key => 'r') IS NOT NULL AS enqueued;
SELECT pg_temp.claim_complete('go_rate', 1) AS done;
SELECT key, tat > now() AS holds FROM jobq.groups WHERE queue = 'go_rate';
SELECT * FROM jobq_groups_reconcile('go_rate');
SELECT pg_temp.group_rows('go_rate') AS rows_kept;
UPDATE jobq.groups SET tat = now() - interval '1 second' WHERE queue = 'go_rate';
SELECT * FROM jobq_groups_reconcile('go_rate');
SELECT pg_temp.group_rows('go_rate') AS rows_left;
SELECT jobq_drop_queue('go_rate', force => true);

-- jobq_counts: groups with a running job, groups a dead head blocks
SELECT count(*) FROM jobq_enqueue_batch('go_fifo', array_fill('{}'::jsonb, ARRAY[6]),
    group_keys => ARRAY['a', 'a', 'b', 'b', 'c', 'd']);
SELECT count(*) FROM jobq_claim('go_fifo', max_jobs => 10);
SELECT jobq_fail(id, token, 'fatal', permanent => true) FROM jobq.jobs
WHERE queue = 'go_fifo' AND group_key IN ('c', 'd');
SELECT queue, ready, running, dead, groups_active, groups_blocked FROM jobq_counts('go_fifo');
SELECT jobq_create_queue('go_plain');
SELECT queue, groups_active, groups_blocked FROM jobq_counts() WHERE queue LIKE 'go_%' ORDER BY queue;
-- cheap however many groups wait: the running jobs' index and the blocked
-- groups' index, never the groups of the queue
SET plan_cache_mode = force_generic_plan;
DO $$ BEGIN
    EXECUTE 'PREPARE regress_group_counts(text) AS ' || jobq._statement('group_counts');
END $$;
SELECT p LIKE '%jobs_lease_idx%' AS running_index, p LIKE '%groups_blocked_idx%' AS blocked_index,
       p NOT LIKE '%Seq Scan%' AS no_seq_scan
FROM regress_plan('EXECUTE regress_group_counts(''go_fifo'')') p;
DEALLOCATE regress_group_counts;
RESET plan_cache_mode;

SELECT jobq_drop_queue(q, force => true) FROM unnest(ARRAY['go_fifo', 'go_plain']) q;
SELECT count(*) AS groups_left FROM jobq.groups WHERE queue LIKE 'go_%';
