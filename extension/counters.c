/*-------------------------------------------------------------------------
 *
 * counters.c
 *	  Per-(database, queue) counts of jobs by state, changed when the
 *	  transactions that change the jobs commit, in shared memory.
 *
 * Every jobq call that moves jobs between states (enqueue, claim,
 * complete, fail, release, sweep, cancel, retry, purge, pop) reports the
 * move here (jobq_count).  The moves of a transaction are kept in
 * backend-local memory, one delta per queue and subtransaction level, as
 * wake.c keeps its notes: a subtransaction that rolls back takes its
 * deltas with it, one that commits hands them to its parent, a rollback
 * forgets them all.  At commit the deltas are added to the shared entry
 * of each queue, and the live metrics of the second get the events
 * (live_metrics.c).
 *
 * Why they cannot drift.  A count is exact only when it was rebuilt
 * (jobq_counters_reconcile) from the tables under a snapshot S, and every
 * transaction adds its deltas if and only if it is not visible in S.  The
 * rebuild takes S while it holds the queue's gate lock exclusively, and a
 * committing transaction holds the gate locks of its queues shared from
 * before its commit becomes visible (XACT_EVENT_PRE_COMMIT) until its
 * deltas are added (XACT_EVENT_COMMIT).  So at S every transaction has
 * either added its deltas and is visible, or is not yet visible and will
 * add them later.  The rebuild reads the entry's counts C0 at S, counts R
 * under S (taking its time: commits go on), and adds R - C0 to the entry:
 * what committed since S stays added, and the difference R - C0 is the
 * drift, which is 0 unless something changed the tables without jobq
 * (rows written by hand), and is logged.
 *
 * What makes a count not exact, until the next rebuild: the entry is new
 * (after a server start, or the first event of a queue), a transaction
 * touching the queue was PREPAREd (its COMMIT PREPARED runs no callback
 * of ours), the queue was dropped and created again (queue_created no
 * longer matches), or the table is full (jobq.max_tracked_queues: the
 * queue has no entry).  Readers then count from the tables (counts.c) and
 * say exact = false.  The sweeper rebuilds entries that are not exact,
 * and every entry each jobq.counts_reconcile_interval.
 *
 * Nothing here can fail at commit: the table has a fixed size and an
 * entry that cannot be made is skipped (the queue reads as not exact).
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/counters.c
 *
 *-------------------------------------------------------------------------
 */
#include "counters.h"

#include "access/xact.h"
#include "utils/array.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/snapmgr.h"

/* GUCs (jobq.c defines them when preloading) */
int			jobq_max_tracked_queues = 1024;
int			jobq_counts_reconcile_interval_s = 3600;

/* Whether this backend counts: preloaded and shared memory is there */
bool		jobq_counting = false;

/*
 * Gate locks: a committing transaction holds those of its queues' hash
 * partitions shared, a rebuild one exclusively (see the header).  A
 * transaction of many queues takes at most all of them, in order.
 */
#define COUNT_GATES			16
#define COUNT_TRANCHE		JOBQ_COUNTERS_TRANCHE
/* How long a rebuild tries to get between commits before it gives up */
#define GATE_TRIES			5000	/* of 1 ms */
/* How soon a rebuild that left a queue not exact is tried again */
#define RETRY_INEXACT_SECS	10

typedef struct CountersShared
{
	LWLock	   *lock;			/* the table, the entries, the ring */
	LWLock	   *gates[COUNT_GATES];
	uint32		next_incarnation;
} CountersShared;

static CountersShared *counters = NULL;
static HTAB *entries = NULL;

/*
 * What each event does: state changes and metric counts per job.
 */
typedef struct EventEffect
{
	int8		state[JOBQ_COUNT_STATES];	/* pending running completed dead cancelled
											 * waiting */
	int8		metric[JOBQ_METRICS];	/* in JOBQ_METRIC_COUNTERS order */
} EventEffect;

