/*-------------------------------------------------------------------------
 *
 * counts.c
 *	  jobq_counts and jobq_counts_reconcile: how many jobs each queue has
 *	  in each state, at a cost that does not grow with history, and the
 *	  rebuild of the counters that make it so.  jobq_stats (inspect.c)
 *	  reads the same counts.
 *
 * With preload, a queue whose counters are exact (counters.c) costs no
 * scan of either table for ready + delayed, running and the finished
 * states.  What changes with the clock is read through indexes, capped:
 * the split of ready and delayed (run_at > now) and the expired leases
 * count at most SPLIT_CAP rows; the oldest ready job is one index probe
 * per distinct priority of the queue's ready jobs.
 *
 * Otherwise (no preload, a queue beyond jobq.max_tracked_queues, counts
 * being rebuilt after a start or a PREPARE) the live counts are exact
 * counts of jobq.jobs, which is small by design, and each finished state
 * is counted through history_queue_state_idx up to HISTORY_CAP rows:
 * never a scan of history.  exact says whether every number is exact.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/counts.c
 *
 *-------------------------------------------------------------------------
 */
#include "counters.h"
#include "groups.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(jobq_counts);
PG_FUNCTION_INFO_V1(jobq_counts_reconcile);

/* Counted rows, at most: one more than is ever shown as exact */
#define SPLIT_CAP			10001
#define HISTORY_CAP			100001
/* Queues the sweeper rebuilds per pass, each pass one transaction */
#define RECONCILE_PER_PASS	16

/*
 * The statements.  $1 queue, $2 now.
 *
 * split: p walks the distinct priorities of the queue's ready jobs along
 * jobs_claim_idx (queue, priority, run_at, id), one probe each; per
 * priority the delayed jobs are an index range, counted up to the cap,
 * and the oldest run_at is the first entry.  Delayed jobs are usually the
 * fewer: the ready-now ones are counted (split_ready) only when the
 * delayed reach the cap.
 *
 * history: the ORDER BY of the index's columns keeps the plan on
 * history_queue_state_idx even when one queue holds most of history
 * (without it a generic plan may count through a sequential scan).
 */
#define PRIORITIES_SQL \
	"WITH RECURSIVE p(priority) AS (" \
	"  (SELECT j.priority FROM jobq.jobs j WHERE j.queue = $1 AND j.state = 'ready'" \
	"   ORDER BY j.priority LIMIT 1)" \
	"  UNION ALL" \
	"  SELECT (SELECT j.priority FROM jobq.jobs j WHERE j.queue = $1 AND j.state = 'ready'" \
	"          AND j.priority > p.priority ORDER BY j.priority LIMIT 1)" \
	"  FROM p WHERE p.priority IS NOT NULL)," \
	" ps AS MATERIALIZED (SELECT priority FROM p WHERE priority IS NOT NULL)"
#define SPLIT_COUNT_SQL(COND) \
	"(SELECT count(*) FROM (SELECT 1 FROM ps CROSS JOIN LATERAL (" \
	"   SELECT 1 FROM jobq.jobs j WHERE j.queue = $1 AND j.state = 'ready'" \
	"   AND j.priority = ps.priority AND j.run_at " COND " $2" \
	"   LIMIT " CppAsString2(SPLIT_CAP) ") x LIMIT " CppAsString2(SPLIT_CAP) ") y)"
#define EXPIRED_CAPPED_SQL \
	"(SELECT count(*) FROM (SELECT 1 FROM jobq.jobs j" \
	"  WHERE j.state = 'running' AND j.locked_until < $2 AND j.queue = $1" \
	"  LIMIT " CppAsString2(SPLIT_CAP) ") e)"
#define HISTORY_CAPPED_SQL(STATE) \
	"(SELECT count(*) FROM (SELECT 1 FROM jobq.history h" \
	"  WHERE h.queue = $1 AND h.state = '" STATE "'" \
	"  ORDER BY h.queue, h.state, h.finished_at LIMIT " CppAsString2(HISTORY_CAP) ") x)"

enum
{
	ST_QUEUES,
	ST_SPLIT,
	ST_SPLIT_READY,
	ST_LIVE,
	ST_HISTORY,
	NUM_STATEMENTS
};

