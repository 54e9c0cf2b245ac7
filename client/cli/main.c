/*-------------------------------------------------------------------------
 *
 * main.c
 *	  jobq: the command-line tool of the jobq job queue.
 *
 *		jobq [-d CONNINFO] [--json] COMMAND [ARG]... [OPTION]...
 *
 * Commands map one to one onto libjobq calls (and through them onto the
 * SQL API, doc/sql.md): enqueue, stats, list, show, retry,
 * cancel, purge, queue create|alter|drop|pause|resume, queues, sweep.
 * Output is an aligned table for people, or JSON with --json (jobq_rows_json
 * for result tables, so types and quoting follow the server's).  Exit codes
 * are in cli.h.
 *
 * The CLI sends no SQL of its own: libjobq checks arguments, qualifies
 * every call with --schema (so search_path cannot redirect it), passes
 * values as parameters and forces client_encoding UTF8 (doc/reliability.md §3).
 * The one exception is BEGIN/COMMIT around an enqueue from stdin that
 * takes several batches, on jobq_pgconn() as libjobq documents.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/cli/main.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "cli.h"

#define ENQUEUE_CHUNK JOBQ_ENQUEUE_BATCH_MAX	/* payloads per jobq_enqueue_batch */

/* Options; each command says which it accepts (opt_allowed). */
enum
{
	O_DELAY = 1, O_RUN_AT, O_PRIORITY, O_MAX_ATTEMPTS, O_KEY, O_WATCH, O_STATE,
	O_LIMIT, O_QUEUE, O_OLDER_THAN, O_LEASE, O_BACKOFF_BASE, O_BACKOFF_CAP,
	O_COMPLETED_RETENTION, O_DEAD_RETENTION, O_NOTIFY, O_FORCE, O_JSON,
	O_WAIT, O_TIMEOUT,
	O_FROM, O_TO, O_BUCKET, O_PROMETHEUS,	/* metrics.c */
	O_PRUNE, O_DRY_RUN,	/* schedules.c */
	O_WHERE, O_BATCH,
	O_AFTER, O_WORKER, O_KEY_PREFIX, O_SINCE, O_UNTIL, O_ERROR, O_PAYLOAD,
	O_SET,
	O_GROUP, O_DEPENDS_ON, O_ON_DEP_FAILURE,	/* enqueue, 0.2.0 */
	O_COUNT
};

static const struct option longopts[] = {
	{"dbname", required_argument, NULL, 'd'},
	{"schema", required_argument, NULL, 's'},
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
	{"wait", required_argument, NULL, O_WAIT},
	{"timeout", required_argument, NULL, O_TIMEOUT},
	{"from", required_argument, NULL, O_FROM},
	{"to", required_argument, NULL, O_TO},
	{"bucket", required_argument, NULL, O_BUCKET},
	{"prometheus", no_argument, NULL, O_PROMETHEUS},
	{"prune", no_argument, NULL, O_PRUNE},
	{"dry-run", no_argument, NULL, O_DRY_RUN},
	{"where", required_argument, NULL, O_WHERE},
	{"batch", required_argument, NULL, O_BATCH},
	{"after", required_argument, NULL, O_AFTER},
	{"worker", required_argument, NULL, O_WORKER},
	{"key-prefix", required_argument, NULL, O_KEY_PREFIX},
	{"since", required_argument, NULL, O_SINCE},
	{"until", required_argument, NULL, O_UNTIL},
	{"error", required_argument, NULL, O_ERROR},
	{"payload", required_argument, NULL, O_PAYLOAD},
	{"set", required_argument, NULL, O_SET},
	{"group", required_argument, NULL, O_GROUP},
	{"depends-on", required_argument, NULL, O_DEPENDS_ON},
	{"on-dep-failure", required_argument, NULL, O_ON_DEP_FAILURE},
	{NULL, 0, NULL, 0}
};

static const char *progname = "jobq";
static const char *conninfo = NULL;
static const char *schema = "public";
static bool json = false;
static const char *opt[O_COUNT];	/* value of each option given, or NULL */
static char **args;				/* positional arguments */
#define MAX_SETS 64
static const char *sets[MAX_SETS];	/* each --set, in order */
static int	nsets;
static int	nargs;

static JobqConn *conn = NULL;
static char *stdin_text = NULL;

static void connect_db(void);
static JobqRows *need(JobqRows *rows);

static volatile sig_atomic_t interrupted = 0;

/*
 * finish
 *		Free everything and exit with code: the CLI is checked for leaks.
 */
