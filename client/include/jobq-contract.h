/*-------------------------------------------------------------------------
 *
 * jobq-contract.h
 *	  The facts the jobq extension and its clients must agree on: limits,
 *	  job states and queue settings.
 *
 * One header, included by the extension (extension/jobq.h) and by libjobq
 * (jobq-client.h), so that a client refuses exactly what the server would
 * refuse, before anything is sent.  Plain C macros only: no PostgreSQL
 * types, nothing to link.  The server stays authoritative: it checks every
 * limit again, and jobq_limits() returns the values it was built with (a
 * client can compare them with its own, see JOBQ_LIMITS).
 *
 * Units are in the names: _MAX and _MIN of a byte length or a count are
 * bytes or items, _S is seconds.  Every bound is inclusive.
 *
 * Adding a queue setting or a job state: change the X-macro here, then the
 * install (upgrade) script, the docs and the tests; the C of both sides
 * follows from the macro.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/include/jobq-contract.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JOBQ_CONTRACT_H
#define JOBQ_CONTRACT_H

/* Names */
#define JOBQ_QUEUE_NAME_MAX 48			/* bytes; ^[a-z0-9]+([_-][a-z0-9]+)*$,
										 * so that "jobq." || name fits a
										 * NOTIFY channel (NAMEDATALEN) */
#define JOBQ_WORKER_NAME_MAX 200		/* bytes, at least 1 */
#define JOBQ_DEDUPE_KEY_MAX 512			/* bytes, at least 1 */

/* Sizes of what a job carries */
#define JOBQ_PAYLOAD_HARD_MAX (64 * 1024 * 1024)	/* bytes: the ceiling of
													 * jobq.max_payload_size
													 * (default 1 MB), which
													 * limits payloads and
													 * results */
#define JOBQ_ERROR_TEXT_MAX 4096		/* bytes kept of one error text (a
										 * longer one is cut, not refused) */
#define JOBQ_ERRORS_KEPT 10				/* newest errors kept per job */

/* Times, in seconds */
#define JOBQ_LEASE_MIN_S 1
#define JOBQ_LEASE_MAX_S 86400			/* 24 hours */
#define JOBQ_DELAY_MAX_S 31536000		/* 365 days: delay, run_at ahead,
										 * retry_in */
#define JOBQ_BACKOFF_BASE_MAX_S 86400	/* 1 day */
#define JOBQ_BACKOFF_CAP_MAX_S 31536000 /* 365 days; and at least the base */
#define JOBQ_RETENTION_MAX_S 315360000	/* 3650 days; completed and dead */
#define JOBQ_CLAIM_WAIT_MAX_S 300		/* server-side wait of a claim */

/* Values */
#define JOBQ_PRIORITY_MIN (-1000)		/* lower runs first */
#define JOBQ_PRIORITY_MAX 1000
#define JOBQ_MAX_ATTEMPTS_MAX 1000		/* at least 1 */

/* Counts per call, each at least 1 */
#define JOBQ_CLAIM_MAX 1000				/* jobs per claim or pop */
#define JOBQ_CLAIM_QUEUES_MAX 100		/* queues one claim names */
#define JOBQ_ENQUEUE_BATCH_MAX 10000	/* payloads per enqueue batch */
#define JOBQ_COMPLETE_BATCH_MAX 1000	/* (id, token) pairs per complete batch */
#define JOBQ_SWEEP_MAX_ROWS 100000		/* max_rows of a sweep */
#define JOBQ_LIST_MAX_ROWS 10000		/* max_rows of jobq_list */
#define JOBQ_QUEUES_PER_XACT_MAX 1000	/* distinct queues one transaction
										 * enqueues into (each holds a lock
										 * to its end); past it 54000 */
#define JOBQ_BULK_MAX 10000				/* ids of a bulk action (*_many), and
										 * max_rows of a *_where one */

