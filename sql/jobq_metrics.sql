-- jobq_metrics: the stored metrics (issue 14). Without preload there is
-- no live ring, so the rows are written here directly, or derived by
-- jobq_metrics_flush from history. Checks: every bad input of
-- jobq_metrics with its SQLSTATE; nothing stored means every bucket is
-- there, zero and incomplete; p50/p95/p99 from known histograms; a flush
-- derives finished counts and the run histogram from history (incomplete,
-- with a gap), rolls minutes into hours and hours into days (sums equal,
-- complete only where no gap is), and a second flush writes nothing;
-- jobq_metrics picks the coarsest table and merges; retention keeps what
-- is not rolled up; the pg_stat_jobq view names the counters. Times are
-- relative to :base, a UTC midnight two days ago.
\set VERBOSITY terse
SET client_min_messages = warning;

-- a clean slate: the privilege matrix may have flushed already
DELETE FROM jobq.metrics_state;
DELETE FROM jobq.metrics_gaps;
DELETE FROM jobq.metrics_minute;
DELETE FROM jobq.metrics_hour;
DELETE FROM jobq.metrics_day;

SELECT jobq_create_queue('met-r');
SELECT jobq_create_queue('met-h');
SELECT jobq_create_queue('met-p');
SELECT jobq_create_queue('met-v');
-- The checks below read the minute of now() several times: start them early
-- in a minute (by second 45), so that the test (a few seconds) never crosses into the next
-- one (then a flush would see one more minute, and a "last minute" would
-- move past the gap of the flush).
DO $$
BEGIN
	IF extract(second FROM clock_timestamp()) > 45 THEN
		PERFORM pg_sleep(61 - extract(second FROM clock_timestamp()));
	END IF;
END
$$;
SELECT date_bin('1 day', now(), '2000-01-01 00:00:00+00') - interval '2 days' AS base,
       date_bin('1 minute', now(), '2000-01-01 00:00:00+00') AS this_minute \gset

-- Bad input
SELECT * FROM jobq_metrics('met-r', NULL, now(), '1 minute');
SELECT * FROM jobq_metrics('met-r', now(), NULL, '1 minute');
SELECT * FROM jobq_metrics('met-r', now() - interval '1 hour', now(), NULL);
SELECT * FROM jobq_metrics('met-r', now(), now() - interval '1 hour', '1 minute');
SELECT * FROM jobq_metrics('met-r', '-infinity', now(), '1 minute');
SELECT * FROM jobq_metrics('met-r', now() - interval '1 hour', 'infinity', '1 minute');
SELECT * FROM jobq_metrics('met-r', now() - interval '1 hour', now(), '30 seconds');
SELECT * FROM jobq_metrics('met-r', now() - interval '1 hour', now(), '90 seconds');
SELECT * FROM jobq_metrics('met-r', now() - interval '1 hour', now(), '0');
SELECT * FROM jobq_metrics('met-r', now() - interval '1 hour', now(), '-1 minute');
SELECT * FROM jobq_metrics('met-r', now() - interval '1 hour', now(), '1 month');
SELECT * FROM jobq_metrics('met-r', now() - interval '1 hour', now(), '3651 days');
SELECT * FROM jobq_metrics('met-r', '2026-01-01 00:00+00', '2026-01-08 00:00:01+00', '1 minute');
\set VERBOSITY sqlstate
SELECT * FROM jobq_metrics('met-none');
SELECT * FROM jobq_metrics('Bad Name');
SELECT * FROM jobq_metrics('met-r', NULL, now(), '1 minute');
SELECT * FROM jobq_metrics('met-r', '2026-01-01 00:00+00', '2026-01-08 00:00:01+00', '1 minute');
\set VERBOSITY terse
-- at the cap: 10,000 one-minute buckets are fine; from = to is none
SELECT count(*) FROM jobq_metrics('met-r', '2026-01-01 00:00+00', '2026-01-07 22:40+00', '1 minute');
SELECT count(*) FROM jobq_metrics('met-r', now(), now(), '1 minute');

-- Nothing stored, never flushed: every bucket, zeros, incomplete
SELECT bucket - :'base' AS at, counters, wait_hist = array_fill(0::bigint, ARRAY[16]) AS no_wait,
       wait_p50, run_p99, oldest_ready_age, complete
