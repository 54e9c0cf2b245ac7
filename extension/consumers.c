/*-------------------------------------------------------------------------
 *
 * consumers.c
 *	  jobq_queue_consumers(): per queue, the live registered workers that
 *	  name it and their slots, next to its backlog, so that "jobs are due
 *	  and nobody will claim them" is one row (0.2.0).
 *
 * A worker names the queues it claims from when it registers (workers.c).
 * A queue is unserved when jobs are due now, it is not paused, and no live
 * registered worker that names it is asked to claim (state running): none
 * was started for it, every one died (not alive: past its dead_after, not
 * pruned yet, or pruned), or every one was quieted and left so (a deploy
 * that failed halfway).  jobq workers prints it, and jobq_health reports
 * it as a finding (check "consumers").
 *
 * Advisory, as the registry: a program that claims without registering is
 * not seen here, so an unserved queue may still be drained by such a
 * consumer (its running jobs say so).  The health check therefore stays
 * quiet while nobody registers at all.
 *
 * Cost: the counts of jobq_counts (counters in shared memory with preload;
 * otherwise exact counts of the live table, which is small by design) and
 * one pass over the registry, which has a row per worker process.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/consumers.c
 *
 *-------------------------------------------------------------------------
 */
#include "counters.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(jobq_queue_consumers);

enum
{
	ST_SUBSCRIBED,
	NUM_STATEMENTS
};

static const JobqStatement statements[NUM_STATEMENTS] = {
	/*
	 * $1 now.  Per queue named by a live worker: how many, how many are
	 * asked to claim (running), and their slots (a worker that did not say
	 * claims one job at a time).  The registry holds a row per process: a
	 * scan of it is the cheapest plan.
	 */
	[ST_SUBSCRIBED] = {"queue_consumers",
		"SELECT q.queue, count(*)::int4,"
		"  count(*) FILTER (WHERE w.state = 'running')::int4,"
		"  coalesce(sum(coalesce(w.slots, 1)) FILTER (WHERE w.state = 'running'), 0)::int8"
		" FROM jobq.workers w CROSS JOIN LATERAL pg_catalog.unnest(w.queues) AS q(queue)"
		" WHERE w.heartbeat_at + w.dead_after >= $1"
		" GROUP BY q.queue",
		1, {TIMESTAMPTZOID}},
};

static SPIPlanPtr plans[NUM_STATEMENTS];

const JobqStatements jobq_consumers_statements = {statements, NUM_STATEMENTS, plans, NULL};

/* One queue named by live workers (ST_SUBSCRIBED) */
typedef struct Subscribed
{
	const char *queue;
	int32		workers;
	int32		claiming;
	int64		slots;
} Subscribed;

static int
subscribed_cmp(const void *a, const void *b)
{
	return strcmp(((const Subscribed *) a)->queue, ((const Subscribed *) b)->queue);
}

/*
 * jobq_consumers_collect
 *	  The consumers of every queue the caller may inspect, in name order;
 *	  *n of them, and *registered: whether any live worker is registered at
 *	  all.  Inside SPI (what it returns lives in SPI's procedure context).
 */
JobqQueueConsumers *
jobq_consumers_collect(int *n, bool *registered)
{
	Datum		now = TimestampTzGetDatum(jobq_now());
	JobqQueueCounts *counts;
	JobqQueueConsumers *out;
	Subscribed *subs;
	uint64		nsubs;
	int			rc;

	rc = SPI_execute_plan(jobq_plan(&jobq_consumers_statements, ST_SUBSCRIBED), &now, NULL,
						  true, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "read queue consumers");
	nsubs = SPI_processed;
	subs = palloc0(sizeof(Subscribed) * Max(nsubs, 1));
	for (uint64 i = 0; i < nsubs; i++)
	{
		HeapTuple	row = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;

		subs[i].queue = TextDatumGetCString(SPI_getbinval(row, desc, 1, &isnull));
		subs[i].workers = DatumGetInt32(SPI_getbinval(row, desc, 2, &isnull));
		subs[i].claiming = DatumGetInt32(SPI_getbinval(row, desc, 3, &isnull));
		subs[i].slots = DatumGetInt64(SPI_getbinval(row, desc, 4, &isnull));
	}
	SPI_freetuptable(SPI_tuptable);
	qsort(subs, nsubs, sizeof(Subscribed), subscribed_cmp);
	*registered = nsubs > 0;

	counts = jobq_counts_collect(NULL, n);
	out = palloc0(sizeof(JobqQueueConsumers) * Max(*n, 1));
	for (int i = 0; i < *n; i++)
	{
		JobqQueueConsumers *c = &out[i];
		Subscribed	key;
		Subscribed *s;

		strlcpy(c->queue, counts[i].queue, sizeof(c->queue));
		c->paused = counts[i].paused;
		c->ready = counts[i].ready;
		c->running = counts[i].running;
		key.queue = c->queue;
		s = nsubs > 0 ? bsearch(&key, subs, nsubs, sizeof(Subscribed), subscribed_cmp) : NULL;
		if (s != NULL)
		{
			c->workers = s->workers;
			c->claiming = s->claiming;
			c->slots = s->slots;
		}
		c->unserved = c->ready > 0 && !c->paused && c->claiming == 0;
	}
	return out;
}

/*
 * jobq_queue_consumers() -> setof (queue, paused, ready, running, workers,
 *		claiming, slots, unserved)
 *	  Every queue the caller may inspect, by name: its jobs due now and
 *	  running, the live registered workers that name it (workers), those
 *	  of them asked to claim (claiming: not quiet nor stopping) and their
 *	  slots, and unserved: jobs are due, the queue is not paused, and no
 *	  live registered worker claims from it.
 */
Datum
jobq_queue_consumers(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	Tuplestorestate *store = jobq_srf_begin(fcinfo, &desc);
	JobqQueueConsumers *consumers;
	bool		registered;
	int			n;

	jobq_spi_connect();
	consumers = jobq_consumers_collect(&n, &registered);
	for (int i = 0; i < n; i++)
	{
		JobqQueueConsumers *c = &consumers[i];
		Datum		v[8];
		bool		nulls[8] = {false};

		v[0] = CStringGetTextDatum(c->queue);
		v[1] = BoolGetDatum(c->paused);
		v[2] = Int64GetDatum(c->ready);
		v[3] = Int64GetDatum(c->running);
		v[4] = Int32GetDatum(c->workers);
		v[5] = Int32GetDatum(c->claiming);
		v[6] = Int64GetDatum(c->slots);
		v[7] = BoolGetDatum(c->unserved);
		tuplestore_putvalues(store, desc, v, nulls);
	}
	jobq_spi_finish();
	return (Datum) 0;
}
