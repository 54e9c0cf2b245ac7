/*-------------------------------------------------------------------------
 *
 * claim.c
 *	  jobq_claim: take ready jobs from one or several queues.
 *
 * A claim is one statement.  It reads ready jobs whose run_at has come, in
 * (priority, run_at, id) order through jobs_claim_idx, locking them with
 * FOR NO KEY UPDATE SKIP LOCKED, and turns them into running jobs:
 * attempt + 1 (counted at claim, so a crash burns an attempt), a fresh
 * random token, and a lease locked_until = now + lease.
 *
 * The tokens come from a pool filled by pg_strong_random (claim_tokens),
 * not from gen_random_uuid() per row: each call of the latter costs
 * 2.5-3 us here (a getpid() system call and a lock inside the random
 * generator), a tenth of what a batched claim spends per job.  Every job
 * still gets its own random token; the statement hands out the array's
 * element number n to the job at position n of the claim order, and also
 * returns n, by which the rows are sorted here instead of by a Sort node
 * over a CTE.
 *
 * From one queue that the backend's settings cache (queue_cache.c) knows
 * and does not call paused, run_claim_one does this with the cached lease,
 * without reading jobq.queues.  Otherwise run_claim_any reads jobq.queues, scans each
 * named queue that exists and is not paused through a lateral, and keeps
 * the best max_jobs across them.  Either is done without its statement
 * when it can be (direct_claim.c): from several queues, one merge of
 * their scans that locks only the rows it takes.
 *
 * NO KEY UPDATE rather than UPDATE: application tables may hold foreign
 * keys to job ids (a KEY SHARE lock), and those must not hide the job from
 * claims.  SKIP LOCKED: concurrent claimers never wait for each other and
 * never get the same job.  When a row changed under us (re-claimed,
 * extended), the lock follows the update chain and the WHERE clause is
 * re-checked on the newest version, so a job that is no longer ready is
 * dropped rather than handed out twice.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/claim.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"
#include "counters.h"
#include "direct.h"
#include "jobq_sql.h"
#include "groups.h"

#include "catalog/pg_type.h"
#include "utils/array.h"
#include "access/xact.h"
#include "utils/builtins.h"
#include "utils/uuid.h"

PG_FUNCTION_INFO_V1(jobq_claim);
PG_FUNCTION_INFO_V1(jobq_claim_any);

#define ARG_QUEUES		0
#define ARG_WORKER		1
#define ARG_MAX_JOBS	2
#define ARG_LEASE		3
#define ARG_WAIT		4

/*
 * Columns of a claim statement: the 8 of jobq_claim's result, then n, then
 * what the counters need (counters.c): run_at; then where the running row
 * is, for a direct complete (direct_map.c); with 0.2.0's SQL then flow_id
 * (JOBQ_CLAIM_RETURN_FLOW_SQL), the ninth column of its result.
 */
#define CLAIM_RESULT_COLS	JOBQ_CLAIM_RESULT_COLS
#define COL_CLAIM_POSITION	(CLAIM_RESULT_COLS + 1)
#define COL_CLAIM_CTID		(CLAIM_RESULT_COLS + 3)
#define CLAIM_COLS			(CLAIM_RESULT_COLS + 3)
#define COL_CLAIM_FLOW_ID	(CLAIM_COLS + 1)

/*
 * The statements.  Claims take $1 the queue name (claim_one) or names
 * (claim_any), $2 now, $3 max_jobs, $4 the lease (claim_any: NULL for
 * each queue's), $5 worker, $6 the tokens.
 *
 * claim_any: the LATERAL per queue keeps each index scan ordered and
 * bounded by LIMIT even when several queues are named; the outer ORDER BY
 * ... LIMIT then picks the best across queues.  Rows a lateral locked but
 * the outer LIMIT dropped stay locked (not claimed) until the end of this
 * transaction; other claimers just skip them.
 *
 * Both UPDATEs join an array of ids, not the ready rows themselves: a
 * generic plan cannot know that LIMIT $3 is small, and for a join with
 * them it chose a hash join over a scan of every job.  unnest() of an
 * array is estimated at a few rows, so each id is probed through the
 * primary key (sql/jobq_explain.sql checks this).
 */
