-- jobq_await: the outcome of a job as a value (completed with its result,
-- dead with its last error, cancelled, still ready or running with
-- timed_out, purged_or_never), never as an exception; 'attempt' mode;
-- cancel_on_timeout; jobq_await_many (all, any, order, repeats); bad
-- input with its SQLSTATE; who may await and see results. This suite runs
-- without shared_preload_libraries: awaits poll (the TAP test
-- t/055_await.pl covers the woken path).
\set VERBOSITY terse
SET client_min_messages = warning;

SELECT jobq_create_queue('aw', max_attempts => 2, backoff_base => '0', backoff_cap => '0');
SELECT jobq_create_queue('aw-nohist', completed_retention => '0');
-- the procedure's outcome without its clock (finished_at set or not); from
-- a function the CALL is atomic, as in a transaction block
CREATE FUNCTION regress_await(id bigint, t interval, m text DEFAULT 'finished',
                              c boolean DEFAULT false)
RETURNS TABLE (state text, result jsonb, last_error text, attempt int, finished boolean,
               timed_out boolean)
LANGUAGE plpgsql AS $$
DECLARE s text; r jsonb; e text; a int; f timestamptz; o boolean;
BEGIN
    CALL jobq_await(id, t, m, c, s, r, e, a, f, o);
    RETURN QUERY SELECT s, r, e, a, f IS NOT NULL, o;
END $$;

-- completed, with its result
SELECT jobq_enqueue('aw', '{"n": 1}') AS j1 \gset
SELECT token AS t1 FROM jobq_claim('aw') \gset
-- still running: timed_out, the attempt seen
CALL jobq_await(:j1, '0');
SELECT jobq_complete(:j1, :'t1', '{"answer": 42}');
SELECT * FROM regress_await(:j1, '1 second');
SELECT state, result, last_error, attempt, finished_at IS NOT NULL AS finished, timed_out
FROM jobq_await_many(ARRAY[:j1]::bigint[], '0');

-- ready (never claimed): timed_out
SELECT jobq_enqueue('aw', '{"n": 2}') AS j2 \gset
CALL jobq_await(:j2, '10 ms');
-- a failure retried: 'finished' waits on; from a ready job 'attempt' waits
-- for the next attempt to end (specs/iso_await.spec: one that ends)
SELECT token AS t2 FROM jobq_claim('aw') \gset
SELECT jobq_fail(:j2, :'t2', 'first try failed');
CALL jobq_await(:j2, '0');
CALL jobq_await(:j2, '0', mode => 'attempt');
-- dead, with its last error (not an exception)
SELECT token AS t2 FROM jobq_claim('aw') \gset
SELECT jobq_fail(:j2, :'t2', 'second try failed');
SELECT state, result, last_error, attempt, timed_out FROM jobq_await_many(ARRAY[:j2]::bigint[], '0');

-- cancelled; and cancel_on_timeout cancels a ready job only
SELECT jobq_enqueue('aw', '{"n": 3}') AS j3 \gset
SELECT * FROM regress_await(:j3, '0', c => true);
SELECT state FROM jobq_job(:j3);
SELECT jobq_enqueue('aw', '{"n": 4}') AS j4 \gset
SELECT token AS t4 FROM jobq_claim('aw') \gset
CALL jobq_await(:j4, '0', cancel_on_timeout => true);
SELECT state FROM jobq_job(:j4);

-- a queue that keeps no completed history: purged_or_never, at once
SELECT jobq_enqueue('aw-nohist', '{"n": 5}') AS j5 \gset
SELECT token AS t5 FROM jobq_claim('aw-nohist') \gset
SELECT jobq_complete(:j5, :'t5', '{"gone": true}');
CALL jobq_await(:j5, '1 hour');
-- an enqueue rolled back leaves its id issued: purged_or_never too
BEGIN;
SELECT jobq_enqueue('aw', '{"n": 6}') AS j6 \gset
ROLLBACK;
CALL jobq_await(:j6, '0');

