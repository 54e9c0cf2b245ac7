/*-------------------------------------------------------------------------
 *
 * direct_complete.c
 *	  Complete a job this backend claimed by deleting its row directly.
 *
 * A complete through SQL is a DELETE ... WHERE id = $1 AND token = $2:
 * SPI, a plan-cache check, the executor's start-up of a ModifyTable over
 * a primary key scan, to delete one row whose place the claim already
 * knew.  That statement was 64,000 of the 457,000 instructions of a
 * claim-and-complete cycle (bench/findings.md, fifth round); the
 * heap_delete in it, 4,300.
 *
 * The claim notes where it wrote each job's running row (direct_map.c).
 * jobq_direct_complete finds the job there, reads the row at that place
 * under a snapshot taken as SPI would take the statement's, and deletes
 * it with heap_delete when it is visible and holds this job's id and
 * token: then it is the one live row the statement would have found
 * (the id is the primary key).  heap_delete refuses a row another
 * transaction updated or deleted since the snapshot (TM_Updated,
 * TM_Deleted), after waiting for one still in progress, as the
 * executor's does; we then leave the job to the statement, which follows
 * the update chain and decides with its own snapshot.  The same bookkeeping
 * as the statement follows: the counters (counters.c) here, the awaiters
 * (jobq_await_note) in the caller, for both paths.  Indexes are not
 * touched by a delete in PostgreSQL; vacuum removes their entries.
 *
 * What the executor would do besides the delete, this file does too
 * (read-only and parallel-mode checks, the DELETE and SELECT privileges,
 * the replica identity check of published tables; heap_delete itself
 * writes the WAL, the old key for logical decoding, TOAST and the table
 * statistics) or leaves to the statement, returning false with nothing
 * written:
 *
 *	- a job this backend did not claim, or claimed with another token;
 *	- SERIALIZABLE (the statement's scan takes predicate locks);
 *	- jobq.jobs with DELETE triggers (an application's foreign key to job
 *	  ids is one), rules, row security, another access method, or a
 *	  column this file does not know (a new column may need work at
 *	  complete: the flows' dependents, a group's slot);
 *	- a job whose row is no longer where, or what, the claim wrote;
 *	- a job with a group_key (groups.c keeps its group's row at complete);
 *	- a queue that the settings cache does not find;
 *	- a queue that keeps completed history when jobq.history is not as
 *	  direct_history.c expects (which writes the history row otherwise);
 *	- a queue with groups, a concurrency limit (max_running) or a rate
 *	  (issue 19: a finished job frees a slot), or one that notifies
 *	  finished jobs (notify_finished, issue 16);
 *	- the setting jobq.direct_writes off.
 *
 * A job in a flow (flow_id set) is completed here too, and the call says
 * so (JobqDirectCall.flow_job): the caller then resolves its dependents
 * (flows.c), in a statement that takes its snapshot after this delete.  A
 * dependent enqueued meanwhile gives the job a new row version (flows.c
 * marks every parent) under a lock that heap_delete waits for, so that
 * heap_delete refuses the version read here and the statement takes the
 * job; one enqueued before the snapshot is seen by the caller's statement.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/direct_complete.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"
#include "counters.h"
#include "direct.h"

#include "access/heapam.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_am.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "tcop/utility.h"
#include "utils/acl.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

bool		jobq_direct_writes = true;

/*
 * The columns of jobq.jobs the direct complete knows (JobqDirectColumn):
 * those it reads, and those that need nothing at complete.  A column that
 * is not here makes every complete take the statement; a release that
 * adds a column to jobq.jobs adds it here once completing such a job needs
 * nothing more than the delete (or teaches this file what it needs).
 */
static const JobqColumn direct_columns[DCOL_NCOLUMNS] = {	/* type InvalidOid: jobq.job_state */
	[DCOL_ID] = {"id", INT8OID},
	[DCOL_QUEUE] = {"queue", TEXTOID},
	[DCOL_TOKEN] = {"token", UUIDOID},
	[DCOL_CLAIMED_AT] = {"claimed_at", TIMESTAMPTZOID},
	[DCOL_STATE] = {"state", InvalidOid},
	[DCOL_PRIORITY] = {"priority", INT2OID},
	[DCOL_RUN_AT] = {"run_at", TIMESTAMPTZOID},
	[DCOL_ATTEMPT] = {"attempt", INT4OID},
	[DCOL_MAX_ATTEMPTS] = {"max_attempts", INT4OID},
	[DCOL_LOCKED_UNTIL] = {"locked_until", TIMESTAMPTZOID},
	[DCOL_WORKER] = {"worker", TEXTOID},
	[DCOL_ENQUEUED_AT] = {"enqueued_at", TIMESTAMPTZOID},
	[DCOL_DEDUPE_KEY] = {"dedupe_key", TEXTOID},
	[DCOL_ERRORS] = {"errors", JSONBOID},
	[DCOL_PAYLOAD] = {"payload", JSONBOID},
	/* a job with a group_key takes the statement (groups.c keeps its group) */
	[DCOL_GROUP_KEY] = {"group_key", TEXTOID, true},
	[DCOL_GROUP_SEQ] = {"group_seq", INT8OID, true},
	/* a job in a flow: the caller resolves its dependents (flows.c) */
	[DCOL_FLOW_ID] = {"flow_id", INT8OID, true},
	[DCOL_PENDING_DEPS] = {"pending_deps", INT4OID, true},
};

