/*-------------------------------------------------------------------------
 *
 * direct_claim.c
 *	  Claim ready jobs of one or several queues by scanning jobs_claim_idx
 *	  and locking and updating the rows directly, without the claim
 *	  statement.
 *
 * The claim statement of one queue (claim.c, ST_CLAIM_ONE) is an UPDATE
 * joined to the ids of a SELECT ... FOR NO KEY UPDATE SKIP LOCKED LIMIT
 * through jobs_claim_idx: per claim of one job about 280,000 instructions,
 * of which the index scan, the heap update and the index entries are about
 * 150,000; the rest is SPI, the plan-cache check and the executor's
 * start-up of four plan nodes and a ModifyTable (bench/findings.md, fifth
 * round).  jobq_direct_claim does what the plan does, in the plan's order:
 *
 *	1. an index scan of jobs_claim_idx with queue = $1 (the index is in
 *	   claim order: priority, run_at, id), under the snapshot SPI would
 *	   give the statement, and run_at <= now checked on each index entry
 *	   before its row is fetched (source_advance says why not by btree);
 *	2. per visible row, the lock of LockRows: table_tuple_lock in NO KEY
 *	   EXCLUSIVE mode with SKIP LOCKED and, as READ COMMITTED does, the
 *	   newest version of a row updated since the snapshot, whose state,
 *	   queue and run_at are then checked again (EvalPlanQual's re-check);
 *	   a row another transaction holds is skipped, a row that no longer
 *	   qualifies stays locked and is not taken, as in the statement;
 *	3. the UPDATE of the locked version (state running, attempt + 1, the
 *	   token, the lease, claimed_at, worker) with heap_update, and for a
 *	   non-HOT update the new version's entries in every index whose
 *	   predicate it satisfies (direct_index.c: the primary key and the
 *	   lease index, with the executor's unique checks and its "key
 *	   unchanged" hint);
 *	4. the claim's result row, the counters, and the note for the direct
 *	   complete (direct_map.c).
 *
 * A claim that names several queues scans each of them so, and merges the
 * scans by claim order: it locks only the rows it takes, where the
 * statement of several queues (claim.c, ST_CLAIM_ANY) locks up to
 * max_jobs in each queue to keep max_jobs in all.
 *
 * It returns false, having done nothing, whenever it cannot be the same as
 * the statement, and the caller runs the statement: another isolation
 * level than READ COMMITTED (predicate locks under SERIALIZABLE, and the
 * serialization errors of REPEATABLE READ); jobq.jobs with UPDATE
 * triggers (a foreign key to job ids is one), rules, row security, CHECK
 * constraints, generated columns, a column direct_complete.c does not
 * know, or an index that direct_index.c does not handle; a
 * jobs_claim_idx that is not exactly (queue, priority, run_at, id) with
 * the default btree operator classes, a deterministic collation and the
 * predicate state = 'ready'; the setting jobq.direct_writes off.
 *
 * A queue with groups, a concurrency limit or a rate (issue 19) is claimed
 * by its own statements.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/direct_claim.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"
#include "counters.h"
#include "direct.h"
#include "jobq_sql.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_am.h"
#include "catalog/pg_index.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "lib/binaryheap.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "tcop/utility.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/pg_locale.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

/* the columns of jobs_claim_idx, in order */
static const JobqDirectColumn claim_index_columns[] = {
	DCOL_QUEUE, DCOL_PRIORITY, DCOL_RUN_AT, DCOL_ID
};
#define CLAIM_INDEX_NKEYS	lengthof(claim_index_columns)
#define CLAIM_INDEX_RUN_AT	3	/* the attribute number of run_at in it */

/* The columns a claim changes */
static const JobqDirectColumn claim_changes[] = {
	DCOL_STATE, DCOL_ATTEMPT, DCOL_TOKEN, DCOL_LOCKED_UNTIL, DCOL_CLAIMED_AT, DCOL_WORKER
};

/* The result row of a claim: 0.1.0's columns, and 0.2.0's flow_id */
#define RESULT_COLS		(JOBQ_CLAIM_RESULT_COLS + 1)

