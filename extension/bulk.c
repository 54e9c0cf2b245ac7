/*-------------------------------------------------------------------------
 *
 * bulk.c
 *	  Bulk actions on jobs chosen by id: jobq_retry_many (dead -> ready),
 *	  jobq_cancel_many (ready or dead -> cancelled), jobq_delete_many
 *	  (finished jobs deleted) and jobq_run_now_many (delayed -> due now);
 *	  and the same chosen by filter, page by page: jobq_retry_where,
 *	  jobq_cancel_where, jobq_delete_where, jobq_run_now_where.
 *
 * Each call is one bounded piece of work (at most JOBQ_BULK_MAX ids), so
 * that an operator acting on a million jobs runs many short transactions,
 * never one that holds locks and an old snapshot for minutes: a client
 * loops, one call per transaction, and can stop at any time.  Every call
 * is idempotent: a job already in the target state is not in a state the
 * action takes, and is left alone, so running the same call again changes
 * nothing more.  Rows another session holds (a worker claiming or
 * completing the job, another bulk action) are skipped with SKIP LOCKED,
 * never waited for: a bulk action never queues behind a worker, and never
 * deadlocks with one (rows are locked in id order, as the claim and sweep
 * do).  A job that a worker is completing while a retry runs therefore
 * ends either completed (the worker locked it first: it is running, not
 * dead, and the retry skips it) or retried, never both
 * (specs/iso_bulk_retry_vs_complete.spec).
 *
 * The filter forms take the jobs that jobq_list would list for the same
 * queue, state and filters (list_filter.h: the same filters, indexes and
 * scan cap, the same inspect and jobq_reader checks), a page of at most
 * max_rows from a cursor, and act on them as the id forms do.  They return
 * (affected, more, next_cursor): a caller loops, passing next_cursor back,
 * while more, one call per transaction.  The cursor moves past every job
 * of a page, so a loop ends; a job another session held when its page was
 * acted on stays as it was (run the loop again for those).
 *
 * The id forms return (affected, skipped): affected the jobs changed, skipped the
 * distinct ids left as they were, because they are unknown, not in a
 * state the action takes, held by another session at that moment, or
 * (retry) because a live job holds their dedupe key.  Jobs made ready are
 * announced (wake.c), so a waiting claim wakes for them.  Each call needs
 * admin on every queue its jobs are in (grants.c) and writes one row of
 * the audit trail (audit.c).
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/bulk.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"
#include "groups.h"
#include "counters.h"
#include "jobq_sql.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

PG_FUNCTION_INFO_V1(jobq_retry_many);
PG_FUNCTION_INFO_V1(jobq_cancel_many);
PG_FUNCTION_INFO_V1(jobq_delete_many);
PG_FUNCTION_INFO_V1(jobq_run_now_many);
PG_FUNCTION_INFO_V1(jobq_retry_where);
PG_FUNCTION_INFO_V1(jobq_cancel_where);
PG_FUNCTION_INFO_V1(jobq_delete_where);
PG_FUNCTION_INFO_V1(jobq_run_now_where);

/*
 * The candidates of an id-form action: the jobs of TABLE among the ids $1
 * in state STATE (and COND), locked in id order with LOCK, skipping those
 * another session holds.
 */
#define BY_IDS_SQL(TABLE, STATE_COND, LOCK) \
	"SELECT id FROM " TABLE " WHERE id = ANY ($1) AND " STATE_COND \
	" ORDER BY id FOR " LOCK " SKIP LOCKED"
/* the same as CTE c, the start of every id-form statement */
#define BY_IDS_WITH(TABLE, STATE_COND, LOCK) "WITH c AS (" BY_IDS_SQL(TABLE, STATE_COND, LOCK) "),"

/*
 * The actions, each on the jobs of CTE c, $2 now.  The cancels return one
 * row per job changed (queue, id: counters.c counts them, await.c tells
 * who awaits them), the deletion its count and the per-(queue, state)
 * arrays of JOBQ_FINISHED_COUNTS_SQL, the run-now one row per queue (the
 * queue, how many of its jobs, whether to NOTIFY it and whether it is
 * paused, for wake.c), the re-drive the rows jobq_run_redrive reads.
 */
