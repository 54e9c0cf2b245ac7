/*-------------------------------------------------------------------------
 *
 * bulk.c
 *	  The bulk actions by filter (extension/bulk.c): one page per call.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/src/bulk.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobq-int.h"

/*
 * jobq_bulk_where: see jobq-client.h.  The queue, max_rows and the
 * filters' JSON text are checked here as the server checks them; the
 * state, the filters' keys and the cursor by the server.
 */
int
jobq_bulk_where(JobqConn *conn, JobqBulkAction action, const char *queue,
				const char *state, const char *filters, int max_rows,
				const char *after, int64_t *affected, char **next_cursor)
{
	static const JobqStmt stmts[] = {
		[JOBQ_BULK_RETRY] = STMT_RETRY_WHERE,
		[JOBQ_BULK_CANCEL] = STMT_CANCEL_WHERE,
		[JOBQ_BULK_DELETE] = STMT_DELETE_WHERE,
		[JOBQ_BULK_RUN_NOW] = STMT_RUN_NOW_WHERE,
	};
	char		rows[16];
	char	   *json = NULL;
	const char *values[5];
	const char *cursor;
	PGresult   *res;
	int			rc = JOBQ_OK;

	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	if (next_cursor != NULL)
		*next_cursor = NULL;
	if ((int) action < 0 || (size_t) action >= sizeof(stmts) / sizeof(stmts[0]))
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT, "unknown bulk action %d", (int) action);
		return JOBQ_ERR;
	}
	if (jobq_check_queue(conn, queue) != JOBQ_OK)
		return JOBQ_ERR;
	if (max_rows == -1)
		max_rows = JOBQ_BULK_DEFAULT_ROWS;
	if (jobq_check_range(conn, "max_rows", max_rows, 1, JOBQ_BULK_MAX) != JOBQ_OK)
		return JOBQ_ERR;
	if (filters != NULL &&
		(json = jobq_copy_json(conn, "filters", filters, strlen(filters))) == NULL)
		return JOBQ_ERR;
	snprintf(rows, sizeof(rows), "%d", max_rows);
	values[0] = queue;
	values[1] = state;
	values[2] = json ? json : "{}";
	values[3] = rows;
	values[4] = after;
	res = jobq_exec(conn, stmts[action], 5, values, 1);
	free(json);
	if (res == NULL)
		return JOBQ_ERR;
	if (affected != NULL &&
		jobq_parse_int64(conn, PQgetvalue(res, 0, 0), affected) != JOBQ_OK)
		rc = JOBQ_ERR;
	cursor = PQgetisnull(res, 0, 2) ? NULL : PQgetvalue(res, 0, 2);
	if (rc == JOBQ_OK && next_cursor != NULL && cursor != NULL &&
		(*next_cursor = strdup(cursor)) == NULL)
	{
		jobq_set_error(conn, JOBQ_ERR_OOM, "out of memory");
		rc = JOBQ_ERR;
	}
	PQclear(res);
	return rc;
}
