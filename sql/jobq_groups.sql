-- jobq_groups: per-key FIFO and per-key concurrency limits (issue 19,
-- doc/groups.md).  A job carries a group_key exactly when its queue's
-- group_mode is fifo or limit; claims take at most group_limit running
-- jobs per group (1 in FIFO), in group_seq order; a failed FIFO head stays
-- first, a dead one blocks its group (fifo_block) until retried or
-- cancelled; every change of a grouped job updates its group's row in the
-- same transaction (jobq.groups: running, head, blocked_by, eligible).
\set VERBOSITY terse
SET client_min_messages = warning;

SELECT jobq_create_queue('g_fifo', group_mode => 'fifo', backoff_base => '0', backoff_cap => '0');
SELECT jobq_create_queue('g_limit', group_mode => 'limit', group_limit => 2);
SELECT jobq_create_queue('g_plain');

CREATE FUNCTION regress_group(q text, k text)
RETURNS TABLE (running integer, head text, blocked text, eligible boolean)
LANGUAGE sql AS $$
    SELECT g.running, j.payload->>'n', b.payload->>'n', g.eligible
    FROM jobq.groups g
    LEFT JOIN (SELECT id, payload FROM jobq.jobs UNION ALL SELECT id, payload FROM jobq.history) j
           ON j.id = g.head_id
    LEFT JOIN jobq.history b ON b.id = g.blocked_by
    WHERE g.queue = q AND g.key = k
$$;
CREATE TABLE regress_claimed (id bigint, token uuid, n text);
CREATE FUNCTION regress_claim(q text, max_jobs integer DEFAULT 10)
RETURNS SETOF text LANGUAGE sql AS $$
    WITH c AS (SELECT id, token, payload->>'n' AS n FROM jobq_claim(q, max_jobs => max_jobs)),
         i AS (INSERT INTO regress_claimed SELECT * FROM c)
    SELECT n FROM c
$$;
CREATE FUNCTION regress_done(n_ text) RETURNS boolean LANGUAGE sql AS $$
    SELECT jobq_complete(id, token) FROM regress_claimed WHERE n = n_
$$;

-- bad group keys, before any side effect
SELECT jobq_enqueue('g_plain', '{}', group_key => 'a');
SELECT jobq_enqueue('g_fifo', '{}');
SELECT jobq_enqueue('g_fifo', '{}', group_key => '');
SELECT jobq_enqueue('g_fifo', '{}', group_key => repeat('k', 257));
SELECT * FROM jobq_enqueue_batch('g_fifo', ARRAY['{}', '{}']::jsonb[], group_keys => ARRAY['a']);
SELECT * FROM jobq_enqueue_batch('g_fifo', ARRAY['{}', '{}']::jsonb[], group_keys => ARRAY['a', NULL]);
SELECT * FROM jobq_enqueue_batch('g_fifo', ARRAY['{}']::jsonb[]);
SELECT * FROM jobq_enqueue_batch('g_plain', ARRAY['{}']::jsonb[], group_keys => ARRAY['a']);
SELECT * FROM jobq_pop('g_fifo');
SELECT count(*) AS jobs, (SELECT count(*) FROM jobq.groups) AS groups FROM jobq.jobs;

-- FIFO: one running job per group, in enqueue order; others wait
SELECT count(*) FROM (
    SELECT jobq_enqueue('g_fifo', jsonb_build_object('n', n), group_key => k)
    FROM (VALUES ('a1', 'a'), ('a2', 'a'), ('a3', 'a'), ('b1', 'b')) v(n, k)) e;
SELECT * FROM regress_group('g_fifo', 'a');
SELECT * FROM regress_claim('g_fifo') ORDER BY 1;
SELECT * FROM regress_group('g_fifo', 'a');
SELECT * FROM regress_claim('g_fifo');
SELECT regress_done('a1');
SELECT * FROM regress_group('g_fifo', 'a');
SELECT * FROM regress_claim('g_fifo');

