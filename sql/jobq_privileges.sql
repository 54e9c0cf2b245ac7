-- jobq_privileges (X3): the privilege matrix. One login-less role per jobq
-- role (member of it) and one with no grants at all call every function,
-- and try the tables directly; each cell is "yes" (allowed), "no" (42501)
-- or the SQLSTATE of any other error. Expected (doc/operations.md, "Roles and privileges"):
-- producer: enqueue, enqueue_batch, stats; worker: claim, pop, complete,
-- complete_batch, fail, extend, release, sweep; monitor: stats, job, list,
-- queues (and wait_stats); reader: job, list, stats (with payloads, results
-- and error texts, which monitor sees as NULL); admin: everything (queue
-- management, retry, cancel, purge, grant, revoke, plus the four others);
-- all five: limits, server_version. Monitor and reader: health; admin:
-- the bulk actions and the audit trail. Metrics: worker and admin flush;
-- producer, monitor, reader and admin read jobq_metrics; monitor, reader
-- and admin read pg_stat_jobq and the metrics tables. Nobody, not even
-- admin, may touch the other tables or write the metrics tables. The
-- catalog view (has_function_privilege) must agree. Then the per-queue
-- privileges (jobq_grant): roles limited to one queue, tried on
-- their queue and on another.
\set VERBOSITY terse
SET client_min_messages = warning;

CREATE ROLE regress_jobq_nobody;
CREATE ROLE regress_jobq_producer IN ROLE jobq_producer;
CREATE ROLE regress_jobq_worker IN ROLE jobq_worker;
CREATE ROLE regress_jobq_monitor IN ROLE jobq_monitor;
CREATE ROLE regress_jobq_admin IN ROLE jobq_admin;
CREATE ROLE regress_jobq_reader IN ROLE jobq_reader;

SELECT jobq_create_queue('prv');
SELECT jobq_enqueue('prv', '{"p": 1}') > 0 AS ok;

