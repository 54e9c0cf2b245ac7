SELECT array_agg(id) AS ids, array_agg(token) AS tokens, array_agg(payload) AS payloads FROM jobq_claim('bench', 'pgbench', 100)
\gset
SELECT count(*) FROM jobq_complete_batch(:ids::bigint[], :tokens::uuid[]);