-- jobq_await_many: a row per id in the order given, repeats once; 'any'
-- returns at the first done
SELECT id = :j4 AS is_j4, state, timed_out
FROM jobq_await_many(ARRAY[:j4, :j1, :j4, :j5]::bigint[], '20 ms');
SELECT id = :j4 AS is_j4, state, timed_out
FROM jobq_await_many(ARRAY[:j4, :j1]::bigint[], '1 hour', until => 'any');
-- inside a transaction block the procedure works too (a capped wait)
BEGIN;
SELECT * FROM regress_await(:j1, '1 hour');
COMMIT;

-- bad input: 22004 for NULLs, 22023 for values, 2202E for a 2-D array
CALL jobq_await(NULL, '1 second');
CALL jobq_await(:j1, NULL);
CALL jobq_await(0, '1 second');
CALL jobq_await(-5, '1 second');
-- an id above the last one issued (the message names it: caught here)
DO $$
BEGIN
    PERFORM regress_await(pg_sequence_last_value('jobq.jobs_id_seq') + 1, '1 second');
EXCEPTION WHEN invalid_parameter_value THEN
    RAISE WARNING 'never issued: % %', SQLSTATE, SQLERRM ~ '^job id \d+ was never issued$';
END $$;
CALL jobq_await(:j1, '-1 second');
CALL jobq_await(:j1, '1 hour 1 second');
CALL jobq_await(:j1, '1 second', mode => 'forever');
CALL jobq_await(:j1, '1 second', mode => NULL);
CALL jobq_await(:j1, '1 second', cancel_on_timeout => NULL);
SELECT * FROM jobq_await_many(NULL, '1 second');
SELECT * FROM jobq_await_many('{}', '1 second');
SELECT * FROM jobq_await_many(ARRAY[:j1, NULL]::bigint[], '1 second');
SELECT * FROM jobq_await_many('{{1},{2}}', '1 second');
SELECT * FROM jobq_await_many(ARRAY(SELECT g FROM generate_series(1, 1001) g), '1 second');
SELECT * FROM jobq_await_many(ARRAY[:j1]::bigint[], '1 second', until => 'some');
SELECT * FROM jobq_await_many(ARRAY[:j1]::bigint[], '1 second', until => NULL);

-- who may await: producers and monitors; a producer sees results, a
-- monitor without jobq_reader does not; a worker may not await
CREATE ROLE regress_await_producer IN ROLE jobq_producer;
CREATE ROLE regress_await_monitor IN ROLE jobq_monitor;
CREATE ROLE regress_await_worker IN ROLE jobq_worker;
GRANT EXECUTE ON FUNCTION regress_await TO PUBLIC;
SET ROLE regress_await_producer;
SELECT * FROM regress_await(:j1, '0');
SET ROLE regress_await_monitor;
SELECT * FROM regress_await(:j1, '0');
SELECT state, result, last_error FROM jobq_await_many(ARRAY[:j1, :j2]::bigint[], '0');
SET ROLE regress_await_worker;
CALL jobq_await(:j1, '0');
SELECT * FROM jobq_await_many(ARRAY[:j1]::bigint[], '0');
RESET ROLE;
-- a search_path set by the caller changes nothing the procedure reads
CREATE SCHEMA regress_await_evil;
CREATE FUNCTION regress_await_evil.unnest(bigint[]) RETURNS SETOF bigint
    LANGUAGE sql AS 'SELECT 1::bigint';
SET search_path = regress_await_evil, public, pg_catalog;
SELECT * FROM public.regress_await(:j2, '0');
RESET search_path;
DROP SCHEMA regress_await_evil CASCADE;
DROP FUNCTION regress_await;
DROP ROLE regress_await_producer, regress_await_monitor, regress_await_worker;

-- jobq_finished_since: keyset pages of a queue's finished jobs in
-- (finished_at, id) order, ids and states only
SELECT jobq_create_queue('aw-ev', max_attempts => 1);
SELECT count(*) FROM jobq_enqueue_batch('aw-ev', array_fill('{"e": 1}'::jsonb, ARRAY[2005]));
WITH c AS (SELECT id, token FROM jobq_claim('aw-ev', max_jobs => 1000))
SELECT count(*) FROM jobq_complete_batch(ARRAY(SELECT id FROM c), ARRAY(SELECT token FROM c));
WITH c AS (SELECT id, token FROM jobq_claim('aw-ev', max_jobs => 1000))
SELECT count(*) FROM jobq_complete_batch(ARRAY(SELECT id FROM c), ARRAY(SELECT token FROM c));
SELECT count(jobq_fail(id, token, 'x')) FROM jobq_claim('aw-ev', max_jobs => 2);
SELECT count(jobq_cancel(id)) FROM jobq_list('aw-ev', 'ready', 2);
ANALYZE jobq.history;
-- every finished job once, in order, in pages of 700
CREATE TEMP TABLE ev_pages (page int, id bigint, state text, finished_at timestamptz);
DO $$
DECLARE
    c_at timestamptz := '-infinity';
    c_id bigint := 0;
    n int;
    p int := 0;
