/*-------------------------------------------------------------------------
 *
 * workers.c
 *	  The worker registry: jobq_worker_register, jobq_worker_heartbeat,
 *	  jobq_worker_deregister, jobq_workers, jobq_worker_signal and
 *	  jobq_worker_prune (0.2.0).
 *
 * A worker is a process that claims jobs and chose to say so: it
 * registers (name, host, pid, queues, slots, version, metadata) and gets
 * a worker_id, heartbeats every heartbeat_every, and deregisters on a
 * clean exit.  A registration whose heartbeat is older than its
 * dead_after (jobq.worker_timeout unless the registration chose its own)
 * is pruned by the sweeper (jobq_worker_prune).  The table is UNLOGGED: a
 * heartbeat writes no WAL, and a crash empties the registry, after which
 * every heartbeat answers 'unregistered' and the worker registers again
 * under the same worker_id.
 *
 * The registry is advisory.  Pruning never fails, moves or completes a
 * job: the lease and the token stay the only guarantee, so a worker that
 * was only slow (a partition, a stopped process) and is pruned still
 * completes its jobs if its leases hold.  Claiming never requires a
 * registration.
 *
 * Steering: jobq_worker_signal sets the state a worker is asked to be in
 * (running, quiet, stopping).  The worker reads it as the answer of its
 * next heartbeat; a worker that claims with its worker_id as the claim's
 * worker label (which also lists its running jobs in jobq_workers) is told
 * at once: at the signal's commit its waiting claim is woken (wake.c,
 * wait.c) and returns empty, and the worker heartbeats.  States only move
 * forward, running -> quiet -> stopping, whoever asks (the worker's own
 * heartbeat may report that it is quieting or stopping by itself), except
 * for an explicit resume: quiet -> running.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/workers.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/uuid.h"

PG_FUNCTION_INFO_V1(jobq_worker_register);
PG_FUNCTION_INFO_V1(jobq_worker_heartbeat);
PG_FUNCTION_INFO_V1(jobq_worker_deregister);
PG_FUNCTION_INFO_V1(jobq_workers);
PG_FUNCTION_INFO_V1(jobq_worker_signal);
PG_FUNCTION_INFO_V1(jobq_worker_prune);

/* The states, in the order they may move (see the file header) */
#define STATE_RANK_SQL(X) \
	"(CASE " X " WHEN 'running' THEN 0 WHEN 'quiet' THEN 1 ELSE 2 END)"

/* A heartbeat's new state: the worker's own report, if a move forward */
#define NEW_STATE_SQL \
	"(CASE WHEN $4::text IS NOT NULL" \
	"       AND " STATE_RANK_SQL("$4::text") " > " STATE_RANK_SQL("state") \
	"  THEN $4::text ELSE state END)"

enum
{
	ST_REGISTER,
	ST_HEARTBEAT,
	ST_DEREGISTER,
	ST_LIST,
	ST_SIGNAL,
	ST_PRUNE,
	ST_HELD,
	ST_TOLD,
	NUM_STATEMENTS
};

