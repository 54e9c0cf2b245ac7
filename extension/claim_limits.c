/*-------------------------------------------------------------------------
 *
 * claim_limits.c
 *	  Queue-wide limits of a claim: max_running and the rate (issue 19,
 *	  doc/groups.md).
 *
 * max_running without a counter.  A claim of a queue with max_running and
 * no rate takes free slots (claim_slots.c), side by side with the other
 * claimers.  With a rate, a claim takes a lock that only claims of that
 * queue take (an object lock on jobq.queues' OID, the hash of the name
 * and sub-id 1: no SQL function can
 * take or wait for it, as for jobq_lock_queue_name), held to the end of
 * the claim's transaction.  It then counts the queue's running jobs with
 * a snapshot taken after the lock was granted: the claimer before it has
 * committed, so its claims are counted.  Completes, fails and sweeps touch
 * nothing more: a finished job frees its slot by leaving the running
 * state.  A job whose lease expired holds its slot until it is swept.
 *
 * The rate by GCRA (the generic cell rate algorithm): one timestamp per
 * queue, tat (the theoretical arrival time, jobq.queue_rates), read and
 * written under the same lock.  With the emission interval T = rate_per /
 * rate and the tolerance tau = T * (rate_burst - 1), a claim at now may
 * take n = floor((now + tau - max(tat, now)) / T) + 1 jobs (none when
 * that is below 1), and sets tat = max(tat, now) + k * T for the k it
 * took.  No window edges (no double burst at a boundary), no row per
 * claim, and exact across any number of claimers.  When the rate holds a
 * claim back, *retry_at says when the next token is due, and a waiting
 * claim sleeps until then (claim.c).
 *
 * A claim attempt that a limit held back (it asked for more than the limit
 * allowed, took all it allowed, and due jobs are left) counts in the
 * queue's metrics at once, as limit_held or, when the rate allowed less
 * than max_running, rate_held: one probe of an index, only when the limit
 * decided the claim (FEATURES-0.2.md 6.4.11).
 *
 * A claim that takes nothing must not keep the lock (or its slots) while a
 * waiting claim sleeps, or every other claimer of the queue would wait for
 * it; so the limited claim runs in a subtransaction, rolled back (with its
 * locks) when it took nothing.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/claim_limits.c
 *
 *-------------------------------------------------------------------------
 */
#include "counters.h"
#include "groups.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/resowner.h"

/* sub-id of the object lock that claims of a limited queue take */
#define CLAIM_LOCK_SUBID	1

enum
{
	ST_COUNT_RUNNING,
	ST_READ_TAT,
	ST_WRITE_TAT,
	ST_JOBS_QUEUES,
	ST_DUE_LEFT,
	ST_DUE_LEFT_GROUPED,
	NUM_STATEMENTS
};

static const JobqStatement statements[NUM_STATEMENTS] = {
	/* $1 queue: its running jobs, through jobs_lease_idx */
	[ST_COUNT_RUNNING] = {"limits_count_running",
		"SELECT count(*) FROM jobq.jobs WHERE state = 'running' AND queue = $1",
		1, {TEXTOID}},
	/* $1 queue */
	[ST_READ_TAT] = {"limits_read_tat",
		"SELECT tat FROM jobq.queue_rates WHERE queue = $1",
		1, {TEXTOID}},
	/* $1 queue, $2 tat */
	[ST_WRITE_TAT] = {"limits_write_tat",
		"INSERT INTO jobq.queue_rates AS r (queue, tat) VALUES ($1, $2)"
		" ON CONFLICT (queue) DO UPDATE SET tat = $2",
		2, {TEXTOID, TIMESTAMPTZOID}},
	/* $1 ids: the queues of those live jobs, and how many of each */
	[ST_JOBS_QUEUES] = {"limits_jobs_queues",
		"SELECT queue, count(*) FROM jobq.jobs WHERE id = ANY ($1) GROUP BY queue",
		1, {INT8ARRAYOID}},
	/* $1 queue, $2 now: a due job that a claim could take (jobs_claim_idx) */
	[ST_DUE_LEFT] = {"limits_due_left",
		"SELECT EXISTS (SELECT 1 FROM jobq.jobs"
		" WHERE queue = $1 AND state = 'ready' AND run_at <= $2)",
		2, {TEXTOID, TIMESTAMPTZOID}},
	/* ... of a grouped queue: a group whose head may run now (groups_eligible_idx) */
	[ST_DUE_LEFT_GROUPED] = {"limits_due_left_grouped",
		"SELECT EXISTS (SELECT 1 FROM jobq.groups g"
		" WHERE g.queue = $1 AND g.eligible AND g.head_run_at <= $2)",
		2, {TEXTOID, TIMESTAMPTZOID}},
};

