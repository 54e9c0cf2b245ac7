/*-------------------------------------------------------------------------
 *
 * pop.c
 *	  jobq_pop: take ready jobs and finish them in the same statement.
 *
 * AT-MOST-ONCE, AND OPT-IN.  A pop deletes the jobs it returns; there is
 * no lease, no token and no retry.  If the caller's transaction commits
 * and the caller then crashes, or its work fails, those jobs are gone.
 * It is for work that may be lost but must be cheap (metrics, cache
 * warming, notifications that a later one supersedes), as pgmq's pop.
 * Everything else uses jobq_claim and jobq_complete.
 *
 * Why it exists: a claim writes every job row twice (the claim's update,
 * the completion's delete), as does the hand-written SKIP LOCKED queue.
 * A pop writes it once.  If the caller's transaction rolls back, the jobs
 * are back, untouched: the pop is part of the caller's transaction, as an
 * enqueue is.
 *
 * Rows are locked FOR UPDATE SKIP LOCKED (a delete needs the key lock), so
 * a job an application row holds a KEY SHARE lock on (a foreign key being
 * checked) is skipped, not waited for.  The attempt counts as one, and a
 * queue that keeps completed history gets a "completed" row for each job
 * (no token, no worker, no result).
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/pop.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"
#include "groups.h"
#include "counters.h"
#include "jobq_sql.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(jobq_pop);

#define ARG_QUEUE		0
#define ARG_MAX_JOBS	1

/*
 * The statements: $1 queue, $2 now, $3 max_jobs.  CTE d deletes up to $3
 * ready jobs of the queue due by $2, in claim order; the result is
 * jobq_pop's, in that order.  pop_history also writes the history row of
 * each job, for a queue that keeps completed history.
 */
#define POP_DELETE_SQL \
	"WITH d AS (" \
	"  DELETE FROM jobq.jobs j" \
	"  WHERE j.id = ANY (" JOBQ_READY_IDS_SQL("UPDATE") ")" \
	"  RETURNING j.*)"

/* the same, and CTE h: the history row of each job (HISTORY_ROW: jobq_sql.h) */
#define POP_HISTORY_SQL(HISTORY_ROW) \
	POP_DELETE_SQL "," \
	" h AS (" HISTORY_ROW("'completed'", "d.attempt + 1", "NULL", "NULL", "$2", "$2", \
						  "d.errors", "NULL") ")"

#define POP_RESULT_SQL POP_RESULT_COLS_SQL("")
#define POP_RESULT_COLS_SQL(EXTRA) \
	" SELECT d.id, d.queue, d.payload, d.attempt + 1 AS attempt, d.enqueued_at" EXTRA " FROM d" \
	" ORDER BY " JOBQ_CLAIM_ORDER_SQL("d")

/*
 * Flows (0.2.0's SQL): a popped job of a flow completed, and its
 * dependents are resolved in the same transaction (flows.c), from the
 * flow_id each row also returns (column COL_POP_FLOW_ID, after the
 * result's).  The history row keeps flow_id.
 */
#define COL_POP_ID			1
#define COL_POP_FLOW_ID		6
#define POP_FLOW_RESULT_SQL POP_RESULT_COLS_SQL(", d.flow_id")

enum
{
	ST_POP,
	ST_POP_HISTORY,
	/* flows */
	ST_POP_FLOW,
	ST_POP_HISTORY_FLOW,
	NUM_STATEMENTS
};

