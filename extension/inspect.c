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
#include "list_filter.h"
#include "counters.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(jobq_stats);
PG_FUNCTION_INFO_V1(jobq_job);
PG_FUNCTION_INFO_V1(jobq_job_0_2);
PG_FUNCTION_INFO_V1(jobq_job_value);
PG_FUNCTION_INFO_V1(jobq_list);
PG_FUNCTION_INFO_V1(jobq_list_0_2);
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
	ST_JOB_0_2,
	ST_JOB_VALUE,
	ST_LIST_LIVE,
	ST_LIST_LIVE_KEY,
	ST_LIST_LIVE_IDS,
	ST_LIST_HISTORY,
	ST_LIST_HISTORY_IDS,
	ST_LIST_HISTORY_SCHEDULE,
	NUM_STATEMENTS
};

/*
 * jobq_job 0.2 (jobq_job_0_2): the attempt history of job A, a jsonb
 * array in attempt order.  Each ended attempt but a completed one is an
 * entry of A.errors (JOBQ_ATTEMPT_END_SQL; those written by 0.1.0 have no
 * outcome, worker nor claimed_at: a failure or an expired lease, told by
 * its text); CURRENT is the attempt the row itself describes (running, or
 * completed), if any: its FIELDS when WHEN holds.  Error texts only for
 * readers ($2).
 */
#define JOB_ATTEMPTS_SQL(A, FIELDS, WHEN) \
	"COALESCE((SELECT pg_catalog.jsonb_agg(t.x ORDER BY t.n) FROM (" \
	"  SELECT e.n, pg_catalog.jsonb_build_object('attempt', e.e -> 'attempt'," \
	"    'worker', e.e -> 'worker', 'claimed_at', e.e -> 'claimed_at'," \
	"    'finished_at', e.e -> 'at'," \
	"    'outcome', COALESCE(e.e ->> 'outcome'," \
	"       CASE WHEN e.e ->> 'error' = 'lease expired' THEN 'lease expired' ELSE 'failed' END)," \
	"    'error', CASE WHEN $2 THEN e.e -> 'error' END," \
	"    'error_truncated', COALESCE(e.e -> 'truncated', 'false'::jsonb)) AS x" \
	"  FROM pg_catalog.jsonb_array_elements(" A ".errors) WITH ORDINALITY AS e(e, n)" \
	"  UNION ALL" \
	"  SELECT 9223372036854775807, pg_catalog.jsonb_build_object('attempt', " A ".attempt," \
	"    'worker', " A ".worker, 'claimed_at', " A ".claimed_at, " FIELDS ")" \
	"  WHERE " WHEN \
	" ) t), '[]'::jsonb)"

/* The errors of job A: its entries but the releases (a release is no error) */
#define JOB_ERRORS_SQL(A) \
	"(SELECT pg_catalog.jsonb_agg(e.e ORDER BY e.n)" \
	"  FROM pg_catalog.jsonb_array_elements(" A ".errors) WITH ORDINALITY AS e(e, n)" \
	"  WHERE e.e ->> 'outcome' IS DISTINCT FROM 'released')"

#define COL_JOB_PAYLOAD		4
#define COL_JOB_RESULT		16
#define COL_JOB_ATTEMPTS	17	/* then payload_truncated, result_truncated */

/*
 * jobq_list 0.2 (jobq_list_0_2).  One statement per variant of the filter
 * (list_filter.h): the filter's parameters $1 .. $13, then $14, $15 the
 * cursor (finished_at, id; NULL: from the start), $16 how many rows of
 * the index range to read at most (the scan cap), $17 how many matching
 * rows to return at most, $18 whether the caller reads error texts.
 *
 * The range r is read in list order and numbered (rn); only the rows that
 * match (m) come back, and the row numbered $16, matching or not, which
 * tells that the scan stopped at its cap and where (the cursor to resume
 * from).  Every row is read in order and at most once: the statement
 * stops as soon as $17 rows came back.  It has no ORDER BY of its own:
 * one over s would sort the whole range (a Sort node does not know that
 * r is in order), so a first page of a million finished jobs read all of
 * them (1 s, where the page needs 51 rows).  The rows come back in r's
 * order, numbered by rn, and list_part checks that rn only grows.
 */
