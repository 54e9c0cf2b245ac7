-- jobq_enqueue: jobq_enqueue and jobq_enqueue_batch. Defaults from the
-- queue, run_at / delay (delayed jobs), priority and max_attempts overrides,
-- batch order and ids, transactional visibility, and NOTIFY "jobq.<queue>":
-- one per transaction and queue, sent at commit, none for delayed jobs,
-- paused queues, notify = false queues or rolled-back transactions.
\set VERBOSITY terse
SET client_min_messages = warning;

SELECT jobq_create_queue('enq', max_attempts => 4);

-- single job: defaults
SELECT jobq_enqueue('enq', '{"task": "a"}') AS id1 \gset
SELECT :id1 > 0 AS id_positive;
SELECT id = :id1 AS same_id, queue, state, payload, priority, attempt, max_attempts,
       locked_until, worker, claimed_at, finished_at, dedupe_key, errors, result,
       run_at = enqueued_at AS ready_now,
       enqueued_at BETWEEN now() - interval '1 minute' AND clock_timestamp() AS enqueued_ok
FROM jobq_job(:id1);

-- overrides: priority, max_attempts, JSON null and scalar payloads
SELECT jobq_enqueue('enq', '"text"', priority => -5, max_attempts => 1) AS id2 \gset
SELECT jobq_enqueue('enq', 'null', priority => 1000, max_attempts => 1000) AS id3 \gset
SELECT jobq_enqueue('enq', '[1, 2.50, {"a": [true, false]}]', priority => -1000) AS id4 \gset
SELECT id - :id1 AS seq, payload, priority, max_attempts
FROM jobq_job(:id2) UNION ALL SELECT id - :id1, payload, priority, max_attempts FROM jobq_job(:id3)
UNION ALL SELECT id - :id1, payload, priority, max_attempts FROM jobq_job(:id4)
ORDER BY seq;

-- delay: run_at = enqueue time + delay, exactly
SELECT jobq_enqueue('enq', '{"task": "delayed"}', delay => '1 hour') AS id5 \gset
SELECT state, run_at = enqueued_at + interval '1 hour' AS run_at_ok FROM jobq_job(:id5);
SELECT jobq_enqueue('enq', '{}', delay => '0') AS id6 \gset
SELECT run_at = enqueued_at AS zero_delay_is_now FROM jobq_job(:id6);
SELECT jobq_enqueue('enq', '{}', delay => '365 days') AS id7 \gset
SELECT run_at = enqueued_at + interval '365 days' AS max_delay_ok FROM jobq_job(:id7);

-- run_at: future is delayed, past is ready at once
SELECT jobq_enqueue('enq', '{}', run_at => clock_timestamp() + interval '2 days') AS id8 \gset
SELECT run_at - enqueued_at BETWEEN interval '1 day 23 hours' AND interval '2 days' AS future_ok
FROM jobq_job(:id8);
SELECT jobq_enqueue('enq', '{"task": "past"}', run_at => '2001-01-01 00:00:00+00') AS id9 \gset
SELECT id - :id1 AS seq, state FROM jobq_list('enq', 'delayed') WHERE id IN (:id5, :id7, :id8, :id9) ORDER BY id;
SELECT count(*) AS ready_now FROM jobq_list('enq', 'ready') WHERE id = :id9;

-- batch: ids in input order, all created, payloads in order
SELECT array_agg(id ORDER BY ord) AS bids, bool_and(created) AS all_created, count(*) AS n
FROM jobq_enqueue_batch('enq', ARRAY['{"b": 1}', '{"b": 2}', '{"b": 3}']::jsonb[])
     WITH ORDINALITY AS b(id, created, ord) \gset
SELECT :n AS n, :'all_created' AS all_created,
       (:'bids'::bigint[])[1] < (:'bids'::bigint[])[2]
       AND (:'bids'::bigint[])[2] < (:'bids'::bigint[])[3] AS ascending;
SELECT o.ord, j.payload, j.priority, j.max_attempts
FROM unnest(:'bids'::bigint[]) WITH ORDINALITY AS o(id, ord), jobq_job(o.id) j
ORDER BY o.ord;
-- batch with shared options
SELECT count(*) AS n, bool_and(created) AS created
FROM jobq_enqueue_batch('enq', ARRAY['1', '2']::jsonb[], delay => '10 minutes',
                        priority => 7, max_attempts => 2) b \gset