enum
{
	ST_CLAIM_ANY,
	ST_CLAIM_ANY_UNGROUPED,
	ST_CLAIM_ONE,
	ST_NEXT_DUE,
	ST_CLAIM_ANY_FLOW,
	ST_CLAIM_ONE_FLOW,
	NUM_STATEMENTS
};

/*
 * the claim from several queues; QUEUE_FILTER narrows the queues, RETURN
 * is JOBQ_CLAIM_RETURN_SQL or (0.2.0's SQL) JOBQ_CLAIM_RETURN_FLOW_SQL
 */
#define CLAIM_ANY_SQL(QUEUE_FILTER, RETURN) \
	"WITH q AS MATERIALIZED (" \
	"  SELECT name, lease FROM jobq.queues" \
	"  WHERE name = ANY ($1) AND NOT paused" QUEUE_FILTER ")," \
	" c AS (" \
	"  SELECT j.id, j.priority, j.run_at FROM q CROSS JOIN LATERAL (" \
	"    " JOBQ_READY_JOBS_SQL("j", "j.id, j.priority, j.run_at", "q.name", "NO KEY UPDATE") ") j" \
	"  ORDER BY " JOBQ_CLAIM_ORDER_SQL("j") \
	"  LIMIT $3)" \
	" " JOBQ_CLAIM_SET_SQL \
	"  locked_until = $2 + COALESCE($4, (SELECT q.lease FROM q WHERE q.name = j.queue))," \
	"  claimed_at = $2, worker = $5" \
	" FROM unnest(ARRAY(SELECT c.id FROM c ORDER BY " JOBQ_CLAIM_ORDER_SQL("c") "))" \
	"   WITH ORDINALITY AS o(id, n)" \
	RETURN

/* the claim from one queue, RETURN as above */
#define CLAIM_ONE_SQL(RETURN) \
	JOBQ_CLAIM_SET_SQL \
	"  locked_until = $2 + $4, claimed_at = $2, worker = $5" \
	" FROM unnest(" JOBQ_READY_IDS_SQL("NO KEY UPDATE") ")" \
	"   WITH ORDINALITY AS o(id, n)" \
	RETURN

static const JobqStatement statements[NUM_STATEMENTS] = {
	[ST_CLAIM_ANY] = {"claim_any",
		CLAIM_ANY_SQL("", JOBQ_CLAIM_RETURN_SQL),
		6, {TEXTARRAYOID, TIMESTAMPTZOID, INT8OID, INTERVALOID, TEXTOID, UUIDARRAYOID}},
	/* the same, leaving out the queues that group or limit (0.2.0 SQL) */
	[ST_CLAIM_ANY_UNGROUPED] = {"claim_any_ungrouped",
		CLAIM_ANY_SQL(" AND group_mode = 'none' AND max_running = 0 AND rate = 0",
					  JOBQ_CLAIM_RETURN_FLOW_SQL),
		6, {TEXTARRAYOID, TIMESTAMPTZOID, INT8OID, INTERVALOID, TEXTOID, UUIDARRAYOID}},
	[ST_CLAIM_ONE] = {"claim_one",
		CLAIM_ONE_SQL(JOBQ_CLAIM_RETURN_SQL),
		6, {TEXTOID, TIMESTAMPTZOID, INT8OID, INTERVALOID, TEXTOID, UUIDARRAYOID}},
	/* claim_any and claim_one with the jobs' flow_id (0.2.0 SQL) */
	[ST_CLAIM_ANY_FLOW] = {"claim_any_flow",
		CLAIM_ANY_SQL("", JOBQ_CLAIM_RETURN_FLOW_SQL),
		6, {TEXTARRAYOID, TIMESTAMPTZOID, INT8OID, INTERVALOID, TEXTOID, UUIDARRAYOID}},
	[ST_CLAIM_ONE_FLOW] = {"claim_one_flow",
		CLAIM_ONE_SQL(JOBQ_CLAIM_RETURN_FLOW_SQL),
		6, {TEXTOID, TIMESTAMPTZOID, INT8OID, INTERVALOID, TEXTOID, UUIDARRAYOID}},
	/* $1 queues, $2 now: when the next delayed job comes due */
	[ST_NEXT_DUE] = {"next_due",
		"SELECT min(run_at) FROM jobq.jobs"
		" WHERE queue = ANY ($1) AND state = 'ready' AND run_at > $2",
		2, {TEXTARRAYOID, TIMESTAMPTZOID}},
};

