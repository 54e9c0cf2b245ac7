/*-------------------------------------------------------------------------
 *
 * tick.c
 *	  jobq_cron_tick: fire the due ticks of schedules, exactly once each.
 *
 * One tick call locks up to max_schedules due schedules with FOR NO KEY
 * UPDATE SKIP LOCKED, enqueues their jobs through the normal enqueue path
 * and moves each next_run_at forward, all in the caller's transaction.
 * The lock and the recheck of "due" on the locked row make this a
 * compare-and-set: a ticker that comes second finds the row locked (and
 * skips it) or already moved on (and leaves it), so any number of
 * concurrent tickers (the background sweeper, jobq-worker, a user's own
 * loop) give one job per tick.  A tick fires only once the schedule's
 * time (jobq_schedule_now) has reached next_run_at, and next_run_at only
 * grows, so a clock set back fires nothing twice; it waits.
 *
 * Which due ticks fire (catchup), when several are due after a downtime:
 * a tick older than grace never fires (it is missed, counted in
 * missed_ticks); of those within grace,
 *	  latest	the newest fires, the others are missed (the default)
 *	  none		one fires only when it is the only due tick, i.e. none
 *				was missed; otherwise all are missed
 *	  all		every one, oldest first, at most jobq.cron_max_backfill per
 *				call (the rest in the next calls, while within grace)
 * With overlap 'skip', a tick whose schedule's last job is still live
 * (ready or running) fires nothing and counts in skipped_ticks.
 *
 * Each schedule is handled in a subtransaction: one that fails (its
 * payload over jobq.max_payload_size, its enqueue refused) is rolled
 * back, its error kept in last_error and logged, and it is retried after
 * 1 s, 2 s, 4 s ... at most 60 s (retry_at), while the others go on.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/tick.c
 *
 *-------------------------------------------------------------------------
 */
#include "schedules.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

PG_FUNCTION_INFO_V1(jobq_cron_tick);

/* Ticks walked to count the missed ones; past it the count is a floor */
#define WALK_MAX			100000

enum
{
	ST_DUE,
	ST_DONE,
	ST_FAILED,
	ST_NEXT_DUE,
	NUM_STATEMENTS
};

/* ST_DUE */
#define COL_NAME			1
#define COL_QUEUE			2
#define COL_EXPR			3
#define COL_TZ				4
#define COL_PAYLOAD			5
#define COL_OVERLAP			6
#define COL_CATCHUP			7
#define COL_GRACE			8
#define COL_PRIORITY		9
#define COL_MAX_ATTEMPTS	10
#define COL_START_AT		11
#define COL_END_AT			12
#define COL_NEXT_RUN_AT		13
#define COL_LAST_JOB_ID		14
#define COL_FAILURES		15
#define COL_CREATED_AT		16
/* ST_NEXT_DUE */
#define COL_DUE				1

/* The due expression, as schedules_due_idx has it */
#define DUE_SQL "GREATEST(next_run_at, retry_at)"

static const JobqStatement statements[NUM_STATEMENTS] = {
	/* $1 now, $2 max: the due schedules, locked, in due order */
	[ST_DUE] = {"tick_due",
		"SELECT name, queue, expr, tz, payload, overlap, catchup, grace, priority,"
		"  max_attempts, start_at, end_at, next_run_at, last_job_id, failures, created_at"
		" FROM jobq.schedules"
		" WHERE NOT paused AND " DUE_SQL " <= $1"
		" ORDER BY " DUE_SQL
		" LIMIT $2"
		" FOR NO KEY UPDATE SKIP LOCKED",
		2, {TIMESTAMPTZOID, INT4OID}},
	/*
	 * $1 name, $2 next_run_at (NULL: none left), $3 the last fired tick,
	 * $4 its job, $5 missed, $6 skipped.  next_run_at only grows.
	 */
	[ST_DONE] = {"tick_done",
		"UPDATE jobq.schedules SET"
		"  next_run_at = CASE WHEN $2 IS NULL THEN NULL ELSE GREATEST(next_run_at, $2) END,"
		"  last_run_at = COALESCE($3, last_run_at), last_job_id = COALESCE($4, last_job_id),"
		"  missed_ticks = missed_ticks + $5, skipped_ticks = skipped_ticks + $6,"
		"  failures = 0, retry_at = NULL, last_error = NULL"
		" WHERE name = $1",
		6, {TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID, INT8OID, INT8OID, INT8OID}},
	/* $1 name, $2 retry_at, $3 error */
	[ST_FAILED] = {"tick_failed",
		"UPDATE jobq.schedules SET failures = failures + 1, retry_at = $2, last_error = $3"
		" WHERE name = $1",
		3, {TEXTOID, TIMESTAMPTZOID, TEXTOID}},
	/* when the next schedule is due, through schedules_due_idx */
	[ST_NEXT_DUE] = {"tick_next_due",
		"SELECT min(" DUE_SQL ") FROM jobq.schedules WHERE NOT paused",
		0, {InvalidOid}},
};

