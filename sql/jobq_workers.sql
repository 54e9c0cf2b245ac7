-- jobq_workers: the worker registry (issue 16). Register (defaults, every
-- argument, re-registration under the same worker_id), heartbeat (the
-- state asked of the worker, states that only move forward, unregistered),
-- signal (targets: *, an id, a LIKE pattern of name or host; transitions;
-- counts), jobq_workers (the running jobs found by the claim's worker
-- label, alive, heartbeat age), prune (advisory: the pruned worker's job
-- stays running and completes with its token), deregister, and every bad
-- input with its SQLSTATE before any side effect. Times are asserted as
-- booleans; ids are kept in psql variables.
\set VERBOSITY terse
SET client_min_messages = warning;

SELECT jobq_create_queue('wrk');
SELECT coalesce(max(id), 0) AS audit_start FROM jobq.audit \gset

-- a registration with every argument, and one with the name only
SELECT worker_id AS w1, heartbeat_every = dead_after / 4 AS quarter, dead_after
FROM jobq_worker_register('regress-w1', host => 'host-a', pid => 4242, queues => ARRAY['wrk', 'wrk-other'],
                          slots => 4, version => '0.2.0', metadata => '{"rss_kb": 1000}',
                          timeout => '30 s') \gset
SELECT :'w1' <> '' AS has_id;
SELECT worker_id AS w2, dead_after FROM jobq_worker_register('regress-w2') \gset
SELECT :'dead_after' AS default_dead_after;
SELECT name, host, pid, queues, slots, version, metadata, state, busy, running, alive,
       heartbeat_age >= '0' AND heartbeat_age < '1 min' AS fresh, dead_after,
       started_at = heartbeat_at AS started_now, backend_pid = pg_backend_pid() AS my_backend
FROM jobq_workers() ORDER BY name;

-- a heartbeat: the state asked of the worker; busy and metadata kept
SELECT jobq_worker_heartbeat(:'w1', busy => 3, metadata => '{"rss_kb": 2000}');
SELECT busy, metadata FROM jobq_workers() WHERE worker_id = :'w1';
-- NULL busy and metadata: unchanged
SELECT jobq_worker_heartbeat(:'w1');
SELECT busy, metadata FROM jobq_workers() WHERE worker_id = :'w1';

-- signals: quiet by name pattern, then the heartbeat says so
SELECT jobq_worker_signal('regress-w_', 'quiet') AS quieted;
SELECT jobq_worker_heartbeat(:'w1') AS w1_state, jobq_worker_heartbeat(:'w2') AS w2_state;
-- a worker cannot un-quiet itself: its own report only moves forward
SELECT jobq_worker_heartbeat(:'w1', state => 'running') AS w1_after_running_report;
-- resume by id (upper case is the same uuid), back to running
SELECT jobq_worker_signal(upper(:'w1'), 'resume') AS resumed;
SELECT jobq_worker_heartbeat(:'w1') AS w1_state;
-- the worker reports that it stops by itself (SIGTERM): stopping
SELECT jobq_worker_heartbeat(:'w1', state => 'stopping') AS w1_state;
-- a stopping worker is neither quieted nor resumed; stop counts it
SELECT jobq_worker_signal('*', 'quiet') AS quiet_all,
       jobq_worker_signal('*', 'resume') AS resume_all,
       jobq_worker_signal('*', 'stop') AS stop_all;
SELECT name, state FROM jobq_workers() ORDER BY name;
-- by host pattern, and a target that matches nobody
SELECT jobq_worker_signal('host-%', 'stop') AS by_host,
       jobq_worker_signal('nobody-%', 'quiet') AS nobody;
-- every signal is in the audit trail, with its target, signal and count
SELECT action, regexp_replace(detail::text, '[0-9A-Fa-f-]{36}', 'ID') AS detail, affected
FROM jobq.audit WHERE id > :audit_start ORDER BY id;

-- re-registration under the same id (after 'unregistered'): the row is
-- updated, its state and start kept
SELECT worker_id = :'w2' AS same_id
FROM jobq_worker_register('regress-w2b', worker_id => :'w2', slots => 2);
SELECT name, slots, state FROM jobq_workers() WHERE worker_id = :'w2';

