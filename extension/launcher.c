/*-------------------------------------------------------------------------
 *
 * launcher.c
 *	  The sweeper launcher: with shared_preload_libraries = 'jobq', one
 *	  background worker, connected to no database, starts the sweeper of
 *	  each database named in jobq.sweeper_databases (sweeper.c) once that
 *	  database exists, and starts it again after it stopped.
 *
 * A sweeper started for a database that does not exist yet would fail to
 * connect with a FATAL, and the postmaster would retry it only every
 * JOBQ_SWEEPER_RESTART_SECS: a database created after the server started
 * got its sweeper 5 to 20 seconds late, after FATALs in the log.  The
 * launcher instead reads pg_database (a shared catalog) every
 * JOBQ_LAUNCHER_CHECK_MS while a listed database has no sweeper, and
 * starts the sweeper as a dynamic background worker when the database
 * is there and accepts connections.  A sweeper that stops (an error, a
 * pg_terminate_backend, DROP DATABASE ... WITH (FORCE)) is started again
 * JOBQ_SWEEPER_RESTART_SECS later if its database still exists; the
 * launcher learns of it at once (bgw_notify_pid sets its latch).
 *
 * The sweepers are the launcher's: when it exits it stops them, and they
 * come back with it (the postmaster restarts the launcher after
 * JOBQ_SWEEPER_RESTART_SECS), so there is never more than one sweeper per
 * database.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/launcher.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_database.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/varlena.h"
#include "utils/wait_event.h"

/* How often a listed database without a sweeper is looked for */
#define JOBQ_LAUNCHER_CHECK_MS		1000

PGDLLEXPORT void jobq_sweeper_launcher_main(Datum main_arg);

/* What the launcher knows of one listed database's sweeper */
typedef struct SweeperState
{
	char	   *dbname;
	BackgroundWorkerHandle *handle; /* NULL: not running */
	TimestampTz stopped_at;		/* when it was last seen stopped; 0: never
								 * started */
	bool		exists;			/* the database is there and allows
								 * connections (last look) */
	bool		said_missing;	/* "waiting for the database" logged */
	bool		said_no_slot;	/* "no background worker slot" logged */
} SweeperState;

static SweeperState sweepers[JOBQ_SWEEPER_DATABASES_MAX];
static int	nsweepers = 0;

/*
 * jobq_sweeper_database_list
 *	  The database names of jobq.sweeper_databases (a comma-separated list
 *	  of identifiers), in a list allocated in the current context.  A
 *	  malformed value gives an error.
 */
List *
jobq_sweeper_database_list(void)
{
	char	   *raw = pstrdup(jobq_sweeper_databases ? jobq_sweeper_databases : "");
	List	   *names = NIL;

	if (!SplitIdentifierString(raw, ',', &names))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid list syntax in jobq.sweeper_databases")));
	return names;
}

/*
 * jobq_register_sweepers
 *	  Called from _PG_init while preloading: register the launcher when
 *	  jobq.sweeper_databases names any database.
 */
void
jobq_register_sweepers(void)
{
	List	   *names = jobq_sweeper_database_list();
	BackgroundWorker worker;

	if (list_length(names) > JOBQ_SWEEPER_DATABASES_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("jobq.sweeper_databases names %d databases, at most %d are allowed",
						list_length(names), JOBQ_SWEEPER_DATABASES_MAX)));
	if (names == NIL)
		return;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = JOBQ_SWEEPER_RESTART_SECS;
	strlcpy(worker.bgw_library_name, "jobq", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, "jobq_sweeper_launcher_main", BGW_MAXLEN);
	strlcpy(worker.bgw_name, "jobq sweeper launcher", BGW_MAXLEN);
	strlcpy(worker.bgw_type, "jobq sweeper launcher", BGW_MAXLEN);
	RegisterBackgroundWorker(&worker);
}

/*
 * look_for_databases
 *	  Set each sweeper's exists from pg_database, in a transaction of its
 *	  own.  A database that does not allow connections (template0, one
 *	  left invalid by an interrupted DROP DATABASE) does not count.
 */
static void
look_for_databases(void)
{
	Relation	rel;
	TableScanDesc scan;
	HeapTuple	tup;

	for (int i = 0; i < nsweepers; i++)
		sweepers[i].exists = false;

	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, "jobq sweeper launcher: looking for databases");
	rel = table_open(DatabaseRelationId, AccessShareLock);
	scan = table_beginscan_catalog(rel, 0, NULL);
	while (HeapTupleIsValid(tup = heap_getnext(scan, ForwardScanDirection)))
	{
		Form_pg_database db = (Form_pg_database) GETSTRUCT(tup);

		if (!db->datallowconn)
			continue;
#ifdef DATCONNLIMIT_INVALID_DB
		if (db->datconnlimit == DATCONNLIMIT_INVALID_DB)
			continue;
#endif
		for (int i = 0; i < nsweepers; i++)
			if (strcmp(NameStr(db->datname), sweepers[i].dbname) == 0)
				sweepers[i].exists = true;
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	PopActiveSnapshot();
	CommitTransactionCommand();
	pgstat_report_activity(STATE_IDLE, NULL);
	MemoryContextSwitchTo(TopMemoryContext);
}

