/*-------------------------------------------------------------------------
 *
 * direct.h
 *	  The direct writes of the claim/complete cycle: a complete that deletes
 *	  the row its own backend's claim wrote, without a statement.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/direct.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JOBQ_DIRECT_H
#define JOBQ_DIRECT_H

#include "storage/itemptr.h"
#include "nodes/bitmapset.h"
#include "nodes/pg_list.h"
#include "utils/relcache.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"
#include "utils/uuid.h"

/* direct_map.c: a job this backend claimed, and where its claim wrote it */
typedef struct JobqDirectClaim
{
	int64		id;
	pg_uuid_t	token;
	ItemPointerData tid;		/* the running row the claim wrote */
	TransactionId xmin;			/* the claim's (sub)transaction */
	bool		used;
} JobqDirectClaim;

extern void jobq_direct_note_claim(int64 id, const pg_uuid_t *token, ItemPointer tid);
extern const JobqDirectClaim *jobq_direct_find_claim(int64 id, const pg_uuid_t *token);
extern void jobq_direct_forget_claim(int64 id);

/*
 * direct_complete.c: the columns of jobq.jobs the direct complete knows,
 * those it reads first, then those that need nothing at complete.  A
 * column not listed in direct_complete.c makes every complete take the
 * statement.
 */
typedef enum JobqDirectColumn
{
	DCOL_ID,
	DCOL_QUEUE,
	DCOL_TOKEN,
	DCOL_CLAIMED_AT,
	DCOL_STATE,
	DCOL_PRIORITY,
	DCOL_RUN_AT,
	DCOL_ATTEMPT,
	DCOL_MAX_ATTEMPTS,
	DCOL_LOCKED_UNTIL,
	DCOL_WORKER,
	DCOL_ENQUEUED_AT,
	DCOL_DEDUPE_KEY,
	DCOL_ERRORS,
	DCOL_PAYLOAD,
	DCOL_GROUP_KEY,				/* 0.2.0's SQL (groups.h); absent: NULL */
	DCOL_GROUP_SEQ,
	DCOL_FLOW_ID,				/* 0.2.0's SQL (flows.c); absent: NULL */
	DCOL_PENDING_DEPS,
	DCOL_NCOLUMNS
} JobqDirectColumn;

/*
 * The state of one SQL call that completes jobs directly (one or a batch):
 * jobq.jobs open, the statement's snapshot pushed, from the first job the
 * map knows until jobq_direct_finish.
 */
typedef struct JobqDirectCall
{
	int			state;			/* 0: not started, 1: ready, -1: unusable */
	const char *why;			/* when unusable */
	Relation	jobs;
	int			history_state;	/* the same for jobq.history */
	Relation	history;
	Datum	   *values;			/* a job's row, deformed (jobs' natts) */
	bool	   *nulls;
	bool		flow_job;		/* the job just completed is in a flow, */
	int64		flow_id;		/* this one, */
	bool		kept;			/* and went to history */
} JobqDirectCall;

#define JOBQ_DIRECT_CALL_INIT	{0, NULL, NULL, 0, NULL, NULL, NULL, false, 0, false}

extern bool jobq_direct_writes;
extern void jobq_direct_define_gucs(void);
extern void jobq_direct_inval(Oid relid);
extern bool jobq_direct_complete(JobqDirectCall *call, int64 id, const pg_uuid_t *token,
								 Jsonb *result, TimestampTz finished_at);
extern void jobq_direct_finish(JobqDirectCall *call);
extern const AttrNumber *jobq_direct_job_columns(Relation rel);
extern void jobq_direct_job_values(const Datum *values, const bool *nulls, Datum *job,
								   bool *job_nulls);
extern const char *jobq_direct_queue_limited(const JobqQueueSettings *settings);

/* direct_claim.c: one queue of a claim */
typedef struct JobqClaimQueue
{
	text	   *queue;
	const JobqQueueSettings *settings;	/* its cached settings */
	const Interval *lease;		/* of the jobs claimed from it */
} JobqClaimQueue;

extern bool jobq_direct_claim(const JobqClaimQueue *queues, int nqueues, TimestampTz now,
							  int max_jobs, text *worker, const pg_uuid_t *tokens,
							  Tuplestorestate *store, TupleDesc desc, int *claimed);
extern void jobq_direct_claim_inval(Oid relid);

/* direct_index.c: the indexes of a table written directly */
#define JOBQ_DIRECT_MAX_INDEXES		8	/* more: the statement writes */

typedef struct JobqDirectIndex
{
	Oid			oid;
	struct IndexInfo *info;		/* expression states live in the estate */
	struct ExprState *predicate;	/* NULL: not a partial index */
	bool		unchanged;		/* an update leaves its key columns alone */
} JobqDirectIndex;

typedef struct JobqDirectIndexes
{
	int			n;
	JobqDirectIndex index[JOBQ_DIRECT_MAX_INDEXES];
	struct EState *estate;
	struct TupleTableSlot *slot;
} JobqDirectIndexes;

extern bool jobq_direct_indexes_read(JobqDirectIndexes *ix, Relation rel, List *index_oids,
									 Bitmapset *changed);
extern bool jobq_direct_indexes_same(const JobqDirectIndexes *ix, List *index_oids);
extern bool jobq_direct_indexes_have(const JobqDirectIndexes *ix, Oid relid);
extern void jobq_direct_indexes_open(const JobqDirectIndexes *ix, Relation *irels);
extern void jobq_direct_indexes_close(const JobqDirectIndexes *ix, Relation *irels);
extern void jobq_direct_indexes_insert(JobqDirectIndexes *ix, Relation *irels, Relation heap,
									   HeapTuple tuple, bool update);

/* direct_history.c */
extern void jobq_direct_history_inval(Oid relid);
extern Relation jobq_direct_history_open(void);
extern void jobq_direct_history_insert(Relation rel, const Datum *job, const bool *job_nulls,
									   TimestampTz finished_at, Jsonb *result);

#endif							/* JOBQ_DIRECT_H */
