/*-------------------------------------------------------------------------
 *
 * jobq_sql.h
 *	  SQL fragments shared by several statements of the jobq extension.
 *
 * Each fragment is spelled once here, so that the statements that use it
 * compute the same thing: the claim order, the ready jobs of a queue, the
 * history row of a finished job, the retry delay, the bounded errors
 * array and the re-drive of dead jobs.  The statements themselves are
 * declared next to their code, in each file's table of statements (see
 * spi.c); jobq._statement(name) returns the text a table holds.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/jobq_sql.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JOBQ_SQL_H
#define JOBQ_SQL_H

/*
 * JOBQ_CLAIM_ORDER_SQL: the order in which ready jobs are claimed (and
 * popped), for the jobs of alias A; jobs_claim_idx is in this order.
 */
#define JOBQ_CLAIM_ORDER_SQL(A) A ".priority, " A ".run_at, " A ".id"

/*
 * JOBQ_READY_JOBS_SQL: COLS of up to $3 ready jobs (alias A) of queue
 * QUEUE due by $2, in claim order through jobs_claim_idx, locked with LOCK
 * ("NO KEY UPDATE" to claim them, "UPDATE" to delete them) and SKIP
 * LOCKED, so that the locks are taken under the LIMIT.
 */
#define JOBQ_READY_JOBS_SQL(A, COLS, QUEUE, LOCK) \
	"SELECT " COLS " FROM jobq.jobs " A \
	" WHERE " A ".queue = " QUEUE " AND " A ".state = 'ready' AND " A ".run_at <= $2" \
	" ORDER BY " JOBQ_CLAIM_ORDER_SQL(A) \
	" LIMIT $3" \
	" FOR " LOCK " SKIP LOCKED"

/*
 * JOBQ_READY_IDS_SQL: the ids of the ready jobs of queue $1, as an array,
 * so that the statement around it finds the rows through the primary key
 * whatever its generic plan assumes about LIMIT $3 (see claim.c).
 */
#define JOBQ_READY_IDS_SQL(LOCK) \
	"ARRAY(" JOBQ_READY_JOBS_SQL("c", "c.id", "$1", LOCK) ")"

/*
 * JOBQ_CLAIM_SET_SQL, JOBQ_CLAIM_RETURN_SQL: what every claim statement
 * (claim.c, group_claim.c) does to the jobs it took, found by joining the
 * ids in claim order (o.id, o.n = position): attempt + 1, the token at
 * that position of $6; and what it returns, the position after the
 * columns of jobq_claim's result, then what the counters need, then where
 * the running row is, for a direct complete (direct_map.c).
 */
#define JOBQ_CLAIM_SET_SQL \
	"UPDATE jobq.jobs j SET state = 'running', attempt = j.attempt + 1," \
	"  token = $6[o.n::pg_catalog.int4],"

#define JOBQ_CLAIM_RETURN_SQL \
	" WHERE j.id = o.id" \
	" RETURNING j.id, j.queue, j.payload, j.attempt, j.max_attempts, j.token," \
	"   j.locked_until, j.enqueued_at, o.n, j.run_at, j.ctid"

/*
 * JOBQ_CLAIM_RETURN_FLOW_SQL: the same, then the job's flow_id, for 0.2.0's
 * SQL (jobq.jobs has the column): jobq_claim's result has it as its ninth
 * column (JOBQ_CLAIM_COL_FLOW_ID), by which a worker knows, without
 * another call, which jobs it claimed have dependency results to read.
 */
#define JOBQ_CLAIM_RETURN_FLOW_SQL \
	JOBQ_CLAIM_RETURN_SQL ", j.flow_id"

/* jobq_claim's result: the 8 columns of 0.1.0's, 0.2.0's flow_id after them */
#define JOBQ_CLAIM_RESULT_COLS	8
#define JOBQ_CLAIM_COL_FLOW_ID	JOBQ_CLAIM_RESULT_COLS	/* 0-based */

/*
 * JOBQ_HISTORY_ROW_SQL: the INSERT of the history row of each job of CTE
 * d (rows of jobq.jobs, just deleted), in state STATE.  The other
 * arguments are the expressions of the columns that differ between the
 * ways a job finishes; every other column is the job's own.  The caller
 * may append a WHERE clause on d.
 */
#define JOBQ_HISTORY_ROW_SQL(STATE, ATTEMPT, TOKEN, WORKER, CLAIMED_AT, FINISHED_AT, ERRORS, RESULT) \
	JOBQ_HISTORY_ROW_COLS_SQL(STATE, ATTEMPT, TOKEN, WORKER, CLAIMED_AT, FINISHED_AT, ERRORS, \
							  RESULT, "", "")

/*
 * JOBQ_HISTORY_ROW_FLOW_SQL: the same, keeping the job's flow_id (0.2.0's
 * SQL; flows.c): the statements of jobs in flows only.
 */