-- the jobs a worker runs: those claimed with its id as the worker label
SELECT worker_id AS w3 FROM jobq_worker_register('regress-w3', timeout => '2 s') \gset
SELECT jobq_enqueue('wrk', '{"n": 1}') AS j1 \gset
SELECT jobq_enqueue('wrk', '{"n": 2}') AS j2 \gset
SELECT id AS c1, token AS t1 FROM jobq_claim('wrk', :'w3', 1) \gset
SELECT id AS c2, token AS t2 FROM jobq_claim('wrk', 'someone-else', 1) \gset
SELECT running = ARRAY[:c1]::bigint[] AS runs_its_job FROM jobq_workers() WHERE worker_id = :'w3';
SELECT count(*) AS workers_running_c2 FROM jobq_workers() WHERE :c2 = ANY (running);
-- the registry is advisory: a quiet worker's claim without a wait claims
SELECT jobq_worker_signal(:'w3', 'quiet');
SELECT jobq_enqueue('wrk', '{"n": 3}') AS j3 \gset
SELECT count(*) AS claimed_while_quiet FROM jobq_claim('wrk', :'w3', 1);
SELECT cardinality(running) AS w3_running FROM jobq_workers() WHERE worker_id = :'w3';

-- prune: nothing is past its dead_after yet
SELECT jobq_worker_prune() AS pruned_none;
-- w3 stopped heartbeating long ago (set back by hand): not alive, pruned
UPDATE jobq.workers SET heartbeat_at = heartbeat_at - interval '1 hour' WHERE id = :'w3';
SELECT alive FROM jobq_workers() WHERE worker_id = :'w3';
SELECT jobq_worker_prune(1) AS pruned;
SELECT count(*) AS w3_rows FROM jobq_workers() WHERE worker_id = :'w3';
-- its jobs were not touched: still running, and its token completes it
SELECT state, worker = :'w3' AS same_label FROM jobq_job(:c1);
SELECT jobq_complete(:c1, :'t1') AS completed_after_prune;
-- the pruned worker's heartbeat: unregistered, and it registers again
SELECT jobq_worker_heartbeat(:'w3') AS w3_state;
SELECT worker_id = :'w3' AS same_id, dead_after FROM jobq_worker_register('regress-w3', worker_id => :'w3');

-- deregister: true once, then false
SELECT jobq_worker_deregister(:'w3') AS first, jobq_worker_deregister(:'w3') AS second;

-- jobq_queue_consumers: per queue the live registered workers naming it,
-- those asked to claim and their slots; unserved = due jobs, not paused,
-- nobody claiming.  w1 (stopping) names wrk and wrk-other, w2b names
-- none; wrk has two jobs running and none due; wrk-idle has a job due
-- and nobody naming it: unserved
SELECT jobq_create_queue('wrk-idle');
SELECT jobq_create_queue('wrk-other');
SELECT jobq_enqueue('wrk-idle', '{}') IS NOT NULL AS enqueued;
SELECT queue, paused, ready, running, workers, claiming, slots, unserved
FROM jobq_queue_consumers() WHERE queue LIKE 'wrk%' ORDER BY queue;
-- a running worker naming wrk-idle (slots unsaid: one) and wrk-other
-- (4 slots) serves them; a quiet one is counted but does not claim
SELECT worker_id AS w4 FROM jobq_worker_register('regress-w4', queues => ARRAY['wrk-idle', 'wrk']) \gset
SELECT worker_id AS w5 FROM jobq_worker_register('regress-w5', queues => ARRAY['wrk-other'], slots => 4) \gset
SELECT jobq_worker_signal(:'w5', 'quiet') AS w5_quiet;
SELECT queue, ready, workers, claiming, slots, unserved
FROM jobq_queue_consumers() WHERE queue LIKE 'wrk%' ORDER BY queue;
-- a paused queue is not unserved; a dead worker (past dead_after, not yet
-- pruned) serves nobody
SELECT jobq_pause('wrk-idle');
SELECT queue, paused, unserved FROM jobq_queue_consumers() WHERE queue = 'wrk-idle';
SELECT jobq_resume('wrk-idle');
UPDATE jobq.workers SET heartbeat_at = heartbeat_at - interval '1 hour' WHERE id = :'w4';
SELECT queue, workers, claiming, unserved FROM jobq_queue_consumers() WHERE queue = 'wrk-idle';
-- jobq_health reports it, at once (no backlog age)
SELECT severity, "check", subject,
       regexp_replace(detail, '[0-9]+ jobs', 'N jobs') AS detail