/* Cron expressions (extension/cron.c) */
#define JOBQ_CRON_EXPR_MAX 512			/* bytes of one expression */
#define JOBQ_CRON_EVERY_MIN_S 1			/* @every: shortest interval */
#define JOBQ_CRON_EVERY_MAX_S 2678400	/* @every: longest, 31 days */
#define JOBQ_CRON_NEXT_MAX 1000			/* fire times one jobq_cron_next
										 * call returns (its n) */
/* Awaiting a job's outcome (jobq_await, jobq_await_many) */
#define JOBQ_AWAIT_MAX_S 3600			/* timeout of one await */
#define JOBQ_AWAIT_STATEMENT_MAX_S 30	/* longest wait that holds a snapshot:
										 * jobq_await_many, and jobq_await
										 * inside a transaction block */
#define JOBQ_AWAIT_MANY_MAX 1000		/* ids per jobq_await_many */
#define JOBQ_AWAIT_RESULT_MAX (64 * 1024)	/* bytes: largest result or error
											 * handed over to an awaiter at
											 * commit (larger ones are read
											 * from history) */

/* Schedules (recurring jobs) */
#define JOBQ_SCHEDULE_NAME_MAX 128		/* bytes; the queue names' allow-list */
#define JOBQ_SCHEDULE_GRACE_MAX_S 2678400	/* 31 days: how late a tick may
											 * still fire */
#define JOBQ_CRON_TICK_MAX 1000			/* schedules one jobq_cron_tick call
										 * handles */

/*
 * 0.1.0's limit on the queues of a waiting claim.  A waiting claim now takes
 * as many queues as any claim (each waiter slot holds JOBQ_CLAIM_QUEUES_MAX
 * of them, extension/wait.c); kept so that programs written against 0.1.0
 * still build.
 */
#define JOBQ_CLAIM_WAIT_QUEUES_MAX JOBQ_CLAIM_QUEUES_MAX

/* The worker registry (issue 16) */
#define JOBQ_WORKER_TIMEOUT_MIN_S 2		/* dead_after of a registration */
#define JOBQ_WORKER_TIMEOUT_MAX_S 86400
#define JOBQ_WORKER_TIMEOUT_DEFAULT_S 60	/* jobq.worker_timeout */
#define JOBQ_WORKER_SLOTS_MAX 100000	/* slots and busy of a worker */
#define JOBQ_WORKER_METADATA_MAX 8192	/* bytes of a worker's metadata */

/* Groups, concurrency and rate limits of a queue (issue 19) */
#define JOBQ_GROUP_LIMIT_MAX 10000		/* group_limit: running jobs per group */
#define JOBQ_MAX_RUNNING_MAX 10000	/* max_running of a queue (a slot row each); 0: no limit */
#define JOBQ_RATE_MAX 1000000			/* rate and burst; a rate of 0: no limit */
#define JOBQ_RATE_PER_MAX_S 86400		/* rate_per and group_rate_per */
#define JOBQ_GROUP_KEY_MAX 256			/* bytes of a job's group_key, at least 1 */

/* Defaults of SQL arguments */
#define JOBQ_SWEEP_DEFAULT_ROWS 1000
#define JOBQ_LIST_DEFAULT_ROWS 100
#define JOBQ_BULK_DEFAULT_ROWS 1000		/* max_rows of a *_where bulk action */

/*
 * Job lists and job detail (0.2.0).  jobq_list's filter "ids" takes at
 * most JOBQ_LIST_IDS_MAX ids; a filter that no index answers is evaluated
 * on at most jobq.list_scan_limit rows (default JOBQ_LIST_SCAN_LIMIT_DEFAULT)
 * per call.  jobq_job returns a payload or result whose text is longer
 * than JOBQ_INSPECT_VALUE_MAX bytes cut to that length (as a JSON string,
 * flagged truncated); jobq_job_value returns it whole.
 */
#define JOBQ_LIST_IDS_MAX 1000
#define JOBQ_LIST_SCAN_LIMIT_DEFAULT 100000
#define JOBQ_INSPECT_VALUE_MAX (256 * 1024)	/* bytes */

