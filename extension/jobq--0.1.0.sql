/* extension/jobq--0.1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION jobq" to load this file. \quit

/*
 * Security notes (see README "Security"):
 *  - Everything below runs with search_path = pg_catalog, pg_temp, so no
 *    operator, function or type can be captured from a schema an untrusted
 *    role can write to.  Our own objects are always schema-qualified.
 *  - CREATE SCHEMA jobq (not IF NOT EXISTS): a pre-created, possibly hostile
 *    schema makes the install fail instead of being adopted.
 *  - No CREATE OR REPLACE anywhere.
 *  - The tables belong to jobq_owner, a NOLOGIN role that is not a
 *    superuser; the API functions are SECURITY DEFINER owned by that role,
 *    so callers need no privilege on the tables themselves.
 */
SET LOCAL search_path = pg_catalog, pg_temp;

/*
 * Roles are cluster-wide and outlive DROP EXTENSION, so they are created
 * only when missing.  jobq_owner is checked when it already exists: a role
 * that can log in, is privileged, or has members would let someone act as
 * the owner of every job.
 */
DO $roles$
DECLARE
    r text;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles
                   WHERE rolname OPERATOR(pg_catalog.=) 'jobq_owner') THEN
        CREATE ROLE jobq_owner NOLOGIN NOINHERIT;
    ELSIF EXISTS (SELECT 1 FROM pg_catalog.pg_roles
                  WHERE rolname OPERATOR(pg_catalog.=) 'jobq_owner'
                    AND (rolcanlogin OR rolsuper OR rolcreaterole
                         OR rolcreatedb OR rolreplication OR rolbypassrls))
       OR EXISTS (SELECT 1 FROM pg_catalog.pg_auth_members m
                  JOIN pg_catalog.pg_roles o ON o.oid OPERATOR(pg_catalog.=) m.roleid
                  WHERE o.rolname OPERATOR(pg_catalog.=) 'jobq_owner') THEN
        RAISE EXCEPTION 'role "jobq_owner" exists and is not a plain NOLOGIN role without members'
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'Drop or fix the role, then run CREATE EXTENSION again.';
    END IF;

    FOREACH r IN ARRAY ARRAY['jobq_producer', 'jobq_worker', 'jobq_monitor', 'jobq_admin'] LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles
                       WHERE rolname OPERATOR(pg_catalog.=) r) THEN
            EXECUTE pg_catalog.format('CREATE ROLE %I NOLOGIN', r);
        END IF;
    END LOOP;
END
$roles$;

GRANT jobq_producer, jobq_worker, jobq_monitor TO jobq_admin;

CREATE SCHEMA jobq;
REVOKE ALL ON SCHEMA jobq FROM PUBLIC;
GRANT USAGE ON SCHEMA jobq TO jobq_owner;

CREATE TYPE jobq.job_state AS ENUM ('ready', 'running', 'completed', 'dead', 'cancelled');

/*
 * queues: one row per named queue and its settings.  Queue names are data,
 * never identifiers; the allow-list keeps them printable and short enough
 * for a NOTIFY channel ("jobq." || name).
 */
CREATE TABLE jobq.queues (
    name                text PRIMARY KEY
        CONSTRAINT queues_name_check
        CHECK (octet_length(name) BETWEEN 1 AND 48
               AND name ~ '^[a-z0-9]+([_-][a-z0-9]+)*$'),
    lease               interval NOT NULL
        CHECK (lease BETWEEN interval '1 second' AND interval '24 hours'),
    max_attempts        integer NOT NULL CHECK (max_attempts BETWEEN 1 AND 1000),
    backoff_base        interval NOT NULL
        CHECK (backoff_base BETWEEN interval '0' AND interval '1 day'),
    backoff_cap         interval NOT NULL
        CHECK (backoff_cap BETWEEN backoff_base AND interval '365 days'),
    completed_retention interval NOT NULL
        CHECK (completed_retention BETWEEN interval '0' AND interval '3650 days'),
    dead_retention      interval NOT NULL
        CHECK (dead_retention BETWEEN interval '0' AND interval '3650 days'),
    paused              boolean NOT NULL DEFAULT false,
    notify              boolean NOT NULL DEFAULT true,
    created_at          timestamptz NOT NULL
);