#define CANCEL_READY_SQL \
	" d AS (DELETE FROM jobq.jobs j WHERE j.id = ANY (ARRAY(SELECT c.id FROM c))" \
	"   AND j.state = 'ready' RETURNING j.*)," \
	" h AS (" JOBQ_HISTORY_ROW_SQL("'cancelled'", "d.attempt", "NULL", "d.worker", \
								   "d.claimed_at", "$2", "d.errors", "NULL") \
	"  RETURNING queue, id)" \
	" SELECT h.queue, h.id FROM h"

/*
 * Flows (0.2.0's SQL): the cancel takes waiting jobs too (as jobq_cancel
 * does), keeps flow_id in history and returns each job's flow_id and
 * whether it was waiting, so that the dependents of the jobs of flows are
 * resolved in the same transaction (flows.c).  As in admin.c, a child
 * enqueued meanwhile sets its parent's flow_id under the row lock that CTE
 * c takes, which the DELETE then reads.
 */
#define CANCEL_LIVE_FLOW_SQL \
	" d AS (DELETE FROM jobq.jobs j WHERE j.id = ANY (ARRAY(SELECT c.id FROM c))" \
	"   AND j.state IN ('ready', 'waiting') RETURNING j.*)," \
	" h AS (" JOBQ_HISTORY_ROW_FLOW_SQL("'cancelled'", "d.attempt", "NULL", "d.worker", \
										"d.claimed_at", "$2", "d.errors", "NULL") ")" \
	" SELECT d.queue, d.id, d.flow_id, d.state = 'waiting' FROM d"

/*
 * Flows: a deletion also forgets the deleted jobs' own edges and flow
 * memberships (JOBQ_FLOW_FORGET_SQL); the edges on which they are the
 * parent stay, with the outcome their children read.
 */
#define DELETE_FLOW_SQL \
	" d AS (DELETE FROM jobq.history h WHERE h.id = ANY (ARRAY(SELECT c.id FROM c))" \
	"  RETURNING h.queue, h.state, h.id, h.flow_id)," \
	JOBQ_FLOW_FORGET_SQL("d") \
	" SELECT (SELECT count(*) FROM d)," JOBQ_FINISHED_COUNTS_SQL("d")

#define CANCEL_DEAD_SQL \
	" u AS (UPDATE jobq.history h SET state = 'cancelled', finished_at = $2" \
	"  WHERE h.id = ANY (ARRAY(SELECT c.id FROM c)) RETURNING h.queue, h.id)" \
	" SELECT u.queue, u.id FROM u"

#define DELETE_SQL \
	" d AS (DELETE FROM jobq.history h WHERE h.id = ANY (ARRAY(SELECT c.id FROM c))" \
	"  RETURNING h.queue, h.state)" \
	" SELECT (SELECT count(*) FROM d)," JOBQ_FINISHED_COUNTS_SQL("d")

#define RUN_NOW_SQL \
	" u AS (UPDATE jobq.jobs j SET run_at = $2" \
	"  WHERE j.id = ANY (ARRAY(SELECT c.id FROM c)) AND j.state = 'ready' AND j.run_at > $2" \
	"  RETURNING j.queue)" \
	" SELECT u.queue, count(*), q.notify AND NOT q.paused, q.paused" \
	" FROM u JOIN jobq.queues q ON q.name = u.queue GROUP BY u.queue, q.notify, q.paused"

enum
{
	ST_RETRY_IDS,
	ST_RETRY_IDS_GROUPED,
	ST_CANCEL_READY_IDS,
	ST_CANCEL_DEAD_IDS,
	ST_DELETE_IDS,
	ST_RUN_NOW_IDS,
	ST_LIST_PAGE,
	/* flows (0.2.0's SQL) */
	ST_RETRY_IDS_FLOW,
	ST_CANCEL_LIVE_IDS_FLOW,
	ST_DELETE_IDS_FLOW,
	NUM_STATEMENTS
};