/* The kept layout, in layout_cxt (the scheme of insert_job.c) */
static MemoryContext layout_cxt = NULL;
static uint64 layout_invals = 1;
static uint64 layout_valid_at = 0;
static bool layout_usable = false;
static Oid	jobs_relid = InvalidOid;
static Oid	claim_index = InvalidOid;
static Oid	state_ready = InvalidOid;
static Oid	state_running = InvalidOid;
static Oid	queue_eq_proc = InvalidOid;
static Oid	run_at_le_proc = InvalidOid;
static Oid	queue_collation = InvalidOid;
static JobqDirectIndexes indexes;

#define LAYOUT_CURRENT()	(layout_valid_at == layout_invals)

/*
 * jobq_direct_claim_inval
 *	  Relcache invalidation of relid (InvalidOid: of every relation).
 */
void
jobq_direct_claim_inval(Oid relid)
{
	if (relid != InvalidOid && jobs_relid != InvalidOid && relid != jobs_relid &&
		!jobq_direct_indexes_have(&indexes, relid))
		return;
	layout_invals++;
}

/*
 * updates_plainly
 *	  Whether an UPDATE of rel would do no more than heap_update and the
 *	  index entries: no UPDATE triggers, rules, row security, CHECK
 *	  constraints or generated columns; a heap table.
 */
static bool
updates_plainly(Relation rel)
{
	TupleConstr *constr = RelationGetDescr(rel)->constr;
	TriggerDesc *trig = rel->trigdesc;

	if (trig != NULL &&
		(trig->trig_update_before_row || trig->trig_update_after_row ||
		 trig->trig_update_instead_row || trig->trig_update_before_statement ||
		 trig->trig_update_after_statement || trig->trig_update_old_table ||
		 trig->trig_update_new_table))
		return false;
	return rel->rd_rel->relkind == RELKIND_RELATION &&
		rel->rd_rel->relam == HEAP_TABLE_AM_OID &&
		rel->rd_rules == NULL &&
		!rel->rd_rel->relrowsecurity &&
		(constr == NULL || (constr->num_check == 0 && !constr->has_generated_stored));
}

/*
 * read_claim_index
 *	  Whether irel is jobs_claim_idx as the claim statement's plan reads
 *	  it: the key columns in claim order with the default btree operator
 *	  classes, a deterministic collation, and exactly the predicate
 *	  state = 'ready'.  Sets the scan keys' procedures.
 */
static bool
read_claim_index(Relation rel, Relation irel, const AttrNumber *attnum)
{
	Form_pg_index index = irel->rd_index;
	oidvector  *indclass;
	bool		isnull;
	List	   *pred;
	OpExpr	   *op;
	Var		   *var;
	Const	   *cst;

	if (irel->rd_rel->relam != BTREE_AM_OID || !index->indisvalid || !index->indisready ||
		!index->indislive || index->indnkeyatts != CLAIM_INDEX_NKEYS ||
		index->indnatts != CLAIM_INDEX_NKEYS || RelationGetIndexExpressions(irel) != NIL)
		return false;
	indclass = (oidvector *) DatumGetPointer(SysCacheGetAttr(INDEXRELID, irel->rd_indextuple,
															 Anum_pg_index_indclass, &isnull));
	for (int k = 0; k < CLAIM_INDEX_NKEYS; k++)
	{
		Oid			type = TupleDescAttr(RelationGetDescr(rel),
										 attnum[claim_index_columns[k]] - 1)->atttypid;

		if (index->indkey.values[k] != attnum[claim_index_columns[k]] ||
			irel->rd_indoption[k] != 0 ||	/* ASC, NULLS LAST */
			irel->rd_opcintype[k] != type ||
			GetDefaultOpClass(type, BTREE_AM_OID) != indclass->values[k])
			return false;
	}
	queue_collation = irel->rd_indcollation[0];
	if (!OidIsValid(queue_collation) || !get_collation_isdeterministic(queue_collation))
		return false;
	queue_eq_proc = get_opcode(get_opfamily_member(irel->rd_opfamily[0], TEXTOID, TEXTOID,
												   BTEqualStrategyNumber));
	run_at_le_proc = get_opcode(get_opfamily_member(irel->rd_opfamily[2], TIMESTAMPTZOID,
													TIMESTAMPTZOID,
													BTLessEqualStrategyNumber));
	if (queue_eq_proc != F_TEXTEQ || run_at_le_proc != F_TIMESTAMPTZ_LE)
		return false;

	/* the predicate: state = 'ready' */
	pred = RelationGetIndexPredicate(irel);
	if (list_length(pred) != 1 || !IsA(linitial(pred), OpExpr))
		return false;
	op = linitial(pred);
	if (list_length(op->args) != 2 || get_opcode(op->opno) != F_ENUM_EQ ||
		!IsA(linitial(op->args), Var) || !IsA(lsecond(op->args), Const))
		return false;
	var = linitial(op->args);
	cst = lsecond(op->args);
	return var->varattno == attnum[DCOL_STATE] && !cst->constisnull &&
		DatumGetObjectId(cst->constvalue) == state_ready;
}

