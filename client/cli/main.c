/*-------------------------------------------------------------------------
 *
 * main.c
 *	  jobq: the command-line tool of the jobq job queue.
 *
 *		jobq [-d CONNINFO] [--json] COMMAND [ARG]... [OPTION]...
 *
 * Commands map one to one onto the SQL API (doc/sql-semantics.md):
 * enqueue, stats, list, show, retry, cancel, purge, queue create|alter|
 * drop|pause|resume, queues, sweep.  Output is an aligned table for
 * people, or JSON with --json (built by the server, so types and quoting
 * are exact).  Exit codes are in cli.h.
 *
 * Every statement goes through PQexecParams: queue names, payloads and
 * every other argument are parameters, never pasted into SQL.  The
 * connection forces client_encoding UTF8 (RELIABILITY.md §3).
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/cli/main.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define JOBQ_CLI_VERSION "0.1.0"
#define ENQUEUE_CHUNK 1000		/* payloads per jobq_enqueue_batch call */

/* Options; each command says which it accepts (opt_allowed). */
enum
{
	O_DELAY = 1, O_RUN_AT, O_PRIORITY, O_MAX_ATTEMPTS, O_KEY, O_WATCH, O_STATE,
	O_LIMIT, O_QUEUE, O_OLDER_THAN, O_LEASE, O_BACKOFF_BASE, O_BACKOFF_CAP,
	O_COMPLETED_RETENTION, O_DEAD_RETENTION, O_NOTIFY, O_FORCE, O_JSON,
	O_COUNT
};

static const struct option longopts[] = {
	{"dbname", required_argument, NULL, 'd'},
	{"json", no_argument, NULL, O_JSON},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{"delay", required_argument, NULL, O_DELAY},
	{"run-at", required_argument, NULL, O_RUN_AT},
	{"priority", required_argument, NULL, O_PRIORITY},
	{"max-attempts", required_argument, NULL, O_MAX_ATTEMPTS},
	{"key", required_argument, NULL, O_KEY},
	{"watch", required_argument, NULL, O_WATCH},
	{"state", required_argument, NULL, O_STATE},
	{"limit", required_argument, NULL, O_LIMIT},
	{"queue", required_argument, NULL, O_QUEUE},
	{"older-than", required_argument, NULL, O_OLDER_THAN},
	{"lease", required_argument, NULL, O_LEASE},
	{"backoff-base", required_argument, NULL, O_BACKOFF_BASE},
	{"backoff-cap", required_argument, NULL, O_BACKOFF_CAP},
	{"completed-retention", required_argument, NULL, O_COMPLETED_RETENTION},
	{"dead-retention", required_argument, NULL, O_DEAD_RETENTION},
	{"notify", required_argument, NULL, O_NOTIFY},
	{"force", no_argument, NULL, O_FORCE},
	{NULL, 0, NULL, 0}
};

static const char *progname = "jobq";
static const char *conninfo = NULL;
static bool json = false;
static const char *opt[O_COUNT];	/* value of each option given, or NULL */
static char **args;				/* positional arguments */
static int	nargs;

static PGconn *conn = NULL;
static PGresult *cur = NULL;	/* the one live result, freed at exit */
static char *stdin_text = NULL;

static volatile sig_atomic_t interrupted = 0;

/*
 * finish
 *		Free everything and exit with code: the CLI is checked for leaks.
 */
static void
finish(int code)
{
	PQclear(cur);
	cur = NULL;
	if (conn)
		PQfinish(conn);
	conn = NULL;
	free(stdin_text);
	free(args);
	fflush(stdout);
	exit(code);
}