static const JobqStatement statements[NUM_STATEMENTS] = {
	/* $1 queue or NULL: name, paused, created_at */
	[ST_QUEUES] = {"counts_queues",
		"SELECT name, paused, created_at FROM jobq.queues"
		" WHERE $1::text IS NULL OR name = $1 ORDER BY name",
		1, {TEXTOID}},
	/* delayed (capped), oldest run_at of a ready job, expired (capped) */
	[ST_SPLIT] = {"counts_split",
		PRIORITIES_SQL
		" SELECT " SPLIT_COUNT_SQL(">") ","
		"  (SELECT min(o.run_at) FROM ps CROSS JOIN LATERAL ("
		"     SELECT j.run_at FROM jobq.jobs j WHERE j.queue = $1 AND j.state = 'ready'"
		"     AND j.priority = ps.priority ORDER BY j.run_at LIMIT 1) o),"
		"  " EXPIRED_CAPPED_SQL,
		2, {TEXTOID, TIMESTAMPTZOID}},
	/* ready now (capped): only when delayed reached its cap */
	[ST_SPLIT_READY] = {"counts_split_ready",
		PRIORITIES_SQL " SELECT " SPLIT_COUNT_SQL("<="),
		2, {TEXTOID, TIMESTAMPTZOID}},
	/* exact live counts: ready, delayed, running, expired, oldest ready run_at */
	[ST_LIVE] = {"counts_live",
		"SELECT count(*) FILTER (WHERE state = 'ready' AND run_at <= $2),"
		"  count(*) FILTER (WHERE state = 'ready' AND run_at > $2),"
		"  count(*) FILTER (WHERE state = 'running'),"
		"  count(*) FILTER (WHERE state = 'running' AND locked_until < $2),"
		"  min(run_at) FILTER (WHERE state = 'ready' AND run_at <= $2),"
		"  count(*) FILTER (WHERE state::text = 'waiting')"	/* 0.1.0's SQL has none */
		" FROM jobq.jobs WHERE queue = $1",
		2, {TEXTOID, TIMESTAMPTZOID}},
	/* finished jobs, each state capped: completed, dead, cancelled */
	[ST_HISTORY] = {"counts_history",
		"SELECT " HISTORY_CAPPED_SQL("completed") ", " HISTORY_CAPPED_SQL("dead") ", "
		HISTORY_CAPPED_SQL("cancelled"),
		1, {TEXTOID}},
};

static SPIPlanPtr plans[NUM_STATEMENTS];

const JobqStatements jobq_counts_statements = {statements, NUM_STATEMENTS, plans, NULL};

static int64
col_int64(int col)
{
	bool		isnull;
	int64		v = jobq_spi_getint64(0, col, &isnull);

	return isnull ? 0 : v;
}

/*
 * oldest_from
 *	  The oldest ready job's run_at in column col, if it is due by now.
 */
static void
oldest_from(int col, TimestampTz now, JobqQueueCounts *c)
{
	bool		isnull;
	Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, col, &isnull);

	c->has_oldest = !isnull && DatumGetTimestampTz(d) <= now;
	if (c->has_oldest)
		c->oldest_usecs = now - DatumGetTimestampTz(d);
}

/*
 * count_from_counters
 *	  The counts of an exact entry, with the split, the oldest and the
 *	  expired leases from the indexes.
 */
static void
count_from_counters(text *queue, const JobqCountsSnapshot *snap, TimestampTz now,
					JobqQueueCounts *c)
{
	Datum		args[2] = {PointerGetDatum(queue), TimestampTzGetDatum(now)};
	int64		pending = Max(snap->state[JOBQ_COUNT_PENDING], 0);
	int64		delayed,
				ready;
	int			rc;

	rc = SPI_execute_plan(jobq_plan(&jobq_counts_statements, ST_SPLIT), args, NULL, true, 1);
	jobq_spi_check(rc, SPI_OK_SELECT, "count ready and delayed jobs");
	delayed = col_int64(1);
	oldest_from(2, now, c);
	c->expired = col_int64(3);
	c->exact = true;
	/* ready + delayed is exact; the side under the cap is too */
	if (delayed < SPLIT_CAP)
		ready = Max(pending - delayed, 0);
	else
	{
		rc = SPI_execute_plan(jobq_plan(&jobq_counts_statements, ST_SPLIT_READY), args, NULL,
							  true, 1);
		jobq_spi_check(rc, SPI_OK_SELECT, "count ready jobs");
		ready = col_int64(1);
		if (ready < SPLIT_CAP)
			delayed = Max(pending - ready, 0);
		else
		{
			delayed = SPLIT_CAP;
			ready = Max(pending - SPLIT_CAP, 0);
			c->exact = false;
		}
	}
	c->ready = ready;
	c->delayed = delayed;
	c->running = Max(snap->state[JOBQ_COUNT_RUNNING], 0);
	c->completed = Max(snap->state[JOBQ_COUNT_COMPLETED], 0);
	c->dead = Max(snap->state[JOBQ_COUNT_DEAD], 0);
	c->cancelled = Max(snap->state[JOBQ_COUNT_CANCELLED], 0);
	c->waiting = Max(snap->state[JOBQ_COUNT_WAITING], 0);
	if (c->expired >= SPLIT_CAP)
		c->exact = false;
}