-- a failed head runs again before the jobs behind it
SELECT jobq_fail(id, token, 'boom', retry_in => '0') FROM regress_claimed WHERE n = 'a2';
DELETE FROM regress_claimed WHERE n = 'a2';
SELECT * FROM regress_group('g_fifo', 'a');
SELECT * FROM regress_claim('g_fifo');
-- a failed head that retries later holds its group until then
SELECT jobq_fail(id, token, 'later', retry_in => '1 hour') FROM regress_claimed WHERE n = 'a2';
DELETE FROM regress_claimed WHERE n = 'a2';
SELECT * FROM regress_claim('g_fifo');
SELECT affected FROM jobq_run_now_many(ARRAY(SELECT id FROM jobq.jobs WHERE payload->>'n' = 'a2'));
SELECT * FROM regress_claim('g_fifo');
SELECT * FROM regress_claim('g_fifo');

-- a dead head blocks its group (fifo_block retry_and_dead) until retried
SELECT jobq_fail(id, token, 'fatal', permanent => true) FROM regress_claimed WHERE n = 'a2';
DELETE FROM regress_claimed WHERE n = 'a2';
SELECT * FROM regress_group('g_fifo', 'a');
SELECT * FROM regress_claim('g_fifo');
SELECT group_key, group_seq < (SELECT min(group_seq) FROM jobq.jobs
                               WHERE queue = 'g_fifo' AND group_key = 'a') AS before_the_others
FROM jobq.history WHERE payload->>'n' = 'a2';
SELECT jobq_retry(id) FROM jobq.history WHERE payload->>'n' = 'a2';
SELECT * FROM regress_group('g_fifo', 'a');
SELECT * FROM regress_claim('g_fifo');
-- dead again, then cancelled: the group goes on with a3
SELECT jobq_fail(id, token, 'fatal', permanent => true) FROM regress_claimed WHERE n = 'a2';
DELETE FROM regress_claimed WHERE n = 'a2';
SELECT jobq_cancel(id) FROM jobq.history WHERE payload->>'n' = 'a2';
SELECT * FROM regress_group('g_fifo', 'a');
SELECT * FROM regress_claim('g_fifo');

-- release and lease expiry put the head back first
SELECT jobq_enqueue('g_fifo', '{"n": "a4"}', group_key => 'a') IS NOT NULL;
SELECT jobq_release(id, token) FROM regress_claimed WHERE n = 'a3';
DELETE FROM regress_claimed WHERE n = 'a3';
SELECT * FROM regress_claim('g_fifo');
UPDATE jobq.jobs SET locked_until = now() - interval '1 second' WHERE payload->>'n' = 'a3';
SELECT requeued, dead FROM jobq_sweep('g_fifo');
DELETE FROM regress_claimed WHERE n = 'a3';
SELECT * FROM regress_group('g_fifo', 'a');
SELECT * FROM regress_claim('g_fifo');
SELECT regress_done('a3'), regress_done('b1');
SELECT * FROM regress_claim('g_fifo');

-- cancelling a waiting head makes the next job the head
SELECT jobq_enqueue('g_fifo', '{"n": "c1"}', group_key => 'c') IS NOT NULL,
       jobq_enqueue('g_fifo', '{"n": "c2"}', group_key => 'c') IS NOT NULL;
SELECT jobq_cancel(id) FROM jobq.jobs WHERE payload->>'n' = 'c1';
SELECT * FROM regress_group('g_fifo', 'c');

-- a batch: group_seq follows input order per group, even where dedupe
-- keys made the ids go in another order
SELECT count(*) FROM jobq_enqueue_batch('g_fifo',
    ARRAY['{"n": "d1"}', '{"n": "d2"}', '{"n": "e1"}', '{"n": "d3"}']::jsonb[],
    dedupe_keys => ARRAY['z', 'y', 'x', 'w'], group_keys => ARRAY['d', 'd', 'e', 'd']);
SELECT payload->>'n' AS n, group_seq - min(group_seq) OVER () + 1 AS place,
       rank() OVER (ORDER BY id) AS id_rank
FROM jobq.jobs WHERE group_key = 'd' ORDER BY group_seq;
SELECT * FROM regress_claim('g_fifo') ORDER BY 1;
SELECT regress_done('d1'), regress_done('a4'), regress_done('c2'), regress_done('e1');
SELECT * FROM regress_claim('g_fifo');

