/*-------------------------------------------------------------------------
 *
 * metrics.c
 *	  Metrics over time, the stored half: jobq_metrics_flush writes the
 *	  live ring into per-minute rows and rolls them into hours and days;
 *	  jobq_metrics reads live and stored data back, merged into buckets.
 *
 * Vocabulary:
 *	ring		the live per-second counters and histograms of the last ten
 *				minutes in shared memory, read through jobq._metrics_live
 *				(another file's; only when jobq is preloaded)
 *	minute, hour, day
 *				a row of jobq.metrics_minute, _hour or _day: one queue, one
 *				period starting at a multiple of its length since
 *				2000-01-01 00:00 UTC (days are UTC days)
 *	counters	bigint[] in JOBQ_METRIC_COUNTERS order; wait and run
 *				histograms bigint[] in the JOBQ_HIST_EDGES_MS layout, so any
 *				two rows add up element by element
 *	watermark	jobq.metrics_state: minutes before flushed_through are
 *				written, hours before hours_through and days before
 *				days_through rolled up; since is the first minute flushed
 *	gap			a period of jobq.metrics_gaps that no ring saw (the server
 *				restarted, jobq is not preloaded, or no flush ran within the
 *				ring's ten minutes); buckets touching one are incomplete
 *
 * Exactly once: a flush locks the single row of jobq.metrics_state (SKIP
 * LOCKED: a second flusher returns at once, the first does the work),
 * writes only periods past the watermarks and moves them, all in the
 * caller's transaction; the inserts say ON CONFLICT DO NOTHING as well, so
 * a restored dump or a reset watermark never counts twice.  A minute is
 * written once it is over by FLUSH_SETTLE_USECS, the time a commit stamped
 * in it may take to reach the ring.
 *
 * Without the ring (no preload, a restart, a flusher that fell behind),
 * the minutes it missed are derived from jobq.history through its index on
 * (queue, state, finished_at), at most BACKFILL_USECS back and
 * HISTORY_CAP rows per queue and state: the finished counts and the run
 * histogram of each job's last attempt, written with complete = false,
 * and the period is recorded as a gap.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/metrics.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "pgstat.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

PG_FUNCTION_INFO_V1(jobq_metrics_flush);
PG_FUNCTION_INFO_V1(jobq_metrics);

/* The counters by name: MC_enqueued, MC_claimed, ... */
#define METRIC_INDEX(name) MC_##name,
enum
{
	JOBQ_METRIC_COUNTERS(METRIC_INDEX)
	NUM_COUNTERS
};

#define EDGE_VALUE(ms) (ms),
static const int64 hist_edges_ms[] = {JOBQ_HIST_EDGES_MS(EDGE_VALUE)};

StaticAssertDecl(lengthof(hist_edges_ms) == JOBQ_HIST_BUCKETS - 1,
				 "JOBQ_HIST_EDGES_MS must give the edges of all buckets but the last");

/* Periods, in microseconds */
#define MINUTE_USECS		USECS_PER_MINUTE
#define HOUR_USECS			USECS_PER_HOUR
#define DAY_USECS			USECS_PER_DAY
#define RING_SPAN_USECS		(600 * USECS_PER_SEC)	/* what _metrics_live keeps */
#define FLUSH_SETTLE_USECS	(2 * USECS_PER_SEC)	/* commit to ring, at most */
#define BACKFILL_USECS		HOUR_USECS	/* history derivation, at most */
#define BUCKET_MAX_USECS	(3650 * DAY_USECS)

/* Bounds of one call */
#define HISTORY_CAP			100000	/* history rows per queue and state */
#define ROLLUP_HOURS_MAX	48		/* hours rolled up per flush */
#define ROLLUP_DAYS_MAX		14		/* days rolled up per flush */
#define PURGE_ROWS_MAX		10000	/* rows deleted per table and flush */
#define METRICS_BUCKETS_MAX	10000	/* buckets of one jobq_metrics call */

/* GUCs, in seconds */
static int	minute_retention_s = 7 * 86400;
static int	hour_retention_s = 90 * 86400;
static int	day_retention_s = 730 * 86400;

/* The columns of a stored row, as ST_READ and ST_READ_RANGE return them */
#define COL_QUEUE		1
#define COL_START		2
#define COL_COUNTERS	3
#define COL_WAIT		4
#define COL_RUN			5
#define COL_OLDEST		6
#define COL_COMPLETE	7

/* ... and as _metrics_live returns them (ST_LIVE) */
#define LIVE_QUEUE		1
#define LIVE_SECOND		2
#define LIVE_COUNTERS	3
#define LIVE_WAIT		4
#define LIVE_RUN		5

/* ST_HISTORY: queue, minute, state, histogram bucket (-1: none), jobs */
#define HIST_QUEUE		1
#define HIST_MINUTE		2
#define HIST_STATE		3
#define HIST_BUCKET		4
#define HIST_COUNT		5

enum
{
	ST_TABLES,
	ST_RING,
	ST_LOCK,
	ST_EXISTS,
	ST_INIT,
	ST_SAVE,
	ST_LIVE,
	ST_HISTORY,
	ST_OLDEST,
	ST_INSERT_MINUTE,
	ST_INSERT_HOUR,
	ST_INSERT_DAY,
	ST_NEXT_MINUTE,
	ST_NEXT_HOUR,
	ST_MINUTES,
	ST_HOURS,
	ST_GAPS,
	ST_GAP_EXTEND,
	ST_GAP_INSERT,
	ST_PURGE_MINUTE,
	ST_PURGE_HOUR,
	ST_PURGE_DAY,
	ST_PURGE_GAPS,
	ST_STATE,
	ST_QUEUES,
	ST_READ,
	NUM_STATEMENTS
};

#define ROW_COLUMNS "queue, start, counters, wait_hist, run_hist, oldest_ready_age, complete"

