-- jobq_flows: jobs that wait for other jobs (issue 18).  A job enqueued
-- with depends_on is 'waiting' until every dependency completed, and
-- becomes ready in the transaction that completes the last one; the
-- policies cancel (cascading through descendants), ignore and wait when a
-- dependency ends dead or cancelled; dependencies already finished at
-- insert; jobq_retry with and without dependents; results handed to
-- children (jobq_dep_results, token-fenced), also when the parent keeps
-- no history, and the large-result history mark; chains of 1, 2 and 5
-- levels; counts; jobq_flow (a graph with local refs, cycles named),
-- jobq_flow_jobs, jobq_cancel_flow; bad input with its SQLSTATE.
\set VERBOSITY terse
SET client_min_messages = warning;

SELECT jobq_create_queue('fl', backoff_base => '0', backoff_cap => '0');
SELECT jobq_create_queue('fl-nohist', completed_retention => '0');

-- a job's state wherever it is, and its pending edges
CREATE FUNCTION fl_state(id bigint) RETURNS text LANGUAGE sql AS $$
    SELECT COALESCE((SELECT j.state::text || COALESCE('/' || j.pending_deps, '')
                     FROM jobq.jobs j WHERE j.id = $1),
                    (SELECT h.state::text FROM jobq.history h WHERE h.id = $1), 'gone') $$;
-- claim job id (it must be ready) and complete it with result {"from": id}
CREATE FUNCTION fl_run(id bigint, q text DEFAULT 'fl') RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE t uuid;
BEGIN
    UPDATE jobq.jobs SET priority = -1000 WHERE jobq.jobs.id = $1 AND state = 'ready';
    IF NOT FOUND THEN RETURN false; END IF;
    SELECT c.token INTO t FROM jobq_claim(q, 'w', 1) c WHERE c.id = $1;
    IF t IS NULL THEN RETURN false; END IF;
    RETURN jobq_complete($1, t, jsonb_build_object('from', $1));
END $$;
-- claim job id and fail it for good
CREATE FUNCTION fl_kill(id bigint, q text DEFAULT 'fl') RETURNS text LANGUAGE plpgsql AS $$
DECLARE t uuid;
BEGIN
    UPDATE jobq.jobs SET priority = -1000 WHERE jobq.jobs.id = $1 AND state = 'ready';
    SELECT c.token INTO t FROM jobq_claim(q, 'w', 1) c WHERE c.id = $1;
    RETURN jobq_fail($1, t, 'failed on purpose', permanent => true);
END $$;

-- a statement's SQLSTATE and message (job ids in messages as N), or its value
CREATE FUNCTION fl_try(stmt text) RETURNS text LANGUAGE sql AS $$
SELECT regress_outcome(stmt, '[0-9]{2,}') $$;

-- one level: a child of two parents is ready when the second completes
SELECT jobq_enqueue('fl', '{"p": 1}') AS a \gset
SELECT jobq_enqueue('fl', '{"p": 2}') AS b \gset
SELECT jobq_enqueue('fl', '{"c": 1}', depends_on => ARRAY[:b, :a, :a]) AS c \gset
SELECT fl_state(:c) AS child, (SELECT flow_id = :a FROM jobq.jobs WHERE id = :c) AS flow_is_first,
       (SELECT count(*) FROM jobq.jobs WHERE id IN (:a, :b) AND flow_id = :a) AS parents_in_flow;
SELECT parent - :a AS parent, on_failure, state FROM jobq.deps WHERE child = :c ORDER BY parent;
SELECT array_agg(id - :a ORDER BY id) AS members FROM jobq.flow_jobs WHERE flow_id = :a;
SELECT waiting, ready FROM jobq_counts('fl');
-- a waiting job is not claimable
SELECT count(*) AS claimable_child FROM jobq_claim('fl', 'w', 10) WHERE id = :c;
UPDATE jobq.jobs SET state = 'ready', token = NULL, locked_until = NULL, attempt = 0
WHERE id IN (:a, :b);
SELECT fl_run(:a), fl_state(:c) AS child;
SELECT fl_run(:b), fl_state(:c) AS child;
SELECT waiting, ready FROM jobq_counts('fl');
-- the child reads its parents' results with its token; a stale token reads NULL
SELECT token AS tc FROM jobq_claim('fl', 'w', 1) WHERE id = :c \gset
SELECT jobq_dep_results(:c, :'tc') = jsonb_build_object(
           :a::text, jsonb_build_object('state', 'completed', 'result', jsonb_build_object('from', :a)),
           :b::text, jsonb_build_object('state', 'completed', 'result', jsonb_build_object('from', :b)))
       AS results_by_parent;
