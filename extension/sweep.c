/*-------------------------------------------------------------------------
 *
 * sweep.c
 *	  jobq_sweep: the reclaim step.  Jobs whose lease expired go back to
 *	  ready (after backoff, like a failure) or, with no attempts left, to
 *	  dead; history past its queue's retention is purged.
 *
 * A worker that crashed, hung or lost its connection never completes its
 * job; its lease runs out and the next sweep returns the job.  Because the
 * attempt was counted at claim, a job that kills its worker every time
 * (a poison job) ends dead after max_attempts instead of looping forever.
 *
 * Safe to call from any worker, any number of times, concurrently: every
 * row is taken with SKIP LOCKED, so a sweep never waits for a worker that
 * holds a job (for example while completing it) nor for another sweep, and
 * cannot deadlock with them.  A job being completed at its lease boundary
 * is either completed or swept, never both: whichever locks the row first
 * wins, and the other re-checks the row and finds nothing to do.  Each
 * step touches at most max_rows rows, so a sweep stays a short transaction.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/sweep.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"
#include "jobq_sql.h"
#include "counters.h"
#include "groups.h"

#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/lsyscache.h"

PG_FUNCTION_INFO_V1(jobq_sweep);

/*
 * The statements: $1 now, $2 the queue (NULL: every queue), $3 max_rows.
 *
 * expire: x is referenced twice and locks rows, so it is materialized
 * once: r and d act on disjoint subsets of the same locked rows.  They
 * find them by "id = ANY (ARRAY(...))" so that the generic plan probes
 * the primary key (see claim.c).  Its one row: requeued, dead, and the
 * queues and counts of the requeued jobs (COL_EXPIRE_*).
 *
 * purge_history: one bounded probe per queue and finished state, in
 * finished_at order along history_queue_state_idx (queue, state,
 * finished_at), oldest first.  NB: one state per probe, each with ORDER
 * BY: with "state IN (...)" and only a LIMIT, the generic plan estimated
 * that a sequential scan would meet old rows soon, and scanned the whole
 * history on every sweep when nothing was old enough.
 */
#define EXPIRED_ERRORS_SQL(ALIAS) \
	JOBQ_ATTEMPT_END_SQL(ALIAS, "$1", "'lease expired'", "'lease expired'", "false")

#define PURGE_PROBE_SQL(STATE, RETENTION) \
	"  SELECT h.id FROM jobq.queues q CROSS JOIN LATERAL (" \
	"    SELECT h.id FROM jobq.history h" \
	"    WHERE h.queue = q.name AND h.state = '" STATE "'" \
	"      AND h.finished_at < $1 - q." RETENTION \
	"    ORDER BY h.finished_at LIMIT $3 FOR UPDATE SKIP LOCKED) h" \
	"  WHERE $2::text IS NULL OR q.name = $2"

enum
{
	ST_EXPIRE,
	ST_EXPIRE_GROUPED,
	ST_PURGE_HISTORY,
	ST_EXPIRE_FLOW,
	ST_PURGE_HISTORY_FLOW,
	NUM_STATEMENTS
};

#define COL_EXPIRE_REQUEUED	1
#define COL_EXPIRE_DEAD		2
#define COL_EXPIRE_QUEUES	3
#define COL_EXPIRE_COUNTS	4
#define COL_EXPIRE_DEAD_QUEUES	5
#define COL_EXPIRE_DEAD_COUNTS	6
#define COL_EXPIRE_GROUPED_IDS	7	/* and queues, keys, seqs, dead */
#define COL_EXPIRE_DEAD_IDS_FROM_END 1	/* the dead ids: the last but one column */
#define COL_PURGE_PURGED	1
#define COL_PURGE_QUEUES	2	/* and states, counts: JOBQ_FINISHED_COUNTS_SQL */

/*
 * The expire statement.  The grouped variant, run while some queue
 * groups its jobs (0.2.0 SQL), also returns the grouped jobs it requeued
 * or killed (COL_EXPIRE_GROUPED_*), whose groups lose a running job.
 */