FROM jobq_metrics('met-r', :'base', :'base'::timestamptz + interval '3 minutes', '1 minute');
-- buckets are aligned to the bucket length, from 2000-01-01 00:00 UTC
SELECT bucket - :'base' AS at
FROM jobq_metrics('met-r', :'base'::timestamptz + interval '7 minutes', :'base'::timestamptz + interval '20 minutes', '5 minutes');

-- Percentiles from known histograms (buckets [0,1) [1,3) [3,10) [10,30)
-- [30,100) ... ms, the last one 1 hour and more): wait: 100 samples in
-- [1,3) ms; run: 50 in [10,30), 45 in [100,300), 5 of 1 hour or more
INSERT INTO jobq.metrics_state VALUES (true, :'base', :'base', :'base', :'base');
INSERT INTO jobq.metrics_minute VALUES
 ('met-p', :'base'::timestamptz - interval '1 day', '{100,100,100,0,0,0,0,0}',
  '{0,100,0,0,0,0,0,0,0,0,0,0,0,0,0,0}', '{0,0,0,50,0,45,0,0,0,0,0,0,0,0,0,5}', NULL, true);
UPDATE jobq.metrics_state SET flushed_through = :'base';
SELECT counters, wait_p50, wait_p95, wait_p99, run_p50, run_p95, run_p99, complete
FROM jobq_metrics('met-p', :'base'::timestamptz - interval '1 day', :'base'::timestamptz - interval '1 day' + interval '1 minute', '1 minute');
-- (before the first flush, since = base: incomplete)
DELETE FROM jobq.metrics_state;

-- Rollups. met-r: 60 minutes of hour 1 (minute i counts i enqueued, 2i
-- claimed, 3i completed; one wait and one run sample in bucket i % 16),
-- 30 minutes of hour 2, one of them incomplete; met-h: three jobs
-- finished five minutes ago, from history.
INSERT INTO jobq.metrics_minute
SELECT 'met-r', :'base'::timestamptz + interval '1 hour' + i * interval '1 minute',
       ARRAY[i, 2 * i, 3 * i, 0, 0, 0, 0, 0]::bigint[],
       (SELECT array_agg(CASE WHEN b = i % 16 THEN 1 ELSE 0 END ORDER BY b) FROM generate_series(0, 15) b)::bigint[],
       (SELECT array_agg(CASE WHEN b = i % 16 THEN 1 ELSE 0 END ORDER BY b) FROM generate_series(0, 15) b)::bigint[],
       i * interval '1 second', true
FROM generate_series(0, 59) i;
INSERT INTO jobq.metrics_minute
SELECT 'met-r', :'base'::timestamptz + interval '2 hours' + i * interval '1 minute',
       '{1,1,1,0,0,0,0,0}', array_fill(0::bigint, ARRAY[16]), array_fill(0::bigint, ARRAY[16]),
       NULL, i <> 7
FROM generate_series(0, 29) i;
SELECT jobq_enqueue('met-h', '{}') FROM generate_series(1, 3) \g /dev/null
SELECT count(*) FROM (SELECT jobq_complete(id, token) FROM jobq_claim('met-h', 'w', 3)) c;
UPDATE jobq.history
SET finished_at = :'this_minute'::timestamptz - interval '5 minutes' + interval '10 seconds',
    claimed_at = :'this_minute'::timestamptz - interval '5 minutes' + interval '10 seconds'
                 - CASE WHEN id % 3 = 0 THEN interval '2 ms' ELSE interval '20 ms' END
WHERE queue = 'met-h';
-- watermarks: minutes flushed up to ten minutes ago, nothing rolled up
INSERT INTO jobq.metrics_state VALUES
 (true, :'base', :'this_minute'::timestamptz - interval '10 minutes', :'base', :'base');