SELECT jobq_dep_results(:c, gen_random_uuid()) IS NULL AS stale_reads_null;
SELECT jobq_complete(:c, :'tc', '{}');
SELECT fl_state(:c) AS child, (SELECT flow_id = :a FROM jobq.history WHERE id = :c) AS history_keeps_flow;

-- a parent in a queue that keeps no history: its result still reaches the child
SELECT jobq_enqueue('fl-nohist', '{}') AS a \gset
SELECT jobq_enqueue('fl', '{}', depends_on => ARRAY[:a]) AS c \gset
SELECT fl_run(:a, 'fl-nohist'), fl_state(:a) AS parent, fl_state(:c) AS child;
SELECT outcome = jsonb_build_object('state', 'completed', 'result', jsonb_build_object('from', :a))
       AS outcome_kept
FROM jobq.deps WHERE child = :c;
SELECT fl_run(:c);

-- a result over the copy limit (64 kB): the edge says it is in history
SELECT jobq_enqueue('fl', '{}') AS a \gset
SELECT jobq_enqueue('fl', '{}', depends_on => ARRAY[:a]) AS c \gset
UPDATE jobq.jobs SET priority = -1000 WHERE id = :a;
SELECT token AS ta FROM jobq_claim('fl', 'w', 1) \gset
SELECT jobq_complete(:a, :'ta', jsonb_build_object('big', repeat('x', 70000)));
SELECT outcome FROM jobq.deps WHERE child = :c;
SELECT fl_run(:c);

-- two levels, policy cancel (the default): the parent dies, the child and
-- grandchild are cancelled, each naming its dependency
SELECT jobq_enqueue('fl', '{}') AS a \gset
SELECT jobq_enqueue('fl', '{}', depends_on => ARRAY[:a]) AS c \gset
SELECT jobq_enqueue('fl', '{}', depends_on => ARRAY[:c]) AS g \gset
SELECT fl_kill(:a), fl_state(:c) AS child, fl_state(:g) AS grandchild;
SELECT id = :c AS is_child, errors -> -1 ->> 'dependency' = :a::text AS names_parent,
       errors -> -1 ->> 'state' AS dep_state
FROM jobq.history WHERE id IN (:c, :g) ORDER BY id;
SELECT parent = :a AS from_parent, state FROM jobq.deps WHERE child IN (:c, :g) ORDER BY child;
SELECT waiting, cancelled, dead FROM jobq_counts('fl');
-- retry without dependents: they stay cancelled
SELECT jobq_retry(:a), fl_state(:a) AS parent, fl_state(:c) AS child;
SELECT fl_kill(:a);
-- retry with dependents: both generations come back waiting, and run in turn
SELECT jobq_retry(:a, with_dependents => true), fl_state(:a) AS parent, fl_state(:c) AS child,
       fl_state(:g) AS grandchild;
SELECT waiting, cancelled, dead FROM jobq_counts('fl');
SELECT fl_run(:a), fl_state(:c) AS child, fl_state(:g) AS grandchild;
SELECT fl_run(:c), fl_state(:g) AS grandchild;
SELECT fl_run(:g);

-- policy ignore: the child runs, and sees how its parent ended
SELECT jobq_enqueue('fl', '{}') AS a \gset
SELECT jobq_enqueue('fl', '{}', depends_on => ARRAY[:a], on_dep_failure => 'ignore') AS c \gset
SELECT fl_kill(:a), fl_state(:c) AS child;
SELECT outcome FROM jobq.deps WHERE child = :c;
SELECT fl_run(:c);

-- policy wait: the child stays waiting, blocked, until the parent is retried
SELECT jobq_enqueue('fl', '{}') AS a \gset
SELECT jobq_enqueue('fl', '{}', depends_on => ARRAY[:a], on_dep_failure => 'wait') AS c \gset
SELECT fl_kill(:a), fl_state(:c) AS child;
SELECT state FROM jobq.deps WHERE child = :c;
SELECT jobq_retry(:a), (SELECT state FROM jobq.deps WHERE child = :c) AS edge;
SELECT fl_run(:a), fl_state(:c) AS child;
SELECT fl_run(:c);

