/*-------------------------------------------------------------------------
 *
 * jobq.c
 *	  Module entry point of the jobq extension: PG_MODULE_MAGIC, GUCs, and
 *	  when preloaded, shared memory for waiting claims and the background
 *	  sweepers.
 *
 * jobq turns a PostgreSQL database into a job queue.  Producers enqueue
 * jobs (a jsonb payload) into named queues; workers claim ready jobs, each
 * claim giving a lease and a fresh token; the token fences every later
 * state change (complete, fail, extend, release), so a worker whose lease
 * ran out changes nothing.  jobq_sweep returns jobs whose lease expired.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/jobq.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"
#include "groups.h"
#include "direct.h"
#include "list_filter.h"
#include "counters.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/guc.h"

PG_MODULE_MAGIC;

/* GUC variables */
int			jobq_max_payload_kb = 1024;
int			jobq_claim_recheck_ms = 10000;
char	   *jobq_sweeper_databases = NULL;
int			jobq_sweep_interval_ms = 1000;
int			jobq_sweep_batch_size = 1000;
int			jobq_worker_timeout_s = JOBQ_WORKER_TIMEOUT_DEFAULT_S;

void		_PG_init(void);

static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;

/*
 * jobq_shmem_request
 *	  Reserve the waiter array and its lock (in shmem_request_hook).
 */
static void
jobq_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(jobq_wait_shmem_size());
	RequestAddinShmemSpace(jobq_relay_shmem_size());
	/* [0]: the waiter array (wait.c); [1 + i]: relay i (relay.c) */
	RequestNamedLWLockTranche("jobq", 1 + JOBQ_SWEEPER_DATABASES_MAX);
	/* the awaited ids (await_slots.c), and their handover area's tranche */
	RequestAddinShmemSpace(jobq_await_shmem_size());
	RequestNamedLWLockTranche("jobq await", 1);
	RequestAddinShmemSpace(jobq_counters_shmem_size());
	RequestNamedLWLockTranche(JOBQ_COUNTERS_TRANCHE, jobq_counters_lwlocks());
}

/*
 * jobq_shmem_startup
 */
static void
jobq_shmem_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	jobq_wait_shmem_init();
	jobq_relay_shmem_init();
	jobq_await_shmem_init();
	jobq_counters_shmem_init();
	LWLockRelease(AddinShmemInitLock);
}

/*
 * _PG_init
 *	  Define the GUCs, under the reserved "jobq." prefix.  Settings that
 *	  only make sense at server start exist only when preloaded.
 */
void
_PG_init(void)
{
	DefineCustomIntVariable("jobq.max_payload_size",
							"Largest payload or result a job may carry.",
							"Checked on enqueue and complete; the hard ceiling is 64MB.",
							&jobq_max_payload_kb,
							1024, 1, JOBQ_PAYLOAD_HARD_MAX_KB,
							PGC_SUSET, GUC_UNIT_KB,
							NULL, NULL, NULL);

	DefineCustomIntVariable("jobq.claim_recheck_interval",
							"How often a waiting claim looks for jobs without being woken.",
							"A safety net: commits wake waiting claims for every job they make ready, now or later.",
							&jobq_claim_recheck_ms,
							10000, 10, 60000,
							PGC_USERSET, GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("jobq.sweep_interval",
							"Time between passes of the background sweeper.",
							NULL,
							&jobq_sweep_interval_ms,
							1000, 10, 3600 * 1000,
							PGC_SIGHUP, GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("jobq.sweep_batch_size",
							"Rows the background sweeper handles per transaction.",
							NULL,
							&jobq_sweep_batch_size,
							1000, 1, JOBQ_SWEEP_MAX_ROWS,
							PGC_SIGHUP, 0,
							NULL, NULL, NULL);

	jobq_list_filter_init();
	jobq_audit_define_gucs();
	jobq_flow_repair_define_gucs();
	jobq_direct_define_gucs();
	jobq_health_define_gucs();

	DefineCustomIntVariable("jobq.worker_timeout",
							"How long after its last heartbeat a registered worker is pruned.",
							"The default of jobq_worker_register's timeout; the registry is advisory, jobs keep their leases.",
							&jobq_worker_timeout_s,
							JOBQ_WORKER_TIMEOUT_DEFAULT_S, JOBQ_WORKER_TIMEOUT_MIN_S,
							JOBQ_WORKER_TIMEOUT_MAX_S,
							PGC_SIGHUP, GUC_UNIT_S,
							NULL, NULL, NULL);

	jobq_metrics_define_gucs();
	jobq_schedules_define_gucs();
	jobq_groups_define_gucs();

	if (process_shared_preload_libraries_in_progress)
	{
		DefineCustomStringVariable("jobq.sweeper_databases",
								   "Databases in which the background sweeper runs.",
								   "A comma-separated list; empty turns the sweeper off.",
								   &jobq_sweeper_databases,
								   "postgres",
								   PGC_POSTMASTER, 0,
								   NULL, NULL, NULL);

		DefineCustomIntVariable("jobq.max_await_ids",
								"Job ids that may be awaited at once, server-wide.",
								"An await beyond it polls instead of being woken.",
								&jobq_max_await_ids,
								4096, 0, 1000000,
								PGC_POSTMASTER, 0,
								NULL, NULL, NULL);

		DefineCustomIntVariable("jobq.await_handover_memory",
								"Shared memory for results and errors handed over to awaiters at commit.",
								"A result that does not fit is read from history instead.",
								&jobq_await_handover_kb,
								4096, 1024, 1024 * 1024,
								PGC_POSTMASTER, GUC_UNIT_KB,
								NULL, NULL, NULL);

		DefineCustomIntVariable("jobq.max_tracked_queues",
								"Queues whose counts and live metrics shared memory keeps.",
								"Queues beyond it are counted from the tables (exact = false).",
								&jobq_max_tracked_queues,
								1024, 16, 1000000,
								PGC_POSTMASTER, 0,
								NULL, NULL, NULL);

		DefineCustomIntVariable("jobq.counts_reconcile_interval",
								"How often the sweeper rebuilds each queue's counts from the tables.",
								"0 rebuilds only counts that are not exact.",
								&jobq_counts_reconcile_interval_s,
								3600, 0, 7 * 86400,
								PGC_SIGHUP, GUC_UNIT_S,
								NULL, NULL, NULL);

		prev_shmem_request_hook = shmem_request_hook;
		shmem_request_hook = jobq_shmem_request;
		prev_shmem_startup_hook = shmem_startup_hook;
		shmem_startup_hook = jobq_shmem_startup;
		jobq_wake_register_callbacks();
		jobq_await_register_callbacks();
		jobq_counters_register_callbacks();
		jobq_register_sweepers();
	}

	MarkGUCPrefixReserved("jobq");
}