static const EventEffect event_effects[JOBQ_COUNT_EVENTS] = {
	[JOBQ_EV_ENQUEUED] = {{1, 0, 0, 0, 0}, {[JOBQ_METRIC_enqueued] = 1}},
	[JOBQ_EV_CLAIMED] = {{-1, 1, 0, 0, 0}, {[JOBQ_METRIC_claimed] = 1}},
	[JOBQ_EV_COMPLETED] = {{0, -1, 1, 0, 0}, {[JOBQ_METRIC_completed] = 1}},
	[JOBQ_EV_COMPLETED_GONE] = {{0, -1, 0, 0, 0}, {[JOBQ_METRIC_completed] = 1}},
	[JOBQ_EV_RETRIED] = {{1, -1, 0, 0, 0}, {[JOBQ_METRIC_retried] = 1}},
	[JOBQ_EV_FAILED_DEAD] = {{0, -1, 0, 1, 0}, {[JOBQ_METRIC_dead] = 1}},
	[JOBQ_EV_RELEASED] = {{1, -1, 0, 0, 0}, {0}},
	[JOBQ_EV_EXPIRED_RETRIED] = {{1, -1, 0, 0, 0},
	{[JOBQ_METRIC_lease_expired] = 1, [JOBQ_METRIC_retried] = 1}},
	[JOBQ_EV_EXPIRED_DEAD] = {{0, -1, 0, 1, 0},
	{[JOBQ_METRIC_lease_expired] = 1, [JOBQ_METRIC_dead] = 1}},
	[JOBQ_EV_CANCELLED_READY] = {{-1, 0, 0, 0, 1}, {[JOBQ_METRIC_cancelled] = 1}},
	[JOBQ_EV_CANCELLED_DEAD] = {{0, 0, 0, -1, 1}, {[JOBQ_METRIC_cancelled] = 1}},
	[JOBQ_EV_REDRIVEN] = {{1, 0, 0, -1, 0}, {0}},
	[JOBQ_EV_PURGED_COMPLETED] = {{0, 0, -1, 0, 0}, {0}},
	[JOBQ_EV_PURGED_DEAD] = {{0, 0, 0, -1, 0}, {0}},
	[JOBQ_EV_PURGED_CANCELLED] = {{0, 0, 0, 0, -1}, {0}},
	[JOBQ_EV_POPPED] = {{-1, 0, 0, 0, 0},
	{[JOBQ_METRIC_claimed] = 1, [JOBQ_METRIC_completed] = 1}},
	[JOBQ_EV_POPPED_KEPT] = {{-1, 0, 1, 0, 0},
	{[JOBQ_METRIC_claimed] = 1, [JOBQ_METRIC_completed] = 1}},
	[JOBQ_EV_STALE_ACK] = {{0}, {[JOBQ_METRIC_stale_acks] = 1}},
	[JOBQ_EV_ENQUEUED_WAITING] = {{0, 0, 0, 0, 0, 1}, {[JOBQ_METRIC_enqueued] = 1}},
	[JOBQ_EV_UNBLOCKED] = {{1, 0, 0, 0, 0, -1}, {0}},
	[JOBQ_EV_CANCELLED_WAITING] = {{0, 0, 0, 0, 1, -1}, {[JOBQ_METRIC_cancelled] = 1}},
	[JOBQ_EV_REVIVED_WAITING] = {{0, 0, 0, 0, -1, 1}, {0}},
	[JOBQ_EV_LIMIT_SATURATED] = {{0}, {[JOBQ_METRIC_limit_held] = 1}},
	[JOBQ_EV_RATE_LIMITED] = {{0}, {[JOBQ_METRIC_rate_held] = 1}},
};

/*
 * The deltas of the current transaction, one per queue and subtransaction
 * level, in TopTransactionContext.
 */
typedef struct CountDelta
{
	JobqCountsKey key;
	uint32		hash;
	int			level;
	int64		state[JOBQ_COUNT_STATES];
	int64		metric[JOBQ_METRICS];
	int32		wait[JOBQ_HIST_BUCKETS];
	int32		run[JOBQ_HIST_BUCKETS];
} CountDelta;

static CountDelta *deltas = NULL;
static int	ndeltas = 0;
static int	deltas_cap = 0;
static int	last_delta = -1;	/* the one found last: calls come in runs */
static uint32 gates_held = 0;	/* bit i: gates[i] held shared */

/*
 * jobq_counters_shmem_size
 */
Size
jobq_counters_shmem_size(void)
{
	return add_size(add_size(MAXALIGN(sizeof(CountersShared)),
							 hash_estimate_size(jobq_max_tracked_queues,
												sizeof(JobqCountsEntry))),
					jobq_live_shmem_size());
}

/*
 * jobq_counters_shmem_init
 *	  From the shmem_startup_hook, under AddinShmemInitLock.
 */
