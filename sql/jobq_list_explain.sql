-- jobq_list_explain: with a million finished jobs and 50,000 live ones,
-- analyzed, every jobq_list statement (extension/inspect.c, built from
-- extension/list_filter.h) finds its rows through an index for every
-- state and every filter, alone and combined, with and without a cursor:
-- never a Seq Scan of jobq.jobs or jobq.history.  The plans are generic,
-- as the C prepares them (spi.c), so each is checked with every argument
-- combination the C can pass.  Checked as booleans, so that the test does
-- not depend on costs.
\set VERBOSITY terse
SET client_min_messages = warning;

SELECT jobq_create_queue('lx', completed_retention => '30 days');
SELECT jobq_create_queue('lx-big', completed_retention => '30 days');
SELECT jobq_create_queue('lx-small', completed_retention => '30 days');
-- history (ids from 10,000,001, past every earlier test's): 900,000 rows of lx-big, 99,000 of lx, 1,000 of lx-small, in
-- every finished state; live: 40,000 ready or delayed jobs of lx-big,
-- 10,000 of lx, some running
INSERT INTO jobq.history (id, queue, state, priority, run_at, attempt, max_attempts, worker,
                          enqueued_at, claimed_at, finished_at, dedupe_key, errors, result, payload)
SELECT 10000000 + g, CASE WHEN g % 10 = 0 THEN 'lx' WHEN g % 1000 = 1 THEN 'lx-small' ELSE 'lx-big' END,
       (ARRAY['completed', 'completed', 'completed', 'dead', 'cancelled'])[1 + g % 5]::jobq.job_state,
       g % 7 - 3, now() - interval '1 day', 1, 5, 'w-' || g % 13,
       now() - interval '1 day', now() - interval '1 day',
       now() - (1000001 - g) * interval '1 second',
       CASE WHEN g % 3 = 0 THEN 'key-' || g END,
       CASE WHEN g % 5 = 3 THEN jsonb_build_array(jsonb_build_object('attempt', 1, 'error', 'e' || g % 17)) END,
       NULL, jsonb_build_object('n', g % 100)
FROM generate_series(1, 1000000) g;
SELECT setval(pg_get_serial_sequence('jobq.jobs', 'id'), 12000000) > 0 AS ids_past_these;
INSERT INTO jobq.jobs (id, queue, state, priority, run_at, attempt, max_attempts, token, locked_until,
                       worker, enqueued_at, claimed_at, dedupe_key, payload)
SELECT 11000000 + g, CASE WHEN g % 5 = 0 THEN 'lx' ELSE 'lx-big' END,
       CASE WHEN g % 50 = 7 THEN 'running' ELSE 'ready' END::jobq.job_state,
       g % 7 - 3, now() + CASE WHEN g % 4 = 0 THEN interval '1 hour' ELSE interval '-1 hour' END,
       CASE WHEN g % 50 = 7 THEN 1 ELSE 0 END, 5,
       CASE WHEN g % 50 = 7 THEN gen_random_uuid() END,
       CASE WHEN g % 50 = 7 THEN now() + interval '5 minutes' END,
       CASE WHEN g % 50 = 7 THEN 'w-' || g % 13 END, now(), CASE WHEN g % 50 = 7 THEN now() END,
       CASE WHEN g % 3 = 0 THEN 'key-' || g END, jsonb_build_object('n', g % 100)
FROM generate_series(1, 50000) g;
ANALYZE jobq.jobs;
ANALYZE jobq.history;
ANALYZE jobq.queues;


-- The statements as the C prepares them, with the parameter types of
-- their table: the filter's $1 .. $13 (list_filter.h), then $14, $15 the
-- cursor, $16 the scan cap, $17 the rows, $18 whether errors are read.
DO $$
DECLARE
    s text;
BEGIN
    FOREACH s IN ARRAY ARRAY['list_live', 'list_live_key', 'list_live_ids', 'list_history', 'list_history_ids'] LOOP
        EXECUTE format('PREPARE %I(text, text, timestamptz, int4, int4, text, text, text, timestamptz,'
                       ' timestamptz, int8[], text, jsonb, timestamptz, int8, int8, int8, bool) AS %s',
                       'regress_' || s, jobq._statement(s));
    END LOOP;
END
$$;

-- Every combination the C can bind: which statement runs for which
-- filter is jobq_list_filter_variant's choice (key: the live key
-- statement; ids: the id statements), the others take every filter.
CREATE TABLE regress_filters (name text, prio_min text, prio_max text, worker text, key text,
                              key_prefix text, since text, until text, ids text, error text,
                              payload text);
