-- jobq_errors: every row of the bad-input table (doc/reliability.md section 4)
-- that applies to the SQL API. Each call prints its SQLSTATE and message
-- (or 'ok' / its result), and every group checks that nothing changed:
-- a snapshot of all jobq tables is taken before and compared after.
\set VERBOSITY terse
SET client_min_messages = warning;

-- try(sql): 'ok: <first column of the first row>' or '<SQLSTATE>: <message>'
CREATE FUNCTION regress_try(stmt text) RETURNS text LANGUAGE sql AS $$
SELECT regress_outcome(stmt) $$;
-- A fingerprint of every table of schema jobq (rows, and their content).
CREATE FUNCTION regress_snapshot() RETURNS text LANGUAGE sql AS $$
SELECT format('queues=%s jobs=%s history=%s stale_acks=%s',
    (SELECT count(*) || '/' || coalesce(sum(hashtext(q::text)), 0) FROM jobq.queues q),
    (SELECT count(*) || '/' || coalesce(sum(hashtext(j::text)), 0) FROM jobq.jobs j),
    (SELECT count(*) || '/' || coalesce(sum(hashtext(h::text)), 0) FROM jobq.history h),
    (SELECT coalesce(sum(count), 0) FROM jobq.stale_acks))
$$;
-- The setup jobs of queue err, found by payload, so that the calls below
-- print no ids or tokens.
CREATE FUNCTION regress_jid() RETURNS bigint LANGUAGE sql
AS $$SELECT id FROM jobq.jobs WHERE payload = '{"setup": 1}'$$;
CREATE FUNCTION regress_tok() RETURNS uuid LANGUAGE sql
AS $$SELECT token FROM jobq.jobs WHERE payload = '{"setup": 1}'$$;
CREATE FUNCTION regress_jheld() RETURNS bigint LANGUAGE sql
AS $$SELECT id FROM jobq.jobs WHERE payload = '{"setup": 2}'$$;
CREATE TABLE regress_calls (n serial, call text);
CREATE FUNCTION regress_run() RETURNS TABLE (call text, outcome text) LANGUAGE sql AS $$
SELECT c.call, regress_try(c.call) FROM regress_calls c ORDER BY c.n
$$;

SELECT jobq_create_queue('err', max_attempts => 3);
SELECT jobq_enqueue('err', '{"setup": 1}') AS jid \gset
SELECT token AS tok FROM jobq_claim('err', lease => '1 hour') \gset
SELECT jobq_enqueue('err', '{"setup": 2}', dedupe_key => 'held') AS jheld \gset

-- 1. queue names: NULL, empty, too long (bytes), outside the allow-list.
-- Every function that takes a queue name.
SELECT regress_snapshot() AS before \gset
TRUNCATE regress_calls;
INSERT INTO regress_calls (call) SELECT format(f, q) FROM
  unnest(ARRAY[
    $$SELECT jobq_enqueue(%L, '{}')$$,
    $$SELECT count(*) FROM jobq_enqueue_batch(%L, ARRAY['{}']::jsonb[])$$,
    $$SELECT count(*) FROM jobq_claim(%L::text)$$,
    $$SELECT count(*) FROM jobq_claim(ARRAY[%L])$$,
    $$SELECT count(*) FROM jobq_pop(%L)$$,
    $$SELECT jobq_create_queue(%L)$$,
    $$SELECT jobq_alter_queue(%L, lease => '1 minute')$$,
    $$SELECT jobq_drop_queue(%L)$$,
    $$SELECT jobq_pause(%L)$$,
    $$SELECT jobq_resume(%L)$$,
    $$SELECT jobq_retry(%L::text)$$,
    $$SELECT jobq_purge(%L)$$,
    $$SELECT count(*) FROM jobq_list(%L)$$]) WITH ORDINALITY AS f(f, fo),
  unnest(ARRAY[NULL, '']) WITH ORDINALITY AS q(q, qo)
