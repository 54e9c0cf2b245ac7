UPDATE bench_min.jobs SET status = 'running', attempts = attempts + 1, locked_until = now() + interval '5 minutes' WHERE id IN (SELECT id FROM bench_min.jobs WHERE status = 'pending' AND run_after <= now() ORDER BY run_after FOR UPDATE SKIP LOCKED LIMIT 1) RETURNING id
\gset
DELETE FROM bench_min.jobs WHERE id = :id;
