/*-------------------------------------------------------------------------
 *
 * flow_repair.c
 *	  jobq_flow_repair: the sweeper's repair pass of flows, also callable
 *	  by admins.
 *
 * Dependencies are resolved inline, in the transaction that finishes a
 * parent (flows.c), whichever way it ends (complete, fail, cancel, the
 * sweep, jobq_pop, the bulk actions, jobq_drop_queue with force), and the
 * retries unblock the edges that wait for a re-driven job.  What remains
 * are rows deleted or written by hand (and what a build before those ends
 * resolved their dependents left behind).  The pass finds them and fixes
 * them, in bounded steps:
 *
 *	- pending edges whose parent is no longer live: resolved as the
 *	  parent ended (completed: satisfied with its result; dead or
 *	  cancelled: the policy), or, when the parent is in neither table,
 *	  as a parent that ended 'purged' (the policy);
 *	- blocked edges whose parent is live again: pending again, and the
 *	  parent joins its children's flow; blocked edges whose parent has
 *	  completed since: pending, and resolved by the step above;
 *	- waiting jobs with no open edge left (or a count that says so):
 *	  ready.
 *
 * Safe when many sessions run it at once: the children are locked before
 * their counts change (flows.c), and an edge already resolved by another
 * session is no longer pending.  Logs what it fixed, like the counters'
 * reconcile.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/flow_repair.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"
#include "counters.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(jobq_flow_repair);

/* jobq.flow_repair_interval: seconds between the sweeper's passes */
int			jobq_flow_repair_interval_s = 600;

enum
{
	ST_VANISHED,
	ST_PARENT_ENDS,
	ST_UNBLOCK_LIVE,
	ST_READY_EMPTY,
	NUM_STATEMENTS
};

static const JobqStatement statements[NUM_STATEMENTS] = {
	/*
	 * $1 max_rows: parents of pending edges that are not live, of children
	 * that wait (a child cancelled by hand keeps a pending edge to a parent
	 * that failed after: nothing to resolve)
	 */
	[ST_VANISHED] = {"flow_repair_vanished",
		"SELECT DISTINCT d.parent FROM jobq.deps d"
		" WHERE d.state = 'pending'"
		"   AND NOT EXISTS (SELECT 1 FROM jobq.jobs p WHERE p.id = d.parent)"
		"   AND (SELECT c.state FROM jobq.jobs c WHERE c.id = d.child) = 'waiting'"
		" LIMIT $1",
		1, {INT8OID}},
	/* $1 parents: how each ended, from history (missing: purged) */
	[ST_PARENT_ENDS] = {"flow_repair_parent_ends",
		"SELECT p.id, h.state::text, h.result,"
		"  h.errors OPERATOR(pg_catalog.->) -1 OPERATOR(pg_catalog.->>) 'error'"
		" FROM unnest($1) AS p(id) LEFT JOIN jobq.history h ON h.id = p.id",
		1, {INT8ARRAYOID}},
	/*
	 * $1 max_rows: blocked edges of live parents wait again, and so do
	 * those of parents that completed since (the step of vanished parents
	 * then satisfies them); their parents, and whether each is live
	 */
	[ST_UNBLOCK_LIVE] = {"flow_repair_unblock",
		"WITH b AS ("
		"  SELECT d.child, d.parent FROM jobq.deps d"
		"  WHERE d.state = 'blocked'"
		"    AND (EXISTS (SELECT 1 FROM jobq.jobs p WHERE p.id = d.parent)"
		"         OR EXISTS (SELECT 1 FROM jobq.history h"
		"                    WHERE h.id = d.parent AND h.state = 'completed'))"
		"  LIMIT $1),"
		" u AS (UPDATE jobq.deps d SET state = 'pending' FROM b"
		"       WHERE d.child = b.child AND d.parent = b.parent AND d.state = 'blocked'"
		"       RETURNING d.parent)"
		" SELECT DISTINCT u.parent, EXISTS (SELECT 1 FROM jobq.jobs p WHERE p.id = u.parent)"
		" FROM u",
		1, {INT8OID}},
	/*
	 * $1 max_rows: waiting jobs with nothing left to wait for become ready:
	 * their count says so, or none of their edges is open (the count is too
	 * high, which no path of flows.c leaves); one probe of deps_pkey per
	 * waiting job
	 */
	[ST_READY_EMPTY] = {"flow_repair_ready",
		"WITH w AS ("
		"  SELECT j.id FROM jobq.jobs j"
		"  WHERE j.state = 'waiting'"
		"    AND (COALESCE(j.pending_deps, 0) <= 0"
		"         OR (SELECT true FROM jobq.deps e WHERE e.child = j.id AND e.state <> 'satisfied'"
		"             LIMIT 1) IS NULL)"
		"  LIMIT $1 FOR NO KEY UPDATE SKIP LOCKED),"
		" u AS (UPDATE jobq.jobs j SET state = 'ready', pending_deps = 0"
		"       WHERE j.id = ANY (ARRAY(SELECT w.id FROM w))"
		"       RETURNING j.id, j.queue, j.run_at)"
		" SELECT u.id, u.queue, u.run_at, q.notify, q.paused"
		" FROM u JOIN jobq.queues q ON q.name = u.queue",
		1, {INT8OID}},
};

