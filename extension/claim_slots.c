/*-------------------------------------------------------------------------
 *
 * claim_slots.c
 *	  max_running by slot rows: the claims of a queue with max_running and
 *	  no rate run side by side (issue 19, doc/groups.md).
 *
 * jobq.queue_slots holds max_running rows per such queue, each naming the
 * job that took it last (job_id, token).  A slot is free when that job is
 * not running with that token: a job that finishes, fails, is retried,
 * released or swept frees its slot by leaving the running state, so none
 * of those write here, and a job whose lease expired holds its slot until
 * it is swept, as before.
 *
 * A claim locks up to as many free slots as it wants jobs (FOR NO KEY
 * UPDATE SKIP LOCKED), claims at most that many jobs and writes each
 * slot's new job.  Two claimers never hold the same slot, so at most
 * max_running jobs run, and no claimer waits for another: a transaction
 * that completes its batch and claims the next (jobq_complete_and_claim)
 * sees its own finished jobs' slots free while the others still see them
 * busy.  The statement's own test of a slot runs in the snapshot taken
 * before the lock; a slot that another claimer took and committed in
 * between is re-read by PostgreSQL's EvalPlanQual, which re-tests the
 * slot row but not the job that its outer side no longer finds.  So the
 * locked slots are tested again with a snapshot taken after the locks
 * were granted (a job running with a token never runs again with it:
 * that test can only find a slot busy that was free, not the reverse).
 *
 * A queue with a rate keeps the one lock per queue (claim_limits.c):
 * GCRA reads and writes one timestamp that claims must take in turn.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/claim_slots.c
 *
 *-------------------------------------------------------------------------
 */
#include "groups.h"

#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/uuid.h"

enum
{
	ST_LOCK_FREE,
	ST_STILL_FREE,
	ST_TAKE,
	ST_RESIZE,
	NUM_STATEMENTS
};

/* the test of a slot's job; u the slot (or its copy), j the job */
#define SLOT_BUSY_SQL(U) \
	"EXISTS (SELECT 1 FROM jobq.jobs j" \
	" WHERE j.id = " U ".job_id AND j.state = 'running' AND j.token = " U ".token)"

static const JobqStatement statements[NUM_STATEMENTS] = {
	/* $1 queue, $2 how many: free slots, locked (0 and a zero uuid: never taken) */
	[ST_LOCK_FREE] = {"slots_lock_free",
		"SELECT s.slot, COALESCE(s.job_id, 0),"
		"  COALESCE(s.token, '00000000-0000-0000-0000-000000000000'::uuid)"
		" FROM jobq.queue_slots s"
		" WHERE s.queue = $1 AND NOT " SLOT_BUSY_SQL("s")
		" LIMIT $2 FOR NO KEY UPDATE OF s SKIP LOCKED",
		2, {TEXTOID, INT8OID}},
	/* $1 slots, $2 their jobs, $3 tokens: those still free in a new snapshot */
	[ST_STILL_FREE] = {"slots_still_free",
		"SELECT u.slot FROM unnest($1, $2, $3) AS u(slot, job_id, token)"
		" WHERE NOT " SLOT_BUSY_SQL("u"),
		3, {INT4ARRAYOID, INT8ARRAYOID, UUIDARRAYOID}},
	/* $1 queue, $2 slots, $3 the jobs that took them, $4 their tokens */
	[ST_TAKE] = {"slots_take",
		"UPDATE jobq.queue_slots s SET job_id = u.job_id, token = u.token"
		" FROM unnest($2, $3, $4) AS u(slot, job_id, token)"
		" WHERE s.queue = $1 AND s.slot = u.slot",
		4, {TEXTOID, INT4ARRAYOID, INT8ARRAYOID, UUIDARRAYOID}},

	/*
	 * $1 queue, $2 max_running: the slots above go, the missing ones come,
	 * given to the running jobs no kept slot names (a queue that gets the
	 * limit counts the jobs already running)
	 */
	[ST_RESIZE] = {"slots_resize",
		"WITH d AS (DELETE FROM jobq.queue_slots WHERE queue = $1 AND slot > $2),"
		" n AS (SELECT g AS slot, pg_catalog.row_number() OVER (ORDER BY g) AS n"
		"   FROM pg_catalog.generate_series(1, $2) g"
		"   WHERE NOT EXISTS (SELECT 1 FROM jobq.queue_slots s"
		"                     WHERE s.queue = $1 AND s.slot = g)),"
		" r AS (SELECT j.id, j.token, pg_catalog.row_number() OVER (ORDER BY j.id) AS n"
		"   FROM jobq.jobs j WHERE j.state = 'running' AND j.queue = $1"
		"   AND NOT EXISTS (SELECT 1 FROM jobq.queue_slots s WHERE s.queue = $1"
		"                   AND s.slot <= $2 AND s.job_id = j.id AND s.token = j.token))"
		" INSERT INTO jobq.queue_slots (queue, slot, job_id, token)"
		" SELECT $1, n.slot, r.id, r.token FROM n LEFT JOIN r ON r.n = n.n",
		2, {TEXTOID, INT4OID}},
};

static SPIPlanPtr plans[NUM_STATEMENTS];

const JobqStatements jobq_claim_slots_statements = {statements, NUM_STATEMENTS, plans, NULL};

