/*-------------------------------------------------------------------------
 *
 * ack.c
 *	  The fenced state changes of a running job: jobq_complete,
 *	  jobq_complete_batch, jobq_fail, jobq_extend, jobq_release.
 *
 * Each takes the job id and the claim token.  The token is the fence: the
 * statement changes the job only WHERE id = $id AND token = $token.  Only a
 * running job has a token (claim sets it, every way back to ready clears
 * it), so the token match implies the state; the statements leave the state
 * out on purpose, because a condition on it makes the planner prefer the
 * partial lease index (WHERE state = 'running') over the primary key and
 * scan every running job.  Once a lease expired and the job was swept or claimed
 * again, the old token matches nothing, so a stale worker changes nothing;
 * the call says so (false or NULL) and the queue's stale_acks counter
 * rises.  A complete after the lease ran out is still accepted while
 * nobody swept or re-claimed the job: the token is still the valid one.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/ack.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"
#include "counters.h"
#include "groups.h"
#include "direct.h"
#include "jobq_sql.h"

#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "storage/backendid.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/uuid.h"

PG_FUNCTION_INFO_V1(jobq_complete);
PG_FUNCTION_INFO_V1(jobq_complete_batch);
PG_FUNCTION_INFO_V1(jobq_complete_batch_0_2);
PG_FUNCTION_INFO_V1(jobq_fail);
PG_FUNCTION_INFO_V1(jobq_extend);
PG_FUNCTION_INFO_V1(jobq_release);

/* Whether the job's queue keeps completed history (jobq_sql.h) */
#define KEEPS_HISTORY(QUEUE) JOBQ_KEEPS_HISTORY_SQL(QUEUE)

/*
 * The move of a completed job (CTE d) into history, for the jobs of the
 * queues that keep completed history.  RESULT is the result expression.
 *
 * A complete whose job's queue keeps no history is a plain DELETE, which
 * costs a third less than the statement that also writes history (no CTE
 * of whole rows, no INSERT plan to start; bench/findings.md, fourth
 * round).  The plain one leaves the jobs of queues that keep history to
 * the other, unless no queue does ($3, from jobq_any_history_queue: then
 * it probes nothing).  Which to try first, when some queue keeps
 * history, each backend learns from its last complete (history_first): a
 * worker mostly completes jobs of the same queues, so the first statement
 * usually does all the work.  Either order gives the same result: the
 * statement with history deletes every job it finds.
 */
#define COMPLETE_INTO_HISTORY(RESULT) \
	JOBQ_HISTORY_ROW_SQL("'completed'", "d.attempt", "d.token", "d.worker", "d.claimed_at", "$3", \
						 "d.errors", RESULT) \
	" WHERE " KEEPS_HISTORY("d.queue")

/*
 * Flows (flows.c).  With 0.2.0's SQL every complete takes only jobs
 * outside flows (NOT_IN_FLOW(alias): flow_id IS NULL, one more test of a
 * column of the row being deleted); when that finds nothing, the job may
 * be in a flow, and COMPLETE_FLOW_SQL, the complete with history of
 * 0.1.0 keeping flow_id, takes it and flows.c resolves its dependents.  A
 * child inserted while the parent completes sets the parent's flow_id
 * under the row lock the DELETE waits for, and the DELETE re-reads the
 * row after that commit, so the flag it tests is never stale.  With
 * 0.1.0's SQL (no flows), the statements are the ones before flows.
 */
#define NOT_IN_FLOW(A) " AND " A "flow_id IS NULL"

#define COMPLETE_SQL(QUAL, HISTORY_ROW) COMPLETE_COLS_SQL(QUAL, HISTORY_ROW, "")
#define COMPLETE_COLS_SQL(QUAL, HISTORY_ROW, EXTRA) \
	"WITH d AS (" \
	"  DELETE FROM jobq.jobs" \
	"  WHERE id = $1 AND token = $2" QUAL \
	"  RETURNING *)," \
	" h AS (" HISTORY_ROW("'completed'", "d.attempt", "d.token", "d.worker", "d.claimed_at", "$3", \
						  "d.errors", "$4") \
	" WHERE " KEEPS_HISTORY("d.queue") " RETURNING 1)" \
	" SELECT (SELECT count(*) FROM d), EXISTS (SELECT 1 FROM h)," \
	"   (SELECT d.queue FROM d), (SELECT d.claimed_at FROM d)" EXTRA

/* The plain complete: the job, if its queue keeps no history ($3: none does) */
#define COMPLETE_PLAIN_Q_SQL(QUAL) \
	"DELETE FROM jobq.jobs j" \
	" WHERE j.id = $1 AND j.token = $2 AND ($3 OR NOT " KEEPS_HISTORY("j.queue") ")" QUAL
#define COMPLETE_PLAIN_SQL COMPLETE_PLAIN_Q_SQL("")

#define COMPLETE_BATCH_SQL(QUAL) \
	"WITH i AS (" \
	"  SELECT * FROM unnest($1, $2, $4) AS i(id, token, result))," \
	" d AS (" \
	"  DELETE FROM jobq.jobs j USING i" \
	"  WHERE j.id = i.id AND j.token = i.token" QUAL \
	"  RETURNING j.*, i.result AS new_result)," \
	" h AS (" COMPLETE_INTO_HISTORY("d.new_result") ")" \
	" SELECT d.id, d.token, " KEEPS_HISTORY("d.queue") ", d.queue, d.claimed_at FROM d"

#define COMPLETE_BATCH_PLAIN_SQL(QUAL) \
	"DELETE FROM jobq.jobs j" \
	" USING unnest($1, $2) AS i(id, token)" \
	" WHERE j.id = i.id AND j.token = i.token" \
	"   AND ($3 OR NOT " KEEPS_HISTORY("j.queue") ")" QUAL \
	" RETURNING j.id, j.token, j.queue, j.claimed_at"

/* The errors of a failed job (alias A): the attempt's end, with its text */
#define FAIL_ERRORS_SQL(A, AT, MSG, TRUNC) \
	JOBQ_ATTEMPT_END_SQL(A, AT, "'failed'", MSG, TRUNC)