static SPIPlanPtr plans[NUM_STATEMENTS];

const JobqStatements jobq_flow_repair_statements = {statements, NUM_STATEMENTS, plans, NULL};

/*
 * jobq_flow_repair_define_gucs
 *	  jobq.flow_repair_interval.
 */
void
jobq_flow_repair_define_gucs(void)
{
	DefineCustomIntVariable("jobq.flow_repair_interval",
							"Time between the sweeper's repair passes of flows.",
							"0 turns the pass off; jobq_flow_repair() still runs it by hand.",
							&jobq_flow_repair_interval_s,
							600, 0, 86400,
							PGC_SIGHUP, GUC_UNIT_S,
							NULL, NULL, NULL);
}

/*
 * jobq_flow_repair_run
 *	  One bounded pass (each step at most max_rows); out[] receives the
 *	  edges resolved, the edges unblocked and the jobs readied.  Inside
 *	  SPI.  Does nothing with 0.1.0's SQL.
 */
void
jobq_flow_repair_run(int64 max_rows, int64 *out)
{
	Datum		arg = Int64GetDatum(max_rows);
	TimestampTz now = jobq_now();
	int64	   *ids;
	int			n;
	int			rc;

	out[0] = out[1] = out[2] = 0;
	if (!jobq_flows_available())
		return;

	/*
	 * blocked edges whose parent is live again, or completed: first, so that
	 * the next step resolves the latter
	 */
	rc = SPI_execute_plan(jobq_plan(&jobq_flow_repair_statements, ST_UNBLOCK_LIVE), &arg, NULL,
						  false, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "unblock dependencies");
	n = (int) SPI_processed;
	if (n > 0)
	{
		bool		isnull;
		bool	   *live = palloc(sizeof(bool) * n);

		ids = palloc(sizeof(int64) * n);
		for (int i = 0; i < n; i++)
		{
			ids[i] = jobq_spi_getint64(i, 1, &isnull);
			live[i] = jobq_spi_getbool(i, 2, &isnull);
		}
		for (int i = 0; i < n; i++)
			if (live[i])
				(void) jobq_flow_redriven(ids[i], false, now);
		ereport(LOG,
				(errmsg("jobq: flow repair unblocked the dependents of %d jobs that are live again or completed", n)));
		out[1] = n;
	}

	arg = Int64GetDatum(max_rows);
	/* parents gone without resolving their edges */
	rc = SPI_execute_plan(jobq_plan(&jobq_flow_repair_statements, ST_VANISHED), &arg, NULL,
						  false, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "find vanished dependencies");
	n = (int) SPI_processed;
	if (n > 0)
	{
		Datum	   *d = palloc(sizeof(Datum) * n);
		SPITupleTable *tt;
		uint64		found;
		char	  **state;
		char	  **error;
		Jsonb	  **result;
		bool		isnull;

		ids = palloc(sizeof(int64) * n);
		for (int i = 0; i < n; i++)
		{
			ids[i] = jobq_spi_getint64(i, 1, &isnull);
			d[i] = Int64GetDatum(ids[i]);
		}
		arg = PointerGetDatum(construct_array(d, n, INT8OID, 8, FLOAT8PASSBYVAL,
											  TYPALIGN_DOUBLE));
		rc = SPI_execute_plan(jobq_plan(&jobq_flow_repair_statements, ST_PARENT_ENDS), &arg,
							  NULL, false, 0);
		jobq_spi_check(rc, SPI_OK_SELECT, "read vanished dependencies");
		tt = SPI_tuptable;
		found = SPI_processed;
		state = palloc(sizeof(char *) * Max(found, 1));
		error = palloc(sizeof(char *) * Max(found, 1));
		result = palloc(sizeof(Jsonb *) * Max(found, 1));
		ids = palloc(sizeof(int64) * Max(found, 1));
		for (uint64 r = 0; r < found; r++)
		{
			Datum		v;

			ids[r] = jobq_spi_getint64(r, 1, &isnull);
			v = SPI_getbinval(tt->vals[r], tt->tupdesc, 2, &isnull);
			state[r] = isnull ? "purged" : TextDatumGetCString(v);
			v = SPI_getbinval(tt->vals[r], tt->tupdesc, 3, &isnull);
			result[r] = isnull ? NULL : DatumGetJsonbPCopy(v);
			v = SPI_getbinval(tt->vals[r], tt->tupdesc, 4, &isnull);
			error[r] = isnull ? NULL : TextDatumGetCString(v);
		}
		for (uint64 r = 0; r < found; r++)
		{
			if (strcmp(state[r], "completed") == 0)
				jobq_flow_completed(ids[r], result[r], now);
			else
				jobq_flow_failed(ids[r], state[r], error[r], now);
			ereport(LOG,
					(errmsg("jobq: flow repair resolved the dependents of job " INT64_FORMAT
							", which had ended %s without resolving them", ids[r], state[r])));
		}
		out[0] = (int64) found;
	}

	/* waiting jobs that wait for nothing */
	arg = Int64GetDatum(max_rows);
	rc = SPI_execute_plan(jobq_plan(&jobq_flow_repair_statements, ST_READY_EMPTY), &arg, NULL,
						  false, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "ready waiting jobs");
	if (SPI_processed > 0)
	{
		out[2] = (int64) SPI_processed;
		jobq_flow_announce_readied(now);
		ereport(LOG,
				(errmsg("jobq: flow repair readied " INT64_FORMAT " waiting jobs that had no open dependency",
						out[2])));
	}
}

