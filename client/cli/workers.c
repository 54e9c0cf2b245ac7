/*-------------------------------------------------------------------------
 *
 * workers.c
 *	  jobq workers: the worker registry as a table or JSON; jobq worker
 *	  quiet|stop|resume TARGET: steer workers (doc/jobq.md).
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/cli/workers.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *const no_options[] = {NULL};

/*
 * print_json_array
 *		A PostgreSQL array's text form of simple elements (queue names, job
 *		ids: never quoted by the server) as a JSON array, of strings or of
 *		numbers.
 */
static void
print_json_array(const char *text, bool numbers)
{
	const char *p = text;
	bool		first = true;

	printf("[");
	if (p != NULL && *p == '{')
		p++;
	while (p != NULL && *p && *p != '}')
	{
		size_t		n = strcspn(p, ",}");
		char	   *elem = jobq_xmalloc(n + 1);

		memcpy(elem, p, n);
		elem[n] = '\0';
		printf("%s", first ? "" : ",");
		if (numbers)
			printf("%s", elem);
		else
			print_json_string(elem);
		free(elem);
		first = false;
		p += n;
		if (*p == ',')
			p++;
	}
	printf("]");
}

/* an interval column in seconds, as a JSON number (or null) */
static void
print_json_seconds(const char *interval)
{
	double		secs;

	if (interval != NULL && interval_seconds(interval, &secs))
		print_json_number(secs);
	else
		printf("null");
}

/* the heartbeat age for the table: whole seconds ("4s") */
static void
age_text(const char *interval, char *buf, size_t size)
{
	double		secs;

	if (interval != NULL && interval_seconds(interval, &secs))
		snprintf(buf, size, "%.0fs", secs);
	else
		snprintf(buf, size, "%s", interval ? interval : "");
}

/*
 * print_consumers_json
 *		jobq_queue_consumers() as a JSON array: per queue its backlog and
 *		who is there to claim it.
 */
static void
print_consumers_json(const JobqRows *rows)
{
	static const char *const int_cols[] = {"ready", "running", "workers", "claiming", "slots"};
	size_t		n = jobq_rows_count(rows);

	printf("[");
	for (size_t r = 0; r < n; r++)
	{
		const char *paused = jobq_rows_get(rows, r, "paused");
		const char *unserved = jobq_rows_get(rows, r, "unserved");

		printf("%s{\"queue\":", r ? ", " : "");
		print_json_string(jobq_rows_get(rows, r, "queue"));
		printf(",\"paused\":%s", paused && paused[0] == 't' ? "true" : "false");
		for (size_t i = 0; i < sizeof(int_cols) / sizeof(int_cols[0]); i++)
		{
			const char *v = jobq_rows_get(rows, r, int_cols[i]);

			printf(",\"%s\":%s", int_cols[i], v ? v : "null");
		}
		printf(",\"unserved\":%s}", unserved && unserved[0] == 't' ? "true" : "false");
	}
	printf("]");
}

/*
 * print_unserved
 *		Below the table: each queue with jobs due, not paused, and no live
 *		registered worker claiming from it (bull-board's "no worker").
 */
static void
print_unserved(const JobqRows *rows)
{
	size_t		n = jobq_rows_count(rows);
	bool		first = true;

	for (size_t r = 0; r < n; r++)
	{
		const char *unserved = jobq_rows_get(rows, r, "unserved");
		const char *workers = jobq_rows_get(rows, r, "workers");

		if (unserved == NULL || unserved[0] != 't')
			continue;
		printf("%sbacklog with no live worker: %s, %s job(s) due, not paused", first ? "\n" : "",
			   jobq_rows_get(rows, r, "queue"), jobq_rows_get(rows, r, "ready"));
		if (workers != NULL && atoi(workers) > 0)
			printf(" (%s live worker(s) name it, all quiet or stopping)", workers);
		printf("\n");
		first = false;
	}
}

/*
 * cmd_workers
 *		jobq workers [--json]: every registration, its state, busy slots,
 *		running jobs and heartbeat age; then the queues with jobs due that
 *		no live worker claims from.
 */
