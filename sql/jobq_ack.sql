-- jobq_ack: the fenced state changes of a running job. jobq_complete (with
-- result, idempotent repeat with the same token, stale and unknown tokens
-- return false and count in stale_acks), jobq_complete_batch, jobq_fail
-- (ready after exponential backoff with jitter in [0.5, 1] of
-- min(cap, base * 2^(attempt-1)), retry_in, dead at max attempts,
-- permanent, error text truncated at 4096 bytes and flagged, errors array
-- bounded at 10), jobq_extend, jobq_release (attempt given back).
\set VERBOSITY terse
SET client_min_messages = warning;

SELECT jobq_create_queue('ack', max_attempts => 3, backoff_base => '10 seconds',
                         backoff_cap => '15 seconds');

-- complete with a result
SELECT jobq_enqueue('ack', '{"n": 1}') AS j1 \gset
SELECT token AS t1 FROM jobq_claim('ack') \gset
SELECT jobq_complete(:j1, :'t1', '{"ok": true, "rows": 3}');
SELECT state, result, attempt, locked_until, finished_at >= claimed_at AS finished_ok
FROM jobq_job(:j1);
-- the same token again: idempotent, no stale ack counted
SELECT jobq_complete(:j1, :'t1', '{"other": 1}');
SELECT result FROM jobq_job(:j1);
SELECT stale_acks, completed FROM jobq_stats('ack');
-- a wrong token for a completed job: false, counted
SELECT jobq_complete(:j1, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11');
SELECT stale_acks FROM jobq_stats('ack');
-- unknown job: false, nothing to count against
SELECT jobq_complete(-1, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11');
SELECT stale_acks FROM jobq_stats('ack');

-- a stale token on a running job changes nothing
SELECT jobq_enqueue('ack', '{"n": 2}') AS j2 \gset
SELECT token AS t2, locked_until AS lu2 FROM jobq_claim('ack') \gset
SELECT jobq_complete(:j2, gen_random_uuid());
SELECT jobq_fail(:j2, gen_random_uuid(), 'nope');
SELECT jobq_extend(:j2, gen_random_uuid());
SELECT jobq_release(:j2, gen_random_uuid());
SELECT state, attempt, locked_until = :'lu2' AS lease_unchanged, errors FROM jobq_job(:j2);
SELECT stale_acks FROM jobq_stats('ack');
-- complete without a result
SELECT jobq_complete(:j2, :'t2');
SELECT state, result FROM jobq_job(:j2);

-- complete_batch: accepted ids (new and repeated), stale ones left out
SELECT array_agg(id ORDER BY id) AS bids FROM jobq_enqueue_batch('ack', ARRAY['{"b": 1}', '{"b": 2}', '{"b": 3}']::jsonb[]) \gset
SELECT array_agg(id ORDER BY id) AS cids, array_agg(token ORDER BY id) AS ctoks
FROM jobq_claim('ack', max_jobs => 3) \gset
SELECT :'cids' = :'bids' AS claimed_batch;
SELECT jobq_complete((:'cids'::bigint[])[1], (:'ctoks'::uuid[])[1]);
SELECT array_position(:'cids'::bigint[], r) AS pos
FROM jobq_complete_batch(:'cids'::bigint[],
                         ARRAY[(:'ctoks'::uuid[])[1], gen_random_uuid(), (:'ctoks'::uuid[])[3]],
                         ARRAY['{"r": 1}', '{"r": 2}', '{"r": 3}']::jsonb[]) r;
SELECT b.ord, j.state, j.result
FROM unnest(:'cids'::bigint[]) WITH ORDINALITY AS b(id, ord), jobq_job(b.id) j ORDER BY b.ord;
SELECT stale_acks FROM jobq_stats('ack');
-- results omitted
SELECT array_position(:'cids'::bigint[], r) AS pos
FROM jobq_complete_batch(ARRAY[(:'cids'::bigint[])[2]], ARRAY[(:'ctoks'::uuid[])[2]]) r;
SELECT state, result FROM jobq_job((:'cids'::bigint[])[2]);

-- fail -> ready with backoff. base 10 s, cap 15 s:
-- attempt 1: [5 s, 10 s]; attempt 2: [10 s, 15 s] (cap) -> [7.5 s, 15 s]
SELECT jobq_enqueue('ack', '{"n": "backoff"}') AS jb \gset
SELECT token AS tb FROM jobq_claim('ack') \gset
SELECT clock_timestamp() AS before \gset
SELECT jobq_fail(:jb, :'tb', 'first failure');
SELECT clock_timestamp() AS after \gset
SELECT state, attempt, locked_until,
       run_at >= :'before'::timestamptz + interval '5 seconds' AS not_before_half,
       run_at <= :'after'::timestamptz + interval '10 seconds' AS not_after_full,
       jsonb_array_length(errors) AS n_errors,
       errors -> 0 ->> 'error' AS error, errors -> 0 -> 'attempt' AS err_attempt,
       errors -> 0 -> 'truncated' AS truncated,
       (errors -> 0 ->> 'at')::timestamptz BETWEEN :'before' AND :'after' AS at_ok
FROM jobq_job(:jb);
-- not claimable during backoff
SELECT count(*) AS during_backoff FROM jobq_claim('ack');
SELECT count(*) AS delayed FROM jobq_list('ack', 'delayed') WHERE id = :jb;
-- retry_in '0': ready at once; second failure with default backoff, capped
SELECT jobq_enqueue('ack', '{"n": "backoff2"}') AS jc \gset
SELECT token AS tc FROM jobq_claim('ack') \gset
SELECT jobq_fail(:jc, :'tc', 'retry now', retry_in => '0');
SELECT state, run_at <= clock_timestamp() AS ready_now FROM jobq_job(:jc);
SELECT token AS tc FROM jobq_claim('ack') \gset
SELECT clock_timestamp() AS before \gset
SELECT jobq_fail(:jc, :'tc', 'second failure');
SELECT clock_timestamp() AS after \gset
SELECT attempt,
       run_at >= :'before'::timestamptz + interval '7.5 seconds' AS not_before_half_cap,
       run_at <= :'after'::timestamptz + interval '15 seconds' AS not_after_cap,
       errors -> 1 ->> 'error' AS last_error, errors -> 1 -> 'attempt' AS err_attempt
FROM jobq_job(:jc);
-- retry_in: run_at = now + retry_in
SELECT jobq_enqueue('ack', '{"n": "retry_in"}') AS jr \gset
SELECT token AS tr FROM jobq_claim('ack') \gset
SELECT clock_timestamp() AS before \gset
SELECT jobq_fail(:jr, :'tr', NULL, retry_in => '1 hour');
SELECT clock_timestamp() AS after \gset
SELECT state, run_at BETWEEN :'before'::timestamptz + interval '1 hour'
                         AND :'after'::timestamptz + interval '1 hour' AS run_at_ok,
       errors -> 0 -> 'error' AS null_error
FROM jobq_job(:jr);
-- a failed token is stale afterwards
SELECT jobq_complete(:jr, :'tr') AS stale_after_fail;
-- cancel the jobs in backoff, so that later claims are deterministic
SELECT jobq_cancel(:jb) AS jb, jobq_cancel(:jc) AS jc, jobq_cancel(:jr) AS jr;

-- fail -> dead when the attempts are used up (max_attempts 2 here)
SELECT jobq_enqueue('ack', '{"n": "dies"}', max_attempts => 2) AS jd \gset
SELECT token AS td FROM jobq_claim('ack') \gset
SELECT jobq_fail(:jd, :'td', 'attempt 1', retry_in => '0');
SELECT token AS td FROM jobq_claim('ack') \gset
SELECT jobq_fail(:jd, :'td', 'attempt 2', retry_in => '0');
SELECT state, attempt, finished_at IS NOT NULL AS finished,
       jsonb_path_query_array(errors, '$[*].error') AS errors
FROM jobq_job(:jd);
SELECT jobq_fail(:jd, :'td', 'again') AS fail_after_dead;
SELECT count(*) FROM jobq_claim('ack');
-- permanent: dead at once, attempts left or not
SELECT jobq_enqueue('ack', '{"n": "permanent"}', max_attempts => 10) AS jp \gset
SELECT token AS tp FROM jobq_claim('ack') \gset
SELECT jobq_fail(:jp, :'tp', 'bad input', permanent => true);
SELECT state, attempt, errors -> 0 ->> 'error' AS error FROM jobq_job(:jp);

-- error text: 4096 bytes kept as is, 4097 cut and flagged; cut on a
-- character boundary for multibyte text
SELECT jobq_enqueue('ack', '{"n": "long error"}', max_attempts => 10) AS je \gset
SELECT token AS te FROM jobq_claim('ack') \gset
SELECT jobq_fail(:je, :'te', repeat('x', 4096), retry_in => '0');
SELECT token AS te FROM jobq_claim('ack') \gset
SELECT jobq_fail(:je, :'te', repeat('y', 4097), retry_in => '0');
SELECT token AS te FROM jobq_claim('ack') \gset
SELECT jobq_fail(:je, :'te', repeat('é', 3000), retry_in => '0');
SELECT token AS te FROM jobq_claim('ack') \gset
SELECT jobq_fail(:je, :'te', repeat('z', 1000000), retry_in => '0');
SELECT e.ord, octet_length(e.v ->> 'error') AS bytes, length(e.v ->> 'error') AS chars,
       left(e.v ->> 'error', 1) AS starts, e.v -> 'truncated' AS truncated
FROM jobq_job(:je) j, jsonb_array_elements(j.errors) WITH ORDINALITY AS e(v, ord)
ORDER BY e.ord;
SELECT jobq_cancel(:je);

-- errors array keeps the newest 10
SELECT jobq_enqueue('ack', '{"n": "many errors"}', max_attempts => 20) AS jm \gset
DO $$
DECLARE
    r record;
BEGIN
    FOR i IN 1..12 LOOP
        SELECT * INTO r FROM jobq_claim('ack');
        PERFORM jobq_fail(r.id, r.token, 'failure ' || i, retry_in => '0');
    END LOOP;
END
$$;
SELECT attempt, jsonb_array_length(errors) AS kept,
       errors -> 0 ->> 'error' AS oldest_kept, errors -> 0 -> 'attempt' AS oldest_attempt,
       errors -> -1 ->> 'error' AS newest
FROM jobq_job(:jm);
SELECT last_error FROM jobq_list('ack') WHERE id = :jm;
SELECT jobq_cancel(:jm);

-- extend: new lease from now (queue lease or the given one); stale: NULL
SELECT jobq_alter_queue('ack', lease => '3 minutes');
SELECT jobq_enqueue('ack', '{"n": "extend"}') AS jx \gset
SELECT token AS tx FROM jobq_claim('ack', lease => '5 seconds') \gset
SELECT jobq_extend(:jx, :'tx') BETWEEN clock_timestamp() + interval '2 minutes 59 seconds'
                                   AND clock_timestamp() + interval '3 minutes' AS queue_lease;
SELECT locked_until - clock_timestamp() > interval '2 minutes' AS stored FROM jobq_job(:jx);
SELECT jobq_extend(:jx, :'tx', '1 hour') BETWEEN clock_timestamp() + interval '59 minutes'
                                            AND clock_timestamp() + interval '1 hour' AS given_lease;
SELECT jobq_extend(:jx, :'tx', '2 seconds') <= clock_timestamp() + interval '2 seconds' AS can_shorten;
SELECT state, attempt FROM jobq_job(:jx);

-- release: ready again, attempt given back, run_at unchanged, token stale
SELECT run_at AS rx FROM jobq_job(:jx) \gset
SELECT jobq_release(:jx, :'tx');
SELECT state, attempt, locked_until, run_at = :'rx' AS run_at_unchanged FROM jobq_job(:jx);
SELECT jobq_release(:jx, :'tx') AS again;
SELECT jobq_extend(:jx, :'tx') AS extend_stale;
SELECT jobq_complete(:jx, :'tx') AS complete_stale;
SELECT payload, attempt FROM jobq_claim('ack');

SELECT ready, delayed, running, dead, completed, stale_acks FROM jobq_stats('ack');

-- history is written for the jobs of queues that keep it, whatever the
-- mix and order of queues (a backend tries first the statement its last
-- complete needed: both orders are exercised here)
SELECT jobq_create_queue('ack-keep', completed_retention => '1 day');
SELECT jobq_create_queue('ack-none', completed_retention => '0');
SELECT count(*) FROM jobq_enqueue_batch('ack-keep', array_fill('{}'::jsonb, ARRAY[6]));
SELECT count(*) FROM jobq_enqueue_batch('ack-none', array_fill('{}'::jsonb, ARRAY[5]));
CREATE TEMP TABLE ack_mix AS
SELECT id, token, queue FROM jobq_claim(ARRAY['ack-keep', 'ack-none'], max_jobs => 11);
CREATE FUNCTION pg_temp.ack_one(q text) RETURNS boolean
LANGUAGE sql AS $$
    WITH j AS (DELETE FROM ack_mix WHERE id = (SELECT min(id) FROM ack_mix WHERE queue = q)
               RETURNING id, token)
    SELECT jobq_complete(j.id, j.token) FROM j
$$;
CREATE FUNCTION pg_temp.ack_batch(qs text[]) RETURNS bigint
LANGUAGE sql AS $$
    WITH b AS (DELETE FROM ack_mix WHERE id IN (SELECT min(id) FROM ack_mix
                                                WHERE queue = ANY (qs) GROUP BY queue)
               RETURNING id, token)
    SELECT count(*) FROM jobq_complete_batch(ARRAY(SELECT id FROM b), ARRAY(SELECT token FROM b))
$$;
SELECT pg_temp.ack_one('ack-keep');
SELECT pg_temp.ack_one('ack-none');
SELECT pg_temp.ack_one('ack-none');
SELECT pg_temp.ack_one('ack-keep');
SELECT pg_temp.ack_one('ack-keep');
-- batches: of both queues, of the one without history only, of both again
SELECT pg_temp.ack_batch(ARRAY['ack-keep', 'ack-none']) AS completed;
SELECT pg_temp.ack_batch(ARRAY['ack-none']) AS completed;
SELECT pg_temp.ack_batch(ARRAY['ack-keep', 'ack-none']) AS completed;
-- 5 completed jobs of each queue: history has the 5 of ack-keep only
SELECT queue, ready, running, completed FROM jobq_stats() WHERE queue LIKE 'ack-%' ORDER BY queue;
-- one job given twice in a batch, first with a wrong token: the right pair
-- is accepted, the wrong one counted stale (not taken for the right one)
SELECT id AS dj, token AS dt FROM ack_mix \gset
SELECT count(*) AS accepted, min(id) = :dj AS the_job
FROM jobq_complete_batch(ARRAY[:dj, :dj]::bigint[], ARRAY[gen_random_uuid(), :'dt'::uuid]) AS a(id);
SELECT id = :dj AS same_job, state FROM jobq_job(:dj);
SELECT stale_acks FROM jobq_stats('ack-keep');
DELETE FROM ack_mix WHERE id = :dj;
-- the positions form says which pair: the second (the right token); a
-- repeat of an accepted pair is accepted again, a stale one never
SELECT jobq_enqueue('ack-keep', '{"positions": 1}') > 0 AS enqueued;
SELECT id AS pj, token AS pt FROM jobq_claim('ack-keep') \gset
SELECT array_agg(p ORDER BY p) AS positions
FROM jobq_complete_batch_positions(ARRAY[:pj, :pj, 0]::bigint[],
                                   ARRAY[gen_random_uuid(), :'pt'::uuid, gen_random_uuid()]) AS a(p);
SELECT array_agg(p ORDER BY p) AS positions_again
FROM jobq_complete_batch_positions(ARRAY[0, :pj]::bigint[], ARRAY[gen_random_uuid(), :'pt'::uuid],
                                   ARRAY['{"r": 1}', '{"r": 2}']::jsonb[]) AS a(p);
SELECT id = :pj AS same_job, state, result FROM jobq_job(:pj);
SELECT count(*) AS left_unfinished FROM ack_mix;
DROP TABLE ack_mix;
SELECT jobq_drop_queue('ack-keep', force => true), jobq_drop_queue('ack-none', force => true);

-- clean up: no running job of this test may expire into a later test
SELECT jobq_drop_queue('ack', force => true);