void
jobq_counters_shmem_init(void)
{
	bool		found;
	HASHCTL		info;
	void	   *ring;

	counters = ShmemInitStruct("jobq counters", sizeof(CountersShared), &found);
	if (!found)
	{
		LWLockPadded *locks = GetNamedLWLockTranche(COUNT_TRANCHE);

		counters->lock = &locks[0].lock;
		for (int i = 0; i < COUNT_GATES; i++)
			counters->gates[i] = &locks[1 + i].lock;
		counters->next_incarnation = 1;
	}
	info.keysize = sizeof(JobqCountsKey);
	info.entrysize = sizeof(JobqCountsEntry);
	entries = ShmemInitHash("jobq counters table", jobq_max_tracked_queues,
							jobq_max_tracked_queues, &info,
							HASH_ELEM | HASH_BLOBS | HASH_FIXED_SIZE);
	ring = ShmemInitStruct("jobq live metrics", jobq_live_shmem_size(), &found);
	if (!found)
		jobq_live_shmem_init(ring);
	jobq_counting = true;
}

/*
 * jobq_counters_lwlocks
 *	  The LWLocks to request with the shared memory.
 */
int
jobq_counters_lwlocks(void)
{
	return 1 + COUNT_GATES;
}

bool
jobq_counters_available(void)
{
	return jobq_counting;
}

/*
 * jobq_counters_lock / jobq_counters_unlock
 *	  For live_metrics.c's reader: the lock of the table and the ring.
 */
void
jobq_counters_lock(int mode)
{
	LWLockAcquire(counters->lock, (LWLockMode) mode);
}

void
jobq_counters_unlock(void)
{
	LWLockRelease(counters->lock);
}

/*
 * make_key
 *	  The key of queue in this database, NUL-padded.
 */
static void
make_key(JobqCountsKey *key, const char *name, int len)
{
	if (len > JOBQ_QUEUE_NAME_MAX)
		elog(ERROR, "jobq: queue name too long to count");
	memset(key, 0, sizeof(*key));
	key->dboid = MyDatabaseId;
	memcpy(key->queue, name, len);
}

/*
 * find_delta
 *	  The delta of queue at the current nesting level, made if missing.
 */
static CountDelta *
find_delta(text *queue)
{
	const char *name = VARDATA_ANY(queue);
	int			len = VARSIZE_ANY_EXHDR(queue);
	int			level = GetCurrentTransactionNestLevel();
	CountDelta *d;

	if (last_delta >= 0 && last_delta < ndeltas)
	{
		d = &deltas[last_delta];
		if (d->level == level && memcmp(d->key.queue, name, len) == 0 &&
			(len == JOBQ_QUEUE_NAME_MAX || d->key.queue[len] == '\0'))
			return d;
	}
	for (int i = 0; i < ndeltas; i++)
	{
		d = &deltas[i];
		if (d->level == level && memcmp(d->key.queue, name, len) == 0 &&
			(len == JOBQ_QUEUE_NAME_MAX || d->key.queue[len] == '\0'))
		{
			last_delta = i;
			return d;
		}
	}
	if (ndeltas == deltas_cap)
		deltas = jobq_xact_array_grow(deltas, &deltas_cap, sizeof(CountDelta));
	d = &deltas[ndeltas];
	memset(d, 0, sizeof(*d));
	make_key(&d->key, name, len);
	d->hash = hash_bytes((const unsigned char *) &d->key, sizeof(d->key));
	d->level = level;
	last_delta = ndeltas++;
	return d;
}

/*
 * entry_for
 *	  The shared entry of key, made (not exact) when missing; NULL when
 *	  the table is full.  Under the counters lock, exclusively.
 */
static JobqCountsEntry *
entry_for(const JobqCountsKey *key, uint32 hash)
{
	bool		found;
	JobqCountsEntry *e;

	e = hash_search_with_hash_value(entries, key, hash, HASH_ENTER_NULL, &found);
	if (e != NULL && !found)
	{
		memset((char *) e + sizeof(JobqCountsKey), 0,
			   sizeof(JobqCountsEntry) - sizeof(JobqCountsKey));
		e->incarnation = counters->next_incarnation++;
	}
	return e;
}

/*
 * live_only
 *	  Add metric counts of queue to the live ring at once (stale acks:
 *	  refused whatever the transaction does next).
 */
static void
live_only(text *queue, const int64 *metric)
{
	JobqCountsKey key;
	JobqCountsEntry *e;
	static const int32 none[JOBQ_HIST_BUCKETS];

	make_key(&key, VARDATA_ANY(queue), VARSIZE_ANY_EXHDR(queue));
	LWLockAcquire(counters->lock, LW_EXCLUSIVE);
	e = entry_for(&key, hash_bytes((const unsigned char *) &key, sizeof(key)));
	if (e != NULL)
		jobq_live_add(e, GetCurrentTimestamp() / USECS_PER_SEC, metric, none, none);
	LWLockRelease(counters->lock);
}

