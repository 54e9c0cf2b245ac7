/*-------------------------------------------------------------------------
 *
 * admin.c
 *	  The operating calls on finished jobs: retry, cancel, purge
 *	  (extension/admin.c).
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/src/admin.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobq-int.h"

/*
 * job_bool_op: run a per-job admin statement returning boolean (retry,
 * cancel).  When the server says false, look the job up to tell the
 * caller *why*: it does not exist (NOT_FOUND) or its state forbids the
 * operation (STATE).  The lookup is a second round trip, but only on
 * that unhappy path.
 */
static int
job_bool_op(JobqConn *conn, JobqStmt stmt, int64_t id, const char *verb,
			const char *allowed)
{
	char		idbuf[24];
	const char *values[1];
	PGresult   *res;
	JobqRows   *info;
	int			done;

	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	if (jobq_check_id(conn, id) != JOBQ_OK)
		return JOBQ_ERR;
	snprintf(idbuf, sizeof(idbuf), "%lld", (long long) id);
	values[0] = idbuf;
	res = jobq_exec(conn, stmt, 1, values, 1);
	if (res == NULL)
		return JOBQ_ERR;
	if (PQntuples(res) != 1 || PQnfields(res) != 1)
	{
		PQclear(res);
		jobq_set_error(conn, JOBQ_ERR_PROTOCOL, "unexpected result from the server");
		return JOBQ_ERR;
	}
	done = !PQgetisnull(res, 0, 0) && PQgetvalue(res, 0, 0)[0] == 't';
	PQclear(res);
	if (done)
		return JOBQ_OK;

	info = jobq_job_info(conn, id);
	if (info == NULL)
	{
		if (conn->err != JOBQ_ERR_NOT_FOUND)
			jobq_set_error(conn, JOBQ_ERR_STATE,
						   "job %lld was not %s (only %s jobs can be)",
						   (long long) id, verb, allowed);
		return JOBQ_ERR;
	}
	jobq_set_error(conn, JOBQ_ERR_STATE,
				   "job %lld is %s and was not %s (only %s jobs can be)",
				   (long long) id,
				   jobq_rows_get(info, 0, "state") ? jobq_rows_get(info, 0, "state") : "?",
				   verb, allowed);
	jobq_rows_free(info);
	return JOBQ_ERR;
}

int
jobq_retry(JobqConn *conn, int64_t id)
{
	return job_bool_op(conn, STMT_RETRY, id, "retried",
					   "dead (and whose dedupe key is free)");
}

int
jobq_cancel(JobqConn *conn, int64_t id)
{
	return job_bool_op(conn, STMT_CANCEL, id, "cancelled", "ready or dead");
}

/* count_op: a statement returning one bigint count. */
static int
count_op(JobqConn *conn, JobqStmt stmt, int nparams, const char *const *values,
		 int64_t *n)
{
	PGresult   *res = jobq_exec(conn, stmt, nparams, values, 1);

	if (res == NULL)
		return JOBQ_ERR;
	if (PQntuples(res) != 1 || PQnfields(res) != 1 || PQgetisnull(res, 0, 0))
	{
		PQclear(res);
		jobq_set_error(conn, JOBQ_ERR_PROTOCOL, "unexpected result from the server");
		return JOBQ_ERR;
	}
	if (n != NULL)
		*n = (int64_t) strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return JOBQ_OK;
}

int
jobq_retry_queue(JobqConn *conn, const char *queue, int64_t *n)
{
	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	if (jobq_check_queue(conn, queue) != JOBQ_OK)
		return JOBQ_ERR;
	return count_op(conn, STMT_RETRY_QUEUE, 1, &queue, n);
}

int
jobq_purge(JobqConn *conn, const char *queue, const char *state,
		   int older_than_s, int64_t *n)
{
	char		older[32];
	const char *values[3];
	JobqState	st;

	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	if (jobq_check_queue(conn, queue) != JOBQ_OK)
		return JOBQ_ERR;
	st = jobq_state_from_name(state);
	if (state != NULL && !jobq_state_finished(st))
	{
		char		names[128];

		jobq_states_text(names, sizeof(names), 1, NULL);
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT,
					   "invalid state \"%.32s\": only %s jobs can be purged", state, names);
		return JOBQ_ERR;
	}
	if (older_than_s == -1)
		older_than_s = 0;
	if (jobq_check_range(conn, "older_than_s", older_than_s, 0,
						 JOBQ_RETENTION_MAX_S) != JOBQ_OK)
		return JOBQ_ERR;
	jobq_fmt_interval(older, sizeof(older), older_than_s);
	values[0] = queue;
	values[1] = state;
	values[2] = older;
	return count_op(conn, STMT_PURGE, 3, values, n);
}

