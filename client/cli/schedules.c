/*-------------------------------------------------------------------------
 *
 * schedules.c
 *	  jobq CLI: `schedules` (list) and `schedule apply|rm|pause|resume|
 *	  trigger` (doc/jobq.md, "Schedules").
 *
 * `schedule apply FILE` makes the database's schedules match a
 * crontab-like file, in one transaction: every entry is upserted with
 * jobq_schedule (source 'file:<absolute path of FILE>'), each inside a
 * savepoint that is rolled back when the definition did not change, so
 * that an unchanged entry is left exactly as it was (its next tick, its
 * backoff); with --prune, the schedules of that source that the file no
 * longer has are unschedule'd, and no others; with --dry-run everything is
 * rolled back at the end, so the report is what an apply would do.
 *
 * The file, one entry per line (# starts a comment, blank lines are
 * skipped):
 *
 *	  EXPR NAME [QUEUE] [KEY=VALUE]... [PAYLOAD]
 *
 * EXPR is five fields, an alias (@daily) or "@every INTERVAL" (written
 * without spaces: @every 1h30m); PAYLOAD is a JSON object, the rest of the
 * line from its "{".  KEY is one of tz, queue, overlap, catchup, grace,
 * priority, max_attempts, start_at, end_at.  A line of KEY=VALUE pairs
 * only sets defaults for the entries after it (TZ= and CRON_TZ= are tz=).
 * The server checks every value.
 *
 * These calls need no libjobq function of their own: they run fixed
 * statements on libjobq's connection (jobq_pgconn, sql.c), with the
 * schema the connection was made for.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/cli/schedules.c
 *
 *-------------------------------------------------------------------------
 */
/* realpath */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "cli.h"

/* the settings an entry may give, in jobq_schedule's order after expr */
enum
{
	S_PAYLOAD, S_TZ, S_OVERLAP, S_CATCHUP, S_GRACE, S_PRIORITY, S_MAX_ATTEMPTS,
	S_START_AT, S_END_AT, S_COUNT
};

static const char *const setting_keys[S_COUNT] = {
	[S_PAYLOAD] = NULL,			/* not a key: the JSON at the end */
	[S_TZ] = "tz",
	[S_OVERLAP] = "overlap",
	[S_CATCHUP] = "catchup",
	[S_GRACE] = "grace",
	[S_PRIORITY] = "priority",
	[S_MAX_ATTEMPTS] = "max_attempts",
	[S_START_AT] = "start_at",
	[S_END_AT] = "end_at",
};

typedef struct Entry
{
	int			line;
	char	   *expr;
	char	   *name;
	char	   *queue;
	char	   *settings[S_COUNT];	/* NULL: the server's default */
} Entry;

typedef struct Crontab
{
	const char *path;
	Entry	   *entries;
	int			n;
	int			cap;
} Crontab;

/* Statements; "%s" is the quoted schema */
#define SQL_SCHEDULE \
	"SELECT %s.jobq_schedule($1, $2, $3, $4::pg_catalog.jsonb, $5, $6, $7, " \
	"$8::pg_catalog.interval, $9::pg_catalog.int4, $10::pg_catalog.int4, " \
	"$11::pg_catalog.timestamptz, $12::pg_catalog.timestamptz, $13)"
/* a schedule's definition, as one text to compare before and after */
#define SQL_DEFINITION \
	"SELECT ROW(s.queue, s.expr, s.tz, s.payload, s.overlap, s.catchup, " \
	"s.grace, s.priority, s.max_attempts, s.start_at, s.end_at, s.source)::pg_catalog.text " \
	"FROM %s.jobq_schedules() s WHERE s.name OPERATOR(pg_catalog.=) $1"
#define SQL_OF_SOURCE \
	"SELECT s.name FROM %s.jobq_schedules() s " \
	"WHERE s.source OPERATOR(pg_catalog.=) $1 ORDER BY s.name"
#define SQL_UNSCHEDULE	"SELECT %s.jobq_unschedule($1)"
#define SQL_PAUSE		"SELECT %s.jobq_pause_schedule($1)"
#define SQL_RESUME		"SELECT %s.jobq_resume_schedule($1)"
#define SQL_TRIGGER		"SELECT %s.jobq_trigger_schedule($1)"
#define SQL_LIST \
	"SELECT s.name, s.queue, s.expr, s.tz, s.paused, " \
	"pg_catalog.date_trunc('second', s.next_run_at), pg_catalog.date_trunc('second', s.last_run_at), " \
	"s.last_job_id, s.last_job_state, s.missed_ticks, s.skipped_ticks, s.failures, " \
	"s.last_error, s.source FROM %s.jobq_schedules() s"