/*
 * jobq_count_event
 *	  See jobq_count (counters.h).
 */
void
jobq_count_event(text *queue, JobqCountEvent event, int64 n)
{
	const EventEffect *effect = &event_effects[event];
	CountDelta *d;

	/* events of no transaction's outcome: counted when they happen */
	if (event == JOBQ_EV_STALE_ACK || event == JOBQ_EV_LIMIT_SATURATED ||
		event == JOBQ_EV_RATE_LIMITED)
	{
		int64		metric[JOBQ_METRICS] = {0};

		for (int i = 0; i < JOBQ_METRICS; i++)
			metric[i] = effect->metric[i] * n;
		live_only(queue, metric);
		return;
	}
	d = find_delta(queue);
	for (int i = 0; i < JOBQ_COUNT_STATES; i++)
		d->state[i] += effect->state[i] * n;
	for (int i = 0; i < JOBQ_METRICS; i++)
		d->metric[i] += effect->metric[i] * n;
}

/*
 * jobq_count_latency
 *	  Count one wait (ready to first claim) or run (claim to finish) of a
 *	  job of queue, from from to to, in the histograms of this
 *	  transaction's commit.
 */
void
jobq_count_latency(text *queue, bool wait, TimestampTz from, TimestampTz to)
{
	CountDelta *d;
	int			b;

	if (!jobq_counting)
		return;
	d = find_delta(queue);
	b = jobq_hist_bucket(to - from);
	if (wait)
		d->wait[b]++;
	else
		d->run[b]++;
}

/*
 * count_rows
 *	  Count each row of the last SPI result as one event of the queue in
 *	  its column queue_col: event, or with kept_col > 0 and a false (or
 *	  NULL) bool in that column, event_not_kept.  With claimed_col > 0,
 *	  also the attempt's run, from the claimed_at in that column to now
 *	  (NULL: not counted).
 */
static void
count_rows(JobqCountEvent event, JobqCountEvent event_not_kept, int queue_col,
		   int claimed_col, int kept_col, TimestampTz now)
{
	TupleDesc	desc = SPI_tuptable->tupdesc;

	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	row = SPI_tuptable->vals[i];
		bool		isnull;
		Datum		q = SPI_getbinval(row, desc, queue_col, &isnull);
		text	   *queue;
		JobqCountEvent ev = event;

		if (isnull)
			continue;
		queue = DatumGetTextPP(q);
		if (kept_col > 0 &&
			!(DatumGetBool(SPI_getbinval(row, desc, kept_col, &isnull)) && !isnull))
			ev = event_not_kept;
		jobq_count_event(queue, ev, 1);
		if (claimed_col > 0)
		{
			Datum		at = SPI_getbinval(row, desc, claimed_col, &isnull);

			if (!isnull)
				jobq_count_latency(queue, false, DatumGetTimestampTz(at), now);
		}
	}
}

/*
 * jobq_count_rows
 *	  Count each row of the last SPI result as event (see count_rows).
 */
void
jobq_count_rows(JobqCountEvent event, int queue_col, int claimed_col, TimestampTz now)
{
	if (jobq_counting)
		count_rows(event, event, queue_col, claimed_col, 0, now);
}

/*
 * jobq_count_completed_rows
 *	  jobq_count_rows for completed jobs: COMPLETED when the bool in
 *	  kept_col is true (the job went to history), COMPLETED_GONE if not.
 */
void
jobq_count_completed_rows(int queue_col, int claimed_col, int kept_col, TimestampTz now)
{
	if (jobq_counting)
		count_rows(JOBQ_EV_COMPLETED, JOBQ_EV_COMPLETED_GONE, queue_col, claimed_col,
				   kept_col, now);
}

/*
 * array_col
 *	  The elements of the array in column col of the first row of the
 *	  last SPI result (text[] or bigint[]); 0 when it is NULL.
 */
static int
array_col(int col, Oid type, Datum **items)
{
	bool		isnull;
	Datum		d;
	int			n;

	if (SPI_processed == 0)
		return 0;
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, col, &isnull);
	if (isnull)
		return 0;
	if (type == INT8OID)
		deconstruct_array(DatumGetArrayTypeP(d), INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
						  items, NULL, &n);
	else
		deconstruct_array(DatumGetArrayTypeP(d), TEXTOID, -1, false, TYPALIGN_INT,
						  items, NULL, &n);
	return n;
}