static void
usage(FILE *f)
{
	fprintf(f,
			"%s is the command-line tool of the jobq job queue.\n\n"
			"Usage:\n"
			"  %s [OPTION]... COMMAND [ARG]...\n\n"
			"Commands:\n"
			"  enqueue QUEUE [JSON]     add a job; without JSON, one job per line of stdin\n"
			"        [--delay=SECONDS | --run-at=TIMESTAMP] [--priority=N]\n"
			"        [--max-attempts=N] [--key=DEDUPE_KEY]\n"
			"  stats [QUEUE]            job counts per queue  [--watch=SECONDS]\n"
			"  list QUEUE               jobs of a queue  [--state=STATE] [--limit=N]\n"
			"  show ID                  everything about one job\n"
			"  retry ID | --queue=QUEUE dead job(s) back to ready\n"
			"  cancel ID                a ready or dead job to cancelled\n"
			"  purge QUEUE              delete finished jobs  [--state=STATE]\n"
			"        [--older-than=SECONDS]\n"
			"  queue create NAME        [--lease=S] [--max-attempts=N] [--backoff-base=S]\n"
			"        [--backoff-cap=S] [--completed-retention=S] [--dead-retention=S]\n"
			"        [--notify=on|off]\n"
			"  queue alter NAME         the same settings; those not given stay\n"
			"  queue drop NAME          [--force: also delete its live jobs]\n"
			"  queue pause NAME         claims skip the queue (enqueue still works)\n"
			"  queue resume NAME\n"
			"  queues                   all queues and their settings\n"
			"  sweep [QUEUE]            requeue expired leases, purge old history\n\n"
			"Options:\n"
			"  -d, --dbname=CONNINFO    database connection string (default: PG* environment)\n"
			"      --json               machine-readable output\n"
			"  -h, --help               show this help, then exit\n"
			"  -V, --version            show the version, then exit\n\n"
			"Durations (S, SECONDS) are seconds or a PostgreSQL interval (\"5 min\").\n"
			"Exit status: 0 ok, 1 operation failed or not found, 2 bad usage,\n"
			"3 connection error.\n",
			progname, progname);
}

static void
usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", progname);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry \"%s --help\" for more information.\n", progname);
	finish(EXIT_USAGE);
}

/* ----------------------------------------------------------------------
 * Database
 * ---------------------------------------------------------------------- */

static void
connect_db(void)
{
	/* NB: keys after dbname override the conninfo's */
	const char *keys[] = {"fallback_application_name", "dbname", "client_encoding", NULL};
	const char *vals[] = {"jobq", conninfo, "UTF8", NULL};

	conn = PQconnectdbParams(keys, vals, 1);
	if (conn == NULL || PQstatus(conn) != CONNECTION_OK)
	{
		fprintf(stderr, "%s: could not connect to the database: %s", progname,
				conn ? PQerrorMessage(conn) : "out of memory\n");
		finish(EXIT_CONNECTION);
	}
}

/*
 * query
 *		Run sql with text parameters (NULL = SQL NULL) and return its result,
 *		which stays valid until the next query.  A failure is reported and
 *		ends the program: 3 when the connection is gone, 1 otherwise.
 */
static PGresult *
query(const char *sql, int nparams, const char *const *vals)
{
	ExecStatusType st;

	PQclear(cur);
	cur = PQexecParams(conn, sql, nparams, NULL, vals, NULL, NULL, 0);
	st = PQresultStatus(cur);
	if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK)
		return cur;
	if (PQstatus(conn) == CONNECTION_BAD || cur == NULL)
	{
		fprintf(stderr, "%s: lost the connection: %s", progname, PQerrorMessage(conn));
		finish(EXIT_CONNECTION);
	}
	{
		const char *state = PQresultErrorField(cur, PG_DIAG_SQLSTATE);
		const char *msg = PQresultErrorField(cur, PG_DIAG_MESSAGE_PRIMARY);
		const char *detail = PQresultErrorField(cur, PG_DIAG_MESSAGE_DETAIL);
		const char *hint = PQresultErrorField(cur, PG_DIAG_MESSAGE_HINT);

		fprintf(stderr, "%s: error: %s", progname, msg ? msg : PQerrorMessage(conn));
		if (state)
			fprintf(stderr, " (SQLSTATE %s)", state);
		fputc('\n', stderr);
		if (detail)
			fprintf(stderr, "DETAIL: %s\n", detail);
		if (hint)
			fprintf(stderr, "HINT: %s\n", hint);
	}
	finish(EXIT_FAILED);
	return NULL;				/* not reached */
}

/* the single value of a one-row, one-column result (NULL when SQL NULL) */
static const char *
value(const PGresult *res)
{
	if (PQntuples(res) < 1 || PQgetisnull(res, 0, 0))
		return NULL;
	return PQgetvalue(res, 0, 0);
}

