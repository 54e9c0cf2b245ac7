-- jobq_direct_claim: a claim from one queue scans jobs_claim_idx and locks
-- and updates the rows directly (extension/direct_claim.c); anything the
-- direct claim does not handle runs the claim statement. Both must give the
-- same jobs in the same order, the same rows and complete index entries
-- (amcheck's bt_index_check with heapallindexed after each part). DEBUG2
-- says which path each claim took: "N jobs of queue ... claimed directly",
-- or "claim of queue ... through SQL: <why>".
\set VERBOSITY terse
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS amcheck;

CREATE FUNCTION regress_dk_indexes_ok() RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    ix regclass;
BEGIN
    FOR ix IN SELECT i.indexrelid::regclass FROM pg_index i
              JOIN pg_class c ON c.oid = i.indexrelid
              WHERE i.indrelid = 'jobq.jobs'::regclass
                AND c.relam = (SELECT oid FROM pg_am WHERE amname = 'btree') LOOP
        PERFORM bt_index_check(ix, true);
    END LOOP;
    RETURN true;
END
$$;

-- the claimed jobs as the table has them: the claim's rows must match
CREATE FUNCTION regress_dk_check(ids bigint[], tokens uuid[]) RETURNS TABLE (n text, ok boolean)
LANGUAGE sql AS $$
    SELECT j.payload->>'n', j.state = 'running' AND j.token = t.token AND j.attempt = 1
           AND j.worker = 'w' AND j.locked_until = j.claimed_at + interval '5 minutes'
    FROM unnest(ids, tokens) WITH ORDINALITY AS t(id, token, ord)
    JOIN jobq.jobs j USING (id) ORDER BY t.ord
$$;

-- the complete's messages name job ids: this test's come from 2e12 on, and
-- the sequence goes back where it was at the end (these jobs are gone by then)
SELECT last_value AS regress_dk_seq, is_called AS regress_dk_called FROM jobq.jobs_id_seq \gset
SELECT setval(pg_get_serial_sequence('jobq.jobs', 'id'), 2000000000000) > 0 AS ids_moved;
SELECT jobq_create_queue('dk', lease => '5 minutes', completed_retention => '0');
-- priorities 2, 1, 0 in turn; one delayed job first in line but not due
SELECT count(jobq_enqueue('dk', jsonb_build_object('n', g::text), priority => (2 - g % 3)::smallint))
       AS enqueued FROM generate_series(1, 30) g;
SELECT jobq_enqueue('dk', '{"n": "later"}', priority => -5, delay => '1 hour') > 0 AS enqueued;

-- 1. directly: claim order (priority, run_at, id), the delayed job left,
-- max_jobs honoured, the rows as the statement writes them
CREATE TEMP TABLE regress_dk AS SELECT * FROM jobq_claim('dk', 'w', 1) WITH ORDINALITY WHERE false;
SET client_min_messages = debug2;
INSERT INTO regress_dk SELECT * FROM jobq_claim('dk', 'w', 5) WITH ORDINALITY;
SET client_min_messages = warning;
SELECT * FROM regress_dk_check((SELECT array_agg(id ORDER BY ordinality) FROM regress_dk),
                               (SELECT array_agg(token ORDER BY ordinality) FROM regress_dk));
SELECT payload->>'n' AS n, attempt, max_attempts, locked_until > enqueued_at AS leased
FROM regress_dk ORDER BY ordinality;
SELECT regress_dk_indexes_ok() AS indexes_ok;
-- the lease index has the claimed jobs, the claim index no longer
SET enable_seqscan = off;
SELECT count(*) AS running_by_lease FROM jobq.jobs
WHERE state = 'running' AND locked_until > now() AND queue = 'dk';
RESET enable_seqscan;

-- 2. the cycle: claimed and completed directly, in one transaction too
SET client_min_messages = debug2;
SELECT count(*) AS completed FROM regress_dk WHERE jobq_complete(id, token);
BEGIN;
SELECT jobq_complete(id, token) AS completed FROM jobq_claim('dk', 'w', 1);
COMMIT;
SET client_min_messages = warning;
-- a claim that finds nothing due: directly, empty
DELETE FROM regress_dk;
SELECT jobq_create_queue('dk-empty');
SET client_min_messages = debug2;
SELECT count(*) AS claimed FROM jobq_claim('dk-empty', 'w', 10);
SET client_min_messages = warning;

-- 3. each case the direct claim leaves to the statement: the same jobs
-- REPEATABLE READ and SERIALIZABLE
BEGIN ISOLATION LEVEL REPEATABLE READ;
SET LOCAL client_min_messages = debug2;
SELECT payload->>'n' AS n FROM jobq_claim('dk', 'w', 1);
COMMIT;
BEGIN ISOLATION LEVEL SERIALIZABLE;
SET LOCAL client_min_messages = debug2;
SELECT payload->>'n' AS n FROM jobq_claim('dk', 'w', 1);
COMMIT;
-- an UPDATE trigger on jobq.jobs (a foreign key to job ids is one): fired
CREATE TABLE public.regress_dk_seen (job_id bigint);
CREATE FUNCTION regress_dk_seen() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
    INSERT INTO public.regress_dk_seen VALUES (NEW.id);
    RETURN NEW;
END
$$;
CREATE TRIGGER regress_dk_seen AFTER UPDATE ON jobq.jobs
    FOR EACH ROW EXECUTE FUNCTION regress_dk_seen();
SET client_min_messages = debug2;
SELECT payload->>'n' AS n FROM jobq_claim('dk', 'w', 1);
SET client_min_messages = warning;
SELECT count(*) AS trigger_fired FROM public.regress_dk_seen;
DROP TRIGGER regress_dk_seen ON jobq.jobs;
DROP FUNCTION regress_dk_seen();
DROP TABLE public.regress_dk_seen;
-- a CHECK constraint: the statement checks it
ALTER TABLE jobq.jobs ADD CONSTRAINT regress_dk_check CHECK (attempt < 1000);
SET client_min_messages = debug2;
SELECT payload->>'n' AS n FROM jobq_claim('dk', 'w', 1);
SET client_min_messages = warning;
ALTER TABLE jobq.jobs DROP CONSTRAINT regress_dk_check;
-- jobs_claim_idx in another order: the statement (and its plan) claims
DROP INDEX jobq.jobs_claim_idx;
CREATE INDEX jobs_claim_idx ON jobq.jobs (queue, priority DESC, run_at, id) WHERE state = 'ready';
SET client_min_messages = debug2;
SELECT payload->>'n' AS n FROM jobq_claim('dk', 'w', 1);
SET client_min_messages = warning;
-- with another predicate, too
DROP INDEX jobq.jobs_claim_idx;
CREATE INDEX jobs_claim_idx ON jobq.jobs (queue, priority, run_at, id) WHERE state <> 'running';
SET client_min_messages = debug2;
SELECT payload->>'n' AS n FROM jobq_claim('dk', 'w', 1);
SET client_min_messages = warning;
-- as the install script makes it: directly again
DROP INDEX jobq.jobs_claim_idx;
CREATE INDEX jobs_claim_idx ON jobq.jobs (queue, priority, run_at, id) WHERE state = 'ready';
SET client_min_messages = debug2;
SELECT payload->>'n' AS n FROM jobq_claim('dk', 'w', 1);
SET client_min_messages = warning;
-- an expression index: directly, with its entries; a GIN index: the statement
CREATE INDEX regress_dk_expr ON jobq.jobs ((payload->>'n'));
SET client_min_messages = debug2;
SELECT payload->>'n' AS n FROM jobq_claim('dk', 'w', 1);
SET client_min_messages = warning;
SELECT regress_dk_indexes_ok() AS indexes_ok;
DROP INDEX jobq.regress_dk_expr;
CREATE INDEX regress_dk_gin ON jobq.jobs USING gin (payload);
SET client_min_messages = debug2;
SELECT payload->>'n' AS n FROM jobq_claim('dk', 'w', 1);
SET client_min_messages = warning;
DROP INDEX jobq.regress_dk_gin;
-- a queue with groups: its own statements (group_claim.c), no message
SELECT jobq_create_queue('dk-fifo', group_mode => 'fifo');
SELECT jobq_enqueue('dk-fifo', '{"n": "f"}', group_key => 'g1') > 0 AS enqueued;
SET client_min_messages = debug2;
SELECT payload->>'n' AS n FROM jobq_claim('dk-fifo', 'w', 1);
SET client_min_messages = warning;
-- jobq.direct_writes off: the statement, silently
SET jobq.direct_writes = off;
SET client_min_messages = debug2;
SELECT payload->>'n' AS n FROM jobq_claim('dk', 'w', 1);
SET client_min_messages = warning;
RESET jobq.direct_writes;
-- a read-only transaction: refused before anything, as the statement does
BEGIN READ ONLY;
\set VERBOSITY sqlstate
SELECT jobq_claim('dk', 'w', 1);
\set VERBOSITY terse
ROLLBACK;
-- a job with a dedupe key: its unique index entry is written with the check
SELECT jobq_enqueue('dk', '{"n": "keyed"}', priority => -9, dedupe_key => 'k1') > 0 AS enqueued;
SET client_min_messages = debug2;
SELECT payload->>'n' AS n FROM jobq_claim('dk', 'w', 1);
SET client_min_messages = warning;
SELECT jobq_enqueue('dk', '{"n": "again"}', dedupe_key => 'k1') IS NOT NULL AS deduplicated;
SELECT count(*) AS keyed_jobs FROM jobq.jobs WHERE dedupe_key = 'k1';

-- 4. what is left: the jobs each claim took are running, the rest ready
SELECT state, count(*) FROM jobq.jobs WHERE queue = 'dk' GROUP BY state ORDER BY state;
SELECT regress_dk_indexes_ok() AS indexes_ok;

SELECT jobq_drop_queue('dk', force => true);
SELECT jobq_drop_queue('dk-empty', force => true);
SELECT jobq_drop_queue('dk-fifo', force => true);
DROP FUNCTION regress_dk_check(bigint[], uuid[]);
DROP FUNCTION regress_dk_indexes_ok();
SELECT count(*) AS left_over FROM (SELECT id FROM jobq.jobs UNION ALL SELECT id FROM jobq.history) x
WHERE id > :regress_dk_seq;
SELECT setval(pg_get_serial_sequence('jobq.jobs', 'id'), :regress_dk_seq, :'regress_dk_called') > 0 AS ids_restored;
