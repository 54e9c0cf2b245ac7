/*-------------------------------------------------------------------------
 *
 * groups.c
 *	  The groups of a grouped queue (extension/groups_admin.c, issue 19).
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/src/groups.c
 *
 *-------------------------------------------------------------------------
 */

#include <string.h>

#include "jobq-int.h"

/*
 * jobq_groups: see jobq-client.h.  Arguments are checked here as the
 * server checks them, so a bad one costs no round trip.
 */
JobqRows *
jobq_groups(JobqConn *conn, const char *queue, int only_blocked, int max_rows,
			const char *after_key)
{
	char		rows[16];
	const char *values[4];

	if (conn == NULL)
		return NULL;
	jobq_clear_error(conn);
	if (jobq_check_queue(conn, queue) != JOBQ_OK)
		return NULL;
	if (max_rows == -1)
		max_rows = JOBQ_LIST_DEFAULT_ROWS;
	if (jobq_check_range(conn, "max_rows", max_rows, 1, JOBQ_LIST_MAX_ROWS) != JOBQ_OK)
		return NULL;
	if (after_key != NULL &&
		jobq_check_range(conn, "after_key length", (long long) strlen(after_key), 1,
						 JOBQ_GROUP_KEY_MAX) != JOBQ_OK)
		return NULL;
	if (jobq_require_sql(conn, JOBQ_SQL_GROUPS, "jobq_groups") != JOBQ_OK)
		return NULL;
	snprintf(rows, sizeof(rows), "%d", max_rows);
	values[0] = queue;
	values[1] = only_blocked ? "true" : "false";
	values[2] = rows;
	values[3] = after_key;
	return jobq_rows_from(conn, jobq_exec(conn, STMT_GROUPS, 4, values, 1));
}