ORDER BY qo, fo;
SELECT * FROM regress_run();
-- jobq_sweep and jobq_stats take NULL as "every queue"
SELECT count(*) AS sweep_all FROM jobq_sweep(NULL);
SELECT count(*) > 0 AS stats_all FROM jobq_stats(NULL);
-- names: the error for each, via create (same check everywhere)
TRUNCATE regress_calls;
INSERT INTO regress_calls (call) SELECT format($$SELECT jobq_create_queue(%L)$$, q) FROM
  unnest(ARRAY[
    repeat('a', 48),                 -- 48 bytes: the limit (ok)
    repeat('b', 49),                 -- 49 bytes: too long
    repeat('é', 24),                 -- 24 characters, 48 bytes, not ASCII
    repeat('é', 25),                 -- 25 characters, 50 bytes: too long
    'a' || repeat('€', 16),          -- 17 characters, 49 bytes
    'has''quote', 'has"dquote', 'semi;colon', 'dash--dash', 'dollar$',
    'has space', 'has.dot', 'has/slash', 'back\slash', 'tab' || chr(9) || 'x',
    'nl' || chr(10) || 'x', 'bell' || chr(7), 'Emails', 'UPPER', 'naïve',
    '-lead', 'trail-', '_lead', 'trail_', 'double__sep', 'mixed_-sep',
    '1', 'a_b-c9', 'x; DROP TABLE jobq.jobs; --', 'emails'
  ]) q;
SELECT regexp_replace(call, '[[:cntrl:]]', '?', 'g') AS call,
       regexp_replace(outcome, '[[:cntrl:]]', '?', 'g') AS outcome
FROM regress_run();
-- uppercase is rejected everywhere, so 'Emails' can never shadow 'emails'
SELECT regress_try($$SELECT jobq_enqueue('Emails', '{}')$$);
SELECT regress_try($$SELECT count(*) FROM jobq_claim('Emails')$$);
SELECT count(*) FROM jobq_claim('emails');
SELECT jobq_drop_queue(queue) FROM jobq_queues()
WHERE queue IN (repeat('a', 48), '1', 'a_b-c9', 'emails');
SELECT regress_snapshot() = :'before' AS unchanged;

-- 2. unknown queue: enqueue 42704 (with a hint), claim empty
SELECT regress_snapshot() AS before \gset
SELECT regress_try($$SELECT jobq_enqueue('err-missing', '{}')$$);
SELECT regress_try($$SELECT count(*) FROM jobq_enqueue_batch('err-missing', ARRAY['{}']::jsonb[])$$);
\set VERBOSITY default
SELECT jobq_enqueue('err-missing', '{}');
\set VERBOSITY terse
SELECT count(*) AS claimed FROM jobq_claim('err-missing');
SELECT count(*) AS claimed FROM jobq_claim(ARRAY['err-missing', 'err-missing-2']);
SELECT count(*) AS popped FROM jobq_pop('err-missing');
SELECT regress_snapshot() = :'before' AS unchanged;

-- 3. payloads: NULL, invalid JSON, \u0000, over jobq.max_payload_size,
-- deeply nested
SELECT regress_snapshot() AS before \gset
SET jobq.max_payload_size = '1kB';
TRUNCATE regress_calls;
INSERT INTO regress_calls (call) VALUES
  ($$SELECT jobq_enqueue('err', NULL)$$),
  ($$SELECT jobq_enqueue('err', '{bad')$$),
  ($$SELECT jobq_enqueue('err', '')$$),
  ($$SELECT jobq_enqueue('err', '{"a": "\u0000"}')$$),
  ($$SELECT jobq_enqueue('err', '"\ud800"')$$),
  ($$SELECT jobq_enqueue('err', to_jsonb(convert_from('\xc328'::bytea, 'UTF8')))$$),
  ($$SELECT jobq_enqueue('err', jsonb_build_object('big', repeat('x', 1100)))$$),
  ($$SELECT count(*) FROM jobq_enqueue_batch('err', ARRAY['{}', jsonb_build_object('big', repeat('x', 1100))])$$),
  ($$SELECT jobq_complete(regress_jid(), regress_tok(), jsonb_build_object('big', repeat('x', 1100)))$$),
  ($$SELECT count(*) FROM jobq_complete_batch(ARRAY[regress_jid()]::bigint[], ARRAY[regress_tok()]::uuid[], ARRAY[jsonb_build_object('big', repeat('x', 1100))])$$),
  ($$SELECT jobq_enqueue('err', repeat('[', 100000)::jsonb)$$),
  ($$SELECT jobq_enqueue('err', (repeat('[', 100000) || repeat(']', 100000))::jsonb)$$);