/*
 * count_from_tables
 *	  Exact live counts, capped history counts.
 */
static void
count_from_tables(text *queue, TimestampTz now, JobqQueueCounts *c)
{
	Datum		args[2] = {PointerGetDatum(queue), TimestampTzGetDatum(now)};
	int			rc;

	rc = SPI_execute_plan(jobq_plan(&jobq_counts_statements, ST_LIVE), args, NULL, true, 1);
	jobq_spi_check(rc, SPI_OK_SELECT, "count live jobs");
	c->ready = col_int64(1);
	c->delayed = col_int64(2);
	c->running = col_int64(3);
	c->expired = col_int64(4);
	oldest_from(5, now, c);
	c->waiting = col_int64(6);
	rc = SPI_execute_plan(jobq_plan(&jobq_counts_statements, ST_HISTORY), args, NULL, true, 1);
	jobq_spi_check(rc, SPI_OK_SELECT, "count finished jobs");
	c->completed = col_int64(1);
	c->dead = col_int64(2);
	c->cancelled = col_int64(3);
	c->exact = c->completed < HISTORY_CAP && c->dead < HISTORY_CAP &&
		c->cancelled < HISTORY_CAP;
}

/*
 * jobq_counts_collect
 *	  The counts of queue (NULL: every queue the caller may inspect), in
 *	  name order; *n of them.  Inside SPI.  A named queue must exist
 *	  (42704) and be one the caller may inspect (42501).
 */
JobqQueueCounts *
jobq_counts_collect(text *queue, int *n)
{
	Datum		arg = PointerGetDatum(queue);
	int			rc;
	uint64		nqueues;
	SPITupleTable *queues;
	JobqQueueCounts *out;
	bool		counting = jobq_counters_available();

	if (queue != NULL)
	{
		JobqQueueSettings settings;

		if (!jobq_queue_settings(queue, &settings))
			jobq_queue_not_found(queue);
		jobq_check_queue(queue, JOBQ_PRIV_INSPECT);
	}
	rc = SPI_execute_plan(jobq_plan(&jobq_counts_statements, ST_QUEUES),
						  &arg, queue ? NULL : "n", true, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "list queues");
	nqueues = SPI_processed;
	queues = SPI_tuptable;
	out = palloc0(sizeof(JobqQueueCounts) * Max(nqueues, 1));
	*n = 0;
	for (uint64 i = 0; i < nqueues; i++)
	{
		bool		isnull;
		text	   *name = DatumGetTextPP(SPI_getbinval(queues->vals[i], queues->tupdesc, 1,
														&isnull));
		JobqQueueCounts *c = &out[*n];
		JobqCountsSnapshot snap;
		TimestampTz created;
		TimestampTz now;

		if (queue == NULL && !jobq_queue_allowed(name, JOBQ_PRIV_INSPECT))
			continue;
		(*n)++;
		text_to_cstring_buffer(name, c->queue, sizeof(c->queue));
		c->paused = DatumGetBool(SPI_getbinval(queues->vals[i], queues->tupdesc, 2, &isnull));
		created = DatumGetTimestampTz(SPI_getbinval(queues->vals[i], queues->tupdesc, 3,
													&isnull));
		jobq_counters_read(name, &snap);
		now = jobq_now();
		c->as_of = now;
		if (snap.found && snap.exact && snap.queue_created == created)
			count_from_counters(name, &snap, now, c);
		else
		{
			count_from_tables(name, now, c);
			/* the counters are being rebuilt: say so, even when under the caps */
			if (counting)
				c->exact = false;
		}
	}
	return out;
}