static const JobqStatement statements[NUM_STATEMENTS] = {
	/*
	 * $1 worker_id or NULL (a new one), $2 name, $3 host, $4 pid, $5 queues,
	 * $6 slots, $7 version, $8 metadata, $9 dead_after, $10 now, $11 the
	 * backend.  A re-registration keeps the row's state and start.
	 */
	[ST_REGISTER] = {"worker_register",
		"INSERT INTO jobq.workers AS w (id, name, host, pid, version, queues, slots, metadata,"
		"  state, busy, started_at, heartbeat_at, dead_after, backend_pid)"
		" VALUES (coalesce($1, pg_catalog.gen_random_uuid()), $2, $3, $4, $7, $5, $6, $8,"
		"  'running', 0, $10, $10, $9, $11)"
		" ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, host = EXCLUDED.host,"
		"  pid = EXCLUDED.pid, version = EXCLUDED.version, queues = EXCLUDED.queues,"
		"  slots = EXCLUDED.slots, metadata = EXCLUDED.metadata,"
		"  heartbeat_at = EXCLUDED.heartbeat_at, dead_after = EXCLUDED.dead_after,"
		"  backend_pid = EXCLUDED.backend_pid, told = NULL"
		" RETURNING w.id, w.dead_after / 4, w.dead_after",
		11, {UUIDOID, TEXTOID, TEXTOID, INT4OID, TEXTARRAYOID, INT4OID, TEXTOID, JSONBOID,
		INTERVALOID, TIMESTAMPTZOID, INT4OID}},
	/*
	 * $1 id, $2 now, $3 busy, $4 the worker's own state, $5 metadata, $6
	 * backend.  The answer is what the worker hears: told.
	 */
	[ST_HEARTBEAT] = {"worker_heartbeat",
		"UPDATE jobq.workers SET heartbeat_at = $2, busy = coalesce($3, busy),"
		"  metadata = coalesce($5, metadata), backend_pid = $6,"
		"  state = " NEW_STATE_SQL ", told = " NEW_STATE_SQL
		" WHERE id = $1 RETURNING state",
		6, {UUIDOID, TIMESTAMPTZOID, INT4OID, TEXTOID, JSONBOID, INT4OID}},
	[ST_DEREGISTER] = {"worker_deregister",
		"DELETE FROM jobq.workers WHERE id = $1",
		1, {UUIDOID}},

	/*
	 * $1 now.  The running jobs of all workers in one pass over the running
	 * set (jobs_lease_idx), joined by the claim's worker label.
	 */
	[ST_LIST] = {"workers",
		"SELECT w.id, w.name, w.host, w.pid, w.version, w.queues, w.slots, w.state, w.busy,"
		"  coalesce(r.ids, '{}'), w.started_at, w.heartbeat_at, $1 - w.heartbeat_at,"
		"  w.heartbeat_at + w.dead_after >= $1, w.dead_after, w.metadata, w.backend_pid"
		" FROM jobq.workers w LEFT JOIN ("
		"  SELECT j.worker, pg_catalog.array_agg(j.id ORDER BY j.id) AS ids"
		"  FROM jobq.jobs j WHERE j.state = 'running' AND j.worker IS NOT NULL"
		"  GROUP BY j.worker) r ON r.worker = w.id::text"
		" ORDER BY w.name, w.started_at, w.id",
		1, {TIMESTAMPTZOID}},

	/*
	 * $1 target, $2 the new state, $3 the states it may come from.  Returns
	 * the claim label of each worker now in that state.  The worker has not
	 * heard it yet (told).
	 */
	[ST_SIGNAL] = {"worker_signal",
		"UPDATE jobq.workers SET state = $2, told = NULL"
		" WHERE ($1 = '*' OR id::text = pg_catalog.lower($1) OR name LIKE $1 OR host LIKE $1)"
		"   AND state = ANY ($3)"
		" RETURNING id::text",
		3, {TEXTOID, TEXTOID, TEXTARRAYOID}},

	/*
	 * $1 now, $2 max_rows: delete the registrations past their dead_after,
	 * and end the leases of their running jobs in queues with
	 * reclaim_on_worker_death when the worker was deemed dead (its last
	 * heartbeat + dead_after, before $1), so that the sweep requeues them
	 * as expired leases.  Returns how many workers and jobs.
	 *
	 * NB: a heartbeat that commits while we look is seen when the row is
	 * locked (the WHERE clause is re-checked on its newest version), and a
	 * row a heartbeat holds is skipped: a worker alive is never pruned for
	 * having been slow to answer.  A job row somebody holds (its complete,
	 * its extend) is skipped too: its lease stays the guarantee.
	 */
	[ST_PRUNE] = {"worker_prune",
		"WITH p AS ("
		"  DELETE FROM jobq.workers w WHERE w.id = ANY (ARRAY("
		"    SELECT x.id FROM jobq.workers x WHERE x.heartbeat_at + x.dead_after < $1"
		"    ORDER BY x.heartbeat_at LIMIT $2 FOR UPDATE SKIP LOCKED))"
		"     AND w.heartbeat_at + w.dead_after < $1"
		"  RETURNING w.id::text AS label, w.heartbeat_at + w.dead_after AS died),"
		" r AS ("
		"  UPDATE jobq.jobs j SET locked_until = p.died FROM p"
		"  WHERE j.id = ANY (ARRAY("
		"    SELECT k.id FROM jobq.jobs k JOIN p p2 ON k.worker = p2.label"
		"    JOIN jobq.queues q ON q.name = k.queue AND q.reclaim_on_worker_death"
		"    WHERE k.state = 'running' AND k.locked_until > p2.died"
		"    FOR UPDATE OF k SKIP LOCKED))"
		"    AND j.worker = p.label AND j.state = 'running' AND j.locked_until > p.died"
		"  RETURNING 1)"
		" SELECT (SELECT count(*) FROM p), (SELECT count(*) FROM r)",
		2, {TIMESTAMPTZOID, INT4OID}},
	/*
	 * $1 id: whether the worker is asked not to claim, and if so whether it
	 * has not heard it yet (then it is told now, by the claim's return)
	 */
	[ST_HELD] = {"worker_held",
		"SELECT state <> 'running', state IS DISTINCT FROM told FROM jobq.workers"
		" WHERE id = $1",
		1, {UUIDOID}},
	[ST_TOLD] = {"worker_told",
		"UPDATE jobq.workers SET told = state WHERE id = $1",
		1, {UUIDOID}},
};