SELECT * FROM regress_run();
-- just under the limit is fine; the limit is a superuser setting
SELECT jobq_enqueue('err', jsonb_build_object('big', repeat('x', 900))) > 0 AS under_limit;
RESET jobq.max_payload_size;
SELECT jobq_enqueue('err', jsonb_build_object('big', repeat('x', 1100))) > 0 AS default_limit_1mb;
SELECT jobq_enqueue('err', jsonb_build_object('big', repeat('x', 1048576))) > 0 AS over_1mb;
SELECT regress_try($$SET jobq.max_payload_size = '65537kB'$$);
SELECT regress_try($$SET jobq.max_payload_size = 0$$);
SELECT regress_try($$SET jobq.no_such_setting = 1$$);
CREATE ROLE regress_jobq_nobody_guc;
SET ROLE regress_jobq_nobody_guc;
SELECT regress_try($$SET jobq.max_payload_size = '64MB'$$);
RESET ROLE;
DROP ROLE regress_jobq_nobody_guc;
-- a 5000-deep array is stored and read back whole
SELECT jobq_enqueue('err', (repeat('[', 5000) || repeat(']', 5000))::jsonb) AS deep \gset
SELECT length(payload::text) AS deep_len FROM jobq_job(:deep);
SELECT count(*) FILTER (WHERE jobq_cancel(id)) AS cancelled
FROM jobq_list('err', 'ready') WHERE id <> :jheld;
SELECT jobq_purge('err', 'cancelled') AS purged;
SELECT regress_snapshot() = :'before' AS unchanged;

-- 4. run_at and delay
SELECT regress_snapshot() AS before \gset
TRUNCATE regress_calls;
INSERT INTO regress_calls (call) VALUES
  ($$SELECT jobq_enqueue('err', '{}', delay => '-1 second')$$),
  ($$SELECT jobq_enqueue('err', '{}', delay => '-1 year')$$),
  ($$SELECT jobq_enqueue('err', '{}', delay => '365 days 1 second')$$),
  ($$SELECT jobq_enqueue('err', '{}', delay => '13 months')$$),
  ($$SELECT jobq_enqueue('err', '{}', delay => '12 months 6 days')$$),
  ($$SELECT jobq_enqueue('err', '{}', delay => '2147483647 days')$$),
  ($$SELECT jobq_enqueue('err', '{}', delay => '178000000 years')$$),
  ($$SELECT jobq_enqueue('err', '{}', delay => '-178000000 years')$$),
  ($$SELECT jobq_enqueue('err', '{}', delay => '2147483647 days 2562047788 hours')$$),
  ($$SELECT jobq_enqueue('err', '{}', delay => 'infinity')$$),
  ($$SELECT jobq_enqueue('err', '{}', delay => 'NaN')$$),
  ($$SELECT jobq_enqueue('err', '{}', run_at => 'infinity')$$),
  ($$SELECT jobq_enqueue('err', '{}', run_at => '-infinity')$$),
  ($$SELECT jobq_enqueue('err', '{}', run_at => clock_timestamp() + interval '366 days')$$),
  ($$SELECT jobq_enqueue('err', '{}', run_at => '294276-12-31 23:59:59+00')$$),
  ($$SELECT jobq_enqueue('err', '{}', run_at => now(), delay => '1 minute')$$),
  ($$SELECT jobq_enqueue('err', '{}', run_at => now(), delay => '0')$$),
  ($$SELECT count(*) FROM jobq_enqueue_batch('err', ARRAY['{}']::jsonb[], run_at => now(), delay => '0')$$),
  ($$SELECT count(*) FROM jobq_enqueue_batch('err', ARRAY['{}']::jsonb[], delay => '-1 day')$$),
  ($$SELECT count(*) FROM jobq_enqueue_batch('err', ARRAY['{}']::jsonb[], run_at => 'infinity')$$);
SELECT * FROM regress_run();
SELECT regress_snapshot() = :'before' AS unchanged;

