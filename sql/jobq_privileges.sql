-- jobq_privileges (X3): the privilege matrix. One login-less role per jobq
-- role (member of it) and one with no grants at all call every function,
-- and try the tables directly; each cell is "yes" (allowed), "no" (42501)
-- or the SQLSTATE of any other error. Expected (doc/operations.md, "Roles and privileges"):
-- producer: enqueue, enqueue_batch, stats; worker: claim, pop, complete,
-- complete_batch, fail, extend, release, sweep; monitor: stats, job, list,
-- queues (and wait_stats); admin: everything (queue management, retry,
-- cancel, purge, plus the three others); all four: limits, server_version. Nobody,
-- not even admin, may touch the tables. The catalog view (has_function_privilege) must agree.
\set VERBOSITY terse
SET client_min_messages = warning;

CREATE ROLE regress_jobq_nobody;
CREATE ROLE regress_jobq_producer IN ROLE jobq_producer;
CREATE ROLE regress_jobq_worker IN ROLE jobq_worker;
CREATE ROLE regress_jobq_monitor IN ROLE jobq_monitor;
CREATE ROLE regress_jobq_admin IN ROLE jobq_admin;

SELECT jobq_create_queue('prv');
SELECT jobq_enqueue('prv', '{"p": 1}') > 0 AS ok;