/*
 * output
 *		Print the rows of table_sql as a table, or, with --json, the rows of
 *		json_sql (NULL: table_sql) as a JSON array.  Returns the row count.
 */
static int
output(const char *table_sql, const char *json_sql, int nparams,
	   const char *const *vals)
{
	char	   *sql;
	size_t		len;
	int			n;
	PGresult   *res;

	if (!json)
	{
		res = query(table_sql, nparams, vals);
		print_table(res);
		return PQntuples(res);
	}
	json_sql = json_sql ? json_sql : table_sql;
	len = strlen(json_sql) + 100;
	sql = malloc(len);
	if (sql == NULL)
		finish(EXIT_FAILED);
	snprintf(sql, len,
			 "SELECT coalesce(json_agg(t), '[]'), count(*) FROM (%s) t", json_sql);
	res = query(sql, nparams, vals);
	free(sql);
	/*
	 * json_agg puts ",\n " between elements; a raw newline can only be such
	 * a separator (JSON escapes it inside strings), so print one line.
	 */
	for (const char *p = PQgetvalue(res, 0, 0); *p; p++)
	{
		if (*p == '\n' && p[1] == ' ')
			p++;
		else
			putchar(*p);
	}
	putchar('\n');
	n = atoi(PQgetvalue(res, 0, 1));
	return n;
}

/* ----------------------------------------------------------------------
 * Arguments
 * ---------------------------------------------------------------------- */

/*
 * duration
 *		An option value as interval text: a bare number means seconds,
 *		anything else goes to the server as an interval ("5 min"), which
 *		judges it.  buf must have 64 bytes.
 */
static const char *
duration(const char *s, char *buf)
{
	char	   *end;
	double		v;

	if (s == NULL)
		return NULL;
	errno = 0;
	v = strtod(s, &end);
	if (end != s && *end == '\0' && errno == 0 && isfinite(v))
	{
		snprintf(buf, 64, "%s seconds", s);
		return buf;
	}
	return s;
}

/* an integer argument, or a usage error naming what */
static const char *
integer(const char *s, const char *what)
{
	char	   *end;

	if (s == NULL)
		return NULL;
	errno = 0;
	(void) strtoll(s, &end, 10);
	if (end == s || *end != '\0' || errno)
		usage_error("invalid %s", what);
	return s;
}

/* refuse options the command does not take */
static void
allow_only(const char *command, const int *allowed)
{
	for (int o = 1; o < O_COUNT; o++)
	{
		bool		ok = (o == O_JSON);

		for (const int *a = allowed; *a; a++)
			if (*a == o)
				ok = true;
		if (opt[o] && !ok)
		{
			for (const struct option *lo = longopts; lo->name; lo++)
				if (lo->val == o)
				{
					fprintf(stderr, "%s: option --%s does not apply to \"%s\"\n",
							progname, lo->name, command);
					break;
				}
			usage_error("bad usage of \"%s\"", command);
		}
	}
}

static void
want_args(const char *command, int min, int max)
{
	if (nargs - 1 < min)
		usage_error("missing argument for \"%s\"", command);
	if (nargs - 1 > max)
		usage_error("too many arguments for \"%s\"", command);
}

/* ----------------------------------------------------------------------
 * Commands
 * ---------------------------------------------------------------------- */

/* read all of stdin into stdin_text */
static void
read_stdin(void)
{
	size_t		cap = 65536,
				len = 0;
	size_t		n;

	stdin_text = malloc(cap);
	if (stdin_text == NULL)
		finish(EXIT_FAILED);
	while ((n = fread(stdin_text + len, 1, cap - len - 1, stdin)) > 0)
	{
		len += n;
		if (cap - len - 1 == 0)
		{
			char	   *p = realloc(stdin_text, cap * 2);

			if (p == NULL)
			{
				fprintf(stderr, "%s: out of memory\n", progname);
				finish(EXIT_FAILED);
			}
			stdin_text = p;
			cap *= 2;
		}
	}
	stdin_text[len] = '\0';
	if (memchr(stdin_text, '\0', len))
	{
		fprintf(stderr, "%s: stdin contains a NUL byte; JSON cannot\n", progname);
		finish(EXIT_FAILED);
	}
}

