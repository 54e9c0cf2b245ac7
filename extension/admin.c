/*-------------------------------------------------------------------------
 *
 * admin.c
 *	  Operating on finished jobs: jobq_retry (dead -> ready, by job or by
 *	  queue), jobq_cancel (ready or dead -> cancelled), jobq_purge.
 *
 * Dead is the dead-letter state: a job that used up its attempts or failed
 * permanently waits in history until an operator retries it (re-drive),
 * cancels it, or its queue's dead_retention purges it.  A retried job keeps
 * its id, payload and error history and starts again at attempt 0.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/admin.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"
#include "groups.h"
#include "counters.h"
#include "jobq_sql.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(jobq_retry);
PG_FUNCTION_INFO_V1(jobq_retry_0_2);
PG_FUNCTION_INFO_V1(jobq_cancel_flow);
PG_FUNCTION_INFO_V1(jobq_retry_queue);
PG_FUNCTION_INFO_V1(jobq_cancel);
PG_FUNCTION_INFO_V1(jobq_purge);

/* The finished states (JOBQ_JOB_STATES), which purge takes */
#define FINISHED_ONLY_LIVE(name)
#define FINISHED_ONLY_FINISHED(name) CppAsString(name),
#define FINISHED_STATE(name, kind) FINISHED_ONLY_##kind(name)

static const char *const finished_states[] = {JOBQ_JOB_STATES(FINISHED_STATE)};

/* The dead jobs a retry re-drives: $1 the job, or the queue's */
#define RETRY_JOB_SQL \
	"WITH c AS (SELECT id FROM jobq.history" \
	"  WHERE id = $1 AND state = 'dead' FOR UPDATE),"
#define RETRY_QUEUE_SQL \
	"WITH c AS (SELECT id FROM jobq.history" \
	"  WHERE queue = $1 AND state = 'dead' ORDER BY id" \
	"  FOR UPDATE SKIP LOCKED),"

/*
 * The cancel of a ready job.  With flows (0.2.0's SQL) it takes only jobs
 * outside flows (QUAL), and a job in a flow goes to ST_CANCEL_FLOW after
 * it: in that order, because a child enqueued meanwhile sets the job's
 * flow_id under the row lock this DELETE waits for, and the DELETE then
 * re-checks the new row version and leaves it to the flow cancel.  (The
 * other order would not see a flow_id that was NULL in its snapshot.)
 */
#define CANCEL_READY_SQL(QUAL) \
	"WITH d AS (DELETE FROM jobq.jobs WHERE id = $1 AND state = 'ready'" QUAL \
	"  RETURNING *)" \
	" " JOBQ_HISTORY_ROW_SQL("'cancelled'", "d.attempt", "NULL", "d.worker", "d.claimed_at", "$2", \
							 "d.errors", "NULL") \
	" RETURNING queue"

enum
{
	ST_RETRY_JOB,
	ST_RETRY_JOB_GROUPED,
	ST_RETRY_QUEUE,
	ST_RETRY_QUEUE_GROUPED,
	ST_CANCEL_READY,
	ST_CANCEL_DEAD,
	ST_PURGE,
	/* flows (0.2.0's SQL) */
	ST_RETRY_JOB_FLOW,
	ST_RETRY_QUEUE_FLOW,
	ST_CANCEL_FLOW,
	ST_CANCEL_READY_NF,
	ST_PURGE_FLOW,
	NUM_STATEMENTS
};

