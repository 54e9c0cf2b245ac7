-- jobq_setup: install the extension (every later test uses it) and audit what
-- CREATE EXTENSION created: functions with owner, SECURITY DEFINER, volatility,
-- parallel safety and proconfig; the roles; the tables and their privileges.
-- This is also the X4 audit (every SECURITY DEFINER function owned by the
-- NOLOGIN, non-superuser jobq_owner; search_path pinned to pg_catalog, pg_temp)
-- and the PUBLIC half of X3 (PUBLIC can execute no jobq function and has no
-- privilege on schema jobq or anything in it).
\set VERBOSITY terse
SET client_min_messages = warning;

-- IF NOT EXISTS: "make installcheck-upgrade" runs this suite again in a
-- database where jobq_upgrade_setup created 0.1.0 and updated it; the audit
-- below must then show exactly what a fresh install shows.
CREATE EXTENSION IF NOT EXISTS jobq;

SELECT e.extname, e.extversion, e.extrelocatable, n.nspname AS schema
FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
WHERE e.extname = 'jobq';

-- Every member object of the extension, by kind.
SELECT pg_describe_object(d.classid, d.objid, d.objsubid) AS object
FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
  AND e.extname = 'jobq'
ORDER BY 1;

-- The functions: owner, SECURITY DEFINER, language, volatility, parallel
-- safety, strictness and configuration.
CREATE VIEW regress_jobq_functions AS
SELECT p.oid, p.oid::regprocedure::text AS function,
       pg_get_userbyid(p.proowner) AS owner, p.prosecdef AS secdef,
       l.lanname AS lang, p.provolatile AS vol, p.proparallel AS par,
       p.proisstrict AS strict, p.proconfig, p.proacl
FROM pg_proc p
JOIN pg_language l ON l.oid = p.prolang
JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
                AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'jobq';

SELECT function, owner, secdef, lang, vol, par, strict, proconfig
FROM regress_jobq_functions ORDER BY function;

-- X4: SECURITY DEFINER functions not owned by jobq_owner (expect none)
SELECT function FROM regress_jobq_functions
WHERE secdef AND owner <> 'jobq_owner';
-- X4: functions without the pinned search_path (expect none)
SELECT function, proconfig FROM regress_jobq_functions
WHERE proconfig IS DISTINCT FROM ARRAY['search_path=pg_catalog, pg_temp'];
-- X4: functions that are not SECURITY DEFINER or not C (expect only
-- jobq_wait_stats, which reads shared memory and no table, jobq_limits,
-- which returns constants, and jobq_server_version, which reads
-- pg_extension, so all three run with the caller's rights, the internal
-- jobq._statement, which returns statement texts to superusers, and the
-- trigger function jobq.queues_changed, which only registers a cache
-- invalidation)
SELECT function FROM regress_jobq_functions WHERE NOT secdef OR lang <> 'c';

-- The owner role: NOLOGIN, no special attributes, no members.
SELECT rolname, rolsuper, rolcanlogin, rolinherit, rolcreaterole, rolcreatedb,
       rolreplication, rolbypassrls
FROM pg_roles WHERE rolname LIKE 'jobq\_%' ORDER BY rolname;
SELECT count(*) AS owner_members
FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.roleid
WHERE r.rolname = 'jobq_owner';
-- Role memberships among the jobq roles
SELECT r.rolname AS role, mr.rolname AS member
FROM pg_auth_members m
JOIN pg_roles r ON r.oid = m.roleid
JOIN pg_roles mr ON mr.oid = m.member
WHERE r.rolname LIKE 'jobq\_%' OR mr.rolname LIKE 'jobq\_%'
ORDER BY 1, 2;

-- X3 (PUBLIC): functions PUBLIC may execute (expect 0), also checked on
-- the ACL itself (a NULL proacl would mean the default: PUBLIC EXECUTE).
SELECT count(*) AS public_executable
FROM regress_jobq_functions WHERE has_function_privilege('public', oid, 'EXECUTE');
SELECT count(*) AS default_acl FROM regress_jobq_functions WHERE proacl IS NULL;
SELECT count(*) AS public_acl_entries
FROM regress_jobq_functions, aclexplode(proacl) a WHERE a.grantee = 0;

-- Which role may execute which function (direct grants only)
SELECT f.function, string_agg(pg_get_userbyid(a.grantee) || ':' || a.privilege_type,
                              ', ' ORDER BY pg_get_userbyid(a.grantee)) AS grants
FROM regress_jobq_functions f, aclexplode(f.proacl) a
WHERE pg_get_userbyid(a.grantee) <> 'jobq_owner'
GROUP BY f.function ORDER BY f.function;

-- Schema jobq: owned by the installing superuser, PUBLIC has nothing.
SELECT n.nspowner = (SELECT oid FROM pg_roles WHERE rolname = current_user) AS owned_by_installer,
       has_schema_privilege('public', 'jobq', 'USAGE') AS public_usage,
       has_schema_privilege('public', 'jobq', 'CREATE') AS public_create,
       has_schema_privilege('jobq_owner', 'jobq', 'USAGE') AS owner_usage,
       has_schema_privilege('jobq_admin', 'jobq', 'USAGE') AS admin_usage
FROM pg_namespace n WHERE n.nspname = 'jobq';

-- Relations of schema jobq: owner, and PUBLIC's privileges (expect none).
SELECT c.relname, c.relkind, pg_get_userbyid(c.relowner) AS owner,
       CASE WHEN c.relkind IN ('r', 'S') THEN
         has_table_privilege('public', c.oid, 'SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER')
       END AS public_any,
       CASE WHEN c.relkind = 'r' THEN
         has_table_privilege('jobq_admin', c.oid, 'SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER')
       END AS admin_any,
       c.relacl
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'jobq'
ORDER BY c.relname;
SELECT pg_get_userbyid(t.typowner) AS job_state_owner
FROM pg_type t WHERE t.oid = 'jobq.job_state'::regtype;

-- The GUC (defined when the library loads: CREATE EXTENSION loads it, a
-- session that finds jobq installed loads it at its first call, or here)
LOAD 'jobq';
SHOW jobq.max_payload_size;
SELECT context FROM pg_settings WHERE name = 'jobq.max_payload_size';

DROP VIEW regress_jobq_functions;

-- What a statement did, one string: 'ok: ' and its value, or its SQLSTATE
-- and message, with every match of mask (a regular expression, NULL: none)
-- in the message as N (ids and sizes that differ from run to run).
CREATE FUNCTION regress_outcome(stmt text, mask text DEFAULT NULL) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    r text;
BEGIN
    EXECUTE stmt INTO r;
    RETURN 'ok: ' || coalesce(r, '<null>');
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || CASE WHEN mask IS NULL THEN SQLERRM
                                    ELSE regexp_replace(SQLERRM, mask, 'N', 'g') END;
END
$$;

-- The EXPLAIN (COSTS OFF) text of a statement, one string: for the tests
-- that check the plans of the C's statements (jobq_explain,
-- jobq_list_explain, jobq_schedules, jobq_schedule_runs, jobq_groups).
CREATE FUNCTION regress_plan(stmt text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    line text;
    plan text := '';
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || stmt LOOP
        plan := plan || line || E'\n';
    END LOOP;
    RETURN plan;
END
$$;
