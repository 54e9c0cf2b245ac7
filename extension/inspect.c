/*-------------------------------------------------------------------------
 *
 * inspect.c
 *	  Read-only views for operators: jobq_stats, jobq_job, jobq_list.
 *
 * States as operators see them: ready (run_at has come), delayed (ready
 * with run_at in the future), running, expired (running, lease past, not
 * yet swept), and the finished states completed, dead and cancelled.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/inspect.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(jobq_stats);
PG_FUNCTION_INFO_V1(jobq_job);
PG_FUNCTION_INFO_V1(jobq_list);
PG_FUNCTION_INFO_V1(jobq_wait_stats);

/*
 * The states jobq_list takes: every job state (JOBQ_JOB_STATES), and
 * delayed, a ready job whose run_at is ahead.
 */
#define STATE_NAME(name, kind) CppAsString(name),

static const char *const list_states[] = {JOBQ_JOB_STATES(STATE_NAME) "delayed"};

/*
 * The statements.  Their result columns are the SQL functions' own
 * (jobq_srf_put_spi passes rows through).
 */
enum
{
	ST_STATS,
	ST_JOB,
	ST_LIST,
	NUM_STATEMENTS
};

static const JobqStatement statements[NUM_STATEMENTS] = {
	/* $1 now, $2 queue or NULL (every queue) */
	[ST_STATS] = {"stats",
		"SELECT q.name, q.paused,"
		"  COALESCE(l.ready, 0), COALESCE(l.delayed, 0), COALESCE(l.running, 0),"
		"  COALESCE(l.expired, 0), COALESCE(h.dead, 0), COALESCE(h.completed, 0),"
		"  COALESCE(h.cancelled, 0), $1 - l.oldest,"
		"  COALESCE((SELECT sum(s.count) FROM jobq.stale_acks s"
		"            WHERE s.queue = q.name), 0)::bigint"
		" FROM jobq.queues q"
		" LEFT JOIN LATERAL ("
		"   SELECT count(*) FILTER (WHERE state = 'ready' AND run_at <= $1) AS ready,"
		"     count(*) FILTER (WHERE state = 'ready' AND run_at > $1) AS delayed,"
		"     count(*) FILTER (WHERE state = 'running') AS running,"
		"     count(*) FILTER (WHERE state = 'running' AND locked_until < $1) AS expired,"
		"     min(run_at) FILTER (WHERE state = 'ready' AND run_at <= $1) AS oldest"
		"   FROM jobq.jobs j WHERE j.queue = q.name) l ON true"
		" LEFT JOIN LATERAL ("
		"   SELECT count(*) FILTER (WHERE state = 'dead') AS dead,"
		"     count(*) FILTER (WHERE state = 'completed') AS completed,"
		"     count(*) FILTER (WHERE state = 'cancelled') AS cancelled"
		"   FROM jobq.history h WHERE h.queue = q.name) h ON true"
		" WHERE $2::text IS NULL OR q.name = $2"
		" ORDER BY q.name",
		2, {TIMESTAMPTZOID, TEXTOID}},
	/* $1 id, $2 whether the caller reads payloads, results and errors */
	[ST_JOB] = {"job",
		"SELECT id, queue, state::text, CASE WHEN $2 THEN payload END, priority::integer,"
		"  run_at, attempt, max_attempts, locked_until, worker, enqueued_at, claimed_at,"
		"  NULL::timestamptz, dedupe_key, CASE WHEN $2 THEN errors END, NULL::jsonb"
		" FROM jobq.jobs WHERE id = $1"
		" UNION ALL"
		" SELECT id, queue, state::text, CASE WHEN $2 THEN payload END, priority::integer,"
		"  run_at, attempt, max_attempts, NULL::timestamptz, worker, enqueued_at, claimed_at,"
		"  finished_at, dedupe_key, CASE WHEN $2 THEN errors END, CASE WHEN $2 THEN result END"
		" FROM jobq.history WHERE id = $1",
		2, {INT8OID, BOOLOID}},
	/* $1 queue, $2 state or NULL, $3 max_rows, $4 now, $5 whether the caller reads errors */
	[ST_LIST] = {"list",
		"SELECT * FROM ("
		"  SELECT id,"
		"    CASE WHEN state = 'ready' AND run_at > $4 THEN 'delayed'"
		"         ELSE state::text END AS st,"
		"    priority::integer, run_at, attempt, max_attempts, enqueued_at,"
		"    NULL::timestamptz, CASE WHEN $5 THEN errors -> -1 ->> 'error' END"
		"  FROM jobq.jobs WHERE queue = $1"
		"  UNION ALL"
		"  SELECT id, state::text, priority::integer, run_at, attempt, max_attempts,"
		"    enqueued_at, finished_at, CASE WHEN $5 THEN errors -> -1 ->> 'error' END"
		"  FROM jobq.history WHERE queue = $1) x"
		" WHERE $2::text IS NULL OR x.st = $2"
		" ORDER BY id LIMIT $3",
		5, {TEXTOID, TEXTOID, INT8OID, TIMESTAMPTZOID, BOOLOID}},
};

static SPIPlanPtr plans[NUM_STATEMENTS];

const JobqStatements jobq_inspect_statements = {statements, NUM_STATEMENTS, plans, NULL};

/*
 * require_inspect
 *	  42704 for an unknown queue (0.1.0 returned no row), 42501 unless the
 *	  caller may inspect it.  Inside SPI.
 */
static void
require_inspect(text *queue)
{
	JobqQueueSettings settings;

	if (!jobq_queue_settings(queue, &settings))
		jobq_queue_not_found(queue);
	jobq_check_queue(queue, JOBQ_PRIV_INSPECT);
}