-- cancelling a job by hand: waiting or ready, its dependents follow
SELECT jobq_enqueue('fl', '{}') AS a \gset
SELECT jobq_enqueue('fl', '{}', depends_on => ARRAY[:a]) AS c \gset
SELECT jobq_enqueue('fl', '{}', depends_on => ARRAY[:c], on_dep_failure => 'ignore') AS g \gset
SELECT jobq_cancel(:c), fl_state(:c) AS child, fl_state(:g) AS grandchild;
SELECT jobq_cancel(:a), fl_state(:a) AS parent;
SELECT fl_run(:g);

-- five levels: each job becomes ready only when the one before completed
SELECT jobq_enqueue('fl', '{"level": 0}') AS l0 \gset
SELECT jobq_enqueue('fl', '{"level": 1}', depends_on => ARRAY[:l0]) AS l1 \gset
SELECT jobq_enqueue('fl', '{"level": 2}', depends_on => ARRAY[:l1]) AS l2 \gset
SELECT jobq_enqueue('fl', '{"level": 3}', depends_on => ARRAY[:l2]) AS l3 \gset
SELECT jobq_enqueue('fl', '{"level": 4}', depends_on => ARRAY[:l3]) AS l4 \gset
SELECT jobq_enqueue('fl', '{"level": 5}', depends_on => ARRAY[:l4, :l0]) AS l5 \gset
SELECT count(DISTINCT flow_id) AS flows, min(flow_id) = :l0 AS flow_is_root
FROM jobq.jobs WHERE id BETWEEN :l0 AND :l5;
SELECT fl_state(:l1) AS l1, fl_state(:l2) AS l2, fl_state(:l5) AS l5;
SELECT fl_run(:l1) AS l1_runs_early;
SELECT fl_run(:l0), fl_state(:l1) AS l1, fl_state(:l2) AS l2, fl_state(:l5) AS l5;
SELECT fl_run(:l1), fl_run(:l2), fl_run(:l3), fl_state(:l4) AS l4, fl_state(:l5) AS l5;
SELECT fl_run(:l4), fl_state(:l5) AS l5;
SELECT fl_run(:l5);
-- five levels, the root dies: the cascade reaches the last level; retry
-- with dependents brings all five back
SELECT jobq_enqueue('fl', '{}') AS l0 \gset
SELECT jobq_enqueue('fl', '{}', depends_on => ARRAY[:l0]) AS l1 \gset
SELECT jobq_enqueue('fl', '{}', depends_on => ARRAY[:l1]) AS l2 \gset
SELECT jobq_enqueue('fl', '{}', depends_on => ARRAY[:l2]) AS l3 \gset
SELECT jobq_enqueue('fl', '{}', depends_on => ARRAY[:l3]) AS l4 \gset
SELECT jobq_enqueue('fl', '{}', depends_on => ARRAY[:l4]) AS l5 \gset
SELECT fl_kill(:l0);
SELECT string_agg(fl_state(i), ' ' ORDER BY i) AS levels FROM generate_series(:l1, :l5) i;
SELECT jobq_retry(:l0, true);
SELECT string_agg(fl_state(i), ' ' ORDER BY i) AS levels FROM generate_series(:l1, :l5) i;
SELECT fl_run(:l0), fl_run(:l1), fl_run(:l2), fl_run(:l3), fl_run(:l4), fl_run(:l5);

-- a lease that expires with no attempt left: the sweep moves the job to
-- dead, and its dependents' policies apply in the sweep's transaction
SELECT jobq_enqueue('fl', '{}', max_attempts => 1) AS a \gset
SELECT jobq_enqueue('fl', '{}', depends_on => ARRAY[:a]) AS c \gset
UPDATE jobq.jobs SET priority = -1000 WHERE id = :a;
SELECT count(*) AS claimed FROM jobq_claim('fl', 'w', 1) WHERE id = :a;
UPDATE jobq.jobs SET locked_until = now() - interval '1 second' WHERE id = :a;
SELECT dead FROM jobq_sweep('fl');
SELECT fl_state(:a) AS parent, fl_state(:c) AS child,
       (SELECT flow_id FROM jobq.history WHERE id = :a) = :a AS history_keeps_flow;