/*
 * jobq_count_arrays
 *	  Count event for the queues (text[]) and counts (bigint[]) in two
 *	  columns of the first row of the last SPI result.
 */
void
jobq_count_arrays(JobqCountEvent event, int queues_col, int counts_col)
{
	Datum	   *queues;
	Datum	   *counts;
	int			nq,
				nc;

	if (!jobq_counting)
		return;
	nq = array_col(queues_col, TEXTOID, &queues);
	nc = array_col(counts_col, INT8OID, &counts);
	for (int i = 0; i < nq && i < nc; i++)
		jobq_count_event(DatumGetTextPP(queues[i]), event, DatumGetInt64(counts[i]));
}

/*
 * jobq_count_purged
 *	  Count deleted history from parallel arrays of queues, states (text)
 *	  and counts (JOBQ_FINISHED_COUNTS_SQL).
 */
void
jobq_count_purged(int queues_col, int states_col, int counts_col)
{
	Datum	   *queues;
	Datum	   *states;
	Datum	   *counts;
	int			n;

	if (!jobq_counting)
		return;
	n = array_col(queues_col, TEXTOID, &queues);
	if (array_col(states_col, TEXTOID, &states) != n || array_col(counts_col, INT8OID, &counts) != n)
		elog(ERROR, "jobq: purge counts of different lengths");
	for (int i = 0; i < n; i++)
	{
		char	   *state = TextDatumGetCString(states[i]);
		JobqCountEvent event = strcmp(state, "completed") == 0 ? JOBQ_EV_PURGED_COMPLETED :
			strcmp(state, "dead") == 0 ? JOBQ_EV_PURGED_DEAD : JOBQ_EV_PURGED_CANCELLED;

		jobq_count_event(DatumGetTextPP(queues[i]), event, DatumGetInt64(counts[i]));
	}
}

/*
 * jobq_count_claim_row
 *	  See jobq_count_claim.  wait = claimed_at - greatest(run_at,
 *	  enqueued_at), on a job's first attempt only.
 */
void
jobq_count_claim_row(Datum queue, Datum attempt, Datum enqueued_at, Datum run_at,
					 Datum claimed_at)
{
	text	   *q = DatumGetTextPP(queue);

	jobq_count_event(q, JOBQ_EV_CLAIMED, 1);
	if (DatumGetInt32(attempt) == 1)
		jobq_count_latency(q, true,
						   Max(DatumGetTimestampTz(run_at), DatumGetTimestampTz(enqueued_at)),
						   DatumGetTimestampTz(claimed_at));
}

/*
 * take_gates / release_gates
 *	  The gate locks of this transaction's queues, shared, in order.
 */
static void
take_gates(void)
{
	uint32		want = 0;

	for (int i = 0; i < ndeltas; i++)
		want |= 1U << (deltas[i].hash % COUNT_GATES);
	for (int i = 0; i < COUNT_GATES; i++)
		if (want & (1U << i))
		{
			LWLockAcquire(counters->gates[i], LW_SHARED);
			gates_held |= 1U << i;
		}
}

static void
release_gates(void)
{
	for (int i = 0; i < COUNT_GATES; i++)
		if (gates_held & (1U << i))
			LWLockRelease(counters->gates[i]);
	gates_held = 0;
}

/*
 * apply_deltas
 *	  Add this transaction's deltas to the shared entries, and its events
 *	  to the live metrics of this second.  At commit: nothing may fail.
 */
static void
apply_deltas(void)
{
	int64		second = GetCurrentTimestamp() / USECS_PER_SEC;

	LWLockAcquire(counters->lock, LW_EXCLUSIVE);
	for (int i = 0; i < ndeltas; i++)
	{
		CountDelta *d = &deltas[i];
		JobqCountsEntry *e = entry_for(&d->key, d->hash);

		if (e == NULL)
			continue;			/* full: the queue is counted from the tables */
		for (int s = 0; s < JOBQ_COUNT_STATES; s++)
			e->state[s] += d->state[s];
		jobq_live_add(e, second, d->metric, d->wait, d->run);
	}
	LWLockRelease(counters->lock);
}

/*
 * mark_prepared
 *	  A transaction with deltas is being prepared: its queues' counts are
 *	  not exact until a rebuild after it ends.
 */