-- limit: up to group_limit running per group; a retry goes to the back
SELECT count(*) FROM jobq_enqueue_batch('g_limit',
    ARRAY['{"n": "x1"}', '{"n": "x2"}', '{"n": "x3"}', '{"n": "x4"}', '{"n": "y1"}']::jsonb[],
    group_keys => ARRAY['x', 'x', 'x', 'x', 'y']);
SELECT * FROM regress_claim('g_limit') ORDER BY 1;
SELECT * FROM regress_group('g_limit', 'x');
SELECT * FROM regress_claim('g_limit');
SELECT jobq_fail(id, token, 'again', retry_in => '0') FROM regress_claimed WHERE n = 'x1';
DELETE FROM regress_claimed WHERE n = 'x1';
SELECT * FROM regress_claim('g_limit');
SELECT regress_done('x2');
SELECT * FROM regress_claim('g_limit');
SELECT jobq_complete_batch_positions(array_agg(id ORDER BY n), array_agg(token ORDER BY n))
FROM regress_claimed WHERE n IN ('x3', 'x4', 'y1');
SELECT * FROM regress_group('g_limit', 'x');
SELECT * FROM regress_claim('g_limit');

-- round robin: the group served longest ago first
SELECT jobq_create_queue('g_rr', group_mode => 'fifo', group_order => 'round_robin');
SELECT count(*) FROM jobq_enqueue_batch('g_rr',
    ARRAY['{"n": "p1"}', '{"n": "p2"}', '{"n": "p3"}', '{"n": "q1"}', '{"n": "q2"}']::jsonb[],
    group_keys => ARRAY['p', 'p', 'p', 'q', 'q']);
CREATE TABLE regress_served (s serial, n text);
WITH c AS (SELECT regress_claim('g_rr', 1) AS n) INSERT INTO regress_served (n) SELECT n FROM c WHERE regress_done(n);
WITH c AS (SELECT regress_claim('g_rr', 1) AS n) INSERT INTO regress_served (n) SELECT n FROM c WHERE regress_done(n);
WITH c AS (SELECT regress_claim('g_rr', 1) AS n) INSERT INTO regress_served (n) SELECT n FROM c WHERE regress_done(n);
WITH c AS (SELECT regress_claim('g_rr', 1) AS n) INSERT INTO regress_served (n) SELECT n FROM c WHERE regress_done(n);
WITH c AS (SELECT regress_claim('g_rr', 1) AS n) INSERT INTO regress_served (n) SELECT n FROM c WHERE regress_done(n);
SELECT string_agg(n, ' ' ORDER BY s) AS served FROM regress_served;
DROP TABLE regress_served;

-- a claim from several queues takes from the grouped ones through their groups
SELECT jobq_enqueue('g_plain', '{"n": "plain"}') IS NOT NULL;
SELECT jobq_enqueue('g_rr', '{"n": "r1"}', group_key => 'r') IS NOT NULL,
       jobq_enqueue('g_rr', '{"n": "r2"}', group_key => 'r') IS NOT NULL;
SELECT payload->>'n' FROM jobq_claim(ARRAY['g_rr', 'g_plain'], max_jobs => 10);
SELECT payload->>'n' FROM jobq_claim(ARRAY['g_rr', 'g_plain'], max_jobs => 10);
SELECT payload->>'n' FROM jobq_claim(ARRAY['g_rr', 'g_plain'], max_jobs => 10);

-- max_running: the queue's running jobs, counted at claim time
SELECT jobq_create_queue('g_max', max_running => 2);
SELECT count(*) FROM jobq_enqueue_batch('g_max', array_fill('{}'::jsonb, ARRAY[5]));
SELECT count(*) AS took FROM jobq_claim('g_max', max_jobs => 10);
SELECT count(*) AS took FROM jobq_claim('g_max', max_jobs => 10);
SELECT jobq_complete(id, token) FROM jobq.jobs WHERE queue = 'g_max' AND state = 'running' LIMIT 1;
SELECT count(*) AS took FROM jobq_claim('g_max', max_jobs => 10);
-- a lease that expired still holds its slot until swept
UPDATE jobq.jobs SET locked_until = now() - interval '1 second' WHERE queue = 'g_max' AND state = 'running';
SELECT count(*) AS took FROM jobq_claim('g_max', max_jobs => 10);
SELECT requeued FROM jobq_sweep('g_max');
SELECT count(*) AS took FROM jobq_claim('g_max', max_jobs => 10);
-- a claim of several queues keeps the limit too
SELECT count(*) AS took FROM jobq_claim(ARRAY['g_max', 'g_plain'], max_jobs => 10);

