/*-------------------------------------------------------------------------
 *
 * metrics.c
 *	  jobq metrics: counters and latencies over time (jobq_metrics), or the
 *	  current state and last finished minute of every queue in the
 *	  Prometheus text exposition format (the view pg_stat_jobq).
 *
 *		jobq metrics [QUEUE] [--from=TIME] [--to=TIME] [--bucket=DURATION]
 *		jobq metrics [QUEUE] --prometheus
 *
 * The metric names, labels and types of --prometheus are documented in
 * doc/jobq.md ("Metrics"); t/027_cli_metrics.pl checks the exact output
 * against a server.  Every value is a gauge: the tool is run once per
 * scrape and keeps nothing between runs, so it reports what the server
 * reports (counts now, events and percentiles of the last finished minute),
 * not counters it would have to accumulate.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/cli/metrics.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The counters, in the order of jobq_metrics' counters array */
#define COUNTER_NAME(name) #name,
static const char *const counter_names[] = {JOBQ_METRIC_COUNTERS(COUNTER_NAME)};

#define NCOUNTERS ((int) (sizeof(counter_names) / sizeof(counter_names[0])))

static const char *const quantile_labels[] = {"0.5", "0.95", "0.99"};
static const char *const quantile_cols[] = {"p50", "p95", "p99"};

/*
 * parse_array
 *		The integers of an array text ("{1,2,3}") into out[0..n); missing
 *		elements are 0.  Returns how many were read.
 */
static int
parse_array(const char *text, long long *out, int n)
{
	int			i = 0;
	const char *p = text;

	memset(out, 0, sizeof(long long) * n);
	if (p == NULL || *p != '{')
		return 0;
	p++;
	while (*p && *p != '}' && i < n)
	{
		char	   *end;

		out[i++] = strtoll(p, &end, 10);
		p = *end == ',' ? end + 1 : end;
		if (end == p && *p != '}')
			break;
	}
	return i;
}

/*
 * format_number
 *		v in the shortest form that reads back exactly (as PostgreSQL and
 *		Prometheus' Go parser write floats), integers without exponent.
 */
