-- jobq_queues: queue management. jobq_create_queue (defaults and custom
-- settings, duplicates 42710), jobq_alter_queue (NULL keeps a setting,
-- merged settings validated, unknown queue 42704), jobq_pause/jobq_resume,
-- jobq_queues ordering, jobq_drop_queue (55006 with live jobs unless force,
-- force removes live jobs and history, 42704 unknown).
\set VERBOSITY terse
SET client_min_messages = warning;

SELECT jobq_create_queue('qu-default');
SELECT jobq_create_queue('qu-custom', lease => '30 seconds', max_attempts => 3,
                         backoff_base => '2 seconds', backoff_cap => '1 minute',
                         completed_retention => '0', dead_retention => '1 day',
                         notify => false);
SELECT queue, lease, max_attempts, backoff_base, backoff_cap, completed_retention,
       dead_retention, paused, notify,
       created_at BETWEEN now() - interval '1 minute' AND clock_timestamp() AS created_ok
FROM jobq_queues() WHERE queue LIKE 'qu-%';

-- duplicate: 42710, settings untouched
\set VERBOSITY sqlstate
SELECT jobq_create_queue('qu-default', lease => '1 hour');
\set VERBOSITY terse
SELECT jobq_create_queue('qu-default');
SELECT lease FROM jobq_queues() WHERE queue = 'qu-default';

-- invalid settings on create: nothing created
SELECT jobq_create_queue('qu-bad', lease => '0');
SELECT jobq_create_queue('qu-bad', lease => '24 hours 1 second');
SELECT jobq_create_queue('qu-bad', max_attempts => 0);
SELECT jobq_create_queue('qu-bad', max_attempts => 1001);
SELECT jobq_create_queue('qu-bad', backoff_base => '-1 second');
SELECT jobq_create_queue('qu-bad', backoff_base => '1 minute', backoff_cap => '1 second');
SELECT jobq_create_queue('qu-bad', completed_retention => '-1 day');
SELECT jobq_create_queue('qu-bad', dead_retention => '3651 days');
SELECT jobq_create_queue('qu-bad', lease => NULL);
SELECT jobq_create_queue('qu-bad', notify => NULL);
SELECT count(*) AS bad_created FROM jobq_queues() WHERE queue = 'qu-bad';

-- alter: NULL keeps a setting
SELECT jobq_alter_queue('qu-default', lease => '10 minutes', notify => false);
SELECT jobq_alter_queue('qu-default', max_attempts => 7);
SELECT queue, lease, max_attempts, backoff_base, backoff_cap, completed_retention,
       dead_retention, paused, notify
FROM jobq_queues() WHERE queue = 'qu-default';
-- merged settings are checked together: cap below the current base
SELECT jobq_alter_queue('qu-custom', backoff_cap => '1 second');
SELECT jobq_alter_queue('qu-custom', backoff_base => '2 minutes');
SELECT jobq_alter_queue('qu-custom', lease => '-5 minutes');
SELECT jobq_alter_queue('qu-custom', max_attempts => 1001);
SELECT backoff_base, backoff_cap, lease, max_attempts FROM jobq_queues() WHERE queue = 'qu-custom';
-- unknown queue: 42704
\set VERBOSITY sqlstate
SELECT jobq_alter_queue('qu-missing', lease => '1 minute');
SELECT jobq_pause('qu-missing');
SELECT jobq_resume('qu-missing');
SELECT jobq_drop_queue('qu-missing');
SELECT jobq_drop_queue('qu-missing', force => true);
\set VERBOSITY terse
SELECT jobq_alter_queue('qu-missing');

-- pause / resume (idempotent)
SELECT jobq_pause('qu-default');
SELECT jobq_pause('qu-default');
SELECT queue, paused FROM jobq_queues() WHERE queue LIKE 'qu-%';
SELECT jobq_resume('qu-default');
SELECT jobq_resume('qu-default');
SELECT queue, paused FROM jobq_queues() WHERE queue LIKE 'qu-%';
-- a paused queue still accepts jobs
SELECT jobq_pause('qu-custom');
SELECT jobq_enqueue('qu-custom', '{"n": 1}') > 0 AS enqueued_while_paused;
SELECT jobq_resume('qu-custom');

-- jobq_queues is ordered by name
SELECT jobq_create_queue('qu-b');
SELECT jobq_create_queue('qu-a');
SELECT jobq_create_queue('qu-a0');
SELECT queue FROM jobq_queues() WHERE queue LIKE 'qu-%';

-- drop: refused with live jobs (ready, delayed or running) unless force
SELECT jobq_enqueue('qu-a', '{}', delay => '1 hour') > 0 AS delayed_job;
\set VERBOSITY sqlstate
SELECT jobq_drop_queue('qu-a');
\set VERBOSITY terse
SELECT jobq_drop_queue('qu-a');
SELECT jobq_drop_queue('qu-a', force => NULL);
SELECT count(*) AS still_there FROM jobq_queues() WHERE queue = 'qu-a';
SELECT jobq_enqueue('qu-b', '{}') > 0 AS ready_job;
SELECT count(*) AS claimed FROM jobq_claim('qu-b');
SELECT jobq_drop_queue('qu-b');
-- force removes the live jobs, the history and the queue
SELECT jobq_enqueue('qu-b', '{}') > 0 AS ready_job;
SELECT (SELECT jobq_complete(id, token) FROM jobq_claim('qu-b')) AS completed;
SELECT jobq_enqueue('qu-b', '{}') > 0 AS ready_job;
SELECT ready, running, completed FROM jobq_stats('qu-b');
SELECT jobq_drop_queue('qu-b', force => true);
SELECT count(*) AS queue_rows FROM jobq_queues() WHERE queue = 'qu-b';
-- (jobq_stats of an unknown queue is 42704 since 0.2.0, as in every operator call)
\set VERBOSITY sqlstate
SELECT count(*) AS stats_rows FROM jobq_stats('qu-b');
\set VERBOSITY terse
SELECT (SELECT count(*) FROM jobq.jobs WHERE queue = 'qu-b') AS live_left,
       (SELECT count(*) FROM jobq.history WHERE queue = 'qu-b') AS history_left;
-- enqueue into the dropped queue fails; the claim is empty
SELECT jobq_enqueue('qu-b', '{}');
SELECT count(*) FROM jobq_claim('qu-b');
-- a queue without live jobs drops without force (its history goes too)
SELECT jobq_enqueue('qu-a0', '{}') > 0 AS ready_job;
SELECT (SELECT jobq_complete(id, token) FROM jobq_claim('qu-a0')) AS completed;
SELECT jobq_drop_queue('qu-a0');
SELECT count(*) AS history_left FROM jobq.history WHERE queue = 'qu-a0';
-- a dropped name can be created again, with fresh settings
SELECT jobq_create_queue('qu-a0', max_attempts => 2);
SELECT queue, max_attempts, paused FROM jobq_queues() WHERE queue = 'qu-a0';

SELECT jobq_drop_queue(q, force => true) FROM unnest(ARRAY['qu-a', 'qu-a0', 'qu-custom', 'qu-default']) q;
SELECT count(*) AS queues_left FROM jobq_queues() WHERE queue LIKE 'qu-%';
