-- jobq_flow_ends: every way a job ends resolves its dependents in the same
-- transaction (issue 18): jobq_pop (completed), the bulk cancels (their
-- policies; waiting jobs are taken too), jobq_drop_queue with force (the
-- dropped jobs are gone: their dependents see them 'purged'), the bulk
-- and queue retries (the 'wait' edges their failure blocked wait again);
-- and the purges (jobq_delete_many, jobq_purge, the sweep's retention)
-- forget the purged jobs' own edges and flow memberships.  No repair pass
-- runs here: jobq_flow_repair finds nothing left at the end.
\set VERBOSITY terse
SET client_min_messages = warning;

SELECT jobq_create_queue('fe', backoff_base => '0', backoff_cap => '0');
SELECT jobq_create_queue('fe-nohist', completed_retention => '0');
SELECT jobq_create_queue('fe-drop');
-- what earlier tests left in the flow tables is not counted: the checks
-- below take the jobs from the first one enqueued here on
SELECT nextval(pg_get_serial_sequence('jobq.jobs', 'id')) + 1 AS first_id \gset

-- a job's state wherever it is, with its pending edges
CREATE FUNCTION fe_state(id bigint) RETURNS text LANGUAGE sql AS $$
    SELECT COALESCE((SELECT j.state::text || COALESCE('/' || j.pending_deps, '')
                     FROM jobq.jobs j WHERE j.id = $1),
                    (SELECT h.state::text FROM jobq.history h WHERE h.id = $1), 'gone') $$;
-- the edges of child id: parent (relative to base), state, outcome
CREATE FUNCTION fe_edges(child bigint, base bigint) RETURNS text LANGUAGE sql AS $$
    SELECT string_agg((d.parent - base) || ':' || d.state ||
                      COALESCE(' ' || regexp_replace(d.outcome::text, '[0-9]+', 'N', 'g'), ''),
                      ', ' ORDER BY d.parent)
    FROM jobq.deps d WHERE d.child = $1 $$;
-- claim job id and fail it for good
CREATE FUNCTION fe_kill(id bigint, q text DEFAULT 'fe') RETURNS text LANGUAGE plpgsql AS $$
DECLARE t uuid;
BEGIN
    UPDATE jobq.jobs SET priority = -1000 WHERE jobq.jobs.id = $1 AND state = 'ready';
    SELECT c.token INTO t FROM jobq_claim(q, 'w', 1) c WHERE c.id = $1;
    RETURN jobq_fail($1, t, 'failed on purpose', permanent => true);
END $$;
-- claim job id and complete it
CREATE FUNCTION fe_run(id bigint, q text DEFAULT 'fe') RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE t uuid;
BEGIN
    UPDATE jobq.jobs SET priority = -1000 WHERE jobq.jobs.id = $1 AND state = 'ready';
    SELECT c.token INTO t FROM jobq_claim(q, 'w', 1) c WHERE c.id = $1;
    RETURN jobq_complete($1, t, jsonb_build_object('from', $1));
END $$;

-- jobq_pop: a popped parent completed; its child is ready at once (history
-- kept: the parent's row keeps its flow; not kept: the edge holds all)
SELECT jobq_enqueue('fe', '{"pop": 1}') AS p \gset
SELECT jobq_enqueue('fe', '{"child": 1}', depends_on => ARRAY[:p]) AS c \gset
SELECT fe_state(:c) AS child_before;
BEGIN;
SELECT id = :p AS popped_parent, attempt FROM jobq_pop('fe', 1);
SELECT fe_state(:p) AS parent, fe_state(:c) AS child, fe_edges(:c, :p) AS edges;
ROLLBACK;
SELECT fe_state(:c) AS child_after_rollback;
SELECT id = :p AS popped_parent FROM jobq_pop('fe', 1);
SELECT fe_state(:p) AS parent, (SELECT flow_id = :p FROM jobq.history WHERE id = :p) AS history_flow,
       fe_state(:c) AS child, fe_edges(:c, :p) AS edges;
SELECT waiting, ready FROM jobq_counts('fe');
SELECT count(*) AS popped_child FROM jobq_pop('fe', 10);
SELECT jobq_enqueue('fe-nohist', '{"pop": 2}') AS p \gset
SELECT jobq_enqueue('fe', '{"child": 2}', depends_on => ARRAY[:p]) AS c \gset
SELECT count(*) AS popped FROM jobq_pop('fe-nohist', 5);
SELECT fe_state(:p) AS parent, fe_state(:c) AS child, fe_edges(:c, :p) AS edges,
       (SELECT count(*) FROM jobq.flow_jobs WHERE id = :p) AS parent_member;
SELECT count(*) AS popped_child FROM jobq_pop('fe', 10);
-- a job of a flow that completes without a history row (its queue keeps
-- none) takes its own edges and membership with it: no purge will see
-- them; its dependents keep the edges to it, with its result
SELECT jobq_enqueue('fe-nohist', '{"parent": 2.5}') AS p \gset
SELECT jobq_enqueue('fe-nohist', '{"c": 2.5}', depends_on => ARRAY[:p]) AS c \gset
SELECT jobq_enqueue('fe', '{"c": 2.6}', depends_on => ARRAY[:c]) AS g \gset
CREATE TEMP TABLE fe_claimed AS SELECT id, token FROM jobq_claim('fe-nohist', 'w', 1);
SELECT jobq_complete(id, token, '{"p": 1}') FROM fe_claimed;
DROP TABLE fe_claimed;
SET jobq.direct_writes = off;
CREATE TEMP TABLE fe_claimed AS SELECT id, token FROM jobq_claim('fe-nohist', 'w', 1);
SELECT jobq_complete(id, token, '{"c": 1}') FROM fe_claimed;
DROP TABLE fe_claimed;
RESET jobq.direct_writes;
SELECT fe_state(:p) AS parent, fe_state(:c) AS child, fe_state(:g) AS grandchild,
       (SELECT count(*) FROM jobq.deps WHERE child = :c) AS child_edges,
       fe_edges(:g, :c) AS grandchild_edge,
       (SELECT count(*) FROM jobq.flow_jobs WHERE id IN (:p, :c)) AS members;
SELECT count(*) AS popped_grandchild FROM jobq_pop('fe', 10);

-- a complete by the session that claimed the job deletes its row directly,
-- in a flow too, and resolves its dependents after it (one statement);
-- the same with jobq.direct_writes off (the statements); and a batch
SELECT jobq_enqueue('fe', '{"parent": 10}', priority => -5) AS p1 \gset
SELECT jobq_enqueue('fe', '{"parent": 11}', priority => -4) AS p2 \gset
SELECT jobq_enqueue('fe', '{"parent": 12}', priority => -3) AS p3 \gset
SELECT jobq_enqueue('fe', '{"c": 10}', depends_on => ARRAY[:p1, :p2]) AS c1 \gset
SELECT jobq_enqueue('fe', '{"c": 11}', depends_on => ARRAY[:p2, :p3]) AS c2 \gset
CREATE TEMP TABLE fe_claimed AS SELECT id, token FROM jobq_claim('fe', 'w', 3);
SELECT array_agg(id - :p1 ORDER BY id) AS claimed FROM fe_claimed;
SELECT jobq_complete(id, token, '{"one": 1}') FROM fe_claimed WHERE id = :p1;
SELECT fe_state(:c1) AS c1, fe_edges(:c1, :p1) AS edges;
SET jobq.direct_writes = off;
SELECT jobq_complete(id, token, '{"two": 2}') FROM fe_claimed WHERE id = :p2;
RESET jobq.direct_writes;
SELECT fe_state(:c1) AS c1, fe_state(:c2) AS c2, fe_edges(:c2, :p1) AS c2_edges;
SELECT count(*) AS completed FROM jobq_complete_batch(
    ARRAY(SELECT id FROM fe_claimed WHERE id = :p3), ARRAY(SELECT token FROM fe_claimed WHERE id = :p3),
    ARRAY['{"three": 3}'::jsonb]);
SELECT fe_state(:c2) AS c2, fe_edges(:c2, :p1) AS c2_edges,
       (SELECT count(*) FROM jobq.history WHERE id IN (:p1, :p2, :p3) AND flow_id = :p1) AS parents_kept;
DROP TABLE fe_claimed;
SELECT count(*) AS popped FROM jobq_pop('fe', 10);

-- jobq_cancel_many of a parent: each edge's policy, in the same call;
-- cancel cascades to the grandchild
SELECT jobq_enqueue('fe', '{"parent": 3}') AS p \gset
SELECT jobq_enqueue('fe', '{"c": "cancel"}', depends_on => ARRAY[:p]) AS cc \gset
SELECT jobq_enqueue('fe', '{"c": "ignore"}', depends_on => ARRAY[:p], on_dep_failure => 'ignore') AS ci \gset
SELECT jobq_enqueue('fe', '{"c": "wait"}', depends_on => ARRAY[:p], on_dep_failure => 'wait') AS cw \gset
SELECT jobq_enqueue('fe', '{"grandchild": 1}', depends_on => ARRAY[:cc]) AS g \gset
SELECT affected, skipped FROM jobq_cancel_many(ARRAY[:p]);
SELECT fe_state(:p) AS parent, fe_state(:cc) AS cancel_child, fe_state(:ci) AS ignore_child,
       fe_state(:cw) AS wait_child, fe_state(:g) AS grandchild;
SELECT fe_edges(:ci, :p) AS ignore_edge, fe_edges(:cw, :p) AS wait_edge, fe_edges(:g, :p) AS grand_edge;
SELECT replace(e -> -1 ->> 'error', :cc::text, 'CC') AS grandchild_error
FROM (SELECT errors AS e FROM jobq.history WHERE id = :g) x;
SELECT waiting, ready, cancelled FROM jobq_counts('fe');
-- the bulk cancel takes waiting jobs too (counted as such)
SELECT affected, skipped FROM jobq_cancel_many(ARRAY[:cw, :ci]);
SELECT fe_state(:cw) AS wait_child, fe_state(:ci) AS ignore_child;
SELECT waiting, ready, cancelled FROM jobq_counts('fe');

-- jobq_cancel_where: a page of the waiting jobs of a queue, and their
-- dependents with them
SELECT jobq_enqueue('fe', '{"parent": 4}') AS p \gset
SELECT jobq_enqueue('fe', '{"c": 4}', depends_on => ARRAY[:p]) AS c1 \gset
SELECT jobq_enqueue('fe', '{"c": 5}', depends_on => ARRAY[:c1], on_dep_failure => 'ignore') AS c2 \gset
SELECT affected, more FROM jobq_cancel_where('fe', 'waiting', max_rows => 1);
SELECT fe_state(:p) AS parent, fe_state(:c1) AS child, fe_state(:c2) AS grandchild,
       fe_edges(:c2, :c1) AS grand_edge;
SELECT affected FROM jobq_cancel_where('fe', 'ready');
SELECT fe_state(:p) AS parent, fe_state(:c2) AS grandchild;

-- jobq_retry_many of a dead parent: the 'wait' edge its death blocked
-- waits for the new attempt, which readies the child when it completes
SELECT jobq_enqueue('fe', '{"parent": 5}') AS p \gset
SELECT jobq_enqueue('fe', '{"c": "wait"}', depends_on => ARRAY[:p], on_dep_failure => 'wait') AS cw \gset
SELECT fe_kill(:p) AS killed, fe_edges(:cw, :p) AS edge;
SELECT affected, skipped FROM jobq_retry_many(ARRAY[:p]);
SELECT fe_state(:p) AS parent, (SELECT flow_id = :p FROM jobq.jobs WHERE id = :p) AS keeps_flow,
       fe_edges(:cw, :p) AS edge;
SELECT fe_run(:p) AS completed, fe_state(:cw) AS child, fe_edges(:cw, :p) AS edge;
-- and jobq_retry_where, and a parent enqueued after its parent had died
SELECT jobq_enqueue('fe', '{"parent": 6}') AS p \gset
SELECT fe_kill(:p) AS killed;
SELECT jobq_enqueue('fe', '{"c": "late wait"}', depends_on => ARRAY[:p], on_dep_failure => 'wait') AS cw \gset
SELECT fe_state(:cw) AS child, fe_edges(:cw, :p) AS edge,
       (SELECT flow_id FROM jobq.history WHERE id = :p) IS NULL AS parent_in_no_flow;
SELECT affected, more FROM jobq_retry_where('fe', 'dead');
SELECT fe_edges(:cw, :p) AS edge,
       (SELECT flow_id FROM jobq.jobs WHERE id = :p) = (SELECT flow_id FROM jobq.jobs WHERE id = :cw)
           AS joined_its_childs_flow;
SELECT fe_run(:p) AS completed, fe_state(:cw) AS child;
SELECT count(*) AS popped FROM jobq_pop('fe', 10);

-- jobq_drop_queue(force): the dropped queue's jobs are gone without a
-- trace, so their dependents elsewhere see them 'purged'; the edges and
-- memberships of the dropped jobs go with them
SELECT jobq_enqueue('fe-drop', '{"parent": 7}') AS p \gset
SELECT jobq_enqueue('fe', '{"c": "cancel"}', depends_on => ARRAY[:p]) AS cc \gset
SELECT jobq_enqueue('fe', '{"c": "ignore"}', depends_on => ARRAY[:p], on_dep_failure => 'ignore') AS ci \gset
SELECT jobq_enqueue('fe-drop', '{"c": "in the dropped queue"}', depends_on => ARRAY[:ci]) AS cd \gset
SELECT jobq_drop_queue('fe-drop', force => true);
SELECT fe_state(:cc) AS cancel_child, fe_state(:ci) AS ignore_child, fe_edges(:ci, :p) AS ignore_edge;
SELECT replace(e -> -1 ->> 'error', :p::text, 'P') AS cancel_child_error
FROM (SELECT errors AS e FROM jobq.history WHERE id = :cc) x;
SELECT count(*) FILTER (WHERE child IN (:p, :cd)) AS dropped_edges,
       count(*) FILTER (WHERE parent = :ci) AS edges_to_dropped_child
FROM jobq.deps;
SELECT count(*) AS dropped_members FROM jobq.flow_jobs WHERE id IN (:p, :cd);
SELECT count(*) AS popped FROM jobq_pop('fe', 10);

-- the purges forget a purged job's own edges and its membership; the
-- edges on which it is the parent stay while its children are kept
SELECT jobq_enqueue('fe', '{"parent": 8}') AS p \gset
SELECT jobq_enqueue('fe', '{"c": 8}', depends_on => ARRAY[:p]) AS c \gset
SELECT count(*) AS popped FROM jobq_pop('fe', 1);
SELECT count(*) AS popped FROM jobq_pop('fe', 1);
SELECT (SELECT count(*) FROM jobq.deps WHERE child = :c) AS edges,
       (SELECT count(*) FROM jobq.flow_jobs WHERE id IN (:p, :c)) AS members;
SELECT affected FROM jobq_delete_many(ARRAY[:p]);
SELECT (SELECT count(*) FROM jobq.deps WHERE child = :c) AS edges_kept,
       (SELECT count(*) FROM jobq.flow_jobs WHERE id IN (:p, :c)) AS members;
SELECT jobq_purge('fe', 'completed', '0');
SELECT (SELECT count(*) FROM jobq.deps WHERE child = :c) AS edges,
       (SELECT count(*) FROM jobq.flow_jobs WHERE id IN (:p, :c)) AS members;
-- the sweep's retention purge
SELECT jobq_alter_queue('fe', completed_retention => '1 hour');
SELECT jobq_enqueue('fe', '{"parent": 9}') AS p \gset
SELECT jobq_enqueue('fe', '{"c": 9}', depends_on => ARRAY[:p]) AS c \gset
SELECT count(*) AS popped FROM jobq_pop('fe', 1);
SELECT count(*) AS popped FROM jobq_pop('fe', 1);
UPDATE jobq.history SET finished_at = finished_at - interval '2 hours' WHERE id IN (:p, :c);
SELECT purged FROM jobq_sweep('fe');
SELECT (SELECT count(*) FROM jobq.deps WHERE :c IN (child, parent)) AS edges,
       (SELECT count(*) FROM jobq.flow_jobs WHERE id IN (:p, :c)) AS members;

-- the plans of the purges' new parts (generic, as the C runs them): the
-- purged jobs' edges probed by deps_pkey (child) and their memberships by
-- flow_jobs_pkey, never a scan of either table.  (pop_flow and
-- cancel_many_live_flow are the statements of before with one more column.)
CREATE FUNCTION fe_prepare(name text, stmt text, types text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('PREPARE %I(%s) AS %s', name, types, jobq._statement(stmt));
    RETURN true;
END $$;
SELECT count(*) FILTER (WHERE fe_prepare(name, stmt, types)) AS prepared
FROM (VALUES
    ('fe_delete', 'delete_many_flow', 'int8[], timestamptz'),
    ('fe_purge', 'purge_flow', 'text, timestamptz, text'),
    ('fe_sweep_purge', 'purge_history_flow', 'timestamptz, text, int8'),
    ('fe_drop', 'drop_queue_flow', 'text')) AS s(name, stmt, types);
BEGIN;
SET LOCAL plan_cache_mode = force_generic_plan;
-- tables the size of a busy server's (rolled back), so that the plans are
-- the ones such a server gets, whatever earlier tests left
INSERT INTO jobq.flow_jobs (flow_id, id) SELECT g, g FROM generate_series(-20000, -1) g;
INSERT INTO jobq.deps (child, parent, on_failure, state)
SELECT g, g - 1, 'cancel', 'satisfied' FROM generate_series(-20000, -1) g;
-- (jobq_purge and the drop take a whole queue's history, of any size: for
-- them the planner may rightly hash the memberships, 2 and 4 check the edges)
SELECT s.n, p !~ 'Seq Scan on deps' AND (s.n IN (2, 4) OR p !~ 'Seq Scan on flow_jobs') AS no_seq_scan,
       p ~ 'Index Cond: \(child = ANY' AS edges_by_child,
       s.n IN (2, 4) OR
       p ~ 'Index (Only )?Scan using flow_jobs_pkey on flow_jobs m\s+Index Cond: \(\(flow_id = \w+\.flow_id\) AND \(id = \w+\.id\)\)'
           AS members_by_pkey
FROM (VALUES
    (1, $q$EXECUTE fe_delete(ARRAY[5, 6]::int8[], clock_timestamp())$q$),
    (2, $q$EXECUTE fe_purge('fe', clock_timestamp(), NULL)$q$),
    (3, $q$EXECUTE fe_sweep_purge(clock_timestamp(), NULL, 1000)$q$),
    (4, $q$EXECUTE fe_drop('fe')$q$)
) AS s(n, stmt), regress_plan(s.stmt) p
ORDER BY s.n;
ROLLBACK;
DEALLOCATE fe_delete;
DEALLOCATE fe_purge;
DEALLOCATE fe_sweep_purge;
DEALLOCATE fe_drop;

-- the complete of a job in a flow resolves its dependents in one statement
-- (flow_satisfy): it locks the waiting children in id order (CTE l, read
-- whole by the edges' one-time filter) before it changes an edge or a count
SELECT fe_prepare('fe_satisfy', 'flow_satisfy', 'int8[], jsonb[], text') AS prepared;
BEGIN;
SET LOCAL plan_cache_mode = force_generic_plan;
-- (in id order: sorted, or read so from jobs_pkey, as the planner finds cheaper)
SELECT p ~ 'CTE l\n\s+->  LockRows\n'
       AND substring(p from 'CTE l\n(.*)CTE e\n') ~ '(Sort Key: j\.id\n|Index Scan using jobs_pkey on jobs j\n)'
           AS children_locked_in_id_order,
       p ~ 'CTE e\n\s+->  Update on deps \w+\n\s+InitPlan \d+ \(returns \$\d+\)\n\s+->  Aggregate\n\s+->  CTE Scan on l\n\s+->  Result\n\s+One-Time Filter'
           AS before_the_edges,
       p ~ 'CTE u\n\s+->  Update on jobs \w+\n\s+InitPlan \d+ \(returns \$\d+\)\n\s+->  CTE Scan on e\n'
           AS counts_after_the_edges
FROM regress_plan($q$EXECUTE fe_satisfy(ARRAY[5]::int8[], ARRAY['{}'::jsonb], NULL)$q$) p;
COMMIT;
DEALLOCATE fe_satisfy;
DROP FUNCTION fe_prepare(text, text, text);

-- nothing was left for the repair pass
-- (what jobq_flow_repair would fix, among the jobs of this test: a child
-- cancelled by hand keeps a pending edge to a parent that failed after)
SELECT count(*) FILTER (WHERE d.state = 'pending' AND NOT EXISTS
                            (SELECT 1 FROM jobq.jobs j WHERE j.id = d.parent)
                        AND EXISTS (SELECT 1 FROM jobq.jobs c
                                    WHERE c.id = d.child AND c.state = 'waiting')) AS pending_of_gone,
       count(*) FILTER (WHERE d.state = 'blocked' AND EXISTS
                            (SELECT 1 FROM jobq.jobs j WHERE j.id = d.parent)) AS blocked_of_live,
       (SELECT count(*) FROM jobq.jobs WHERE id >= :first_id AND state = 'waiting'
                                         AND pending_deps <= 0) AS waiting_for_nothing
FROM jobq.deps d WHERE d.child >= :first_id;

SELECT jobq_drop_queue('fe', force => true), jobq_drop_queue('fe-nohist', force => true);
SELECT count(*) AS edges_left FROM jobq.deps WHERE child >= :first_id OR parent >= :first_id;
SELECT count(*) AS members_left FROM jobq.flow_jobs WHERE id >= :first_id;
DROP FUNCTION fe_state(bigint), fe_edges(bigint, bigint), fe_kill(bigint, text), fe_run(bigint, text);
