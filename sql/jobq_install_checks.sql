-- jobq_install_checks (issue 13, items 2 and 3): CREATE EXTENSION (and
-- ALTER EXTENSION UPDATE from 0.1.0) refuse a function planted in the
-- target schema under one of jobq's names, and pre-existing jobq roles
-- with dangerous attributes or memberships; they warn where refusing would
-- be too strict (doc/operations.md, "Security"). Runs after jobq_hostile,
-- drops the extension, tries each case, and leaves it installed again.
\set VERBOSITY terse
SET client_min_messages = warning;

DROP EXTENSION jobq;

-- try_install(version): installs jobq in a subtransaction, reports the
-- outcome (the warnings show as they are raised) and always rolls back
CREATE FUNCTION regress_try_install(version text DEFAULT NULL) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    BEGIN
        IF version IS NULL THEN
            EXECUTE 'CREATE EXTENSION jobq';
        ELSE
            EXECUTE format('CREATE EXTENSION jobq VERSION %L', version);
            EXECUTE 'ALTER EXTENSION jobq UPDATE';
        END IF;
        RAISE EXCEPTION USING ERRCODE = 'P0001', MESSAGE = 'installed';
    EXCEPTION WHEN OTHERS THEN
        IF SQLSTATE = 'P0001' AND SQLERRM = 'installed' THEN
            RETURN 'installed';
        END IF;
        RETURN SQLSTATE || ': ' || SQLERRM;
    END;
END
$$;

SELECT regress_try_install() AS clean_install;

-- 1. planted functions, by a role that may create in public
CREATE ROLE regress_jobq_planter;
GRANT CREATE ON SCHEMA public TO regress_jobq_planter;
SET ROLE regress_jobq_planter;
-- takes jobq_enqueue('q', '{"s":1}') (unknown literals prefer text)
CREATE FUNCTION public.jobq_enqueue(text, text) RETURNS bigint LANGUAGE sql AS 'SELECT 0::bigint';
RESET ROLE;
SELECT regress_try_install() AS planted_enqueue;
-- the upgrade from 0.1.0 refuses it too (0.1.0 itself installed it)
SELECT regress_try_install('0.1.0') AS planted_enqueue_update;
DROP FUNCTION public.jobq_enqueue(text, text);
SET ROLE regress_jobq_planter;
-- makes jobq_stats() ambiguous
CREATE FUNCTION public.jobq_stats() RETURNS void LANGUAGE sql AS '';
RESET ROLE;
SELECT regress_try_install() AS planted_stats;
DROP FUNCTION public.jobq_stats();
SET ROLE regress_jobq_planter;
-- a procedure or an aggregate with an API name is refused as well
CREATE PROCEDURE public.jobq_complete(bigint) LANGUAGE sql AS '';
CREATE AGGREGATE public.jobq_list(int) (SFUNC = int4pl, STYPE = int);
RESET ROLE;
SELECT regress_try_install() AS planted_procedure;
DROP PROCEDURE public.jobq_complete(bigint);
SELECT regress_try_install() AS planted_aggregate;
DROP AGGREGATE public.jobq_list(int);
-- a name jobq does not use, or an API name in another schema, is fine
SET ROLE regress_jobq_planter;
CREATE FUNCTION public.jobq_enqueue_mail(text) RETURNS void LANGUAGE sql AS '';
RESET ROLE;
CREATE SCHEMA regress_other;
CREATE FUNCTION regress_other.jobq_enqueue(text, text) RETURNS bigint LANGUAGE sql AS 'SELECT 0::bigint';
SELECT regress_try_install() AS other_names;
DROP FUNCTION public.jobq_enqueue_mail(text);
DROP SCHEMA regress_other CASCADE;
REVOKE CREATE ON SCHEMA public FROM regress_jobq_planter;
DROP ROLE regress_jobq_planter;

-- 2. pre-existing roles: each refused attribute on each role
CREATE TABLE regress_role_cases (role text, attr text, outcome text);
DO $$
DECLARE
    r text;
    a text;
BEGIN
    FOREACH r IN ARRAY ARRAY['jobq_owner', 'jobq_admin', 'jobq_producer', 'jobq_worker',
                             'jobq_monitor', 'jobq_reader'] LOOP
        FOREACH a IN ARRAY ARRAY['SUPERUSER', 'BYPASSRLS', 'REPLICATION', 'CREATEROLE',
                                 'CREATEDB', 'LOGIN', 'INHERIT'] LOOP
            IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN
                EXECUTE format('CREATE ROLE %I NOLOGIN %s', r,
                               CASE WHEN r = 'jobq_owner' THEN 'NOINHERIT' ELSE '' END);
            END IF;
            -- INHERIT is the default of every role but the owner
            CONTINUE WHEN a = 'INHERIT' AND r <> 'jobq_owner';
            EXECUTE format('ALTER ROLE %I %s', r, a);
            INSERT INTO regress_role_cases VALUES (r, a, regress_try_install());
            EXECUTE format('ALTER ROLE %I NO%s', r, a);
        END LOOP;
    END LOOP;
END
$$;
SELECT * FROM regress_role_cases ORDER BY role, attr;
DROP TABLE regress_role_cases;

-- two attributes at once: the message names both, the hint undoes both
ALTER ROLE jobq_worker SUPERUSER CREATEDB;
\set VERBOSITY default
CREATE EXTENSION jobq;
\set VERBOSITY terse
ALTER ROLE jobq_worker NOSUPERUSER NOCREATEDB;

-- 3. memberships: the owner may be a member of no role; another role's
-- membership outside jobq's roles warns (the install goes on)
CREATE ROLE regress_jobq_group;
GRANT regress_jobq_group TO jobq_owner;
SELECT regress_try_install() AS owner_member_of;
REVOKE regress_jobq_group FROM jobq_owner;
GRANT pg_read_all_data TO jobq_owner;
SELECT regress_try_install() AS owner_member_of_predefined;
REVOKE pg_read_all_data FROM jobq_owner;
GRANT regress_jobq_group TO jobq_worker;
SELECT regress_try_install() AS worker_member_of;
REVOKE regress_jobq_group FROM jobq_worker;
GRANT regress_jobq_group TO jobq_admin;
SELECT regress_try_install() AS admin_member_of;
REVOKE regress_jobq_group FROM jobq_admin;
DROP ROLE regress_jobq_group;

-- 4. nothing was left behind by the refused installs, and a real install
-- works: the roles are as the install makes them
SELECT count(*) AS extensions FROM pg_extension WHERE extname = 'jobq';
SELECT count(*) AS jobq_schemas FROM pg_namespace WHERE nspname = 'jobq';
DROP FUNCTION regress_try_install(text);
CREATE EXTENSION jobq;
SELECT rolname, rolsuper, rolcanlogin, rolinherit, rolcreaterole, rolcreatedb,
       rolreplication, rolbypassrls
FROM pg_roles WHERE rolname LIKE 'jobq\_%' ORDER BY rolname;
SELECT jobq_create_queue('checked');
SELECT jobq_enqueue('checked', '{}') > 0 AS enqueued;
SELECT jobq_drop_queue('checked', force => true);
