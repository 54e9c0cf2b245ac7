SELECT count(*) FROM jobq_enqueue_batch('bench', ARRAY(SELECT '{"to":"user@example.com","n":1}'::jsonb FROM generate_series(1, 100)));
SELECT array_agg(id) AS ids, array_agg(token) AS tokens FROM jobq_claim('bench', 'pgbench', 100)
\gset
SELECT count(*) FROM jobq_complete_batch(:ids::bigint[], :tokens::uuid[]);