/*
 * jobq_counts(queue text DEFAULT NULL) -> setof (queue, paused, ready,
 *		delayed, running, expired, completed, dead, cancelled,
 *		oldest_ready_age, exact, as_of, waiting, groups_active,
 *		groups_blocked)
 *	  The 0.2.0 columns (waiting of flows, the groups' counts) come last,
 *	  so that readers by position are unchanged; a result type without
 *	  them (the SQL of an earlier release) gets the columns it has.
 */
Datum
jobq_counts(PG_FUNCTION_ARGS)
{
	text	   *queue = PG_ARGISNULL(0) ? NULL : jobq_queue_arg(fcinfo, 0);
	TupleDesc	desc;
	Tuplestorestate *store = jobq_srf_begin(fcinfo, &desc);
	JobqQueueCounts *counts;
	int			n;

	jobq_spi_connect();
	/* NB: the counts live in SPI's procedure context, freed by SPI_finish */
	counts = jobq_counts_collect(queue, &n);
	for (int i = 0; i < n; i++)
	{
		JobqQueueCounts *c = &counts[i];
		Datum		v[15];
		bool		nulls[15] = {false};
		int64		active = 0;
		int64		blocked = 0;

		v[0] = CStringGetTextDatum(c->queue);
		v[1] = BoolGetDatum(c->paused);
		v[2] = Int64GetDatum(c->ready);
		v[3] = Int64GetDatum(c->delayed);
		v[4] = Int64GetDatum(c->running);
		v[5] = Int64GetDatum(c->expired);
		v[6] = Int64GetDatum(c->completed);
		v[7] = Int64GetDatum(c->dead);
		v[8] = Int64GetDatum(c->cancelled);
		v[9] = c->has_oldest ? IntervalPGetDatum(jobq_counts_age(c)) : (Datum) 0;
		nulls[9] = !c->has_oldest;
		v[10] = BoolGetDatum(c->exact);
		v[11] = TimestampTzGetDatum(c->as_of);
		v[12] = Int64GetDatum(c->waiting);	/* 0.2.0 with flows */
		if (desc->natts > 13)	/* 0.2.0 with the groups' counts */
			jobq_group_counts(cstring_to_text(c->queue), &active, &blocked);
		v[13] = Int64GetDatum(active);
		v[14] = Int64GetDatum(blocked);
		tuplestore_putvalues(store, desc, v, nulls);
	}
	jobq_spi_finish();
	return (Datum) 0;
}

/*
 * jobq_counts_age
 *	  The oldest ready job's age as an interval, as now - run_at gives it.
 */
Interval *
jobq_counts_age(const JobqQueueCounts *c)
{
	return DatumGetIntervalP(DirectFunctionCall2(timestamp_mi,
												 TimestampTzGetDatum(c->as_of),
												 TimestampTzGetDatum(c->as_of - c->oldest_usecs)));
}

/*
 * reconcile_one
 *	  Rebuild queue's counts and log a drift of counts that were exact.
 *	  Returns the total drift, or -1 when the counts were not exact before
 *	  (a rebuild, not a correction).
 */
static int64
reconcile_one(text *queue, JobqReconcileResult *result)
{
	int64		drift[JOBQ_COUNT_STATES];
	bool		was_exact;
	int64		total = 0;

	*result = jobq_counters_reconcile(queue, drift, &was_exact);
	for (int s = 0; s < JOBQ_COUNT_STATES; s++)
		total += Abs(drift[s]);
	if (*result == JOBQ_RECONCILE_BUSY)
		ereport(LOG,
				(errmsg("jobq: could not rebuild the counts of queue \"%s\": its commits never paused",
						text_to_cstring(queue))));
	if (!was_exact)
		return -1;
	if (total != 0)
		ereport(LOG,
				(errmsg("jobq: counts of queue \"%s\" drifted and were corrected",
						text_to_cstring(queue)),
				 errdetail("Differences: ready+delayed " INT64_FORMAT ", running " INT64_FORMAT
						   ", completed " INT64_FORMAT ", dead " INT64_FORMAT
						   ", cancelled " INT64_FORMAT ".",
						   drift[JOBQ_COUNT_PENDING], drift[JOBQ_COUNT_RUNNING],
						   drift[JOBQ_COUNT_COMPLETED], drift[JOBQ_COUNT_DEAD],
						   drift[JOBQ_COUNT_CANCELLED]),
				 errhint("Rows of jobq.jobs or jobq.history were changed without jobq's functions.")));
	return total;
}