static const JobqStatement statements[NUM_STATEMENTS] = {
	/* whether the 0.2.0 tables exist (this library serves 0.1.0 SQL too) */
	[ST_TABLES] = {"metrics_tables",
		"SELECT pg_catalog.to_regclass('jobq.metrics_state') IS NOT NULL,"
		"  pg_catalog.to_regprocedure('jobq._metrics_live(text)') IS NOT NULL",
		0, {}},

	/*
	 * Since when the ring may hold data: the server's start, or a crash's
	 * restart (which resets the shared statistics)
	 */
	[ST_RING] = {"metrics_ring_birth",
		"SELECT GREATEST(pg_catalog.pg_postmaster_start_time(),"
		"  pg_catalog.pg_stat_get_bgwriter_stat_reset_time())",
		0, {}},
	[ST_LOCK] = {"metrics_lock",
		"SELECT since, flushed_through, hours_through, days_through"
		" FROM jobq.metrics_state FOR UPDATE SKIP LOCKED",
		0, {}},
	[ST_EXISTS] = {"metrics_state_exists",
		"SELECT 1 FROM jobq.metrics_state",
		0, {}},
	/* $1 since, $2 its hour, $3 its day */
	[ST_INIT] = {"metrics_init",
		"INSERT INTO jobq.metrics_state VALUES (true, $1, $1, $2, $3)"
		" ON CONFLICT DO NOTHING",
		3, {TIMESTAMPTZOID, TIMESTAMPTZOID, TIMESTAMPTZOID}},
	[ST_SAVE] = {"metrics_save",
		"UPDATE jobq.metrics_state"
		" SET flushed_through = $1, hours_through = $2, days_through = $3",
		3, {TIMESTAMPTZOID, TIMESTAMPTZOID, TIMESTAMPTZOID}},
	/* $1 queue or NULL, seconds in [$2, $3) */
	[ST_LIVE] = {"metrics_live",
		"SELECT queue, second, counters, wait_hist, run_hist"
		" FROM jobq._metrics_live($1)"
		" WHERE second >= $2 AND second < $3 ORDER BY queue, second",
		3, {TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID}},

	/*
	 * Minutes in [$1, $2) from history: finished jobs per state and run
	 * histogram bucket ($3: the edges in ms, width_bucket's thresholds,
	 * which make bucket 0 [0, 1 ms) as the layout does); at most $4 rows
	 * per queue and state, each an index range scan.
	 */
	[ST_HISTORY] = {"metrics_history",
		"SELECT q.name,"
		"  date_bin('1 minute', h.finished_at, '2000-01-01 00:00:00+00') AS minute,"
		"  h.state::text,"
		"  CASE WHEN h.claimed_at IS NULL THEN -1"
		"    ELSE width_bucket(GREATEST(EXTRACT(epoch FROM h.finished_at - h.claimed_at), 0)"
		"                      ::float8 * 1000, $3) END,"
		"  count(*)"
		" FROM jobq.queues q"
		" CROSS JOIN unnest('{completed,dead,cancelled}'::jobq.job_state[]) s(state)"
		" CROSS JOIN LATERAL ("
		"   SELECT x.state, x.finished_at, x.claimed_at FROM jobq.history x"
		"   WHERE x.queue = q.name AND x.state = s.state"
		"     AND x.finished_at >= $1 AND x.finished_at < $2 LIMIT $4) h"
		" GROUP BY 1, 2, 3, 4 ORDER BY 1, 2",
		4, {TIMESTAMPTZOID, TIMESTAMPTZOID, FLOAT8ARRAYOID, INT8OID}},
	/* $1 now */
	[ST_OLDEST] = {"metrics_oldest",
		"SELECT queue, $1 - min(run_at) FROM jobq.jobs"
		" WHERE state = 'ready' AND run_at <= $1 GROUP BY queue ORDER BY queue",
		1, {TIMESTAMPTZOID}},
	[ST_INSERT_MINUTE] = {"metrics_insert_minute",
		"INSERT INTO jobq.metrics_minute (" ROW_COLUMNS ")"
		" VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING",
		7, {TEXTOID, TIMESTAMPTZOID, INT8ARRAYOID, INT8ARRAYOID, INT8ARRAYOID,
		INTERVALOID, BOOLOID}},
	[ST_INSERT_HOUR] = {"metrics_insert_hour",
		"INSERT INTO jobq.metrics_hour (" ROW_COLUMNS ")"
		" VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING",
		7, {TEXTOID, TIMESTAMPTZOID, INT8ARRAYOID, INT8ARRAYOID, INT8ARRAYOID,
		INTERVALOID, BOOLOID}},
	[ST_INSERT_DAY] = {"metrics_insert_day",
		"INSERT INTO jobq.metrics_day (" ROW_COLUMNS ")"
		" VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING",
		7, {TEXTOID, TIMESTAMPTZOID, INT8ARRAYOID, INT8ARRAYOID, INT8ARRAYOID,
		INTERVALOID, BOOLOID}},
	/* the first stored minute (hour) in [$1, $2): rollups skip empty periods */
	[ST_NEXT_MINUTE] = {"metrics_next_minute",
		"SELECT min(start) FROM jobq.metrics_minute WHERE start >= $1 AND start < $2",
		2, {TIMESTAMPTZOID, TIMESTAMPTZOID}},
	[ST_NEXT_HOUR] = {"metrics_next_hour",
		"SELECT min(start) FROM jobq.metrics_hour WHERE start >= $1 AND start < $2",
		2, {TIMESTAMPTZOID, TIMESTAMPTZOID}},
	[ST_MINUTES] = {"metrics_minutes",
		"SELECT " ROW_COLUMNS " FROM jobq.metrics_minute"
		" WHERE start >= $1 AND start < $2 ORDER BY queue",
		2, {TIMESTAMPTZOID, TIMESTAMPTZOID}},
	[ST_HOURS] = {"metrics_hours",
		"SELECT " ROW_COLUMNS " FROM jobq.metrics_hour"
		" WHERE start >= $1 AND start < $2 ORDER BY queue",
		2, {TIMESTAMPTZOID, TIMESTAMPTZOID}},
	/* the gaps that overlap [$1, $2) */
	[ST_GAPS] = {"metrics_gaps",
		"SELECT since, until FROM jobq.metrics_gaps"
		" WHERE since < $2 AND until > $1 ORDER BY since",
		2, {TIMESTAMPTZOID, TIMESTAMPTZOID}},
	/* a gap that goes on: the one ending where it starts grows */
	[ST_GAP_EXTEND] = {"metrics_gap_extend",
		"UPDATE jobq.metrics_gaps SET until = $2 WHERE until = $1 AND reason = $3",
		3, {TIMESTAMPTZOID, TIMESTAMPTZOID, TEXTOID}},
	[ST_GAP_INSERT] = {"metrics_gap_insert",
		"INSERT INTO jobq.metrics_gaps VALUES ($1, $2, $3)"
		" ON CONFLICT (since) DO UPDATE SET until = GREATEST(jobq.metrics_gaps.until, EXCLUDED.until)",
		3, {TIMESTAMPTZOID, TIMESTAMPTZOID, TEXTOID}},
	/* retention, bounded: rows before $1, at most $2 of them */
	[ST_PURGE_MINUTE] = {"metrics_purge_minute",
		"DELETE FROM jobq.metrics_minute WHERE ctid = ANY (ARRAY("
		"  SELECT ctid FROM jobq.metrics_minute WHERE start < $1 LIMIT $2))",
		2, {TIMESTAMPTZOID, INT8OID}},
	[ST_PURGE_HOUR] = {"metrics_purge_hour",
		"DELETE FROM jobq.metrics_hour WHERE ctid = ANY (ARRAY("
		"  SELECT ctid FROM jobq.metrics_hour WHERE start < $1 LIMIT $2))",
		2, {TIMESTAMPTZOID, INT8OID}},
	[ST_PURGE_DAY] = {"metrics_purge_day",
		"DELETE FROM jobq.metrics_day WHERE ctid = ANY (ARRAY("
		"  SELECT ctid FROM jobq.metrics_day WHERE start < $1 LIMIT $2))",
		2, {TIMESTAMPTZOID, INT8OID}},
	[ST_PURGE_GAPS] = {"metrics_purge_gaps",
		"DELETE FROM jobq.metrics_gaps WHERE until < $1",
		1, {TIMESTAMPTZOID}},
	/* the watermarks, read without a lock (jobq_metrics) */
	[ST_STATE] = {"metrics_state",
		"SELECT since, flushed_through, hours_through, days_through"
		" FROM jobq.metrics_state",
		0, {}},
	/*
	 * The queues of jobq_metrics(NULL, ...): every queue, and the dropped
	 * ones that left rows in [$1, $2)
	 */
	[ST_QUEUES] = {"metrics_queues",
		"SELECT name FROM jobq.queues"
		" UNION SELECT queue FROM jobq.metrics_day WHERE start >= $1 AND start < $2"
		" UNION SELECT queue FROM jobq.metrics_hour WHERE start >= $1 AND start < $2"
		" UNION SELECT queue FROM jobq.metrics_minute WHERE start >= $1 AND start < $2"
		" ORDER BY 1",
		2, {TIMESTAMPTZOID, TIMESTAMPTZOID}},

	/*
	 * The stored rows of queue $1 for jobq_metrics: days in [$2, $3),
	 * hours in [$4, $5), minutes in [$6, $7); the caller makes the three
	 * ranges disjoint.  Each branch is a range scan of a primary key.
	 */
	[ST_READ] = {"metrics_read",
		"SELECT " ROW_COLUMNS " FROM jobq.metrics_day"
		" WHERE queue = $1 AND start >= $2 AND start < $3"
		" UNION ALL"
		" SELECT " ROW_COLUMNS " FROM jobq.metrics_hour"
		" WHERE queue = $1 AND start >= $4 AND start < $5"
		" UNION ALL"
		" SELECT " ROW_COLUMNS " FROM jobq.metrics_minute"
		" WHERE queue = $1 AND start >= $6 AND start < $7",
		7, {TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID, TIMESTAMPTZOID,
		TIMESTAMPTZOID, TIMESTAMPTZOID, TIMESTAMPTZOID}},
};