#define LIST_NPARAMS (JOBQ_FILTER_NPARAMS + 5)
#define LIST_PARAM_TYPES \
	JOBQ_FILTER_PARAM_TYPES, TIMESTAMPTZOID, INT8OID, INT8OID, INT8OID, BOOLOID

/* The text of the newest error kept in ERRS (a release is no error) */
#define LIST_LAST_ERROR_SQL(ERRS) \
	"(SELECT le.e ->> 'error' FROM pg_catalog.jsonb_array_elements(" ERRS ")" \
	"  WITH ORDINALITY AS le(e, n)" \
	"  WHERE le.e ->> 'outcome' IS DISTINCT FROM 'released'" \
	"  ORDER BY le.n DESC LIMIT 1)"

/* The columns of every list statement (COL_LIST_*) */
#define LIST_OUTER_SQL \
	"SELECT s.id, s.st, s.priority, s.run_at, s.attempt, s.max_attempts, s.enqueued_at," \
	"  s.finished_at, CASE WHEN $18 THEN " LIST_LAST_ERROR_SQL("s.errors") " END," \
	"  s.worker, s.dedupe_key, s.m, s.rn" \
	" FROM (SELECT r.*, pg_catalog.row_number() OVER () AS rn FROM ("

#define COL_LIST_ID				1
#define COL_LIST_FINISHED_AT	8
#define COL_LIST_LAST_COLUMN	11	/* the columns jobq_list returns as they are */
#define COL_LIST_MATCH			12
#define COL_LIST_ROWNUM			13

#define LIST_LIVE_SQL(RANGE) \
	LIST_OUTER_SQL \
	"  SELECT j.id, " JOBQ_FILTER_LIVE_STATE_SQL("j") " AS st, j.priority::integer AS priority," \
	"    j.run_at, j.attempt, j.max_attempts, j.enqueued_at, NULL::timestamptz AS finished_at," \
	"    j.errors, j.worker, j.dedupe_key, " JOBQ_FILTER_MATCH_SQL("j", "j.run_at") " AS m" \
	RANGE " AND j.id > COALESCE($15, 0)" \
	"  ORDER BY j.id LIMIT $16) r) s" \
	" WHERE s.m OR s.rn = $16 LIMIT $17"

/* Finished jobs before the cursor, in list order (newest first) */
#define LIST_HISTORY_AFTER_SQL(A) \
	"(" A ".finished_at, " A ".id) < (COALESCE($14, 'infinity'::timestamptz)," \
	" COALESCE($15, 9223372036854775807))"

#define LIST_HISTORY_BRANCH(STATE) \
	"(SELECT h.*" JOBQ_FILTER_HISTORY_RANGE_SQL("h", STATE) \
	"   AND " LIST_HISTORY_AFTER_SQL("h") \
	" ORDER BY h.finished_at DESC, h.id DESC LIMIT $16)"

#define LIST_SCHEDULE_BRANCH(STATE) \
	"(SELECT h.*" JOBQ_FILTER_HISTORY_SCHEDULE_SQL("h", STATE) \
	"   AND " LIST_HISTORY_AFTER_SQL("h") \
	" ORDER BY h.finished_at DESC, h.id DESC LIMIT $16)"

#define LIST_HISTORY_SQL(ROWS) \
	LIST_OUTER_SQL \
	"  SELECT h.id, h.state::text AS st, h.priority::integer AS priority, h.run_at, h.attempt," \
	"    h.max_attempts, h.enqueued_at, h.finished_at, h.errors, h.worker, h.dedupe_key," \
	"    " JOBQ_FILTER_MATCH_SQL("h", "h.finished_at") " AS m" \
	"  FROM (" ROWS ") h" \
	"  ORDER BY h.finished_at DESC, h.id DESC LIMIT $16) r) s" \
	" WHERE s.m OR s.rn = $16 LIMIT $17"

