-- jobq_explain (O2): the plans of the hot statements use the partial
-- indexes. The statements run inside C (claim.c, sweep.c, ack.c); their
-- text is copied here verbatim (prepared with the same parameter types), so
-- when the C changes, this copy must change too. With 10000 ready jobs and
-- 2000 running ones (enough that a plan through the partial lease index
-- would look attractive for a filter on state), analyzed, both custom plans (parameter values known)
-- and generic plans must use: claim -> jobs_claim_idx, with the row locks
-- taken under the LIMIT and no Sort of the ready set below them; sweep ->
-- jobs_lease_idx; history purge -> history_queue_state_idx; complete,
-- complete_batch and extend -> jobs_pkey.
-- test/sync-explain-sql.py keeps the copies equal to the C (run-tests
-- checks it). Plans are checked as booleans so
-- that the test does not depend on costs.
\set VERBOSITY terse
SET client_min_messages = warning;

SELECT jobq_create_queue('exp', lease => '1 hour');
SELECT jobq_create_queue('exp-b', lease => '1 hour');
SELECT count(*) FROM jobq_enqueue_batch('exp', array_fill('{"x": 1}'::jsonb, ARRAY[10000]));
SELECT count(*) FROM jobq_enqueue_batch('exp-b', array_fill('{"x": 2}'::jsonb, ARRAY[2000]));
SELECT count(*) FROM jobq_enqueue_batch('exp', array_fill('{"x": 3}'::jsonb, ARRAY[1000]), delay => '1 hour');
SELECT count(*) FROM jobq_claim('exp', max_jobs => 1000);
SELECT count(*) FROM jobq_claim('exp', max_jobs => 1000);
-- 3000 recent rows of history, none old enough to purge: the plan that
-- scanned all of them on every sweep looked cheap here.
SELECT jobq_create_queue('exp-h', completed_retention => '1 day');
SELECT count(*) FROM jobq_enqueue_batch('exp-h', array_fill('{"x": 4}'::jsonb, ARRAY[3000]));
WITH c AS (SELECT id, token FROM jobq_claim('exp-h', max_jobs => 1000))
SELECT count(*) FROM jobq_complete_batch(ARRAY(SELECT id FROM c), ARRAY(SELECT token FROM c));
WITH c AS (SELECT id, token FROM jobq_claim('exp-h', max_jobs => 1000))
SELECT count(*) FROM jobq_complete_batch(ARRAY(SELECT id FROM c), ARRAY(SELECT token FROM c));
WITH c AS (SELECT id, token FROM jobq_claim('exp-h', max_jobs => 1000))
SELECT count(*) FROM jobq_complete_batch(ARRAY(SELECT id FROM c), ARRAY(SELECT token FROM c));
ANALYZE jobq.jobs;
ANALYZE jobq.queues;
ANALYZE jobq.history;