static SPIPlanPtr plans[NUM_STATEMENTS];

const JobqStatements jobq_workers_statements = {statements, NUM_STATEMENTS, plans, NULL};

#define ARG_REG_NAME		0
#define ARG_REG_HOST		1
#define ARG_REG_PID			2
#define ARG_REG_QUEUES		3
#define ARG_REG_SLOTS		4
#define ARG_REG_VERSION		5
#define ARG_REG_METADATA	6
#define ARG_REG_TIMEOUT		7
#define ARG_REG_ID			8

/*
 * registry_exists
 *	  Whether this database's SQL has the registry (0.2.0): this library
 *	  also serves 0.1.0's SQL, whose claims and sweeps must not look for it.
 */
static bool
registry_exists(void)
{
	Oid			nsp = get_namespace_oid("jobq", true);

	return OidIsValid(nsp) && OidIsValid(get_relname_relid("workers", nsp));
}

/*
 * optional_label
 *	  A text argument that may be NULL and is otherwise 1 to
 *	  JOBQ_WORKER_NAME_MAX bytes (name, host, version); NULL when NULL.
 */
static Datum
optional_label(FunctionCallInfo fcinfo, int argno, const char *argname, char *null)
{
	text	   *value;
	int			len;

	*null = 'n';
	if (PG_ARGISNULL(argno))
		return (Datum) 0;
	value = PG_GETARG_TEXT_PP(argno);
	len = VARSIZE_ANY_EXHDR(value);
	if (len == 0 || len > JOBQ_WORKER_NAME_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be 1 to %d bytes long", argname, JOBQ_WORKER_NAME_MAX)));
	*null = ' ';
	return PointerGetDatum(value);
}

/*
 * check_queues
 *	  The queues a worker claims from: NULL (none said) or an array of at
 *	  most JOBQ_CLAIM_QUEUES_MAX valid names.  Returns the array to store,
 *	  empty for NULL.  The queues need not exist: workers may start first.
 */
static Datum
check_queues(FunctionCallInfo fcinfo, int argno)
{
	ArrayType  *queues;
	Datum	   *items;
	int			n;

	if (PG_ARGISNULL(argno))
		return PointerGetDatum(construct_empty_array(TEXTOID));
	queues = PG_GETARG_ARRAYTYPE_P(argno);
	jobq_check_queue_names(queues, 0, JOBQ_CLAIM_QUEUES_MAX, &items, &n);
	return PointerGetDatum(queues);
}

/*
 * check_metadata
 *	  What a worker says about itself: a JSON object of at most
 *	  JOBQ_WORKER_METADATA_MAX bytes.
 */
static Jsonb *
check_metadata(Jsonb *metadata)
{
	if (!JB_ROOT_IS_OBJECT(metadata))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("metadata must be a JSON object")));
	if (VARSIZE(metadata) > JOBQ_WORKER_METADATA_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("metadata is %zu bytes, over the limit of %d bytes",
						(Size) VARSIZE(metadata), JOBQ_WORKER_METADATA_MAX)));
	return metadata;
}