-- 5. leases, batch sizes, max_attempts, priority
SELECT regress_snapshot() AS before \gset
TRUNCATE regress_calls;
INSERT INTO regress_calls (call) VALUES
  ($$SELECT count(*) FROM jobq_claim('err', lease => '0')$$),
  ($$SELECT count(*) FROM jobq_claim('err', lease => '999 milliseconds')$$),
  ($$SELECT count(*) FROM jobq_claim('err', lease => '-1 minute')$$),
  ($$SELECT count(*) FROM jobq_claim('err', lease => '24 hours 1 second')$$),
  ($$SELECT count(*) FROM jobq_claim('err', lease => '1 month')$$),
  ($$SELECT count(*) FROM jobq_claim('err', lease => '178000000 years')$$),
  ($$SELECT jobq_extend(regress_jid(), regress_tok(), '0')$$),
  ($$SELECT jobq_extend(regress_jid(), regress_tok(), '25 hours')$$),
  ($$SELECT jobq_create_queue('err-lease', lease => '0')$$),
  ($$SELECT jobq_alter_queue('err', lease => '-1 second')$$),
  ($$SELECT count(*) FROM jobq_claim('err', max_jobs => 0)$$),
  ($$SELECT count(*) FROM jobq_claim('err', max_jobs => -1)$$),
  ($$SELECT count(*) FROM jobq_claim('err', max_jobs => 1001)$$),
  ($$SELECT count(*) FROM jobq_claim('err', max_jobs => NULL)$$),
  ($$SELECT count(*) FROM jobq_claim(ARRAY['err'], max_jobs => 0)$$),
  ($$SELECT count(*) FROM jobq_pop('err', max_jobs => 0)$$),
  ($$SELECT count(*) FROM jobq_pop('err', max_jobs => -1)$$),
  ($$SELECT count(*) FROM jobq_pop('err', max_jobs => 1001)$$),
  ($$SELECT count(*) FROM jobq_pop('err', max_jobs => NULL)$$),
  ($$SELECT count(*) FROM jobq_pop(repeat('q', 49))$$),
  ($$SELECT count(*) FROM jobq_claim('err', wait => '-1 second')$$),
  ($$SELECT count(*) FROM jobq_claim('err', wait => '301 seconds')$$),
  ($$SELECT count(*) FROM jobq_claim(ARRAY['err'], wait => '1 day')$$),
  ($$SELECT count(*) FROM jobq_claim('err', worker => '')$$),
  ($$SELECT count(*) FROM jobq_claim('err', worker => repeat('w', 201))$$),
  ($$SELECT count(*) FROM jobq_claim(ARRAY[]::text[])$$),
  ($$SELECT count(*) FROM jobq_claim(NULL::text[])$$),
  ($$SELECT count(*) FROM jobq_claim(ARRAY['err', NULL])$$),
  ($$SELECT count(*) FROM jobq_claim(ARRAY['err', 'Bad'])$$),
  ($$SELECT count(*) FROM jobq_claim(ARRAY[['err'], ['err']])$$),
  ($$SELECT jobq_enqueue('err', '{}', max_attempts => 0)$$),
  ($$SELECT jobq_enqueue('err', '{}', max_attempts => -1)$$),
  ($$SELECT jobq_enqueue('err', '{}', max_attempts => 1001)$$),
  ($$SELECT jobq_create_queue('err-ma', max_attempts => 0)$$),
  ($$SELECT jobq_alter_queue('err', max_attempts => 1001)$$),
  ($$SELECT jobq_enqueue('err', '{}', priority => -1001)$$),
  ($$SELECT jobq_enqueue('err', '{}', priority => 1001)$$),
  ($$SELECT jobq_enqueue('err', '{}', priority => 32768)$$),
  ($$SELECT jobq_enqueue('err', '{}', priority => 2147483647)$$),
  ($$SELECT jobq_enqueue('err', '{}', priority => NULL)$$),
  ($$SELECT count(*) FROM jobq_enqueue_batch('err', ARRAY['{}']::jsonb[], priority => 1001)$$),
  ($$SELECT count(*) FROM jobq_enqueue_batch('err', ARRAY['{}']::jsonb[], max_attempts => 0)$$),
  ($$SELECT count(*) FROM jobq_sweep('err', max_rows => 0)$$),
  ($$SELECT count(*) FROM jobq_sweep('err', max_rows => 100001)$$),
  ($$SELECT count(*) FROM jobq_list('err', max_rows => 0)$$);
