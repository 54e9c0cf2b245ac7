-- jobq_spawn: jobs spawned by a running job, fenced by its token (issue
-- 18, FEATURES-0.2.md 3.4.8); jobq_checkpoint / jobq_checkpoint_read:
-- progress a running job stores and its next attempt reads (3.4.11).
-- Spawned jobs join the spawner's flow; a join that depends on the
-- children and on the spawner runs after all of them; a later attempt
-- that spawns the same refs gets the same jobs back (new refs are
-- added); a stale or finished spawner spawns nothing (55000).  A
-- checkpoint survives a retry, a lost lease and jobq_retry of a dead job;
-- a stale one is refused (false, counted); bad input with its SQLSTATE.
\set VERBOSITY terse
SET client_min_messages = warning;

SELECT jobq_create_queue('sp', backoff_base => '0', backoff_cap => '0');
SELECT jobq_create_queue('sp-kids');

-- a job's state wherever it is, with its pending edges
CREATE FUNCTION sp_state(id bigint) RETURNS text LANGUAGE sql AS $$
    SELECT COALESCE((SELECT j.state::text || COALESCE('/' || j.pending_deps, '')
                     FROM jobq.jobs j WHERE j.id = $1),
                    (SELECT h.state::text FROM jobq.history h WHERE h.id = $1), 'gone') $$;
-- a statement's SQLSTATE and message (numbers in messages as N), or its value
CREATE FUNCTION sp_try(stmt text) RETURNS text LANGUAGE sql AS $$
SELECT regress_outcome(stmt, '[0-9]+') $$;

-- the spawner, claimed: token t1
SELECT jobq_enqueue('sp', '{"report": 7}', max_attempts => 3) AS p \gset
SELECT token AS t1 FROM jobq_claim('sp', 'w1') \gset

-- fan-out and a join: two pages, and a join after them and the spawner
SELECT ref, id - :p AS rel, created FROM jobq_spawn(:p, :'t1', jsonb_build_array(
    '{"ref": "page-1", "queue": "sp-kids", "payload": {"page": 1}}'::jsonb,
    '{"ref": "page-2", "queue": "sp-kids", "payload": {"page": 2}}'::jsonb,
    jsonb_build_object('ref', 'join', 'queue', 'sp', 'depends_on',
                       jsonb_build_array('page-1', 'page-2', :p))));
SELECT id - :p AS rel, queue, state, depends_on = ARRAY[]::bigint[] AS no_deps, pending_deps
FROM jobq_flow_jobs(:p) ORDER BY id;
SELECT ref, child - :p AS rel FROM jobq.spawns WHERE parent = :p ORDER BY ref;

-- the attempt fails and is retried: token t2; it spawns again, with a new page
SELECT jobq_fail(:p, :'t1', 'crashed') = 'ready' AS retried;
SELECT token AS t2 FROM jobq_claim('sp', 'w2') \gset
SELECT ref, id - :p AS rel, created FROM jobq_spawn(:p, :'t2', jsonb_build_array(
    '{"ref": "page-1", "queue": "sp-kids", "payload": {"page": 1}}'::jsonb,
    '{"ref": "page-2", "queue": "sp-kids", "payload": {"page": 2}}'::jsonb,
    '{"ref": "page-3", "queue": "sp-kids", "payload": {"page": 3}, "depends_on": ["page-1"]}'::jsonb,
    jsonb_build_object('ref', 'join', 'queue', 'sp', 'depends_on',
                       jsonb_build_array('page-1', 'page-2', :p))));
SELECT count(*) AS jobs FROM jobq.jobs WHERE queue IN ('sp', 'sp-kids');
SELECT sp_state(:p + 4) AS page_3;