#define FAIL_DEAD_SQL(QUAL, HISTORY_ROW) \
	"WITH d AS (" \
	"  DELETE FROM jobq.jobs WHERE id = $1 AND token = $2" QUAL \
	"  RETURNING *)" \
	" " HISTORY_ROW("'dead'", "d.attempt", "NULL", "d.worker", "d.claimed_at", "$3", \
					FAIL_ERRORS_SQL("d", "$3", "$4", "$5"), "NULL") \
	" RETURNING queue, claimed_at"

/*
 * The statements.  Every one finds the job by id and token (the fence,
 * see above).  The batch statements drive the join from the pairs
 * (unnest: a few rows to the planner) into the primary key, one probe per
 * pair.  An extra "j.id = ANY ($1)" scan looked equivalent, but with the
 * queue filter the generic plan then expected one row from it and ran
 * unnest again for every job found: 100 x 100 comparisons per batch, 2.9
 * times the instructions of the whole claim-and-complete cycle.
 */
enum
{
	ST_COMPLETE,
	ST_COMPLETE_PLAIN,
	ST_COMPLETE_PLAIN_COUNTED,
	ST_COMPLETE_BATCH,
	ST_COMPLETE_BATCH_PLAIN,
	ST_ALREADY_COMPLETED,
	ST_COUNT_STALE,
	ST_FAIL_RETRY,
	ST_FAIL_DEAD,
	ST_EXTEND,
	ST_RELEASE,
	/* flows (0.2.0's SQL): the same outside flows, and the flow paths */
	ST_COMPLETE_NF,
	ST_COMPLETE_PLAIN_NF,
	ST_COMPLETE_PLAIN_COUNTED_NF,
	ST_COMPLETE_BATCH_NF,
	ST_COMPLETE_BATCH_PLAIN_NF,
	ST_FAIL_DEAD_NF,
	ST_COMPLETE_FLOW,
	ST_FAIL_DEAD_FLOW,
	NUM_STATEMENTS
};

/* complete: how many completed, whether one went to history; complete_flow: its flow */
#define COL_COMPLETE_COUNT		1
#define COL_COMPLETE_KEPT		2
#define COL_COMPLETE_FLOW_ID	5
/* complete_batch(_plain): each pair completed, and whether it went to history */
#define COL_BATCH_ID			1
#define COL_BATCH_TOKEN			2
#define COL_BATCH_KEPT			3
/* extend: the new lease */
#define COL_EXTEND_UNTIL		1

static const JobqStatement statements[NUM_STATEMENTS] = {
	/* $1 id, $2 token, $3 finished_at, $4 result */
	[ST_COMPLETE] = {"complete",
		COMPLETE_SQL("", JOBQ_HISTORY_ROW_SQL),
		4, {INT8OID, UUIDOID, TIMESTAMPTZOID, JSONBOID}},
	/*
	 * $1 id, $2 token, $3 whether no queue keeps history; _counted returns
	 * what the counters need (counters.c), only when they count: a
	 * RETURNING makes SPI build a result.
	 */
	[ST_COMPLETE_PLAIN] = {"complete_plain",
		COMPLETE_PLAIN_SQL,
		3, {INT8OID, UUIDOID, BOOLOID}},
	[ST_COMPLETE_PLAIN_COUNTED] = {"complete_plain_counted",
		COMPLETE_PLAIN_SQL " RETURNING j.queue, j.claimed_at",
		3, {INT8OID, UUIDOID, BOOLOID}},
	/* $1 ids, $2 tokens, $3 finished_at, $4 results */
	[ST_COMPLETE_BATCH] = {"complete_batch",
		COMPLETE_BATCH_SQL(""),
		4, {INT8ARRAYOID, UUIDARRAYOID, TIMESTAMPTZOID, JSONBARRAYOID}},
	/* $1 ids, $2 tokens, $3 whether no queue keeps history */
	[ST_COMPLETE_BATCH_PLAIN] = {"complete_batch_plain",
		COMPLETE_BATCH_PLAIN_SQL(""),
		3, {INT8ARRAYOID, UUIDARRAYOID, BOOLOID}},
	/* $1 id, $2 token */
	[ST_ALREADY_COMPLETED] = {"already_completed",
		"SELECT 1 FROM jobq.history"
		" WHERE id = $1 AND token = $2 AND state = 'completed'",
		2, {INT8OID, UUIDOID}},
	/* $1 id, $2 the backend's slot */
	[ST_COUNT_STALE] = {"count_stale",
		"INSERT INTO jobq.stale_acks AS s (queue, slot, count)"
		" SELECT x.queue, $2, 1 FROM ("
		"   SELECT queue FROM jobq.jobs WHERE id = $1"
		"   UNION ALL SELECT queue FROM jobq.history WHERE id = $1"
		"   LIMIT 1) x"
		" ON CONFLICT (queue, slot) DO UPDATE SET count = s.count + 1"
		" RETURNING s.queue",
		2, {INT8OID, INT4OID}},
	/* $1 id, $2 token, $3 run_at or NULL, $4 now, $5 error, $6 cut, $7 permanent */
	[ST_FAIL_RETRY] = {"fail_retry",
		"UPDATE jobq.jobs j SET state = 'ready', token = NULL, locked_until = NULL,"
		"  run_at = COALESCE($3, $4 + " JOBQ_BACKOFF_SQL("j.attempt", "q.backoff_base", "q.backoff_cap") "),"
		"  errors = " FAIL_ERRORS_SQL("j", "$4", "$5", "$6")
		" FROM jobq.queues q"
		" WHERE j.id = $1 AND j.token = $2"
		"   AND q.name = j.queue AND NOT $7 AND j.attempt < j.max_attempts"
		" RETURNING j.queue, NOT q.paused, j.run_at, q.notify, j.claimed_at",
		7, {INT8OID, UUIDOID, TIMESTAMPTZOID, TIMESTAMPTZOID, TEXTOID, BOOLOID, BOOLOID}},
	/* $1 id, $2 token, $3 now, $4 error, $5 cut */
	[ST_FAIL_DEAD] = {"fail_dead",
		FAIL_DEAD_SQL("", JOBQ_HISTORY_ROW_SQL),
		5, {INT8OID, UUIDOID, TIMESTAMPTZOID, TEXTOID, BOOLOID}},
	/* $1 id, $2 token, $3 now, $4 lease or NULL (the queue's) */
	[ST_EXTEND] = {"extend",
		"UPDATE jobq.jobs j SET locked_until = $3 + COALESCE($4, q.lease)"
		" FROM jobq.queues q"
		" WHERE j.id = $1 AND j.token = $2"
		"   AND q.name = j.queue"
		" RETURNING j.locked_until",
		4, {INT8OID, UUIDOID, TIMESTAMPTZOID, INTERVALOID}},
	/* $1 id, $2 token, $3 now */
	[ST_RELEASE] = {"release",
		"UPDATE jobq.jobs j SET state = 'ready', token = NULL, locked_until = NULL,"
		"  attempt = j.attempt - 1,"
		"  errors = " JOBQ_ATTEMPT_END_SQL("j", "$3", "'released'", "NULL::text", "false")
		" FROM jobq.queues q"
		" WHERE j.id = $1 AND j.token = $2"
		"   AND q.name = j.queue"
		" RETURNING j.queue, q.notify AND NOT q.paused, NOT q.paused",
		3, {INT8OID, UUIDOID, TIMESTAMPTZOID}},
	/* flows: as above, with the job outside flows or in one */
	[ST_COMPLETE_NF] = {"complete_nf",
		COMPLETE_SQL(NOT_IN_FLOW(""), JOBQ_HISTORY_ROW_SQL),
		4, {INT8OID, UUIDOID, TIMESTAMPTZOID, JSONBOID}},
	[ST_COMPLETE_PLAIN_NF] = {"complete_plain_nf",
		COMPLETE_PLAIN_Q_SQL(NOT_IN_FLOW("j.")),
		3, {INT8OID, UUIDOID, BOOLOID}},
	[ST_COMPLETE_PLAIN_COUNTED_NF] = {"complete_plain_counted_nf",
		COMPLETE_PLAIN_Q_SQL(NOT_IN_FLOW("j.")) " RETURNING j.queue, j.claimed_at",
		3, {INT8OID, UUIDOID, BOOLOID}},
	[ST_COMPLETE_BATCH_NF] = {"complete_batch_nf",
		COMPLETE_BATCH_SQL(NOT_IN_FLOW("j.")),
		4, {INT8ARRAYOID, UUIDARRAYOID, TIMESTAMPTZOID, JSONBARRAYOID}},
	[ST_COMPLETE_BATCH_PLAIN_NF] = {"complete_batch_plain_nf",
		COMPLETE_BATCH_PLAIN_SQL(NOT_IN_FLOW("j.")),
		3, {INT8ARRAYOID, UUIDARRAYOID, BOOLOID}},
	[ST_FAIL_DEAD_NF] = {"fail_dead_nf",
		FAIL_DEAD_SQL(NOT_IN_FLOW(""), JOBQ_HISTORY_ROW_SQL),
		5, {INT8OID, UUIDOID, TIMESTAMPTZOID, TEXTOID, BOOLOID}},
	[ST_COMPLETE_FLOW] = {"complete_flow",
		COMPLETE_COLS_SQL("", JOBQ_HISTORY_ROW_FLOW_SQL, ", (SELECT d.flow_id FROM d)"),
		4, {INT8OID, UUIDOID, TIMESTAMPTZOID, JSONBOID}},
	[ST_FAIL_DEAD_FLOW] = {"fail_dead_flow",
		FAIL_DEAD_SQL("", JOBQ_HISTORY_ROW_FLOW_SQL),
		5, {INT8OID, UUIDOID, TIMESTAMPTZOID, TEXTOID, BOOLOID}},
};

