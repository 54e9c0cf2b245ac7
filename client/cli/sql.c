/*-------------------------------------------------------------------------
 *
 * sql.c
 *	  Fixed statements of the CLI's own on libjobq's connection
 *	  (jobq_pgconn), for the commands whose calls libjobq has no function
 *	  for (schedules.c, flows.c): the schema the connection was made for,
 *	  quoted once, substituted for the statement's "%s"; user data only as
 *	  parameters; an error reported as main.c reports libjobq's.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/cli/sql.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "cli.h"

static JobqConn *conn;			/* main.c's; closed here before an exit */
static PGconn *pg;
static char *qschema;			/* the schema, quoted */

/* cli_sql_leave: end the program from here, closing the connection first */
void
cli_sql_leave(int code)
{
	PQfreemem(qschema);
	jobq_disconnect(conn);
	fflush(stdout);
	exit(code);
}

/*
 * cli_sql_error
 *		Report a failed statement as failed() in main.c reports a libjobq
 *		error (message, SQLSTATE, DETAIL, HINT), with a prefix saying
 *		where; exits 3 when the connection is gone, else 1.
 */
void
cli_sql_error(PGresult *res, const char *where)
{
	const char *msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *detail = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL) : NULL;
	const char *hint = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_HINT) : NULL;
	bool		lost = PQstatus(pg) == CONNECTION_BAD;

	fprintf(stderr, "%s: %s%serror: %s", cli_progname(), where ? where : "", where ? ": " : "",
			msg ? msg : PQerrorMessage(pg));
	if (state)
		fprintf(stderr, " (SQLSTATE %s)", state);
	if (msg)
		fputc('\n', stderr);
	if (detail)
		fprintf(stderr, "DETAIL: %s\n", detail);
	if (hint)
		fprintf(stderr, "HINT: %s\n", hint);
	PQclear(res);
	cli_sql_leave(lost ? EXIT_CONNECTION : EXIT_FAILED);
}

/*
 * cli_sql_run
 *		Run statement sql (with "%s" for the schema) with text parameters;
 *		the result is the caller's.  A failure is reported as from where
 *		and ends the program.
 */
PGresult *
cli_sql_run(const char *sql, int nparams, const char *const *params, const char *where)
{
	size_t		len = strlen(sql) + strlen(qschema) + 1;
	char	   *text = jobq_xmalloc(len);
	PGresult   *res;

	snprintf(text, len, sql, qschema);
	res = PQexecParams(pg, text, nparams, NULL, params, NULL, NULL, 0);
	free(text);
	if (PQresultStatus(res) != PGRES_TUPLES_OK && PQresultStatus(res) != PGRES_COMMAND_OK)
		cli_sql_error(res, where);
	return res;
}

void
cli_sql_command(const char *sql)
{
	PQclear(cli_sql_run(sql, 0, NULL, NULL));
}

/* cli_sql_connect: main.c's connection, and the schema quoted */
void
cli_sql_connect(void)
{
	const char *schema;

	conn = cli_connect();
	schema = jobq_schema(conn);

	pg = jobq_pgconn(conn);
	qschema = PQescapeIdentifier(pg, schema, strlen(schema));
	if (qschema == NULL)
	{
		fprintf(stderr, "%s: out of memory\n", cli_progname());
		cli_sql_leave(EXIT_FAILED);
	}
}

void
cli_sql_disconnect(void)
{
	PQfreemem(qschema);
	qschema = NULL;
}