-- The calls: valid arguments, so that an allowed call succeeds.
-- Queue names made from the role name keep create/drop independent.
CREATE TABLE regress_priv_calls (n int, label text, fn regprocedure, stmt text);
INSERT INTO regress_priv_calls VALUES
 (1, 'enqueue', 'jobq_enqueue(text,jsonb,timestamptz,interval,integer,integer,text,text,bigint[],text,bigint)',
     $$SELECT jobq_enqueue('prv', '{}')$$),
 (2, 'enqueue_batch', 'jobq_enqueue_batch(text,jsonb[],timestamptz,interval,integer,integer,text[],text[])',
     $$SELECT jobq_enqueue_batch('prv', ARRAY['{}']::jsonb[])$$),
 (3, 'claim(text)', 'jobq_claim(text,text,integer,interval,interval)',
     $$SELECT jobq_claim('prv-none')$$),
 (4, 'claim(text[])', 'jobq_claim(text[],text,integer,interval,interval)',
     $$SELECT jobq_claim(ARRAY['prv-none'])$$),
 (5, 'complete', 'jobq_complete(bigint,uuid,jsonb)',
     $$SELECT jobq_complete(0, gen_random_uuid())$$),
 (6, 'complete_batch', 'jobq_complete_batch(bigint[],uuid[],jsonb[])',
     $$SELECT jobq_complete_batch(ARRAY[0]::bigint[], ARRAY[gen_random_uuid()])$$),
 (7, 'fail', 'jobq_fail(bigint,uuid,text,interval,boolean,interval)',
     $$SELECT jobq_fail(0, gen_random_uuid(), 'x')$$),
 (8, 'extend', 'jobq_extend(bigint,uuid,interval)',
     $$SELECT jobq_extend(0, gen_random_uuid())$$),
 (9, 'release', 'jobq_release(bigint,uuid)',
     $$SELECT jobq_release(0, gen_random_uuid())$$),
 (10, 'sweep', 'jobq_sweep(text,integer)',
     $$SELECT jobq_sweep('prv')$$),
 (11, 'stats', 'jobq_stats(text)',
     $$SELECT jobq_stats('prv')$$),
 (12, 'job', 'jobq_job(bigint)',
     $$SELECT jobq_job(0)$$),
 (13, 'list', 'jobq_list(text,text,integer,text,jsonb)',
     $$SELECT jobq_list('prv')$$),
 (14, 'queues', 'jobq_queues()',
     $$SELECT jobq_queues()$$),
 (15, 'wait_stats', 'jobq_wait_stats()',
     $$SELECT jobq_wait_stats()$$),
 (16, 'create_queue', 'jobq_create_queue(text,interval,integer,interval,interval,interval,interval,boolean,boolean,boolean,text,integer,text,text,integer,integer,interval,integer,integer,interval,integer)',
     $$SELECT jobq_create_queue(replace(current_user::text, '_', '-'))$$),
 (17, 'alter_queue', 'jobq_alter_queue(text,interval,integer,interval,interval,interval,interval,boolean,boolean,boolean,text,integer,text,text,integer,integer,interval,integer,integer,interval,integer)',
     $$SELECT jobq_alter_queue('prv', max_attempts => 5)$$),
 (18, 'pause', 'jobq_pause(text)',
     $$SELECT jobq_pause('prv')$$),
 (19, 'resume', 'jobq_resume(text)',
     $$SELECT jobq_resume('prv')$$),
 (20, 'retry(id)', 'jobq_retry(bigint,boolean)',
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
     $$SELECT jobq_complete_batch_positions(ARRAY[0]::bigint[], ARRAY[gen_random_uuid()])$$),
 -- per-queue privileges: admin grants and revokes (in this order, so the
 -- matrix runs without per-queue checks), monitor and admin list them
 (38, 'grant', 'jobq_grant(text,text,text)',
     $$SELECT jobq_grant('prv', 'regress_jobq_nobody', 'inspect')$$),
 (39, 'revoke', 'jobq_revoke(text,text,text)',
     $$SELECT jobq_revoke('prv', 'regress_jobq_nobody', 'inspect')$$),
 (40, 'grants', 'jobq_grants(text)', $$SELECT jobq_grants()$$),
 -- cron expressions: pure, every jobq role may preview them
 (41, 'cron_next', 'jobq_cron_next(text,text,timestamptz,integer,timestamptz)',
     $$SELECT jobq_cron_next('* * * * *')$$);
-- the worker registry (issue 16): a worker registers, heartbeats,
-- deregisters and prunes; monitor (and worker) list; admin signals
INSERT INTO regress_priv_calls VALUES
 (160, 'worker_register', 'jobq_worker_register(text,text,integer,text[],integer,text,jsonb,interval,uuid)',
     $$SELECT jobq_worker_register('prv-worker')$$),
 (161, 'worker_heartbeat', 'jobq_worker_heartbeat(uuid,integer,text,jsonb)',
     $$SELECT jobq_worker_heartbeat(gen_random_uuid())$$),
 (162, 'worker_deregister', 'jobq_worker_deregister(uuid)',
     $$SELECT jobq_worker_deregister(gen_random_uuid())$$),
 (163, 'worker_prune', 'jobq_worker_prune(integer)', $$SELECT jobq_worker_prune()$$),
 (164, 'workers', 'jobq_workers()', $$SELECT jobq_workers()$$),
 (165, 'worker_signal', 'jobq_worker_signal(text,text)',
     $$SELECT jobq_worker_signal('prv-none', 'quiet')$$),
 (166, 'SELECT jobq.workers', NULL, $$SELECT count(*) FROM jobq.workers$$);
-- queue consumers (issue 16): who lists the workers
INSERT INTO regress_priv_calls VALUES
 (167, 'queue_consumers', 'jobq_queue_consumers()', $$SELECT jobq_queue_consumers()$$);