static const JobqStatement statements[NUM_STATEMENTS] = {
	/* $1 queue: its refused acks, summed over the backends' slots */
	[ST_STATS] = {"stats_stale_acks",
		"SELECT COALESCE(sum(s.count), 0)::bigint FROM jobq.stale_acks s WHERE s.queue = $1",
		1, {TEXTOID}},
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
	/* $1 id, $2 whether the caller reads payloads, results and errors */
	[ST_JOB_0_2] = {"job_0_2",
		"SELECT id, queue, state::text, CASE WHEN $2 THEN payload END, priority::integer,"
		"  run_at, attempt, max_attempts, locked_until, worker, enqueued_at, claimed_at,"
		"  NULL::timestamptz, dedupe_key, CASE WHEN $2 THEN " JOB_ERRORS_SQL("j") " END, NULL::jsonb,"
		"  " JOB_ATTEMPTS_SQL("j", "'finished_at', NULL, 'outcome', 'running', 'lease_until', j.locked_until",
							  "j.state = 'running'")
		" FROM jobq.jobs j WHERE id = $1"
		" UNION ALL"
		" SELECT id, queue, state::text, CASE WHEN $2 THEN payload END, priority::integer,"
		"  run_at, attempt, max_attempts, NULL::timestamptz, worker, enqueued_at, claimed_at,"
		"  finished_at, dedupe_key, CASE WHEN $2 THEN " JOB_ERRORS_SQL("h") " END,"
		"  CASE WHEN $2 THEN result END,"
		"  " JOB_ATTEMPTS_SQL("h", "'finished_at', h.finished_at, 'outcome', 'completed'",
							  "h.state = 'completed' AND h.claimed_at IS NOT NULL")
		" FROM jobq.history h WHERE id = $1",
		2, {INT8OID, BOOLOID}},
	/* $1 id, $2 whether the result (else the payload) */
	[ST_JOB_VALUE] = {"job_value",
		"SELECT payload FROM jobq.jobs WHERE id = $1 AND NOT $2"
		" UNION ALL"
		" SELECT CASE WHEN $2 THEN result ELSE payload END FROM jobq.history WHERE id = $1",
		2, {INT8OID, BOOLOID}},
	/* jobq_list 0.2: see LIST_LIVE_SQL and LIST_HISTORY_SQL */
	[ST_LIST_LIVE] = {"list_live", LIST_LIVE_SQL(JOBQ_FILTER_LIVE_RANGE_SQL("j")),
		LIST_NPARAMS, {LIST_PARAM_TYPES}},
	[ST_LIST_LIVE_KEY] = {"list_live_key", LIST_LIVE_SQL(JOBQ_FILTER_LIVE_KEY_SQL("j")),
		LIST_NPARAMS, {LIST_PARAM_TYPES}},
	[ST_LIST_LIVE_IDS] = {"list_live_ids", LIST_LIVE_SQL(JOBQ_FILTER_LIVE_IDS_SQL("j")),
		LIST_NPARAMS, {LIST_PARAM_TYPES}},
	[ST_LIST_HISTORY] = {"list_history",
		LIST_HISTORY_SQL(LIST_HISTORY_BRANCH("completed") " UNION ALL "
						 LIST_HISTORY_BRANCH("dead") " UNION ALL "
						 LIST_HISTORY_BRANCH("cancelled")),
		LIST_NPARAMS, {LIST_PARAM_TYPES}},
	[ST_LIST_HISTORY_SCHEDULE] = {"list_history_schedule",
		LIST_HISTORY_SQL(LIST_SCHEDULE_BRANCH("completed") " UNION ALL "
						 LIST_SCHEDULE_BRANCH("dead") " UNION ALL "
						 LIST_SCHEDULE_BRANCH("cancelled")),
		LIST_NPARAMS, {LIST_PARAM_TYPES}},
	[ST_LIST_HISTORY_IDS] = {"list_history_ids",
		LIST_HISTORY_SQL("SELECT h.*" JOBQ_FILTER_HISTORY_IDS_SQL("h") " AND " LIST_HISTORY_AFTER_SQL("h")),
		LIST_NPARAMS, {LIST_PARAM_TYPES}},
};