/*
 * slot_arrays
 *	  args[0..2]: the int4[] of n slots, the int8[] of their jobs and the
 *	  uuid[] of the jobs' tokens.
 */
static void
slot_arrays(Datum *slots, Datum *jobs, Datum *tokens, int n, Datum *args)
{
	args[0] = PointerGetDatum(construct_array(slots, n, INT4OID, 4, true, TYPALIGN_INT));
	args[1] = PointerGetDatum(construct_array(jobs, n, INT8OID, 8, FLOAT8PASSBYVAL,
											  TYPALIGN_DOUBLE));
	args[2] = PointerGetDatum(construct_array(tokens, n, UUIDOID, UUID_LEN, false,
											  TYPALIGN_CHAR));
}

/*
 * jobq_queue_slotted
 *	  Whether claims of the queue take slots (max_running without a rate).
 */
bool
jobq_queue_slotted(const JobqQueueSettings *settings)
{
	return jobq_setting_020(settings, max_running) > 0 && jobq_setting_020(settings, rate) == 0;
}

/*
 * jobq_slots_lock
 *	  Lock up to want free slots of queue, to the end of the
 *	  (sub)transaction; returns how many are free, their numbers in
 *	  *slots (palloc'd in the caller's context).
 */
int64
jobq_slots_lock(text *queue, int64 want, Datum **slots)
{
	Datum		args[3] = {PointerGetDatum(queue), Int64GetDatum(want)};
	Datum	   *nums;
	Datum	   *jobs;
	Datum	   *tokens;
	uint64		locked;
	int			rc;

	*slots = NULL;
	/* NB: not read-only: the locks need a snapshot of their own */
	rc = SPI_execute_plan(jobq_plan(&jobq_claim_slots_statements, ST_LOCK_FREE), args, NULL,
						  false, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "lock free slots");
	locked = SPI_processed;
	if (locked == 0)
		return 0;
	nums = palloc(sizeof(Datum) * locked);
	jobs = palloc(sizeof(Datum) * locked);
	tokens = palloc(sizeof(Datum) * locked);
	for (uint64 r = 0; r < locked; r++)
	{
		HeapTuple	tuple = SPI_tuptable->vals[r];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;

		nums[r] = SPI_getbinval(tuple, desc, 1, &isnull);
		jobs[r] = SPI_getbinval(tuple, desc, 2, &isnull);
		tokens[r] = SPI_datumTransfer(SPI_getbinval(tuple, desc, 3, &isnull), false, UUID_LEN);
	}
	SPI_freetuptable(SPI_tuptable);

	/* the test again, after the locks (see the header) */
	slot_arrays(nums, jobs, tokens, (int) locked, args);
	rc = SPI_execute_plan(jobq_plan(&jobq_claim_slots_statements, ST_STILL_FREE), args, NULL,
						  false, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "test the locked slots");
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		bool		isnull;

		nums[r] = SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 1, &isnull);
	}
	locked = SPI_processed;
	SPI_freetuptable(SPI_tuptable);
	pfree(jobs);
	pfree(tokens);
	*slots = nums;
	return (int64) locked;
}

/*
 * jobq_slots_take
 *	  After a claim of claimed jobs (their rows in SPI_tuptable, which stays)
 *	  into the first claimed of the slots jobq_slots_lock returned: each
 *	  slot names its job.
 */
void
jobq_slots_take(text *queue, Datum *slots, uint64 claimed)
{
	SPITupleTable *rows = SPI_tuptable;
	Datum	   *jobs = palloc(sizeof(Datum) * claimed);
	Datum	   *tokens = palloc(sizeof(Datum) * claimed);
	Datum		args[4];
	int			rc;

	for (uint64 r = 0; r < claimed; r++)
	{
		bool		isnull;

		/* jobq_claim's columns: 1 id, 6 token */
		jobs[r] = SPI_getbinval(rows->vals[r], rows->tupdesc, 1, &isnull);
		tokens[r] = SPI_getbinval(rows->vals[r], rows->tupdesc, 6, &isnull);
	}
	args[0] = PointerGetDatum(queue);
	slot_arrays(slots, jobs, tokens, (int) claimed, &args[1]);
	rc = SPI_execute_plan(jobq_plan(&jobq_claim_slots_statements, ST_TAKE), args, NULL, false,
						  0);
	jobq_spi_check(rc, SPI_OK_UPDATE, "take slots");
	if (SPI_processed != claimed)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("claimed %llu jobs into %llu slots",
						(unsigned long long) claimed, (unsigned long long) SPI_processed)));
	pfree(jobs);
	pfree(tokens);
	SPI_tuptable = rows;
	SPI_processed = claimed;
}

/*
 * jobq_slots_resize
 *	  After jobq_create_queue or jobq_alter_queue set the queue's
 *	  max_running (0: no limit, no slots): its slot rows.  The queue row is
 *	  locked.  Inside SPI.
 */
void
jobq_slots_resize(text *queue, int32 max_running)
{
	Datum		args[2] = {PointerGetDatum(queue), Int32GetDatum(max_running)};
	int			rc;

	rc = SPI_execute_plan(jobq_plan(&jobq_claim_slots_statements, ST_RESIZE), args, NULL, false,
						  0);
	jobq_spi_check(rc, SPI_OK_INSERT, "resize the queue's slots");
}