-- awaiting a result (issue 16): producers and monitors
INSERT INTO regress_priv_calls VALUES
 (170, 'await', 'jobq_await(bigint,interval,text,boolean,text,jsonb,text,integer,timestamptz,boolean)',
     $$CALL jobq_await(1, '0')$$),
 (171, 'await_many', 'jobq_await_many(bigint[],interval,text,text,boolean)',
     $$SELECT jobq_await_many(ARRAY[1]::bigint[], '0')$$),
 (172, 'await_status', 'jobq_await_status()', $$SELECT jobq_await_status()$$),
 (173, 'finished_since', 'jobq_finished_since(text,timestamptz,bigint,integer)',
     $$SELECT jobq_finished_since('prv', now())$$);
-- stored metrics (issue 14): workers and admin flush, readers of numbers
-- read them (the function, the view, the tables), nobody writes the tables
INSERT INTO regress_priv_calls VALUES
 (180, 'metrics_flush', 'jobq_metrics_flush()', $$SELECT jobq_metrics_flush()$$),
 (181, 'metrics', 'jobq_metrics(text,timestamptz,timestamptz,interval)',
     $$SELECT jobq_metrics('prv')$$),
 (182, 'SELECT pg_stat_jobq', NULL, $$SELECT count(*) FROM pg_stat_jobq$$),
 (183, 'SELECT jobq.metrics_minute', NULL, $$SELECT count(*) FROM jobq.metrics_minute$$),
 (184, 'DELETE jobq.metrics_hour', NULL, $$DELETE FROM jobq.metrics_hour$$);
-- schedules (issue 17): admin writes, monitor and reader list, worker and
-- admin tick; 'prv-sched' is made below, each role's own from its name
INSERT INTO regress_priv_calls VALUES
 (71, 'schedule', 'jobq_schedule(text,text,text,jsonb,text,text,text,interval,integer,integer,timestamptz,timestamptz,text)',
     $$SELECT jobq_schedule(replace(current_user::text, '_', '-'), 'prv', '0 0 1 1 *')$$),
 (72, 'pause_schedule', 'jobq_pause_schedule(text)', $$SELECT jobq_pause_schedule('prv-sched')$$),
 (73, 'resume_schedule', 'jobq_resume_schedule(text)', $$SELECT jobq_resume_schedule('prv-sched')$$),
 (74, 'trigger_schedule', 'jobq_trigger_schedule(text)', $$SELECT jobq_trigger_schedule('prv-sched')$$),
 (75, 'schedules', 'jobq_schedules()', $$SELECT jobq_schedules()$$),
 (76, 'cron_tick', 'jobq_cron_tick(integer)', $$SELECT jobq_cron_tick()$$),
 (77, 'unschedule', 'jobq_unschedule(text)', $$SELECT jobq_unschedule('prv-sched-none')$$);
SELECT jobq_schedule('prv-sched', 'prv', '0 0 1 1 *') IS NOT NULL AS scheduled;
-- counts (issue 14): who may read jobq_stats, and jobq_reader; the rebuild
-- is admin's; the live metrics are internal
INSERT INTO regress_priv_calls VALUES
 (140, 'counts', 'jobq_counts(text)', $$SELECT jobq_counts('prv')$$),
 (141, 'counts_reconcile', 'jobq_counts_reconcile(text)', $$SELECT jobq_counts_reconcile('prv')$$),
 (142, '_metrics_live', 'jobq._metrics_live(text)', $$SELECT jobq._metrics_live('prv')$$);
