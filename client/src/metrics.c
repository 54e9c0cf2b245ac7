/*-------------------------------------------------------------------------
 *
 * metrics.c
 *	  Metrics over time: the rows of jobq_metrics and of the view
 *	  pg_stat_jobq (extension/metrics.c), as result tables.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/src/metrics.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq-int.h"

/*
 * jobq_metrics: see jobq-client.h.  The period and the bucket are passed
 * as text for the server to read: it checks them (and says why not).
 */
JobqRows *
jobq_metrics(JobqConn *conn, const char *queue, const char *since,
			 const char *until, const char *bucket)
{
	const char *values[4];

	if (conn == NULL)
		return NULL;
	jobq_clear_error(conn);
	if (queue != NULL && jobq_check_queue(conn, queue) != JOBQ_OK)
		return NULL;
	values[0] = queue;
	values[1] = since;
	values[2] = until;
	values[3] = bucket;
	return jobq_rows_from(conn, jobq_exec(conn, STMT_METRICS, 4, values, 1));
}

JobqRows *
jobq_stat_jobq(JobqConn *conn, const char *queue)
{
	if (conn == NULL)
		return NULL;
	jobq_clear_error(conn);
	if (queue != NULL && jobq_check_queue(conn, queue) != JOBQ_OK)
		return NULL;
	return jobq_rows_from(conn, jobq_exec(conn, STMT_STAT_JOBQ, 1, &queue, 1));
}
