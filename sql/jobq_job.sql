-- jobq_job (0.2.0): the attempt history (failed with its error, released,
-- lease expired, running, completed; never the token), carried into
-- history; errors without the releases; entries written by 0.1.0; what a
-- monitor sees; payloads and results over JOBQ_INSPECT_VALUE_MAX cut on a
-- character boundary with their flags, and jobq_job_value returning them
-- whole; bad input.
\set VERBOSITY terse
SET client_min_messages = warning;

SELECT jobq_create_queue('jbh', max_attempts => 5, backoff_base => '0',
                         completed_retention => '1 day');
CREATE FUNCTION regress_attempts(job bigint) RETURNS TABLE (
    attempt int, worker text, outcome text, error text, error_truncated boolean,
    claimed boolean, finished boolean, lease_until boolean)
LANGUAGE sql AS $$
SELECT (a ->> 'attempt')::int, a ->> 'worker', a ->> 'outcome', a ->> 'error',
       (a ->> 'error_truncated')::boolean, a ? 'claimed_at' AND a ->> 'claimed_at' IS NOT NULL,
       a ->> 'finished_at' IS NOT NULL, a ? 'lease_until'
FROM jobq_job(job) j, jsonb_array_elements(j.attempts) a
$$;

SELECT jobq_enqueue('jbh', '{"task": "history"}') AS j \gset
-- no attempt yet
SELECT attempts, payload_truncated, result_truncated FROM jobq_job(:j);
-- attempt 1 fails, attempt 2 is released (given back), attempt 2 again
-- loses its lease, attempt 3 runs
SELECT jobq_fail(id, token, 'boom: disk full') FROM jobq_claim('jbh', 'w1');
SELECT jobq_release(id, token) FROM jobq_claim('jbh', 'w2');
-- a release is no error: the list's last_error is still the failure's
SELECT last_error FROM jobq_list('jbh') WHERE id = :j;
SELECT count(*) AS claimed FROM jobq_claim('jbh', 'w3');
UPDATE jobq.jobs SET locked_until = now() - interval '1 second' WHERE id = :j;
SELECT requeued FROM jobq_sweep('jbh');
SELECT token AS t4 FROM jobq_claim('jbh', 'w4') \gset
SELECT * FROM regress_attempts(:j);
-- errors keeps its 0.1.0 meaning: the failures, not the release
SELECT jsonb_array_length(errors) AS errors, jsonb_path_query_array(errors, '$[*].outcome') AS outcomes
FROM jobq_job(:j);
-- never the token, in any column
SELECT position(:'t4' IN j::text) = 0 AS no_token, j.attempts::text NOT LIKE '%token%' AS no_token_key
FROM jobq_job(:j) j;
-- completed: the history row is the last attempt (the complete wrote no entry)
SELECT jobq_complete(:j, :'t4', '{"ok": true}');
SELECT * FROM regress_attempts(:j);
SELECT state, attempt, worker FROM jobq_job(:j);

-- dead: the last failure is the last attempt, no completed entry
SELECT jobq_enqueue('jbh', '{"task": "dead"}') AS d \gset
SELECT jobq_fail(id, token, 'fatal', permanent => true) FROM jobq_claim('jbh', 'wd');
SELECT * FROM regress_attempts(:d);
-- a cancelled job that never ran has no attempt
SELECT jobq_enqueue('jbh', '{"task": "cancelled"}') AS c \gset
SELECT jobq_cancel(:c);
SELECT state, attempts FROM jobq_job(:c);

-- an entry written by 0.1.0 (no outcome, worker nor claimed_at) reads as
-- a failure or an expired lease, from its text
SELECT jobq_enqueue('jbh', '{"task": "old"}') AS o \gset
UPDATE jobq.jobs SET errors = jsonb_build_array(
    jsonb_build_object('attempt', 1, 'at', now(), 'error', 'lease expired', 'truncated', false),
    jsonb_build_object('attempt', 2, 'at', now(), 'error', 'bad input', 'truncated', true)),
    attempt = 2