#define EXPIRE_SQL(HISTORY_ROW, R_EXTRA, SELECT_EXTRA, FROM_EXTRA) \
	"WITH x AS (" \
	"  SELECT j.id FROM jobq.jobs j" \
	"  WHERE j.state = 'running' AND j.locked_until < $1" \
	"    AND ($2::text IS NULL OR j.queue = $2)" \
	"  ORDER BY j.locked_until" \
	"  LIMIT $3" \
	"  FOR NO KEY UPDATE SKIP LOCKED)," \
	" r AS (" \
	"  UPDATE jobq.jobs j SET state = 'ready', token = NULL, locked_until = NULL," \
	"    run_at = $1 + " JOBQ_BACKOFF_SQL("j.attempt", "q.backoff_base", "q.backoff_cap") "," \
	"    errors = " EXPIRED_ERRORS_SQL("j") \
	"  FROM jobq.queues q" \
	"  WHERE j.id = ANY (ARRAY(SELECT x.id FROM x)) AND q.name = j.queue" \
	"    AND j.attempt < j.max_attempts" \
	"  RETURNING j.id, j.queue" R_EXTRA ")," \
	" d AS (" \
	"  DELETE FROM jobq.jobs j" \
	"  WHERE j.id = ANY (ARRAY(SELECT x.id FROM x)) AND j.attempt >= j.max_attempts" \
	"  RETURNING j.*)," \
	" h AS (" \
	HISTORY_ROW("'dead'", "d.attempt", "NULL", "d.worker", "d.claimed_at", "$1", \
				EXPIRED_ERRORS_SQL("d"), "NULL") \
	")" \
	" SELECT (SELECT count(*) FROM r), (SELECT count(*) FROM d)," \
	"   g.queues, g.counts, gd.queues, gd.counts" SELECT_EXTRA \
	" FROM (SELECT pg_catalog.array_agg(r.queue ORDER BY r.queue) AS queues," \
	"   pg_catalog.array_agg(r.n ORDER BY r.queue) AS counts" \
	"   FROM (SELECT r.queue, count(*) AS n FROM r GROUP BY r.queue) r) g," \
	"  (SELECT pg_catalog.array_agg(d.queue) AS queues, pg_catalog.array_agg(d.n) AS counts" \
	"   FROM (SELECT d.queue, count(*) AS n FROM d GROUP BY d.queue) d) gd" FROM_EXTRA

#define EXPIRE_GROUPED_SELECT ", gj.ids, gj.queues, gj.keys, gj.seqs, gj.dead"
/*
 * every form, last: the ids and queues of the jobs that went dead, for
 * their completion events (COL_EXPIRE_DEAD_IDS_FROM_END)
 */
#define EXPIRE_DEAD_SELECT \
	", (SELECT pg_catalog.array_agg(d.id ORDER BY d.id) FROM d)," \
	" (SELECT pg_catalog.array_agg(d.queue ORDER BY d.id) FROM d)"
/* flows (0.2.0 SQL): the ids of the jobs of flows that went dead, last */
#define EXPIRE_DEAD_FLOW_SELECT \
	", (SELECT pg_catalog.array_agg(d.id) FROM d WHERE d.flow_id IS NOT NULL)"
#define EXPIRE_GROUPED_FROM \
	", (SELECT pg_catalog.array_agg(y.id) AS ids, pg_catalog.array_agg(y.queue) AS queues," \
	"   pg_catalog.array_agg(y.group_key) AS keys, pg_catalog.array_agg(y.group_seq) AS seqs," \
	"   pg_catalog.array_agg(y.dead) AS dead" \
	"   FROM (SELECT r.id, r.queue, r.group_key, r.group_seq, false AS dead FROM r" \
	"         UNION ALL SELECT d.id, d.queue, d.group_key, d.group_seq, true FROM d) y" \
	"   WHERE y.group_key IS NOT NULL) gj"