static void
mark_prepared(void)
{
	LWLockAcquire(counters->lock, LW_EXCLUSIVE);
	for (int i = 0; i < ndeltas; i++)
	{
		JobqCountsEntry *e = entry_for(&deltas[i].key, deltas[i].hash);

		if (e != NULL)
		{
			e->exact = false;
			e->prepare_marks++;
		}
	}
	LWLockRelease(counters->lock);
}

static void
forget_deltas(void)
{
	/* the array lived in TopTransactionContext, gone with it */
	deltas = NULL;
	ndeltas = 0;
	deltas_cap = 0;
	last_delta = -1;
}

/*
 * counters_xact_callback
 *	  Gates before the commit is visible, deltas after it; a prepare marks
 *	  the queues; an abort forgets (its LWLocks are released already).
 */
static void
counters_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
			if (ndeltas > 0)
				take_gates();
			break;
		case XACT_EVENT_COMMIT:
			if (ndeltas > 0)
				apply_deltas();
			release_gates();
			forget_deltas();
			break;
		case XACT_EVENT_PRE_PREPARE:
			if (ndeltas > 0)
				mark_prepared();
			break;
		case XACT_EVENT_PREPARE:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			gates_held = 0;		/* AbortTransaction released every LWLock */
			forget_deltas();
			break;
		default:
			break;
	}
}

/*
 * merge_delta
 *	  Add from into into.
 */
static void
merge_delta(CountDelta *into, const CountDelta *from)
{
	for (int s = 0; s < JOBQ_COUNT_STATES; s++)
		into->state[s] += from->state[s];
	for (int m = 0; m < JOBQ_METRICS; m++)
		into->metric[m] += from->metric[m];
	for (int b = 0; b < JOBQ_HIST_BUCKETS; b++)
	{
		into->wait[b] += from->wait[b];
		into->run[b] += from->run[b];
	}
}

/*
 * counters_subxact_callback
 *	  A rolled-back subtransaction drops its deltas; a committed one folds
 *	  them into its parent's.
 */
static void
counters_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						  SubTransactionId parentSubid, void *arg)
{
	int			level;
	int			kept = 0;

	if (ndeltas == 0 ||
		(event != SUBXACT_EVENT_ABORT_SUB && event != SUBXACT_EVENT_COMMIT_SUB))
		return;
	level = GetCurrentTransactionNestLevel();
	for (int i = 0; i < ndeltas; i++)
	{
		CountDelta *d = &deltas[i];
		bool		merged = false;

		if (d->level >= level)
		{
			if (event == SUBXACT_EVENT_ABORT_SUB)
				continue;
			for (int k = 0; k < kept && !merged; k++)
				if (deltas[k].level == level - 1 &&
					memcmp(&deltas[k].key, &d->key, sizeof(d->key)) == 0)
				{
					merge_delta(&deltas[k], d);
					merged = true;
				}
			if (merged)
				continue;
			d->level = level - 1;
		}
		deltas[kept++] = *d;
	}
	ndeltas = kept;
	last_delta = -1;
}

/*
 * jobq_counters_register_callbacks
 *	  From _PG_init, when preloading.
 */
void
jobq_counters_register_callbacks(void)
{
	RegisterXactCallback(counters_xact_callback, NULL);
	RegisterSubXactCallback(counters_subxact_callback, NULL);
}

/*
 * jobq_counters_read
 *	  A copy of queue's entry: found, exact (and of which life of the
 *	  queue), the counts.
 */
void
jobq_counters_read(text *queue, JobqCountsSnapshot *out)
{
	JobqCountsKey key;
	JobqCountsEntry *e;

	memset(out, 0, sizeof(*out));
	if (!jobq_counting)
		return;
	make_key(&key, VARDATA_ANY(queue), VARSIZE_ANY_EXHDR(queue));
	LWLockAcquire(counters->lock, LW_SHARED);
	e = hash_search(entries, &key, HASH_FIND, NULL);
	if (e != NULL)
	{
		out->found = true;
		out->exact = e->exact;
		memcpy(out->state, e->state, sizeof(out->state));
		out->queue_created = e->queue_created;
	}
	LWLockRelease(counters->lock);
}

/*
 * jobq_counters_due
 *	  Whether the sweeper should rebuild queue's counts now: never rebuilt
 *	  or missing (at most every RETRY_INEXACT_SECS while not exact), or
 *	  rebuilt longer than the reconcile interval ago.
 */
