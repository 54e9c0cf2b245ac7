/*-------------------------------------------------------------------------
 *
 * await.c
 *	  Waiting for a job's outcome: the procedure jobq_await and the
 *	  function jobq_await_many.
 *
 * The outcome is a value, never an exception: completed with its result,
 * dead with its last error, cancelled, or still ready or running with
 * timed_out; purged_or_never for an id that was issued but is in neither
 * jobq.jobs nor jobq.history (purged by retention, or its enqueue rolled
 * back or not committed yet), told apart from an id never issued (22023).
 * By default the wait goes through retries (mode 'finished'); mode
 * 'attempt' returns when the next attempt ends.
 *
 * The wait registers its job ids first (await_slots.c), then reads the
 * jobs; a commit that finishes one of them after the registration wakes
 * it, one before it is seen by the read: no wakeup is lost.  Only a commit
 * wakes it, never a rollback, and never before the commit is visible.
 *
 * The vacuum horizon: jobq_await, CALLed outside a transaction block
 * (non-atomic, as PgBouncer's transaction pooling runs it), commits after
 * each read and sleeps in a fresh transaction that holds no snapshot, so
 * its backend shows no xmin however long it waits.  Inside a transaction
 * block, and in jobq_await_many (a function, usable anywhere), a wait holds
 * the statement's snapshot, so there it is capped at
 * JOBQ_AWAIT_STATEMENT_MAX_S; a longer timeout then ends early with
 * timed_out.
 *
 * A timeout never changes the job; cancel_on_timeout cancels it if it is
 * still ready when the wait ends (a running job is never touched).
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/await.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"

#include "access/htup_details.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "storage/latch.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/syscache.h"
#include "utils/wait_event.h"

PG_FUNCTION_INFO_V1(jobq_await);
PG_FUNCTION_INFO_V1(jobq_await_many);
PG_FUNCTION_INFO_V1(jobq_await_status);

enum
{
	ST_AWAIT_READ,
	ST_AWAIT_LAST_ID,
	NUM_STATEMENTS
};

#define COL_READ_STATE		1
#define COL_READ_RESULT		2
#define COL_READ_ERROR		3
#define COL_READ_ATTEMPT	4
#define COL_READ_FINISHED	5

static const JobqStatement statements[NUM_STATEMENTS] = {
	/* $1 ids: one row per id, in order, NULL state when in neither table */
	[ST_AWAIT_READ] = {"await_read",
		"SELECT COALESCE(h.state, j.state)::text, h.result,"
		"  COALESCE(h.errors, j.errors) OPERATOR(pg_catalog.->) -1"
		"    OPERATOR(pg_catalog.->>) 'error',"
		"  COALESCE(h.attempt, j.attempt), h.finished_at"
		" FROM pg_catalog.unnest($1) WITH ORDINALITY AS i(id, n)"
		" LEFT JOIN jobq.jobs j ON j.id = i.id"
		" LEFT JOIN jobq.history h ON h.id = i.id"
		" ORDER BY i.n",
		1, {INT8ARRAYOID}},
	/* the last id handed out, NULL before the first */
	[ST_AWAIT_LAST_ID] = {"await_last_id",
		"SELECT pg_catalog.pg_sequence_last_value("
		"  pg_catalog.pg_get_serial_sequence('jobq.jobs', 'id')::pg_catalog.regclass)",
		0, {InvalidOid}},
};

static SPIPlanPtr plans[NUM_STATEMENTS];

const JobqStatements jobq_await_statements = {statements, NUM_STATEMENTS, plans, NULL};

/* What one awaited id is known to be */
typedef struct Outcome
{
	int64		id;
	char	   *state;			/* NULL: in neither table */
	Jsonb	   *result;
	text	   *last_error;
	int32		attempt;		/* -1: unknown */
	bool		has_finished_at;
	TimestampTz finished_at;
	int32		first_attempt;	/* 'attempt' mode: the attempt that must end */
	bool		done;
} Outcome;