static SPIPlanPtr plans[NUM_STATEMENTS];

const JobqStatements jobq_tick_statements = {statements, NUM_STATEMENTS, plans, NULL};

typedef enum Catchup
{
	CATCHUP_LATEST,
	CATCHUP_NONE,
	CATCHUP_ALL
} Catchup;

/* A due schedule, copied out of the locked row */
typedef struct DueSchedule
{
	char	   *name;
	text	   *queue;
	char	   *expr;
	char	   *tz;
	Jsonb	   *payload;
	bool		skip;			/* overlap 'skip' */
	Catchup		catchup;
	int64		grace;			/* usecs */
	int16		priority;
	Datum		max_attempts;
	bool		null_max_attempts;
	bool		has_start;
	TimestampTz start_at;
	bool		has_end;
	TimestampTz end_at;
	TimestampTz next_run_at;
	bool		has_last_job;
	int64		last_job_id;
	int32		failures;
	TimestampTz created_at;
} DueSchedule;

/* What one tick of a schedule did, for the result */
typedef struct TickResult
{
	TimestampTz tick;
	int64		job_id;			/* 0: none */
	const char *status;			/* enqueued, skipped, failed */
} TickResult;

/*
 * copy_due
 *	  Copy row i of the ST_DUE result into *s, in the current context.
 */
static void
copy_due(DueSchedule *s, uint64 i)
{
	HeapTuple	row = SPI_tuptable->vals[i];
	TupleDesc	desc = SPI_tuptable->tupdesc;
	bool		isnull;
	Datum		d;
	char	   *word;

	s->name = TextDatumGetCString(SPI_getbinval(row, desc, COL_NAME, &isnull));
	s->queue = DatumGetTextPCopy(SPI_getbinval(row, desc, COL_QUEUE, &isnull));
	s->expr = TextDatumGetCString(SPI_getbinval(row, desc, COL_EXPR, &isnull));
	s->tz = TextDatumGetCString(SPI_getbinval(row, desc, COL_TZ, &isnull));
	s->payload = DatumGetJsonbPCopy(SPI_getbinval(row, desc, COL_PAYLOAD, &isnull));
	word = TextDatumGetCString(SPI_getbinval(row, desc, COL_OVERLAP, &isnull));
	s->skip = strcmp(word, "skip") == 0;
	word = TextDatumGetCString(SPI_getbinval(row, desc, COL_CATCHUP, &isnull));
	s->catchup = strcmp(word, "none") == 0 ? CATCHUP_NONE :
		strcmp(word, "all") == 0 ? CATCHUP_ALL : CATCHUP_LATEST;
	s->grace = jobq_interval_usecs(DatumGetIntervalP(SPI_getbinval(row, desc, COL_GRACE, &isnull)));
	s->priority = DatumGetInt16(SPI_getbinval(row, desc, COL_PRIORITY, &isnull));
	s->max_attempts = SPI_getbinval(row, desc, COL_MAX_ATTEMPTS, &s->null_max_attempts);
	d = SPI_getbinval(row, desc, COL_START_AT, &isnull);
	s->has_start = !isnull;
	s->start_at = isnull ? 0 : DatumGetTimestampTz(d);
	d = SPI_getbinval(row, desc, COL_END_AT, &isnull);
	s->has_end = !isnull;
	s->end_at = isnull ? 0 : DatumGetTimestampTz(d);
	s->next_run_at = DatumGetTimestampTz(SPI_getbinval(row, desc, COL_NEXT_RUN_AT, &isnull));
	d = SPI_getbinval(row, desc, COL_LAST_JOB_ID, &isnull);
	s->has_last_job = !isnull;
	s->last_job_id = isnull ? 0 : DatumGetInt64(d);
	s->failures = DatumGetInt32(SPI_getbinval(row, desc, COL_FAILURES, &isnull));
	s->created_at = DatumGetTimestampTz(SPI_getbinval(row, desc, COL_CREATED_AT, &isnull));
}

