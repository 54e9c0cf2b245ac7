SELECT id, token, payload FROM jobq_claim('bench', 'pgbench', 1)
\gset
SELECT jobq_complete(:id, :token);