static const JobqStatement statements[NUM_STATEMENTS] = {
	/* $1 id, $2 now */
	[ST_RETRY_JOB] = {"retry_job",
		RETRY_JOB_SQL JOBQ_REDRIVE_SQL,
		2, {INT8OID, TIMESTAMPTZOID}},
	[ST_RETRY_JOB_GROUPED] = {"retry_job_grouped",
		RETRY_JOB_SQL JOBQ_REDRIVE_GROUPED_SQL,
		2, {INT8OID, TIMESTAMPTZOID}},
	/* $1 queue, $2 now; rows another session is handling are skipped */
	[ST_RETRY_QUEUE] = {"retry_queue",
		RETRY_QUEUE_SQL JOBQ_REDRIVE_SQL,
		2, {TEXTOID, TIMESTAMPTZOID}},
	[ST_RETRY_QUEUE_GROUPED] = {"retry_queue_grouped",
		RETRY_QUEUE_SQL JOBQ_REDRIVE_GROUPED_SQL,
		2, {TEXTOID, TIMESTAMPTZOID}},
	/* $1 id, $2 now */
	[ST_CANCEL_READY] = {"cancel_ready",
		CANCEL_READY_SQL(""),
		2, {INT8OID, TIMESTAMPTZOID}},
	[ST_CANCEL_DEAD] = {"cancel_dead",
		"UPDATE jobq.history SET state = 'cancelled', finished_at = $2"
		" WHERE id = $1 AND state = 'dead'"
		" RETURNING queue",
		2, {INT8OID, TIMESTAMPTZOID}},
	/* $1 queue, $2 finished before, $3 state or NULL (every finished one) */
	[ST_PURGE] = {"purge",
		"WITH d AS (DELETE FROM jobq.history"
		" WHERE queue = $1 AND finished_at <= $2"
		"   AND ($3::text IS NULL OR state = $3::jobq.job_state)"
		" RETURNING queue, state)"
		" SELECT (SELECT count(*) FROM d)," JOBQ_FINISHED_COUNTS_SQL("d"),
		3, {TEXTOID, TIMESTAMPTZOID, TEXTOID}},
	/* flows: the re-drives keeping flow_id, returning the ids too */
	[ST_RETRY_JOB_FLOW] = {"retry_job_flow",
		"WITH c AS (SELECT id FROM jobq.history"
		"  WHERE id = $1 AND state = 'dead' FOR UPDATE),"
		JOBQ_REDRIVE_FLOW_SQL,
		2, {INT8OID, TIMESTAMPTZOID}},
	[ST_RETRY_QUEUE_FLOW] = {"retry_queue_flow",
		"WITH c AS (SELECT id FROM jobq.history"
		"  WHERE queue = $1 AND state = 'dead' ORDER BY id"
		"  FOR UPDATE SKIP LOCKED),"
		JOBQ_REDRIVE_FLOW_SQL,
		2, {TEXTOID, TIMESTAMPTZOID}},

	/*
	 * $1 id, $2 now: a ready or waiting job in a flow, cancelled; returns
	 * its queue and the state it was in
	 */
	[ST_CANCEL_FLOW] = {"cancel_flow_job",
		"WITH d AS (DELETE FROM jobq.jobs WHERE id = $1 AND flow_id IS NOT NULL"
		"  AND state IN ('ready', 'waiting') RETURNING *),"
		" h AS (" JOBQ_HISTORY_ROW_FLOW_SQL("'cancelled'", "d.attempt", "NULL", "d.worker",
											"d.claimed_at", "$2", "d.errors", "NULL")
		"  RETURNING 1)"
		" SELECT d.queue, d.state::text, (SELECT count(*) FROM h) FROM d",
		2, {INT8OID, TIMESTAMPTZOID}},
	[ST_CANCEL_READY_NF] = {"cancel_ready_nf",
		CANCEL_READY_SQL(" AND flow_id IS NULL"),
		2, {INT8OID, TIMESTAMPTZOID}},
	/* as ST_PURGE, forgetting the purged jobs' edges and flow memberships */
	[ST_PURGE_FLOW] = {"purge_flow",
		"WITH d AS (DELETE FROM jobq.history"
		" WHERE queue = $1 AND finished_at <= $2"
		"   AND ($3::text IS NULL OR state = $3::jobq.job_state)"
		" RETURNING queue, state, id, flow_id),"
		JOBQ_FLOW_FORGET_SQL("d")
		" SELECT (SELECT count(*) FROM d)," JOBQ_FINISHED_COUNTS_SQL("d"),
		3, {TEXTOID, TIMESTAMPTZOID, TEXTOID}},
};

static SPIPlanPtr plans[NUM_STATEMENTS];

