/*-------------------------------------------------------------------------
 *
 * spawn.c
 *	  jobq_spawn: a running job enqueues jobs (its children), fenced by
 *	  its token.
 *
 * A job decides at run time what comes next (fan-out: one job per page of
 * a report; fan-in: a join that depends on them).  It calls
 *
 *	jobq_spawn(spawned_by, token, jobs)
 *
 * with the jobs in jobq_flow's format (flow_graph.c); they are inserted as
 * jobq_flow inserts them, with three differences:
 *
 *	- The spawner's row is locked and its token checked first (FOR NO KEY
 *	  UPDATE, the lock every state change of the job waits for): an
 *	  attempt whose token is stale (its lease expired and the job was
 *	  swept or claimed again, or the job ended) spawns nothing; the call
 *	  is an error (55000), so that the transaction it is part of cannot
 *	  commit as if its children existed.  Holding the lock to commit also
 *	  keeps the sweep from taking the job from under the spawn.
 *	- Each element's ref is its key within the spawner: jobq.spawns maps
 *	  (spawner, ref) to the child.  A later attempt of the same job (a
 *	  retry after a crash, a lost lease or a failure) that spawns a ref
 *	  again gets the existing child back (created false), live or
 *	  finished, and nothing is inserted for it; new refs are inserted.
 *	- The children join the spawner's flow (the spawner starts one named
 *	  after itself when it is in none), so that jobq_flow_jobs and
 *	  jobq_cancel_flow see the whole tree.  A child may depend on the
 *	  spawner's id: it then runs after the spawner completed, and with
 *	  the spawner's other children as its dependencies too, after all of
 *	  them ("run after my children", without a state of its own).
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/spawn.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

PG_FUNCTION_INFO_V1(jobq_spawn);

enum
{
	ST_LOCK_SPAWNER,
	ST_SPAWNER_FLOW,
	ST_FIND_CHILD,
	ST_RECORD_CHILD,
	NUM_STATEMENTS
};

static const JobqStatement statements[NUM_STATEMENTS] = {
	/* $1 id, $2 token: the spawner's flow, if this token holds it (locked) */
	[ST_LOCK_SPAWNER] = {"spawn_lock_spawner",
		"SELECT flow_id FROM jobq.jobs WHERE id = $1 AND token = $2 AND state = 'running'"
		" FOR NO KEY UPDATE",
		2, {INT8OID, UUIDOID}},
	/* $1 a spawner in no flow: it starts one, named after itself */
	[ST_SPAWNER_FLOW] = {"spawn_spawner_flow",
		"WITH u AS (UPDATE jobq.jobs SET flow_id = id WHERE id = $1 AND flow_id IS NULL"
		"           RETURNING id)"
		" INSERT INTO jobq.flow_jobs (flow_id, id) SELECT u.id, u.id FROM u"
		" ON CONFLICT DO NOTHING",
		1, {INT8OID}},
	/* $1 spawner, $2 ref: the child an earlier attempt spawned */
	[ST_FIND_CHILD] = {"spawn_find_child",
		"SELECT child FROM jobq.spawns WHERE parent = $1 AND ref = $2",
		2, {INT8OID, TEXTOID}},
	/* $1 spawner, $2 ref, $3 child */
	[ST_RECORD_CHILD] = {"spawn_record_child",
		"INSERT INTO jobq.spawns (parent, ref, child) VALUES ($1, $2, $3)"
		" ON CONFLICT DO NOTHING",
		3, {INT8OID, TEXTOID, INT8OID}},
};

static SPIPlanPtr plans[NUM_STATEMENTS];

const JobqStatements jobq_spawn_statements = {statements, NUM_STATEMENTS, plans, NULL};

/*
 * jobq_spawn_begin
 *	  Check that spawner->token holds the running job spawner->id, and
 *	  keep it locked to the end of the transaction; set spawner->flow_id
 *	  to the flow its children join.  55000 otherwise, before anything is
 *	  written.  Inside SPI.
 */
void
jobq_spawn_begin(JobqSpawner *spawner)
{
	Datum		args[2] = {spawner->id, spawner->token};
	bool		isnull;
	int64		flow;
	int			rc;

	jobq_check_job(spawner->id, JOBQ_PRIV_CLAIM);
	rc = SPI_execute_plan(jobq_plan(&jobq_spawn_statements, ST_LOCK_SPAWNER), args, NULL,
						  false, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "lock spawning job");
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("job " INT64_FORMAT " is not running with this token",
						DatumGetInt64(spawner->id)),
				 errdetail("Its lease expired, or it ended: the attempt that spawns must hold the job."),
				 errhint("Nothing was enqueued.  The attempt that now holds the job spawns again and gets the jobs spawned before back.")));
	flow = jobq_spi_getint64(0, 1, &isnull);
	if (isnull)
	{
		rc = SPI_execute_plan(jobq_plan(&jobq_spawn_statements, ST_SPAWNER_FLOW),
							  &spawner->id, NULL, false, 0);
		jobq_spi_check(rc, SPI_OK_INSERT, "start the spawning job's flow");
		flow = DatumGetInt64(spawner->id);
	}
	spawner->flow_id = flow;
}

/*
 * jobq_spawn_find
 *	  Whether an earlier attempt of the spawner spawned ref: its child's id
 *	  in *id.  Inside SPI.
 */
bool
jobq_spawn_find(JobqSpawner *spawner, const char *ref, int64 *id)
{
	Datum		args[2] = {spawner->id, CStringGetTextDatum(ref)};
	bool		isnull;
	int			rc;

	rc = SPI_execute_plan(jobq_plan(&jobq_spawn_statements, ST_FIND_CHILD), args, NULL,
						  false, 1);
	jobq_spi_check(rc, SPI_OK_SELECT, "find spawned job");
	if (SPI_processed == 0)
		return false;
	*id = jobq_spi_getint64(0, 1, &isnull);
	return true;
}

/*
 * jobq_spawn_record
 *	  The spawner's ref is child id (a job inserted now, or the live job
 *	  that held its dedupe key).  Inside SPI.
 */
void
jobq_spawn_record(JobqSpawner *spawner, const char *ref, int64 id)
{
	Datum		args[3] = {spawner->id, CStringGetTextDatum(ref), Int64GetDatum(id)};
	int			rc;

	rc = SPI_execute_plan(jobq_plan(&jobq_spawn_statements, ST_RECORD_CHILD), args, NULL,
						  false, 0);
	jobq_spi_check(rc, SPI_OK_INSERT, "record spawned job");
}

/*
 * jobq_spawn(spawned_by bigint, token uuid, jobs jsonb)
 *		-> setof (ref text, id bigint, created boolean)
 */
Datum
jobq_spawn(PG_FUNCTION_ARGS)
{
	JobqSpawner spawner;

	jobq_require(fcinfo, 0, "spawned_by");
	jobq_require(fcinfo, 1, "token");
	jobq_require(fcinfo, 2, "jobs");
	spawner.id = PG_GETARG_DATUM(0);
	spawner.token = PG_GETARG_DATUM(1);
	spawner.flow_id = 0;
	return jobq_flow_insert_graph(fcinfo, PG_GETARG_JSONB_P(2), &spawner);
}
