/*-------------------------------------------------------------------------
 *
 * insert_job.c
 *	  Insert one new ready job into jobq.jobs without the executor.
 *
 * jobq_enqueue of a job without a dedupe key is one row into a table we
 * own.  Through SPI that row costs a plan-cache check (which re-compares the
 * pinned search_path), an executor start-up for a ModifyTable over a Result
 * with a projection of every column, the preparation of the partial
 * indexes' predicates, and the SPI context itself: more than the heap and
 * index insertions.  An enqueue took 161,000 instructions against a plain
 * prepared INSERT's 103,000, and 105,000 written here (bench/findings.md,
 * fourth round).
 *
 * jobq_insert_job forms the tuple, inserts it with heap_insert and adds
 * its index entries with index_insert, as CatalogTupleInsert does for the
 * catalogs.  What the executor would do besides that, it either does too
 * (privilege check, read-only transaction check, unique checks in the
 * indexes, predicate locks in heap_insert and btree) or refuses to go on
 * without: the table must be a plain heap table with no INSERT triggers,
 * no rules, no row security, no CHECK constraints, no generated columns,
 * only the columns named below with their types and no type modifiers,
 * and btree indexes on plain columns (no expressions, no exclusion
 * constraints, no deferred uniqueness).  When any of that does not hold,
 * for instance because an operator put a trigger on jobq.jobs, it returns
 * false and the caller inserts through SPI as before; nothing was written.
 * The SPI statement (enqueue.c) names every column this file fills, so the
 * two paths give the same row by construction, not through defaults.
 *
 * What is kept between calls: the table's layout and, per index, its
 * IndexInfo and the evaluation state of its predicate, built once in a
 * memory context of our own.  A relcache invalidation of jobq.jobs (sent
 * for any DDL on it or its indexes, including CREATE INDEX CONCURRENTLY's
 * steps) or of everything marks them stale, and the next call builds them
 * again.  The caller has just accepted pending invalidations (the queue
 * settings lookup does, enqueue.c); every call then opens the table and
 * its indexes with RowExclusiveLock, as the executor does, and checks the
 * list of indexes against the kept one.  Only btree indexes are taken:
 * other access methods keep per-statement state in IndexInfo (ii_AmCache)
 * that the executor resets and this file would carry across statements.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/insert_job.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/namespace.h"
#include "catalog/dependency.h"
#include "catalog/pg_am.h"
#include "catalog/pg_enum.h"
#include "catalog/pg_type.h"
#include "commands/sequence.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "tcop/utility.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"

/* The columns of jobq.jobs, in the install script's order */
enum JobColumn
{
	COL_ID,
	COL_QUEUE,
	COL_STATE,
	COL_PRIORITY,
	COL_RUN_AT,
	COL_ATTEMPT,
	COL_MAX_ATTEMPTS,
	COL_TOKEN,
	COL_LOCKED_UNTIL,
	COL_WORKER,
	COL_ENQUEUED_AT,
	COL_CLAIMED_AT,
	COL_DEDUPE_KEY,
	COL_ERRORS,
	COL_PAYLOAD,
	COL_GROUP_KEY,				/* 0.2.0's SQL */
	COL_GROUP_SEQ,
	/* 0.2.0 (flows): absent from 0.1.0's table, NULL on a new job */
	COL_FLOW_ID,
	COL_PENDING_DEPS,
	JOB_NCOLUMNS
};

typedef struct JobColumnSpec
{
	JobqColumn	col;			/* type InvalidOid: jobq.job_state, checked apart */
	bool		set_null;		/* a new job has NULL here */
} JobColumnSpec;