-- the repair pass, for rows written by hand (every end of a job resolves
-- its dependents itself: jobq_flow_ends): a parent that left without
-- resolving its dependents (here a pop and a bulk cancel whose edges are
-- then set back by hand) is resolved as it ended; a live parent gets its
-- blocked edges back; a waiting job with nothing to wait for runs
SELECT jobq_enqueue('fl', '{}') AS a \gset
SELECT jobq_enqueue('fl', '{}', depends_on => ARRAY[:a]) AS c \gset
SELECT jobq_enqueue('fl', '{}') AS b \gset
SELECT jobq_enqueue('fl', '{}', depends_on => ARRAY[:b], on_dep_failure => 'ignore') AS d \gset
SELECT jobq_enqueue('fl', '{}') AS w \gset
SELECT jobq_enqueue('fl', '{}', depends_on => ARRAY[:w], on_dep_failure => 'wait') AS e \gset
UPDATE jobq.jobs SET priority = -1000 WHERE id = :a;
SELECT count(*) AS popped FROM jobq_pop('fl', 1);
SELECT affected AS bulk_cancelled FROM jobq_cancel_many(ARRAY[:b]::bigint[]);
SELECT fl_kill(:w);
UPDATE jobq.deps SET state = 'pending', outcome = NULL WHERE child IN (:c, :d);
UPDATE jobq.jobs SET state = 'waiting', pending_deps = 1 WHERE id IN (:c, :d);
SELECT fl_state(:c) AS after_pop, fl_state(:d) AS after_bulk_cancel, fl_state(:e) AS blocked;
SELECT affected AS bulk_retried FROM jobq_retry_many(ARRAY[:w]::bigint[]);
UPDATE jobq.deps SET state = 'blocked' WHERE child = :e;
INSERT INTO jobq.jobs (queue, state, priority, run_at, max_attempts, enqueued_at, payload, flow_id, pending_deps)
VALUES ('fl', 'waiting', 0, now(), 1, now(), '{"by": "hand"}', 1, 0);
SELECT * FROM jobq_flow_repair();
SELECT fl_state(:c) AS after_pop, fl_state(:d) AS after_bulk_cancel,
       (SELECT state FROM jobq.deps WHERE child = :e) AS edge_of_retried,
       (SELECT fl_state(id) FROM jobq.jobs WHERE payload = '{"by": "hand"}') AS by_hand;
SELECT (SELECT outcome FROM jobq.deps WHERE child = :d) AS ignored_outcome;
SELECT * FROM jobq_flow_repair();
SELECT fl_try('SELECT jobq_flow_repair(0)');
DELETE FROM jobq.jobs WHERE queue = 'fl';

-- dependencies already finished at insert resolve at once
SELECT jobq_enqueue('fl', '{}') AS done \gset
SELECT fl_run(:done);
SELECT jobq_enqueue('fl', '{}') AS dead \gset
SELECT fl_kill(:dead);
SELECT fl_state(jobq_enqueue('fl', '{}', depends_on => ARRAY[:done])) AS after_completed;
SELECT fl_state(jobq_enqueue('fl', '{}', depends_on => ARRAY[:dead])) AS after_dead_cancel;
SELECT fl_state(jobq_enqueue('fl', '{}', depends_on => ARRAY[:dead], on_dep_failure => 'ignore'))
       AS after_dead_ignore;
SELECT fl_state(jobq_enqueue('fl', '{}', depends_on => ARRAY[:dead], on_dep_failure => 'wait'))
       AS after_dead_wait;
SELECT fl_state(jobq_enqueue('fl', '{}', depends_on => ARRAY[:done, :dead])) AS after_both;
-- the job cancelled at insert comes back with its parent's retry
SELECT max(id) AS cancelled_at_insert FROM jobq.history WHERE state = 'cancelled' \gset
SELECT jobq_retry(:dead, true), fl_state(:cancelled_at_insert) AS revived;
DELETE FROM jobq.jobs WHERE queue = 'fl';

-- a dedupe key held by a live job: that job's id, no edge
SELECT jobq_enqueue('fl', '{}', dedupe_key => 'k1') AS k \gset
SELECT jobq_enqueue('fl', '{}', dedupe_key => 'k1', depends_on => ARRAY[:k]) = :k AS same_job,
       (SELECT count(*) FROM jobq.deps WHERE child = :k) AS edges;
DELETE FROM jobq.jobs WHERE queue = 'fl';

