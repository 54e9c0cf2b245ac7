/*-------------------------------------------------------------------------
 *
 * counters.h
 *	  The commit-time counters of each queue and its live metrics ring:
 *	  what counters.c (the counters and their transactions), live_metrics.c
 *	  (the ring of one-second buckets) and counts.c (jobq_counts,
 *	  jobq_counts_reconcile) share.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/counters.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JOBQ_COUNTERS_H
#define JOBQ_COUNTERS_H

#include "jobq.h"

/*
 * The states counted exactly: ready and delayed together (pending; the
 * split changes with the clock, see counts.c), running, and the finished
 * states.
 */
typedef enum JobqCountState
{
	JOBQ_COUNT_PENDING,
	JOBQ_COUNT_RUNNING,
	JOBQ_COUNT_COMPLETED,
	JOBQ_COUNT_DEAD,
	JOBQ_COUNT_CANCELLED,
	JOBQ_COUNT_WAITING,			/* 0.2.0: waiting for dependencies */
	JOBQ_COUNT_STATES
} JobqCountState;

/* The metric counters of jobq-contract.h, as indexes */
#define JOBQ_METRIC_ENUM(name) JOBQ_METRIC_##name,
typedef enum JobqMetric
{
	JOBQ_METRIC_COUNTERS(JOBQ_METRIC_ENUM)
	JOBQ_METRICS
} JobqMetric;

/*
 * What happened to n jobs of a queue.  counters.c maps each event to its
 * state changes and metric counts (one table, event_effects).
 */
typedef enum JobqCountEvent
{
	JOBQ_EV_ENQUEUED,			/* new ready jobs */
	JOBQ_EV_CLAIMED,			/* ready -> running */
	JOBQ_EV_COMPLETED,			/* running -> completed (kept in history) */
	JOBQ_EV_COMPLETED_GONE,		/* running -> gone (no completed history) */
	JOBQ_EV_RETRIED,			/* a failed attempt: running -> ready */
	JOBQ_EV_FAILED_DEAD,		/* a failed attempt: running -> dead */
	JOBQ_EV_RELEASED,			/* running -> ready, the attempt given back */
	JOBQ_EV_EXPIRED_RETRIED,	/* lease expired: running -> ready */
	JOBQ_EV_EXPIRED_DEAD,		/* lease expired: running -> dead */
	JOBQ_EV_CANCELLED_READY,	/* ready -> cancelled */
	JOBQ_EV_CANCELLED_DEAD,		/* dead -> cancelled */
	JOBQ_EV_REDRIVEN,			/* dead -> ready (jobq_retry) */
	JOBQ_EV_PURGED_COMPLETED,	/* history deleted: retention or jobq_purge */
	JOBQ_EV_PURGED_DEAD,
	JOBQ_EV_PURGED_CANCELLED,
	JOBQ_EV_POPPED,				/* ready -> gone (jobq_pop) */
	JOBQ_EV_POPPED_KEPT,		/* ready -> completed (jobq_pop, history kept) */
	JOBQ_EV_STALE_ACK,			/* a refused ack: counted at once */
	/* flows (flows.c) */
	JOBQ_EV_ENQUEUED_WAITING,	/* new waiting jobs */
	JOBQ_EV_UNBLOCKED,			/* waiting -> ready */
	JOBQ_EV_CANCELLED_WAITING,	/* waiting -> cancelled */
	JOBQ_EV_REVIVED_WAITING,	/* cancelled -> waiting (retry with dependents) */
	/* groups and limits (claim_limits.c, group_claim.c): counted at once */
	JOBQ_EV_LIMIT_SATURATED,	/* a claim attempt max_running held back */
	JOBQ_EV_RATE_LIMITED,		/* a claim attempt a rate held back */
	JOBQ_COUNT_EVENTS
} JobqCountEvent;

/*
 * One (database, queue) in shared memory.  Everything but the key is
 * protected by the counters lock (counters.c).  incarnation tells a reused
 * slot apart in the ring's buckets; queue_created ties the counts to one
 * life of the queue (jobq.queues.created_at): a queue dropped and created
 * again reads as not exact until it is reconciled.
 */
typedef struct JobqCountsKey
{
	Oid			dboid;
	char		queue[JOBQ_QUEUE_NAME_MAX + 1];	/* NUL-padded: the key is hashed as bytes */
} JobqCountsKey;

typedef struct JobqCountsEntry
{
	JobqCountsKey key;
	uint32		incarnation;	/* unique per entry made */
	bool		exact;			/* counts equal the tables' */
	bool		reconciled;		/* ever rebuilt since the entry was made */
	int64		state[JOBQ_COUNT_STATES];
	TimestampTz queue_created;	/* the queue the counts are of */
	TimestampTz reconciled_at;	/* last rebuild, or 0 */
	TimestampTz attempted_at;	/* last rebuild tried, or 0 */
	uint64		prepare_marks;	/* PREPAREs that touched the queue */
	uint64		live_seq;		/* ring position of the newest bucket, 0: none */
} JobqCountsEntry;

