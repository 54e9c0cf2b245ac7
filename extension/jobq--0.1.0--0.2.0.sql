/* extension/jobq--0.1.0--0.2.0.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION jobq UPDATE TO '0.2.0'" to load this file. \quit

/*
 * Release 0.2.0.  Every schema change of 0.2.0 goes into this script;
 * jobq--0.1.0.sql is released and never changes (make checkver).  A fresh
 * install runs jobq--0.1.0.sql and then this script (the Makefile generates
 * jobq--0.2.0.sql from that chain), so what is written here is all there
 * is of 0.2.0.  The security rules of the base script hold here too: pinned
 * search_path, schema-qualified names, no CREATE OR REPLACE of an object we
 * may not own.
 *
 * Layout: one section per change, each opened by a banner naming what it
 * is for; later changes append sections at the end.  A section that adds
 * objects does its own ceremony (doc/upgrading.md, "Writing an upgrade
 * script"):
 *  - every new table and sequence: pg_extension_config_dump, or pg_dump
 *    loses its rows (the upgrade test checks that none is missed);
 *  - every new function: OWNER TO jobq_owner, REVOKE ALL FROM PUBLIC,
 *    GRANT EXECUTE per role, and a COMMENT ON FUNCTION of one sentence;
 *  - a changed function keeps its C symbol for the old SQL and binds a new,
 *    versioned one (jobq_claim_0_2); parameters are added only at the end,
 *    with defaults, replacing the function, never overloading it.
 */
SET LOCAL search_path = pg_catalog, pg_temp;


/* ========================================================================
 * Data survives pg_dump (issue 12, CODE-REVIEW R1).
 *
 * An extension's tables are part of its DDL, so pg_dump writes no row of
 * them unless the extension registers them as configuration tables; a dump
 * of a 0.1.0 database restored nothing but empty queues.  Every row of
 * every table is the user's data: the filter is empty.  The identity
 * sequence of jobq.jobs is registered too, or a restored database would
 * hand out ids again from 1 and collide with jobq.history.
 * ======================================================================== */

SELECT pg_catalog.pg_extension_config_dump('jobq.queues'::pg_catalog.regclass, '');
SELECT pg_catalog.pg_extension_config_dump('jobq.jobs'::pg_catalog.regclass, '');
SELECT pg_catalog.pg_extension_config_dump('jobq.history'::pg_catalog.regclass, '');
SELECT pg_catalog.pg_extension_config_dump('jobq.stale_acks'::pg_catalog.regclass, '');
SELECT pg_catalog.pg_extension_config_dump(
    pg_catalog.pg_get_serial_sequence('jobq.jobs', 'id')::pg_catalog.regclass, '');


/* ========================================================================
 * Versions: jobq_server_version() (issue 12).
 *
 * The SQL version of this database and the release the library was built
 * as; libjobq reads it once per connection to refuse a server it cannot
 * talk to (doc/upgrading.md, "Compatibility").  It reads only pg_extension,
 * so it runs with the caller's rights; every jobq role may call it.
 * ======================================================================== */

CREATE FUNCTION @extschema@.jobq_server_version()
RETURNS TABLE (sql_version text, library_version text)
AS 'MODULE_PATHNAME', 'jobq_server_version'
LANGUAGE C STABLE PARALLEL SAFE SECURITY INVOKER ROWS 1
SET search_path = pg_catalog, pg_temp;

ALTER FUNCTION @extschema@.jobq_server_version() OWNER TO jobq_owner;
REVOKE ALL ON FUNCTION @extschema@.jobq_server_version() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_server_version()
TO jobq_producer, jobq_worker, jobq_monitor, jobq_admin;


/* ========================================================================
 * Comments on the functions of 0.1.0 (CODE-REVIEW R1), so that \df+ and
 * \dd explain them.  Functions added later carry theirs in their section.
 * ======================================================================== */

COMMENT ON FUNCTION jobq.queues_changed() IS
    'Trigger of jobq.queues: invalidates every backend''s cache of queue settings at commit.';
COMMENT ON FUNCTION @extschema@.jobq_create_queue(text, interval, integer, interval, interval, interval, interval, boolean) IS
    'Creates a queue; a NULL setting takes its default.';
COMMENT ON FUNCTION @extschema@.jobq_alter_queue(text, interval, integer, interval, interval, interval, interval, boolean) IS
    'Changes the settings of a queue; a NULL setting stays as it is.';
COMMENT ON FUNCTION @extschema@.jobq_drop_queue(text, boolean) IS
    'Drops a queue; with force, its live jobs and history go with it.';
COMMENT ON FUNCTION @extschema@.jobq_pause(text) IS
    'Pauses a queue: claims take none of its jobs until it is resumed.';
COMMENT ON FUNCTION @extschema@.jobq_resume(text) IS
    'Resumes a paused queue.';
COMMENT ON FUNCTION @extschema@.jobq_queues() IS
    'Lists every queue with its settings.';
COMMENT ON FUNCTION @extschema@.jobq_enqueue(text, jsonb, timestamptz, interval, integer, integer, text) IS
    'Enqueues one job and returns its id (the live job''s id when the dedupe key is taken).';
COMMENT ON FUNCTION @extschema@.jobq_enqueue_batch(text, jsonb[], timestamptz, interval, integer, integer, text[]) IS
    'Enqueues many jobs in one call and returns each id with whether it was created.';
COMMENT ON FUNCTION @extschema@.jobq_claim(text, text, integer, interval, interval) IS
    'Claims ready jobs of one queue, each with a lease and a fresh token.';
COMMENT ON FUNCTION @extschema@.jobq_claim(text[], text, integer, interval, interval) IS
    'Claims ready jobs of several queues, each with a lease and a fresh token.';
COMMENT ON FUNCTION @extschema@.jobq_pop(text, integer) IS
    'At most once: deletes and returns ready jobs, which a crash after the commit loses.';
COMMENT ON FUNCTION @extschema@.jobq_complete(bigint, uuid, jsonb) IS
    'Completes a running job if the token is still its own; false when stale.';
COMMENT ON FUNCTION @extschema@.jobq_complete_batch(bigint[], uuid[], jsonb[]) IS
    'Completes many running jobs and returns the ids whose tokens were accepted.';
COMMENT ON FUNCTION @extschema@.jobq_fail(bigint, uuid, text, interval, boolean) IS
    'Records a failed attempt and returns the new state (ready or dead); NULL when stale.';
COMMENT ON FUNCTION @extschema@.jobq_extend(bigint, uuid, interval) IS
    'Extends the lease of a running job and returns the new deadline; NULL when stale.';
COMMENT ON FUNCTION @extschema@.jobq_release(bigint, uuid) IS
    'Gives a running job back to its queue without burning the attempt; false when stale.';
COMMENT ON FUNCTION @extschema@.jobq_sweep(text, integer) IS
    'Returns expired leases to ready (or dead) and purges history past retention, in bounded batches.';
COMMENT ON FUNCTION @extschema@.jobq_stats(text) IS
    'Counts the jobs of each queue by state, with the age of the oldest ready job.';
COMMENT ON FUNCTION @extschema@.jobq_job(bigint) IS
    'Everything about one job, live or finished.';
COMMENT ON FUNCTION @extschema@.jobq_list(text, text, integer) IS
    'Lists the jobs of a queue, optionally of one state, in id order.';
COMMENT ON FUNCTION @extschema@.jobq_wait_stats() IS
    'Whether waiting claims sleep on latches, how many wait now, and wakeups sent since start.';
COMMENT ON FUNCTION @extschema@.jobq_retry(bigint) IS
    'Makes a dead job ready again, attempts back to 0.';
COMMENT ON FUNCTION @extschema@.jobq_retry(text) IS
    'Makes every dead job of a queue ready again and returns how many.';
COMMENT ON FUNCTION @extschema@.jobq_cancel(bigint) IS
    'Cancels a ready, delayed or dead job; a running job cannot be cancelled.';
COMMENT ON FUNCTION @extschema@.jobq_purge(text, text, interval) IS
    'Deletes finished jobs of a queue, optionally of one state and older than an age.';
COMMENT ON FUNCTION @extschema@.jobq_server_version() IS
    'The jobq SQL version of this database and the version of the loaded library.';


/* ========================================================================
 * The contract's limits (issue 12, CODE-REVIEW R2).
 *
 * jobq_limits() returns the limits the server was built with
 * (client/include/jobq-contract.h), so that a client can check that it
 * refuses what the server refuses.  It reads no table and needs no rights
 * of its own: SECURITY INVOKER, callable by every jobq role.
 * ======================================================================== */
CREATE FUNCTION @extschema@.jobq_limits()
RETURNS TABLE (name text, value bigint, unit text)
AS 'MODULE_PATHNAME', 'jobq_limits'
LANGUAGE C STABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp;

ALTER FUNCTION @extschema@.jobq_limits() OWNER TO jobq_owner;
REVOKE ALL ON FUNCTION @extschema@.jobq_limits() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_limits()
TO jobq_producer, jobq_worker, jobq_monitor, jobq_admin;

COMMENT ON FUNCTION @extschema@.jobq_limits() IS
    'The limits the server was built with: name, value and unit.';


/* ========================================================================
 * Statements as data (issue 12, CODE-REVIEW R3).
 *
 * The C declares each statement it runs once, in a table next to its code
 * (extension/spi.c).  jobq._statement(name) returns a statement's text, so
 * that tests EXPLAIN the very text the C prepares instead of a copy.
 * Internal: it reads no table, and EXECUTE is granted to no role (the
 * regression suite runs as a superuser).
 * ======================================================================== */
CREATE FUNCTION jobq._statement(name text)
RETURNS text
AS 'MODULE_PATHNAME', 'jobq_statement'
LANGUAGE C STABLE PARALLEL UNSAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp;

ALTER FUNCTION jobq._statement(text) OWNER TO jobq_owner;
REVOKE ALL ON FUNCTION jobq._statement(text) FROM PUBLIC;
COMMENT ON FUNCTION jobq._statement(text) IS
    'Internal: the text of the statement the C runs under this name, for tests.';


/* ========================================================================
 * Batch complete by position (issue 12, CODE-REVIEW section 3.2).
 *
 * jobq_complete_batch returns the ids of the accepted (id, token) pairs,
 * which cannot tell a caller which pair of a repeated id was accepted.
 * jobq_complete_batch_positions takes the same arguments and returns the
 * 1-based positions of the accepted pairs in the arrays, in input order.
 * A new function with a new C symbol: jobq_complete_batch stays as it
 * was, for 0.1.0 clients.
 * ======================================================================== */
CREATE FUNCTION @extschema@.jobq_complete_batch_positions(
    ids     bigint[],
    tokens  uuid[],
    results jsonb[] DEFAULT NULL)
RETURNS SETOF integer
AS 'MODULE_PATHNAME', 'jobq_complete_batch_0_2'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER ROWS 100
SET search_path = pg_catalog, pg_temp;

