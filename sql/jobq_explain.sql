-- jobq_explain (O2): the plans of the hot statements use the partial
-- indexes. The statements run inside C (claim.c, pop.c, sweep.c, ack.c);
-- jobq._statement(name) returns their text from the C's tables, prepared
-- here with the parameter types the C gives them. With 10000 ready jobs and
-- 2000 running ones (enough that a plan through the partial lease index
-- would look attractive for a filter on state), analyzed, both custom plans (parameter values known)
-- and generic plans must use: claim -> jobs_claim_idx, with the row locks
-- taken under the LIMIT and no Sort of the ready set below them; sweep ->
-- jobs_lease_idx; history purge -> history_queue_state_idx; complete,
-- complete_batch and extend -> jobs_pkey, and complete's question whether
-- the job's queue keeps history -> queues_pkey, once per job.
-- Plans are checked as booleans so that the test does not depend on costs.
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
-- 500 more queues that keep history: whether a completed job's queue
-- keeps history must be a probe of queues_pkey (a small table may be
-- scanned: it is one page)
SELECT count(jobq_create_queue('exp-many-' || g, completed_retention => '1 day'))
FROM generate_series(1, 500) g;
ANALYZE jobq.jobs;
ANALYZE jobq.queues;
ANALYZE jobq.history;