const JobqStatements jobq_admin_statements = {statements, NUM_STATEMENTS, plans, NULL};

/* columns of JOBQ_REDRIVE_GROUPED_SQL after the three of every re-drive */
#define COL_REDRIVE_ID			4
#define COL_REDRIVE_GROUP_KEY	5
#define COL_REDRIVE_GROUP_SEQ	6

/*
 * redriven_groups
 *	  After a grouped re-drive (the rows of the last statement): the
 *	  grouped jobs among them go back into their groups (groups.c).
 */
static void
redriven_groups(void)
{
	JobqGroupedJob *jobs = palloc(sizeof(JobqGroupedJob) * SPI_processed);
	int			n = 0;

	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Datum		key = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc,
										COL_REDRIVE_GROUP_KEY, &isnull);

		if (isnull)
			continue;
		jobs[n].id = jobq_spi_getint64(i, COL_REDRIVE_ID, &isnull);
		jobs[n].queue = (text *) SPI_datumTransfer(SPI_getbinval(SPI_tuptable->vals[i],
																 SPI_tuptable->tupdesc, 1,
																 &isnull), false, -1);
		jobs[n].key = (text *) SPI_datumTransfer(key, false, -1);
		jobs[n].seq = jobq_spi_getint64(i, COL_REDRIVE_GROUP_SEQ, &isnull);
		n++;
	}
	if (n > 0)
		jobq_groups_redriven(jobs, n);
}

/* The ids the last flow re-drive moved (JOBQ_REDRIVE_FLOW_SQL), or NULL */
static int64 *redriven_ids = NULL;

/*
 * jobq_redriven_ids
 *	  The ids of the jobs the last re-drive of a form that returns them
 *	  (JOBQ_REDRIVE_FLOW_SQL, JOBQ_REDRIVE_GROUPED_SQL) moved, as many as
 *	  jobq_run_redrive returned; NULL after other forms.
 */
int64 *
jobq_redriven_ids(void)
{
	return redriven_ids;
}

/*
 * jobq_run_redrive
 *	  Execute a re-drive plan (a statement ending in JOBQ_REDRIVE_SQL),
 *	  count and announce the jobs it made ready.  Returns how many jobs
 *	  moved.  bulk.c runs its re-drives through it too.
 */
int64
jobq_run_redrive(SPIPlanPtr plan, Datum *values, const char *nulls)
{
	int			rc = SPI_execute_plan(plan, values, nulls, false, 0);
	uint64		moved;

	jobq_spi_check(rc, SPI_OK_SELECT, "retry");
	jobq_count_rows(JOBQ_EV_REDRIVEN, 1, 0, 0);
	moved = SPI_processed;
	redriven_ids = NULL;
	if (moved > 0 && SPI_tuptable->tupdesc->natts >= 4)
	{
		/* JOBQ_REDRIVE_FLOW_SQL: keep the ids, for flows.c */
		redriven_ids = palloc(sizeof(int64) * moved);
		for (uint64 i = 0; i < moved; i++)
		{
			bool		isnull;

			redriven_ids[i] = jobq_spi_getint64(i, 4, &isnull);
		}
	}
	for (uint64 i = 0; i < moved; i++)
	{
		bool		isnull;
		TimestampTz now = jobq_now();

		text	   *queue = DatumGetTextPP(SPI_getbinval(SPI_tuptable->vals[i],
															 SPI_tuptable->tupdesc, 1, &isnull));

		jobq_announce_ready(queue, 1, now, now,
							jobq_spi_getbool(i, 2, &isnull), !jobq_spi_getbool(i, 3, &isnull));
	}
	if (moved > 0 && SPI_tuptable->tupdesc->natts > COL_REDRIVE_GROUP_KEY)
		redriven_groups();
	return (int64) moved;
}

/*
 * jobq_retry(id bigint) -> boolean
 *	  Re-drive one dead job.  false when the job is not dead, or when a
 *	  live job now holds its dedupe key (it then stays dead).
 */