SELECT * FROM regress_run();
SELECT regress_snapshot() = :'before' AS unchanged;
-- the bounds themselves are accepted
SELECT jobq_enqueue('err', '{}', priority => -1000, max_attempts => 1000) > 0 AS lower_priority_bound;
SELECT jobq_enqueue('err', '{}', priority => 1000, max_attempts => 1) > 0 AS upper_priority_bound;
SELECT count(*) AS claimed_1000 FROM jobq_claim('err', max_jobs => 1000, lease => '1 second');
SELECT count(*) AS popped_1000 FROM jobq_pop('err', max_jobs => 1000);
SELECT jobq_drop_queue('err', force => true);
SELECT jobq_create_queue('err', max_attempts => 3);
SELECT jobq_enqueue('err', '{"setup": 1}') AS jid \gset
SELECT token AS tok FROM jobq_claim('err', lease => '1 hour') \gset
SELECT jobq_enqueue('err', '{"setup": 2}', dedupe_key => 'held') AS jheld \gset

-- 6. tokens and ids: NULL is an error, stale/unknown is false/NULL
SELECT regress_snapshot() AS before \gset
TRUNCATE regress_calls;
INSERT INTO regress_calls (call) VALUES
  ($$SELECT jobq_complete(regress_jid(), NULL)$$),
  ($$SELECT jobq_complete(NULL, regress_tok())$$),
  ($$SELECT jobq_fail(regress_jid(), NULL, 'x')$$),
  ($$SELECT jobq_fail(regress_jid(), regress_tok(), 'x', permanent => NULL)$$),
  ($$SELECT jobq_extend(regress_jid(), NULL)$$),
  ($$SELECT jobq_release(regress_jid(), NULL)$$),
  ($$SELECT jobq_release(NULL, NULL)$$),
  ($$SELECT count(*) FROM jobq_complete_batch(ARRAY[regress_jid()]::bigint[], ARRAY[NULL]::uuid[])$$),
  ($$SELECT count(*) FROM jobq_complete_batch(NULL, ARRAY[regress_tok()]::uuid[])$$),
  ($$SELECT count(*) FROM jobq_complete_batch(ARRAY[regress_jid()]::bigint[], NULL)$$),
  ($$SELECT jobq_complete(regress_jid(), 'not-a-uuid')$$),
  ($$SELECT count(*) FROM jobq_job(NULL)$$),
  ($$SELECT jobq_retry(NULL::bigint)$$),
  ($$SELECT jobq_cancel(NULL)$$);
SELECT * FROM regress_run();
SELECT regress_snapshot() = :'before' AS unchanged;
-- stale or unknown tokens, unknown ids: a result, not an error; only the
-- stale_acks counter moves (for jobs that exist)
SELECT stale_acks AS stale_before FROM jobq_stats('err') \gset
TRUNCATE regress_calls;
INSERT INTO regress_calls (call) VALUES
  ($$SELECT jobq_complete(regress_jid(), gen_random_uuid())$$),
  ($$SELECT jobq_fail(regress_jid(), gen_random_uuid(), 'x')$$),
  ($$SELECT jobq_extend(regress_jid(), gen_random_uuid())$$),
  ($$SELECT jobq_release(regress_jid(), gen_random_uuid())$$),
  ($$SELECT jobq_complete(regress_jheld(), gen_random_uuid())$$),
  ($$SELECT count(*) FROM jobq_complete_batch(ARRAY[regress_jid()]::bigint[], ARRAY[gen_random_uuid()])$$),
  ($$SELECT jobq_complete(-1, gen_random_uuid())$$),
  ($$SELECT jobq_complete(9223372036854775807, gen_random_uuid())$$),
  ($$SELECT jobq_fail(-1, gen_random_uuid())$$),
  ($$SELECT jobq_extend(-1, gen_random_uuid())$$),
  ($$SELECT jobq_release(-1, gen_random_uuid())$$),
  ($$SELECT count(*) FROM jobq_job(-1)$$),
  ($$SELECT jobq_retry(-1)$$),
  ($$SELECT jobq_cancel(-1)$$);
