-- jobq_upgrade (O5): the upgrade path from 0.1.0. In a database of its own,
-- jobq is created at 0.1.0 and this library serves that SQL through a full
-- lifecycle (enqueue, claim, complete, fail, sweep, stats); the database is
-- then filled with live, running and finished jobs and updated with ALTER
-- EXTENSION jobq UPDATE. Every job must still be there, the running job
-- completable with its old token and nothing else, the ready ones claimable.
-- Then a fingerprint of everything jobq puts in a catalog (functions with
-- arguments, results, owner, SECURITY DEFINER, configuration, volatility,
-- grants and comments; relations with owner, options and grants; columns,
-- indexes, constraints, triggers, types, sequences, extension members and
-- pg_dump registrations, every OID resolved to a name) is compared with a
-- fresh install's in a second database: expect no difference either way.
-- Last, two checks on the updated catalog: every table and sequence of jobq
-- is registered for pg_dump, every function has a comment.
\set VERBOSITY terse
SET client_min_messages = warning;

CREATE DATABASE regress_jobq_fresh;
CREATE DATABASE regress_jobq_updated;

-- The fingerprint, one text line per fact; kept in a psql variable so that
-- both databases run the same query.
SELECT $fingerprint$
SELECT 'function ' || n.nspname || '.' || p.proname
       || '(' || pg_get_function_arguments(p.oid) || ') returns '
       || coalesce(pg_get_function_result(p.oid), '-') || ' kind=' || p.prokind::text
       || ' owner=' || pg_get_userbyid(p.proowner) || ' lang=' || l.lanname
       || ' secdef=' || p.prosecdef || ' vol=' || p.provolatile::text
       || ' par=' || p.proparallel::text || ' strict=' || p.proisstrict
       || ' rows=' || p.prorows || ' cost=' || p.procost
       || ' config=' || coalesce(p.proconfig::text, '-')
       || ' acl=' || coalesce(p.proacl::text, '-')
       || ' symbol=' || p.prosrc || ' file=' || coalesce(p.probin, '-')
       || ' comment=' || coalesce(obj_description(p.oid, 'pg_proc'), '-')
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
JOIN pg_language l ON l.oid = p.prolang
JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
 AND d.refclassid = 'pg_extension'::regclass
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'jobq'
UNION ALL
SELECT 'relation ' || c.relname || ' kind=' || c.relkind::text
       || ' owner=' || pg_get_userbyid(c.relowner)
       || ' persistence=' || c.relpersistence::text
       || ' rls=' || c.relrowsecurity || '/' || c.relforcerowsecurity
       || ' options=' || coalesce(c.reloptions::text, '-')
       || ' acl=' || coalesce(c.relacl::text, '-')
       || ' comment=' || coalesce(obj_description(c.oid, 'pg_class'), '-')
FROM pg_class c WHERE c.relnamespace = 'jobq'::regnamespace
UNION ALL
SELECT 'column ' || c.relname || '.' || a.attnum || ' ' || a.attname
       || ' ' || format_type(a.atttypid, a.atttypmod)
       || ' notnull=' || a.attnotnull || ' identity=' || a.attidentity::text
       || ' generated=' || a.attgenerated::text
       || ' default=' || coalesce(pg_get_expr(ad.adbin, ad.adrelid), '-')
       || ' collation=' || coalesce((SELECT collname FROM pg_collation WHERE oid = a.attcollation), '-')
       || ' comment=' || coalesce(col_description(c.oid, a.attnum), '-')
FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
LEFT JOIN pg_attrdef ad ON ad.adrelid = c.oid AND ad.adnum = a.attnum
WHERE c.relnamespace = 'jobq'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'c')
UNION ALL
SELECT 'index ' || pg_get_indexdef(i.indexrelid)
       || ' primary=' || i.indisprimary || ' valid=' || i.indisvalid
FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
WHERE c.relnamespace = 'jobq'::regnamespace
UNION ALL
SELECT 'constraint ' || c.relname || '.' || k.conname || ' ' || k.contype::text
       || ' ' || pg_get_constraintdef(k.oid)
       || ' deferrable=' || k.condeferrable || ' validated=' || k.convalidated
FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
WHERE c.relnamespace = 'jobq'::regnamespace
UNION ALL
SELECT 'trigger ' || pg_get_triggerdef(t.oid) || ' enabled=' || t.tgenabled::text
FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
WHERE c.relnamespace = 'jobq'::regnamespace AND NOT t.tgisinternal
UNION ALL
SELECT 'policy ' || c.relname || '.' || pol.polname || ' ' || pol.polcmd::text
       || ' ' || coalesce(pg_get_expr(pol.polqual, pol.polrelid), '-')