static SPIPlanPtr plans[NUM_STATEMENTS];

const JobqStatements jobq_metrics_statements = {statements, NUM_STATEMENTS, plans, NULL};

/* The reasons recorded with a gap */
#define GAP_NO_RING		"no live metrics: jobq not preloaded, or no ring"
#define GAP_LOST		"not seen by the live metrics: server restart or no flush in time"

/*
 * What one queue did in one period: the sum of the rows merged into it.
 */
typedef struct MetricsAcc
{
	int64		counters[NUM_COUNTERS];
	int64		wait[JOBQ_HIST_BUCKETS];
	int64		run[JOBQ_HIST_BUCKETS];
	int64		oldest;			/* oldest_ready_age in usecs, when has_oldest */
	bool		has_oldest;
	bool		any;			/* a row was merged */
	bool		incomplete;		/* a merged row was incomplete */
} MetricsAcc;

/* The watermarks of jobq.metrics_state */
typedef struct Watermarks
{
	TimestampTz since;
	TimestampTz flushed;
	TimestampTz hours;
	TimestampTz days;
} Watermarks;

/* A period of jobq.metrics_gaps */
typedef struct Gap
{
	TimestampTz since;
	TimestampTz until;
} Gap;

/*
 * floor_to
 *	  The start of the period of length width (a positive number of
 *	  microseconds) that holds t, periods counted from 2000-01-01 00:00 UTC.
 */
static inline TimestampTz
floor_to(TimestampTz t, int64 width)
{
	int64		mod = t % width;

	if (mod < 0)
		mod += width;
	return t - mod;
}

/*
 * jobq_metrics_define_gucs
 *	  The retention settings, called by _PG_init.
 */
void
jobq_metrics_define_gucs(void)
{
	DefineCustomIntVariable("jobq.metrics_minute_retention",
							"How long per-minute metrics are kept.",
							"Minutes not yet rolled into hours are kept regardless.",
							&minute_retention_s,
							7 * 86400, 3600, INT_MAX,
							PGC_SUSET, GUC_UNIT_S,
							NULL, NULL, NULL);
	DefineCustomIntVariable("jobq.metrics_hour_retention",
							"How long per-hour metrics are kept.",
							"Hours not yet rolled into days are kept regardless.",
							&hour_retention_s,
							90 * 86400, 86400, INT_MAX,
							PGC_SUSET, GUC_UNIT_S,
							NULL, NULL, NULL);
	DefineCustomIntVariable("jobq.metrics_day_retention",
							"How long per-day metrics, and the record of gaps, are kept.",
							NULL,
							&day_retention_s,
							730 * 86400, 86400, INT_MAX,
							PGC_SUSET, GUC_UNIT_S,
							NULL, NULL, NULL);
}

/* ----------------------------------------------------------------------
 * Accumulating rows
 * ---------------------------------------------------------------------- */

/*
 * add_array
 *	  Add the elements of an int4[] or int8[] datum to dst[0..n), element
 *	  by element; NULL elements and elements past n are ignored (a layout
 *	  that grew at the end still adds up).
 */
static void
add_array(int64 *dst, int n, Datum value)
{
	ArrayType  *arr = DatumGetArrayTypeP(value);
	Oid			elemtype = ARR_ELEMTYPE(arr);
	Datum	   *elems;
	bool	   *nulls;
	int			nelems;

	if (elemtype == INT8OID)
		deconstruct_array(arr, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
						  &elems, &nulls, &nelems);
	else if (elemtype == INT4OID)
		deconstruct_array(arr, INT4OID, 4, true, TYPALIGN_INT,
						  &elems, &nulls, &nelems);
	else
		elog(ERROR, "jobq: metrics array of unexpected type %u", elemtype);
	for (int i = 0; i < nelems && i < n; i++)
		if (!nulls[i])
			dst[i] += elemtype == INT8OID ? DatumGetInt64(elems[i]) : DatumGetInt32(elems[i]);
}

/*
 * acc_add_spi_row
 *	  Merge row row of the last SPI result into acc.  Stored rows have the
 *	  COL_* layout; live rows (live = true) the LIVE_* one, without
 *	  oldest_ready_age and always complete.
 */
static void
acc_add_spi_row(MetricsAcc *acc, uint64 row, bool live)
{
	HeapTuple	tuple = SPI_tuptable->vals[row];
	TupleDesc	desc = SPI_tuptable->tupdesc;
	bool		isnull;
	Datum		d;

	d = SPI_getbinval(tuple, desc, live ? LIVE_COUNTERS : COL_COUNTERS, &isnull);
	if (!isnull)
		add_array(acc->counters, NUM_COUNTERS, d);
	d = SPI_getbinval(tuple, desc, live ? LIVE_WAIT : COL_WAIT, &isnull);
	if (!isnull)
		add_array(acc->wait, JOBQ_HIST_BUCKETS, d);
	d = SPI_getbinval(tuple, desc, live ? LIVE_RUN : COL_RUN, &isnull);
	if (!isnull)
		add_array(acc->run, JOBQ_HIST_BUCKETS, d);
	acc->any = true;
	if (live)
		return;
	d = SPI_getbinval(tuple, desc, COL_OLDEST, &isnull);
	if (!isnull)
	{
		int64		age = jobq_interval_usecs(DatumGetIntervalP(d));

		if (!acc->has_oldest || age > acc->oldest)
			acc->oldest = age;
		acc->has_oldest = true;
	}
	d = SPI_getbinval(tuple, desc, COL_COMPLETE, &isnull);
	if (isnull || !DatumGetBool(d))
		acc->incomplete = true;
}

static Datum
int8_array(const int64 *values, int n)
{
	Datum		elems[Max(NUM_COUNTERS, JOBQ_HIST_BUCKETS)];

	for (int i = 0; i < n; i++)
		elems[i] = Int64GetDatum(values[i]);
	return PointerGetDatum(construct_array(elems, n, INT8OID, 8, FLOAT8PASSBYVAL,
										   TYPALIGN_DOUBLE));
}

static Interval *
usecs_interval(int64 usecs)
{
	Interval   *span = palloc0(sizeof(Interval));

	span->time = usecs;
	return span;
}