/*
 * ensure_layout
 *	  Have a checked layout of rel (jobq.jobs, open and locked), or return
 *	  false when the claim statement must claim.
 */
static bool
ensure_layout(Relation rel)
{
	List	   *index_oids = RelationGetIndexList(rel);
	uint64		building_at = layout_invals;
	const AttrNumber *attnum;
	MemoryContext oldcxt;
	Bitmapset  *changed = NULL;
	ListCell   *lc;

	if (LAYOUT_CURRENT() && jobs_relid == RelationGetRelid(rel) &&
		(!layout_usable || jobq_direct_indexes_same(&indexes, index_oids)))
	{
		list_free(index_oids);
		return layout_usable;
	}

	layout_valid_at = 0;
	jobs_relid = InvalidOid;
	claim_index = InvalidOid;
	indexes.n = 0;
	if (layout_cxt != NULL)
		MemoryContextDelete(layout_cxt);
	layout_cxt = AllocSetContextCreate(CacheMemoryContext, "jobq direct claim layout",
									   ALLOCSET_SMALL_SIZES);
	oldcxt = MemoryContextSwitchTo(layout_cxt);
	attnum = jobq_direct_job_columns(rel);
	layout_usable = attnum != NULL;
	if (layout_usable)
	{
		Oid			state_type = TupleDescAttr(RelationGetDescr(rel),
											   attnum[DCOL_STATE] - 1)->atttypid;

		state_ready = jobq_enum_label(state_type, "ready");
		state_running = jobq_enum_label(state_type, "running");
		for (int i = 0; i < lengthof(claim_changes); i++)
			changed = bms_add_member(changed, attnum[claim_changes[i]] -
									 FirstLowInvalidHeapAttributeNumber);
		layout_usable = OidIsValid(state_ready) && OidIsValid(state_running) &&
			jobq_direct_indexes_read(&indexes, rel, index_oids, changed);
	}
	if (layout_usable)
	{
		Oid			wanted = get_relname_relid("jobs_claim_idx", RelationGetNamespace(rel));

		foreach(lc, index_oids)
			if (lfirst_oid(lc) == wanted)
			{
				Relation	irel = index_open(wanted, AccessShareLock);

				if (read_claim_index(rel, irel, attnum))
					claim_index = wanted;
				index_close(irel, NoLock);
			}
		layout_usable = OidIsValid(claim_index);
	}
	MemoryContextSwitchTo(oldcxt);
	list_free(index_oids);

	jobs_relid = RelationGetRelid(rel);
	if (layout_invals == building_at)
		layout_valid_at = building_at;
	return layout_usable;
}

/*
 * still_claimable
 *	  The statement's WHERE clause on a row: the queue's, ready, due.
 */
static bool
still_claimable(const Datum *job, const bool *nulls, text *queue, TimestampTz now)
{
	text	   *q;

	if (nulls[DCOL_STATE] || DatumGetObjectId(job[DCOL_STATE]) != state_ready ||
		nulls[DCOL_RUN_AT] || DatumGetTimestampTz(job[DCOL_RUN_AT]) > now ||
		nulls[DCOL_QUEUE])
		return false;
	/* a deterministic collation: equal is byte-equal (texteq) */
	q = DatumGetTextPP(job[DCOL_QUEUE]);
	return VARSIZE_ANY_EXHDR(q) == VARSIZE_ANY_EXHDR(queue) &&
		memcmp(VARDATA_ANY(q), VARDATA_ANY(queue), VARSIZE_ANY_EXHDR(q)) == 0;
}

/*
 * queue_equal
 *	  The scan key's test of an index entry's queue against the claim's:
 *	  texteq under the deterministic collation that read_claim_index
 *	  requires, where equal is byte-equal (as still_claimable says).  btree
 *	  calls it on every entry of the queue on each leaf page it reads, up to
 *	  a few hundred; texteq itself looks up the collation and each value's
 *	  size first (bench/findings.md, "claim across 10 queues").  Queue names
 *	  are short, so their entries are never compressed; texteq takes any
 *	  other form.
 */