#define JOBQ_HISTORY_ROW_FLOW_SQL(STATE, ATTEMPT, TOKEN, WORKER, CLAIMED_AT, FINISHED_AT, ERRORS, RESULT) \
	JOBQ_HISTORY_ROW_COLS_SQL(STATE, ATTEMPT, TOKEN, WORKER, CLAIMED_AT, FINISHED_AT, ERRORS, \
							  RESULT, ", flow_id", ", d.flow_id")

/*
 * JOBQ_FLOW_FORGET_SQL: two CTEs (fe, fm) that forget the edges and the
 * flow memberships of the finished jobs that CTE D deletes from history
 * (D returns their id and flow_id; 0.2.0's SQL, flows.c).  A purged job's
 * own edges (it the child) go with it; the edges on which it is the
 * parent stay until its children are purged, since they hold the outcome
 * a child reads.  Jobs outside flows (flow_id NULL) probe nothing.
 */
#define JOBQ_FLOW_FORGET_SQL(D) \
	" fe AS (DELETE FROM jobq.deps e WHERE e.child = ANY (ARRAY(" \
	"   SELECT " D ".id FROM " D " WHERE " D ".flow_id IS NOT NULL)))," \
	" fm AS (DELETE FROM jobq.flow_jobs m USING " D \
	"   WHERE m.flow_id = " D ".flow_id AND m.id = " D ".id)"

#define JOBQ_HISTORY_ROW_COLS_SQL(STATE, ATTEMPT, TOKEN, WORKER, CLAIMED_AT, FINISHED_AT, ERRORS, RESULT, XCOLS, XVALS) \
	"INSERT INTO jobq.history" \
	" (id, queue, state, priority, run_at, attempt, max_attempts, token, worker," \
	"  enqueued_at, claimed_at, finished_at, dedupe_key, errors, result, payload" XCOLS ")" \
	" SELECT d.id, d.queue, " STATE ", d.priority, d.run_at, " ATTEMPT ", d.max_attempts," \
	"   " TOKEN ", " WORKER ", d.enqueued_at, " CLAIMED_AT ", " FINISHED_AT ", d.dedupe_key," \
	"   " ERRORS ", " RESULT ", d.payload" XVALS \
	" FROM d"

/*
 * JOBQ_KEEPS_HISTORY_SQL: whether the job's queue QUEUE keeps completed
 * history: one probe of jobq.queues by its primary key per job.  Until
 * 0.2.0 the statements took the names of all such queues as an array
 * parameter, copied per call and compared per job, so a complete cost more
 * with every queue that keeps history (1.4 ms with 10,004 of them against
 * 0.15 ms with 4; issue 13).
 */
#define JOBQ_KEEPS_HISTORY_SQL(QUEUE) \
	"EXISTS (SELECT 1 FROM jobq.queues q" \
	" WHERE q.name = " QUEUE " AND q.completed_retention > interval '0')"

/*
 * JOBQ_BACKOFF_SQL: the retry delay after attempt number ATT, exponential
 * from BASE, capped at CAP, scaled by a random factor in [0.5, 1] ("equal
 * jitter") so that jobs failing together do not retry together.  Computed
 * in float seconds: base * 2^(att-1) can overflow an interval, a double
 * cannot (the exponent is clamped).
 */
#define JOBQ_BACKOFF_SQL(ATT, BASE, CAP) \
	"pg_catalog.make_interval(secs => " \
	"  LEAST(EXTRACT(EPOCH FROM " CAP ")::float8, " \
	"        EXTRACT(EPOCH FROM " BASE ")::float8 * pg_catalog.power(2::float8, LEAST(GREATEST(" ATT " - 1, 0), 60))) " \
	"  * (0.5 + pg_catalog.random() * 0.5))"

/*
 * JOBQ_ERRORS_PUSH_SQL: ERRS with the jsonb object OBJ appended, keeping
 * the newest JOBQ_ERRORS_KEPT (one is appended at a time, so dropping the
 * first element is enough to stay bounded).
 */
#define JOBQ_ERRORS_PUSH_SQL(ERRS, OBJ) \
	"(SELECT CASE WHEN pg_catalog.jsonb_array_length(e) > " CppAsString2(JOBQ_ERRORS_KEPT) " THEN e OPERATOR(pg_catalog.-) 0 ELSE e END " \
	" FROM (SELECT COALESCE(" ERRS ", '[]'::jsonb) OPERATOR(pg_catalog.||) " \
	"   pg_catalog.jsonb_build_array(" OBJ ")) AS x(e))"

/*
 * JOBQ_ERRORS_APPEND_SQL: ERRS with one error object appended (attempt
 * ATT, at AT, text MSG, whether cut TRUNC), as 0.1.0 wrote them.
 */