-- The EXPLAIN (COSTS OFF) text of a statement, one string.
CREATE FUNCTION regress_plan(stmt text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    line text;
    plan text := '';
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || stmt LOOP
        plan := plan || line || E'\n';
    END LOOP;
    RETURN plan;
END
$$;

-- claim.c, run_claim_any: $1 queues, $2 now, $3 max_jobs, $4 lease, $5 worker, $6 tokens
PREPARE regress_claim(text[], timestamptz, int8, interval, text, uuid[]) AS
WITH q AS MATERIALIZED ( SELECT name, lease FROM jobq.queues WHERE name = ANY ($1) AND NOT paused),
c AS ( SELECT j.id, j.priority, j.run_at FROM q CROSS JOIN LATERAL ( SELECT j.id, j.priority,
j.run_at FROM jobq.jobs j WHERE j.queue = q.name AND j.state = 'ready' AND j.run_at <= $2 ORDER BY
j.priority, j.run_at, j.id LIMIT $3 FOR NO KEY UPDATE SKIP LOCKED) j ORDER BY j.priority, j.run_at,
j.id LIMIT $3) UPDATE jobq.jobs j SET state = 'running', attempt = j.attempt + 1, token =
$6[o.n::pg_catalog.int4], locked_until = $2 + COALESCE($4, (SELECT q.lease FROM q WHERE q.name =
j.queue)), claimed_at = $2, worker = $5 FROM unnest(ARRAY(SELECT c.id FROM c ORDER BY c.priority,
c.run_at, c.id)) WITH ORDINALITY AS o(id, n) WHERE j.id = o.id RETURNING j.id, j.queue, j.payload,
j.attempt, j.max_attempts, j.token, j.locked_until, j.enqueued_at, o.n;
-- claim.c, run_claim_one: $1 queue, $2 now, $3 max_jobs, $4 lease, $5 worker, $6 tokens
PREPARE regress_claim_one(text, timestamptz, int8, interval, text, uuid[]) AS
UPDATE jobq.jobs j SET state = 'running', attempt = j.attempt + 1, token = $6[o.n::pg_catalog.int4],
locked_until = $2 + $4, claimed_at = $2, worker = $5 FROM unnest(ARRAY( SELECT c.id FROM jobq.jobs c
WHERE c.queue = $1 AND c.state = 'ready' AND c.run_at <= $2 ORDER BY c.priority, c.run_at, c.id
LIMIT $3 FOR NO KEY UPDATE SKIP LOCKED)) WITH ORDINALITY AS o(id, n) WHERE j.id = o.id RETURNING
j.id, j.queue, j.payload, j.attempt, j.max_attempts, j.token, j.locked_until, j.enqueued_at, o.n;

-- pop.c, jobq_pop: $1 queue, $2 now, $3 max_jobs (without and with history)
PREPARE regress_pop(text, timestamptz, int8) AS
WITH d AS ( DELETE FROM jobq.jobs j WHERE j.id = ANY (ARRAY( SELECT c.id FROM jobq.jobs c WHERE
c.queue = $1 AND c.state = 'ready' AND c.run_at <= $2 ORDER BY c.priority, c.run_at, c.id LIMIT $3
FOR UPDATE SKIP LOCKED)) RETURNING j.*) SELECT id, queue, payload, attempt + 1, enqueued_at FROM d
ORDER BY priority, run_at, id;
PREPARE regress_pop_history(text, timestamptz, int8) AS
WITH d AS ( DELETE FROM jobq.jobs j WHERE j.id = ANY (ARRAY( SELECT c.id FROM jobq.jobs c WHERE
c.queue = $1 AND c.state = 'ready' AND c.run_at <= $2 ORDER BY c.priority, c.run_at, c.id LIMIT $3
FOR UPDATE SKIP LOCKED)) RETURNING j.*), h AS ( INSERT INTO jobq.history (id, queue, state,
priority, run_at, attempt, max_attempts, token, worker, enqueued_at, claimed_at, finished_at,
dedupe_key, errors, result, payload) SELECT d.id, d.queue, 'completed', d.priority, d.run_at,
d.attempt + 1, d.max_attempts, NULL, NULL, d.enqueued_at, $2, $2, d.dedupe_key, d.errors, NULL,
d.payload FROM d) SELECT id, queue, payload, attempt + 1, enqueued_at FROM d ORDER BY priority,
run_at, id;

-- sweep.c, jobq_sweep_run (expired leases): $1 now, $2 queue, $3 max_rows
PREPARE regress_expire(timestamptz, text, int8) AS
WITH x AS ( SELECT j.id FROM jobq.jobs j WHERE j.state = 'running' AND j.locked_until < $1 AND
($2::text IS NULL OR j.queue = $2) ORDER BY j.locked_until LIMIT $3 FOR NO KEY UPDATE SKIP LOCKED),
r AS ( UPDATE jobq.jobs j SET state = 'ready', token = NULL, locked_until = NULL, run_at = $1 +
pg_catalog.make_interval(secs => LEAST(EXTRACT(EPOCH FROM q.backoff_cap)::float8, EXTRACT(EPOCH FROM
q.backoff_base)::float8 * pg_catalog.power(2::float8, LEAST(GREATEST(j.attempt - 1, 0), 60))) * (0.5
+ pg_catalog.random() * 0.5)), errors = (SELECT CASE WHEN pg_catalog.jsonb_array_length(e) > 10 THEN
e OPERATOR(pg_catalog.-) 0 ELSE e END FROM (SELECT COALESCE(j.errors, '[]'::jsonb)
OPERATOR(pg_catalog.||) pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object('attempt',
j.attempt, 'at', $1 , 'error', 'lease expired', 'truncated', false))) AS x(e)) FROM jobq.queues q
WHERE j.id = ANY (ARRAY(SELECT x.id FROM x)) AND q.name = j.queue AND j.attempt < j.max_attempts
RETURNING j.id, j.queue), d AS ( DELETE FROM jobq.jobs j WHERE j.id = ANY (ARRAY(SELECT x.id FROM
x)) AND j.attempt >= j.max_attempts RETURNING j.*), h AS ( INSERT INTO jobq.history (id, queue,
state, priority, run_at, attempt, max_attempts, token, worker, enqueued_at, claimed_at, finished_at,
dedupe_key, errors, result, payload) SELECT d.id, d.queue, 'dead', d.priority, d.run_at, d.attempt,
d.max_attempts, NULL, d.worker, d.enqueued_at, d.claimed_at, $1, d.dedupe_key, (SELECT CASE WHEN
pg_catalog.jsonb_array_length(e) > 10 THEN e OPERATOR(pg_catalog.-) 0 ELSE e END FROM (SELECT
COALESCE(d.errors, '[]'::jsonb) OPERATOR(pg_catalog.||)
pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object('attempt', d.attempt, 'at', $1 , 'error',
'lease expired', 'truncated', false))) AS x(e)), NULL, d.payload FROM d) SELECT (SELECT count(*)
FROM r), (SELECT count(*) FROM d), g.queues, g.counts FROM (SELECT pg_catalog.array_agg(r.queue
ORDER BY r.queue) AS queues, pg_catalog.array_agg(r.n ORDER BY r.queue) AS counts FROM (SELECT
r.queue, count(*) AS n FROM r GROUP BY r.queue) r) g;
-- sweep.c, jobq_sweep_run (history purge): $1 now, $2 queue, $3 max_rows
PREPARE regress_purge(timestamptz, text, int8) AS
WITH p AS ( SELECT h.id FROM jobq.queues q CROSS JOIN LATERAL ( SELECT h.id FROM jobq.history h
WHERE h.queue = q.name AND h.state = 'completed' AND h.finished_at < $1 - q.completed_retention
ORDER BY h.finished_at LIMIT $3 FOR UPDATE SKIP LOCKED) h WHERE $2::text IS NULL OR q.name = $2
UNION ALL SELECT h.id FROM jobq.queues q CROSS JOIN LATERAL ( SELECT h.id FROM jobq.history h WHERE
h.queue = q.name AND h.state = 'cancelled' AND h.finished_at < $1 - q.completed_retention ORDER BY
h.finished_at LIMIT $3 FOR UPDATE SKIP LOCKED) h WHERE $2::text IS NULL OR q.name = $2 UNION ALL
SELECT h.id FROM jobq.queues q CROSS JOIN LATERAL ( SELECT h.id FROM jobq.history h WHERE h.queue =
q.name AND h.state = 'dead' AND h.finished_at < $1 - q.dead_retention ORDER BY h.finished_at LIMIT
$3 FOR UPDATE SKIP LOCKED) h WHERE $2::text IS NULL OR q.name = $2 LIMIT $3), del AS (DELETE FROM
jobq.history h WHERE h.id = ANY (ARRAY(SELECT p.id FROM p)) RETURNING 1) SELECT count(*) FROM del;
-- ack.c, jobq_complete: $1 id, $2 token, $3 finished_at, $4 result, $5 queues
-- that keep history; the plain delete: $1 id, $2 token, $3 queues that keep history
PREPARE regress_complete_plain(int8, uuid, text[]) AS
DELETE FROM jobq.jobs WHERE id = $1 AND token = $2 AND queue <> ALL ($3);
PREPARE regress_complete(int8, uuid, timestamptz, jsonb, text[]) AS
WITH d AS ( DELETE FROM jobq.jobs WHERE id = $1 AND token = $2 RETURNING *), h AS (INSERT INTO
jobq.history (id, queue, state, priority, run_at, attempt, max_attempts, token, worker, enqueued_at,
claimed_at, finished_at, dedupe_key, errors, result, payload) SELECT d.id, d.queue, 'completed',
d.priority, d.run_at, d.attempt, d.max_attempts, d.token, d.worker, d.enqueued_at, d.claimed_at, $3,
d.dedupe_key, d.errors, $4, d.payload FROM d WHERE d.queue = ANY ($5)) SELECT count(*),
COALESCE(bool_or(d.queue = ANY ($5)), false) FROM d;
-- ack.c, jobq_complete_batch: $1 ids, $2 tokens, $3 finished_at, $4 results,
-- $5 queues that keep history; the plain delete: $1 ids, $2 tokens, $3 queues
PREPARE regress_complete_batch_plain(int8[], uuid[], text[]) AS
DELETE FROM jobq.jobs j USING unnest($1, $2) AS i(id, token) WHERE j.id = i.id AND j.token = i.token
AND j.queue <> ALL ($3) RETURNING j.id, j.token;
PREPARE regress_complete_batch(int8[], uuid[], timestamptz, jsonb[], text[]) AS
WITH i AS ( SELECT * FROM unnest($1, $2, $4) AS i(id, token, result)), d AS ( DELETE FROM jobq.jobs
j USING i WHERE j.id = i.id AND j.token = i.token RETURNING j.*, i.result AS new_result), h AS
(INSERT INTO jobq.history (id, queue, state, priority, run_at, attempt, max_attempts, token, worker,
enqueued_at, claimed_at, finished_at, dedupe_key, errors, result, payload) SELECT d.id, d.queue,
'completed', d.priority, d.run_at, d.attempt, d.max_attempts, d.token, d.worker, d.enqueued_at,
d.claimed_at, $3, d.dedupe_key, d.errors, d.new_result, d.payload FROM d WHERE d.queue = ANY ($5))
SELECT id, token, queue = ANY ($5) FROM d;
-- ack.c, jobq_extend: $1 id, $2 token, $3 now, $4 lease
PREPARE regress_extend(int8, uuid, timestamptz, interval) AS
UPDATE jobq.jobs j SET locked_until = $3 + COALESCE($4, q.lease) FROM jobq.queues q WHERE j.id = $1
AND j.token = $2 AND q.name = j.queue RETURNING j.locked_until;