#define SQL_LIST_JSON \
	"SELECT COALESCE(pg_catalog.array_to_json(pg_catalog.array_agg(s)), '[]') FROM %s.jobq_schedules() s"

/* ----------------------------------------------------------------------
 * The file
 * ---------------------------------------------------------------------- */

static void
file_error(const Crontab *tab, int line, const char *what, const char *token)
{
	fprintf(stderr, "%s: %s:%d: %s", cli_progname(), tab->path, line, what);
	if (token)
		fprintf(stderr, " \"%s\"", token);
	fputc('\n', stderr);
}

/* next_token: the next space-separated token of *p, NUL-terminated in place */
static char *
next_token(char **p)
{
	char	   *s = *p,
			   *t;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '\0')
		return NULL;
	t = s;
	while (*s && *s != ' ' && *s != '\t')
		s++;
	if (*s)
		*s++ = '\0';
	*p = s;
	return t;
}

/*
 * set_key
 *		KEY=VALUE into settings (queue into *queue); false for an unknown
 *		key.  The values stay in the line buffer, which lives as long as
 *		the crontab.
 */
static bool
set_key(char *pair, char **settings, char **queue)
{
	char	   *eq = strchr(pair, '=');
	const char *key = pair;

	*eq = '\0';
	if (strcmp(key, "queue") == 0)
	{
		*queue = eq + 1;
		return true;
	}
	if (strcmp(key, "TZ") == 0 || strcmp(key, "CRON_TZ") == 0)
		key = "tz";
	for (int k = 0; k < S_COUNT; k++)
		if (setting_keys[k] && strcmp(key, setting_keys[k]) == 0)
		{
			settings[k] = eq + 1;
			return true;
		}
	*eq = '=';
	return false;
}

/*
 * parse_line
 *		One line into an entry (true), a defaults line or nothing (false,
 *		*bad set on a syntax error).  line is modified in place.
 */
static bool
parse_line(Crontab *tab, int lineno, char *line, char **defaults, char **default_queue,
		   Entry *e, bool *bad)
{
	char	   *p = line;
	char	   *tok,
			   *payload;
	char		expr[1024];
	int			fields;
	bool		queue_given = false;

	*bad = false;
	line[strcspn(line, "\r\n")] = '\0';
	p += strspn(p, " \t");
	if (*p == '\0' || *p == '#')
		return false;

	/* a defaults line: KEY=VALUE pairs only */
	tok = p + strcspn(p, " \t");
	if (memchr(p, '=', tok - p) != NULL)
	{
		while ((tok = next_token(&p)) != NULL)
			if (strchr(tok, '=') == NULL || !set_key(tok, defaults, default_queue))
			{
				file_error(tab, lineno, "not a KEY=VALUE setting:", tok);
				*bad = true;
				return false;
			}
		return false;
	}

	/* the payload: from the first "{" to the end of the line */
	payload = strchr(p, '{');
	if (payload)
		*payload = '\0';
	memset(e, 0, sizeof(*e));
	e->line = lineno;
	memcpy(e->settings, defaults, sizeof(e->settings));
	e->queue = *default_queue;

	/* the expression: one token for an alias, two for @every, else five */
	tok = next_token(&p);
	fields = tok[0] != '@' ? 5 : strcmp(tok, "@every") == 0 ? 2 : 1;
	expr[0] = '\0';
	for (int i = 0; i < fields; i++)
	{
		if (i > 0 && (tok = next_token(&p)) == NULL)
		{
			file_error(tab, lineno, "the expression is cut short before the name", NULL);
			*bad = true;
			return false;
		}
		if (strlen(expr) + strlen(tok) + 2 > sizeof(expr))
		{
			file_error(tab, lineno, "expression too long", NULL);
			*bad = true;
			return false;
		}
		if (i > 0)
			strcat(expr, " ");
		strcat(expr, tok);
	}
	e->expr = jobq_xstrdup(expr);

	if ((e->name = next_token(&p)) == NULL)
	{
		file_error(tab, lineno, "no schedule name after the expression", NULL);
		*bad = true;
		return false;
	}
	/* then the queue (or a default names it) and KEY=VALUE pairs */
	while ((tok = next_token(&p)) != NULL)
	{
		if (strchr(tok, '=') != NULL)
		{
			if (!set_key(tok, e->settings, &e->queue))
			{
				file_error(tab, lineno, "unknown setting", tok);
				*bad = true;
				return false;
			}
		}
		else if (!queue_given)
		{
			e->queue = tok;
			queue_given = true;
		}
		else
		{
			file_error(tab, lineno, "unexpected (a payload is a JSON object):", tok);
			*bad = true;
			return false;
		}
	}
	if (e->queue == NULL)
	{
		file_error(tab, lineno, "no queue for schedule", e->name);
		*bad = true;
		return false;
	}
	if (payload)
	{
		*payload = '{';
		e->settings[S_PAYLOAD] = payload;
	}
	for (int i = 0; i < tab->n; i++)
		if (strcmp(tab->entries[i].name, e->name) == 0)
		{
			fprintf(stderr, "%s: %s:%d: schedule \"%s\" is already defined on line %d\n",
					cli_progname(), tab->path, lineno, e->name, tab->entries[i].line);
			*bad = true;
			return false;
		}
	return true;
}