/*
 * insert_row
 *	  Write acc as the row of queue and start with statement st (one of
 *	  ST_INSERT_*); returns 1 when written, 0 when the row was there.
 */
static int64
insert_row(int st, const char *queue, TimestampTz start, const MetricsAcc *acc,
		   bool complete)
{
	Datum		values[7];
	char		nulls[7] = {' ', ' ', ' ', ' ', ' ', ' ', ' '};
	int			rc;

	values[0] = CStringGetTextDatum(queue);
	values[1] = TimestampTzGetDatum(start);
	values[2] = int8_array(acc->counters, NUM_COUNTERS);
	values[3] = int8_array(acc->wait, JOBQ_HIST_BUCKETS);
	values[4] = int8_array(acc->run, JOBQ_HIST_BUCKETS);
	values[5] = (Datum) 0;
	if (acc->has_oldest)
		values[5] = IntervalPGetDatum(usecs_interval(acc->oldest));
	else
		nulls[5] = 'n';
	values[6] = BoolGetDatum(complete && !acc->incomplete);
	rc = SPI_execute_plan(jobq_plan(&jobq_metrics_statements, st), values, nulls, false, 0);
	jobq_spi_check(rc, SPI_OK_INSERT, "metrics insert");
	return (int64) SPI_processed;
}

/*
 * hist_quantile
 *	  The q-quantile (0 < q < 1) of a histogram in the JOBQ_HIST_EDGES_MS
 *	  layout, interpolated linearly inside its bucket (as Prometheus'
 *	  histogram_quantile does); a quantile in the last, open bucket is its
 *	  lower edge.  Returns false for an empty histogram.
 */
static bool
hist_quantile(const int64 *hist, double q, int64 *usecs)
{
	int64		total = 0;
	double		rank;
	double		below = 0;

	for (int i = 0; i < JOBQ_HIST_BUCKETS; i++)
		total += hist[i];
	if (total <= 0)
		return false;
	rank = q * (double) total;
	for (int i = 0; i < JOBQ_HIST_BUCKETS; i++)
	{
		double		lower = i == 0 ? 0 : (double) hist_edges_ms[i - 1];

		if (hist[i] > 0 && below + (double) hist[i] >= rank)
		{
			double		ms;

			if (i == JOBQ_HIST_BUCKETS - 1)
				ms = lower;
			else
				ms = lower + ((double) hist_edges_ms[i] - lower) *
					(rank - below) / (double) hist[i];
			*usecs = (int64) (ms * 1000.0 + 0.5);
			return true;
		}
		below += (double) hist[i];
	}
	*usecs = hist_edges_ms[JOBQ_HIST_BUCKETS - 2] * 1000;
	return true;
}

/* ----------------------------------------------------------------------
 * Flush
 * ---------------------------------------------------------------------- */

/*
 * The rows of one flush, written as each (queue, period) is complete:
 * sources deliver rows ordered by queue and then time, so a change of key
 * closes the previous one.
 */
typedef struct RowWriter
{
	int			st;				/* ST_INSERT_* */
	int64		width;			/* the period, in usecs */
	bool		complete;		/* what the source promises */
	TimestampTz complete_from;	/* ... for rows from this start on */
	char	   *queue;			/* the open key, or NULL */
	TimestampTz start;
	MetricsAcc	acc;
	int64		written;
	/* oldest_ready_age of each queue, for the row of minute oldest_at */
	int			noldest;
	char	  **oldest_queues;	/* sorted */
	int64	   *oldest_ages;
	bool	   *oldest_used;
	TimestampTz oldest_at;
} RowWriter;

static int
oldest_index(const RowWriter *w, const char *queue)
{
	int			lo = 0,
				hi = w->noldest - 1;

	while (lo <= hi)
	{
		int			mid = (lo + hi) / 2;
		int			c = strcmp(queue, w->oldest_queues[mid]);

		if (c == 0)
			return mid;
		if (c < 0)
			hi = mid - 1;
		else
			lo = mid + 1;
	}
	return -1;
}

static void
writer_close(RowWriter *w)
{
	if (w->queue == NULL)
		return;
	if (w->start == w->oldest_at)
	{
		int			i = oldest_index(w, w->queue);

		if (i >= 0)
		{
			w->acc.oldest = w->oldest_ages[i];
			w->acc.has_oldest = true;
			w->oldest_used[i] = true;
		}
	}
	w->written += insert_row(w->st, w->queue, w->start, &w->acc,
							 w->complete && w->start >= w->complete_from);
	pfree(w->queue);
	w->queue = NULL;
}

/*
 * writer_key
 *	  Make (queue, start) the open key of w, closing the previous one when
 *	  it differs; returns the accumulator to add to.
 */
static MetricsAcc *
writer_key(RowWriter *w, const char *queue, TimestampTz start)
{
	start = floor_to(start, w->width);
	if (w->queue != NULL && (w->start != start || strcmp(w->queue, queue) != 0))
		writer_close(w);
	if (w->queue == NULL)
	{
		w->queue = pstrdup(queue);
		w->start = start;
		memset(&w->acc, 0, sizeof(w->acc));
	}
	return &w->acc;
}

/*
 * writer_rows
 *	  Feed every row of the last SPI result (LIVE_* or COL_* layout) into
 *	  w.  The SPI result is copied first: writing runs statements.
 */
static void
writer_rows(RowWriter *w, bool live)
{
	SPITupleTable *tuptable = SPI_tuptable;
	uint64		n = SPI_processed;

	for (uint64 r = 0; r < n; r++)
	{
		bool		isnull;
		char	   *queue;
		TimestampTz start;
		MetricsAcc *acc;

		SPI_tuptable = tuptable;
		queue = TextDatumGetCString(SPI_getbinval(tuptable->vals[r], tuptable->tupdesc,
												  live ? LIVE_QUEUE : COL_QUEUE, &isnull));
		start = DatumGetTimestampTz(SPI_getbinval(tuptable->vals[r], tuptable->tupdesc,
												  live ? LIVE_SECOND : COL_START, &isnull));
		acc = writer_key(w, queue, start);
		SPI_tuptable = tuptable;
		acc_add_spi_row(acc, r, live);
	}
	SPI_freetuptable(tuptable);
}

/*
 * history_rows
 *	  Feed the ST_HISTORY result into w: finished counts and run buckets.
 */
static void
history_rows(RowWriter *w)
{
	SPITupleTable *tuptable = SPI_tuptable;
	uint64		n = SPI_processed;

	for (uint64 r = 0; r < n; r++)
	{
		HeapTuple	tuple = tuptable->vals[r];
		TupleDesc	desc = tuptable->tupdesc;
		bool		isnull;
		char	   *queue = TextDatumGetCString(SPI_getbinval(tuple, desc, HIST_QUEUE, &isnull));
		TimestampTz minute = DatumGetTimestampTz(SPI_getbinval(tuple, desc, HIST_MINUTE, &isnull));
		char	   *state = TextDatumGetCString(SPI_getbinval(tuple, desc, HIST_STATE, &isnull));
		int32		bucket = DatumGetInt32(SPI_getbinval(tuple, desc, HIST_BUCKET, &isnull));
		int64		count = DatumGetInt64(SPI_getbinval(tuple, desc, HIST_COUNT, &isnull));
		MetricsAcc *acc = writer_key(w, queue, minute);

		if (strcmp(state, "completed") == 0)
			acc->counters[MC_completed] += count;
		else if (strcmp(state, "dead") == 0)
			acc->counters[MC_dead] += count;
		else
			acc->counters[MC_cancelled] += count;
		if (bucket >= 0 && bucket < JOBQ_HIST_BUCKETS)
			acc->run[bucket] += count;
		acc->any = true;
	}
	SPI_freetuptable(tuptable);
}