static const JobqStatement statements[NUM_STATEMENTS] = {
	[ST_EXPIRE] = {"expire",
		EXPIRE_SQL(JOBQ_HISTORY_ROW_SQL, "", EXPIRE_DEAD_SELECT, ""),
		3, {TIMESTAMPTZOID, TEXTOID, INT8OID}},
	[ST_EXPIRE_GROUPED] = {"expire_grouped",
		EXPIRE_SQL(JOBQ_HISTORY_ROW_FLOW_SQL, ", j.group_key, j.group_seq",
				   EXPIRE_GROUPED_SELECT EXPIRE_DEAD_FLOW_SELECT EXPIRE_DEAD_SELECT,
				   EXPIRE_GROUPED_FROM),
		3, {TIMESTAMPTZOID, TEXTOID, INT8OID}},
	/*
	 * flows (0.2.0's SQL), no queue grouping: flow_id kept in history, and
	 * the ids of the jobs of flows that went dead (the grouped form has
	 * them too, after its own columns)
	 */
	[ST_EXPIRE_FLOW] = {"expire_flow",
		EXPIRE_SQL(JOBQ_HISTORY_ROW_FLOW_SQL, "", EXPIRE_DEAD_FLOW_SELECT EXPIRE_DEAD_SELECT, ""),
		3, {TIMESTAMPTZOID, TEXTOID, INT8OID}},
	[ST_PURGE_HISTORY] = {"purge_history",
		"WITH p AS ("
		PURGE_PROBE_SQL("completed", "completed_retention")
		"  UNION ALL"
		PURGE_PROBE_SQL("cancelled", "completed_retention")
		"  UNION ALL"
		PURGE_PROBE_SQL("dead", "dead_retention")
		"  LIMIT $3),"
		" del AS (DELETE FROM jobq.history h"
		"   WHERE h.id = ANY (ARRAY(SELECT p.id FROM p)) RETURNING h.queue, h.state)"
		" SELECT (SELECT count(*) FROM del)," JOBQ_FINISHED_COUNTS_SQL("del"),
		3, {TIMESTAMPTZOID, TEXTOID, INT8OID}},
	/* flows (0.2.0's SQL): the same, forgetting the purged jobs' edges and memberships */
	[ST_PURGE_HISTORY_FLOW] = {"purge_history_flow",
		"WITH p AS ("
		PURGE_PROBE_SQL("completed", "completed_retention")
		"  UNION ALL"
		PURGE_PROBE_SQL("cancelled", "completed_retention")
		"  UNION ALL"
		PURGE_PROBE_SQL("dead", "dead_retention")
		"  LIMIT $3),"
		" del AS (DELETE FROM jobq.history h"
		"   WHERE h.id = ANY (ARRAY(SELECT p.id FROM p)) RETURNING h.queue, h.state, h.id, h.flow_id),"
		JOBQ_FLOW_FORGET_SQL("del")
		" SELECT (SELECT count(*) FROM del)," JOBQ_FINISHED_COUNTS_SQL("del"),
		3, {TIMESTAMPTZOID, TEXTOID, INT8OID}},
};

static SPIPlanPtr plans[NUM_STATEMENTS];

const JobqStatements jobq_sweep_statements = {statements, NUM_STATEMENTS, plans, NULL};

/*
 * note_requeued
 *	  After the expire statement: tell waiting claims of each queue how
 *	  many of its jobs come back (after their backoff), from the queues and
 *	  counts arrays in columns 3 and 4 of its row (see wake.c).  Announced
 *	  as due now, for waiters only: the statement knows neither when each
 *	  job is due nor whether its queue notifies or is paused; the woken
 *	  waiters read when each job is due, idle listeners find them at their
 *	  poll.
 */
static void
note_requeued(void)
{
	bool		isnull;
	Datum		qd = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
								   COL_EXPIRE_QUEUES, &isnull);
	Datum		cd;
	Datum	   *queues;
	Datum	   *counts;
	int			nq;
	int			nc;

	if (isnull)
		return;
	cd = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
					   COL_EXPIRE_COUNTS, &isnull);
	deconstruct_array(DatumGetArrayTypeP(qd), TEXTOID, -1, false, TYPALIGN_INT,
					  &queues, NULL, &nq);
	deconstruct_array(DatumGetArrayTypeP(cd), INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
					  &counts, NULL, &nc);
	for (int i = 0; i < nq && i < nc; i++)
	{
		TimestampTz now = jobq_now();

		jobq_announce_ready(DatumGetTextPP(queues[i]), DatumGetInt64(counts[i]), now, now,
							false, false);
	}
}

/*
 * expired_groups
 *	  After the grouped expire statement: the groups of the grouped jobs
 *	  it requeued (in their place: a later job of a FIFO group never runs
 *	  first) or killed lose a running job.  Reads the arrays of its row;
 *	  the last statement SPI ran.
 */