BEGIN
    LOOP
        p := p + 1;
        INSERT INTO ev_pages SELECT p, f.* FROM jobq_finished_since('aw-ev', c_at, c_id, 700) f;
        GET DIAGNOSTICS n = ROW_COUNT;
        EXIT WHEN n = 0;
        SELECT finished_at, id INTO c_at, c_id FROM ev_pages WHERE page = p
        ORDER BY finished_at DESC, id DESC LIMIT 1;
    END LOOP;
END $$;
SELECT count(*) AS rows, count(DISTINCT id) AS ids, max(page) AS pages,
       count(*) FILTER (WHERE state = 'completed') AS completed,
       count(*) FILTER (WHERE state = 'dead') AS dead,
       count(*) FILTER (WHERE state = 'cancelled') AS cancelled
FROM ev_pages;
-- in (finished_at, id) order across pages and states
SELECT bool_and(ok) AS ordered FROM (
    SELECT (finished_at, id) > (lag(finished_at) OVER w, lag(id) OVER w) IS NOT FALSE AS ok
    FROM ev_pages WINDOW w AS (ORDER BY page, finished_at, id)) o;
-- a cursor at the last row: nothing after it
SELECT count(*) FROM jobq_finished_since('aw-ev',
    (SELECT max(finished_at) FROM ev_pages),
    (SELECT max(id) FROM ev_pages WHERE finished_at = (SELECT max(finished_at) FROM ev_pages)));
-- the statement reads history_queue_state_idx, custom and generic plans
SELECT jobq._statement('finished_since') AS st \gset
PREPARE ev_stmt(text, timestamptz, bigint, bigint) AS :st;
CREATE FUNCTION ev_plan(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text; p text := '';
BEGIN
    FOR r IN EXECUTE q LOOP p := p || r || E'\n'; END LOOP;
    RETURN p;
END $$;
SELECT ev_plan($q$EXPLAIN EXECUTE ev_stmt('aw-ev', '-infinity', 0, 1000)$q$)
       ~ 'history_queue_state_idx' AS custom_uses_index,
       ev_plan($q$EXPLAIN EXECUTE ev_stmt('aw-ev', '-infinity', 0, 1000)$q$)
       !~ 'Seq Scan on history' AS custom_no_seqscan;
SET plan_cache_mode = force_generic_plan;
SELECT ev_plan($q$EXPLAIN EXECUTE ev_stmt('aw-ev', '-infinity', 0, 1000)$q$)
       ~ 'history_queue_state_idx' AS generic_uses_index,
       ev_plan($q$EXPLAIN EXECUTE ev_stmt('aw-ev', '-infinity', 0, 1000)$q$)
       !~ 'Seq Scan on history' AS generic_no_seqscan;
RESET plan_cache_mode;
DEALLOCATE ev_stmt;
DROP FUNCTION ev_plan;
-- bad input
SELECT * FROM jobq_finished_since(NULL, now());
SELECT * FROM jobq_finished_since('aw-ev', NULL);
SELECT * FROM jobq_finished_since('aw-ev', now(), NULL);
SELECT * FROM jobq_finished_since('aw-ev', now(), -1);
SELECT * FROM jobq_finished_since('aw-ev', now(), 0, 0);
SELECT * FROM jobq_finished_since('aw-ev', now(), 0, 10001);
SELECT * FROM jobq_finished_since('aw-nosuch', now());
SELECT * FROM jobq_finished_since('Bad Name', now());
SELECT jobq_drop_queue('aw-ev', force => true);

-- without preload there are no entries
SELECT * FROM jobq_await_status();

SELECT jobq_drop_queue('aw', force => true);
SELECT jobq_drop_queue('aw-nohist', force => true);