static SPIPlanPtr plans[NUM_STATEMENTS];

const JobqStatements jobq_claim_statements = {statements, NUM_STATEMENTS, plans, NULL};

/*
 * run_claim_any
 *	  Execute the claim statement for several queues once, at the current
 *	  time.  Returns the number of jobs claimed; the rows are in
 *	  SPI_tuptable.
 */
static uint64
run_claim_any(Datum *values, char *nulls)
{
	int			rc;

	rc = SPI_execute_plan(jobq_plan(&jobq_claim_statements,
									jobq_flows_available() ? ST_CLAIM_ANY_FLOW : ST_CLAIM_ANY),
						  values, nulls, false, 0);
	jobq_spi_check(rc, SPI_OK_UPDATE_RETURNING, "claim");
	return SPI_processed;
}

/*
 * run_claim_one
 *	  The same for one queue that exists and is not paused, with its lease
 *	  from the backend's cache of queue settings (queue_cache.c): no read
 *	  of jobq.queues, no per-queue lateral, no merge across queues.  A
 *	  claim from one queue is the common case (jobq-worker, libjobq).
 */
static uint64
run_claim_one(Datum *values, const char *nulls, text *queue, const JobqQueueSettings *settings)
{
	Datum		args[6];
	char		args_nulls[6] = {' ', ' ', ' ', ' ', ' ', ' '};
	int			rc;

	args[0] = PointerGetDatum(queue);
	args[1] = values[1];
	args[2] = values[2];
	/* the lease: given, or the queue's */
	args[3] = nulls[3] == 'n' ? IntervalPGetDatum((Interval *) &settings->lease) : values[3];
	args[4] = values[4];
	args_nulls[4] = nulls[4];
	args[5] = values[5];
	rc = SPI_execute_plan(jobq_plan(&jobq_claim_statements,
									jobq_flows_available() ? ST_CLAIM_ONE_FLOW : ST_CLAIM_ONE),
						  args, args_nulls, false, 0);
	jobq_spi_check(rc, SPI_OK_UPDATE_RETURNING, "claim");
	return SPI_processed;
}

/*
 * When the last claim attempt took nothing because of a queue's rate: when
 * the next token is due (0: not held back by a rate).  do_claim sleeps no
 * longer than that (claim_limits.c).
 */
static TimestampTz rate_retry_at = 0;

/*
 * run_claim_direct
 *	  Claim from the n queues items[] without the statement, when it can be
 *	  (direct_claim.c): each queue that exists, once, with its lease.  A
 *	  queue that groups or limits is left out when skip_limited (its own
 *	  claim found nothing), else it leaves the claim to the statement, as
 *	  does a queue the cache calls paused (see run_claim), or none left.
 *	  Returns whether it claimed, *claimed jobs, their rows in store.
 */