static void
expired_groups(TimestampTz now)
{
	Datum		cols[5];
	Datum	   *items[5];
	int			n = 0;
	JobqGroupedJob *jobs;
	JobqGroupChange *changes;
	static const Oid types[5] = {INT8OID, TEXTOID, TEXTOID, INT8OID, BOOLOID};

	for (int c = 0; c < 5; c++)
	{
		bool		isnull;

		cols[c] = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
								COL_EXPIRE_GROUPED_IDS + c, &isnull);
		if (isnull)
			return;				/* no grouped job among them */
	}
	for (int c = 0; c < 5; c++)
	{
		int16		typlen;
		bool		typbyval;
		char		typalign;

		get_typlenbyvalalign(types[c], &typlen, &typbyval, &typalign);
		deconstruct_array(DatumGetArrayTypeP(SPI_datumTransfer(cols[c], false, -1)),
						  types[c], typlen, typbyval, typalign, &items[c], NULL, &n);
	}
	jobs = palloc(sizeof(JobqGroupedJob) * n);
	changes = palloc(sizeof(JobqGroupChange) * n);
	for (int i = 0; i < n; i++)
	{
		jobs[i].id = DatumGetInt64(items[0][i]);
		jobs[i].queue = DatumGetTextPP(items[1][i]);
		jobs[i].key = DatumGetTextPP(items[2][i]);
		jobs[i].seq = DatumGetInt64(items[3][i]);
		changes[i] = DatumGetBool(items[4][i]) ? JOBQ_GROUP_DIED : JOBQ_GROUP_REQUEUED;
	}
	jobq_groups_changed(jobs, changes, n, now);
}

/*
 * note_dead
 *	  After the expire statement, while some queue has notify_finished:
 *	  a completion event for each job that went dead (its ids and queues
 *	  are the statement's last two columns).  Reads them before any other
 *	  statement replaces SPI_tuptable.
 */
static void
note_dead(void)
{
	TupleDesc	desc = SPI_tuptable->tupdesc;
	HeapTuple	row = SPI_tuptable->vals[0];
	int			col = desc->natts - COL_EXPIRE_DEAD_IDS_FROM_END;
	bool		isnull;
	Datum		a = SPI_getbinval(row, desc, col, &isnull);
	Datum	   *ids;
	Datum	   *queues;
	int			n;
	int			nq;

	if (isnull)
		return;
	deconstruct_array(DatumGetArrayTypeP(a), INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
					  &ids, NULL, &n);
	deconstruct_array(DatumGetArrayTypeP(SPI_getbinval(row, desc, col + 1, &isnull)),
					  TEXTOID, -1, false, TYPALIGN_INT, &queues, NULL, &nq);
	Assert(n == nq);
	for (int i = 0; i < n && i < nq; i++)
	{
		text	   *queue = DatumGetTextPP(queues[i]);
		JobqQueueSettings settings;

		if (jobq_queue_settings(queue, &settings) &&
			jobq_setting_020(&settings, notify_finished))
			jobq_finished_note(VARDATA_ANY(queue), VARSIZE_ANY_EXHDR(queue),
							   DatumGetInt64(ids[i]), JOBQ_AWAIT_DEAD);
	}
}

/*
 * jobq_sweep_run
 *	  One bounded sweep: expired leases, then history past retention.
 *	  queue NULL means every queue.  Must run inside SPI; the background
 *	  sweeper (sweeper.c) calls it too.  out[] receives requeued, dead and
 *	  purged.
 */
