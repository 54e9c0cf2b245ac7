/*-------------------------------------------------------------------------
 *
 * jobs.c
 *	  jobq list and jobq show: a queue's jobs a page at a time, with
 *	  filters, and one job with its attempt timeline.
 *
 *		jobq list QUEUE [--state S] [--limit N] [--after CURSOR]
 *			[--priority N|N..M] [--worker W] [--key K | --key-prefix P]
 *			[--since T] [--until T] [--error TEXT] [--payload JSON]
 *		jobq show ID
 *
 * list builds the filters object of jobq_list (doc/sql.md, "Job
 * filters") from the options; the server checks its values.  The cursor
 * of the next page is printed after the table ("next: jobq list ...
 * --after CURSOR"), or as the next_cursor of each row with --json.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/cli/jobs.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

/* a timestamptz as to_char(..., 'YYYY-MM-DD HH24:MI:SS') printed it */
static char *
short_time(const char *ts)
{
	char	   *s;

	if (ts == NULL)
		return NULL;
	s = jobq_xstrdup(ts);
	if (strlen(s) >= 19 && (s[10] == ' ' || s[10] == 'T'))
	{
		s[10] = ' ';
		s[19] = '\0';
	}
	return s;
}

/* one priority bound of --priority, or a usage error */
static int
priority_bound(const char *s, size_t len, const char *whole)
{
	char		buf[16];
	char	   *end;
	long		v;

	if (len == 0 || len >= sizeof(buf))
		cli_usage_error("--priority must be N, N..M, N.. or ..M, not \"%s\"", whole);
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	v = strtol(buf, &end, 10);
	if (*end != '\0' || errno != 0)
		cli_usage_error("--priority must be N, N..M, N.. or ..M, not \"%s\"", whole);
	if (v < JOBQ_PRIORITY_MIN || v > JOBQ_PRIORITY_MAX)
	{
		char		fmt[96];

		snprintf(fmt, sizeof(fmt), "--priority must be between %d and %d, not \"%%s\"",
				 JOBQ_PRIORITY_MIN, JOBQ_PRIORITY_MAX);
		cli_usage_error(fmt, whole);
	}
	return (int) v;
}

/*
 * add_time: --since or --until as the filter's timestamp: a timestamp the
 * server reads, or a duration meaning that long ago (--since 1h).
 */
static void
add_time(JobqBuf *b, const char *key, const char *s)
{
	double		secs;

	jobq_buf_printf(b, ",\"%s\":", key);
	if (jobq_parse_duration(s, 0, &secs) == 0)
	{
		time_t		t = time(NULL) - (time_t) secs;
		struct tm	tm;
		char		ts[32];

		gmtime_r(&t, &tm);
		strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
		jobq_buf_json_string(b, ts);
	}
	else
		jobq_buf_json_string(b, s);
}

/*
 * list_filters: the filters object of the options given, or NULL when
 * none is (so that a 0.1.0 server can still list).  Caller frees.
 */