#define COL_PAGE_ID			1
#define COL_PAGE_CURSOR		2

static void build_statements(void);

/* columns of the per-queue rows (run now) */
#define COL_QUEUE			1
#define COL_COUNT			2
#define COL_NOTIFY			3
#define COL_PAUSED			4
/* of the per-job rows (cancels) */
#define COL_JOB_QUEUE		1
#define COL_JOB_ID			2
/* and with flows */
#define COL_JOB_FLOW_ID		3
#define COL_JOB_WAITING		4
/* of the deletion's row */
#define COL_DELETED			1
#define COL_DELETED_QUEUES	2

static JobqStatement statements[NUM_STATEMENTS] = {
	/* $1 ids, $2 now */
	[ST_RETRY_IDS] = {"retry_many",
		BY_IDS_WITH("jobq.history", "state = 'dead'", "UPDATE")
		JOBQ_REDRIVE_SQL,
		2, {INT8ARRAYOID, TIMESTAMPTZOID}},
	[ST_RETRY_IDS_GROUPED] = {"retry_many_grouped",
		BY_IDS_WITH("jobq.history", "state = 'dead'", "UPDATE")
		JOBQ_REDRIVE_GROUPED_SQL,
		2, {INT8ARRAYOID, TIMESTAMPTZOID}},
	[ST_CANCEL_READY_IDS] = {"cancel_many_ready",
		BY_IDS_WITH("jobq.jobs", "state = 'ready'", "UPDATE")
		CANCEL_READY_SQL,
		2, {INT8ARRAYOID, TIMESTAMPTZOID}},
	[ST_CANCEL_DEAD_IDS] = {"cancel_many_dead",
		BY_IDS_WITH("jobq.history", "state = 'dead'", "UPDATE")
		CANCEL_DEAD_SQL,
		2, {INT8ARRAYOID, TIMESTAMPTZOID}},
	/* $1 ids ($2 now is unused but keeps one argument list for all) */
	[ST_DELETE_IDS] = {"delete_many",
		BY_IDS_WITH("jobq.history", "$2 IS NOT NULL", "UPDATE")
		DELETE_SQL,
		2, {INT8ARRAYOID, TIMESTAMPTZOID}},
	[ST_RUN_NOW_IDS] = {"run_now_many",
		BY_IDS_WITH("jobq.jobs", "state = 'ready' AND run_at > $2", "NO KEY UPDATE")
		RUN_NOW_SQL,
		2, {INT8ARRAYOID, TIMESTAMPTZOID}},

	/*
	 * $1 queue, $2 state, $3 max_rows, $4 cursor, $5 filters: the ids of a
	 * page of jobq_list and its next_cursor (a page without jobs is one row
	 * with a NULL id).  Made by build_statements: the function is called in
	 * the extension's schema.
	 */
	[ST_LIST_PAGE] = {"bulk_list_page", NULL,
		5, {TEXTOID, TEXTOID, INT4OID, TEXTOID, JSONBOID}},
	/* flows: $1 ids, $2 now, as above */
	[ST_RETRY_IDS_FLOW] = {"retry_many_flow",
		BY_IDS_WITH("jobq.history", "state = 'dead'", "UPDATE")
		JOBQ_REDRIVE_FLOW_SQL,
		2, {INT8ARRAYOID, TIMESTAMPTZOID}},
	[ST_CANCEL_LIVE_IDS_FLOW] = {"cancel_many_live_flow",
		BY_IDS_WITH("jobq.jobs", "state IN ('ready', 'waiting')", "UPDATE")
		CANCEL_LIVE_FLOW_SQL,
		2, {INT8ARRAYOID, TIMESTAMPTZOID}},
	[ST_DELETE_IDS_FLOW] = {"delete_many_flow",
		BY_IDS_WITH("jobq.history", "$2 IS NOT NULL", "UPDATE")
		DELETE_FLOW_SQL,
		2, {INT8ARRAYOID, TIMESTAMPTZOID}},
};