/*
 * first_tick_from
 *	  The first tick at or after t (DT_NOEND: none).
 */
static TimestampTz
first_tick_from(const ScheduleTiming *timing, TimestampTz t)
{
	return schedule_next(timing, t - 1);
}

/*
 * count_ticks_before
 *	  How many ticks there are from the tick t up to, not including, limit
 *	  (DT_NOEND: all that are left).  @every by arithmetic; a calendar
 *	  expression by walking, at most WALK_MAX.
 */
static int64
count_ticks_before(const ScheduleTiming *timing, TimestampTz t, TimestampTz limit)
{
	int64		n = 0;

	if (timing->every > 0)
	{
		TimestampTz last = limit == DT_NOEND ? timing->end_at : limit - 1;

		if (limit == DT_NOEND && !timing->has_end)
			return 0;			/* cannot happen: @every always has a next */
		return last < t ? 0 : (last - t) / timing->every + 1;
	}
	while (t != DT_NOEND && t < limit && n < WALK_MAX)
	{
		n++;
		t = schedule_next(timing, t);
	}
	return n;
}

/*
 * fire
 *	  Enqueue the job of tick, or skip it (overlap 'skip' while the last
 *	  job is live).  Inside SPI.
 */
static void
fire(DueSchedule *s, TimestampTz tick, bool backfilled, bool *last_live,
	 TickResult *result, int64 *skipped)
{
	bool		created;
	int64		id;

	result->tick = tick;
	result->job_id = 0;
	if (s->skip && *last_live)
	{
		result->status = "skipped";
		(*skipped)++;
		return;
	}
	id = jobq_enqueue_scheduled(s->queue,
								schedule_job_payload(s->payload, s->name, tick, backfilled, false),
								s->priority, s->max_attempts, s->null_max_attempts,
								schedule_dedupe_key(s->name, NULL, tick), &created);
	if (!created)
	{
		/* this tick's job is live already: it fired before */
		result->status = "skipped";
		(*skipped)++;
		return;
	}
	result->job_id = id;
	result->status = "enqueued";
	s->has_last_job = true;
	s->last_job_id = id;
	*last_live = true;
}

/*
 * tick_schedule
 *	  Fire the due ticks of one locked schedule at time now and move it
 *	  on.  Fills results (at most jobq_cron_max_backfill + 1) and returns
 *	  how many.  Inside SPI; errors are the caller's.
 */
