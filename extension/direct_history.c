/*-------------------------------------------------------------------------
 *
 * direct_history.c
 *	  Write the history row of a job completed directly (direct_complete.c)
 *	  without the executor.
 *
 * A complete of a job whose queue keeps completed history moves the job's
 * row to jobq.history: the statement's INSERT ... SELECT FROM d
 * (JOBQ_HISTORY_ROW_SQL) writes the job's own columns, with state
 * 'completed', finished_at and the result.  jobq_direct_history_insert
 * forms the same row from the job's row and inserts it as insert_job.c
 * inserts a job: heap_insert, then index_insert into each index whose
 * predicate the row satisfies, with the primary key's unique check
 * (direct_index.c).  jobq.history has an expression index
 * (history_schedule_idx, on split_part(dedupe_key, ':', 2)): direct_index.c
 * evaluates index expressions and predicates in an executor state kept
 * with the layout, as the executor's would be.
 *
 * The table must be as the statement would write it: a plain heap table
 * with no INSERT triggers, rules, row security, CHECK constraints or
 * generated columns (jobq_table_inserts_plainly), exactly the columns of
 * history_columns with their types and no type modifiers, and only btree
 * indexes without exclusion constraints or deferred uniqueness.  Otherwise
 * the layout is unusable and the caller leaves the job to the statement,
 * having written nothing.
 *
 * The layout is kept in a memory context of our own until a relcache
 * invalidation of jobq.history or of one of its indexes (or of all
 * relations) makes it stale, as in insert_job.c.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/direct_history.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"
#include "direct.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/table.h"
#include "catalog/index.h"
#include "catalog/namespace.h"
#include "catalog/pg_am.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

/* The columns of jobq.history, and where each comes from */
enum HistoryColumn
{
	HCOL_ID,
	HCOL_QUEUE,
	HCOL_STATE,
	HCOL_PRIORITY,
	HCOL_RUN_AT,
	HCOL_ATTEMPT,
	HCOL_MAX_ATTEMPTS,
	HCOL_TOKEN,
	HCOL_WORKER,
	HCOL_ENQUEUED_AT,
	HCOL_CLAIMED_AT,
	HCOL_FINISHED_AT,
	HCOL_DEDUPE_KEY,
	HCOL_ERRORS,
	HCOL_RESULT,
	HCOL_PAYLOAD,
	HCOL_GROUP_KEY,				/* 0.2.0's SQL; a completed job's is NULL */
	HCOL_GROUP_SEQ,
	HCOL_FLOW_ID,				/* 0.2.0's SQL; NULL: a direct complete's job is in none */
	HISTORY_NCOLUMNS
};

static const struct
{
	JobqColumn	col;			/* type InvalidOid: jobq.job_state */
	int			job_column;		/* DCOL_* of the job's row; -1: not from it */
}			history_columns[HISTORY_NCOLUMNS] = {
	[HCOL_ID] = {{"id", INT8OID}, DCOL_ID},
	[HCOL_QUEUE] = {{"queue", TEXTOID}, DCOL_QUEUE},
	[HCOL_STATE] = {{"state", InvalidOid}, -1},
	[HCOL_PRIORITY] = {{"priority", INT2OID}, DCOL_PRIORITY},
	[HCOL_RUN_AT] = {{"run_at", TIMESTAMPTZOID}, DCOL_RUN_AT},
	[HCOL_ATTEMPT] = {{"attempt", INT4OID}, DCOL_ATTEMPT},
	[HCOL_MAX_ATTEMPTS] = {{"max_attempts", INT4OID}, DCOL_MAX_ATTEMPTS},
	[HCOL_TOKEN] = {{"token", UUIDOID}, DCOL_TOKEN},
	[HCOL_WORKER] = {{"worker", TEXTOID}, DCOL_WORKER},
	[HCOL_ENQUEUED_AT] = {{"enqueued_at", TIMESTAMPTZOID}, DCOL_ENQUEUED_AT},
	[HCOL_CLAIMED_AT] = {{"claimed_at", TIMESTAMPTZOID}, DCOL_CLAIMED_AT},
	[HCOL_FINISHED_AT] = {{"finished_at", TIMESTAMPTZOID}, -1},
	[HCOL_DEDUPE_KEY] = {{"dedupe_key", TEXTOID}, DCOL_DEDUPE_KEY},
	[HCOL_ERRORS] = {{"errors", JSONBOID}, DCOL_ERRORS},
	[HCOL_RESULT] = {{"result", JSONBOID}, -1},
	[HCOL_PAYLOAD] = {{"payload", JSONBOID}, DCOL_PAYLOAD},
	[HCOL_GROUP_KEY] = {{"group_key", TEXTOID, true}, -1},
	[HCOL_GROUP_SEQ] = {{"group_seq", INT8OID, true}, -1},
	[HCOL_FLOW_ID] = {{"flow_id", INT8OID, true}, DCOL_FLOW_ID},
};

/* The kept layout, in layout_cxt (see insert_job.c for the scheme) */
static MemoryContext layout_cxt = NULL;
static uint64 layout_invals = 1;
static uint64 layout_valid_at = 0;
static bool layout_usable = false;
static Oid	history_relid = InvalidOid;
static Oid	state_completed = InvalidOid;
static AttrNumber attnum[HISTORY_NCOLUMNS];
static JobqDirectIndexes indexes;