/*
 * array_literal
 *		Elements as a PostgreSQL array literal, each double-quoted with "
 *		and \ escaped, so no payload can change the array's shape.  Caller
 *		frees.
 */
static char *
array_literal(char **items, int n)
{
	size_t		len = 3;
	char	   *s,
			   *p;

	for (int i = 0; i < n; i++)
		len += 2 * strlen(items[i]) + 3;
	p = s = malloc(len);
	if (s == NULL)
		finish(EXIT_FAILED);
	*p++ = '{';
	for (int i = 0; i < n; i++)
	{
		if (i)
			*p++ = ',';
		*p++ = '"';
		for (const char *c = items[i]; *c; c++)
		{
			if (*c == '"' || *c == '\\')
				*p++ = '\\';
			*p++ = *c;
		}
		*p++ = '"';
	}
	*p++ = '}';
	*p = '\0';
	return s;
}

/*
 * cmd_enqueue
 *		enqueue QUEUE [JSON]: one job from the argument, or one per non-empty
 *		line of stdin, all in one transaction (all or nothing).  Prints the
 *		ids in input order.
 */
static int
cmd_enqueue(void)
{
	static const int allowed[] = {O_DELAY, O_RUN_AT, O_PRIORITY, O_MAX_ATTEMPTS, O_KEY, 0};
	static const char sql[] =
		"SELECT id, created FROM jobq_enqueue_batch($1::text, $2::jsonb[],"
		" $3::timestamptz, $4::interval, $5::integer, $6::integer, $7::text[])";
	char	  **lines;
	int			nlines = 0;
	char		dbuf[64];
	char	   *keys = NULL;
	const char *vals[7];
	bool		first = true;

	allow_only("enqueue", allowed);
	want_args("enqueue", 1, 2);
	integer(opt[O_PRIORITY], "priority");
	integer(opt[O_MAX_ATTEMPTS], "max attempts");
	if (opt[O_DELAY] && opt[O_RUN_AT])
		usage_error("%s", "--delay and --run-at exclude each other");

	if (nargs == 3)
	{
		lines = malloc(sizeof(char *));
		if (lines == NULL)
			finish(EXIT_FAILED);
		lines[nlines++] = args[2];
	}
	else
	{
		size_t		cap = 16;

		read_stdin();
		lines = malloc(sizeof(char *) * cap);
		for (char *p = strtok(stdin_text, "\n"); p; p = strtok(NULL, "\n"))
		{
			size_t		l = strlen(p);

			if (l > 0 && p[l - 1] == '\r')
				p[--l] = '\0';
			if (strspn(p, " \t") == l)
				continue;		/* blank line */
			if (nlines == (int) cap)
			{
				char	  **nl = realloc(lines, sizeof(char *) * (cap *= 2));

				if (nl == NULL)
				{
					free(lines);
					finish(EXIT_FAILED);
				}
				lines = nl;
			}
			lines[nlines++] = p;
		}
		if (nlines == 0)
		{
			free(lines);
			usage_error("%s", "no job given: pass JSON or give one job per line on stdin");
		}
	}
	if (opt[O_KEY] && nlines > 1)
	{
		free(lines);
		usage_error("%s", "--key applies to one job only");
	}

	connect_db();
	vals[0] = args[1];
	vals[2] = opt[O_RUN_AT];
	vals[3] = duration(opt[O_DELAY], dbuf);
	vals[4] = opt[O_PRIORITY] ? opt[O_PRIORITY] : "0";
	vals[5] = opt[O_MAX_ATTEMPTS];
	if (opt[O_KEY])
		keys = array_literal((char **) &opt[O_KEY], 1);
	vals[6] = keys;

	if (nlines > 1)
		query("BEGIN", 0, NULL);
	if (json)
		printf("[");
	for (int at = 0; at < nlines; at += ENQUEUE_CHUNK)
	{
		int			n = nlines - at < ENQUEUE_CHUNK ? nlines - at : ENQUEUE_CHUNK;
		char	   *arr = array_literal(lines + at, n);
		PGresult   *res;

		vals[1] = arr;
		/* NB: on error query() exits; the open transaction dies with us */
		res = query(sql, 7, vals);
		free(arr);
		for (int i = 0; i < PQntuples(res); i++)
		{
			if (json)
				printf("%s{\"id\":%s,\"created\":%s}", first ? "" : ",",
					   PQgetvalue(res, i, 0),
					   strcmp(PQgetvalue(res, i, 1), "t") == 0 ? "true" : "false");
			else
				printf("%s\n", PQgetvalue(res, i, 0));
			first = false;
		}
	}
	if (nlines > 1)
		query("COMMIT", 0, NULL);
	if (json)
		printf("]\n");
	free(keys);
	free(lines);
	return EXIT_OK;
}

