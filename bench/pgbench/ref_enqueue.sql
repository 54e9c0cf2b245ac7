INSERT INTO bench_ref.jobs (queue, payload) VALUES ('bench', '{"to":"user@example.com","n":1}') RETURNING id;
