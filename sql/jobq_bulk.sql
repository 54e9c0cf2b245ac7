-- jobq_bulk: the bulk actions (issue 14), by id: jobq_retry_many (dead ->
-- ready, attempts back to 0), jobq_cancel_many (ready, delayed, dead ->
-- cancelled), jobq_delete_many (finished jobs only), jobq_run_now_many
-- (delayed -> due now). Each returns (affected, skipped: the distinct ids
-- left as they were), is idempotent (the same call again changes nothing),
-- and refuses bad input before any side effect. Rows held by other
-- sessions are skipped: specs/iso_bulk_retry_vs_complete.spec. By filter:
-- jobq_retry_where and the like act on a page of what jobq_list lists,
-- and loop to the end through next_cursor.
\set VERBOSITY terse
SET client_min_messages = warning;

-- regress_fails(sql): '<SQLSTATE>: <message>' of the error sql raises, or
-- 'ok'; jobq_audit and jobq_health use it too (jobq_health drops it)
CREATE FUNCTION regress_fails(stmt text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE stmt;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END
$$;

SELECT jobq_create_queue('blk', max_attempts => 1);
SELECT jobq_create_queue('blk-b', backoff_base => '1 hour', backoff_cap => '1 hour');

-- in blk: three dead jobs, a completed one; in blk-b: two ready, two
-- delayed, one running
SELECT array_agg(id ORDER BY id) AS dead_ids
FROM jobq_enqueue_batch('blk', ARRAY['{"d": 1}', '{"d": 2}', '{"d": 3}']::jsonb[]) \gset
SELECT count(*) FILTER (WHERE jobq_fail(id, token, 'boom') = 'dead') AS died
FROM jobq_claim('blk', max_jobs => 3);
SELECT jobq_enqueue('blk', '{"c": 1}') AS jc \gset
SELECT jobq_complete(id, token) AS completed FROM jobq_claim('blk');
SELECT array_agg(id ORDER BY id) AS ready_ids
FROM jobq_enqueue_batch('blk-b', ARRAY['{"r": 1}', '{"r": 2}']::jsonb[]) \gset
SELECT array_agg(id ORDER BY id) AS delayed_ids
FROM jobq_enqueue_batch('blk-b', ARRAY['{"l": 1}', '{"l": 2}']::jsonb[], delay => '1 day') \gset
SELECT jobq_enqueue('blk-b', '{"run": 1}', priority => -1) AS jrun \gset
SELECT id = :jrun AS claimed_running FROM jobq_claim('blk-b');
SELECT queue, ready, delayed, running, dead, completed, cancelled
FROM jobq_stats() WHERE queue LIKE 'blk%' ORDER BY queue;

-- retry_many: the dead jobs move; the completed, running, ready and
-- unknown ids, and a repeated id, are skipped
SELECT * FROM jobq_retry_many(:'dead_ids'::bigint[] || ARRAY[:jc, :jrun, -1, (:'dead_ids'::bigint[])[1]]);
SELECT count(*) AS retried_ready FROM jobq.jobs
WHERE id = ANY (:'dead_ids'::bigint[]) AND state = 'ready' AND attempt = 0;
-- idempotent: the same call again changes nothing
SELECT * FROM jobq_retry_many(:'dead_ids'::bigint[]);
-- a dead job whose dedupe key a live job holds stays dead
SELECT jobq_create_queue('blk-k', max_attempts => 1);
SELECT jobq_enqueue('blk-k', '{"k": 1}', dedupe_key => 'key-1') AS jk \gset
SELECT jobq_fail(id, token, 'boom') AS state FROM jobq_claim('blk-k');
SELECT jobq_enqueue('blk-k', '{"k": 2}', dedupe_key => 'key-1') AS jk2 \gset
SELECT * FROM jobq_retry_many(ARRAY[:jk]);
SELECT state FROM jobq_job(:jk);
-- the empty array is nothing to do
SELECT * FROM jobq_retry_many('{}');

-- run_now_many: delayed jobs become due now (and claimable); due and
-- running jobs are skipped
SELECT * FROM jobq_run_now_many(:'delayed_ids'::bigint[] || :'ready_ids'::bigint[] || ARRAY[:jrun]);
SELECT count(*) AS due_now FROM jobq.jobs
WHERE id = ANY (:'delayed_ids'::bigint[]) AND run_at <= clock_timestamp();
SELECT * FROM jobq_run_now_many(:'delayed_ids'::bigint[]);
-- a job waiting out its retry backoff (an hour) is delayed too
SELECT jobq_fail(id, token, 'later') AS state FROM jobq_claim('blk-b') \gset
SELECT :'state' AS failed_to;
SELECT id AS jwait FROM jobq.jobs WHERE queue = 'blk-b' AND attempt = 1 AND state = 'ready' \gset
SELECT * FROM jobq_run_now_many(ARRAY[:jwait]);
SELECT run_at <= clock_timestamp() AS due, attempt FROM jobq_job(:jwait);

-- cancel_many: ready, delayed and dead jobs are cancelled; running,
-- finished and unknown ones skipped
SELECT jobq_enqueue('blk-b', '{"l": 3}', delay => '1 day') AS jdl \gset
SELECT jobq_enqueue('blk-k', '{"x": 1}') AS jx \gset
SELECT jobq_complete(id, token) AS completed FROM jobq_claim('blk-k');
SELECT jobq_fail(id, token, 'boom') AS state FROM jobq_claim('blk-k');
SELECT state FROM jobq_job(:jx);
SELECT * FROM jobq_cancel_many(ARRAY[(:'ready_ids'::bigint[])[1], :jdl, :jx, :jrun, :jc, -5]);
SELECT id = (:'ready_ids'::bigint[])[1] AS ready_one, state FROM jobq_job((:'ready_ids'::bigint[])[1]);
SELECT state FROM jobq_job(:jdl);
SELECT state FROM jobq_job(:jx);
SELECT state FROM jobq_job(:jrun);
SELECT * FROM jobq_cancel_many(ARRAY[(:'ready_ids'::bigint[])[1], :jdl, :jx]);

-- delete_many: finished jobs only, live ones are never deleted
SELECT * FROM jobq_delete_many(ARRAY[:jc, :jx, :jdl, :jrun, (:'ready_ids'::bigint[])[2], -7]);
SELECT count(*) AS gone FROM jobq_job(:jc);
SELECT state FROM jobq_job(:jrun);
SELECT state FROM jobq_job((:'ready_ids'::bigint[])[2]);
SELECT * FROM jobq_delete_many(ARRAY[:jc, :jx, :jdl]);
-- the record of a delete of one queue's jobs names the queue (found
-- before the jobs are gone)
SELECT jobq_enqueue('blk', '{"del": 1}') AS jdel \gset
SELECT affected FROM jobq_cancel_many(ARRAY[:jdel]);
SELECT affected FROM jobq_delete_many(ARRAY[:jdel]);
SELECT action, queue, affected FROM jobq.audit WHERE action = 'delete_many' ORDER BY id DESC LIMIT 1;