static SPIPlanPtr plans[NUM_STATEMENTS];

const JobqStatements jobq_bulk_statements = {statements, NUM_STATEMENTS, plans,
	build_statements};

/*
 * build_statements
 *	  The text of the page statement, with the extension's schema (quoted)
 *	  as the one piece only known at run time; made once per backend.
 *	  jobq_list is found by its schema, never through search_path.
 */
static void
build_statements(void)
{
	char	   *schema;
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;
	Oid			nsp = InvalidOid;

	if (statements[ST_LIST_PAGE].sql != NULL)
		return;
	/* pg_extension's extnamespace (PostgreSQL 15 exports no look-up) */
	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber, F_NAMEEQ,
				CStringGetDatum("jobq"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
		nsp = ((Form_pg_extension) GETSTRUCT(tuple))->extnamespace;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	if (!OidIsValid(nsp))
		elog(ERROR, "jobq: extension jobq not found");
	schema = get_namespace_name(nsp);
	statements[ST_LIST_PAGE].sql =
		MemoryContextStrdup(TopMemoryContext,
							psprintf("SELECT l.id, l.next_cursor FROM %s.jobq_list($1, $2, $3, $4, $5) l",
									 quote_identifier(schema)));
}

static int
cmp_int64(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return (x > y) - (x < y);
}

/*
 * ids_arg
 *	  The ids argument (argument 0) of an id-form action: a one-dimensional
 *	  bigint[] of at most JOBQ_BULK_MAX elements without NULLs (22004),
 *	  possibly empty.  *ndistinct receives how many distinct ids it holds.
 */
static Datum
ids_arg(FunctionCallInfo fcinfo, int64 *ndistinct)
{
	ArrayType  *ids;
	Datum	   *items;
	bool	   *nulls;
	int64	   *sorted;
	int			n;

	jobq_require(fcinfo, 0, "ids");
	ids = PG_GETARG_ARRAYTYPE_P(0);
	if (ARR_NDIM(ids) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("ids must be a one-dimensional array")));
	deconstruct_array(ids, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &items, &nulls, &n);
	if (n > JOBQ_BULK_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ids must hold at most %d jobs, not %d", JOBQ_BULK_MAX, n),
				 errhint("Act on the jobs in batches, one call per transaction.")));
	sorted = palloc(sizeof(int64) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("ids must not contain nulls")));
		sorted[i] = DatumGetInt64(items[i]);
	}
	qsort(sorted, n, sizeof(int64), cmp_int64);
	*ndistinct = 0;
	for (int i = 0; i < n; i++)
		if (i == 0 || sorted[i] != sorted[i - 1])
			(*ndistinct)++;
	pfree(sorted);
	return PointerGetDatum(ids);
}

/*
 * run_now
 *	  Execute the run-now plan (one row per queue) and return how many jobs
 *	  it made due; tell waiting claims and listeners of each queue.
 */
static int64
run_now(Datum *values)
{
	int			rc = SPI_execute_plan(jobq_plan(&jobq_bulk_statements, ST_RUN_NOW_IDS), values,
									  NULL, false, 0);
	TimestampTz now = DatumGetTimestampTz(values[1]);
	int64		total = 0;

	jobq_spi_check(rc, SPI_OK_SELECT, "bulk run now");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		int64		n = jobq_spi_getint64(i, COL_COUNT, &isnull);
		text	   *queue = DatumGetTextPP(SPI_getbinval(SPI_tuptable->vals[i],
														 SPI_tuptable->tupdesc, COL_QUEUE, &isnull));

		total += n;
		jobq_announce_ready(queue, n, now, now, jobq_spi_getbool(i, COL_NOTIFY, &isnull),
							jobq_spi_getbool(i, COL_PAUSED, &isnull));
	}
	return total;
}

/*
 * Which id-form action a call is
 */