static bool
run_claim_direct(Datum *values, const char *nulls, Datum *items, int n, bool skip_limited,
				 Tuplestorestate *store, TupleDesc desc, int *claimed)
{
	JobqQueueSettings *settings = palloc(sizeof(JobqQueueSettings) * n);
	JobqClaimQueue *queues = palloc(sizeof(JobqClaimQueue) * n);
	int			nq = 0;
	bool		done;

	for (int i = 0; i < n; i++)
	{
		text	   *queue = DatumGetTextPP(items[i]);
		bool		seen = false;

		/* a name given twice is one queue, as in the statement's = ANY */
		for (int j = 0; j < nq && !seen; j++)
			seen = VARSIZE_ANY_EXHDR(queues[j].queue) == VARSIZE_ANY_EXHDR(queue) &&
				memcmp(VARDATA_ANY(queues[j].queue), VARDATA_ANY(queue),
					   VARSIZE_ANY_EXHDR(queue)) == 0;
		/* NB: a queue that does not exist has no jobs */
		if (seen || !jobq_queue_settings(queue, &settings[nq]))
			continue;
		if (settings[nq].paused)
		{
			nq = 0;
			break;
		}
		/* NB: the queues run_claim_grouped_any claimed by their own statements */
		if (skip_limited &&
			(jobq_queue_grouped(&settings[nq]) || jobq_queue_limited(&settings[nq])))
			continue;
		queues[nq].queue = queue;
		queues[nq].settings = &settings[nq];
		queues[nq].lease = nulls[3] == 'n' ? &settings[nq].lease : DatumGetIntervalP(values[3]);
		nq++;
	}
	done = nq > 0 &&
		jobq_direct_claim(queues, nq, DatumGetTimestampTz(values[1]),
						  (int) DatumGetInt64(values[2]),
						  nulls[4] == 'n' ? NULL : DatumGetTextPP(values[4]),
						  (pg_uuid_t *) ARR_DATA_PTR(DatumGetArrayTypeP(values[5])),
						  store, desc, claimed);
	/* NB: a waiting claim calls this once per attempt */
	pfree(queues);
	pfree(settings);
	return done;
}

/*
 * run_claim_grouped_any
 *	  A claim from several queues while some queue groups its jobs or
 *	  limits its claims: from the first named such queue that has work
 *	  (through its groups, group_claim.c, and its limits, claim_limits.c),
 *	  else from the others, directly or through the general statement,
 *	  both of which leave those queues out.
 */
static uint64
run_claim_grouped_any(Datum *values, char *nulls, Datum *items, int n, Tuplestorestate *store,
					  TupleDesc desc, bool *direct)
{
	int			direct_claimed;
	JobqQueueSettings settings;
	int			rc;

	for (int i = 0; i < n; i++)
	{
		text	   *queue = DatumGetTextPP(items[i]);
		uint64		claimed;
		TimestampTz retry_at;

		if (!jobq_queue_settings(queue, &settings) || settings.paused ||
			(!jobq_queue_grouped(&settings) && !jobq_queue_limited(&settings)))
			continue;
		if (jobq_queue_limited(&settings))
		{
			claimed = jobq_claim_limited(values, nulls, queue, &settings,
										 jobq_queue_grouped(&settings) ? jobq_group_claim :
										 run_claim_one, &retry_at);
			if (retry_at != 0 && (rate_retry_at == 0 || retry_at < rate_retry_at))
				rate_retry_at = retry_at;
		}
		else
			claimed = jobq_group_claim(values, nulls, queue, &settings);
		if (claimed > 0)
			return claimed;
		SPI_freetuptable(SPI_tuptable);
	}
	if (run_claim_direct(values, nulls, items, n, true, store, desc, &direct_claimed))
	{
		*direct = true;
		SPI_tuptable = NULL;	/* the rows are in store already */
		return direct_claimed;
	}
	rc = SPI_execute_plan(jobq_plan(&jobq_claim_statements, ST_CLAIM_ANY_UNGROUPED),
						  values, nulls, false, 0);
	jobq_spi_check(rc, SPI_OK_UPDATE_RETURNING, "claim");
	return SPI_processed;
}

/*
 * run_claim
 *	  Claim once, at the current time, from the n queues items[] (also the
 *	  text[] values[0]).  Returns the number of jobs claimed; when it is
 *	  not 0, the rows are in SPI_tuptable.
 *
 *	  NB: a queue that the cache calls paused (or does not know) goes
 *	  through the general statement, which reads jobq.queues in its own
 *	  snapshot.  jobq_resume wakes waiting claims from its commit callback,
 *	  which runs before PostgreSQL sends the commit's cache invalidation:
 *	  a woken claim may still find the queue paused in its cache.
 */
