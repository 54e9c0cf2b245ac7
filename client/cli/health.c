/*-------------------------------------------------------------------------
 *
 * health.c
 *	  jobq health: the server's findings (jobq_health), and an exit code a
 *	  monitoring system can act on.
 *
 * Exit codes follow the monitoring-plugin convention (Nagios, Icinga,
 * Sensu): 0 every check ok, 1 a warning, 2 a critical finding, 3 the
 * health could not be told (no connection, or the server refused the call,
 * for instance to a role that is neither jobq_monitor nor jobq_reader).  A
 * usage error exits 2 as for every command, before connecting.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/cli/health.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

#define HEALTH_OK		0
#define HEALTH_WARNING	1
#define HEALTH_CRITICAL 2
#define HEALTH_UNKNOWN	3

/*
 * cmd_health
 *		health: every finding, critical first; for people, one line each
 *		(severity, check, subject: detail) and under each warning or
 *		critical finding what to do.
 */
int
cmd_health(void)
{
	static const char *const options[] = {NULL};
	JobqConn   *conn;
	JobqRows   *rows;
	int			code = HEALTH_OK;

	cli_allow_only("health", options);
	cli_want_args("health", 0, 0);
	conn = cli_connect();
	rows = jobq_health(conn);
	if (rows == NULL)
	{
		(void) cli_report_error();
		return HEALTH_UNKNOWN;
	}
	for (size_t r = 0; r < jobq_rows_count(rows); r++)
	{
		const char *severity = jobq_rows_get(rows, r, "severity");

		if (strcmp(severity, "critical") == 0)
			code = HEALTH_CRITICAL;
		else if (strcmp(severity, "warning") == 0 && code == HEALTH_OK)
			code = HEALTH_WARNING;
		if (cli_json())
			continue;
		printf("%-8s  %-12s  %s: %s\n", severity, jobq_rows_get(rows, r, "check"),
			   jobq_rows_get(rows, r, "subject"), jobq_rows_get(rows, r, "detail"));
		if (strcmp(severity, "ok") != 0)
			printf("%-8s  %-12s  -> %s\n", "", "", jobq_rows_get(rows, r, "advice"));
	}
	if (cli_json())
		cli_print_rows_json(rows);
	jobq_rows_free(rows);
	return code;
}