-- the stale attempt spawns nothing, whatever it asks for
SELECT sp_try('SELECT count(*) FROM jobq_spawn(' || (:p)::text || ', ' || quote_literal(:'t1') || ', ''[{"ref": "late", "queue": "sp-kids"}]'')');
SELECT sp_try('SELECT count(*) FROM jobq_spawn(' || (:p)::text || ', ' || quote_literal(:'t1') || ', ''[{"ref": "page-1", "queue": "sp-kids"}]'')');
-- in a transaction, the refusal takes the rest of it down
BEGIN;
SELECT jobq_enqueue('sp-kids', '{"side": "effect"}') > 0 AS enqueued;
\set VERBOSITY sqlstate
SELECT * FROM jobq_spawn(:p, :'t1', '[{"ref": "late", "queue": "sp-kids"}]');
\set VERBOSITY terse
COMMIT;
SELECT count(*) AS jobs, count(*) FILTER (WHERE payload ? 'side') AS side_effects
FROM jobq.jobs WHERE queue IN ('sp', 'sp-kids');
SELECT count(*) AS spawns FROM jobq.spawns WHERE parent = :p;

-- the pages complete, then the spawner: the join becomes ready last
SELECT jobq_complete(id, token, jsonb_build_object('page', payload->'page'))
FROM jobq_claim('sp-kids', 'w3', 10) ORDER BY id;
SELECT sp_state(:p + 3) AS join_before;
SELECT jobq_complete(:p, :'t2', '{"pages": 3}');
SELECT sp_state(:p + 3) AS join_after;
SELECT token AS tj FROM jobq_claim('sp', 'w4') \gset
SELECT k::bigint - :p AS dep_result_of FROM jsonb_object_keys(jobq_dep_results(:p + 3, :'tj')) k ORDER BY 1;

-- a finished spawner spawns nothing; neither does an unknown job
SELECT sp_try('SELECT count(*) FROM jobq_spawn(' || (:p)::text || ', ' || quote_literal(:'t2') || ', ''[{"ref": "page-1", "queue": "sp-kids"}]'')');
SELECT sp_try('SELECT count(*) FROM jobq_spawn(-1, ' || quote_literal(:'t2') || ', ''[{"ref": "x", "queue": "sp-kids"}]'')');

-- bad input: NULLs (22004), bad jobs (22023, 42704), checked before the token
SELECT sp_try('SELECT count(*) FROM jobq_spawn(NULL, ' || quote_literal(:'tj') || ', ''[{"ref": "x", "queue": "sp"}]'')');
SELECT sp_try('SELECT count(*) FROM jobq_spawn(' || (:p)::text || ' + 3, NULL, ''[{"ref": "x", "queue": "sp"}]'')');
SELECT sp_try('SELECT count(*) FROM jobq_spawn(' || (:p)::text || ' + 3, ' || quote_literal(:'tj') || ', NULL)');
SELECT sp_try('SELECT count(*) FROM jobq_spawn(' || (:p)::text || ' + 3, ' || quote_literal(:'tj') || ', ''{}'')');
SELECT sp_try('SELECT count(*) FROM jobq_spawn(' || (:p)::text || ' + 3, ' || quote_literal(:'tj') || ', ''[{"queue": "sp"}]'')');
SELECT sp_try('SELECT count(*) FROM jobq_spawn(' || (:p)::text || ' + 3, ' || quote_literal(:'t1') || ', ''[{"ref": "a", "queue": "sp", "depends_on": ["b"]},
                                           {"ref": "b", "queue": "sp", "depends_on": ["a"]}]'')');
SELECT sp_try('SELECT count(*) FROM jobq_spawn(' || (:p)::text || ' + 3, ' || quote_literal(:'tj') || ', ''[{"ref": "x", "queue": "no-such-queue"}]'')');
SELECT count(*) AS spawns FROM jobq.spawns WHERE parent = :p;
-- the spawner was in no flow: it started one named after itself (rel 0),
-- which a job it spawned spawns into in turn
SELECT ref, created FROM jobq_spawn(:p + 3, :'tj', '[{"ref": "after", "queue": "sp-kids"}]');
SELECT id - :p AS rel FROM jobq_flow_jobs(:p) ORDER BY id;
SELECT jobq_complete(:p + 3, :'tj');