/* How a wait goes */
typedef struct AwaitArgs
{
	int64		timeout_usecs;
	bool		any;			/* returns at the first id done */
	bool		per_attempt;	/* mode 'attempt' */
	bool		cancel_on_timeout;
	bool		nonatomic;		/* may commit before sleeping */
	bool		reads_values;	/* caller may see results and errors */
	Oid			owner;			/* run SQL as this role, or InvalidOid */
} AwaitArgs;

/*
 * The procedure runs as its caller (a SECURITY DEFINER procedure, or one
 * with SET options, may not commit: ExecuteCallStmt makes its CALL
 * atomic), so it does for each of its statements what a SECURITY DEFINER
 * function does for its body: run as the owner, jobq_owner, with
 * search_path = pg_catalog, pg_temp.  Undone before every commit; an error
 * undoes it with the transaction.
 */
typedef struct Elevation
{
	Oid			save_user;
	int			save_sec;
	int			nestlevel;
} Elevation;

static void
elevate(const AwaitArgs *args, Elevation *e)
{
	if (!OidIsValid(args->owner))
		return;
	GetUserIdAndSecContext(&e->save_user, &e->save_sec);
	SetUserIdAndSecContext(args->owner, e->save_sec | SECURITY_LOCAL_USERID_CHANGE);
	e->nestlevel = NewGUCNestLevel();
	(void) set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
}

static void
unelevate(const AwaitArgs *args, Elevation *e)
{
	if (!OidIsValid(args->owner))
		return;
	AtEOXact_GUC(true, e->nestlevel);
	SetUserIdAndSecContext(e->save_user, e->save_sec);
}

#define RESULT_NOT_RETAINED	"result not retained (completed_retention = 0)"

static const char *const await_state_names[] = {
	[JOBQ_AWAIT_READY] = "ready",
	[JOBQ_AWAIT_COMPLETED] = "completed",
	[JOBQ_AWAIT_DEAD] = "dead",
	[JOBQ_AWAIT_CANCELLED] = "cancelled",
};

static bool
is_terminal(const char *state)
{
	return state == NULL || strcmp(state, "completed") == 0 ||
		strcmp(state, "dead") == 0 || strcmp(state, "cancelled") == 0;
}

/*
 * last_issued_id
 *	  The id sequence's last value, 0 before the first job.
 */
static int64
last_issued_id(void)
{
	bool		isnull;
	int64		last;
	int			rc;

	rc = SPI_execute_plan(jobq_plan(&jobq_await_statements, ST_AWAIT_LAST_ID),
						  NULL, NULL, true, 1);
	jobq_spi_check(rc, SPI_OK_SELECT, "read the last job id");
	last = jobq_spi_getint64(0, 1, &isnull);
	return isnull ? 0 : last;
}

/*
 * apply_handover
 *	  An id found in neither table: what a commit handed over to entry k,
 *	  if anything, is its outcome (see await_slots.c).
 */
static void
apply_handover(Outcome *o, int k, const AwaitArgs *args, MemoryContext outer)
{
	JobqAwaitState state;
	TimestampTz at;
	struct varlena *value;
	bool		lost;
	MemoryContext old = MemoryContextSwitchTo(outer);

	if (jobq_await_handed(k, &state, &at, &value, &lost) &&
		state != JOBQ_AWAIT_READY)
	{
		o->state = pstrdup(await_state_names[state]);
		o->has_finished_at = true;
		o->finished_at = at;
		if (state == JOBQ_AWAIT_COMPLETED)
		{
			o->result = (Jsonb *) value;
			if (lost && args->reads_values)
				o->last_error = cstring_to_text(RESULT_NOT_RETAINED);
		}
		else
			o->last_error = (text *) value;
		if (!args->reads_values)
		{
			o->result = NULL;
			o->last_error = NULL;
		}
	}
	MemoryContextSwitchTo(old);
}

/*
 * read_outcomes
 *	  Read every id not yet done; returns how many are done.  first: the
 *	  first read, which also sets what 'attempt' mode waits for and refuses
 *	  ids never issued.
 */
