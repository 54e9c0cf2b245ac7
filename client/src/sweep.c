/*-------------------------------------------------------------------------
 *
 * sweep.c
 *	  jobq_sweep: expired leases back to ready (or dead), old history
 *	  purged (extension/sweep.c).
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/src/sweep.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>

#include "jobq-int.h"

/*
 * jobq_sweep: see jobq-client.h.
 */
int
jobq_sweep(JobqConn *conn, const char *queue, int max_rows,
		   int64_t *requeued, int64_t *dead, int64_t *purged)
{
	char		rows[16];
	const char *values[2];
	PGresult   *res;
	int64_t		counts[3] = {0, 0, 0};
	int			i;

	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	if (queue != NULL && jobq_check_queue(conn, queue) != JOBQ_OK)
		return JOBQ_ERR;
	if (max_rows == -1)
		max_rows = JOBQ_SWEEP_DEFAULT_ROWS;
	if (jobq_check_range(conn, "max_rows", max_rows, 1, JOBQ_SWEEP_MAX_ROWS) != JOBQ_OK)
		return JOBQ_ERR;
	snprintf(rows, sizeof(rows), "%d", max_rows);
	values[0] = queue;
	values[1] = rows;
	res = jobq_exec(conn, STMT_SWEEP, 2, values, 1);
	if (res == NULL)
		return JOBQ_ERR;
	if (PQntuples(res) != 1 || PQnfields(res) != 3)
	{
		jobq_set_error(conn, JOBQ_ERR_PROTOCOL, "unexpected sweep result");
		PQclear(res);
		return JOBQ_ERR;
	}
	for (i = 0; i < 3; i++)
		if (!PQgetisnull(res, 0, i) &&
			jobq_parse_int64(conn, PQgetvalue(res, 0, i), &counts[i]) != JOBQ_OK)
		{
			PQclear(res);
			return JOBQ_ERR;
		}
	PQclear(res);
	if (requeued)
		*requeued = counts[0];
	if (dead)
		*dead = counts[1];
	if (purged)
		*purged = counts[2];
	return JOBQ_OK;
}