static SPIPlanPtr plans[NUM_STATEMENTS];

const JobqStatements jobq_inspect_statements = {statements, NUM_STATEMENTS, plans, NULL};

/*
 * jobq_require_inspect
 *	  42704 for an unknown queue (0.1.0 returned no row), 42501 unless the
 *	  caller may inspect it.  Inside SPI.  (metrics.c uses it too.)
 */
void
jobq_require_inspect(text *queue)
{
	JobqQueueSettings settings;

	if (!jobq_queue_settings(queue, &settings))
		jobq_queue_not_found(queue);
	jobq_check_queue(queue, JOBQ_PRIV_INSPECT);
}

/*
 * jobq_stats(queue) -> setof (queue, paused, ready, delayed, running,
 *		expired, dead, completed, cancelled, oldest_ready_age, stale_acks)
 *	  One row per queue the caller may inspect, or for the named one: the
 *	  counts of jobq_counts (counts.c, which says when they are capped),
 *	  in the columns of 0.1.0, and the refused acks.
 */
Datum
jobq_stats(PG_FUNCTION_ARGS)
{
	text	   *queue = PG_ARGISNULL(0) ? NULL : jobq_queue_arg(fcinfo, 0);
	TupleDesc	desc;
	Tuplestorestate *store;
	JobqQueueCounts *counts;
	int			n;

	store = jobq_srf_begin(fcinfo, &desc);
	jobq_spi_connect();
	counts = jobq_counts_collect(queue, &n);
	for (int i = 0; i < n; i++)
	{
		JobqQueueCounts *c = &counts[i];
		Datum		v[11];
		bool		nulls[11] = {false};
		bool		isnull;
		int			rc;

		v[0] = CStringGetTextDatum(c->queue);
		rc = SPI_execute_plan(jobq_plan(&jobq_inspect_statements, ST_STATS), v, NULL, true, 1);
		jobq_spi_check(rc, SPI_OK_SELECT, "stats");
		v[10] = Int64GetDatum(jobq_spi_getint64(0, 1, &isnull));
		v[1] = BoolGetDatum(c->paused);
		v[2] = Int64GetDatum(c->ready);
		v[3] = Int64GetDatum(c->delayed);
		v[4] = Int64GetDatum(c->running);
		v[5] = Int64GetDatum(c->expired);
		v[6] = Int64GetDatum(c->dead);
		v[7] = Int64GetDatum(c->completed);
		v[8] = Int64GetDatum(c->cancelled);
		v[9] = c->has_oldest ? IntervalPGetDatum(jobq_counts_age(c)) : (Datum) 0;
		nulls[9] = !c->has_oldest;
		tuplestore_putvalues(store, desc, v, nulls);
	}
	jobq_spi_finish();
	return (Datum) 0;
}

/*
 * job_rows
 *	  The rows of statement index ($1 the job id of argument 0, $2 whether
 *	  the caller reads payloads), left in SPI (connected) for the caller
 *	  to put into *store and finish; false, with SPI finished and no row,
 *	  when the caller may not inspect the job's queue.
 */
static bool
job_rows(FunctionCallInfo fcinfo, int index, Tuplestorestate **store, TupleDesc *desc)
{
	Datum		args[2];
	int			rc;

	jobq_require(fcinfo, 0, "id");
	args[0] = PG_GETARG_DATUM(0);
	args[1] = BoolGetDatum(jobq_caller_reads_payloads());

	*store = jobq_srf_begin(fcinfo, desc);
	jobq_spi_connect();
	if (!jobq_job_allowed(args[0], JOBQ_PRIV_INSPECT))
	{
		jobq_spi_finish();
		return false;
	}
	rc = SPI_execute_plan(jobq_plan(&jobq_inspect_statements, index), args, NULL, true, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "job");
	return true;
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
	TupleDesc	desc;
	Tuplestorestate *store;

	if (job_rows(fcinfo, ST_JOB, &store, &desc))
	{
		jobq_srf_put_spi(store, desc);
		jobq_spi_finish();
	}
	return (Datum) 0;
}