INSERT INTO regress_filters VALUES
  ('none', 'NULL', 'NULL', 'NULL', 'NULL', 'NULL', 'NULL', 'NULL', 'NULL', 'NULL', 'NULL'),
  ('priority', '-1', '2', 'NULL', 'NULL', 'NULL', 'NULL', 'NULL', 'NULL', 'NULL', 'NULL'),
  ('worker', 'NULL', 'NULL', '''w-3''', 'NULL', 'NULL', 'NULL', 'NULL', 'NULL', 'NULL', 'NULL'),
  ('key', 'NULL', 'NULL', 'NULL', '''key-30''', 'NULL', 'NULL', 'NULL', 'NULL', 'NULL', 'NULL'),
  ('key_prefix', 'NULL', 'NULL', 'NULL', 'NULL', '''key-1''', 'NULL', 'NULL', 'NULL', 'NULL', 'NULL'),
  ('time range', 'NULL', 'NULL', 'NULL', 'NULL', 'NULL', 'now() - interval ''2 hours''', 'now() - interval ''1 hour''', 'NULL', 'NULL', 'NULL'),
  ('since', 'NULL', 'NULL', 'NULL', 'NULL', 'NULL', 'now() - interval ''2 hours''', 'NULL', 'NULL', 'NULL', 'NULL'),
  ('ids', 'NULL', 'NULL', 'NULL', 'NULL', 'NULL', 'NULL', 'NULL', 'ARRAY[10, 20, 1000005, 999990]::int8[]', 'NULL', 'NULL'),
  ('error', 'NULL', 'NULL', 'NULL', 'NULL', 'NULL', 'NULL', 'NULL', 'NULL', '''e1''', 'NULL'),
  ('payload', 'NULL', 'NULL', 'NULL', 'NULL', 'NULL', 'NULL', 'NULL', 'NULL', 'NULL', '''{"n": 5}'''),
  ('all', '-3', '3', '''w-3''', 'NULL', '''key-''', 'now() - interval ''2 days''', 'now()', 'NULL', '''e''', '''{"n": 5}'''),
  ('all with ids', '-3', '3', '''w-3''', 'NULL', '''key-''', 'now() - interval ''2 days''', 'now()', 'ARRAY[10, 20]::int8[]', '''e''', '''{"n": 5}'''),
  ('all with key', '-3', '3', '''w-3''', '''key-30''', 'NULL', 'NULL', 'NULL', 'NULL', '''e''', '''{"n": 5}''');

CREATE FUNCTION regress_list_checks() RETURNS TABLE (statement text, state text, filter text,
    cursor boolean, index_used boolean, no_seq_scan boolean)
LANGUAGE plpgsql AS $$
DECLARE
    f regress_filters;
    st text;
    c boolean;
    queue text;
    p text;
    want text;
BEGIN
    SET LOCAL plan_cache_mode = force_generic_plan;
    FOR f IN SELECT * FROM regress_filters LOOP
        FOREACH queue IN ARRAY ARRAY['lx', 'lx-small'] LOOP
            FOREACH st IN ARRAY ARRAY['', 'ready', 'delayed', 'running', 'completed', 'dead', 'cancelled'] LOOP
                FOREACH c IN ARRAY ARRAY[false, true] LOOP
                    -- the statement jobq_list runs: live ones for a live
                    -- state or none, history ones for a finished state or none
                    FOREACH statement IN ARRAY ARRAY[
                        CASE WHEN st IN ('', 'ready', 'delayed', 'running') THEN
                            CASE WHEN f.ids <> 'NULL' THEN 'list_live_ids'
                                 WHEN f.key <> 'NULL' THEN 'list_live_key' ELSE 'list_live' END END,
                        CASE WHEN st IN ('', 'completed', 'dead', 'cancelled') THEN
                            CASE WHEN f.ids <> 'NULL' THEN 'list_history_ids' ELSE 'list_history' END END]
                    LOOP
                        CONTINUE WHEN statement IS NULL;
                        p := regress_plan(format(
                            'EXECUTE %I(%L, %s, clock_timestamp(), %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, 100000, 101, true)',
                            'regress_' || statement, queue, CASE WHEN st = '' THEN 'NULL' ELSE quote_literal(st) END,
                            f.prio_min, f.prio_max, f.worker, f.key, f.key_prefix, f.since, f.until, f.ids,
                            f.error, f.payload,
                            CASE WHEN c AND statement LIKE 'list_history%' THEN 'now() - interval ''3 hours''' ELSE 'NULL' END,
                            CASE WHEN c THEN '1000500' ELSE 'NULL' END));
                        want := CASE statement
                            WHEN 'list_live' THEN 'Index Scan using jobs_pkey on jobs j'
                            WHEN 'list_live_key' THEN 'Index Scan using jobs_dedupe_idx on jobs j'
                            WHEN 'list_live_ids' THEN 'Index Scan using jobs_pkey on jobs j'
                            WHEN 'list_history' THEN 'Index Scan Backward using history_queue_state_idx on history h'
                            WHEN 'list_history_ids' THEN 'Index Scan using history_pkey on history h' END;
                        state := st;
                        filter := f.name;
                        cursor := c;
                        index_used := position(want IN p) > 0;
                        no_seq_scan := p !~ 'Seq Scan on (jobs|history)';
                        IF NOT (index_used AND no_seq_scan) THEN
                            RAISE WARNING '%', p;
                        END IF;
                        RETURN NEXT;
                    END LOOP;
                END LOOP;
            END LOOP;
        END LOOP;
    END LOOP;