static const JobColumnSpec job_columns[JOB_NCOLUMNS] = {
	[COL_ID] = {{"id", INT8OID}, false},
	[COL_QUEUE] = {{"queue", TEXTOID}, false},
	[COL_STATE] = {{"state", InvalidOid}, false},
	[COL_PRIORITY] = {{"priority", INT2OID}, false},
	[COL_RUN_AT] = {{"run_at", TIMESTAMPTZOID}, false},
	[COL_ATTEMPT] = {{"attempt", INT4OID}, false},
	[COL_MAX_ATTEMPTS] = {{"max_attempts", INT4OID}, false},
	[COL_TOKEN] = {{"token", UUIDOID}, true},
	[COL_LOCKED_UNTIL] = {{"locked_until", TIMESTAMPTZOID}, true},
	[COL_WORKER] = {{"worker", TEXTOID}, true},
	[COL_ENQUEUED_AT] = {{"enqueued_at", TIMESTAMPTZOID}, false},
	[COL_CLAIMED_AT] = {{"claimed_at", TIMESTAMPTZOID}, true},
	[COL_DEDUPE_KEY] = {{"dedupe_key", TEXTOID}, true},
	[COL_ERRORS] = {{"errors", JSONBOID}, true},
	[COL_PAYLOAD] = {{"payload", JSONBOID}, false},
	/* jobs without a group (groups.h): an enqueue with a group_key uses SPI */
	[COL_GROUP_KEY] = {{"group_key", TEXTOID, true}, true},
	[COL_GROUP_SEQ] = {{"group_seq", INT8OID, true}, true},
	[COL_FLOW_ID] = {{"flow_id", INT8OID, true}, true},
	[COL_PENDING_DEPS] = {{"pending_deps", INT4OID, true}, true},
};

/* More indexes than jobq.jobs has; past it, SPI does the insert */
#define MAX_JOB_INDEXES		8

typedef struct JobIndex
{
	Oid			oid;
	IndexInfo  *info;
	ExprState  *predicate;		/* NULL: not a partial index */
} JobIndex;

/*
 * What is kept between calls, in layout_cxt.  An invalidation only bumps
 * layout_invals: it can arrive in the middle of an insert (opening the
 * TOAST table, the id sequence or an index processes pending ones), which
 * must go on with what it started with, as a running INSERT keeps its
 * executor state.  The locks we hold keep that state true for the insert;
 * the next call rebuilds it.  layout_valid_at is the value of
 * layout_invals the layout was built under, set only once it is complete,
 * so an error or an invalidation during the build leaves no layout.
 */
static MemoryContext layout_cxt = NULL;
static uint64 layout_invals = 1;
static uint64 layout_valid_at = 0;
static bool layout_unusable = false;	/* checked, and SPI must insert */
static Oid	jobs_relid = InvalidOid;
static Oid	id_sequence = InvalidOid;
static Oid	state_ready = InvalidOid;
static AttrNumber attnum[JOB_NCOLUMNS];
static int	njob_indexes = 0;
static JobIndex job_indexes[MAX_JOB_INDEXES];
static ExprContext *predicate_econtext = NULL;
static TupleTableSlot *predicate_slot = NULL;

#define LAYOUT_CURRENT()	(layout_valid_at == layout_invals)

/*
 * jobq_insert_job_inval
 *	  Relcache invalidation of relid (InvalidOid: of every relation), passed
 *	  on by queue_cache.c's callback, so that jobq takes one of the few
 *	  callback slots a backend has.  Forget the layout if it concerns
 *	  jobq.jobs or one of its indexes.
 */
void
jobq_insert_job_inval(Oid relid)
{
	if (relid != InvalidOid && jobs_relid != InvalidOid && relid != jobs_relid)
	{
		bool		ours = false;

		for (int i = 0; i < njob_indexes; i++)
			ours |= job_indexes[i].oid == relid;
		if (!ours)
			return;
	}
	layout_invals++;
}

/*
 * jobq_table_inserts_plainly
 *	  What the executor would act on and this file does not: INSERT
 *	  triggers, rules, row security, CHECK constraints, generated columns,
 *	  another access method.  Read from the relcache on every call; cheap.
 *	  (Also the check of jobq.history for direct_history.c.)
 */
bool
jobq_table_inserts_plainly(Relation rel)
{
	TupleConstr *constr = RelationGetDescr(rel)->constr;
	TriggerDesc *trig = rel->trigdesc;

	/* triggers for other events (foreign keys to job ids) do not matter */
	if (trig != NULL &&
		(trig->trig_insert_before_row || trig->trig_insert_after_row ||
		 trig->trig_insert_instead_row || trig->trig_insert_before_statement ||
		 trig->trig_insert_after_statement || trig->trig_insert_new_table))
		return false;
	return rel->rd_rel->relkind == RELKIND_RELATION &&
		rel->rd_rel->relam == HEAP_TABLE_AM_OID &&
		rel->rd_rules == NULL &&	/* relhasrules stays set after a DROP RULE */
		!rel->rd_rel->relrowsecurity &&
		(constr == NULL || (constr->num_check == 0 && !constr->has_generated_stored));
}