/*
 * cut_value
 *	  A payload or result whose text is longer than JOBQ_INSPECT_VALUE_MAX
 *	  bytes, as a JSON string of its first JOBQ_INSPECT_VALUE_MAX bytes (cut
 *	  on a character boundary); NULL when it is short enough.
 */
static Datum
cut_value(Datum value)
{
	Jsonb	   *jb = DatumGetJsonbP(value);
	char	   *text = JsonbToCString(NULL, &jb->root, VARSIZE(jb));
	int			len = strlen(text);
	JsonbValue	cut;

	if (len <= JOBQ_INSPECT_VALUE_MAX)
		return (Datum) 0;
	cut.type = jbvString;
	cut.val.string.val = text;
	cut.val.string.len = pg_mbcliplen(text, len, JOBQ_INSPECT_VALUE_MAX);
	return JsonbPGetDatum(JsonbValueToJsonb(&cut));
}

/*
 * jobq_job(id) -> setof (the 0.1.0 columns, attempts, payload_truncated,
 *		result_truncated)
 *	  (SQL 0.2.0.)  As jobq_job, with the attempt history (JOB_ATTEMPTS_SQL;
 *	  never a token) and errors without the releases.  A payload or result
 *	  longer than JOBQ_INSPECT_VALUE_MAX bytes as text comes back cut, as a
 *	  JSON string, with its flag set; jobq_job_value returns it whole.
 */
Datum
jobq_job_0_2(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	Tuplestorestate *store;

	if (!job_rows(fcinfo, ST_JOB_0_2, &store, &desc))
		return (Datum) 0;
	if (SPI_tuptable->tupdesc->natts != COL_JOB_ATTEMPTS || desc->natts != COL_JOB_ATTEMPTS + 2)
		elog(ERROR, "jobq: job statement returned %d columns, expected %d",
			 SPI_tuptable->tupdesc->natts, COL_JOB_ATTEMPTS);
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		Datum		out[COL_JOB_ATTEMPTS + 2];
		bool		nulls[COL_JOB_ATTEMPTS + 2];
		const int	cols[2] = {COL_JOB_PAYLOAD, COL_JOB_RESULT};

		heap_deform_tuple(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, out, nulls);
		for (int i = 0; i < 2; i++)
		{
			Datum		cut = nulls[cols[i] - 1] ? (Datum) 0 : cut_value(out[cols[i] - 1]);

			if (cut != (Datum) 0)
				out[cols[i] - 1] = cut;
			out[COL_JOB_ATTEMPTS + i] = BoolGetDatum(cut != (Datum) 0);
			nulls[COL_JOB_ATTEMPTS + i] = false;
		}
		tuplestore_putvalues(store, desc, out, nulls);
	}
	jobq_spi_finish();
	return (Datum) 0;
}

/*
 * jobq_job_value(id, part) -> jsonb
 *	  A job's payload or result ('payload' or 'result') whole, however
 *	  large: jobq_job cuts them.  NULL when there is no such job (or no
 *	  result), or when the caller may not inspect its queue; 42501 without
 *	  the privileges of jobq_reader.
 */
Datum
jobq_job_value(PG_FUNCTION_ARGS)
{
	Datum		args[2];
	char	   *part;
	Datum		value = (Datum) 0;
	bool		isnull = true;
	int			rc;

	jobq_require(fcinfo, 0, "id");
	jobq_require(fcinfo, 1, "part");
	part = text_to_cstring(PG_GETARG_TEXT_PP(1));
	if (strcmp(part, "payload") != 0 && strcmp(part, "result") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown job part \"%s\"", part),
				 errhint("Parts are payload and result.")));
	if (!jobq_caller_reads_payloads())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("reading a job's %s needs the privileges of jobq_reader", part)));
	args[0] = PG_GETARG_DATUM(0);
	args[1] = BoolGetDatum(strcmp(part, "result") == 0);

	jobq_spi_connect();
	if (jobq_job_allowed(args[0], JOBQ_PRIV_INSPECT))
	{
		rc = SPI_execute_plan(jobq_plan(&jobq_inspect_statements, ST_JOB_VALUE),
							  args, NULL, true, 1);
		jobq_spi_check(rc, SPI_OK_SELECT, "job value");
		if (SPI_processed > 0)
			value = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		if (!isnull)
			value = SPI_datumTransfer(value, false, -1);	/* out of SPI's memory */
	}
	jobq_spi_finish();
	if (isnull)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(value);
}

