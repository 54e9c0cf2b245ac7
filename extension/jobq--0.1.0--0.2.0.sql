/* extension/jobq--0.1.0--0.2.0.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION jobq UPDATE TO '0.2.0'" to load this file. \quit

/*
 * Release 0.2.0.  Every schema change of 0.2.0 goes into this script;
 * jobq--0.1.0.sql is released and never changes (make checkver).  The
 * security rules of the base script hold here too: pinned search_path,
 * schema-qualified names, no CREATE OR REPLACE of an object we may not own.
 */
SET LOCAL search_path = pg_catalog, pg_temp;
