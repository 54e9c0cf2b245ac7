-- jobq_insert_path: an enqueue without a dedupe key, into a queue whose
-- settings the backend has cached, writes its row directly (heap_insert and
-- index_insert, extension/insert_job.c); anything else, or a jobq.jobs that
-- is not as insert_job.c expects, goes through SPI. Both must give the same
-- row, keep every index complete, and refuse what the executor refuses.
-- amcheck's bt_index_check(index, heapallindexed => true) checks that every
-- row of jobq.jobs that belongs in an index (partial ones included) is in
-- it.
\set VERBOSITY terse
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS amcheck;

CREATE FUNCTION regress_indexes_complete() RETURNS TABLE (index_name text, complete boolean)
LANGUAGE plpgsql AS $$
DECLARE
    ix regclass;
BEGIN
    FOR ix IN SELECT i.indexrelid::regclass FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
              WHERE i.indrelid = 'jobq.jobs'::regclass AND c.relam = (SELECT oid FROM pg_am WHERE amname = 'btree')
              ORDER BY 1::text LOOP
        PERFORM bt_index_check(ix, true);
        index_name := ix::text;
        complete := true;
        RETURN NEXT;
    END LOOP;
END
$$;

CREATE FUNCTION regress_rows() RETURNS TABLE (n text, state text, priority smallint,
    attempt int, max_attempts int, delayed boolean, bookkeeping_null boolean, payload_bytes int)
LANGUAGE sql AS $$
    SELECT payload->>'n', state::text, priority, attempt, max_attempts,
           run_at > enqueued_at + interval '1 minute',
           token IS NULL AND locked_until IS NULL AND worker IS NULL AND claimed_at IS NULL
             AND dedupe_key IS NULL AND errors IS NULL,
           octet_length(payload::text)
    FROM jobq.jobs WHERE queue = 'ip' ORDER BY id
$$;

SELECT jobq_create_queue('ip', max_attempts => 5);

-- 1. the first enqueue reads the queue's settings (SPI), the next ones are
-- direct: each gets the row a plain INSERT gives, TOASTed payload included
-- (DEBUG2 shows which path each takes: "inserted directly" or nothing)
SET client_min_messages = debug2;
SELECT jobq_enqueue('ip', '{"n": "1"}') > 0 AS enqueued;
SELECT jobq_enqueue('ip', '{"n": "2"}', priority => 7, max_attempts => 3) > 0 AS enqueued;
SET client_min_messages = warning;
SELECT jobq_enqueue('ip', '{"n": "3"}', delay => '1 hour') > 0 AS enqueued;
SELECT jobq_enqueue('ip', jsonb_build_object('n', '4', 'big', repeat('x', 300000))) > 0 AS enqueued;
SELECT * FROM regress_rows();
SELECT * FROM regress_indexes_complete();
-- ids come from the identity sequence, one each, in order
SELECT count(DISTINCT id) = 4 AND max(id) - min(id) = 3 AS ids_consecutive
FROM jobq.jobs WHERE queue = 'ip';
-- and claims find them through jobs_claim_idx, in claim order
SELECT payload->>'n' AS n, attempt FROM jobq_claim('ip', max_jobs => 10);

-- 2. several in one statement, and a rolled-back one leaves nothing
SELECT count(*) AS enqueued FROM generate_series(5, 7) g,
       LATERAL jobq_enqueue('ip', jsonb_build_object('n', g::text));
BEGIN;
SELECT jobq_enqueue('ip', '{"n": "rolled back"}') > 0 AS enqueued;
ROLLBACK;
SELECT n FROM regress_rows();
SELECT * FROM regress_indexes_complete();

-- 3. what the executor refuses, the direct path refuses too, before writing
BEGIN READ ONLY;
\set VERBOSITY sqlstate
SELECT jobq_enqueue('ip', '{"n": "read only"}');
\set VERBOSITY terse
ROLLBACK;
-- a duplicate id (the sequence set back by hand): the primary key's check
SELECT setval(pg_get_serial_sequence('jobq.jobs', 'id'), min(id) - 1)
FROM jobq.jobs WHERE queue = 'ip' \gset
SELECT jobq_enqueue('ip', '{"n": "duplicate"}');
SELECT setval(pg_get_serial_sequence('jobq.jobs', 'id'), (SELECT max(id) FROM jobq.jobs)) > 0 AS sequence_restored;
SELECT count(*) AS duplicates FROM jobq.jobs WHERE payload->>'n' = 'duplicate';

-- 4. an index added to jobq.jobs is filled from the next enqueue on, a
-- partial one only with the rows its predicate takes
CREATE INDEX regress_ip_priority ON jobq.jobs (priority) WHERE priority > 5;
SELECT jobq_enqueue('ip', '{"n": "8"}', priority => 9) > 0 AS enqueued;
SELECT jobq_enqueue('ip', '{"n": "9"}') > 0 AS enqueued;
SELECT * FROM regress_indexes_complete();
SET enable_seqscan = off;
SELECT payload->>'n' AS n FROM jobq.jobs WHERE priority > 5 AND queue = 'ip' ORDER BY id;
RESET enable_seqscan;
DROP INDEX jobq.regress_ip_priority;
-- an expression index: SPI inserts (the executor computes the expression)
CREATE INDEX regress_ip_expr ON jobq.jobs ((payload->>'n'));
SET client_min_messages = debug1;
SELECT jobq_enqueue('ip', '{"n": "10"}') > 0 AS enqueued;
SET client_min_messages = warning;
SELECT * FROM regress_indexes_complete();
DROP INDEX jobq.regress_ip_expr;
-- an index of another access method: SPI inserts (GIN keeps state between
-- inserts of one statement that only the executor resets)
CREATE INDEX regress_ip_gin ON jobq.jobs USING gin (payload);
SET client_min_messages = debug1;
SELECT jobq_enqueue('ip', '{"n": "10b"}') > 0 AS enqueued;
SET client_min_messages = warning;
SET enable_seqscan = off;
SELECT payload->>'n' AS n FROM jobq.jobs WHERE payload @> '{"n": "10b"}';
RESET enable_seqscan;
DROP INDEX jobq.regress_ip_gin;