static void
format_number(char *buf, size_t size, double v)
{
	if (v == floor(v) && fabs(v) < 1e15)
	{
		snprintf(buf, size, "%.0f", v);
		return;
	}
	for (int prec = 1; prec <= 17; prec++)
	{
		snprintf(buf, size, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

/* a latency for people: 2.9ms, 1.25s, 3.5min, 1.2h; NULL stays empty */
static void
format_latency(char *buf, size_t size, const char *interval)
{
	double		s;

	buf[0] = '\0';
	if (interval == NULL || !interval_seconds(interval, &s))
		return;
	if (s < 1)
		snprintf(buf, size, "%.1fms", s * 1000);
	else if (s < 60)
		snprintf(buf, size, "%.2fs", s);
	else if (s < 3600)
		snprintf(buf, size, "%.1fmin", s / 60);
	else
		snprintf(buf, size, "%.1fh", s / 3600);
}

/* a timestamptz cut to the minute: "2026-12-01 13:05" */
static void
format_bucket(char *buf, size_t size, const char *ts)
{
	snprintf(buf, size, "%.16s", ts ? ts : "");
}

static void
print_json_seconds(const char *interval)
{
	double		s;

	if (interval != NULL && interval_seconds(interval, &s))
		print_json_number(s);
	else if (interval != NULL)
		print_json_string(interval);
	else
		printf("null");
}

static void
print_json_array(const char *text, int n)
{
	long long	v[JOBQ_HIST_BUCKETS > NCOUNTERS ? JOBQ_HIST_BUCKETS : NCOUNTERS];

	parse_array(text, v, n);
	printf("[");
	for (int i = 0; i < n; i++)
		printf("%s%lld", i ? "," : "", v[i]);
	printf("]");
}

/* metrics_json: one object per queue and bucket */
static void
metrics_json(const JobqRows *rows)
{
	size_t		n = jobq_rows_count(rows);

	printf("[");
	for (size_t r = 0; r < n; r++)
	{
		long long	c[NCOUNTERS];
		const char *complete = jobq_rows_get(rows, r, "complete");

		parse_array(jobq_rows_get(rows, r, "counters"), c, NCOUNTERS);
		printf("%s{\"queue\":", r ? ", " : "");
		print_json_string(jobq_rows_get(rows, r, "queue"));
		printf(",\"bucket\":");
		print_json_time(jobq_rows_get(rows, r, "bucket"));
		for (int i = 0; i < NCOUNTERS; i++)
			printf(",\"%s\":%lld", counter_names[i], c[i]);
		for (int h = 0; h < 2; h++)
		{
			const char *kind = h == 0 ? "wait" : "run";
			char		col[16];

			for (int q = 0; q < 3; q++)
			{
				snprintf(col, sizeof(col), "%s_%s", kind, quantile_cols[q]);
				printf(",\"%s_s\":", col);
				print_json_seconds(jobq_rows_get(rows, r, col));
			}
			snprintf(col, sizeof(col), "%s_hist", kind);
			printf(",\"%s\":", col);
			print_json_array(jobq_rows_get(rows, r, col), JOBQ_HIST_BUCKETS);
		}
		printf(",\"oldest_ready_age_s\":");
		print_json_seconds(jobq_rows_get(rows, r, "oldest_ready_age"));
		printf(",\"complete\":%s}", complete && complete[0] == 't' ? "true" : "false");
	}
	printf("]\n");
}

/* metrics_table: one line per queue and bucket */
static void
metrics_table(const JobqRows *rows)
{
	enum
	{
		NCOLS = 2 + NCOUNTERS + 6 + 1
	};
	const char *names[NCOLS];
	bool		numeric[NCOLS];
	Table		t;
	int			k = 0;

	names[k] = "queue";
	numeric[k++] = false;
	names[k] = "bucket";
	numeric[k++] = false;
	for (int i = 0; i < NCOUNTERS; i++)
	{
		names[k] = counter_names[i];
		numeric[k++] = true;
	}
	for (int h = 0; h < 2; h++)
		for (int q = 0; q < 3; q++)
		{
			static const char *const lat[] = {"wait_p50", "wait_p95", "wait_p99",
			"run_p50", "run_p95", "run_p99"};

			names[k] = lat[h * 3 + q];
			numeric[k++] = true;
		}
	names[k] = "complete";
	numeric[k++] = false;

	table_init(&t, NCOLS, names, numeric);
	for (size_t r = 0; r < jobq_rows_count(rows); r++)
	{
		char		cells[NCOLS][32];
		const char *row[NCOLS];
		long long	c[NCOUNTERS];
		const char *complete = jobq_rows_get(rows, r, "complete");

		k = 0;
		snprintf(cells[k], sizeof(cells[k]), "%s", jobq_rows_get(rows, r, "queue"));
		k++;
		format_bucket(cells[k++], sizeof(cells[0]), jobq_rows_get(rows, r, "bucket"));
		parse_array(jobq_rows_get(rows, r, "counters"), c, NCOUNTERS);
		for (int i = 0; i < NCOUNTERS; i++, k++)
			snprintf(cells[k], sizeof(cells[k]), "%lld", c[i]);
		for (int h = 0; h < 2; h++)
			for (int q = 0; q < 3; q++, k++)
			{
				char		col[16];

				snprintf(col, sizeof(col), "%s_%s", h == 0 ? "wait" : "run", quantile_cols[q]);
				format_latency(cells[k], sizeof(cells[k]), jobq_rows_get(rows, r, col));
			}
		snprintf(cells[k], sizeof(cells[k]), "%s", complete && complete[0] == 't' ? "yes" : "no");
		for (int i = 0; i < NCOLS; i++)
			row[i] = cells[i];
		table_add(&t, row);
	}
	print_table(&t);
	table_free(&t);
}

/* ----------------------------------------------------------------------
 * Prometheus text exposition format (version 0.0.4)
 * ---------------------------------------------------------------------- */

/* a label value, escaped: backslash, double quote and newline */
static void
print_label_value(const char *s)
{
	putchar('"');
	for (; s && *s; s++)
	{
		if (*s == '\\')
			fputs("\\\\", stdout);
		else if (*s == '"')
			fputs("\\\"", stdout);
		else if (*s == '\n')
			fputs("\\n", stdout);
		else
			putchar(*s);
	}
	putchar('"');
}

static void
family(const char *name, const char *help)
{
	printf("# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

/* one sample: name{queue="q"[,extra="value"]} value */
static void
sample(const char *name, const char *queue, const char *extra, const char *extra_value,
	   double value)
{
	char		num[64];

	format_number(num, sizeof(num), value);
	printf("%s{queue=", name);
	print_label_value(queue);
	if (extra)
	{
		printf(",%s=", extra);
		print_label_value(extra_value);
	}
	printf("} %s\n", num);
}

static double
number(const JobqRows *rows, size_t r, const char *col)
{
	const char *v = jobq_rows_get(rows, r, col);

	return v ? strtod(v, NULL) : 0;
}

static void
prometheus(const JobqRows *rows)
{
	static const char *const states[] = {"ready", "delayed", "running", "completed", "dead",
	"cancelled"};
	size_t		n = jobq_rows_count(rows);

	family("jobq_jobs", "Jobs of the queue by state, now (ready excludes delayed).");
	for (size_t r = 0; r < n; r++)
		for (size_t s = 0; s < sizeof(states) / sizeof(states[0]); s++)
			sample("jobq_jobs", jobq_rows_get(rows, r, "queue"), "state", states[s],
				   number(rows, r, states[s]));

	family("jobq_jobs_expired", "Running jobs whose lease has passed and that no sweep has returned yet.");
	for (size_t r = 0; r < n; r++)
		sample("jobq_jobs_expired", jobq_rows_get(rows, r, "queue"), NULL, NULL,
			   number(rows, r, "expired"));

	family("jobq_queue_paused", "Whether the queue is paused (1) or not (0).");
	for (size_t r = 0; r < n; r++)
	{
		const char *p = jobq_rows_get(rows, r, "paused");

		sample("jobq_queue_paused", jobq_rows_get(rows, r, "queue"), NULL, NULL,
			   p && p[0] == 't' ? 1 : 0);
	}

	family("jobq_oldest_ready_age_seconds", "Age of the oldest ready job, 0 when none is ready.");
	for (size_t r = 0; r < n; r++)
	{
		const char *age = jobq_rows_get(rows, r, "oldest_ready_age");
		double		s = 0;

		if (age == NULL || !interval_seconds(age, &s))
			s = 0;
		sample("jobq_oldest_ready_age_seconds", jobq_rows_get(rows, r, "queue"), NULL, NULL, s);
	}

	family("jobq_last_minute_events", "Events of the last finished minute, by kind.");
	for (size_t r = 0; r < n; r++)
		for (int i = 0; i < NCOUNTERS; i++)
		{
			char		col[64];

			snprintf(col, sizeof(col), "minute_%s", counter_names[i]);
			sample("jobq_last_minute_events", jobq_rows_get(rows, r, "queue"), "event",
				   counter_names[i], number(rows, r, col));
		}

	for (int h = 0; h < 2; h++)
	{
		const char *name = h == 0 ? "jobq_last_minute_wait_seconds" : "jobq_last_minute_run_seconds";

		family(name, h == 0 ?
			   "Wait from ready to first claim in the last finished minute, by quantile; none without samples." :
			   "Run time from claim to finish in the last finished minute, by quantile; none without samples.");
		for (size_t r = 0; r < n; r++)
			for (int q = 0; q < 3; q++)
			{
				char		col[32];
				const char *v;
				double		s;

				snprintf(col, sizeof(col), "minute_%s_%s", h == 0 ? "wait" : "run", quantile_cols[q]);
				v = jobq_rows_get(rows, r, col);
				if (v != NULL && interval_seconds(v, &s))
					sample(name, jobq_rows_get(rows, r, "queue"), "quantile", quantile_labels[q], s);
			}
	}

	family("jobq_last_minute_complete", "Whether the last finished minute's figures are complete (1) or not (0).");
	for (size_t r = 0; r < n; r++)
	{
		const char *c = jobq_rows_get(rows, r, "minute_complete");

		sample("jobq_last_minute_complete", jobq_rows_get(rows, r, "queue"), NULL, NULL,
			   c && c[0] == 't' ? 1 : 0);
	}
}

/*
 * cmd_metrics
 *		metrics [QUEUE] [--from T] [--to T] [--bucket D] | --prometheus:
 *		1 when the named queue does not exist.
 */
int
cmd_metrics(void)
{
	static const char *const allowed[] = {"from", "to", "bucket", "prometheus", NULL};
	const char *queue;
	const char *bucket_opt = cli_option("bucket");
	char		bucket[48];
	JobqConn   *conn;
	JobqRows   *rows;

	cli_allow_only("metrics", allowed);
	cli_want_args("metrics", 0, 1);
	queue = cli_arg(1);
	if (cli_option("prometheus"))
	{
		if (cli_json())
			cli_usage_error("%s", "--prometheus and --json exclude each other");
		if (cli_option("from") || cli_option("to") || bucket_opt)
			cli_usage_error("%s", "--prometheus reports the last finished minute: no --from, --to or --bucket");
	}
	if (bucket_opt)
	{
		double		secs;

		if (jobq_parse_duration(bucket_opt, 0, &secs) != 0 || secs < 60 || secs != floor(secs) ||
			fmod(secs, 60) != 0 || secs > 3650.0 * 86400)
			cli_usage_error("invalid --bucket \"%s\" (whole minutes, 1min to 3650d)", bucket_opt);
		snprintf(bucket, sizeof(bucket), "%.0f seconds", secs);
	}

	conn = cli_connect();
	if (cli_option("prometheus"))
	{
		rows = jobq_stat_jobq(conn, queue);
		if (rows == NULL)
			cli_failed();
		if (queue && jobq_rows_count(rows) == 0)
		{
			jobq_rows_free(rows);
			fprintf(stderr, "%s: no queue \"%s\"\n", cli_progname(), queue);
			return EXIT_FAILED;
		}
		prometheus(rows);
		jobq_rows_free(rows);
		return EXIT_OK;
	}

	rows = jobq_metrics(conn, queue, cli_option("from"), cli_option("to"),
						bucket_opt ? bucket : NULL);
	if (rows == NULL && jobq_status(conn) == JOBQ_ERR_NOT_FOUND)
	{
		fprintf(stderr, "%s: no queue \"%s\"\n", cli_progname(), queue ? queue : "");
		return EXIT_FAILED;
	}
	if (rows == NULL)
		cli_failed();
	if (cli_json())
		metrics_json(rows);
	else
		metrics_table(rows);
	jobq_rows_free(rows);
	return EXIT_OK;
}
