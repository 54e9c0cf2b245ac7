-- jobq_hostile (X1, X2): installing into a hostile database. Runs last and
-- leaves the extension installed again. A pre-existing schema jobq (owned
-- by someone else) makes CREATE EXTENSION fail instead of being adopted; a
-- pre-existing jobq_owner role that can log in, is privileged or has
-- members makes it fail with the documented error (42501); shadow functions
-- and operators planted in public by an unprivileged role are never called,
-- neither by the install script nor by the API (checked through a
-- side-effect table); schema names with quoting characters are refused,
-- others (with a space) are substituted safely.
\set VERBOSITY terse
SET client_min_messages = warning;

DROP EXTENSION jobq;
SELECT count(*) AS functions_left FROM pg_proc WHERE proname LIKE 'jobq\_%';
SELECT rolname FROM pg_roles WHERE rolname LIKE 'jobq\_%' ORDER BY rolname;

CREATE ROLE regress_jobq_hostile;

-- 1. schema jobq already exists, owned by another role, with a planted table
CREATE SCHEMA jobq AUTHORIZATION regress_jobq_hostile;
SET ROLE regress_jobq_hostile;
CREATE TABLE jobq.jobs (id bigint);
RESET ROLE;
\set VERBOSITY sqlstate
CREATE EXTENSION jobq;
\set VERBOSITY terse
CREATE EXTENSION jobq;
SELECT count(*) AS extensions FROM pg_extension WHERE extname = 'jobq';
SELECT pg_get_userbyid(c.relowner) AS planted_owner, count(*) OVER () AS tables_in_jobq
FROM pg_class c WHERE c.relnamespace = 'jobq'::regnamespace AND c.relkind = 'r';
DROP SCHEMA jobq CASCADE;

-- 2. jobq_owner exists but is not a plain NOLOGIN role without members
ALTER ROLE jobq_owner LOGIN;
\set VERBOSITY sqlstate
CREATE EXTENSION jobq;
\set VERBOSITY default
CREATE EXTENSION jobq;
\set VERBOSITY terse
ALTER ROLE jobq_owner NOLOGIN;
SELECT count(*) AS extensions FROM pg_extension WHERE extname = 'jobq';
SELECT count(*) AS jobq_schemas FROM pg_namespace WHERE nspname = 'jobq';
ALTER ROLE jobq_owner SUPERUSER;
CREATE EXTENSION jobq;
ALTER ROLE jobq_owner NOSUPERUSER;
ALTER ROLE jobq_owner CREATEROLE;
CREATE EXTENSION jobq;
ALTER ROLE jobq_owner NOCREATEROLE;
ALTER ROLE jobq_owner BYPASSRLS;
CREATE EXTENSION jobq;
ALTER ROLE jobq_owner NOBYPASSRLS;
GRANT jobq_owner TO regress_jobq_hostile;
CREATE EXTENSION jobq;
REVOKE jobq_owner FROM regress_jobq_hostile;
SELECT count(*) AS extensions FROM pg_extension WHERE extname = 'jobq';

-- 3. shadow objects in public, planted by an unprivileged role; each one
-- records that it was called
CREATE TABLE regress_side_effects (called text);
GRANT INSERT ON regress_side_effects TO PUBLIC;
GRANT CREATE ON SCHEMA public TO regress_jobq_hostile;
SET ROLE regress_jobq_hostile;
CREATE FUNCTION public.gen_random_uuid() RETURNS uuid LANGUAGE sql VOLATILE AS
$$INSERT INTO public.regress_side_effects VALUES ('gen_random_uuid');
  SELECT '00000000-0000-0000-0000-000000000000'::uuid$$;
CREATE FUNCTION public.random() RETURNS float8 LANGUAGE sql VOLATILE AS
$$INSERT INTO public.regress_side_effects VALUES ('random'); SELECT 0::float8$$;
CREATE FUNCTION public.power(float8, float8) RETURNS float8 LANGUAGE sql VOLATILE AS
$$INSERT INTO public.regress_side_effects VALUES ('power'); SELECT 0::float8$$;
CREATE FUNCTION public.jsonb_array_length(jsonb) RETURNS integer LANGUAGE sql VOLATILE AS
$$INSERT INTO public.regress_side_effects VALUES ('jsonb_array_length'); SELECT 0$$;
CREATE FUNCTION public.format(text, regprocedure) RETURNS text LANGUAGE sql VOLATILE AS
$$INSERT INTO public.regress_side_effects VALUES ('format'); SELECT 'SELECT 1'$$;
CREATE FUNCTION public.regress_texteq(text, text) RETURNS boolean LANGUAGE sql VOLATILE AS
$$INSERT INTO public.regress_side_effects VALUES ('='); SELECT $1 OPERATOR(pg_catalog.=) $2$$;
CREATE OPERATOR public.= (LEFTARG = text, RIGHTARG = text, FUNCTION = public.regress_texteq);
CREATE FUNCTION public.regress_nameeq(name, text) RETURNS boolean LANGUAGE sql VOLATILE AS
$$INSERT INTO public.regress_side_effects VALUES ('= name'); SELECT $1 OPERATOR(pg_catalog.=) $2$$;
CREATE OPERATOR public.= (LEFTARG = name, RIGHTARG = text, FUNCTION = public.regress_nameeq);
RESET ROLE;