-- a rate (GCRA): rate_burst at once, then one per rate_per / rate
SELECT jobq_create_queue('g_rate', rate => 1, rate_per => '1 hour', rate_burst => 3);
SELECT count(*) FROM jobq_enqueue_batch('g_rate', array_fill('{}'::jsonb, ARRAY[5]));
SELECT count(*) AS took FROM jobq_claim('g_rate', max_jobs => 2);
SELECT count(*) AS took FROM jobq_claim('g_rate', max_jobs => 10);
SELECT count(*) AS took FROM jobq_claim('g_rate', max_jobs => 10);
SELECT tat BETWEEN now() + interval '3 hours' - interval '1 minute' AND now() + interval '3 hours'
       AS three_tokens_spent
FROM jobq.queue_rates WHERE queue = 'g_rate';
-- a per-group rate: each group has its own burst
SELECT jobq_create_queue('g_grate', group_mode => 'limit', group_limit => 5,
                         group_rate => 1, group_rate_per => '1 hour', group_rate_burst => 2);
SELECT count(*) FROM jobq_enqueue_batch('g_grate', array_fill('{}'::jsonb, ARRAY[6]),
                                        group_keys => ARRAY['a', 'a', 'a', 'b', 'b', 'b']);
SELECT j.group_key, count(*) FROM jobq_claim('g_grate', max_jobs => 10) c
JOIN jobq.jobs j USING (id) GROUP BY 1 ORDER BY 1;
SELECT count(*) AS took FROM jobq_claim('g_grate', max_jobs => 10);
SELECT key, running, tat > now() + interval '1 hour' AS two_tokens_spent
FROM jobq.groups WHERE queue = 'g_grate' ORDER BY key;

-- every live grouped job is in its group's line, in its place, and nothing else is
SELECT (SELECT count(*) FROM jobq.jobs j WHERE j.group_key IS NOT NULL AND NOT EXISTS (
            SELECT 1 FROM jobq.group_jobs gl
            WHERE gl.id = j.id AND gl.queue = j.queue AND gl.key = j.group_key AND gl.seq = j.group_seq)) AS missing,
       (SELECT count(*) FROM jobq.group_jobs gl
        WHERE NOT EXISTS (SELECT 1 FROM jobq.jobs j WHERE j.id = gl.id)) AS stale,
       (SELECT count(*) FROM jobq.group_jobs) > 0 AS some;

-- back-pressure: a fail with rate_limit_for gives the attempt back, puts
-- the job back after it, and holds the queue's or the group's rate
SELECT jobq_create_queue('g_429', rate => 10, rate_per => '1 second', rate_burst => 5);
SELECT count(*) FROM jobq_enqueue_batch('g_429', array_fill('{}'::jsonb, ARRAY[5]));
CREATE TABLE regress_429 AS SELECT id, token FROM jobq_claim('g_429');
SELECT jobq_fail(id, token, '429 Too Many Requests', rate_limit_for => '1 hour') FROM regress_429;
SELECT attempt, state, run_at > now() + interval '59 minutes' AS later,
       errors->-1->>'outcome' AS outcome, errors->-1->>'error' AS error
FROM jobq.jobs WHERE id = (SELECT id FROM regress_429);
SELECT tat > now() + interval '1 hour' AS rate_held FROM jobq.queue_rates WHERE queue = 'g_429';
SELECT count(*) AS took FROM jobq_claim('g_429', max_jobs => 10);
SELECT jobq_fail(id, token, 'again', rate_limit_for => '1 hour') AS stale FROM regress_429;
SELECT jobq_fail(id, token, 'x', rate_limit_for => '1 hour', permanent => true) FROM regress_429;
SELECT jobq_fail(id, token, 'x', rate_limit_for => '1 hour', retry_in => '1 second') FROM regress_429;
SELECT jobq_fail(id, token, 'x', rate_limit_for => '0') FROM regress_429;
DROP TABLE regress_429;
SELECT jobq_create_queue('g_429g', group_mode => 'fifo', group_rate => 5, group_rate_per => '1 second',
                         group_rate_burst => 2);
