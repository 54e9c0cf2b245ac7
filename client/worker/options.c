/*-------------------------------------------------------------------------
 *
 * options.c
 *	  jobq-worker's command line: the usage text and the options, parsed
 *	  into the Worker's option fields.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/worker/options.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"

static void
usage(FILE *f, const char *progname, bool callback)
{
	fprintf(f,
			"%s runs a handler for each job claimed from jobq queues.\n\n"
			"Usage:\n"
			"  %s [OPTION]... -q QUEUE%s\n\n"
			"Options:\n"
			"  -d, --dbname=CONNINFO      database connection string (default: PG* environment)\n"
			"  -q, --queue=QUEUE          queue to claim from (repeatable, at most "
			JOBQ_STR(JOBQ_CLAIM_QUEUES_MAX) ")\n"
			"  -c, --concurrency=N        handlers running in parallel (default 1)\n"
			"  -b, --batch=N              jobs claimed per call at most, 1.." JOBQ_STR(JOBQ_CLAIM_MAX)
			" (default:\n"
			"                             --concurrency); above it, extra claimed jobs wait\n"
			"  -l, --lease=DURATION       lease per claim (default: the queue's lease)\n"
			"      --heartbeat=DURATION   extend the lease this often while a job runs\n"
			"                             (default: a third of the lease; 0 = never)\n"
			"      --persistent[=N]       N long-lived handler processes (default:\n"
			"                             --concurrency) that take jobs as JSON lines on\n"
			"                             stdin and answer on stdout (see jobq-worker(1))\n"
			"      --prefetch=N|auto      claim up to N jobs ahead, to wait while the\n"
			"                             handlers are busy (default auto: --batch with\n"
			"                             --persistent while jobs take under 25ms, else 0)\n"
			"  -t, --timeout=DURATION     stop a handler running longer (default: none)\n"
			"      --kill-after=DURATION  SIGKILL a handler this long after SIGTERM (default 5s)\n"
			"      --once                 run one job, then exit\n"
			"      --max=N                run N jobs, then exit\n"
			"      --burst                run until the queues are empty, then exit\n"
			"      --poll-interval=DURATION  claim at least this often (default 5s)\n"
			"      --sweep-interval=DURATION call jobq_sweep this often (default 30s; 0 = never)\n"
			"      --cron-interval=DURATION  fire due schedules (jobq_cron_tick) this often\n"
			"                             (default 1s; 0 = never)\n"
			"      --wait-mode=MODE       how an idle worker waits: auto (default: blocking\n"
			"                             claims when the server has jobq preloaded, else\n"
			"                             LISTEN), blocking, listen or poll\n"
			"      --no-listen            poll only, no LISTEN (= --wait-mode=poll)\n"
			"      --schema=SCHEMA        schema of the jobq functions (default: public)\n"
			"      --db-timeout=DURATION  a call with no answer this long means the\n"
			"                             connection is dead: reconnect (default 30s)\n"
			"      --grace=DURATION       on SIGTERM, wait this long for handlers (default 30s)\n"
			"      --name=NAME            name in the worker registry (default: HOST:PID)\n"
			"      --worker-timeout=DURATION  the registry forgets us this long after our\n"
			"                             last heartbeat (default: jobq.worker_timeout)\n"
			"      --log-format=FORMAT    text or json (default text)\n"
			"      --log-file=FILE        log to FILE instead of stderr (SIGHUP reopens it)\n"
			"  -h, --help                 show this help, then exit\n"
			"  -V, --version              show the version, then exit\n\n"
			JOBQ_DURATION_HELP "\n"
			"Handler: the job's JSON on stdin; JOBQ_JOB_ID, JOBQ_QUEUE, JOBQ_ATTEMPT and\n"
			"JOBQ_MAX_ATTEMPTS in the environment (and JOBQ_CHECKPOINT_FILE, a file with\n"
			"an earlier attempt's checkpoint, when there is one).  Exit 0: done, stdout is\n"
			"the result; 75: retry later; 65: failed for good (dead); 69: rate limited\n"
			"(back after the seconds of a stdout line JOBQ_RETRY_AFTER=N, else 60, the\n"
			"attempt not counted); other or a signal: failed, retried while attempts are\n"
			"left, with the end of stderr as the error.\n\n"
			"Signals: SIGTERM finishes running jobs (within --grace) and exits 0; a second\n"
			"SIGTERM or SIGINT stops at once; SIGHUP reopens the log and the connection.\n"
			"jobq worker quiet|stop|resume (the worker registry) quiets, stops or resumes.\n",
			progname, progname, callback ? "" : " -- HANDLER [ARG]...");
}

/*
 * parse_num
 *		A number in [min, max] from an option argument (a count).
 */
