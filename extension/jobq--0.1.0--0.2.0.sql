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