static bool
retry_one(FunctionCallInfo fcinfo, bool with_dependents)
{
	Datum		values[2];
	int64		moved;
	bool		flows;

	jobq_require(fcinfo, 0, "id");
	values[0] = PG_GETARG_DATUM(0);
	values[1] = TimestampTzGetDatum(jobq_now());

	jobq_spi_connect();
	jobq_check_job(values[0], JOBQ_PRIV_ADMIN);
	flows = jobq_flows_available();
	moved = jobq_run_redrive(jobq_plan(&jobq_admin_statements,
									   jobq_any_grouped_queue() ? ST_RETRY_JOB_GROUPED :
									   flows ? ST_RETRY_JOB_FLOW : ST_RETRY_JOB),
							 values, NULL);
	if (moved > 0 && flows)
		(void) jobq_flow_redriven(DatumGetInt64(values[0]), with_dependents,
								  DatumGetTimestampTz(values[1]));
	jobq_audit_record("retry", NULL, jobq_audit_id_array(values[0]), NULL, moved,
					  "with_dependents", with_dependents ? "true" : NULL, NULL);
	jobq_spi_finish();
	return moved > 0;
}

Datum
jobq_retry(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(retry_one(fcinfo, false));
}

/*
 * jobq_retry(id bigint, with_dependents boolean) -> boolean
 *	  (C name jobq_retry_0_2)
 *	  0.2.0: as jobq_retry(id); a job in a flow also takes back the edges
 *	  its failure blocked, and with with_dependents the dependents its
 *	  failure cancelled come back waiting (flows.c, jobq_flow_redriven).
 */
Datum
jobq_retry_0_2(PG_FUNCTION_ARGS)
{
	jobq_require(fcinfo, 1, "with_dependents");
	PG_RETURN_BOOL(retry_one(fcinfo, PG_GETARG_BOOL(1)));
}

/*
 * require_queue_exists
 *	  42704 for an unknown queue (operator calls name existing queues),
 *	  42501 unless the caller holds admin on it (grants.c).
 */
static void
require_queue_exists(text *queue)
{
	JobqQueueSettings settings;

	if (!jobq_queue_settings(queue, &settings))
		jobq_queue_not_found(queue);
	jobq_check_queue(queue, JOBQ_PRIV_ADMIN);
}

/*
 * jobq_retry(queue text) -> bigint  (C name jobq_retry_queue)
 *	  Re-drive every dead job of a queue; returns how many moved.  Rows
 *	  another session is handling are skipped, not waited for.
 */
Datum
jobq_retry_queue(PG_FUNCTION_ARGS)
{
	text	   *queue = jobq_queue_arg(fcinfo, 0);
	Datum		values[2];
	int64		moved;
	bool		flows;

	values[0] = PointerGetDatum(queue);
	values[1] = TimestampTzGetDatum(jobq_now());

	jobq_spi_connect();
	require_queue_exists(queue);
	flows = jobq_flows_available();
	moved = jobq_run_redrive(jobq_plan(&jobq_admin_statements,
									   jobq_any_grouped_queue() ? ST_RETRY_QUEUE_GROUPED :
									   flows ? ST_RETRY_QUEUE_FLOW : ST_RETRY_QUEUE),
							 values, NULL);
	/* jobs of flows among them: their blocked edges wait again */
	if (flows && redriven_ids != NULL)
		jobq_flow_redriven_many(redriven_ids, moved, DatumGetTimestampTz(values[1]));
	jobq_audit_record("retry_queue", queue, (Datum) 0, NULL, moved, NULL);
	jobq_spi_finish();
	PG_RETURN_INT64(moved);
}

/*
 * cancel_flow_job
 *	  Cancel a ready or waiting job of a flow (values as in jobq_cancel),
 *	  and apply its dependents' policies (flows.c).  Returns whether it
 *	  did; a job outside flows is left to the statements of jobq_cancel.
 */
