/*-------------------------------------------------------------------------
 *
 * audit.c
 *	  Reading the audit trail of operator calls (extension/audit.c).
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/src/audit.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>

#include "jobq-int.h"

/*
 * jobq_audit: see jobq-client.h.  Arguments are checked here as the
 * server checks them, so a bad one costs no round trip.
 */
JobqRows *
jobq_audit(JobqConn *conn, const char *queue, int max_rows, int64_t before_id)
{
	char		rows[16];
	char		before[24];
	const char *values[3];

	if (conn == NULL)
		return NULL;
	jobq_clear_error(conn);
	if (queue != NULL && jobq_check_queue(conn, queue) != JOBQ_OK)
		return NULL;
	if (max_rows == -1)
		max_rows = JOBQ_LIST_DEFAULT_ROWS;
	if (jobq_check_range(conn, "max_rows", max_rows, 1, JOBQ_LIST_MAX_ROWS) != JOBQ_OK)
		return NULL;
	if (before_id != 0 && jobq_check_id(conn, before_id) != JOBQ_OK)
		return NULL;
	snprintf(rows, sizeof(rows), "%d", max_rows);
	snprintf(before, sizeof(before), "%lld", (long long) before_id);
	values[0] = queue;
	values[1] = rows;
	values[2] = before_id != 0 ? before : NULL;
	return jobq_rows_from(conn, jobq_exec(conn, STMT_AUDIT, 3, values, 1));
}