static char *
list_filters(void)
{
	static const char *const names[] = {"priority", "worker", "key", "key-prefix", "since",
	"until", "error", "payload", NULL};
	bool		any = false;

	for (const char *const *n = names; *n; n++)
		any |= cli_option(*n) != NULL;
	JobqBuf		b;

	if (!any)
		return NULL;
	jobq_buf_init(&b);
	jobq_buf_puts(&b, "{");
	if (cli_option("priority"))
	{
		const char *p = cli_option("priority");
		const char *dots = strstr(p, "..");

		if (dots == NULL)
		{
			int			v = priority_bound(p, strlen(p), p);

			jobq_buf_printf(&b, ",\"priority_min\":%d,\"priority_max\":%d", v, v);
		}
		else
		{
			if (dots > p)
				jobq_buf_printf(&b, ",\"priority_min\":%d", priority_bound(p, dots - p, p));
			if (dots[2] != '\0')
				jobq_buf_printf(&b, ",\"priority_max\":%d",
								priority_bound(dots + 2, strlen(dots + 2), p));
			if (dots == p && dots[2] == '\0')
				cli_usage_error("--priority must be N, N..M, N.. or ..M, not \"%s\"", p);
		}
	}
	if (cli_option("worker"))
	{
		jobq_buf_puts(&b, ",\"worker\":");
		jobq_buf_json_string(&b, cli_option("worker"));
	}
	if (cli_option("key"))
	{
		jobq_buf_puts(&b, ",\"key\":");
		jobq_buf_json_string(&b, cli_option("key"));
	}
	if (cli_option("key-prefix"))
	{
		jobq_buf_puts(&b, ",\"key_prefix\":");
		jobq_buf_json_string(&b, cli_option("key-prefix"));
	}
	if (cli_option("since"))
		add_time(&b, "since", cli_option("since"));
	if (cli_option("until"))
		add_time(&b, "until", cli_option("until"));
	if (cli_option("error"))
	{
		jobq_buf_puts(&b, ",\"error\":");
		jobq_buf_json_string(&b, cli_option("error"));
	}
	if (cli_option("payload"))
		jobq_buf_printf(&b, ",\"payload\":%s", cli_option("payload"));
	jobq_buf_puts(&b, "}");
	jobq_xcheck(&b);
	b.data[1] = ' ';			/* the comma before the first key */
	return b.data;
}

/*
 * cmd_list
 *		list QUEUE [options]: a page of jobs, live ones by id, then finished
 *		ones newest first; the cursor of the next page after the table.
 */
int
cmd_list(void)
{
	static const char *const allowed[] = {"state", "limit", "after", "priority", "worker", "key",
	"key-prefix", "since", "until", "error", "payload", NULL};
	static const char *const names[] = {"id", "state", "priority", "run_at", "attempt",
	"enqueued_at", "finished_at", "worker", "last_error"};
	static const bool numeric[] = {true, false, true, false, false, false, false, false, false};
	JobqListOpts lo = JOBQ_LIST_OPTS_INIT;
	JobqConn   *conn;
	JobqRows   *rows;
	char	   *filters;
	const char *next = NULL;
	bool		truncated = false;

	cli_allow_only("list", allowed);
	cli_want_args("list", 1, 1);
	if (cli_option("key") && cli_option("key-prefix"))
		cli_usage_error("give --key or --key-prefix, not both%s", "");
	lo.state = cli_option("state");
	lo.max_rows = cli_int_arg(cli_option("limit"), "--limit", -1, 1, JOBQ_LIST_MAX_ROWS);
	lo.after = cli_option("after");
	lo.filters = filters = list_filters();
	conn = cli_connect();
	rows = jobq_list_page(conn, cli_arg(1), &lo);
	free(filters);
	cli_need(rows);
	for (size_t r = 0; r < jobq_rows_count(rows); r++)
	{
		const char *t = jobq_rows_get(rows, r, "scan_truncated");

		next = jobq_rows_get(rows, r, "next_cursor");
		truncated |= t != NULL && strcmp(t, "t") == 0;
	}
	if (cli_json())
		cli_print_rows_json(rows);
	else
	{
		Table		t;

		table_init(&t, 9, names, numeric);
		for (size_t r = 0; r < jobq_rows_count(rows); r++)
		{
			char	   *run_at;
			char	   *enq;
			char	   *fin;
			char		attempt[48];
			const char *row[9];

			if (jobq_rows_get(rows, r, "id") == NULL)
				continue;		/* the row that only carries the cursor */
			run_at = short_time(jobq_rows_get(rows, r, "run_at"));
			enq = short_time(jobq_rows_get(rows, r, "enqueued_at"));
			fin = short_time(jobq_rows_get(rows, r, "finished_at"));
			snprintf(attempt, sizeof(attempt), "%s/%s",
					 jobq_rows_get(rows, r, "attempt") ? jobq_rows_get(rows, r, "attempt") : "",
					 jobq_rows_get(rows, r, "max_attempts") ? jobq_rows_get(rows, r, "max_attempts") : "");
			row[0] = jobq_rows_get(rows, r, "id");
			row[1] = jobq_rows_get(rows, r, "state");
			row[2] = jobq_rows_get(rows, r, "priority");
			row[3] = run_at;
			row[4] = attempt;
			row[5] = enq;
			row[6] = fin;
			row[7] = jobq_rows_get(rows, r, "worker");
			row[8] = jobq_rows_get(rows, r, "last_error");
			table_add(&t, row);
			free(run_at);
			free(enq);
			free(fin);
		}
		print_table(&t);
		table_free(&t);
		if (truncated)
			printf("(the filter was evaluated on jobq.list_scan_limit rows; more may match)\n");
		if (next != NULL)
			printf("next: --after %s\n", next);
	}
	jobq_rows_free(rows);
	return EXIT_OK;
}