FROM pg_policy pol JOIN pg_class c ON c.oid = pol.polrelid
WHERE c.relnamespace = 'jobq'::regnamespace
UNION ALL
SELECT 'type ' || format_type(t.oid, NULL) || ' type=' || t.typtype::text
       || ' owner=' || pg_get_userbyid(t.typowner)
       || ' acl=' || coalesce(t.typacl::text, '-')
       || ' labels=' || coalesce((SELECT string_agg(en.enumlabel, ',' ORDER BY en.enumsortorder)
                                  FROM pg_enum en WHERE en.enumtypid = t.oid), '-')
FROM pg_type t
WHERE t.typnamespace = 'jobq'::regnamespace AND t.typtype <> 'c'
  AND NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.reltype = t.oid)
  AND t.typelem = 0
UNION ALL
SELECT 'sequence ' || s.seqrelid::regclass || ' ' || format_type(s.seqtypid, NULL)
       || ' start=' || s.seqstart || ' increment=' || s.seqincrement
       || ' min=' || s.seqmin || ' max=' || s.seqmax || ' cache=' || s.seqcache
       || ' cycle=' || s.seqcycle
       || ' owned_by=' || coalesce(pg_get_serial_sequence('jobq.jobs', 'id'), '-')
FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid
WHERE c.relnamespace = 'jobq'::regnamespace
UNION ALL
SELECT 'schema ' || nspname || ' acl=' || coalesce(nspacl::text, '-')
       || ' comment=' || coalesce(obj_description(oid, 'pg_namespace'), '-')
FROM pg_namespace WHERE nspname = 'jobq'
UNION ALL
SELECT 'member ' || pg_describe_object(d.classid, d.objid, d.objsubid)
FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e' AND e.extname = 'jobq'
UNION ALL
SELECT 'dumped ' || x.config::regclass || ' filter=' || coalesce(e.extcondition[x.i], '-')
FROM pg_extension e, unnest(e.extconfig) WITH ORDINALITY AS x(config, i)
WHERE e.extname = 'jobq'
UNION ALL
SELECT 'extension ' || e.extname || ' ' || e.extversion
       || ' relocatable=' || e.extrelocatable
       || ' schema=' || e.extnamespace::regnamespace
       || ' comment=' || coalesce(obj_description(e.oid, 'pg_extension'), '-')
FROM pg_extension e WHERE e.extname = 'jobq'
$fingerprint$ AS fingerprint \gset

-- 1. A fresh install, and its fingerprint.
\c regress_jobq_fresh
SET client_min_messages = warning;
CREATE EXTENSION jobq;
SELECT string_agg(f, E'\n' ORDER BY f) AS fresh_fingerprint, count(*) > 100 AS fresh_has_facts
FROM (:fingerprint) fp(f) \gset
SELECT :'fresh_has_facts' AS fresh_has_facts;

-- 2. 0.1.0, served by this library: a full lifecycle.
\c regress_jobq_updated
SET client_min_messages = warning;
CREATE EXTENSION jobq VERSION '0.1.0';
SELECT extversion FROM pg_extension WHERE extname = 'jobq';
SELECT count(*) AS server_version_functions FROM pg_proc WHERE proname = 'jobq_server_version';

SELECT jobq_create_queue('life', lease => '1 second', max_attempts => 2, backoff_base => '0');
SELECT jobq_enqueue('life', '{"n": 1}') AS id \gset
SELECT c.id = :id AS claimed, c.token AS token FROM jobq_claim('life', 'w') c \gset
SELECT :'claimed' AS claimed, jobq_complete(:id, :'token', '{"ok": true}') AS completed;
SELECT jobq_enqueue('life', '{"n": 2}') AS id \gset
SELECT c.token AS token FROM jobq_claim('life', 'w') c \gset
SELECT jobq_fail(:id, :'token', 'first') AS first_fail;
SELECT c.token AS token FROM jobq_claim('life', 'w') c \gset
SELECT jobq_fail(:id, :'token', 'second') AS second_fail;
SELECT jobq_enqueue('life', '{"n": 3}') AS id \gset
SELECT count(*) AS claimed FROM jobq_claim('life', 'w');
SELECT pg_sleep(1.2);
SELECT * FROM jobq_sweep('life');
SELECT queue, ready, delayed, running, expired, dead, completed, cancelled, stale_acks
FROM jobq_stats('life');

-- 3. Jobs of every kind, kept across the update.
SELECT jobq_create_queue('kept', lease => '1 hour', max_attempts => 5,
                         completed_retention => '7 days', notify => false);