/*
 * record_gap
 *	  [since, until) was not seen by a ring: extend the gap that ends at
 *	  since, or start one.
 */
static void
record_gap(TimestampTz since, TimestampTz until, const char *reason)
{
	Datum		values[3];
	int			rc;

	values[0] = TimestampTzGetDatum(since);
	values[1] = TimestampTzGetDatum(until);
	values[2] = CStringGetTextDatum(reason);
	rc = SPI_execute_plan(jobq_plan(&jobq_metrics_statements, ST_GAP_EXTEND),
						  values, NULL, false, 0);
	jobq_spi_check(rc, SPI_OK_UPDATE, "metrics gap");
	if (SPI_processed > 0)
		return;
	rc = SPI_execute_plan(jobq_plan(&jobq_metrics_statements, ST_GAP_INSERT),
						  values, NULL, false, 0);
	jobq_spi_check(rc, SPI_OK_INSERT, "metrics gap");
}

/*
 * gap_overlaps
 *	  Whether a recorded gap overlaps [lo, hi).
 */
static bool
gap_overlaps(TimestampTz lo, TimestampTz hi)
{
	Datum		values[2];
	int			rc;

	values[0] = TimestampTzGetDatum(lo);
	values[1] = TimestampTzGetDatum(hi);
	rc = SPI_execute_plan(jobq_plan(&jobq_metrics_statements, ST_GAPS), values, NULL, false, 1);
	jobq_spi_check(rc, SPI_OK_SELECT, "metrics gaps");
	return SPI_processed > 0;
}

/*
 * ring_cover_start
 *	  The first minute from which the ring holds every event, as of now;
 *	  DT_NOEND when there is no ring (not preloaded, or the ring's SQL,
 *	  live_function, is missing).  *partial receives the minute before it
 *	  when the ring holds only its end (the server started, or the ring's
 *	  ten minutes began, inside it), else the same minute.
 */
static TimestampTz
ring_cover_start(TimestampTz now, bool live_function, TimestampTz *partial)
{
	TimestampTz birth;
	TimestampTz start;
	bool		isnull;
	int			rc;

	*partial = DT_NOEND;
	if (!live_function || !jobq_wait_available())
		return DT_NOEND;
	rc = SPI_execute_plan(jobq_plan(&jobq_metrics_statements, ST_RING), NULL, NULL, true, 1);
	jobq_spi_check(rc, SPI_OK_SELECT, "metrics ring");
	birth = DatumGetTimestampTz(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
											  1, &isnull));
	start = now - RING_SPAN_USECS + FLUSH_SETTLE_USECS;
	if (!isnull && birth > start)
		start = birth;
	*partial = floor_to(start, MINUTE_USECS);
	/* the first whole minute */
	return floor_to(start + MINUTE_USECS - 1, MINUTE_USECS);
}

/*
 * read_state
 *	  The watermarks (statement st: ST_LOCK or ST_STATE); false when there
 *	  is no row (or, for ST_LOCK, another flush holds it).
 */
static bool
read_state(int st, Watermarks *wm)
{
	bool		isnull;
	int			rc;

	rc = SPI_execute_plan(jobq_plan(&jobq_metrics_statements, st), NULL, NULL,
						  st == ST_STATE, 1);
	jobq_spi_check(rc, SPI_OK_SELECT, "metrics state");
	if (SPI_processed == 0)
		return false;
	wm->since = DatumGetTimestampTz(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	wm->flushed = DatumGetTimestampTz(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	wm->hours = DatumGetTimestampTz(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3, &isnull));
	wm->days = DatumGetTimestampTz(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 4, &isnull));
	return true;
}

/*
 * load_oldest
 *	  oldest_ready_age of every queue with a ready job now, into w.
 */
static void
load_oldest(RowWriter *w, TimestampTz now)
{
	Datum		arg = TimestampTzGetDatum(now);
	int			rc;
	int			n;

	rc = SPI_execute_plan(jobq_plan(&jobq_metrics_statements, ST_OLDEST), &arg, NULL, true, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "metrics oldest");
	n = (int) SPI_processed;
	w->noldest = n;
	w->oldest_queues = palloc0(sizeof(char *) * Max(n, 1));
	w->oldest_ages = palloc0(sizeof(int64) * Max(n, 1));
	w->oldest_used = palloc0(sizeof(bool) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		bool		isnull;
		Datum		age;

		w->oldest_queues[i] = TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[i],
																SPI_tuptable->tupdesc, 1, &isnull));
		age = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &isnull);
		w->oldest_ages[i] = isnull ? 0 : jobq_interval_usecs(DatumGetIntervalP(age));
	}
	SPI_freetuptable(SPI_tuptable);
}

/*
 * flush_minutes
 *	  Write the minutes in [from, to): those the ring has nothing of (before
 *	  partial) from history, the rest from the ring; all before cover (the
 *	  first minute the ring holds whole) as incomplete, with a gap.  Returns
 *	  the rows written.
 */