/*
 * A reader of jobq_job's attempts column: an array of flat objects whose
 * values are strings, numbers, booleans or null (JOB_ATTEMPTS_SQL in
 * extension/inspect.c), which is all it accepts.
 */
#define ATTEMPT_FIELDS 6
static const char *const attempt_keys[ATTEMPT_FIELDS] = {
	"attempt", "worker", "claimed_at", "finished_at", "outcome", "error"
};

static void
skip_ws(const char **p)
{
	while (**p == ' ' || **p == '\n' || **p == '\t' || **p == '\r')
		(*p)++;
}

/* a JSON string at *p (after its quote) into b; false when malformed */
static bool
read_string(const char **p, JobqBuf *b)
{
	const char *s = *p;

	while (*s && *s != '"')
	{
		if (*s == '\\')
		{
			s++;
			switch (*s)
			{
				case 'n':
				case 'r':
				case 't':
					jobq_buf_append(b, " ", 1);	/* one line per attempt */
					break;
				case 'b':
				case 'f':
					break;
				case 'u':
					if (strlen(s) < 5)
						return false;
					jobq_buf_append(b, "?", 1);	/* escaped control or quote */
					s += 4;
					break;
				case '\0':
					return false;
				default:
					jobq_buf_append(b, s, 1);
			}
			s++;
			continue;
		}
		jobq_buf_append(b, s++, 1);
	}
	if (*s != '"')
		return false;
	*p = s + 1;
	return true;
}

/* a scalar at *p into b (null: nothing); false when malformed */
static bool
read_scalar(const char **p, JobqBuf *b)
{
	const char *s = *p;

	if (*s == '"')
	{
		*p = s + 1;
		return read_string(p, b);
	}
	if (strncmp(s, "null", 4) == 0)
	{
		*p = s + 4;
		return true;
	}
	while (*s && (strchr("-+.eE0123456789", *s) != NULL || strncmp(s, "true", 4) == 0 ||
				  strncmp(s, "false", 5) == 0))
	{
		if (*s == 't' || *s == 'f')
		{
			size_t		n = *s == 't' ? 4 : 5;

			jobq_buf_append(b, s, n);
			s += n;
			break;
		}
		jobq_buf_append(b, s++, 1);
	}
	if (s == *p)
		return false;
	*p = s;
	return true;
}

/*
 * print_attempt_timeline: the attempts of one job as a table; the JSON
 * as it is when it does not read as expected.
 */