static SPIPlanPtr plans[NUM_STATEMENTS];

const JobqStatements jobq_claim_limits_statements = {statements, NUM_STATEMENTS, plans, NULL};

/*
 * jobq_queue_limited
 *	  Whether claims of the queue have queue-wide limits to keep.
 */
bool
jobq_queue_limited(const JobqQueueSettings *settings)
{
	return jobq_setting_020(settings, max_running) > 0 || jobq_setting_020(settings, rate) > 0;
}

/*
 * jobq_gcra_interval
 *	  The emission interval T of rate jobs per per_s seconds, in
 *	  microseconds, rounded up (never faster than asked).
 */
int64
jobq_gcra_interval(int64 rate, int64 per_s)
{
	return (per_s * USECS_PER_SEC + rate - 1) / rate;
}

/*
 * jobq_gcra_allowance
 *	  How many jobs the rate lets a claim at now take, given tat (0: none
 *	  yet), the interval t and the burst; *retry_at is when the next token
 *	  is due when that is 0.
 */
int64
jobq_gcra_allowance(TimestampTz tat, TimestampTz now, int64 t, int64 burst,
					TimestampTz *retry_at)
{
	int64		tau = t * (burst - 1);
	TimestampTz from = Max(tat, now);

	if (now + tau < from)
	{
		*retry_at = from - tau;
		return 0;
	}
	return (now + tau - from) / t + 1;
}

/*
 * jobq_lock_limited_claims
 *	  Take the lock that serializes the claims of queue, to the end of the
 *	  (sub)transaction (also jobq_fail with rate_limit_for, which moves the
 *	  queue's tat).
 */
void
jobq_lock_limited_claims(text *queue)
{
	LOCKTAG		tag;
	uint32		h = hash_bytes((const unsigned char *) VARDATA_ANY(queue),
							   VARSIZE_ANY_EXHDR(queue));

	SET_LOCKTAG_OBJECT(tag, MyDatabaseId, jobq_queues_relid(), h, CLAIM_LOCK_SUBID);
	(void) LockAcquire(&tag, ExclusiveLock, false, false);
}

/*
 * budget
 *	  Under the lock: how many of want jobs the queue's limits allow now;
 *	  *tat the queue's rate timestamp (0: none), *retry_at when the rate
 *	  allows the next one if it allows none, *by_running how many
 *	  max_running alone allows.
 */
static int64
budget(text *queue, const JobqQueueSettings *settings, int64 want, TimestampTz now,
	   TimestampTz *tat, TimestampTz *retry_at, int64 *by_running)
{
	Datum		arg = PointerGetDatum(queue);
	int64		max_running = jobq_setting_020(settings, max_running);
	int64		rate = jobq_setting_020(settings, rate);
	bool		isnull;
	int			rc;

	*tat = 0;
	*retry_at = 0;
	if (max_running > 0)
	{
		/* NB: not read-only: a snapshot taken after the lock */
		rc = SPI_execute_plan(jobq_plan(&jobq_claim_limits_statements, ST_COUNT_RUNNING),
							  &arg, NULL, false, 1);
		jobq_spi_check(rc, SPI_OK_SELECT, "count running jobs");
		want = Min(want, Max(max_running - jobq_spi_getint64(0, 1, &isnull), 0));
		SPI_freetuptable(SPI_tuptable);
	}
	*by_running = want;
	if (rate > 0 && want > 0)
	{
		rc = SPI_execute_plan(jobq_plan(&jobq_claim_limits_statements, ST_READ_TAT),
							  &arg, NULL, false, 1);
		jobq_spi_check(rc, SPI_OK_SELECT, "read the queue's rate");
		if (SPI_processed > 0)
		{
			Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1,
										  &isnull);

			*tat = DatumGetTimestampTz(d);
		}
		SPI_freetuptable(SPI_tuptable);
		want = Min(want, jobq_gcra_allowance(*tat, now,
											 jobq_gcra_interval(rate, jobq_setting_020(settings, rate_per)),
											 jobq_setting_020(settings, rate_burst), retry_at));
	}
	return want;
}