bool
jobq_counters_due(text *queue, TimestampTz now)
{
	JobqCountsKey key;
	JobqCountsEntry *e;
	bool		due = true;

	if (!jobq_counting)
		return false;
	make_key(&key, VARDATA_ANY(queue), VARSIZE_ANY_EXHDR(queue));
	LWLockAcquire(counters->lock, LW_SHARED);
	e = hash_search(entries, &key, HASH_FIND, NULL);
	if (e != NULL)
	{
		if (!e->exact)
			due = now - e->attempted_at >= RETRY_INEXACT_SECS * USECS_PER_SEC;
		else
			due = jobq_counts_reconcile_interval_s > 0 &&
				now - e->reconciled_at >=
				(int64) jobq_counts_reconcile_interval_s * USECS_PER_SEC;
	}
	LWLockRelease(counters->lock);
	return due;
}

static int
cstring_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/*
 * jobq_counters_forget_missing
 *	  Remove the entries of this database whose queue is not one of the n
 *	  names (the queues that exist): the entries of dropped queues, which
 *	  would otherwise hold their slots until the server stops.  An entry
 *	  made meanwhile by a queue created since the names were read goes too;
 *	  it only reads as not exact until it is rebuilt.  Returns how many.
 */
int
jobq_counters_forget_missing(char **names, int n)
{
	HASH_SEQ_STATUS scan;
	JobqCountsEntry *e;
	int			removed = 0;

	if (!jobq_counting)
		return 0;
	qsort(names, n, sizeof(char *), cstring_cmp);
	LWLockAcquire(counters->lock, LW_EXCLUSIVE);
	hash_seq_init(&scan, entries);
	while ((e = hash_seq_search(&scan)) != NULL)
	{
		const char *name = e->key.queue;

		if (e->key.dboid != MyDatabaseId ||
			bsearch(&name, names, n, sizeof(char *), cstring_cmp) != NULL)
			continue;
		/* NB: dynahash allows removing the entry just returned by the scan */
		hash_search(entries, &e->key, HASH_REMOVE, NULL);
		removed++;
	}
	LWLockRelease(counters->lock);
	return removed;
}

/*
 * The statements of a rebuild.  recount: $1 queue; the queue's created_at
 * (NULL: no such queue) and its jobs by counted state, exactly: the live
 * ones from jobq.jobs (small), the finished ones by index-only scans of
 * history_queue_state_idx.
 */
enum
{
	ST_RECOUNT,
	ST_ANY_PREPARED,
	NUM_STATEMENTS
};

#define COUNT_LIVE_SQL(STATE) \
	"(SELECT count(*) FROM jobq.jobs j WHERE j.queue = $1 AND j.state = '" STATE "')"
#define COUNT_HISTORY_SQL(STATE) \
	"(SELECT count(*) FROM jobq.history h WHERE h.queue = $1 AND h.state = '" STATE "')"

static const JobqStatement statements[NUM_STATEMENTS] = {
	[ST_RECOUNT] = {"counts_recount",
		"SELECT (SELECT q.created_at FROM jobq.queues q WHERE q.name = $1), "
		COUNT_LIVE_SQL("ready") ", " COUNT_LIVE_SQL("running") ", "
		COUNT_HISTORY_SQL("completed") ", " COUNT_HISTORY_SQL("dead") ", "
		COUNT_HISTORY_SQL("cancelled") ", "
		/* by text: 0.1.0's SQL has no such state, and no such job */
		"(SELECT count(*) FROM jobq.jobs j WHERE j.queue = $1 AND j.state::text = 'waiting')",
		1, {TEXTOID}},
	[ST_ANY_PREPARED] = {"counts_any_prepared",
		"SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_prepared_xacts p"
		" WHERE p.database OPERATOR(pg_catalog.=) pg_catalog.current_database())",
		0, {InvalidOid}},
};

static SPIPlanPtr plans[NUM_STATEMENTS];

const JobqStatements jobq_counters_statements = {statements, NUM_STATEMENTS, plans, NULL};

/*
 * has_own_deltas
 *	  Whether this transaction changed queue's jobs: a rebuild would see
 *	  them and its commit add them again.
 */
static bool
has_own_deltas(const JobqCountsKey *key)
{
	for (int i = 0; i < ndeltas; i++)
		if (memcmp(&deltas[i].key, key, sizeof(*key)) == 0)
			return true;
	return false;
}

/*
 * jobq_counters_reconcile
 *	  Rebuild queue's counts from the tables (see the header for why this
 *	  is exact).  drift[] gets what was added to each count; *was_exact
 *	  whether the counts were exact before (a drift then means the tables
 *	  were changed without jobq).  Inside SPI, in a transaction that has
 *	  not changed the queue's jobs.
 */
