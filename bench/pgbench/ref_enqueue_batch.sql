INSERT INTO bench_ref.jobs (queue, payload) SELECT 'bench', jsonb_build_object('to', 'user@example.com', 'n', g) FROM generate_series(1, 1000) g;