-- bulk actions and the audit trail (issue 14): admin; the health report:
-- monitor, reader (and admin through monitor)
INSERT INTO regress_priv_calls VALUES
 (190, 'retry_many', 'jobq_retry_many(bigint[])', $$SELECT jobq_retry_many(ARRAY[0]::bigint[])$$),
 (191, 'cancel_many', 'jobq_cancel_many(bigint[])', $$SELECT jobq_cancel_many(ARRAY[0]::bigint[])$$),
 (192, 'delete_many', 'jobq_delete_many(bigint[])', $$SELECT jobq_delete_many(ARRAY[0]::bigint[])$$),
 (193, 'run_now_many', 'jobq_run_now_many(bigint[])', $$SELECT jobq_run_now_many(ARRAY[0]::bigint[])$$),
 (194, 'audit', 'jobq_audit(text,timestamptz,integer,bigint)', $$SELECT jobq_audit()$$),
 (195, 'audit_purge', 'jobq_audit_purge(integer)', $$SELECT jobq_audit_purge()$$),
 (196, 'health', 'jobq_health()', $$SELECT jobq_health()$$),
 (197, 'retry_where', 'jobq_retry_where(text,text,jsonb,integer,text)', $$SELECT jobq_retry_where('prv')$$),
 (198, 'cancel_where', 'jobq_cancel_where(text,text,jsonb,integer,text)', $$SELECT jobq_cancel_where('prv', 'dead')$$),
 (199, 'delete_where', 'jobq_delete_where(text,text,jsonb,integer,text)', $$SELECT jobq_delete_where('prv')$$),
 (200, 'run_now_where', 'jobq_run_now_where(text,text,jsonb,integer,text)', $$SELECT jobq_run_now_where('prv')$$);
-- a job's payload or result whole (issue 14): what jobq_reader reads
INSERT INTO regress_priv_calls VALUES
 (150, 'job_value', 'jobq_job_value(bigint,text)', $$SELECT jobq_job_value(0)$$);
-- groups (issue 19): monitor reads a grouped queue's groups; admin
-- skips a head and reconciles
SELECT jobq_create_queue('prv-groups', group_mode => 'fifo');
INSERT INTO regress_priv_calls VALUES
 (210, 'groups', 'jobq_groups(text,boolean,integer,text)', $$SELECT jobq_groups('prv-groups')$$),
 (211, 'blocked_groups', 'jobq_blocked_groups(text)', $$SELECT jobq_blocked_groups('prv-groups')$$),
 (212, 'skip_head', 'jobq_skip_head(text,text)', $$SELECT jobq_skip_head('prv-groups', 'k')$$),
 (213, 'groups_reconcile', 'jobq_groups_reconcile(text,integer)',
      $$SELECT jobq_groups_reconcile('prv-groups')$$);
-- flows (issue 18): a running job reads its dependencies' results; producers
-- enqueue flows, monitors read them, admins cancel and repair them
INSERT INTO regress_priv_calls VALUES
 (230, 'dep_results', 'jobq_dep_results(bigint,uuid)',
     $$SELECT jobq_dep_results(0, gen_random_uuid())$$),
 (231, 'flow', 'jobq_flow(jsonb)',
     $$SELECT jobq_flow('[{"ref": "a", "queue": "prv"}]')$$),
 (232, 'flow_jobs', 'jobq_flow_jobs(bigint)', $$SELECT jobq_flow_jobs(0)$$),
 (233, 'cancel_flow', 'jobq_cancel_flow(bigint)', $$SELECT jobq_cancel_flow(0)$$),
 (234, 'flow_repair', 'jobq_flow_repair(integer)', $$SELECT jobq_flow_repair()$$);
-- spawning and checkpoints (issue 18): a running job spawns, checkpoints
-- and reads its checkpoint (jobq_worker); the spawn of a job claimed from a
-- queue that has none, so that no stale token makes it fail
INSERT INTO regress_priv_calls VALUES
 (240, 'spawn', 'jobq_spawn(bigint,uuid,jsonb)',
     $$SELECT count(*) FROM jobq_claim('prv-none', 'w', 1) c,
         LATERAL jobq_spawn(c.id, c.token, '[{"ref": "a", "queue": "prv"}]') s$$),
 (241, 'checkpoint', 'jobq_checkpoint(bigint,uuid,jsonb)',
     $$SELECT jobq_checkpoint(0, gen_random_uuid(), '{}')$$),
 (242, 'checkpoint_read', 'jobq_checkpoint_read(bigint,uuid)',
     $$SELECT jobq_checkpoint_read(0, gen_random_uuid())$$);
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
SET ROLE regress_jobq_reader;
SELECT regress_priv_try();
RESET ROLE;

