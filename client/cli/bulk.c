/*-------------------------------------------------------------------------
 *
 * bulk.c
 *	  jobq retry|cancel --queue Q --where FILTERS: a bulk action on the
 *	  jobs a filter selects, batch by batch (jobq_retry_where,
 *	  jobq_cancel_where), with progress on stderr.
 *
 * Each batch is one call, in a transaction of its own (autocommit), so an
 * action on a million jobs never holds a long transaction; Ctrl-C stops
 * between two batches, and what was done stays done.  FILTERS is the
 * filters object of jobq_list (doc/sql.md, "Job filters").
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/cli/bulk.c
 *
 *-------------------------------------------------------------------------
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static volatile sig_atomic_t stop = 0;

static void
on_sigint(int signo)
{
	(void) signo;
	stop = 1;
}

/*
 * cmd_bulk_where
 *		command (retry or cancel) --queue Q --where FILTERS [--state S]
 *		[--batch N]: loops while the server says there is more; prints the
 *		total (JSON: {"queue", "affected", "batches", "stopped"}).
 */
int
cmd_bulk_where(const char *command, JobqBulkAction action)
{
	static const char *const options[] = {"queue", "where", "state", "batch", NULL};
	const char *queue = cli_option("queue");
	int			batch;
	int64_t		total = 0;
	long		batches = 0;
	char	   *cursor = NULL;
	JobqConn   *conn;
	struct sigaction sa;

	cli_allow_only(command, options);
	cli_want_args(command, 0, 0);
	batch = cli_int_option("batch", -1, 1, JOBQ_BULK_MAX);
	if (queue == NULL)
		cli_usage_error("%s --where needs --queue", command);
	conn = cli_connect();

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	sigaction(SIGINT, &sa, NULL);
	do
	{
		int64_t		affected = 0;
		char	   *next = NULL;

		if (jobq_bulk_where(conn, action, queue, cli_option("state"), cli_option("where"),
							batch, cursor, &affected, &next) != JOBQ_OK)
		{
			jobq_free(cursor);
			if (batches > 0)
				fprintf(stderr, "%s: %lld job(s) done in %ld batch(es) before the error\n",
						command, (long long) total, batches);
			return cli_report_error();
		}
		jobq_free(cursor);
		cursor = next;
		total += affected;
		batches++;
		if (cursor != NULL && !cli_json())
			fprintf(stderr, "%s: %lld job(s) so far, batch %ld\n", command,
					(long long) total, batches);
	} while (cursor != NULL && !stop);

	if (cli_json())
		printf("{\"queue\":\"%s\",\"affected\":%lld,\"batches\":%ld,\"stopped\":%s}\n",
			   queue, (long long) total, batches, cursor != NULL ? "true" : "false");
	else
		printf("%s %lld job(s)%s\n", strcmp(command, "retry") == 0 ? "retried" : "cancelled",
			   (long long) total, cursor != NULL ? " (stopped before the end)" : "");
	jobq_free(cursor);
	return EXIT_OK;
}
