\set q random(0, :nq - 1)
SELECT jobq_enqueue('q' || :q, '{"to":"user@example.com","n":1}');
SELECT id, token, payload FROM jobq_claim(ARRAY(SELECT 'q' || ((:q + g) % :nq) FROM generate_series(0, :k - 1) g), 'pgbench', 1)
\gset
SELECT jobq_complete(:id, :token);
