/*-------------------------------------------------------------------------
 *
 * await.c
 *	  jobq await ID [--timeout=DURATION], and the wait of
 *	  jobq enqueue ... --wait=DURATION: one job's outcome, printed, with an
 *	  exit code per outcome (cli.h, doc/jobq.md "EXIT STATUS").
 *
 * A completed job prints its result (JSON, "null" when it returned none)
 * on stdout, so that `jobq enqueue q '{}' --wait 30s | jq .` works; every
 * other outcome says so on stderr and exits with its own code.  --json
 * prints the whole outcome as one object instead, whatever it is.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/cli/await.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define AWAIT_DEFAULT_TIMEOUT "30s"

/*
 * cli_await_timeout_ms
 *		The wait of option what (--wait, --timeout) in milliseconds, 0 ..
 *		JOBQ_AWAIT_MAX_S; a usage error otherwise.
 */
int
cli_await_timeout_ms(const char *s, const char *what)
{
	double		v;
	char		msg[256];

	if (jobq_parse_duration(s, 0, &v) != 0)
	{
		fputs(JOBQ_DURATION_HELP, stderr);
		snprintf(msg, sizeof(msg), "invalid duration \"%.64s\" for %s", s, what);
		cli_usage_error("%s", msg);
	}
	if (v < 0 || v > JOBQ_AWAIT_MAX_S)
	{
		snprintf(msg, sizeof(msg), "%s must be between 0 and 1h, not \"%.64s\"", what, s);
		cli_usage_error("%s", msg);
	}
	return (int) lround(v * 1000);
}

/* exit_code: the exit status of an outcome */
static int
exit_code(const JobqOutcome *o)
{
	if (o->purged)
		return EXIT_PURGED;
	if (o->timed_out)
		return EXIT_TIMED_OUT;
	switch (o->state)
	{
		case JOBQ_STATE_COMPLETED:
			return EXIT_OK;
		case JOBQ_STATE_DEAD:
			return EXIT_DEAD;
		case JOBQ_STATE_CANCELLED:
			return EXIT_CANCELLED;
		default:
			return EXIT_TIMED_OUT;
	}
}

static void
print_json(int64_t id, const JobqOutcome *o)
{
	printf("{\"id\":%lld,\"state\":", (long long) id);
	print_json_string(o->purged ? "purged_or_never" : jobq_state_name(o->state));
	printf(",\"result\":%s,\"last_error\":", o->result ? o->result : "null");
	print_json_string(o->last_error);
	if (o->attempt >= 0)
		printf(",\"attempt\":%d", o->attempt);
	else
		printf(",\"attempt\":null");
	printf(",\"finished_at\":");
	print_json_time(o->finished_at);
	printf(",\"timed_out\":%s}\n", o->timed_out ? "true" : "false");
}

static void
print_text(int64_t id, const JobqOutcome *o, int timeout_ms)
{
	const char *p = cli_progname();

	if (o->purged)
		fprintf(stderr, "%s: job %lld is in no table: purged by retention, or its enqueue "
				"was rolled back or is not committed yet\n", p, (long long) id);
	else if (o->timed_out)
		fprintf(stderr, "%s: job %lld is still %s after %.3gs%s%s\n", p, (long long) id,
				jobq_state_name(o->state), timeout_ms / 1000.0,
				o->last_error ? "; last error: " : "", o->last_error ? o->last_error : "");
	else if (o->state == JOBQ_STATE_COMPLETED)
		printf("%s\n", o->result ? o->result : "null");
	else if (o->state == JOBQ_STATE_DEAD)
		fprintf(stderr, "%s: job %lld is dead: %s\n", p, (long long) id,
				o->last_error ? o->last_error : "(no error text)");
	else
		fprintf(stderr, "%s: job %lld was cancelled\n", p, (long long) id);
}

/*
 * cli_await_print
 *		Await job id for timeout_ms, print the outcome, return its exit code
 *		(a failed call does not return: cli_failed).
 */
int
cli_await_print(JobqConn *conn, int64_t id, int timeout_ms, bool json)
{
	JobqOutcome o = JOBQ_OUTCOME_INIT;
	int			code;

	if (jobq_await(conn, id, timeout_ms, 0, &o) != JOBQ_OK)
		cli_failed();
	if (json)
		print_json(id, &o);
	else
		print_text(id, &o, timeout_ms);
	code = exit_code(&o);
	jobq_outcome_clear(&o);
	return code;
}

/*
 * cmd_await
 *		await ID [--timeout=DURATION]
 */
int
cmd_await(void)
{
	static const char *const allowed[] = {"timeout", NULL};
	const char *t;
	int			timeout_ms;
	int64_t		id;

	cli_allow_only("await", allowed);
	cli_want_args("await", 1, 1);
	id = cli_job_id(cli_arg(1));
	t = cli_option("timeout");
	timeout_ms = cli_await_timeout_ms(t ? t : AWAIT_DEFAULT_TIMEOUT, "--timeout");
	return cli_await_print(cli_connect(), id, timeout_ms, cli_json());
}