static uint64
run_claim(Datum *values, char *nulls, Datum *items, int n, Tuplestorestate *store,
		  TupleDesc desc, bool *direct)
{
	JobqQueueSettings settings;
	int			claimed;

	*direct = false;
	values[1] = TimestampTzGetDatum(jobq_now());
	rate_retry_at = 0;
	if (n == 1 && jobq_queue_settings(DatumGetTextPP(items[0]), &settings) &&
		!settings.paused)
	{
		JobqClaimFn claim = jobq_queue_grouped(&settings) ? jobq_group_claim : run_claim_one;

		if (jobq_queue_limited(&settings))
			return jobq_claim_limited(values, nulls, DatumGetTextPP(items[0]), &settings, claim,
									  &rate_retry_at);
		/* the same claim without the statement, when it can be (direct_claim.c) */
		if (claim == run_claim_one)
		{
			JobqClaimQueue one = {DatumGetTextPP(items[0]), &settings,
			nulls[3] == 'n' ? &settings.lease : DatumGetIntervalP(values[3])};

			if (jobq_direct_claim(&one, 1, DatumGetTimestampTz(values[1]),
								  (int) DatumGetInt64(values[2]),
								  nulls[4] == 'n' ? NULL : DatumGetTextPP(values[4]),
								  (pg_uuid_t *) ARR_DATA_PTR(DatumGetArrayTypeP(values[5])),
								  store, desc, &claimed))
			{
				*direct = true;
				SPI_tuptable = NULL;	/* the rows are in store already */
				return claimed;
			}
		}
		return claim(values, nulls, DatumGetTextPP(items[0]), &settings);
	}
	/* NB: also a queue the cache calls paused: its jobs are not for claim_any */
	if (jobq_any_grouped_queue() || jobq_any_limited_queue())
		return run_claim_grouped_any(values, nulls, items, n, store, desc, direct);
	/* several queues merged without the statement, when it can be */
	if (run_claim_direct(values, nulls, items, n, false, store, desc, &claimed))
	{
		*direct = true;
		SPI_tuptable = NULL;
		return claimed;
	}
	return run_claim_any(values, nulls);
}

/*
 * next_due_ms
 *	  Milliseconds until the earliest delayed job of the queues comes due,
 *	  or -1 when there is none.
 */
static long
next_due_ms(Datum queues)
{
	Datum		values[2];
	TimestampTz now = jobq_now();
	bool		isnull;
	Datum		due;
	int			rc;

	values[0] = queues;
	values[1] = TimestampTzGetDatum(now);
	rc = SPI_execute_plan(jobq_plan(&jobq_claim_statements, ST_NEXT_DUE),
						  values, NULL, false, 1);
	jobq_spi_check(rc, SPI_OK_SELECT, "next due job");
	due = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	SPI_freetuptable(SPI_tuptable);
	if (isnull)
		return -1;
	return (long) ((DatumGetTimestampTz(due) - now) / 1000) + 1;
}

/*
 * Claim tokens come from a backend-local pool of random version-4 UUIDs,
 * refilled by one pg_strong_random call: a claim costs no random call per
 * job.  A claim reserves max_jobs tokens before its statement runs and
 * gives back those after the last position it returned, so a claim that
 * takes little (a poll of an empty queue with a large max_jobs) draws only
 * what it used.  Tokens it gives back were never stored; tokens stored in
 * rows that a failed (sub)transaction rolled back were never seen, and are
 * simply not given back.  A claim that runs inside another (a trigger on
 * jobq.jobs calling jobq_claim) reserves after the outer one, which then
 * gives nothing back: every job's token is its own.
 */
#define TOKEN_POOL_SIZE		(2 * JOBQ_CLAIM_MAX)

static pg_uuid_t token_pool[TOKEN_POOL_SIZE];
static int	token_pool_next = TOKEN_POOL_SIZE;	/* first unreserved; SIZE: empty */

/*
 * claim_tokens
 *	  Reserve n tokens from the pool, refilled first when fewer are left,
 *	  and return them as a uuid[]; *end is where the reservation ends.
 */