static SPIPlanPtr plans[NUM_STATEMENTS];

const JobqStatements jobq_ack_statements = {statements, NUM_STATEMENTS, plans, NULL};

static bool history_first = false;

/*
 * STMT
 *	  Statement st, or with flows (0.2.0's SQL) its variant for jobs
 *	  outside flows, st_NF.
 */
#define STMT(flows, st) ((flows) ? st##_NF : st)

/*
 * plain_first
 *	  Whether a complete starts with the plain DELETE.
 */
static inline bool
plain_first(bool any_history)
{
	return !any_history || !history_first;
}

/*
 * learn_history_use
 *	  After the statement with history ran: if it wrote history, try it
 *	  first next time; if it completed jobs without any, the plain one.
 */
static void
learn_history_use(bool completed, bool kept)
{
	if (kept)
		history_first = true;
	else if (completed)
		history_first = false;
}

/*
 * require_id_token
 *	  id and token are arguments 0 and 1 of every function here; NULL is an
 *	  error (a NULL token must never read as "stale").
 */
static void
require_id_token(FunctionCallInfo fcinfo)
{
	jobq_require(fcinfo, 0, "id");
	jobq_require(fcinfo, 1, "token");
}

/*
 * count_stale
 *	  Count one refused state change against the job's queue, if the job
 *	  still exists somewhere.  Each backend bumps its own row (slot =
 *	  backend id), so counting never waits on another session.
 */
static void
count_stale(Datum job_id)
{
	Datum		args[2];
	int			rc;

	args[0] = job_id;
	args[1] = Int32GetDatum(MyBackendId);
	rc = SPI_execute_plan(jobq_plan(&jobq_ack_statements, ST_COUNT_STALE),
						  args, NULL, false, 0);
	jobq_spi_check(rc, SPI_OK_INSERT_RETURNING, "count stale acknowledgement");
	jobq_count_rows(JOBQ_EV_STALE_ACK, 1, 0, 0);
}

/*
 * jobq_count_stale
 *	  count_stale for the other token-fenced calls (checkpoint.c).
 */
void
jobq_count_stale(Datum job_id)
{
	count_stale(job_id);
}

/*
 * already_completed
 *	  True when history shows this very token's completion: a repeated
 *	  complete is idempotent, not stale.  (With completed_retention = 0
 *	  there is no history to ask, and a repeat reads as stale.)
 */
static bool
already_completed(Datum id, Datum token)
{
	Datum		args[2] = {id, token};
	int			rc;

	rc = SPI_execute_plan(jobq_plan(&jobq_ack_statements, ST_ALREADY_COMPLETED),
						  args, NULL, false, 1);
	jobq_spi_check(rc, SPI_OK_SELECT, "check completion");
	return SPI_processed > 0;
}

/*
 * complete_one_plain
 *	  Delete the job if its token matches and its queue keeps no history.
 *	  values as in jobq_complete.
 */