static int
tick_schedule(DueSchedule *s, TimestampTz now, TickResult *results)
{
	ScheduleTiming timing;
	TimestampTz t = s->next_run_at;
	TimestampTz cutoff = now - s->grace;
	TimestampTz last_run = 0;
	int64		missed = 0;
	int64		skipped = 0;
	bool		last_live = false;
	int			n = 0;
	Datum		args[6];
	char		nulls[6] = {' ', ' ', ' ', ' ', ' ', ' '};
	int			rc;

	schedule_timing(&timing, s->expr, s->tz, s->has_start, s->start_at,
					s->has_end, s->end_at, s->created_at);
	if (s->skip && s->has_last_job)
		last_live = schedule_job_live(s->last_job_id);

	/* ticks older than the grace are missed, whatever the policy */
	if (t < cutoff)
	{
		TimestampTz first = first_tick_from(&timing, cutoff);

		missed += count_ticks_before(&timing, t, first);
		t = first;
	}

	if (s->catchup == CATCHUP_ALL)
	{
		/* every tick within the grace, oldest first, capped */
		while (t != DT_NOEND && t <= now && n < jobq_cron_max_backfill)
		{
			TimestampTz after = schedule_next(&timing, t);

			fire(s, t, after != DT_NOEND && after <= now, &last_live, &results[n], &skipped);
			if (results[n].job_id != 0)
				last_run = t;
			n++;
			t = after;
		}
	}
	else
	{
		/* the newest due tick, and how many there are */
		TimestampTz newest = DT_NOEND;
		int64		count = 0;

		if (timing.every > 0 && t != DT_NOEND && t <= now)
		{
			TimestampTz last = timing.has_end ? Min(now, timing.end_at) : now;

			count = (last - t) / timing.every + 1;
			newest = t + (count - 1) * timing.every;
			t = schedule_next(&timing, newest);
		}
		else
		{
			while (t != DT_NOEND && t <= now)
			{
				newest = t;
				count++;
				t = schedule_next(&timing, t);
			}
		}

		if (count > 0 && (s->catchup == CATCHUP_LATEST || (missed == 0 && count == 1)))
		{
			fire(s, newest, false, &last_live, &results[n], &skipped);
			if (results[n].job_id != 0)
				last_run = newest;
			n++;
			missed += count - 1;
		}
		else
			missed += count;
	}

	args[0] = CStringGetTextDatum(s->name);
	args[1] = TimestampTzGetDatum(t);
	nulls[1] = t == DT_NOEND ? 'n' : ' ';
	args[2] = TimestampTzGetDatum(last_run);
	nulls[2] = last_run == 0 ? 'n' : ' ';
	args[3] = Int64GetDatum(s->last_job_id);
	nulls[3] = last_run == 0 ? 'n' : ' ';
	args[4] = Int64GetDatum(missed);
	args[5] = Int64GetDatum(skipped);
	rc = SPI_execute_plan(jobq_plan(&jobq_tick_statements, ST_DONE), args, nulls, false, 0);
	jobq_spi_check(rc, SPI_OK_UPDATE, "move the schedule on");
	return n;
}

/*
 * schedule_failed
 *	  Record that the tick of s failed with message: back off 1 s, 2 s,
 *	  4 s ... at most 60 s.  Inside SPI, outside the failed subtransaction.
 */
static void
schedule_failed(DueSchedule *s, TimestampTz now, const char *message)
{
	int64		backoff = JOBQ_SCHEDULE_RETRY_MIN_USECS << Min(s->failures, 6);
	Datum		args[3];
	int			rc;

	backoff = Min(backoff, JOBQ_SCHEDULE_RETRY_MAX_USECS);
	args[0] = CStringGetTextDatum(s->name);
	args[1] = TimestampTzGetDatum(now + backoff);
	args[2] = CStringGetTextDatum(message);
	rc = SPI_execute_plan(jobq_plan(&jobq_tick_statements, ST_FAILED), args, NULL, false, 0);
	jobq_spi_check(rc, SPI_OK_UPDATE, "record the schedule's failure");
}

/*
 * put_result
 *	  One row of jobq_cron_tick's result.
 */
static void
put_result(Tuplestorestate *store, TupleDesc desc, const char *name, const TickResult *r)
{
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};

	if (store == NULL)
		return;
	values[0] = CStringGetTextDatum(name);
	values[1] = TimestampTzGetDatum(r->tick);
	values[2] = Int64GetDatum(r->job_id);
	nulls[2] = r->job_id == 0;
	values[3] = CStringGetTextDatum(r->status);
	tuplestore_putvalues(store, desc, values, nulls);
}

/*
 * jobq_cron_tick_run
 *	  Tick up to max_schedules due schedules in the current transaction,
 *	  putting a row per fired, skipped or failed tick into store (when not
 *	  NULL).  Returns how many schedules were due and locked, so that a
 *	  caller looping until fewer than max_schedules knows it is done.  0
 *	  while the SQL is 0.1.0 (no jobq.schedules).
 */
