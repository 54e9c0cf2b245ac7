-- jobq_direct_complete: a complete of a job that this session claimed deletes
-- the row the claim wrote directly (extension/direct_complete.c); anything the
-- direct path does not handle goes through the DELETE statement. Both must
-- give the same result and the same counts. DEBUG2 says which path each
-- complete took: "completed directly", or "completed through SQL: <why>"
-- (nothing at all for a job this session did not claim with that token).
-- amcheck's bt_index_check(index, heapallindexed => true) then checks every
-- index of the tables the cycle wrote.
\set VERBOSITY terse
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS amcheck;

CREATE FUNCTION regress_dc_indexes_ok() RETURNS TABLE (index_name text, ok boolean)
LANGUAGE plpgsql AS $$
DECLARE
    ix regclass;
BEGIN
    FOR ix IN SELECT i.indexrelid::regclass FROM pg_index i
              JOIN pg_class c ON c.oid = i.indexrelid
              WHERE i.indrelid IN ('jobq.jobs'::regclass, 'jobq.history'::regclass)
                AND c.relam = (SELECT oid FROM pg_am WHERE amname = 'btree')
              ORDER BY 1::text LOOP
        PERFORM bt_index_check(ix, true);
        index_name := ix::text;
        ok := true;
        RETURN NEXT;
    END LOOP;
END
$$;

-- enqueue n jobs into dc, claim one and return it (the claim fills the map)
CREATE FUNCTION regress_dc_claim(OUT id bigint, OUT token uuid)
LANGUAGE sql AS $$
    SELECT c.id, c.token FROM jobq_claim('dc', 'w', 1) c
$$;

-- the messages name job ids: this test's come from 1e12 on, and the
-- sequence goes back where it was at the end (these jobs are gone by then)
SELECT last_value AS regress_dc_seq, is_called AS regress_dc_called FROM jobq.jobs_id_seq \gset
SELECT setval(pg_get_serial_sequence('jobq.jobs', 'id'), 1000000000000) > 0 AS ids_moved;
SELECT jobq_create_queue('dc', completed_retention => '0');
SELECT jobq_create_queue('dch', completed_retention => '1 day');
SELECT count(jobq_enqueue('dc', jsonb_build_object('n', g))) AS enqueued
FROM generate_series(1, 40) g;

-- 1. claimed in one transaction, completed in the next: directly
SELECT * FROM regress_dc_claim() \gset c_
SET client_min_messages = debug2;
SELECT jobq_complete(:c_id, :'c_token') AS completed;
-- again: the row is gone, the map entry too; through SQL, and stale
SELECT jobq_complete(:c_id, :'c_token') AS completed;
SET client_min_messages = warning;
SELECT count(*) AS left_over FROM jobq.jobs WHERE id = :c_id;

-- a wrong token: not the claim's, so the statement, which refuses it
SELECT * FROM regress_dc_claim() \gset c_
SET client_min_messages = debug2;
SELECT jobq_complete(:c_id, gen_random_uuid()) AS completed;
-- a direct complete that rolls back leaves the job running, and the next
-- complete (its map entry gone with the first) goes through SQL
BEGIN;
SELECT jobq_complete(:c_id, :'c_token') AS completed;
ROLLBACK;
SELECT state FROM jobq.jobs WHERE id = :c_id;
SELECT jobq_complete(:c_id, :'c_token') AS completed;
SET client_min_messages = warning;

-- 2. a batch: every pair it claimed directly, a wrong pair and a repeat
-- through the statements, in input order
CREATE TEMP TABLE regress_dc_batch AS SELECT id, token FROM jobq_claim('dc', 'w', 3);
SET client_min_messages = debug2;
SELECT p AS accepted_position FROM jobq_complete_batch_positions(
    (SELECT array_agg(id ORDER BY id) || min(id) || max(id) FROM regress_dc_batch),
    (SELECT array_agg(token ORDER BY id) || gen_random_uuid() || (array_agg(token ORDER BY id DESC))[1]
     FROM regress_dc_batch)) p;
SET client_min_messages = warning;
SELECT count(*) AS left_over FROM jobq.jobs j JOIN regress_dc_batch b USING (id);
-- claim and complete in one statement: the complete sees the claim's rows
SET client_min_messages = debug2;
WITH c AS MATERIALIZED (SELECT id, token FROM jobq_claim('dc', 'w', 2))
SELECT count(*) AS accepted
FROM jobq_complete_batch((SELECT array_agg(id) FROM c), (SELECT array_agg(token) FROM c));
SET client_min_messages = warning;

