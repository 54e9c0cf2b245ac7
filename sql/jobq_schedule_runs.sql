-- jobq_schedule_runs: a schedule's runs are a jobq_list of finished jobs
-- with the key prefix 'schedule:<name>:' (issue 17), read through
-- history_schedule_idx backwards (newest first), once per finished state,
-- in the generic plan the C prepares (jobq._statement), among 20,000
-- finished jobs of the queue of which 2,000 are the runs of 20 schedules.
-- Last in the schedule: the rows it loads would change the plans of the
-- tests after it.
\set VERBOSITY terse
SET client_min_messages = warning;
SELECT jobq_create_queue('runs');
INSERT INTO jobq.history (id, queue, state, priority, run_at, attempt, max_attempts, token,
                          worker, enqueued_at, claimed_at, finished_at, payload, dedupe_key)
SELECT -g, 'runs', 'completed', 0, now(), 1, 25, gen_random_uuid(), 'w', now(), now(),
       now() - g * interval '1 s', '{}',
       CASE WHEN g % 10 = 0 THEN 'schedule:nightly-' || (g / 10) % 20 || ':' || g END
FROM generate_series(1, 20000) g;
ANALYZE jobq.history;
SET plan_cache_mode = force_generic_plan;
DO $$ BEGIN
    EXECUTE 'PREPARE regress_list_sched(text, text, timestamptz, integer, integer, text, text,'
            ' text, timestamptz, timestamptz, bigint[], text, jsonb, timestamptz, bigint,'
            ' bigint, bigint, boolean) AS ' || jobq._statement('list_history_schedule');
END $$;
SELECT (length(p) - length(replace(p, 'Index Scan Backward using history_schedule_idx', '')))
         / length('Index Scan Backward using history_schedule_idx') AS states_by_index,
       p NOT LIKE '%Seq Scan%' AS no_seq_scan
FROM regress_plan('EXECUTE regress_list_sched(''runs'', NULL, now(), NULL, NULL, NULL,'
                       ' NULL, ''schedule:nightly-3:'', NULL, NULL, NULL, NULL, NULL, NULL,'
                       ' NULL, 51, 50, false)') p;
DEALLOCATE regress_list_sched;
RESET plan_cache_mode;
-- jobq_list gives them all, newest first, and nothing is capped
SELECT count(*) AS runs, bool_and(dedupe_key LIKE 'schedule:nightly-3:%') AS all_of_it,
       bool_or(scan_truncated) AS capped,
       (array_agg(finished_at ORDER BY ord))[1] = max(finished_at) AS newest_first
FROM jobq_list('runs', 'completed', 500, NULL, '{"key_prefix": "schedule:nightly-3:"}')
     WITH ORDINALITY AS l(id, state, priority, run_at, attempt, max_attempts, enqueued_at,
                          finished_at, last_error, worker, dedupe_key, next_cursor,
                          scan_truncated, ord);
SELECT jobq_drop_queue('runs', force => true);
