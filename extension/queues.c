/*-------------------------------------------------------------------------
 *
 * queues.c
 *	  Queue management: jobq_create_queue, jobq_alter_queue, jobq_drop_queue,
 *	  jobq_pause, jobq_resume, jobq_queues.
 *
 * A queue is a row of jobq.queues holding the settings its jobs follow:
 * lease (how long a claim holds a job), max_attempts, exponential backoff
 * base and cap, retention of completed and of dead jobs, paused, and
 * whether enqueue sends a NOTIFY.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/queues.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"

#include "catalog/pg_type.h"
#include "storage/lockdefs.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(jobq_create_queue);
PG_FUNCTION_INFO_V1(jobq_alter_queue);
PG_FUNCTION_INFO_V1(jobq_drop_queue);
PG_FUNCTION_INFO_V1(jobq_pause);
PG_FUNCTION_INFO_V1(jobq_resume);
PG_FUNCTION_INFO_V1(jobq_queues);

/* Argument positions shared by create and alter */
#define ARG_QUEUE			0
#define ARG_LEASE			1
#define ARG_MAX_ATTEMPTS	2
#define ARG_BACKOFF_BASE	3
#define ARG_BACKOFF_CAP		4
#define ARG_COMPLETED_RET	5
#define ARG_DEAD_RET		6
#define ARG_NOTIFY			7
#define NUM_SETTINGS		8

/*
 * Plans, prepared on first use and kept for the backend's life (plans.c
 * explains why).
 */
static SPIPlanPtr insert_plan = NULL;
static SPIPlanPtr lock_plan = NULL;
static SPIPlanPtr update_plan = NULL;
static SPIPlanPtr live_jobs_plan = NULL;
static SPIPlanPtr drop_plan = NULL;
static SPIPlanPtr pause_plan = NULL;
static SPIPlanPtr list_plan = NULL;

static const char *const settings_sql_columns =
	"lease, max_attempts, backoff_base, backoff_cap,"
	" completed_retention, dead_retention, notify";

/*
 * queue_not_found
 *	  The error every management call raises for an unknown queue.
 */
static void
queue_not_found(text *queue)
{
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("queue \"%s\" does not exist", text_to_cstring(queue)),
			 errhint("Create it with jobq_create_queue('%s').", text_to_cstring(queue))));
}

/*
 * check_settings
 *	  Validate queue settings given as datums; isnull[i] marks "not given"
 *	  (alter) and is an error when all_required.  Interval settings are
 *	  replaced by their normalized form (jobq_check_interval), which is what
 *	  gets stored.
 */
static void
check_settings(Datum *values, bool *isnull, bool all_required)
{
	static const char *const names[NUM_SETTINGS] = {
		"queue", "lease", "max_attempts", "backoff_base", "backoff_cap",
		"completed_retention", "dead_retention", "notify"
	};

	for (int i = 1; i < NUM_SETTINGS; i++)
		if (all_required && isnull[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s must not be null", names[i])));

	if (!isnull[ARG_LEASE])
		values[ARG_LEASE] = IntervalPGetDatum(jobq_check_interval(DatumGetIntervalP(values[ARG_LEASE]),
																	   "lease", JOBQ_LEASE_MIN_USECS, JOBQ_LEASE_MAX_USECS));
	if (!isnull[ARG_MAX_ATTEMPTS])
		jobq_check_int_range(DatumGetInt32(values[ARG_MAX_ATTEMPTS]), "max_attempts",
							 1, JOBQ_MAX_ATTEMPTS_MAX);
	if (!isnull[ARG_BACKOFF_BASE])
		values[ARG_BACKOFF_BASE] = IntervalPGetDatum(jobq_check_interval(DatumGetIntervalP(values[ARG_BACKOFF_BASE]),
																	   "backoff_base", 0, JOBQ_BACKOFF_BASE_MAX_USECS));
	if (!isnull[ARG_BACKOFF_CAP])
		values[ARG_BACKOFF_CAP] = IntervalPGetDatum(jobq_check_interval(DatumGetIntervalP(values[ARG_BACKOFF_CAP]),
																	   "backoff_cap", 0, JOBQ_BACKOFF_CAP_MAX_USECS));
	if (!isnull[ARG_COMPLETED_RET])
		values[ARG_COMPLETED_RET] = IntervalPGetDatum(jobq_check_interval(DatumGetIntervalP(values[ARG_COMPLETED_RET]),
																	   "completed_retention", 0, JOBQ_RETENTION_MAX_USECS));
	if (!isnull[ARG_DEAD_RET])
		values[ARG_DEAD_RET] = IntervalPGetDatum(jobq_check_interval(DatumGetIntervalP(values[ARG_DEAD_RET]),
																	   "dead_retention", 0, JOBQ_RETENTION_MAX_USECS));
	if (!isnull[ARG_BACKOFF_BASE] && !isnull[ARG_BACKOFF_CAP] &&
		jobq_interval_usecs(DatumGetIntervalP(values[ARG_BACKOFF_CAP])) <
		jobq_interval_usecs(DatumGetIntervalP(values[ARG_BACKOFF_BASE])))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("backoff_cap must not be less than backoff_base")));
}

