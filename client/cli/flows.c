/*-------------------------------------------------------------------------
 *
 * flows.c
 *	  jobq flow create|show|cancel|retry: flows, jobs that wait for other
 *	  jobs (issue 18, doc/flows.md).
 *
 *	  create [FILE]	a graph of jobs from a JSON array (FILE, or stdin
 *					when FILE is absent or "-"), one transaction: jobq_flow
 *	  show FLOW		the jobs of a flow, their states, dependencies and
 *					what each still waits for: jobq_flow_jobs
 *	  cancel FLOW	its ready and waiting jobs: jobq_cancel_flow
 *	  retry ID		a dead job back to ready, and the jobs its failure
 *					cancelled back to waiting: jobq_retry(id, true)
 *
 * A flow is named by its id, the id of its first job (what jobq_flow's
 * first row, jobq_claim's flow_id and jobq_flow_jobs take).  There is no
 * list of the flows of a queue: the server keeps no index by queue of
 * them (doc/flows.md says why).  The statements are the CLI's own (sql.c),
 * schema-qualified as libjobq's are.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/cli/flows.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "cli.h"

/* the largest FILE read (10,000 jobs with payloads of 6 kB) */
#define FLOW_FILE_MAX	(64 * 1024 * 1024)

#define SQL_CREATE \
	"SELECT f.ref, f.id, CASE WHEN f.created THEN 'yes' ELSE 'no' END " \
	"FROM %s.jobq_flow($1::pg_catalog.jsonb) f"
#define SQL_CREATE_JSON \
	"SELECT COALESCE(pg_catalog.json_agg(f), '[]') FROM %s.jobq_flow($1::pg_catalog.jsonb) f"
/* the jobs, with what each still waits for: its pending and blocked edges */
#define SQL_SHOW \
	"SELECT f.id, f.queue, f.state, f.pending_deps, " \
	"pg_catalog.array_to_string(f.depends_on, ','), " \
	"(SELECT pg_catalog.string_agg(d.id::pg_catalog.text " \
	"   OPERATOR(pg_catalog.||) CASE d.st WHEN 'blocked' THEN ' (blocked)' ELSE '' END, " \
	"   ',' ORDER BY d.n) " \
	"  FROM ROWS FROM (pg_catalog.unnest(f.depends_on), pg_catalog.unnest(f.dep_states)) " \
	"  WITH ORDINALITY AS d(id, st, n) " \
	"  WHERE d.st OPERATOR(pg_catalog.=) ANY ('{pending,blocked}'::pg_catalog.text[])), " \
	"pg_catalog.date_trunc('second', f.enqueued_at), " \
	"pg_catalog.date_trunc('second', f.finished_at) " \
	"FROM %s.jobq_flow_jobs($1::pg_catalog.int8) f ORDER BY f.id"
#define SQL_SHOW_JSON \
	"SELECT COALESCE(pg_catalog.json_agg(f ORDER BY f.id), '[]') " \
	"FROM %s.jobq_flow_jobs($1::pg_catalog.int8) f"
#define SQL_CANCEL	"SELECT %s.jobq_cancel_flow($1::pg_catalog.int8)"
#define SQL_RETRY \
	"SELECT %s.jobq_retry($1::pg_catalog.int8, with_dependents => true)"

static char *file_text;

/* leave: end the program from here (cli_sql_leave), the file read freed */
static void CLI_NORETURN
leave(int code)
{
	free(file_text);
	cli_sql_leave(code);
}

/* run: statement sql of one parameter; an error ends the program */
static PGresult *
run(const char *sql, const char *param)
{
	return cli_sql_run(sql, 1, &param, NULL);
}

/* read_file: all of path ("-" or NULL: stdin), or exit 1 saying why */
static char *
read_file(const char *path)
{
	bool		is_stdin = path == NULL || strcmp(path, "-") == 0;
	FILE	   *f = is_stdin ? stdin : fopen(path, "r");
	size_t		len = 0,
				cap = 65536;
	char	   *text;

	if (f == NULL)
	{
		fprintf(stderr, "%s: could not open \"%s\": %s\n", cli_progname(), path,
				strerror(errno));
		leave(EXIT_FAILED);
	}
	text = jobq_xmalloc(cap);
	for (;;)
	{
		size_t		n = fread(text + len, 1, cap - len - 1, f);

		len += n;
		if (len + 1 < cap)
			break;
		if (cap > FLOW_FILE_MAX)
		{
			fprintf(stderr, "%s: %s is larger than %d bytes\n", cli_progname(),
					is_stdin ? "stdin" : path, FLOW_FILE_MAX);
			free(text);
			leave(EXIT_FAILED);
		}
		cap *= 2;
		text = realloc(text, cap);
		if (text == NULL)
		{
			fprintf(stderr, "%s: out of memory\n", cli_progname());
			leave(EXIT_FAILED);
		}
	}
	if (ferror(f))
	{
		fprintf(stderr, "%s: could not read %s: %s\n", cli_progname(),
				is_stdin ? "stdin" : path, strerror(errno));
		free(text);
		leave(EXIT_FAILED);
	}
	if (!is_stdin)
		fclose(f);
	text[len] = '\0';
	if (memchr(text, '\0', len) != NULL)
	{
		fprintf(stderr, "%s: %s contains a NUL byte; JSON cannot\n", cli_progname(),
				is_stdin ? "stdin" : path);
		free(text);
		leave(EXIT_FAILED);
	}
	return text;
}