/*
 * stale_acks: how many state changes were refused for a stale token, per
 * queue.  One row per (queue, backend slot): a backend only ever updates
 * its own slot's row, so counting never makes two workers wait on each
 * other or deadlock with their job-row locks.  jobq_stats sums the slots.
 */
CREATE TABLE jobq.stale_acks (
    queue text NOT NULL,
    slot  integer NOT NULL,
    count bigint NOT NULL,
    PRIMARY KEY (queue, slot)
);

/*
 * jobs: live jobs only (ready, running).  Finished jobs leave this table, so
 * the cost of a claim does not grow with history and vacuum keeps up.
 * Delayed jobs are ready jobs whose run_at is in the future.
 *
 * No CHECK constraints here nor on history: only jobq's functions write these
 * tables (no role has DML on them), and they validate every value before
 * writing.  PostgreSQL re-reads a table's CHECK expressions from their stored
 * text on every statement that writes it; on enqueue that cost about a fifth
 * of the CPU (measured with perf: pg_strtok and strtoll at the top).  The
 * rules they would state are listed per column.
 */
CREATE TABLE jobq.jobs (
    id           bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    queue        text NOT NULL,
    state        jobq.job_state NOT NULL DEFAULT 'ready', -- ready or running
    priority     smallint NOT NULL DEFAULT 0,             -- -1000 .. 1000
    run_at       timestamptz NOT NULL,
    attempt      integer NOT NULL DEFAULT 0,              -- >= 0, counted at claim
    max_attempts integer NOT NULL,                        -- 1 .. 1000
    token        uuid,                                    -- set iff running
    locked_until timestamptz,                             -- set iff running
    worker       text,
    enqueued_at  timestamptz NOT NULL,
    claimed_at   timestamptz,
    dedupe_key   text,                                    -- NULL or 1 .. 512 bytes
    errors       jsonb,
    payload      jsonb NOT NULL
)
-- Every job row is inserted, updated at claim and deleted at complete, so
-- dead tuples pile up fast in a table that stays small: vacuum it early and
-- unthrottled (it is cheap, the live set is small), and leave room on each
-- page for the new row versions of claims.
WITH (fillfactor = 70,
      autovacuum_vacuum_scale_factor = 0.01,
      autovacuum_vacuum_threshold = 1000,
      autovacuum_vacuum_cost_delay = 0,
      autovacuum_analyze_scale_factor = 0.02);

-- claim: ready jobs of one queue in (priority, run_at, id) order
CREATE INDEX jobs_claim_idx ON jobq.jobs (queue, priority, run_at, id)
    WHERE state = 'ready';
-- sweep: running jobs by lease deadline
CREATE INDEX jobs_lease_idx ON jobq.jobs (locked_until)
    WHERE state = 'running';
-- dedupe: at most one live job per (queue, key)
CREATE UNIQUE INDEX jobs_dedupe_idx ON jobq.jobs (queue, dedupe_key)
    WHERE dedupe_key IS NOT NULL;

/*
 * history: finished jobs (completed, dead, cancelled), kept for the queue's
 * retention.  token is the token whose completion was accepted, so that a
 * repeated complete with the same token is recognised as idempotent.
 */
