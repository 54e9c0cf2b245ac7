/*-------------------------------------------------------------------------
 *
 * live_metrics.c
 *	  The live time series: per queue, one bucket per second of the
 *	  metric counters (JOBQ_METRIC_COUNTERS) and the wait and run
 *	  histograms (JOBQ_HIST_EDGES_MS), for the last ten minutes, in shared
 *	  memory; jobq._metrics_live reads them.
 *
 * The buckets of all queues share one ring, JOBQ_LIVE_BUCKETS long, in
 * the order they were started: a queue takes a new bucket at the first
 * event of each second it is active in, so the ring holds ten minutes of
 * 32 queues active every second, or more queues less often busy.  A
 * bucket is valid while its sequence number is the one its position in
 * the ring was last given, and its queue's entry is still the one it was
 * taken for (incarnation).  Everything is under the counters lock
 * (counters.c): commits add exclusively, readers copy shared.
 *
 * Events count in the second their transaction commits (counters.c),
 * except stale acks, which count when they are refused.  Without preload
 * there is no ring and jobq._metrics_live returns no row; the stored
 * metrics (jobq_metrics) go on from what was flushed.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/live_metrics.c
 *
 *-------------------------------------------------------------------------
 */
#include "counters.h"

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "storage/lwlock.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(jobq_metrics_live);

/* The histogram's upper edges, in microseconds */
#define EDGE_USECS(ms) INT64CONST(ms) * 1000,
static const int64 hist_edges[] = {JOBQ_HIST_EDGES_MS(EDGE_USECS)};

StaticAssertDecl(lengthof(hist_edges) == JOBQ_HIST_BUCKETS - 1,
				 "JOBQ_HIST_EDGES_MS must give one edge fewer than JOBQ_HIST_BUCKETS");

typedef struct LiveBucket
{
	uint64		seq;			/* 0: never used */
	JobqCountsEntry *entry;		/* shared memory is at one address in every backend */
	uint32		incarnation;
	int64		second;			/* seconds since the PostgreSQL epoch */
	uint32		metric[JOBQ_METRICS];
	uint32		wait[JOBQ_HIST_BUCKETS];
	uint32		run[JOBQ_HIST_BUCKETS];
} LiveBucket;

typedef struct LiveRing
{
	uint64		next_seq;		/* the last given; positions are seq % JOBQ_LIVE_BUCKETS */
	LiveBucket	buckets[FLEXIBLE_ARRAY_MEMBER];
} LiveRing;

static LiveRing *ring = NULL;

Size
jobq_live_shmem_size(void)
{
	return add_size(offsetof(LiveRing, buckets),
					mul_size(JOBQ_LIVE_BUCKETS, sizeof(LiveBucket)));
}

/*
 * jobq_live_shmem_init
 *	  place: jobq_live_shmem_size() bytes of shared memory, new.
 */
void
jobq_live_shmem_init(void *place)
{
	ring = place;
	memset(ring, 0, jobq_live_shmem_size());
}

/*
 * jobq_hist_bucket
 *	  The histogram bucket of a duration of usecs (negative: 0).
 */
int
jobq_hist_bucket(int64 usecs)
{
	int			b = 0;

	while (b < lengthof(hist_edges) && usecs >= hist_edges[b])
		b++;
	return b;
}

static inline bool
bucket_valid(const LiveBucket *b)
{
	return b->seq != 0 && b->entry->incarnation == b->incarnation;
}

/*
 * add_u32
 *	  Saturating: a bucket of one second never holds 4 billion events, but
 *	  must not wrap if it did.
 */
static inline uint32
add_u32(uint32 a, int64 b)
{
	int64		s = (int64) a + b;

	return s < 0 ? 0 : s > PG_UINT32_MAX ? PG_UINT32_MAX : (uint32) s;
}

/*
 * jobq_live_add
 *	  Add metric counts and histogram samples to entry's bucket of second.
 *	  Under the counters lock, exclusively (counters.c).
 */
void
jobq_live_add(JobqCountsEntry *entry, int64 second, const int64 *metric,
			  const int32 *wait, const int32 *run)
{
	LiveBucket *b = NULL;
	bool		any = false;

	if (ring == NULL)
		return;
	for (int i = 0; i < JOBQ_METRICS && !any; i++)
		any = metric[i] != 0;
	for (int i = 0; i < JOBQ_HIST_BUCKETS && !any; i++)
		any = wait[i] != 0 || run[i] != 0;
	if (!any)
		return;
	if (entry->live_seq != 0)
	{
		b = &ring->buckets[entry->live_seq % JOBQ_LIVE_BUCKETS];
		if (b->seq != entry->live_seq || b->second != second)
			b = NULL;
	}
	if (b == NULL)
	{
		uint64		seq = ++ring->next_seq;

		b = &ring->buckets[seq % JOBQ_LIVE_BUCKETS];
		memset(b, 0, sizeof(*b));
		b->seq = seq;
		b->entry = entry;
		b->incarnation = entry->incarnation;
		b->second = second;
		entry->live_seq = seq;
	}
	for (int i = 0; i < JOBQ_METRICS; i++)
		b->metric[i] = add_u32(b->metric[i], metric[i]);
	for (int i = 0; i < JOBQ_HIST_BUCKETS; i++)
	{
		b->wait[i] = add_u32(b->wait[i], wait[i]);
		b->run[i] = add_u32(b->run[i], run[i]);
	}
}

