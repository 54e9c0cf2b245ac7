/*-------------------------------------------------------------------------
 *
 * claim.c
 *	  Claiming: jobq_claim and jobq_claim_wait, the asynchronous claim
 *	  (start, ready, interrupt, finish), and the JobqJobList built from a
 *	  claim's result (extension/claim.c).
 *
 * A claimed job carries its claim token: the proof that this worker holds
 * the job's lease (see ack.c).
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/src/claim.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobq-int.h"

/* Column numbers of a claim result (CLAIM_COLUMNS in conn.c) */
#define CLAIM_COL_ID 0
#define CLAIM_COL_QUEUE 1
#define CLAIM_COL_PAYLOAD 2
#define CLAIM_COL_ATTEMPT 3
#define CLAIM_COL_MAX_ATTEMPTS 4
#define CLAIM_COL_TOKEN 5
#define CLAIM_COL_LOCKED_UNTIL 6
#define CLAIM_COL_ENQUEUED_AT 7
#define CLAIM_COL_LEASE_LEFT 8
#define CLAIM_NCOLS 9
/* STMT_CLAIM_*_020 (JOBQ_SQL_FLOWS): then the job's flow_id */
#define CLAIM_COL_FLOW_ID 9

/*
 * jobq_claim_params: validate a claim's arguments and fill values[0..4]
 * and *stmt.  arr receives the text[] literal for several queues; nbuf
 * (16 bytes), lbuf and wbuf (32 bytes) the numbers.  Shared by the claim
 * calls and jobq_complete_and_claim.
 */
int
jobq_claim_params(JobqConn *conn, const char *const *queues, int nqueues,
				  int max_jobs, int lease_s, const char *worker, int wait_ms,
				  JobqBuf *arr, char *nbuf, char *lbuf, char *wbuf,
				  const char **values, JobqStmt *stmt)
{
	int			i;

	if (queues == NULL)
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT, "queue list is NULL");
		return JOBQ_ERR;
	}
	if (jobq_check_range(conn, "number of queues", nqueues, 1,
						 JOBQ_CLAIM_QUEUES_MAX) != JOBQ_OK ||
		jobq_check_range(conn, "max_jobs", max_jobs, 1, JOBQ_CLAIM_MAX) != JOBQ_OK)
		return JOBQ_ERR;
	if (lease_s != -1 &&
		jobq_check_range(conn, "lease_s", lease_s, JOBQ_LEASE_MIN_S,
						 JOBQ_LEASE_MAX_S) != JOBQ_OK)
		return JOBQ_ERR;
	if (worker != NULL && strlen(worker) > JOBQ_WORKER_NAME_MAX)
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT,
					   "worker name is longer than %d bytes", JOBQ_WORKER_NAME_MAX);
		return JOBQ_ERR;
	}
	if (jobq_check_range(conn, "wait_ms", wait_ms, 0, JOBQ_CLAIM_WAIT_MAX_MS) != JOBQ_OK)
		return JOBQ_ERR;
	for (i = 0; i < nqueues; i++)
		if (jobq_check_queue(conn, queues[i]) != JOBQ_OK)
			return JOBQ_ERR;

	/*
	 * NB: server_sql is 0 before the first connect: then the claim without
	 * flow_id, which 0.2.0's SQL answers as well
	 */
	if (nqueues == 1)
	{
		*stmt = conn->server_sql >= JOBQ_SQL_FLOWS ? STMT_CLAIM_ONE_020 : STMT_CLAIM_ONE;
		values[0] = queues[0];
	}
	else
	{
		*stmt = conn->server_sql >= JOBQ_SQL_FLOWS ? STMT_CLAIM_ANY_020 : STMT_CLAIM_ANY;
		jobq_buf_append(arr, "{", 1);
		for (i = 0; i < nqueues; i++)
			jobq_buf_array_elem(arr, queues[i], strlen(queues[i]));
		jobq_buf_append(arr, "}", 1);
		if (arr->failed)
		{
			jobq_set_error(conn, JOBQ_ERR_OOM, "out of memory");
			return JOBQ_ERR;
		}
		values[0] = arr->data;
	}
	snprintf(nbuf, 16, "%d", max_jobs);
	if (lease_s != -1)
		jobq_fmt_interval(lbuf, 32, lease_s);
	values[1] = worker;
	values[2] = nbuf;
	values[3] = lease_s != -1 ? lbuf : NULL;
	values[4] = NULL;
	if (wait_ms > 0)
	{
		snprintf(wbuf, 32, "%d milliseconds", wait_ms);
		values[4] = wbuf;
	}
	return JOBQ_OK;
}