/*
 * check_state
 *	  One of running, quiet, stopping (argname says which argument).
 */
static void
check_state(text *state, const char *argname)
{
	char	   *s = text_to_cstring(state);

	if (strcmp(s, "running") != 0 && strcmp(s, "quiet") != 0 && strcmp(s, "stopping") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be running, quiet or stopping, not \"%s\"", argname, s)));
}

/*
 * jobq_worker_register(name, host, pid, queues, slots, version, metadata,
 *						timeout, worker_id)
 *	  -> (worker_id uuid, heartbeat_every interval, dead_after interval)
 *	  Register a worker, or register it again under worker_id (after its
 *	  heartbeat answered 'unregistered'), so that the jobs it claimed under
 *	  that id stay listed as its own.  Only name is required.  timeout is
 *	  how long after its last heartbeat the registration is pruned
 *	  (default jobq.worker_timeout); heartbeat_every is a quarter of it.
 */
Datum
jobq_worker_register(PG_FUNCTION_ARGS)
{
	Datum		values[11];
	char		nulls[11];
	TupleDesc	desc;
	Tuplestorestate *store;
	Interval   *timeout;
	int			rc;

	memset(nulls, ' ', sizeof(nulls));
	jobq_require(fcinfo, ARG_REG_NAME, "name");
	values[1] = optional_label(fcinfo, ARG_REG_NAME, "name", &nulls[1]);
	values[2] = optional_label(fcinfo, ARG_REG_HOST, "host", &nulls[2]);
	values[3] = (Datum) 0;
	nulls[3] = 'n';
	if (!PG_ARGISNULL(ARG_REG_PID))
	{
		jobq_check_int_range(PG_GETARG_INT32(ARG_REG_PID), "pid", 1, PG_INT32_MAX);
		values[3] = PG_GETARG_DATUM(ARG_REG_PID);
		nulls[3] = ' ';
	}
	values[4] = check_queues(fcinfo, ARG_REG_QUEUES);
	values[5] = (Datum) 0;
	nulls[5] = 'n';
	if (!PG_ARGISNULL(ARG_REG_SLOTS))
	{
		jobq_check_int_range(PG_GETARG_INT32(ARG_REG_SLOTS), "slots", 1, JOBQ_WORKER_SLOTS_MAX);
		values[5] = PG_GETARG_DATUM(ARG_REG_SLOTS);
		nulls[5] = ' ';
	}
	values[6] = optional_label(fcinfo, ARG_REG_VERSION, "version", &nulls[6]);
	values[7] = PG_ARGISNULL(ARG_REG_METADATA) ?
		DirectFunctionCall1(jsonb_in, CStringGetDatum("{}")) :
		PointerGetDatum(check_metadata(PG_GETARG_JSONB_P(ARG_REG_METADATA)));
	if (PG_ARGISNULL(ARG_REG_TIMEOUT))
	{
		timeout = palloc0(sizeof(Interval));
		timeout->time = (int64) jobq_worker_timeout_s * USECS_PER_SEC;
	}
	else
		timeout = jobq_check_interval(PG_GETARG_INTERVAL_P(ARG_REG_TIMEOUT), "timeout",
									  (int64) JOBQ_WORKER_TIMEOUT_MIN_S * USECS_PER_SEC,
									  (int64) JOBQ_WORKER_TIMEOUT_MAX_S * USECS_PER_SEC);
	values[8] = IntervalPGetDatum(timeout);
	values[0] = PG_ARGISNULL(ARG_REG_ID) ? (Datum) 0 : PG_GETARG_DATUM(ARG_REG_ID);
	nulls[0] = PG_ARGISNULL(ARG_REG_ID) ? 'n' : ' ';
	values[9] = TimestampTzGetDatum(jobq_now());
	values[10] = Int32GetDatum(MyProcPid);

	store = jobq_srf_begin(fcinfo, &desc);
	jobq_spi_connect();
	rc = SPI_execute_plan(jobq_plan(&jobq_workers_statements, ST_REGISTER), values, nulls, false, 1);
	jobq_spi_check(rc, SPI_OK_INSERT_RETURNING, "register worker");
	jobq_srf_put_spi(store, desc);
	jobq_spi_finish();
	return (Datum) 0;
}