/* A bucket copied out for a reader, with its queue's name */
typedef struct LiveCopy
{
	char		queue[JOBQ_QUEUE_NAME_MAX + 1];
	int64		second;
	uint32		metric[JOBQ_METRICS];
	uint32		wait[JOBQ_HIST_BUCKETS];
	uint32		run[JOBQ_HIST_BUCKETS];
} LiveCopy;

static int
live_copy_cmp(const void *a, const void *b)
{
	const LiveCopy *x = a;
	const LiveCopy *y = b;
	int			c = strcmp(x->queue, y->queue);

	if (c != 0)
		return c;
	return (x->second > y->second) - (x->second < y->second);
}

/*
 * jobq._metrics_live(queue text DEFAULT NULL) -> setof (queue text,
 *		second timestamptz, counters bigint[], wait_hist integer[],
 *		run_hist integer[])
 *	  The live buckets of this database's queues (or of one), of the last
 *	  JOBQ_LIVE_SECONDS seconds, each second that had an event, ordered by
 *	  queue and second.  Internal: the stored metrics (jobq_metrics) read
 *	  it; no role but the owner may call it.
 */
Datum
jobq_metrics_live(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	Tuplestorestate *store;
	text	   *only = PG_ARGISNULL(0) ? NULL : jobq_queue_arg(fcinfo, 0);
	int64		oldest = GetCurrentTimestamp() / USECS_PER_SEC - JOBQ_LIVE_SECONDS;
	LiveCopy   *copies;
	int			ncopies = 0;

	store = jobq_srf_begin(fcinfo, &desc);
	if (ring == NULL)
		return (Datum) 0;

	/* copy under the lock, build rows without it */
	copies = palloc(sizeof(LiveCopy) * JOBQ_LIVE_BUCKETS);
	jobq_counters_lock(LW_SHARED);
	for (int i = 0; i < JOBQ_LIVE_BUCKETS; i++)
	{
		LiveBucket *b = &ring->buckets[i];
		LiveCopy   *c;

		if (!bucket_valid(b) || b->second <= oldest || b->entry->key.dboid != MyDatabaseId)
			continue;
		if (only != NULL &&
			(strlen(b->entry->key.queue) != VARSIZE_ANY_EXHDR(only) ||
			 memcmp(b->entry->key.queue, VARDATA_ANY(only), VARSIZE_ANY_EXHDR(only)) != 0))
			continue;
		c = &copies[ncopies++];
		memcpy(c->queue, b->entry->key.queue, sizeof(c->queue));
		c->second = b->second;
		memcpy(c->metric, b->metric, sizeof(c->metric));
		memcpy(c->wait, b->wait, sizeof(c->wait));
		memcpy(c->run, b->run, sizeof(c->run));
	}
	jobq_counters_unlock();
	qsort(copies, ncopies, sizeof(LiveCopy), live_copy_cmp);

	for (int i = 0; i < ncopies; i++)
	{
		LiveCopy   *c = &copies[i];
		Datum		values[5];
		bool		nulls[5] = {false, false, false, false, false};
		Datum		m[JOBQ_METRICS];
		Datum		w[JOBQ_HIST_BUCKETS];
		Datum		r[JOBQ_HIST_BUCKETS];

		for (int k = 0; k < JOBQ_METRICS; k++)
			m[k] = Int64GetDatum((int64) c->metric[k]);
		for (int k = 0; k < JOBQ_HIST_BUCKETS; k++)
		{
			w[k] = Int32GetDatum((int32) Min(c->wait[k], PG_INT32_MAX));
			r[k] = Int32GetDatum((int32) Min(c->run[k], PG_INT32_MAX));
		}
		values[0] = CStringGetTextDatum(c->queue);
		values[1] = TimestampTzGetDatum(c->second * USECS_PER_SEC);
		values[2] = PointerGetDatum(construct_array(m, JOBQ_METRICS, INT8OID, 8,
													FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
		values[3] = PointerGetDatum(construct_array(w, JOBQ_HIST_BUCKETS, INT4OID, 4,
													true, TYPALIGN_INT));
		values[4] = PointerGetDatum(construct_array(r, JOBQ_HIST_BUCKETS, INT4OID, 4,
													true, TYPALIGN_INT));
		tuplestore_putvalues(store, desc, values, nulls);
	}
	pfree(copies);
	return (Datum) 0;
}
