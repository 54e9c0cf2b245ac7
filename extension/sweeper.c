/*-------------------------------------------------------------------------
 *
 * sweeper.c
 *	  The background sweeper: with shared_preload_libraries = 'jobq', one
 *	  background worker per database named in jobq.sweeper_databases runs
 *	  jobq_sweep every jobq.sweep_interval, so a crashed worker's job comes
 *	  back within its lease plus the interval although no client sweeps.
 *	  The launcher (launcher.c) starts each once its database exists.
 *
 * Each pass is a series of short transactions (one per batch of
 * jobq.sweep_batch_size rows), and the sweep itself takes rows with SKIP
 * LOCKED, so the sweeper never waits on workers.  An error is logged and
 * the next pass goes on; when the process ends, the launcher starts it
 * again after JOBQ_SWEEPER_RESTART_SECS.  A database without the extension is
 * skipped until it is created there.
 *
 * Each pass also prunes the worker registry (jobq_worker_prune_run) of
 * workers that stopped heartbeating.
 *
 * The sweeper also ticks its database's schedules (tick.c): it sleeps
 * until the earliest is due, or until its next sweep, after which it
 * reads them again; the commit of a schedule's change wakes it to read
 * them at once (relay.c).  Like the sweep, never during recovery.
 *
 * The sweeper is also its database's NOTIFY relay (relay.c): woken by a
 * producer's commit, it sends the pending notifications when the relay's
 * spacing says (jobq_relay_next_round: at once if its last round is old
 * enough, else a few milliseconds later, waiting on its latch meanwhile),
 * and between two sweep batches during a pass.
 *
 * Once a minute, just after the minute is over, it also writes the
 * metrics of that minute (jobq_metrics_flush, metrics.c).
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/sweeper.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"
#include "groups.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

PGDLLEXPORT void jobq_sweeper_main(Datum main_arg);

static SPIPlanPtr installed_plan = NULL;

/*
 * extension_installed
 *	  Whether CREATE EXTENSION jobq has run in this database.  Inside SPI.
 */
static bool
extension_installed(void)
{
	int			rc;

	if (installed_plan == NULL)
		installed_plan = jobq_prepare("SELECT 1 FROM pg_catalog.pg_extension"
									  " WHERE extname OPERATOR(pg_catalog.=) 'jobq'",
									  0, NULL);
	rc = SPI_execute_plan(installed_plan, NULL, NULL, true, 1);
	jobq_spi_check(rc, SPI_OK_SELECT, "find extension");
	return SPI_processed > 0;
}

/*
 * sweep_batch
 *	  One transaction, one bounded sweep.  Returns true when it hit the
 *	  batch size, i.e. there may be more to do right away.
 */
static bool
sweep_batch(void)
{
	int64		counts[3] = {0, 0, 0};
	int64		reclaimed;
	bool		more = false;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	jobq_spi_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, "jobq sweep");

	if (extension_installed())
	{
		/*
		 * The worker registry first (workers.c): advisory, jobs untouched
		 * but in queues with reclaim_on_worker_death, whose expired leases
		 * the sweep below requeues.
		 */
		if (jobq_worker_prune_run(jobq_sweep_batch_size, &reclaimed) > 0)
			elog(DEBUG1, "jobq sweeper: pruned workers that stopped heartbeating, "
				 INT64_FORMAT " of their jobs reclaimed", reclaimed);
		jobq_sweep_run(NULL, jobq_sweep_batch_size, counts);
		more = counts[0] + counts[1] >= jobq_sweep_batch_size ||
			counts[2] >= jobq_sweep_batch_size;
		/* the audit trail's retention (audit.c) */
		more |= jobq_audit_purge_run(jobq_sweep_batch_size) >= jobq_sweep_batch_size;
		/* flows: what finished without resolving its dependents (flow_repair.c) */
		(void) jobq_flow_repair_due(jobq_sweep_batch_size);
		if (counts[0] + counts[1] + counts[2] > 0)
			elog(DEBUG1, "jobq sweeper: " INT64_FORMAT " requeued, " INT64_FORMAT
				 " dead, " INT64_FORMAT " purged", counts[0], counts[1], counts[2]);
	}

	jobq_spi_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	pgstat_report_stat(false);
	pgstat_report_activity(STATE_IDLE, NULL);
	return more;
}