ALTER FUNCTION @extschema@.jobq_complete_batch_positions(bigint[], uuid[], jsonb[]) OWNER TO jobq_owner;
REVOKE ALL ON FUNCTION @extschema@.jobq_complete_batch_positions(bigint[], uuid[], jsonb[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_complete_batch_positions(bigint[], uuid[], jsonb[])
TO jobq_worker;
COMMENT ON FUNCTION @extschema@.jobq_complete_batch_positions(bigint[], uuid[], jsonb[]) IS
    'Complete many jobs; returns the 1-based positions of the (id, token) pairs accepted.';


/* ========================================================================
 * Trust boundaries: who reads payloads, per-queue privileges (issue 13).
 *
 * jobq_reader: reading payloads, results and error texts (jobq_job,
 * jobq_list) is its own role, granted to jobq_admin; jobq_monitor sees
 * counts and job metadata only (those columns are NULL for it).  Created
 * like the other roles: only when missing, checked by the install checks.
 *
 * jobq.queue_grants: per-queue privileges (enqueue, claim, inspect,
 * admin), checked inside the functions (grants.c).  While the table is
 * empty every role may use every queue, as in 0.1.0.  A grant goes with
 * its queue (ON DELETE CASCADE); a role is kept as regrole, so that a dump
 * writes its name.  The statement trigger is the one of jobq.queues: it
 * makes every backend forget whether grants exist.
 * ======================================================================== */

DO $reader$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles
                   WHERE rolname OPERATOR(pg_catalog.=) 'jobq_reader') THEN
        CREATE ROLE jobq_reader NOLOGIN;
    END IF;
END
$reader$;
GRANT jobq_reader TO jobq_admin;

CREATE TABLE jobq.queue_grants (
    queue     text NOT NULL REFERENCES jobq.queues (name) ON DELETE CASCADE,
    grantee   pg_catalog.regrole NOT NULL,
    privilege text NOT NULL
        CHECK (privilege OPERATOR(pg_catalog.=) ANY (ARRAY['enqueue', 'claim', 'inspect', 'admin'])),
    PRIMARY KEY (queue, grantee, privilege)
);
ALTER TABLE jobq.queue_grants OWNER TO jobq_owner;
REVOKE ALL ON TABLE jobq.queue_grants FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('jobq.queue_grants'::pg_catalog.regclass, '');

CREATE TRIGGER queue_grants_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON jobq.queue_grants
    FOR EACH STATEMENT EXECUTE FUNCTION jobq.queues_changed();
ALTER TABLE jobq.queue_grants ENABLE ALWAYS TRIGGER queue_grants_changed;

CREATE FUNCTION @extschema@.jobq_grant(queue text, role text, privilege text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'jobq_grant'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_revoke(queue text, role text, privilege text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'jobq_revoke'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_grants(queue text DEFAULT NULL)
RETURNS TABLE (queue text, role text, privilege text)
AS 'MODULE_PATHNAME', 'jobq_grants'
LANGUAGE C STABLE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

ALTER FUNCTION @extschema@.jobq_grant(text, text, text) OWNER TO jobq_owner;
ALTER FUNCTION @extschema@.jobq_revoke(text, text, text) OWNER TO jobq_owner;
ALTER FUNCTION @extschema@.jobq_grants(text) OWNER TO jobq_owner;
REVOKE ALL ON FUNCTION @extschema@.jobq_grant(text, text, text),
    @extschema@.jobq_revoke(text, text, text), @extschema@.jobq_grants(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_grant(text, text, text),
    @extschema@.jobq_revoke(text, text, text) TO jobq_admin;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_grants(text) TO jobq_monitor, jobq_admin;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_job(bigint),
    @extschema@.jobq_list(text, text, integer) TO jobq_reader;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_server_version(), @extschema@.jobq_limits()
TO jobq_reader;

COMMENT ON FUNCTION @extschema@.jobq_grant(text, text, text) IS
    'Grants a role a privilege (enqueue, claim, inspect, admin) on one queue; the first grant turns per-queue checks on.';
COMMENT ON FUNCTION @extschema@.jobq_revoke(text, text, text) IS
    'Revokes a per-queue privilege granted with jobq_grant.';
COMMENT ON FUNCTION @extschema@.jobq_grants(text) IS
    'Lists the per-queue privileges, of one queue or of all.';


/* ========================================================================
 * Cron expressions: jobq_cron_next() (issue 17).
 *
 * The next fire times of a cron expression in a time zone, for preview
 * and validation (extension/cron.c; the grammar and the daylight saving
 * rules are in doc/sql.md, "Cron expressions").  Pure: it reads no table,
 * only PostgreSQL's tz data, so it runs with the caller's rights and
 * every jobq role may call it.  STABLE, not IMMUTABLE: the tz data may
 * change under it with an operating system update.  Not STRICT: a NULL
 * anchor means the Unix epoch, a NULL tz UTC.
 * ======================================================================== */

CREATE FUNCTION @extschema@.jobq_cron_next(expr text, tz text DEFAULT 'UTC',
                                           after timestamptz DEFAULT pg_catalog.now(),
                                           n integer DEFAULT 1,
                                           anchor timestamptz DEFAULT NULL)
RETURNS SETOF timestamptz
AS 'MODULE_PATHNAME', 'jobq_cron_next_sql'
LANGUAGE C STABLE PARALLEL SAFE SECURITY INVOKER ROWS 1
SET search_path = pg_catalog, pg_temp;

ALTER FUNCTION @extschema@.jobq_cron_next(text, text, timestamptz, integer, timestamptz) OWNER TO jobq_owner;
REVOKE ALL ON FUNCTION @extschema@.jobq_cron_next(text, text, timestamptz, integer, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_cron_next(text, text, timestamptz, integer, timestamptz)
TO jobq_producer, jobq_worker, jobq_monitor, jobq_admin, jobq_reader;
COMMENT ON FUNCTION @extschema@.jobq_cron_next(text, text, timestamptz, integer, timestamptz) IS
    'The next fire times of a cron expression in a time zone, strictly after a time (preview and validation).';


/* ========================================================================
 * Job lists: keyset pages and filters (issue 14, "Jobs and their history").
 *
 * jobq_list gains a cursor (after: a next_cursor of an earlier page) and
 * filters (a jsonb object, extension/list_filter.h), and returns the
 * worker and dedupe key of each job, the page's next_cursor and whether a
 * capped scan stopped early (scan_truncated).  Never an OFFSET, never a
 * total.  Its result changes, so the function is dropped and created
 * again, with the new parameters at the end and with defaults: a 0.1.0
 * call jobq_list(queue, state, max_rows) still works and gets the same
 * first nine columns.  The new C symbol jobq_list_0_2 leaves jobq_list to
 * the 0.1.0 SQL.
 *
 * No new index: live jobs are listed along jobs_pkey, finished ones
 * along history_queue_state_idx (queue, state, finished_at), newest
 * first; sql/jobq_explain.sql checks every state and filter with a
 * million finished jobs.
 * ======================================================================== */
DROP FUNCTION @extschema@.jobq_list(text, text, integer);

CREATE FUNCTION @extschema@.jobq_list(
    queue    text,
    state    text    DEFAULT NULL,
    max_rows integer DEFAULT 100,
    after    text    DEFAULT NULL,
    filters  jsonb   DEFAULT '{}')
RETURNS TABLE (
    id             bigint,
    state          text,
    priority       integer,
    run_at         timestamptz,
    attempt        integer,
    max_attempts   integer,
    enqueued_at    timestamptz,
    finished_at    timestamptz,
    last_error     text,
    worker         text,
    dedupe_key     text,
    next_cursor    text,
    scan_truncated boolean)
AS 'MODULE_PATHNAME', 'jobq_list_0_2'
LANGUAGE C STABLE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

ALTER FUNCTION @extschema@.jobq_list(text, text, integer, text, jsonb) OWNER TO jobq_owner;
REVOKE ALL ON FUNCTION @extschema@.jobq_list(text, text, integer, text, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_list(text, text, integer, text, jsonb)
TO jobq_monitor, jobq_reader;
COMMENT ON FUNCTION @extschema@.jobq_list(text, text, integer, text, jsonb) IS
    'A page of the jobs of a queue, optionally of one state and passing filters, from a cursor; never a total.';


/* ========================================================================
 * The worker registry (issue 16, FEATURES-0.2.md section 5).
 *
 * jobq.workers: one row per registered worker process, advisory only.  The
 * lease and the token stay the guarantee: pruning a worker that stopped
 * heartbeating never fails, moves or completes a job (doc/sql.md, "Worker
 * registry").  UNLOGGED: heartbeats write no WAL, a crash empties the table
 * (the workers then re-register when their heartbeat answers
 * 'unregistered'), and standbys do not see it.  Deliberately not
 * registered for pg_dump: a restored registry would list processes of
 * another server.  fillfactor 50 leaves room on each page, and no indexed
 * column changes on a heartbeat, so heartbeats are HOT updates.
 *
 * state is what the worker is asked to be (running, quiet, stopping): set
 * by jobq_worker_signal, or advanced by the worker's own heartbeat; the
 * order is running < quiet < stopping, and only an explicit resume goes
 * back (quiet -> running).  told is the state the worker last heard (the
 * answer of its heartbeat, or a waiting claim that returned at once because
 * it had not heard it yet; NULL after a registration).  Running jobs are
 * not copied here: a worker
 * claims with its worker_id as the claim's worker label, and jobq_workers()
 * finds its jobs in jobq.jobs.
 * ======================================================================== */

CREATE UNLOGGED TABLE jobq.workers (
    id           uuid PRIMARY KEY,
    name         text NOT NULL,
    host         text,
    pid          integer,
    version      text,
    queues       text[] NOT NULL,
    slots        integer,
    metadata     jsonb NOT NULL,
    state        text NOT NULL,                 -- running, quiet or stopping
    busy         integer,
    started_at   timestamptz NOT NULL,
    heartbeat_at timestamptz NOT NULL,
    dead_after   interval NOT NULL,             -- pruned this long after its last heartbeat
    backend_pid  integer,                       -- of the session that last heartbeat
    told         text                           -- the state the worker last heard, or NULL
)
WITH (fillfactor = 50);
ALTER TABLE jobq.workers OWNER TO jobq_owner;
REVOKE ALL ON TABLE jobq.workers FROM PUBLIC;

CREATE FUNCTION @extschema@.jobq_worker_register(
    name      text,
    host      text DEFAULT NULL,
    pid       integer DEFAULT NULL,
    queues    text[] DEFAULT NULL,
    slots     integer DEFAULT NULL,
    version   text DEFAULT NULL,
    metadata  jsonb DEFAULT NULL,
    timeout   interval DEFAULT NULL,
    worker_id uuid DEFAULT NULL)
RETURNS TABLE (worker_id uuid, heartbeat_every interval, dead_after interval)
AS 'MODULE_PATHNAME', 'jobq_worker_register'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER ROWS 1
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_worker_heartbeat(
    worker_id uuid,
    busy      integer DEFAULT NULL,
    state     text DEFAULT NULL,
    metadata  jsonb DEFAULT NULL)
RETURNS text
AS 'MODULE_PATHNAME', 'jobq_worker_heartbeat'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_worker_deregister(worker_id uuid)
RETURNS boolean
AS 'MODULE_PATHNAME', 'jobq_worker_deregister'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_workers()
RETURNS TABLE (worker_id uuid, name text, host text, pid integer, version text,
               queues text[], slots integer, state text, busy integer,
               running bigint[], started_at timestamptz, heartbeat_at timestamptz,
               heartbeat_age interval, alive boolean, dead_after interval,
               metadata jsonb, backend_pid integer)
AS 'MODULE_PATHNAME', 'jobq_workers'
LANGUAGE C STABLE PARALLEL UNSAFE SECURITY DEFINER ROWS 10
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_worker_signal(target text, signal text)
RETURNS integer
AS 'MODULE_PATHNAME', 'jobq_worker_signal'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_worker_prune(max_rows integer DEFAULT 1000)
RETURNS integer
AS 'MODULE_PATHNAME', 'jobq_worker_prune'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

ALTER FUNCTION @extschema@.jobq_worker_register(text, text, integer, text[], integer, text, jsonb, interval, uuid) OWNER TO jobq_owner;
ALTER FUNCTION @extschema@.jobq_worker_heartbeat(uuid, integer, text, jsonb) OWNER TO jobq_owner;
ALTER FUNCTION @extschema@.jobq_worker_deregister(uuid) OWNER TO jobq_owner;
ALTER FUNCTION @extschema@.jobq_workers() OWNER TO jobq_owner;
ALTER FUNCTION @extschema@.jobq_worker_signal(text, text) OWNER TO jobq_owner;
ALTER FUNCTION @extschema@.jobq_worker_prune(integer) OWNER TO jobq_owner;
REVOKE ALL ON FUNCTION
    @extschema@.jobq_worker_register(text, text, integer, text[], integer, text, jsonb, interval, uuid),
    @extschema@.jobq_worker_heartbeat(uuid, integer, text, jsonb),
    @extschema@.jobq_worker_deregister(uuid),
    @extschema@.jobq_workers(),
    @extschema@.jobq_worker_signal(text, text),
    @extschema@.jobq_worker_prune(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION
    @extschema@.jobq_worker_register(text, text, integer, text[], integer, text, jsonb, interval, uuid),
    @extschema@.jobq_worker_heartbeat(uuid, integer, text, jsonb),
    @extschema@.jobq_worker_deregister(uuid),
    @extschema@.jobq_worker_prune(integer) TO jobq_worker;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_workers() TO jobq_worker, jobq_monitor;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_worker_signal(text, text) TO jobq_admin;

COMMENT ON TABLE jobq.workers IS
    'The worker registry: advisory, unlogged (emptied by a crash), not dumped.';
COMMENT ON FUNCTION @extschema@.jobq_worker_register(text, text, integer, text[], integer, text, jsonb, interval, uuid) IS
    'Registers a worker process (or re-registers one under its worker_id) and returns its id and heartbeat cadence.';
COMMENT ON FUNCTION @extschema@.jobq_worker_heartbeat(uuid, integer, text, jsonb) IS
    'Records that a worker is alive and returns the state asked of it: running, quiet, stopping, or unregistered.';
COMMENT ON FUNCTION @extschema@.jobq_worker_deregister(uuid) IS
    'Removes a worker from the registry on a clean exit; false when it was not registered.';
COMMENT ON FUNCTION @extschema@.jobq_workers() IS
    'Lists the registered workers with their heartbeat age, liveness and the jobs each one runs.';
COMMENT ON FUNCTION @extschema@.jobq_worker_signal(text, text) IS
    'Asks workers (an id, a LIKE pattern of name or host, or *) to quiet, stop or resume; returns how many now are.';
COMMENT ON FUNCTION @extschema@.jobq_worker_prune(integer) IS
    'Removes workers whose heartbeat is older than their dead_after (the sweeper calls it); returns how many.';


/* ========================================================================
 * Metrics over time: stored rollups (issue 14, FEATURES-0.2.md 1.7 item 4).
 *
 * The live ring in shared memory (jobq._metrics_live, one bucket per
 * second for the last minutes) is written once a minute into
 * jobq.metrics_minute by jobq_metrics_flush(), which the sweeper calls
 * and any session may call; finished hours and days are rolled up into
 * jobq.metrics_hour and jobq.metrics_day.  A row is one queue and one
 * bucket; counters are in the order of JOBQ_METRIC_COUNTERS, the
 * histograms in the layout of JOBQ_HIST_EDGES_MS (jobq-contract.h).
 * complete is false when the row is known to miss events (derived from
 * history without the live ring, or part of its period was lost).
 *
 * jobq.metrics_state is the flush's own state (one row, made by the
 * first flush): since when minutes were flushed, the watermarks of the
 * minute, hour and day tables; every flush locks it (SKIP LOCKED), so
 * concurrent flushes do the work once.  jobq.metrics_gaps records the
 * periods no live ring saw (a restart, no preload, a flusher that did
 * not run in time): jobq_metrics reports their buckets complete = false.
 * All five are registered for pg_dump; doc/operations.md, "Metrics".
 * ======================================================================== */

CREATE TABLE jobq.metrics_minute (
    queue            text NOT NULL,
    start            timestamptz NOT NULL,
    counters         bigint[] NOT NULL,
    wait_hist        bigint[] NOT NULL,
    run_hist         bigint[] NOT NULL,
    oldest_ready_age interval,
    complete         boolean NOT NULL,
    PRIMARY KEY (queue, start)
);
CREATE INDEX metrics_minute_start_idx ON jobq.metrics_minute (start);

CREATE TABLE jobq.metrics_hour (LIKE jobq.metrics_minute INCLUDING ALL);
CREATE TABLE jobq.metrics_day (LIKE jobq.metrics_minute INCLUDING ALL);

CREATE TABLE jobq.metrics_state (
    singleton       boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    since           timestamptz NOT NULL,   -- the first minute flushed
    flushed_through timestamptz NOT NULL,   -- minutes before it are flushed
    hours_through   timestamptz NOT NULL,   -- hours before it are rolled up
    days_through    timestamptz NOT NULL    -- days before it are rolled up
);

CREATE TABLE jobq.metrics_gaps (
    since  timestamptz PRIMARY KEY,
    until  timestamptz NOT NULL CHECK (until OPERATOR(pg_catalog.>) since),
    reason text NOT NULL
);

ALTER TABLE jobq.metrics_minute OWNER TO jobq_owner;
ALTER TABLE jobq.metrics_hour OWNER TO jobq_owner;
ALTER TABLE jobq.metrics_day OWNER TO jobq_owner;
ALTER TABLE jobq.metrics_state OWNER TO jobq_owner;
ALTER TABLE jobq.metrics_gaps OWNER TO jobq_owner;
REVOKE ALL ON TABLE jobq.metrics_minute, jobq.metrics_hour, jobq.metrics_day,
    jobq.metrics_state, jobq.metrics_gaps FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('jobq.metrics_minute'::pg_catalog.regclass, '');
SELECT pg_catalog.pg_extension_config_dump('jobq.metrics_hour'::pg_catalog.regclass, '');
SELECT pg_catalog.pg_extension_config_dump('jobq.metrics_day'::pg_catalog.regclass, '');
SELECT pg_catalog.pg_extension_config_dump('jobq.metrics_state'::pg_catalog.regclass, '');
SELECT pg_catalog.pg_extension_config_dump('jobq.metrics_gaps'::pg_catalog.regclass, '');

-- readers of numbers may read the rollups directly (for their own tools)
GRANT USAGE ON SCHEMA jobq TO jobq_monitor, jobq_reader;
GRANT SELECT ON TABLE jobq.metrics_minute, jobq.metrics_hour, jobq.metrics_day,
    jobq.metrics_gaps TO jobq_monitor, jobq_reader;

COMMENT ON TABLE jobq.metrics_minute IS
    'Per queue and minute: counters (JOBQ_METRIC_COUNTERS order), wait and run histograms; written by jobq_metrics_flush().';
COMMENT ON TABLE jobq.metrics_hour IS
    'Per queue and hour: the sum of its minutes, rolled up by jobq_metrics_flush().';
COMMENT ON TABLE jobq.metrics_day IS
    'Per queue and day (UTC): the sum of its hours, rolled up by jobq_metrics_flush().';
COMMENT ON TABLE jobq.metrics_state IS
    'Internal: the watermarks of jobq_metrics_flush().';
COMMENT ON TABLE jobq.metrics_gaps IS
    'Periods the live metrics ring did not see: their buckets are reported incomplete.';

CREATE FUNCTION @extschema@.jobq_metrics_flush()
RETURNS TABLE (minutes bigint, hours bigint, days bigint, purged bigint)
AS 'MODULE_PATHNAME', 'jobq_metrics_flush'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER ROWS 1
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_metrics(
    queue    text DEFAULT NULL,
    since    timestamptz DEFAULT pg_catalog.now() OPERATOR(pg_catalog.-) '1 hour'::pg_catalog.interval,
    until    timestamptz DEFAULT pg_catalog.now(),
    bucket   interval DEFAULT '1 minute')
RETURNS TABLE (queue text, bucket timestamptz, counters bigint[],
               wait_hist bigint[], run_hist bigint[],
               wait_p50 interval, wait_p95 interval, wait_p99 interval,
               run_p50 interval, run_p95 interval, run_p99 interval,
               oldest_ready_age interval, complete boolean)
AS 'MODULE_PATHNAME', 'jobq_metrics'
LANGUAGE C STABLE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

ALTER FUNCTION @extschema@.jobq_metrics_flush() OWNER TO jobq_owner;
ALTER FUNCTION @extschema@.jobq_metrics(text, timestamptz, timestamptz, interval) OWNER TO jobq_owner;
REVOKE ALL ON FUNCTION @extschema@.jobq_metrics_flush(),
    @extschema@.jobq_metrics(text, timestamptz, timestamptz, interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_metrics_flush() TO jobq_worker, jobq_admin;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_metrics(text, timestamptz, timestamptz, interval)
TO jobq_producer, jobq_monitor, jobq_reader, jobq_admin;
-- the view below reads jobq_stats with the caller's rights
GRANT EXECUTE ON FUNCTION @extschema@.jobq_stats(text) TO jobq_reader;

COMMENT ON FUNCTION @extschema@.jobq_metrics_flush() IS
    'Writes the finished minutes of the live metrics ring once, rolls minutes into hours and days, and applies retention.';
COMMENT ON FUNCTION @extschema@.jobq_metrics(text, timestamptz, timestamptz, interval) IS
    'Counters, histograms and p50/p95/p99 of wait and run per queue and bucket, from the live ring and the stored rollups.';

/*
 * pg_stat_jobq: one row per queue for scrapers (postgres_exporter custom
 * queries, pgwatch, a shell loop): the counts of jobq_stats and the last
 * finished minute of jobq_metrics, one named column per counter.  A view
 * runs its functions with the caller's rights, so it shows the queues the
 * caller may inspect.
 */
CREATE VIEW @extschema@.pg_stat_jobq AS
SELECT s.queue, s.paused, s.ready, s.delayed, s.running, s.expired,
       s.completed, s.dead, s.cancelled, s.oldest_ready_age,
       m.bucket AS minute,
       m.counters[1] AS minute_enqueued,
       m.counters[2] AS minute_claimed,
       m.counters[3] AS minute_completed,
       m.counters[4] AS minute_retried,
       m.counters[5] AS minute_dead,
       m.counters[6] AS minute_cancelled,
       m.counters[7] AS minute_lease_expired,
       m.counters[8] AS minute_stale_acks,
       m.wait_p50 AS minute_wait_p50, m.wait_p95 AS minute_wait_p95,
       m.wait_p99 AS minute_wait_p99,
       m.run_p50 AS minute_run_p50, m.run_p95 AS minute_run_p95,
       m.run_p99 AS minute_run_p99,
       m.complete AS minute_complete
FROM @extschema@.jobq_stats(NULL) s
LEFT JOIN @extschema@.jobq_metrics(
        NULL,
        pg_catalog.date_trunc('minute', pg_catalog.now()) OPERATOR(pg_catalog.-) '1 minute'::pg_catalog.interval,
        pg_catalog.date_trunc('minute', pg_catalog.now()),
        '1 minute'::pg_catalog.interval) m
  ON m.queue OPERATOR(pg_catalog.=) s.queue;

ALTER VIEW @extschema@.pg_stat_jobq OWNER TO jobq_owner;
REVOKE ALL ON @extschema@.pg_stat_jobq FROM PUBLIC;
GRANT SELECT ON @extschema@.pg_stat_jobq TO jobq_monitor, jobq_reader, jobq_admin;
COMMENT ON VIEW @extschema@.pg_stat_jobq IS
    'Per queue: job counts and the last finished minute''s counters and latency percentiles, for scrapers.';


/* ========================================================================
 * Schedules: recurring jobs (issue 17; doc/sql.md, "Schedules").
 *
 * jobq.schedules holds each schedule and its state: the tick drives
 * next_run_at forward with a compare-and-set on the row (locked FOR NO KEY
 * UPDATE SKIP LOCKED by jobq_cron_tick), in the transaction that enqueues
 * the tick's job, so any number of tickers give one job per tick and a
 * restart loses nothing.  next_run_at is NULL once no tick is left (past
 * end_at).  retry_at is set while a failing schedule backs off.  The jobs
 * a schedule makes carry the dedupe key 'schedule:<name>:<tick>' (manual
 * runs 'schedule:<name>:manual:<time>'), so a schedule's runs are a
 * dedupe-key prefix of jobq_list, never a search through payloads.
 *
 * The queue must exist (a foreign key); jobq_drop_queue refuses while
 * schedules point at the queue unless force, which unschedules them.
 * source says who wrote the schedule: 'sql', or
 * what `jobq schedule apply` names ('file:<path>'), so that --prune
 * removes only what that file made.
 * ======================================================================== */

CREATE TABLE jobq.schedules (
    name          text PRIMARY KEY
        CONSTRAINT schedules_name_check
        CHECK (octet_length(name) BETWEEN 1 AND 128
               AND name ~ '^[a-z0-9]+([_-][a-z0-9]+)*$'),
    queue         text NOT NULL REFERENCES jobq.queues (name),
    expr          text NOT NULL,
    tz            text NOT NULL,
    payload       jsonb NOT NULL,
    overlap       text NOT NULL
        CHECK (overlap OPERATOR(pg_catalog.=) ANY (ARRAY['allow', 'skip'])),
    catchup       text NOT NULL
        CHECK (catchup OPERATOR(pg_catalog.=) ANY (ARRAY['latest', 'none', 'all'])),
    grace         interval NOT NULL,
    priority      smallint NOT NULL,
    max_attempts  integer,
    start_at      timestamptz,
    end_at        timestamptz,
    paused        boolean NOT NULL DEFAULT false,
    next_run_at   timestamptz,
    last_run_at   timestamptz,
    last_job_id   bigint,
    missed_ticks  bigint NOT NULL DEFAULT 0,
    skipped_ticks bigint NOT NULL DEFAULT 0,
    failures      integer NOT NULL DEFAULT 0,
    retry_at      timestamptz,
    last_error    text,
    source        text NOT NULL,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL
);
ALTER TABLE jobq.schedules OWNER TO jobq_owner;
REVOKE ALL ON TABLE jobq.schedules FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('jobq.schedules'::pg_catalog.regclass, '');

-- the tick's scan: due schedules in due order (GREATEST skips a NULL retry_at)
CREATE INDEX schedules_due_idx ON jobq.schedules
    ((GREATEST(next_run_at, retry_at))) WHERE NOT paused;
-- jobq_drop_queue: the schedules of a queue
CREATE INDEX schedules_queue_idx ON jobq.schedules (queue);

CREATE FUNCTION @extschema@.jobq_schedule(
    name         text,
    queue        text,
    expr         text,
    payload      jsonb DEFAULT '{}',
    tz           text DEFAULT 'UTC',
    overlap      text DEFAULT 'allow',
    catchup      text DEFAULT 'latest',
    grace        interval DEFAULT '5 minutes',
    priority     integer DEFAULT 0,
    max_attempts integer DEFAULT NULL,
    start_at     timestamptz DEFAULT NULL,
    end_at       timestamptz DEFAULT NULL,
    source       text DEFAULT NULL)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'jobq_schedule'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_unschedule(name text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'jobq_unschedule'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_pause_schedule(name text)
RETURNS void
AS 'MODULE_PATHNAME', 'jobq_pause_schedule'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_resume_schedule(name text)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'jobq_resume_schedule'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_trigger_schedule(name text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'jobq_trigger_schedule'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_schedules()
RETURNS TABLE (name text, queue text, expr text, tz text, payload jsonb,
               overlap text, catchup text, grace interval, priority integer,
               max_attempts integer, start_at timestamptz, end_at timestamptz,
               paused boolean, next_run_at timestamptz, last_run_at timestamptz,
               last_job_id bigint, last_job_state text,
               missed_ticks bigint, skipped_ticks bigint, failures integer,
               retry_at timestamptz, last_error text, source text,
               created_at timestamptz, updated_at timestamptz)
AS 'MODULE_PATHNAME', 'jobq_schedules'
LANGUAGE C STABLE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_cron_tick(max_schedules integer DEFAULT 100)
RETURNS TABLE (schedule text, tick timestamptz, job_id bigint, status text)
AS 'MODULE_PATHNAME', 'jobq_cron_tick'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

ALTER FUNCTION @extschema@.jobq_schedule(text, text, text, jsonb, text, text, text, interval,
    integer, integer, timestamptz, timestamptz, text) OWNER TO jobq_owner;
ALTER FUNCTION @extschema@.jobq_unschedule(text) OWNER TO jobq_owner;
ALTER FUNCTION @extschema@.jobq_pause_schedule(text) OWNER TO jobq_owner;
ALTER FUNCTION @extschema@.jobq_resume_schedule(text) OWNER TO jobq_owner;
ALTER FUNCTION @extschema@.jobq_trigger_schedule(text) OWNER TO jobq_owner;
ALTER FUNCTION @extschema@.jobq_schedules() OWNER TO jobq_owner;
ALTER FUNCTION @extschema@.jobq_cron_tick(integer) OWNER TO jobq_owner;
REVOKE ALL ON FUNCTION
    @extschema@.jobq_schedule(text, text, text, jsonb, text, text, text, interval,
        integer, integer, timestamptz, timestamptz, text),
    @extschema@.jobq_unschedule(text), @extschema@.jobq_pause_schedule(text),
    @extschema@.jobq_resume_schedule(text), @extschema@.jobq_trigger_schedule(text),
    @extschema@.jobq_schedules(), @extschema@.jobq_cron_tick(integer)
FROM PUBLIC;
GRANT EXECUTE ON FUNCTION
    @extschema@.jobq_schedule(text, text, text, jsonb, text, text, text, interval,
        integer, integer, timestamptz, timestamptz, text),
    @extschema@.jobq_unschedule(text), @extschema@.jobq_pause_schedule(text),
    @extschema@.jobq_resume_schedule(text), @extschema@.jobq_trigger_schedule(text)
TO jobq_admin;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_schedules()
TO jobq_monitor, jobq_reader, jobq_admin;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_cron_tick(integer) TO jobq_worker, jobq_admin;

COMMENT ON FUNCTION @extschema@.jobq_schedule(text, text, text, jsonb, text, text, text, interval,
    integer, integer, timestamptz, timestamptz, text) IS
    'Creates or changes a schedule (upsert by name) and returns its next fire time.';
COMMENT ON FUNCTION @extschema@.jobq_unschedule(text) IS
    'Deletes a schedule; jobs it already enqueued stay.  False when there was none.';
COMMENT ON FUNCTION @extschema@.jobq_pause_schedule(text) IS
    'Pauses a schedule: it fires nothing until resumed.';
COMMENT ON FUNCTION @extschema@.jobq_resume_schedule(text) IS
    'Resumes a paused schedule from now (no backfill) and returns its next fire time.';
COMMENT ON FUNCTION @extschema@.jobq_trigger_schedule(text) IS
    'Enqueues a schedule''s job now, without moving its next tick; returns the job id.';
COMMENT ON FUNCTION @extschema@.jobq_schedules() IS
    'Lists every schedule with its settings, next and last runs, counters and last error.';
COMMENT ON FUNCTION @extschema@.jobq_cron_tick(integer) IS
    'Fires the due ticks of up to max_schedules schedules; safe to call from many sessions at once.';


/* ========================================================================
 * Counts without scans and the live metrics (issue 14: counts, and the
 * live half of metrics over time).
 *
 * jobq_counts(queue): jobs per state from commit-time counters in shared
 * memory (extension/counters.c), or without preload from exact live counts
 * and capped index counts of history (extension/counts.c); exact says
 * which.  jobq_counts_reconcile(queue): rebuild the counters now (the
 * sweeper does it after a start and every jobq.counts_reconcile_interval).
 * jobq._metrics_live(queue): the live one-second buckets of the last ten
 * minutes (extension/live_metrics.c), internal: what the stored metrics
 * read.  None of them writes a table.
 * ======================================================================== */

CREATE FUNCTION @extschema@.jobq_counts(queue text DEFAULT NULL)
RETURNS TABLE (queue text, paused boolean, ready bigint, delayed bigint, running bigint,
               expired bigint, completed bigint, dead bigint, cancelled bigint,
               oldest_ready_age interval, exact boolean, as_of timestamptz)
AS 'MODULE_PATHNAME', 'jobq_counts'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_counts_reconcile(queue text DEFAULT NULL)
RETURNS TABLE (queue text, exact boolean, drift bigint)
AS 'MODULE_PATHNAME', 'jobq_counts_reconcile'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION jobq._metrics_live(queue text DEFAULT NULL)
RETURNS TABLE (queue text, second timestamptz, counters bigint[], wait_hist integer[],
               run_hist integer[])
AS 'MODULE_PATHNAME', 'jobq_metrics_live'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp;

ALTER FUNCTION @extschema@.jobq_counts(text) OWNER TO jobq_owner;
ALTER FUNCTION @extschema@.jobq_counts_reconcile(text) OWNER TO jobq_owner;
ALTER FUNCTION jobq._metrics_live(text) OWNER TO jobq_owner;
REVOKE ALL ON FUNCTION @extschema@.jobq_counts(text), @extschema@.jobq_counts_reconcile(text),
    jobq._metrics_live(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_counts(text)
TO jobq_producer, jobq_monitor, jobq_reader;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_counts_reconcile(text) TO jobq_admin;

COMMENT ON FUNCTION @extschema@.jobq_counts(text) IS
    'Counts the jobs of each queue by state at a cost independent of history; exact says whether every number is exact.';
COMMENT ON FUNCTION @extschema@.jobq_counts_reconcile(text) IS
    'Rebuilds the shared-memory counts of one queue or all from the tables and returns how far they had drifted.';
COMMENT ON FUNCTION jobq._metrics_live(text) IS
    'Internal: the live one-second metric buckets of the last ten minutes, for the stored metrics.';


/* ========================================================================
 * Bulk actions, the audit trail and the health report (issue 14).
 *
 * jobq_retry_many, jobq_cancel_many, jobq_delete_many, jobq_run_now_many:
 * bounded, idempotent actions on jobs chosen by id, skipping rows other
 * sessions hold (extension/bulk.c); admin, like the single-job calls.
 * jobq_retry_where and the like: the same on the jobs of a page of
 * jobq_list (its queue, state, filters and cursor), returning the next
 * cursor so that a client loops, one call per transaction.
 *
 * jobq.audit: one row per mutating operator call (extension/audit.c),
 * kept for jobq.audit_retention by the sweeper; read through jobq_audit,
 * by jobq_admin only.  Registered for pg_dump with its sequence.
 *
 * jobq_health: findings about vacuum, the xmin horizon, the sweeper,
 * leases, retry storms and backlogs (extension/health.c); callable by
 * jobq_monitor and jobq_reader (and so jobq_admin).
 * ======================================================================== */

CREATE TABLE jobq.audit (
    id       bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    at       timestamptz NOT NULL,
    actor    text NOT NULL,          -- jobq.actor, else the role
    role     text NOT NULL,          -- the session's current role, always
    action   text NOT NULL,          -- retry, cancel_many, pause, grant, ...
    queue    text,                   -- no foreign key: the trail outlives its queues
    ids      bigint[],
    filters  jsonb,
    detail   jsonb,                  -- the other arguments, as text
    affected bigint NOT NULL
);
-- retention purge (oldest first) and reading by queue (newest first)
CREATE INDEX audit_at_idx ON jobq.audit (at);
CREATE INDEX audit_queue_idx ON jobq.audit (queue, id);
ALTER TABLE jobq.audit OWNER TO jobq_owner;
REVOKE ALL ON TABLE jobq.audit FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('jobq.audit'::pg_catalog.regclass, '');
SELECT pg_catalog.pg_extension_config_dump(
    pg_catalog.pg_get_serial_sequence('jobq.audit', 'id')::pg_catalog.regclass, '');

CREATE FUNCTION @extschema@.jobq_retry_many(ids bigint[])
RETURNS TABLE (affected bigint, skipped bigint)
AS 'MODULE_PATHNAME', 'jobq_retry_many'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER ROWS 1
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_cancel_many(ids bigint[])
RETURNS TABLE (affected bigint, skipped bigint)
AS 'MODULE_PATHNAME', 'jobq_cancel_many'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER ROWS 1
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_delete_many(ids bigint[])
RETURNS TABLE (affected bigint, skipped bigint)
AS 'MODULE_PATHNAME', 'jobq_delete_many'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER ROWS 1
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_run_now_many(ids bigint[])
RETURNS TABLE (affected bigint, skipped bigint)
AS 'MODULE_PATHNAME', 'jobq_run_now_many'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER ROWS 1
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_retry_where(
    queue    text,
    state    text    DEFAULT NULL,
    filters  jsonb   DEFAULT '{}',
    max_rows integer DEFAULT 1000,
    after    text    DEFAULT NULL)
RETURNS TABLE (affected bigint, more boolean, next_cursor text)
AS 'MODULE_PATHNAME', 'jobq_retry_where'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER ROWS 1
SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION @extschema@.jobq_retry_where(text, text, jsonb, integer, text) OWNER TO jobq_owner;
REVOKE ALL ON FUNCTION @extschema@.jobq_retry_where(text, text, jsonb, integer, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_retry_where(text, text, jsonb, integer, text) TO jobq_admin;
COMMENT ON FUNCTION @extschema@.jobq_retry_where(text, text, jsonb, integer, text) IS
    'Makes the dead jobs of a page of jobq_list ready again; loop while more, passing next_cursor.';

CREATE FUNCTION @extschema@.jobq_cancel_where(
    queue    text,
    state    text    DEFAULT NULL,
    filters  jsonb   DEFAULT '{}',
    max_rows integer DEFAULT 1000,
    after    text    DEFAULT NULL)
RETURNS TABLE (affected bigint, more boolean, next_cursor text)
AS 'MODULE_PATHNAME', 'jobq_cancel_where'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER ROWS 1
SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION @extschema@.jobq_cancel_where(text, text, jsonb, integer, text) OWNER TO jobq_owner;
REVOKE ALL ON FUNCTION @extschema@.jobq_cancel_where(text, text, jsonb, integer, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_cancel_where(text, text, jsonb, integer, text) TO jobq_admin;
COMMENT ON FUNCTION @extschema@.jobq_cancel_where(text, text, jsonb, integer, text) IS
    'Cancels the ready, delayed and dead jobs of a page of jobq_list; loop while more, passing next_cursor.';

CREATE FUNCTION @extschema@.jobq_delete_where(
    queue    text,
    state    text    DEFAULT NULL,
    filters  jsonb   DEFAULT '{}',
    max_rows integer DEFAULT 1000,
    after    text    DEFAULT NULL)
RETURNS TABLE (affected bigint, more boolean, next_cursor text)
AS 'MODULE_PATHNAME', 'jobq_delete_where'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER ROWS 1
SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION @extschema@.jobq_delete_where(text, text, jsonb, integer, text) OWNER TO jobq_owner;
REVOKE ALL ON FUNCTION @extschema@.jobq_delete_where(text, text, jsonb, integer, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_delete_where(text, text, jsonb, integer, text) TO jobq_admin;
COMMENT ON FUNCTION @extschema@.jobq_delete_where(text, text, jsonb, integer, text) IS
    'Deletes the finished jobs of a page of jobq_list; loop while more, passing next_cursor.';

CREATE FUNCTION @extschema@.jobq_run_now_where(
    queue    text,
    state    text    DEFAULT NULL,
    filters  jsonb   DEFAULT '{}',
    max_rows integer DEFAULT 1000,
    after    text    DEFAULT NULL)
RETURNS TABLE (affected bigint, more boolean, next_cursor text)
AS 'MODULE_PATHNAME', 'jobq_run_now_where'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER ROWS 1
SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION @extschema@.jobq_run_now_where(text, text, jsonb, integer, text) OWNER TO jobq_owner;
REVOKE ALL ON FUNCTION @extschema@.jobq_run_now_where(text, text, jsonb, integer, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_run_now_where(text, text, jsonb, integer, text) TO jobq_admin;
COMMENT ON FUNCTION @extschema@.jobq_run_now_where(text, text, jsonb, integer, text) IS
    'Makes the delayed jobs of a page of jobq_list due now; loop while more, passing next_cursor.';

CREATE FUNCTION @extschema@.jobq_audit(
    queue     text        DEFAULT NULL,
    since     timestamptz DEFAULT NULL,
    max_rows  integer     DEFAULT 100,
    before_id bigint      DEFAULT NULL)
RETURNS TABLE (
    id       bigint,
    at       timestamptz,
    actor    text,
    role     text,
    action   text,
    queue    text,
    ids      bigint[],
    filters  jsonb,
    detail   jsonb,
    affected bigint)
AS 'MODULE_PATHNAME', 'jobq_audit'
LANGUAGE C STABLE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_audit_purge(max_rows integer DEFAULT 1000)
RETURNS bigint
AS 'MODULE_PATHNAME', 'jobq_audit_purge'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_health()
RETURNS TABLE (severity text, "check" text, subject text, detail text, advice text)
AS 'MODULE_PATHNAME', 'jobq_health'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

ALTER FUNCTION @extschema@.jobq_retry_many(bigint[]) OWNER TO jobq_owner;
ALTER FUNCTION @extschema@.jobq_cancel_many(bigint[]) OWNER TO jobq_owner;
ALTER FUNCTION @extschema@.jobq_delete_many(bigint[]) OWNER TO jobq_owner;
ALTER FUNCTION @extschema@.jobq_run_now_many(bigint[]) OWNER TO jobq_owner;
ALTER FUNCTION @extschema@.jobq_audit(text, timestamptz, integer, bigint) OWNER TO jobq_owner;
ALTER FUNCTION @extschema@.jobq_audit_purge(integer) OWNER TO jobq_owner;
ALTER FUNCTION @extschema@.jobq_health() OWNER TO jobq_owner;
REVOKE ALL ON FUNCTION @extschema@.jobq_retry_many(bigint[]),
    @extschema@.jobq_cancel_many(bigint[]), @extschema@.jobq_delete_many(bigint[]),
    @extschema@.jobq_run_now_many(bigint[]),
    @extschema@.jobq_audit(text, timestamptz, integer, bigint),
    @extschema@.jobq_audit_purge(integer), @extschema@.jobq_health() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_retry_many(bigint[]),
    @extschema@.jobq_cancel_many(bigint[]), @extschema@.jobq_delete_many(bigint[]),
    @extschema@.jobq_run_now_many(bigint[]),
    @extschema@.jobq_audit(text, timestamptz, integer, bigint),
    @extschema@.jobq_audit_purge(integer)
TO jobq_admin;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_health() TO jobq_monitor, jobq_reader;

COMMENT ON FUNCTION @extschema@.jobq_retry_many(bigint[]) IS
    'Makes the dead jobs among the ids ready again; returns how many changed and how many ids were left as they were.';
COMMENT ON FUNCTION @extschema@.jobq_cancel_many(bigint[]) IS
    'Cancels the ready, delayed and dead jobs among the ids, skipping rows other sessions hold.';
COMMENT ON FUNCTION @extschema@.jobq_delete_many(bigint[]) IS
    'Deletes the finished jobs among the ids; live jobs are never deleted.';
COMMENT ON FUNCTION @extschema@.jobq_run_now_many(bigint[]) IS
    'Makes the delayed jobs among the ids due now.';
COMMENT ON FUNCTION @extschema@.jobq_audit(text, timestamptz, integer, bigint) IS
    'The audit trail of operator calls, newest first, optionally of one queue, since a time, before a row id.';
COMMENT ON FUNCTION @extschema@.jobq_audit_purge(integer) IS
    'Deletes audit rows older than jobq.audit_retention (the sweeper does it too); returns how many.';
COMMENT ON FUNCTION @extschema@.jobq_health() IS
    'Findings about vacuum, the xmin horizon, the sweeper, leases, retry storms and backlogs, each with what to do.';


/* ========================================================================
 * Job detail: the attempt history, large values cut (issue 14).
 *
 * jobq_job gains three columns: attempts (each attempt's number, worker,
 * claimed_at, finished_at and outcome: failed with its error, lease
 * expired, released, completed, or running; never a token), and whether
 * payload and result came back cut (longer than JOBQ_INSPECT_VALUE_MAX
 * bytes as text: then a JSON string of the beginning).  The 16 columns of
 * 0.1.0 keep their names, types and order; errors leaves out the entries
 * of released attempts, which carry no error.  jobq_job_value(id, part)
 * returns a payload or result whole (jobq_reader).  Ended attempts are
 * recorded in the errors array the job already carries (newest
 * JOBQ_ERRORS_KEPT), by fail, sweep and release; a completed attempt is
 * its history row, so completes write nothing more.
 * ======================================================================== */
DROP FUNCTION @extschema@.jobq_job(bigint);

CREATE FUNCTION @extschema@.jobq_job(id bigint)
RETURNS TABLE (
    id                bigint,
    queue             text,
    state             text,
    payload           jsonb,
    priority          integer,
    run_at            timestamptz,
    attempt           integer,
    max_attempts      integer,
    locked_until      timestamptz,
    worker            text,
    enqueued_at       timestamptz,
    claimed_at        timestamptz,
    finished_at       timestamptz,
    dedupe_key        text,
    errors            jsonb,
    result            jsonb,
    attempts          jsonb,
    payload_truncated boolean,
    result_truncated  boolean)
AS 'MODULE_PATHNAME', 'jobq_job_0_2'
LANGUAGE C STABLE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_job_value(id bigint, part text DEFAULT 'payload')
RETURNS jsonb
AS 'MODULE_PATHNAME', 'jobq_job_value'
LANGUAGE C STABLE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

ALTER FUNCTION @extschema@.jobq_job(bigint) OWNER TO jobq_owner;
ALTER FUNCTION @extschema@.jobq_job_value(bigint, text) OWNER TO jobq_owner;
REVOKE ALL ON FUNCTION @extschema@.jobq_job(bigint), @extschema@.jobq_job_value(bigint, text)
FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_job(bigint) TO jobq_monitor, jobq_reader;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_job_value(bigint, text) TO jobq_reader;
COMMENT ON FUNCTION @extschema@.jobq_job(bigint) IS
    'Everything about one job, live or finished, with its attempt history (never the token); large payloads and results cut.';
COMMENT ON FUNCTION @extschema@.jobq_job_value(bigint, text) IS
    'A job''s payload or result whole, however large (jobq_job cuts them).';


/* ========================================================================
 * Awaiting a job's outcome (issue 16, FEATURES-0.2.md section 4).
 *
 * jobq_await is a procedure so that, CALLed outside a transaction block,
 * it can commit before each sleep and hold no snapshot while it waits
 * (doc/sql.md, "Awaiting a result").  PostgreSQL makes the CALL of a
 * SECURITY DEFINER procedure, or of one with SET options, atomic (no
 * commit inside), so this one is SECURITY INVOKER with no SET: its C runs
 * each of its statements as its owner with search_path = pg_catalog,
 * pg_temp, as a SECURITY DEFINER function would (extension/await.c).
 * jobq_await_many is a function, usable anywhere; its wait is capped
 * (JOBQ_AWAIT_STATEMENT_MAX_S).  Producers await (they want the result),
 * monitors too; per-queue grants: enqueue or inspect on the job's queue.
 * ======================================================================== */

CREATE PROCEDURE @extschema@.jobq_await(
    id                bigint,
    timeout           interval,
    mode              text DEFAULT 'finished',
    cancel_on_timeout boolean DEFAULT false,
    INOUT state       text DEFAULT NULL,
    INOUT result      jsonb DEFAULT NULL,
    INOUT last_error  text DEFAULT NULL,
    INOUT attempt     integer DEFAULT NULL,
    INOUT finished_at timestamptz DEFAULT NULL,
    INOUT timed_out   boolean DEFAULT NULL)
AS 'MODULE_PATHNAME', 'jobq_await'
LANGUAGE C SECURITY INVOKER;

ALTER PROCEDURE @extschema@.jobq_await(bigint, interval, text, boolean, text, jsonb, text,
                                       integer, timestamptz, boolean) OWNER TO jobq_owner;
REVOKE ALL ON PROCEDURE @extschema@.jobq_await(bigint, interval, text, boolean, text, jsonb,
                                               text, integer, timestamptz, boolean) FROM PUBLIC;
GRANT EXECUTE ON PROCEDURE @extschema@.jobq_await(bigint, interval, text, boolean, text, jsonb,
                                                  text, integer, timestamptz, boolean)
TO jobq_producer, jobq_monitor;
COMMENT ON PROCEDURE @extschema@.jobq_await(bigint, interval, text, boolean, text, jsonb, text,
                                            integer, timestamptz, boolean) IS
    'Wait for a job''s outcome (completed, dead, cancelled, purged_or_never, or still live with timed_out).';

CREATE FUNCTION @extschema@.jobq_await_many(
    ids               bigint[],
    timeout           interval,
    until             text DEFAULT 'all',
    mode              text DEFAULT 'finished',
    cancel_on_timeout boolean DEFAULT false)
RETURNS TABLE (id bigint, state text, result jsonb, last_error text, attempt integer,
               finished_at timestamptz, timed_out boolean)
AS 'MODULE_PATHNAME', 'jobq_await_many'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER ROWS 10
SET search_path = pg_catalog, pg_temp;

ALTER FUNCTION @extschema@.jobq_await_many(bigint[], interval, text, text, boolean) OWNER TO jobq_owner;
REVOKE ALL ON FUNCTION @extschema@.jobq_await_many(bigint[], interval, text, text, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_await_many(bigint[], interval, text, text, boolean)
TO jobq_producer, jobq_monitor;
COMMENT ON FUNCTION @extschema@.jobq_await_many(bigint[], interval, text, text, boolean) IS
    'Wait until all (or any) of the jobs are done; one row per job with its outcome.';

CREATE FUNCTION @extschema@.jobq_await_status()
RETURNS TABLE (awaiting bigint, capacity bigint, wakeups bigint, handovers bigint)
AS 'MODULE_PATHNAME', 'jobq_await_status'
LANGUAGE C VOLATILE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp;

ALTER FUNCTION @extschema@.jobq_await_status() OWNER TO jobq_owner;
REVOKE ALL ON FUNCTION @extschema@.jobq_await_status() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_await_status() TO jobq_monitor;
COMMENT ON FUNCTION @extschema@.jobq_await_status() IS
    'Awaited job ids now and their capacity; entries woken and outcomes handed over since server start.';


/* ========================================================================
 * Completion events: catching up after a reconnect (issue 16,
 * FEATURES-0.2.md 4.4 item 10).
 *
 * jobq_finished_since pages through a queue's finished jobs in
 * (finished_at, id) order from a cursor: ids, states and times only, like
 * the events.  Each finished state is a range of history_queue_state_idx,
 * so it needs no new index (completes pay nothing).  At least once: see
 * doc/sql.md.
 * ======================================================================== */

CREATE FUNCTION @extschema@.jobq_finished_since(
    queue    text,
    since    timestamptz,
    after_id bigint DEFAULT 0,
    max_rows integer DEFAULT 1000)
RETURNS TABLE (id bigint, state text, finished_at timestamptz)
AS 'MODULE_PATHNAME', 'jobq_finished_since'
LANGUAGE C STABLE PARALLEL UNSAFE SECURITY DEFINER ROWS 100
SET search_path = pg_catalog, pg_temp;

ALTER FUNCTION @extschema@.jobq_finished_since(text, timestamptz, bigint, integer) OWNER TO jobq_owner;
REVOKE ALL ON FUNCTION @extschema@.jobq_finished_since(text, timestamptz, bigint, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_finished_since(text, timestamptz, bigint, integer)
TO jobq_producer, jobq_monitor;
COMMENT ON FUNCTION @extschema@.jobq_finished_since(text, timestamptz, bigint, integer) IS
    'The jobs of a queue finished after a (finished_at, id) cursor, in that order: ids and states only.';


/* ========================================================================
 * Schedule runs by index (issue 17): a schedule's runs are the finished
 * jobs whose dedupe key is 'schedule:<name>:...'.  jobq_list with
 * {"key_prefix": "schedule:<name>:"} finds them here, newest first per
 * state (extension/list_filter.h, JOBQ_FILTER_HISTORY_SCHEDULE_SQL), not by
 * a capped scan of the queue's history.  Partial: only scheduled jobs pay
 * for it when they finish.
 * ======================================================================== */

CREATE INDEX history_schedule_idx ON jobq.history
    (queue, (pg_catalog.split_part(dedupe_key, ':', 2)), state, finished_at, id)
    WHERE dedupe_key LIKE 'schedule:%';


/* ========================================================================
 * Queue settings of 0.2.0 (JOBQ_QUEUE_SETTINGS_020 in jobq-contract.h):
 * completion events and reclaiming a dead worker's jobs (issue 16),
 * groups, concurrency and rate limits (issue 19).
 *
 * Columns of jobq.queues after the 0.1.0 ones.  No CHECKs: only jobq's
 * functions write the table, and jobq_create_queue / jobq_alter_queue
 * validate every setting against the contract (queues.c) before writing;
 * the bounds are written once, there.  The DEFAULTs fill the rows of
 * queues that existed before the update and restate the contract's
 * defaults; sql/jobq_queue_settings.sql checks that the two agree.
 *
 * jobq_create_queue and jobq_alter_queue take the new settings as
 * arguments after notify, so a 0.1.0 call (positional or named) means
 * what it meant; jobq_queues() returns them after created_at.  Same C
 * symbols: the C reads the settings its SQL definition passes
 * (PG_NARGS) and the columns this database has.
 * ======================================================================== */

ALTER TABLE jobq.queues
    ADD COLUMN notify_finished         boolean  NOT NULL DEFAULT false,
    ADD COLUMN reclaim_on_worker_death boolean  NOT NULL DEFAULT false,
    ADD COLUMN group_mode              text     NOT NULL DEFAULT 'none',
    ADD COLUMN group_limit             integer  NOT NULL DEFAULT 1,
    ADD COLUMN group_order             text     NOT NULL DEFAULT 'oldest',
    ADD COLUMN fifo_block              text     NOT NULL DEFAULT 'retry_and_dead',
    ADD COLUMN max_running             integer  NOT NULL DEFAULT 0,
    ADD COLUMN rate                    integer  NOT NULL DEFAULT 0,
    ADD COLUMN rate_per                interval NOT NULL DEFAULT '1 second',
    ADD COLUMN rate_burst              integer  NOT NULL DEFAULT 1,
    ADD COLUMN group_rate              integer  NOT NULL DEFAULT 0,
    ADD COLUMN group_rate_per          interval NOT NULL DEFAULT '1 second',
    ADD COLUMN group_rate_burst        integer  NOT NULL DEFAULT 1;

DROP FUNCTION @extschema@.jobq_create_queue(text, interval, integer, interval, interval, interval, interval, boolean);
DROP FUNCTION @extschema@.jobq_alter_queue(text, interval, integer, interval, interval, interval, interval, boolean);
DROP FUNCTION @extschema@.jobq_queues();

-- A NULL setting takes its default (create) or stays as it is (alter).
CREATE FUNCTION @extschema@.jobq_create_queue(
    queue                   text,
    lease                   interval DEFAULT NULL,   -- 5 minutes
    max_attempts            integer  DEFAULT NULL,   -- 25
    backoff_base            interval DEFAULT NULL,   -- 1 second
    backoff_cap             interval DEFAULT NULL,   -- 1 hour
    completed_retention     interval DEFAULT NULL,   -- 1 day
    dead_retention          interval DEFAULT NULL,   -- 14 days
    notify                  boolean  DEFAULT NULL,   -- true
    notify_finished         boolean  DEFAULT NULL,   -- false
    reclaim_on_worker_death boolean  DEFAULT NULL,   -- false
    group_mode              text     DEFAULT NULL,   -- 'none'
    group_limit             integer  DEFAULT NULL,   -- 1
    group_order             text     DEFAULT NULL,   -- 'oldest'
    fifo_block              text     DEFAULT NULL,   -- 'retry_and_dead'
    max_running             integer  DEFAULT NULL,   -- 0: no limit
    rate                    integer  DEFAULT NULL,   -- 0: no limit
    rate_per                interval DEFAULT NULL,   -- 1 second
    rate_burst              integer  DEFAULT NULL,   -- 1
    group_rate              integer  DEFAULT NULL,   -- 0: no limit
    group_rate_per          interval DEFAULT NULL,   -- 1 second
    group_rate_burst        integer  DEFAULT NULL)   -- 1
RETURNS void
AS 'MODULE_PATHNAME', 'jobq_create_queue'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_alter_queue(
    queue                   text,
    lease                   interval DEFAULT NULL,
    max_attempts            integer  DEFAULT NULL,
    backoff_base            interval DEFAULT NULL,
    backoff_cap             interval DEFAULT NULL,
    completed_retention     interval DEFAULT NULL,
    dead_retention          interval DEFAULT NULL,
    notify                  boolean  DEFAULT NULL,
    notify_finished         boolean  DEFAULT NULL,
    reclaim_on_worker_death boolean  DEFAULT NULL,
    group_mode              text     DEFAULT NULL,
    group_limit             integer  DEFAULT NULL,
    group_order             text     DEFAULT NULL,
    fifo_block              text     DEFAULT NULL,
    max_running             integer  DEFAULT NULL,
    rate                    integer  DEFAULT NULL,
    rate_per                interval DEFAULT NULL,
    rate_burst              integer  DEFAULT NULL,
    group_rate              integer  DEFAULT NULL,
    group_rate_per          interval DEFAULT NULL,
    group_rate_burst        integer  DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'jobq_alter_queue'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_queues()
RETURNS TABLE (
    queue                   text,
    lease                   interval,
    max_attempts            integer,
    backoff_base            interval,
    backoff_cap             interval,
    completed_retention     interval,
    dead_retention          interval,
    paused                  boolean,
    notify                  boolean,
    created_at              timestamptz,
    notify_finished         boolean,
    reclaim_on_worker_death boolean,
    group_mode              text,
    group_limit             integer,
    group_order             text,
    fifo_block              text,
    max_running             integer,
    rate                    integer,
    rate_per                interval,
    rate_burst              integer,
    group_rate              integer,
    group_rate_per          interval,
    group_rate_burst        integer)
AS 'MODULE_PATHNAME', 'jobq_queues'
LANGUAGE C STABLE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

ALTER FUNCTION @extschema@.jobq_create_queue(text, interval, integer, interval, interval, interval, interval, boolean, boolean, boolean, text, integer, text, text, integer, integer, interval, integer, integer, interval, integer) OWNER TO jobq_owner;
ALTER FUNCTION @extschema@.jobq_alter_queue(text, interval, integer, interval, interval, interval, interval, boolean, boolean, boolean, text, integer, text, text, integer, integer, interval, integer, integer, interval, integer) OWNER TO jobq_owner;
ALTER FUNCTION @extschema@.jobq_queues() OWNER TO jobq_owner;
REVOKE ALL ON FUNCTION
    @extschema@.jobq_create_queue(text, interval, integer, interval, interval, interval, interval, boolean, boolean, boolean, text, integer, text, text, integer, integer, interval, integer, integer, interval, integer),
    @extschema@.jobq_alter_queue(text, interval, integer, interval, interval, interval, interval, boolean, boolean, boolean, text, integer, text, text, integer, integer, interval, integer, integer, interval, integer),
    @extschema@.jobq_queues()
FROM PUBLIC;
GRANT EXECUTE ON FUNCTION
    @extschema@.jobq_create_queue(text, interval, integer, interval, interval, interval, interval, boolean, boolean, boolean, text, integer, text, text, integer, integer, interval, integer, integer, interval, integer),
    @extschema@.jobq_alter_queue(text, interval, integer, interval, interval, interval, interval, boolean, boolean, boolean, text, integer, text, text, integer, integer, interval, integer, integer, interval, integer)
TO jobq_admin;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_queues() TO jobq_monitor;
COMMENT ON FUNCTION @extschema@.jobq_create_queue(text, interval, integer, interval, interval, interval, interval, boolean, boolean, boolean, text, integer, text, text, integer, integer, interval, integer, integer, interval, integer) IS
    'Creates a queue; a NULL setting takes its default.';
COMMENT ON FUNCTION @extschema@.jobq_alter_queue(text, interval, integer, interval, interval, interval, interval, boolean, boolean, boolean, text, integer, text, text, integer, integer, interval, integer, integer, interval, integer) IS
    'Changes the settings of a queue; a NULL setting stays as it is.';
COMMENT ON FUNCTION @extschema@.jobq_queues() IS
    'Lists every queue with its settings.';


/* ========================================================================
 * Queue consumers (issue 16, FEATURES-0.2.md 5.4 item 7).
 *
 * jobq_queue_consumers(): per queue, the live registered workers that name
 * it (and of them those asked to claim, with their slots) next to its due
 * and running jobs; unserved says jobs are due, the queue is not paused and
 * no live registered worker claims from it (extension/consumers.c).  Reads
 * the counts of jobq_counts and the registry; writes nothing.
 * ======================================================================== */

CREATE FUNCTION @extschema@.jobq_queue_consumers()
RETURNS TABLE (queue text, paused boolean, ready bigint, running bigint,
               workers integer, claiming integer, slots bigint, unserved boolean)
AS 'MODULE_PATHNAME', 'jobq_queue_consumers'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER ROWS 10
SET search_path = pg_catalog, pg_temp;

ALTER FUNCTION @extschema@.jobq_queue_consumers() OWNER TO jobq_owner;
REVOKE ALL ON FUNCTION @extschema@.jobq_queue_consumers() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_queue_consumers() TO jobq_worker, jobq_monitor;
COMMENT ON FUNCTION @extschema@.jobq_queue_consumers() IS
    'Per queue, the live registered workers that name it and their slots, and whether due jobs have nobody to claim them.';



/* ========================================================================
 * Vacuum of jobq.jobs on a deep backlog (issue 20, part 3).
 *
 * A claim reads jobs_claim_idx from its head, and every job it took left
 * an entry there that only an index vacuum removes (no insert ever lands
 * at the head, so btree's own deletion of dead entries never runs there).
 * Scans mark such entries dead and skip them, but still read their pages:
 * a claim walks every page of entries that died since the last vacuum
 * (bench/findings.md, "Backlog").  With 0.1.0's settings a deep backlog
 * made that unbounded twice over:
 *  - autovacuum_vacuum_scale_factor = 0.01 waited for 1 % of the table
 *    to die: 100,000 drained jobs at 10 M ready ones;
 *  - then PostgreSQL's INDEX_CLEANUP auto skipped the index pass whenever
 *    fewer than 2 % of the heap's pages had dead rows, which drained jobs
 *    at the head of a large table never reach: the heap was vacuumed, the
 *    claim index kept its dead head.
 * Now autovacuum comes after 1,000 dead rows whatever the size (as 0.1.0
 * did for a small table), and always vacuums the indexes.  The cost is an
 * index pass over the whole table at each autovacuum (seconds at 10 M
 * jobs, nothing at the small live table jobq keeps normally).
 * ======================================================================== */
ALTER TABLE jobq.jobs SET (autovacuum_vacuum_scale_factor = 0, vacuum_index_cleanup = on);

/* ========================================================================
 * Groups: per-key FIFO and per-key concurrency limits (issue 19,
 * FEATURES-0.2.md section 6; doc/groups.md).
 *
 * A job may carry a group_key (1 to JOBQ_GROUP_KEY_MAX bytes) when its
 * queue's group_mode is fifo or limit.  jobq.groups keeps one row per
 * (queue, key) that has live jobs: the next group_seq to hand out, how
 * many of its jobs run, its head (the ready job with the lowest
 * group_seq), whether a dead head blocks it, and whether it is eligible
 * (head present, running below the limit, not blocked).  An enqueue takes
 * the group row's lock (INSERT ... ON CONFLICT DO UPDATE) and holds it to
 * commit while it draws the job's group_seq: FIFO order is the order in
 * which enqueuing transactions commit, not id order.  Claims of a grouped
 * queue walk groups_eligible_idx (or groups_round_robin_idx), so groups
 * that run at their limit or are blocked are never walked over; every
 * change of a grouped job updates its group row in the same transaction.
 * Ungrouped jobs never touch jobq.groups nor jobq.group_jobs, and
 * jobq.jobs gets no index for groups.
 *
 * history keeps group_key and group_seq so that a dead job that is
 * retried goes back into its group, in its place.
 * ======================================================================== */

ALTER TABLE jobq.jobs ADD COLUMN group_key text, ADD COLUMN group_seq bigint;
ALTER TABLE jobq.history ADD COLUMN group_key text, ADD COLUMN group_seq bigint;

/*
 * group_jobs: the line of each group, its live jobs in group_seq order;
 * claims and the head read it.  A table of its own rather than an index
 * on jobq.jobs, because every claim updates a job row and with it every
 * index of jobq.jobs, partial or not: an index only grouped jobs enter
 * would still cost every ungrouped claim its opening and its predicate.
 */
CREATE TABLE jobq.group_jobs (
    queue text NOT NULL,
    key   text NOT NULL,
    seq   bigint NOT NULL,
    id    bigint NOT NULL,
    PRIMARY KEY (queue, key, seq)
);

CREATE TABLE jobq.groups (
    queue         text NOT NULL,
    key           text NOT NULL,
    seq_next      bigint NOT NULL,           -- group_seq of the next job enqueued
    running       integer NOT NULL,          -- jobs of the group now running
    head_id       bigint,                    -- the ready job with the lowest group_seq
    head_priority smallint,
    head_run_at   timestamptz,
    blocked_by    bigint,                    -- a dead head that holds the group (fifo_block)
    blocked_at    timestamptz,
    eligible      boolean NOT NULL,          -- head, running < group_limit, not blocked
    tat           timestamptz,               -- the group's rate (GCRA), NULL: none yet
    last_claim_at timestamptz,               -- round robin serves the longest unserved
    created_at    timestamptz NOT NULL,
    PRIMARY KEY (queue, key)
)
-- every claim, complete and enqueue of a group updates its row: room for
-- HOT updates, and vacuum early
WITH (fillfactor = 50,
      autovacuum_vacuum_scale_factor = 0.01,
      autovacuum_vacuum_threshold = 1000,
      autovacuum_vacuum_cost_delay = 0);

-- claims, group_order oldest: the groups whose head may run, best first
CREATE INDEX groups_eligible_idx ON jobq.groups (queue, head_priority, head_run_at, head_id)
    WHERE eligible;
-- claims, group_order round_robin: the group served longest ago first
CREATE INDEX groups_round_robin_idx ON jobq.groups (queue, head_priority, last_claim_at NULLS FIRST, key)
    WHERE eligible;
-- jobq_blocked_groups, and the groups a retried or cancelled dead job held
CREATE INDEX groups_blocked_idx ON jobq.groups (blocked_by)
    WHERE blocked_by IS NOT NULL;

ALTER TABLE jobq.groups OWNER TO jobq_owner;
ALTER TABLE jobq.group_jobs OWNER TO jobq_owner;
REVOKE ALL ON TABLE jobq.groups, jobq.group_jobs FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('jobq.groups'::pg_catalog.regclass, '');
SELECT pg_catalog.pg_extension_config_dump('jobq.group_jobs'::pg_catalog.regclass, '');

/*
 * queue_rates: the rate of a queue with a rate setting, by GCRA: tat, the
 * theoretical arrival time of its next claim (claim_limits.c), written by
 * claims under the lock that serializes the queue's limited claims.  Not a
 * column of jobq.queues: every change there invalidates every backend's
 * cache of queue settings.
 */
CREATE TABLE jobq.queue_rates (
    queue text PRIMARY KEY,
    tat   timestamptz NOT NULL
) WITH (fillfactor = 50);

ALTER TABLE jobq.queue_rates OWNER TO jobq_owner;
REVOKE ALL ON TABLE jobq.queue_rates FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('jobq.queue_rates'::pg_catalog.regclass, '');

-- enqueue with a group key: the same functions with one parameter more
DROP FUNCTION @extschema@.jobq_enqueue(text, jsonb, timestamptz, interval, integer, integer, text);
DROP FUNCTION @extschema@.jobq_enqueue_batch(text, jsonb[], timestamptz, interval, integer, integer, text[]);

CREATE FUNCTION @extschema@.jobq_enqueue(
    queue        text,
    payload      jsonb,
    run_at       timestamptz DEFAULT NULL,
    delay        interval    DEFAULT NULL,
    priority     integer     DEFAULT 0,
    max_attempts integer     DEFAULT NULL,
    dedupe_key   text        DEFAULT NULL,
    group_key    text        DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'jobq_enqueue'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_enqueue_batch(
    queue        text,
    payloads     jsonb[],
    run_at       timestamptz DEFAULT NULL,
    delay        interval    DEFAULT NULL,
    priority     integer     DEFAULT 0,
    max_attempts integer     DEFAULT NULL,
    dedupe_keys  text[]      DEFAULT NULL,
    group_keys   text[]      DEFAULT NULL)
RETURNS TABLE (id bigint, created boolean)
AS 'MODULE_PATHNAME', 'jobq_enqueue_batch'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

ALTER FUNCTION @extschema@.jobq_enqueue(text, jsonb, timestamptz, interval, integer, integer, text, text)
    OWNER TO jobq_owner;
ALTER FUNCTION @extschema@.jobq_enqueue_batch(text, jsonb[], timestamptz, interval, integer, integer, text[], text[])
    OWNER TO jobq_owner;
REVOKE ALL ON FUNCTION @extschema@.jobq_enqueue(text, jsonb, timestamptz, interval, integer, integer, text, text),
    @extschema@.jobq_enqueue_batch(text, jsonb[], timestamptz, interval, integer, integer, text[], text[])
FROM PUBLIC;
GRANT EXECUTE ON FUNCTION
    @extschema@.jobq_enqueue(text, jsonb, timestamptz, interval, integer, integer, text, text),
    @extschema@.jobq_enqueue_batch(text, jsonb[], timestamptz, interval, integer, integer, text[], text[])
TO jobq_producer;
COMMENT ON FUNCTION @extschema@.jobq_enqueue(text, jsonb, timestamptz, interval, integer, integer, text, text) IS
    'Enqueues one job and returns its id (the live job''s id when the dedupe key is taken).';
COMMENT ON FUNCTION @extschema@.jobq_enqueue_batch(text, jsonb[], timestamptz, interval, integer, integer, text[], text[]) IS
    'Enqueues many jobs in one call and returns each id with whether it was created.';

-- back-pressure: jobq_fail with rate_limit_for (fail_rate_limited.c)
DROP FUNCTION @extschema@.jobq_fail(bigint, uuid, text, interval, boolean);

CREATE FUNCTION @extschema@.jobq_fail(
    id             bigint,
    token          uuid,
    error          text     DEFAULT NULL,
    retry_in       interval DEFAULT NULL,
    permanent      boolean  DEFAULT false,
    rate_limit_for interval DEFAULT NULL)
RETURNS text
AS 'MODULE_PATHNAME', 'jobq_fail'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

ALTER FUNCTION @extschema@.jobq_fail(bigint, uuid, text, interval, boolean, interval) OWNER TO jobq_owner;
REVOKE ALL ON FUNCTION @extschema@.jobq_fail(bigint, uuid, text, interval, boolean, interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_fail(bigint, uuid, text, interval, boolean, interval) TO jobq_worker;
COMMENT ON FUNCTION @extschema@.jobq_fail(bigint, uuid, text, interval, boolean, interval) IS
    'Records a failed attempt: retried after backoff or dead; with rate_limit_for, ready again after it without counting the attempt, holding the rate.';

-- the groups of a queue for operators (groups_admin.c)
CREATE FUNCTION @extschema@.jobq_groups(
    queue        text,
    only_blocked boolean DEFAULT false,
    max_rows     integer DEFAULT 100,
    after_key    text    DEFAULT NULL)
RETURNS TABLE (
    key           text,
    running       integer,
    live          bigint,
    live_capped   boolean,
    head_id       bigint,
    head_run_at   timestamptz,
    blocked_by    bigint,
    blocked_at    timestamptz,
    eligible      boolean,
    tat           timestamptz,
    last_claim_at timestamptz)
AS 'MODULE_PATHNAME', 'jobq_groups'
LANGUAGE C STABLE PARALLEL UNSAFE SECURITY DEFINER ROWS 100
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_blocked_groups(queue text)
RETURNS TABLE (key text, blocked_by bigint, since timestamptz, error text)
AS 'MODULE_PATHNAME', 'jobq_blocked_groups'
LANGUAGE C STABLE PARALLEL UNSAFE SECURITY DEFINER ROWS 10
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_skip_head(queue text, key text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'jobq_skip_head'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

ALTER FUNCTION @extschema@.jobq_groups(text, boolean, integer, text) OWNER TO jobq_owner;
ALTER FUNCTION @extschema@.jobq_blocked_groups(text) OWNER TO jobq_owner;
ALTER FUNCTION @extschema@.jobq_skip_head(text, text) OWNER TO jobq_owner;
REVOKE ALL ON FUNCTION @extschema@.jobq_groups(text, boolean, integer, text),
    @extschema@.jobq_blocked_groups(text), @extschema@.jobq_skip_head(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_groups(text, boolean, integer, text),
    @extschema@.jobq_blocked_groups(text)
TO jobq_monitor;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_skip_head(text, text) TO jobq_admin;
COMMENT ON FUNCTION @extschema@.jobq_groups(text, boolean, integer, text) IS
    'A page of the groups of a queue in key order: running and live jobs, head, block, rate.';
COMMENT ON FUNCTION @extschema@.jobq_blocked_groups(text) IS
    'The groups of a queue that a dead head blocks, oldest first, with its last error.';
CREATE FUNCTION @extschema@.jobq_groups_reconcile(queue text DEFAULT NULL, max_groups integer DEFAULT 1000)
RETURNS TABLE (queue text, key text, field text, stored text, actual text)
AS 'MODULE_PATHNAME', 'jobq_groups_reconcile'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

ALTER FUNCTION @extschema@.jobq_groups_reconcile(text, integer) OWNER TO jobq_owner;
REVOKE ALL ON FUNCTION @extschema@.jobq_groups_reconcile(text, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_groups_reconcile(text, integer) TO jobq_admin;
COMMENT ON FUNCTION @extschema@.jobq_groups_reconcile(text, integer) IS
    'Checks the stored state of groups against their jobs, fixes it, and returns each fix.';
COMMENT ON FUNCTION @extschema@.jobq_skip_head(text, text) IS
    'Cancels what holds a group (its dead head, or its ready head while none of its jobs runs).';


/* ========================================================================
 * Flows: jobs that wait for other jobs (issue 18, FEATURES-0.2.md section
 * 3; doc/flows.md).
 *
 * A job enqueued with dependencies is in the live state 'waiting' until
 * every dependency is satisfied; the transaction that finishes its last
 * dependency makes it 'ready' (extension/flows.c).  jobq.deps holds one
 * row per edge (child waits for parent) with the edge's failure policy,
 * its state and, once satisfied, the parent's outcome (its result, or its
 * final state and error), which the child reads with jobq_dep_results.
 *
 * jobs.flow_id: the flow a job belongs to, set on every job that has a
 * dependency or a dependent, NULL otherwise.  It is the one flag a
 * finishing transition reads: a job whose flow_id is NULL completes with
 * exactly the statements of a job without flows.  pending_deps: the
 * number of the job's edges not yet satisfied (waiting iff > 0).
 * history.flow_id: the flow of a finished job.  jobq.flow_jobs: the
 * members of each flow.
 *
 * The enum value 'waiting' cannot be used in this script (ALTER TYPE ...
 * ADD VALUE is not usable before its transaction commits), so nothing
 * here names it; the C names it at run time.
 * ======================================================================== */

ALTER TYPE jobq.job_state ADD VALUE IF NOT EXISTS 'waiting';

ALTER TABLE jobq.jobs
    ADD COLUMN flow_id      bigint,     -- NULL: outside every flow
    ADD COLUMN pending_deps integer;    -- edges not yet satisfied; NULL: none ever
ALTER TABLE jobq.history
    ADD COLUMN flow_id      bigint;

CREATE TABLE jobq.deps (
    child      bigint NOT NULL,
    parent     bigint NOT NULL,
    on_failure text   NOT NULL,         -- cancel, ignore or wait
    state      text   NOT NULL,         -- pending, satisfied, blocked or cascaded
    outcome    jsonb,                   -- satisfied: the parent's outcome
    PRIMARY KEY (child, parent)
);
-- a finishing parent finds its children; (parent, child) and the primary
-- key both answer one edge exactly, whichever the planner takes
CREATE INDEX deps_parent_idx ON jobq.deps (parent, child);
-- the repair pass (jobq_flow_repair): the edges still open, a small set;
-- (parent, child) as the other two, so that any answers one edge exactly
CREATE INDEX deps_open_idx ON jobq.deps (parent, child) WHERE state IN ('pending', 'blocked');

-- the jobs of each flow, live or finished (jobq_flow_jobs, jobq_cancel_flow),
-- written when a job joins a flow; no index on flow_id of jobq.jobs or
-- jobq.history instead: every enqueue, claim and complete of every job
-- would pay for its predicate (3 % of an enqueue's instructions)
CREATE TABLE jobq.flow_jobs (
    flow_id bigint NOT NULL,
    id      bigint NOT NULL,
    PRIMARY KEY (flow_id, id)
);

ALTER TABLE jobq.deps OWNER TO jobq_owner;
ALTER TABLE jobq.flow_jobs OWNER TO jobq_owner;
SELECT pg_catalog.pg_extension_config_dump('jobq.deps'::pg_catalog.regclass, '');
SELECT pg_catalog.pg_extension_config_dump('jobq.flow_jobs'::pg_catalog.regclass, '');

-- jobq_enqueue gains depends_on, on_dep_failure and flow_id, at the end
-- with defaults (after the groups' group_key): a call without them is
-- unchanged, and runs jobq_enqueue's C path
DROP FUNCTION @extschema@.jobq_enqueue(text, jsonb, timestamptz, interval, integer, integer, text, text);
CREATE FUNCTION @extschema@.jobq_enqueue(
    queue          text,
    payload        jsonb,
    run_at         timestamptz DEFAULT NULL,
    delay          interval    DEFAULT NULL,
    priority       integer     DEFAULT 0,
    max_attempts   integer     DEFAULT NULL,
    dedupe_key     text        DEFAULT NULL,
    group_key      text        DEFAULT NULL,
    depends_on     bigint[]    DEFAULT NULL,
    on_dep_failure text        DEFAULT 'cancel',
    flow_id        bigint      DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'jobq_enqueue_0_2'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

-- jobq_retry(id) gains with_dependents
DROP FUNCTION @extschema@.jobq_retry(bigint);
CREATE FUNCTION @extschema@.jobq_retry(id bigint, with_dependents boolean DEFAULT false)
RETURNS boolean
AS 'MODULE_PATHNAME', 'jobq_retry_0_2'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_dep_results(id bigint, token uuid)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'jobq_dep_results'
LANGUAGE C STABLE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

-- jobq_counts gains its last column, waiting
DROP FUNCTION @extschema@.jobq_counts(text);
CREATE FUNCTION @extschema@.jobq_counts(queue text DEFAULT NULL)
RETURNS TABLE (queue text, paused boolean, ready bigint, delayed bigint, running bigint,
               expired bigint, completed bigint, dead bigint, cancelled bigint,
               oldest_ready_age interval, exact boolean, as_of timestamptz, waiting bigint)
AS 'MODULE_PATHNAME', 'jobq_counts'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

ALTER FUNCTION @extschema@.jobq_enqueue(text, jsonb, timestamptz, interval, integer, integer, text,
                                        text, bigint[], text, bigint) OWNER TO jobq_owner;
ALTER FUNCTION @extschema@.jobq_retry(bigint, boolean) OWNER TO jobq_owner;
ALTER FUNCTION @extschema@.jobq_dep_results(bigint, uuid) OWNER TO jobq_owner;
ALTER FUNCTION @extschema@.jobq_counts(text) OWNER TO jobq_owner;
REVOKE ALL ON FUNCTION
    @extschema@.jobq_enqueue(text, jsonb, timestamptz, interval, integer, integer, text,
                             text, bigint[], text, bigint),
    @extschema@.jobq_retry(bigint, boolean),
    @extschema@.jobq_dep_results(bigint, uuid),
    @extschema@.jobq_counts(text)
FROM PUBLIC;
GRANT EXECUTE ON FUNCTION
    @extschema@.jobq_enqueue(text, jsonb, timestamptz, interval, integer, integer, text,
                             text, bigint[], text, bigint)
TO jobq_producer;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_retry(bigint, boolean) TO jobq_admin;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_dep_results(bigint, uuid) TO jobq_worker;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_counts(text)
TO jobq_producer, jobq_monitor, jobq_reader;

COMMENT ON FUNCTION @extschema@.jobq_enqueue(text, jsonb, timestamptz, interval, integer, integer, text,
                                             text, bigint[], text, bigint) IS
    'Enqueues one job and returns its id (the live job''s id when the dedupe key is taken); with depends_on it waits for those jobs.';
COMMENT ON FUNCTION @extschema@.jobq_retry(bigint, boolean) IS
    'Makes a dead job ready again, attempts back to 0; with_dependents brings back the dependents its failure cancelled.';
COMMENT ON FUNCTION @extschema@.jobq_dep_results(bigint, uuid) IS
    'The outcomes of a running job''s satisfied dependencies, keyed by job id, while the token holds the job.';
COMMENT ON FUNCTION @extschema@.jobq_counts(text) IS
    'Counts the jobs of each queue by state at a cost independent of history; exact says whether every number is exact.';

-- a whole graph in one call; a flow's jobs; cancelling a flow
CREATE FUNCTION @extschema@.jobq_flow(jobs jsonb)
RETURNS TABLE (ref text, id bigint, created boolean)
AS 'MODULE_PATHNAME', 'jobq_flow'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_flow_jobs(flow_id bigint)
RETURNS TABLE (id bigint, queue text, state text, depends_on bigint[], dep_states text[],
               pending_deps integer, enqueued_at timestamptz, finished_at timestamptz,
               dedupe_key text)
AS 'MODULE_PATHNAME', 'jobq_flow_jobs'
LANGUAGE C STABLE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_cancel_flow(flow_id bigint)
RETURNS bigint
AS 'MODULE_PATHNAME', 'jobq_cancel_flow'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

ALTER FUNCTION @extschema@.jobq_flow(jsonb) OWNER TO jobq_owner;
ALTER FUNCTION @extschema@.jobq_flow_jobs(bigint) OWNER TO jobq_owner;
ALTER FUNCTION @extschema@.jobq_cancel_flow(bigint) OWNER TO jobq_owner;
REVOKE ALL ON FUNCTION @extschema@.jobq_flow(jsonb), @extschema@.jobq_flow_jobs(bigint),
    @extschema@.jobq_cancel_flow(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_flow(jsonb) TO jobq_producer;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_flow_jobs(bigint) TO jobq_monitor, jobq_reader;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_cancel_flow(bigint) TO jobq_admin;
COMMENT ON FUNCTION @extschema@.jobq_flow(jsonb) IS
    'Enqueues a graph of jobs (local refs, dependencies on refs and on existing jobs) in one call, as one flow; refuses a cycle, naming it.';
COMMENT ON FUNCTION @extschema@.jobq_flow_jobs(bigint) IS
    'The jobs of a flow, live and finished, with their dependencies and the states of those edges.';
COMMENT ON FUNCTION @extschema@.jobq_cancel_flow(bigint) IS
    'Cancels every ready and waiting job of a flow and returns how many; running jobs finish.';

-- the repair pass (the sweeper runs it every jobq.flow_repair_interval)
CREATE FUNCTION @extschema@.jobq_flow_repair(max_rows integer DEFAULT 1000)
RETURNS TABLE (resolved bigint, unblocked bigint, readied bigint)
AS 'MODULE_PATHNAME', 'jobq_flow_repair'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION @extschema@.jobq_flow_repair(integer) OWNER TO jobq_owner;
REVOKE ALL ON FUNCTION @extschema@.jobq_flow_repair(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_flow_repair(integer) TO jobq_admin;
COMMENT ON FUNCTION @extschema@.jobq_flow_repair(integer) IS
    'Resolves the dependents of jobs that ended without resolving them, unblocks edges of live jobs, readies waiting jobs with nothing to wait for.';


/* ========================================================================
 * Groups and limits in the counts and metrics (issue 19, FEATURES-0.2.md
 * 6.4.11; doc/groups.md): jobq_counts gains groups_active (groups with a
 * running job) and groups_blocked (groups a dead head holds), after
 * waiting, so readers by position are unchanged (group_counts.c); the
 * metrics count the claim attempts held back by max_running (limit_held)
 * and by a rate (rate_held).
 * ======================================================================== */
DROP FUNCTION @extschema@.jobq_counts(text);
CREATE FUNCTION @extschema@.jobq_counts(queue text DEFAULT NULL)
RETURNS TABLE (queue text, paused boolean, ready bigint, delayed bigint, running bigint,
               expired bigint, completed bigint, dead bigint, cancelled bigint,
               oldest_ready_age interval, exact boolean, as_of timestamptz, waiting bigint,
               groups_active bigint, groups_blocked bigint)
AS 'MODULE_PATHNAME', 'jobq_counts'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION @extschema@.jobq_counts(text) OWNER TO jobq_owner;
REVOKE ALL ON FUNCTION @extschema@.jobq_counts(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_counts(text)
TO jobq_producer, jobq_monitor, jobq_reader;
COMMENT ON FUNCTION @extschema@.jobq_counts(text) IS
    'Counts the jobs of each queue by state at a cost independent of history; exact says whether every number is exact; for grouped queues, the groups running a job and those a dead head blocks.';

-- the claims limits held back: two metric counters more (limit_held,
-- rate_held, JOBQ_METRIC_COUNTERS), and their columns in pg_stat_jobq,
-- last so that readers by position are unchanged
CREATE OR REPLACE VIEW @extschema@.pg_stat_jobq AS
SELECT s.queue, s.paused, s.ready, s.delayed, s.running, s.expired,
       s.completed, s.dead, s.cancelled, s.oldest_ready_age,
       m.bucket AS minute,
       m.counters[1] AS minute_enqueued,
       m.counters[2] AS minute_claimed,
       m.counters[3] AS minute_completed,
       m.counters[4] AS minute_retried,
       m.counters[5] AS minute_dead,
       m.counters[6] AS minute_cancelled,
       m.counters[7] AS minute_lease_expired,
       m.counters[8] AS minute_stale_acks,
       m.wait_p50 AS minute_wait_p50, m.wait_p95 AS minute_wait_p95,
       m.wait_p99 AS minute_wait_p99,
       m.run_p50 AS minute_run_p50, m.run_p95 AS minute_run_p95,
       m.run_p99 AS minute_run_p99,
       m.complete AS minute_complete,
       m.counters[9] AS minute_limit_held,
       m.counters[10] AS minute_rate_held
FROM @extschema@.jobq_stats(NULL) s
LEFT JOIN @extschema@.jobq_metrics(
        NULL,
        pg_catalog.date_trunc('minute', pg_catalog.now()) OPERATOR(pg_catalog.-) '1 minute'::pg_catalog.interval,
        pg_catalog.date_trunc('minute', pg_catalog.now()),
        '1 minute'::pg_catalog.interval) m
  ON m.queue OPERATOR(pg_catalog.=) s.queue;


/* ================================================================= * Claims tell a job's flow (issue 18; doc/flows.md, "Under jobq-worker").
 *
 * jobq_claim's result gains flow_id, after 0.1.0's columns: NULL for a
 * job outside every flow, so that a worker knows from the claim itself
 * which of the jobs it claimed may have dependency results to hand to
 * its handler (jobq_dep_results), and pays nothing for the others.  The C
 * symbols stay: the C fills the column when the definition has it
 * (claim.c, put_claimed_rows; direct_claim.c), so the old definition
 * keeps its eight columns until this script replaces it.  The RETURNS
 * TABLE of a function cannot change in place: drop and create, with
 * 0.1.0's ownership, privileges and comments.
 * ======================================================================== */

DROP FUNCTION @extschema@.jobq_claim(text, text, integer, interval, interval);
DROP FUNCTION @extschema@.jobq_claim(text[], text, integer, interval, interval);

CREATE FUNCTION @extschema@.jobq_claim(
    queues   text,
    worker   text     DEFAULT NULL,
    max_jobs integer  DEFAULT 1,
    lease    interval DEFAULT NULL,
    wait     interval DEFAULT NULL)
RETURNS TABLE (
    id           bigint,
    queue        text,
    payload      jsonb,
    attempt      integer,
    max_attempts integer,
    token        uuid,
    locked_until timestamptz,
    enqueued_at  timestamptz,
    flow_id      bigint)
AS 'MODULE_PATHNAME', 'jobq_claim'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER ROWS 1
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_claim(
    queues   text[],
    worker   text     DEFAULT NULL,
    max_jobs integer  DEFAULT 1,
    lease    interval DEFAULT NULL,
    wait     interval DEFAULT NULL)
RETURNS TABLE (
    id           bigint,
    queue        text,
    payload      jsonb,
    attempt      integer,
    max_attempts integer,
    token        uuid,
    locked_until timestamptz,
    enqueued_at  timestamptz,
    flow_id      bigint)
AS 'MODULE_PATHNAME', 'jobq_claim_any'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER ROWS 1
SET search_path = pg_catalog, pg_temp;

ALTER FUNCTION @extschema@.jobq_claim(text, text, integer, interval, interval) OWNER TO jobq_owner;
ALTER FUNCTION @extschema@.jobq_claim(text[], text, integer, interval, interval) OWNER TO jobq_owner;
REVOKE ALL ON FUNCTION @extschema@.jobq_claim(text, text, integer, interval, interval),
    @extschema@.jobq_claim(text[], text, integer, interval, interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_claim(text, text, integer, interval, interval),
    @extschema@.jobq_claim(text[], text, integer, interval, interval) TO jobq_worker;
COMMENT ON FUNCTION @extschema@.jobq_claim(text, text, integer, interval, interval) IS
    'Claims ready jobs of one queue, each with a lease, a fresh token and its flow.';
COMMENT ON FUNCTION @extschema@.jobq_claim(text[], text, integer, interval, interval) IS
    'Claims ready jobs of several queues, each with a lease, a fresh token and its flow.';


/* ========================================================================
 * Spawning and checkpoints (issue 18, FEATURES-0.2.md section 3.4 items 8
 * and 11; doc/flows.md).
 *
 * jobq_spawn: a running job enqueues jobs (jobq_flow's format), fenced by
 * its token (extension/spawn.c).  jobq.spawns maps (spawner, ref) to the
 * job spawned, so that a later attempt of the spawner that spawns the
 * same ref gets that job back instead of a duplicate.
 *
 * jobq_checkpoint / jobq_checkpoint_read: progress a running job stores
 * and its next attempt reads (extension/checkpoint.c), one row per job in
 * jobq.checkpoints: a table of its own, so that jobs that never
 * checkpoint keep their rows and statements as they were.
 * ======================================================================== */

CREATE TABLE jobq.spawns (
    parent bigint NOT NULL,             -- the spawning job
    ref    text   NOT NULL,             -- the element's ref in jobq_spawn
    child  bigint NOT NULL,             -- the job spawned (or that held its dedupe key)
    PRIMARY KEY (parent, ref)
);

-- rewritten at every checkpoint: room for HOT updates
CREATE TABLE jobq.checkpoints (
    id       bigint      PRIMARY KEY,   -- the job
    attempt  integer     NOT NULL,      -- the attempt that stored it
    saved_at timestamptz NOT NULL,
    state    jsonb       NOT NULL
) WITH (fillfactor = 70);

ALTER TABLE jobq.spawns OWNER TO jobq_owner;
ALTER TABLE jobq.checkpoints OWNER TO jobq_owner;
SELECT pg_catalog.pg_extension_config_dump('jobq.spawns'::pg_catalog.regclass, '');
SELECT pg_catalog.pg_extension_config_dump('jobq.checkpoints'::pg_catalog.regclass, '');

CREATE FUNCTION @extschema@.jobq_spawn(spawned_by bigint, token uuid, jobs jsonb)
RETURNS TABLE (ref text, id bigint, created boolean)
AS 'MODULE_PATHNAME', 'jobq_spawn'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_checkpoint(id bigint, token uuid, state jsonb)
RETURNS boolean
AS 'MODULE_PATHNAME', 'jobq_checkpoint'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_checkpoint_read(id bigint, token uuid)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'jobq_checkpoint_read'
LANGUAGE C STABLE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

ALTER FUNCTION @extschema@.jobq_spawn(bigint, uuid, jsonb) OWNER TO jobq_owner;
ALTER FUNCTION @extschema@.jobq_checkpoint(bigint, uuid, jsonb) OWNER TO jobq_owner;
ALTER FUNCTION @extschema@.jobq_checkpoint_read(bigint, uuid) OWNER TO jobq_owner;
REVOKE ALL ON FUNCTION @extschema@.jobq_spawn(bigint, uuid, jsonb),
    @extschema@.jobq_checkpoint(bigint, uuid, jsonb),
    @extschema@.jobq_checkpoint_read(bigint, uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.jobq_spawn(bigint, uuid, jsonb),
    @extschema@.jobq_checkpoint(bigint, uuid, jsonb),
    @extschema@.jobq_checkpoint_read(bigint, uuid) TO jobq_worker;
COMMENT ON FUNCTION @extschema@.jobq_spawn(bigint, uuid, jsonb) IS
    'A running job enqueues jobs (jobq_flow''s format) while its token holds it; a later attempt spawning the same refs gets those jobs back.';
COMMENT ON FUNCTION @extschema@.jobq_checkpoint(bigint, uuid, jsonb) IS
    'Stores a running job''s progress while the token holds it, for its next attempt; false when the token is stale.';
COMMENT ON FUNCTION @extschema@.jobq_checkpoint_read(bigint, uuid) IS
    'The progress a job''s last checkpoint stored, while the token holds the job; NULL when none or stale.';


/* ========================================================================
 * max_running by slot rows (issue 19; doc/groups.md, "max_running").
 *
 * queue_slots holds max_running rows per queue with that limit, made and
 * cut by jobq_create_queue / jobq_alter_queue (claim_slots.c).  A slot is
 * free when the job it names (job_id, token) is not running with that
 * token: a finished, failed, swept or retried job frees its slot by
 * leaving the running state, so completes write nothing here.  A claim of
 * a queue with max_running and no rate locks free slots FOR NO KEY
 * UPDATE SKIP LOCKED instead of one lock per queue, so the queue's claimers run side
 * by side; two claimers never hold the same slot, so at most max_running
 * jobs run.  Not a column of jobq.queues: every change there invalidates
 * every backend's cache of queue settings.  No queue has max_running
 * before this update (the column is new), so no rows to make here.
 * ======================================================================== */

CREATE TABLE jobq.queue_slots (
    queue  text NOT NULL,
    slot   integer NOT NULL,
    job_id bigint,                 -- the job that took the slot last (NULL: never)
    token  uuid,                   -- and its token then
    PRIMARY KEY (queue, slot)
) WITH (fillfactor = 50);

ALTER TABLE jobq.queue_slots OWNER TO jobq_owner;
REVOKE ALL ON TABLE jobq.queue_slots FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('jobq.queue_slots'::pg_catalog.regclass, '');


/* ========================================================================
 * Install checks: planted functions and pre-existing roles (issue 13,
 * items 2 and 3).  THIS SECTION STAYS LAST: later sections go above it, so
 * that it sees every function of the release.
 *
 * CREATE EXTENSION runs jobq--0.1.0.sql and then this script in one
 * transaction, so an error here leaves nothing installed; ALTER EXTENSION
 * UPDATE from 0.1.0 runs the same checks.  doc/operations.md ("Security")
 * gives the policy and its reasons.
 *
 * Planted functions.  A function of another owner in the extension's
 * schema with the name of one of jobq's functions wins or ties the call's
 * overload resolution: jobq_enqueue(text, text) takes jobq_enqueue('q',
 * '{}') with the payload, a jobq_stats() makes jobq_stats() ambiguous.
 * PostgreSQL refuses only an exact signature match, so jobq refuses every
 * non-member function (of any kind: pg_proc holds aggregates and
 * procedures too) that shares a name with a member.  Calls never resolve
 * to operators, and jobq defines none, so operators cannot capture a call.
 *
 * Roles.  Each jobq role is a role that logins are granted; anyone
 * granted it can SET ROLE to it and use its attributes, so a pre-existing
 * one with SUPERUSER, BYPASSRLS, REPLICATION, CREATEROLE or CREATEDB is
 * refused.  jobq_admin and jobq_owner must not log in (an admin login is
 * a standing key to every queue; the owner is the SECURITY DEFINER
 * identity); jobq_owner must not inherit nor be a member of any role (its
 * rights must be exactly the tables').  A LOGIN on the other roles, and a
 * membership of any of them in a role outside jobq's, is allowed with a
 * WARNING: some sites log workers in as jobq_worker, and the membership
 * may be the operator's own choice.
 * ======================================================================== */

DO $install_checks$
DECLARE
    ext_schema oid;
    planted    text;
    used       text;
    r          record;
    bad        text[];
BEGIN
    SELECT e.extnamespace INTO ext_schema
    FROM pg_catalog.pg_extension e WHERE e.extname OPERATOR(pg_catalog.=) 'jobq';

    -- planted functions: same name as a member, in the same schema, not a member
    SELECT p.oid::pg_catalog.regprocedure::text, p.proname::text INTO planted, used
    FROM pg_catalog.pg_proc p
    WHERE p.pronamespace OPERATOR(pg_catalog.=) ext_schema
      AND p.proname IN (SELECT m.proname
                        FROM pg_catalog.pg_proc m
                        JOIN pg_catalog.pg_depend d
                          ON d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
                         AND d.objid OPERATOR(pg_catalog.=) m.oid
                         AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
                         AND d.deptype OPERATOR(pg_catalog.=) 'e'
                        JOIN pg_catalog.pg_extension e
                          ON e.oid OPERATOR(pg_catalog.=) d.refobjid
                         AND e.extname OPERATOR(pg_catalog.=) 'jobq')
      AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d
                      JOIN pg_catalog.pg_extension e
                        ON e.oid OPERATOR(pg_catalog.=) d.refobjid
                       AND e.extname OPERATOR(pg_catalog.=) 'jobq'
                      WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
                        AND d.objid OPERATOR(pg_catalog.=) p.oid
                        AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
                        AND d.deptype OPERATOR(pg_catalog.=) 'e')
    ORDER BY 1 LIMIT 1;
    IF planted IS NOT NULL THEN
        RAISE EXCEPTION 'function % exists in the schema of extension jobq and is not part of it', planted
            USING ERRCODE = 'duplicate_function',
                  DETAIL = pg_catalog.format('A call of %s could run it instead of jobq''s function.', used),
                  HINT = 'Drop the function, or install jobq into a schema that only trusted roles can create objects in.';
    END IF;

    -- pre-existing roles
    FOR r IN
        SELECT a.rolname::text AS rolname, a.oid, a.rolsuper, a.rolbypassrls, a.rolreplication,
               a.rolcreaterole, a.rolcreatedb, a.rolcanlogin, a.rolinherit
        FROM pg_catalog.pg_roles a
        WHERE a.rolname OPERATOR(pg_catalog.=) ANY (ARRAY['jobq_owner', 'jobq_admin', 'jobq_producer',
                                                          'jobq_worker', 'jobq_monitor', 'jobq_reader'])
        ORDER BY a.rolname
    LOOP
        bad := ARRAY[]::text[];
        IF r.rolsuper THEN bad := bad OPERATOR(pg_catalog.||) 'SUPERUSER'::text; END IF;
        IF r.rolbypassrls THEN bad := bad OPERATOR(pg_catalog.||) 'BYPASSRLS'::text; END IF;
        IF r.rolreplication THEN bad := bad OPERATOR(pg_catalog.||) 'REPLICATION'::text; END IF;
        IF r.rolcreaterole THEN bad := bad OPERATOR(pg_catalog.||) 'CREATEROLE'::text; END IF;
        IF r.rolcreatedb THEN bad := bad OPERATOR(pg_catalog.||) 'CREATEDB'::text; END IF;
        IF r.rolcanlogin AND r.rolname OPERATOR(pg_catalog.=) ANY (ARRAY['jobq_owner', 'jobq_admin']) THEN
            bad := bad OPERATOR(pg_catalog.||) 'LOGIN'::text;
        END IF;
        IF r.rolinherit AND r.rolname OPERATOR(pg_catalog.=) 'jobq_owner' THEN
            bad := bad OPERATOR(pg_catalog.||) 'INHERIT'::text;
        END IF;
        IF pg_catalog.cardinality(bad) OPERATOR(pg_catalog.>) 0 THEN
            RAISE EXCEPTION 'role "%" exists with %', r.rolname, pg_catalog.array_to_string(bad, ', ')
                USING ERRCODE = 'insufficient_privilege',
                      DETAIL = 'Every member of a jobq role can SET ROLE to it and use these attributes.',
                      HINT = pg_catalog.format('ALTER ROLE %I NO%s, then run the command again.',
                                               r.rolname, pg_catalog.array_to_string(bad, ' NO'));
        END IF;

        IF r.rolcanlogin THEN
            RAISE WARNING 'role "%" can log in', r.rolname
                USING DETAIL = 'jobq roles are meant to be granted to login roles, not to log in themselves.';
        END IF;

        -- memberships of this role in other roles: none for the owner; for
        -- the others, only those the install itself makes (admin in the
        -- roles it gathers) go without a warning
        SELECT pg_catalog.string_agg(g.rolname::text, ', ' ORDER BY g.rolname) INTO used
        FROM pg_catalog.pg_auth_members m
        JOIN pg_catalog.pg_roles g ON g.oid OPERATOR(pg_catalog.=) m.roleid
        WHERE m.member OPERATOR(pg_catalog.=) r.oid
          AND NOT (r.rolname OPERATOR(pg_catalog.=) 'jobq_admin'
                   AND g.rolname OPERATOR(pg_catalog.=) ANY (ARRAY['jobq_producer', 'jobq_worker',
                                                                   'jobq_monitor', 'jobq_reader']));
        IF used IS NOT NULL AND r.rolname OPERATOR(pg_catalog.=) 'jobq_owner' THEN
            RAISE EXCEPTION 'role "jobq_owner" exists and is a member of %', used
                USING ERRCODE = 'insufficient_privilege',
                      DETAIL = 'jobq''s functions run as jobq_owner; it must hold the rights of the jobq tables and no others.',
                      HINT = 'REVOKE those roles FROM jobq_owner, then run the command again.';
        ELSIF used IS NOT NULL THEN
            RAISE WARNING 'role "%" is a member of %', r.rolname, used
                USING DETAIL = pg_catalog.format('Every role granted %s gets the rights of those roles too.', r.rolname);
        END IF;
    END LOOP;
END
$install_checks$;