-- The calls: valid arguments, so that an allowed call succeeds.
-- Queue names made from the role name keep create/drop independent.
CREATE TABLE regress_priv_calls (n int, label text, fn regprocedure, stmt text);
INSERT INTO regress_priv_calls VALUES
 (1, 'enqueue', 'jobq_enqueue(text,jsonb,timestamptz,interval,integer,integer,text)',
     $$SELECT jobq_enqueue('prv', '{}')$$),
 (2, 'enqueue_batch', 'jobq_enqueue_batch(text,jsonb[],timestamptz,interval,integer,integer,text[])',
     $$SELECT jobq_enqueue_batch('prv', ARRAY['{}']::jsonb[])$$),
 (3, 'claim(text)', 'jobq_claim(text,text,integer,interval,interval)',
     $$SELECT jobq_claim('prv-none')$$),
 (4, 'claim(text[])', 'jobq_claim(text[],text,integer,interval,interval)',
     $$SELECT jobq_claim(ARRAY['prv-none'])$$),
 (5, 'complete', 'jobq_complete(bigint,uuid,jsonb)',
     $$SELECT jobq_complete(0, gen_random_uuid())$$),
 (6, 'complete_batch', 'jobq_complete_batch(bigint[],uuid[],jsonb[])',
     $$SELECT jobq_complete_batch(ARRAY[0]::bigint[], ARRAY[gen_random_uuid()])$$),
 (7, 'fail', 'jobq_fail(bigint,uuid,text,interval,boolean)',
     $$SELECT jobq_fail(0, gen_random_uuid(), 'x')$$),
 (8, 'extend', 'jobq_extend(bigint,uuid,interval)',
     $$SELECT jobq_extend(0, gen_random_uuid())$$),
 (9, 'release', 'jobq_release(bigint,uuid)',
     $$SELECT jobq_release(0, gen_random_uuid())$$),
 (10, 'sweep', 'jobq_sweep(text,integer)',
     $$SELECT jobq_sweep('prv-none')$$),
 (11, 'stats', 'jobq_stats(text)',
     $$SELECT jobq_stats('prv')$$),
 (12, 'job', 'jobq_job(bigint)',
     $$SELECT jobq_job(0)$$),
 (13, 'list', 'jobq_list(text,text,integer)',
     $$SELECT jobq_list('prv')$$),
 (14, 'queues', 'jobq_queues()',
     $$SELECT jobq_queues()$$),
 (15, 'wait_stats', 'jobq_wait_stats()',
     $$SELECT jobq_wait_stats()$$),
 (16, 'create_queue', 'jobq_create_queue(text,interval,integer,interval,interval,interval,interval,boolean)',
     $$SELECT jobq_create_queue(replace(current_user::text, '_', '-'))$$),
 (17, 'alter_queue', 'jobq_alter_queue(text,interval,integer,interval,interval,interval,interval,boolean)',
     $$SELECT jobq_alter_queue('prv', max_attempts => 5)$$),
 (18, 'pause', 'jobq_pause(text)',
     $$SELECT jobq_pause('prv')$$),
 (19, 'resume', 'jobq_resume(text)',
     $$SELECT jobq_resume('prv')$$),
 (20, 'retry(id)', 'jobq_retry(bigint)',
     $$SELECT jobq_retry(0)$$),
 (21, 'retry(queue)', 'jobq_retry(text)',
     $$SELECT jobq_retry('prv')$$),
 (22, 'cancel', 'jobq_cancel(bigint)',
     $$SELECT jobq_cancel(0)$$),
 (23, 'purge', 'jobq_purge(text,text,interval)',
     $$SELECT jobq_purge('prv')$$),
 (24, 'drop_queue', 'jobq_drop_queue(text,boolean)',
     $$SELECT jobq_drop_queue(replace(current_user::text, '_', '-'))$$),
 (25, 'SELECT jobq.jobs', NULL, $$SELECT count(*) FROM jobq.jobs$$),
 (26, 'INSERT jobq.jobs', NULL,
     $$INSERT INTO jobq.jobs (queue, run_at, max_attempts, enqueued_at, payload) VALUES ('prv', now(), 1, now(), '{}')$$),
 (27, 'UPDATE jobq.jobs', NULL, $$UPDATE jobq.jobs SET priority = 0$$),
 (28, 'DELETE jobq.history', NULL, $$DELETE FROM jobq.history$$),
 (29, 'SELECT jobq.queues', NULL, $$SELECT count(*) FROM jobq.queues$$),
 (30, 'UPDATE jobq.stale_acks', NULL, $$UPDATE jobq.stale_acks SET count = 0$$),
 (31, 'nextval(jobs_id_seq)', NULL, $$SELECT nextval('jobq.jobs_id_seq')$$),
 -- the trigger that invalidates queue-settings caches: not callable by anyone
 (32, 'queues_changed (trigger)', 'jobq.queues_changed()', $$SELECT jobq.queues_changed()$$),
 (33, 'pop', 'jobq_pop(text,integer)', $$SELECT jobq_pop('prv-none')$$),
 -- the contract's limits: every jobq role may read them
 (34, 'limits', 'jobq_limits()', $$SELECT jobq_limits()$$),
 -- the versions: every jobq role may read them
 (35, 'server_version', 'jobq_server_version()', $$SELECT jobq_server_version()$$),
 -- the statement texts, for tests: internal, no role may call it
 (36, '_statement', 'jobq._statement(text)', $$SELECT jobq._statement('claim_one')$$),
 (37, 'complete_batch_positions', 'jobq_complete_batch_positions(bigint[],uuid[],jsonb[])',
     $$SELECT jobq_complete_batch_positions(ARRAY[0]::bigint[], ARRAY[gen_random_uuid()])$$);
-- every jobq function is in the list
SELECT p.oid::regprocedure AS missing
FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
  AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'jobq')
WHERE p.oid NOT IN (SELECT fn FROM regress_priv_calls WHERE fn IS NOT NULL);

CREATE TABLE regress_priv_results (role text, n int, outcome text);
GRANT SELECT ON regress_priv_calls TO PUBLIC;
GRANT INSERT ON regress_priv_results TO PUBLIC;
CREATE FUNCTION regress_priv_try() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    c record;
    res text;
BEGIN
    FOR c IN SELECT * FROM regress_priv_calls ORDER BY n LOOP
        BEGIN
            EXECUTE c.stmt;
            res := 'yes';
        EXCEPTION
            WHEN insufficient_privilege THEN res := 'no';
            WHEN OTHERS THEN res := SQLSTATE;
        END;
        INSERT INTO regress_priv_results VALUES (current_user, c.n, res);
    END LOOP;
END
$$;