static bool
complete_one_plain(Datum *values, bool any_history, bool flows)
{
	Datum		args[3] = {values[0], values[1], BoolGetDatum(!any_history)};
	int			rc;

	/* completion events need the queue too (finished.c) */
	bool		counting = jobq_counters_available() || jobq_finished_any();

	rc = SPI_execute_plan(jobq_plan(&jobq_ack_statements,
									counting ? STMT(flows, ST_COMPLETE_PLAIN_COUNTED) :
									STMT(flows, ST_COMPLETE_PLAIN)),
						  args, NULL, false, 0);
	jobq_spi_check(rc, counting ? SPI_OK_DELETE_RETURNING : SPI_OK_DELETE, "complete");
	jobq_count_rows(JOBQ_EV_COMPLETED_GONE, 1, 2, jobq_now());
	if (counting)
		jobq_finished_rows(JOBQ_AWAIT_COMPLETED, 0, DatumGetInt64(values[0]), 1);
	return SPI_processed > 0;
}

/*
 * complete_one_history
 *	  Delete the job if its token matches, writing its history row when its
 *	  queue keeps history (then *kept).
 */
static bool
complete_one_history(Datum *values, char *nulls, bool *kept, int st)
{
	bool		isnull;
	bool		done;
	int			rc;

	rc = SPI_execute_plan(jobq_plan(&jobq_ack_statements, st),
						  values, nulls, false, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "complete");
	done = jobq_spi_getint64(0, COL_COMPLETE_COUNT, &isnull) > 0;
	*kept = jobq_spi_getbool(0, COL_COMPLETE_KEPT, &isnull);
	jobq_count_completed_rows(3, 4, COL_COMPLETE_KEPT, DatumGetTimestampTz(values[2]));
	jobq_finished_rows(JOBQ_AWAIT_COMPLETED, 0, DatumGetInt64(values[0]), 3);
	return done;
}

/*
 * complete_one_flow
 *	  The complete of a job in a flow (one the statements for jobs outside
 *	  flows did not find): delete it, write its history row with its
 *	  flow_id, and resolve its dependents (flows.c).  values and nulls as
 *	  in jobq_complete.
 */
static bool
complete_one_flow(Datum *values, char *nulls)
{
	bool		kept;
	bool		done = complete_one_history(values, nulls, &kept, ST_COMPLETE_FLOW);
	int64		id = DatumGetInt64(values[0]);
	int64		flow;
	bool		isnull;

	if (!done)
		return false;
	flow = jobq_spi_getint64(0, COL_COMPLETE_FLOW_ID, &isnull);
	jobq_flow_completed(id, nulls[3] == 'n' ? NULL : DatumGetJsonbP(values[3]),
						DatumGetTimestampTz(values[2]));
	/* gone without a history row: no purge will see its edges and membership */
	if (!kept)
		jobq_flow_forget(&id, &flow, 1);
	return true;
}

/*
 * jobq_complete(id, token, result) -> boolean
 *	  Finish a running job.  true: completed now, or already completed with
 *	  this token.  false: the token is stale or the job unknown; nothing
 *	  changed.  A statement deletes the job from jobq.jobs, and writes it
 *	  to history when its queue keeps completed history (see
 *	  COMPLETE_INTO_HISTORY for which of two statements runs, and when
 *	  both do).
 */
Datum
jobq_complete(PG_FUNCTION_ARGS)
{
	Datum		values[4];
	char		nulls[4] = {' ', ' ', ' ', ' '};
	bool		any_history;
	bool		flows;
	bool		kept;
	bool		done;
	bool		grouped;
	JobqGroupedJob group_job;
	JobqSlots  *slots;
	int			nslots;
	JobqDirectCall direct = JOBQ_DIRECT_CALL_INIT;
	bool		direct_flow;

	require_id_token(fcinfo);
	/* $1 id, $2 token, $3 finished_at, $4 result */
	values[0] = PG_GETARG_DATUM(0);
	values[1] = PG_GETARG_DATUM(1);
	values[2] = TimestampTzGetDatum(jobq_now());
	values[3] = (Datum) 0;
	if (PG_ARGISNULL(2))
		nulls[3] = 'n';
	else
	{
		Jsonb	   *result = PG_GETARG_JSONB_P(2);

		jobq_check_payload(result, "result");
		values[3] = JsonbPGetDatum(result);
	}

	jobq_spi_connect();
	jobq_check_job(values[0], JOBQ_PRIV_CLAIM);
	grouped = jobq_any_grouped_queue() && jobq_grouped_job(values[0], values[1], &group_job);
	nslots = jobq_any_limited_queue() ?
		jobq_slots_read(jobq_audit_id_array(values[0]), &slots) : 0;
	flows = jobq_flows_available();
	/* a job this session claimed, in no group: its row directly (direct_complete.c) */
	done = !grouped &&
		jobq_direct_complete(&direct, DatumGetInt64(values[0]), DatumGetUUIDP(values[1]),
							 nulls[3] == 'n' ? NULL : DatumGetJsonbP(values[3]),
							 DatumGetTimestampTz(values[2]));
	direct_flow = done && direct.flow_job;
	jobq_direct_finish(&direct);
	/* a job of a flow completed directly: its dependents, in one statement */
	if (direct_flow)
	{
		int64		id = DatumGetInt64(values[0]);

		jobq_flow_completed(id, nulls[3] == 'n' ? NULL : DatumGetJsonbP(values[3]),
							DatumGetTimestampTz(values[2]));
		if (!direct.kept)
			jobq_flow_forget(&id, &direct.flow_id, 1);
	}
	if (!done)
	{
		any_history = jobq_any_history_queue();
		/* the statement with history takes what the plain one did not */
		done = plain_first(any_history) && complete_one_plain(values, any_history, flows);
		if (!done && any_history)
		{
			done = complete_one_history(values, nulls, &kept, STMT(flows, ST_COMPLETE));
			learn_history_use(done, kept);
		}
	}
	/* and the flow path what neither took */
	if (!done && flows)
		done = complete_one_flow(values, nulls);
	if (done && grouped)
		jobq_group_changed(&group_job, JOBQ_GROUP_FINISHED, DatumGetTimestampTz(values[2]));
	if (done && nslots > 0)
		jobq_slots_freed(slots, nslots, 1);
	if (done)
		jobq_await_note(DatumGetInt64(values[0]), JOBQ_AWAIT_COMPLETED,
						DatumGetTimestampTz(values[2]),
						nulls[3] == 'n' ? NULL : (struct varlena *) DatumGetPointer(values[3]));
	if (!done)
	{
		done = already_completed(values[0], values[1]);
		if (!done)
			count_stale(values[0]);
	}
	jobq_spi_finish();
	PG_RETURN_BOOL(done);
}

