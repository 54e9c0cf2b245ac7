-- max_running by slot rows (issue 19; claim_slots.c, doc/groups.md): a
-- queue with max_running has that many rows in jobq.queue_slots, made and
-- cut by jobq_create_queue and jobq_alter_queue; a queue that gets the
-- limit while jobs run names them in its first slots; a claim takes at
-- most the free slots and names its jobs there; completes write nothing.
\set VERBOSITY terse
SET client_min_messages = warning;

CREATE FUNCTION regress_slots(q text) RETURNS TABLE (slots bigint, named bigint, busy bigint)
LANGUAGE sql AS $$
    SELECT count(*), count(s.job_id),
           count(*) FILTER (WHERE EXISTS (SELECT 1 FROM jobq.jobs j WHERE j.id = s.job_id
                                          AND j.state = 'running' AND j.token = s.token))
    FROM jobq.queue_slots s WHERE s.queue = q
$$;

SELECT jobq_create_queue('slots', max_running => 3);
SELECT * FROM regress_slots('slots');
SELECT count(*) FROM jobq_enqueue_batch('slots', array_fill('{}'::jsonb, ARRAY[10]));
-- at most the free slots, then none
SELECT count(*) AS took FROM jobq_claim('slots', max_jobs => 2);
SELECT count(*) AS took FROM jobq_claim('slots', max_jobs => 5);
SELECT count(*) AS took FROM jobq_claim('slots', max_jobs => 5);
SELECT * FROM regress_slots('slots');
-- a complete frees its slot without writing it
WITH j AS (SELECT id, token FROM jobq.jobs WHERE queue = 'slots' AND state = 'running'
           ORDER BY id LIMIT 1)
SELECT jobq_complete(id, token) FROM j;
SELECT * FROM regress_slots('slots');
SELECT count(*) AS took FROM jobq_claim('slots', max_jobs => 5);
-- up: new empty slots; down: the slots above go, their jobs run on
SELECT jobq_alter_queue('slots', max_running => 5);
SELECT * FROM regress_slots('slots');
SELECT count(*) AS took FROM jobq_claim('slots', max_jobs => 5);
SELECT jobq_alter_queue('slots', max_running => 2);
SELECT * FROM regress_slots('slots');
SELECT count(*) AS running FROM jobq.jobs WHERE queue = 'slots' AND state = 'running';
SELECT count(*) AS took FROM jobq_claim('slots', max_jobs => 5);
-- another setting leaves the slots alone
SELECT jobq_alter_queue('slots', lease => '10 minutes');
SELECT * FROM regress_slots('slots');
-- off: no slots, claims unlimited
SELECT jobq_alter_queue('slots', max_running => 0);
SELECT * FROM regress_slots('slots');
SELECT count(*) AS took FROM jobq_claim('slots', max_jobs => 2);
-- on again while 6 run: the first 4 slots name 4 of them, none is free
SELECT jobq_alter_queue('slots', max_running => 4);
SELECT * FROM regress_slots('slots');
SELECT count(*) AS took FROM jobq_claim('slots', max_jobs => 5);
-- bad values change nothing
SELECT jobq_alter_queue('slots', max_running => -1);
SELECT jobq_alter_queue('slots', max_running => 10001);
SELECT * FROM regress_slots('slots');
-- a rate keeps the queue's lock and count: its slots are not read
SELECT jobq_alter_queue('slots', rate => 100);
SELECT count(*) AS took FROM jobq_claim('slots', max_jobs => 5);
-- dropped: its slots go
SELECT jobq_drop_queue('slots', force => true);
SELECT count(*) FROM jobq.queue_slots WHERE queue = 'slots';

-- the claim's slot statement, with 1,000 slots and 2,000 running jobs of
-- 12,000: the row locks under the LIMIT (only the slots it returns are
-- locked), no scan of jobq.jobs, no sort
SELECT jobq_create_queue('slots-plan', max_running => 1000);
SELECT jobq_create_queue('slots-plan-b');
SELECT count(*) FROM unnest(ARRAY['slots-plan', 'slots-plan-b']) q,
    LATERAL jobq_enqueue_batch(q, array_fill('{}'::jsonb, ARRAY[6000]));
SELECT count(*) FROM jobq_claim('slots-plan', max_jobs => 500);
SELECT count(*) FROM jobq_claim('slots-plan-b', max_jobs => 1000);
SELECT count(*) FROM jobq_claim('slots-plan-b', max_jobs => 500);
ANALYZE jobq.jobs;
DO $$ BEGIN
    EXECUTE format('PREPARE regress_slots_lock(text, int8) AS %s', jobq._statement('slots_lock_free'));
END $$;
ANALYZE jobq.queue_slots;
CREATE FUNCTION regress_plan_text(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text; l text := '';
BEGIN
    FOR r IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP l := l || r || E'\n'; END LOOP;
    RETURN l;
END $$;
SELECT p LIKE 'Limit%->  LockRows%' AND p NOT LIKE '%Seq Scan on jobs %'
       AND p NOT LIKE '%Sort%' AS slots_plan_ok
FROM regress_plan_text($$EXECUTE regress_slots_lock('slots-plan', 10)$$) p;
SET plan_cache_mode = force_generic_plan;
SELECT p LIKE 'Limit%->  LockRows%' AND p NOT LIKE '%Seq Scan on jobs %'
       AND p NOT LIKE '%Sort%' AS slots_generic_plan_ok
FROM regress_plan_text($$EXECUTE regress_slots_lock('slots-plan', 10)$$) p;
RESET plan_cache_mode;
DEALLOCATE regress_slots_lock;
SELECT jobq_drop_queue(q, force => true) FROM unnest(ARRAY['slots-plan', 'slots-plan-b']) q;
DROP FUNCTION regress_plan_text(text);
DROP FUNCTION regress_slots(text);