CREATE TABLE jobq.history (
    id           bigint PRIMARY KEY,
    queue        text NOT NULL,
    state        jobq.job_state NOT NULL,                -- completed, dead or cancelled
    priority     smallint NOT NULL,
    run_at       timestamptz NOT NULL,
    attempt      integer NOT NULL,
    max_attempts integer NOT NULL,
    token        uuid,
    worker       text,
    enqueued_at  timestamptz NOT NULL,
    claimed_at   timestamptz,
    finished_at  timestamptz NOT NULL,
    dedupe_key   text,
    errors       jsonb,
    result       jsonb,
    payload      jsonb NOT NULL
)
-- rows arrive at the rate of completions and leave by retention purges
WITH (autovacuum_vacuum_scale_factor = 0.05,
      autovacuum_analyze_scale_factor = 0.05);

-- retention purge and listing by state
CREATE INDEX history_queue_state_idx ON jobq.history (queue, state, finished_at);

/*
 * Each backend caches the settings that enqueues, one-queue claims and pops
 * read (queue_cache.c).  Any change to jobq.queues, however it is made,
 * invalidates those caches in every backend when it commits.
 */
CREATE FUNCTION jobq.queues_changed()
RETURNS trigger
AS 'MODULE_PATHNAME', 'jobq_queues_changed'
LANGUAGE C
SET search_path = pg_catalog, pg_temp;

CREATE TRIGGER queues_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON jobq.queues
    FOR EACH STATEMENT EXECUTE FUNCTION jobq.queues_changed();
-- also when changes are applied with session_replication_role = replica
-- (logical replication, pg_restore --disable-triggers)
ALTER TABLE jobq.queues ENABLE ALWAYS TRIGGER queues_changed;

ALTER TABLE jobq.queues OWNER TO jobq_owner;
ALTER TABLE jobq.jobs OWNER TO jobq_owner;
ALTER TABLE jobq.history OWNER TO jobq_owner;
ALTER TABLE jobq.stale_acks OWNER TO jobq_owner;
ALTER TYPE jobq.job_state OWNER TO jobq_owner;
REVOKE ALL ON TABLE jobq.queues, jobq.jobs, jobq.history, jobq.stale_acks FROM PUBLIC;

/*
 * The SQL API.  Every function: C, SECURITY DEFINER owned by jobq_owner,
 * search_path pinned, EXECUTE revoked from PUBLIC in this same transaction
 * and granted per role at the end of this script.
 */

-- Queues ---------------------------------------------------------------

-- A NULL setting takes its default (see queues.c), so that a client can
-- pass all settings positionally and leave some to the server.
CREATE FUNCTION @extschema@.jobq_create_queue(
    queue               text,
    lease               interval DEFAULT NULL,   -- 5 minutes
    max_attempts        integer  DEFAULT NULL,   -- 25
    backoff_base        interval DEFAULT NULL,   -- 1 second
    backoff_cap         interval DEFAULT NULL,   -- 1 hour
    completed_retention interval DEFAULT NULL,   -- 1 day
    dead_retention      interval DEFAULT NULL,   -- 14 days
    notify              boolean  DEFAULT NULL)   -- true
RETURNS void
AS 'MODULE_PATHNAME', 'jobq_create_queue'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_alter_queue(
    queue               text,
    lease               interval DEFAULT NULL,
    max_attempts        integer  DEFAULT NULL,
    backoff_base        interval DEFAULT NULL,
    backoff_cap         interval DEFAULT NULL,
    completed_retention interval DEFAULT NULL,
    dead_retention      interval DEFAULT NULL,
    notify              boolean  DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'jobq_alter_queue'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_drop_queue(queue text, force boolean DEFAULT false)
RETURNS void
AS 'MODULE_PATHNAME', 'jobq_drop_queue'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_pause(queue text)
RETURNS void
AS 'MODULE_PATHNAME', 'jobq_pause'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_resume(queue text)
RETURNS void
AS 'MODULE_PATHNAME', 'jobq_resume'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_queues()
RETURNS TABLE (
    queue               text,
    lease               interval,
    max_attempts        integer,
    backoff_base        interval,
    backoff_cap         interval,
    completed_retention interval,
    dead_retention      interval,
    paused              boolean,
    notify              boolean,
    created_at          timestamptz)
AS 'MODULE_PATHNAME', 'jobq_queues'
LANGUAGE C STABLE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

-- Producing ------------------------------------------------------------

CREATE FUNCTION @extschema@.jobq_enqueue(
    queue        text,
    payload      jsonb,
    run_at       timestamptz DEFAULT NULL,
    delay        interval    DEFAULT NULL,
    priority     integer     DEFAULT 0,
    max_attempts integer     DEFAULT NULL,
    dedupe_key   text        DEFAULT NULL)
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
    dedupe_keys  text[]      DEFAULT NULL)