/* print a one-value JSON result as it is */
static void
print_value(PGresult *res)
{
	printf("%s\n", PQgetvalue(res, 0, 0));
	PQclear(res);
}

/* print the rows of res as a table of ncols columns (NULL: an empty cell) */
static void
print_rows(PGresult *res, int ncols, const char *const *names, const bool *numeric)
{
	const char *row[8];
	Table		t;

	table_init(&t, ncols, names, numeric);
	for (int r = 0; r < PQntuples(res); r++)
	{
		for (int c = 0; c < ncols && c < 8; c++)
			row[c] = PQgetisnull(res, r, c) ? NULL : PQgetvalue(res, r, c);
		table_add(&t, row);
	}
	PQclear(res);
	print_table(&t);
	table_free(&t);
}

/* flow create [FILE]: ref, id, created of each job, in the file's order */
static int
flow_create(void)
{
	static const char *const names[] = {"ref", "id", "created"};
	static const bool numeric[] = {false, true, false};
	PGresult   *res;

	cli_want_args("flow create", 1, 2);
	file_text = read_file(cli_arg(2));
	cli_sql_connect();
	res = run(cli_json() ? SQL_CREATE_JSON : SQL_CREATE, file_text);
	if (cli_json())
	{
		print_value(res);
		return EXIT_OK;
	}
	print_rows(res, 3, names, numeric);
	return EXIT_OK;
}

/*
 * flow show FLOW: its jobs in id order: state, the dependencies, those not
 * satisfied yet ("(blocked)" when the edge waits for a retry), times.  A
 * flow with no job the caller may see is "not found", exit 1.
 */
static int
flow_show(void)
{
	static const char *const names[] = {"id", "queue", "state", "pending", "depends_on",
	"waits_for", "enqueued_at", "finished_at"};
	static const bool numeric[] = {true, false, false, true, false, false, false, false};
	char		idbuf[24];
	PGresult   *res;

	cli_want_args("flow show", 2, 2);
	snprintf(idbuf, sizeof(idbuf), "%lld", (long long) cli_job_id(cli_arg(2)));
	cli_sql_connect();
	res = run(cli_json() ? SQL_SHOW_JSON : SQL_SHOW, idbuf);
	if (cli_json() ? strcmp(PQgetvalue(res, 0, 0), "[]") == 0 : PQntuples(res) == 0)
	{
		PQclear(res);
		fprintf(stderr, "%s: error: flow %s not found (a flow is named by the id of its "
				"first job)\n", cli_progname(), idbuf);
		leave(EXIT_FAILED);
	}
	if (cli_json())
	{
		print_value(res);
		return EXIT_OK;
	}
	print_rows(res, 8, names, numeric);
	return EXIT_OK;
}

/* flow cancel FLOW: how many jobs were cancelled (0 is not an error) */
static int
flow_cancel(void)
{
	char		idbuf[24];
	PGresult   *res;

	cli_want_args("flow cancel", 2, 2);
	snprintf(idbuf, sizeof(idbuf), "%lld", (long long) cli_job_id(cli_arg(2)));
	cli_sql_connect();
	res = run(SQL_CANCEL, idbuf);
	if (cli_json())
		printf("{\"flow_id\":%s,\"cancelled\":%s}\n", idbuf, PQgetvalue(res, 0, 0));
	else
		printf("cancelled %s job(s) of flow %s\n", PQgetvalue(res, 0, 0), idbuf);
	PQclear(res);
	return EXIT_OK;
}

/* flow retry ID: a dead job and the dependents its failure cancelled */
static int
flow_retry(void)
{
	char		idbuf[24];
	PGresult   *res;
	bool		done;

	cli_want_args("flow retry", 2, 2);
	snprintf(idbuf, sizeof(idbuf), "%lld", (long long) cli_job_id(cli_arg(2)));
	cli_sql_connect();
	res = run(SQL_RETRY, idbuf);
	done = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	if (!done)
	{
		fprintf(stderr, "%s: error: job %s was not retried: only dead jobs can be retried "
				"(and not while a live job holds its dedupe key)\n", cli_progname(), idbuf);
		leave(EXIT_FAILED);
	}
	if (cli_json())
		printf("{\"id\":%s,\"retried\":true,\"with_dependents\":true}\n", idbuf);
	else
		printf("job %s retried, with the dependents its failure cancelled\n", idbuf);
	return EXIT_OK;
}

/*
 * cmd_flow
 *		flow create|show|cancel|retry ...
 */
int
cmd_flow(void)
{
	static const char *const options[] = {NULL};
	const char *sub = cli_arg(1);
	int			rc;

	cli_allow_only("flow", options);
	if (sub == NULL)
		cli_usage_error("%s", "missing subcommand for \"flow\" (create, show, cancel, retry)");
	if (strcmp(sub, "create") == 0)
		rc = flow_create();
	else if (strcmp(sub, "show") == 0)
		rc = flow_show();
	else if (strcmp(sub, "cancel") == 0)
		rc = flow_cancel();
	else if (strcmp(sub, "retry") == 0)
		rc = flow_retry();
	else
		cli_usage_error("unknown flow subcommand \"%s\"", sub);
	cli_sql_disconnect();
	free(file_text);
	file_text = NULL;
	return rc;
}