JobqReconcileResult
jobq_counters_reconcile(text *queue, int64 *drift, bool *was_exact)
{
	JobqCountsKey key;
	uint32		hash;
	JobqCountsEntry *e;
	int			gate;
	Snapshot	snap;
	int64		before[JOBQ_COUNT_STATES];
	uint32		incarnation;
	uint64		marks;
	bool		prepared;
	bool		isnull;
	Datum		created;
	int			rc;
	JobqReconcileResult result;

	memset(drift, 0, sizeof(int64) * JOBQ_COUNT_STATES);
	*was_exact = false;
	if (!jobq_counting)
		return JOBQ_RECONCILE_UNTRACKED;
	make_key(&key, VARDATA_ANY(queue), VARSIZE_ANY_EXHDR(queue));
	if (has_own_deltas(&key))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot reconcile the counts of queue \"%s\" in a transaction that changed its jobs",
						text_to_cstring(queue)),
				 errhint("Reconcile in a transaction of its own.")));
	hash = hash_bytes((const unsigned char *) &key, sizeof(key));
	gate = hash % COUNT_GATES;

	/* the PREPAREs seen so far, then whether any is still pending */
	LWLockAcquire(counters->lock, LW_EXCLUSIVE);
	e = entry_for(&key, hash);
	if (e == NULL)
	{
		LWLockRelease(counters->lock);
		return JOBQ_RECONCILE_UNTRACKED;
	}
	marks = e->prepare_marks;
	e->attempted_at = GetCurrentTimestamp();
	LWLockRelease(counters->lock);
	rc = SPI_execute_plan(jobq_plan(&jobq_counters_statements, ST_ANY_PREPARED),
						  NULL, NULL, true, 1);
	jobq_spi_check(rc, SPI_OK_SELECT, "find prepared transactions");
	prepared = jobq_spi_getbool(0, 1, &isnull);

	/* S and C0 between commits of the queue */
	for (int tries = 0; !LWLockConditionalAcquire(counters->gates[gate], LW_EXCLUSIVE); tries++)
	{
		if (tries >= GATE_TRIES)
			return JOBQ_RECONCILE_BUSY;
		CHECK_FOR_INTERRUPTS();
		pg_usleep(1000L);
	}
	snap = RegisterSnapshot(GetLatestSnapshot());
	LWLockAcquire(counters->lock, LW_SHARED);
	e = hash_search_with_hash_value(entries, &key, hash, HASH_FIND, NULL);
	incarnation = e ? e->incarnation : 0;
	if (e != NULL)
		memcpy(before, e->state, sizeof(before));
	LWLockRelease(counters->lock);
	LWLockRelease(counters->gates[gate]);
	if (e == NULL)
	{
		UnregisterSnapshot(snap);
		return JOBQ_RECONCILE_UNTRACKED;
	}

	/* R under S, however long it takes */
	{
		Datum		arg = PointerGetDatum(queue);

		rc = SPI_execute_snapshot(jobq_plan(&jobq_counters_statements, ST_RECOUNT),
								  &arg, NULL, snap, InvalidSnapshot, true, false, 1);
	}
	UnregisterSnapshot(snap);
	jobq_spi_check(rc, SPI_OK_SELECT, "recount jobs");
	created = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

	LWLockAcquire(counters->lock, LW_EXCLUSIVE);
	e = hash_search_with_hash_value(entries, &key, hash, HASH_FIND, NULL);
	if (e == NULL || e->incarnation != incarnation)
		result = JOBQ_RECONCILE_BUSY;	/* made again meanwhile: next time */
	else if (isnull)
	{
		hash_search_with_hash_value(entries, &key, hash, HASH_REMOVE, NULL);
		result = JOBQ_RECONCILE_GONE;
	}
	else
	{
		bool		exact_now = !prepared && e->prepare_marks == marks;

		*was_exact = e->exact && e->queue_created == DatumGetTimestampTz(created);
		for (int s = 0; s < JOBQ_COUNT_STATES; s++)
		{
			bool		n;

			drift[s] = jobq_spi_getint64(0, 2 + s, &n) - before[s];
			e->state[s] += drift[s];
		}
		e->queue_created = DatumGetTimestampTz(created);
		e->exact = exact_now;
		e->reconciled = true;
		e->reconciled_at = GetCurrentTimestamp();
		result = exact_now ? JOBQ_RECONCILE_EXACT : JOBQ_RECONCILE_INEXACT;
	}
	LWLockRelease(counters->lock);
	return result;
}