/*
 * mark_accepted
 *	  Mark in accepted[] the (id, token) pairs the last statement returned
 *	  (COL_BATCH_ID, COL_BATCH_TOKEN): matching the token too, so that of a
 *	  pair given twice with different tokens only the right one is
 *	  accepted.  Returns
 *	  how many rows it returned.  With COL_BATCH_KEPT (whether the job went
 *	  to history), *kept counts the true ones.
 */
static int
mark_accepted(bool *accepted, Datum *id_items, Datum *token_items, int n, int *kept)
{
	SPITupleTable *tt = SPI_tuptable;
	bool		isnull;

	if (kept != NULL)
		*kept = 0;
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		int64		id = DatumGetInt64(SPI_getbinval(tt->vals[r], tt->tupdesc,
													 COL_BATCH_ID, &isnull));
		pg_uuid_t  *token = DatumGetUUIDP(SPI_getbinval(tt->vals[r], tt->tupdesc,
														COL_BATCH_TOKEN, &isnull));

		for (int i = 0; i < n; i++)
			if (!accepted[i] && DatumGetInt64(id_items[i]) == id &&
				memcmp(DatumGetUUIDP(token_items[i])->data, token->data, UUID_LEN) == 0)
			{
				accepted[i] = true;
				break;
			}
		if (kept != NULL &&
			DatumGetBool(SPI_getbinval(tt->vals[r], tt->tupdesc, COL_BATCH_KEPT, &isnull)))
			(*kept)++;
	}
	return (int) SPI_processed;
}

/*
 * complete_many_plain
 *	  Delete the jobs whose tokens match and whose queues keep no history;
 *	  returns how many.  values as in jobq_complete_batch.
 */
static int
complete_many_plain(Datum *values, bool any_history, bool flows, bool *accepted,
					Datum *id_items, Datum *token_items, int n)
{
	Datum		args[3] = {values[0], values[1], BoolGetDatum(!any_history)};
	int			rc;

	rc = SPI_execute_plan(jobq_plan(&jobq_ack_statements, STMT(flows, ST_COMPLETE_BATCH_PLAIN)),
						  args, NULL, false, 0);
	jobq_spi_check(rc, SPI_OK_DELETE_RETURNING, "complete batch");
	jobq_count_rows(JOBQ_EV_COMPLETED_GONE, 3, 4, jobq_now());
	jobq_finished_rows(JOBQ_AWAIT_COMPLETED, COL_BATCH_ID, 0, 3);
	return mark_accepted(accepted, id_items, token_items, n, NULL);
}

/*
 * complete_many_history
 *	  Delete the jobs whose tokens match, writing history rows for those
 *	  whose queues keep it; returns how many it deleted, and *kept how many
 *	  of them went to history.
 */
static int
complete_many_history(Datum *values, char *nulls, bool flows, bool *accepted,
					  Datum *id_items, Datum *token_items, int n, int *kept)
{
	int			rc;

	rc = SPI_execute_plan(jobq_plan(&jobq_ack_statements, STMT(flows, ST_COMPLETE_BATCH)),
						  values, nulls, false, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "complete batch");
	jobq_count_completed_rows(4, 5, COL_BATCH_KEPT, DatumGetTimestampTz(values[2]));
	jobq_finished_rows(JOBQ_AWAIT_COMPLETED, COL_BATCH_ID, 0, 4);
	return mark_accepted(accepted, id_items, token_items, n, kept);
}

/*
 * groups_completed
 *	  After a batch complete: the groups of the grouped jobs grouped[] (read
 *	  before it) whose pairs it accepted lose a running job.
 */
static void
groups_completed(JobqGroupedJob *grouped, int ngrouped, const bool *accepted,
				 const Datum *id_items, int n, TimestampTz now)
{
	JobqGroupChange *changes = palloc(sizeof(JobqGroupChange) * ngrouped);
	int			m = 0;

	for (int g = 0; g < ngrouped; g++)
	{
		bool		done = false;

		for (int i = 0; i < n && !done; i++)
			done = accepted[i] && DatumGetInt64(id_items[i]) == grouped[g].id;
		if (done)
		{
			grouped[m] = grouped[g];
			changes[m++] = JOBQ_GROUP_FINISHED;
		}
	}
	jobq_groups_changed(grouped, changes, m, now);
	pfree(changes);
}

/*
 * complete_batch
 *	  Complete many jobs in one or two statements; the shared body of both
 *	  SQL forms.  The arguments are (ids bigint[], tokens uuid[], results
 *	  jsonb[]), pairing up by position; results may be NULL (no results).
 *	  A pair is accepted when its job is newly completed, or was already
 *	  completed with that token.  Returns the accepted pairs, in input
 *	  order: their ids (bigint), or with positions their 1-based positions
 *	  in the arrays (integer).
 *
 *	  Why positions: an id may appear twice, with a wrong and a right
 *	  token; only the right pair is accepted (mark_accepted), and the id
 *	  alone cannot tell the caller which one it was.  The position can.
 *	  0.1.0's jobq_complete_batch keeps its ids for the SQL of that release;
 *	  0.2.0 adds jobq_complete_batch_positions, bound to
 *	  jobq_complete_batch_0_2, which libjobq uses.
 */