static Datum
queue_equal(PG_FUNCTION_ARGS)
{
	struct varlena *a = (struct varlena *) PG_GETARG_POINTER(0);
	struct varlena *b = (struct varlena *) PG_GETARG_POINTER(1);

	if ((VARATT_IS_EXTENDED(a) && !VARATT_IS_SHORT(a)) ||
		(VARATT_IS_EXTENDED(b) && !VARATT_IS_SHORT(b)))
		return texteq(fcinfo);
	PG_RETURN_BOOL(VARSIZE_ANY_EXHDR(a) == VARSIZE_ANY_EXHDR(b) &&
				   memcmp(VARDATA_ANY(a), VARDATA_ANY(b), VARSIZE_ANY_EXHDR(a)) == 0);
}

/*
 * One named queue of a claim: its scan of jobs_claim_idx, the lease of the
 * jobs claimed from it, and the row at the head of the scan (visible in
 * the snapshot and claimable), not yet locked.
 */
typedef struct ClaimSource
{
	text	   *queue;
	TimestampTz until;
	IndexScanDesc scan;
	TupleTableSlot *slot;
	Datum		job[DCOL_NCOLUMNS];
	bool		job_nulls[DCOL_NCOLUMNS];
} ClaimSource;

/*
 * source_advance
 *	  Move src's head to the next row of its scan that the statement's WHERE
 *	  clause takes; false when the scan is done.
 *
 *	  The scan has one key, the queue; run_at <= now is checked here, on
 *	  each entry the claim reaches (the entry's run_at is its row's: the
 *	  column is a key of the index), before its row is fetched.  As a key
 *	  of the scan it would be checked by btree on every entry of the queue
 *	  on each leaf page read, up to a few hundred, to take one: for
 *	  run_at, the third column, after a text one, a slow index_getattr and
 *	  a call of timestamptz_le each.
 */
static bool
source_advance(ClaimSource *src, TimestampTz now)
{
	IndexScanDesc scan = src->scan;

	for (;;)
	{
		/* index_getnext_slot, with the check of run_at in between */
		if (!scan->xs_heap_continue)
		{
			bool		isnull;

			if (index_getnext_tid(scan, ForwardScanDirection) == NULL)
				return false;
			Assert(scan->xs_itup != NULL);
			if (DatumGetTimestampTz(index_getattr(scan->xs_itup, CLAIM_INDEX_RUN_AT,
												  scan->xs_itupdesc, &isnull)) > now)
				continue;		/* a delayed job */
		}
		if (!index_fetch_heap(scan, src->slot))
			continue;
		slot_getallattrs(src->slot);
		jobq_direct_job_values(src->slot->tts_values, src->slot->tts_isnull, src->job,
							   src->job_nulls);
		if (still_claimable(src->job, src->job_nulls, src->queue, now))
			return true;
	}
}

/*
 * source_cmp
 *	  binaryheap's comparator of two sources by their heads in claim order
 *	  (priority, run_at, id), reversed: binaryheap keeps the greatest first,
 *	  the claim takes the least.
 */
static int
source_cmp(Datum a, Datum b, void *arg)
{
	const ClaimSource *sa = (const ClaimSource *) DatumGetPointer(a);
	const ClaimSource *sb = (const ClaimSource *) DatumGetPointer(b);
	int16		pa = DatumGetInt16(sa->job[DCOL_PRIORITY]);
	int16		pb = DatumGetInt16(sb->job[DCOL_PRIORITY]);
	TimestampTz ra = DatumGetTimestampTz(sa->job[DCOL_RUN_AT]);
	TimestampTz rb = DatumGetTimestampTz(sb->job[DCOL_RUN_AT]);
	int64		ia = DatumGetInt64(sa->job[DCOL_ID]);
	int64		ib = DatumGetInt64(sb->job[DCOL_ID]);

	if (pa != pb)
		return pa < pb ? 1 : -1;
	if (ra != rb)
		return ra < rb ? 1 : -1;
	return (ia < ib) - (ia > ib);
}

/*
 * What every row of one claim needs: the table, the statement's snapshot
 * and command, the scratch space of an update, and where the rows go.
 */