SELECT c.label,
       max(r.outcome) FILTER (WHERE r.role = 'regress_jobq_nobody') AS nobody,
       max(r.outcome) FILTER (WHERE r.role = 'regress_jobq_producer') AS producer,
       max(r.outcome) FILTER (WHERE r.role = 'regress_jobq_worker') AS worker,
       max(r.outcome) FILTER (WHERE r.role = 'regress_jobq_monitor') AS monitor,
       max(r.outcome) FILTER (WHERE r.role = 'regress_jobq_admin') AS admin,
       max(r.outcome) FILTER (WHERE r.role = 'regress_jobq_reader') AS reader
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
SELECT name, paused, last_job_state FROM jobq_schedules() ORDER BY name;
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

-- Payloads, results and error texts are jobq_reader's (issue 13): the
-- monitor sees counts and job metadata, NULL in their place
SELECT jobq_create_queue('prv-pay', backoff_base => '0');
SELECT jobq_enqueue('prv-pay', '{"secret": "payload"}') AS pay_id \gset
SELECT jobq_fail(id, token, 'secret error') FROM jobq_claim('prv-pay');
SELECT jobq_complete(id, token, '{"secret": "result"}') FROM jobq_claim('prv-pay');
SET ROLE regress_jobq_monitor;
SELECT state, attempt, payload, errors, result FROM jobq_job(:pay_id);
SELECT state, attempt, last_error FROM jobq_list('prv-pay');
SET ROLE regress_jobq_reader;
SELECT state, payload, errors -> 0 ->> 'error' AS error, result FROM jobq_job(:pay_id);
SELECT state, last_error FROM jobq_list('prv-pay');
SET ROLE regress_jobq_admin;
SELECT payload, result FROM jobq_job(:pay_id);
RESET ROLE;
SELECT jobq_drop_queue('prv-pay', force => true);

-- Per-queue privileges (jobq_grant). Each role below is a member of the
-- jobq roles its calls need, and limited to queue pq-a by its grant;
-- regress_pq_none has the jobq roles and no queue grant; a queue admin
-- holds admin on pq-a and EXECUTE on jobq_pause, granted directly.
-- Every call is tried on pq-a and on pq-b (or on a job of each), the acks
-- with the running job's real token.
SELECT jobq_create_queue('pq-a'), jobq_create_queue('pq-b');
CREATE ROLE regress_pq_worker IN ROLE jobq_worker;
CREATE ROLE regress_pq_producer IN ROLE jobq_producer;
CREATE ROLE regress_pq_monitor IN ROLE jobq_monitor, jobq_reader;
CREATE ROLE regress_pq_qadmin;
GRANT EXECUTE ON FUNCTION jobq_pause(text), jobq_resume(text) TO regress_pq_qadmin;
CREATE ROLE regress_pq_none IN ROLE jobq_worker, jobq_producer, jobq_monitor;
-- before the first grant every role uses every queue, as in 0.1.0
SET ROLE regress_pq_worker;
SELECT count(*) AS claimed_b FROM jobq_claim('pq-b');
RESET ROLE;
SELECT jobq_grant('pq-a', 'regress_pq_worker', 'claim') AS worker,
       jobq_grant('pq-a', 'regress_pq_producer', 'enqueue') AS producer,
       jobq_grant('pq-a', 'regress_pq_monitor', 'inspect') AS monitor,
       jobq_grant('pq-a', 'regress_pq_qadmin', 'admin') AS qadmin;
SELECT jobq_grant('pq-a', 'regress_pq_worker', 'claim') AS granted_again;
\set VERBOSITY sqlstate
SELECT jobq_grant('pq-a', 'regress_no_such_role', 'claim');
SELECT jobq_grant('pq-a', 'regress_pq_worker', 'read');
SELECT jobq_grant('pq-none', 'regress_pq_worker', 'claim');
SELECT jobq_grant('pq-a', NULL, 'claim');
\set VERBOSITY terse
SELECT * FROM jobq_grants();
-- per queue: a running job (its token known here) and ready ones
CREATE TABLE regress_pq_jobs (queue text, id bigint, token uuid);
GRANT SELECT ON regress_pq_jobs TO PUBLIC;
SELECT count(*) FROM (SELECT jobq_enqueue(q, '{}'), jobq_enqueue(q, '{}', dedupe_key => 'k')
                      FROM unnest(ARRAY['pq-a', 'pq-b']) q) e;
