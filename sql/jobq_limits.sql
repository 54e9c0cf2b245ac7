-- jobq_limits: the limits of client/include/jobq-contract.h hold at the
-- server. jobq_limits() lists them (the client test compares them with
-- the library's); then, for each, the server is called at the limit
-- (accepted) and one past it (refused with the documented SQLSTATE:
-- 42622 for a queue name too long, 22023 for every other value out of
-- range; 54000 for worker metadata, as for payloads), with the values
-- read from jobq_limits(), never typed here.
-- Every call runs in a subtransaction that is rolled back, so the calls
-- change nothing. Last, the CHECK constraints of jobq.queues in the
-- install script must state the same bounds as jobq_limits().
\set VERBOSITY terse
SET client_min_messages = warning;

SELECT name, value, unit FROM jobq_limits();

-- lim(name): the value of a limit
CREATE FUNCTION regress_lim(limit_name text) RETURNS bigint LANGUAGE sql
AS $$SELECT value FROM jobq_limits() WHERE name = limit_name$$;
-- try(stmt): 'accepted', or the SQLSTATE of the error; never keeps what
-- stmt did (the sentinel error rolls its subtransaction back)
CREATE FUNCTION regress_try(stmt text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    BEGIN
        EXECUTE stmt;
        RAISE SQLSTATE 'JQACC';
    EXCEPTION WHEN OTHERS THEN
        RETURN CASE SQLSTATE WHEN 'JQACC' THEN 'accepted' ELSE SQLSTATE END;
    END;
END
$$;

SELECT jobq_create_queue('lim', max_attempts => 100);

-- The boundary calls: %s is the value; at: the limit itself, past: one
-- unit beyond it (below a minimum, above a maximum).
CREATE TABLE regress_limit_calls (n serial, limit_name text, stmt text, at text, past text);
INSERT INTO regress_limit_calls (limit_name, stmt, at, past) VALUES
 ('queue_name_max', $$SELECT jobq_create_queue(repeat('q', %s))$$, 'v', 'v + 1'),
 -- (an unknown queue: a claim gives nothing, it is not an error)
 ('queue_name_max', $$SELECT jobq_claim(repeat('q', %s))$$, 'v', 'v + 1'),
 ('worker_name_max', $$SELECT jobq_claim('lim', worker => repeat('w', %s))$$, 'v', 'v + 1'),
 ('worker_name_max', $$SELECT jobq_claim('lim', worker => repeat('w', %s))$$, '1', '0'),
 ('dedupe_key_max', $$SELECT jobq_enqueue('lim', '{}', dedupe_key => repeat('k', %s))$$, 'v', 'v + 1'),
 ('dedupe_key_max', $$SELECT jobq_enqueue('lim', '{}', dedupe_key => repeat('k', %s))$$, '1', '0'),
 ('dedupe_key_max', $$SELECT jobq_enqueue_batch('lim', ARRAY['{}']::jsonb[], dedupe_keys => ARRAY[repeat('k', %s)])$$, 'v', 'v + 1'),
 -- the hard ceiling of jobq.max_payload_size, a setting in kB
 ('payload_hard_max', $$SELECT set_config('jobq.max_payload_size', (%s / 1024)::text, true)$$, 'v', 'v + 1024'),
 ('lease_min', $$SELECT jobq_create_queue('lim-x', lease => make_interval(secs => %s))$$, 'v', 'v - 1'),
 ('lease_max', $$SELECT jobq_create_queue('lim-x', lease => make_interval(secs => %s))$$, 'v', 'v + 1'),
 ('lease_min', $$SELECT jobq_alter_queue('lim', lease => make_interval(secs => %s))$$, 'v', 'v - 1'),
 ('lease_max', $$SELECT jobq_alter_queue('lim', lease => make_interval(secs => %s))$$, 'v', 'v + 1'),
 ('lease_min', $$SELECT jobq_claim('lim', lease => make_interval(secs => %s))$$, 'v', 'v - 1'),
 ('lease_max', $$SELECT jobq_claim('lim', lease => make_interval(secs => %s))$$, 'v', 'v + 1'),
 ('lease_min', $$SELECT jobq_extend(0, gen_random_uuid(), make_interval(secs => %s))$$, 'v', 'v - 1'),
 ('lease_max', $$SELECT jobq_extend(0, gen_random_uuid(), make_interval(secs => %s))$$, 'v', 'v + 1'),
 ('delay_max', $$SELECT jobq_enqueue('lim', '{}', delay => make_interval(secs => %s))$$, 'v', 'v + 1'),
 ('delay_max', $$SELECT jobq_enqueue_batch('lim', ARRAY['{}']::jsonb[], delay => make_interval(secs => %s))$$, 'v', 'v + 1'),
 ('delay_max', $$SELECT jobq_fail(0, gen_random_uuid(), 'x', retry_in => make_interval(secs => %s))$$, 'v', 'v + 1'),
 ('backoff_base_max', $$SELECT jobq_create_queue('lim-x', backoff_base => make_interval(secs => %1$s), backoff_cap => make_interval(secs => %1$s))$$, 'v', 'v + 1'),
 ('backoff_cap_max', $$SELECT jobq_create_queue('lim-x', backoff_cap => make_interval(secs => %s))$$, 'v', 'v + 1'),
 ('retention_max', $$SELECT jobq_create_queue('lim-x', completed_retention => make_interval(secs => %s))$$, 'v', 'v + 1'),
 ('retention_max', $$SELECT jobq_create_queue('lim-x', dead_retention => make_interval(secs => %s))$$, 'v', 'v + 1'),
 ('retention_max', $$SELECT jobq_purge('lim', older_than => make_interval(secs => %s))$$, 'v', 'v + 1'),
 ('priority_min', $$SELECT jobq_enqueue('lim', '{}', priority => %s)$$, 'v', 'v - 1'),
 ('priority_max', $$SELECT jobq_enqueue('lim', '{}', priority => %s)$$, 'v', 'v + 1'),
 ('priority_max', $$SELECT jobq_enqueue_batch('lim', ARRAY['{}']::jsonb[], priority => %s)$$, 'v', 'v + 1'),
 ('max_attempts_max', $$SELECT jobq_enqueue('lim', '{}', max_attempts => %s)$$, 'v', 'v + 1'),
 ('max_attempts_max', $$SELECT jobq_enqueue('lim', '{}', max_attempts => %s)$$, '1', '0'),
 ('max_attempts_max', $$SELECT jobq_create_queue('lim-x', max_attempts => %s)$$, 'v', 'v + 1'),
 ('max_attempts_max', $$SELECT jobq_alter_queue('lim', max_attempts => %s)$$, 'v', 'v + 1'),
 ('claim_max', $$SELECT jobq_claim('lim', max_jobs => %s)$$, 'v', 'v + 1'),
 ('claim_max', $$SELECT jobq_claim('lim', max_jobs => %s)$$, '1', '0'),
 ('claim_max', $$SELECT jobq_claim(ARRAY['lim'], max_jobs => %s)$$, 'v', 'v + 1'),
 ('claim_max', $$SELECT jobq_pop('lim', max_jobs => %s)$$, 'v', 'v + 1'),
 ('claim_queues_max', $$SELECT jobq_claim(ARRAY(SELECT 'lim-' || i FROM generate_series(1, %s) i))$$, 'v', 'v + 1'),
 ('claim_queues_max', $$SELECT jobq_claim(ARRAY(SELECT 'lim-' || i FROM generate_series(1, %s) i))$$, '1', '0'),
 ('enqueue_batch_max', $$SELECT jobq_enqueue_batch('lim', array_fill('{}'::jsonb, ARRAY[%s]))$$, 'v', 'v + 1'),
 ('enqueue_batch_max', $$SELECT jobq_enqueue_batch('lim', array_fill('{}'::jsonb, ARRAY[%s]))$$, '1', '0'),
 ('complete_batch_max', $$SELECT jobq_complete_batch(array_fill(0::bigint, ARRAY[%1$s]), array_fill(gen_random_uuid(), ARRAY[%1$s]))$$, 'v', 'v + 1'),
 ('complete_batch_max', $$SELECT jobq_complete_batch(array_fill(0::bigint, ARRAY[%1$s]), array_fill(gen_random_uuid(), ARRAY[%1$s]))$$, '1', '0'),
 ('sweep_max_rows', $$SELECT jobq_sweep('lim', %s)$$, 'v', 'v + 1'),
 ('sweep_max_rows', $$SELECT jobq_sweep('lim', %s)$$, '1', '0'),
 ('list_max_rows', $$SELECT jobq_list('lim', max_rows => %s)$$, 'v', 'v + 1'),
 ('list_max_rows', $$SELECT jobq_list('lim', max_rows => %s)$$, '1', '0'),
 ('cron_expr_max', $$SELECT jobq_cron_next(repeat(' ', %s - 9) || '0 * * * *')$$, 'v', 'v + 1'),
 ('cron_every_min', $$SELECT jobq_cron_next('@every ' || %s || 's')$$, 'v', 'v - 1'),
 ('cron_every_max', $$SELECT jobq_cron_next('@every ' || %s || 's')$$, 'v', 'v + 1'),
 ('cron_next_max', $$SELECT count(*) FROM jobq_cron_next('* * * * *', n => %s)$$, 'v', 'v + 1'),
 ('cron_next_max', $$SELECT count(*) FROM jobq_cron_next('* * * * *', n => %s)$$, '1', '0'),
 -- the worker registry (issue 16)
 ('worker_timeout_min', $$SELECT jobq_worker_register('lim', timeout => make_interval(secs => %s))$$, 'v', 'v - 1'),
 ('worker_timeout_max', $$SELECT jobq_worker_register('lim', timeout => make_interval(secs => %s))$$, 'v', 'v + 1'),
 ('worker_slots_max', $$SELECT jobq_worker_register('lim', slots => %s)$$, 'v', 'v + 1'),
 ('worker_slots_max', $$SELECT jobq_worker_register('lim', slots => %s)$$, '1', '0'),
 ('worker_slots_max', $$SELECT jobq_worker_heartbeat(gen_random_uuid(), busy => %s)$$, 'v', 'v + 1'),
 ('worker_metadata_max', $$SELECT jobq_worker_register('lim', metadata => jsonb_build_object('k', repeat('x', %s - 17)))$$, 'v', 'v + 1'),
 ('worker_name_max', $$SELECT jobq_worker_register(repeat('w', %s))$$, 'v', 'v + 1'),
 ('worker_name_max', $$SELECT jobq_worker_register(repeat('w', %s))$$, '1', '0'),
 ('worker_name_max', $$SELECT jobq_worker_register('lim', host => repeat('h', %s))$$, 'v', 'v + 1'),
 ('worker_name_max', $$SELECT jobq_worker_signal(repeat('w', %s), 'quiet')$$, 'v', 'v + 1'),
 ('claim_queues_max', $$SELECT jobq_worker_register('lim', queues => ARRAY(SELECT 'lim-' || i FROM generate_series(1, %s) i))$$, 'v', 'v + 1'),
 -- the queue settings of groups and limits (issue 19)
 ('group_limit_max', $$SELECT jobq_alter_queue('lim', group_limit => %s)$$, 'v', 'v + 1'),
 ('group_limit_max', $$SELECT jobq_alter_queue('lim', group_limit => %s)$$, '1', '0'),
 ('max_running_max', $$SELECT jobq_alter_queue('lim', max_running => %s)$$, 'v', 'v + 1'),
 ('max_running_max', $$SELECT jobq_alter_queue('lim', max_running => %s)$$, '0', '-1'),
 ('rate_max', $$SELECT jobq_alter_queue('lim', rate => %s)$$, 'v', 'v + 1'),
 ('rate_max', $$SELECT jobq_alter_queue('lim', rate => %s)$$, '0', '-1'),
 ('rate_max', $$SELECT jobq_create_queue('lim-x', rate_burst => %s)$$, 'v', 'v + 1'),
 ('rate_max', $$SELECT jobq_create_queue('lim-x', rate_burst => %s)$$, '1', '0'),
 ('rate_max', $$SELECT jobq_alter_queue('lim', group_rate => %s)$$, 'v', 'v + 1'),
 ('rate_max', $$SELECT jobq_alter_queue('lim', group_rate_burst => %s)$$, 'v', 'v + 1'),
 ('rate_per_max', $$SELECT jobq_alter_queue('lim', rate_per => make_interval(secs => %s))$$, 'v', 'v + 1'),
 ('rate_per_max', $$SELECT jobq_alter_queue('lim', rate_per => make_interval(secs => %s))$$, '1', '0'),
 ('rate_per_max', $$SELECT jobq_create_queue('lim-x', group_rate_per => make_interval(secs => %s))$$, 'v', 'v + 1');

-- (evaluates at and past with v bound to the limit)
CREATE FUNCTION regress_bound(expr text, v bigint) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    r bigint;
BEGIN
    EXECUTE 'SELECT ' || replace(expr, 'v', '$1') INTO r USING v;
    RETURN r;
END
$$;

SELECT c.limit_name, replace(c.stmt, '%1$s', '%s') AS call,
       c.at AS at, regress_try(format(c.stmt, regress_bound(c.at, regress_lim(c.limit_name)))) AS at_outcome,
       c.past AS past, regress_try(format(c.stmt, regress_bound(c.past, regress_lim(c.limit_name)))) AS past_outcome
FROM regress_limit_calls c ORDER BY c.n;

-- queues per transaction: each queue a transaction enqueues into holds a
-- lock to its end, so past the limit an enqueue is refused (54000); the
-- locks of a rolled-back savepoint are given back and do not count
DO $$
BEGIN
    FOR i IN 1 .. regress_lim('queues_per_xact_max') + 1 LOOP
        PERFORM jobq_create_queue('lim-l' || i);
    END LOOP;
END
$$;
BEGIN;
SELECT regress_try(format($$SELECT count(jobq_enqueue('lim-l' || i, '{}')) FROM generate_series(1, %s) i$$,
                          regress_lim('queues_per_xact_max'))) AS at_limit;
-- (the rolled-back call above holds nothing: this transaction may still
-- enqueue into every queue up to the limit, then no further)
SELECT count(jobq_enqueue('lim-l' || i, '{}')) = regress_lim('queues_per_xact_max') AS at_limit_kept
FROM generate_series(1, regress_lim('queues_per_xact_max')) i;
SELECT regress_try(format($$SELECT jobq_enqueue('lim-l' || %s, '{}')$$,
                          regress_lim('queues_per_xact_max') + 1)) AS past_limit;
ROLLBACK;
-- (a drop locks the name too: the limit + 1 queues go in two transactions)
SELECT count(jobq_drop_queue('lim-l' || i, true)) AS dropped
FROM generate_series(1, regress_lim('queues_per_xact_max')) i;
SELECT jobq_drop_queue('lim-l' || (regress_lim('queues_per_xact_max') + 1), true);

-- the claim's wait: a waiting claim of the limit would sleep that long,
-- but under REPEATABLE READ a claim that passed the bound check is
-- refused at once for its isolation level (0A000) instead
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT regress_try(format($$SELECT jobq_claim('lim', wait => make_interval(secs => %s))$$,
                          regress_lim('claim_wait_max'))) AS at_limit,
       regress_try(format($$SELECT jobq_claim('lim', wait => make_interval(secs => %s))$$,
                          regress_lim('claim_wait_max') + 1)) AS past_limit;
COMMIT;

-- Payloads and results are limited by jobq.max_payload_size (bytes of the
-- stored jsonb; a string scalar takes 12 bytes more than the string):
-- at the setting accepted, one byte more refused with 54000.
SET jobq.max_payload_size = '1kB';
SELECT pg_column_size(to_jsonb(repeat('x', 1024 - 12))) AS payload_bytes,
       regress_try($$SELECT jobq_enqueue('lim', to_jsonb(repeat('x', 1024 - 12)))$$) AS at_limit,
       regress_try($$SELECT jobq_enqueue('lim', to_jsonb(repeat('x', 1024 - 11)))$$) AS past_limit,
       regress_try($$SELECT jobq_complete(0, gen_random_uuid(), to_jsonb(repeat('x', 1024 - 12)))$$) AS result_at_limit,
       regress_try($$SELECT jobq_complete(0, gen_random_uuid(), to_jsonb(repeat('x', 1024 - 11)))$$) AS result_past_limit;
RESET jobq.max_payload_size;

-- Error texts and the errors kept are bounds, not refusals: a text of
-- error_text_max bytes is kept whole, one byte more is cut to it and
-- flagged; after errors_kept + 1 failures the job keeps the newest
-- errors_kept.
SELECT jobq_enqueue('lim', '{"errors": 1}') > 0 AS enqueued;
DO $$
DECLARE
    j record;
BEGIN
    FOR i IN 1 .. regress_lim('errors_kept') + 1 LOOP
        SELECT * INTO j FROM jobq_claim('lim', max_jobs => 1);
        PERFORM jobq_fail(j.id, j.token,
                          repeat('e', (regress_lim('error_text_max') + i % 2)::int),
                          retry_in => '0');
    END LOOP;
END
$$;
SELECT jsonb_array_length(errors) = regress_lim('errors_kept') AS keeps_errors_kept,
       (errors -> 0 ->> 'attempt')::int = 2 AS oldest_dropped,
       (SELECT bool_and(length(e ->> 'error') = regress_lim('error_text_max'))
        FROM jsonb_array_elements(errors) e) AS texts_at_most_the_limit,
       (SELECT array_agg((e ->> 'truncated')::boolean ORDER BY (e ->> 'attempt')::int)
        FROM jsonb_array_elements(errors) e) AS truncated
FROM jobq_job((SELECT id FROM jobq.jobs WHERE payload = '{"errors": 1}'));

-- The install script's CHECK constraints on jobq.queues state the same
-- bounds: the numbers and intervals each one names, in seconds, against
-- the limits (queues_check is backoff_cap's: its lower bound is the base,
-- not a number).
CREATE FUNCTION regress_check_bounds(conname text) RETURNS numeric[] LANGUAGE sql AS $$
SELECT array_agg(b ORDER BY ord) FROM (
    SELECT m.ord, CASE WHEN m.v[1] IS NOT NULL THEN extract(epoch FROM m.v[1]::interval)
                       ELSE m.v[2]::numeric END AS b
    FROM pg_constraint c,
         regexp_matches(pg_get_constraintdef(c.oid),
                        '''([^'']*)''::interval|[<>]= (\d+)\)', 'g') WITH ORDINALITY AS m(v, ord)
    WHERE c.conrelid = 'jobq.queues'::regclass AND c.conname = regress_check_bounds.conname) x
$$;
SELECT c.conname, regress_check_bounds(c.conname) AS check_bounds, l.bounds AS limits,
       regress_check_bounds(c.conname) = l.bounds AS agree
FROM pg_constraint c
LEFT JOIN (VALUES
    ('queues_name_check', ARRAY[1, regress_lim('queue_name_max')]::numeric[]),
    ('queues_lease_check', ARRAY[regress_lim('lease_min'), regress_lim('lease_max')]::numeric[]),
    ('queues_max_attempts_check', ARRAY[1, regress_lim('max_attempts_max')]::numeric[]),
    ('queues_backoff_base_check', ARRAY[0, regress_lim('backoff_base_max')]::numeric[]),
    ('queues_check', ARRAY[regress_lim('backoff_cap_max')]::numeric[]),
    ('queues_completed_retention_check', ARRAY[0, regress_lim('retention_max')]::numeric[]),
    ('queues_dead_retention_check', ARRAY[0, regress_lim('retention_max')]::numeric[])
) AS l(conname, bounds) USING (conname)
WHERE c.conrelid = 'jobq.queues'::regclass AND c.contype = 'c'
ORDER BY c.conname;

DROP FUNCTION regress_check_bounds(text);
DROP FUNCTION regress_bound(text, bigint);
DROP TABLE regress_limit_calls;
DROP FUNCTION regress_try(text);
DROP FUNCTION regress_lim(text);
SELECT jobq_drop_queue('lim', force => true);
