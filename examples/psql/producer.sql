-- examples/psql/producer.sql: enqueue N jobs, each {"n": i}.
--
--   psql -v queue=ex-psql -v n=100 -f examples/psql/producer.sql   (PGHOST, PGPORT, ...)
--
-- One statement, so one transaction: the N jobs exist when, and only if,
-- it commits.  In an application, the enqueue goes into the transaction
-- that writes the data the job belongs to.
\set ON_ERROR_STOP on
SELECT count(jobq_enqueue(:'queue', jsonb_build_object('n', i))) AS enqueued
FROM generate_series(1, :n) AS i;