typedef struct ClaimCall
{
	Relation	rel;
	Relation   *irels;
	const AttrNumber *attnum;
	Snapshot	snapshot;
	CommandId	cid;
	TimestampTz now;
	text	   *worker;
	const pg_uuid_t *tokens;
	TupleTableSlot *locked;
	Datum	   *values;
	bool	   *nulls;
	Tuplestorestate *store;
	TupleDesc	desc;
	int			n;				/* jobs claimed so far */
} ClaimCall;

/*
 * claim_head
 *	  Lock and claim the row at src's head, as the n-th job of the claim;
 *	  false when another transaction holds it or it no longer qualifies.
 */
static bool
claim_head(ClaimCall *call, ClaimSource *src)
{
	const AttrNumber *attnum = call->attnum;
	TupleDesc	reldesc = RelationGetDescr(call->rel);
	Datum		job[DCOL_NCOLUMNS];
	bool		job_nulls[DCOL_NCOLUMNS];
	Datum	   *values = call->values;
	bool	   *nulls = call->nulls;
	TM_FailureData tmfd;
	TM_Result	tm;
	HeapTuple	old;
	HeapTuple	newtup;
	bool		should_free;
	LockTupleMode lockmode;
	Datum		out[RESULT_COLS];
	bool		out_nulls[RESULT_COLS];

	/* LockRows: NO KEY UPDATE SKIP LOCKED, the newest version */
	tm = table_tuple_lock(call->rel, &src->slot->tts_tid, call->snapshot, call->locked,
						  call->cid, LockTupleNoKeyExclusive, LockWaitSkip,
						  TUPLE_LOCK_FLAG_FIND_LAST_VERSION, &tmfd);
	if (tm == TM_WouldBlock || tm == TM_Deleted || tm == TM_SelfModified)
		return false;			/* held by another, gone, or ours already */
	if (tm != TM_Ok)
		elog(ERROR, "jobq: unexpected result %d locking a job to claim", (int) tm);
	old = ExecFetchSlotHeapTuple(call->locked, false, &should_free);
	heap_deform_tuple(old, reldesc, call->values, call->nulls);
	jobq_direct_job_values(call->values, call->nulls, job, job_nulls);
	/*
	 * EvalPlanQual: the row changed after the snapshot, and the lock is on
	 * its newest version, which must still qualify (if not, it stays locked
	 * and is not taken, as in the statement).  specs/
	 * iso_direct_claim_recheck.spec checks this line's message.
	 */
	if (tmfd.traversed)
	{
		bool		qualifies = still_claimable(job, job_nulls, src->queue, call->now);

		elog(DEBUG2, "jobq: job " INT64_FORMAT " changed after the claim's snapshot: %s",
			 DatumGetInt64(job[DCOL_ID]),
			 qualifies ? "still claimable, taken" : "no longer claimable, skipped");
		if (!qualifies)
			return false;
	}

	/*
	 * The UPDATE of the locked version, formed from its columns as deformed
	 * above (heap_modify_tuple would deform it once more); job[] keeps the
	 * old values.
	 */
	values[attnum[DCOL_STATE] - 1] = ObjectIdGetDatum(state_running);
	values[attnum[DCOL_ATTEMPT] - 1] = Int32GetDatum(DatumGetInt32(job[DCOL_ATTEMPT]) + 1);
	values[attnum[DCOL_TOKEN] - 1] = UUIDPGetDatum((pg_uuid_t *) &call->tokens[call->n]);
	values[attnum[DCOL_LOCKED_UNTIL] - 1] = TimestampTzGetDatum(src->until);
	values[attnum[DCOL_CLAIMED_AT] - 1] = TimestampTzGetDatum(call->now);
	values[attnum[DCOL_WORKER] - 1] = PointerGetDatum(call->worker);
	for (int i = 0; i < lengthof(claim_changes); i++)
		nulls[attnum[claim_changes[i]] - 1] = false;
	nulls[attnum[DCOL_WORKER] - 1] = call->worker == NULL;
	newtup = heap_form_tuple(reldesc, values, nulls);
	tm = heap_update(call->rel, &call->locked->tts_tid, newtup, call->cid, InvalidSnapshot, true,
					 &tmfd, &lockmode);
	if (tm != TM_Ok)
		elog(ERROR, "jobq: unexpected result %d updating a locked job", (int) tm);
	if (!HeapTupleIsHeapOnly(newtup))
		jobq_direct_indexes_insert(&indexes, call->irels, call->rel, newtup, true);

	/* the claim's row: id, queue, payload, attempt, max_attempts, token, lease, enqueued_at */
	out[0] = job[DCOL_ID];
	out[1] = job[DCOL_QUEUE];
	out[2] = job[DCOL_PAYLOAD];
	out[3] = values[attnum[DCOL_ATTEMPT] - 1];
	out[4] = job[DCOL_MAX_ATTEMPTS];
	out[5] = UUIDPGetDatum((pg_uuid_t *) &call->tokens[call->n]);
	out[6] = TimestampTzGetDatum(src->until);
	out[7] = job[DCOL_ENQUEUED_AT];
	memset(out_nulls, false, sizeof(out_nulls));
	/* 0.2.0's result: flow_id (NULL while jobq.jobs has no such column) */
	out[JOBQ_CLAIM_COL_FLOW_ID] = job[DCOL_FLOW_ID];
	out_nulls[JOBQ_CLAIM_COL_FLOW_ID] = job_nulls[DCOL_FLOW_ID];
	tuplestore_putvalues(call->store, call->desc, out, out_nulls);
	jobq_count_claim(job[DCOL_QUEUE], out[3], job[DCOL_ENQUEUED_AT], job[DCOL_RUN_AT],
					 TimestampTzGetDatum(call->now));
	jobq_direct_note_claim(DatumGetInt64(job[DCOL_ID]), &call->tokens[call->n],
						   &newtup->t_self);
	heap_freetuple(newtup);
	if (should_free)
		heap_freetuple(old);
	call->n++;
	return true;
}