/*
 * When the schedules are next due (tick.c), as read at the end of the
 * last tick; 0: tick at once
 */
static TimestampTz next_tick = 0;

/*
 * Schedules one tick transaction handles: each is a subtransaction, and a
 * transaction with more than PGPROC_MAX_CACHED_SUBXIDS (64) of them makes
 * every other backend's snapshot look them up in pg_subtrans
 */
#define TICK_BATCH		32

/*
 * tick_batch
 *	  One transaction, the due ticks of at most TICK_BATCH schedules, and
 *	  when the next is due.  Returns true when it hit the batch size.
 */
static bool
tick_batch(void)
{
	int			n = 0;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	jobq_spi_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, "jobq cron tick");

	next_tick = DT_NOEND;
	if (extension_installed())
	{
		n = jobq_cron_tick_run(TICK_BATCH, NULL, NULL);
		next_tick = jobq_cron_next_due();
	}

	jobq_spi_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	pgstat_report_stat(false);
	pgstat_report_activity(STATE_IDLE, NULL);
	return n >= TICK_BATCH;
}

/*
 * run_guarded
 *	  Run step, catching errors so that one failure does not stop the
 *	  sweeper: the error is logged, the transaction rolled back, and the
 *	  next pass or round tries again.
 */
static void
run_guarded(void (*step) (MemoryContext), MemoryContext context)
{
	PG_TRY();
	{
		step(context);
	}
	PG_CATCH();
	{
		HOLD_INTERRUPTS();
		MemoryContextSwitchTo(context);
		EmitErrorReport();
		AbortOutOfAnyTransaction();
		FlushErrorState();
		pgstat_report_activity(STATE_IDLE, NULL);
		RESUME_INTERRUPTS();
	}
	PG_END_TRY();
	MemoryContextSwitchTo(TopMemoryContext);
}

/*
 * relay_step
 *	  Send the notifications producers handed over since the last round.
 */
static void
relay_step(MemoryContext context)
{
	MemoryContextReset(context);
	MemoryContextSwitchTo(context);
	jobq_relay_round();
}

/*
 * run_batches
 *	  Run batch (a transaction each) until it says it is caught up, at
 *	  most 100 times, relaying notifications between batches so that a
 *	  long pass does not delay them.
 */
static void
run_batches(bool (*batch) (void), MemoryContext context)
{
	for (int i = 0; i < 100 && !ShutdownRequestPending; i++)
	{
		bool		more;

		MemoryContextReset(context);
		MemoryContextSwitchTo(context);
		more = batch();
		if (jobq_relay_pending())
			run_guarded(relay_step, context);	/* its error ends no pass */
		if (!more)
			break;
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * metrics_step
 *	  Write the minutes the metrics ring finished (metrics.c).
 */
static void
metrics_step(MemoryContext context)
{
	MemoryContextReset(context);
	MemoryContextSwitchTo(context);
	jobq_metrics_sweeper_flush();
}

/*
 * sweep_step
 *	  Sweep until caught up (bounded).
 */
static void
sweep_step(MemoryContext context)
{
	run_batches(sweep_batch, context);
}

/*
 * tick_step
 *	  Fire what the schedules have due, in batches.  After an error the
 *	  next try is a second later.
 */
static void
tick_step(MemoryContext context)
{
	next_tick = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), 1000);
	run_batches(tick_batch, context);
}

/*
 * counts_step
 *	  Rebuild the counts that are due (counts.c), and reconcile the groups
 *	  when that is due, in a transaction of their own.
 */
