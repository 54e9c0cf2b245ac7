/*-------------------------------------------------------------------------
 *
 * groups.h
 *	  Groups of jobs: per-key FIFO and per-key concurrency limits (issue
 *	  19, doc/groups.md).
 *
 * A group is the set of live jobs of one queue that share a group_key.
 * Its row in jobq.groups says how many of them run, which ready job comes
 * next (the head: the lowest group_seq), whether a dead head blocks it,
 * and whether it is eligible: a claim may take its head.  groups.c keeps
 * the row true in the transaction of every change of a grouped job;
 * group_claim.c claims through the eligible rows.  Jobs without a
 * group_key never reach this code, and a database in which no queue
 * groups its jobs (jobq_any_grouped_queue, queue_cache.c) runs exactly
 * the statements of an ungrouped release.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/groups.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JOBQ_GROUPS_H
#define JOBQ_GROUPS_H

#include "jobq.h"

/*
 * JOBQ_GROUP_LINE_SQL: COLS of the ready jobs (alias x) of group KEY of
 * queue QUEUE, with the condition EXTRA, in group_seq order, through the
 * group's line (jobq.group_jobs, alias gl): a range of its primary key and
 * a probe of jobq.jobs per job.
 */
#define JOBQ_GROUP_LINE_SQL(COLS, QUEUE, KEY, EXTRA) \
	"SELECT " COLS " FROM jobq.group_jobs gl JOIN jobq.jobs x ON x.id = gl.id" \
	" WHERE gl.queue = " QUEUE " AND gl.key = " KEY " AND x.state = 'ready'" EXTRA \
	" ORDER BY gl.seq"

/*
 * JOBQ_GROUP_IDLE_SQL: the group row g has no reason left to exist (no job
 * in its line, none running, no dead head holding it, and a rate that no
 * longer holds anything back: with tat reached, a new row allows the same
 * burst), at NOW.  Asked of a locked row, with a snapshot taken after the
 * lock (doc/groups.md, "Idle groups").
 */
#define JOBQ_GROUP_IDLE_SQL(NOW) \
	"g.head_id IS NULL AND g.running = 0 AND g.blocked_by IS NULL" \
	" AND (g.tat IS NULL OR g.tat <= " NOW ")" \
	" AND NOT EXISTS (SELECT 1 FROM jobq.group_jobs gl" \
	"                 WHERE gl.queue = g.queue AND gl.key = g.key)"

/* A grouped job, as the release paths read it before they change it */
typedef struct JobqGroupedJob
{
	int64		id;
	text	   *queue;
	text	   *key;
	int64		seq;
} JobqGroupedJob;

/* How a change of a grouped job affects its group (jobq_group_changed) */
typedef enum JobqGroupChange
{
	JOBQ_GROUP_FINISHED,		/* a running job completed or left for good */
	JOBQ_GROUP_RETRYING,		/* a running job failed and will run again */
	JOBQ_GROUP_REQUEUED,		/* a running job is ready again in its place
								 * (release, lease expiry) */
	JOBQ_GROUP_DIED,			/* a running job went dead */
	JOBQ_GROUP_READY_GONE,		/* a ready job left (cancelled) */
	JOBQ_GROUP_DEAD_GONE,		/* a dead job was cancelled or retried */
} JobqGroupChange;

/* The statement tables (spi.c) */
extern const JobqStatements jobq_groups_statements;
extern const JobqStatements jobq_group_claim_statements;
extern const JobqStatements jobq_groups_admin_statements;

/* groups.c */
extern bool jobq_queue_grouped(const JobqQueueSettings *settings);
extern void jobq_check_group_key(text *key, const char *what);
extern void jobq_require_grouped(text *queue, const JobqQueueSettings *settings,
								 bool grouped_job);