SELECT count(*) FROM jobq_enqueue_batch('g_429g', array_fill('{}'::jsonb, ARRAY[4]),
                                        group_keys => ARRAY['a', 'a', 'b', 'b']);
SELECT jobq_fail(id, token, '429', rate_limit_for => '10 minutes') FROM jobq_claim('g_429g');
SELECT key, running, tat > now() + interval '9 minutes' AS rate_held, eligible
FROM jobq.groups WHERE queue = 'g_429g' ORDER BY key;
SELECT j.group_key FROM jobq_claim('g_429g', max_jobs => 10) c JOIN jobq.jobs j USING (id);

-- for operators: a page of groups, the blocked ones, skipping a head
SELECT jobq_create_queue('g_ops', group_mode => 'fifo');
SELECT count(*) FROM jobq_enqueue_batch('g_ops',
    ARRAY['{"n": "o1"}', '{"n": "o2"}', '{"n": "p1"}']::jsonb[], group_keys => ARRAY['o', 'o', 'p']);
SELECT jobq_fail(id, token, 'fatal', permanent => true) FROM jobq_claim('g_ops');
SELECT key, running, live, live_capped, blocked_by IS NOT NULL AS blocked, eligible,
       (SELECT payload->>'n' FROM jobq.jobs WHERE id = head_id) AS head
FROM jobq_groups('g_ops');
SELECT key, error, since <= now() AS since_ok FROM jobq_blocked_groups('g_ops');
SELECT key FROM jobq_groups('g_ops', max_rows => 1);
SELECT key FROM jobq_groups('g_ops', max_rows => 1, after_key => 'o');
SELECT key FROM jobq_groups('g_ops', only_blocked => true);
SELECT jobq_skip_head('g_ops', 'o') IS NOT NULL AS skipped_dead;
SELECT count(*) AS blocked FROM jobq_blocked_groups('g_ops');
SELECT jobq_skip_head('g_ops', 'o') IS NOT NULL AS skipped_ready;
SELECT jobq_skip_head('g_ops', 'o') AS nothing_left;
-- o has nothing left: its row is gone (idle groups, jobq_group_ops)
SELECT key, live, head_id IS NOT NULL AS has_head FROM jobq_groups('g_ops');
SELECT * FROM jobq_groups('g_plain');
SELECT * FROM jobq_groups('g_ops', max_rows => 0);
SELECT jobq_skip_head('g_ops', '');
SELECT * FROM jobq_blocked_groups('nope');

-- drift (rows written by hand) is found and fixed, each fix a row
SELECT jobq_create_queue('g_drift', group_mode => 'fifo');
SELECT count(*) FROM jobq_enqueue_batch('g_drift', ARRAY['{"n": "r1"}', '{"n": "r2"}']::jsonb[],
                                        group_keys => ARRAY['r', 'r']);
UPDATE jobq.groups SET running = 3, eligible = false WHERE queue = 'g_drift';
DELETE FROM jobq.group_jobs
WHERE queue = 'g_drift' AND seq = (SELECT max(seq) FROM jobq.group_jobs WHERE queue = 'g_drift');
SELECT queue, key, field,
       CASE WHEN field = 'line' THEN CASE WHEN stored IS NULL THEN 'added' ELSE 'removed' END
            ELSE stored END AS stored,
       CASE WHEN field = 'line' THEN NULL ELSE actual END AS actual
FROM jobq_groups_reconcile('g_drift');
SELECT count(*) AS still_drifted FROM jobq_groups_reconcile('g_drift');
SELECT * FROM regress_claim('g_drift');
SELECT * FROM jobq_groups_reconcile('g_drift', max_groups => 0);

-- the group mode changes only while the queue has no live jobs
SELECT jobq_alter_queue('g_rr', group_mode => 'limit');
SELECT jobq_alter_queue('g_rr', group_limit => 3);
SELECT jobq_cancel(id) FROM jobq.jobs WHERE queue = 'g_rr' AND state = 'ready';
SELECT jobq_complete(id, token) FROM jobq.jobs WHERE queue = 'g_rr' AND state = 'running';
SELECT jobq_alter_queue('g_rr', group_mode => 'none');
SELECT count(*) AS rr_groups FROM jobq.groups WHERE queue = 'g_rr';
SELECT jobq_enqueue('g_rr', '{}') IS NOT NULL AS ungrouped_now;