/*
 * write_tat
 *	  After k jobs were claimed at now: the queue's rate moves on by k.
 */
static void
write_tat(text *queue, const JobqQueueSettings *settings, TimestampTz tat, TimestampTz now,
		  int64 k)
{
	int64		t = jobq_gcra_interval(jobq_setting_020(settings, rate),
									   jobq_setting_020(settings, rate_per));
	Datum		args[2] = {PointerGetDatum(queue),
	TimestampTzGetDatum(Max(tat, now) + k * t)};
	int			rc;

	rc = SPI_execute_plan(jobq_plan(&jobq_claim_limits_statements, ST_WRITE_TAT), args, NULL,
						  false, 0);
	jobq_spi_check(rc, SPI_OK_INSERT, "advance the queue's rate");
}

/*
 * jobq_due_left
 *	  Whether queue still has a due job that a claim could take, at now;
 *	  the last statement's result (a claim's rows) stays in SPI_tuptable.
 */
bool
jobq_due_left(text *queue, const JobqQueueSettings *settings, TimestampTz now)
{
	SPITupleTable *rows = SPI_tuptable;
	uint64		processed = SPI_processed;
	Datum		args[2] = {PointerGetDatum(queue), TimestampTzGetDatum(now)};
	bool		isnull;
	bool		left;
	int			rc;

	rc = SPI_execute_plan(jobq_plan(&jobq_claim_limits_statements,
									jobq_queue_grouped(settings) ? ST_DUE_LEFT_GROUPED :
									ST_DUE_LEFT),
						  args, NULL, true, 1);
	jobq_spi_check(rc, SPI_OK_SELECT, "look for due jobs");
	left = jobq_spi_getbool(0, 1, &isnull);
	SPI_freetuptable(SPI_tuptable);
	SPI_tuptable = rows;
	SPI_processed = processed;
	return left;
}

/*
 * jobq_claim_limited
 *	  Claim from one queue with queue-wide limits, which exists and is not
 *	  paused: values and nulls as claim.c's, claim the function that claims
 *	  (the ungrouped or grouped statement) at most values[2] jobs.  Returns
 *	  how many were claimed (rows in SPI_tuptable), and with 0, in
 *	  *retry_at when the rate allows the next claim (0: not the rate).
 */