/*
 * jobq_flow_repair_due
 *	  The sweeper's call: a pass when jobq.flow_repair_interval has passed
 *	  since the last one of this backend.  Returns whether one ran.
 */
bool
jobq_flow_repair_due(int64 max_rows)
{
	static TimestampTz last = 0;
	TimestampTz now = GetCurrentTimestamp();
	int64		out[3];

	if (jobq_flow_repair_interval_s <= 0 ||
		(last != 0 && !TimestampDifferenceExceeds(last, now, jobq_flow_repair_interval_s * 1000)))
		return false;
	last = now;
	jobq_flow_repair_run(max_rows, out);
	return true;
}

/*
 * jobq_flow_repair(max_rows integer) -> (resolved, unblocked, readied)
 */
Datum
jobq_flow_repair(PG_FUNCTION_ARGS)
{
	int64		counts[3];
	Datum		out[3];
	bool		nulls[3] = {false, false, false};
	TupleDesc	desc;
	Tuplestorestate *store;

	jobq_require(fcinfo, 0, "max_rows");
	jobq_check_int_range(PG_GETARG_INT32(0), "max_rows", 1, JOBQ_SWEEP_MAX_ROWS);
	store = jobq_srf_begin(fcinfo, &desc);
	jobq_spi_connect();
	jobq_flow_repair_run(PG_GETARG_INT32(0), counts);
	for (int i = 0; i < 3; i++)
		out[i] = Int64GetDatum(counts[i]);
	tuplestore_putvalues(store, desc, out, nulls);
	jobq_spi_finish();
	return (Datum) 0;
}