-- checkpoints: a job stores its progress, the next attempt reads it
SELECT jobq_enqueue('sp', '{"rows": 1000000}', max_attempts => 4) AS c \gset
SELECT token AS c1 FROM jobq_claim('sp', 'w1') \gset
SELECT jobq_checkpoint_read(:c, :'c1') IS NULL AS none_yet;
SELECT jobq_checkpoint(:c, :'c1', '{"copied": 1000}');
SELECT jobq_checkpoint(:c, :'c1', '{"copied": 2000}');
SELECT jobq_checkpoint_read(:c, :'c1');
-- a retry: the next attempt resumes; the old one is stale for both calls
SELECT jobq_fail(:c, :'c1', 'out of memory');
SELECT token AS c2 FROM jobq_claim('sp', 'w2') \gset
SELECT jobq_checkpoint_read(:c, :'c2');
SELECT jobq_checkpoint_read(:c, :'c1') IS NULL AS stale_reads_null;
SELECT (SELECT stale_acks FROM jobq_stats('sp')) AS stale_before;
SELECT jobq_checkpoint(:c, :'c1', '{"copied": 1}') AS stale_write;
SELECT (SELECT stale_acks FROM jobq_stats('sp')) AS stale_after;
SELECT jobq_checkpoint(:c, :'c2', '{"copied": 3000}');
SELECT attempt, state FROM jobq.checkpoints WHERE id = :c;
-- a lost lease: the sweep takes the job back, the next claim resumes
UPDATE jobq.jobs SET locked_until = clock_timestamp() - interval '1 second' WHERE id = :c;
SELECT requeued, dead FROM jobq_sweep('sp');
SELECT token AS c3 FROM jobq_claim('sp', 'w3') \gset
SELECT jobq_checkpoint_read(:c, :'c3');
-- JSON null is a state like any other
SELECT jobq_checkpoint(:c, :'c3', 'null');
SELECT jobq_checkpoint_read(:c, :'c3') IS NULL AS sql_null, jobq_checkpoint_read(:c, :'c3');
SELECT jobq_checkpoint(:c, :'c3', '{"copied": 4000}');
-- too large: refused before anything (also with a stale token), the old state kept
SELECT sp_try('SELECT jobq_checkpoint(' || (:c)::text || ', ' || quote_literal(:'c3') || ', jsonb_build_object(''blob'', repeat(''x'', 300000)))');
SELECT sp_try('SELECT jobq_checkpoint(' || (:c)::text || ', ' || quote_literal(:'c1') || ', jsonb_build_object(''blob'', repeat(''x'', 300000)))');
SELECT jobq_checkpoint(:c, :'c3', jsonb_build_object('blob', repeat('x', 262000))) AS just_under;
SELECT jobq_checkpoint(:c, :'c3', '{"copied": 4000}');
SELECT value, unit FROM jobq_limits() WHERE name = 'checkpoint_max';
-- NULLs
SELECT sp_try('SELECT jobq_checkpoint(NULL, ' || quote_literal(:'c3') || ', ''{}'')');
SELECT sp_try('SELECT jobq_checkpoint(' || (:c)::text || ', NULL, ''{}'')');
SELECT sp_try('SELECT jobq_checkpoint(' || (:c)::text || ', ' || quote_literal(:'c3') || ', NULL)');
SELECT sp_try('SELECT jobq_checkpoint_read(NULL, ' || quote_literal(:'c3') || ')');
SELECT sp_try('SELECT jobq_checkpoint_read(' || (:c)::text || ', NULL)');
-- the attempts are used up: dead; the checkpoint is kept with the job, and
-- jobq_retry's next attempt resumes from it
SELECT jobq_fail(:c, :'c3', 'out of memory again', permanent => true);
SELECT jobq_checkpoint(:c, :'c3', '{"copied": 5000}') AS finished_write;
SELECT jobq_checkpoint_read(:c, :'c3') IS NULL AS finished_reads_null;
SELECT jobq_retry(:c);
SELECT token AS c4 FROM jobq_claim('sp', 'w4') \gset
SELECT jobq_checkpoint_read(:c, :'c4');
SELECT jobq_complete(:c, :'c4');
-- an unknown job: false, not counted
SELECT jobq_checkpoint(-1, :'c4', '{}');

SELECT jobq_drop_queue('sp', force => true);
SELECT jobq_drop_queue('sp-kids', force => true);
DROP FUNCTION sp_state(bigint);
DROP FUNCTION sp_try(text);