static const JobqStatement statements[NUM_STATEMENTS] = {
	[ST_POP] = {"pop",
		POP_DELETE_SQL POP_RESULT_SQL,
		3, {TEXTOID, TIMESTAMPTZOID, INT8OID}},
	[ST_POP_HISTORY] = {"pop_history",
		POP_HISTORY_SQL(JOBQ_HISTORY_ROW_SQL) POP_RESULT_SQL,
		3, {TEXTOID, TIMESTAMPTZOID, INT8OID}},
	[ST_POP_FLOW] = {"pop_flow",
		POP_DELETE_SQL POP_FLOW_RESULT_SQL,
		3, {TEXTOID, TIMESTAMPTZOID, INT8OID}},
	[ST_POP_HISTORY_FLOW] = {"pop_history_flow",
		POP_HISTORY_SQL(JOBQ_HISTORY_ROW_FLOW_SQL) POP_FLOW_RESULT_SQL,
		3, {TEXTOID, TIMESTAMPTZOID, INT8OID}},
};

static SPIPlanPtr plans[NUM_STATEMENTS];

const JobqStatements jobq_pop_statements = {statements, NUM_STATEMENTS, plans, NULL};

/*
 * jobq_pop(queue text, max_jobs integer) -> setof (id, queue, payload,
 *											 attempt, enqueued_at)
 *	  Delete up to max_jobs ready jobs of one queue, in claim order, and
 *	  return them.  An unknown or paused queue gives an empty result, as
 *	  jobq_claim does.
 */
Datum
jobq_pop(PG_FUNCTION_ARGS)
{
	text	   *queue = jobq_queue_arg(fcinfo, ARG_QUEUE);
	JobqQueueSettings settings;
	Datum		values[3];
	TupleDesc	desc;
	Tuplestorestate *store;
	bool		flows;
	int			st;
	int			rc;

	jobq_require(fcinfo, ARG_MAX_JOBS, "max_jobs");
	jobq_check_int_range(PG_GETARG_INT32(ARG_MAX_JOBS), "max_jobs", 1, JOBQ_CLAIM_MAX);

	jobq_check_queue(queue, JOBQ_PRIV_CLAIM);
	store = jobq_srf_begin(fcinfo, &desc);
	jobq_spi_connect();
	if (!jobq_queue_settings(queue, &settings) || settings.paused)
	{
		jobq_spi_finish();
		return (Datum) 0;
	}
	if (jobq_queue_grouped(&settings))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("jobq_pop does not take jobs of queue \"%s\", which groups its jobs",
						text_to_cstring(queue)),
				 errhint("Claim them with jobq_claim: a group's order and limit need the claim.")));

	values[0] = PointerGetDatum(queue);
	values[1] = TimestampTzGetDatum(jobq_now());
	values[2] = Int64GetDatum((int64) PG_GETARG_INT32(ARG_MAX_JOBS));
	flows = jobq_flows_available();
	st = settings.keeps_completed ? (flows ? ST_POP_HISTORY_FLOW : ST_POP_HISTORY) :
		(flows ? ST_POP_FLOW : ST_POP);
	rc = SPI_execute_plan(jobq_plan(&jobq_pop_statements, st), values, NULL, false, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "pop");
	/* popped jobs are completed: their awaiters hear of it (not preloaded: no loop) */
	for (uint64 r = 0; jobq_await_on && r < SPI_processed; r++)
	{
		bool		isnull;

		jobq_await_note(jobq_spi_getint64(r, 1, &isnull), JOBQ_AWAIT_COMPLETED,
						DatumGetTimestampTz(values[1]), NULL);
	}
	jobq_count_rows(settings.keeps_completed ? JOBQ_EV_POPPED_KEPT : JOBQ_EV_POPPED, 2, 0, 0);
	jobq_finished_rows(JOBQ_AWAIT_COMPLETED, 1, 0, 2);
	if (flows)
	{
		/* the result's columns by name (flow_id is not one), then the dependents */
		jobq_srf_put_spi_by_name(store, desc);
		jobq_flow_resolve_rows(COL_POP_ID, COL_POP_FLOW_ID, "completed",
							   !settings.keeps_completed, DatumGetTimestampTz(values[1]));
	}
	else
		jobq_srf_put_spi(store, desc);
	jobq_spi_finish();
	return (Datum) 0;
}
