-- jobq_dedupe: dedupe keys. While a live (ready, delayed or running) job
-- holds a key in a queue, enqueue returns that job's id and creates nothing;
-- keys are per queue; NULL means no dedupe; the batch reports created =
-- false for deduplicated entries (also within one batch); the key is free
-- again once the job completes, is cancelled or dies; a retry of a dead job
-- whose key a live job now holds fails and the job stays dead.
\set VERBOSITY terse
SET client_min_messages = warning;

SELECT jobq_create_queue('ddp');
SELECT jobq_create_queue('ddp-other');

SELECT jobq_enqueue('ddp', '{"v": 1}', dedupe_key => 'k1') AS k1 \gset
SELECT jobq_enqueue('ddp', '{"v": 2}', dedupe_key => 'k1') = :k1 AS same_id;
SELECT jobq_enqueue('ddp', '{"v": 3}', dedupe_key => 'k1', delay => '1 hour', priority => 9) = :k1 AS same_id;
-- the first job is unchanged
SELECT payload, priority, dedupe_key, run_at = enqueued_at AS ready_now FROM jobq_job(:k1);
SELECT count(*) AS jobs FROM jobq_list('ddp');
-- another key, another queue, no key: new jobs
SELECT jobq_enqueue('ddp', '{"v": 4}', dedupe_key => 'k2') <> :k1 AS new_key;
SELECT jobq_enqueue('ddp-other', '{"v": 5}', dedupe_key => 'k1') <> :k1 AS other_queue;
SELECT jobq_enqueue('ddp', '{"v": 6}') <> :k1 AS no_key;
SELECT jobq_enqueue('ddp', '{"v": 7}', dedupe_key => NULL) <> :k1 AS null_key;
SELECT count(*) AS jobs FROM jobq_list('ddp');
-- keys are compared exactly (case, spaces)
SELECT count(DISTINCT id) AS distinct_ids
FROM unnest(ARRAY['K1', 'k1 ', ' k1', 'k1']) k, LATERAL jobq_enqueue('ddp', '{}', dedupe_key => k) id;

-- a running job still holds its key
SELECT jobq_create_queue('ddp-run');
SELECT jobq_enqueue('ddp-run', '{"v": "run"}', dedupe_key => 'run') AS kr \gset
SELECT token AS tr FROM jobq_claim('ddp-run') \gset
SELECT state FROM jobq_job(:kr);
SELECT jobq_enqueue('ddp-run', '{}', dedupe_key => 'run') = :kr AS held_while_running;
-- completed: the key is free again
SELECT jobq_complete(:kr, :'tr');
SELECT jobq_enqueue('ddp-run', '{"v": "run2"}', dedupe_key => 'run') AS kr2 \gset
SELECT :kr2 <> :kr AS new_job_after_complete;
-- cancelled: free again
SELECT jobq_cancel(:kr2);
SELECT jobq_enqueue('ddp-run', '{"v": "run3"}', dedupe_key => 'run') NOT IN (:kr, :kr2) AS new_job_after_cancel;

-- batch: created flags, duplicates inside the batch, NULL keys
SELECT b.ord, b.created, b.id = :k1 AS is_k1,
       b.id = first_value(b.id) OVER (PARTITION BY k.key ORDER BY b.ord) AS same_as_first_with_key
FROM jobq_enqueue_batch('ddp',
        ARRAY['{"b": 1}', '{"b": 2}', '{"b": 3}', '{"b": 4}', '{"b": 5}']::jsonb[],
        dedupe_keys => ARRAY['k1', 'b-new', NULL, 'b-new', NULL]) WITH ORDINALITY AS b(id, created, ord)
JOIN unnest(ARRAY['k1', 'b-new', NULL, 'b-new', NULL]) WITH ORDINALITY AS k(key, ord) USING (ord)
ORDER BY b.ord;

-- a dead job frees its key; retrying it while a live job holds the key
-- fails, and the job stays dead
SELECT jobq_create_queue('ddp-dead');
SELECT jobq_enqueue('ddp-dead', '{"v": "dead"}', dedupe_key => 'dk') AS dk \gset
SELECT token AS td FROM jobq_claim('ddp-dead') \gset
SELECT jobq_fail(:dk, :'td', 'fatal', permanent => true);
SELECT state, dedupe_key FROM jobq_job(:dk);
SELECT jobq_enqueue('ddp-dead', '{"v": "live"}', dedupe_key => 'dk') AS dk2 \gset
SELECT :dk2 <> :dk AS new_job;
SELECT jobq_retry(:dk) AS retried;
SELECT state FROM jobq_job(:dk);
SELECT jobq_retry('ddp-dead') AS retried_in_queue;
SELECT state FROM jobq_job(:dk);
-- once the live job is gone, the retry works and the job holds the key again
SELECT jobq_cancel(:dk2);
SELECT jobq_retry(:dk) AS retried;
SELECT state, attempt FROM jobq_job(:dk);
SELECT jobq_enqueue('ddp-dead', '{}', dedupe_key => 'dk') = :dk AS key_held_again;

SELECT queue, ready, delayed, running, dead, completed, cancelled
FROM jobq_stats() WHERE queue LIKE 'ddp%' ORDER BY queue;
SELECT jobq_drop_queue(q, force => true) FROM unnest(ARRAY['ddp', 'ddp-dead', 'ddp-other', 'ddp-run']) q;