static bool
parse_num(const char *arg, double min, double max, double *out)
{
	char	   *end;
	double		v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end != '\0' || !isfinite(v) || v < min || v > max)
		return false;
	*out = v;
	return true;
}

/*
 * count_opt
 *		A whole number in [min, max] from the argument of option opt, or
 *		false after saying on stderr what is wrong.
 */
static bool
count_opt(const char *progname, const char *opt, const char *arg,
		  double min, double max, double *out)
{
	if (!parse_num(arg, min, max, out) || *out != floor(*out))
	{
		fprintf(stderr, "%s: %s must be a whole number between %.0f and %.0f, not \"%s\"\n",
				progname, opt, min, max, arg);
		return false;
	}
	return true;
}

/*
 * duration_opt
 *		A duration in [min, max] seconds from the argument of option opt
 *		(JOBQ_DURATION_HELP), or false after saying on stderr what is wrong.
 */
static bool
duration_opt(const char *progname, const char *opt, const char *arg,
			 double min, double max, double *out)
{
	char		lo[32],
				hi[32];
	double		v;

	if (jobq_parse_duration(arg, 0, &v) != 0)
	{
		fprintf(stderr, "%s: invalid duration \"%s\" for %s\n%s", progname, arg,
				opt, JOBQ_DURATION_HELP);
		return false;
	}
	if (v < min || v > max)
	{
		jobq_format_duration(lo, sizeof(lo), min);
		jobq_format_duration(hi, sizeof(hi), max);
		fprintf(stderr, "%s: %s must be between %s and %s, not \"%s\"\n",
				progname, opt, lo, hi, arg);
		return false;
	}
	*out = v;
	return true;
}

/*
 * worker_options
 *		Set the options of w (whose callback is set already) from the
 *		command line.  Returns -1 when the worker should run; otherwise the
 *		exit status: 0 after --help or --version, 2 after a usage error
 *		(explained on stderr).
 */