/*
 * list_state_arg
 *	  The state argument argno of jobq_list: NULL (every state) or one of
 *	  list_states, else 22023.
 */
static char *
list_state_arg(FunctionCallInfo fcinfo, int argno)
{
	char	   *state;
	bool		known = false;

	if (PG_ARGISNULL(argno))
		return NULL;
	state = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	for (int i = 0; i < lengthof(list_states); i++)
		known |= strcmp(state, list_states[i]) == 0;
	if (!known)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown job state \"%s\"", state),
				 errhint("States are %s.",
						 jobq_name_list(list_states, lengthof(list_states), "and"))));
	return state;
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
	if (list_state_arg(fcinfo, 1) != NULL)
	{
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
	jobq_require_inspect(DatumGetTextPP(values[0]));
	rc = SPI_execute_plan(jobq_plan(&jobq_inspect_statements, ST_LIST),
						  values, nulls, true, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "list");
	jobq_srf_put_spi(store, desc);
	jobq_spi_finish();
	return (Datum) 0;
}

/*
 * A position in a list (jobq_list's cursor), as text: "j:ID" after live
 * job ID, "h:FINISHED:ID" after finished job ID (FINISHED: its finished_at
 * in microseconds since 2000-01-01 UTC), "h" at the first finished job.
 * Opaque to callers; only what jobq_list returned is accepted.
 */
typedef struct ListCursor
{
	bool		set;			/* false: from the start */
	bool		history;		/* in the finished jobs */
	bool		has_key;		/* false: at the first finished job */
	TimestampTz finished_at;
	int64		id;
} ListCursor;

static void
bad_cursor(const char *text)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid list cursor \"%s\"", text),
			 errhint("Pass a next_cursor that jobq_list returned, or NULL to start.")));
}

static ListCursor
parse_cursor(const char *s)
{
	ListCursor	c = {true, false, false, 0, 0};
	long long	a,
				b;
	int			used = 0;

	if (strcmp(s, "h") == 0)
		c.history = true;
	else if (sscanf(s, "j:%lld%n", &a, &used) == 1 && s[used] == '\0' && a >= 0)
	{
		c.has_key = true;
		c.id = (int64) a;
	}
	else if (sscanf(s, "h:%lld:%lld%n", &a, &b, &used) == 2 && s[used] == '\0' && b >= 0)
	{
		c.history = c.has_key = true;
		c.finished_at = (TimestampTz) a;
		c.id = (int64) b;
	}
	else
		bad_cursor(s);
	return c;
}

/* The cursor after row row of the last SPI result of a list statement */
static char *
row_cursor(uint64 row, bool history)
{
	bool		isnull;
	int64		id = jobq_spi_getint64(row, COL_LIST_ID, &isnull);

	if (!history)
		return psprintf("j:" INT64_FORMAT, id);
	return psprintf("h:" INT64_FORMAT ":" INT64_FORMAT,
					DatumGetTimestampTz(SPI_getbinval(SPI_tuptable->vals[row],
													  SPI_tuptable->tupdesc,
													  COL_LIST_FINISHED_AT, &isnull)),
					id);
}

/* The rows of a page, kept until the page's cursor is known */
typedef struct ListPage
{
	int			max;
	int			n;
	HeapTuple  *rows;			/* in SPI's memory: valid until SPI_finish */
	TupleDesc  *descs;
	char	   *next_cursor;	/* NULL: nothing after the page */
	bool		scan_truncated;
} ListPage;