int
cmd_workers(void)
{
	static const char *const names[] = {"worker_id", "name", "host", "pid", "state", "busy",
	"slots", "queues", "running", "heartbeat", "alive"};
	static const bool numeric[] = {false, false, false, true, false, true, true, false, false,
	true, false};
	JobqRows   *rows;
	JobqRows   *consumers;
	size_t		n;

	cli_allow_only("workers", no_options);
	cli_want_args("workers", 0, 0);
	rows = jobq_workers(cli_connect());
	if (rows == NULL)
		cli_failed();
	consumers = jobq_queue_consumers(cli_connect());
	if (consumers == NULL)
		cli_failed();
	n = jobq_rows_count(rows);
	if (cli_json())
	{
		static const char *const text_cols[] = {"name", "host", "version", "state"};
		static const char *const int_cols[] = {"pid", "slots", "busy"};

		printf("{\"workers\":[");
		for (size_t r = 0; r < n; r++)
		{
			const char *alive = jobq_rows_get(rows, r, "alive");
			const char *metadata = jobq_rows_get(rows, r, "metadata");

			printf("%s{\"worker_id\":", r ? ", " : "");
			print_json_string(jobq_rows_get(rows, r, "worker_id"));
			for (size_t i = 0; i < sizeof(text_cols) / sizeof(text_cols[0]); i++)
			{
				printf(",\"%s\":", text_cols[i]);
				print_json_string(jobq_rows_get(rows, r, text_cols[i]));
			}
			for (size_t i = 0; i < sizeof(int_cols) / sizeof(int_cols[0]); i++)
			{
				const char *v = jobq_rows_get(rows, r, int_cols[i]);

				printf(",\"%s\":%s", int_cols[i], v ? v : "null");
			}
			printf(",\"queues\":");
			print_json_array(jobq_rows_get(rows, r, "queues"), false);
			printf(",\"running\":");
			print_json_array(jobq_rows_get(rows, r, "running"), true);
			printf(",\"started_at\":");
			print_json_time(jobq_rows_get(rows, r, "started_at"));
			printf(",\"heartbeat_at\":");
			print_json_time(jobq_rows_get(rows, r, "heartbeat_at"));
			printf(",\"heartbeat_age_s\":");
			print_json_seconds(jobq_rows_get(rows, r, "heartbeat_age"));
			printf(",\"dead_after_s\":");
			print_json_seconds(jobq_rows_get(rows, r, "dead_after"));
			printf(",\"alive\":%s,\"metadata\":%s}",
				   alive && alive[0] == 't' ? "true" : "false", metadata ? metadata : "null");
		}
		printf("],\"queues\":");
		print_consumers_json(consumers);
		printf("}\n");
	}
	else
	{
		Table		t;

		table_init(&t, 11, names, numeric);
		for (size_t r = 0; r < n; r++)
		{
			const char *alive = jobq_rows_get(rows, r, "alive");
			const char *queues = jobq_rows_get(rows, r, "queues");
			const char *running = jobq_rows_get(rows, r, "running");
			char		q[256],
						run[256],
						age[64];
			const char *row[11];

			/* {a,b} -> a,b */
			snprintf(q, sizeof(q), "%.*s", queues ? (int) strlen(queues) - 2 : 0,
					 queues ? queues + 1 : "");
			snprintf(run, sizeof(run), "%.*s", running ? (int) strlen(running) - 2 : 0,
					 running ? running + 1 : "");
			age_text(jobq_rows_get(rows, r, "heartbeat_age"), age, sizeof(age));
			row[0] = jobq_rows_get(rows, r, "worker_id");
			row[1] = jobq_rows_get(rows, r, "name");
			row[2] = jobq_rows_get(rows, r, "host");
			row[3] = jobq_rows_get(rows, r, "pid");
			row[4] = jobq_rows_get(rows, r, "state");
			row[5] = jobq_rows_get(rows, r, "busy");
			row[6] = jobq_rows_get(rows, r, "slots");
			row[7] = q;
			row[8] = run;
			row[9] = age;
			row[10] = alive && alive[0] == 't' ? "yes" : "no";
			table_add(&t, row);
		}
		print_table(&t);
		table_free(&t);
		print_unserved(consumers);
	}
	jobq_rows_free(consumers);
	jobq_rows_free(rows);
	return EXIT_OK;
}

/*
 * cmd_worker
 *		jobq worker quiet|stop|resume TARGET: set the state asked of the
 *		workers TARGET matches (a worker id, a LIKE pattern of name or host,
 *		or "*").  Prints how many are now in that state; none is exit 1.
 */
int
cmd_worker(void)
{
	const char *signal = cli_arg(1);
	const char *target = cli_arg(2);
	const char *state;
	int			n;

	cli_allow_only("worker", no_options);
	if (signal == NULL)
		cli_usage_error("%s", "missing argument for \"worker\": quiet, stop or resume");
	if (strcmp(signal, "quiet") == 0)
		state = "quiet";
	else if (strcmp(signal, "stop") == 0)
		state = "stopping";
	else if (strcmp(signal, "resume") == 0)
		state = "running";
	else
		cli_usage_error("unknown worker command \"%s\": quiet, stop or resume", signal);
	cli_want_args("worker", 2, 2);
	if (target[0] == '\0' || strlen(target) > JOBQ_WORKER_NAME_MAX)
		cli_usage_error("invalid worker target \"%s\": a worker id, a name or host "
						"pattern, or *", target);
	n = jobq_worker_signal(cli_connect(), target, signal);
	if (n < 0)
		cli_failed();
	if (cli_json())
	{
		printf("[{\"signal\":");
		print_json_string(signal);
		printf(",\"target\":");
		print_json_string(target);
		printf(",\"workers\":%d}]\n", n);
	}
	else
		printf("%d worker(s) %s\n", n, state);
	if (n == 0)
	{
		fprintf(stderr, "%s: no worker matches \"%s\" (or none can be %s)\n", cli_progname(),
				target, state);
		return EXIT_FAILED;
	}
	return EXIT_OK;
}