/*
 * forget_dropped
 *	  Free the entries of dropped queues: every queue of this database is
 *	  one of the nqueues rows of queues (ST_QUEUES of every queue).
 */
static void
forget_dropped(SPITupleTable *queues, uint64 nqueues)
{
	char	  **names = palloc(sizeof(char *) * Max(nqueues, 1));

	for (uint64 i = 0; i < nqueues; i++)
		names[i] = SPI_getvalue(queues->vals[i], queues->tupdesc, 1);
	(void) jobq_counters_forget_missing(names, (int) nqueues);
	pfree(names);
}

/*
 * jobq_counts_reconcile(queue text DEFAULT NULL) -> setof (queue text,
 *		exact boolean, drift bigint)
 *	  Rebuild the counts of one queue or of every queue the caller may
 *	  administer, now.  drift: how far the counts were off (0 unless the
 *	  tables were changed by hand), NULL when they were not exact before.
 *	  Without preload there are no counters: no row.
 */
Datum
jobq_counts_reconcile(PG_FUNCTION_ARGS)
{
	text	   *queue = PG_ARGISNULL(0) ? NULL : jobq_queue_arg(fcinfo, 0);
	Datum		arg = PointerGetDatum(queue);
	TupleDesc	desc;
	Tuplestorestate *store = jobq_srf_begin(fcinfo, &desc);
	SPITupleTable *queues;
	uint64		nqueues;
	int			rc;

	jobq_spi_connect();
	if (queue != NULL)
	{
		JobqQueueSettings settings;

		if (!jobq_queue_settings(queue, &settings))
			jobq_queue_not_found(queue);
		jobq_check_queue(queue, JOBQ_PRIV_ADMIN);
	}
	if (!jobq_counters_available())
	{
		jobq_spi_finish();
		return (Datum) 0;
	}
	rc = SPI_execute_plan(jobq_plan(&jobq_counts_statements, ST_QUEUES),
						  &arg, queue ? NULL : "n", true, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "list queues");
	nqueues = SPI_processed;
	queues = SPI_tuptable;
	if (queue == NULL)
		forget_dropped(queues, nqueues);
	for (uint64 i = 0; i < nqueues; i++)
	{
		bool		isnull;
		text	   *name = DatumGetTextPP(SPI_getbinval(queues->vals[i], queues->tupdesc, 1,
														&isnull));
		JobqReconcileResult result;
		int64		drift;
		Datum		v[3];
		bool		nulls[3] = {false, false, false};

		if (queue == NULL && !jobq_queue_allowed(name, JOBQ_PRIV_ADMIN))
			continue;
		drift = reconcile_one(name, &result);
		v[0] = PointerGetDatum(name);
		v[1] = BoolGetDatum(result == JOBQ_RECONCILE_EXACT);
		v[2] = Int64GetDatum(drift);
		nulls[2] = drift < 0;
		tuplestore_putvalues(store, desc, v, nulls);
	}
	jobq_spi_finish();
	return (Datum) 0;
}

/*
 * jobq_counts_reconcile_due
 *	  The sweeper's duty: forget the counts of dropped queues, and rebuild
 *	  those of up to RECONCILE_PER_PASS queues of this database that are
 *	  due (counters.c, jobq_counters_due).  Inside SPI, in a transaction of its own.
 *	  Returns how many it rebuilt.
 */
int
jobq_counts_reconcile_due(void)
{
	SPITupleTable *queues;
	uint64		nqueues;
	int			done = 0;
	TimestampTz now = jobq_now();
	Datum		all = (Datum) 0;
	int			rc;

	if (!jobq_counters_available())
		return 0;
	rc = SPI_execute_plan(jobq_plan(&jobq_counts_statements, ST_QUEUES),
						  &all, "n", true, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "list queues");
	nqueues = SPI_processed;
	queues = SPI_tuptable;
	forget_dropped(queues, nqueues);
	for (uint64 i = 0; i < nqueues && done < RECONCILE_PER_PASS; i++)
	{
		bool		isnull;
		text	   *name = DatumGetTextPP(SPI_getbinval(queues->vals[i], queues->tupdesc, 1,
														&isnull));
		JobqReconcileResult result;

		if (!jobq_counters_due(name, now))
			continue;
		(void) reconcile_one(name, &result);
		done++;
	}
	return done;
}