/*
 * jobq_worker_heartbeat(worker_id, busy, state, metadata) -> text
 *	  The worker is alive, running busy jobs (NULL: as it said last), and
 *	  may report its own state (running, quiet, stopping: only a move
 *	  forward is taken) and new metadata.  Returns the state it is asked
 *	  to be in, or 'unregistered' when it has no registration (pruned,
 *	  deregistered, or emptied by a crash): it should register again.
 */
Datum
jobq_worker_heartbeat(PG_FUNCTION_ARGS)
{
	Datum		values[6];
	char		nulls[6] = {' ', ' ', 'n', 'n', 'n', ' '};
	int			rc;
	text	   *state = NULL;

	jobq_require(fcinfo, 0, "worker_id");
	values[0] = PG_GETARG_DATUM(0);
	values[1] = TimestampTzGetDatum(jobq_now());
	values[2] = values[3] = values[4] = (Datum) 0;
	if (!PG_ARGISNULL(1))
	{
		jobq_check_int_range(PG_GETARG_INT32(1), "busy", 0, JOBQ_WORKER_SLOTS_MAX);
		values[2] = PG_GETARG_DATUM(1);
		nulls[2] = ' ';
	}
	if (!PG_ARGISNULL(2))
	{
		check_state(PG_GETARG_TEXT_PP(2), "state");
		values[3] = PG_GETARG_DATUM(2);
		nulls[3] = ' ';
	}
	if (!PG_ARGISNULL(3))
	{
		values[4] = PointerGetDatum(check_metadata(PG_GETARG_JSONB_P(3)));
		nulls[4] = ' ';
	}
	values[5] = Int32GetDatum(MyProcPid);

	jobq_spi_connect();
	rc = SPI_execute_plan(jobq_plan(&jobq_workers_statements, ST_HEARTBEAT), values, nulls, false, 1);
	jobq_spi_check(rc, SPI_OK_UPDATE_RETURNING, "heartbeat");
	if (SPI_processed > 0)
	{
		bool		isnull;

		state = DatumGetTextPCopy(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
												1, &isnull));
	}
	jobq_spi_finish();
	PG_RETURN_TEXT_P(state != NULL ? state : cstring_to_text("unregistered"));
}

/*
 * jobq_worker_deregister(worker_id) -> boolean
 *	  Remove the registration (a clean exit).  false when there was none.
 *	  The worker's running jobs, if any, are not touched.
 */
Datum
jobq_worker_deregister(PG_FUNCTION_ARGS)
{
	Datum		id;
	int			rc;
	bool		found;

	jobq_require(fcinfo, 0, "worker_id");
	id = PG_GETARG_DATUM(0);
	jobq_spi_connect();
	rc = SPI_execute_plan(jobq_plan(&jobq_workers_statements, ST_DEREGISTER), &id, NULL, false, 0);
	jobq_spi_check(rc, SPI_OK_DELETE, "deregister worker");
	found = SPI_processed > 0;
	jobq_spi_finish();
	PG_RETURN_BOOL(found);
}

/*
 * jobq_workers() -> setof (worker_id, name, host, pid, version, queues,
 *		slots, state, busy, running, started_at, heartbeat_at,
 *		heartbeat_age, alive, dead_after, metadata, backend_pid)
 *	  Every registration, by name.  running: the ids of the running jobs
 *	  claimed with the worker's id as label; alive: the last heartbeat is
 *	  within dead_after (a row not alive is one the sweeper has yet to
 *	  prune).
 */