typedef enum BulkAction
{
	BULK_RETRY,
	BULK_CANCEL,
	BULK_DELETE,
	BULK_RUN_NOW
} BulkAction;

static const char *const action_names[] = {
	[BULK_RETRY] = "retry_many",
	[BULK_CANCEL] = "cancel_many",
	[BULK_DELETE] = "delete_many",
	[BULK_RUN_NOW] = "run_now_many",
};

static const char *const where_names[] = {
	[BULK_RETRY] = "retry_where",
	[BULK_CANCEL] = "cancel_where",
	[BULK_DELETE] = "delete_where",
	[BULK_RUN_NOW] = "run_now_where",
};

/*
 * The states each filter form takes, as jobq_list names them, and the
 * state it lists when none is given (NULL: every state, the action then
 * passing over those it does not take).
 */
static const char *const retry_states[] = {"dead"};
static const char *const cancel_states[] = {"ready", "delayed", "waiting", "dead"};
static const char *const delete_states[] = {"completed", "dead", "cancelled"};
static const char *const run_now_states[] = {"delayed"};

static const struct
{
	const char *const *states;
	int			nstates;
	const char *dflt;
}			where_states[] = {
	[BULK_RETRY] = {retry_states, lengthof(retry_states), "dead"},
	[BULK_CANCEL] = {cancel_states, lengthof(cancel_states), NULL},
	[BULK_DELETE] = {delete_states, lengthof(delete_states), NULL},
	[BULK_RUN_NOW] = {run_now_states, lengthof(run_now_states), "delayed"},
};

/*
 * run_cancel
 *	  Execute a cancel plan (one row per job cancelled), count the jobs as
 *	  event and, for ready jobs, tell whoever awaits them; returns how many.
 */
static int64
run_cancel(int st, Datum *values, JobqCountEvent event)
{
	int			rc = SPI_execute_plan(jobq_plan(&jobq_bulk_statements, st), values, NULL,
									  false, 0);

	jobq_spi_check(rc, SPI_OK_SELECT, "bulk cancel");
	jobq_count_rows(event, COL_JOB_QUEUE, 0, 0);
	if (event == JOBQ_EV_CANCELLED_READY)
		jobq_finished_rows(JOBQ_AWAIT_CANCELLED, COL_JOB_ID, 0, COL_JOB_QUEUE);
	if (event == JOBQ_EV_CANCELLED_READY)
		for (uint64 i = 0; i < SPI_processed; i++)
		{
			bool		isnull;

			jobq_await_note(jobq_spi_getint64(i, COL_JOB_ID, &isnull), JOBQ_AWAIT_CANCELLED,
							DatumGetTimestampTz(values[1]), NULL);
		}
	return (int64) SPI_processed;
}

/*
 * run_cancel_flow
 *	  With flows: execute the cancel of ready and waiting jobs, count each
 *	  as the state it left, tell whoever awaits them, and resolve the
 *	  dependents of the jobs of flows among them; returns how many.
 */
static int64
run_cancel_flow(Datum *values)
{
	TimestampTz now = DatumGetTimestampTz(values[1]);
	int			rc = SPI_execute_plan(jobq_plan(&jobq_bulk_statements, ST_CANCEL_LIVE_IDS_FLOW),
									  values, NULL, false, 0);
	uint64		n;

	jobq_spi_check(rc, SPI_OK_SELECT, "bulk cancel");
	n = SPI_processed;
	jobq_finished_rows(JOBQ_AWAIT_CANCELLED, COL_JOB_ID, 0, COL_JOB_QUEUE);
	for (uint64 i = 0; i < n; i++)
	{
		bool		isnull;
		text	   *queue = DatumGetTextPP(SPI_getbinval(SPI_tuptable->vals[i],
															 SPI_tuptable->tupdesc, COL_JOB_QUEUE,
															 &isnull));

		jobq_count(queue, jobq_spi_getbool(i, COL_JOB_WAITING, &isnull) ?
				   JOBQ_EV_CANCELLED_WAITING : JOBQ_EV_CANCELLED_READY, 1);
		jobq_await_note(jobq_spi_getint64(i, COL_JOB_ID, &isnull), JOBQ_AWAIT_CANCELLED, now,
						NULL);
	}
	jobq_flow_resolve_rows(COL_JOB_ID, COL_JOB_FLOW_ID, "cancelled", false, now);
	return (int64) n;
}