/* counters.c */
#define JOBQ_COUNTERS_TRANCHE	"jobq counters"
extern int	jobq_max_tracked_queues;
extern int	jobq_counts_reconcile_interval_s;

extern Size jobq_counters_shmem_size(void);
extern void jobq_counters_shmem_init(void);
extern void jobq_counters_register_callbacks(void);
extern bool jobq_counters_available(void);
extern int	jobq_counters_lwlocks(void);
extern void jobq_counters_lock(int mode);
extern void jobq_counters_unlock(void);

extern void jobq_count_event(text *queue, JobqCountEvent event, int64 n);
extern void jobq_count_latency(text *queue, bool wait, TimestampTz from, TimestampTz to);

/*
 * jobq_count
 *	  Count n jobs of queue as event, for this transaction (its commit
 *	  applies it).  Costs one test without preload.
 */
static inline void
jobq_count(text *queue, JobqCountEvent event, int64 n)
{
	extern bool jobq_counting;

	if (jobq_counting && n > 0)
		jobq_count_event(queue, event, n);
}

extern void jobq_count_rows(JobqCountEvent event, int queue_col, int claimed_col,
							TimestampTz now);
extern void jobq_count_completed_rows(int queue_col, int claimed_col, int kept_col,
									  TimestampTz now);
extern void jobq_count_arrays(JobqCountEvent event, int queues_col, int counts_col);
extern void jobq_count_purged(int queues_col, int states_col, int counts_col);
extern void jobq_count_claim_row(Datum queue, Datum attempt, Datum enqueued_at,
								 Datum run_at, Datum claimed_at);

/*
 * jobq_count_claim
 *	  A job claimed: queue (text), attempt (int4) and the timestamps of its
 *	  claim row.  The wait of a first attempt goes into the histogram.
 */
static inline void
jobq_count_claim(Datum queue, Datum attempt, Datum enqueued_at, Datum run_at,
				 Datum claimed_at)
{
	extern bool jobq_counting;

	if (jobq_counting)
		jobq_count_claim_row(queue, attempt, enqueued_at, run_at, claimed_at);
}

/* What a reader or the reconcile copies out of an entry */
typedef struct JobqCountsSnapshot
{
	bool		found;
	bool		exact;
	int64		state[JOBQ_COUNT_STATES];
	TimestampTz queue_created;
} JobqCountsSnapshot;

extern void jobq_counters_read(text *queue, JobqCountsSnapshot *out);

/* The result of rebuilding a queue's counters */
typedef enum JobqReconcileResult
{
	JOBQ_RECONCILE_EXACT,		/* counts equal the tables' now */
	JOBQ_RECONCILE_INEXACT,		/* rebuilt, but a prepared transaction may change them */
	JOBQ_RECONCILE_GONE,		/* the queue does not exist: entry removed */
	JOBQ_RECONCILE_UNTRACKED,	/* shared memory is full or not there */
	JOBQ_RECONCILE_BUSY			/* commits kept the queue busy: try later */
} JobqReconcileResult;

extern JobqReconcileResult jobq_counters_reconcile(text *queue, int64 *drift, bool *was_exact);
extern bool jobq_counters_due(text *queue, TimestampTz now);
extern int	jobq_counters_forget_missing(char **names, int n);

/* counts.c: the counts of one queue, as jobq_counts and jobq_stats show them */
typedef struct JobqQueueCounts
{
	char		queue[JOBQ_QUEUE_NAME_MAX + 1];
	bool		paused;
	int64		ready;
	int64		delayed;
	int64		running;
	int64		expired;
	int64		completed;
	int64		dead;
	int64		cancelled;
	int64		waiting;
	bool		has_oldest;		/* a ready job is due */
	int64		oldest_usecs;	/* how long the oldest has been due */
	bool		exact;
	TimestampTz as_of;
} JobqQueueCounts;

extern JobqQueueCounts *jobq_counts_collect(text *queue, int *n);
extern Interval *jobq_counts_age(const JobqQueueCounts *c);

/* consumers.c: the live registered workers of one queue, next to its backlog */
typedef struct JobqQueueConsumers
{
	char		queue[JOBQ_QUEUE_NAME_MAX + 1];
	bool		paused;
	int64		ready;			/* due now */
	int64		running;
	int32		workers;		/* live registered workers naming it */
	int32		claiming;		/* of them, asked to claim (running) */
	int64		slots;			/* the slots of those claiming */
	bool		unserved;		/* due jobs, not paused, nobody claiming */
} JobqQueueConsumers;

extern JobqQueueConsumers *jobq_consumers_collect(int *n, bool *registered);

/* live_metrics.c */
#define JOBQ_LIVE_SECONDS		600		/* ten minutes of one-second buckets */
#define JOBQ_LIVE_BUCKETS		(JOBQ_LIVE_SECONDS * 32)	/* queue-seconds kept */

extern Size jobq_live_shmem_size(void);
extern void jobq_live_shmem_init(void *place);
extern void jobq_live_add(JobqCountsEntry *entry, int64 second, const int64 *metric,
						  const int32 *wait, const int32 *run);
extern int	jobq_hist_bucket(int64 usecs);

#endif							/* JOBQ_COUNTERS_H */
