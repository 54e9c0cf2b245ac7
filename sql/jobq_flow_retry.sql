-- jobq_flow_retry: jobq_retry(id, with_dependents) and retries inside flows
-- (issue 18; the defects the stress scenario FL's retry phase found).
--   A. a 'cancel' child of a dead job and of a cancelled one stays cancelled
--      when the dead one is retried with dependents (its other parent
--      still failed it; a cancelled job cannot be retried);
--   B. a job cancelled by hand while waiting stays cancelled when a
--      dependency that failed after the cancel is retried with dependents;
--   C. a parent retried without dependents, then its sibling with: the
--      child comes back waiting for both, and runs once both complete;
--   the 'ignore' edge that a failure satisfied waits for the retried
--   parent's new end while its child still waits;
--   the repair pass catches a blocked edge whose parent completed since,
--   and a waiting job whose count is too high.
\set VERBOSITY terse
SET client_min_messages = warning;

SELECT jobq_create_queue('fr', backoff_base => '0', backoff_cap => '0');

-- a job's state wherever it is, with its pending edges
CREATE FUNCTION fr_state(id bigint) RETURNS text LANGUAGE sql AS $$
    SELECT COALESCE((SELECT j.state::text || COALESCE('/' || j.pending_deps, '')
                     FROM jobq.jobs j WHERE j.id = $1),
                    (SELECT h.state::text FROM jobq.history h WHERE h.id = $1), 'gone') $$;
-- the edges of child id: parent (relative to base), state, outcome's state
CREATE FUNCTION fr_edges(child bigint, base bigint) RETURNS text LANGUAGE sql AS $$
    SELECT string_agg((d.parent - base) || ':' || d.state ||
                      COALESCE(' ' || (d.outcome ->> 'state'), ''), ', ' ORDER BY d.parent)
    FROM jobq.deps d WHERE d.child = $1 $$;
-- claim job id (first in the queue) and fail it for good
CREATE FUNCTION fr_kill(id bigint) RETURNS text LANGUAGE plpgsql AS $$
DECLARE t uuid;
BEGIN
    UPDATE jobq.jobs j SET priority = CASE WHEN j.id = $1 THEN -1000 ELSE 0 END
    WHERE j.queue = 'fr' AND j.state = 'ready';
    SELECT c.token INTO t FROM jobq_claim('fr', 'w', 1) c WHERE c.id = $1;
    RETURN jobq_fail($1, t, 'failed on purpose', permanent => true);
END $$;
-- claim job id (first in the queue) and complete it
CREATE FUNCTION fr_run(id bigint) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE t uuid;
BEGIN
    UPDATE jobq.jobs j SET priority = CASE WHEN j.id = $1 THEN -1000 ELSE 0 END
    WHERE j.queue = 'fr' AND j.state = 'ready';
    SELECT c.token INTO t FROM jobq_claim('fr', 'w', 1) c WHERE c.id = $1;
    RETURN jobq_complete($1, t, jsonb_build_object('from', $1));
END $$;

-- A: c waits for a and b (cancel); a dies, b is cancelled by hand
SELECT jobq_enqueue('fr', '{"a": 1}') AS a \gset
SELECT jobq_enqueue('fr', '{"b": 1}') AS b \gset
SELECT jobq_enqueue('fr', '{"c": 1}', depends_on => ARRAY[:a, :b]) AS c \gset
SELECT fr_kill(:a), jobq_cancel(:b), fr_state(:c) AS child, fr_edges(:c, :a) AS edges;
SELECT jobq_retry(:a, true), fr_state(:a) AS a, fr_state(:c) AS child,
       fr_edges(:c, :a) AS edges;
-- the other order: b is cancelled first, then a dies
SELECT fr_run(:a);
SELECT jobq_enqueue('fr', '{"a": 2}') AS a \gset
SELECT jobq_enqueue('fr', '{"b": 2}') AS b \gset
SELECT jobq_enqueue('fr', '{"c": 2}', depends_on => ARRAY[:a, :b]) AS c \gset
SELECT jobq_cancel(:b), fr_kill(:a), fr_state(:c) AS child, fr_edges(:c, :a) AS edges;
SELECT jobq_retry(:a, true), fr_state(:c) AS child, fr_edges(:c, :a) AS edges;
SELECT fr_run(:a), fr_state(:c) AS child, fr_edges(:c, :a) AS edges;

-- B: c waits for a and b (cancel) and is cancelled by hand; then a dies
SELECT jobq_enqueue('fr', '{"a": 3}') AS a \gset
SELECT jobq_enqueue('fr', '{"b": 3}') AS b \gset
SELECT jobq_enqueue('fr', '{"c": 3}', depends_on => ARRAY[:a, :b]) AS c \gset
SELECT jobq_enqueue('fr', '{"g": 3}', depends_on => ARRAY[:c]) AS g \gset
SELECT jobq_cancel(:c), fr_state(:g) AS grandchild, fr_kill(:a), fr_edges(:c, :a) AS edges;
SELECT jobq_retry(:a, true), fr_state(:a) AS a, fr_state(:c) AS child,
       fr_state(:g) AS grandchild;
SELECT fr_run(:a), fr_run(:b), fr_state(:c) AS child, fr_edges(:c, :a) AS edges;
-- a child cancelled by a cascade, brought back, then cancelled by hand,
-- stays cancelled when the same parent dies again and is retried
SELECT jobq_enqueue('fr', '{"a": 4}') AS a \gset
SELECT jobq_enqueue('fr', '{"c": 4}', depends_on => ARRAY[:a]) AS c \gset
SELECT fr_kill(:a), jobq_retry(:a, true), fr_state(:c) AS child;
SELECT jobq_cancel(:c), fr_kill(:a), fr_edges(:c, :a) AS edges;
SELECT jobq_retry(:a, true), fr_state(:c) AS child;
SELECT fr_run(:a);

-- C: a and b dead, c waits for both; b retried alone, then a with dependents
SELECT jobq_enqueue('fr', '{"a": 5}') AS a \gset
SELECT jobq_enqueue('fr', '{"b": 5}') AS b \gset
SELECT jobq_enqueue('fr', '{"c": 5}', depends_on => ARRAY[:a, :b]) AS c \gset
SELECT fr_kill(:a), fr_kill(:b), fr_state(:c) AS child, fr_edges(:c, :a) AS edges;
SELECT jobq_retry(:b), fr_state(:c) AS child, fr_edges(:c, :a) AS edges;
SELECT jobq_retry(:a, true), fr_state(:c) AS child, fr_edges(:c, :a) AS edges;
SELECT fr_run(:a), fr_run(:b), fr_state(:c) AS child, fr_edges(:c, :a) AS edges;
SELECT fr_run(:c);
-- the same, but b completes before a is retried: its completion satisfies
-- the edge whose child its failure had cancelled
SELECT jobq_enqueue('fr', '{"a": 6}') AS a \gset
SELECT jobq_enqueue('fr', '{"b": 6}') AS b \gset
SELECT jobq_enqueue('fr', '{"c": 6}', depends_on => ARRAY[:a, :b]) AS c \gset
SELECT fr_kill(:a), fr_kill(:b), jobq_retry(:b), fr_run(:b), fr_edges(:c, :a) AS edges;
SELECT jobq_retry(:a, true), fr_state(:c) AS child, fr_edges(:c, :a) AS edges;
SELECT fr_run(:a), fr_state(:c) AS child;
SELECT fr_run(:c);
-- both dead, b retried alone and dead again: a's retry leaves c cancelled,
-- b's retry with dependents then brings it back
SELECT jobq_enqueue('fr', '{"a": 7}') AS a \gset
SELECT jobq_enqueue('fr', '{"b": 7}') AS b \gset
SELECT jobq_enqueue('fr', '{"c": 7}', depends_on => ARRAY[:a, :b]) AS c \gset
SELECT fr_kill(:a), fr_kill(:b), jobq_retry(:b), fr_kill(:b), fr_edges(:c, :a) AS edges;
SELECT jobq_retry(:a, true), fr_state(:c) AS child, fr_edges(:c, :a) AS edges;
SELECT jobq_retry(:b, true), fr_state(:c) AS child, fr_edges(:c, :a) AS edges;
SELECT fr_run(:a), fr_run(:b), fr_run(:c);
-- a grandchild that waits for its parent and for the root: the root's
-- retry brings both back, generation after generation
SELECT jobq_enqueue('fr', '{"a": 8}') AS a \gset
SELECT jobq_enqueue('fr', '{"c": 8}', depends_on => ARRAY[:a]) AS c \gset
SELECT jobq_enqueue('fr', '{"g": 8}', depends_on => ARRAY[:a, :c]) AS g \gset
SELECT fr_kill(:a), fr_state(:c) AS child, fr_state(:g) AS grandchild,
       fr_edges(:g, :a) AS edges;
SELECT jobq_retry(:a, true), fr_state(:c) AS child, fr_state(:g) AS grandchild,
       fr_edges(:g, :a) AS edges;
SELECT fr_run(:a), fr_run(:c), fr_run(:g);

-- ignore: c waits for a (ignore) and b; a dies (the edge is satisfied, dead),
-- is retried before b completes: c waits for a's new end, and sees it
SELECT jobq_enqueue('fr', '{"a": 9}') AS a \gset
SELECT jobq_enqueue('fr', '{"b": 9}') AS b \gset
SELECT jobq_enqueue('fr', '{"c": 9}', depends_on => ARRAY[:a, :b],
                    on_dep_failure => 'ignore') AS c \gset
SELECT fr_kill(:a), fr_state(:c) AS child, fr_edges(:c, :a) AS edges;
SELECT jobq_retry(:a), fr_state(:c) AS child, fr_edges(:c, :a) AS edges;
SELECT fr_run(:b), fr_state(:c) AS child;
SELECT fr_run(:a), fr_state(:c) AS child, fr_edges(:c, :a) AS edges;
SELECT fr_run(:c);
-- dead again after the retry: the edge is satisfied again with that end
SELECT jobq_enqueue('fr', '{"a": 10}') AS a \gset
SELECT jobq_enqueue('fr', '{"b": 10}') AS b \gset
SELECT jobq_enqueue('fr', '{"c": 10}', depends_on => ARRAY[:a, :b],
                    on_dep_failure => 'ignore') AS c \gset
SELECT fr_kill(:a), jobq_retry(:a), fr_kill(:a), fr_state(:c) AS child,
       fr_edges(:c, :a) AS edges;
SELECT fr_run(:b), fr_state(:c) AS child;
SELECT fr_run(:c);
-- a child already ready keeps the outcome it was given
SELECT jobq_enqueue('fr', '{"a": 11}') AS a \gset
SELECT jobq_enqueue('fr', '{"c": 11}', depends_on => ARRAY[:a],
                    on_dep_failure => 'ignore') AS c \gset
SELECT fr_kill(:a), jobq_retry(:a), fr_state(:c) AS child, fr_edges(:c, :a) AS edges;
SELECT fr_run(:c), fr_run(:a);

-- the repair pass: a blocked edge whose parent completed (written by hand,
-- as a build before this fix could leave it) is satisfied and its child
-- readied; a child cancelled by hand with a pending edge to a dead parent
-- is left alone (B above left one), pass after pass
SELECT jobq_enqueue('fr', '{"a": 12}') AS a \gset
SELECT jobq_enqueue('fr', '{"c": 12}', depends_on => ARRAY[:a], on_dep_failure => 'wait') AS c \gset
UPDATE jobq.deps SET state = 'blocked' WHERE child = :c;
SELECT fr_run(:a), fr_state(:c) AS child, fr_edges(:c, :a) AS edges;
SELECT * FROM jobq_flow_repair(1000);
SELECT fr_state(:c) AS child, fr_edges(:c, :a) AS edges;
SELECT * FROM jobq_flow_repair(1000);
SELECT fr_run(:c);
-- a waiting job whose count is one too high (all its edges satisfied)
SELECT jobq_enqueue('fr', '{"a": 13}') AS a \gset
SELECT jobq_enqueue('fr', '{"c": 13}', depends_on => ARRAY[:a]) AS c \gset
UPDATE jobq.jobs SET pending_deps = 2 WHERE id = :c;
SELECT fr_run(:a), fr_state(:c) AS child, fr_edges(:c, :a) AS edges;
SELECT * FROM jobq_flow_repair(1000);
SELECT fr_state(:c) AS child;
SELECT fr_run(:c);

SELECT waiting, ready FROM jobq_counts('fr');
SELECT jobq_drop_queue('fr', force => true);
DROP FUNCTION fr_state(bigint), fr_edges(bigint, bigint), fr_kill(bigint), fr_run(bigint);