/*
 * groups_after_bulk
 *	  After a bulk action while some queue groups its jobs: the groups of
 *	  the live grouped jobs among the ids (read before it) read their heads
 *	  again (cancelled, or due sooner), and groups that a dead job among the
 *	  ids blocked, and that it no longer blocks (cancelled, deleted), run
 *	  again.  Re-driven jobs went back into their groups already
 *	  (jobq_run_redrive).
 */
static void
groups_after_bulk(JobqGroupedJob *jobs, int n, Datum *values)
{
	JobqGroupChange *changes = palloc(sizeof(JobqGroupChange) * Max(n, 1));

	for (int i = 0; i < n; i++)
		changes[i] = JOBQ_GROUP_READY_GONE;
	jobq_groups_changed(jobs, changes, n, DatumGetTimestampTz(values[1]));
	jobq_groups_unblock_gone(values[0]);
	pfree(changes);
}

/*
 * act
 *	  Run action on the jobs among values[0] (an int8[]), values[1] being
 *	  now; returns how many changed.  Inside SPI.
 */
static int64
act(BulkAction action, Datum *values)
{
	int64		affected = 0;
	bool		isnull;
	int			rc;
	bool		grouped = jobq_any_grouped_queue();
	JobqGroupedJob *group_jobs = NULL;
	int			ngroup_jobs = grouped ? jobq_grouped_jobs(values[0], &group_jobs) : 0;
	bool		flows = jobq_flows_available();

	switch (action)
	{
		case BULK_RETRY:
			affected = jobq_run_redrive(jobq_plan(&jobq_bulk_statements,
												  grouped ? ST_RETRY_IDS_GROUPED :
												  flows ? ST_RETRY_IDS_FLOW : ST_RETRY_IDS),
										values, NULL);
			/* the edges that the re-driven jobs' failures blocked wait again */
			if (flows && affected > 0 && jobq_redriven_ids() != NULL)
				jobq_flow_redriven_many(jobq_redriven_ids(), affected,
										DatumGetTimestampTz(values[1]));
			break;
		case BULK_CANCEL:
			if (flows)
				affected = run_cancel_flow(values);
			else
				affected = run_cancel(ST_CANCEL_READY_IDS, values, JOBQ_EV_CANCELLED_READY);
			affected += run_cancel(ST_CANCEL_DEAD_IDS, values, JOBQ_EV_CANCELLED_DEAD);
			break;
		case BULK_DELETE:
			rc = SPI_execute_plan(jobq_plan(&jobq_bulk_statements,
											flows ? ST_DELETE_IDS_FLOW : ST_DELETE_IDS), values,
								  NULL, false, 0);
			jobq_spi_check(rc, SPI_OK_SELECT, "bulk delete");
			affected = jobq_spi_getint64(0, COL_DELETED, &isnull);
			jobq_count_purged(COL_DELETED_QUEUES, COL_DELETED_QUEUES + 1, COL_DELETED_QUEUES + 2);
			break;
		case BULK_RUN_NOW:
			affected = run_now(values);
			break;
	}
	if (grouped)
		groups_after_bulk(group_jobs, ngroup_jobs, values);
	return affected;
}

/*
 * by_ids
 *	  The body of the id forms: check, act, audit, return (affected,
 *	  skipped).
 */