RETURNS TABLE (id bigint, created boolean)
AS 'MODULE_PATHNAME', 'jobq_enqueue_batch'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

-- Consuming ------------------------------------------------------------

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
    enqueued_at  timestamptz)
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
    enqueued_at  timestamptz)
AS 'MODULE_PATHNAME', 'jobq_claim_any'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER ROWS 1
SET search_path = pg_catalog, pg_temp;

-- AT-MOST-ONCE, opt-in (see pop.c and README "jobq_pop"): deletes the
-- jobs it returns; a crash after the commit loses them.
CREATE FUNCTION @extschema@.jobq_pop(queue text, max_jobs integer DEFAULT 1)
RETURNS TABLE (
    id          bigint,
    queue       text,
    payload     jsonb,
    attempt     integer,
    enqueued_at timestamptz)
AS 'MODULE_PATHNAME', 'jobq_pop'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER ROWS 1
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_complete(id bigint, token uuid, result jsonb DEFAULT NULL)
RETURNS boolean
AS 'MODULE_PATHNAME', 'jobq_complete'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_complete_batch(ids bigint[], tokens uuid[], results jsonb[] DEFAULT NULL)
RETURNS SETOF bigint
AS 'MODULE_PATHNAME', 'jobq_complete_batch'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER ROWS 100
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_fail(
    id        bigint,
    token     uuid,
    error     text     DEFAULT NULL,
    retry_in  interval DEFAULT NULL,
    permanent boolean  DEFAULT false)
RETURNS text
AS 'MODULE_PATHNAME', 'jobq_fail'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_extend(id bigint, token uuid, lease interval DEFAULT NULL)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'jobq_extend'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_release(id bigint, token uuid)
RETURNS boolean
AS 'MODULE_PATHNAME', 'jobq_release'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_sweep(queue text DEFAULT NULL, max_rows integer DEFAULT 1000)
RETURNS TABLE (requeued bigint, dead bigint, purged bigint)
AS 'MODULE_PATHNAME', 'jobq_sweep'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

-- Operating ------------------------------------------------------------

CREATE FUNCTION @extschema@.jobq_stats(queue text DEFAULT NULL)
RETURNS TABLE (
    queue            text,
    paused           boolean,
    ready            bigint,
    delayed          bigint,
    running          bigint,
    expired          bigint,
    dead             bigint,
    completed        bigint,
    cancelled        bigint,
    oldest_ready_age interval,
    stale_acks       bigint)
AS 'MODULE_PATHNAME', 'jobq_stats'
LANGUAGE C STABLE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_job(id bigint)
RETURNS TABLE (
    id           bigint,
    queue        text,
    state        text,
    payload      jsonb,
    priority     integer,
    run_at       timestamptz,
    attempt      integer,
    max_attempts integer,
    locked_until timestamptz,
    worker       text,
    enqueued_at  timestamptz,
    claimed_at   timestamptz,
    finished_at  timestamptz,
    dedupe_key   text,
    errors       jsonb,
    result       jsonb)
AS 'MODULE_PATHNAME', 'jobq_job'
LANGUAGE C STABLE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_list(queue text, state text DEFAULT NULL, max_rows integer DEFAULT 100)
RETURNS TABLE (
    id           bigint,
    state        text,
    priority     integer,
    run_at       timestamptz,
    attempt      integer,
    max_attempts integer,
    enqueued_at  timestamptz,
    finished_at  timestamptz,
    last_error   text)