-- bad input: errors before any side effect
SELECT jobq_create_queue('blk-bad');
SELECT jobq_enqueue('blk-bad', '{}', delay => '1 day') AS jbad \gset
SELECT regress_fails($$SELECT jobq_cancel_many(NULL)$$);
SELECT regress_fails(format($$SELECT jobq_cancel_many(ARRAY[%s, NULL])$$, :jbad));
SELECT regress_fails($$SELECT jobq_retry_many(ARRAY[NULL::bigint])$$);
SELECT regress_fails($$SELECT jobq_delete_many(ARRAY[[1, 2], [3, 4]]::bigint[])$$);
SELECT regress_fails(format($$SELECT jobq_run_now_many(ARRAY[%s] || ARRAY(SELECT generate_series(1, 10000)::bigint))$$, :jbad));
SELECT state, run_at > clock_timestamp() AS still_delayed FROM jobq_job(:jbad);
-- at the limit, fine
SELECT * FROM jobq_cancel_many(ARRAY(SELECT -generate_series(1, 10000)::bigint));

-- per-queue privileges: an admin of one queue may act on its jobs, not
-- on another queue's (42501, nothing changed)
CREATE ROLE regress_blk_op IN ROLE jobq_monitor;
GRANT EXECUTE ON FUNCTION jobq_cancel_many(bigint[]) TO regress_blk_op;
SELECT jobq_grant('blk-bad', 'regress_blk_op', 'admin');
SELECT jobq_enqueue('blk-b', '{"other": 1}') AS jother \gset
SET ROLE regress_blk_op;
SELECT regress_fails(format($$SELECT jobq_cancel_many(ARRAY[%s, %s])$$, :jbad, :jother));
SELECT * FROM jobq_cancel_many(ARRAY[:jbad]);
RESET ROLE;
SELECT state FROM jobq_job(:jother);
SELECT state FROM jobq_job(:jbad);
SELECT jobq_revoke('blk-bad', 'regress_blk_op', 'admin');
REVOKE EXECUTE ON FUNCTION jobq_cancel_many(bigint[]) FROM regress_blk_op;
DROP ROLE regress_blk_op;

-- The filter forms: the jobs jobq_list would list (queue, state, filters,
-- cursor), a page per call; a loop passes next_cursor back while more.
SELECT jobq_create_queue('blk-w', max_attempts => 1);
SELECT count(*) AS enqueued FROM jobq_enqueue_batch('blk-w',
    ARRAY(SELECT jsonb_build_object('n', g, 'even', g % 2 = 0) FROM generate_series(1, 25) g));