Datum
jobq_workers(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	Tuplestorestate *store = jobq_srf_begin(fcinfo, &desc);
	Datum		now = TimestampTzGetDatum(jobq_now());
	int			rc;

	jobq_spi_connect();
	rc = SPI_execute_plan(jobq_plan(&jobq_workers_statements, ST_LIST), &now, NULL, true, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "list workers");
	jobq_srf_put_spi(store, desc);
	jobq_spi_finish();
	return (Datum) 0;
}

/*
 * jobq_worker_signal(target, signal) -> integer
 *	  Ask workers to quiet (stop claiming, finish running jobs), stop (exit
 *	  as on SIGTERM) or resume (claim again, after quiet).  target: '*'
 *	  (every worker), a worker_id, or a LIKE pattern matched against name
 *	  and host.  Returns how many workers are now in the state asked for:
 *	  a stopping worker is not quieted nor resumed.  Each is told at this
 *	  transaction's commit (see the file header).  Recorded in the audit
 *	  trail (action worker_signal, with target and signal).
 */
Datum
jobq_worker_signal(PG_FUNCTION_ARGS)
{
	static const char *const from_quiet[] = {"running", "quiet"};
	static const char *const from_stop[] = {"running", "quiet", "stopping"};
	static const char *const from_resume[] = {"quiet", "running"};
	const char *const *from;
	int			nfrom;
	const char *to;
	char	   *signal;
	text	   *target;
	Datum		values[3];
	Datum		items[3];
	int			rc;
	uint64		n;

	jobq_require(fcinfo, 0, "target");
	jobq_require(fcinfo, 1, "signal");
	target = PG_GETARG_TEXT_PP(0);
	if (VARSIZE_ANY_EXHDR(target) == 0 || VARSIZE_ANY_EXHDR(target) > JOBQ_WORKER_NAME_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("target must be 1 to %d bytes long", JOBQ_WORKER_NAME_MAX)));
	signal = text_to_cstring(PG_GETARG_TEXT_PP(1));
	if (strcmp(signal, "quiet") == 0)
	{
		from = from_quiet, nfrom = lengthof(from_quiet);
		to = "quiet";
	}
	else if (strcmp(signal, "stop") == 0)
	{
		from = from_stop, nfrom = lengthof(from_stop);
		to = "stopping";
	}
	else if (strcmp(signal, "resume") == 0)
	{
		from = from_resume, nfrom = lengthof(from_resume);
		to = "running";
	}
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("signal must be quiet, stop or resume, not \"%s\"", signal)));

	for (int i = 0; i < nfrom; i++)
		items[i] = CStringGetTextDatum(from[i]);
	values[0] = PointerGetDatum(target);
	values[1] = CStringGetTextDatum(to);
	values[2] = PointerGetDatum(construct_array(items, nfrom, TEXTOID, -1, false, TYPALIGN_INT));

	jobq_spi_connect();
	rc = SPI_execute_plan(jobq_plan(&jobq_workers_statements, ST_SIGNAL), values, NULL, false, 0);
	jobq_spi_check(rc, SPI_OK_UPDATE_RETURNING, "signal workers");
	n = SPI_processed;
	for (uint64 i = 0; i < n; i++)
	{
		bool		isnull;

		jobq_announce_signal(DatumGetTextPP(SPI_getbinval(SPI_tuptable->vals[i],
														  SPI_tuptable->tupdesc, 1, &isnull)));
	}
	/* the operator's call, in the audit trail (a resume undoes a quiet) */
	jobq_audit_record("worker_signal", NULL, (Datum) 0, NULL, (int64) n,
					  "target", text_to_cstring(target), "signal", signal, NULL);
	jobq_spi_finish();
	PG_RETURN_INT32((int32) n);
}