static void
on_sigint(int signo)
{
	(void) signo;
	interrupted = 1;
}

/*
 * cmd_stats
 *		stats [QUEUE] [--watch S]: counts per queue; with --watch, again
 *		every S seconds until interrupted (then exit 0).  A named queue that
 *		does not exist is an error (1).
 */
static int
cmd_stats(void)
{
	static const int allowed[] = {O_WATCH, 0};
	static const char table_sql[] =
		"SELECT queue, CASE WHEN paused THEN 'yes' ELSE '' END AS paused,"
		" ready, delayed, running, expired, dead, completed, cancelled,"
		" date_trunc('second', oldest_ready_age) AS oldest_ready, stale_acks"
		" FROM jobq_stats($1::text) ORDER BY queue";
	static const char json_sql[] =
		"SELECT queue, paused, ready, delayed, running, expired, dead, completed,"
		" cancelled, extract(epoch FROM oldest_ready_age)::float8 AS oldest_ready_age_s,"
		" stale_acks FROM jobq_stats($1::text) ORDER BY queue";
	const char *vals[1];
	double		watch = 0;

	allow_only("stats", allowed);
	want_args("stats", 0, 1);
	if (opt[O_WATCH])
	{
		char	   *end;

		watch = strtod(opt[O_WATCH], &end);
		if (end == opt[O_WATCH] || *end || !(watch >= 0.1 && watch <= 86400))
			usage_error("invalid --watch interval \"%s\"", opt[O_WATCH]);
	}
	vals[0] = nargs > 1 ? args[1] : NULL;
	connect_db();
	for (;;)
	{
		int			n;

		if (watch > 0 && !json && isatty(STDOUT_FILENO))
			printf("\033[H\033[2J");
		n = output(table_sql, json_sql, 1, vals);
		fflush(stdout);
		if (n == 0 && vals[0])
		{
			fprintf(stderr, "%s: no queue \"%s\"\n", progname, vals[0]);
			return EXIT_FAILED;
		}
		if (watch <= 0)
			return EXIT_OK;
		if (!json)
			printf("\n");
		{
			struct sigaction sa;
			struct timespec ts;

			memset(&sa, 0, sizeof(sa));
			sa.sa_handler = on_sigint;
			sigaction(SIGINT, &sa, NULL);
			sigaction(SIGTERM, &sa, NULL);
			ts.tv_sec = (time_t) watch;
			ts.tv_nsec = (long) ((watch - ts.tv_sec) * 1e9);
			while (!interrupted && nanosleep(&ts, &ts) < 0 && errno == EINTR)
				;
		}
		if (interrupted)
			return EXIT_OK;
	}
}

/*
 * cmd_list
 *		list QUEUE [--state S] [--limit N]: jobs ordered by id.
 */
static int
cmd_list(void)
{
	static const int allowed[] = {O_STATE, O_LIMIT, 0};
	static const char table_sql[] =
		"SELECT id, state, priority, to_char(run_at, 'YYYY-MM-DD HH24:MI:SS') AS run_at,"
		" attempt || '/' || max_attempts AS attempt,"
		" to_char(enqueued_at, 'YYYY-MM-DD HH24:MI:SS') AS enqueued_at,"
		" to_char(finished_at, 'YYYY-MM-DD HH24:MI:SS') AS finished_at, last_error"
		" FROM jobq_list($1::text, $2::text, $3::integer)";
	static const char json_sql[] =
		"SELECT * FROM jobq_list($1::text, $2::text, $3::integer)";
	const char *vals[3];

	allow_only("list", allowed);
	want_args("list", 1, 1);
	vals[0] = args[1];
	vals[1] = opt[O_STATE];
	vals[2] = opt[O_LIMIT] ? integer(opt[O_LIMIT], "limit") : "100";
	connect_db();
	output(table_sql, json_sql, 3, vals);
	return EXIT_OK;
}