/*
 * list_part
 *	  Run one list statement (live or history) and take its rows into
 *	  page.  true when the page is done: full with more to come, or the
 *	  scan stopped at its cap (then the page's cursor resumes there);
 *	  false when the part has nothing more.
 */
static bool
list_part(ListPage *page, int index, bool history, Datum *values, char *nulls, int64 scan)
{
	int			rc;
	uint64		last = 0;		/* the last row taken */
	int64		prev_rn = 0;	/* the rn of the row before */

	values[JOBQ_FILTER_NPARAMS + 2] = Int64GetDatum(scan);
	values[JOBQ_FILTER_NPARAMS + 3] = Int64GetDatum((int64) (page->max - page->n) + 1);
	rc = SPI_execute_plan(jobq_plan(&jobq_inspect_statements, index), values, nulls, true, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "list");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;

		int64		rn = jobq_spi_getint64(i, COL_LIST_ROWNUM, &isnull);

		if (rn <= prev_rn)
			elog(ERROR, "jobq: list rows came back out of order (row " INT64_FORMAT
				 " after " INT64_FORMAT ")", rn, prev_rn);
		prev_rn = rn;
		if (jobq_spi_getbool(i, COL_LIST_MATCH, &isnull))
		{
			if (page->n == page->max)
			{
				/* page->max > 0 rows, and this part's call had room: one is ours */
				page->next_cursor = row_cursor(last, history);
				return true;
			}
			last = i;
			page->rows[page->n] = SPI_tuptable->vals[i];
			page->descs[page->n] = SPI_tuptable->tupdesc;
			page->n++;
		}
		if (rn == scan)
		{
			page->next_cursor = row_cursor(i, history);
			page->scan_truncated = true;
			return true;
		}
	}
	return false;
}

/*
 * jobq_list(queue, state, max_rows, after, filters) -> setof (id, state,
 *		priority, run_at, attempt, max_attempts, enqueued_at, finished_at,
 *		last_error, worker, dedupe_key, next_cursor, scan_truncated)
 *	  (SQL 0.2.0.)  A page of the jobs of a queue that pass filters
 *	  (list_filter.h): live jobs by id, then finished ones newest first,
 *	  from after (a next_cursor of an earlier page; NULL: the start).
 *	  Every row carries the page's next_cursor (NULL: nothing after it)
 *	  and scan_truncated: a filter that no index answers is evaluated on
 *	  at most jobq.list_scan_limit rows per call, and when those ran out
 *	  the page ends there (next_cursor resumes after the last row read);
 *	  if it found no row at all, one row with only next_cursor and
 *	  scan_truncated set says so.  Never an OFFSET, never a total.
 */
