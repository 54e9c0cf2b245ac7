/*-------------------------------------------------------------------------
 *
 * groups_reconcile.c
 *	  jobq_groups_reconcile: check the stored state of groups against the
 *	  jobs, and fix it (issue 19; FEATURES-0.2.md 6.4.10).
 *
 * A group's row and line are copies (running, the head, whether a dead
 * head blocks it, its live jobs in order), kept by every path that changes
 * a grouped job in the same transaction; drift should only come from rows
 * written by hand.  Copies that can drift get checked (Prefect's
 * concurrency slots drifted and wedged deployments): this recomputes them
 * from jobq.jobs and jobq.history, fixes what differs, and returns each
 * fix.  The sweeper runs it every jobq.groups_reconcile_interval and logs
 * each fix as a warning.
 *
 * Safe with any number of callers and with the paths that change groups:
 * group rows are locked with SKIP LOCKED (a group being changed is
 * checked next time), and the recomputation runs after the locks, so its
 * snapshot sees what their holders committed.  Line rows are fixed first,
 * without group locks: a line row is written in the statement (or the
 * transaction) that writes its job, so a committed job and its line row
 * are seen together.  Bounded: at most max_groups groups per call, in
 * (queue, key) order after the last group the previous call of this
 * backend checked, so that repeated calls cover every group.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/groups_reconcile.c
 *
 *-------------------------------------------------------------------------
 */
#include "groups.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(jobq_groups_reconcile);

/* jobq.groups_reconcile_interval: how often the sweeper reconciles (ms; 0: never) */
int			jobq_groups_reconcile_interval_ms = 10 * 60 * 1000;

/* groups one sweeper pass checks */
#define SWEEPER_GROUPS_PER_PASS	1000

/* The columns of every statement's rows: queue, key, field, stored, actual */
#define RECONCILE_COLS	5

/*
 * The stored fields of the groups k (locked), against what the jobs say;
 * GROUP_LIMIT_SQL is the queue's limit per group.
 */
#define GROUP_LIMIT_SQL "CASE q.group_mode WHEN 'fifo' THEN 1 ELSE q.group_limit END"

enum
{
	ST_LINE_STALE,
	ST_LINE_MISSING,
	ST_LOCK_GROUPS,
	ST_FIX_GROUPS,
	ST_DROP_IDLE,
	NUM_STATEMENTS
};