/*
 * Flows (0.2.0, doc/flows.md).  A job depends on at most
 * JOBQ_DEPS_MAX jobs; a jobq_flow call inserts at most JOBQ_FLOW_JOBS_MAX
 * jobs; a parent's result of at most JOBQ_DEP_RESULT_MAX bytes is copied
 * to its children when it completes (a larger one is read from history
 * while it is kept); a flow ref is 1 to JOBQ_FLOW_REF_MAX bytes.
 */
#define JOBQ_DEPS_MAX 10000
#define JOBQ_FLOW_JOBS_MAX 10000
#define JOBQ_DEP_RESULT_MAX (64 * 1024)	/* bytes */
#define JOBQ_FLOW_REF_MAX 200			/* bytes */

/*
 * Checkpoints (0.2.0, doc/flows.md): the state a running job stores with
 * jobq_checkpoint is at most JOBQ_CHECKPOINT_MAX bytes (its jsonb value).
 */
#define JOBQ_CHECKPOINT_MAX (256 * 1024)	/* bytes */

/*
 * JOBQ_LIMITS(X): every refused limit above as
 * X(sql_name, value, unit), in the order jobq_limits() returns them.  The
 * unit is "bytes", "seconds" or "count" (priority bounds are plain
 * numbers: "count" too).
 */
#define JOBQ_LIMITS(X) \
	X("queue_name_max", JOBQ_QUEUE_NAME_MAX, "bytes") \
	X("worker_name_max", JOBQ_WORKER_NAME_MAX, "bytes") \
	X("dedupe_key_max", JOBQ_DEDUPE_KEY_MAX, "bytes") \
	X("payload_hard_max", JOBQ_PAYLOAD_HARD_MAX, "bytes") \
	X("error_text_max", JOBQ_ERROR_TEXT_MAX, "bytes") \
	X("errors_kept", JOBQ_ERRORS_KEPT, "count") \
	X("lease_min", JOBQ_LEASE_MIN_S, "seconds") \
	X("lease_max", JOBQ_LEASE_MAX_S, "seconds") \
	X("delay_max", JOBQ_DELAY_MAX_S, "seconds") \
	X("backoff_base_max", JOBQ_BACKOFF_BASE_MAX_S, "seconds") \
	X("backoff_cap_max", JOBQ_BACKOFF_CAP_MAX_S, "seconds") \
	X("retention_max", JOBQ_RETENTION_MAX_S, "seconds") \
	X("claim_wait_max", JOBQ_CLAIM_WAIT_MAX_S, "seconds") \
	X("priority_min", JOBQ_PRIORITY_MIN, "count") \
	X("priority_max", JOBQ_PRIORITY_MAX, "count") \
	X("max_attempts_max", JOBQ_MAX_ATTEMPTS_MAX, "count") \
	X("claim_max", JOBQ_CLAIM_MAX, "count") \
	X("claim_queues_max", JOBQ_CLAIM_QUEUES_MAX, "count") \
	X("enqueue_batch_max", JOBQ_ENQUEUE_BATCH_MAX, "count") \
	X("complete_batch_max", JOBQ_COMPLETE_BATCH_MAX, "count") \
	X("sweep_max_rows", JOBQ_SWEEP_MAX_ROWS, "count") \
	X("list_max_rows", JOBQ_LIST_MAX_ROWS, "count") \
	X("queues_per_xact_max", JOBQ_QUEUES_PER_XACT_MAX, "count") \
	X("cron_expr_max", JOBQ_CRON_EXPR_MAX, "bytes") \
	X("cron_every_min", JOBQ_CRON_EVERY_MIN_S, "seconds") \
	X("cron_every_max", JOBQ_CRON_EVERY_MAX_S, "seconds") \
	X("cron_next_max", JOBQ_CRON_NEXT_MAX, "count") \
	X("worker_timeout_min", JOBQ_WORKER_TIMEOUT_MIN_S, "seconds") \
	X("worker_timeout_max", JOBQ_WORKER_TIMEOUT_MAX_S, "seconds") \
	X("worker_slots_max", JOBQ_WORKER_SLOTS_MAX, "count") \
	X("worker_metadata_max", JOBQ_WORKER_METADATA_MAX, "bytes") \
	X("await_max", JOBQ_AWAIT_MAX_S, "seconds") \
	X("await_statement_max", JOBQ_AWAIT_STATEMENT_MAX_S, "seconds") \
	X("await_many_max", JOBQ_AWAIT_MANY_MAX, "count") \
	X("await_result_max", JOBQ_AWAIT_RESULT_MAX, "bytes") \
	X("schedule_name_max", JOBQ_SCHEDULE_NAME_MAX, "bytes") \
	X("schedule_grace_max", JOBQ_SCHEDULE_GRACE_MAX_S, "seconds") \
	X("cron_tick_max", JOBQ_CRON_TICK_MAX, "count") \
	X("bulk_max", JOBQ_BULK_MAX, "count") \
	X("group_limit_max", JOBQ_GROUP_LIMIT_MAX, "count") \
	X("max_running_max", JOBQ_MAX_RUNNING_MAX, "count") \
	X("rate_max", JOBQ_RATE_MAX, "count") \
	X("rate_per_max", JOBQ_RATE_PER_MAX_S, "seconds") \
	X("group_key_max", JOBQ_GROUP_KEY_MAX, "bytes") \
	X("deps_max", JOBQ_DEPS_MAX, "count") \
	X("flow_jobs_max", JOBQ_FLOW_JOBS_MAX, "count") \
	X("dep_result_max", JOBQ_DEP_RESULT_MAX, "bytes") \
	X("flow_ref_max", JOBQ_FLOW_REF_MAX, "bytes") \
	X("checkpoint_max", JOBQ_CHECKPOINT_MAX, "bytes")

