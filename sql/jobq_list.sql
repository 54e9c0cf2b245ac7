-- jobq_list (0.2.0): keyset pages (after, next_cursor; never an OFFSET)
-- across live and finished jobs, every filter of list_filter.h alone and
-- combined, the capped scan (jobq.list_scan_limit, scan_truncated and the
-- continuation row), and every bad input: 22023 naming the key, 42501 for
-- the error and payload filters without jobq_reader.  Plans are in
-- jobq_explain.
\set VERBOSITY terse
SET client_min_messages = warning;

CREATE FUNCTION regress_try_list(stmt text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE stmt;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END
$$;

SELECT jobq_create_queue('lst', completed_retention => '1 day', max_attempts => 2,
                         backoff_base => '0');
SELECT jobq_create_queue('lst-other');
SELECT jobq_enqueue('lst-other', '{"other": true}', dedupe_key => 'k-1') > 0 AS other_queue;
-- ids b+0 .. b+9: payload n, priority n - 5, keys k-0 .. k-9 (even n)
SELECT min(id) AS b FROM (
  SELECT jobq_enqueue('lst', jsonb_build_object('n', g, 'kind', CASE WHEN g % 2 = 0 THEN 'even' ELSE 'odd' END),
                      priority => g - 5,
                      dedupe_key => CASE WHEN g % 2 = 0 THEN 'k-' || g END) AS id
  FROM generate_series(0, 9) g) x \gset
-- b+0..b+2 completed by worker-a, b+3 dead after two failures by worker-b,
-- b+4 cancelled, b+5 running (worker-c), b+6 delayed, b+7..b+9 ready
SELECT count(jobq_complete(id, token, jsonb_build_object('done', id - :b)))
FROM jobq_claim('lst', 'worker-a', 3);
SELECT jobq_fail(id, token, 'Disk FULL on /var') FROM jobq_claim('lst', 'worker-b', 1);
SELECT jobq_fail(id, token, 'timeout talking to db') FROM jobq_claim('lst', 'worker-b', 1);
SELECT jobq_cancel(:b + 4);
SELECT count(*) AS running FROM jobq_claim('lst', 'worker-c', 1);
UPDATE jobq.jobs SET run_at = now() + interval '1 hour' WHERE id = :b + 6;
-- fixed finish times, so that order and time filters are exact
UPDATE jobq.history SET finished_at = '2026-01-01 00:00:00+00'::timestamptz + (id - :b) * interval '1 hour'
WHERE queue = 'lst';
UPDATE jobq.history SET finished_at = '2026-01-01 01:00:00+00' WHERE id = :b + 2;  -- a tie with b+1

-- every job: live by id, then finished newest first (ties by id)
SELECT id - :b AS n, state, priority, attempt, worker, dedupe_key, last_error,
       finished_at, next_cursor IS NULL AS last_page, scan_truncated
FROM jobq_list('lst');
-- 0.1.0's call, positionally: the same rows
SELECT count(*) AS rows_3_args FROM jobq_list('lst', NULL, 100);

-- Every page of a listing, following next_cursor (at most 20 pages)
CREATE FUNCTION regress_walk(rows_per_page int, f jsonb)
RETURNS TABLE (page int, n bigint, state text, next_cursor text, truncated boolean)
LANGUAGE plpgsql AS $$
DECLARE
    c text := NULL;
    l record;
BEGIN
    FOR p IN 1..20 LOOP
        page := p;
        next_cursor := NULL;
        FOR l IN SELECT * FROM jobq_list('lst', max_rows => rows_per_page, after => c, filters => f) LOOP
            n := l.id;
            state := l.state;
            next_cursor := l.next_cursor;
            truncated := l.scan_truncated;
            RETURN NEXT;
        END LOOP;
        c := next_cursor;
        EXIT WHEN c IS NULL;
    END LOOP;
END
$$;
-- pages of 2, through every page (the cursor crosses from live to finished)
CREATE TABLE regress_pages AS SELECT * FROM regress_walk(2, '{}');
SELECT page, array_agg(n - :b ORDER BY n) AS jobs, array_agg(DISTINCT state) AS states
FROM regress_pages r, (SELECT :b AS b) x GROUP BY page ORDER BY page;
SELECT count(*) = 10 AS every_job_once, count(DISTINCT n) = 10 AS no_repeat FROM regress_pages;
-- the cursors are opaque, but stable: a live one names the last id
SELECT DISTINCT next_cursor = 'j:' || (:b + 6) AS live_cursor FROM regress_pages WHERE page = 1;

-- one state, paged: finished states newest first
SELECT id - :b AS n, next_cursor IS NOT NULL AS more FROM jobq_list('lst', 'completed', 2);
SELECT id - :b AS n, next_cursor IS NOT NULL AS more
FROM jobq_list('lst', 'completed', 2, after => (SELECT next_cursor FROM jobq_list('lst', 'completed', 2) LIMIT 1));
SELECT state, array_agg(id - :b ORDER BY id) AS jobs
FROM unnest(ARRAY['ready', 'delayed', 'running', 'completed', 'dead', 'cancelled']) s,
     LATERAL jobq_list('lst', s) l GROUP BY state ORDER BY state;

-- every filter
SELECT 'priority 0..2' AS f, array_agg(id - :b ORDER BY id) FROM jobq_list('lst', filters => '{"priority_min": 0, "priority_max": 2}')
UNION ALL
SELECT 'priority_min 3', array_agg(id - :b ORDER BY id) FROM jobq_list('lst', filters => '{"priority_min": 3}')
UNION ALL
SELECT 'worker-a', array_agg(id - :b ORDER BY id) FROM jobq_list('lst', filters => '{"worker": "worker-a"}')
UNION ALL
SELECT 'worker-b dead', array_agg(id - :b ORDER BY id) FROM jobq_list('lst', 'dead', filters => '{"worker": "worker-b"}')
UNION ALL
SELECT 'key k-8 (live)', array_agg(id - :b ORDER BY id) FROM jobq_list('lst', filters => '{"key": "k-8"}')
UNION ALL
SELECT 'key k-2 (finished)', array_agg(id - :b ORDER BY id) FROM jobq_list('lst', filters => '{"key": "k-2"}')
UNION ALL
SELECT 'key of another queue', array_agg(id - :b ORDER BY id) FROM jobq_list('lst', filters => '{"key": "k-1"}')
UNION ALL
SELECT 'key_prefix k-', array_agg(id - :b ORDER BY id) FROM jobq_list('lst', filters => '{"key_prefix": "k-"}')
UNION ALL
SELECT 'key_prefix k-%', array_agg(id - :b ORDER BY id) FROM jobq_list('lst', filters => '{"key_prefix": "k-%"}')
UNION ALL
SELECT 'finished since 01:00 until 03:00', array_agg(id - :b ORDER BY id)
FROM jobq_list('lst', filters => '{"since": "2026-01-01 01:00+00", "until": "2026-01-01 03:00+00"}') WHERE finished_at IS NOT NULL
UNION ALL
SELECT 'run_at since now+30min (live)', array_agg(id - :b ORDER BY id)
FROM jobq_list('lst', 'delayed', filters => jsonb_build_object('since', now() + interval '30 minutes'))
UNION ALL
SELECT 'ids', array_agg(id - :b ORDER BY id)
FROM jobq_list('lst', filters => jsonb_build_object('ids', jsonb_build_array(:b + 1, :b + 9, :b + 4, :b + 4, 999999999)))
UNION ALL
SELECT 'ids, running only', array_agg(id - :b ORDER BY id)
FROM jobq_list('lst', 'running', filters => jsonb_build_object('ids', jsonb_build_array(:b + 1, :b + 5)))
UNION ALL
SELECT 'error (any case)', array_agg(id - :b ORDER BY id) FROM jobq_list('lst', filters => '{"error": "disk full"}')
UNION ALL
SELECT 'error, older attempt', array_agg(id - :b ORDER BY id) FROM jobq_list('lst', filters => '{"error": "TIMEOUT"}')
UNION ALL
SELECT 'error _ is literal', array_agg(id - :b ORDER BY id) FROM jobq_list('lst', filters => '{"error": "disk_full"}')
UNION ALL
SELECT 'payload kind even', array_agg(id - :b ORDER BY id) FROM jobq_list('lst', filters => '{"payload": {"kind": "even"}}')
UNION ALL
SELECT 'payload and priority', array_agg(id - :b ORDER BY id)
FROM jobq_list('lst', filters => '{"payload": {"kind": "odd"}, "priority_max": 0}')
UNION ALL
SELECT 'empty filter', array_agg(id - :b ORDER BY id) FROM jobq_list('lst', filters => '{}');

-- the capped scan: with the cap at 1 row (the page size + 1 is the least
-- a call reads, here 2), a filter that matches nothing in the first two
-- live jobs stops there and says where it stopped
SET jobq.list_scan_limit = 1;
SELECT id, state, next_cursor = 'j:' || (:b + 6) AS resumes_after_b6, scan_truncated
FROM jobq_list('lst', max_rows => 1, filters => '{"worker": "worker-a"}');
-- following the cursors reaches every match, each call reading 2 rows
CREATE TABLE regress_scan AS SELECT * FROM regress_walk(1, '{"worker": "worker-a"}');
SELECT page AS call, n - :b AS n, truncated FROM regress_scan ORDER BY page;
-- an index-backed filter (ids, a live key, a finished time range) is not capped
SELECT count(*) AS ids_uncapped, bool_or(scan_truncated) AS truncated
FROM jobq_list('lst', filters => jsonb_build_object('ids', jsonb_build_array(:b, :b + 1, :b + 2, :b + 9)));
SELECT count(*) AS range_uncapped, bool_or(scan_truncated) AS truncated
FROM jobq_list('lst', 'completed', filters => '{"since": "2025-01-01+00"}');
RESET jobq.list_scan_limit;

-- bad input: nothing runs, each is 22023 naming the key (or the cursor)
SELECT regress_try_list(c) AS outcome FROM (VALUES
  ($$SELECT jobq_list('lst', filters => '{"prio": 1}')$$),
  ($$SELECT jobq_list('lst', filters => '[]')$$),
  ($$SELECT jobq_list('lst', filters => '"x"')$$),
  ($$SELECT jobq_list('lst', filters => NULL)$$),
  ($$SELECT jobq_list('lst', filters => '{"priority_min": "1"}')$$),
  ($$SELECT jobq_list('lst', filters => '{"priority_min": 1.5}')$$),
  ($$SELECT jobq_list('lst', filters => '{"priority_max": 1001}')$$),
  ($$SELECT jobq_list('lst', filters => '{"priority_min": 3, "priority_max": 2}')$$),
  ($$SELECT jobq_list('lst', filters => '{"worker": 7}')$$),
  ($$SELECT jobq_list('lst', filters => '{"worker": ""}')$$),
  ($$SELECT jobq_list('lst', filters => jsonb_build_object('worker', repeat('w', 201)))$$),
  ($$SELECT jobq_list('lst', filters => '{"key": null}')$$),
  ($$SELECT jobq_list('lst', filters => jsonb_build_object('key_prefix', repeat('k', 513)))$$),
  ($$SELECT jobq_list('lst', filters => '{"since": "soon"}')$$),
  ($$SELECT jobq_list('lst', filters => '{"since": "infinity"}')$$),
  ($$SELECT jobq_list('lst', filters => '{"until": 1}')$$),
  ($$SELECT jobq_list('lst', filters => '{"since": "2026-01-02", "until": "2026-01-01"}')$$),
  ($$SELECT jobq_list('lst', filters => '{"ids": []}')$$),
  ($$SELECT jobq_list('lst', filters => '{"ids": 5}')$$),
  ($$SELECT jobq_list('lst', filters => '{"ids": [1, "2"]}')$$),
  ($$SELECT jobq_list('lst', filters => '{"ids": [0]}')$$),
  ($$SELECT jobq_list('lst', filters => jsonb_build_object('ids', (SELECT jsonb_agg(g) FROM generate_series(1, 1001) g)))$$),
  ($$SELECT jobq_list('lst', filters => '{"error": ""}')$$),
  ($$SELECT jobq_list('lst', filters => '{"payload": 1}')$$),
  ($$SELECT jobq_list('lst', after => 'x')$$),
  ($$SELECT jobq_list('lst', after => 'j:')$$),
  ($$SELECT jobq_list('lst', after => 'j:1x')$$),
  ($$SELECT jobq_list('lst', after => 'h:1')$$),
  ($$SELECT jobq_list('lst', 'ready', after => 'h')$$),
  ($$SELECT jobq_list('lst', 'dead', after => 'j:1')$$),
  ($$SELECT jobq_list('lst', 'nonsense')$$),
  ($$SELECT jobq_list('lst', max_rows => 0)$$),
  ($$SELECT jobq_list('lst', max_rows => 10001)$$),
  ($$SELECT jobq_list('lst', max_rows => NULL)$$),
  ($$SELECT jobq_list('lst-missing')$$)) AS c(c);
-- the bounds are accepted
SELECT count(*) AS at_bounds FROM jobq_list('lst', max_rows => 10000,
    filters => jsonb_build_object('priority_min', -1000, 'priority_max', 1000,
                                  'ids', (SELECT jsonb_agg(g) FROM generate_series(1, 1000) g)));

-- who may filter on what: a monitor lists and filters on metadata, but
-- the error and payload filters read what only jobq_reader reads
CREATE ROLE regress_list_monitor IN ROLE jobq_monitor;
CREATE ROLE regress_list_reader IN ROLE jobq_monitor, jobq_reader;
SET ROLE regress_list_monitor;
SELECT count(*) AS monitor_lists, count(last_error) AS errors_seen
FROM jobq_list('lst', filters => '{"worker": "worker-b"}');
SELECT regress_try_list($$SELECT jobq_list('lst', filters => '{"error": "disk"}')$$) AS monitor_error;
SELECT regress_try_list($$SELECT jobq_list('lst', filters => '{"payload": {"n": 1}}')$$) AS monitor_payload;
RESET ROLE;
SET ROLE regress_list_reader;
SELECT count(*) AS reader_error_filter FROM jobq_list('lst', filters => '{"error": "disk"}');
RESET ROLE;
DROP ROLE regress_list_monitor, regress_list_reader;

DROP TABLE regress_pages, regress_scan;
DROP FUNCTION regress_walk(int, jsonb);
DROP FUNCTION regress_try_list(text);
SELECT jobq_drop_queue('lst', force => true);
SELECT jobq_drop_queue('lst-other', force => true);
