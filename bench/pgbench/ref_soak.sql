INSERT INTO bench_ref.jobs (queue, payload) VALUES ('bench', '{"to":"user@example.com","n":1}') RETURNING id;
UPDATE bench_ref.jobs SET status = 'running', attempts = attempts + 1, locked_until = now() + interval '5 minutes' WHERE id IN (SELECT id FROM bench_ref.jobs WHERE queue = 'bench' AND status = 'pending' AND run_at <= now() ORDER BY priority, run_at, id FOR UPDATE SKIP LOCKED LIMIT 1) RETURNING id, payload
\gset
DELETE FROM bench_ref.jobs WHERE id = :id;