#define JOBQ_ERRORS_APPEND_SQL(ERRS, ATT, AT, MSG, TRUNC) \
	JOBQ_ERRORS_PUSH_SQL(ERRS, "pg_catalog.jsonb_build_object('attempt', " ATT ", 'at', " AT \
						 ", 'error', " MSG ", 'truncated', " TRUNC ")")

/*
 * JOBQ_ATTEMPT_END_SQL: the errors of job A (a row of jobq.jobs, before
 * the change) with the end of its current attempt appended: the attempt
 * number, its worker and claimed_at, when it ended (AT), how (OUTCOME:
 * 'failed', 'lease expired', 'released', 'cancelled'), and the error text
 * MSG (NULL for none) and whether it was cut (TRUNC).  jobq_job's attempt
 * history reads these entries; a completed attempt is never written here
 * (the history row itself is its record), so completes pay nothing.
 */
#define JOBQ_ATTEMPT_END_SQL(A, AT, OUTCOME, MSG, TRUNC) \
	JOBQ_ERRORS_PUSH_SQL(A ".errors", \
						 "pg_catalog.jsonb_build_object('attempt', " A ".attempt, 'at', " AT \
						 ", 'error', " MSG ", 'truncated', " TRUNC ", 'outcome', " OUTCOME \
						 ", 'worker', " A ".worker, 'claimed_at', " A ".claimed_at)")

/*
 * JOBQ_FINISHED_COUNTS_SQL: for CTE (deleted history rows with queue and
 * state), three columns: the queues, states (as text) and counts of the
 * deleted rows per (queue, state), parallel arrays (counters.c,
 * jobq_count_purged).
 */
#define JOBQ_FINISHED_COUNTS_SQL(CTE) \
	" g.queues, g.states, g.counts FROM (" \
	"  SELECT pg_catalog.array_agg(c.queue) AS queues, pg_catalog.array_agg(c.state::text) AS states," \
	"    pg_catalog.array_agg(c.n) AS counts" \
	"  FROM (SELECT queue, state, count(*) AS n FROM " CTE " GROUP BY queue, state) c) g"

/*
 * JOBQ_REDRIVE_SQL: the re-drive of the dead jobs chosen by CTE c ($2 is
 * now): insert them into the live table, skipping any whose dedupe key a
 * live job now holds, and delete from history exactly those that went in,
 * so no job is ever in both tables or in neither.  Returns the queues to
 * notify, one row per job moved (jobq_run_redrive announces them).  Rows
 * are found by "id = ANY (ARRAY(...))" so that the generic plan probes the
 * primary key of history (see claim.c).  jobq_retry and the bulk retries
 * differ only in their CTE c.
 */
#define JOBQ_REDRIVE_SQL JOBQ_REDRIVE_WITH_SQL("", "", "")

/*
 * JOBQ_REDRIVE_GROUPED_SQL: the same, used while some queue groups its
 * jobs (0.2.0 SQL): a grouped job goes back into its group in its old
 * place, and each row also names the job and its group (id, group_key,
 * group_seq; groups.c).
 */
#define JOBQ_REDRIVE_GROUPED_SQL \
	JOBQ_REDRIVE_WITH_SQL(", group_key, group_seq, flow_id", ", h.group_key, h.group_seq, h.flow_id", \
						  ", ins.id, ins.group_key, ins.group_seq")

/*
 * JOBQ_REDRIVE_FLOW_SQL: the same without groups: each job keeps its
 * flow_id (flows.c; the grouped form keeps it too), and the job's id is
 * the fourth column, as in the grouped form.
 */
#define JOBQ_REDRIVE_FLOW_SQL JOBQ_REDRIVE_WITH_SQL(", flow_id", ", h.flow_id", ", ins.id")

#define JOBQ_REDRIVE_WITH_SQL(COLS, VALUES, OUT) \
	" ins AS (" \
	"  INSERT INTO jobq.jobs (id, queue, state, priority, run_at, attempt, max_attempts," \
	"                         enqueued_at, dedupe_key, errors, payload" COLS ")" \
	"  SELECT h.id, h.queue, 'ready', h.priority, $2, 0, h.max_attempts," \
	"         h.enqueued_at, h.dedupe_key, h.errors, h.payload" VALUES \
	"  FROM jobq.history h WHERE h.id = ANY (ARRAY(SELECT c.id FROM c))" \
	"  ON CONFLICT (queue, dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING" \
	"  RETURNING id, queue" COLS ")," \
	" del AS (DELETE FROM jobq.history h WHERE h.id = ANY (ARRAY(SELECT ins.id FROM ins)) RETURNING h.id)" \
	" SELECT ins.queue, q.notify AND NOT q.paused, NOT q.paused" OUT \
	" FROM ins JOIN jobq.queues q ON q.name = ins.queue"

#endif							/* JOBQ_SQL_H */