static int64
flush_minutes(TimestampTz from, TimestampTz to, TimestampTz cover, TimestampTz partial,
			  TimestampTz now)
{
	RowWriter	w;
	TimestampTz lost_end = Min(cover, to);
	TimestampTz history_end = Min(partial, to);
	int			rc;

	memset(&w, 0, sizeof(w));
	w.complete_from = DT_NOBEGIN;
	w.st = ST_INSERT_MINUTE;
	w.width = MINUTE_USECS;
	load_oldest(&w, now);
	w.oldest_at = to - MINUTE_USECS;

	if (from < lost_end)
		record_gap(from, lost_end, cover == DT_NOEND ? GAP_NO_RING : GAP_LOST);
	if (from < history_end)
	{
		Datum		values[4];
		Datum		edges[lengthof(hist_edges_ms)];

		for (int i = 0; i < lengthof(hist_edges_ms); i++)
			edges[i] = Float8GetDatum((double) hist_edges_ms[i]);
		values[0] = TimestampTzGetDatum(Max(from, history_end - BACKFILL_USECS));
		values[1] = TimestampTzGetDatum(history_end);
		values[2] = PointerGetDatum(construct_array(edges, lengthof(edges), FLOAT8OID, 8,
													FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
		values[3] = Int64GetDatum(HISTORY_CAP);
		rc = SPI_execute_plan(jobq_plan(&jobq_metrics_statements, ST_HISTORY),
							  values, NULL, true, 0);
		jobq_spi_check(rc, SPI_OK_SELECT, "metrics history");
		w.complete = false;
		history_rows(&w);
		writer_close(&w);
	}
	if (Max(from, partial) < to)
	{
		Datum		values[3];
		char		nulls[3] = {'n', ' ', ' '};

		values[0] = (Datum) 0;
		values[1] = TimestampTzGetDatum(Max(from, partial));
		values[2] = TimestampTzGetDatum(to);
		rc = SPI_execute_plan(jobq_plan(&jobq_metrics_statements, ST_LIVE),
							  values, nulls, true, 0);
		jobq_spi_check(rc, SPI_OK_SELECT, "metrics live");
		w.complete = true;
		w.complete_from = cover;
		writer_rows(&w, true);
		writer_close(&w);
	}

	/* a backlog that did nothing in the last minute is worth a row too */
	if (from < to)
	{
		w.complete = cover <= w.oldest_at;
		w.complete_from = DT_NOBEGIN;
		for (int i = 0; i < w.noldest; i++)
		{
			if (w.oldest_used[i])
				continue;
			writer_key(&w, w.oldest_queues[i], w.oldest_at);
			writer_close(&w);
		}
	}
	return w.written;
}

/*
 * rollup
 *	  Roll the rows of the finer table (st_next, st_rows) into periods of
 *	  width (statement st_insert), from *through up to limit, at most max
 *	  periods; periods without rows are skipped.  A period is complete when
 *	  all its rows are and no gap overlaps it since the first flush.
 *	  Moves *through and returns the rows written.
 */
static int64
rollup(int st_next, int st_rows, int st_insert, int64 width, TimestampTz *through,
	   TimestampTz limit, int max, TimestampTz since)
{
	int64		written = 0;

	for (int i = 0; i < max && *through + width <= limit; i++)
	{
		Datum		values[2];
		bool		isnull;
		TimestampTz start;
		bool		covered;
		RowWriter	w;
		int			rc;

		values[0] = TimestampTzGetDatum(*through);
		values[1] = TimestampTzGetDatum(limit);
		rc = SPI_execute_plan(jobq_plan(&jobq_metrics_statements, st_next), values, NULL, false, 1);
		jobq_spi_check(rc, SPI_OK_SELECT, "metrics rollup");
		start = DatumGetTimestampTz(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
												  1, &isnull));
		if (isnull || floor_to(start, width) + width > limit)
		{
			*through = floor_to(limit, width);
			break;
		}
		start = floor_to(start, width);
		covered = start >= since && !gap_overlaps(start, start + width);

		memset(&w, 0, sizeof(w));
		w.complete_from = DT_NOBEGIN;
		w.st = st_insert;
		w.width = width;
		w.complete = covered;
		w.oldest_at = DT_NOBEGIN;
		values[0] = TimestampTzGetDatum(start);
		values[1] = TimestampTzGetDatum(start + width);
		rc = SPI_execute_plan(jobq_plan(&jobq_metrics_statements, st_rows), values, NULL, false, 0);
		jobq_spi_check(rc, SPI_OK_SELECT, "metrics rollup");
		writer_rows(&w, false);
		writer_close(&w);
		written += w.written;
		*through = start + width;
	}
	return written;
}

static int64
purge(int st, TimestampTz before)
{
	Datum		values[2];
	int			rc;

	values[0] = TimestampTzGetDatum(before);
	values[1] = Int64GetDatum(PURGE_ROWS_MAX);
	rc = SPI_execute_plan(jobq_plan(&jobq_metrics_statements, st), values, NULL, false, 0);
	jobq_spi_check(rc, SPI_OK_DELETE, "metrics purge");
	return (int64) SPI_processed;
}

/*
 * jobq_metrics_flush_run
 *	  One flush, inside SPI and the caller's transaction: out[] receives
 *	  the minutes, hours and days written and the rows purged.  Returns
 *	  false (and zeros) when the database's SQL has no metrics tables (0.1.0
 *	  not yet updated).  Another flush in progress makes this one a no-op.
 */
bool
jobq_metrics_flush_run(int64 *out)
{
	TimestampTz now = jobq_now();
	TimestampTz target = floor_to(now - FLUSH_SETTLE_USECS, MINUTE_USECS);
	Watermarks	wm;
	bool		isnull;
	bool		live_function;
	int			rc;

	memset(out, 0, sizeof(int64) * 4);
	rc = SPI_execute_plan(jobq_plan(&jobq_metrics_statements, ST_TABLES), NULL, NULL, true, 1);
	jobq_spi_check(rc, SPI_OK_SELECT, "metrics tables");
	if (!DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)))
		return false;
	live_function = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
											   2, &isnull));

	if (!read_state(ST_LOCK, &wm))
	{
		Datum		values[3];

		rc = SPI_execute_plan(jobq_plan(&jobq_metrics_statements, ST_EXISTS), NULL, NULL, true, 1);
		jobq_spi_check(rc, SPI_OK_SELECT, "metrics state");
		if (SPI_processed > 0)
			return true;		/* another flush is at work */

		/* the first flush: start an hour back, from history */
		wm.since = wm.flushed = target - BACKFILL_USECS;
		wm.hours = floor_to(wm.since, HOUR_USECS);
		wm.days = floor_to(wm.since, DAY_USECS);
		values[0] = TimestampTzGetDatum(wm.since);
		values[1] = TimestampTzGetDatum(wm.hours);
		values[2] = TimestampTzGetDatum(wm.days);
		rc = SPI_execute_plan(jobq_plan(&jobq_metrics_statements, ST_INIT), values, NULL, false, 0);
		jobq_spi_check(rc, SPI_OK_INSERT, "metrics state");
		if (SPI_processed == 0)
			return true;		/* another first flush won */
	}

	if (wm.flushed < target)
	{
		TimestampTz partial;
		TimestampTz cover = ring_cover_start(now, live_function, &partial);

		out[0] = flush_minutes(wm.flushed, target, cover, partial, now);
		wm.flushed = target;
	}
	out[1] = rollup(ST_NEXT_MINUTE, ST_MINUTES, ST_INSERT_HOUR, HOUR_USECS, &wm.hours,
					wm.flushed, ROLLUP_HOURS_MAX, wm.since);
	out[2] = rollup(ST_NEXT_HOUR, ST_HOURS, ST_INSERT_DAY, DAY_USECS, &wm.days,
					wm.hours, ROLLUP_DAYS_MAX, wm.since);

	/* retention; rows not yet rolled up stay */
	out[3] = purge(ST_PURGE_MINUTE, Min(now - (int64) minute_retention_s * USECS_PER_SEC, wm.hours));
	out[3] += purge(ST_PURGE_HOUR, Min(now - (int64) hour_retention_s * USECS_PER_SEC, wm.days));
	out[3] += purge(ST_PURGE_DAY, now - (int64) day_retention_s * USECS_PER_SEC);
	{
		Datum		before = TimestampTzGetDatum(now - (int64) day_retention_s * USECS_PER_SEC);

		rc = SPI_execute_plan(jobq_plan(&jobq_metrics_statements, ST_PURGE_GAPS),
							  &before, NULL, false, 0);
		jobq_spi_check(rc, SPI_OK_DELETE, "metrics purge");
	}

	{
		Datum		values[3];

		values[0] = TimestampTzGetDatum(wm.flushed);
		values[1] = TimestampTzGetDatum(wm.hours);
		values[2] = TimestampTzGetDatum(wm.days);
		rc = SPI_execute_plan(jobq_plan(&jobq_metrics_statements, ST_SAVE), values, NULL, false, 0);
		jobq_spi_check(rc, SPI_OK_UPDATE, "metrics state");
	}
	return true;
}

/*
 * jobq_metrics_flush() -> (minutes, hours, days, purged)
 *	  Write each finished minute of the live ring once, roll finished hours
 *	  and days up, apply retention.  Safe to call from many sessions at
 *	  once: one of them does the work, the others return zeros.
 */