static Datum
by_ids(FunctionCallInfo fcinfo, BulkAction action)
{
	int64		ndistinct;
	int64		affected = 0;
	Datum		values[2];
	Datum		out[2];
	bool		out_nulls[2] = {false, false};
	TupleDesc	desc;
	Tuplestorestate *store;
	text	   *queue = NULL;

	values[0] = ids_arg(fcinfo, &ndistinct);
	values[1] = TimestampTzGetDatum(jobq_now());

	store = jobq_srf_begin(fcinfo, &desc);
	jobq_spi_connect();
	jobq_check_any_jobs(values[0], JOBQ_PRIV_ADMIN);
	/* deleted jobs leave no row the record could find their queue by */
	if (action == BULK_DELETE)
		queue = jobq_audit_queue_of(values[0]);
	if (ndistinct > 0)
		affected = act(action, values);
	jobq_audit_record(action_names[action], queue, values[0], NULL, affected, NULL);

	out[0] = Int64GetDatum(affected);
	out[1] = Int64GetDatum(ndistinct - affected);
	tuplestore_putvalues(store, desc, out, out_nulls);
	jobq_spi_finish();
	return (Datum) 0;
}

/*
 * jobq_retry_many(ids bigint[]) -> (affected, skipped)
 *	  Dead jobs among ids back to ready, attempts back to 0 (as jobq_retry).
 */
Datum
jobq_retry_many(PG_FUNCTION_ARGS)
{
	return by_ids(fcinfo, BULK_RETRY);
}

/*
 * jobq_cancel_many(ids bigint[]) -> (affected, skipped)
 *	  Ready (or delayed) and dead jobs among ids to cancelled (as
 *	  jobq_cancel); running jobs stay with their workers.
 */
Datum
jobq_cancel_many(PG_FUNCTION_ARGS)
{
	return by_ids(fcinfo, BULK_CANCEL);
}

/*
 * jobq_delete_many(ids bigint[]) -> (affected, skipped)
 *	  Finished jobs (completed, dead, cancelled) among ids deleted; live
 *	  jobs are never deleted (cancel them first).
 */
Datum
jobq_delete_many(PG_FUNCTION_ARGS)
{
	return by_ids(fcinfo, BULK_DELETE);
}

/*
 * jobq_run_now_many(ids bigint[]) -> (affected, skipped)
 *	  Delayed jobs among ids (ready with run_at in the future: scheduled,
 *	  or waiting out a retry's backoff) become due now.
 */
Datum
jobq_run_now_many(PG_FUNCTION_ARGS)
{
	return by_ids(fcinfo, BULK_RUN_NOW);
}

/*
 * state_arg
 *	  The state argument (1) of a filter form: NULL or one the action takes
 *	  (22023 otherwise); *list_state receives the state to list.
 */
static char *
state_arg(FunctionCallInfo fcinfo, BulkAction action, const char **list_state)
{
	char	   *state;

	*list_state = where_states[action].dflt;
	if (PG_ARGISNULL(1))
		return NULL;
	state = text_to_cstring(PG_GETARG_TEXT_PP(1));
	for (int i = 0; i < where_states[action].nstates; i++)
		if (strcmp(state, where_states[action].states[i]) == 0)
		{
			*list_state = where_states[action].states[i];
			return state;
		}
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("%s does not take jobs in state \"%s\"", where_names[action], state),
			 errhint("It takes %s, or NULL for all of them.",
					 jobq_name_list(where_states[action].states, where_states[action].nstates,
									"or"))));
	return NULL;				/* keep the compiler quiet */
}

/*
 * by_filter
 *	  The body of the filter forms (queue, state, filters, max_rows, after):
 *	  check, list a page, act on its jobs, audit, return (affected, more,
 *	  next_cursor).
 */