static int
read_outcomes(Outcome *out, int n, Datum idarray, const AwaitArgs *args, bool registered,
			  bool first, MemoryContext outer)
{
	int			rc;
	int			ndone = 0;
	int64		last_id = -1;

	rc = SPI_execute_plan(jobq_plan(&jobq_await_statements, ST_AWAIT_READ),
						  &idarray, NULL, false, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "read awaited jobs");
	if (SPI_processed != (uint64) n)
		elog(ERROR, "jobq: await read " UINT64_FORMAT " rows for %d ids", SPI_processed, n);
	for (int i = 0; i < n; i++)
	{
		Outcome    *o = &out[i];
		HeapTuple	row = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		Datum		d;
		MemoryContext old;
		int32		prev_attempt;

		if (o->done)
		{
			ndone++;
			continue;
		}
		prev_attempt = (o->state != NULL && strcmp(o->state, "running") == 0) ? o->attempt : -1;
		old = MemoryContextSwitchTo(outer);
		d = SPI_getbinval(row, desc, COL_READ_STATE, &isnull);
		o->state = isnull ? NULL : TextDatumGetCString(d);
		d = SPI_getbinval(row, desc, COL_READ_RESULT, &isnull);
		o->result = isnull || !args->reads_values ? NULL : DatumGetJsonbPCopy(d);
		d = SPI_getbinval(row, desc, COL_READ_ERROR, &isnull);
		o->last_error = isnull || !args->reads_values ? NULL : DatumGetTextPCopy(d);
		d = SPI_getbinval(row, desc, COL_READ_ATTEMPT, &isnull);
		o->attempt = isnull ? -1 : DatumGetInt32(d);
		d = SPI_getbinval(row, desc, COL_READ_FINISHED, &isnull);
		o->has_finished_at = !isnull;
		o->finished_at = isnull ? 0 : DatumGetTimestampTz(d);
		MemoryContextSwitchTo(old);

		if (o->state == NULL && registered)
		{
			apply_handover(o, i, args, outer);
			o->attempt = prev_attempt;	/* the attempt it was seen running */
		}
		if (o->state == NULL && first)
		{
			if (last_id < 0)
				last_id = last_issued_id();
			if (o->id > last_id)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("job id " INT64_FORMAT " was never issued", o->id),
						 errdetail("The last job id issued is " INT64_FORMAT ".", last_id)));
		}
		if (o->state != NULL && strcmp(o->state, "completed") == 0)
			o->last_error = NULL;	/* errors of earlier attempts */
		if (first)
			o->first_attempt = (o->state != NULL && strcmp(o->state, "running") == 0) ?
				o->attempt : o->attempt + 1;
		if (is_terminal(o->state))
			o->done = true;
		else if (args->per_attempt && strcmp(o->state, "running") != 0 &&
				 o->attempt >= o->first_attempt)
			o->done = true;		/* the attempt ended, back to ready */
		else if (args->per_attempt && o->attempt > o->first_attempt)
			o->done = true;		/* ended and the next one began */
		if (o->done)
			ndone++;
	}
	SPI_freetuptable(SPI_tuptable);
	return ndone;
}

/*
 * pq_check_connection and FeBeWaitSet (the backend's wait set of its
 * client socket, latch and postmaster death) are declared in libpq/libpq.h,
 * which needs the GSSAPI headers of the server's build: see wait.c.  The
 * socket is at position 0 of the set (FeBeWaitSetSocketPos), which has
 * three events (FeBeWaitSetNEvents).
 */
extern bool pq_check_connection(void);
extern PGDLLIMPORT WaitEventSet *FeBeWaitSet;
#define FEBE_SOCKET_POS		0
#define FEBE_WAIT_EVENTS	3

/*
 * await_sleep
 *	  Sleep up to timeout_ms, until a commit sets the latch or the client
 *	  goes away; serve interrupts (a cancel or statement_timeout ends the
 *	  wait at once, with its usual error), and end the backend if its
 *	  client went away.
 */