/*
 * jobq_stats(queue) -> setof (queue, paused, ready, delayed, running,
 *		expired, dead, completed, cancelled, oldest_ready_age, stale_acks)
 *	  One row per queue the caller may inspect, or for the named one.
 *	  Counts are exact, so cost grows with the number of jobs: fine for a
 *	  dashboard refresh, not for a hot loop.
 */
Datum
jobq_stats(PG_FUNCTION_ARGS)
{
	Datum		values[2];
	char		nulls[2] = {' ', ' '};
	TupleDesc	desc;
	Tuplestorestate *store;
	int			rc;

	values[0] = TimestampTzGetDatum(jobq_now());
	values[1] = (Datum) 0;
	nulls[1] = 'n';
	if (!PG_ARGISNULL(0))
	{
		values[1] = PointerGetDatum(jobq_queue_arg(fcinfo, 0));
		nulls[1] = ' ';
	}

	store = jobq_srf_begin(fcinfo, &desc);
	jobq_spi_connect();
	if (nulls[1] == ' ')
		require_inspect(DatumGetTextPP(values[1]));
	rc = SPI_execute_plan(jobq_plan(&jobq_inspect_statements, ST_STATS),
						  values, nulls, true, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "stats");
	jobq_srf_put_spi_allowed(store, desc, 1, JOBQ_PRIV_INSPECT, false);
	jobq_spi_finish();
	return (Datum) 0;
}

/*
 * jobq_job(id) -> setof (everything about one job)
 *	  The job wherever it is, live or in history; no row when unknown, or
 *	  when the caller may not inspect its queue.  The claim token is not
 *	  shown: whoever reads it could complete the job.  Payload, errors and
 *	  result are NULL for a caller without jobq_reader (grants.c).
 */
Datum
jobq_job(PG_FUNCTION_ARGS)
{
	Datum		args[2];
	TupleDesc	desc;
	Tuplestorestate *store;
	int			rc;

	jobq_require(fcinfo, 0, "id");
	args[0] = PG_GETARG_DATUM(0);
	args[1] = BoolGetDatum(jobq_caller_reads_payloads());

	store = jobq_srf_begin(fcinfo, &desc);
	jobq_spi_connect();
	if (!jobq_job_allowed(args[0], JOBQ_PRIV_INSPECT))
	{
		jobq_spi_finish();
		return (Datum) 0;
	}
	rc = SPI_execute_plan(jobq_plan(&jobq_inspect_statements, ST_JOB),
						  args, NULL, true, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "job");
	jobq_srf_put_spi(store, desc);
	jobq_spi_finish();
	return (Datum) 0;
}

/*
 * jobq_list(queue, state, max_rows) -> setof (id, state, priority, run_at,
 *		attempt, max_attempts, enqueued_at, finished_at, last_error)
 *	  Jobs of a queue in id order, optionally of one state (ready, delayed,
 *	  running, completed, dead, cancelled), at most max_rows (1..10000).
 *	  last_error is NULL for a caller without jobq_reader.
 */
Datum
jobq_list(PG_FUNCTION_ARGS)
{
	Datum		values[5];
	char		nulls[5] = {' ', ' ', ' ', ' ', ' '};
	TupleDesc	desc;
	Tuplestorestate *store;
	int			rc;

	values[0] = PointerGetDatum(jobq_queue_arg(fcinfo, 0));
	values[1] = (Datum) 0;
	nulls[1] = 'n';
	if (!PG_ARGISNULL(1))
	{
		char	   *state = text_to_cstring(PG_GETARG_TEXT_PP(1));
		bool		known = false;

		for (int i = 0; i < lengthof(list_states); i++)
			known |= strcmp(state, list_states[i]) == 0;
		if (!known)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("unknown job state \"%s\"", state),
					 errhint("States are %s.",
							 jobq_name_list(list_states, lengthof(list_states), "and"))));
		values[1] = PG_GETARG_DATUM(1);
		nulls[1] = ' ';
	}
	jobq_require(fcinfo, 2, "max_rows");
	jobq_check_int_range(PG_GETARG_INT32(2), "max_rows", 1, JOBQ_LIST_MAX_ROWS);
	values[2] = Int64GetDatum((int64) PG_GETARG_INT32(2));
	values[3] = TimestampTzGetDatum(jobq_now());
	values[4] = BoolGetDatum(jobq_caller_reads_payloads());

	store = jobq_srf_begin(fcinfo, &desc);
	jobq_spi_connect();
	require_inspect(DatumGetTextPP(values[0]));
	rc = SPI_execute_plan(jobq_plan(&jobq_inspect_statements, ST_LIST),
						  values, nulls, true, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "list");
	jobq_srf_put_spi(store, desc);
	jobq_spi_finish();
	return (Datum) 0;
}

/*
 * jobq_wait_stats() -> (preloaded, waiting, wakeups)
 *	  Whether waiting claims sleep on latches (jobq preloaded), how many
 *	  claims wait now, and how many wakeups commits have sent since the
 *	  server started: wakeups per job enqueued shows whether waiters are
 *	  woken one per job or in herds.
 */
Datum
jobq_wait_stats(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	Tuplestorestate *store = jobq_srf_begin(fcinfo, &desc);
	Datum		out[3];
	bool		nulls[3] = {false, false, false};
	int64		waiting,
				wakeups;

	jobq_wait_counters(&waiting, &wakeups);
	out[0] = BoolGetDatum(jobq_wait_available());
	out[1] = Int64GetDatum(waiting);
	out[2] = Int64GetDatum(wakeups);
	tuplestore_putvalues(store, desc, out, nulls);
	return (Datum) 0;
}