/*
 * read_columns
 *	  Find each column of job_columns by name and check its type, and that
 *	  the table has no other column.  Columns a new job leaves NULL must
 *	  allow it and have no default; optional ones may be missing.
 */
static bool
read_columns(Relation rel)
{
	TupleDesc	desc = RelationGetDescr(rel);

	if (!jobq_match_columns(desc, &job_columns[0].col, JOB_NCOLUMNS, sizeof(JobColumnSpec),
							attnum))
		return false;
	for (int c = 0; c < JOB_NCOLUMNS; c++)
	{
		Form_pg_attribute att;

		if (attnum[c] == InvalidAttrNumber)
			continue;			/* optional, absent */
		att = TupleDescAttr(desc, attnum[c] - 1);
		if (job_columns[c].set_null && (att->attnotnull || att->atthasdef))
			return false;
	}

	/* id: an identity column, filled from its sequence */
	if (TupleDescAttr(desc, attnum[COL_ID] - 1)->attidentity == '\0')
		return false;
	id_sequence = getIdentitySequence(RelationGetRelid(rel), attnum[COL_ID], true);
	if (!OidIsValid(id_sequence))
		return false;

	/* state: the enum label 'ready' of the column's type */
	state_ready = jobq_enum_label(TupleDescAttr(desc, attnum[COL_STATE] - 1)->atttypid, "ready");
	return OidIsValid(state_ready);
}

/*
 * jobq_match_columns
 *	  Find each of the n columns of cols (each at stride bytes from the
 *	  last: a JobqColumn first in a larger spec) by name, with its type
 *	  (InvalidOid: not checked here) and no type modifier (the executor
 *	  would coerce, e.g. round a time), and set attnum[k] to it
 *	  (InvalidAttrNumber: an optional column that is absent).  false when
 *	  one that is not optional is missing or desc has a column not in cols:
 *	  a column the direct writes would not know how to fill.  Also for direct_complete.c and
 *	  direct_history.c.
 */
bool
jobq_match_columns(TupleDesc desc, const JobqColumn *cols, int n, size_t stride,
				   AttrNumber *attnum)
{
	for (int k = 0; k < n; k++)
		attnum[k] = InvalidAttrNumber;
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		const JobqColumn *col = NULL;
		int			k;

		if (att->attisdropped)
			continue;
		for (k = 0; k < n; k++)
		{
			col = (const JobqColumn *) ((const char *) cols + k * stride);
			if (strcmp(NameStr(att->attname), col->name) == 0)
				break;
		}
		if (k == n || att->atttypmod != -1 ||
			(col->type != InvalidOid && att->atttypid != col->type))
			return false;
		attnum[k] = att->attnum;
	}
	for (int k = 0; k < n; k++)
		if (attnum[k] == InvalidAttrNumber &&
			!((const JobqColumn *) ((const char *) cols + k * stride))->optional)
			return false;
	return true;
}

/*
 * jobq_enum_label
 *	  The OID of the label of the enum type, or InvalidOid.
 */
Oid
jobq_enum_label(Oid enum_type, const char *label)
{
	HeapTuple	tup = SearchSysCache2(ENUMTYPOIDNAME, ObjectIdGetDatum(enum_type),
									  CStringGetDatum(label));
	Oid			oid;

	if (!HeapTupleIsValid(tup))
		return InvalidOid;
	oid = ((Form_pg_enum) GETSTRUCT(tup))->oid;
	ReleaseSysCache(tup);
	return oid;
}

/*
 * read_indexes
 *	  Keep, per index of the table, its IndexInfo and predicate state.
 *	  Only indexes on plain columns, immediately unique or not unique, and
 *	  without exclusion constraints qualify.  Runs in layout_cxt.
 */