/*
 * default_settings
 *	  The settings of a queue created without them, as datums at the
 *	  positions of the create arguments.  Defined here, not as SQL
 *	  DEFAULTs, so that NULL means "default" for positional callers too.
 */
static void
default_settings(Datum *values)
{
	static Interval lease = {.time = INT64CONST(300) * USECS_PER_SEC};
	static Interval backoff_base = {.time = USECS_PER_SEC};
	static Interval backoff_cap = {.time = INT64CONST(3600) * USECS_PER_SEC};
	static Interval completed_retention = {.day = 1};
	static Interval dead_retention = {.day = 14};

	values[ARG_LEASE] = IntervalPGetDatum(&lease);
	values[ARG_MAX_ATTEMPTS] = Int32GetDatum(25);
	values[ARG_BACKOFF_BASE] = IntervalPGetDatum(&backoff_base);
	values[ARG_BACKOFF_CAP] = IntervalPGetDatum(&backoff_cap);
	values[ARG_COMPLETED_RET] = IntervalPGetDatum(&completed_retention);
	values[ARG_DEAD_RET] = IntervalPGetDatum(&dead_retention);
	values[ARG_NOTIFY] = BoolGetDatum(true);
}

/*
 * jobq_create_queue(queue, lease, max_attempts, backoff_base, backoff_cap,
 *					 completed_retention, dead_retention, notify) -> void
 *	  Create a queue; a NULL setting takes its default (lease 5 min,
 *	  max_attempts 25, backoff 1 s .. 1 h, completed kept 1 day, dead kept
 *	  14 days, notify on).  42710 if the queue exists already.
 */
Datum
jobq_create_queue(PG_FUNCTION_ARGS)
{
	Datum		values[NUM_SETTINGS + 1];
	bool		isnull[NUM_SETTINGS] = {false};
	char		nulls[NUM_SETTINGS + 1];
	text	   *queue = jobq_queue_arg(fcinfo, ARG_QUEUE);
	int			rc;

	default_settings(values);
	for (int i = 0; i < NUM_SETTINGS; i++)
	{
		if (i > 0 && !PG_ARGISNULL(i))
			values[i] = PG_GETARG_DATUM(i);
		nulls[i] = ' ';
	}
	values[ARG_QUEUE] = PointerGetDatum(queue);
	check_settings(values, isnull, true);
	values[NUM_SETTINGS] = TimestampTzGetDatum(jobq_now());
	nulls[NUM_SETTINGS] = ' ';

	jobq_spi_connect();
	if (insert_plan == NULL)
	{
		Oid			types[] = {TEXTOID, INTERVALOID, INT4OID, INTERVALOID, INTERVALOID,
		INTERVALOID, INTERVALOID, BOOLOID, TIMESTAMPTZOID};

		insert_plan = jobq_prepare(
								   "INSERT INTO jobq.queues (name, lease, max_attempts, backoff_base, backoff_cap,"
								   " completed_retention, dead_retention, notify, created_at)"
								   " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
								   " ON CONFLICT (name) DO NOTHING",
								   9, types);
	}
	rc = SPI_execute_plan(insert_plan, values, nulls, false, 0);
	jobq_spi_check(rc, SPI_OK_INSERT, "create queue");
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("queue \"%s\" already exists", text_to_cstring(queue))));
	jobq_spi_finish();
	PG_RETURN_VOID();
}