AS 'MODULE_PATHNAME', 'jobq_list'
LANGUAGE C STABLE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_wait_stats()
RETURNS TABLE (preloaded boolean, waiting bigint, wakeups bigint)
AS 'MODULE_PATHNAME', 'jobq_wait_stats'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY INVOKER  -- reads shared memory only
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_retry(id bigint)
RETURNS boolean
AS 'MODULE_PATHNAME', 'jobq_retry'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_retry(queue text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'jobq_retry_queue'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_cancel(id bigint)
RETURNS boolean
AS 'MODULE_PATHNAME', 'jobq_cancel'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION @extschema@.jobq_purge(queue text, state text DEFAULT NULL, older_than interval DEFAULT interval '0')
RETURNS bigint
AS 'MODULE_PATHNAME', 'jobq_purge'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

/*
 * Ownership and privileges.  Ownership moves to jobq_owner so that
 * SECURITY DEFINER runs as a role with no more rights than the tables.
 */
DO $own$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN
        SELECT p.oid::pg_catalog.regprocedure
        FROM pg_catalog.pg_proc p
        JOIN pg_catalog.pg_depend d
          ON d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
         AND d.objid OPERATOR(pg_catalog.=) p.oid
         AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
         AND d.deptype OPERATOR(pg_catalog.=) 'e'
        JOIN pg_catalog.pg_extension e
          ON e.oid OPERATOR(pg_catalog.=) d.refobjid
        WHERE e.extname OPERATOR(pg_catalog.=) 'jobq'
    LOOP
        EXECUTE pg_catalog.format('ALTER FUNCTION %s OWNER TO jobq_owner', f);
        EXECUTE pg_catalog.format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', f);
    END LOOP;
END
$own$;

GRANT EXECUTE ON FUNCTION
    @extschema@.jobq_enqueue(text, jsonb, timestamptz, interval, integer, integer, text),
    @extschema@.jobq_enqueue_batch(text, jsonb[], timestamptz, interval, integer, integer, text[]),
    @extschema@.jobq_stats(text)
TO jobq_producer;

GRANT EXECUTE ON FUNCTION
    @extschema@.jobq_claim(text, text, integer, interval, interval),
    @extschema@.jobq_claim(text[], text, integer, interval, interval),
    @extschema@.jobq_pop(text, integer),
    @extschema@.jobq_complete(bigint, uuid, jsonb),
    @extschema@.jobq_complete_batch(bigint[], uuid[], jsonb[]),
    @extschema@.jobq_fail(bigint, uuid, text, interval, boolean),
    @extschema@.jobq_extend(bigint, uuid, interval),
    @extschema@.jobq_release(bigint, uuid),
    @extschema@.jobq_sweep(text, integer)
TO jobq_worker;

GRANT EXECUTE ON FUNCTION
    @extschema@.jobq_stats(text),
    @extschema@.jobq_job(bigint),
    @extschema@.jobq_list(text, text, integer),
    @extschema@.jobq_queues(),
    @extschema@.jobq_wait_stats()
TO jobq_monitor;

GRANT EXECUTE ON FUNCTION
    @extschema@.jobq_create_queue(text, interval, integer, interval, interval, interval, interval, boolean),
    @extschema@.jobq_alter_queue(text, interval, integer, interval, interval, interval, interval, boolean),
    @extschema@.jobq_drop_queue(text, boolean),
    @extschema@.jobq_pause(text),
    @extschema@.jobq_resume(text),
    @extschema@.jobq_retry(bigint),
    @extschema@.jobq_retry(text),
    @extschema@.jobq_cancel(bigint),
    @extschema@.jobq_purge(text, text, interval)
TO jobq_admin;