/*
 * The checked layout of jobq.jobs, as insert_job.c keeps its own: valid
 * while layout_valid_at equals layout_invals, which every relcache
 * invalidation of the table (or of all tables) bumps.
 */
static uint64 layout_invals = 1;
static uint64 layout_valid_at = 0;
static bool layout_usable = false;
static Oid	jobs_relid = InvalidOid;
static AttrNumber attnum[DCOL_NCOLUMNS];

#define LAYOUT_CURRENT()	(layout_valid_at == layout_invals)

/*
 * jobq_direct_define_gucs
 *	  Called from _PG_init.
 */
void
jobq_direct_define_gucs(void)
{
	DefineCustomBoolVariable("jobq.direct_writes",
							 "Whether a complete deletes the row its session's claim wrote directly.",
							 "Off: every complete runs its DELETE statement.  Both give the same result.",
							 &jobq_direct_writes,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
}

/*
 * jobq_direct_inval
 *	  Relcache invalidation of relid (InvalidOid: of every relation), passed
 *	  on by queue_cache.c's callback.
 */
void
jobq_direct_inval(Oid relid)
{
	if (relid == InvalidOid || relid == jobs_relid || jobs_relid == InvalidOid)
		layout_invals++;
}

/*
 * deletes_plainly
 *	  Whether a DELETE from rel would do no more than heap_delete: no
 *	  DELETE triggers (row or statement), no rules, no row security, a
 *	  heap table.  Read from the relcache on every call; cheap.
 */
static bool
deletes_plainly(Relation rel)
{
	TriggerDesc *trig = rel->trigdesc;

	if (trig != NULL &&
		(trig->trig_delete_before_row || trig->trig_delete_after_row ||
		 trig->trig_delete_instead_row || trig->trig_delete_before_statement ||
		 trig->trig_delete_after_statement || trig->trig_delete_old_table))
		return false;
	return rel->rd_rel->relkind == RELKIND_RELATION &&
		rel->rd_rel->relam == HEAP_TABLE_AM_OID &&
		rel->rd_rules == NULL &&
		!rel->rd_rel->relrowsecurity;
}

/*
 * read_layout
 *	  Find the columns this file reads, check their types, and that the
 *	  table has no column this file does not know.
 */
static bool
read_layout(Relation rel)
{
	return jobq_match_columns(RelationGetDescr(rel), direct_columns, DCOL_NCOLUMNS,
							  sizeof(JobqColumn), attnum);
}

/*
 * ensure_layout
 *	  Whether rel (jobq.jobs, open and locked) has the layout this file
 *	  handles; checked again after any invalidation of it.
 */
static bool
ensure_layout(Relation rel)
{
	uint64		building_at = layout_invals;

	if (LAYOUT_CURRENT() && jobs_relid == RelationGetRelid(rel))
		return layout_usable;
	layout_valid_at = 0;
	jobs_relid = RelationGetRelid(rel);
	layout_usable = read_layout(rel);
	if (layout_invals == building_at)
		layout_valid_at = building_at;
	return layout_usable;
}

/*
 * jobq_direct_job_columns
 *	  The attribute numbers of the columns of jobq.jobs (rel, open and
 *	  locked) by JobqDirectColumn, or NULL when the table has a column the
 *	  direct paths do not know; for the direct claim too.
 */
const AttrNumber *
jobq_direct_job_columns(Relation rel)
{
	return ensure_layout(rel) ? attnum : NULL;
}

/*
 * fall_back
 *	  Say why the statement completes job id, and let it.
 */
static bool
fall_back(int64 id, const char *why)
{
	elog(DEBUG2, "jobq: job " INT64_FORMAT " completed through SQL: %s", id, why);
	return false;
}

/*
 * start
 *	  Open jobq.jobs for call, check what holds for every job of it, and
 *	  push the snapshot SPI would give the statement.  Leaves call unusable
 *	  (why says why) when the statement must complete its jobs.
 */
static void
start(JobqDirectCall *call)
{
	Oid			relid;
	Relation	rel;

	call->state = -1;
	if (IsolationIsSerializable())
	{
		call->why = "serializable transaction";
		return;
	}
	/* as the executor: a DELETE is refused here, before anything */
	if (XactReadOnly)
		PreventCommandIfReadOnly("DELETE");
	PreventCommandIfParallelMode("DELETE");

	(void) jobq_queues_relid(); /* the relcache callback is registered */
	relid = LAYOUT_CURRENT() ? jobs_relid : InvalidOid;
	if (!OidIsValid(relid))
		relid = get_relname_relid("jobs", get_namespace_oid("jobq", false));
	if (!OidIsValid(relid))
	{
		call->why = "no table jobq.jobs";
		return;
	}
	rel = table_open(relid, RowExclusiveLock);
	if (!deletes_plainly(rel))
		call->why = "jobq.jobs has DELETE triggers, rules or row security";
	else if (!ensure_layout(rel))
		call->why = "jobq.jobs has columns the direct complete does not know";
	else if (pg_class_aclcheck(relid, GetUserId(), ACL_DELETE) != ACLCHECK_OK ||
			 pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		call->why = "no DELETE or SELECT privilege on jobq.jobs";
	if (call->why != NULL)
	{
		table_close(rel, NoLock);
		return;
	}
	CheckCmdReplicaIdentity(rel, CMD_DELETE);

	PushActiveSnapshot(GetTransactionSnapshot());
	CommandCounterIncrement();
	UpdateActiveSnapshotCommandId();
	call->jobs = rel;
	call->values = palloc(sizeof(Datum) * RelationGetDescr(rel)->natts);
	call->nulls = palloc(sizeof(bool) * RelationGetDescr(rel)->natts);
	call->state = 1;
}

/*
 * jobq_direct_finish
 *	  End call: pop its snapshot, close what it opened (keeping the locks).
 */
void
jobq_direct_finish(JobqDirectCall *call)
{
	if (call->state <= 0)
		return;
	PopActiveSnapshot();
	if (call->history != NULL)
		table_close(call->history, NoLock);
	table_close(call->jobs, NoLock);
	pfree(call->values);
	pfree(call->nulls);
	call->state = 0;
}

/*
 * claimed_row
 *	  Read the row the claim wrote for job id with token, into call's
 *	  values by DCOL_* (a copy, valid for the call), or say why it is not
 *	  the job's running row any more.
 */
static const char *
claimed_row(JobqDirectCall *call, const JobqDirectClaim *claim, int64 id,
			const pg_uuid_t *token, Datum *job, bool *job_nulls, ItemPointer tid)
{
	Relation	rel = call->jobs;
	HeapTupleData tuple;
	HeapTuple	copy;
	Buffer		buffer;
	const char *why = NULL;

	tuple.t_self = claim->tid;
	if (!heap_fetch(rel, GetActiveSnapshot(), &tuple, &buffer, false))
		return "its row is not visible where the claim wrote it";
	if (HeapTupleHeaderGetRawXmin(tuple.t_data) != claim->xmin)
		why = "its row is not the claim's";
	copy = why == NULL ? heap_copytuple(&tuple) : NULL;
	ReleaseBuffer(buffer);
	if (why != NULL)
		return why;

	heap_deform_tuple(copy, RelationGetDescr(rel), call->values, call->nulls);
	jobq_direct_job_values(call->values, call->nulls, job, job_nulls);
	if (job_nulls[DCOL_ID] || DatumGetInt64(job[DCOL_ID]) != id)
		return "another job's row is where the claim wrote it";
	if (!job_nulls[DCOL_GROUP_KEY])
		return "the job has a group";
	if (job_nulls[DCOL_TOKEN] ||
		memcmp(DatumGetUUIDP(job[DCOL_TOKEN])->data, token->data, UUID_LEN) != 0)
		return "its row has another token";
	*tid = copy->t_self;
	return NULL;
}

/*
 * jobq_direct_job_values
 *	  A deformed row of jobq.jobs (values, nulls by attribute) by
 *	  JobqDirectColumn; a column absent under 0.1.0's SQL reads as NULL.
 */
void
jobq_direct_job_values(const Datum *values, const bool *nulls, Datum *job, bool *job_nulls)
{
	for (int c = 0; c < DCOL_NCOLUMNS; c++)
	{
		bool		absent = attnum[c] == InvalidAttrNumber;

		job[c] = absent ? (Datum) 0 : values[attnum[c] - 1];
		job_nulls[c] = absent || nulls[attnum[c] - 1];
	}
}

/*
 * jobq_direct_queue_limited
 *	  Why a queue's jobs are not claimed and completed as plain rows (its
 *	  groups, concurrency limit or rate, issue 19), or NULL.
 */
const char *
jobq_direct_queue_limited(const JobqQueueSettings *settings)
{
	if (jobq_setting_020(settings, group_mode) != 0 ||
		jobq_setting_020(settings, max_running) > 0 ||
		jobq_setting_020(settings, rate) > 0 ||
		jobq_setting_020(settings, group_rate) > 0)
		return "its queue has groups, a concurrency limit or a rate";
	return NULL;
}

/*
 * queue_allows
 *	  Whether the settings of the job's queue let its complete be a delete
 *	  (and a history row when *keeps); else why not.
 */
static const char *
queue_allows(text *queue, bool *keeps)
{
	JobqQueueSettings settings;

	const char *why;

	if (!jobq_queue_settings(queue, &settings))
		return "its queue is not in the settings cache";
	why = jobq_direct_queue_limited(&settings);
	if (why != NULL)
		return why;
	if (jobq_setting_020(&settings, notify_finished))
		return "its queue notifies finished jobs";
	*keeps = settings.keeps_completed;
	return NULL;
}

/*
 * jobq_direct_complete
 *	  Complete job id with token directly if this backend claimed it and
 *	  nothing in the header's list stands in the way: delete its row, write
 *	  its history row when its queue keeps history, and count it.  true:
 *	  completed (the caller notes the awaiters, and with call->flow_job
 *	  resolves the job's dependents).  false: nothing was
 *	  written, the statement is to complete it (or find the token stale).
 *	  result is the job's result or NULL; finished_at the complete's now.
 *	  call spans the jobs of one SQL call; jobq_direct_finish ends it.
 */
bool
jobq_direct_complete(JobqDirectCall *call, int64 id, const pg_uuid_t *token, Jsonb *result,
					 TimestampTz finished_at)
{
	const JobqDirectClaim *claim;
	Datum		job[DCOL_NCOLUMNS];
	bool		job_nulls[DCOL_NCOLUMNS];
	ItemPointerData tid;
	TM_FailureData tmfd;
	text	   *queue;
	bool		keeps = false;
	const char *why;

	call->flow_job = false;
	if (!jobq_direct_writes)
		return false;
	claim = jobq_direct_find_claim(id, token);
	if (claim == NULL)
		return false;			/* not claimed here: the usual case of a stale token */
	if (call->state == 0)
		start(call);
	if (call->state < 0)
		return fall_back(id, call->why);

	why = claimed_row(call, claim, id, token, job, job_nulls, &tid);
	if (why != NULL)
		return fall_back(id, why);
	queue = DatumGetTextPP(job[DCOL_QUEUE]);
	why = queue_allows(queue, &keeps);
	if (why == NULL && keeps)
	{
		if (call->history_state == 0)
		{
			call->history = jobq_direct_history_open();
			call->history_state = call->history != NULL ? 1 : -1;
		}
		if (call->history_state < 0)
			why = "jobq.history has triggers, rules, row security, constraints, columns or indexes the direct complete does not handle";
	}
	/* the row, unless another transaction changed it since the snapshot */
	if (why == NULL &&
		heap_delete(call->jobs, &tid, GetCurrentCommandId(true), InvalidSnapshot,
					true, &tmfd, false) != TM_Ok)
		why = "its row changed since the snapshot";
	if (why != NULL)
		return fall_back(id, why);

	if (keeps)
		jobq_direct_history_insert(call->history, job, job_nulls, finished_at, result);

	/* what the statement's RETURNING would have counted (counters.c) */
	jobq_count(queue, keeps ? JOBQ_EV_COMPLETED : JOBQ_EV_COMPLETED_GONE, 1);
	if (!job_nulls[DCOL_CLAIMED_AT])
		jobq_count_latency(queue, false, DatumGetTimestampTz(job[DCOL_CLAIMED_AT]),
						   finished_at);
	jobq_direct_forget_claim(id);
	call->flow_job = !job_nulls[DCOL_FLOW_ID];
	call->flow_id = call->flow_job ? DatumGetInt64(job[DCOL_FLOW_ID]) : 0;
	call->kept = keeps;
	elog(DEBUG2, "jobq: job " INT64_FORMAT " completed directly%s%s", id,
		 keeps ? ", with its history row" : "", call->flow_job ? ", in a flow" : "");
	return true;
}