FROM jobq_health() WHERE "check" = 'consumers' ORDER BY subject;
SELECT jobq_worker_deregister(:'w4') AND jobq_worker_deregister(:'w5') AS deregistered;
SELECT jobq_drop_queue(q, force => true) FROM unnest(ARRAY['wrk-idle', 'wrk-other']) q;

-- reclaim_on_worker_death: the prune ends the leases of the pruned
-- worker's running jobs in such queues (at the time it was deemed dead),
-- and the sweep requeues them with the attempt counted; the same worker's
-- job in a queue without it keeps its lease; its late complete is stale
SELECT jobq_create_queue('wrk-reclaim', lease => '1 hour', reclaim_on_worker_death => true);
SELECT worker_id AS w7 FROM jobq_worker_register('regress-w7', queues => ARRAY['wrk', 'wrk-reclaim']) \gset
SELECT jobq_enqueue('wrk-reclaim', '{}') IS NOT NULL AS enqueued;
SELECT jobq_enqueue('wrk', '{}') IS NOT NULL AS enqueued;
SELECT id AS r1, token AS rt1 FROM jobq_claim('wrk-reclaim', :'w7', 1) \gset
SELECT id AS r2, token AS rt2 FROM jobq_claim('wrk', :'w7', 1) \gset
SELECT locked_until AS r2_lease FROM jobq.jobs WHERE id = :r2 \gset
UPDATE jobq.workers SET heartbeat_at = heartbeat_at - interval '1 hour' WHERE id = :'w7';
SELECT jobq_worker_prune() AS pruned;
SELECT id = :r1 AS reclaimed, state, locked_until < now() AS lease_over
FROM jobq.jobs WHERE id IN (:r1, :r2) ORDER BY id = :r1 DESC;
SELECT locked_until = :'r2_lease' AS other_queue_lease_kept FROM jobq.jobs WHERE id = :r2;
SELECT requeued FROM jobq_sweep('wrk-reclaim');
SELECT state, attempt, errors -> -1 ->> 'error' AS error FROM jobq.jobs WHERE id = :r1;
SELECT jobq_complete(:r1, :'rt1') AS stale_complete;
SELECT jobq_complete(:r2, :'rt2') AS other_completes;
SELECT jobq_drop_queue('wrk-reclaim', force => true);

-- Bad input: nothing registered, nothing changed
SELECT count(*) AS before FROM jobq_workers() \gset
SELECT jobq_worker_register(NULL);
SELECT jobq_worker_register('');
SELECT jobq_worker_register('w', host => '');
SELECT jobq_worker_register('w', version => '');
SELECT jobq_worker_register('w', pid => 0);
SELECT jobq_worker_register('w', slots => 0);
SELECT jobq_worker_register('w', queues => ARRAY['Bad Name']);
SELECT jobq_worker_register('w', queues => ARRAY['wrk', NULL]);
SELECT jobq_worker_register('w', queues => ARRAY[['wrk'], ['wrk']]);
SELECT jobq_worker_register('w', metadata => '[1, 2]');
SELECT jobq_worker_register('w', metadata => '"text"');
SELECT jobq_worker_register('w', timeout => '1 s');
SELECT jobq_worker_register('w', timeout => '-5 s');
SELECT jobq_worker_heartbeat(NULL);
SELECT jobq_worker_heartbeat(:'w1', busy => -1);
SELECT jobq_worker_heartbeat(:'w1', state => 'paused');
SELECT jobq_worker_heartbeat(:'w1', state => '');
SELECT jobq_worker_heartbeat(:'w1', metadata => '[]');
SELECT jobq_worker_heartbeat('not-a-uuid');
SELECT jobq_worker_deregister(NULL);
SELECT jobq_worker_signal(NULL, 'quiet');
SELECT jobq_worker_signal('*', NULL);
SELECT jobq_worker_signal('', 'quiet');
SELECT jobq_worker_signal('*', 'pause');
SELECT jobq_worker_signal('*', 'QUIET');
SELECT jobq_worker_prune(NULL);
SELECT jobq_worker_prune(0);
SELECT count(*) = :before AS unchanged FROM jobq_workers();
SELECT name, state, busy FROM jobq_workers() ORDER BY name;

-- clean up
SELECT count(jobq_worker_deregister(worker_id)) AS deregistered FROM jobq_workers();
SELECT jobq_drop_queue('wrk', true);