SELECT * FROM regress_run();
SELECT stale_acks - :stale_before AS stale_counted FROM jobq_stats('err');
SELECT state, attempt, errors FROM jobq_job(:jid);
SELECT state, attempt FROM jobq_job(:jheld);

-- 7. dedupe keys: '' and over 512 bytes rejected (bytes, not characters)
SELECT regress_snapshot() AS before \gset
TRUNCATE regress_calls;
INSERT INTO regress_calls (call) VALUES
  ($$SELECT jobq_enqueue('err', '{}', dedupe_key => '')$$),
  ($$SELECT jobq_enqueue('err', '{}', dedupe_key => repeat('k', 513))$$),
  ($$SELECT jobq_enqueue('err', '{}', dedupe_key => repeat('é', 257))$$),
  ($$SELECT count(*) FROM jobq_enqueue_batch('err', ARRAY['{}', '{}']::jsonb[], dedupe_keys => ARRAY['ok', ''])$$),
  ($$SELECT count(*) FROM jobq_enqueue_batch('err', ARRAY['{}']::jsonb[], dedupe_keys => ARRAY[repeat('k', 513)])$$);
SELECT * FROM regress_run();
SELECT regress_snapshot() = :'before' AS unchanged;
SELECT jobq_enqueue('err', '{}', dedupe_key => repeat('k', 512)) > 0 AS key_512;
SELECT jobq_enqueue('err', '{}', dedupe_key => repeat('é', 256)) > 0 AS key_512_bytes;

-- 8. batches: NULL element, 0 and 10001 jobs, mismatched lengths,
-- multidimensional arrays
SELECT regress_snapshot() AS before \gset
TRUNCATE regress_calls;
INSERT INTO regress_calls (call) VALUES
  ($$SELECT count(*) FROM jobq_enqueue_batch('err', NULL)$$),
  ($$SELECT count(*) FROM jobq_enqueue_batch('err', ARRAY['{}', NULL]::jsonb[])$$),
  ($$SELECT count(*) FROM jobq_enqueue_batch('err', ARRAY[]::jsonb[])$$),
  ($$SELECT count(*) FROM jobq_enqueue_batch('err', array_fill('{}'::jsonb, ARRAY[10001]))$$),
  ($$SELECT count(*) FROM jobq_enqueue_batch('err', ARRAY[['{}'], ['{}']]::jsonb[])$$),
  ($$SELECT count(*) FROM jobq_enqueue_batch('err', ARRAY['{}', '{}']::jsonb[], dedupe_keys => ARRAY['a'])$$),
  ($$SELECT count(*) FROM jobq_enqueue_batch('err', ARRAY['{}']::jsonb[], dedupe_keys => ARRAY['a', 'b'])$$),
  ($$SELECT count(*) FROM jobq_enqueue_batch('err', ARRAY['{}']::jsonb[], dedupe_keys => ARRAY[]::text[])$$),
  ($$SELECT count(*) FROM jobq_complete_batch(ARRAY[]::bigint[], ARRAY[]::uuid[])$$),
  ($$SELECT count(*) FROM jobq_complete_batch(ARRAY[1, 2]::bigint[], ARRAY[gen_random_uuid()])$$),
  ($$SELECT count(*) FROM jobq_complete_batch(ARRAY[regress_jid()]::bigint[], ARRAY[regress_tok()]::uuid[], ARRAY['{}', '{}']::jsonb[])$$),
  ($$SELECT count(*) FROM jobq_complete_batch(array_fill(1::bigint, ARRAY[1001]), array_fill(gen_random_uuid(), ARRAY[1001]))$$),
  ($$SELECT count(*) FROM jobq_complete_batch(ARRAY[NULL, 1]::bigint[], ARRAY[gen_random_uuid(), gen_random_uuid()])$$);