CREATE FUNCTION regress_check_plans(mode text) RETURNS TABLE (statement text, check_name text, ok boolean)
LANGUAGE plpgsql AS $$
DECLARE
    p text;
BEGIN
    EXECUTE format('SET LOCAL plan_cache_mode = %I', mode);
    FOREACH p IN ARRAY ARRAY[
        $q$EXECUTE regress_claim(ARRAY['exp'], clock_timestamp(), 1, NULL, NULL, ARRAY[gen_random_uuid()])$q$,
        $q$EXECUTE regress_claim(ARRAY['exp'], clock_timestamp(), 100, '1 minute', 'w', array_fill(gen_random_uuid(), ARRAY[100]))$q$,
        $q$EXECUTE regress_claim(ARRAY['exp', 'exp-b', 'exp-none'], clock_timestamp(), 10, NULL, NULL, array_fill(gen_random_uuid(), ARRAY[10]))$q$,
        $q$EXECUTE regress_claim_one('exp', clock_timestamp(), 1, '5 minutes', NULL, ARRAY[gen_random_uuid()])$q$,
        $q$EXECUTE regress_claim_one('exp', clock_timestamp(), 100, '1 minute', 'w', array_fill(gen_random_uuid(), ARRAY[100]))$q$,
        $q$EXECUTE regress_pop('exp', clock_timestamp(), 100)$q$,
        $q$EXECUTE regress_pop_history('exp', clock_timestamp(), 100)$q$]
    LOOP
        statement := p;
        p := regress_plan(p);
        check_name := 'uses jobs_claim_idx';
        ok := p ~ 'Index Scan using jobs_claim_idx on jobs';
        RETURN NEXT;
        check_name := 'locks under the limit';
        ok := p ~ 'Limit\n\s+->  LockRows\n\s+->  Index Scan using jobs_claim_idx';
        RETURN NEXT;
        check_name := 'no seq scan of jobs';
        ok := p !~ 'Seq Scan on jobs';
        RETURN NEXT;
        check_name := 'updates by jobs_pkey';
        ok := p ~ 'Index Scan using jobs_pkey on jobs j';
        RETURN NEXT;
    END LOOP;
    FOREACH p IN ARRAY ARRAY[
        $q$EXECUTE regress_expire(clock_timestamp(), NULL, 1000)$q$,
        $q$EXECUTE regress_expire(clock_timestamp(), 'exp', 1000)$q$]
    LOOP
        statement := p;
        p := regress_plan(p);
        check_name := 'uses jobs_lease_idx';
        ok := p ~ 'Index Scan using jobs_lease_idx on jobs j';
        RETURN NEXT;
        check_name := 'locks under the limit';
        ok := p ~ 'Limit\n\s+->  LockRows\n\s+->  Index Scan using jobs_lease_idx';
        RETURN NEXT;
        check_name := 'no seq scan of jobs';
        ok := p !~ 'Seq Scan on jobs';
        RETURN NEXT;
    END LOOP;
    FOREACH p IN ARRAY ARRAY[
        $q$EXECUTE regress_purge(clock_timestamp(), NULL, 1000)$q$,
        $q$EXECUTE regress_purge(clock_timestamp(), 'exp-h', 1000)$q$]
    LOOP
        statement := p;
        p := regress_plan(p);
        check_name := 'probes history_queue_state_idx';
        ok := p ~ 'Index Scan using history_queue_state_idx on history';
        RETURN NEXT;
        check_name := 'no seq scan of history';
        ok := p !~ 'Seq Scan on history';
        RETURN NEXT;
    END LOOP;
    FOREACH p IN ARRAY ARRAY[
        $q$EXECUTE regress_complete(5, gen_random_uuid(), clock_timestamp(), NULL, ARRAY['exp-h'])$q$,
        $q$EXECUTE regress_complete_plain(5, gen_random_uuid(), ARRAY['exp-h'])$q$,
        $q$EXECUTE regress_complete_batch(ARRAY[5, 6, 7]::int8[], ARRAY[gen_random_uuid(), gen_random_uuid(), gen_random_uuid()], clock_timestamp(), NULL, ARRAY['exp-h'])$q$,
        $q$EXECUTE regress_complete_batch_plain(ARRAY[5, 6, 7]::int8[], ARRAY[gen_random_uuid(), gen_random_uuid(), gen_random_uuid()], ARRAY['exp-h'])$q$]
    LOOP
        statement := p;
        p := regress_plan(p);
        check_name := 'deletes by jobs_pkey';
        ok := p ~ 'Index Scan using jobs_pkey on jobs';
        RETURN NEXT;
        check_name := 'no seq scan of jobs';
        ok := p !~ 'Seq Scan on jobs';
        RETURN NEXT;
        -- a batch probes the key once per (id, token) pair, never scans
        -- the pairs once per job found (that plan was quadratic)
        IF statement ~ 'batch' THEN
            check_name := 'one probe per pair';
            ok := p ~ 'Index Cond: \(id = i\.id\)' AND p !~ 'Join Filter';
            RETURN NEXT;
        END IF;
    END LOOP;
    statement := $q$EXECUTE regress_extend(5, gen_random_uuid(), clock_timestamp(), NULL)$q$;
    p := regress_plan(statement);
    check_name := 'updates by jobs_pkey';
    ok := p ~ 'Index Scan using jobs_pkey on jobs';
    RETURN NEXT;
    check_name := 'no seq scan of jobs';
    ok := p !~ 'Seq Scan on jobs';
    RETURN NEXT;
