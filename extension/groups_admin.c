/*-------------------------------------------------------------------------
 *
 * groups_admin.c
 *	  The groups of a queue for operators: jobq_groups (a keyset page),
 *	  jobq_blocked_groups, jobq_skip_head (issue 19, doc/groups.md).
 *
 * Both reads walk the primary key of jobq.groups (queue, key) from a
 * cursor, or the partial index of blocked groups, and stop at max_rows;
 * a group's count of live jobs reads its line (jobq.group_jobs) up to
 * JOBQ_GROUP_COUNT_CAP, so a page costs O(rows x cap) at worst, never a
 * scan of the queue.  jobq_skip_head cancels what holds a group: its dead
 * head, or else its ready head, through jobq_cancel (its privilege check,
 * audit row and group update).
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/groups_admin.c
 *
 *-------------------------------------------------------------------------
 */
#include "groups.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(jobq_groups);
PG_FUNCTION_INFO_V1(jobq_blocked_groups);
PG_FUNCTION_INFO_V1(jobq_skip_head);

/* admin.c */
extern PGDLLEXPORT Datum jobq_cancel(PG_FUNCTION_ARGS);

/* live jobs a row of jobq_groups counts at most (more: the cap, and capped) */
#define JOBQ_GROUP_COUNT_CAP	10000

enum
{
	ST_GROUPS_PAGE,
	ST_BLOCKED_GROUPS,
	ST_GROUP_HOLDER,
	NUM_STATEMENTS
};

static const JobqStatement statements[NUM_STATEMENTS] = {
	/* $1 queue, $2 only blocked, $3 max_rows, $4 after this key (NULL: from the start) */
	[ST_GROUPS_PAGE] = {"groups_page",
		"SELECT g.key, g.running, n.live, n.live > " CppAsString2(JOBQ_GROUP_COUNT_CAP) " AS capped,"
		"  g.head_id, g.head_run_at, g.blocked_by, g.blocked_at, g.eligible, g.tat, g.last_claim_at"
		" FROM jobq.groups g"
		" CROSS JOIN LATERAL (SELECT count(*) AS live FROM ("
		"   SELECT 1 FROM jobq.group_jobs gl WHERE gl.queue = g.queue AND gl.key = g.key"
		"   LIMIT " CppAsString2(JOBQ_GROUP_COUNT_CAP) " + 1) l) n"
		" WHERE g.queue = $1 AND ($4::text IS NULL OR g.key > $4)"
		"   AND (NOT $2 OR g.blocked_by IS NOT NULL)"
		" ORDER BY g.key LIMIT $3",
		4, {TEXTOID, BOOLOID, INT4OID, TEXTOID}},
	/* $1 queue: the blocked groups, the error of each dead head */
	[ST_BLOCKED_GROUPS] = {"blocked_groups",
		"SELECT g.key, g.blocked_by, g.blocked_at,"
		"  h.errors OPERATOR(pg_catalog.->) -1 OPERATOR(pg_catalog.->>) 'error'"
		" FROM jobq.groups g LEFT JOIN jobq.history h ON h.id = g.blocked_by"
		" WHERE g.blocked_by IS NOT NULL AND g.queue = $1"
		" ORDER BY g.blocked_at, g.key",
		1, {TEXTOID}},
	/* $1 queue, $2 key: what holds the group, its dead head or its head */
	[ST_GROUP_HOLDER] = {"group_holder",
		"SELECT CASE WHEN blocked_by IS NOT NULL THEN blocked_by WHEN running = 0 THEN head_id END"
		" FROM jobq.groups WHERE queue = $1 AND key = $2",
		2, {TEXTOID, TEXTOID}},
};

static SPIPlanPtr plans[NUM_STATEMENTS];

const JobqStatements jobq_groups_admin_statements = {statements, NUM_STATEMENTS, plans, NULL};

/*
 * jobq_require_grouped_queue
 *	  42704 for an unknown queue, 42501 unless the caller may use it for
 *	  priv, 22023 for a queue that does not group its jobs.  Inside SPI.
 */
void
jobq_require_grouped_queue(text *queue, JobqQueuePriv priv)
{
	JobqQueueSettings settings;

	if (!jobq_queue_settings(queue, &settings))
		jobq_queue_not_found(queue);
	jobq_check_queue(queue, priv);
	if (!jobq_queue_grouped(&settings))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("queue \"%s\" does not group its jobs", text_to_cstring(queue))));
}