static const char *
job_id(const char *s)
{
	return integer(s, "job id");
}

/*
 * cmd_show
 *		show ID: every field of one job; 1 when there is no such job.
 */
static int
cmd_show(void)
{
	static const int allowed[] = {0};
	const char *vals[1];
	PGresult   *res;

	allow_only("show", allowed);
	want_args("show", 1, 1);
	vals[0] = job_id(args[1]);
	connect_db();
	if (json)
	{
		res = query("SELECT row_to_json(j) FROM jobq_job($1::bigint) j", 1, vals);
		if (PQntuples(res) == 1)
			printf("%s\n", value(res));
	}
	else
	{
		res = query("SELECT * FROM jobq_job($1::bigint)", 1, vals);
		if (PQntuples(res) == 1)
			print_record(res);
	}
	if (PQntuples(res) == 0)
	{
		fprintf(stderr, "%s: no job %s\n", progname, vals[0]);
		return EXIT_FAILED;
	}
	return EXIT_OK;
}

/* why a per-job operation changed nothing: not found (1) or wrong state (1) */
static int
job_refused(const char *id, const char *what)
{
	const char *vals[1] = {id};
	PGresult   *res = query("SELECT state FROM jobq_job($1::bigint)", 1, vals);

	if (PQntuples(res) == 0)
		fprintf(stderr, "%s: no job %s\n", progname, id);
	else
		fprintf(stderr, "%s: job %s is %s; %s\n", progname, id, value(res), what);
	return EXIT_FAILED;
}

/*
 * cmd_retry
 *		retry ID: a dead job back to ready; retry --queue Q: all dead jobs
 *		of Q (prints the count; 0 is not an error).
 */
static int
cmd_retry(void)
{
	static const int allowed[] = {O_QUEUE, 0};
	const char *vals[1];
	PGresult   *res;

	allow_only("retry", allowed);
	if (opt[O_QUEUE])
	{
		want_args("retry", 0, 0);
		vals[0] = opt[O_QUEUE];
		connect_db();
		res = query("SELECT jobq_retry($1::text)", 1, vals);
		if (json)
			printf("{\"queue\":\"%s\",\"retried\":%s}\n", vals[0], value(res));
		else
			printf("retried %s job(s)\n", value(res));
		return EXIT_OK;
	}
	want_args("retry", 1, 1);
	vals[0] = job_id(args[1]);
	connect_db();
	res = query("SELECT jobq_retry($1::bigint)", 1, vals);
	if (strcmp(value(res), "t") != 0)
		return job_refused(vals[0], "only dead jobs can be retried (and not while "
						   "a live job holds its dedupe key)");
	if (json)
		printf("{\"id\":%s,\"retried\":true}\n", vals[0]);
	else
		printf("job %s retried\n", vals[0]);
	return EXIT_OK;
}

/*
 * cmd_cancel
 *		cancel ID: a ready or dead job to cancelled.
 */
static int
cmd_cancel(void)
{
	static const int allowed[] = {0};
	const char *vals[1];
	PGresult   *res;

	allow_only("cancel", allowed);
	want_args("cancel", 1, 1);
	vals[0] = job_id(args[1]);
	connect_db();
	res = query("SELECT jobq_cancel($1::bigint)", 1, vals);
	if (strcmp(value(res), "t") != 0)
		return job_refused(vals[0], "only ready or dead jobs can be cancelled");
	if (json)
		printf("{\"id\":%s,\"cancelled\":true}\n", vals[0]);
	else
		printf("job %s cancelled\n", vals[0]);
	return EXIT_OK;
}

/*
 * cmd_purge
 *		purge QUEUE [--state S] [--older-than S]: delete finished jobs.
 */