static void
finish(int code)
{
	jobq_disconnect(conn);
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
			"        [--delay=DURATION | --run-at=TIMESTAMP] [--priority=N]\n"
			"        [--max-attempts=N] [--key=DEDUPE_KEY] [--group=GROUP_KEY]\n"
			"        [--depends-on=ID[,ID]... [--on-dep-failure=cancel|ignore|wait]]\n"
			"        [--wait=DURATION: wait for the job's outcome, print its result]\n"
			"  await ID                 wait for a job's outcome  [--timeout=DURATION]\n"
			"  stats [QUEUE]            job counts per queue  [--watch=DURATION]\n"
			"  list QUEUE               a page of jobs: live by id, then finished newest first\n"
			"        [--state=STATE] [--limit=N] [--after=CURSOR] [--priority=N|N..M]\n"
			"        [--worker=W] [--key=K | --key-prefix=P] [--since=T] [--until=T]\n"
			"        [--error=TEXT] [--payload=JSON]\n"
			"  show ID                  everything about one job, and its attempts\n"
			"  retry ID | --queue=QUEUE dead job(s) back to ready\n"
			"  retry --queue=QUEUE --where=FILTERS  [--state=STATE] [--batch=N]\n"
			"                           the jobs jobq list selects, in batches\n"
			"  cancel ID                a ready or dead job to cancelled\n"
			"  cancel --queue=QUEUE --where=FILTERS  [--state=STATE] [--batch=N]\n"
			"  purge QUEUE              delete finished jobs  [--state=STATE]\n"
			"        [--older-than=DURATION]\n"
			"  queue create NAME        [--lease=D] [--max-attempts=N] [--backoff-base=D]\n"
			"        [--backoff-cap=D] [--completed-retention=D] [--dead-retention=D]\n"
			"        [--notify=on|off] [--set=SETTING=VALUE]...: a setting of 0.2.0\n"
			"        (group_mode=fifo, max_running=40, rate_per=1m, notify_finished=on, ...)\n"
			"  queue alter NAME         the same settings; those not given stay\n"
			"  queue drop NAME          [--force: also delete its live jobs]\n"
			"  queue pause NAME         claims skip the queue (enqueue still works)\n"
			"  queue resume NAME\n"
			"  queues                   all queues and their settings\n"
			"  sweep [QUEUE]            requeue expired leases, purge old history\n"
			"  metrics [QUEUE]          counters and latencies over time  [--from=TIME]\n"
			"        [--to=TIME] [--bucket=DURATION] | --prometheus\n"
			"  schedules                all schedules: next and last runs, counters\n"
			"  schedule apply FILE      make the schedules match a crontab-like FILE\n"
			"        [--prune: also remove those FILE made and no longer has]\n"
			"        [--dry-run: report what would change, change nothing]\n"
			"  schedule rm|pause|resume|trigger NAME\n"
			"                           remove, pause, resume (from now), run now\n"
			"  workers                  the registered workers, their state and jobs; the\n"
			"                           queues with jobs due that no live worker claims\n"
			"  worker quiet|stop|resume TARGET\n"
			"                           ask workers (an id, a name or host pattern, or *)\n"
			"                           to stop claiming, to exit, or to claim again\n"
			"  health                   the server's health findings; exit 0 ok, 1 warning,\n"
			"                           2 critical, 3 could not tell\n"
			"  audit                    operator calls, newest first  [--queue=QUEUE]\n"
			"        [--limit=N]\n"
			"  groups QUEUE             the groups of a queue that groups its jobs\n"
			"        [--state=blocked] [--limit=N] [--after=KEY]\n"
			"  flow create [FILE]       a graph of jobs from a JSON array (FILE or stdin)\n"
			"  flow show FLOW           a flow's jobs, their states and what each waits for\n"
			"  flow cancel FLOW         cancel the ready and waiting jobs of a flow\n"
			"  flow retry ID            a dead job back to ready, and the jobs its failure\n"
			"                           cancelled back to waiting\n\n"
			"Options:\n"
			"  -d, --dbname=CONNINFO    database connection string (default: PG* environment)\n"
			"  -s, --schema=SCHEMA      schema of the jobq functions (default: public)\n"
			"      --json               machine-readable output\n"
			"  -h, --help               show this help, then exit\n"
			"  -V, --version            show the version, then exit\n\n"
			JOBQ_DURATION_HELP
			"Queue settings, --delay and --older-than take whole seconds.\n"
			"Exit status: 0 ok, 1 operation failed or not found, 2 bad usage,\n"
			"3 connection error; await and enqueue --wait: 4 dead, 5 cancelled,\n"
			"6 not finished in time, 7 purged or never committed.\n",
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

/*
 * bad_option
 *		Say what getopt_long refused in arg, the argument it stopped at, and
 *		exit 2: an option that needs a value and got none, a value given to
 *		an option that takes none, or an unknown option.  optopt is the
 *		option's val when getopt_long knew the option (for a long option an
 *		O_* number, not a character: hence the look-up in longopts), the
 *		character of an unknown short option, or 0 for an unknown long one.
 */
static void
bad_option(const char *arg, int optopt)
{
	char		name[64];

	for (const struct option *o = longopts; optopt != 0 && o->name; o++)
	{
		if (o->val != optopt)
			continue;
		if (strncmp(arg, "--", 2) == 0)
			snprintf(name, sizeof(name), "--%s", o->name);
		else
			snprintf(name, sizeof(name), "-%c", optopt);
		if (o->has_arg == no_argument)
			usage_error("option %s takes no value", name);
		usage_error("option %s needs a value", name);
	}
	if (optopt > 0 && optopt < 128 && strncmp(arg, "--", 2) != 0)
	{
		snprintf(name, sizeof(name), "-%c", optopt);
		usage_error("unknown option \"%s\"", name);
	}
	snprintf(name, sizeof(name), "%.*s", (int) strcspn(arg, "="), arg);
	usage_error("unknown option \"%s\"", name);
}

/* ----------------------------------------------------------------------
 * Database: every call goes through libjobq
 * ---------------------------------------------------------------------- */

static void
connect_db(void)
{
	static const char *const keys[] = {"fallback_application_name", NULL};
	static const char *const vals[] = {"jobq", NULL};

	/* a handful of statements: preparing them would only add round trips */
	conn = jobq_connect_params(conninfo, schema, JOBQ_CONNECT_NO_PREPARE, keys, vals);
	if (conn == NULL || jobq_status(conn) != JOBQ_ERR_NONE)
	{
		fprintf(stderr, "%s: could not connect to the database: %s\n", progname,
				jobq_errmsg(conn));
		finish(EXIT_CONNECTION);
	}
}

/*
 * cli_report_error, failed
 *		Report the error of the last libjobq call (cli.h), and with failed
 *		end the program: 3 when the connection is gone, 1 otherwise.
 *		Server errors print as psql does: the message with its SQLSTATE,
 *		then DETAIL and HINT.
 */
int
cli_report_error(void)
{
	const char *msg = jobq_errfield(conn, JOBQ_ERRFIELD_MESSAGE);
	const char *detail = jobq_errfield(conn, JOBQ_ERRFIELD_DETAIL);
	const char *hint = jobq_errfield(conn, JOBQ_ERRFIELD_HINT);

	if (jobq_status(conn) == JOBQ_ERR_CONNECTION)
	{
		fprintf(stderr, "%s: lost the connection: %s\n", progname, jobq_errmsg(conn));
		return EXIT_CONNECTION;
	}
	fprintf(stderr, "%s: error: %s", progname, msg ? msg : jobq_errmsg(conn));
	if (jobq_sqlstate(conn))
		fprintf(stderr, " (SQLSTATE %s)", jobq_sqlstate(conn));
	fputc('\n', stderr);
	if (detail)
		fprintf(stderr, "DETAIL: %s\n", detail);
	if (hint)
		fprintf(stderr, "HINT: %s\n", hint);
	return EXIT_FAILED;
}

static void
failed(void)
{
	finish(cli_report_error());
}

/* check: rc of a libjobq call that must succeed */
static void
check(int rc)
{
	if (rc != JOBQ_OK)
		failed();
}

/* need: a JobqRows that must be there */
static JobqRows *
need(JobqRows *rows)
{
	if (rows == NULL)
		failed();
	return rows;
}

/* print_rows_json: rows as libjobq renders them, on one line */
static void
print_rows_json(const JobqRows *rows)
{
	char	   *js = jobq_rows_json(rows);

	if (js == NULL)
	{
		fprintf(stderr, "%s: out of memory\n", progname);
		finish(EXIT_FAILED);
	}
	printf("%s\n", js);
	jobq_free(js);
}

/* cli_print_rows_json, cli_need: print_rows_json and need (cli.h) */
void
cli_print_rows_json(const JobqRows *rows)
{
	print_rows_json(rows);
}

JobqRows *
cli_need(JobqRows *rows)
{
	return need(rows);
}

/* ----------------------------------------------------------------------
 * Arguments
 * ---------------------------------------------------------------------- */

/* out_of_range: the usage error for option what outside lo..hi */
static void
out_of_range(const char *what, const char *lo, const char *hi, const char *s)
{
	fprintf(stderr, "%s: %s must be between %s and %s, not \"%s\"\n",
			progname, what, lo, hi, s);
	fprintf(stderr, "Try \"%s --help\" for more information.\n", progname);
	finish(EXIT_USAGE);
}

/*
 * duration
 *		An option value in whole seconds from lo to hi, in the duration
 *		syntax both tools take (JOBQ_DURATION_HELP): "90", "5min", "1h30m",
 *		"2 days", "01:30:00".  libjobq takes seconds, so the CLI converts;
 *		anything else, a fraction of a second or a value out of range is a
 *		usage error, before anything is sent.  Returns -1 when s is NULL
 *		(the default).
 */
static int
duration(const char *s, const char *what, long long lo, long long hi)
{
	char		los[32],
				his[32];
	double		v;

	if (s == NULL)
		return -1;
	if (jobq_parse_duration(s, 0, &v) != 0)
	{
		fprintf(stderr, "%s: invalid duration \"%s\" for %s\n%s", progname, s, what,
				JOBQ_DURATION_HELP);
		fprintf(stderr, "Try \"%s --help\" for more information.\n", progname);
		finish(EXIT_USAGE);
	}
	if (v != floor(v))
	{
		fprintf(stderr, "%s: %s must be whole seconds, not \"%s\"\n", progname, what, s);
		fprintf(stderr, "Try \"%s --help\" for more information.\n", progname);
		finish(EXIT_USAGE);
	}
	if (v < lo || v > hi)
	{
		jobq_format_duration(los, sizeof(los), (double) lo);
		jobq_format_duration(his, sizeof(his), (double) hi);
		out_of_range(what, los, his, s);
	}
	return (int) v;
}

/* an integer argument, or a usage error naming what */
static long long
integer(const char *s, const char *what)
{
	char	   *end;
	long long	v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (end == s || *end != '\0' || errno)
		usage_error("invalid %s", what);
	return v;
}

/*
 * int_arg: an integer option from lo to hi (the contract's limits, so
 * that the CLI refuses with exit 2 what the server would refuse, before
 * any round trip); dflt when the option was not given.
 */
static int
int_arg(const char *s, const char *what, int dflt, long long lo, long long hi)
{
	char		los[24],
				his[24];
	long long	v;

	if (s == NULL)
		return dflt;
	v = integer(s, what);
	if (v < lo || v > hi)
	{
		snprintf(los, sizeof(los), "%lld", lo);
		snprintf(his, sizeof(his), "%lld", hi);
		out_of_range(what, los, his, s);
	}
	return (int) v;
}

/*
 * id_list_arg: a comma-separated list of 1..max job ids (positive), in a
 * new array the caller frees; *n receives the count.  A usage error
 * otherwise, before any round trip.
 */
static int64_t *
id_list_arg(const char *s, const char *what, int max, size_t *n)
{
	int64_t    *ids = jobq_xmalloc(sizeof(int64_t) * (strlen(s) / 2 + 1));
	char	   *copy = jobq_xstrdup(s);
	char	   *save = NULL;
	char		why[160];

	*n = 0;
	for (char *p = strtok_r(copy, ",", &save); p; p = strtok_r(NULL, ",", &save))
	{
		char	   *end;
		long long	v;

		errno = 0;
		v = strtoll(p, &end, 10);
		if (end == p || *end != '\0' || errno || v < 1 || (int) *n == max)
		{
			*n = 0;
			break;
		}
		ids[(*n)++] = v;
	}
	free(copy);
	if (*n == 0)
	{
		free(ids);
		snprintf(why, sizeof(why), "%s takes 1 to %d job ids, comma-separated", what, max);
		usage_error("%s", why);
	}
	return ids;
}

/*
 * setting_arg: the value of the option of queue setting name (--lease for
 * lease, --backoff-base for backoff_base), with the kind and bounds of
 * JOBQ_QUEUE_SETTINGS; -1 when not given.  notify is on/off, not here.
 */
static int
setting_arg(const char *s, const char *name)
{
#define SETTING_ROW(n, kind, lo, hi, dflt) {#n, #kind, lo, hi},
	static const struct
	{
		const char *name;
		const char *kind;
		long long	lo;
		long long	hi;
	}			settings[] = {
		JOBQ_QUEUE_SETTINGS(SETTING_ROW)
	};
#undef SETTING_ROW
	char		what[64];

	for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++)
	{
		if (strcmp(settings[i].name, name) != 0)
			continue;
		snprintf(what, sizeof(what), "--%s", name);
		for (char *p = what; *p; p++)
			if (*p == '_')
				*p = '-';
		if (strcmp(settings[i].kind, "SECONDS") == 0)
			return duration(s, what, settings[i].lo, settings[i].hi);
		return int_arg(s, what, -1, settings[i].lo, settings[i].hi);
	}
	fprintf(stderr, "%s: no queue setting %s\n", progname, name);	/* cannot happen */
	finish(EXIT_FAILED);
	return -1;
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

/* cli_int_option: int_arg of the long option name (cli.h) */
int
cli_int_option(const char *name, int dflt, long long lo, long long hi)
{
	char		what[64];

	snprintf(what, sizeof(what), "--%s", name);
	return int_arg(cli_option(name), what, dflt, lo, hi);
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

	stdin_text = jobq_xmalloc(cap);
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

/* run_sql: BEGIN or COMMIT on the connection (see cmd_enqueue) */
static void
run_sql(const char *sql)
{
	PGresult   *res = PQexec(jobq_pgconn(conn), sql);

	if (PQresultStatus(res) != PGRES_COMMAND_OK)
	{
		fprintf(stderr, "%s: %s failed: %s", progname, sql,
				PQerrorMessage(jobq_pgconn(conn)));
		PQclear(res);
		finish(PQstatus(jobq_pgconn(conn)) == CONNECTION_BAD ? EXIT_CONNECTION : EXIT_FAILED);
	}
	PQclear(res);
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
	static const int allowed[] = {O_DELAY, O_RUN_AT, O_PRIORITY, O_MAX_ATTEMPTS, O_KEY,
	O_WAIT, O_GROUP, O_DEPENDS_ON, O_ON_DEP_FAILURE, 0};
	char	  **lines;
	size_t	   *lens;
	int64_t    *ids;
	int		   *created;
	int			nlines = 0;
	JobqEnqueueOpts eo = JOBQ_ENQUEUE_OPTS_INIT;
	const char *keys[1];
	int64_t    *deps = NULL;
	bool		first = true;
	bool		chunked;
	int			wait_ms;

	allow_only("enqueue", allowed);
	want_args("enqueue", 1, 2);
	eo.priority = int_arg(opt[O_PRIORITY], "--priority", 0, JOBQ_PRIORITY_MIN,
						  JOBQ_PRIORITY_MAX);
	eo.max_attempts = int_arg(opt[O_MAX_ATTEMPTS], "--max-attempts", -1, 1,
							  JOBQ_MAX_ATTEMPTS_MAX);
	if (opt[O_DELAY] && opt[O_RUN_AT])
		usage_error("%s", "--delay and --run-at exclude each other");
	eo.delay_s = duration(opt[O_DELAY], "--delay", 0, JOBQ_DELAY_MAX_S);
	eo.run_at = opt[O_RUN_AT];
	eo.group_key = opt[O_GROUP];
	if (opt[O_GROUP] && (opt[O_GROUP][0] == '\0' || strlen(opt[O_GROUP]) > JOBQ_GROUP_KEY_MAX))
	{
		char		why[96];

		snprintf(why, sizeof(why), "--group takes a key of 1 to %d bytes, not %zu",
				 JOBQ_GROUP_KEY_MAX, strlen(opt[O_GROUP]));
		usage_error("%s", why);
	}
	if (opt[O_ON_DEP_FAILURE] && !opt[O_DEPENDS_ON])
		usage_error("%s", "--on-dep-failure needs --depends-on");
	eo.on_dep_failure = opt[O_ON_DEP_FAILURE];
	if (opt[O_DEPENDS_ON])
	{
		if (nargs != 3)
			usage_error("%s", "--depends-on applies to one job only: give its JSON");
		if (opt[O_KEY])
			usage_error("%s", "--depends-on and --key exclude each other here (jobq_enqueue takes both)");
		deps = id_list_arg(opt[O_DEPENDS_ON], "--depends-on", JOBQ_DEPS_MAX,
						   &eo.n_depends_on);
		eo.depends_on = deps;
	}

	if (nargs == 3)
	{
		lines = jobq_xmalloc(sizeof(char *));
		lines[nlines++] = args[2];
	}
	else
	{
		size_t		cap = 16;

		read_stdin();
		lines = jobq_xmalloc(sizeof(char *) * cap);
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
	if (opt[O_WAIT] && nlines > 1)
	{
		free(lines);
		usage_error("%s", "--wait applies to one job only");
	}
	wait_ms = opt[O_WAIT] ? cli_await_timeout_ms(opt[O_WAIT], "--wait") : -1;
	keys[0] = opt[O_KEY];
	lens = jobq_xmalloc(sizeof(size_t) * nlines);
	ids = jobq_xmalloc(sizeof(int64_t) * nlines);
	created = jobq_xmalloc(sizeof(int) * nlines);
	for (int i = 0; i < nlines; i++)
		lens[i] = strlen(lines[i]);

	connect_db();

	/*
	 * One jobq_enqueue_batch call is one statement, all or nothing; more
	 * lines than one batch takes go in several, inside one transaction
	 * (NB: on error we exit, and the open transaction dies with us).
	 */
	chunked = nlines > ENQUEUE_CHUNK;
	if (chunked)
		run_sql("BEGIN");
	if (deps != NULL)
	{
		/* dependencies are the single enqueue's (one job, never a dedupe) */
		created[0] = 1;
		if (jobq_enqueue(conn, args[1], lines[0], lens[0], &eo, ids) != JOBQ_OK)
		{
			free(deps);
			free(lines);
			free(lens);
			free(ids);
			free(created);
			failed();
		}
		free(deps);
	}
	for (int at = eo.depends_on ? nlines : 0; at < nlines; at += ENQUEUE_CHUNK)
	{
		int			n = nlines - at < ENQUEUE_CHUNK ? nlines - at : ENQUEUE_CHUNK;

		if (jobq_enqueue_batch(conn, args[1], (size_t) n, (const char *const *) lines + at,
							   lens + at, opt[O_KEY] ? keys : NULL, &eo,
							   ids + at, created + at) != JOBQ_OK)
		{
			free(lines);
			free(lens);
			free(ids);
			free(created);
			failed();
		}
	}
	if (chunked)
		run_sql("COMMIT");
	if (wait_ms >= 0)
	{
		int64_t		id = ids[0];

		free(lens);
		free(ids);
		free(created);
		free(lines);
		return cli_await_print(conn, id, wait_ms, json);
	}
	if (json)
		printf("[");
	for (int i = 0; i < nlines; i++)
	{
		if (json)
			printf("%s{\"id\":%lld,\"created\":%s}", first ? "" : ",",
				   (long long) ids[i], created[i] ? "true" : "false");
		else
			printf("%lld\n", (long long) ids[i]);
		first = false;
	}
	if (json)
		printf("]\n");
	free(lens);
	free(ids);
	free(created);
	free(lines);
	return EXIT_OK;
}

static void
on_sigint(int signo)
{
	(void) signo;
	interrupted = 1;
}

/* the interval text cut to whole seconds, as date_trunc('second', ...) */
static char *
trunc_seconds(const char *interval)
{
	char	   *s;
	char	   *dot;

	if (interval == NULL)
		return NULL;
	s = jobq_xstrdup(interval);
	dot = strrchr(s, '.');
	if (dot && strchr(s, ':') && dot > strrchr(s, ':'))
		*dot = '\0';
	return s;
}

/* print_stats: one refresh of "stats"; returns the number of queues */
static size_t
print_stats(const char *queue)
{
	static const char *const names[] = {"queue", "paused", "ready", "delayed", "running",
	"expired", "dead", "completed", "cancelled", "oldest_ready", "stale_acks"};
	static const bool numeric[] = {false, false, true, true, true, true, true, true, true,
	false, true};
	static const char *const counts[] = {"ready", "delayed", "running", "expired", "dead",
	"completed", "cancelled"};
	JobqRows   *rows = need(jobq_stats(conn, queue));
	size_t		n = jobq_rows_count(rows);

	if (json)
	{
		printf("[");
		for (size_t r = 0; r < n; r++)
		{
			const char *paused = jobq_rows_get(rows, r, "paused");
			const char *age = jobq_rows_get(rows, r, "oldest_ready_age");
			double		secs;

			printf("%s{\"queue\":", r ? ", " : "");
			print_json_string(jobq_rows_get(rows, r, "queue"));
			printf(",\"paused\":%s", paused && paused[0] == 't' ? "true" : "false");
			for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
				printf(",\"%s\":%lld", counts[i], (long long) jobq_rows_get_int64(rows, r, counts[i]));
			printf(",\"oldest_ready_age_s\":");
			if (age == NULL)
				printf("null");
			else if (interval_seconds(age, &secs))
				print_json_number(secs);
			else
				print_json_string(age);
			printf(",\"stale_acks\":%lld}", (long long) jobq_rows_get_int64(rows, r, "stale_acks"));
		}
		printf("]\n");
	}
	else
	{
		Table		t;

		table_init(&t, 11, names, numeric);
		for (size_t r = 0; r < n; r++)
		{
			const char *paused = jobq_rows_get(rows, r, "paused");
			char	   *age = trunc_seconds(jobq_rows_get(rows, r, "oldest_ready_age"));
			const char *row[11];

			row[0] = jobq_rows_get(rows, r, "queue");
			row[1] = paused && paused[0] == 't' ? "yes" : "";
			for (int i = 0; i < 7; i++)
				row[2 + i] = jobq_rows_get(rows, r, counts[i]);
			row[9] = age;
			row[10] = jobq_rows_get(rows, r, "stale_acks");
			table_add(&t, row);
			free(age);
		}
		print_table(&t);
		table_free(&t);
	}
	jobq_rows_free(rows);
	return n;
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
	const char *queue;
	double		watch = 0;

	allow_only("stats", allowed);
	want_args("stats", 0, 1);
	if (opt[O_WATCH] &&
		(jobq_parse_duration(opt[O_WATCH], 0, &watch) != 0 ||
		 !(watch >= 0.1 && watch <= 86400)))
		usage_error("invalid --watch interval \"%s\" (100ms to 1d)", opt[O_WATCH]);
	queue = nargs > 1 ? args[1] : NULL;
	connect_db();
	for (;;)
	{
		size_t		n;

		if (watch > 0 && !json && isatty(STDOUT_FILENO))
			printf("\033[H\033[2J");
		n = print_stats(queue);
		fflush(stdout);
		if (n == 0 && queue)
		{
			fprintf(stderr, "%s: no queue \"%s\"\n", progname, queue);
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

static int64_t
job_id(const char *s)
{
	return (int64_t) integer(s, "job id");
}

/*
 * job_refused
 *		Why a per-job operation changed nothing: no such job, or its state
 *		(looked up, to say which).  Exit 1 either way.
 */
static int
job_refused(int64_t id, const char *what)
{
	JobqRows   *rows;

	if (jobq_status(conn) != JOBQ_ERR_NOT_FOUND && jobq_status(conn) != JOBQ_ERR_STATE &&
		jobq_status(conn) != JOBQ_ERR_BAD_ARGUMENT)
		failed();
	rows = jobq_status(conn) == JOBQ_ERR_STATE ? jobq_job_info(conn, id) : NULL;
	if (rows == NULL)
		fprintf(stderr, "%s: no job %lld\n", progname, (long long) id);
	else
		fprintf(stderr, "%s: job %lld is %s; %s\n", progname, (long long) id,
				jobq_rows_get(rows, 0, "state"), what);
	jobq_rows_free(rows);
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
	int64_t		id;

	if (opt[O_WHERE])
		return cmd_bulk_where("retry", JOBQ_BULK_RETRY);
	allow_only("retry", allowed);
	if (opt[O_QUEUE])
	{
		int64_t		n = 0;

		want_args("retry", 0, 0);
		connect_db();
		check(jobq_retry_queue(conn, opt[O_QUEUE], &n));
		if (json)
			printf("{\"queue\":\"%s\",\"retried\":%lld}\n", opt[O_QUEUE], (long long) n);
		else
			printf("retried %lld job(s)\n", (long long) n);
		return EXIT_OK;
	}
	want_args("retry", 1, 1);
	id = job_id(args[1]);
	connect_db();
	if (jobq_retry(conn, id) != JOBQ_OK)
		return job_refused(id, "only dead jobs can be retried (and not while "
						   "a live job holds its dedupe key)");
	if (json)
		printf("{\"id\":%lld,\"retried\":true}\n", (long long) id);
	else
		printf("job %lld retried\n", (long long) id);
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
	int64_t		id;

	if (opt[O_WHERE])
		return cmd_bulk_where("cancel", JOBQ_BULK_CANCEL);
	allow_only("cancel", allowed);
	want_args("cancel", 1, 1);
	id = job_id(args[1]);
	connect_db();
	if (jobq_cancel(conn, id) != JOBQ_OK)
		return job_refused(id, "only ready or dead jobs can be cancelled");
	if (json)
		printf("{\"id\":%lld,\"cancelled\":true}\n", (long long) id);
	else
		printf("job %lld cancelled\n", (long long) id);
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
	int			older;
	int64_t		n = 0;

	allow_only("purge", allowed);
	want_args("purge", 1, 1);
	older = duration(opt[O_OLDER_THAN], "--older-than", 0, JOBQ_RETENTION_MAX_S);
	connect_db();
	check(jobq_purge(conn, args[1], opt[O_STATE], older, &n));
	if (json)
		printf("{\"queue\":\"%s\",\"purged\":%lld}\n", args[1], (long long) n);
	else
		printf("purged %lld job(s)\n", (long long) n);
	return EXIT_OK;
}

/*
 * set_settings
 *		Put each --set SETTING=VALUE into qo: SETTING one of
 *		JOBQ_QUEUE_SETTINGS_020 (as named in SQL), VALUE read by its kind: a
 *		duration, a number, on/off, or the text of a choice (which
 *		libjobq checks).  Exit 2 for anything else, before connecting.
 */
static void
set_settings(JobqQueueOpts *qo)
{
#define SET_ROW(n, kind, lo, hi, dflt) \
	{#n, #kind, lo, hi, offsetof(JobqQueueOpts, SET_FIELD_##kind(n))},
#define SET_FIELD_SECONDS(n) n##_s
#define SET_FIELD_INTEGER(n) n
#define SET_FIELD_BOOLEAN(n) n
#define SET_FIELD_CHOICE(n) n
	static const struct
	{
		const char *name;
		const char *kind;
		long long	lo;
		long long	hi;
		size_t		offset;
	}			settings[] = {
		JOBQ_QUEUE_SETTINGS_020(SET_ROW)
	};
#undef SET_ROW
	char	   *base = (char *) qo;

	for (int s = 0; s < nsets; s++)
	{
		const char *eq = strchr(sets[s], '=');
		size_t		len = eq ? (size_t) (eq - sets[s]) : strlen(sets[s]);
		size_t		i;
		char		what[80];
		int			v;

		for (i = 0; i < sizeof(settings) / sizeof(settings[0]); i++)
			if (strlen(settings[i].name) == len && strncmp(settings[i].name, sets[s], len) == 0)
				break;
		if (i == sizeof(settings) / sizeof(settings[0]))
			usage_error("--set: no queue setting \"%s\" (the settings of 0.2.0, as named in SQL)",
						sets[s]);
		if (eq == NULL || eq[1] == '\0')
			usage_error("--set %s: give it a value (SETTING=VALUE)", sets[s]);
		snprintf(what, sizeof(what), "--set %s", settings[i].name);
		if (strcmp(settings[i].kind, "CHOICE") == 0)
		{
			const char *c = eq + 1;

			memcpy(base + settings[i].offset, &c, sizeof(c));
			continue;
		}
		if (strcmp(settings[i].kind, "SECONDS") == 0)
			v = duration(eq + 1, what, settings[i].lo, settings[i].hi);
		else if (strcmp(settings[i].kind, "BOOLEAN") == 0)
		{
			if (strcmp(eq + 1, "on") != 0 && strcmp(eq + 1, "off") != 0)
				usage_error("--set: a yes/no setting takes on or off, not \"%s\"", sets[s]);
			v = strcmp(eq + 1, "on") == 0;
		}
		else
			v = int_arg(eq + 1, what, -1, settings[i].lo, settings[i].hi);
		memcpy(base + settings[i].offset, &v, sizeof(v));
	}
}

/*
 * cmd_queue
 *		queue create|alter|drop|pause|resume NAME [settings].
 */
static int
cmd_queue(void)
{
	static const int allowed_settings[] = {O_LEASE, O_MAX_ATTEMPTS, O_BACKOFF_BASE,
		O_BACKOFF_CAP, O_COMPLETED_RETENTION, O_DEAD_RETENTION, O_NOTIFY, O_SET, 0};
	static const int allowed_drop[] = {O_FORCE, 0};
	static const int allowed_none[] = {0};
	const char *sub = nargs > 1 ? args[1] : NULL;
	const char *done;

	if (sub == NULL)
		usage_error("%s", "missing subcommand for \"queue\" (create, alter, drop, pause, resume)");
	if (strcmp(sub, "create") == 0 || strcmp(sub, "alter") == 0)
	{
		bool		create = sub[0] == 'c';
		JobqQueueOpts qo = JOBQ_QUEUE_OPTS_INIT;

		allow_only(create ? "queue create" : "queue alter", allowed_settings);
		if (nargs != 3)
			usage_error("\"queue %s\" takes one queue name", sub);
		qo.max_attempts = setting_arg(opt[O_MAX_ATTEMPTS], "max_attempts");
		if (opt[O_NOTIFY] && strcmp(opt[O_NOTIFY], "on") != 0 &&
			strcmp(opt[O_NOTIFY], "off") != 0)
			usage_error("--notify takes on or off, not \"%s\"", opt[O_NOTIFY]);
		qo.lease_s = setting_arg(opt[O_LEASE], "lease");
		qo.backoff_base_s = setting_arg(opt[O_BACKOFF_BASE], "backoff_base");
		qo.backoff_cap_s = setting_arg(opt[O_BACKOFF_CAP], "backoff_cap");
		qo.completed_retention_s = setting_arg(opt[O_COMPLETED_RETENTION], "completed_retention");
		qo.dead_retention_s = setting_arg(opt[O_DEAD_RETENTION], "dead_retention");
		if (opt[O_NOTIFY])
			qo.notify = strcmp(opt[O_NOTIFY], "on") == 0;
		set_settings(&qo);
		connect_db();
		/* fields left at -1 take the server's defaults (create) or stay (alter) */
		check(create ? jobq_create_queue(conn, args[2], &qo) :
			  jobq_alter_queue(conn, args[2], &qo));
		done = create ? "created" : "altered";
	}
	else if (strcmp(sub, "drop") == 0)
	{
		allow_only("queue drop", allowed_drop);
		if (nargs != 3)
			usage_error("%s", "\"queue drop\" takes one queue name");
		connect_db();
		check(jobq_drop_queue(conn, args[2], opt[O_FORCE] != NULL));
		done = "dropped";
	}
	else if (strcmp(sub, "pause") == 0 || strcmp(sub, "resume") == 0)
	{
		bool		pause = sub[0] == 'p';

		allow_only(pause ? "queue pause" : "queue resume", allowed_none);
		if (nargs != 3)
			usage_error("\"queue %s\" takes one queue name", sub);
		connect_db();
		check(pause ? jobq_pause(conn, args[2]) : jobq_resume(conn, args[2]));
		done = pause ? "paused" : "resumed";
	}
	else
	{
		usage_error("unknown queue subcommand \"%s\"", sub);
		return EXIT_USAGE;
	}
	if (json)
	{
		/* as json_build_object printed it; the name passed the allow-list */
		printf("{\"queue\" : ");
		print_json_string(args[2]);
		printf(", \"done\" : \"%s\"}\n", done);
	}
	else
		printf("queue %s %s\n", args[2], done);
	return EXIT_OK;
}

/*
 * print_settings_020
 *		The settings of 0.2.0 of row r of jobq_queues() as JSON members
 *		(",name":value; durations as name_s in seconds), those the server
 *		returned: none from a server on 0.1.0's SQL.
 */
static void
print_settings_020(JobqRows *rows, size_t r)
{
#define SETTING_KIND(n, kind, lo, hi, dflt) {#n, #kind},
	static const struct
	{
		const char *name;
		const char *kind;
	}			settings[] = {
		JOBQ_QUEUE_SETTINGS_020(SETTING_KIND)
	};
#undef SETTING_KIND

	for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++)
	{
		const char *v = jobq_rows_get(rows, r, settings[i].name);
		double		secs;

		if (v == NULL)
			continue;
		if (strcmp(settings[i].kind, "SECONDS") == 0 && interval_seconds(v, &secs))
		{
			printf(",\"%s_s\":", settings[i].name);
			print_json_number(secs);
			continue;
		}
		printf(",\"%s\":", settings[i].name);
		if (strcmp(settings[i].kind, "BOOLEAN") == 0)
			printf("%s", v[0] == 't' ? "true" : "false");
		else if (strcmp(settings[i].kind, "INTEGER") == 0)
			printf("%s", v);
		else
			print_json_string(v);
	}
}

static int
cmd_queues(void)
{
	static const int allowed[] = {0};
	static const char *const names[] = {"queue", "lease", "max_attempts", "backoff_base",
	"backoff_cap", "completed_retention", "dead_retention", "paused", "notify"};
	static const bool numeric[] = {false, false, true, false, false, false, false, false, false};
	static const char *const intervals[] = {"lease", "backoff_base", "backoff_cap",
	"completed_retention", "dead_retention"};
	JobqRows   *rows;
	size_t		n;

	allow_only("queues", allowed);
	want_args("queues", 0, 0);
	connect_db();
	rows = need(jobq_queues(conn));
	n = jobq_rows_count(rows);
	if (json)
	{
		printf("[");
		for (size_t r = 0; r < n; r++)
		{
			const char *paused = jobq_rows_get(rows, r, "paused");
			const char *notify = jobq_rows_get(rows, r, "notify");

			printf("%s{\"queue\":", r ? ", " : "");
			print_json_string(jobq_rows_get(rows, r, "queue"));
			for (size_t i = 0; i < sizeof(intervals) / sizeof(intervals[0]); i++)
			{
				const char *v = jobq_rows_get(rows, r, intervals[i]);
				double		secs;

				printf(",\"%s_s\":", intervals[i]);
				if (v == NULL)
					printf("null");
				else if (interval_seconds(v, &secs))
					print_json_number(secs);
				else
					print_json_string(v);
				if (i == 0)
					printf(",\"max_attempts\":%lld",
						   (long long) jobq_rows_get_int64(rows, r, "max_attempts"));
			}
			printf(",\"paused\":%s,\"notify\":%s,\"created_at\":",
				   paused && paused[0] == 't' ? "true" : "false",
				   notify && notify[0] == 't' ? "true" : "false");
			print_json_time(jobq_rows_get(rows, r, "created_at"));
			print_settings_020(rows, r);
			printf("}");
		}
		printf("]\n");
	}
	else
	{
		Table		t;

		table_init(&t, 9, names, numeric);
		for (size_t r = 0; r < n; r++)
		{
			const char *paused = jobq_rows_get(rows, r, "paused");
			const char *notify = jobq_rows_get(rows, r, "notify");
			const char *row[9];

			row[0] = jobq_rows_get(rows, r, "queue");
			row[1] = jobq_rows_get(rows, r, "lease");
			row[2] = jobq_rows_get(rows, r, "max_attempts");
			row[3] = jobq_rows_get(rows, r, "backoff_base");
			row[4] = jobq_rows_get(rows, r, "backoff_cap");
			row[5] = jobq_rows_get(rows, r, "completed_retention");
			row[6] = jobq_rows_get(rows, r, "dead_retention");
			row[7] = paused && paused[0] == 't' ? "yes" : "";
			row[8] = notify && notify[0] == 't' ? "on" : "off";
			table_add(&t, row);
		}
		print_table(&t);
		table_free(&t);
	}
	jobq_rows_free(rows);
	return EXIT_OK;
}

static int
cmd_sweep(void)
{
	static const int allowed[] = {0};
	static const char *const names[] = {"requeued", "dead", "purged"};
	static const bool numeric[] = {true, true, true};
	int64_t		c[3] = {0, 0, 0};

	allow_only("sweep", allowed);
	want_args("sweep", 0, 1);
	connect_db();
	check(jobq_sweep(conn, nargs > 1 ? args[1] : NULL, -1, &c[0], &c[1], &c[2]));
	if (json)
		printf("[{\"requeued\":%lld,\"dead\":%lld,\"purged\":%lld}]\n",
			   (long long) c[0], (long long) c[1], (long long) c[2]);
	else
	{
		Table		t;
		char		b[3][24];
		const char *row[3];

		for (int i = 0; i < 3; i++)
		{
			snprintf(b[i], sizeof(b[i]), "%lld", (long long) c[i]);
			row[i] = b[i];
		}
		table_init(&t, 3, names, numeric);
		table_add(&t, row);
		print_table(&t);
		table_free(&t);
	}
	return EXIT_OK;
}

/* ----------------------------------------------------------------------
 * For the commands in files of their own (cli.h)
 * ---------------------------------------------------------------------- */

const char *
cli_progname(void)
{
	return progname;
}

JobqConn *
cli_connect(void)
{
	connect_db();
	return conn;
}

void
cli_failed(void)
{
	failed();
	exit(EXIT_FAILED);			/* not reached */
}

void
cli_usage_error(const char *fmt, const char *arg)
{
	usage_error(fmt, arg);
	exit(EXIT_USAGE);			/* not reached */
}

/* cli_allow_only: allow_only with the options' long names */
void
cli_allow_only(const char *command, const char *const *options)
{
	int			allowed[O_COUNT];
	int			n = 0;

	for (const char *const *name = options; *name; name++)
		for (const struct option *lo = longopts; lo->name; lo++)
			if (strcmp(lo->name, *name) == 0 && n < O_COUNT - 1)
				allowed[n++] = lo->val;
	allowed[n] = 0;
	allow_only(command, allowed);
}

void
cli_want_args(const char *command, int min, int max)
{
	want_args(command, min, max);
}

/* cli_arg: positional argument i (0 is the command), NULL past the end */
const char *
cli_arg(int i)
{
	return i >= 0 && i < nargs ? args[i] : NULL;
}

/* cli_option: the value of the long option name, NULL when not given */
const char *
cli_option(const char *name)
{
	for (const struct option *lo = longopts; lo->name; lo++)
		if (strcmp(lo->name, name) == 0 && lo->val > 0 && lo->val < O_COUNT)
			return opt[lo->val];
	return NULL;
}

bool
cli_json(void)
{
	return json;
}

int64_t
cli_job_id(const char *s)
{
	return job_id(s);
}

/* cli_int_arg: int_arg (an integer option within the contract's bounds) */
int
cli_int_arg(const char *s, const char *what, int dflt, long long lo, long long hi)
{
	return int_arg(s, what, dflt, lo, hi);
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
		{"await", cmd_await},
		{"stats", cmd_stats},
		{"list", cmd_list},
		{"show", cmd_show},
		{"retry", cmd_retry},
		{"cancel", cmd_cancel},
		{"purge", cmd_purge},
		{"queue", cmd_queue},
		{"queues", cmd_queues},
		{"sweep", cmd_sweep},
		{"metrics", cmd_metrics},
		{"schedule", cmd_schedule},
		{"schedules", cmd_schedules},
		{"workers", cmd_workers},
		{"worker", cmd_worker},
		{"health", cmd_health},
		{"audit", cmd_audit},
		{"groups", cmd_groups},
		{"flow", cmd_flow},
	};
	int			c;

	if (argc > 0 && strrchr(argv[0], '/'))
		progname = strrchr(argv[0], '/') + 1;
	else if (argc > 0)
		progname = argv[0];
	jobq_set_progname(progname);

	/*
	 * Options may come before or after the command (GNU getopt permutes);
	 * "--" ends them, for a JSON argument that starts with "-".
	 */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "d:s:hV", longopts, NULL)) != -1)
	{
		switch (c)
		{
			case 'd':
				conninfo = optarg;
				break;
			case 's':
				if (!jobq_valid_schema_name(optarg))
					usage_error("invalid schema name \"%s\"", optarg);
				schema = optarg;
				break;
			case 'h':
				usage(stdout);
				finish(EXIT_OK);
				break;
			case 'V':
				printf("%s (jobq) %s\n", progname, jobq_version());
				finish(EXIT_OK);
				break;
			case O_JSON:
				json = true;
				opt[O_JSON] = "";
				break;
			case O_SET:
				if (nsets == MAX_SETS)
					usage_error("%s", "--set: given too many times");
				sets[nsets++] = optarg;
				opt[O_SET] = optarg;
				break;
			case '?':
			case ':':
				bad_option(argv[optind - 1], optopt);
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
