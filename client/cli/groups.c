/*-------------------------------------------------------------------------
 *
 * groups.c
 *	  jobq groups QUEUE: the groups of a queue that groups its jobs (issue
 *	  19, doc/groups.md), a page at a time.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/cli/groups.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/*
 * cmd_groups
 *		groups QUEUE [--state=blocked] [--limit=N] [--after=KEY]: key,
 *		running and live jobs, the next job and when it is due, the dead job
 *		that blocks it and since when, whether a claim may take from it.
 *		The last line says how to get the next page.
 */
int
cmd_groups(void)
{
	static const char *const options[] = {"state", "limit", "after", NULL};
	static const char *const names[] = {"key", "running", "live", "next_job", "due",
	"blocked_by", "blocked_since", "eligible"};
	static const bool numeric[] = {false, true, true, true, false, true, false, false};
	const char *state;
	int			limit;
	JobqRows   *rows;
	Table		t;
	size_t		n;

	cli_allow_only("groups", options);
	cli_want_args("groups", 1, 1);
	state = cli_option("state");
	if (state != NULL && strcmp(state, "blocked") != 0)
		cli_usage_error("groups: --state takes only \"blocked\", not \"%s\"", state);
	limit = cli_int_option("limit", -1, 1, JOBQ_LIST_MAX_ROWS);
	rows = cli_need(jobq_groups(cli_connect(), cli_arg(1), state != NULL, limit,
								cli_option("after")));
	if (cli_json())
	{
		cli_print_rows_json(rows);
		jobq_rows_free(rows);
		return EXIT_OK;
	}
	table_init(&t, 8, names, numeric);
	n = jobq_rows_count(rows);
	for (size_t r = 0; r < n; r++)
	{
		char		live[32];
		char		due[20] = "";
		char		since[20] = "";
		const char *row[8];
		const char *v;

		snprintf(live, sizeof(live), "%s%s", jobq_rows_get(rows, r, "live"),
				 strcmp(jobq_rows_get(rows, r, "live_capped"), "t") == 0 ? "+" : "");
		if ((v = jobq_rows_get(rows, r, "head_run_at")) != NULL)
			snprintf(due, sizeof(due), "%s", v);	/* to the second */
		if ((v = jobq_rows_get(rows, r, "blocked_at")) != NULL)
			snprintf(since, sizeof(since), "%s", v);
		row[0] = jobq_rows_get(rows, r, "key");
		row[1] = jobq_rows_get(rows, r, "running");
		row[2] = live;
		row[3] = jobq_rows_get(rows, r, "head_id");
		row[4] = due;
		row[5] = jobq_rows_get(rows, r, "blocked_by");
		row[6] = since;
		row[7] = strcmp(jobq_rows_get(rows, r, "eligible"), "t") == 0 ? "yes" : "no";
		table_add(&t, row);
	}
	print_table(&t);
	table_free(&t);
	if (limit == -1)
		limit = JOBQ_LIST_DEFAULT_ROWS;
	if (n > 0 && n == (size_t) limit)
		printf("more: --after='%s'\n", jobq_rows_get(rows, n - 1, "key"));
	jobq_rows_free(rows);
	return EXIT_OK;
}
