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