/*
 * read_crontab
 *		Read and parse the whole file; any syntax error is reported (all
 *		of them, with their lines) and exits 2 before anything is sent.
 *		The lines stay allocated in *lines until the end.
 */
static void
read_crontab(Crontab *tab, char ***lines, int *nlines)
{
	FILE	   *f = fopen(tab->path, "r");
	char	   *defaults[S_COUNT] = {NULL};
	char	   *default_queue = NULL;
	char		buf[8192];
	int			lineno = 0,
				cap = 0;
	bool		errors = false;

	*lines = NULL;
	*nlines = 0;
	if (f == NULL)
	{
		fprintf(stderr, "%s: could not open \"%s\": %s\n", cli_progname(), tab->path,
				strerror(errno));
		exit(EXIT_USAGE);
	}
	while (fgets(buf, sizeof(buf), f) != NULL)
	{
		Entry		e;
		bool		bad;
		char	   *line;

		lineno++;
		if (strchr(buf, '\n') == NULL && !feof(f))
		{
			file_error(tab, lineno, "line longer than 8191 bytes", NULL);
			errors = true;
			break;
		}
		if (*nlines == cap)
		{
			cap = cap ? cap * 2 : 64;
			*lines = realloc(*lines, cap * sizeof(char *));
			if (*lines == NULL)
			{
				fprintf(stderr, "%s: out of memory\n", cli_progname());
				exit(EXIT_FAILED);
			}
		}
		line = (*lines)[(*nlines)++] = jobq_xstrdup(buf);
		if (!parse_line(tab, lineno, line, defaults, &default_queue, &e, &bad))
		{
			errors |= bad;
			continue;
		}
		if (tab->n == tab->cap)
		{
			tab->cap = tab->cap ? tab->cap * 2 : 32;
			tab->entries = realloc(tab->entries, tab->cap * sizeof(Entry));
			if (tab->entries == NULL)
			{
				fprintf(stderr, "%s: out of memory\n", cli_progname());
				exit(EXIT_FAILED);
			}
		}
		tab->entries[tab->n++] = e;
	}
	fclose(f);
	if (errors)
		exit(EXIT_USAGE);
}

/* ----------------------------------------------------------------------
 * Commands
 * ---------------------------------------------------------------------- */

static void
report(const char *action, const char *name, const char *next, bool *first)
{
	if (cli_json())
	{
		printf("%s{\"name\" : ", *first ? "[" : ", ");
		print_json_string(name);
		printf(", \"action\" : \"%s\", \"next_run_at\" : ", action);
		if (next)
			print_json_time(next);
		else
			printf("null");
		printf("}");
	}
	else if (next)
		printf("%-9s %s (next %s)\n", action, name, next);
	else
		printf("%-9s %s\n", action, name);
	*first = false;
}

/* definition: the schedule's definition as text, or NULL (caller frees) */
static char *
definition(const char *name)
{
	PGresult   *res = cli_sql_run(SQL_DEFINITION, 1, &name, name);
	char	   *def = PQntuples(res) ? jobq_xstrdup(PQgetvalue(res, 0, 0)) : NULL;

	PQclear(res);
	return def;
}

/*
 * apply
 *		schedule apply FILE [--prune] [--dry-run]
 */