static bool
cancel_flow_job(Datum *values)
{
	int			rc;
	bool		isnull;
	text	   *queue;
	char	   *was;

	rc = SPI_execute_plan(jobq_plan(&jobq_admin_statements, ST_CANCEL_FLOW),
						  values, NULL, false, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "cancel job of a flow");
	jobq_finished_rows(JOBQ_AWAIT_CANCELLED, 0, DatumGetInt64(values[0]), 1);
	if (SPI_processed == 0)
		return false;
	queue = DatumGetTextPP(SPI_datumTransfer(SPI_getbinval(SPI_tuptable->vals[0],
														   SPI_tuptable->tupdesc, 1, &isnull),
											 false, -1));
	was = TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2,
											&isnull));
	jobq_count(queue, strcmp(was, "waiting") == 0 ? JOBQ_EV_CANCELLED_WAITING :
			   JOBQ_EV_CANCELLED_READY, 1);
	jobq_await_note(DatumGetInt64(values[0]), JOBQ_AWAIT_CANCELLED,
					DatumGetTimestampTz(values[1]), NULL);
	jobq_flow_failed(DatumGetInt64(values[0]), "cancelled", NULL,
					 DatumGetTimestampTz(values[1]));
	return true;
}

/*
 * cancel_live
 *	  Cancel the job if it is ready (or, in a flow, waiting); values are
 *	  ($1 id, $2 now).  Returns whether it did.
 */
static bool
cancel_live(Datum *values)
{
	bool		flows = jobq_flows_available();
	bool		done;
	int			rc;

	rc = SPI_execute_plan(jobq_plan(&jobq_admin_statements,
									flows ? ST_CANCEL_READY_NF : ST_CANCEL_READY),
						  values, NULL, false, 0);
	jobq_spi_check(rc, SPI_OK_INSERT_RETURNING, "cancel ready job");
	jobq_count_rows(JOBQ_EV_CANCELLED_READY, 1, 0, 0);
	jobq_finished_rows(JOBQ_AWAIT_CANCELLED, 0, DatumGetInt64(values[0]), 1);
	done = SPI_processed > 0;
	if (done)
		jobq_await_note(DatumGetInt64(values[0]), JOBQ_AWAIT_CANCELLED,
						DatumGetTimestampTz(values[1]), NULL);
	else if (flows)
		done = cancel_flow_job(values);
	return done;
}

/*
 * jobq_cancel(id) -> boolean
 *	  A ready (or delayed) job, or a dead one, becomes cancelled.  A
 *	  running job cannot be cancelled (its worker holds it): false, as for
 *	  an unknown or already finished job.  Cancelled jobs are kept for the
 *	  queue's completed_retention.
 */
Datum
jobq_cancel(PG_FUNCTION_ARGS)
{
	Datum		values[2];
	bool		done;
	int			rc;

	jobq_require(fcinfo, 0, "id");
	values[0] = PG_GETARG_DATUM(0);
	values[1] = TimestampTzGetDatum(jobq_now());

	jobq_spi_connect();
	jobq_check_job(values[0], JOBQ_PRIV_ADMIN);
	done = jobq_cancel_if_ready(values[0]);
	if (!done)
	{
		rc = SPI_execute_plan(jobq_plan(&jobq_admin_statements, ST_CANCEL_DEAD),
							  values, NULL, false, 0);
		jobq_spi_check(rc, SPI_OK_UPDATE_RETURNING, "cancel dead job");
		jobq_count_rows(JOBQ_EV_CANCELLED_DEAD, 1, 0, 0);
		done = SPI_processed > 0;
		if (done && jobq_any_grouped_queue())
			jobq_groups_unblock_gone(jobq_audit_id_array(values[0]));
	}
	jobq_audit_record("cancel", NULL, jobq_audit_id_array(values[0]), NULL, done ? 1 : 0, NULL);
	jobq_spi_finish();
	PG_RETURN_BOOL(done);
}

/*
 * jobq_cancel_flow(flow_id bigint) -> bigint
 *	  Cancel every ready and waiting job of a flow (running ones finish;
 *	  what they would have readied is cancelled with the rest, or by its
 *	  policy when they end); returns how many jobs were cancelled.
 */