SELECT jobq_drop_queue(q, force => true) FROM unnest(ARRAY['g_fifo', 'g_limit', 'g_plain', 'g_rr', 'g_max', 'g_rate', 'g_grate', 'g_ops', 'g_drift', 'g_429', 'g_429g']) q;
SELECT (SELECT count(*) FROM jobq.groups) AS groups_left,
       (SELECT count(*) FROM jobq.group_jobs) AS lines_left,
       (SELECT count(*) FROM jobq.queue_rates) AS rates_left;
DROP FUNCTION regress_group(text, text);
DROP FUNCTION regress_claim(text, integer);
DROP FUNCTION regress_done(text);
DROP TABLE regress_claimed;

-- the plans a claim from groups runs: with 10,000 jobs in 1,000 groups and
-- 500 of them busy, the generic plans walk only groups_eligible_idx (or
-- groups_round_robin_idx), the lines' primary key and jobq.jobs' primary
-- key: no scan of the queue
SELECT jobq_create_queue('g_plan', group_mode => 'fifo');
SELECT count(*) FROM jobq_enqueue_batch('g_plan', array_fill('{}'::jsonb, ARRAY[10000]),
    group_keys => ARRAY(SELECT 'k' || (g % 1000) FROM generate_series(1, 10000) g));
SELECT count(*) FROM jobq_claim('g_plan', max_jobs => 500);
ANALYZE jobq.jobs;
ANALYZE jobq.groups;
ANALYZE jobq.group_jobs;
SET plan_cache_mode = force_generic_plan;
DO $$ BEGIN
    EXECUTE 'PREPARE regress_pick(text, timestamptz, int8, interval) AS ' || jobq._statement('group_pick_oldest');
    EXECUTE 'PREPARE regress_pick_rr(text, timestamptz, int8, interval) AS ' || jobq._statement('group_pick_round_robin');
    EXECUTE 'PREPARE regress_heads(text, timestamptz, int8, interval, text, uuid[], text[], int4[], int4, interval) AS '
            || jobq._statement('group_claim_heads');
    EXECUTE 'PREPARE regress_due(text, timestamptz, int8, interval, text, uuid[], text[], int4[], int4, interval) AS '
            || jobq._statement('group_claim_due');
    EXECUTE 'PREPARE regress_refresh(text, text[], int4[], int4, timestamptz) AS ' || jobq._statement('group_refresh');
END $$;
SELECT s.name, p LIKE '%' || s.index || '%' AS uses_index, p NOT LIKE '%Seq Scan%' AS no_seq_scan,
       p NOT LIKE '%jobs_claim_idx%' AS not_the_claim_index
FROM (VALUES
    ('pick', 'groups_eligible_idx', 'EXECUTE regress_pick(''g_plan'', now(), 10, NULL)'),
    ('pick_rr', 'groups_round_robin_idx', 'EXECUTE regress_pick_rr(''g_plan'', now(), 10, NULL)'),
    ('heads', 'group_jobs_pkey', 'EXECUTE regress_heads(''g_plan'', now(), 10, ''1 min'', ''w'', ''{}'', ''{k1}'', ''{1}'', 1, NULL)'),
    ('due', 'group_jobs_pkey', 'EXECUTE regress_due(''g_plan'', now(), 10, ''1 min'', ''w'', ''{}'', ''{k1}'', ''{1}'', 1, NULL)'),
    ('refresh', 'group_jobs_pkey', 'EXECUTE regress_refresh(''g_plan'', ''{k1}'', ''{0}'', 1, NULL)')) AS s(name, index, stmt),
LATERAL regress_plan(s.stmt) p;
DEALLOCATE regress_pick;
DEALLOCATE regress_pick_rr;
DEALLOCATE regress_heads;
DEALLOCATE regress_due;
DEALLOCATE regress_refresh;
RESET plan_cache_mode;
SELECT jobq_drop_queue('g_plan', force => true);
ANALYZE jobq.jobs;
ANALYZE jobq.groups;
ANALYZE jobq.group_jobs;
