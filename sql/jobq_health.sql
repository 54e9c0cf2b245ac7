-- jobq_health: the findings a single session can provoke (issue 14).
-- Backlog with and without running jobs and while paused, a retry storm,
-- expired leases nobody swept and leases expiring with no completions (from
-- the live table and history, and from the stored metrics), the
-- sweeper (not preloaded here), one vacuum row per jobq table, critical
-- rows first, callable by jobq_monitor. The findings that need other
-- sessions (an idle-in-transaction session, a prepared transaction, a
-- stopped sweeper) are in t/030_health.pl.
\set VERBOSITY terse
SET client_min_messages = warning;

-- the findings of some queues, ages in the details blanked out
CREATE FUNCTION regress_health(queues text[])
RETURNS TABLE (severity text, "check" text, subject text, detail text)
LANGUAGE sql AS $$
SELECT h.severity, h."check", h.subject,
       regexp_replace(h.detail, '[0-9.]+ (s|min|h|days)\M', 'AGE', 'g')
FROM jobq_health() h WHERE h.subject = ANY (queues)
ORDER BY h.subject, h."check", h.severity
$$;

SELECT jobq_create_queue('hlt', max_attempts => 5, backoff_base => '1 hour', backoff_cap => '1 hour');
SELECT jobq_create_queue('hlt-storm', max_attempts => 5, backoff_base => '1 hour', backoff_cap => '1 hour');
SELECT jobq_create_queue('hlt-lease', max_attempts => 5, backoff_base => '1 hour', backoff_cap => '1 hour');

-- nothing to report about empty queues
SELECT * FROM regress_health(ARRAY['hlt', 'hlt-storm', 'hlt-lease']);

-- a backlog: critical with nothing running, a warning with a job running,
-- a warning while paused (jobq.health_backlog_age 0: any due job counts)
SET jobq.health_backlog_age = 0;
SELECT count(*) AS enqueued FROM jobq_enqueue_batch('hlt', ARRAY['{}', '{}', '{}']::jsonb[]);
SELECT * FROM regress_health(ARRAY['hlt']);
SELECT count(*) AS claimed FROM jobq_claim('hlt');
SELECT * FROM regress_health(ARRAY['hlt']);
SELECT jobq_pause('hlt');
SELECT * FROM regress_health(ARRAY['hlt']);
SELECT jobq_resume('hlt');
RESET jobq.health_backlog_age;
SELECT * FROM regress_health(ARRAY['hlt']);

-- a retry storm: 100 live jobs, all failed in the last 15 minutes and
-- waiting out their backoff
SELECT count(*) AS enqueued
FROM jobq_enqueue_batch('hlt-storm', ARRAY(SELECT '{}'::jsonb FROM generate_series(1, 100)));
SELECT count(*) FILTER (WHERE jobq_fail(id, token, 'upstream down') = 'ready') AS failed
FROM jobq_claim('hlt-storm', max_jobs => 100);
SELECT * FROM regress_health(ARRAY['hlt-storm']);

-- leases: a lease expired two minutes ago that nobody swept, then, once
-- swept, a lease expiry in a queue that completed nothing
SELECT jobq_enqueue('hlt-lease', '{}') AS jl \gset
SELECT count(*) AS claimed FROM jobq_claim('hlt-lease');
UPDATE jobq.jobs SET locked_until = clock_timestamp() - interval '2 minutes' WHERE id = :jl;
SELECT * FROM regress_health(ARRAY['hlt-lease']);
SELECT requeued FROM jobq_sweep('hlt-lease');
SELECT * FROM regress_health(ARRAY['hlt-lease']);
-- ten completions make it a warning, eleven nothing
SELECT count(*) AS enqueued FROM jobq_enqueue_batch('hlt-lease', ARRAY(SELECT '{}'::jsonb FROM generate_series(1, 10)));
SELECT count(*) FILTER (WHERE jobq_complete(id, token)) AS completed FROM jobq_claim('hlt-lease', max_jobs => 10);
SELECT severity, "check" FROM regress_health(ARRAY['hlt-lease']);
SELECT jobq_enqueue('hlt-lease', '{}') IS NOT NULL AS enqueued;
SELECT jobq_complete(id, token) FROM jobq_claim('hlt-lease');
SELECT severity, "check" FROM regress_health(ARRAY['hlt-lease']);
-- the stored metrics count what the tables do not keep: a flushed minute
-- with 50 lease expiries and 5 completions makes it critical again
INSERT INTO jobq.metrics_minute (queue, start, counters, wait_hist, run_hist, complete)
VALUES ('hlt-lease', date_trunc('minute', clock_timestamp()) - interval '1 minute',
        ARRAY[0, 0, 5, 0, 0, 0, 50, 0], array_fill(0::bigint, ARRAY[16]),
        array_fill(0::bigint, ARRAY[16]), true);
SELECT * FROM regress_health(ARRAY['hlt-lease']);
DELETE FROM jobq.metrics_minute WHERE queue = 'hlt-lease';

-- without shared_preload_libraries there is no background sweeper
SELECT severity, "check", detail FROM jobq_health() WHERE "check" = 'sweeper';
-- one vacuum row per jobq table
SELECT count(*) = (SELECT count(*) FROM pg_tables WHERE schemaname = 'jobq') AS every_table
FROM jobq_health() WHERE "check" = 'vacuum';
SELECT subject FROM jobq_health() WHERE "check" = 'vacuum' AND subject = 'jobq.jobs';
-- critical rows first, then warnings, then ok
SELECT bool_and(rank <= lag_rank) AS ordered FROM (
  SELECT r.rank, lag(r.rank, 1, 2) OVER (ORDER BY n) AS lag_rank
  FROM jobq_health() WITH ORDINALITY AS h(severity, "check", subject, detail, advice, n),
       LATERAL (SELECT CASE h.severity WHEN 'critical' THEN 2 WHEN 'warning' THEN 1 ELSE 0 END AS rank) r) s;
-- every finding says what to do, in a sentence
SELECT count(*) AS without_advice FROM jobq_health() WHERE advice !~ '\.$';

-- a monitor may call it (no payloads are shown)
CREATE ROLE regress_hlt_monitor IN ROLE jobq_monitor;
SET ROLE regress_hlt_monitor;
SELECT severity, "check" FROM jobq_health() WHERE subject = 'hlt-storm';
RESET ROLE;
DROP ROLE regress_hlt_monitor;

SELECT jobq_drop_queue(q, force => true) FROM unnest(ARRAY['hlt', 'hlt-storm', 'hlt-lease']) q;
DROP FUNCTION regress_health(text[]);
DROP FUNCTION regress_fails(text);