INSERT INTO regress_pq_jobs SELECT queue, id, token FROM jobq_claim('pq-a');
INSERT INTO regress_pq_jobs SELECT queue, id, token FROM jobq_claim('pq-b');
SELECT count(*) FROM (SELECT jobq_enqueue(q, '{}') FROM unnest(ARRAY['pq-a', 'pq-b', 'pq-a', 'pq-b']) q) e;

DELETE FROM regress_priv_calls;
DELETE FROM regress_priv_results;
INSERT INTO regress_priv_calls VALUES
 (1, 'enqueue a', NULL, $$SELECT jobq_enqueue('pq-a', '{}')$$),
 (2, 'enqueue b', NULL, $$SELECT jobq_enqueue('pq-b', '{}')$$),
 (3, 'enqueue_batch b', NULL, $$SELECT jobq_enqueue_batch('pq-b', ARRAY['{}']::jsonb[])$$),
 (4, 'dedupe probe b', NULL, $$SELECT jobq_enqueue('pq-b', '{}', dedupe_key => 'k')$$),
 (5, 'claim a', NULL, $$SELECT jobq_claim('pq-a')$$),
 (6, 'claim b', NULL, $$SELECT jobq_claim('pq-b')$$),
 (7, 'claim [a, b]', NULL, $$SELECT jobq_claim(ARRAY['pq-a', 'pq-b'])$$),
 (8, 'pop b', NULL, $$SELECT jobq_pop('pq-b')$$),
 (9, 'extend a', NULL, $$SELECT jobq_extend(id, token) FROM regress_pq_jobs WHERE queue = 'pq-a'$$),
 (10, 'extend b', NULL, $$SELECT jobq_extend(id, token) FROM regress_pq_jobs WHERE queue = 'pq-b'$$),
 (11, 'fail b', NULL, $$SELECT jobq_fail(id, token, 'x', retry_in => '1 hour') FROM regress_pq_jobs WHERE queue = 'pq-b'$$),
 (12, 'release b', NULL, $$SELECT jobq_release(id, token) FROM regress_pq_jobs WHERE queue = 'pq-b'$$),
 (13, 'complete b', NULL, $$SELECT jobq_complete(id, token) FROM regress_pq_jobs WHERE queue = 'pq-b'$$),
 (14, 'complete_batch b', NULL, $$SELECT jobq_complete_batch(ARRAY[id], ARRAY[token]) FROM regress_pq_jobs WHERE queue = 'pq-b'$$),
 (15, 'sweep a', NULL, $$SELECT jobq_sweep('pq-a')$$),
 (16, 'sweep b', NULL, $$SELECT jobq_sweep('pq-b')$$),
 (17, 'sweep all', NULL, $$SELECT jobq_sweep()$$),
 (18, 'stats a', NULL, $$SELECT jobq_stats('pq-a')$$),
 (19, 'stats b', NULL, $$SELECT jobq_stats('pq-b')$$),
 (20, 'list a', NULL, $$SELECT jobq_list('pq-a')$$),
 (21, 'list b', NULL, $$SELECT jobq_list('pq-b')$$),
 (22, 'pause a', NULL, $$SELECT jobq_pause('pq-a'), jobq_resume('pq-a')$$),
 (23, 'pause b', NULL, $$SELECT jobq_pause('pq-b'), jobq_resume('pq-b')$$);