extern int64 jobq_group_reserve(text *queue, text *key, int64 n, bool *has_head);
extern void jobq_group_enqueued(text *queue, text *key);
extern bool jobq_grouped_job(Datum id, Datum token, JobqGroupedJob *job);
extern int	jobq_grouped_jobs(Datum ids, JobqGroupedJob **jobs);
extern void jobq_group_changed(const JobqGroupedJob *job, JobqGroupChange change,
							   TimestampTz now);
extern void jobq_groups_changed(const JobqGroupedJob *jobs, const JobqGroupChange *changes,
								int n, TimestampTz now);
extern void jobq_groups_claimed(text *queue, const JobqQueueSettings *settings,
								text **keys, int32 *counts, int n, TimestampTz now);
extern void jobq_groups_unblock_gone(Datum ids);
extern void jobq_groups_redriven(JobqGroupedJob *jobs, int n);
extern void jobq_group_mode_changing(text *queue);
extern void jobq_groups_forget(text *queue);

/* A claim of one queue that exists and is not paused (claim.c's values) */
typedef uint64 (*JobqClaimFn) (Datum *values, const char *nulls, text *queue,
							   const JobqQueueSettings *settings);

/* claim_limits.c */
extern const JobqStatements jobq_claim_limits_statements;
extern bool jobq_queue_limited(const JobqQueueSettings *settings);
extern int64 jobq_gcra_interval(int64 rate, int64 per_s);
extern int64 jobq_gcra_allowance(TimestampTz tat, TimestampTz now, int64 t, int64 burst,
								 TimestampTz *retry_at);
extern void jobq_lock_limited_claims(text *queue);
extern bool jobq_due_left(text *queue, const JobqQueueSettings *settings, TimestampTz now);

/* The slots of max_running queues that an ack frees (claim_limits.c) */
typedef struct JobqSlots
{
	text	   *queue;
	int64		count;			/* jobs of the ack in the queue */
	bool		notify;
	bool		paused;
} JobqSlots;

extern int	jobq_slots_read(Datum ids, JobqSlots **slots);
extern void jobq_slots_freed(const JobqSlots *slots, int n, int64 freed);
extern uint64 jobq_claim_limited(Datum *values, char *nulls, text *queue,
								 JobqQueueSettings *settings, JobqClaimFn claim,
								 TimestampTz *retry_at);

/* claim_slots.c: max_running by slot rows */
extern const JobqStatements jobq_claim_slots_statements;
extern bool jobq_queue_slotted(const JobqQueueSettings *settings);
extern int64 jobq_slots_lock(text *queue, int64 want, Datum **slots);
extern void jobq_slots_take(text *queue, Datum *slots, uint64 claimed);
extern void jobq_slots_resize(text *queue, int32 max_running);

/* fail_rate_limited.c */
extern const JobqStatements jobq_fail_rate_limited_statements;
extern bool jobq_fail_rate_limited(Datum id, Datum token, TimestampTz now, TimestampTz until,
								   text *err, bool truncated);

/* group_claim.c */
extern uint64 jobq_group_claim(Datum *values, const char *nulls, text *queue,
							   const JobqQueueSettings *settings);

/* group_counts.c: the groups of jobq_counts */
extern const JobqStatements jobq_group_counts_statements;
extern void jobq_group_counts(text *queue, int64 *active, int64 *blocked);

/* groups_admin.c */
extern void jobq_require_grouped_queue(text *queue, JobqQueuePriv priv);

/* groups_reconcile.c: the reconcile, the sweeper's duty */
extern const JobqStatements jobq_groups_reconcile_statements;
extern int64 jobq_groups_reconcile_run(text *queue, int max_groups, Tuplestorestate *store,
									   TupleDesc desc, bool log);
extern void jobq_groups_reconcile_due(void);
extern void jobq_groups_define_gucs(void);

/* queue_cache.c */
extern bool jobq_any_grouped_queue(void);
extern bool jobq_any_limited_queue(void);

#endif							/* JOBQ_GROUPS_H */
