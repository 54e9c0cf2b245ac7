/*-------------------------------------------------------------------------
 *
 * audit.c
 *	  jobq audit: the audit trail of operator calls (jobq_audit), newest
 *	  first.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/cli/audit.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* at most this many ids are printed of a call by id; more are counted */
#define AUDIT_IDS_SHOWN 5

/*
 * what_of
 *		The "what" cell of a row: its ids (or how many), its filters and
 *		its detail, in a buffer of size len.
 */
static void
what_of(const JobqRows *rows, size_t r, char *buf, size_t len)
{
	const char *ids = jobq_rows_get(rows, r, "ids");
	const char *filters = jobq_rows_get(rows, r, "filters");
	const char *detail = jobq_rows_get(rows, r, "detail");
	size_t		n = 0;
	int			commas = 0;

	buf[0] = '\0';
	if (ids != NULL)
	{
		for (const char *p = ids; *p; p++)
			commas += *p == ',';
		if (strcmp(ids, "{}") == 0)
			n += snprintf(buf + n, len - n, "no ids");
		else if (commas < AUDIT_IDS_SHOWN)
			n += snprintf(buf + n, len - n, "ids %s", ids);
		else
			n += snprintf(buf + n, len - n, "%d ids", commas + 1);
	}
	if (filters != NULL && n < len)
		n += snprintf(buf + n, len - n, "%sfilters %s", n ? "; " : "", filters);
	if (detail != NULL && n < len)
		snprintf(buf + n, len - n, "%s%s", n ? "; " : "", detail);
}

/*
 * cmd_audit
 *		audit [--queue Q] [--limit N]: at, actor, role, action, queue, rows
 *		affected and what (ids, filters, detail).
 */
int
cmd_audit(void)
{
	static const char *const options[] = {"queue", "limit", NULL};
	static const char *const names[] = {"id", "at", "actor", "role", "action", "queue",
	"affected", "what"};
	static const bool numeric[] = {true, false, false, false, false, false, true, false};
	int			limit;
	JobqRows   *rows;
	Table		t;

	cli_allow_only("audit", options);
	cli_want_args("audit", 0, 0);
	limit = cli_int_option("limit", -1, 1, JOBQ_LIST_MAX_ROWS);
	rows = cli_need(jobq_audit(cli_connect(), cli_option("queue"), limit, 0));
	if (cli_json())
	{
		cli_print_rows_json(rows);
		jobq_rows_free(rows);
		return EXIT_OK;
	}
	table_init(&t, 8, names, numeric);
	for (size_t r = 0; r < jobq_rows_count(rows); r++)
	{
		char		at[20] = "";
		char		what[256];
		const char *row[8];
		const char *ts = jobq_rows_get(rows, r, "at");

		if (ts != NULL)
			snprintf(at, sizeof(at), "%s", ts);	/* to the second */
		what_of(rows, r, what, sizeof(what));
		row[0] = jobq_rows_get(rows, r, "id");
		row[1] = at;
		row[2] = jobq_rows_get(rows, r, "actor");
		row[3] = jobq_rows_get(rows, r, "role");
		row[4] = jobq_rows_get(rows, r, "action");
		row[5] = jobq_rows_get(rows, r, "queue");
		row[6] = jobq_rows_get(rows, r, "affected");
		row[7] = what;
		table_add(&t, row);
	}
	print_table(&t);
	table_free(&t);
	jobq_rows_free(rows);
	return EXIT_OK;
}