/*
 * JOBQ_JOB_STATES(X): the states of a job as X(name, LIVE or FINISHED),
 * in the order of the SQL enum jobq.job_state (and of JobqState).  Live
 * jobs are in jobq.jobs, finished ones in jobq.history.  Operators also
 * see "delayed", a ready job whose run_at is ahead: a view, not a state.
 * waiting (0.2.0, flows): live, not claimable until its dependencies are
 * satisfied; last, because ALTER TYPE ... ADD VALUE appends it there.
 */
#define JOBQ_JOB_STATES(X) \
	X(ready, LIVE) \
	X(running, LIVE) \
	X(completed, FINISHED) \
	X(dead, FINISHED) \
	X(cancelled, FINISHED) \
	X(waiting, LIVE)

/*
 * JOBQ_QUEUE_SETTINGS(X): the settings of a queue as
 * X(name, kind, min, max, default), in the order of the arguments of
 * jobq_create_queue and jobq_alter_queue (after the queue name) and of
 * the columns of jobq.queues and jobq_queues().  kind is SECONDS (an
 * interval, bounds and default in seconds), INTEGER or BOOLEAN (0 or 1).
 * backoff_cap must also be at least backoff_base.  paused is state, not
 * a setting (jobq_pause, jobq_resume).
 */
#define JOBQ_QUEUE_SETTINGS(X) \
	X(lease, SECONDS, JOBQ_LEASE_MIN_S, JOBQ_LEASE_MAX_S, 300) \
	X(max_attempts, INTEGER, 1, JOBQ_MAX_ATTEMPTS_MAX, 25) \
	X(backoff_base, SECONDS, 0, JOBQ_BACKOFF_BASE_MAX_S, 1) \
	X(backoff_cap, SECONDS, 0, JOBQ_BACKOFF_CAP_MAX_S, 3600) \
	X(completed_retention, SECONDS, 0, JOBQ_RETENTION_MAX_S, 86400) \
	X(dead_retention, SECONDS, 0, JOBQ_RETENTION_MAX_S, 14 * 86400) \
	X(notify, BOOLEAN, 0, 1, 1)

