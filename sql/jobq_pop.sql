-- jobq_pop: the opt-in, at-most-once take. It deletes the jobs it returns,
-- in claim order (priority, run_at, id); delayed and running jobs stay;
-- paused and unknown queues give nothing; the attempt counts as one; a
-- queue that keeps completed history gets a "completed" row per job (no
-- token, no worker), one with retention 0 none; a dedupe key is free again
-- at once; bad arguments fail before anything is taken.
\set VERBOSITY terse
SET client_min_messages = warning;

SELECT jobq_create_queue('pop');
SELECT jobq_create_queue('pop-nohist', completed_retention => '0');

-- order: priority, then run_at, then id; the delayed job is not taken
SELECT jobq_enqueue('pop', '{"n": "a"}') AS ja \gset
SELECT jobq_enqueue('pop', '{"n": "b"}') AS jb \gset
SELECT jobq_enqueue('pop', '{"n": "urgent"}', priority => -5) AS ju \gset
SELECT jobq_enqueue('pop', '{"n": "delayed"}', priority => -10, delay => '1 hour') AS jd \gset
SELECT jobq_enqueue('pop', '{"n": "claimed"}', priority => -20) AS jc \gset
SELECT id = :jc AS claimed_first FROM jobq_claim('pop');
-- the live rows as they were, to compare the history rows with
CREATE TEMP TABLE pop_before AS SELECT * FROM jobq.jobs WHERE queue = 'pop';
SELECT payload, attempt, queue FROM jobq_pop('pop');
SELECT id = :ja AS is_a, payload, attempt, enqueued_at IS NOT NULL AS has_enqueued_at
FROM jobq_pop('pop', max_jobs => 10);
-- gone from the live jobs; the delayed and the running job stay
SELECT id = :jd AS is_delayed, state FROM jobq.jobs WHERE queue = 'pop' AND id <> :jc;
SELECT state FROM jobq_job(:jc);
SELECT count(*) AS nothing_left FROM jobq_pop('pop', max_jobs => 10);

-- history: a completed row per job, the attempt counted, no token, no
-- worker, no result; everything else as the live row was
SELECT id IN (:ja, :jb, :ju) AS popped, state, attempt, token IS NULL AS no_token,
       worker IS NULL AS no_worker, finished_at IS NOT NULL AS finished, payload
FROM jobq.history WHERE queue = 'pop' ORDER BY id;
SELECT h.id IN (:ja, :jb, :ju) AS popped,
       h.attempt = b.attempt + 1 AS attempt_counted,
       (h.priority, h.run_at, h.max_attempts, h.enqueued_at, h.payload)
         = (b.priority, b.run_at, b.max_attempts, b.enqueued_at, b.payload) AS same_job,
       h.dedupe_key IS NOT DISTINCT FROM b.dedupe_key AND h.errors IS NOT DISTINCT FROM b.errors
         AS same_key_and_errors,
       h.result IS NULL AS no_result, h.claimed_at = h.finished_at AS taken_when_finished,
       h.finished_at >= b.enqueued_at AS finished_after_enqueue
FROM jobq.history h JOIN pop_before b USING (id) ORDER BY h.id;
SELECT ready, running, completed FROM jobq_stats('pop');
-- popped jobs are history like completed ones: the purge removes them
SELECT jobq_purge('pop', 'completed') AS purged;

-- a job that failed once and is retried: its second attempt is popped
SELECT jobq_enqueue('pop', '{"n": "retried"}', priority => -30) AS jr \gset
SELECT id = :jr AS claimed, jobq_fail(id, token, 'boom', retry_in => '0') AS failed
FROM jobq_claim('pop');
SELECT id = :jr AS is_retried, attempt FROM jobq_pop('pop');
SELECT attempt, errors IS NOT NULL AS has_errors FROM jobq.history WHERE id = :jr;

-- a queue with completed_retention 0 keeps no history
SELECT jobq_enqueue('pop-nohist', '{"n": 1}') > 0 AS enqueued;
SELECT payload FROM jobq_pop('pop-nohist');
SELECT count(*) AS history_rows FROM jobq.history WHERE queue = 'pop-nohist';
-- and a queue altered to keep none stops keeping it at once
SELECT jobq_alter_queue('pop', completed_retention => '0');
SELECT jobq_enqueue('pop', '{"n": "after alter"}') AS jalt \gset
SELECT id = :jalt AS popped FROM jobq_pop('pop');
SELECT count(*) AS history_rows FROM jobq.history WHERE id = :jalt;

-- the dedupe key is free once the job is popped
SELECT jobq_enqueue('pop-nohist', '{"k": 1}', dedupe_key => 'k') AS k1 \gset
SELECT jobq_enqueue('pop-nohist', '{"k": 2}', dedupe_key => 'k') = :k1 AS deduped;
SELECT payload FROM jobq_pop('pop-nohist');
SELECT jobq_enqueue('pop-nohist', '{"k": 3}', dedupe_key => 'k') <> :k1 AS new_job;
SELECT payload FROM jobq_pop('pop-nohist');

-- the caller's transaction decides: rolled back, the jobs are back
SELECT jobq_enqueue('pop-nohist', '{"n": "kept"}') AS jk \gset
BEGIN;
SELECT payload FROM jobq_pop('pop-nohist');
ROLLBACK;
SELECT id = :jk AS back, state, attempt FROM jobq.jobs WHERE queue = 'pop-nohist';

-- paused and unknown queues give nothing
SELECT jobq_pause('pop-nohist');
SELECT count(*) AS paused_nothing FROM jobq_pop('pop-nohist');
SELECT jobq_resume('pop-nohist');
SELECT count(*) AS unknown_nothing FROM jobq_pop('pop-none');

-- bad arguments: an error with its SQLSTATE, and nothing taken
\set VERBOSITY sqlstate
SELECT * FROM jobq_pop(NULL);
SELECT * FROM jobq_pop('Bad Name');
SELECT * FROM jobq_pop('pop-nohist', max_jobs => 0);
SELECT * FROM jobq_pop('pop-nohist', max_jobs => 1001);
SELECT * FROM jobq_pop('pop-nohist', max_jobs => NULL);
\set VERBOSITY terse
SELECT * FROM jobq_pop('pop-nohist', max_jobs => 0);
SELECT * FROM jobq_pop('pop-nohist', max_jobs => NULL);
SELECT count(*) AS still_there FROM jobq.jobs WHERE id = :jk;
SELECT payload FROM jobq_pop('pop-nohist');

DROP TABLE pop_before;
SELECT jobq_drop_queue('pop', force => true), jobq_drop_queue('pop-nohist', force => true);