static void
await_sleep(long timeout_ms)
{
	if (timeout_ms > 0 && FeBeWaitSet != NULL)
	{
		WaitEvent	events[FEBE_WAIT_EVENTS];
		int			n;

		/*
		 * The client's socket (watched for WL_SOCKET_CLOSED, as
		 * pq_check_connection does), our latch and postmaster death: a
		 * client that goes away ends the sleep at once, not at the next
		 * recheck (an await may sleep for an hour).
		 */
		ModifyWaitEvent(FeBeWaitSet, FEBE_SOCKET_POS, WL_SOCKET_CLOSED, NULL);
		n = WaitEventSetWait(FeBeWaitSet, timeout_ms, events, lengthof(events),
							 PG_WAIT_EXTENSION);
		for (int i = 0; i < n; i++)
			if (events[i].events & WL_POSTMASTER_DEATH)
				ereport(FATAL,
						(errcode(ERRCODE_ADMIN_SHUTDOWN),
						 errmsg("terminating connection due to unexpected postmaster exit")));
	}
	else if (timeout_ms > 0)
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 timeout_ms, PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
	if (MyProcPort != NULL && !pq_check_connection())
		ereport(FATAL,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("connection to client lost during an await")));
}

/*
 * await_run
 *	  Wait for the n ids of out[] (their ids set) as args say; fills out[]
 *	  and returns whether the wait timed out.  Runs inside SPI (connected
 *	  non-atomic when args->nonatomic).
 */
static bool
await_run(Outcome *out, int n, const AwaitArgs *args, MemoryContext outer)
{
	Datum	   *items = palloc(sizeof(Datum) * n);
	int64	   *ids = palloc(sizeof(int64) * n);
	Datum		idarray;
	bool		registered;
	volatile bool timed_out = false;
	int64		limit = args->timeout_usecs;
	TimestampTz deadline;

	for (int i = 0; i < n; i++)
	{
		items[i] = Int64GetDatum(out[i].id);
		ids[i] = out[i].id;
	}
	idarray = PointerGetDatum(construct_array(items, n, INT8OID, 8, FLOAT8PASSBYVAL,
											  TYPALIGN_DOUBLE));
	if (!args->nonatomic)
		limit = Min(limit, (int64) JOBQ_AWAIT_STATEMENT_MAX_S * USECS_PER_SEC);
	deadline = GetCurrentTimestamp() + limit;

	/* NB: registered before the first read (no lost wakeup) */
	registered = jobq_await_register(ids, n);
	PG_TRY();
	{
		bool		first = true;

		for (;;)
		{
			Elevation	e;
			int			ndone;
			TimestampTz now;
			long		nap_ms;

			elevate(args, &e);
			ndone = read_outcomes(out, n, idarray, args, registered, first, outer);
			unelevate(args, &e);

			first = false;
			if (args->any ? ndone > 0 : ndone == n)
				break;
			now = GetCurrentTimestamp();
			if (now >= deadline)
			{
				timed_out = true;
				break;
			}
			/* release the snapshot and xmin before sleeping */
			if (args->nonatomic)
				SPI_commit();
			nap_ms = (long) ((deadline - now + 999) / 1000);
			nap_ms = Min(nap_ms, registered ? jobq_claim_recheck_ms : JOBQ_WAIT_POLL_MS);
			await_sleep(nap_ms);
		}
		if (timed_out && args->cancel_on_timeout)
		{
			bool		tried = false;
			Elevation	e;

			elevate(args, &e);
			for (int i = 0; i < n; i++)
				if (!out[i].done && out[i].state != NULL &&
					strcmp(out[i].state, "ready") == 0)
				{
					(void) jobq_cancel_if_ready(Int64GetDatum(out[i].id));
					tried = true;
				}
			/* cancelled, or claimed first (the cancel waited for its lock) */
			if (tried)
				(void) read_outcomes(out, n, idarray, args, registered, false, outer);
			unelevate(args, &e);
		}
	}
	PG_FINALLY();
	{
		jobq_await_unregister();
	}
	PG_END_TRY();
	return timed_out;
}

/*
 * check_awaitable
 *	  The caller must hold enqueue or inspect on each job's queue (only
 *	  checked while per-queue grants exist), and enqueue to cancel it.
 */
static void
check_awaitable(Datum id, bool cancel)
{
	if (cancel)
		jobq_check_job(id, JOBQ_PRIV_ENQUEUE);
	else if (!jobq_job_allowed(id, JOBQ_PRIV_ENQUEUE))
		jobq_check_job(id, JOBQ_PRIV_INSPECT);
}