SET ROLE regress_jobq_nobody;
SELECT regress_priv_try();
SET ROLE regress_jobq_producer;
SELECT regress_priv_try();
SET ROLE regress_jobq_worker;
SELECT regress_priv_try();
SET ROLE regress_jobq_monitor;
SELECT regress_priv_try();
SET ROLE regress_jobq_admin;
SELECT regress_priv_try();
RESET ROLE;

SELECT c.label,
       max(r.outcome) FILTER (WHERE r.role = 'regress_jobq_nobody') AS nobody,
       max(r.outcome) FILTER (WHERE r.role = 'regress_jobq_producer') AS producer,
       max(r.outcome) FILTER (WHERE r.role = 'regress_jobq_worker') AS worker,
       max(r.outcome) FILTER (WHERE r.role = 'regress_jobq_monitor') AS monitor,
       max(r.outcome) FILTER (WHERE r.role = 'regress_jobq_admin') AS admin
FROM regress_priv_calls c JOIN regress_priv_results r USING (n)
GROUP BY c.n, c.label ORDER BY c.n;

-- the catalog agrees with the calls (expect no rows)
SELECT c.label, r.role, r.outcome,
       has_function_privilege(r.role, c.fn, 'EXECUTE') AS has_execute
FROM regress_priv_calls c JOIN regress_priv_results r USING (n)
WHERE c.fn IS NOT NULL
  AND has_function_privilege(r.role, c.fn, 'EXECUTE') <> (r.outcome = 'yes');

-- the calls that were allowed did their work (as the roles)
SELECT count(*) AS jobs_enqueued FROM jobq_list('prv');
SELECT queue FROM jobq_queues() WHERE queue LIKE 'regress-jobq-%';
SELECT max_attempts, paused FROM jobq_queues() WHERE queue = 'prv';

-- the roles themselves have no table privileges, only EXECUTE
SELECT r.rolname,
       has_schema_privilege(r.rolname, 'jobq', 'USAGE') AS jobq_usage,
       has_table_privilege(r.rolname, 'jobq.jobs', 'SELECT') AS jobs_select,
       has_table_privilege(r.rolname, 'jobq.history', 'SELECT') AS history_select
FROM pg_roles r WHERE r.rolname LIKE 'regress\_jobq\_%' ORDER BY r.rolname;

-- a role may not grant itself more: producer and worker are siblings,
-- admin is a member of both, nobody is in jobq_owner
SELECT pg_has_role('jobq_producer', 'jobq_worker', 'MEMBER') AS producer_is_worker,
       pg_has_role('jobq_worker', 'jobq_producer', 'MEMBER') AS worker_is_producer,
       pg_has_role('jobq_admin', 'jobq_worker', 'MEMBER') AS admin_is_worker,
       pg_has_role('jobq_admin', 'jobq_owner', 'MEMBER') AS admin_is_owner,
       pg_has_role('regress_jobq_admin', 'jobq_owner', 'USAGE') AS admin_uses_owner;
-- (SET SESSION AUTHORIZATION, so that SET ROLE is checked against the
-- role itself, not against the superuser running the test)
SET SESSION AUTHORIZATION regress_jobq_admin;
\set VERBOSITY sqlstate
SET ROLE jobq_owner;
SET ROLE jobq_worker;
RESET ROLE;
GRANT jobq_owner TO regress_jobq_admin;
GRANT EXECUTE ON FUNCTION jobq_claim(text, text, integer, interval, interval) TO regress_jobq_nobody;
ALTER FUNCTION jobq_claim(text, text, integer, interval, interval) SECURITY INVOKER;
\set VERBOSITY terse
RESET SESSION AUTHORIZATION;
SELECT prosecdef, has_function_privilege('regress_jobq_nobody', oid, 'EXECUTE') AS nobody_execute
FROM pg_proc WHERE oid = 'jobq_claim(text, text, integer, interval, interval)'::regprocedure;

DROP FUNCTION regress_priv_try();
DROP TABLE regress_priv_calls, regress_priv_results;
SELECT jobq_drop_queue('prv', force => true);
DROP ROLE regress_jobq_nobody, regress_jobq_producer, regress_jobq_worker,
          regress_jobq_monitor, regress_jobq_admin;