static ArrayType *
claim_tokens(int n, int *end)
{
	ArrayType  *array;
	Size		nbytes = sizeof(pg_uuid_t) * n;

	Assert(n >= 1 && n <= JOBQ_CLAIM_MAX);
	if (TOKEN_POOL_SIZE - token_pool_next < n)
	{
		if (!pg_strong_random(token_pool, sizeof(token_pool)))
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("could not generate random claim tokens")));
		for (int i = 0; i < TOKEN_POOL_SIZE; i++)
		{
			/* RFC 4122 version 4 (random) and variant bits, as gen_random_uuid */
			token_pool[i].data[6] = (token_pool[i].data[6] & 0x0f) | 0x40;
			token_pool[i].data[8] = (token_pool[i].data[8] & 0x3f) | 0x80;
		}
		token_pool_next = 0;
	}

	/* a one-dimensional uuid[] without NULLs: header, then the 16-byte values */
	array = (ArrayType *) palloc0(ARR_OVERHEAD_NONULLS(1) + nbytes);
	SET_VARSIZE(array, ARR_OVERHEAD_NONULLS(1) + nbytes);
	array->ndim = 1;
	array->dataoffset = 0;
	array->elemtype = UUIDOID;
	ARR_DIMS(array)[0] = n;
	ARR_LBOUND(array)[0] = 1;
	memcpy(ARR_DATA_PTR(array), &token_pool[token_pool_next], nbytes);
	token_pool_next += n;
	*end = token_pool_next;
	return array;
}

/*
 * claim_tokens_return
 *	  The claim whose reservation ended at end used its first last tokens
 *	  (0: none) of n: give the rest back, unless a claim reserved since.
 */
static void
claim_tokens_return(int end, int n, int64 last)
{
	if (last < 0 || last > n)
		elog(ERROR, "jobq: claim returned position " INT64_FORMAT " of %d tokens", last, n);
	if (token_pool_next == end)
		token_pool_next -= n - (int) last;
}

/* A claimed row and its position in claim order, for sorting */
typedef struct ClaimedRow
{
	int64		position;
	HeapTuple	tuple;
} ClaimedRow;

static int
claimed_row_cmp(const void *a, const void *b)
{
	int64		pa = ((const ClaimedRow *) a)->position;
	int64		pb = ((const ClaimedRow *) b)->position;

	return (pa > pb) - (pa < pb);
}

/*
 * put_claimed_rows
 *	  Append the rows of the last claim statement to store in claim order
 *	  (by their position, COL_CLAIM_POSITION), without the columns after
 *	  the result's (but flow_id, the ninth of 0.2.0's result, when both
 *	  have it), and count each claim (counters.c) as made at claimed_at,
 *	  the statement's now.  Returns the last position.
 *
 *	  NB: the statement has flow_id when jobq.jobs has the column, the
 *	  result when jobq_claim's SQL definition has it; they go together
 *	  but for the moment of an ALTER EXTENSION, when the result is NULL.
 */
static int64
put_claimed_rows(Tuplestorestate *store, TupleDesc desc, Datum claimed_at)
{
	SPITupleTable *tt = SPI_tuptable;
	uint64		n = SPI_processed;
	ClaimedRow *rows;
	int64		last;
	Datum		values[CLAIM_COLS + 1];
	bool		nulls[CLAIM_COLS + 1];
	bool		flow_col = tt->tupdesc->natts == CLAIM_COLS + 1;

	if ((tt->tupdesc->natts != CLAIM_COLS && !flow_col) ||
		(desc->natts != CLAIM_RESULT_COLS && desc->natts != CLAIM_RESULT_COLS + 1))
		elog(ERROR, "jobq: claim statement returned %d columns for a result of %d, expected %d and %d",
			 tt->tupdesc->natts, desc->natts, CLAIM_COLS, CLAIM_RESULT_COLS);
	rows = palloc(sizeof(ClaimedRow) * n);
	for (uint64 i = 0; i < n; i++)
	{
		bool		isnull;

		rows[i].tuple = tt->vals[i];
		rows[i].position = DatumGetInt64(SPI_getbinval(tt->vals[i], tt->tupdesc,
													   COL_CLAIM_POSITION, &isnull));
	}
	qsort(rows, n, sizeof(ClaimedRow), claimed_row_cmp);
	for (uint64 i = 0; i < n; i++)
	{
		heap_deform_tuple(rows[i].tuple, tt->tupdesc, values, nulls);
		jobq_count_claim(values[1], values[3], values[7], values[9], claimed_at);
		jobq_direct_note_claim(DatumGetInt64(values[0]), DatumGetUUIDP(values[5]),
							   (ItemPointer) DatumGetPointer(values[COL_CLAIM_CTID - 1]));
		/* flow_id into the result's ninth column, over the position */
		if (desc->natts > CLAIM_RESULT_COLS)
		{
			values[JOBQ_CLAIM_COL_FLOW_ID] = flow_col ? values[COL_CLAIM_FLOW_ID - 1] : (Datum) 0;
			nulls[JOBQ_CLAIM_COL_FLOW_ID] = flow_col ? nulls[COL_CLAIM_FLOW_ID - 1] : true;
		}
		tuplestore_putvalues(store, desc, values, nulls);
	}
	last = rows[n - 1].position;
	pfree(rows);
	return last;
}

