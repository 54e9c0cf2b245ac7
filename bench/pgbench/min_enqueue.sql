INSERT INTO bench_min.jobs (payload) VALUES ('{"to":"user@example.com","n":1}') RETURNING id;
