/*-------------------------------------------------------------------------
 *
 * inspect.c
 *	  Looking at jobs and queues: stats, one job's detail, a queue's jobs
 *	  and the blocking-claim counters (extension/inspect.c).
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/src/inspect.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobq-int.h"

JobqRows *
jobq_stats(JobqConn *conn, const char *queue)
{
	if (conn == NULL)
		return NULL;
	jobq_clear_error(conn);
	if (queue != NULL && jobq_check_queue(conn, queue) != JOBQ_OK)
		return NULL;
	return jobq_rows_from(conn, jobq_exec(conn, STMT_STATS, 1, &queue, 1));
}

/*
 * jobq_job_info: see jobq-client.h.  No such job is JOBQ_ERR_NOT_FOUND.
 */
JobqRows *
jobq_job_info(JobqConn *conn, int64_t id)
{
	char		idbuf[24];
	const char *values[1];
	PGresult   *res;

	if (conn == NULL)
		return NULL;
	jobq_clear_error(conn);
	if (jobq_check_id(conn, id) != JOBQ_OK)
		return NULL;
	snprintf(idbuf, sizeof(idbuf), "%lld", (long long) id);
	values[0] = idbuf;
	res = jobq_exec(conn, STMT_JOB, 1, values, 1);
	if (res == NULL)
		return NULL;
	if (PQntuples(res) == 0)
	{
		PQclear(res);
		jobq_set_error(conn, JOBQ_ERR_NOT_FOUND, "job %lld does not exist",
					   (long long) id);
		return NULL;
	}
	return jobq_rows_from(conn, res);
}

/* The states jobq_list accepts (the job states plus "delayed"). */
static int
valid_list_state(const char *s)
{
	return jobq_state_from_name(s) != JOBQ_STATE_UNKNOWN || strcmp(s, "delayed") == 0;
}

JobqRows *
jobq_list(JobqConn *conn, const char *queue, const char *state, int max_rows)
{
	char		rows[16];
	const char *values[3];

	if (conn == NULL)
		return NULL;
	jobq_clear_error(conn);
	if (jobq_check_queue(conn, queue) != JOBQ_OK)
		return NULL;
	if (state != NULL && !valid_list_state(state))
	{
		char		names[128];

		jobq_states_text(names, sizeof(names), 0, "delayed");
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT,
					   "invalid state \"%.32s\": expected %s", state, names);
		return NULL;
	}
	if (max_rows == -1)
		max_rows = JOBQ_LIST_DEFAULT_ROWS;
	if (jobq_check_range(conn, "max_rows", max_rows, 1, JOBQ_LIST_MAX_ROWS) != JOBQ_OK)
		return NULL;
	snprintf(rows, sizeof(rows), "%d", max_rows);
	values[0] = queue;
	values[1] = state;
	values[2] = rows;
	return jobq_rows_from(conn, jobq_exec(conn, STMT_LIST, 3, values, 1));
}

/*
 * jobq_list_page: see jobq-client.h.  The arguments are checked here as
 * jobq_list checks them; the filters are the server's to check (22023
 * naming the key), past being JSON.
 */
JobqRows *
jobq_list_page(JobqConn *conn, const char *queue, const JobqListOpts *given)
{
	static const size_t sizes[] = JOBQ_LIST_OPTS_SIZES;
	JobqListOpts opts = JOBQ_LIST_OPTS_INIT;
	char		rows[16];
	const char *values[5];
	char	   *filters = NULL;
	JobqRows   *result;

	if (conn == NULL)
		return NULL;
	jobq_clear_error(conn);
	if (jobq_copy_opts(conn, "JobqListOpts", given, &opts, sizes, lengthof(sizes)) != JOBQ_OK)
		return NULL;
	if (conn->server_sql < JOBQ_SQL_LIST_PAGES)
	{
		if (opts.after != NULL || opts.filters != NULL)
		{
			jobq_set_error(conn, JOBQ_ERR_VERSION,
						   "list cursors and filters need the jobq 0.2.0 SQL on the server "
						   "(ALTER EXTENSION jobq UPDATE)");
			return NULL;
		}
		return jobq_list(conn, queue, opts.state, opts.max_rows);
	}
	if (jobq_check_queue(conn, queue) != JOBQ_OK)
		return NULL;
	if (opts.state != NULL && !valid_list_state(opts.state))
	{
		char		names[128];

		jobq_states_text(names, sizeof(names), 0, "delayed");
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT,
					   "invalid state \"%.32s\": expected %s", opts.state, names);
		return NULL;
	}
	if (opts.max_rows == -1)
		opts.max_rows = JOBQ_LIST_DEFAULT_ROWS;
	if (jobq_check_range(conn, "max_rows", opts.max_rows, 1, JOBQ_LIST_MAX_ROWS) != JOBQ_OK)
		return NULL;
	if (opts.filters != NULL &&
		(filters = jobq_copy_json(conn, "filters", opts.filters, strlen(opts.filters))) == NULL)
		return NULL;
	snprintf(rows, sizeof(rows), "%d", opts.max_rows);
	values[0] = queue;
	values[1] = opts.state;
	values[2] = rows;
	values[3] = opts.after;
	values[4] = filters != NULL ? filters : "{}";
	result = jobq_rows_from(conn, jobq_exec(conn, STMT_LIST_PAGE, 5, values, 1));
	free(filters);
	return result;
}

/*
 * jobq_wait_stats: see jobq-client.h.
 */
int
jobq_wait_stats(JobqConn *conn, int *preloaded, int64_t *waiting,
				int64_t *wakeups)
{
	PGresult   *res;

	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	res = jobq_exec(conn, STMT_WAIT_STATS, 0, NULL, 1);
	if (res == NULL)
		return JOBQ_ERR;
	if (PQntuples(res) != 1 || PQnfields(res) != 3)
	{
		PQclear(res);
		jobq_set_error(conn, JOBQ_ERR_PROTOCOL, "unexpected result from the server");
		return JOBQ_ERR;
	}
	if (preloaded != NULL)
		*preloaded = PQgetvalue(res, 0, 0)[0] == 't';
	if (waiting != NULL)
		*waiting = (int64_t) strtoll(PQgetvalue(res, 0, 1), NULL, 10);
	if (wakeups != NULL)
		*wakeups = (int64_t) strtoll(PQgetvalue(res, 0, 2), NULL, 10);
	PQclear(res);
	return JOBQ_OK;
}