int
worker_options(Worker *w, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"dbname", required_argument, NULL, 'd'},
		{"queue", required_argument, NULL, 'q'},
		{"concurrency", required_argument, NULL, 'c'},
		{"batch", required_argument, NULL, 'b'},
		{"lease", required_argument, NULL, 'l'},
		{"heartbeat", required_argument, NULL, 1},
		{"timeout", required_argument, NULL, 't'},
		{"kill-after", required_argument, NULL, 2},
		{"once", no_argument, NULL, 3},
		{"max", required_argument, NULL, 4},
		{"burst", no_argument, NULL, 5},
		{"poll-interval", required_argument, NULL, 6},
		{"sweep-interval", required_argument, NULL, 7},
		{"cron-interval", required_argument, NULL, 15},
		{"no-listen", no_argument, NULL, 8},
		{"wait-mode", required_argument, NULL, 12},
		{"schema", required_argument, NULL, 13},
		{"db-timeout", required_argument, NULL, 14},
		{"persistent", optional_argument, NULL, 40},
		{"prefetch", required_argument, NULL, 41},
		{"grace", required_argument, NULL, 9},
		{"name", required_argument, NULL, 50},
		{"worker-timeout", required_argument, NULL, 51},
		{"log-format", required_argument, NULL, 10},
		{"log-file", required_argument, NULL, 11},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0}
	};
	const char *progname = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	double		v;
	int			c;

	w->queues = jobq_xmalloc(sizeof(char *) * (argc + 1));
	w->concurrency = 1;
	w->batch = 0;				/* = --concurrency unless given */
	w->prefetch = -1;			/* auto */
	w->heartbeat = -1;
	w->kill_after = 5;
	w->wait_mode = WAIT_AUTO;
	w->schema = "public";
	w->poll_interval = 5;
	w->sweep_interval = 30;
	w->cron_interval = 1;
	w->db_timeout = 30;
	w->grace = 30;

	/* "+": the first non-option starts the handler's command line */
	while ((c = getopt_long(argc, argv, "+d:q:c:b:l:t:hV", longopts, NULL)) != -1)
	{
		switch (c)
		{
			case 'd':
				w->conninfo = optarg;
				break;
			case 'q':
				if (strlen(optarg) > JOBQ_QUEUE_NAME_MAX || !jobq_valid_queue_name(optarg))
				{
					fprintf(stderr, "%s: invalid queue name \"%s\" for --queue: at most %d bytes "
							"of lowercase letters and digits, with single '_' or '-' between "
							"them\n", progname, optarg, JOBQ_QUEUE_NAME_MAX);
					goto try_help;
				}
				w->queues[w->nqueues++] = optarg;
				break;
			case 'c':
				if (!count_opt(progname, "--concurrency", optarg, 1, 1000, &v))
					goto try_help;
				w->concurrency = (int) v;
				break;
			case 'b':
				if (!count_opt(progname, "--batch", optarg, 1, JOBQ_CLAIM_MAX, &v))
					goto try_help;
				w->batch = (int) v;
				break;
			case 'l':
				if (!duration_opt(progname, "--lease", optarg, JOBQ_LEASE_MIN_S,
								  JOBQ_LEASE_MAX_S, &w->lease))
					goto try_help;
				break;
			case 1:
				if (!duration_opt(progname, "--heartbeat", optarg, 0, JOBQ_LEASE_MAX_S,
								  &w->heartbeat))
					goto try_help;
				break;
			case 't':
				if (!duration_opt(progname, "--timeout", optarg, 0, 1e9, &w->timeout))
					goto try_help;
				break;
			case 2:
				if (!duration_opt(progname, "--kill-after", optarg, 0, 3600, &w->kill_after))
					goto try_help;
				break;
			case 3:
				w->max_jobs = 1;
				break;
			case 4:
				if (!count_opt(progname, "--max", optarg, 1, 1e15, &v))
					goto try_help;
				w->max_jobs = (long) v;
				break;
			case 5:
				w->burst = true;
				break;
			case 6:
				if (!duration_opt(progname, "--poll-interval", optarg, 0.01, 86400,
								  &w->poll_interval))
					goto try_help;
				break;
			case 7:
				if (!duration_opt(progname, "--sweep-interval", optarg, 0, 86400,
								  &w->sweep_interval))
					goto try_help;
				break;
			case 8:
				w->wait_mode = WAIT_POLL;
				break;
			case 12:
				if (strcmp(optarg, "auto") == 0)
					w->wait_mode = WAIT_AUTO;
				else if (strcmp(optarg, "blocking") == 0)
					w->wait_mode = WAIT_BLOCKING;
				else if (strcmp(optarg, "listen") == 0)
					w->wait_mode = WAIT_LISTEN;
				else if (strcmp(optarg, "poll") == 0)
					w->wait_mode = WAIT_POLL;
				else
					goto bad_value;
				break;
			case 13:
				if (!jobq_valid_schema_name(optarg))
					goto bad_value;
				w->schema = optarg;
				break;
			case 14:
				if (!duration_opt(progname, "--db-timeout", optarg, 1, 3600, &w->db_timeout))
					goto try_help;
				break;
			case 40:
				if (optarg == NULL)
					w->persistent = -1;	/* = --concurrency, below */
				else if (!count_opt(progname, "--persistent", optarg, 1,
									JOBQ_PERSISTENT_PROCS_MAX, &v))
					goto try_help;
				else
					w->persistent = (int) v;
				break;
			case 41:
				if (strcmp(optarg, "auto") == 0)
					w->prefetch = -1;
				else if (!count_opt(progname, "--prefetch", optarg, 0, JOBQ_CLAIM_MAX, &v))
					goto try_help;
				else
					w->prefetch = (int) v;
				break;
			case 15:
				if (!duration_opt(progname, "--cron-interval", optarg, 0, 86400,
								  &w->cron_interval))
					goto try_help;
				break;
			case 9:
				if (!duration_opt(progname, "--grace", optarg, 0, 86400, &w->grace))
					goto try_help;
				break;
			case 50:
				if (optarg[0] == '\0' || strlen(optarg) > JOBQ_WORKER_NAME_MAX)
				{
					fprintf(stderr, "%s: --name must be 1 to %d bytes long\n", progname,
							JOBQ_WORKER_NAME_MAX);
					goto try_help;
				}
				w->registry_name = optarg;
				break;
			case 51:
				if (!duration_opt(progname, "--worker-timeout", optarg, JOBQ_WORKER_TIMEOUT_MIN_S,
								  JOBQ_WORKER_TIMEOUT_MAX_S, &w->worker_timeout))
					goto try_help;
				break;
			case 10:
				if (strcmp(optarg, "json") == 0)
					w->log_json = true;
				else if (strcmp(optarg, "text") == 0)
					w->log_json = false;
				else
					goto bad_value;
				break;
			case 11:
				w->log_file = optarg;
				break;
			case 'h':
				usage(stdout, progname, w->callback != NULL);
				free(w->queues);
				return 0;
			case 'V':
				printf("%s (jobq) %s\n", progname, jobq_version());
				free(w->queues);
				return 0;
			default:
				goto try_help;
		}
	}
	if (w->nqueues > JOBQ_CLAIM_QUEUES_MAX)
	{
		fprintf(stderr, "%s: %d queues given; a claim names at most %d\n", progname,
				w->nqueues, JOBQ_CLAIM_QUEUES_MAX);
		goto try_help;
	}
	if (w->nqueues == 0)
	{
		fprintf(stderr, "%s: no queue given (-q QUEUE)\n", progname);
		goto try_help;
	}
	if (w->callback == NULL && optind >= argc)
	{
		fprintf(stderr, "%s: no handler given (-- HANDLER [ARG]...)\n", progname);
		goto try_help;
	}
	if (w->callback != NULL && optind < argc)
	{
		fprintf(stderr, "%s: this worker has a built-in handler; unexpected \"%s\"\n",
				progname, argv[optind]);
		goto try_help;
	}
	if (w->lease > 0 && w->heartbeat > 0 && w->heartbeat >= w->lease)
	{
		fprintf(stderr, "%s: --heartbeat must be shorter than --lease\n", progname);
		goto try_help;
	}
	if (w->persistent != 0 && w->callback != NULL)
	{
		fprintf(stderr, "%s: --persistent needs a handler program; this worker has a "
				"built-in handler\n", progname);
		goto try_help;
	}
	if (w->persistent < 0)
		w->persistent = w->concurrency;
	w->handler_argv = argv + optind;
	if (w->callback == NULL)
	{
		const char *why;

		if (!handler_executable(w->handler_argv[0], &why))
		{
			fprintf(stderr, "%s: handler \"%s\" cannot be executed: %s\n",
					progname, w->handler_argv[0], why);
			free(w->queues);
			return 2;
		}
	}
	if (w->batch == 0)
		w->batch = w->concurrency;
	return -1;

bad_value:
	for (const struct option *o = longopts; o->name; o++)
		if (o->val == c)
			fprintf(stderr, "%s: invalid value \"%s\" for --%s\n", progname, optarg, o->name);
try_help:
	fprintf(stderr, "Try \"%s --help\" for more information.\n", progname);
	free(w->queues);
	return 2;
}