-- 5. a trigger, a CHECK constraint or a column insert_job.c does not know:
-- SPI inserts, so the trigger fires, the constraint is checked and the
-- column gets its default
-- (the trigger runs as jobq_owner with jobq's search_path: it is SECURITY
-- DEFINER of the test's superuser, and names its table)
CREATE TABLE public.regress_ip_seen (job_id bigint);
CREATE FUNCTION regress_ip_seen() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
    INSERT INTO public.regress_ip_seen VALUES (NEW.id);
    RETURN NEW;
END
$$;
CREATE TRIGGER regress_ip_seen AFTER INSERT ON jobq.jobs
    FOR EACH ROW EXECUTE FUNCTION regress_ip_seen();
SET client_min_messages = debug1;
SELECT jobq_enqueue('ip', '{"n": "11"}') AS id \gset
SET client_min_messages = warning;
SELECT count(*) AS trigger_saw_it FROM regress_ip_seen WHERE job_id = :id;
DROP TRIGGER regress_ip_seen ON jobq.jobs;
-- a trigger for other events (here: deletes) leaves the direct path on
CREATE TRIGGER regress_ip_seen AFTER DELETE ON jobq.jobs
    FOR EACH ROW EXECUTE FUNCTION regress_ip_seen();
SET client_min_messages = debug2;
SELECT jobq_enqueue('ip', '{"n": "11b"}') > 0 AS enqueued;
SET client_min_messages = warning;
DROP TRIGGER regress_ip_seen ON jobq.jobs;
DROP FUNCTION regress_ip_seen();
-- a rule: the rewriter applies it to SPI's INSERT (its action runs with
-- the privileges of the table's owner)
GRANT INSERT ON public.regress_ip_seen TO jobq_owner;
-- (0, not NEW.id: a rule would evaluate the id's default again)
CREATE RULE regress_ip_rule AS ON INSERT TO jobq.jobs
    DO ALSO INSERT INTO public.regress_ip_seen VALUES (0);
SELECT jobq_enqueue('ip', '{"n": "11c"}') > 0 AS enqueued;
SELECT count(*) AS rule_saw_it FROM regress_ip_seen WHERE job_id = 0;
DROP RULE regress_ip_rule ON jobq.jobs;
DROP TABLE regress_ip_seen;

ALTER TABLE jobq.jobs ADD CONSTRAINT regress_ip_check CHECK (priority < 100) NOT VALID;
\set VERBOSITY sqlstate
SELECT jobq_enqueue('ip', '{"n": "checked"}', priority => 200);
\set VERBOSITY terse
ALTER TABLE jobq.jobs DROP CONSTRAINT regress_ip_check;

ALTER TABLE jobq.jobs ADD COLUMN regress_extra int DEFAULT 42;
SELECT jobq_enqueue('ip', '{"n": "12"}') AS id \gset
SELECT regress_extra FROM jobq.jobs WHERE id = :id;
ALTER TABLE jobq.jobs DROP COLUMN regress_extra;
-- a dropped column is skipped: the direct path again
SET client_min_messages = debug2;
SELECT jobq_enqueue('ip', '{"n": "13"}') > 0 AS enqueued;
SET client_min_messages = warning;
SELECT * FROM regress_rows() WHERE n IN ('8', '9', '10', '10b', '11', '11b', '11c', '12', '13');
SELECT * FROM regress_indexes_complete();

-- 6. a batch without dedupe keys is written directly too, in input order
-- (ids in order), the rows the statement writes; with jobq.direct_writes
-- off, through the statement: the same rows
SET client_min_messages = debug2;
SELECT count(*) AS enqueued, bool_and(created) AS created,
       max(id) - min(id) = 2 AND bool_and(id > 0) AS ids_consecutive
FROM jobq_enqueue_batch('ip', ARRAY['{"n": "b1"}', '{"n": "b2"}', '{"n": "b3"}']::jsonb[],
                        priority => 4, max_attempts => 2);
SET jobq.direct_writes = off;
SELECT count(*) AS enqueued FROM jobq_enqueue_batch('ip', ARRAY['{"n": "s1"}', '{"n": "s2"}', '{"n": "s3"}']::jsonb[],
                        priority => 4, max_attempts => 2);
RESET jobq.direct_writes;
SET client_min_messages = warning;
SELECT * FROM regress_rows() WHERE n LIKE 'b_' OR n LIKE 's_';
SELECT * FROM regress_indexes_complete();

SELECT jobq_drop_queue('ip', force => true);
DROP FUNCTION regress_rows();
DROP FUNCTION regress_indexes_complete();
DROP EXTENSION amcheck;
