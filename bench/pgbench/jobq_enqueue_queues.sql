\set q random(0, :nq - 1)
SELECT jobq_enqueue('q' || :q, '{"to":"user@example.com","n":1}');