static bool
read_indexes(Relation rel, List *index_oids)
{
	ListCell   *lc;

	if (list_length(index_oids) > MAX_JOB_INDEXES)
		return false;
	njob_indexes = 0;
	foreach(lc, index_oids)
	{
		Oid			oid = lfirst_oid(lc);
		Relation	irel = index_open(oid, RowExclusiveLock);
		IndexInfo  *info = BuildIndexInfo(irel);
		bool		ok;

		ok = irel->rd_rel->relam == BTREE_AM_OID &&
			info->ii_Expressions == NIL && info->ii_ExclusionOps == NULL &&
			(!info->ii_Unique || irel->rd_index->indimmediate);
		index_close(irel, NoLock);
		if (!ok)
			return false;
		job_indexes[njob_indexes].oid = oid;
		job_indexes[njob_indexes].info = info;
		job_indexes[njob_indexes].predicate = info->ii_Predicate == NIL ? NULL :
			ExecInitQual((List *) expression_planner((Expr *) info->ii_Predicate), NULL);
		njob_indexes++;
	}
	return true;
}

/*
 * same_indexes
 *	  Whether the table's index list is the one kept.
 */
static bool
same_indexes(List *index_oids)
{
	int			i = 0;
	ListCell   *lc;

	if (list_length(index_oids) != njob_indexes)
		return false;
	foreach(lc, index_oids)
		if (job_indexes[i++].oid != lfirst_oid(lc))
			return false;
	return true;
}

/*
 * ensure_layout
 *	  Have a checked layout of rel, or return false when it does not
 *	  qualify.  rel is open and locked; nothing of the old layout is in use.
 */
static bool
ensure_layout(Relation rel)
{
	List	   *index_oids = RelationGetIndexList(rel);
	uint64		building_at = layout_invals;
	MemoryContext oldcxt;
	bool		ok;

	if (LAYOUT_CURRENT() && jobs_relid == RelationGetRelid(rel) &&
		(layout_unusable || same_indexes(index_oids)))
	{
		list_free(index_oids);
		return !layout_unusable;
	}

	/* forget everything first: an error below must leave no layout */
	layout_valid_at = 0;
	jobs_relid = InvalidOid;
	njob_indexes = 0;
	predicate_econtext = NULL;
	predicate_slot = NULL;
	if (layout_cxt != NULL)
		MemoryContextDelete(layout_cxt);
	layout_cxt = AllocSetContextCreate(CacheMemoryContext, "jobq job insert layout",
									   ALLOCSET_SMALL_SIZES);
	oldcxt = MemoryContextSwitchTo(layout_cxt);
	ok = read_columns(rel) && read_indexes(rel, index_oids);
	if (ok)
	{
		predicate_econtext = CreateStandaloneExprContext();
		predicate_slot = MakeSingleTupleTableSlot(CreateTupleDescCopy(RelationGetDescr(rel)),
												  &TTSOpsHeapTuple);
	}
	MemoryContextSwitchTo(oldcxt);
	list_free(index_oids);

	jobs_relid = RelationGetRelid(rel);
	layout_unusable = !ok;
	/* valid for this insert in any case; kept only if nothing invalidated it meanwhile */
	if (layout_invals == building_at)
		layout_valid_at = building_at;
	return ok;
}

/*
 * jobq_insert_job
 *	  Insert a new ready job without a dedupe key and set *id to its id, or
 *	  return false, having written nothing, when jobq.jobs is not as this
 *	  file expects (see the header); the caller then uses SPI.
 */
bool
jobq_insert_job(text *queue, int16 priority, TimestampTz run_at, int32 max_attempts,
				TimestampTz enqueued_at, Jsonb *payload, int64 *id)
{
	Datum		item = JsonbPGetDatum(payload);

	return jobq_insert_jobs(queue, priority, run_at, max_attempts, enqueued_at, &item, 1, id);
}

/*
 * jobq_insert_jobs
 *	  The same for n jobs of one queue with the same settings, the payloads
 *	  payloads[0..n-1] (jsonb): inserted in that order, ids[i] the id of
 *	  payload i, as an INSERT ... SELECT of them in order would give (a
 *	  batch enqueue without dedupe keys, enqueue.c).  The table and its
 *	  indexes are opened and checked once.
 */