SET ROLE regress_pq_producer;
SELECT regress_priv_try();
SET ROLE regress_pq_worker;
SELECT regress_priv_try();
SET ROLE regress_pq_monitor;
SELECT regress_priv_try();
SET ROLE regress_pq_qadmin;
SELECT regress_priv_try();
SET ROLE regress_pq_none;
SELECT regress_priv_try();
RESET ROLE;
SELECT c.label,
       max(r.outcome) FILTER (WHERE r.role = 'regress_pq_producer') AS producer,
       max(r.outcome) FILTER (WHERE r.role = 'regress_pq_worker') AS worker,
       max(r.outcome) FILTER (WHERE r.role = 'regress_pq_monitor') AS monitor,
       max(r.outcome) FILTER (WHERE r.role = 'regress_pq_qadmin') AS qadmin,
       max(r.outcome) FILTER (WHERE r.role = 'regress_pq_none') AS no_grant
FROM regress_priv_calls c JOIN regress_priv_results r USING (n)
GROUP BY c.n, c.label ORDER BY c.n;
-- the refusals changed nothing: pq-b's running job is still running
-- with its token (nobody extended, failed, released or completed it)
SELECT j.state, j.token = r.token AS same_token
FROM regress_pq_jobs r, jobq.jobs j WHERE j.id = r.id AND r.queue = 'pq-b';
-- lists leave out other queues' rows; a job of another queue is not shown
SET ROLE regress_pq_monitor;
SELECT queue FROM jobq_stats() WHERE queue LIKE 'pq-%';
SELECT queue FROM jobq_queues() WHERE queue LIKE 'pq-%';
SELECT queue, privilege FROM jobq_grants();
SELECT count(*) AS job_a FROM jobq_job((SELECT id FROM regress_pq_jobs WHERE queue = 'pq-a'));
SELECT count(*) AS job_b FROM jobq_job((SELECT id FROM regress_pq_jobs WHERE queue = 'pq-b'));
\set VERBOSITY default
SELECT jobq_claim('pq-b');
SET ROLE regress_pq_worker;
SELECT jobq_claim('pq-b');
\set VERBOSITY terse
-- a member of jobq_admin passes every check
SET ROLE regress_jobq_admin;
SELECT count(*) AS admin_stats FROM jobq_stats() WHERE queue LIKE 'pq-%';
SELECT jobq_extend(id, token) IS NOT NULL AS admin_extends_b FROM regress_pq_jobs WHERE queue = 'pq-b';
RESET ROLE;
-- a revoke takes one grant away; the others stay in force
SELECT jobq_revoke('pq-a', 'regress_pq_worker', 'claim') AS revoked,
       jobq_revoke('pq-a', 'regress_pq_worker', 'claim') AS revoked_again;
SELECT count(*) AS grants_left FROM jobq_grants();
SET ROLE regress_pq_worker;
\set VERBOSITY sqlstate
SELECT jobq_extend(id, token) IS NOT NULL AS still_limited FROM regress_pq_jobs WHERE queue = 'pq-b';
\set VERBOSITY terse
RESET ROLE;
-- a dropped queue takes its grants along; with none left anywhere, every
-- role uses every queue again
SELECT jobq_drop_queue('pq-a', force => true);
SELECT count(*) AS grants_left FROM jobq_grants();
SET ROLE regress_pq_worker;
SELECT jobq_extend(id, token) IS NOT NULL AS default_again FROM regress_pq_jobs WHERE queue = 'pq-b';
RESET ROLE;
SELECT jobq_drop_queue('pq-b', force => true);
DROP TABLE regress_pq_jobs;
REVOKE EXECUTE ON FUNCTION jobq_pause(text), jobq_resume(text) FROM regress_pq_qadmin;
DROP ROLE regress_pq_worker, regress_pq_producer, regress_pq_monitor, regress_pq_qadmin,
          regress_pq_none;

DROP FUNCTION regress_priv_try();
DROP TABLE regress_priv_calls, regress_priv_results;
SELECT jobq_drop_queue('prv', force => true);
SELECT jobq_drop_queue('prv-groups', force => true);
DROP ROLE regress_jobq_nobody, regress_jobq_producer, regress_jobq_worker,
          regress_jobq_monitor, regress_jobq_admin, regress_jobq_reader;