/*
 * jobq_worker_prune_run
 *	  Remove up to max_rows registrations past their dead_after; returns
 *	  how many, and in *reclaimed how many of their running jobs had their
 *	  lease ended (queues with reclaim_on_worker_death; the next sweep
 *	  requeues them, counting the attempt as for any expired lease).
 *	  Inside SPI.  Does nothing (0) in a database whose SQL has no
 *	  registry.  Other jobs are left alone: their leases decide.
 */
int64
jobq_worker_prune_run(int64 max_rows, int64 *reclaimed)
{
	Datum		values[2];
	bool		isnull;
	int64		pruned;
	int			rc;

	*reclaimed = 0;
	if (!registry_exists())
		return 0;
	values[0] = TimestampTzGetDatum(jobq_now());
	values[1] = Int32GetDatum((int32) max_rows);
	rc = SPI_execute_plan(jobq_plan(&jobq_workers_statements, ST_PRUNE), values, NULL, false, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "prune workers");
	pruned = jobq_spi_getint64(0, 1, &isnull);
	*reclaimed = jobq_spi_getint64(0, 2, &isnull);
	SPI_freetuptable(SPI_tuptable);
	return pruned;
}

/*
 * jobq_worker_prune(max_rows) -> integer
 *	  The sweeper's duty as a SQL function, for installs without it: safe
 *	  to call from many sessions at once (SKIP LOCKED).
 */
Datum
jobq_worker_prune(PG_FUNCTION_ARGS)
{
	int64		n;
	int64		reclaimed;

	jobq_require(fcinfo, 0, "max_rows");
	jobq_check_int_range(PG_GETARG_INT32(0), "max_rows", 1, JOBQ_SWEEP_MAX_ROWS);
	jobq_spi_connect();
	n = jobq_worker_prune_run(PG_GETARG_INT32(0), &reclaimed);
	jobq_spi_finish();
	PG_RETURN_INT32((int32) n);
}

/*
 * label_uuid
 *	  Whether a claim's worker label is a worker_id (a uuid in its text
 *	  form, as jobq_workers shows it), and if so which.
 */
static bool
label_uuid(text *label, Datum *id)
{
	const char *s = VARDATA_ANY(label);
	char		buf[37];

	if (VARSIZE_ANY_EXHDR(label) != 36)
		return false;
	for (int i = 0; i < 36; i++)
	{
		bool		dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? s[i] != '-' : !isxdigit((unsigned char) s[i]))
			return false;
	}
	memcpy(buf, s, 36);
	buf[36] = '\0';
	*id = DirectFunctionCall1(uuid_in, CStringGetDatum(buf));
	return true;
}

/*
 * jobq_worker_held
 *	  Whether the claim label worker names a registered worker that is
 *	  asked not to claim (quiet or stopping).  Inside SPI.  A waiting claim
 *	  asks once, after taking its waiter slot, so that a signal that
 *	  committed before the slot was taken is not missed (one after it
 *	  wakes the slot).  Cheap when the label is no worker_id.
 *
 * A worker that has not heard its state yet (the signal committed while it
 * was between two claims) is told by this claim: it returns empty at once,
 * as if woken by the signal, so that the worker heartbeats and reads its
 * state, instead of sleeping held until its wait ends.  Once only (told is
 * set), so that a program that claims in a loop without heartbeating
 * sleeps held from its next claim on.
 */
bool
jobq_worker_held(text *worker)
{
	Datum		id;
	bool		isnull;
	bool		held = false;
	bool		untold = false;
	int			rc;

	if (worker == NULL || !label_uuid(worker, &id) || !registry_exists())
		return false;
	rc = SPI_execute_plan(jobq_plan(&jobq_workers_statements, ST_HELD), &id, NULL, true, 1);
	jobq_spi_check(rc, SPI_OK_SELECT, "read worker state");
	if (SPI_processed > 0)
	{
		held = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
		untold = held &&
			DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	}
	SPI_freetuptable(SPI_tuptable);
	if (untold)
	{
		rc = SPI_execute_plan(jobq_plan(&jobq_workers_statements, ST_TOLD), &id, NULL, false, 0);
		jobq_spi_check(rc, SPI_OK_UPDATE, "tell worker");
		jobq_wait_signal_self();
	}
	return held;
}
