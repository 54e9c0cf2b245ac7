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
 * them (doc/flows.md says why).  The statements are sent here, through
 * the libjobq connection, schema-qualified as libjobq's are.
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
	"SELECT f.ref, f.id, f.created FROM %s.jobq_flow($1::pg_catalog.jsonb) f"
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

static JobqConn *conn;			/* main.c's */
static PGconn *pg;
static char *qschema;			/* the schema, quoted */
static char *file_text;

/* leave: end the program from here, closing the connection first */
static void CLI_NORETURN
leave(int code)
{
	PQfreemem(qschema);
	free(file_text);
	jobq_disconnect(conn);
	fflush(stdout);
	exit(code);
}

/*
 * sql_error
 *		Report a failed statement as main.c reports a libjobq error
 *		(message, SQLSTATE, DETAIL, HINT); exits 3 when the connection is
 *		gone, else 1.
 */
static void CLI_NORETURN
sql_error(PGresult *res)
{
	const char *msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *detail = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL) : NULL;
	const char *hint = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_HINT) : NULL;
	bool		lost = PQstatus(pg) == CONNECTION_BAD;

	fprintf(stderr, "%s: error: %s", cli_progname(), msg ? msg : PQerrorMessage(pg));
	if (state)
		fprintf(stderr, " (SQLSTATE %s)", state);
	if (msg)
		fputc('\n', stderr);
	if (detail)
		fprintf(stderr, "DETAIL: %s\n", detail);
	if (hint)
		fprintf(stderr, "HINT: %s\n", hint);
	PQclear(res);
	leave(lost ? EXIT_CONNECTION : EXIT_FAILED);
}

/* run: statement sql ("%s" twice at most: the schema) with one parameter */
static PGresult *
run(const char *sql, const char *param)
{
	size_t		len = strlen(sql) + 2 * strlen(qschema) + 1;
	char	   *text = jobq_xmalloc(len);
	PGresult   *res;

	snprintf(text, len, sql, qschema, qschema);
	res = PQexecParams(pg, text, 1, NULL, &param, NULL, NULL, 0);
	free(text);
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		sql_error(res);
	return res;
}

static void
connect_flows(void)
{
	const char *schema;

	conn = cli_connect();
	schema = jobq_schema(conn);
	pg = jobq_pgconn(conn);
	qschema = PQescapeIdentifier(pg, schema, strlen(schema));
	if (qschema == NULL)
	{
		fprintf(stderr, "%s: out of memory\n", cli_progname());
		leave(EXIT_FAILED);
	}
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

/* flow create [FILE]: ref, id, created of each job, in the file's order */
static int
flow_create(void)
{
	static const char *const names[] = {"ref", "id", "created"};
	static const bool numeric[] = {false, true, false};
	PGresult   *res;
	Table		t;

	cli_want_args("flow create", 1, 2);
	file_text = read_file(cli_arg(2));
	connect_flows();
	res = run(cli_json() ? SQL_CREATE_JSON : SQL_CREATE, file_text);
	if (cli_json())
	{
		print_value(res);
		return EXIT_OK;
	}
	table_init(&t, 3, names, numeric);
	for (int r = 0; r < PQntuples(res); r++)
	{
		const char *row[3];

		row[0] = PQgetvalue(res, r, 0);
		row[1] = PQgetvalue(res, r, 1);
		row[2] = strcmp(PQgetvalue(res, r, 2), "t") == 0 ? "yes" : "no";
		table_add(&t, row);
	}
	PQclear(res);
	print_table(&t);
	table_free(&t);
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
	Table		t;

	cli_want_args("flow show", 2, 2);
	snprintf(idbuf, sizeof(idbuf), "%lld", (long long) cli_job_id(cli_arg(2)));
	connect_flows();
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
	table_init(&t, 8, names, numeric);
	for (int r = 0; r < PQntuples(res); r++)
	{
		const char *row[8];

		for (int c = 0; c < 8; c++)
			row[c] = PQgetisnull(res, r, c) ? NULL : PQgetvalue(res, r, c);
		table_add(&t, row);
	}
	PQclear(res);
	print_table(&t);
	table_free(&t);
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
	connect_flows();
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
	connect_flows();
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
	PQfreemem(qschema);
	qschema = NULL;
	free(file_text);
	file_text = NULL;
	return rc;
}