static const JobqStatement statements[NUM_STATEMENTS] = {
	/* $1 queue or NULL: line rows of jobs that left, or not in that place */
	[ST_LINE_STALE] = {"groups_line_stale",
		"DELETE FROM jobq.group_jobs gl"
		" WHERE ($1::text IS NULL OR gl.queue = $1)"
		"   AND NOT EXISTS (SELECT 1 FROM jobq.jobs j WHERE j.id = gl.id AND j.queue = gl.queue"
		"                   AND j.group_key = gl.key AND j.group_seq = gl.seq)"
		" RETURNING gl.queue, gl.key, 'line'::text, gl.id::text, NULL::text",
		1, {TEXTOID}},
	/* $1 queue or NULL: live grouped jobs missing from their line */
	[ST_LINE_MISSING] = {"groups_line_missing",
		"INSERT INTO jobq.group_jobs (queue, key, seq, id)"
		" SELECT j.queue, j.group_key, j.group_seq, j.id FROM jobq.jobs j"
		" WHERE j.group_key IS NOT NULL AND ($1::text IS NULL OR j.queue = $1)"
		"   AND NOT EXISTS (SELECT 1 FROM jobq.group_jobs gl WHERE gl.queue = j.queue"
		"                   AND gl.key = j.group_key AND gl.seq = j.group_seq)"
		" ON CONFLICT DO NOTHING"
		" RETURNING queue, key, 'line'::text, NULL::text, id::text",
		1, {TEXTOID}},
	/* $1 queue or NULL, $2 max_groups, $3 $4 after this (queue, key) */
	[ST_LOCK_GROUPS] = {"groups_reconcile_lock",
		"SELECT g.queue, g.key FROM jobq.groups g"
		" WHERE ($1::text IS NULL OR g.queue = $1)"
		"   AND ($3::text IS NULL OR (g.queue, g.key) > ($3, $4))"
		" ORDER BY g.queue, g.key LIMIT $2 FOR NO KEY UPDATE SKIP LOCKED",
		4, {TEXTOID, INT4OID, TEXTOID, TEXTOID}},
	/* $1 queues, $2 keys of the locked groups */
	[ST_FIX_GROUPS] = {"groups_reconcile_fix",
		"WITH a AS MATERIALIZED ("
		"  SELECT g.queue, g.key, g.running AS s_running, g.head_id AS s_head,"
		"    g.blocked_by AS s_blocked, g.eligible AS s_eligible,"
		"    r.running, h.id AS head, h.priority, h.run_at, b.blocked,"
		"    h.id IS NOT NULL AND b.blocked IS NULL AND r.running < " GROUP_LIMIT_SQL " AS eligible"
		"  FROM unnest($1::text[], $2::text[]) AS k(queue, key)"
		"  JOIN jobq.groups g ON g.queue = k.queue AND g.key = k.key AND g.key = ANY ($2)"
		"  JOIN jobq.queues q ON q.name = g.queue"
		"  CROSS JOIN LATERAL (SELECT count(*)::int4 AS running"
		"    FROM jobq.group_jobs gl JOIN jobq.jobs x ON x.id = gl.id"
		"    WHERE gl.queue = g.queue AND gl.key = g.key AND x.state = 'running') r"
		"  LEFT JOIN LATERAL ("
		JOBQ_GROUP_LINE_SQL("x.id, x.priority, x.run_at", "g.queue", "g.key", "")
		"    LIMIT 1) h ON true"
		"  CROSS JOIN LATERAL (SELECT CASE WHEN EXISTS (SELECT 1 FROM jobq.history d"
		"    WHERE d.id = g.blocked_by AND d.state = 'dead') THEN g.blocked_by END AS blocked) b),"
		" u AS (UPDATE jobq.groups g SET running = a.running, head_id = a.head,"
		"    head_priority = a.priority, head_run_at = a.run_at, blocked_by = a.blocked,"
		"    blocked_at = CASE WHEN a.blocked IS NULL THEN NULL ELSE g.blocked_at END,"
		"    eligible = a.eligible"
		"  FROM a WHERE g.queue = a.queue AND g.key = a.key"
		"    AND (a.s_running, a.s_head, a.s_blocked, a.s_eligible)"
		"        IS DISTINCT FROM (a.running, a.head, a.blocked, a.eligible))"
		" SELECT a.queue, a.key, f.field, f.stored, f.actual FROM a"
		" CROSS JOIN LATERAL (VALUES"
		"   ('running', a.s_running::text, a.running::text),"
		"   ('head_id', a.s_head::text, a.head::text),"
		"   ('blocked_by', a.s_blocked::text, a.blocked::text),"
		"   ('eligible', a.s_eligible::text, a.eligible::text)) AS f(field, stored, actual)"
		" WHERE f.stored IS DISTINCT FROM f.actual"
		" ORDER BY a.queue, a.key, f.field",
		2, {TEXTARRAYOID, TEXTARRAYOID}},
	/*
	 * $1 queues, $2 keys of the locked groups, $3 now: the idle ones go
	 * (a row kept for its rate when its last job ended, or written by hand)
	 */
	[ST_DROP_IDLE] = {"groups_reconcile_drop_idle",
		"DELETE FROM jobq.groups g USING unnest($1::text[], $2::text[]) AS k(queue, key)"
		" WHERE g.queue = k.queue AND g.key = k.key AND g.key = ANY ($2)"
		" AND " JOBQ_GROUP_IDLE_SQL("$3"),
		3, {TEXTARRAYOID, TEXTARRAYOID, TIMESTAMPTZOID}},
};