static void
counts_step(MemoryContext context)
{
	MemoryContextReset(context);
	MemoryContextSwitchTo(context);
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	jobq_spi_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, "jobq counts reconcile");
	if (extension_installed())
	{
		(void) jobq_counts_reconcile_due();
		jobq_groups_reconcile_due();	/* groups_reconcile.c */
	}
	jobq_spi_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	pgstat_report_activity(STATE_IDLE, NULL);
}

/*
 * jobq_sweeper_main
 *	  Entry point of the background worker; main_arg is the index of its
 *	  database in jobq.sweeper_databases.
 */
void
jobq_sweeper_main(Datum main_arg)
{
	List	   *names;
	char	   *dbname;
	MemoryContext pass_context;
	TimestampTz next_sweep = 0;
	TimestampTz next_metrics = 0;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	BackgroundWorkerUnblockSignals();

	names = jobq_sweeper_database_list();
	if (DatumGetInt32(main_arg) >= list_length(names))
		proc_exit(0);			/* the list changed under us: nothing to do */
	dbname = pstrdup(list_nth(names, DatumGetInt32(main_arg)));

	BackgroundWorkerInitializeConnection(dbname, NULL, 0);
	pgstat_report_appname("jobq sweeper");

	/*
	 * The sweep's statements are schema-qualified; pinning the path anyway
	 * keeps any object a user creates in public out of our way.
	 */
	SetConfigOption("search_path", "pg_catalog, pg_temp", PGC_SUSET, PGC_S_OVERRIDE);

	pass_context = AllocSetContextCreate(TopMemoryContext, "jobq sweeper pass",
										 ALLOCSET_DEFAULT_SIZES);
	jobq_relay_attach(DatumGetInt32(main_arg));
	ereport(LOG, (errmsg("jobq sweeper started for database \"%s\"", dbname)));

	while (!ShutdownRequestPending)
	{
		TimestampTz now;
		long		timeout;
		long		relay_ms;

		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		if (jobq_relay_next_round() == 0)
			run_guarded(relay_step, pass_context);
		now = GetCurrentTimestamp();
		/* a shorter interval after a reload, or a clock set back */
		next_sweep = Min(next_sweep, TimestampTzPlusMilliseconds(now, jobq_sweep_interval_ms));
		if (now >= next_sweep)
		{
			if (!RecoveryInProgress())
				run_guarded(sweep_step, pass_context);
			if (!RecoveryInProgress())
				run_guarded(counts_step, pass_context);
			now = GetCurrentTimestamp();
			next_sweep = TimestampTzPlusMilliseconds(now, jobq_sweep_interval_ms);
			/* schedules made or changed meanwhile: read them after every pass */
			next_tick = Min(next_tick, now);
		}
		/* a schedule written since: read when the next tick is due */
		if (jobq_relay_take_schedules_changed())
			next_tick = Min(next_tick, now);
		/* schedules: never on a standby, from its promotion on */
		if (!RecoveryInProgress() && now >= next_tick)
		{
			run_guarded(tick_step, pass_context);
			now = GetCurrentTimestamp();
		}
		if (now >= next_metrics)
		{
			if (!RecoveryInProgress())
				run_guarded(metrics_step, pass_context);
			now = GetCurrentTimestamp();
			next_metrics = jobq_metrics_next_flush(now);
		}

		/*
		 * Sleep until the next sweep, tick or relay round.  NB: a producer's
		 * commit sets the latch (relay.c), and so do SIGTERM and SIGHUP.
		 */
		timeout = Max(1, (Min(next_sweep, next_metrics) - now + 999) / 1000);
		if (!RecoveryInProgress() && next_tick - now < (int64) timeout * 1000)
			timeout = Max(1, (next_tick - now + 999) / 1000);
		relay_ms = jobq_relay_next_round();
		if (relay_ms >= 0)
			timeout = Min(timeout, relay_ms);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 timeout, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}

	/* the launcher starts it again after JOBQ_SWEEPER_RESTART_SECS */
	proc_exit(1);
}
