/*-------------------------------------------------------------------------
 *
 * health.c
 *	  The server's health report (extension/health.c).
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/src/health.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq-int.h"

/*
 * jobq_health: see jobq-client.h.
 */
JobqRows *
jobq_health(JobqConn *conn)
{
	if (conn == NULL)
		return NULL;
	jobq_clear_error(conn);
	return jobq_rows_from(conn, jobq_exec(conn, STMT_HEALTH, 0, NULL, 1));
}