uint64
jobq_claim_limited(Datum *values, char *nulls, text *queue, JobqQueueSettings *settings,
				   JobqClaimFn claim, TimestampTz *retry_at)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	ResourceOwner oldowner = CurrentResourceOwner;
	TimestampTz now = DatumGetTimestampTz(values[1]);
	Datum		want = values[2];
	volatile int64 allowed = 0;
	volatile int64 by_running = 0;
	volatile uint64 claimed = 0;
	bool		slotted = jobq_queue_slotted(settings);

	*retry_at = 0;
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(oldcxt);
	PG_TRY();
	{
		int64		running_allows;
		Datum	   *slots = NULL;
		TimestampTz tat = 0;

		if (slotted)
		{
			/* NB: free slots, locked, instead of the queue's lock (claim_slots.c) */
			running_allows = jobq_slots_lock(queue, DatumGetInt64(want), &slots);
			allowed = running_allows;
		}
		else
		{
			jobq_lock_limited_claims(queue);
			allowed = budget(queue, settings, DatumGetInt64(want), now, &tat, retry_at,
							 &running_allows);
		}
		by_running = running_allows;
		if (allowed > 0)
		{
			values[2] = Int64GetDatum(allowed);
			claimed = claim(values, nulls, queue, settings);
			values[2] = want;
			if (claimed > 0 && slotted)
				jobq_slots_take(queue, slots, claimed);
			else if (claimed > 0 && jobq_setting_020(settings, rate) > 0)
			{
				SPITupleTable *rows = SPI_tuptable;

				write_tat(queue, settings, tat, now, (int64) claimed);
				SPI_tuptable = rows;
				SPI_processed = claimed;
			}
		}
	}
	PG_CATCH();
	{
		values[2] = want;
		MemoryContextSwitchTo(oldcxt);
		RollbackAndReleaseCurrentSubTransaction();
		CurrentResourceOwner = oldowner;
		PG_RE_THROW();
	}
	PG_END_TRY();

	if (claimed > 0)
		ReleaseCurrentSubTransaction();
	else
		RollbackAndReleaseCurrentSubTransaction();	/* and its lock */
	MemoryContextSwitchTo(oldcxt);
	CurrentResourceOwner = oldowner;

	/* held back: asked for more than allowed, took all allowed, work left */
	if (allowed < DatumGetInt64(want) && (int64) claimed == Max(allowed, 0) &&
		jobq_due_left(queue, settings, now))
		jobq_count(queue, allowed < by_running ? JOBQ_EV_RATE_LIMITED : JOBQ_EV_LIMIT_SATURATED,
				   1);
	return claimed;
}

/*
 * jobq_slots_read
 *	  Before an ack of the running jobs ids (an int8[]), called while some
 *	  queue limits its claims (jobq_any_limited_queue): their queues that
 *	  have max_running, and how many
 *	  of the jobs each holds (*slots, palloc'd; returns how many queues).
 *	  A finished job frees its slot without touching anything, so nobody
 *	  else would tell the claims that wait for one (jobq_slots_freed).
 *	  Inside SPI.
 */
int
jobq_slots_read(Datum ids, JobqSlots **slots)
{
	SPITupleTable *tt;
	uint64		rows;
	int			rc;
	int			n = 0;

	rc = SPI_execute_plan(jobq_plan(&jobq_claim_limits_statements, ST_JOBS_QUEUES), &ids, NULL,
						  false, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "read the jobs' queues");
	/* NB: the settings lookup below may run statements: keep this result */
	tt = SPI_tuptable;
	rows = SPI_processed;
	*slots = palloc(sizeof(JobqSlots) * Max(rows, 1));
	for (uint64 r = 0; r < rows; r++)
	{
		bool		isnull;
		text	   *queue = (text *) SPI_datumTransfer(SPI_getbinval(tt->vals[r], tt->tupdesc, 1,
																	 &isnull), false, -1);
		int64		count = DatumGetInt64(SPI_getbinval(tt->vals[r], tt->tupdesc, 2, &isnull));
		JobqQueueSettings settings;

		if (!jobq_queue_settings(queue, &settings) ||
			jobq_setting_020(&settings, max_running) == 0)
			continue;
		(*slots)[n].queue = queue;
		(*slots)[n].count = count;
		(*slots)[n].notify = settings.notify;
		(*slots)[n].paused = settings.paused;
		n++;
	}
	SPI_freetuptable(tt);
	return n;
}

/*
 * jobq_slots_freed
 *	  After the ack freed up to freed of the slots read by jobq_slots_read:
 *	  wake that many claims waiting on each queue (at commit, wake.c).
 */
void
jobq_slots_freed(const JobqSlots *slots, int n, int64 freed)
{
	TimestampTz now = jobq_now();

	for (int i = 0; i < n && freed > 0; i++)
		jobq_announce_ready(slots[i].queue, Min(slots[i].count, freed), now, now,
							slots[i].notify, slots[i].paused);
}