/*
 * start_sweeper
 *	  Start the sweeper of sweepers[i] as a dynamic background worker
 *	  that reports to us.  When every background worker slot is taken,
 *	  says so once and leaves it for the next look.
 */
static void
start_sweeper(int i)
{
	SweeperState *s = &sweepers[i];
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = BGW_NEVER_RESTART;	/* we restart it */
	strlcpy(worker.bgw_library_name, "jobq", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, "jobq_sweeper_main", BGW_MAXLEN);
	snprintf(worker.bgw_name, BGW_MAXLEN, "jobq sweeper for database %s", s->dbname);
	strlcpy(worker.bgw_type, "jobq sweeper", BGW_MAXLEN);
	worker.bgw_main_arg = Int32GetDatum(i);
	worker.bgw_notify_pid = MyProcPid;

	if (RegisterDynamicBackgroundWorker(&worker, &s->handle))
	{
		s->said_no_slot = false;
		return;
	}
	s->handle = NULL;
	if (!s->said_no_slot)
		ereport(WARNING,
				(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
				 errmsg("could not start the jobq sweeper for database \"%s\": no free background worker slot",
						s->dbname),
				 errhint("Raise max_worker_processes.  The launcher tries again every %d ms.",
						 JOBQ_LAUNCHER_CHECK_MS)));
	s->said_no_slot = true;
}

/*
 * stop_sweepers
 *	  At the launcher's exit: stop the sweepers it started, so that the
 *	  next launcher does not start a second one per database.
 */
static void
stop_sweepers(int code, Datum arg)
{
	for (int i = 0; i < nsweepers; i++)
		if (sweepers[i].handle != NULL)
			TerminateBackgroundWorker(sweepers[i].handle);
}

/*
 * jobq_sweeper_launcher_main
 *	  Entry point of the launcher.
 */
void
jobq_sweeper_launcher_main(Datum main_arg)
{
	List	   *names;
	ListCell   *lc;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	BackgroundWorkerUnblockSignals();

	/* no database: pg_database is a shared catalog */
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	pgstat_report_appname("jobq sweeper launcher");

	MemoryContextSwitchTo(TopMemoryContext);
	names = jobq_sweeper_database_list();
	foreach(lc, names)
	{
		SweeperState *s = &sweepers[nsweepers++];

		memset(s, 0, sizeof(*s));
		s->dbname = pstrdup(lfirst(lc));
	}
	before_shmem_exit(stop_sweepers, (Datum) 0);

	while (!ShutdownRequestPending)
	{
		TimestampTz now = GetCurrentTimestamp();
		bool		looked = false;
		long		sleep_ms = -1;	/* all running: until one stops */

		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}

		for (int i = 0; i < nsweepers; i++)
		{
			SweeperState *s = &sweepers[i];
			pid_t		pid;

			if (s->handle != NULL)
			{
				if (GetBackgroundWorkerPid(s->handle, &pid) != BGWH_STOPPED)
					continue;	/* running, or about to */
				pfree(s->handle);
				s->handle = NULL;
				s->stopped_at = now;
			}
			if (s->stopped_at != 0 &&
				!TimestampDifferenceExceeds(s->stopped_at, now,
											JOBQ_SWEEPER_RESTART_SECS * 1000))
			{
				/* stopped a moment ago: wait out the restart delay */
				long		left = JOBQ_SWEEPER_RESTART_SECS * 1000 -
					TimestampDifferenceMilliseconds(s->stopped_at, now);

				sleep_ms = sleep_ms < 0 ? left : Min(sleep_ms, left);
				continue;
			}
			if (!looked)
			{
				look_for_databases();
				looked = true;
			}
			if (!s->exists)
			{
				if (!s->said_missing)
					ereport(LOG,
							(errmsg("jobq sweeper for database \"%s\" waits for the database to be created",
									s->dbname),
							 errdetail("The launcher looks for it every %d ms.",
									   JOBQ_LAUNCHER_CHECK_MS)));
				s->said_missing = true;
			}
			else
			{
				s->said_missing = false;
				start_sweeper(i);
			}
			if (s->handle == NULL)	/* look again soon */
				sleep_ms = sleep_ms < 0 ? JOBQ_LAUNCHER_CHECK_MS : Min(sleep_ms, JOBQ_LAUNCHER_CHECK_MS);
		}

		/* NB: a sweeper that starts or stops sets our latch (bgw_notify_pid) */
		if (sleep_ms < 0)
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_EXIT_ON_PM_DEATH, -1, PG_WAIT_EXTENSION);
		else
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 Max(1, sleep_ms), PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
	proc_exit(1);
}