Datum
jobq_metrics_flush(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	Tuplestorestate *store;
	int64		out[4];
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};

	store = jobq_srf_begin(fcinfo, &desc);
	jobq_spi_connect();
	(void) jobq_metrics_flush_run(out);
	jobq_spi_finish();
	for (int i = 0; i < 4; i++)
		values[i] = Int64GetDatum(out[i]);
	tuplestore_putvalues(store, desc, values, nulls);
	return (Datum) 0;
}

/*
 * jobq_metrics_next_flush
 *	  When the sweeper flushes next after now: just after the next minute
 *	  is over and settled.
 */
TimestampTz
jobq_metrics_next_flush(TimestampTz now)
{
	return floor_to(now, MINUTE_USECS) + MINUTE_USECS + FLUSH_SETTLE_USECS + USECS_PER_SEC;
}

/*
 * jobq_metrics_sweeper_flush
 *	  The sweeper's duty: one flush in a transaction of its own.  Errors
 *	  propagate (the sweeper logs them and goes on).
 */
void
jobq_metrics_sweeper_flush(void)
{
	int64		out[4];

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	jobq_spi_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, "jobq metrics flush");
	if (jobq_metrics_flush_run(out) && out[0] + out[1] + out[2] + out[3] > 0)
		elog(DEBUG1, "jobq sweeper: metrics: " INT64_FORMAT " minutes, " INT64_FORMAT
			 " hours, " INT64_FORMAT " days written, " INT64_FORMAT " purged",
			 out[0], out[1], out[2], out[3]);
	jobq_spi_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	pgstat_report_stat(false);
	pgstat_report_activity(STATE_IDLE, NULL);
}

/* ----------------------------------------------------------------------
 * jobq_metrics
 * ---------------------------------------------------------------------- */

/* The part of a call every queue shares */
typedef struct MetricsQuery
{
	TimestampTz now;
	TimestampTz first;			/* start of the first bucket */
	int64		bucket;			/* usecs */
	int			nbuckets;
	TimestampTz end;			/* first + nbuckets * bucket */
	bool		has_state;
	Watermarks	wm;
	TimestampTz cover;			/* ring_cover_start, DT_NOEND without a ring */
	TimestampTz partial;		/* the first minute it has anything of */
	bool		live;			/* _metrics_live may be called */
	/* the stored ranges, disjoint: days, hours, minutes; then live */
	TimestampTz day_lo,
				day_hi,
				hour_lo,
				hour_hi,
				min_lo,
				min_hi,
				live_lo;
	int			ngaps;
	Gap		   *gaps;
} MetricsQuery;

/*
 * plan_ranges
 *	  Which table serves which part of [first, end): the coarsest whose
 *	  period divides the bucket, up to its watermark; the next finer one
 *	  from there; minutes up to flushed_through; the ring after it.
 */
static void
plan_ranges(MetricsQuery *mq)
{
	TimestampTz cursor = mq->first;
	TimestampTz days = mq->has_state ? mq->wm.days : DT_NOBEGIN;
	TimestampTz hours = mq->has_state ? mq->wm.hours : DT_NOBEGIN;
	TimestampTz flushed = mq->has_state ? mq->wm.flushed : DT_NOBEGIN;

	mq->day_lo = mq->day_hi = cursor;
	if (mq->bucket % DAY_USECS == 0 && days > cursor)
	{
		mq->day_hi = Min(mq->end, days);
		cursor = mq->day_hi;
	}
	mq->hour_lo = mq->hour_hi = cursor;
	if (mq->bucket % HOUR_USECS == 0 && hours > cursor)
	{
		mq->hour_hi = Min(mq->end, hours);
		cursor = mq->hour_hi;
	}
	mq->min_lo = mq->min_hi = cursor;
	if (flushed > cursor)
	{
		mq->min_hi = Min(mq->end, flushed);
		cursor = mq->min_hi;
	}
	mq->live_lo = cursor;
}

/*
 * horizon_ok
 *	  Whether the stored part of bucket [s, e) is old enough to have been
 *	  purged: each table's rows before its retention (and before the next
 *	  coarser watermark, which purges wait for) may be gone.
 */
static bool
horizon_ok(const MetricsQuery *mq, TimestampTz s, TimestampTz e)
{
	if (s < mq->day_hi)
		return s >= mq->now - (int64) day_retention_s * USECS_PER_SEC;
	if (s < mq->hour_hi)
		return s >= Min(mq->now - (int64) hour_retention_s * USECS_PER_SEC, mq->wm.days);
	if (s < mq->min_hi)
		return s >= Min(mq->now - (int64) minute_retention_s * USECS_PER_SEC, mq->wm.hours);
	return true;
}

/*
 * bucket_complete
 *	  Whether bucket [s, e) holds every event of its period: it is over,
 *	  its stored part lies after the first flush, in no gap and within
 *	  retention, and its live part is held whole by the ring.  (Rows
 *	  marked incomplete are checked by the caller.)
 */
static bool
bucket_complete(const MetricsQuery *mq, TimestampTz s, TimestampTz e)
{
	TimestampTz stored_end = Min(e, mq->live_lo);

	if (e > mq->now)
		return false;
	if (s < stored_end)
	{
		if (!mq->has_state || s < mq->wm.since || !horizon_ok(mq, s, stored_end))
			return false;
		for (int i = 0; i < mq->ngaps; i++)
			if (mq->gaps[i].since < stored_end && mq->gaps[i].until > s)
				return false;
	}
	if (Max(s, mq->live_lo) < e && Max(s, mq->live_lo) < mq->cover)
		return false;
	return true;
}

static void
load_gaps(MetricsQuery *mq)
{
	Datum		values[2];
	int			rc;

	mq->ngaps = 0;
	mq->gaps = NULL;
	if (!mq->has_state)
		return;
	values[0] = TimestampTzGetDatum(mq->first);
	values[1] = TimestampTzGetDatum(mq->end);
	rc = SPI_execute_plan(jobq_plan(&jobq_metrics_statements, ST_GAPS), values, NULL, true, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "metrics gaps");
	mq->ngaps = (int) SPI_processed;
	mq->gaps = palloc(sizeof(Gap) * Max(mq->ngaps, 1));
	for (int i = 0; i < mq->ngaps; i++)
	{
		bool		isnull;

		mq->gaps[i].since = DatumGetTimestampTz(SPI_getbinval(SPI_tuptable->vals[i],
															  SPI_tuptable->tupdesc, 1, &isnull));
		mq->gaps[i].until = DatumGetTimestampTz(SPI_getbinval(SPI_tuptable->vals[i],
															  SPI_tuptable->tupdesc, 2, &isnull));
	}
}

/*
 * accumulate
 *	  Add the rows of the last SPI result to the buckets of accs.
 */
static void
accumulate(const MetricsQuery *mq, MetricsAcc *accs, bool live)
{
	SPITupleTable *tuptable = SPI_tuptable;

	for (uint64 r = 0; r < SPI_processed; r++)
	{
		bool		isnull;
		TimestampTz t = DatumGetTimestampTz(SPI_getbinval(tuptable->vals[r], tuptable->tupdesc,
														  live ? LIVE_SECOND : COL_START,
														  &isnull));
		int64		i;

		if (t < mq->first || t >= mq->end)
			continue;
		i = (t - mq->first) / mq->bucket;
		acc_add_spi_row(&accs[i], r, live);
	}
}

/*
 * emit_queue
 *	  Read, merge and return the buckets of one queue.
 */