static Datum
by_filter(FunctionCallInfo fcinfo, BulkAction action)
{
	text	   *queue = jobq_queue_arg(fcinfo, 0);
	const char *list_state;
	char	   *state = state_arg(fcinfo, action, &list_state);
	Datum		page[5];
	char		page_nulls[5] = {' ', ' ', ' ', ' ', ' '};
	Datum		values[2];
	Datum	   *ids;
	int			nids = 0;
	char	   *next_cursor = NULL;
	int64		affected = 0;
	Datum		out[3];
	bool		out_nulls[3] = {false, false, false};
	JobqQueueSettings settings;
	TupleDesc	desc;
	Tuplestorestate *store;
	int			rc;

	jobq_require(fcinfo, 2, "filters");
	jobq_require(fcinfo, 3, "max_rows");
	jobq_check_int_range(PG_GETARG_INT32(3), "max_rows", 1, JOBQ_BULK_MAX);

	page[0] = PointerGetDatum(queue);
	page[1] = list_state ? CStringGetTextDatum(list_state) : (Datum) 0;
	page_nulls[1] = list_state ? ' ' : 'n';
	page[2] = PG_GETARG_DATUM(3);
	page[3] = PG_ARGISNULL(4) ? (Datum) 0 : PG_GETARG_DATUM(4);
	page_nulls[3] = PG_ARGISNULL(4) ? 'n' : ' ';
	/* every state: a deletion starts at the finished jobs (jobq_list's "h") */
	if (action == BULK_DELETE && list_state == NULL && PG_ARGISNULL(4))
	{
		page[3] = CStringGetTextDatum("h");
		page_nulls[3] = ' ';
	}
	page[4] = PG_GETARG_DATUM(2);

	store = jobq_srf_begin(fcinfo, &desc);
	jobq_spi_connect();
	if (!jobq_queue_settings(queue, &settings))
		jobq_queue_not_found(queue);
	jobq_check_queue(queue, JOBQ_PRIV_ADMIN);

	/* the page: jobq_list checks the filters, the cursor and inspect */
	rc = SPI_execute_plan(jobq_plan(&jobq_bulk_statements, ST_LIST_PAGE),
						  page, page_nulls, false, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "list the jobs of a bulk action");
	ids = palloc(sizeof(Datum) * Max(SPI_processed, 1));
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Datum		id = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc,
									   COL_PAGE_ID, &isnull);

		if (!isnull)
			ids[nids++] = id;
		if (i == 0)
			next_cursor = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc,
									   COL_PAGE_CURSOR);
	}

	values[0] = PointerGetDatum(construct_array(ids, nids, INT8OID, 8, FLOAT8PASSBYVAL,
												TYPALIGN_DOUBLE));
	values[1] = TimestampTzGetDatum(jobq_now());
	if (nids > 0)
		affected = act(action, values);
	jobq_audit_record(where_names[action], queue, (Datum) 0, PG_GETARG_JSONB_P(2), affected,
					  "state", state, NULL);

	out[0] = Int64GetDatum(affected);
	out[1] = BoolGetDatum(next_cursor != NULL);
	if (next_cursor != NULL)
		out[2] = CStringGetTextDatum(next_cursor);
	else
		out_nulls[2] = true;
	tuplestore_putvalues(store, desc, out, out_nulls);
	jobq_spi_finish();
	return (Datum) 0;
}

/*
 * jobq_retry_where(queue, state, filters, max_rows, after)
 *		-> (affected, more, next_cursor)
 *	  jobq_retry_many on a page of the queue's dead jobs that pass filters.
 */
Datum
jobq_retry_where(PG_FUNCTION_ARGS)
{
	return by_filter(fcinfo, BULK_RETRY);
}

/*
 * jobq_cancel_where: jobq_cancel_many on a page of the queue's ready,
 * delayed and dead jobs (or those of state) that pass filters.
 */
Datum
jobq_cancel_where(PG_FUNCTION_ARGS)
{
	return by_filter(fcinfo, BULK_CANCEL);
}

/*
 * jobq_delete_where: jobq_delete_many on a page of the queue's finished
 * jobs (or those of state) that pass filters.
 */
Datum
jobq_delete_where(PG_FUNCTION_ARGS)
{
	return by_filter(fcinfo, BULK_DELETE);
}

/*
 * jobq_run_now_where: jobq_run_now_many on a page of the queue's delayed
 * jobs that pass filters.
 */
Datum
jobq_run_now_where(PG_FUNCTION_ARGS)
{
	return by_filter(fcinfo, BULK_RUN_NOW);
}