/*
 * jobq_joblist_from_result: build a list from a claim result, or NULL
 * with the error set.
 */
JobqJobList *
jobq_joblist_from_result(JobqConn *conn, const PGresult *res)
{
	JobqJobList *list;
	int			n = PQntuples(res);
	int			i;

	if (PQnfields(res) != CLAIM_NCOLS && PQnfields(res) != CLAIM_NCOLS + 1)
	{
		jobq_set_error(conn, JOBQ_ERR_PROTOCOL,
					   "claim returned %d columns, expected %d",
					   PQnfields(res), CLAIM_NCOLS);
		return NULL;
	}
	list = calloc(1, sizeof(JobqJobList));
	if (list == NULL)
		goto oom;
	if (n > 0)
	{
		list->jobs = calloc((size_t) n, sizeof(JobqJob));
		if (list->jobs == NULL)
			goto oom;
	}
	for (i = 0; i < n; i++)
	{
		JobqJob    *job = &list->jobs[i];
		const char *token = PQgetvalue(res, i, CLAIM_COL_TOKEN);

		list->n++;				/* so that jobq_joblist_free sees it */
		job->borrowed = 1;
		if (jobq_parse_int64(conn, PQgetvalue(res, i, CLAIM_COL_ID), &job->id) != JOBQ_OK)
		{
			jobq_joblist_free(list);
			return NULL;
		}
		job->attempt = atoi(PQgetvalue(res, i, CLAIM_COL_ATTEMPT));
		job->max_attempts = atoi(PQgetvalue(res, i, CLAIM_COL_MAX_ATTEMPTS));
		if (strlen(token) > JOBQ_TOKEN_LEN)
		{
			jobq_set_error(conn, JOBQ_ERR_PROTOCOL, "claim token too long");
			jobq_joblist_free(list);
			return NULL;
		}
		strcpy(job->token, token);
		job->payload_len = (size_t) PQgetlength(res, i, CLAIM_COL_PAYLOAD);
		job->queue = jobq_strdup(PQgetvalue(res, i, CLAIM_COL_QUEUE));
		job->payload = jobq_strdup(PQgetvalue(res, i, CLAIM_COL_PAYLOAD));
		job->locked_until = jobq_strdup(PQgetvalue(res, i, CLAIM_COL_LOCKED_UNTIL));
		job->enqueued_at = jobq_strdup(PQgetvalue(res, i, CLAIM_COL_ENQUEUED_AT));
		job->lease_ms = (int64_t) (strtod(PQgetvalue(res, i, CLAIM_COL_LEASE_LEFT),
										  NULL) * 1000.0);
		if (PQnfields(res) > CLAIM_COL_FLOW_ID && !PQgetisnull(res, i, CLAIM_COL_FLOW_ID) &&
			jobq_parse_int64(conn, PQgetvalue(res, i, CLAIM_COL_FLOW_ID),
							 &job->flow_id) != JOBQ_OK)
		{
			jobq_joblist_free(list);
			return NULL;
		}
		if (!job->queue || !job->payload || !job->locked_until || !job->enqueued_at)
		{
			jobq_joblist_free(list);
			list = NULL;
			goto oom;
		}
	}
	return list;
oom:
	if (list != NULL)
		jobq_joblist_free(list);
	jobq_set_error(conn, JOBQ_ERR_OOM, "out of memory");
	return NULL;
}

/*
 * jobq_claim / jobq_claim_wait: see jobq-client.h.
 */
JobqJobList *
jobq_claim_wait(JobqConn *conn, const char *const *queues, int nqueues,
				int max_jobs, int lease_s, const char *worker, int wait_ms)
{
	const char *values[5];
	char		nbuf[16],
				lbuf[32],
				wbuf[32];
	JobqBuf		arr;
	JobqStmt	stmt;
	PGresult   *res;
	JobqJobList *list = NULL;

	if (conn == NULL)
		return NULL;
	jobq_clear_error(conn);
	jobq_buf_init(&arr);
	if (jobq_claim_params(conn, queues, nqueues, max_jobs, lease_s, worker,
						  wait_ms, &arr, nbuf, lbuf, wbuf, values,
						  &stmt) == JOBQ_OK)
	{
		res = jobq_exec_within(conn, stmt, 5, values, 1, wait_ms);
		if (res != NULL)
		{
			list = jobq_joblist_from_result(conn, res);
			PQclear(res);
		}
	}
	jobq_buf_free(&arr);
	return list;
}

JobqJobList *
jobq_claim(JobqConn *conn, const char *const *queues, int nqueues,
		   int max_jobs, int lease_s, const char *worker)
{
	return jobq_claim_wait(conn, queues, nqueues, max_jobs, lease_s, worker, 0);
}