static Datum
complete_batch(FunctionCallInfo fcinfo, bool positions)
{
	ArrayType  *ids,
			   *tokens,
			   *results = NULL;
	Datum	   *id_items,
			   *token_items;
	bool	   *id_nulls,
			   *token_nulls;
	int			n,
				ntokens;
	Datum		values[4];
	char		nulls[4] = {' ', ' ', ' ', ' '};
	bool		any_history;
	int			taken;
	TupleDesc	desc;
	Tuplestorestate *store;
	bool	   *accepted;
	Datum	   *result_items = NULL;
	bool	   *result_nulls = NULL;
	bool		flows;
	JobqGroupedJob *grouped = NULL;
	int			ngrouped;
	JobqSlots  *slots;
	int			nslots;
	JobqDirectCall direct = JOBQ_DIRECT_CALL_INIT;
	int64	   *flow_ids = NULL;
	Jsonb	  **flow_results = NULL;
	int			nflow = 0;
	int64	   *gone_ids = NULL;	/* of those, the ones that left no history row */
	int64	   *gone_flows = NULL;
	int			ngone = 0;

	jobq_require(fcinfo, 0, "ids");
	jobq_require(fcinfo, 1, "tokens");
	ids = PG_GETARG_ARRAYTYPE_P(0);
	tokens = PG_GETARG_ARRAYTYPE_P(1);
	if (ARR_NDIM(ids) > 1 || ARR_NDIM(tokens) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("ids and tokens must be one-dimensional arrays")));
	deconstruct_array(ids, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
					  &id_items, &id_nulls, &n);
	deconstruct_array(tokens, UUIDOID, UUID_LEN, false, TYPALIGN_CHAR,
					  &token_items, &token_nulls, &ntokens);
	if (n < 1 || n > JOBQ_COMPLETE_BATCH_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ids must hold 1 to %d jobs, not %d", JOBQ_COMPLETE_BATCH_MAX, n)));
	if (ntokens != n)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("tokens has %d elements, ids has %d", ntokens, n)));
	for (int i = 0; i < n; i++)
		if (id_nulls[i] || token_nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("ids and tokens must not contain nulls")));
	if (!PG_ARGISNULL(2))
	{
		Datum	   *r_items;
		bool	   *r_nulls;
		int			nr;

		results = PG_GETARG_ARRAYTYPE_P(2);
		if (ARR_NDIM(results) > 1)
			ereport(ERROR,
					(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
					 errmsg("results must be a one-dimensional array")));
		deconstruct_array(results, JSONBOID, -1, false, TYPALIGN_INT,
						  &r_items, &r_nulls, &nr);
		if (nr != n)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("results has %d elements, ids has %d", nr, n)));
		for (int i = 0; i < nr; i++)
			if (!r_nulls[i])
				jobq_check_payload(DatumGetJsonbP(r_items[i]), "result");
		result_items = r_items;
		result_nulls = r_nulls;
	}

	values[0] = PointerGetDatum(ids);
	values[1] = PointerGetDatum(tokens);
	values[2] = TimestampTzGetDatum(jobq_now());
	values[3] = PointerGetDatum(results);
	if (results == NULL)
		nulls[3] = 'n';

	store = jobq_srf_begin(fcinfo, &desc);
	jobq_spi_connect();
	jobq_check_jobs(values[0], JOBQ_PRIV_CLAIM);
	ngrouped = jobq_any_grouped_queue() ? jobq_grouped_jobs(values[0], &grouped) : 0;
	nslots = jobq_any_limited_queue() ? jobq_slots_read(values[0], &slots) : 0;
	flows = jobq_flows_available();
	accepted = palloc0(sizeof(bool) * n);
	/* the jobs this session claimed, when none is grouped: their rows directly */
	taken = 0;
	for (int i = 0; i < n && ngrouped == 0; i++)
	{
		Jsonb	   *result = result_items == NULL || result_nulls[i] ? NULL :
			DatumGetJsonbP(result_items[i]);

		if (!jobq_direct_complete(&direct, DatumGetInt64(id_items[i]),
								  DatumGetUUIDP(token_items[i]), result,
								  DatumGetTimestampTz(values[2])))
			continue;
		accepted[i] = true, taken++;
		if (direct.flow_job)
		{
			if (flow_ids == NULL)
			{
				flow_ids = palloc(sizeof(int64) * n);
				flow_results = palloc(sizeof(Jsonb *) * n);
				gone_ids = palloc(sizeof(int64) * n);
				gone_flows = palloc(sizeof(int64) * n);
			}
			flow_ids[nflow] = DatumGetInt64(id_items[i]);
			flow_results[nflow++] = result;
			if (!direct.kept)
			{
				gone_ids[ngone] = DatumGetInt64(id_items[i]);
				gone_flows[ngone++] = direct.flow_id;
			}
		}
	}
	jobq_direct_finish(&direct);
	/* the dependents of the jobs of flows completed directly, in one statement */
	if (nflow > 0)
		jobq_flow_completed_many(flow_ids, flow_results, nflow, DatumGetTimestampTz(values[2]));
	if (ngone > 0)
		jobq_flow_forget(gone_ids, gone_flows, ngone);
	/* the statements see those deleted, and take the rest */
	any_history = taken < n && jobq_any_history_queue();
	/* the statement with history takes what the plain one did not */
	if (taken < n && plain_first(any_history))
		taken += complete_many_plain(values, any_history, flows, accepted, id_items, token_items,
									 n);
	if (taken < n && any_history)
	{
		int			kept;
		int			completed = complete_many_history(values, nulls, flows, accepted, id_items,
													  token_items, n, &kept);

		learn_history_use(completed > 0, kept > 0);
	}
	/* jobs in flows: what neither statement took (one at a time) */
	for (int i = 0; flows && i < n; i++)
		if (!accepted[i])
		{
			Datum		fv[4] = {id_items[i], token_items[i], values[2], (Datum) 0};
			char		fn[4] = {' ', ' ', ' ', 'n'};

			if (result_items != NULL && !result_nulls[i])
			{
				fv[3] = result_items[i];
				fn[3] = ' ';
			}
			accepted[i] = complete_one_flow(fv, fn);
		}
	if (ngrouped > 0)
		groups_completed(grouped, ngrouped, accepted, id_items, n,
						 DatumGetTimestampTz(values[2]));
	if (nslots > 0)
	{
		int64		freed = 0;

		for (int i = 0; i < n; i++)
			freed += accepted[i];
		jobq_slots_freed(slots, nslots, freed);
	}

	/* the rest are repeats or stale */
	for (int i = 0; i < n; i++)
	{
		Datum		out;
		bool		out_null = false;

		if (!accepted[i])
		{
			accepted[i] = already_completed(id_items[i], token_items[i]);
			if (!accepted[i])
				count_stale(id_items[i]);
		}
		if (accepted[i])
		{
			jobq_await_note(DatumGetInt64(id_items[i]), JOBQ_AWAIT_COMPLETED,
							DatumGetTimestampTz(values[2]),
							result_items == NULL || result_nulls[i] ? NULL :
							(struct varlena *) DatumGetPointer(result_items[i]));
			out = positions ? Int32GetDatum(i + 1) : id_items[i];
			tuplestore_putvalues(store, desc, &out, &out_null);
		}
	}
	jobq_spi_finish();
	return (Datum) 0;
}

