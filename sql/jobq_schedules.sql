-- jobq_schedules: recurring jobs (issue 17; T4: time moves only through
-- the superuser-only jobq.test_now). jobq_schedule (defaults, the
-- upsert: a payload edit keeps the next tick, a new expression recomputes
-- it from now and never backfills; every bad input with its SQLSTATE and
-- nothing written), jobq_cron_tick through the test clock jobq.test_now:
-- a simulated 3-hour outage under each catch-up policy, the backfill cap,
-- a clock set back (nothing fires twice), overlap 'skip', a failing
-- schedule backing off without stalling the others; start_at, end_at,
-- @every anchoring; pause, resume (no backfill), trigger (the next tick
-- stays), unschedule; jobq_drop_queue needs force; who sees payloads; the
-- test clock is for superusers only; the tick's plans use schedules_due_idx.
\set VERBOSITY terse
SET client_min_messages = warning;
SET TimeZone = 'UTC';
SET DateStyle = ISO;
SET IntervalStyle = postgres;

SELECT jobq_create_queue('sch');
SET jobq.test_now = '2026-03-01 00:00:00+00';

-- create: the next tick after now; the defaults
SELECT jobq_schedule('sch-hourly', 'sch', '0 * * * *');
SELECT name, queue, expr, tz, payload, overlap, catchup, grace, priority, max_attempts,
       start_at, end_at, paused, next_run_at, last_run_at, last_job_id, last_job_state,
       missed_ticks, skipped_ticks, failures, retry_at, last_error, source,
       created_at, updated_at
FROM jobq_schedules();

-- the upsert: a payload or priority edit keeps the next tick; a new
-- expression recomputes it from now
SET jobq.test_now = '2026-03-01 00:30:00+00';
SELECT jobq_schedule('sch-hourly', 'sch', '0 * * * *', '{"v": 2}', priority => 5);
SELECT jobq_schedule('sch-hourly', 'sch', '*/20 * * * *', '{"v": 2}', priority => 5);
SELECT expr, payload, priority, next_run_at, created_at, updated_at
FROM jobq_schedules() WHERE name = 'sch-hourly';
SELECT jobq_unschedule('sch-hourly');