bool
jobq_insert_jobs(text *queue, int16 priority, TimestampTz run_at, int32 max_attempts,
				 TimestampTz enqueued_at, const Datum *payloads, int n_jobs, int64 *ids)
{
	Oid			relid;
	Relation	rel;
	Datum		values[MaxHeapAttributeNumber];
	bool		nulls[MaxHeapAttributeNumber];
	HeapTuple	tuple;
	ExprContext *econtext;

	/* as the executor: an INSERT is refused here, before anything */
	if (XactReadOnly)
		PreventCommandIfReadOnly("INSERT");
	PreventCommandIfParallelMode("INSERT");

	/* a stale layout may be of a jobq.jobs dropped with the extension */
	relid = LAYOUT_CURRENT() ? jobs_relid : InvalidOid;
	if (!OidIsValid(relid))
		relid = get_relname_relid("jobs", get_namespace_oid("jobq", false));
	if (!OidIsValid(relid))
		return false;			/* let SPI report it */
	rel = table_open(relid, RowExclusiveLock);
	if (!jobq_table_inserts_plainly(rel) || !ensure_layout(rel))
	{
		elog(DEBUG1, "jobq: jobq.jobs has triggers, row security, constraints, columns or indexes the direct insert does not handle: inserting through SPI");
		table_close(rel, NoLock);
		return false;
	}
	if (pg_class_aclcheck(relid, GetUserId(), ACL_INSERT) != ACLCHECK_OK)
		aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_TABLE, RelationGetRelationName(rel));

	/*
	 * The indexes' locks and the id first; heap_insert may still take the
	 * TOAST table's locks, and a unique check may wait for another
	 * transaction, as in the executor.
	 */
	{
		Relation	irels[MAX_JOB_INDEXES];
		int			n = njob_indexes;

		for (int i = 0; i < n; i++)
			irels[i] = index_open(job_indexes[i].oid, RowExclusiveLock);
		for (int j = 0; j < n_jobs; j++)
		{
			ids[j] = nextval_internal(id_sequence, false);

			memset(nulls, true, sizeof(bool) * RelationGetDescr(rel)->natts);
#define SET(col, datum) (values[attnum[col] - 1] = (datum), nulls[attnum[col] - 1] = false)
			SET(COL_ID, Int64GetDatum(ids[j]));
			SET(COL_QUEUE, PointerGetDatum(queue));
			SET(COL_STATE, ObjectIdGetDatum(state_ready));
			SET(COL_PRIORITY, Int16GetDatum(priority));
			SET(COL_RUN_AT, TimestampTzGetDatum(run_at));
			SET(COL_ATTEMPT, Int32GetDatum(0));
			SET(COL_MAX_ATTEMPTS, Int32GetDatum(max_attempts));
			SET(COL_ENQUEUED_AT, TimestampTzGetDatum(enqueued_at));
			SET(COL_PAYLOAD, payloads[j]);
#undef SET
			tuple = heap_form_tuple(RelationGetDescr(rel), values, nulls);
			heap_insert(rel, tuple, GetCurrentCommandId(true), 0, NULL);

			econtext = predicate_econtext;
			ExecStoreHeapTuple(tuple, predicate_slot, false);
			econtext->ecxt_scantuple = predicate_slot;
			for (int i = 0; i < n; i++)
			{
				JobIndex   *ix = &job_indexes[i];
				Datum		ivalues[INDEX_MAX_KEYS];
				bool		inulls[INDEX_MAX_KEYS];

				/* as ExecInsertIndexTuples: not ready yet, or not in a partial index */
				if (ix->info->ii_ReadyForInserts &&
					(ix->predicate == NULL || ExecQual(ix->predicate, econtext)))
				{
					FormIndexDatum(ix->info, predicate_slot, NULL, ivalues, inulls);
					index_insert(irels[i], ivalues, inulls, &tuple->t_self, rel,
								 ix->info->ii_Unique ? UNIQUE_CHECK_YES : UNIQUE_CHECK_NO,
								 false, ix->info);
				}
			}
			ExecClearTuple(predicate_slot);
			ResetExprContext(econtext);
			heap_freetuple(tuple);
		}
		for (int i = 0; i < n; i++)
			index_close(irels[i], NoLock);
	}
	table_close(rel, NoLock);
	if (n_jobs == 1)
		elog(DEBUG2, "jobq: job inserted directly");
	else
		elog(DEBUG2, "jobq: %d jobs inserted directly", n_jobs);
	return true;
}
