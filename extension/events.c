/*-------------------------------------------------------------------------
 *
 * events.c
 *	  jobq_finished_since: the jobs of a queue that finished after a
 *	  cursor, for a listener of completion events that reconnects.
 *
 * Keyset pages over (finished_at, id) of jobq.history: the cursor is the
 * last row a caller saw, so a page costs the same however much history
 * there is.  Each finished state is one range of history_queue_state_idx
 * (queue, state, finished_at), merged in (finished_at, id) order, so the
 * function needs no index of its own and completes pay nothing for it.
 *
 * At least once, not exactly once: finished_at is the finishing
 * statement's clock, not its commit's, so a job that finished at t may
 * commit after a reader already read past t.  A listener that reconnects
 * asks again from a little before the last finished_at it saw and drops
 * the ids it already has (doc/sql.md, jobq_finished_since).  Only ids and
 * states, as the events themselves: no payload, no result.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/events.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"

#include "catalog/pg_type.h"

PG_FUNCTION_INFO_V1(jobq_finished_since);

enum
{
	ST_FINISHED_SINCE,
	NUM_STATEMENTS
};

/* One finished state of queue $1 after the cursor ($2, $3), in order */
#define FINISHED_RANGE_SQL(STATE) \
	"(SELECT h.id, h.state, h.finished_at FROM jobq.history h" \
	" WHERE h.queue = $1 AND h.state = '" STATE "' AND h.finished_at >= $2" \
	"   AND (h.finished_at > $2 OR h.id > $3)" \
	" ORDER BY h.finished_at, h.id LIMIT $4)"

static const JobqStatement statements[NUM_STATEMENTS] = {
	/* $1 queue, $2 since, $3 after_id, $4 max_rows */
	[ST_FINISHED_SINCE] = {"finished_since",
		"SELECT f.id, f.state::text AS state, f.finished_at FROM ("
		FINISHED_RANGE_SQL("completed") " UNION ALL "
		FINISHED_RANGE_SQL("dead") " UNION ALL "
		FINISHED_RANGE_SQL("cancelled") ") f"
		" ORDER BY f.finished_at, f.id LIMIT $4",
		4, {TEXTOID, TIMESTAMPTZOID, INT8OID, INT8OID}},
};

static SPIPlanPtr plans[NUM_STATEMENTS];

const JobqStatements jobq_events_statements = {statements, NUM_STATEMENTS, plans, NULL};

/*
 * jobq_finished_since(queue, since, after_id, max_rows)
 *	  -> TABLE (id, state, finished_at)
 *	  Up to max_rows jobs of queue with (finished_at, id) after (since,
 *	  after_id), in that order.  The caller needs enqueue or inspect on the
 *	  queue (checked while per-queue grants exist).
 */
Datum
jobq_finished_since(PG_FUNCTION_ARGS)
{
	text	   *queue = jobq_queue_arg(fcinfo, 0);
	Datum		values[4];
	JobqQueueSettings settings;
	TupleDesc	desc;
	Tuplestorestate *store;
	int			rc;

	jobq_require(fcinfo, 1, "since");
	jobq_require(fcinfo, 2, "after_id");
	jobq_require(fcinfo, 3, "max_rows");
	jobq_check_int_range(PG_GETARG_INT64(2), "after_id", 0, PG_INT64_MAX);
	jobq_check_int_range(PG_GETARG_INT32(3), "max_rows", 1, JOBQ_LIST_MAX_ROWS);
	if (!jobq_queue_allowed(queue, JOBQ_PRIV_ENQUEUE))
		jobq_check_queue(queue, JOBQ_PRIV_INSPECT);

	store = jobq_srf_begin(fcinfo, &desc);
	jobq_spi_connect();
	if (!jobq_queue_settings(queue, &settings))
		jobq_queue_not_found(queue);
	values[0] = PointerGetDatum(queue);
	values[1] = PG_GETARG_DATUM(1);
	values[2] = PG_GETARG_DATUM(2);
	values[3] = Int64GetDatum((int64) PG_GETARG_INT32(3));
	rc = SPI_execute_plan(jobq_plan(&jobq_events_statements, ST_FINISHED_SINCE),
						  values, NULL, true, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "read finished jobs");
	jobq_srf_put_spi(store, desc);
	jobq_spi_finish();
	return (Datum) 0;
}
