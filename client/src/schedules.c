/*-------------------------------------------------------------------------
 *
 * schedules.c
 *	  jobq_cron_tick: fire the due ticks of the server's schedules
 *	  (extension/tick.c).
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/src/schedules.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>

#include "jobq-int.h"

/*
 * jobq_cron_tick: see jobq-client.h.
 */
JobqRows *
jobq_cron_tick(JobqConn *conn, int max_schedules)
{
	char		max[16];
	const char *values[1];

	if (conn == NULL)
		return NULL;
	jobq_clear_error(conn);
	if (max_schedules == -1)
		max_schedules = 100;
	if (jobq_check_range(conn, "max_schedules", max_schedules, 1, JOBQ_CRON_TICK_MAX) != JOBQ_OK)
		return NULL;
	snprintf(max, sizeof(max), "%d", max_schedules);
	values[0] = max;
	return jobq_rows_from(conn, jobq_exec(conn, STMT_CRON_TICK, 1, values, 1));
}
