/*-------------------------------------------------------------------------
 *
 * checkpoint.c
 *	  jobq_checkpoint and jobq_checkpoint_read: progress a running job
 *	  stores, which the job's next attempt reads back.
 *
 * A long job (a million rows to copy, a video in ten steps) saves how far
 * it got after each step; when its worker crashes, its lease is lost or
 * the attempt fails and is retried, the next attempt reads the state and
 * resumes there instead of starting over.
 *
 * The state lives in jobq.checkpoints, one row per job, not in a column
 * of jobq.jobs: a job that never checkpoints pays nothing (its rows stay
 * as narrow as before, no claim, complete or enqueue statement changes).
 * A checkpoint is kept as long as its job is, live or in history: a dead
 * job that jobq_retry makes live again resumes from it too.
 *
 * Both calls are fenced by the token like jobq_complete: the write locks
 * the job's row (FOR NO KEY UPDATE, which the sweep's and a new claim's
 * UPDATE wait for) and checks the token under that lock, so a stale
 * attempt never overwrites the state of the attempt that holds the job
 * now.  A stale write returns false and is counted in stale_acks.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/checkpoint.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

PG_FUNCTION_INFO_V1(jobq_checkpoint);
PG_FUNCTION_INFO_V1(jobq_checkpoint_read);

enum
{
	ST_SAVE,
	ST_READ,
	NUM_STATEMENTS
};

static const JobqStatement statements[NUM_STATEMENTS] = {
	/* $1 id, $2 token, $3 state, $4 now: stored if the token holds the job */
	[ST_SAVE] = {"checkpoint_save",
		"WITH j AS (SELECT id, attempt FROM jobq.jobs"
		"           WHERE id = $1 AND token = $2 AND state = 'running'"
		"           FOR NO KEY UPDATE)"
		" INSERT INTO jobq.checkpoints AS c (id, attempt, saved_at, state)"
		" SELECT j.id, j.attempt, $4, $3 FROM j"
		" ON CONFLICT (id) DO UPDATE"
		"   SET attempt = EXCLUDED.attempt, saved_at = EXCLUDED.saved_at, state = EXCLUDED.state",
		4, {INT8OID, UUIDOID, JSONBOID, TIMESTAMPTZOID}},
	/* $1 id, $2 token: the job's checkpoint, if the token holds the job */
	[ST_READ] = {"checkpoint_read",
		"SELECT c.state FROM jobq.jobs j JOIN jobq.checkpoints c ON c.id = j.id"
		" WHERE j.id = $1 AND j.token = $2",
		2, {INT8OID, UUIDOID}},
};

static SPIPlanPtr plans[NUM_STATEMENTS];

const JobqStatements jobq_checkpoint_statements = {statements, NUM_STATEMENTS, plans, NULL};

/*
 * jobq_checkpoint(id bigint, token uuid, state jsonb) -> boolean
 *	  Store state as the job's progress, replacing the one before.  true
 *	  when stored; false when the token no longer holds the job (nothing
 *	  changes).  A state over JOBQ_CHECKPOINT_MAX bytes is 54000.
 */
Datum
jobq_checkpoint(PG_FUNCTION_ARGS)
{
	Datum		args[4];
	Jsonb	   *state;
	bool		stored;
	int			rc;

	jobq_require(fcinfo, 0, "id");
	jobq_require(fcinfo, 1, "token");
	jobq_require(fcinfo, 2, "state");
	state = PG_GETARG_JSONB_P(2);
	if (VARSIZE(state) > JOBQ_CHECKPOINT_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("state is %zu bytes, over the limit of %d bytes",
						(Size) VARSIZE(state), JOBQ_CHECKPOINT_MAX),
				 errhint("Checkpoint how far the job got, and store large data elsewhere.")));
	args[0] = PG_GETARG_DATUM(0);
	args[1] = PG_GETARG_DATUM(1);
	args[2] = JsonbPGetDatum(state);
	args[3] = TimestampTzGetDatum(jobq_now());

	jobq_spi_connect();
	jobq_check_job(args[0], JOBQ_PRIV_CLAIM);
	rc = SPI_execute_plan(jobq_plan(&jobq_checkpoint_statements, ST_SAVE), args, NULL,
						  false, 0);
	jobq_spi_check(rc, SPI_OK_INSERT, "store checkpoint");
	stored = SPI_processed > 0;
	if (!stored)
		jobq_count_stale(args[0]);
	jobq_spi_finish();
	PG_RETURN_BOOL(stored);
}

/*
 * jobq_checkpoint_read(id bigint, token uuid) -> jsonb
 *	  The state the job's last checkpoint stored (in this attempt or an
 *	  earlier one); NULL when it has none, or when the token no longer
 *	  holds the job.
 */
Datum
jobq_checkpoint_read(PG_FUNCTION_ARGS)
{
	return jobq_fenced_read(fcinfo, &jobq_checkpoint_statements, ST_READ, "read checkpoint");
}