static int
apply(const char *path)
{
	Crontab		tab = {path, NULL, 0, 0};
	char	  **lines;
	int			nlines;
	char		source[PATH_MAX + 8];
	char	   *real = realpath(path, NULL);
	const char *src = source;
	int			added = 0,
				changed = 0,
				unchanged = 0,
				removed = 0;
	bool		first = true;
	PGresult   *res;

	if (real == NULL)
	{
		fprintf(stderr, "%s: could not open \"%s\": %s\n", cli_progname(), path, strerror(errno));
		exit(EXIT_USAGE);
	}
	snprintf(source, sizeof(source), "file:%s", real);
	free(real);
	read_crontab(&tab, &lines, &nlines);

	cli_sql_connect();
	cli_sql_command("BEGIN");
	for (int i = 0; i < tab.n; i++)
	{
		Entry	   *e = &tab.entries[i];
		const char *params[13];
		char		where[512];
		char	   *before,
				   *after;

		params[0] = e->name;
		params[1] = e->queue;
		params[2] = e->expr;
		for (int k = 0; k < S_COUNT; k++)
			params[3 + k] = e->settings[k];
		params[12] = src;
		snprintf(where, sizeof(where), "%s:%d: schedule %s", path, e->line, e->name);
		cli_sql_command("SAVEPOINT jobq_apply");
		before = definition(e->name);
		res = cli_sql_run(SQL_SCHEDULE, 13, params, where);
		after = definition(e->name);
		if (before != NULL && after != NULL && strcmp(before, after) == 0)
		{
			/* the same definition: leave the schedule exactly as it was */
			cli_sql_command("ROLLBACK TO SAVEPOINT jobq_apply");
			report("unchanged", e->name, NULL, &first);
			unchanged++;
		}
		else
		{
			cli_sql_command("RELEASE SAVEPOINT jobq_apply");
			report(before ? "change" : "add", e->name,
				   PQgetisnull(res, 0, 0) ? NULL : PQgetvalue(res, 0, 0), &first);
			if (before)
				changed++;
			else
				added++;
		}
		PQclear(res);
		free(before);
		free(after);
	}
	if ((cli_option("prune") != NULL))
	{
		PGresult   *mine = cli_sql_run(SQL_OF_SOURCE, 1, &src, NULL);

		for (int r = 0; r < PQntuples(mine); r++)
		{
			const char *name = PQgetvalue(mine, r, 0);
			bool		in_file = false;

			for (int i = 0; i < tab.n && !in_file; i++)
				in_file = strcmp(tab.entries[i].name, name) == 0;
			if (in_file)
				continue;
			PQclear(cli_sql_run(SQL_UNSCHEDULE, 1, &name, name));
			report("remove", name, NULL, &first);
			removed++;
		}
		PQclear(mine);
	}
	cli_sql_command((cli_option("dry-run") != NULL) ? "ROLLBACK" : "COMMIT");
	if (cli_json())
		printf("%s\n", first ? "[]" : "]");
	else
		printf("%d added, %d changed, %d unchanged, %d removed%s\n", added, changed,
			   unchanged, removed, (cli_option("dry-run") != NULL) ? " (dry run: nothing was changed)" : "");

	for (int i = 0; i < tab.n; i++)
		free(tab.entries[i].expr);
	free(tab.entries);
	for (int i = 0; i < nlines; i++)
		free(lines[i]);
	free(lines);
	cli_sql_disconnect();
	return EXIT_OK;
}

/*
 * cmd_schedule
 *		schedule apply FILE [--prune] [--dry-run] | rm|pause|resume|trigger NAME
 */