/*
 * jobq_direct_claim
 *	  Claim up to max_jobs ready jobs of the nqueues queues (each with the
 *	  lease of the jobs claimed from it; distinct, existing, not paused;
 *	  settings: their cached settings), due by now, for worker (NULL:
 *	  none), the n-th job claimed getting tokens[n - 1]; put their result
 *	  rows into store (desc: the claim's 8 columns) in claim order and set
 *	  *claimed.  Returns false, having done nothing, when the statement
 *	  must claim (see the header).
 *
 *	  Several queues: one scan per queue, merged by their heads in claim
 *	  order (a binary heap); a scan moves on only when its head was taken
 *	  or skipped.  Each queue's scan is descended once, and only the rows
 *	  the claim takes are locked: the statement's lateral per queue locks
 *	  up to max_jobs rows in each, and its outer LIMIT drops the rest
 *	  (claim.c).  What it returns is the same: the best max_jobs rows
 *	  across the queues that no other transaction holds.
 */
bool
jobq_direct_claim(const JobqClaimQueue *queues, int nqueues, TimestampTz now, int max_jobs,
				  text *worker, const pg_uuid_t *tokens, Tuplestorestate *store,
				  TupleDesc desc, int *claimed)
{
	Oid			relid;
	Relation	rel;
	Relation	irel;
	Relation	irels[JOBQ_DIRECT_MAX_INDEXES];
	const AttrNumber *attnum;
	TupleDesc	reldesc;
	ClaimSource *srcs;
	ClaimSource *src;
	binaryheap *heap = NULL;
	FmgrInfo	queue_eq;
	ClaimCall	call;
	const char *why;

	*claimed = 0;
	if (!jobq_direct_writes)
		return false;
	why = IsolationUsesXactSnapshot() ? "REPEATABLE READ or SERIALIZABLE" : NULL;
	for (int i = 0; why == NULL && i < nqueues; i++)
		why = jobq_direct_queue_limited(queues[i].settings);
	if (why != NULL)
	{
		elog(DEBUG2, "jobq: claim of queue \"%s\" through SQL: %s",
			 text_to_cstring(queues[0].queue), why);
		return false;
	}
	/* as the executor: an UPDATE is refused here, before anything */
	if (XactReadOnly)
		PreventCommandIfReadOnly("UPDATE");
	PreventCommandIfParallelMode("UPDATE");

	relid = LAYOUT_CURRENT() ? jobs_relid : InvalidOid;
	if (!OidIsValid(relid))
		relid = get_relname_relid("jobs", get_namespace_oid("jobq", false));
	if (!OidIsValid(relid))
		return false;
	rel = table_open(relid, RowExclusiveLock);
	/* NB: the column numbers cannot change while we hold the lock */
	attnum = updates_plainly(rel) && ensure_layout(rel) ? jobq_direct_job_columns(rel) : NULL;
	if (attnum == NULL ||
		pg_class_aclcheck(relid, GetUserId(), ACL_UPDATE) != ACLCHECK_OK ||
		pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
	{
		elog(DEBUG2, "jobq: claim of queue \"%s\" through SQL: jobq.jobs, its indexes or the privileges are not as the direct claim expects",
			 text_to_cstring(queues[0].queue));
		table_close(rel, NoLock);
		return false;
	}
	CheckCmdReplicaIdentity(rel, CMD_UPDATE);
	reldesc = RelationGetDescr(rel);

	/* as the executor: every index's lock, then the scans */
	jobq_direct_indexes_open(&indexes, irels);
	irel = index_open(claim_index, RowExclusiveLock);
	PushActiveSnapshot(GetTransactionSnapshot());
	CommandCounterIncrement();
	UpdateActiveSnapshotCommandId();

	call.rel = rel;
	call.irels = irels;
	call.attnum = attnum;
	call.snapshot = GetActiveSnapshot();
	call.cid = GetCurrentCommandId(true);
	call.now = now;
	call.worker = worker;
	call.tokens = tokens;
	call.locked = table_slot_create(rel, NULL);
	call.values = palloc(sizeof(Datum) * reldesc->natts);
	call.nulls = palloc(sizeof(bool) * reldesc->natts);
	call.store = store;
	call.desc = desc;
	call.n = 0;

	/* each queue's scan, at its first claimable row */
	fmgr_info(queue_eq_proc, &queue_eq);
	queue_eq.fn_addr = queue_equal;
	srcs = palloc(sizeof(ClaimSource) * nqueues);
	if (nqueues > 1)
		heap = binaryheap_allocate(nqueues, source_cmp, NULL);
	for (int i = 0; i < nqueues; i++)
	{
		ScanKeyData key;

		src = &srcs[i];
		src->queue = queues[i].queue;
		src->until = jobq_add_interval(now, queues[i].lease);
		ScanKeyEntryInitializeWithInfo(&key, 0, 1, BTEqualStrategyNumber, InvalidOid,
									   queue_collation, &queue_eq,
									   PointerGetDatum(src->queue));
		src->slot = table_slot_create(rel, NULL);
		src->scan = index_beginscan(rel, irel, call.snapshot, 1, 0);
		/* the entries too, for their run_at (source_advance) */
		src->scan->xs_want_itup = true;
		index_rescan(src->scan, &key, 1, NULL, 0);
		if (heap != NULL && source_advance(src, now))
			binaryheap_add_unordered(heap, PointerGetDatum(src));
	}

	if (heap == NULL)
	{
		/* one queue: its rows in scan order */
		src = &srcs[0];
		while (call.n < max_jobs && source_advance(src, now))
			claim_head(&call, src);
	}
	else
	{
		/* several: always the least head */
		binaryheap_build(heap);
		while (call.n < max_jobs && !binaryheap_empty(heap))
		{
			src = (ClaimSource *) DatumGetPointer(binaryheap_first(heap));
			claim_head(&call, src);
			/* NB: no read past the last job taken */
			if (call.n == max_jobs)
				break;
			if (source_advance(src, now))
				binaryheap_replace_first(heap, PointerGetDatum(src));
			else
				binaryheap_remove_first(heap);
		}
	}

	for (int i = 0; i < nqueues; i++)
	{
		index_endscan(srcs[i].scan);
		ExecDropSingleTupleTableSlot(srcs[i].slot);
	}
	ExecDropSingleTupleTableSlot(call.locked);
	/* NB: a waiting claim calls this once per attempt */
	pfree(srcs);
	if (heap != NULL)
		binaryheap_free(heap);
	pfree(call.values);
	pfree(call.nulls);
	PopActiveSnapshot();
	index_close(irel, NoLock);
	jobq_direct_indexes_close(&indexes, irels);
	table_close(rel, NoLock);
	*claimed = call.n;
	if (nqueues == 1)
		elog(DEBUG2, "jobq: %d jobs of queue \"%s\" claimed directly", call.n,
			 text_to_cstring(queues[0].queue));
	else
		elog(DEBUG2, "jobq: %d jobs of %d queues claimed directly", call.n, nqueues);
	return true;
}