static SPIPlanPtr plans[NUM_STATEMENTS];

const JobqStatements jobq_groups_reconcile_statements = {statements, NUM_STATEMENTS, plans, NULL};

/* Where this backend's last pass ended, so that the next goes on from there */
static char last_queue[JOBQ_QUEUE_NAME_MAX + 1];
static char last_key[JOBQ_GROUP_KEY_MAX + 1];
static bool have_last = false;

/*
 * put_fixes
 *	  Add the rows of the last statement (RECONCILE_COLS texts) to store,
 *	  each as a warning too when log.
 */
static int64
put_fixes(Tuplestorestate *store, TupleDesc desc, bool log)
{
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		Datum		values[RECONCILE_COLS];
		bool		nulls[RECONCILE_COLS];

		for (int c = 0; c < RECONCILE_COLS; c++)
			values[c] = SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, c + 1,
									  &nulls[c]);
		if (log)
			ereport(WARNING,
					(errmsg("jobq: group \"%s\" of queue \"%s\" had %s %s, fixed to %s",
							TextDatumGetCString(values[1]), TextDatumGetCString(values[0]),
							TextDatumGetCString(values[2]),
							nulls[3] ? "none" : TextDatumGetCString(values[3]),
							nulls[4] ? "none" : TextDatumGetCString(values[4])),
					 errdetail("Only hand-written rows should make a group's stored state drift.")));
		if (store != NULL)
			tuplestore_putvalues(store, desc, values, nulls);
	}
	return (int64) SPI_processed;
}

/*
 * jobq_groups_reconcile_run
 *	  One bounded pass over the groups of queue (NULL: every queue), see
 *	  the header.  The fixes go to store (when not NULL) and, with log, to
 *	  the server log.  Returns how many fields it fixed.  Nothing while the
 *	  database runs 0.1.0's SQL.  Inside SPI.
 */
int64
jobq_groups_reconcile_run(text *queue, int max_groups, Tuplestorestate *store,
						  TupleDesc desc, bool log)
{
	Datum		args[4];
	char		nulls[4] = {' ', ' ', ' ', ' '};
	Datum	   *queues;
	Datum	   *keys;
	uint64		n;
	int64		fixed = 0;
	int			rc;

	if (!jobq_queues_have_020())
		return 0;
	args[0] = PointerGetDatum(queue);
	if (queue == NULL)
		nulls[0] = 'n';

	rc = SPI_execute_plan(jobq_plan(&jobq_groups_reconcile_statements, ST_LINE_STALE), args,
						  nulls, false, 0);
	jobq_spi_check(rc, SPI_OK_DELETE_RETURNING, "reconcile group lines");
	fixed += put_fixes(store, desc, log);
	rc = SPI_execute_plan(jobq_plan(&jobq_groups_reconcile_statements, ST_LINE_MISSING), args,
						  nulls, false, 0);
	jobq_spi_check(rc, SPI_OK_INSERT_RETURNING, "reconcile group lines");
	fixed += put_fixes(store, desc, log);

	args[1] = Int32GetDatum(max_groups);
	args[2] = have_last ? CStringGetTextDatum(last_queue) : (Datum) 0;
	args[3] = have_last ? CStringGetTextDatum(last_key) : (Datum) 0;
	nulls[2] = nulls[3] = have_last ? ' ' : 'n';
	rc = SPI_execute_plan(jobq_plan(&jobq_groups_reconcile_statements, ST_LOCK_GROUPS), args,
						  nulls, false, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "lock groups to reconcile");
	n = SPI_processed;
	/* fewer than asked: the next pass starts over */
	have_last = n > 0 && n == (uint64) max_groups;
	if (n == 0)
		return fixed;
	queues = palloc(sizeof(Datum) * n);
	keys = palloc(sizeof(Datum) * n);
	for (uint64 i = 0; i < n; i++)
	{
		bool		isnull;

		queues[i] = SPI_datumTransfer(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc,
													1, &isnull), false, -1);
		keys[i] = SPI_datumTransfer(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc,
												  2, &isnull), false, -1);
	}
	if (have_last)
	{
		text_to_cstring_buffer(DatumGetTextPP(queues[n - 1]), last_queue, sizeof(last_queue));
		text_to_cstring_buffer(DatumGetTextPP(keys[n - 1]), last_key, sizeof(last_key));
	}
	args[0] = PointerGetDatum(construct_array(queues, (int) n, TEXTOID, -1, false, TYPALIGN_INT));
	args[1] = PointerGetDatum(construct_array(keys, (int) n, TEXTOID, -1, false, TYPALIGN_INT));
	rc = SPI_execute_plan(jobq_plan(&jobq_groups_reconcile_statements, ST_FIX_GROUPS), args, NULL,
						  false, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "reconcile groups");
	fixed += put_fixes(store, desc, log);
	/* not drift: the rows a rate kept after their last job, once it passed */
	args[2] = TimestampTzGetDatum(jobq_now());
	rc = SPI_execute_plan(jobq_plan(&jobq_groups_reconcile_statements, ST_DROP_IDLE), args, NULL,
						  false, 0);
	jobq_spi_check(rc, SPI_OK_DELETE, "remove idle groups");
	return fixed;
}