int
cmd_schedule(void)
{
	static const char *const allowed[] = {"prune", "dry-run", NULL};
	static const struct
	{
		const char *sub;
		const char *sql;
		const char *done;
	}			subs[] = {
		{"rm", SQL_UNSCHEDULE, "removed"},
		{"pause", SQL_PAUSE, "paused"},
		{"resume", SQL_RESUME, "resumed"},
		{"trigger", SQL_TRIGGER, "triggered"},
	};
	const char *sub = cli_arg(1);
	const char *name;
	PGresult   *res;
	int			which = -1;
	int			rc = EXIT_OK;

	cli_allow_only("schedule", allowed);
	if (sub == NULL)
		cli_usage_error("%s", "missing subcommand for \"schedule\" (apply, rm, pause, resume, trigger)");
	if ((cli_option("prune") || cli_option("dry-run")) && strcmp(sub, "apply") != 0)
		cli_usage_error("%s", "--prune and --dry-run apply to \"schedule apply\" only");
	if (cli_arg(2) == NULL || cli_arg(3) != NULL)
		cli_usage_error("\"schedule %s\" takes one argument", sub);
	if (strcmp(sub, "apply") == 0)
		return apply(cli_arg(2));

	for (int i = 0; i < (int) (sizeof(subs) / sizeof(subs[0])); i++)
		if (strcmp(sub, subs[i].sub) == 0)
			which = i;
	if (which < 0)
	{
		cli_usage_error("unknown schedule subcommand \"%s\"", sub);
		return EXIT_USAGE;
	}
	name = cli_arg(2);
	cli_sql_connect();
	res = cli_sql_run(subs[which].sql, 1, &name, NULL);
	if (which == 0 && strcmp(PQgetvalue(res, 0, 0), "t") != 0)
	{
		fprintf(stderr, "%s: error: schedule \"%s\" does not exist\n", cli_progname(), name);
		rc = EXIT_FAILED;
	}
	else if (cli_json())
	{
		printf("{\"schedule\" : ");
		print_json_string(name);
		printf(", \"done\" : \"%s\"", subs[which].done);
		if (which >= 2)
		{
			printf(", \"%s\" : ", which == 2 ? "next_run_at" : "job_id");
			if (PQgetisnull(res, 0, 0))
				printf("null");
			else if (which == 2)
				print_json_time(PQgetvalue(res, 0, 0));
			else
				printf("%s", PQgetvalue(res, 0, 0));
		}
		printf("}\n");
	}
	else if (which == 3)
		printf("%s\n", PQgetvalue(res, 0, 0));	/* the job's id, as enqueue prints */
	else if (which == 2)
		printf("schedule %s resumed (next %s)\n", name,
			   PQgetisnull(res, 0, 0) ? "none" : PQgetvalue(res, 0, 0));
	else
		printf("schedule %s %s\n", name, subs[which].done);
	PQclear(res);
	cli_sql_disconnect();
	return rc;
}

/*
 * cmd_schedules
 *		schedules: every schedule, as a table or --json.
 */
int
cmd_schedules(void)
{
	static const char *const allowed[] = {NULL};
	static const char *const names[] = {"name", "queue", "expr", "tz", "paused",
		"next_run_at", "last_run_at", "last_job", "missed", "skipped", "failures",
	"last_error", "source"};
	static const bool numeric[] = {false, false, false, false, false, false, false,
	false, true, true, true, false, false};
	PGresult   *res;
	Table		t;

	cli_allow_only("schedules", allowed);
	cli_want_args("schedules", 0, 0);
	cli_sql_connect();
	if (cli_json())
	{
		res = cli_sql_run(SQL_LIST_JSON, 0, NULL, NULL);
		printf("%s\n", PQgetvalue(res, 0, 0));
		PQclear(res);
		cli_sql_disconnect();
		return EXIT_OK;
	}
	res = cli_sql_run(SQL_LIST, 0, NULL, NULL);
	table_init(&t, 13, names, numeric);
	for (int r = 0; r < PQntuples(res); r++)
	{
		const char *row[13];
		char		last_job[64];

		/* last job: "ID (state)" */
		if (PQgetisnull(res, r, 7))
			last_job[0] = '\0';
		else
			snprintf(last_job, sizeof(last_job), "%s (%s)", PQgetvalue(res, r, 7),
					 PQgetisnull(res, r, 8) ? "gone" : PQgetvalue(res, r, 8));
		row[0] = PQgetvalue(res, r, 0);
		row[1] = PQgetvalue(res, r, 1);
		row[2] = PQgetvalue(res, r, 2);
		row[3] = PQgetvalue(res, r, 3);
		row[4] = strcmp(PQgetvalue(res, r, 4), "t") == 0 ? "yes" : "no";
		row[5] = PQgetisnull(res, r, 5) ? NULL : PQgetvalue(res, r, 5);
		row[6] = PQgetisnull(res, r, 6) ? NULL : PQgetvalue(res, r, 6);
		row[7] = last_job;
		for (int c = 9; c < 14; c++)
			row[c - 1] = PQgetisnull(res, r, c) ? NULL : PQgetvalue(res, r, c);
		table_add(&t, row);
	}
	print_table(&t);
	table_free(&t);
	PQclear(res);
	cli_sql_disconnect();
	return EXIT_OK;
}