static void
print_attempt_timeline(const char *json_text)
{
	static const bool numeric[ATTEMPT_FIELDS] = {true, false, false, false, false, false};
	const char *p = json_text;
	Table		t;
	bool		ok = true;

	table_init(&t, ATTEMPT_FIELDS, attempt_keys, numeric);
	skip_ws(&p);
	ok = *p++ == '[';
	skip_ws(&p);
	while (ok && *p == '{')
	{
		JobqBuf		v[ATTEMPT_FIELDS];
		char	   *cells[ATTEMPT_FIELDS];
		const char *row[ATTEMPT_FIELDS];

		for (int i = 0; i < ATTEMPT_FIELDS; i++)
			jobq_buf_init(&v[i]);
		p++;
		skip_ws(&p);
		while (ok && *p == '"')
		{
			JobqBuf		key;
			JobqBuf		val;
			int			f = -1;

			jobq_buf_init(&key);
			jobq_buf_init(&val);
			p++;
			ok = read_string(&p, &key);
			skip_ws(&p);
			ok = ok && *p++ == ':';
			skip_ws(&p);
			ok = ok && read_scalar(&p, &val);
			jobq_xcheck(&key);
			jobq_xcheck(&val);
			for (int i = 0; ok && i < ATTEMPT_FIELDS; i++)
				if (key.len == strlen(attempt_keys[i]) &&
					memcmp(key.data, attempt_keys[i], key.len) == 0)
					f = i;
			if (f >= 0 && val.len > 0)
				jobq_buf_append(&v[f], val.data, val.len);
			jobq_buf_free(&key);
			jobq_buf_free(&val);
			skip_ws(&p);
			if (*p == ',')
			{
				p++;
				skip_ws(&p);
			}
		}
		ok = ok && *p++ == '}';
		for (int i = 0; i < ATTEMPT_FIELDS; i++)
		{
			jobq_xcheck(&v[i]);
			cells[i] = v[i].len > 0 ? jobq_xstrdup(v[i].data) : NULL;
			if (i == 2 || i == 3)
			{
				char	   *s = short_time(cells[i]);

				free(cells[i]);
				cells[i] = s;
			}
			row[i] = cells[i];
			jobq_buf_free(&v[i]);
		}
		if (ok)
			table_add(&t, row);
		for (int i = 0; i < ATTEMPT_FIELDS; i++)
			free(cells[i]);
		skip_ws(&p);
		if (*p == ',')
		{
			p++;
			skip_ws(&p);
		}
	}
	if (ok && *p == ']')
		print_table(&t);
	else
		printf("%s\n", json_text);
	table_free(&t);
}

/* print_attempts: the attempt timeline of jobq_job's attempts column */
static void
print_attempts(const JobqRows *rows)
{
	const char *a = jobq_rows_get(rows, 0, "attempts");

	if (a == NULL || strcmp(a, "[]") == 0)
		return;
	printf("\nattempts:\n");
	print_attempt_timeline(a);
}

/*
 * cmd_show
 *		show ID: every field of one job, then its attempt timeline; 1 when
 *		there is no such job.
 */
int
cmd_show(void)
{
	static const char *const allowed[] = {NULL};
	int64_t		id;
	JobqConn   *conn;
	JobqRows   *rows;

	cli_allow_only("show", allowed);
	cli_want_args("show", 1, 1);
	id = cli_job_id(cli_arg(1));
	conn = cli_connect();
	rows = jobq_job_info(conn, id);
	if (rows == NULL && (jobq_status(conn) == JOBQ_ERR_NOT_FOUND ||
						 jobq_status(conn) == JOBQ_ERR_BAD_ARGUMENT))
	{
		fprintf(stderr, "%s: no job %s\n", cli_progname(), cli_arg(1));
		return EXIT_FAILED;
	}
	cli_need(rows);
	if (cli_json())
	{
		char	   *js = jobq_rows_json(rows);
		size_t		len = js ? strlen(js) : 0;

		/* one object, not an array of one */
		if (len >= 2)
			printf("%.*s\n", (int) (len - 2), js + 1);
		jobq_free(js);
	}
	else
	{
		print_record(rows);
		print_attempts(rows);
	}
	jobq_rows_free(rows);
	return EXIT_OK;
}