-- 3. each case the direct path leaves to the statement: the same result
-- a claim that rolled back: its row is not visible where it wrote it
BEGIN;
SELECT * FROM regress_dc_claim() \gset c_
ROLLBACK;
SET client_min_messages = debug2;
SELECT jobq_complete(:c_id, :'c_token') AS completed;
SET client_min_messages = warning;
-- the row updated since the claim (a heartbeat writes a new version)
SELECT * FROM regress_dc_claim() \gset c_
SELECT jobq_extend(:c_id, :'c_token') IS NOT NULL AS extended;
SET client_min_messages = debug2;
SELECT jobq_complete(:c_id, :'c_token') AS completed;
SET client_min_messages = warning;
-- SERIALIZABLE
SELECT * FROM regress_dc_claim() \gset c_
BEGIN ISOLATION LEVEL SERIALIZABLE;
SET LOCAL client_min_messages = debug2;
SELECT jobq_complete(:c_id, :'c_token') AS completed;
COMMIT;
-- a queue that keeps completed history: the history row is written
-- directly too, the row the statement writes (every column compared with
-- the job's running row), into every index: a scheduled job's key goes
-- into the expression index history_schedule_idx
SELECT jobq_enqueue('dch', '{"n": "h"}') > 0 AS enqueued;
SELECT jobq_enqueue('dch', '{"n": "s"}', dedupe_key => 'schedule:nightly:1') > 0 AS enqueued;
CREATE TEMP TABLE regress_dc_claimed AS SELECT id FROM jobq_claim('dch', 'w', 2);
CREATE TEMP TABLE regress_dc_running AS
SELECT j.* FROM jobq.jobs j JOIN regress_dc_claimed USING (id);
SET client_min_messages = debug2;
SELECT jobq_complete(id, token, '{"r": 1}') AS completed FROM regress_dc_running ORDER BY id;
SET client_min_messages = warning;
SELECT h.state, h.result, h.finished_at > r.claimed_at AS finished_after_claim,
       (h.id, h.queue, h.priority, h.run_at, h.attempt, h.max_attempts, h.token, h.worker,
        h.enqueued_at, h.claimed_at, h.dedupe_key, h.errors, h.payload) IS NOT DISTINCT FROM
       (r.id, r.queue, r.priority, r.run_at, r.attempt, r.max_attempts, r.token, r.worker,
        r.enqueued_at, r.claimed_at, r.dedupe_key, r.errors, r.payload) AS the_jobs_columns
FROM jobq.history h JOIN regress_dc_running r USING (id) ORDER BY id;
-- a repeated complete of a kept job: already completed (history says so)
SELECT jobq_complete(id, token) AS completed FROM regress_dc_running ORDER BY id;
SET enable_seqscan = off;
SELECT payload->>'n' AS n FROM jobq.history
WHERE queue = 'dch' AND split_part(dedupe_key, ':', 2) = 'nightly' AND dedupe_key LIKE 'schedule:%';
RESET enable_seqscan;
-- an INSERT trigger on jobq.history: the statement writes the history row
CREATE FUNCTION regress_dc_history_seen() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
    INSERT INTO public.regress_dc_seen VALUES (-NEW.id);
    RETURN NEW;
END
$$;
CREATE TABLE public.regress_dc_seen (job_id bigint);
CREATE TRIGGER regress_dc_history_seen AFTER INSERT ON jobq.history
    FOR EACH ROW EXECUTE FUNCTION regress_dc_history_seen();
SELECT jobq_enqueue('dch', '{"n": "t"}') > 0 AS enqueued;
SELECT id, token FROM jobq_claim('dch', 'w', 1) \gset c_
SET client_min_messages = debug2;
SELECT jobq_complete(:c_id, :'c_token') AS completed;
SET client_min_messages = warning;
SELECT count(*) AS trigger_fired FROM public.regress_dc_seen WHERE job_id = -:c_id;
DROP TRIGGER regress_dc_history_seen ON jobq.history;
DROP FUNCTION regress_dc_history_seen();
-- a batch across both queues: each job directly, history only where kept
SELECT jobq_enqueue('dch', '{"n": "b"}') > 0 AS enqueued;
CREATE TEMP TABLE regress_dc_mixed AS
SELECT * FROM jobq_claim('dc', 'w', 2) UNION ALL SELECT * FROM jobq_claim('dch', 'w', 1);
SET client_min_messages = debug2;
SELECT count(*) AS accepted FROM jobq_complete_batch(
    (SELECT array_agg(id ORDER BY id) FROM regress_dc_mixed),
    (SELECT array_agg(token ORDER BY id) FROM regress_dc_mixed),
    (SELECT array_agg(jsonb_build_object('id', id) ORDER BY id) FROM regress_dc_mixed));
SET client_min_messages = warning;
SELECT m.queue, h.result = jsonb_build_object('id', m.id) AS result_kept
FROM regress_dc_mixed m LEFT JOIN jobq.history h USING (id) ORDER BY m.id;
-- a queue with groups, a concurrency limit or a rate, or one that notifies
-- finished jobs: a finished job is more than a deleted row there (a job
-- with a group_key goes to the statement at once, without a message)
SELECT count(*) AS created FROM (
    SELECT jobq_create_queue('dc-' || s, completed_retention => '0',
                             group_mode => CASE s WHEN 'fifo' THEN 'fifo' END,
                             max_running => CASE s WHEN 'limit' THEN 5 END,
                             rate => CASE s WHEN 'rate' THEN 1000 END,
                             group_rate => CASE s WHEN 'grouprate' THEN 1000 END,
                             notify_finished => CASE s WHEN 'notify' THEN true END)
    FROM unnest(ARRAY['fifo', 'limit', 'rate', 'grouprate', 'notify']) s) x;
SELECT count(jobq_enqueue('dc-' || s, '{}', group_key => CASE s WHEN 'fifo' THEN 'g1' END)) AS enqueued
FROM unnest(ARRAY['fifo', 'limit', 'rate', 'grouprate', 'notify']) s;
CREATE TEMP TABLE regress_dc_other AS
SELECT s, c.id, c.token FROM unnest(ARRAY['fifo', 'limit', 'rate', 'grouprate', 'notify']) s,
     LATERAL jobq_claim('dc-' || s, 'w', 1) c;
SET client_min_messages = debug2;
SELECT s, jobq_complete(id, token) AS completed FROM regress_dc_other ORDER BY id;
SET client_min_messages = warning;
SELECT count(jobq_drop_queue('dc-' || s, force => true)) AS dropped
FROM unnest(ARRAY['fifo', 'limit', 'rate', 'grouprate', 'notify']) s;
-- jobq.direct_writes off: every complete runs its statement, silently
SELECT * FROM regress_dc_claim() \gset c_
SET jobq.direct_writes = off;
SET client_min_messages = debug2;
SELECT jobq_complete(:c_id, :'c_token') AS completed;
SET client_min_messages = warning;
RESET jobq.direct_writes;
-- a DELETE trigger on jobq.jobs (an application's foreign key to job ids
-- is one): the statement fires it
CREATE FUNCTION regress_dc_seen() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
    INSERT INTO public.regress_dc_seen VALUES (OLD.id);
    RETURN OLD;
END
$$;
CREATE TRIGGER regress_dc_seen AFTER DELETE ON jobq.jobs
    FOR EACH ROW EXECUTE FUNCTION regress_dc_seen();
SELECT * FROM regress_dc_claim() \gset c_
SET client_min_messages = debug2;
SELECT jobq_complete(:c_id, :'c_token') AS completed;
SET client_min_messages = warning;
SELECT count(*) AS trigger_fired FROM public.regress_dc_seen WHERE job_id = :c_id;
DROP TRIGGER regress_dc_seen ON jobq.jobs;
-- a foreign key to job ids: its trigger on jobq.jobs
CREATE TABLE public.regress_dc_ref (job_id bigint REFERENCES jobq.jobs (id) ON DELETE CASCADE);
SELECT * FROM regress_dc_claim() \gset c_
INSERT INTO public.regress_dc_ref VALUES (:c_id);
SET client_min_messages = debug2;
SELECT jobq_complete(:c_id, :'c_token') AS completed;
SET client_min_messages = warning;
SELECT count(*) AS referencing_rows FROM public.regress_dc_ref;
DROP TABLE public.regress_dc_ref;
-- row security on jobq.jobs
ALTER TABLE jobq.jobs ENABLE ROW LEVEL SECURITY;
SELECT * FROM regress_dc_claim() \gset c_
SET client_min_messages = debug2;
SELECT jobq_complete(:c_id, :'c_token') AS completed;
SET client_min_messages = warning;
ALTER TABLE jobq.jobs DISABLE ROW LEVEL SECURITY;
-- a column the direct complete does not know; once dropped, direct again
ALTER TABLE jobq.jobs ADD COLUMN regress_extra integer;
SELECT * FROM regress_dc_claim() \gset c_
SET client_min_messages = debug2;
SELECT jobq_complete(:c_id, :'c_token') AS completed;
SET client_min_messages = warning;
ALTER TABLE jobq.jobs DROP COLUMN regress_extra;
SELECT * FROM regress_dc_claim() \gset c_
SET client_min_messages = debug2;
SELECT jobq_complete(:c_id, :'c_token') AS completed;
SET client_min_messages = warning;
-- a read-only transaction: refused before anything, as the statement does
SELECT * FROM regress_dc_claim() \gset c_
BEGIN READ ONLY;
\set VERBOSITY sqlstate
SELECT jobq_complete(:c_id, :'c_token');
\set VERBOSITY terse
ROLLBACK;
SET client_min_messages = debug2;
SELECT jobq_complete(:c_id, :'c_token') AS completed;
SET client_min_messages = warning;

-- 4. what both paths counted: every completed job, no running one left over
SELECT ready, running, completed FROM jobq_counts('dc');
SELECT ready, running, completed FROM jobq_counts('dch');
SELECT * FROM regress_dc_indexes_ok();

SELECT jobq_drop_queue('dc', force => true) AS dropped;
SELECT jobq_drop_queue('dch', force => true) AS dropped;
DROP TABLE public.regress_dc_seen;
DROP FUNCTION regress_dc_seen();
DROP FUNCTION regress_dc_claim();
DROP FUNCTION regress_dc_indexes_ok();
SELECT count(*) AS left_over FROM (SELECT id FROM jobq.jobs UNION ALL SELECT id FROM jobq.history) x
WHERE id > :regress_dc_seq;
SELECT setval(pg_get_serial_sequence('jobq.jobs', 'id'), :regress_dc_seq, :'regress_dc_called') > 0 AS ids_restored;