/*
 * jobq_complete_batch(ids bigint[], tokens uuid[], results jsonb[])
 *	  -> setof bigint
 *	  The ids of the accepted pairs (0.1.0; see complete_batch).
 */
Datum
jobq_complete_batch(PG_FUNCTION_ARGS)
{
	return complete_batch(fcinfo, false);
}

/*
 * jobq_complete_batch_positions(ids bigint[], tokens uuid[], results jsonb[])
 *	  -> setof integer  (C name jobq_complete_batch_0_2)
 *	  The 1-based positions of the accepted pairs (0.2.0; see
 *	  complete_batch).
 */
Datum
jobq_complete_batch_0_2(PG_FUNCTION_ARGS)
{
	return complete_batch(fcinfo, true);
}

/*
 * error_text_arg
 *	  The error text of a fail, cut to JOBQ_ERROR_TEXT_MAX bytes on a
 *	  character boundary; *truncated says whether it was cut.  NULL stays
 *	  NULL.
 */
static text *
error_text_arg(FunctionCallInfo fcinfo, int argno, bool *truncated)
{
	text	   *err;
	int			len;
	int			keep;

	*truncated = false;
	if (PG_ARGISNULL(argno))
		return NULL;
	err = PG_GETARG_TEXT_PP(argno);
	len = VARSIZE_ANY_EXHDR(err);
	if (len <= JOBQ_ERROR_TEXT_MAX)
		return err;
	keep = pg_mbcliplen(VARDATA_ANY(err), len, JOBQ_ERROR_TEXT_MAX);
	*truncated = true;
	return cstring_to_text_with_len(VARDATA_ANY(err), keep);
}

/*
 * fail_rate_limited
 *	  jobq_fail with rate_limit_for (argument 5, fail_rate_limited.c): the
 *	  job is ready again after it, its attempt given back.  Neither
 *	  permanent nor retry_in goes with it (22023).
 */
static Datum
fail_rate_limited(FunctionCallInfo fcinfo, text *err, bool truncated, TimestampTz now)
{
	Interval   *hold = jobq_check_interval(PG_GETARG_INTERVAL_P(5), "rate_limit_for",
										   USECS_PER_SEC, JOBQ_DELAY_MAX_USECS);
	bool		done;

	if (PG_GETARG_BOOL(4) || !PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("rate_limit_for cannot go with permanent or retry_in"),
				 errhint("A rate-limited job runs again after rate_limit_for, its attempt not counted.")));
	jobq_spi_connect();
	jobq_check_job(PG_GETARG_DATUM(0), JOBQ_PRIV_CLAIM);
	done = jobq_fail_rate_limited(PG_GETARG_DATUM(0), PG_GETARG_DATUM(1), now,
								  jobq_add_interval(now, hold), err, truncated);
	if (!done)
		count_stale(PG_GETARG_DATUM(0));
	jobq_spi_finish();
	if (!done)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(cstring_to_text("ready"));
}

/*
 * jobq_fail(id, token, error, retry_in, permanent) -> text
 *	  Record a failed attempt.  With attempts left and not permanent, the
 *	  job goes back to ready at now + retry_in, or after exponential backoff
 *	  with jitter (JOBQ_BACKOFF_SQL); returns 'ready'.  Otherwise it moves to
 *	  history as dead (the dead-letter state, see jobq_retry); returns
 *	  'dead'.  NULL when the token is stale.  The error is kept in the
 *	  job's errors array (newest JOBQ_ERRORS_KEPT).
 */
Datum
jobq_fail(PG_FUNCTION_ARGS)
{
	bool		truncated;
	text	   *err;
	TimestampTz now = jobq_now();
	Datum		values[7];
	char		nulls[7] = {' ', ' ', ' ', ' ', ' ', ' ', ' '};
	const char *outcome = NULL;
	bool		grouped;
	JobqGroupedJob group_job;
	JobqSlots  *slots;
	int			nslots;
	int			rc;

	require_id_token(fcinfo);
	jobq_require(fcinfo, 4, "permanent");
	err = error_text_arg(fcinfo, 2, &truncated);
	/* NB: PG_NARGS guards against 0.1.0's definition, without rate_limit_for */
	if (PG_NARGS() > 5 && !PG_ARGISNULL(5))
		return fail_rate_limited(fcinfo, err, truncated, now);
	values[2] = (Datum) 0;
	nulls[2] = 'n';
	if (!PG_ARGISNULL(3))
	{
		Interval   *retry_in = PG_GETARG_INTERVAL_P(3);

		retry_in = jobq_check_interval(retry_in, "retry_in", 0, JOBQ_DELAY_MAX_USECS);
		values[2] = TimestampTzGetDatum(jobq_add_interval(now, retry_in));
		nulls[2] = ' ';
	}
	values[0] = PG_GETARG_DATUM(0);
	values[1] = PG_GETARG_DATUM(1);
	values[3] = TimestampTzGetDatum(now);
	values[4] = PointerGetDatum(err);
	if (err == NULL)
		nulls[4] = 'n';
	values[5] = BoolGetDatum(truncated);
	values[6] = PG_GETARG_DATUM(4);

	jobq_spi_connect();
	jobq_check_job(values[0], JOBQ_PRIV_CLAIM);
	grouped = jobq_any_grouped_queue() && jobq_grouped_job(values[0], values[1], &group_job);
	nslots = jobq_any_limited_queue() ?
		jobq_slots_read(jobq_audit_id_array(values[0]), &slots) : 0;
	rc = SPI_execute_plan(jobq_plan(&jobq_ack_statements, ST_FAIL_RETRY),
						  values, nulls, false, 0);
	jobq_spi_check(rc, SPI_OK_UPDATE_RETURNING, "fail (retry)");
	jobq_count_rows(JOBQ_EV_RETRIED, 1, 5, now);
	if (SPI_processed > 0)
	{
		bool		isnull;

		/* ready now (retry_in => 0) or when the retry is due (wake.c) */
		jobq_announce_ready(DatumGetTextPP(SPI_getbinval(SPI_tuptable->vals[0],
														 SPI_tuptable->tupdesc, 1,
														 &isnull)), 1,
							DatumGetTimestampTz(SPI_getbinval(SPI_tuptable->vals[0],
															  SPI_tuptable->tupdesc, 3,
															  &isnull)),
							now, jobq_spi_getbool(0, 4, &isnull),
							!jobq_spi_getbool(0, 2, &isnull));
		outcome = "ready";
		jobq_await_note(DatumGetInt64(values[0]), JOBQ_AWAIT_READY, now, NULL);
		if (grouped)
			jobq_group_changed(&group_job, JOBQ_GROUP_RETRYING, now);
	}
	else
	{
		/* No attempts left, permanent, or stale: try the dead-letter move. */
		Datum		dv[5] = {values[0], values[1], values[3], values[4], values[5]};
		char		dn[5] = {' ', ' ', ' ', nulls[4], ' '};
		bool		flows = jobq_flows_available();
		bool		in_flow = false;

		rc = SPI_execute_plan(jobq_plan(&jobq_ack_statements, STMT(flows, ST_FAIL_DEAD)),
							  dv, dn, false, 0);
		jobq_spi_check(rc, SPI_OK_INSERT_RETURNING, "fail (dead)");
		jobq_count_rows(JOBQ_EV_FAILED_DEAD, 1, 2, now);
		jobq_finished_rows(JOBQ_AWAIT_DEAD, 0, DatumGetInt64(values[0]), 1);
		if (SPI_processed == 0 && flows)
		{
			/* a job in a flow: its dependents follow their policies */
			rc = SPI_execute_plan(jobq_plan(&jobq_ack_statements, ST_FAIL_DEAD_FLOW),
								  dv, dn, false, 0);
			jobq_spi_check(rc, SPI_OK_INSERT_RETURNING, "fail (dead)");
			jobq_count_rows(JOBQ_EV_FAILED_DEAD, 1, 2, now);
			jobq_finished_rows(JOBQ_AWAIT_DEAD, 0, DatumGetInt64(values[0]), 1);
			in_flow = SPI_processed > 0;
		}
		if (in_flow)
			jobq_flow_failed(DatumGetInt64(values[0]), "dead",
							 err == NULL ? NULL : text_to_cstring(err), now);
		if (SPI_processed > 0 || in_flow)
		{
			outcome = "dead";
			jobq_await_note(DatumGetInt64(values[0]), JOBQ_AWAIT_DEAD, now,
							err == NULL ? NULL : (struct varlena *) err);
			if (grouped)
				jobq_group_changed(&group_job, JOBQ_GROUP_DIED, now);
		}
		else
			count_stale(values[0]);
	}
	if (outcome != NULL && nslots > 0)
		jobq_slots_freed(slots, nslots, 1);
	jobq_spi_finish();

	if (outcome == NULL)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(cstring_to_text(outcome));
}