SELECT :n AS n, :'created' AS created;
SELECT count(*) AS delayed_p7
FROM jobq_list('enq', 'delayed') l WHERE l.priority = 7 AND l.max_attempts = 2;
-- a single-element batch
SELECT count(*) FROM jobq_enqueue_batch('enq', ARRAY['{"single": true}']::jsonb[]);

-- transactional: a rolled-back enqueue leaves nothing
SELECT count(*) AS before FROM jobq_list('enq') \gset
BEGIN;
SELECT jobq_enqueue('enq', '{"rolled": "back"}') > 0 AS ok;
SELECT count(*) FROM jobq_enqueue_batch('enq', ARRAY['1', '2']::jsonb[]);
ROLLBACK;
SELECT count(*) - :before AS added FROM jobq_list('enq');

SELECT ready, delayed, running FROM jobq_stats('enq');

-- NOTIFY. psql prints the notifications this session receives; they go to
-- the \o file and are printed with the PID replaced (<self>: this backend).
SELECT jobq_create_queue('enq-quiet', notify => false);
SELECT jobq_create_queue('enq-paused');
SELECT jobq_pause('enq-paused');
SELECT jobq_create_queue('enq-other');
SELECT pg_backend_pid() AS pid \gset
\setenv JOBQ_PID :pid
LISTEN "jobq.enq";
LISTEN "jobq.enq-quiet";
LISTEN "jobq.enq-paused";
LISTEN "jobq.enq-other";
\o results/jobq_enqueue_notify.log
\qecho -- 1. one ready job, autocommit: one notification
SELECT jobq_enqueue('enq', '{}') > 0 AS ok;
\qecho -- 2. many jobs in one transaction: one notification, at commit
BEGIN;
SELECT jobq_enqueue('enq', '{}') > 0 AS ok;
SELECT jobq_enqueue('enq', '{}') > 0 AS ok;
SELECT count(*) FROM jobq_enqueue_batch('enq', ARRAY['1', '2', '3']::jsonb[]);
\qecho -- (before commit: nothing yet)
COMMIT;
\qecho -- 3. two queues in one transaction: one notification each
BEGIN;
SELECT jobq_enqueue('enq', '{}') > 0 AS ok;
SELECT jobq_enqueue('enq-other', '{}') > 0 AS ok;
SELECT jobq_enqueue('enq', '{}') > 0 AS ok;
COMMIT;
\qecho -- 4. delayed jobs (delay, future run_at, delayed batch): none
SELECT jobq_enqueue('enq', '{}', delay => '1 minute') > 0 AS ok;
SELECT jobq_enqueue('enq', '{}', run_at => clock_timestamp() + interval '1 hour') > 0 AS ok;
SELECT count(*) FROM jobq_enqueue_batch('enq', ARRAY['1']::jsonb[], delay => '1 minute');
\qecho -- 5. queue with notify = false: none
SELECT jobq_enqueue('enq-quiet', '{}') > 0 AS ok;
SELECT count(*) FROM jobq_enqueue_batch('enq-quiet', ARRAY['1']::jsonb[]);
\qecho -- 6. paused queue: none
SELECT jobq_enqueue('enq-paused', '{}') > 0 AS ok;
SELECT count(*) FROM jobq_enqueue_batch('enq-paused', ARRAY['1']::jsonb[]);
\qecho -- 7. rolled back: none
BEGIN;
SELECT jobq_enqueue('enq', '{}') > 0 AS ok;
ROLLBACK;
\qecho -- 8. past run_at is ready now: one
SELECT jobq_enqueue('enq', '{}', run_at => '2001-01-01 00:00:00+00') > 0 AS ok;
\qecho -- 9. resume notifies, and the resumed queue notifies again; notify switched on again
SELECT jobq_resume('enq-paused');
SELECT jobq_enqueue('enq-paused', '{}') > 0 AS ok;
SELECT jobq_alter_queue('enq-quiet', notify => true);
SELECT jobq_enqueue('enq-quiet', '{}') > 0 AS ok;
\qecho -- end
\o
\! sed -E "s/PID $JOBQ_PID\./PID <self>./; s/PID [0-9]+\./PID <other>./" results/jobq_enqueue_notify.log
UNLISTEN *;

-- counts after the notification part
SELECT queue, ready, delayed FROM jobq_stats() WHERE queue LIKE 'enq%' ORDER BY queue;