static int
cmd_purge(void)
{
	static const int allowed[] = {O_STATE, O_OLDER_THAN, 0};
	const char *vals[3];
	char		dbuf[64];
	PGresult   *res;

	allow_only("purge", allowed);
	want_args("purge", 1, 1);
	vals[0] = args[1];
	vals[1] = opt[O_STATE];
	vals[2] = opt[O_OLDER_THAN] ? duration(opt[O_OLDER_THAN], dbuf) : "0";
	connect_db();
	res = query("SELECT jobq_purge($1::text, $2::text, $3::interval)", 3, vals);
	if (json)
		printf("{\"queue\":\"%s\",\"purged\":%s}\n", vals[0], value(res));
	else
		printf("purged %s job(s)\n", value(res));
	return EXIT_OK;
}

/*
 * cmd_queue
 *		queue create|alter|drop|pause|resume NAME [settings].
 */
static int
cmd_queue(void)
{
	static const int allowed_settings[] = {O_LEASE, O_MAX_ATTEMPTS, O_BACKOFF_BASE,
		O_BACKOFF_CAP, O_COMPLETED_RETENTION, O_DEAD_RETENTION, O_NOTIFY, 0};
	static const int allowed_drop[] = {O_FORCE, 0};
	static const int allowed_none[] = {0};
	const char *sub = nargs > 1 ? args[1] : NULL;
	const char *vals[8];
	char		b[5][64];
	const char *done;

	if (sub == NULL)
		usage_error("%s", "missing subcommand for \"queue\" (create, alter, drop, pause, resume)");
	if (strcmp(sub, "create") == 0 || strcmp(sub, "alter") == 0)
	{
		bool		create = sub[0] == 'c';

		allow_only(create ? "queue create" : "queue alter", allowed_settings);
		if (nargs != 3)
			usage_error("\"queue %s\" takes one queue name", sub);
		integer(opt[O_MAX_ATTEMPTS], "max attempts");
		if (opt[O_NOTIFY] && strcmp(opt[O_NOTIFY], "on") != 0 &&
			strcmp(opt[O_NOTIFY], "off") != 0)
			usage_error("--notify takes on or off, not \"%s\"", opt[O_NOTIFY]);
		vals[0] = args[2];
		vals[1] = duration(opt[O_LEASE], b[0]);
		vals[2] = opt[O_MAX_ATTEMPTS];
		vals[3] = duration(opt[O_BACKOFF_BASE], b[1]);
		vals[4] = duration(opt[O_BACKOFF_CAP], b[2]);
		vals[5] = duration(opt[O_COMPLETED_RETENTION], b[3]);
		vals[6] = duration(opt[O_DEAD_RETENTION], b[4]);
		vals[7] = opt[O_NOTIFY] ? (strcmp(opt[O_NOTIFY], "on") == 0 ? "true" : "false") : NULL;
		connect_db();
		if (create)
		{
			/* NULL means "the default": let the function's defaults apply */
			query("SELECT jobq_create_queue($1::text,"
				  " coalesce($2::interval, interval '5 minutes'),"
				  " coalesce($3::integer, 25),"
				  " coalesce($4::interval, interval '1 second'),"
				  " coalesce($5::interval, interval '1 hour'),"
				  " coalesce($6::interval, interval '1 day'),"
				  " coalesce($7::interval, interval '14 days'),"
				  " coalesce($8::boolean, true))", 8, vals);
			done = "created";
		}
		else
		{
			query("SELECT jobq_alter_queue($1::text, $2::interval, $3::integer,"
				  " $4::interval, $5::interval, $6::interval, $7::interval,"
				  " $8::boolean)", 8, vals);
			done = "altered";
		}
	}
	else if (strcmp(sub, "drop") == 0)
	{
		allow_only("queue drop", allowed_drop);
		if (nargs != 3)
			usage_error("%s", "\"queue drop\" takes one queue name");
		vals[0] = args[2];
		vals[1] = opt[O_FORCE] ? "true" : "false";
		connect_db();
		query("SELECT jobq_drop_queue($1::text, $2::boolean)", 2, vals);
		done = "dropped";
	}
	else if (strcmp(sub, "pause") == 0 || strcmp(sub, "resume") == 0)
	{
		bool		pause = sub[0] == 'p';

		allow_only(pause ? "queue pause" : "queue resume", allowed_none);
		if (nargs != 3)
			usage_error("\"queue %s\" takes one queue name", sub);
		vals[0] = args[2];
		connect_db();
		query(pause ? "SELECT jobq_pause($1::text)" : "SELECT jobq_resume($1::text)",
			  1, vals);
		done = pause ? "paused" : "resumed";
	}
	else
	{
		usage_error("unknown queue subcommand \"%s\"", sub);
		return EXIT_USAGE;
	}
	if (json)
	{
		const char *qv[2] = {args[2], done};
		PGresult   *res = query("SELECT json_build_object('queue', $1::text, 'done', $2::text)",
								2, qv);

		printf("%s\n", value(res));
	}
	else
		printf("queue %s %s\n", args[2], done);
	return EXIT_OK;
}