-- bad input: SQLSTATE each, nothing written (the parser's own messages
-- are its test's: here only their SQLSTATE)
\set VERBOSITY sqlstate
SELECT jobq_schedule(NULL, 'sch', '0 * * * *');
SELECT jobq_schedule('sch-bad', NULL, '0 * * * *');
SELECT jobq_schedule('sch-bad', 'sch', NULL);
SELECT jobq_schedule('sch-bad', 'sch', '61 * * * *');
SELECT jobq_schedule('sch-bad', 'sch', '0 * * *');
SELECT jobq_schedule('sch-bad', 'sch', '0 * * * *', tz => 'CDT');
SELECT jobq_schedule('sch-bad', 'sch', '0 * * * *', tz => 'Mars/Olympus_Mons');
\set VERBOSITY terse
SELECT jobq_schedule('Sch Bad', 'sch', '0 * * * *');
SELECT jobq_schedule('', 'sch', '0 * * * *');
SELECT jobq_schedule(repeat('s', 129), 'sch', '0 * * * *');
SELECT jobq_schedule('sch-bad', 'sch-nope', '0 * * * *');
SELECT jobq_schedule('sch-bad', 'Sch', '0 * * * *');
SELECT jobq_schedule('sch-bad', 'sch', '0 * * * *', '[1, 2]');
SELECT jobq_schedule('sch-bad', 'sch', '0 * * * *', '"text"');
SELECT jobq_schedule('sch-bad', 'sch', '0 * * * *', '{"_cron": 1}');
SELECT jobq_schedule('sch-bad', 'sch', '0 * * * *', overlap => 'never');
SELECT jobq_schedule('sch-bad', 'sch', '0 * * * *', catchup => 'some');
SELECT jobq_schedule('sch-bad', 'sch', '0 * * * *', grace => '-1 second');
SELECT jobq_schedule('sch-bad', 'sch', '0 * * * *', grace => '31 days 1 second');
SELECT jobq_schedule('sch-bad', 'sch', '0 * * * *', priority => 1001);
SELECT jobq_schedule('sch-bad', 'sch', '0 * * * *', max_attempts => 0);
SELECT jobq_schedule('sch-bad', 'sch', '0 * * * *', start_at => 'infinity');
SELECT jobq_schedule('sch-bad', 'sch', '0 * * * *', end_at => '-infinity');
SELECT jobq_schedule('sch-bad', 'sch', '0 * * * *', start_at => '2026-03-02', end_at => '2026-03-01');
SELECT jobq_schedule('sch-bad', 'sch', '0 * * * *', start_at => '2026-03-02', end_at => '2026-03-02');
SELECT jobq_schedule('sch-bad', 'sch', '0 * * * *', source => '');
SELECT jobq_unschedule(NULL);
SELECT jobq_unschedule('Bad!');
SELECT jobq_pause_schedule('sch-nope');
SELECT jobq_resume_schedule('sch-nope');
SELECT jobq_trigger_schedule('sch-nope');
SELECT jobq_cron_tick(0);
SELECT jobq_cron_tick(1001);
SELECT count(*) AS bad_created FROM jobq_schedules();

-- the 3-hour outage: four schedules created at midnight, ticked on time
-- at 00:01, then not again until 03:01:30.  Ticks older than the grace
-- (5 minutes) never fire; of those within it, latest fires the newest,
-- none fires nothing (ticks were missed), all fires each, oldest first.
SET jobq.test_now = '2026-03-01 00:00:00+00';
SELECT jobq_schedule('sch-latest', 'sch', '* * * * *');
SELECT jobq_schedule('sch-none', 'sch', '* * * * *', catchup => 'none');
SELECT jobq_schedule('sch-all', 'sch', '* * * * *', catchup => 'all');
SELECT jobq_schedule('sch-daily', 'sch', '0 1 * * *', '{"report": "daily"}');
SET jobq.test_now = '2026-03-01 00:01:00.5+00';
SELECT schedule, tick, job_id IS NOT NULL AS has_job, status
FROM jobq_cron_tick() ORDER BY schedule, tick;
-- again at the same time: nothing is due
SELECT count(*) AS fired_again FROM jobq_cron_tick();
SET jobq.test_now = '2026-03-01 03:01:30+00';
SELECT schedule, tick, job_id IS NOT NULL AS has_job, status
FROM jobq_cron_tick() ORDER BY schedule, tick;
SELECT name, next_run_at, last_run_at, missed_ticks, skipped_ticks, last_job_state
FROM jobq_schedules() ORDER BY name;
-- the jobs: the tick in the dedupe key and in "_cron"
SELECT j.dedupe_key, j.payload, j.priority, j.max_attempts, j.run_at <= clock_timestamp() AS ready_now
FROM jobq.jobs j WHERE j.dedupe_key LIKE 'schedule:sch-%' ORDER BY j.id;

-- the clock set back an hour: nothing fires, nothing moves back; forward
-- again, each fires once
SET jobq.test_now = '2026-03-01 02:01:30+00';
SELECT count(*) AS fired_in_the_past FROM jobq_cron_tick();
SELECT name, next_run_at FROM jobq_schedules() ORDER BY name;
SET jobq.test_now = '2026-03-01 03:02:00+00';
SELECT schedule, tick, status FROM jobq_cron_tick() ORDER BY schedule, tick;
-- exactly one job per (schedule, tick), across everything fired so far
SELECT count(*) AS jobs, count(DISTINCT dedupe_key) AS ticks
FROM jobq.jobs WHERE dedupe_key LIKE 'schedule:sch-%';
SELECT jobq_unschedule('sch-latest'), jobq_unschedule('sch-none'),
       jobq_unschedule('sch-daily');

-- catch-up 'all' capped by jobq.cron_max_backfill: 2 per call, the rest
-- in the next calls; max_schedules bounds the schedules per call
SET jobq.cron_max_backfill = 2;
SET jobq.test_now = '2026-03-01 03:07:00+00';
SELECT schedule, tick, status FROM jobq_cron_tick() ORDER BY tick;
SELECT schedule, tick, status FROM jobq_cron_tick(max_schedules => 1) ORDER BY tick;
SELECT schedule, tick, status FROM jobq_cron_tick() ORDER BY tick;
SELECT count(*) AS nothing_left FROM jobq_cron_tick();
RESET jobq.cron_max_backfill;
SELECT jobq_unschedule('sch-all');
SELECT jobq_purge('sch') IS NOT NULL AS purged;
DELETE FROM jobq.jobs WHERE queue = 'sch';

-- overlap 'skip': no tick fires while the last job is live; once it
-- completed, the next does
SET jobq.test_now = '2026-03-01 04:00:00+00';
SELECT jobq_schedule('sch-skip', 'sch', '* * * * *', overlap => 'skip');
SET jobq.test_now = '2026-03-01 04:01:00+00';
SELECT schedule, tick, status FROM jobq_cron_tick();
SET jobq.test_now = '2026-03-01 04:02:00+00';
SELECT schedule, tick, status FROM jobq_cron_tick();
SELECT count(*) AS completed
FROM jobq_claim('sch') c, LATERAL jobq_complete(c.id, c.token) AS done WHERE done;
SET jobq.test_now = '2026-03-01 04:03:00+00';
SELECT schedule, tick, status FROM jobq_cron_tick();
SELECT skipped_ticks, missed_ticks, last_run_at FROM jobq_schedules() WHERE name = 'sch-skip';
SELECT jobq_unschedule('sch-skip');
DELETE FROM jobq.jobs WHERE queue = 'sch';

-- a failing schedule (its payload over jobq.max_payload_size) backs off
-- 1 s, 2 s, ... and keeps its error, while another fires on time
SET jobq.test_now = '2026-03-01 05:00:00+00';
SELECT jobq_schedule('sch-big', 'sch', '* * * * *',
                     jsonb_build_object('blob', repeat('x', 2000))) IS NOT NULL AS created;
SELECT jobq_schedule('sch-ok', 'sch', '* * * * *') IS NOT NULL AS created;
SET jobq.max_payload_size = '1kB';
SET jobq.test_now = '2026-03-01 05:01:00+00';
SELECT schedule, tick, job_id IS NOT NULL AS has_job, status FROM jobq_cron_tick() ORDER BY schedule;
SELECT name, failures, retry_at, last_error, next_run_at FROM jobq_schedules() ORDER BY name;
-- not due again before its retry
SET jobq.test_now = '2026-03-01 05:01:00.9+00';
SELECT count(*) AS fired FROM jobq_cron_tick();
SET jobq.test_now = '2026-03-01 05:01:01+00';
SELECT schedule, status FROM jobq_cron_tick();
SELECT failures, retry_at FROM jobq_schedules() WHERE name = 'sch-big';
-- fixed: it fires the tick it owes (within the grace), and recovers
RESET jobq.max_payload_size;
SET jobq.test_now = '2026-03-01 05:01:03+00';
SELECT schedule, tick, status FROM jobq_cron_tick();
SELECT name, failures, retry_at, last_error, next_run_at FROM jobq_schedules() ORDER BY name;
SELECT jobq_unschedule('sch-big'), jobq_unschedule('sch-ok');
DELETE FROM jobq.jobs WHERE queue = 'sch';

-- an edit never backfills: the 06:00 tick was due, the new expression
-- starts from now
SET jobq.test_now = '2026-03-01 05:59:00+00';
SELECT jobq_schedule('sch-edit', 'sch', '0 * * * *');
SET jobq.test_now = '2026-03-01 06:10:00+00';
SELECT jobq_schedule('sch-edit', 'sch', '30 * * * *');
SELECT count(*) AS fired FROM jobq_cron_tick();

-- pause: nothing fires; resume: from now, the ticks slept through are gone
SELECT jobq_pause_schedule('sch-edit');
SET jobq.test_now = '2026-03-01 08:45:00+00';
SELECT count(*) AS fired_while_paused FROM jobq_cron_tick();
SELECT paused, next_run_at FROM jobq_schedules() WHERE name = 'sch-edit';
SELECT jobq_resume_schedule('sch-edit');
SELECT jobq_resume_schedule('sch-edit');
SELECT count(*) AS fired_after_resume FROM jobq_cron_tick();

-- trigger: a manual run now, also while paused; the next tick stays
SELECT jobq_pause_schedule('sch-edit');
SELECT jobq_trigger_schedule('sch-edit') AS triggered \gset
SELECT last_job_id = :triggered AS is_last_job, next_run_at, last_run_at
FROM jobq_schedules() WHERE name = 'sch-edit';
SELECT dedupe_key, payload FROM jobq.jobs WHERE dedupe_key LIKE 'schedule:sch-edit:%';

-- unschedule: true once, then false; its jobs stay
SELECT jobq_unschedule('sch-edit'), jobq_unschedule('sch-edit');
SELECT count(*) AS jobs_kept FROM jobq.jobs WHERE dedupe_key LIKE 'schedule:sch-edit:%';
DELETE FROM jobq.jobs WHERE queue = 'sch';

-- start_at: no tick before it, it may be one; end_at: none after it
SET jobq.test_now = '2026-03-01 09:00:00+00';
SELECT jobq_schedule('sch-window', 'sch', '0 * * * *',
                     start_at => '2026-03-01 12:00+00', end_at => '2026-03-01 13:30+00');
SET jobq.test_now = '2026-03-01 12:00:00+00';
SELECT schedule, tick, status FROM jobq_cron_tick();
SET jobq.test_now = '2026-03-01 13:00:00+00';
SELECT schedule, tick, status FROM jobq_cron_tick();
SELECT next_run_at FROM jobq_schedules() WHERE name = 'sch-window';
-- a schedule whose end has passed: NULL, no tick is left
SELECT jobq_schedule('sch-ended', 'sch', '0 * * * *', end_at => '2026-03-01 12:00+00');
SELECT jobq_unschedule('sch-window'), jobq_unschedule('sch-ended');
DELETE FROM jobq.jobs WHERE queue = 'sch';

-- @every is anchored at start_at (else the creation, to the second): no
-- drift however late the tick runs
SET jobq.test_now = '2026-03-01 14:00:00.25+00';
SELECT jobq_schedule('sch-every', 'sch', '@every 10m');
SELECT jobq_schedule('sch-every-at', 'sch', '@every 10m', start_at => '2026-03-01 14:03:00+00');
SET jobq.test_now = '2026-03-01 14:13:59+00';
SELECT schedule, tick, status FROM jobq_cron_tick() ORDER BY schedule;
SELECT name, next_run_at FROM jobq_schedules() ORDER BY name;
SELECT jobq_unschedule('sch-every'), jobq_unschedule('sch-every-at');
DELETE FROM jobq.jobs WHERE queue = 'sch';

-- a queue that schedules point at is dropped only with force, which
-- unschedules them
SELECT jobq_create_queue('sch-drop');
SELECT jobq_schedule('sch-on-drop', 'sch-drop', '0 * * * *') IS NOT NULL AS created;
\set VERBOSITY sqlstate
SELECT jobq_drop_queue('sch-drop');
\set VERBOSITY terse
SELECT jobq_drop_queue('sch-drop');
SELECT count(*) AS still_there FROM jobq_schedules() WHERE name = 'sch-on-drop';
SELECT jobq_drop_queue('sch-drop', force => true);
SELECT count(*) AS unscheduled FROM jobq_schedules() WHERE name = 'sch-on-drop';

-- payloads are jobq_reader's: jobq_monitor sees the schedule without it
SELECT jobq_schedule('sch-secret', 'sch', '0 * * * *', '{"token": "s3cret"}') IS NOT NULL AS created;
CREATE ROLE regress_sch_monitor IN ROLE jobq_monitor;
CREATE ROLE regress_sch_reader IN ROLE jobq_reader;
SET ROLE regress_sch_monitor;
SELECT name, payload FROM jobq_schedules();
SET ROLE regress_sch_reader;
SELECT name, payload FROM jobq_schedules();
-- the test clock is for superusers only
\set VERBOSITY sqlstate
SET jobq.test_now = '2026-01-01 00:00:00+00';
RESET ROLE;
SET jobq.test_now = 'next tuesday';
SET jobq.test_now = 'infinity';
\set VERBOSITY terse
DROP ROLE regress_sch_monitor;
DROP ROLE regress_sch_reader;
SELECT jobq_unschedule('sch-secret');

-- the tick's statements find due schedules through schedules_due_idx, in
-- generic plans as the C prepares them (jobq._statement), among 2000
-- schedules of which none is due
SET jobq.test_now = '2026-03-01 00:00:00+00';
SELECT count(jobq_schedule('sch-many-' || g, 'sch', '0 0 1 1 *')) FROM generate_series(1, 2000) g;
ANALYZE jobq.schedules;
SET plan_cache_mode = force_generic_plan;
DO $$ BEGIN
    EXECUTE 'PREPARE regress_tick_due(timestamptz, integer) AS ' || jobq._statement('tick_due');
    EXECUTE 'PREPARE regress_tick_next_due AS ' || jobq._statement('tick_next_due');
END $$;
SELECT p LIKE '%Index Scan using schedules_due_idx%' AS due_by_index,
       p LIKE '%LockRows%' AND p NOT LIKE '%Seq Scan%' AND p NOT LIKE '%Sort%' AS locked_in_index_order
FROM regress_plan('EXECUTE regress_tick_due(''2026-03-01'', 32)') p;
SELECT p LIKE '%schedules_due_idx%' AND p NOT LIKE '%Seq Scan%' AS next_due_by_index
FROM regress_plan('EXECUTE regress_tick_next_due') p;
DEALLOCATE regress_tick_due;
DEALLOCATE regress_tick_next_due;
RESET plan_cache_mode;
SELECT count(*) AS fired FROM jobq_cron_tick();

RESET jobq.test_now;
SELECT jobq_drop_queue('sch', force => true);
