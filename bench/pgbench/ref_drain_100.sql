WITH c AS (UPDATE bench_ref.jobs SET status = 'running', attempts = attempts + 1, locked_until = now() + interval '5 minutes' WHERE id IN (SELECT id FROM bench_ref.jobs WHERE queue = 'bench' AND status = 'pending' AND run_at <= now() ORDER BY priority, run_at, id FOR UPDATE SKIP LOCKED LIMIT 100) RETURNING id, payload) SELECT array_agg(id) AS ids, array_agg(payload) AS payloads FROM c
\gset
DELETE FROM bench_ref.jobs WHERE id = ANY (:ids::bigint[]);