SELECT jobq_enqueue('kept', '{"k": "done"}') AS done_id \gset
SELECT c.token AS token FROM jobq_claim('kept', 'w') c \gset
SELECT jobq_complete(:done_id, :'token') AS completed;
SELECT jobq_cancel(jobq_enqueue('kept', '{"k": "cancelled"}')) AS cancelled;
SELECT jobq_enqueue('kept', '{"k": "running"}') AS run_id \gset
SELECT c.token AS run_token FROM jobq_claim('kept', 'w') c \gset
SELECT jobq_enqueue('kept', '{"k": "delayed"}', delay => '1 day') > 0 AS delayed;
SELECT jobq_enqueue('kept', '{"k": "ready"}', priority => -1, dedupe_key => 'r') AS ready_id \gset
-- the rows as 0.1.0 has them (later columns are not compared), as text
SELECT $rows$
SELECT 'queue ' || (q.name, q.lease, q.max_attempts, q.backoff_base, q.backoff_cap,
                    q.completed_retention, q.dead_retention, q.paused, q.notify,
                    q.created_at)::text AS r FROM jobq.queues q
UNION ALL
SELECT 'job ' || (j.id, j.queue, j.state, j.priority, j.run_at, j.attempt, j.max_attempts,
                  j.token, j.locked_until, j.worker, j.enqueued_at, j.claimed_at,
                  j.dedupe_key, j.errors, j.payload)::text FROM jobq.jobs j
UNION ALL
SELECT 'history ' || (h.id, h.queue, h.state, h.priority, h.run_at, h.attempt,
                      h.max_attempts, h.token, h.worker, h.enqueued_at, h.claimed_at,
                      h.finished_at, h.dedupe_key, h.errors, h.result, h.payload)::text
FROM jobq.history h
UNION ALL
SELECT 'stale ' || (s.queue, s.slot, s.count)::text FROM jobq.stale_acks s
$rows$ AS kept_rows \gset
CREATE TABLE regress_before AS :kept_rows;
SELECT count(*) AS rows_before FROM regress_before;

-- 4. The update.
ALTER EXTENSION jobq UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'jobq';
SELECT sql_version = extversion AS sql_version_current, library_version = extversion AS library_current
FROM jobq_server_version(), pg_extension WHERE extname = 'jobq';

-- (a) every job is still there, exactly (expect no rows either way)
SELECT 'lost ' || r AS difference FROM regress_before
EXCEPT SELECT 'lost ' || r FROM (:kept_rows) now
UNION ALL
(SELECT 'new ' || r FROM (:kept_rows) now
 EXCEPT SELECT 'new ' || r FROM regress_before);
-- the running job: a wrong token changes nothing, the old one completes it
SELECT jobq_extend(:run_id, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11') IS NULL AS wrong_token_refused;
SELECT jobq_complete(:run_id, :'run_token', '{"after": "update"}') AS old_token_completes;
SELECT state, result FROM jobq_job(:run_id);
-- the ready job is claimable (the delayed one is not) and completable
SELECT c.id = :ready_id AS ready_claimed, c.token AS token
FROM jobq_claim('kept', 'w', max_jobs => 10) c \gset
SELECT :'ready_claimed' AS ready_claimed, jobq_complete(:ready_id, :'token') AS completed;
-- new ids go on above the old ones
SELECT jobq_enqueue('kept', '{}') > (SELECT max(id) FROM jobq.history) AS new_id_above_old;

-- (b) the updated catalog equals the fresh install's (expect no rows)
SELECT 'only after update: ' || f AS difference FROM (:fingerprint) fp(f)
EXCEPT SELECT 'only after update: ' || unnest(string_to_array(:'fresh_fingerprint', E'\n'))
UNION ALL
(SELECT 'only in fresh install: ' || unnest(string_to_array(:'fresh_fingerprint', E'\n'))
 EXCEPT SELECT 'only in fresh install: ' || f FROM (:fingerprint) fp(f));

-- every table and sequence of jobq is registered for pg_dump (expect none);
-- not the unlogged worker registry, whose rows name another server's
-- processes and which a crash empties anyway
SELECT c.oid::regclass AS not_dumped FROM pg_class c
WHERE c.relnamespace = 'jobq'::regnamespace AND c.relkind IN ('r', 'p', 'S')
  AND c.relpersistence <> 'u'
  AND c.oid NOT IN (SELECT unnest(extconfig) FROM pg_extension WHERE extname = 'jobq');
-- every function of jobq has a comment (expect none)
SELECT p.oid::regprocedure AS no_comment
FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
 AND d.deptype = 'e' AND d.refclassid = 'pg_extension'::regclass
 AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'jobq')
WHERE obj_description(p.oid, 'pg_proc') IS NULL;

\c contrib_regression
SET client_min_messages = warning;
DROP DATABASE regress_jobq_fresh;
DROP DATABASE regress_jobq_updated;