SELECT minutes >= 1 AS wrote_minutes, hours >= 2 AS wrote_hours, days >= 1 AS wrote_days
FROM jobq_metrics_flush();
-- the minute of met-h, from history: 3 completed, run in [1,3) and [10,30)
SELECT start - :'this_minute'::timestamptz AS at, counters, run_hist, complete
FROM jobq.metrics_minute WHERE queue = 'met-h';
-- the gap covers what no ring saw
SELECT since - :'this_minute'::timestamptz AS since, until <= now() AS until_now, reason
FROM jobq.metrics_gaps;
-- the watermarks moved: minutes up to now, hours and days up to their last whole one
SELECT flushed_through > now() - interval '1 minute' - interval '3 seconds' AS minutes_now,
       hours_through = date_bin('1 hour', flushed_through, '2000-01-01 00:00:00+00') AS hours_whole,
       days_through = date_bin('1 day', hours_through, '2000-01-01 00:00:00+00') AS days_whole
FROM jobq.metrics_state;
-- each hour is the sum of its minutes; hour 2 is incomplete (one minute is);
-- the minutes stored with 8 counters (as before limit_held and rate_held)
-- roll up with those two as 0
SELECT h.start - :'base' AS hour, h.counters, h.oldest_ready_age, h.complete,
       h.counters = (SELECT ARRAY[sum(counters[1]), sum(counters[2]), sum(counters[3]), 0, 0, 0, 0, 0, 0, 0]::bigint[]
                     FROM jobq.metrics_minute m
                     WHERE m.queue = h.queue AND m.start >= h.start AND m.start < h.start + interval '1 hour') AS sums,
       h.wait_hist = (SELECT array_agg(s ORDER BY b) FROM (
                        SELECT b, sum(m.wait_hist[b + 1])::bigint AS s
                        FROM jobq.metrics_minute m, generate_series(0, 15) b
                        WHERE m.queue = h.queue AND m.start >= h.start AND m.start < h.start + interval '1 hour'
                        GROUP BY b) x) AS wait_sums
FROM jobq.metrics_hour h WHERE h.queue = 'met-r' ORDER BY h.start;
-- the day is the sum of its hours; complete: no gap, every hour complete
SELECT d.start - :'base' AS day, d.counters, d.complete,
       d.counters = (SELECT ARRAY[sum(counters[1]), sum(counters[2]), sum(counters[3]), 0, 0, 0, 0, 0, 0, 0]::bigint[]
                     FROM jobq.metrics_hour h WHERE h.queue = d.queue AND h.start >= d.start
                       AND h.start < d.start + interval '1 day') AS sums
FROM jobq.metrics_day d WHERE d.queue = 'met-r';

-- Idempotent: a second flush writes nothing (this minute is not over)
CREATE TEMP TABLE regress_before AS
SELECT 'minute' AS t, queue, start, counters FROM jobq.metrics_minute
UNION ALL SELECT 'hour', queue, start, counters FROM jobq.metrics_hour
UNION ALL SELECT 'day', queue, start, counters FROM jobq.metrics_day;
SELECT hours, days FROM jobq_metrics_flush();
SELECT count(*) AS changed FROM (
  (SELECT 'minute' AS t, queue, start, counters FROM jobq.metrics_minute
   UNION ALL SELECT 'hour', queue, start, counters FROM jobq.metrics_hour
   UNION ALL SELECT 'day', queue, start, counters FROM jobq.metrics_day
   EXCEPT ALL SELECT * FROM regress_before)
  UNION ALL
  (SELECT * FROM regress_before
   EXCEPT ALL (SELECT 'minute' AS t, queue, start, counters FROM jobq.metrics_minute
               UNION ALL SELECT 'hour', queue, start, counters FROM jobq.metrics_hour
               UNION ALL SELECT 'day', queue, start, counters FROM jobq.metrics_day))) x
WHERE queue LIKE 'met-%';
-- a flush from an older watermark (a restored dump, a reset) counts nothing twice
UPDATE jobq.metrics_state SET hours_through = :'base', days_through = :'base';
SELECT hours, days FROM jobq_metrics_flush();
SELECT start - :'base' AS hour, counters FROM jobq.metrics_hour WHERE queue = 'met-r' ORDER BY start;