int
jobq_cron_tick_run(int max_schedules, Tuplestorestate *store, TupleDesc desc)
{
	MemoryContext outer = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	TimestampTz now;
	DueSchedule *due;
	TickResult *results;
	Datum		args[2];
	int			ndue;
	int			rc;

	if (!jobq_schedules_exist_table())
		return 0;
	now = jobq_schedule_now();
	args[0] = TimestampTzGetDatum(now);
	args[1] = Int32GetDatum(max_schedules);

	jobq_spi_connect();
	rc = SPI_execute_plan(jobq_plan(&jobq_tick_statements, ST_DUE), args, NULL, false, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "find due schedules");
	ndue = (int) SPI_processed;
	MemoryContextSwitchTo(outer);
	due = palloc(sizeof(DueSchedule) * Max(ndue, 1));
	for (int i = 0; i < ndue; i++)
		copy_due(&due[i], i);
	results = palloc(sizeof(TickResult) * (jobq_cron_max_backfill + 1));
	jobq_spi_finish();

	for (int i = 0; i < ndue; i++)
	{
		DueSchedule *s = &due[i];
		volatile int n = 0;

		BeginInternalSubTransaction(NULL);
		MemoryContextSwitchTo(outer);
		PG_TRY();
		{
			jobq_spi_connect();
			n = tick_schedule(s, now, results);
			jobq_spi_finish();
			ReleaseCurrentSubTransaction();
			MemoryContextSwitchTo(outer);
			CurrentResourceOwner = owner;
		}
		PG_CATCH();
		{
			ErrorData  *edata;
			TickResult failed = {s->next_run_at, 0, "failed"};

			MemoryContextSwitchTo(outer);
			edata = CopyErrorData();
			FlushErrorState();
			RollbackAndReleaseCurrentSubTransaction();
			MemoryContextSwitchTo(outer);
			CurrentResourceOwner = owner;

			/* a cancel or a timeout ends the whole tick */
			if (edata->sqlerrcode == ERRCODE_QUERY_CANCELED)
				ReThrowError(edata);

			ereport(WARNING,
					(errcode(edata->sqlerrcode),
					 errmsg("schedule \"%s\" failed: %s", s->name, edata->message),
					 errhint("It is retried after a backoff; jobq_schedules() shows its last_error.")));
			jobq_spi_connect();
			schedule_failed(s, now, edata->message);
			jobq_spi_finish();
			put_result(store, desc, s->name, &failed);
			FreeErrorData(edata);
			continue;
		}
		PG_END_TRY();

		for (int k = 0; k < n; k++)
			put_result(store, desc, s->name, &results[k]);
	}
	return ndue;
}

/*
 * jobq_cron_next_due
 *	  When the next schedule is due (DT_NOEND: none is, or no
 *	  jobq.schedules).  For the sweeper's sleep.
 */
TimestampTz
jobq_cron_next_due(void)
{
	TimestampTz due = DT_NOEND;
	bool		isnull;
	Datum		d;
	int			rc;

	if (!jobq_schedules_exist_table())
		return DT_NOEND;
	jobq_spi_connect();
	rc = SPI_execute_plan(jobq_plan(&jobq_tick_statements, ST_NEXT_DUE), NULL, NULL, true, 1);
	jobq_spi_check(rc, SPI_OK_SELECT, "find the next due schedule");
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, COL_DUE, &isnull);
	if (!isnull)
		due = DatumGetTimestampTz(d);
	jobq_spi_finish();
	return due;
}

/*
 * jobq_cron_tick(max_schedules) -> setof (schedule, tick, job_id, status)
 *	  Fire the due ticks of up to max_schedules schedules (NULL: 100) and
 *	  return what each did: enqueued (with the job), skipped (overlap) or
 *	  failed.  Safe to call from any number of sessions at once.
 */
Datum
jobq_cron_tick(PG_FUNCTION_ARGS)
{
	int			max_schedules = 100;
	TupleDesc	desc;
	Tuplestorestate *store;

	if (!PG_ARGISNULL(0))
	{
		max_schedules = PG_GETARG_INT32(0);
		jobq_check_int_range(max_schedules, "max_schedules", 1, JOBQ_CRON_TICK_MAX);
	}
	store = jobq_srf_begin(fcinfo, &desc);
	(void) jobq_cron_tick_run(max_schedules, store, desc);
	return (Datum) 0;
}