-- a paused queue: the child becomes ready, and is not claimed
SELECT jobq_enqueue('fl', '{}') AS a \gset
SELECT jobq_enqueue('fl', '{}', depends_on => ARRAY[:a]) AS c \gset
SELECT jobq_pause('fl');
UPDATE jobq.jobs SET priority = -1000 WHERE id = :a;
SELECT jobq_resume('fl');
SELECT token AS ta FROM jobq_claim('fl', 'w', 1) \gset
SELECT jobq_pause('fl');
SELECT jobq_complete(:a, :'ta', NULL), fl_state(:c) AS child,
       (SELECT count(*) FROM jobq_claim('fl', 'w', 10)) AS claimed_while_paused;
SELECT jobq_resume('fl');
SELECT fl_run(:c);

-- bad input, each before anything is written
SELECT jobq_enqueue('fl', '{}') AS a \gset
SELECT count(*) AS jobs_before FROM jobq.jobs \gset
SELECT fl_try(format(c, :a)) FROM unnest(ARRAY[
    $$SELECT jobq_enqueue('fl', '{}', depends_on => '{}')$$,
    $$SELECT jobq_enqueue('fl', '{}', depends_on => ARRAY[NULL::bigint])$$,
    $$SELECT jobq_enqueue('fl', '{}', depends_on => '{{1},{2}}')$$,
    $$SELECT jobq_enqueue('fl', '{}', depends_on => ARRAY[%s::bigint], on_dep_failure => 'skip')$$,
    $$SELECT jobq_enqueue('fl', '{}', on_dep_failure => 'skip')$$,
    $$SELECT jobq_enqueue('fl', '{}', flow_id => 7)$$,
    $$SELECT jobq_enqueue('fl', '{}', depends_on => ARRAY[%s::bigint], flow_id => 0)$$,
    $$SELECT jobq_enqueue('fl', '{}', depends_on => ARRAY[%s, 9223372036854775807])$$,
    $$SELECT jobq_enqueue('fl', '{}', depends_on => array_fill(%s::bigint, ARRAY[10001]))$$,
    $$SELECT jobq_enqueue('nosuch', '{}', depends_on => ARRAY[%s::bigint])$$,
    $$SELECT jobq_retry(%s, NULL)$$,
    $$SELECT jobq_dep_results(NULL, gen_random_uuid())$$,
    $$SELECT jobq_dep_results(%s, NULL)$$]) AS c;
SELECT count(*) = :jobs_before AS nothing_written FROM jobq.jobs;
-- a purged parent is an error too
SELECT fl_run(:a);
SELECT jobq_purge('fl') > 0 AS purged;
SELECT fl_try(format($$SELECT jobq_enqueue('fl', '{}', depends_on => ARRAY[%s::bigint])$$, :a));
-- without dependencies the 0.1.0 call is unchanged
SELECT jobq_enqueue('fl', '{}') > :a AS plain_enqueue;
SELECT flow_id IS NULL AND pending_deps IS NULL AS outside_flows FROM jobq.jobs WHERE queue = 'fl';