/*
 * do_claim
 *	  Validate the other arguments, run the claim and return its rows.
 *	  queues is a text[] of validated names, also given as items[0..n-1].
 *
 *	  With wait > 0 and nothing to claim, sleep and claim again until a job
 *	  is claimed or the wait is over (see wait.c for how sleepers are
 *	  woken).  The sleep holds this call's snapshot, and so the vacuum
 *	  horizon, for at most the wait.
 *
 *	  A waiting claim whose worker label is a registered worker's id ends
 *	  empty at once when a signal for that worker commits (workers.c); one
 *	  by a worker already asked to be quiet or stopping claims nothing and
 *	  only sleeps, until its wait ends or the next signal (say, resume).
 */
static Datum
do_claim(FunctionCallInfo fcinfo, ArrayType *queues, Datum *items, int n)
{
	Datum		values[6];
	char		nulls[6] = {' ', ' ', ' ', ' ', ' ', ' '};
	text	   *worker = jobq_worker_arg(fcinfo, ARG_WORKER);
	TupleDesc	desc;
	Tuplestorestate *store;
	int64		wait_usecs = 0;
	TimestampTz deadline = 0;
	volatile bool registered = false;
	volatile uint64 claimed = 0;
	volatile bool direct = false;
	bool		direct_now = false;
	bool		held = false;
	int			tokens_end;

	jobq_require(fcinfo, ARG_MAX_JOBS, "max_jobs");
	jobq_check_int_range(PG_GETARG_INT32(ARG_MAX_JOBS), "max_jobs", 1, JOBQ_CLAIM_MAX);
	values[3] = (Datum) 0;
	nulls[3] = 'n';
	if (!PG_ARGISNULL(ARG_LEASE))
	{
		values[3] = IntervalPGetDatum(jobq_check_interval(PG_GETARG_INTERVAL_P(ARG_LEASE), "lease",
														  JOBQ_LEASE_MIN_USECS,
														  JOBQ_LEASE_MAX_USECS));
		nulls[3] = ' ';
	}
	/* NB: PG_NARGS guards against a 4-argument definition left by an old script */
	if (PG_NARGS() > ARG_WAIT && !PG_ARGISNULL(ARG_WAIT))
	{
		wait_usecs = jobq_interval_usecs(jobq_check_interval(PG_GETARG_INTERVAL_P(ARG_WAIT),
															 "wait", 0, JOBQ_WAIT_MAX_USECS));
		if (wait_usecs > 0 && IsolationUsesXactSnapshot())
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("a waiting claim needs the READ COMMITTED isolation level"),
					 errhint("Under REPEATABLE READ or SERIALIZABLE the snapshot never sees new jobs; claim without wait.")));
		deadline = jobq_now() + wait_usecs;
	}

	values[0] = PointerGetDatum(queues);
	values[2] = Int64GetDatum((int64) PG_GETARG_INT32(ARG_MAX_JOBS));
	values[4] = PointerGetDatum(worker);
	if (worker == NULL)
		nulls[4] = 'n';
	/* NB: a claim that finds nothing uses none, so a waiting claim keeps them */
	values[5] = PointerGetDatum(claim_tokens(PG_GETARG_INT32(ARG_MAX_JOBS), &tokens_end));

	/* every queue named, before anything is claimed */
	for (int i = 0; i < n; i++)
		jobq_check_queue(DatumGetTextPP(items[i]), JOBQ_PRIV_CLAIM);

	store = jobq_srf_begin(fcinfo, &desc);
	jobq_spi_connect();

	/* NB: register before the first attempt, so no wakeup can be lost */
	if (wait_usecs > 0)
		registered = jobq_wait_register(items, n, worker);
	PG_TRY();
	{
		/* NB: after taking the slot, so that no signal can be missed */
		if (registered && jobq_worker_held(worker))
		{
			held = true;
			jobq_wait_hold();
		}
		while ((claimed = held ? 0 : run_claim(values, nulls, items, n, store, desc,
											   &direct_now)) == 0 && wait_usecs > 0)
		{
			long		sleep_ms;
			long		due_ms;
			int64		left = deadline - jobq_now();

			if (left <= 0)
				break;
			SPI_freetuptable(SPI_tuptable);
			sleep_ms = registered ? jobq_claim_recheck_ms : JOBQ_WAIT_POLL_MS;
			due_ms = held ? -1 : next_due_ms(values[0]);
			if (due_ms >= 0 && due_ms < sleep_ms)
				sleep_ms = due_ms;
			/* held back by a rate: until its next token is due, no polling */
			if (rate_retry_at != 0 && (rate_retry_at - jobq_now()) / 1000 + 1 < sleep_ms)
				sleep_ms = Max((rate_retry_at - jobq_now()) / 1000 + 1, 1);
			if (left / 1000 + 1 < sleep_ms)
				sleep_ms = left / 1000 + 1;
			jobq_wait_sleep(sleep_ms);
			jobq_wait_rearm();
			if (registered && jobq_wait_signalled())
				break;
		}
		direct = !held && direct_now;
	}
	PG_FINALLY();
	{
		if (registered)
			jobq_wait_unregister();
	}
	PG_END_TRY();

	/* a direct claim put its rows into store, and used the first tokens */
	claim_tokens_return(tokens_end, PG_GETARG_INT32(ARG_MAX_JOBS),
						claimed == 0 ? 0 : direct ? (int64) claimed :
						put_claimed_rows(store, desc, values[1]));
	jobq_spi_finish();
	return (Datum) 0;
}