Datum
jobq_cancel_flow(PG_FUNCTION_ARGS)
{
	int64		flow;
	int64	   *ids;
	int			n;
	int			left;
	Datum		values[2];

	jobq_require(fcinfo, 0, "flow_id");
	flow = PG_GETARG_INT64(0);
	values[1] = TimestampTzGetDatum(jobq_now());

	jobq_spi_connect();
	ids = jobq_flow_live_jobs(flow, &n);
	for (int i = 0; i < n; i++)
		jobq_check_job(Int64GetDatum(ids[i]), JOBQ_PRIV_ADMIN);
	/* a cancel cascades to the waiting jobs behind it: fewer calls than jobs */
	for (int i = 0; i < n; i++)
	{
		values[0] = Int64GetDatum(ids[i]);
		(void) cancel_live(values);
	}
	(void) jobq_flow_live_jobs(flow, &left);
	jobq_audit_record("cancel_flow", NULL, (Datum) 0, NULL, n - left,
					  "flow_id", psprintf(INT64_FORMAT, flow), NULL);
	jobq_spi_finish();
	PG_RETURN_INT64(n - left);
}

/*
 * jobq_cancel_if_ready
 *	  Cancel the job if it is still ready (await's cancel_on_timeout): the
 *	  statement of jobq_cancel, inside SPI, privileges checked by the
 *	  caller.  A claim that took the job first wins.
 */
bool
jobq_cancel_if_ready(Datum id)
{
	Datum		values[2] = {id, TimestampTzGetDatum(jobq_now())};
	JobqGroupedJob group_job;
	bool		grouped = jobq_any_grouped_queue() &&
		jobq_grouped_job(id, (Datum) 0, &group_job);

	if (!cancel_live(values))
		return false;
	if (grouped)
		jobq_group_changed(&group_job, JOBQ_GROUP_READY_GONE, DatumGetTimestampTz(values[1]));
	return true;
}

/*
 * jobq_purge(queue, state, older_than) -> bigint
 *	  Delete finished jobs of a queue (completed, dead and cancelled, or
 *	  only the given state) that finished at least older_than ago.  Live
 *	  jobs are never purged: cancel them first.
 */
Datum
jobq_purge(PG_FUNCTION_ARGS)
{
	text	   *queue = jobq_queue_arg(fcinfo, 0);
	Datum		values[3];
	char	   *state = NULL;
	Interval   *older_than;
	int64		purged;
	int			rc;

	if (!PG_ARGISNULL(1))
	{
		bool		finished = false;

		state = text_to_cstring(PG_GETARG_TEXT_PP(1));
		for (int i = 0; i < lengthof(finished_states); i++)
			finished |= strcmp(state, finished_states[i]) == 0;
		if (!finished)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("cannot purge jobs in state \"%s\"", state),
					 errhint("Purge takes %s; cancel live jobs first.",
							 jobq_name_list(finished_states, lengthof(finished_states), "or"))));
	}
	jobq_require(fcinfo, 2, "older_than");
	older_than = PG_GETARG_INTERVAL_P(2);
	older_than = jobq_check_interval(older_than, "older_than", 0, JOBQ_RETENTION_MAX_USECS);

	values[0] = PointerGetDatum(queue);
	values[1] = TimestampTzGetDatum(jobq_add_interval(jobq_now(),
													  DatumGetIntervalP(DirectFunctionCall1(interval_um,
																							IntervalPGetDatum(older_than)))));
	values[2] = state ? CStringGetTextDatum(state) : (Datum) 0;

	jobq_spi_connect();
	require_queue_exists(queue);
	rc = SPI_execute_plan(jobq_plan(&jobq_admin_statements,
									jobq_flows_available() ? ST_PURGE_FLOW : ST_PURGE),
						  values, state ? NULL : "  n", false, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "purge");
	{
		bool		isnull;

		purged = jobq_spi_getint64(0, 1, &isnull);
	}
	jobq_count_purged(2, 3, 4);
	jobq_audit_record("purge", queue, (Datum) 0, NULL, purged, "state", state,
					  "older_than", DatumGetCString(DirectFunctionCall1(interval_out,
																		IntervalPGetDatum(older_than))),
					  NULL);
	jobq_spi_finish();
	PG_RETURN_INT64(purged);
}