END
$$;

BEGIN;
SELECT * FROM regress_check_plans('force_custom_plan');
COMMIT;
BEGIN;
SELECT * FROM regress_check_plans('force_generic_plan');
COMMIT;

-- the plan of a claim from one queue, for the record when a check above fails
BEGIN;
SET LOCAL plan_cache_mode = force_generic_plan;
SELECT claim_plan FROM (SELECT regexp_split_to_table(regress_plan($q$EXECUTE regress_claim_one('exp', clock_timestamp(), 1, '5 minutes', NULL, ARRAY[gen_random_uuid()])$q$), E'\n') AS claim_plan OFFSET 0) p WHERE claim_plan <> '';
COMMIT;

DEALLOCATE regress_claim;
DEALLOCATE regress_claim_one;
DEALLOCATE regress_pop;
DEALLOCATE regress_pop_history;
DEALLOCATE regress_expire;
DEALLOCATE regress_purge;
DEALLOCATE regress_complete;
DEALLOCATE regress_complete_plain;
DEALLOCATE regress_complete_batch;
DEALLOCATE regress_complete_batch_plain;
DROP FUNCTION regress_check_plans(text);
DROP FUNCTION regress_plan(text);
SELECT jobq_drop_queue('exp', force => true), jobq_drop_queue('exp-b', force => true),
       jobq_drop_queue('exp-h', force => true);