END
$$;

BEGIN;
CREATE TEMP TABLE regress_list_results AS SELECT * FROM regress_list_checks();
COMMIT;
-- one line per statement: how many combinations, and whether all passed
SELECT statement, count(*) AS combinations, count(DISTINCT state) AS states,
       count(DISTINCT filter) AS filters, bool_and(index_used) AS index_used,
       bool_and(no_seq_scan) AS no_seq_scan
FROM regress_list_results GROUP BY statement ORDER BY statement;
-- any that failed (expect no rows)
SELECT statement, state, filter, cursor FROM regress_list_results
WHERE NOT (index_used AND no_seq_scan) ORDER BY 1, 2, 3, 4;
-- the three history branches are merged in order, without sorting the
-- finished jobs of the queue (one index range per state under a Merge Append)
BEGIN;
SET LOCAL plan_cache_mode = force_generic_plan;
SELECT regress_plan($q$EXECUTE regress_list_history('lx', NULL, clock_timestamp(), NULL, NULL,
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 100000, 101, true)$q$)
    ~ 'Merge Append' AS merged;
COMMIT;

-- and the calls themselves, on this data: pages follow, filters match
SELECT count(*) AS page, count(DISTINCT next_cursor) AS one_cursor, bool_or(scan_truncated) AS truncated
FROM jobq_list('lx-big', 'completed', 100);
SELECT count(*) AS live_page FROM jobq_list('lx', 'ready', 100, filters => '{"priority_min": 0}');
SELECT count(*) FILTER (WHERE id IS NOT NULL) AS rows, bool_or(scan_truncated) AS truncated
FROM jobq_list('lx-big', 'dead', 100, filters => '{"payload": {"n": 1000}}');
-- A page reads about the rows it returns, not the whole range: a first
-- page of 100 of lx-big's 540,000 completed jobs, and of its 32,000
-- ready ones, reads at most a few hundred index entries (the index's
-- idx_tup_read, flushed around the call; reading the whole range was 1 s).
CREATE FUNCTION regress_tuples_read(idx text) RETURNS bigint LANGUAGE sql AS $$
SELECT idx_tup_read FROM pg_stat_user_indexes WHERE indexrelid = idx::regclass
$$;
CREATE TABLE regress_reads (what text, before bigint, after bigint);
SELECT pg_stat_force_next_flush();
SELECT pg_stat_clear_snapshot();
INSERT INTO regress_reads SELECT 'history', regress_tuples_read('jobq.history_queue_state_idx'), NULL;
SELECT count(*) AS history_page FROM jobq_list('lx-big', 'completed', 100);
SELECT pg_stat_force_next_flush();
SELECT pg_stat_clear_snapshot();
UPDATE regress_reads SET after = regress_tuples_read('jobq.history_queue_state_idx') WHERE what = 'history';
INSERT INTO regress_reads SELECT 'live', regress_tuples_read('jobq.jobs_pkey'), NULL;
SELECT count(*) AS live_page FROM jobq_list('lx-big', 'ready', 100);
SELECT pg_stat_force_next_flush();
SELECT pg_stat_clear_snapshot();
UPDATE regress_reads SET after = regress_tuples_read('jobq.jobs_pkey') WHERE what = 'live';
SELECT what, after - before BETWEEN 100 AND 1000 AS reads_about_a_page FROM regress_reads ORDER BY what;
DROP TABLE regress_reads;
DROP FUNCTION regress_tuples_read(text);

DEALLOCATE ALL;
DROP FUNCTION regress_list_checks();
DROP TABLE regress_filters;
DELETE FROM jobq.jobs WHERE queue LIKE 'lx%';
DELETE FROM jobq.history WHERE queue LIKE 'lx%';
SELECT jobq_drop_queue(q, force => true) FROM unnest(ARRAY['lx', 'lx-big', 'lx-small']) q;
VACUUM ANALYZE jobq.jobs, jobq.history;