/*
 * jobq_claim(queues text, worker, max_jobs, lease)
 *	  -> setof (id, queue, payload, attempt, max_attempts, token,
 *				locked_until, enqueued_at)
 *	  Claim up to max_jobs jobs from one queue.  An unknown or paused queue
 *	  gives an empty result, not an error: workers may start before the
 *	  queue is created.
 */
Datum
jobq_claim(PG_FUNCTION_ARGS)
{
	text	   *queue = jobq_queue_arg(fcinfo, ARG_QUEUES);
	Datum		elem = PointerGetDatum(queue);

	return do_claim(fcinfo, construct_array(&elem, 1, TEXTOID, -1, false, TYPALIGN_INT),
					&elem, 1);
}

/*
 * jobq_claim_any(queues text[], worker, max_jobs, lease)
 *	  The same from several queues at once (SQL name jobq_claim).  The
 *	  array must hold 1 to 100 valid names.
 */
Datum
jobq_claim_any(PG_FUNCTION_ARGS)
{
	ArrayType  *queues;
	Datum	   *items;
	int			n;

	if (PG_ARGISNULL(ARG_QUEUES))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("queues must not be null")));
	queues = PG_GETARG_ARRAYTYPE_P(ARG_QUEUES);
	jobq_check_queue_names(queues, 1, JOBQ_CLAIM_QUEUES_MAX, &items, &n);
	return do_claim(fcinfo, queues, items, n);
}