-- The statements, as the C prepares them (jobq._statement), with the
-- parameter types their tables in extension/*.c give them:
--   claim.c: $1 queues (claim_one: queue), $2 now, $3 max_jobs, $4 lease,
--     $5 worker, $6 tokens
--   pop.c: $1 queue, $2 now, $3 max_jobs (without and with history)
--   sweep.c, expired leases and history purge: $1 now, $2 queue, $3 max_rows
--   ack.c, jobq_complete: $1 id, $2 token, $3 finished_at, $4 result; the
--     plain delete: $1 id, $2 token, $3 whether no queue keeps history
--   ack.c, jobq_complete_batch: the same with arrays of ids, tokens, results
--   ack.c, jobq_extend: $1 id, $2 token, $3 now, $4 lease
-- Each prepared statement ends with the C's text, word for word.
CREATE FUNCTION regress_prepare(name text, stmt text, types text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('PREPARE %I(%s) AS %s', name, types, jobq._statement(stmt));
    RETURN (SELECT right(p.statement, length(jobq._statement(stmt))) = jobq._statement(stmt)
            FROM pg_prepared_statements p WHERE p.name = regress_prepare.name);
END
$$;
SELECT name, stmt, regress_prepare(name, stmt, types) AS prepared_as_in_c
FROM (VALUES
    (1, 'regress_claim', 'claim_any', 'text[], timestamptz, int8, interval, text, uuid[]'),
    (2, 'regress_claim_one', 'claim_one', 'text, timestamptz, int8, interval, text, uuid[]'),
    (3, 'regress_pop', 'pop', 'text, timestamptz, int8'),
    (4, 'regress_pop_history', 'pop_history', 'text, timestamptz, int8'),
    (5, 'regress_expire', 'expire', 'timestamptz, text, int8'),
    (6, 'regress_purge', 'purge_history', 'timestamptz, text, int8'),
    (7, 'regress_complete_plain', 'complete_plain', 'int8, uuid, bool'),
    (8, 'regress_complete', 'complete', 'int8, uuid, timestamptz, jsonb'),
    (9, 'regress_complete_batch_plain', 'complete_batch_plain', 'int8[], uuid[], bool'),
    (10, 'regress_complete_batch', 'complete_batch', 'int8[], uuid[], timestamptz, jsonb[]'),
    (11, 'regress_extend', 'extend', 'int8, uuid, timestamptz, interval')
) AS s(n, name, stmt, types)
ORDER BY n;
-- an unknown statement is an error
\set VERBOSITY sqlstate
SELECT jobq._statement('no_such_statement');
\set VERBOSITY terse

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
        $q$EXECUTE regress_complete(5, gen_random_uuid(), clock_timestamp(), NULL)$q$,
        $q$EXECUTE regress_complete_plain(5, gen_random_uuid(), false)$q$,
        $q$EXECUTE regress_complete_batch(ARRAY[5, 6, 7]::int8[], ARRAY[gen_random_uuid(), gen_random_uuid(), gen_random_uuid()], clock_timestamp(), NULL)$q$,
        $q$EXECUTE regress_complete_batch_plain(ARRAY[5, 6, 7]::int8[], ARRAY[gen_random_uuid(), gen_random_uuid(), gen_random_uuid()], false)$q$]
    LOOP
        statement := p;
        p := regress_plan(p);
        check_name := 'deletes by jobs_pkey';
        ok := p ~ 'Index Scan using jobs_pkey on jobs';
        RETURN NEXT;
        check_name := 'no seq scan of jobs';
        ok := p !~ 'Seq Scan on jobs';
        RETURN NEXT;
        -- whether a job's queue keeps history is one probe of the queue's
        -- key per job, not a list of all such queues (issue 13, item 7)
        check_name := 'history: probes queues_pkey';
        ok := p ~ 'Index Scan using queues_pkey on queues q' AND p !~ 'Seq Scan on queues'
              AND p !~ 'ANY|ALL';
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

-- jobq_counts (counts.c): history counted through history_queue_state_idx,
-- never a scan; the split of ready and delayed along jobs_claim_idx
SELECT regress_prepare('regress_counts_history', 'counts_history', 'text') AS prepared_as_in_c,
       regress_prepare('regress_counts_split', 'counts_split', 'text, timestamptz') AS split_as_in_c;
BEGIN;
SET LOCAL plan_cache_mode = force_generic_plan;
SELECT p ~ 'Index Only Scan using history_queue_state_idx on history' AND p !~ 'Seq Scan on history'
       AS counts_history_by_index
FROM regress_plan($q$EXECUTE regress_counts_history('exp-h')$q$) p;
SELECT p ~ 'jobs_claim_idx' AND p !~ 'Seq Scan on jobs' AS counts_split_by_index
FROM regress_plan($q$EXECUTE regress_counts_split('exp', clock_timestamp())$q$) p;
COMMIT;
DEALLOCATE regress_counts_history;
DEALLOCATE regress_counts_split;

-- flows (issue 18): with 0.2.0's SQL a complete takes jobs outside flows
-- with the statements above plus "flow_id IS NULL" (the _nf variants):
-- the same probe of jobs_pkey.  The flow statements find edges by
-- deps_parent_idx or deps_pkey, both columns bound, and jobs by jobs_pkey.
SELECT name, regress_prepare(name, stmt, types) AS prepared_as_in_c
FROM (VALUES
    (1, 'regress_complete_nf', 'complete_nf', 'int8, uuid, timestamptz, jsonb'),
    (2, 'regress_complete_plain_nf', 'complete_plain_nf', 'int8, uuid, bool'),
    (3, 'regress_complete_batch_nf', 'complete_batch_nf', 'int8[], uuid[], timestamptz, jsonb[]'),
    (4, 'regress_complete_batch_plain_nf', 'complete_batch_plain_nf', 'int8[], uuid[], bool'),
    (6, 'regress_flow_satisfy', 'flow_satisfy', 'int8[], jsonb[], text'),
    (7, 'regress_flow_cascade', 'flow_cascade', 'int8[], text[], timestamptz'),
    (8, 'regress_flow_dep_results', 'flow_dep_results', 'int8, uuid')
) AS s(n, name, stmt, types)
ORDER BY n;
BEGIN;
SET LOCAL plan_cache_mode = force_generic_plan;
SELECT s.n, p ~ 'Index Scan using jobs_pkey on jobs' AND p !~ 'Seq Scan on jobs' AS jobs_by_pkey,
       p ~ 'flow_id IS NULL' AS outside_flows_only,
       s.n < 3 OR p ~ 'Index Cond: \(id = i\.id\)' AND p !~ 'Join Filter' AS one_probe_per_pair
FROM (VALUES
    (1, $q$EXECUTE regress_complete_nf(5, gen_random_uuid(), clock_timestamp(), NULL)$q$),
    (2, $q$EXECUTE regress_complete_plain_nf(5, gen_random_uuid(), false)$q$),
    (3, $q$EXECUTE regress_complete_batch_nf(ARRAY[5, 6]::int8[], ARRAY[gen_random_uuid(), gen_random_uuid()], clock_timestamp(), NULL)$q$),
    (4, $q$EXECUTE regress_complete_batch_plain_nf(ARRAY[5, 6]::int8[], ARRAY[gen_random_uuid(), gen_random_uuid()], false)$q$)
) AS s(n, stmt), regress_plan(s.stmt) p
ORDER BY s.n;
SELECT s.n, p !~ 'Seq Scan' AS no_seq_scan, p !~ 'Join Filter' AS no_join_filter,
       p !~ 'Index Scan using \w+ on deps \w+\n\s+Index Cond: \(\w+ = [^)]*\)\n\s+Filter: [^\n]*(child|parent) ='
           AS edges_probed_by_both_columns
FROM (VALUES
    (6, $q$EXECUTE regress_flow_satisfy(ARRAY[5]::int8[], ARRAY['{}'::jsonb], NULL)$q$),
    (7, $q$EXECUTE regress_flow_cascade(ARRAY[5]::int8[], ARRAY['dead'], clock_timestamp())$q$),
    (8, $q$EXECUTE regress_flow_dep_results(5, gen_random_uuid())$q$)
) AS s(n, stmt), regress_plan(s.stmt) p
ORDER BY s.n;
COMMIT;
DEALLOCATE regress_complete_nf;
DEALLOCATE regress_complete_plain_nf;
DEALLOCATE regress_complete_batch_nf;
DEALLOCATE regress_complete_batch_plain_nf;
DEALLOCATE regress_flow_satisfy;
DEALLOCATE regress_flow_cascade;
DEALLOCATE regress_flow_dep_results;

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
DEALLOCATE regress_extend;
DROP FUNCTION regress_check_plans(text);
DROP FUNCTION regress_prepare(text, text, text);
SELECT count(jobq_drop_queue('exp-many-' || g)) FROM generate_series(1, 500) g;
SELECT jobq_drop_queue('exp', force => true), jobq_drop_queue('exp-b', force => true),
       jobq_drop_queue('exp-h', force => true);
