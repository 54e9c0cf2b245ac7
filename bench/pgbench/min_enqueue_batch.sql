INSERT INTO bench_min.jobs (payload) SELECT jsonb_build_object('to', 'user@example.com', 'n', g) FROM generate_series(1, 1000) g;