-- 4. install for real (jobq_owner is a plain role again) and use the API
CREATE EXTENSION jobq;
SELECT jobq_create_queue('hostile', backoff_base => '1 second');
SELECT jobq_enqueue('hostile', '{"n": 1}') > 0 AS enqueued;
SELECT jobq_fail(id, token, 'boom') AS failed FROM jobq_claim('hostile');
SELECT jobq_retry('hostile');
SELECT jobq_enqueue('hostile', '{"n": 2}', priority => -1) > 0 AS enqueued;
SELECT jobq_complete(id, token) AS completed, token <> '00000000-0000-0000-0000-000000000000' AS real_token
FROM jobq_claim('hostile');
SELECT ready, delayed, completed FROM jobq_stats('hostile');
SELECT * FROM jobq_sweep();
-- no shadow was ever called
SELECT count(*) AS shadow_calls FROM regress_side_effects;
SELECT jobq_drop_queue('hostile', force => true);
-- the reinstalled objects pass the X4 audit again (every function but
-- jobq_wait_stats, jobq_await_status, jobq_limits, jobq_server_version,
-- jobq._statement, jobq_cron_next, jobq._metrics_live and the trigger
-- function queues_changed, which touch no jobq table, is SECURITY DEFINER;
-- the procedure jobq_await may not be, nor have a SET clause, since it
-- commits: its C sets both per statement)
SELECT count(*) AS functions,
       count(*) FILTER (WHERE (p.prosecdef OR p.proname IN ('jobq_wait_stats', 'jobq_limits',
                                                            'jobq_server_version', '_statement',
                                                            'jobq_cron_next', 'queues_changed',
                                                            'jobq_await_status', '_metrics_live'))
                        AND pg_get_userbyid(p.proowner) = 'jobq_owner'
                        AND p.proconfig = ARRAY['search_path=pg_catalog, pg_temp']
                        AND NOT has_function_privilege('public', p.oid, 'EXECUTE')
                        OR p.proname = 'jobq_await' AND p.prokind = 'p' AND NOT p.prosecdef
                        AND p.proconfig IS NULL AND pg_get_userbyid(p.proowner) = 'jobq_owner'
                        AND NOT has_function_privilege('public', p.oid, 'EXECUTE')) AS audited
FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
  AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'jobq');
SELECT rolname, rolcanlogin, rolsuper, rolinherit FROM pg_roles WHERE rolname = 'jobq_owner';

SET ROLE regress_jobq_hostile;
DROP OPERATOR public.= (text, text);
DROP OPERATOR public.= (name, text);
DROP FUNCTION public.gen_random_uuid(), public.random(), public.power(float8, float8),
    public.jsonb_array_length(jsonb), public.format(text, regprocedure),
    public.regress_texteq(text, text), public.regress_nameeq(name, text);
RESET ROLE;
REVOKE CREATE ON SCHEMA public FROM regress_jobq_hostile;
DROP TABLE regress_side_effects;

-- 5. X2: the target schema name is substituted quoted; names with quoting
-- characters are refused by PostgreSQL (CVE-2023-39417)
DROP EXTENSION jobq;
CREATE SCHEMA "has space";
CREATE EXTENSION jobq SCHEMA "has space";
SELECT "has space".jobq_create_queue('spaced');
SELECT "has space".jobq_enqueue('spaced', '{}') > 0 AS enqueued;
SELECT queue, ready FROM "has space".jobq_stats('spaced');
DROP EXTENSION jobq;
DROP SCHEMA "has space";
CREATE SCHEMA "has$dollar";
CREATE SCHEMA "has""quote";
CREATE SCHEMA "semi;colon'";
CREATE EXTENSION jobq SCHEMA "has$dollar";
CREATE EXTENSION jobq SCHEMA "has""quote";
CREATE EXTENSION jobq SCHEMA "semi;colon'";
SELECT count(*) AS extensions FROM pg_extension WHERE extname = 'jobq';
DROP SCHEMA "has$dollar", "has""quote", "semi;colon'";

-- 6. a dropped jobq_owner is created again, NOLOGIN; restore for good
DROP ROLE jobq_owner;
CREATE EXTENSION jobq;
SELECT rolname, rolcanlogin, rolsuper, rolinherit FROM pg_roles WHERE rolname = 'jobq_owner';
SELECT n.nspname AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
WHERE e.extname = 'jobq';
SELECT jobq_create_queue('restored');
SELECT jobq_enqueue('restored', '{}') > 0 AS enqueued;
SELECT jobq_drop_queue('restored', force => true);
DROP ROLE regress_jobq_hostile;