Datum
jobq_list_0_2(PG_FUNCTION_ARGS)
{
	text	   *queue = jobq_queue_arg(fcinfo, 0);
	char	   *state = list_state_arg(fcinfo, 1);
	bool		live_state = state == NULL || strcmp(state, "ready") == 0 ||
		strcmp(state, "delayed") == 0 || strcmp(state, "running") == 0 ||
		strcmp(state, "waiting") == 0;
	ListCursor	cursor = {false, false, false, 0, 0};
	JobqListFilter filter;
	Datum		values[LIST_NPARAMS];
	char		nulls[LIST_NPARAMS];
	ListPage	page = {0};
	TupleDesc	desc;
	Tuplestorestate *store;
	bool		done = false;

	jobq_require(fcinfo, 2, "max_rows");
	jobq_check_int_range(PG_GETARG_INT32(2), "max_rows", 1, JOBQ_LIST_MAX_ROWS);
	if (!PG_ARGISNULL(3))
	{
		char	   *after = text_to_cstring(PG_GETARG_TEXT_PP(3));

		cursor = parse_cursor(after);
		/* a cursor of finished jobs with a live state, or the reverse */
		if (state != NULL && cursor.history == live_state)
			bad_cursor(after);
	}
	jobq_require(fcinfo, 4, "filters");
	jobq_list_filter_parse(PG_GETARG_JSONB_P(4), &filter);

	page.max = PG_GETARG_INT32(2);
	page.rows = palloc(sizeof(HeapTuple) * (page.max + 1));
	page.descs = palloc(sizeof(TupleDesc) * (page.max + 1));
	jobq_list_filter_bind(&filter, queue, state, jobq_now(), values, nulls);
	values[LIST_NPARAMS - 1] = BoolGetDatum(jobq_caller_reads_payloads());
	nulls[LIST_NPARAMS - 1] = ' ';
	nulls[JOBQ_FILTER_NPARAMS + 2] = nulls[JOBQ_FILTER_NPARAMS + 3] = ' ';

	store = jobq_srf_begin(fcinfo, &desc);
	jobq_spi_connect();
	jobq_require_inspect(queue);

	/* live jobs, unless the state or the cursor is past them */
	if (live_state && !cursor.history)
	{
		JobqFilterVariant v = jobq_list_filter_variant(&filter, false);
		int64		scan = jobq_list_filter_capped(&filter, v) ?
			Max(jobq_list_scan_limit, page.max + 1) : PG_INT64_MAX;

		nulls[JOBQ_FILTER_NPARAMS] = 'n';
		values[JOBQ_FILTER_NPARAMS + 1] = Int64GetDatum(cursor.id);
		nulls[JOBQ_FILTER_NPARAMS + 1] = cursor.set ? ' ' : 'n';
		done = list_part(&page, v == JOBQ_FILTER_LIVE_IDS ? ST_LIST_LIVE_IDS :
						 v == JOBQ_FILTER_LIVE_KEY ? ST_LIST_LIVE_KEY : ST_LIST_LIVE,
						 false, values, nulls, scan);
		cursor.has_key = false;
		if (!done && state == NULL && page.n == page.max)
		{
			page.next_cursor = "h";
			done = true;
		}
	}
	/* then finished jobs */
	if (!done && (state == NULL || !live_state))
	{
		JobqFilterVariant v = jobq_list_filter_variant(&filter, true);
		int64		scan = jobq_list_filter_capped(&filter, v) ?
			Max(jobq_list_scan_limit, page.max + 1) : PG_INT64_MAX;

		values[JOBQ_FILTER_NPARAMS] = TimestampTzGetDatum(cursor.finished_at);
		values[JOBQ_FILTER_NPARAMS + 1] = Int64GetDatum(cursor.id);
		nulls[JOBQ_FILTER_NPARAMS] = nulls[JOBQ_FILTER_NPARAMS + 1] = cursor.has_key ? ' ' : 'n';
		list_part(&page, v == JOBQ_FILTER_HISTORY_IDS ? ST_LIST_HISTORY_IDS :
				  v == JOBQ_FILTER_HISTORY_SCHEDULE ? ST_LIST_HISTORY_SCHEDULE : ST_LIST_HISTORY,
				  true, values, nulls, scan);
	}

	/* the page, every row with its cursor */
	{
		Datum		out[COL_LIST_LAST_COLUMN + 2];
		bool		outnulls[COL_LIST_LAST_COLUMN + 2];

		out[COL_LIST_LAST_COLUMN] = page.next_cursor != NULL ?
			CStringGetTextDatum(page.next_cursor) : (Datum) 0;
		outnulls[COL_LIST_LAST_COLUMN] = page.next_cursor == NULL;
		out[COL_LIST_LAST_COLUMN + 1] = BoolGetDatum(page.scan_truncated);
		outnulls[COL_LIST_LAST_COLUMN + 1] = false;
		for (int r = 0; r < page.n; r++)
		{
			for (int c = 0; c < COL_LIST_LAST_COLUMN; c++)
				out[c] = SPI_getbinval(page.rows[r], page.descs[r], c + 1, &outnulls[c]);
			tuplestore_putvalues(store, desc, out, outnulls);
		}
		if (page.n == 0 && page.scan_truncated)
		{
			for (int c = 0; c < COL_LIST_LAST_COLUMN; c++)
				outnulls[c] = true;
			tuplestore_putvalues(store, desc, out, outnulls);
		}
	}
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