/*
 * jobq_groups(queue, only_blocked, max_rows, after_key)
 *	  -> setof (key, running, live, live_capped, head_id, head_run_at,
 *				blocked_by, blocked_at, eligible, tat, last_claim_at)
 *	  A page of the queue's groups in key order, after after_key: pass
 *	  the last key of a page to get the next.
 */
Datum
jobq_groups(PG_FUNCTION_ARGS)
{
	text	   *queue = jobq_queue_arg(fcinfo, 0);
	Datum		args[4];
	char		nulls[4] = {' ', ' ', ' ', ' '};
	TupleDesc	desc;
	Tuplestorestate *store;
	int			rc;

	jobq_require(fcinfo, 1, "only_blocked");
	jobq_require(fcinfo, 2, "max_rows");
	jobq_check_int_range(PG_GETARG_INT32(2), "max_rows", 1, JOBQ_LIST_MAX_ROWS);
	args[0] = PointerGetDatum(queue);
	args[1] = PG_GETARG_DATUM(1);
	args[2] = PG_GETARG_DATUM(2);
	args[3] = PG_ARGISNULL(3) ? (Datum) 0 : PG_GETARG_DATUM(3);
	if (PG_ARGISNULL(3))
		nulls[3] = 'n';

	store = jobq_srf_begin(fcinfo, &desc);
	jobq_spi_connect();
	jobq_require_grouped_queue(queue, JOBQ_PRIV_INSPECT);
	rc = SPI_execute_plan(jobq_plan(&jobq_groups_admin_statements, ST_GROUPS_PAGE), args, nulls,
						  true, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "list groups");
	jobq_srf_put_spi(store, desc);
	jobq_spi_finish();
	return (Datum) 0;
}

/*
 * jobq_blocked_groups(queue) -> setof (key, blocked_by, since, error)
 *	  The groups a dead head holds (fifo_block retry_and_dead), oldest
 *	  first, with the head's last error.
 */
Datum
jobq_blocked_groups(PG_FUNCTION_ARGS)
{
	text	   *queue = jobq_queue_arg(fcinfo, 0);
	Datum		arg = PointerGetDatum(queue);
	TupleDesc	desc;
	Tuplestorestate *store;
	int			rc;

	store = jobq_srf_begin(fcinfo, &desc);
	jobq_spi_connect();
	jobq_require_grouped_queue(queue, JOBQ_PRIV_INSPECT);
	rc = SPI_execute_plan(jobq_plan(&jobq_groups_admin_statements, ST_BLOCKED_GROUPS), &arg,
						  NULL, true, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "list blocked groups");
	jobq_srf_put_spi(store, desc);
	jobq_spi_finish();
	return (Datum) 0;
}

/*
 * jobq_skip_head(queue, key) -> bigint
 *	  Cancel what holds the group: its dead head, or else, when none of
 *	  its jobs runs, its ready head (jobq_cancel: admin of the queue,
 *	  audited).  Returns the cancelled job's id, or NULL when nothing holds
 *	  the group (it is empty, or a job of it runs: a running job cannot be
 *	  cancelled).
 */
Datum
jobq_skip_head(PG_FUNCTION_ARGS)
{
	text	   *queue = jobq_queue_arg(fcinfo, 0);
	text	   *key;
	Datum		args[2];
	Datum		id;
	bool		isnull = true;
	int			rc;

	jobq_require(fcinfo, 1, "key");
	key = PG_GETARG_TEXT_PP(1);
	jobq_check_group_key(key, "key");
	args[0] = PointerGetDatum(queue);
	args[1] = PointerGetDatum(key);

	jobq_spi_connect();
	jobq_require_grouped_queue(queue, JOBQ_PRIV_ADMIN);
	rc = SPI_execute_plan(jobq_plan(&jobq_groups_admin_statements, ST_GROUP_HOLDER), args, NULL,
						  false, 1);
	jobq_spi_check(rc, SPI_OK_SELECT, "find the group's head");
	id = SPI_processed > 0 ?
		SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull) : (Datum) 0;
	jobq_spi_finish();
	if (isnull || !DatumGetBool(DirectFunctionCall1(jobq_cancel, id)))
		PG_RETURN_NULL();
	PG_RETURN_DATUM(id);
}