-- jobq_metrics merges: per day from the day table, per hour from hours,
-- per 30 minutes from minutes; the same totals every way
SELECT bucket - :'base' AS at, counters, complete
FROM jobq_metrics('met-r', :'base', :'base'::timestamptz + interval '1 day', '1 day');
SELECT bucket - :'base' AS at, counters, run_p50, oldest_ready_age, complete
FROM jobq_metrics('met-r', :'base', :'base'::timestamptz + interval '4 hours', '1 hour');
SELECT bucket - :'base' AS at, counters, complete
FROM jobq_metrics('met-r', :'base'::timestamptz + interval '1 hour', :'base'::timestamptz + interval '3 hours', '30 minutes');
-- every queue the caller may inspect, when queue is NULL
SELECT queue, count(*) AS buckets, sum(counters[3]) AS completed
FROM jobq_metrics(NULL, :'base'::timestamptz + interval '1 hour', :'base'::timestamptz + interval '3 hours', '1 hour')
WHERE queue LIKE 'met-%' GROUP BY queue ORDER BY queue;
-- the current bucket is never complete (the newest of the range: the
-- minute before may be in the hour before)
SELECT complete FROM jobq_metrics('met-r', now() - interval '1 minute', now(), '1 hour')
ORDER BY bucket DESC LIMIT 1;

-- Retention: minutes older than the setting go once rolled into hours
SET jobq.metrics_minute_retention = '1h';
SELECT purged >= 90 AS purged FROM jobq_metrics_flush();
SELECT count(*) AS met_r_minutes FROM jobq.metrics_minute WHERE queue = 'met-r';
SELECT count(*) AS met_r_hours FROM jobq.metrics_hour WHERE queue = 'met-r';
-- purged minutes make one-minute buckets there incomplete; hours still serve
SELECT bool_or(complete) AS any_complete, sum(counters[1]) AS enqueued
FROM jobq_metrics('met-r', :'base'::timestamptz + interval '1 hour', :'base'::timestamptz + interval '2 hours', '1 minute');
SELECT complete, counters[1] AS enqueued
FROM jobq_metrics('met-r', :'base'::timestamptz + interval '1 hour', :'base'::timestamptz + interval '2 hours', '1 hour');
RESET jobq.metrics_minute_retention;
SET jobq.metrics_minute_retention = '59min';
RESET jobq.metrics_minute_retention;

-- pg_stat_jobq: the counts, and the last finished minute by counter name
-- (incomplete: a gap covers it); one transaction, so
-- that now() names one minute throughout
BEGIN;
INSERT INTO jobq.metrics_minute VALUES
 ('met-v', date_trunc('minute', now()) - interval '1 minute', '{1,2,3,4,5,6,7,8}',
  '{0,10,0,0,0,0,0,0,0,0,0,0,0,0,0,0}', '{0,0,10,0,0,0,0,0,0,0,0,0,0,0,0,0}', NULL, true)
ON CONFLICT DO NOTHING;
UPDATE jobq.metrics_state SET flushed_through = date_trunc('minute', now());
-- the gap of the last minute, whatever minute the flush above ran in
INSERT INTO jobq.metrics_gaps
VALUES (date_trunc('minute', now()) - interval '1 minute', date_trunc('minute', now()), 'regress')
ON CONFLICT DO NOTHING;
SELECT queue, ready, completed, minute = date_trunc('minute', now()) - interval '1 minute' AS last_minute,
       minute_enqueued, minute_claimed, minute_completed, minute_retried, minute_dead,
       minute_cancelled, minute_lease_expired, minute_stale_acks,
       minute_wait_p50, minute_run_p99, minute_complete
FROM pg_stat_jobq WHERE queue IN ('met-v', 'met-h') ORDER BY queue;
COMMIT;

SELECT jobq_drop_queue(q, force => true)
FROM unnest(ARRAY['met-r', 'met-h', 'met-p', 'met-v']) q;
-- a dropped queue's stored metrics stay: all queues include it, by name it is unknown
SELECT queue, count(*) AS buckets, sum(counters[1]) AS enqueued
FROM jobq_metrics(NULL, :'base'::timestamptz + interval '1 hour', :'base'::timestamptz + interval '3 hours', '1 hour')
WHERE queue LIKE 'met-%' GROUP BY queue ORDER BY queue;
\set VERBOSITY sqlstate
SELECT count(*) FROM jobq_metrics('met-r');
\set VERBOSITY terse
DELETE FROM jobq.metrics_state;
DELETE FROM jobq.metrics_gaps;
DELETE FROM jobq.metrics_minute;
DELETE FROM jobq.metrics_hour;
DELETE FROM jobq.metrics_day;