/*
 * caller_reads_values
 *	  Results and errors go to readers of payloads and to producers (the
 *	  one who enqueued is the one who wants the result).
 */
static bool
caller_reads_values(void)
{
	Oid			producer = get_role_oid("jobq_producer", true);

	return jobq_caller_reads_payloads() ||
		(OidIsValid(producer) && has_privs_of_role(GetOuterUserId(), producer));
}

/*
 * parse_args
 *	  timeout, the mode, cancel_on_timeout: arguments tmo, mode and cancel
 *	  of fcinfo.
 */
static void
parse_args(FunctionCallInfo fcinfo, int tmo, int mode, int cancel, AwaitArgs *args)
{
	Interval   *span;
	char	   *m;

	jobq_require(fcinfo, tmo, "timeout");
	jobq_require(fcinfo, mode, "mode");
	jobq_require(fcinfo, cancel, "cancel_on_timeout");
	span = jobq_check_interval(PG_GETARG_INTERVAL_P(tmo), "timeout", 0,
							   (int64) JOBQ_AWAIT_MAX_S * USECS_PER_SEC);
	args->timeout_usecs = jobq_interval_usecs(span);
	m = text_to_cstring(PG_GETARG_TEXT_PP(mode));
	if (strcmp(m, "finished") == 0)
		args->per_attempt = false;
	else if (strcmp(m, "attempt") == 0)
		args->per_attempt = true;
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("mode must be finished or attempt, not \"%s\"", m)));
	args->cancel_on_timeout = PG_GETARG_BOOL(cancel);
	args->any = false;
	args->owner = InvalidOid;
	args->reads_values = caller_reads_values();
}

static void
check_id(int64 id)
{
	if (id <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("job id must be positive, not " INT64_FORMAT, id)));
}

/*
 * outcome_values
 *	  The (state, result, last_error, attempt, finished_at, timed_out)
 *	  columns of o into values/nulls.
 */
static void
outcome_values(const Outcome *o, bool timed_out, Datum *values, bool *nulls)
{
	values[0] = CStringGetTextDatum(o->state ? o->state : "purged_or_never");
	nulls[0] = false;
	values[1] = PointerGetDatum(o->result);
	nulls[1] = o->result == NULL;
	values[2] = PointerGetDatum(o->last_error);
	nulls[2] = o->last_error == NULL;
	values[3] = Int32GetDatum(o->attempt);
	nulls[3] = o->attempt < 0;
	values[4] = TimestampTzGetDatum(o->finished_at);
	nulls[4] = !o->has_finished_at;
	values[5] = BoolGetDatum(timed_out && !o->done);
	nulls[5] = false;
}

/*
 * CALL jobq_await(id, timeout, mode, cancel_on_timeout,
 *				   INOUT state, INOUT result, INOUT last_error,
 *				   INOUT attempt, INOUT finished_at, INOUT timed_out)
 *	  Wait for one job's outcome (see the file header).
 */
Datum
jobq_await(PG_FUNCTION_ARGS)
{
	MemoryContext outer = CurrentMemoryContext;
	AwaitArgs	args;
	Outcome		o;
	TupleDesc	desc;
	Datum		values[6];
	bool		nulls[6];
	bool		timed_out;
	int			rc;
	HeapTuple	proc;
	Elevation	e;

	jobq_require(fcinfo, 0, "id");
	memset(&o, 0, sizeof(o));
	o.id = PG_GETARG_INT64(0);
	check_id(o.id);
	parse_args(fcinfo, 1, 2, 3, &args);
	args.nonatomic = fcinfo->context != NULL && IsA(fcinfo->context, CallContext) &&
		!castNode(CallContext, fcinfo->context)->atomic;
	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "jobq: jobq_await must return a record");
	desc = BlessTupleDesc(desc);
	proc = SearchSysCache1(PROCOID, ObjectIdGetDatum(fcinfo->flinfo->fn_oid));
	if (!HeapTupleIsValid(proc))
		elog(ERROR, "jobq: cache lookup failed for function %u", fcinfo->flinfo->fn_oid);
	args.owner = ((Form_pg_proc) GETSTRUCT(proc))->proowner;
	ReleaseSysCache(proc);

	rc = SPI_connect_ext(args.nonatomic ? SPI_OPT_NONATOMIC : 0);
	if (rc != SPI_OK_CONNECT)
		elog(ERROR, "jobq: SPI_connect failed: %s", SPI_result_code_string(rc));
	elevate(&args, &e);
	check_awaitable(Int64GetDatum(o.id), args.cancel_on_timeout);
	unelevate(&args, &e);
	timed_out = await_run(&o, 1, &args, outer);
	jobq_spi_finish();

	MemoryContextSwitchTo(outer);
	outcome_values(&o, timed_out, values, nulls);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}