/*
 * JOBQ_QUEUE_SETTINGS_020(X): the settings that came with 0.2.0's SQL, in
 * the shape of JOBQ_QUEUE_SETTINGS and after them: in the arguments of
 * jobq_create_queue and jobq_alter_queue, the columns of jobq.queues and
 * of jobq_queues().  A database still running 0.1.0's SQL has none of
 * them, and its queues behave as with the defaults.  Kind CHOICE is text
 * with a fixed set of values, JOBQ_CHOICES_<name>(Y) as Y(value) in order;
 * its min and max are 0 and the count - 1, its default an index.  A limit
 * of 0 (max_running, rate, group_rate) is no limit.
 *
 * notify_finished: a NOTIFY on "jobq.finished.<queue>" per finished job;
 * reclaim_on_worker_death: the sweeper expires the leases of a pruned
 * worker's jobs at once (issue 16).  group_mode .. group_rate_burst: per-key
 * FIFO, per-key and queue-wide concurrency, queue-wide and per-key rates
 * as rate per rate_per with a burst (issue 19, doc/groups.md).
 */
#define JOBQ_CHOICES_group_mode(Y) Y(none) Y(fifo) Y(limit)
#define JOBQ_CHOICES_group_order(Y) Y(oldest) Y(round_robin)
#define JOBQ_CHOICES_fifo_block(Y) Y(retry_and_dead) Y(retry) Y(none)

#define JOBQ_QUEUE_SETTINGS_020(X) \
	X(notify_finished, BOOLEAN, 0, 1, 0) \
	X(reclaim_on_worker_death, BOOLEAN, 0, 1, 0) \
	X(group_mode, CHOICE, 0, 2, 0) \
	X(group_limit, INTEGER, 1, JOBQ_GROUP_LIMIT_MAX, 1) \
	X(group_order, CHOICE, 0, 1, 0) \
	X(fifo_block, CHOICE, 0, 2, 0) \
	X(max_running, INTEGER, 0, JOBQ_MAX_RUNNING_MAX, 0) \
	X(rate, INTEGER, 0, JOBQ_RATE_MAX, 0) \
	X(rate_per, SECONDS, 1, JOBQ_RATE_PER_MAX_S, 1) \
	X(rate_burst, INTEGER, 1, JOBQ_RATE_MAX, 1) \
	X(group_rate, INTEGER, 0, JOBQ_RATE_MAX, 0) \
	X(group_rate_per, SECONDS, 1, JOBQ_RATE_PER_MAX_S, 1) \
	X(group_rate_burst, INTEGER, 1, JOBQ_RATE_MAX, 1)

/*
 * JOBQ_METRIC_COUNTERS(X): what the metrics count per queue and time
 * bucket, as X(name), in the order of the counters bigint[] of the metrics
 * tables and of jobq_metrics().  enqueued: jobs committed into the queue;
 * claimed: attempts started; completed, dead, cancelled: jobs that ended
 * so; retried: failed attempts put back for another; lease_expired:
 * attempts whose lease a sweep ended; stale_acks: completes or fails
 * refused for a wrong or old token.  0.2.0, groups and limits (issue 19):
 * limit_held and rate_held, claim attempts that the queue's max_running,
 * or its rate or its groups' rate, held back while due jobs waited (rows
 * stored before have no such elements: they read as 0).
 */
#define JOBQ_METRIC_COUNTERS(X) \
	X(enqueued) \
	X(claimed) \
	X(completed) \
	X(retried) \
	X(dead) \
	X(cancelled) \
	X(lease_expired) \
	X(stale_acks) \
	X(limit_held) \
	X(rate_held)

/*
 * The latency histograms of the metrics (wait: ready to first claim; run:
 * claim to finish), one fixed log-scale layout so that any two can be
 * added.  JOBQ_HIST_EDGES_MS(X) gives the upper edges, in milliseconds and
 * exclusive, of every bucket but the last: bucket 0 holds [0, 1 ms),
 * bucket i holds [edge(i-1), edge(i)), and bucket JOBQ_HIST_BUCKETS - 1
 * holds 1 hour and more.
 */
#define JOBQ_HIST_EDGES_MS(X) \
	X(1) X(3) X(10) X(30) X(100) X(300) X(1000) X(3000) X(10000) \
	X(30000) X(60000) X(300000) X(600000) X(1800000) X(3600000)
#define JOBQ_HIST_BUCKETS 16

#endif							/* JOBQ_CONTRACT_H */