void
jobq_sweep_run(text *queue, int64 max_rows, int64 *out)
{
	Datum		values[3];
	char		nulls[3] = {' ', ' ', ' '};
	bool		isnull;
	bool		grouped;
	bool		flows;
	int			flow_col;
	int			rc;

	values[0] = TimestampTzGetDatum(jobq_now());
	values[1] = PointerGetDatum(queue);
	if (queue == NULL)
		nulls[1] = 'n';
	values[2] = Int64GetDatum(max_rows);

	grouped = jobq_any_grouped_queue();
	flows = jobq_flows_available();
	/* the column of the dead jobs of flows: the last one */
	flow_col = grouped ? COL_EXPIRE_GROUPED_IDS + 5 : COL_EXPIRE_GROUPED_IDS;
	rc = SPI_execute_plan(jobq_plan(&jobq_sweep_statements,
									grouped ? ST_EXPIRE_GROUPED :
									flows ? ST_EXPIRE_FLOW : ST_EXPIRE),
						  values, nulls, false, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "sweep expired leases");
	out[0] = jobq_spi_getint64(0, COL_EXPIRE_REQUEUED, &isnull);
	out[1] = jobq_spi_getint64(0, COL_EXPIRE_DEAD, &isnull);
	if (out[1] > 0 && jobq_finished_any())
	{
		SPITupleTable *tuptable = SPI_tuptable;
		uint64		processed = SPI_processed;

		note_dead();
		/* jobq_queue_settings may have run statements of its own */
		SPI_tuptable = tuptable;
		SPI_processed = processed;
	}
	if (out[0] > 0)
		note_requeued();
	if (out[0] + out[1] > 0)
		jobq_await_recheck_all();	/* attempts ended; awaiters re-read */
	jobq_count_arrays(JOBQ_EV_EXPIRED_RETRIED, COL_EXPIRE_QUEUES, COL_EXPIRE_COUNTS);
	jobq_count_arrays(JOBQ_EV_EXPIRED_DEAD, COL_EXPIRE_DEAD_QUEUES, COL_EXPIRE_DEAD_COUNTS);
	if (flows && out[1] > 0)
	{
		/* jobs of flows that went dead: their dependents' policies apply */
		Datum		ad = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
									   flow_col, &isnull);

		if (!isnull)
		{
			Datum	   *ids;
			int			n;

			/* read before the groups' statements replace SPI_tuptable */
			deconstruct_array(DatumGetArrayTypeP(SPI_datumTransfer(ad, false, -1)), INT8OID, 8,
							  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &ids, NULL, &n);
			if (grouped && out[0] + out[1] > 0)
				expired_groups(DatumGetTimestampTz(values[0]));
			grouped = false;
			for (int i = 0; i < n; i++)
				jobq_flow_failed(DatumGetInt64(ids[i]), "dead", "lease expired",
								 DatumGetTimestampTz(values[0]));
		}
	}
	if (grouped && out[0] + out[1] > 0)
		expired_groups(DatumGetTimestampTz(values[0]));

	rc = SPI_execute_plan(jobq_plan(&jobq_sweep_statements,
									jobq_flows_available() ? ST_PURGE_HISTORY_FLOW :
									ST_PURGE_HISTORY),
						  values, nulls, false, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "purge history");
	out[2] = jobq_spi_getint64(0, COL_PURGE_PURGED, &isnull);
	jobq_count_purged(COL_PURGE_QUEUES, COL_PURGE_QUEUES + 1, COL_PURGE_QUEUES + 2);

}

/*
 * jobq_sweep(queue text, max_rows int) -> (requeued, dead, purged)
 *	  queue NULL sweeps every queue.
 */
Datum
jobq_sweep(PG_FUNCTION_ARGS)
{
	text	   *queue = NULL;
	int64		counts[3];
	Datum		out[3];
	bool		out_nulls[3] = {false, false, false};
	TupleDesc	desc;
	Tuplestorestate *store;

	if (!PG_ARGISNULL(0))
		queue = jobq_queue_arg(fcinfo, 0);
	jobq_require(fcinfo, 1, "max_rows");
	jobq_check_int_range(PG_GETARG_INT32(1), "max_rows", 1, JOBQ_SWEEP_MAX_ROWS);

	store = jobq_srf_begin(fcinfo, &desc);
	jobq_spi_connect();
	if (queue != NULL)
	{
		JobqQueueSettings settings;

		/* 42704 like the other operator calls (0.1.0 returned zeros) */
		if (!jobq_queue_settings(queue, &settings))
			jobq_queue_not_found(queue);
		jobq_check_queue(queue, JOBQ_PRIV_CLAIM);
	}
	jobq_sweep_run(queue, PG_GETARG_INT32(1), counts);
	for (int i = 0; i < 3; i++)
		out[i] = Int64GetDatum(counts[i]);
	/* a sweep by hand is audited; workers name no actor (audit.c) */
	if (jobq_actor_named())
	{
		char		n[3][24];

		for (int i = 0; i < 3; i++)
			snprintf(n[i], sizeof(n[i]), INT64_FORMAT, counts[i]);
		jobq_audit_record("sweep", queue, (Datum) 0, NULL, counts[0] + counts[1] + counts[2],
						  "requeued", n[0], "dead", n[1], "purged", n[2], NULL);
	}
	tuplestore_putvalues(store, desc, out, out_nulls);
	jobq_spi_finish();
	return (Datum) 0;
}
