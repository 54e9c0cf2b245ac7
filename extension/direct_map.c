/*-------------------------------------------------------------------------
 *
 * direct_map.c
 *	  The jobs this backend claimed: where their rows are, for the direct
 *	  complete (direct_complete.c).
 *
 * A claim notes, for each job it returned, the job's id, its token and
 * where the claim wrote the running row (its ctid and xmin).  A complete
 * on the same connection that finds its job here can go straight to the
 * row instead of through a DELETE statement.  The map is only a hint:
 * direct_complete.c reads the row at that place under its own snapshot
 * and uses it only when it is visible and still has this id and token, so
 * an entry left behind by a claim that rolled back, by a job swept and
 * claimed again elsewhere, or by a table rewritten since, costs a look
 * and a fall back to the statement, never a wrong delete.
 *
 * The map is a fixed array indexed by the id's low bits: ids are handed
 * out in order, so the jobs of one claim land in different slots, and a
 * new claim overwrites the slots of older ones.  A worker completes what
 * it claimed long before 2 x JOBQ_CLAIM_MAX later claims reuse the slot;
 * if not, its complete takes the statement.  No allocation, no memory
 * context, nothing to clean up at transaction end.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/direct_map.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"
#include "direct.h"

#include "access/xact.h"

/* a power of two above JOBQ_CLAIM_MAX: one claim never evicts itself */
#define DIRECT_MAP_SIZE		2048
#define DIRECT_MAP_SLOT(id)	((uint64) (id) & (DIRECT_MAP_SIZE - 1))

StaticAssertDecl(DIRECT_MAP_SIZE >= JOBQ_CLAIM_MAX,
				 "a claim's jobs must fit the map");

static JobqDirectClaim direct_map[DIRECT_MAP_SIZE];

/*
 * jobq_direct_note_claim
 *	  This transaction's claim statement wrote the running row of job id,
 *	  with token, at tid.
 */
void
jobq_direct_note_claim(int64 id, const pg_uuid_t *token, ItemPointer tid)
{
	JobqDirectClaim *e = &direct_map[DIRECT_MAP_SLOT(id)];

	e->id = id;
	e->token = *token;
	ItemPointerCopy(tid, &e->tid);
	e->xmin = GetCurrentTransactionIdIfAny();
	e->used = TransactionIdIsValid(e->xmin);
}

/*
 * jobq_direct_find_claim
 *	  The entry of job id claimed with token by this backend, or NULL.
 */
const JobqDirectClaim *
jobq_direct_find_claim(int64 id, const pg_uuid_t *token)
{
	JobqDirectClaim *e = &direct_map[DIRECT_MAP_SLOT(id)];

	if (!e->used || e->id != id || memcmp(e->token.data, token->data, UUID_LEN) != 0)
		return NULL;
	return e;
}

/*
 * jobq_direct_forget_claim
 *	  Job id is done with: its entry goes.
 */
void
jobq_direct_forget_claim(int64 id)
{
	JobqDirectClaim *e = &direct_map[DIRECT_MAP_SLOT(id)];

	if (e->id == id)
		e->used = false;
}