/*
 * jobq_extend(id, token, lease) -> timestamptz
 *	  Heartbeat: push the lease to now + lease (default: the queue's
 *	  lease).  Returns the new locked_until, or NULL when the token is stale.
 */
Datum
jobq_extend(PG_FUNCTION_ARGS)
{
	Datum		values[4];
	char		nulls[4] = {' ', ' ', ' ', ' '};
	TimestampTz until = 0;
	bool		found;
	bool		isnull;
	int			rc;

	require_id_token(fcinfo);
	values[0] = PG_GETARG_DATUM(0);
	values[1] = PG_GETARG_DATUM(1);
	values[2] = TimestampTzGetDatum(jobq_now());
	values[3] = (Datum) 0;
	nulls[3] = 'n';
	if (!PG_ARGISNULL(2))
	{
		values[3] = IntervalPGetDatum(jobq_check_interval(PG_GETARG_INTERVAL_P(2), "lease",
														  JOBQ_LEASE_MIN_USECS,
														  JOBQ_LEASE_MAX_USECS));
		nulls[3] = ' ';
	}

	jobq_spi_connect();
	jobq_check_job(values[0], JOBQ_PRIV_CLAIM);
	rc = SPI_execute_plan(jobq_plan(&jobq_ack_statements, ST_EXTEND),
						  values, nulls, false, 0);
	jobq_spi_check(rc, SPI_OK_UPDATE_RETURNING, "extend");
	found = SPI_processed > 0;
	if (found)
		until = DatumGetTimestampTz(SPI_getbinval(SPI_tuptable->vals[0],
												  SPI_tuptable->tupdesc, COL_EXTEND_UNTIL,
												  &isnull));
	else
		count_stale(values[0]);
	jobq_spi_finish();

	if (!found)
		PG_RETURN_NULL();
	PG_RETURN_TIMESTAMPTZ(until);
}

/*
 * jobq_release(id, token) -> boolean
 *	  Give a claimed job back without burning the attempt (a worker that
 *	  shuts down before starting it).  The job is ready again at its old
 *	  run_at, so it keeps its place in line.  false when stale.
 */
Datum
jobq_release(PG_FUNCTION_ARGS)
{
	Datum		values[3];
	bool		found;
	bool		grouped;
	JobqGroupedJob group_job;
	int			rc;
	TimestampTz now = jobq_now();

	require_id_token(fcinfo);
	values[0] = PG_GETARG_DATUM(0);
	values[1] = PG_GETARG_DATUM(1);
	values[2] = TimestampTzGetDatum(now);

	jobq_spi_connect();
	jobq_check_job(values[0], JOBQ_PRIV_CLAIM);
	grouped = jobq_any_grouped_queue() && jobq_grouped_job(values[0], values[1], &group_job);
	rc = SPI_execute_plan(jobq_plan(&jobq_ack_statements, ST_RELEASE),
						  values, NULL, false, 0);
	jobq_spi_check(rc, SPI_OK_UPDATE_RETURNING, "release");
	jobq_count_rows(JOBQ_EV_RELEASED, 1, 0, 0);
	found = SPI_processed > 0;
	if (found)
	{
		bool		isnull;
		text	   *queue = DatumGetTextPP(SPI_getbinval(SPI_tuptable->vals[0],
															 SPI_tuptable->tupdesc, 1, &isnull));

		jobq_announce_ready(queue, 1, now, now,
							jobq_spi_getbool(0, 2, &isnull), !jobq_spi_getbool(0, 3, &isnull));
		if (grouped)
			jobq_group_changed(&group_job, JOBQ_GROUP_REQUEUED, now);
	}
	else
		count_stale(values[0]);
	jobq_spi_finish();
	PG_RETURN_BOOL(found);
}