/*
 * jobq_groups_reconcile(queue text DEFAULT NULL, max_groups int DEFAULT 1000)
 *	  -> setof (queue, key, field, stored, actual)
 *	  Check and fix up to max_groups groups (see the header); each fixed
 *	  field is a row ("line" rows: a line row removed, stored = its job,
 *	  or added, actual = its job).  No rows: nothing had drifted.
 */
Datum
jobq_groups_reconcile(PG_FUNCTION_ARGS)
{
	text	   *queue = NULL;
	TupleDesc	desc;
	Tuplestorestate *store;

	if (!PG_ARGISNULL(0))
		queue = jobq_queue_arg(fcinfo, 0);
	jobq_require(fcinfo, 1, "max_groups");
	jobq_check_int_range(PG_GETARG_INT32(1), "max_groups", 1, JOBQ_SWEEP_MAX_ROWS);

	store = jobq_srf_begin(fcinfo, &desc);
	jobq_spi_connect();
	if (queue != NULL)
		jobq_require_grouped_queue(queue, JOBQ_PRIV_ADMIN);
	(void) jobq_groups_reconcile_run(queue, PG_GETARG_INT32(1), store, desc, false);
	jobq_spi_finish();
	return (Datum) 0;
}

/*
 * jobq_groups_reconcile_due
 *	  The sweeper's duty, every jobq.groups_reconcile_interval: one pass,
 *	  its fixes logged as warnings.  Inside SPI, in the transaction of the
 *	  sweeper's counts step.
 */
void
jobq_groups_reconcile_due(void)
{
	static TimestampTz next = 0;
	TimestampTz now = GetCurrentTimestamp();
	int64		fixed;

	if (jobq_groups_reconcile_interval_ms <= 0 || now < next)
		return;
	next = TimestampTzPlusMilliseconds(now, jobq_groups_reconcile_interval_ms);
	fixed = jobq_groups_reconcile_run(NULL, SWEEPER_GROUPS_PER_PASS, NULL, NULL, true);
	if (fixed > 0)
		elog(LOG, "jobq sweeper: fixed " INT64_FORMAT " drifted fields of groups", fixed);
}

/*
 * jobq_groups_define_gucs
 *	  Called from _PG_init.
 */
void
jobq_groups_define_gucs(void)
{
	DefineCustomIntVariable("jobq.groups_reconcile_interval",
							"How often the sweeper checks the stored state of groups against their jobs.",
							"Each pass checks up to 1000 groups and logs every fix as a warning; 0 turns it off.",
							&jobq_groups_reconcile_interval_ms,
							10 * 60 * 1000, 0, INT_MAX,
							PGC_SIGHUP, GUC_UNIT_MS,
							NULL, NULL, NULL);
}