-- jobq_flow: a graph in any order, local refs and existing ids, one flow
DELETE FROM jobq.jobs WHERE queue = 'fl';
SELECT jobq_enqueue('fl', '{"outside": true}') AS ext \gset
SELECT ref, id IS NOT NULL AS has_id, created
FROM jobq_flow(format('[{"ref": "invoice", "queue": "fl", "depends_on": ["pdf", "pay"], "payload": {"n": 3}},
                       {"ref": "pdf", "queue": "fl", "payload": {"n": 1}, "priority": -5},
                       {"ref": "pay", "queue": "fl-nohist", "depends_on": [%s], "max_attempts": 2},
                       {"ref": "mail", "queue": "fl", "depends_on": ["invoice"], "on_dep_failure": "ignore",
                        "delay": "1 second", "dedupe_key": "mail-7"}]', :ext)::jsonb);
SELECT min(flow_id) AS fid FROM jobq.jobs WHERE payload = '{"n": 1}' \gset
SELECT payload, fl_state(id) AS state, priority, max_attempts, dedupe_key,
       flow_id = :fid AS in_flow, run_at > enqueued_at AS delayed
FROM jobq.jobs WHERE flow_id = :fid ORDER BY id;
-- the outside job joined the flow of its first dependent
SELECT fl_state(:ext) AS outside, (SELECT flow_id FROM jobq.jobs WHERE id = :ext) = :fid AS joined;
SELECT queue, state, cardinality(depends_on) AS deps, dep_states, pending_deps
FROM jobq_flow_jobs(:fid) ORDER BY id;
SELECT count(*) AS no_such_flow FROM jobq_flow_jobs(-1);
-- jobq_cancel_flow: every ready and waiting job of the flow
SELECT jobq_cancel_flow(:fid) AS cancelled;
SELECT state, count(*) FROM jobq_flow_jobs(:fid) GROUP BY state ORDER BY state;
SELECT jobq_cancel_flow(:fid) AS again;
-- refused graphs, before anything is written
SELECT count(*) AS jobs_before FROM jobq.jobs \gset
SELECT fl_try(format('SELECT count(*) FROM jobq_flow(%L)', g)) FROM unnest(ARRAY[
    '[{"ref": "x", "queue": "fl", "depends_on": ["z"]}, {"ref": "y", "queue": "fl", "depends_on": ["x"]},
      {"ref": "z", "queue": "fl", "depends_on": ["y"]}, {"ref": "w", "queue": "fl"}]',
    '[{"ref": "x", "queue": "fl", "depends_on": ["x"]}]',
    '[{"ref": "a", "queue": "fl"}, {"ref": "b", "queue": "fl", "depends_on": ["a", "c"]},
      {"ref": "c", "queue": "fl", "depends_on": ["d"]}, {"ref": "d", "queue": "fl", "depends_on": ["c"]}]',
    '[{"ref": "x", "queue": "fl", "bogus": 1}]',
    '[{"ref": "x", "queue": "fl"}, {"ref": "x", "queue": "fl"}]',
    '[{"ref": "x", "queue": "fl", "depends_on": ["nope"]}]',
    '[{"ref": "x", "queue": "fl", "depends_on": "x"}]',
    '[{"ref": "x", "queue": "fl", "depends_on": [true]}]',
    '[{"queue": "fl"}]',
    '[{"ref": "", "queue": "fl"}]',
    '[{"ref": 1, "queue": "fl"}]',
    '[{"ref": "x"}]',
    '[{"ref": "x", "queue": "Bad Name"}]',
    '[]',
    '{}',
    '[1]',
    '[{"ref": "x", "queue": "nosuch"}]',
    '[{"ref": "x", "queue": "fl", "priority": "high"}]',
    '[{"ref": "x", "queue": "fl", "priority": 5000}]',
    '[{"ref": "x", "queue": "fl", "max_attempts": 0}]',
    '[{"ref": "x", "queue": "fl", "run_at": "2020-01-01", "delay": "1 hour"}]',
    '[{"ref": "x", "queue": "fl", "on_dep_failure": "skip"}]',
    '[{"ref": "x", "queue": "fl", "dedupe_key": ""}]',
    '[{"ref": "x", "queue": "fl"}, {"ref": "y", "queue": "fl", "depends_on": ["x", 9223372036854775807]}]']) AS g;
SELECT fl_try('SELECT count(*) FROM jobq_flow(NULL)');
SELECT fl_try('SELECT jobq_flow_jobs(NULL)'), fl_try('SELECT jobq_cancel_flow(NULL)');
SELECT count(*) = :jobs_before AS nothing_written FROM jobq.jobs;

-- a grouped queue takes no job of a flow: its claim finds jobs through
-- their groups, and a flow's job has none (it would never run)
SELECT jobq_create_queue('fl-grouped', group_mode => 'fifo') IS NULL AS created;
SELECT count(*) AS grouped_before FROM jobq.jobs \gset
SELECT fl_try($$SELECT jobq_enqueue('fl-grouped', '{}', depends_on => ARRAY[1])$$);
SELECT fl_try($$SELECT count(*) FROM jobq_flow('[{"ref": "a", "queue": "fl"},
  {"ref": "b", "queue": "fl-grouped", "depends_on": ["a"]}]')$$);
SELECT fl_try($$SELECT count(*) FROM jobq_flow('[{"ref": "a", "queue": "fl-grouped"},
  {"ref": "b", "queue": "fl", "depends_on": ["a"]}]')$$);
SELECT count(*) = :grouped_before AS nothing_written FROM jobq.jobs;
SELECT jobq_drop_queue('fl-grouped');

SELECT jobq_drop_queue('fl', force => true), jobq_drop_queue('fl-nohist', force => true);
DROP FUNCTION fl_state(bigint), fl_run(bigint, text), fl_kill(bigint, text), fl_try(text);