SELECT * FROM regress_run();
SELECT regress_snapshot() = :'before' AS unchanged;
SELECT count(*) AS batch_10000
FROM jobq_enqueue_batch('err', array_fill('{}'::jsonb, ARRAY[10000]));
SELECT jobq_drop_queue('err', force => true);
SELECT jobq_create_queue('err', max_attempts => 3);
SELECT jobq_enqueue('err', '{"setup": 1}') AS jid \gset
SELECT token AS tok FROM jobq_claim('err', lease => '1 hour') \gset

-- 9. fail: error text over 4096 bytes is truncated and flagged; retry_in
-- bounds; other interval arguments
SELECT regress_snapshot() AS before \gset
TRUNCATE regress_calls;
INSERT INTO regress_calls (call) VALUES
  ($$SELECT jobq_fail(regress_jid(), regress_tok(), 'x', retry_in => '-1 second')$$),
  ($$SELECT jobq_fail(regress_jid(), regress_tok(), 'x', retry_in => '366 days')$$),
  ($$SELECT jobq_fail(regress_jid(), regress_tok(), 'x', retry_in => '178000000 years')$$),
  ($$SELECT jobq_purge('err', older_than => '-1 second')$$),
  ($$SELECT jobq_purge('err', older_than => '3651 days')$$),
  ($$SELECT count(*) FROM jobq_list('err', 'nonsense')$$),
  ($$SELECT count(*) FROM jobq_list('err', '')$$);
SELECT * FROM regress_run();
SELECT regress_snapshot() = :'before' AS unchanged;
SELECT jobq_fail(:jid, :'tok', repeat('ß', 3000) || 'END', retry_in => '0');
SELECT octet_length(errors -> 0 ->> 'error') AS bytes, length(errors -> 0 ->> 'error') AS chars,
       errors -> 0 -> 'truncated' AS truncated, right(errors -> 0 ->> 'error', 3) = 'END' AS kept_end
FROM jobq_job(:jid);
-- retry_in (like delay) counts a month as 30 days, exactly as it is applied:
-- 12 months 6 days is 366 days, over the limit
SELECT count(*) AS claimed FROM jobq_claim('err', lease => '1 hour');
SELECT regress_try($$SELECT jobq_fail(regress_jid(), regress_tok(), 'x', retry_in => '12 months 6 days')$$);
SELECT state FROM jobq_job(:jid);

-- 10. quotes, backslashes, $$, E'..' and SQL fragments are stored verbatim
-- in every text argument (payload, dedupe key, worker, error, result)
SELECT jobq_cancel(:jid);
SELECT $q$it's "quoted" \ back\\slash $$ dollar $x$ E'\n' '); DROP TABLE jobq.jobs; --$q$ AS nasty \gset
SELECT jobq_enqueue('err', jsonb_build_object('s', :'nasty'), dedupe_key => :'nasty') AS jn \gset
SELECT jobq_enqueue('err', '{}', dedupe_key => :'nasty') = :jn AS same_key_found;
SELECT payload ->> 's' = :'nasty' AS payload_verbatim, dedupe_key = :'nasty' AS key_verbatim
FROM jobq_job(:jn);
SELECT id = :jn AS claimed, token AS tn FROM jobq_claim('err', worker => :'nasty') \gset
SELECT worker = :'nasty' AS worker_verbatim FROM jobq_job(:jn);
SELECT jobq_fail(:jn, :'tn', :'nasty', retry_in => '0');
SELECT errors -> 0 ->> 'error' = :'nasty' AS error_verbatim FROM jobq_job(:jn);
SELECT last_error = :'nasty' AS list_verbatim FROM jobq_list('err') WHERE id = :jn;
SELECT token AS tn FROM jobq_claim('err') WHERE id = :jn \gset
SELECT jobq_complete(:jn, :'tn', to_jsonb(:'nasty'::text));
SELECT result #>> '{}' = :'nasty' AS result_verbatim FROM jobq_job(:jn);
SELECT to_regclass('jobq.jobs') IS NOT NULL AS jobs_table_still_there;
SELECT jobq_drop_queue('err', force => true);

DROP FUNCTION regress_run();
DROP TABLE regress_calls;
DROP FUNCTION regress_try(text);
DROP FUNCTION regress_snapshot();
DROP FUNCTION regress_jid();
DROP FUNCTION regress_tok();
DROP FUNCTION regress_jheld();