static void
emit_queue(const MetricsQuery *mq, text *queue, Tuplestorestate *store, TupleDesc desc)
{
	MetricsAcc *accs = palloc0(sizeof(MetricsAcc) * mq->nbuckets);
	Datum		values[7];
	int			rc;
	static const double quantiles[] = {0.50, 0.95, 0.99};

	values[0] = PointerGetDatum(queue);
	values[1] = TimestampTzGetDatum(mq->day_lo);
	values[2] = TimestampTzGetDatum(mq->day_hi);
	values[3] = TimestampTzGetDatum(mq->hour_lo);
	values[4] = TimestampTzGetDatum(mq->hour_hi);
	values[5] = TimestampTzGetDatum(mq->min_lo);
	values[6] = TimestampTzGetDatum(mq->min_hi);
	rc = SPI_execute_plan(jobq_plan(&jobq_metrics_statements, ST_READ), values, NULL, true, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "metrics read");
	accumulate(mq, accs, false);
	SPI_freetuptable(SPI_tuptable);

	if (mq->live && mq->live_lo < mq->end)
	{
		values[1] = TimestampTzGetDatum(mq->live_lo);
		values[2] = TimestampTzGetDatum(mq->end);
		rc = SPI_execute_plan(jobq_plan(&jobq_metrics_statements, ST_LIVE), values, NULL, true, 0);
		jobq_spi_check(rc, SPI_OK_SELECT, "metrics live");
		accumulate(mq, accs, true);
		SPI_freetuptable(SPI_tuptable);
	}

	for (int b = 0; b < mq->nbuckets; b++)
	{
		MetricsAcc *acc = &accs[b];
		TimestampTz s = mq->first + b * mq->bucket;
		Datum		out[13];
		bool		nulls[13];
		int64		usecs;

		memset(nulls, 0, sizeof(nulls));
		out[0] = PointerGetDatum(queue);
		out[1] = TimestampTzGetDatum(s);
		out[2] = int8_array(acc->counters, NUM_COUNTERS);
		out[3] = int8_array(acc->wait, JOBQ_HIST_BUCKETS);
		out[4] = int8_array(acc->run, JOBQ_HIST_BUCKETS);
		for (int q = 0; q < 3; q++)
		{
			nulls[5 + q] = !hist_quantile(acc->wait, quantiles[q], &usecs);
			out[5 + q] = nulls[5 + q] ? (Datum) 0 : IntervalPGetDatum(usecs_interval(usecs));
			nulls[8 + q] = !hist_quantile(acc->run, quantiles[q], &usecs);
			out[8 + q] = nulls[8 + q] ? (Datum) 0 : IntervalPGetDatum(usecs_interval(usecs));
		}
		nulls[11] = !acc->has_oldest;
		out[11] = acc->has_oldest ? IntervalPGetDatum(usecs_interval(acc->oldest)) : (Datum) 0;
		out[12] = BoolGetDatum(!acc->incomplete && bucket_complete(mq, s, s + mq->bucket));
		tuplestore_putvalues(store, desc, out, nulls);
	}
	pfree(accs);
}

/*
 * jobq_metrics(queue, since, until, bucket) -> setof (queue, bucket, counters,
 *		wait_hist, run_hist, wait_p50, wait_p95, wait_p99, run_p50,
 *		run_p95, run_p99, oldest_ready_age, complete)
 *	  Per queue (NULL: every queue the caller may inspect, and dropped
 *	  queues that left stored rows in the period) and bucket, from
 *	  the bucket holding since to the one holding the last microsecond
 *	  before until, every bucket, empty ones with zeros.  Buckets start at
 *	  multiples of bucket since 2000-01-01 00:00 UTC.  bucket is a whole
 *	  number of minutes, at most 3650 days, without months; at most
 *	  METRICS_BUCKETS_MAX buckets (54000 above).
 */
Datum
jobq_metrics(PG_FUNCTION_ARGS)
{
	MetricsQuery mq;
	TimestampTz from;
	TimestampTz to;
	Interval   *span;
	text	   *queue = NULL;
	TupleDesc	desc;
	Tuplestorestate *store;
	bool		isnull;
	int			rc;
	int64		nbuckets;

	if (!PG_ARGISNULL(0))
		queue = jobq_queue_arg(fcinfo, 0);
	jobq_require(fcinfo, 1, "since");
	jobq_require(fcinfo, 2, "until");
	jobq_require(fcinfo, 3, "bucket");
	from = PG_GETARG_TIMESTAMPTZ(1);
	to = PG_GETARG_TIMESTAMPTZ(2);
	span = PG_GETARG_INTERVAL_P(3);
	if (TIMESTAMP_NOT_FINITE(from) || TIMESTAMP_NOT_FINITE(to))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("since and until must be finite")));
	if (from > to)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("since must not be after until")));
	if (span->month != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bucket must not count months"),
				 errhint("A month has no fixed length; give days instead.")));
	memset(&mq, 0, sizeof(mq));
	mq.bucket = jobq_interval_usecs(span);
	if (mq.bucket <= 0 || mq.bucket % MINUTE_USECS != 0 || mq.bucket > BUCKET_MAX_USECS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bucket must be a whole number of minutes, from 1 minute to 3650 days")));
	mq.first = floor_to(from, mq.bucket);
	nbuckets = from == to ? 0 : (to - mq.first + mq.bucket - 1) / mq.bucket;
	if (nbuckets > METRICS_BUCKETS_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("since and until span " INT64_FORMAT " buckets, over the limit of %d",
						nbuckets, METRICS_BUCKETS_MAX),
				 errhint("Use a longer bucket or a shorter period.")));
	mq.nbuckets = (int) nbuckets;
	mq.end = mq.first + nbuckets * mq.bucket;
	mq.now = jobq_now();

	store = jobq_srf_begin(fcinfo, &desc);
	jobq_spi_connect();
	if (queue != NULL)
		jobq_require_inspect(queue);
	if (mq.nbuckets == 0)
	{
		jobq_spi_finish();
		return (Datum) 0;
	}

	rc = SPI_execute_plan(jobq_plan(&jobq_metrics_statements, ST_TABLES), NULL, NULL, true, 1);
	jobq_spi_check(rc, SPI_OK_SELECT, "metrics tables");
	mq.live = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull))
		&& jobq_wait_available();
	mq.cover = ring_cover_start(mq.now, mq.live, &mq.partial);
	mq.has_state = read_state(ST_STATE, &mq.wm);
	plan_ranges(&mq);
	load_gaps(&mq);

	if (queue != NULL)
		emit_queue(&mq, queue, store, desc);
	else
	{
		SPITupleTable *names;
		uint64		n;

		Datum		range[2];

		range[0] = TimestampTzGetDatum(mq.first);
		range[1] = TimestampTzGetDatum(mq.end);
		rc = SPI_execute_plan(jobq_plan(&jobq_metrics_statements, ST_QUEUES), range, NULL, true, 0);
		jobq_spi_check(rc, SPI_OK_SELECT, "metrics queues");
		names = SPI_tuptable;
		n = SPI_processed;
		for (uint64 r = 0; r < n; r++)
		{
			text	   *name = DatumGetTextPP(SPI_getbinval(names->vals[r], names->tupdesc,
															1, &isnull));

			if (jobq_queue_allowed(name, JOBQ_PRIV_INSPECT))
				emit_queue(&mq, name, store, desc);
		}
	}
	jobq_spi_finish();
	return (Datum) 0;
}