WHERE id = :o;
SELECT * FROM regress_attempts(:o);
SELECT jobq_cancel(:o);

-- a monitor sees the timeline, not the error texts (nor payload, result)
CREATE ROLE regress_job_monitor IN ROLE jobq_monitor;
SET ROLE regress_job_monitor;
SELECT payload IS NULL AS no_payload, errors IS NULL AS no_errors, result IS NULL AS no_result,
       jsonb_array_length(attempts) AS attempts,
       jsonb_path_query_array(attempts, '$[*].error') AS error_texts
FROM jobq_job(:j);
RESET ROLE;

CREATE FUNCTION regress_try_job(stmt text) RETURNS text LANGUAGE sql AS $$
SELECT regress_outcome(stmt) $$;

-- large values: cut to the first 262144 bytes of their text, as a JSON
-- string, on a character boundary; jobq_job_value returns them whole
SELECT jobq_enqueue('jbh', jsonb_build_object('s', repeat('x', 300000))) AS big \gset
SELECT jobq_enqueue('jbh', jsonb_build_object('s', repeat('é', 150000))) AS wide \gset
SELECT jobq_enqueue('jbh', jsonb_build_object('s', repeat('y', 262135))) AS fits \gset
SELECT id - :big AS n, payload_truncated, jsonb_typeof(payload) AS shown_as,
       octet_length(CASE WHEN payload_truncated THEN payload #>> '{}' ELSE payload::text END) AS bytes,
       left(payload #>> '{}', 8) AS starts
FROM jobq_job(:big) UNION ALL
SELECT id - :big, payload_truncated, jsonb_typeof(payload),
       octet_length(CASE WHEN payload_truncated THEN payload #>> '{}' ELSE payload::text END),
       left(payload #>> '{}', 8)
FROM jobq_job(:wide) UNION ALL
SELECT id - :big, payload_truncated, jsonb_typeof(payload),
       octet_length(CASE WHEN payload_truncated THEN payload #>> '{}' ELSE payload::text END), NULL
FROM jobq_job(:fits);
SELECT jobq_job_value(:big) = jsonb_build_object('s', repeat('x', 300000)) AS big_whole,
       jobq_job_value(:wide, 'payload') = jsonb_build_object('s', repeat('é', 150000)) AS wide_whole,
       jobq_job_value(:big, 'result') IS NULL AS no_result_yet;
-- a result: cut in jobq_job, whole from jobq_job_value, also from history
SELECT jobq_cancel(:wide), jobq_cancel(:fits);
SELECT jobq_complete(id, token, jsonb_build_object('r', repeat('z', 270000)))
FROM jobq_claim('jbh', 'wbig') WHERE id = :big;
SELECT state, payload_truncated, result_truncated, octet_length(result #>> '{}') AS result_bytes
FROM jobq_job(:big);
SELECT jobq_job_value(:big, 'result') = jsonb_build_object('r', repeat('z', 270000)) AS result_whole,
       jobq_job_value(:big) = jsonb_build_object('s', repeat('x', 300000)) AS payload_whole;

-- bad input and privileges
SET ROLE regress_job_monitor;
SELECT regress_try_job($$SELECT jobq_job_value(1)$$) AS monitor_value;
RESET ROLE;
SELECT regress_try_job(c) AS outcome FROM (VALUES
  ($$SELECT jobq_job_value(1, 'errors')$$),
  ($$SELECT jobq_job_value(1, NULL)$$),
  ($$SELECT jobq_job_value(NULL)$$),
  ($$SELECT jobq_job_value(0)$$),
  ($$SELECT count(*) FROM jobq_job(NULL)$$),
  ($$SELECT count(*) FROM jobq_job(0)$$)) AS c(c);

DROP ROLE regress_job_monitor;
DROP FUNCTION regress_attempts(bigint);
DROP FUNCTION regress_try_job(text);
SELECT jobq_drop_queue('jbh', force => true);