static int
cmd_queues(void)
{
	static const int allowed[] = {0};

	allow_only("queues", allowed);
	want_args("queues", 0, 0);
	connect_db();
	output("SELECT queue, lease, max_attempts, backoff_base, backoff_cap,"
		   " completed_retention, dead_retention,"
		   " CASE WHEN paused THEN 'yes' ELSE '' END AS paused,"
		   " CASE WHEN notify THEN 'on' ELSE 'off' END AS notify"
		   " FROM jobq_queues()",
		   "SELECT queue, extract(epoch FROM lease)::float8 AS lease_s, max_attempts,"
		   " extract(epoch FROM backoff_base)::float8 AS backoff_base_s,"
		   " extract(epoch FROM backoff_cap)::float8 AS backoff_cap_s,"
		   " extract(epoch FROM completed_retention)::float8 AS completed_retention_s,"
		   " extract(epoch FROM dead_retention)::float8 AS dead_retention_s,"
		   " paused, notify, created_at FROM jobq_queues()",
		   0, NULL);
	return EXIT_OK;
}

static int
cmd_sweep(void)
{
	static const int allowed[] = {0};
	const char *vals[1];

	allow_only("sweep", allowed);
	want_args("sweep", 0, 1);
	vals[0] = nargs > 1 ? args[1] : NULL;
	connect_db();
	output("SELECT requeued, dead, purged FROM jobq_sweep($1::text)", NULL, 1, vals);
	return EXIT_OK;
}

int
main(int argc, char **argv)
{
	static const struct
	{
		const char *name;
		int			(*fn) (void);
	}			commands[] = {
		{"enqueue", cmd_enqueue},
		{"stats", cmd_stats},
		{"list", cmd_list},
		{"show", cmd_show},
		{"retry", cmd_retry},
		{"cancel", cmd_cancel},
		{"purge", cmd_purge},
		{"queue", cmd_queue},
		{"queues", cmd_queues},
		{"sweep", cmd_sweep},
	};
	int			c;

	if (argc > 0 && strrchr(argv[0], '/'))
		progname = strrchr(argv[0], '/') + 1;
	else if (argc > 0)
		progname = argv[0];

	/*
	 * Options may come before or after the command (GNU getopt permutes);
	 * "--" ends them, for a JSON argument that starts with "-".
	 */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "d:hV", longopts, NULL)) != -1)
	{
		switch (c)
		{
			case 'd':
				conninfo = optarg;
				break;
			case 'h':
				usage(stdout);
				finish(EXIT_OK);
				break;
			case 'V':
				printf("%s (jobq) %s\n", progname, JOBQ_CLI_VERSION);
				finish(EXIT_OK);
				break;
			case O_JSON:
				json = true;
				opt[O_JSON] = "";
				break;
			case '?':
			case ':':
				if (optopt)
					fprintf(stderr, "%s: invalid option or missing value: -%c\n", progname, optopt);
				else
					fprintf(stderr, "%s: invalid option or missing value: %s\n", progname,
							argv[optind - 1]);
				fprintf(stderr, "Try \"%s --help\" for more information.\n", progname);
				finish(EXIT_USAGE);
				break;
			default:
				opt[c] = optarg ? optarg : "";
				break;
		}
	}
	nargs = argc - optind;
	args = malloc(sizeof(char *) * (nargs + 1));
	if (args == NULL)
		finish(EXIT_FAILED);
	for (int i = 0; i < nargs; i++)
		args[i] = argv[optind + i];
	if (nargs == 0)
		usage_error("%s", "no command given");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(args[0], commands[i].name) == 0)
			finish(commands[i].fn());
	usage_error("unknown command \"%s\"", args[0]);
	return EXIT_USAGE;
}