#define LAYOUT_CURRENT()	(layout_valid_at == layout_invals)

/*
 * jobq_direct_history_inval
 *	  Relcache invalidation of relid (InvalidOid: of every relation).
 */
void
jobq_direct_history_inval(Oid relid)
{
	if (relid != InvalidOid && history_relid != InvalidOid && relid != history_relid &&
		!jobq_direct_indexes_have(&indexes, relid))
		return;
	layout_invals++;
}

/*
 * read_columns
 *	  Each column of history_columns by name, with its type; no other.
 */
static bool
read_columns(Relation rel)
{
	TupleDesc	desc = RelationGetDescr(rel);

	if (!jobq_match_columns(desc, &history_columns[0].col, HISTORY_NCOLUMNS,
							sizeof(history_columns[0]), attnum))
		return false;
	/* state: the label 'completed' of the column's enum type */
	state_completed = jobq_enum_label(TupleDescAttr(desc, attnum[HCOL_STATE] - 1)->atttypid,
									  "completed");
	return OidIsValid(state_completed);
}

/*
 * ensure_layout
 *	  Have a checked layout of rel (jobq.history, open and locked), or
 *	  return false when it does not qualify.
 */
static bool
ensure_layout(Relation rel)
{
	List	   *index_oids = RelationGetIndexList(rel);
	uint64		building_at = layout_invals;
	MemoryContext oldcxt;

	if (LAYOUT_CURRENT() && history_relid == RelationGetRelid(rel) &&
		(!layout_usable || jobq_direct_indexes_same(&indexes, index_oids)))
	{
		list_free(index_oids);
		return layout_usable;
	}

	layout_valid_at = 0;
	history_relid = InvalidOid;
	indexes.n = 0;
	if (layout_cxt != NULL)
		MemoryContextDelete(layout_cxt);
	layout_cxt = AllocSetContextCreate(CacheMemoryContext, "jobq direct history layout",
									   ALLOCSET_SMALL_SIZES);
	oldcxt = MemoryContextSwitchTo(layout_cxt);
	layout_usable = jobq_table_inserts_plainly(rel) && read_columns(rel) &&
		jobq_direct_indexes_read(&indexes, rel, index_oids, NULL);
	MemoryContextSwitchTo(oldcxt);
	list_free(index_oids);

	history_relid = RelationGetRelid(rel);
	if (layout_invals == building_at)
		layout_valid_at = building_at;
	return layout_usable;
}

/*
 * jobq_direct_history_open
 *	  Open jobq.history and return it when a history row can be written
 *	  directly (the caller closes it, keeping the lock); NULL when the
 *	  statement must write it.
 */
Relation
jobq_direct_history_open(void)
{
	Oid			relid = LAYOUT_CURRENT() ? history_relid : InvalidOid;
	Relation	rel;

	if (!OidIsValid(relid))
		relid = get_relname_relid("history", get_namespace_oid("jobq", false));
	if (!OidIsValid(relid))
		return NULL;
	rel = table_open(relid, RowExclusiveLock);
	if (!ensure_layout(rel) ||
		pg_class_aclcheck(relid, GetUserId(), ACL_INSERT) != ACLCHECK_OK)
	{
		table_close(rel, NoLock);
		return NULL;
	}
	return rel;
}

/*
 * jobq_direct_history_insert
 *	  Insert into rel (from jobq_direct_history_open) the history row of
 *	  the completed job whose row's values are job[] (by DCOL_*), finished
 *	  at finished_at with result (NULL: none).
 */
void
jobq_direct_history_insert(Relation rel, const Datum *job, const bool *job_nulls,
						   TimestampTz finished_at, Jsonb *result)
{
	TupleDesc	desc = RelationGetDescr(rel);
	Datum	   *values = palloc(sizeof(Datum) * desc->natts);
	bool	   *nulls = palloc(sizeof(bool) * desc->natts);
	Relation	irels[JOBQ_DIRECT_MAX_INDEXES];
	HeapTuple	tuple;

	memset(nulls, true, sizeof(bool) * desc->natts);
	for (int c = 0; c < HISTORY_NCOLUMNS; c++)
	{
		int			a = attnum[c] - 1;
		int			from = history_columns[c].job_column;

		if (from >= 0 && a >= 0)
		{
			values[a] = job[from];
			nulls[a] = job_nulls[from];
		}
	}
	values[attnum[HCOL_STATE] - 1] = ObjectIdGetDatum(state_completed);
	nulls[attnum[HCOL_STATE] - 1] = false;
	values[attnum[HCOL_FINISHED_AT] - 1] = TimestampTzGetDatum(finished_at);
	nulls[attnum[HCOL_FINISHED_AT] - 1] = false;
	if (result != NULL)
	{
		values[attnum[HCOL_RESULT] - 1] = JsonbPGetDatum(result);
		nulls[attnum[HCOL_RESULT] - 1] = false;
	}

	/* as the executor: the indexes' locks first; a unique check may wait */
	jobq_direct_indexes_open(&indexes, irels);
	tuple = heap_form_tuple(desc, values, nulls);
	heap_insert(rel, tuple, GetCurrentCommandId(true), 0, NULL);
	jobq_direct_indexes_insert(&indexes, irels, rel, tuple, false);
	jobq_direct_indexes_close(&indexes, irels);
	heap_freetuple(tuple);
	pfree(values);
	pfree(nulls);
}