SELECT count(*) FILTER (WHERE jobq_fail(id, token,
           CASE WHEN (payload ->> 'even')::boolean THEN 'Timeout talking to upstream' ELSE 'boom' END) = 'dead') AS died
FROM jobq_claim('blk-w', max_jobs => 25);
-- retry the dead jobs whose error says timeout, 5 per call: 3 calls
CREATE FUNCTION regress_bulk_loop(action text, q text, st text, f jsonb, n int)
RETURNS TABLE (calls int, affected bigint) LANGUAGE plpgsql AS $$
DECLARE
    cur text;
    r record;
BEGIN
    calls := 0;
    affected := 0;
    LOOP
        EXECUTE format('SELECT * FROM jobq_%s_where($1, $2, $3, $4, $5)', action)
            INTO r USING q, st, f, n, cur;
        calls := calls + 1;
        affected := affected + r.affected;
        EXIT WHEN NOT r.more;
        cur := r.next_cursor;
    END LOOP;
    RETURN NEXT;
END
$$;
SELECT * FROM regress_bulk_loop('retry', 'blk-w', NULL, '{"error": "timeout"}', 5);
SELECT count(*) FILTER (WHERE state = 'ready') AS ready, count(*) FILTER (WHERE state = 'dead') AS dead
FROM jobq_list('blk-w', max_rows => 100);
-- one page, its cursor, and the rest from that cursor
SELECT affected, more, next_cursor IS NOT NULL AS has_cursor
FROM jobq_retry_where('blk-w', 'dead', '{"payload": {"n": 1}}', 10);
-- cancel: the ready jobs (due now) whose payload says even
SELECT * FROM regress_bulk_loop('cancel', 'blk-w', 'ready', '{"payload": {"even": true}}', 1000);
-- run now: delayed jobs only
SELECT count(*) AS enqueued FROM jobq_enqueue_batch('blk-w', ARRAY['{"later": 1}', '{"later": 2}']::jsonb[], delay => '1 day');
SELECT * FROM regress_bulk_loop('run_now', 'blk-w', NULL, '{}', 1);
SELECT count(*) AS due FROM jobq_list('blk-w', 'ready', filters => '{"payload": {"later": 1}}');
-- delete: finished jobs, from the first of them (the live ones are not listed)
SELECT * FROM regress_bulk_loop('delete', 'blk-w', 'cancelled', '{}', 4);
SELECT * FROM regress_bulk_loop('delete', 'blk-w', NULL, '{"until": "2000-01-01"}', 100);
SELECT * FROM regress_bulk_loop('delete', 'blk-w', NULL, '{}', 100);
SELECT state, count(*) FROM jobq_list('blk-w', max_rows => 100) GROUP BY state ORDER BY state;
-- the trail has one row per call, with its filters and state
SELECT action, filters, detail, affected FROM jobq_audit('blk-w', max_rows => 3);
-- bad input
SELECT regress_fails($$SELECT jobq_retry_where('blk-w', 'ready')$$);
SELECT regress_fails($$SELECT jobq_run_now_where('blk-w', 'running')$$);
SELECT regress_fails($$SELECT jobq_delete_where('blk-w', 'ready')$$);
SELECT regress_fails($$SELECT jobq_cancel_where('blk-w', 'completed')$$);
SELECT regress_fails($$SELECT jobq_cancel_where('blk-w', filters => NULL)$$);
SELECT regress_fails($$SELECT jobq_cancel_where('blk-w', filters => '{"colour": "red"}')$$);
SELECT regress_fails($$SELECT jobq_cancel_where('blk-w', max_rows => 0)$$);
SELECT regress_fails($$SELECT jobq_cancel_where('blk-w', max_rows => 10001)$$);
SELECT regress_fails($$SELECT jobq_cancel_where('blk-w', max_rows => NULL)$$);
SELECT regress_fails($$SELECT jobq_cancel_where('blk-w', after => 'x:1')$$);
SELECT regress_fails($$SELECT jobq_cancel_where('no-such-queue')$$);
SELECT regress_fails($$SELECT jobq_cancel_where('Bad Queue')$$);
SELECT regress_fails($$SELECT jobq_cancel_where(NULL)$$);
DROP FUNCTION regress_bulk_loop(text, text, text, jsonb, int);

SELECT jobq_drop_queue('blk-w', force => true);
SELECT jobq_drop_queue('blk', force => true);
SELECT jobq_drop_queue('blk-b', force => true);
SELECT jobq_drop_queue('blk-k', force => true);
SELECT jobq_drop_queue('blk-bad', force => true);
