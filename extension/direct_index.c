/*-------------------------------------------------------------------------
 *
 * direct_index.c
 *	  The index entries of a row written without the executor, for the
 *	  direct history row (direct_history.c) and the direct claim
 *	  (direct_claim.c): what ExecInsertIndexTuples does for one row.
 *
 * A layout keeps, per index of a table, its IndexInfo, the prepared
 * predicate of a partial index and, for an update, whether the update
 * leaves the index's key columns unchanged (the hint that lets btree
 * delete duplicates bottom-up, as the executor gives it).  Expressions
 * and predicates are evaluated in an executor state kept with the layout,
 * in the caller's memory context: the layout lives as long as that
 * context.  Only btree indexes qualify, without exclusion constraints and
 * with immediate uniqueness; another access method keeps state in
 * IndexInfo (ii_AmCache) that the executor resets per statement.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/direct_index.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"
#include "direct.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "catalog/index.h"
#include "catalog/pg_am.h"
#include "executor/executor.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "utils/rel.h"

/*
 * jobq_direct_indexes_read
 *	  Fill ix with the indexes index_oids of rel, in CurrentMemoryContext.
 *	  changed: the columns an update changes (NULL: inserts only).  Returns
 *	  false when an index does not qualify (see the header).
 */
bool
jobq_direct_indexes_read(JobqDirectIndexes *ix, Relation rel, List *index_oids,
						 Bitmapset *changed)
{
	ListCell   *lc;

	ix->n = 0;
	ix->estate = CreateExecutorState();
	ix->slot = MakeSingleTupleTableSlot(CreateTupleDescCopy(RelationGetDescr(rel)),
										&TTSOpsHeapTuple);
	if (list_length(index_oids) > JOBQ_DIRECT_MAX_INDEXES)
		return false;
	foreach(lc, index_oids)
	{
		JobqDirectIndex *x = &ix->index[ix->n];
		Relation	irel = index_open(lfirst_oid(lc), RowExclusiveLock);
		IndexInfo  *info = BuildIndexInfo(irel);
		bool		ok;

		ok = irel->rd_rel->relam == BTREE_AM_OID && info->ii_ExclusionOps == NULL &&
			(!info->ii_Unique || irel->rd_index->indimmediate);
		index_close(irel, NoLock);
		if (!ok)
			return false;
		x->oid = lfirst_oid(lc);
		x->info = info;
		x->predicate = info->ii_Predicate == NIL ? NULL :
			ExecPrepareQual(info->ii_Predicate, ix->estate);

		/* as index_unchanged_by_update: key columns untouched, no expressions */
		x->unchanged = changed != NULL && info->ii_Expressions == NIL;
		for (int k = 0; k < info->ii_NumIndexKeyAttrs && x->unchanged; k++)
			x->unchanged = !bms_is_member(info->ii_IndexAttrNumbers[k] -
										  FirstLowInvalidHeapAttributeNumber, changed);
		ix->n++;
	}
	return true;
}

/*
 * jobq_direct_indexes_same
 *	  Whether index_oids (a table's RelationGetIndexList) are ix's indexes.
 */
bool
jobq_direct_indexes_same(const JobqDirectIndexes *ix, List *index_oids)
{
	int			i = 0;
	ListCell   *lc;

	if (list_length(index_oids) != ix->n)
		return false;
	foreach(lc, index_oids)
		if (ix->index[i++].oid != lfirst_oid(lc))
			return false;
	return true;
}

/*
 * jobq_direct_indexes_have
 *	  Whether relid is one of ix's indexes (for invalidations).
 */
bool
jobq_direct_indexes_have(const JobqDirectIndexes *ix, Oid relid)
{
	for (int i = 0; i < ix->n; i++)
		if (ix->index[i].oid == relid)
			return true;
	return false;
}

/*
 * jobq_direct_indexes_open / jobq_direct_indexes_close
 *	  Open ix's indexes into irels with RowExclusiveLock, before the heap
 *	  is written, as the executor opens them; close them keeping the locks.
 */
void
jobq_direct_indexes_open(const JobqDirectIndexes *ix, Relation *irels)
{
	for (int i = 0; i < ix->n; i++)
		irels[i] = index_open(ix->index[i].oid, RowExclusiveLock);
}

void
jobq_direct_indexes_close(const JobqDirectIndexes *ix, Relation *irels)
{
	for (int i = 0; i < ix->n; i++)
		index_close(irels[i], NoLock);
}

/*
 * jobq_direct_indexes_insert
 *	  Add the entries of tuple (just inserted into heap, or the new version
 *	  of a non-HOT update when update) to every index of irels (opened by
 *	  jobq_direct_indexes_open) whose predicate it satisfies, with the
 *	  unique checks.
 */
void
jobq_direct_indexes_insert(JobqDirectIndexes *ix, Relation *irels, Relation heap,
						   HeapTuple tuple, bool update)
{
	ExprContext *econtext = GetPerTupleExprContext(ix->estate);

	ExecStoreHeapTuple(tuple, ix->slot, false);
	econtext->ecxt_scantuple = ix->slot;
	for (int i = 0; i < ix->n; i++)
	{
		JobqDirectIndex *x = &ix->index[i];
		Datum		values[INDEX_MAX_KEYS];
		bool		isnull[INDEX_MAX_KEYS];

		/* as ExecInsertIndexTuples: not ready yet, or not in a partial index */
		if (!x->info->ii_ReadyForInserts ||
			(x->predicate != NULL && !ExecQual(x->predicate, econtext)))
			continue;
		FormIndexDatum(x->info, ix->slot, ix->estate, values, isnull);
		index_insert(irels[i], values, isnull, &tuple->t_self, heap,
					 x->info->ii_Unique ? UNIQUE_CHECK_YES : UNIQUE_CHECK_NO,
					 update && x->unchanged, x->info);
	}
	ExecClearTuple(ix->slot);
	ResetPerTupleExprContext(ix->estate);
}
