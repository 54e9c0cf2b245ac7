-- examples/psql/consumer.sql: claim jobs in batches of 10 and complete them,
-- until a claim finds nothing.
--
--   psql -v queue=ex-psql -f examples/psql/consumer.sql   (PGHOST, PGPORT, ...)
--
-- psql runs in autocommit mode, so each claim commits at once and the jobs
-- are processed outside it.  The tokens go back with the ids: a complete
-- with a stale token changes nothing.  The file runs itself again (\ir)
-- while claims bring jobs.
\set ON_ERROR_STOP on
SELECT count(*) > 0 AS got,
       array_agg(id ORDER BY id) AS ids,
       array_agg(token ORDER BY id) AS tokens
FROM jobq_claim(:'queue', worker => 'psql-consumer', max_jobs => 10) \gset
\if :got
    -- the work of each job would be done here, outside any transaction
    SELECT count(*) AS completed
    FROM jobq_complete_batch(:'ids'::bigint[], :'tokens'::uuid[]) \gset
    \echo completed :completed
    \ir consumer.sql
\endif