/*
 * jobq_await_many(ids, timeout, until, mode, cancel_on_timeout)
 *	  -> TABLE (id, state, result, last_error, attempt, finished_at, timed_out)
 *	  Wait until all (until 'all') or one (until 'any') of the ids are
 *	  done; a row per id, in the order given (repeats once).
 */
Datum
jobq_await_many(PG_FUNCTION_ARGS)
{
	MemoryContext outer = CurrentMemoryContext;
	AwaitArgs	args;
	ArrayType  *arr;
	Datum	   *items;
	bool	   *item_nulls;
	int			nitems;
	int			n = 0;
	Outcome    *out;
	char	   *until;
	bool		timed_out;
	TupleDesc	desc;
	Tuplestorestate *store;

	jobq_require(fcinfo, 0, "ids");
	jobq_require(fcinfo, 2, "until");
	parse_args(fcinfo, 1, 3, 4, &args);
	until = text_to_cstring(PG_GETARG_TEXT_PP(2));
	if (strcmp(until, "any") == 0)
		args.any = true;
	else if (strcmp(until, "all") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("until must be all or any, not \"%s\"", until)));
	args.nonatomic = false;
	arr = PG_GETARG_ARRAYTYPE_P(0);
	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("ids must be a one-dimensional array")));
	deconstruct_array(arr, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
					  &items, &item_nulls, &nitems);
	if (nitems < 1 || nitems > JOBQ_AWAIT_MANY_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ids must hold 1 to %d jobs, not %d", JOBQ_AWAIT_MANY_MAX, nitems)));
	out = palloc0(sizeof(Outcome) * nitems);
	for (int i = 0; i < nitems; i++)
	{
		int64		id;
		bool		repeat = false;

		if (item_nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("ids must not contain nulls")));
		id = DatumGetInt64(items[i]);
		check_id(id);
		for (int k = 0; k < n && !repeat; k++)
			repeat = out[k].id == id;
		if (!repeat)
			out[n++].id = id;
	}

	store = jobq_srf_begin(fcinfo, &desc);
	jobq_spi_connect();
	for (int i = 0; i < n; i++)
		check_awaitable(Int64GetDatum(out[i].id), args.cancel_on_timeout);
	timed_out = await_run(out, n, &args, outer);
	jobq_spi_finish();

	MemoryContextSwitchTo(outer);
	for (int i = 0; i < n; i++)
	{
		Datum		values[7];
		bool		nulls[7];

		values[0] = Int64GetDatum(out[i].id);
		nulls[0] = false;
		outcome_values(&out[i], timed_out, values + 1, nulls + 1);
		tuplestore_putvalues(store, desc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * jobq_await_status() -> TABLE (awaiting, capacity, wakeups, handovers)
 *	  Awaited ids now and the capacity of the entries (0 without preload),
 *	  and since server start the entries woken by a commit and the
 *	  outcomes handed over.  One row.
 */
Datum
jobq_await_status(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	Tuplestorestate *store = jobq_srf_begin(fcinfo, &desc);
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};
	int64		v[4];

	jobq_await_counters(&v[0], &v[1], &v[2], &v[3]);
	for (int i = 0; i < 4; i++)
		values[i] = Int64GetDatum(v[i]);
	tuplestore_putvalues(store, desc, values, nulls);
	return (Datum) 0;
}
