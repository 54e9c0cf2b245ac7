-- jobq_flow_claim: jobq_claim's result tells each job's flow (flow_id, NULL
-- outside every flow), through each way a claim is made: the direct claim
-- of one queue (direct_claim.c), the statement of one queue (direct writes
-- off), the statement of several queues, and the claim of a grouped queue
-- (group_claim.c); and jobq_dep_results hands the claimed child its
-- parents' results.
\set VERBOSITY terse
SET client_min_messages = warning;
SELECT jobq_create_queue('fc');
SELECT jobq_create_queue('fc2');
SELECT jobq_create_queue('fcg');
SELECT jobq_alter_queue('fcg', group_mode => 'fifo');

-- a flow of a parent and a child, and a job outside every flow
SELECT f.id AS parent FROM jobq_flow('[{"ref": "p", "queue": "fc", "payload": {"n": "parent"}},
    {"ref": "c", "queue": "fc", "payload": {"n": "child"}, "depends_on": ["p"]}]') f
WHERE f.ref = 'p' \gset
SELECT f.id AS child FROM jobq_flow_jobs(:parent) f WHERE f.id <> :parent \gset
SELECT jobq_enqueue('fc', '{"n": "alone"}') AS alone \gset

-- the direct claim: the parent is in its own flow, the lone job in none
SELECT payload->>'n' AS n, flow_id = :parent AS in_flow, flow_id IS NULL AS no_flow
FROM jobq_claim('fc', max_jobs => 5) ORDER BY id;
-- the parent completes with a result; the child, claimed through the
-- statement, has the flow too, and reads its parent's result
SELECT jobq_complete(:parent, (SELECT token FROM jobq.jobs WHERE id = :parent), '{"pdf": "s3://x"}');
SET jobq.direct_writes = off;
SELECT payload->>'n' AS n, flow_id = :parent AS in_flow, token AS child_token
FROM jobq_claim('fc') \gset
SELECT :'n' AS n, :'in_flow' AS in_flow;
RESET jobq.direct_writes;
SELECT jobq_dep_results(:child, :'child_token') = jsonb_build_object(:'parent',
    '{"state": "completed", "result": {"pdf": "s3://x"}}'::jsonb) AS parent_result;

-- several queues, and a grouped queue
SELECT f.id AS p2 FROM jobq_flow('[{"ref": "a", "queue": "fc2", "payload": {"n": "a"}},
    {"ref": "b", "queue": "fc", "payload": {"n": "b"}, "depends_on": ["a"]}]') f
WHERE f.ref = 'a' \gset
SELECT jobq_enqueue('fc2', '{"n": "alone2"}') AS alone2 \gset
SELECT payload->>'n' AS n, flow_id = :p2 AS in_flow, flow_id IS NULL AS no_flow
FROM jobq_claim(ARRAY['fc', 'fc2'], max_jobs => 5) ORDER BY id;
-- (a grouped job cannot have dependencies yet: its flow_id is NULL)
SELECT jobq_enqueue('fcg', '{"n": "g"}', group_key => 'k') AS g \gset
SELECT payload->>'n' AS n, flow_id IS NULL AS no_flow FROM jobq_claim('fcg', max_jobs => 5);