/*
 * lock_queue
 *	  Lock the queue row FOR UPDATE and return its settings as datums in
 *	  values[1..7] (the positions of the create/alter arguments), copied
 *	  out of SPI memory.  Raises 42704 for an unknown queue.
 */
static void
lock_queue(text *queue, Datum *values)
{
	Datum		arg = PointerGetDatum(queue);
	int			rc;

	if (lock_plan == NULL)
	{
		Oid			types[] = {TEXTOID};
		char	   *sql = psprintf("SELECT %s FROM jobq.queues WHERE name = $1 FOR UPDATE",
								   settings_sql_columns);

		lock_plan = jobq_prepare(sql, 1, types);
		pfree(sql);
	}
	rc = SPI_execute_plan(lock_plan, &arg, NULL, false, 1);
	jobq_spi_check(rc, SPI_OK_SELECT, "lock queue");
	if (SPI_processed == 0)
		queue_not_found(queue);
	for (int i = 1; i < NUM_SETTINGS; i++)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, i, &isnull);
		Form_pg_attribute att = TupleDescAttr(SPI_tuptable->tupdesc, i - 1);

		values[i] = SPI_datumTransfer(d, att->attbyval, att->attlen);
	}
}

/*
 * jobq_alter_queue(queue, lease, max_attempts, backoff_base, backoff_cap,
 *					completed_retention, dead_retention, notify) -> void
 *	  Change the given settings; a NULL argument keeps the current value.
 *	  The merged settings are validated together (cap >= base).
 */
Datum
jobq_alter_queue(PG_FUNCTION_ARGS)
{
	Datum		values[NUM_SETTINGS];
	Datum		current[NUM_SETTINGS];
	bool		isnull[NUM_SETTINGS];
	bool		none[NUM_SETTINGS] = {false};
	text	   *queue = jobq_queue_arg(fcinfo, ARG_QUEUE);
	int			rc;

	for (int i = 1; i < NUM_SETTINGS; i++)
	{
		isnull[i] = PG_ARGISNULL(i);
		values[i] = isnull[i] ? (Datum) 0 : PG_GETARG_DATUM(i);
	}
	isnull[ARG_QUEUE] = false;
	check_settings(values, isnull, false);

	jobq_spi_connect();
	lock_queue(queue, current);
	for (int i = 1; i < NUM_SETTINGS; i++)
		if (isnull[i])
			values[i] = current[i];
	values[ARG_QUEUE] = PointerGetDatum(queue);
	check_settings(values, none, true);

	if (update_plan == NULL)
	{
		Oid			types[] = {TEXTOID, INTERVALOID, INT4OID, INTERVALOID, INTERVALOID,
		INTERVALOID, INTERVALOID, BOOLOID};

		update_plan = jobq_prepare(
								   "UPDATE jobq.queues SET lease = $2, max_attempts = $3, backoff_base = $4,"
								   " backoff_cap = $5, completed_retention = $6, dead_retention = $7,"
								   " notify = $8 WHERE name = $1",
								   8, types);
	}
	rc = SPI_execute_plan(update_plan, values, NULL, false, 0);
	jobq_spi_check(rc, SPI_OK_UPDATE, "alter queue");
	jobq_spi_finish();
	PG_RETURN_VOID();
}

/*
 * jobq_drop_queue(queue, force) -> void
 *	  Drop a queue.  Refuses (55006) while live jobs exist unless force, in
 *	  which case its live jobs and history go too; workers holding its jobs
 *	  then find their tokens stale.  The queue's name is locked first
 *	  (jobq_lock_queue_name), so an enqueue either committed before and is
 *	  counted, or waits and then finds no queue.
 */