/*
 * jobq_claim_start / _ready / _interrupt / _finish: see jobq-client.h.
 *
 * The claim is sent with PQsendQueryPrepared and its answer collected with
 * PQconsumeInput/PQisBusy/PQgetResult, libpq's asynchronous pattern; the
 * statement is prepared (synchronously, a short round trip) before it is
 * sent.  conn->busy fences every other call until the answer is taken.
 */
int
jobq_claim_start(JobqConn *conn, const char *const *queues, int nqueues,
				 int max_jobs, int lease_s, const char *worker, int wait_ms)
{
	const char *values[5];
	char		nbuf[16],
				lbuf[32],
				wbuf[32];
	JobqBuf		arr;
	JobqStmt	stmt;
	int			rc = JOBQ_ERR;

	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	jobq_buf_init(&arr);
	if (jobq_claim_params(conn, queues, nqueues, max_jobs, lease_s, worker,
						  wait_ms, &arr, nbuf, lbuf, wbuf, values,
						  &stmt) == JOBQ_OK &&
		jobq_ensure_connected(conn) == JOBQ_OK &&
		jobq_prepare(conn, stmt) == JOBQ_OK &&
		jobq_send(conn, stmt, 5, values) == JOBQ_OK)
	{
		conn->busy = 1;
		conn->interrupted = 0;
		jobq_call_started(conn, wait_ms);
		rc = JOBQ_OK;
	}
	jobq_buf_free(&arr);
	return rc;
}

int
jobq_claim_ready(JobqConn *conn)
{
	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	if (!conn->busy)
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT, "no claim in progress");
		return JOBQ_ERR;
	}
	if (!PQconsumeInput(conn->pg))
	{
		jobq_set_error(conn, JOBQ_ERR_CONNECTION, "%s", PQerrorMessage(conn->pg));
		return JOBQ_ERR;
	}
	if (!PQisBusy(conn->pg))
		return 1;
	if (jobq_call_expired(conn))
	{
		conn->busy = 0;
		return JOBQ_ERR;
	}
	return 0;
}

int
jobq_claim_interrupt(JobqConn *conn)
{
	PGcancel   *cancel;
	char		errbuf[256];
	int			ok;

	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	if (!conn->busy || conn->pg == NULL)
		return JOBQ_OK;
	cancel = PQgetCancel(conn->pg);
	if (cancel == NULL)
	{
		jobq_set_error(conn, JOBQ_ERR_CONNECTION, "could not build a cancel request");
		return JOBQ_ERR;
	}
	errbuf[0] = '\0';
	ok = PQcancel(cancel, errbuf, sizeof(errbuf));
	PQfreeCancel(cancel);
	if (!ok)
	{
		jobq_set_error(conn, JOBQ_ERR_CONNECTION, "cancel request failed: %s", errbuf);
		return JOBQ_ERR;
	}
	conn->interrupted = 1;
	return JOBQ_OK;
}

JobqJobList *
jobq_claim_finish(JobqConn *conn)
{
	PGresult   *res;
	PGresult   *extra;
	JobqJobList *list = NULL;
	const char *state;

	if (conn == NULL)
		return NULL;
	jobq_clear_error(conn);
	if (!conn->busy)
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT, "no claim in progress");
		return NULL;
	}
	/* NB: the connection is free only once PQgetResult returned NULL */
	if (jobq_await_answer(conn) != JOBQ_OK)
	{
		conn->busy = 0;
		return NULL;
	}
	res = PQgetResult(conn->pg);
	while (jobq_await_answer(conn) == JOBQ_OK && (extra = PQgetResult(conn->pg)) != NULL)
		PQclear(extra);
	conn->busy = 0;
	conn->call_deadline = 0;
	if (conn->pg == NULL)
	{
		/* the deadline passed while the rest was read */
		PQclear(res);
		return NULL;
	}
	state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	if (res != NULL && PQresultStatus(res) == PGRES_TUPLES_OK)
		list = jobq_joblist_from_result(conn, res);
	else if (conn->interrupted && state != NULL && strcmp(state, "57014") == 0)
	{
		/* our own cancel: the claim rolled back, nothing was claimed */
		list = calloc(1, sizeof(JobqJobList));
		if (list == NULL)
			jobq_set_error(conn, JOBQ_ERR_OOM, "out of memory");
	}
	else
	{
		jobq_note_failure(conn, res);
		res = NULL;				/* freed by jobq_note_failure */
	}
	conn->interrupted = 0;
	PQclear(res);
	return list;
}