Datum
jobq_drop_queue(PG_FUNCTION_ARGS)
{
	text	   *queue = jobq_queue_arg(fcinfo, 0);
	bool		force;
	Datum		arg = PointerGetDatum(queue);
	Datum		current[NUM_SETTINGS];
	int			rc;

	jobq_require(fcinfo, 1, "force");
	force = PG_GETARG_BOOL(1);

	jobq_lock_queue_name(queue, ExclusiveLock);
	jobq_spi_connect();
	lock_queue(queue, current);

	if (!force)
	{
		bool		isnull;

		if (live_jobs_plan == NULL)
		{
			Oid			types[] = {TEXTOID};

			live_jobs_plan = jobq_prepare("SELECT count(*) FROM jobq.jobs WHERE queue = $1",
										  1, types);
		}
		rc = SPI_execute_plan(live_jobs_plan, &arg, NULL, true, 1);
		jobq_spi_check(rc, SPI_OK_SELECT, "count live jobs");
		if (jobq_spi_getint64(0, 1, &isnull) > 0)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_IN_USE),
					 errmsg("queue \"%s\" has " INT64_FORMAT " live jobs",
							text_to_cstring(queue), jobq_spi_getint64(0, 1, &isnull)),
					 errhint("Wait for them to finish, cancel them, or pass force => true.")));
	}

	if (drop_plan == NULL)
	{
		Oid			types[] = {TEXTOID};

		drop_plan = jobq_prepare(
								 "WITH j AS (DELETE FROM jobq.jobs WHERE queue = $1),"
								 " h AS (DELETE FROM jobq.history WHERE queue = $1),"
								 " s AS (DELETE FROM jobq.stale_acks WHERE queue = $1)"
								 " DELETE FROM jobq.queues WHERE name = $1",
								 1, types);
	}
	rc = SPI_execute_plan(drop_plan, &arg, NULL, false, 0);
	jobq_spi_check(rc, SPI_OK_DELETE, "drop queue");
	jobq_spi_finish();
	PG_RETURN_VOID();
}

/*
 * set_paused
 *	  Shared body of jobq_pause and jobq_resume.
 */
static void
set_paused(text *queue, bool paused)
{
	Datum		args[2] = {PointerGetDatum(queue), BoolGetDatum(paused)};
	int			rc;
	bool		isnull;

	jobq_spi_connect();
	if (pause_plan == NULL)
	{
		Oid			types[] = {TEXTOID, BOOLOID};

		/* o: the row before the update, to tell a real resume */
		pause_plan = jobq_prepare("WITH o AS (SELECT name, paused FROM jobq.queues"
								  "  WHERE name = $1 FOR NO KEY UPDATE)"
								  " UPDATE jobq.queues q SET paused = $2 FROM o"
								  " WHERE q.name = o.name"
								  " RETURNING q.notify, o.paused AND NOT $2",
								  2, types);
	}
	rc = SPI_execute_plan(pause_plan, args, NULL, false, 0);
	jobq_spi_check(rc, SPI_OK_UPDATE_RETURNING, "pause queue");
	if (SPI_processed == 0)
		queue_not_found(queue);

	/*
	 * A resumed queue may hold ready jobs that nobody was told about: wake
	 * its idle workers, all of them (they find out how many jobs there are).
	 */
	if (jobq_spi_getbool(0, 2, &isnull))
	{
		if (jobq_spi_getbool(0, 1, &isnull))
			jobq_notify_queue(queue);
		jobq_note_ready(queue, PG_INT64_MAX, jobq_now());
	}
	jobq_spi_finish();
}

/*
 * jobq_pause(queue) -> void
 *	  Claims skip a paused queue; enqueue still accepts jobs (without
 *	  NOTIFY, since nobody could claim them).
 */
Datum
jobq_pause(PG_FUNCTION_ARGS)
{
	set_paused(jobq_queue_arg(fcinfo, 0), true);
	PG_RETURN_VOID();
}

/*
 * jobq_resume(queue) -> void
 */
Datum
jobq_resume(PG_FUNCTION_ARGS)
{
	set_paused(jobq_queue_arg(fcinfo, 0), false);
	PG_RETURN_VOID();
}

/*
 * jobq_queues() -> setof (queue, settings..., paused, notify, created_at)
 */
Datum
jobq_queues(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	Tuplestorestate *store = jobq_srf_begin(fcinfo, &desc);
	int			rc;

	jobq_spi_connect();
	if (list_plan == NULL)
		list_plan = jobq_prepare(
								 "SELECT name, lease, max_attempts, backoff_base, backoff_cap,"
								 " completed_retention, dead_retention, paused, notify, created_at"
								 " FROM jobq.queues ORDER BY name",
								 0, NULL);
	rc = SPI_execute_plan(list_plan, NULL, NULL, true, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "list queues");
	jobq_srf_put_spi(store, desc);
	jobq_spi_finish();
	return (Datum) 0;
}
