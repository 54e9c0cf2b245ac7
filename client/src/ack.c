/*-------------------------------------------------------------------------
 *
 * ack.c
 *	  Reporting on claimed jobs: complete (single, batch, and pipelined
 *	  with the next claim), fail, extend and release (extension/ack.c).
 *
 * complete, fail, extend and release present the job's claim token; a
 * stale token (the lease ran out and the job was swept or claimed again)
 * makes the server change nothing, which this library reports as
 * JOBQ_ERR_STALE so that it cannot be mistaken for success.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/src/ack.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobq-int.h"

/*
 * fenced_exec
 *		Run a fenced statement (complete, fail, extend, release) of the
 *		given values; its single result column is false or NULL when the
 *		token is stale (or the job unknown).  Then the call fails with
 *		JOBQ_ERR_STALE and "job N: stale claim token or unknown job;
 *		<consequence>".  Returns the result, which the caller PQclears, with
 *		*value pointing into it (never false or NULL); NULL on any error.
 */
static PGresult *
fenced_exec(JobqConn *conn, JobqStmt stmt, int nvalues, const char *const *values,
			int64_t id, const char *consequence, const char **value)
{
	PGresult   *res = jobq_exec(conn, stmt, nvalues, values, 1);
	int			ok;

	if (res == NULL)
		return NULL;
	*value = jobq_single_value(conn, res, &ok);
	if (ok && (*value == NULL || strcmp(*value, "f") == 0))
	{
		jobq_set_error(conn, JOBQ_ERR_STALE,
					   "job %lld: stale claim token or unknown job; %s",
					   (long long) id, consequence);
		ok = 0;
	}
	if (!ok)
	{
		PQclear(res);
		return NULL;
	}
	return res;
}

/*
 * jobq_complete: see jobq-client.h.
 */
int
jobq_complete(JobqConn *conn, int64_t id, const char *token,
			  const char *result, size_t result_len)
{
	char		idbuf[24];
	const char *values[3];
	char	   *json = NULL;
	PGresult   *res;
	const char *v;

	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	if (jobq_check_id(conn, id) != JOBQ_OK || jobq_check_token(conn, token) != JOBQ_OK)
		return JOBQ_ERR;
	if (result != NULL &&
		(json = jobq_copy_json(conn, "result", result, result_len)) == NULL)
		return JOBQ_ERR;
	snprintf(idbuf, sizeof(idbuf), "%lld", (long long) id);
	values[0] = idbuf;
	values[1] = token;
	values[2] = json;
	res = fenced_exec(conn, STMT_COMPLETE, 3, values, id, "nothing changed", &v);
	free(json);
	if (res == NULL)
		return JOBQ_ERR;
	PQclear(res);
	return JOBQ_OK;
}

/*
 * complete_params: validate a batch of completions and build its
 * int8[], uuid[] and jsonb[] literals.  resarr stays empty (data NULL,
 * i.e. SQL NULL) when results is NULL.
 */
static int
complete_params(JobqConn *conn, size_t n, const int64_t *ids,
				const char *const *tokens, const char *const *results,
				const size_t *result_lens, JobqBuf *idarr,
				JobqBuf *tokarr, JobqBuf *resarr)
{
	size_t		i;

	if (jobq_check_range(conn, "batch size", (long long) n, 1,
						 JOBQ_COMPLETE_BATCH_MAX) != JOBQ_OK)
		return JOBQ_ERR;
	if (ids == NULL || tokens == NULL || (results != NULL && result_lens == NULL))
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT,
					   "ids, tokens (and result_lens with results) must not be NULL");
		return JOBQ_ERR;
	}
	jobq_buf_append(idarr, "{", 1);
	jobq_buf_append(tokarr, "{", 1);
	if (results != NULL)
		jobq_buf_append(resarr, "{", 1);
	for (i = 0; i < n; i++)
	{
		if (jobq_check_id(conn, ids[i]) != JOBQ_OK ||
			jobq_check_token(conn, tokens[i]) != JOBQ_OK)
			return JOBQ_ERR;
		jobq_buf_printf(idarr, "%s%lld", i ? "," : "", (long long) ids[i]);
		jobq_buf_array_elem(tokarr, tokens[i], strlen(tokens[i]));
		if (results != NULL)
		{
			if (results[i] != NULL)
			{
				char	   *c = jobq_copy_json(conn, "result", results[i], result_lens[i]);

				if (c == NULL)
					return JOBQ_ERR;
				free(c);
			}
			jobq_buf_array_elem(resarr, results[i],
								results[i] ? result_lens[i] : 0);
		}
	}
	jobq_buf_append(idarr, "}", 1);
	jobq_buf_append(tokarr, "}", 1);
	if (results != NULL)
		jobq_buf_append(resarr, "}", 1);
	if (idarr->failed || tokarr->failed || resarr->failed)
	{
		jobq_set_error(conn, JOBQ_ERR_OOM, "out of memory");
		return JOBQ_ERR;
	}
	return JOBQ_OK;
}

/*
 * batch_stmt: the batch complete to send.  A server with the 0.2.0 SQL
 * answers with the positions of the accepted (id, token) pairs; 0.1.0
 * SQL only has jobq_complete_batch, which answers with their ids.
 */
static JobqStmt
batch_stmt(const JobqConn *conn)
{
	return conn->server_sql >= JOBQ_SQL_BATCH_POSITIONS ?
		STMT_COMPLETE_BATCH_POS : STMT_COMPLETE_BATCH;
}

/*
 * mark_accepted: flag each input pair the server accepted, from the
 * result of stmt.  Positions (1-based) say exactly which pair; ids (0.1.0
 * SQL) cannot tell the pairs of a repeated id apart, so there each pair
 * with an accepted id counts as accepted.  Each row is parsed once (a
 * batch of 32 parsed every row per pair: 12 % of jobq-worker's
 * instructions); n and the result are at most JOBQ_COMPLETE_BATCH_MAX.
 */
static void
mark_accepted(const PGresult *res, JobqStmt stmt, size_t n, const int64_t *ids,
			  int *accepted_out, size_t *naccepted)
{
	long long	vals[JOBQ_COMPLETE_BATCH_MAX];
	unsigned char hit[JOBQ_COMPLETE_BATCH_MAX];
	int			rows = PQntuples(res);
	size_t		count = 0;
	size_t		i;
	int			r;

	if (rows > JOBQ_COMPLETE_BATCH_MAX)
		rows = JOBQ_COMPLETE_BATCH_MAX;	/* cannot happen: one row per pair */
	if (n > JOBQ_COMPLETE_BATCH_MAX)
		n = JOBQ_COMPLETE_BATCH_MAX;	/* checked before the call */
	for (r = 0; r < rows; r++)
		vals[r] = strtoll(PQgetvalue(res, r, 0), NULL, 10);
	memset(hit, 0, n);
	for (r = 0; r < rows; r++)
	{
		if (stmt == STMT_COMPLETE_BATCH_POS)
		{
			if (vals[r] >= 1 && vals[r] <= (long long) n)
				hit[vals[r] - 1] = 1;
			continue;
		}
		for (i = 0; i < n; i++)
			if (vals[r] == (long long) ids[i])
				hit[i] = 1;
	}
	for (i = 0; i < n; i++)
	{
		if (accepted_out != NULL)
			accepted_out[i] = hit[i];
		count += hit[i];
	}
	if (naccepted != NULL)
		*naccepted = count;
}

/*
 * jobq_complete_batch: see jobq-client.h.
 */
int
jobq_complete_batch(JobqConn *conn, size_t n, const int64_t *ids,
					const char *const *tokens, const char *const *results,
					const size_t *result_lens, int *accepted_out,
					size_t *naccepted)
{
	JobqBuf		idarr,
				tokarr,
				resarr;
	const char *values[3];
	PGresult   *res;
	JobqStmt	stmt;
	int			rc = JOBQ_ERR;

	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	jobq_buf_init(&idarr);
	jobq_buf_init(&tokarr);
	jobq_buf_init(&resarr);
	if (complete_params(conn, n, ids, tokens, results, result_lens,
						&idarr, &tokarr, &resarr) == JOBQ_OK)
	{
		values[0] = idarr.data;
		values[1] = tokarr.data;
		values[2] = resarr.data;
		stmt = batch_stmt(conn);
		res = jobq_exec(conn, stmt, 3, values, 1);
		if (res != NULL)
		{
			mark_accepted(res, stmt, n, ids, accepted_out, naccepted);
			PQclear(res);
			rc = JOBQ_OK;
		}
	}
	jobq_buf_free(&idarr);
	jobq_buf_free(&tokarr);
	jobq_buf_free(&resarr);
	return rc;
}

/*
 * complete_and_claim: jobq_complete_and_claim and
 * jobq_complete_and_claim_results (results NULL: no results).
 *
 * Both statements go out in pipeline mode followed by ONE sync message, so
 * the server runs them in one implicit transaction and answers in one
 * round trip: if the complete fails, the claim is skipped (reported as
 * PGRES_PIPELINE_ABORTED) and nothing is committed; if the claim fails,
 * the completions roll back.  Either way the caller may simply repeat the
 * call: completing with the same tokens again is harmless.
 */
static JobqJobList *
complete_and_claim(JobqConn *conn, size_t n, const int64_t *ids,
				   const char *const *tokens, const char *const *res_texts,
				   const size_t *res_lens, int *accepted_out,
				   const char *const *queues, int nqueues,
				   int max_jobs, int lease_s, const char *worker)
{
	JobqBuf		idarr,
				tokarr,
				resarr,
				qarr;
	const char *cvalues[3];
	const char *qvalues[5];
	char		nbuf[16],
				lbuf[32],
				wbuf[32];
	JobqStmt	claim_stmt;
	JobqStmt	complete_stmt = STMT_COMPLETE_BATCH;
	PGresult   *results[2] = {NULL, NULL};
	PGresult   *error = NULL;
	JobqJobList *list = NULL;
	int			nqueries = 0;
	int			qi = 0;
	int			nulls = 0;
	int			synced = 0;

	if (conn == NULL)
		return NULL;
	jobq_clear_error(conn);
	jobq_buf_init(&idarr);
	jobq_buf_init(&tokarr);
	jobq_buf_init(&resarr);
	jobq_buf_init(&qarr);

	/* all argument checks before anything is sent */
	if (n > 0 &&
		complete_params(conn, n, ids, tokens, res_texts, res_lens,
						&idarr, &tokarr, &resarr) != JOBQ_OK)
		goto done;
	/* never a waiting claim: the completions would stay uncommitted */
	if (jobq_claim_params(conn, queues, nqueues, max_jobs, lease_s, worker, 0,
						  &qarr, nbuf, lbuf, wbuf, qvalues, &claim_stmt) != JOBQ_OK)
		goto done;
	if (jobq_ensure_connected(conn) != JOBQ_OK)
		goto done;
	/* named statements must exist before the pipeline starts */
	complete_stmt = batch_stmt(conn);
	if ((n > 0 && jobq_prepare(conn, complete_stmt) != JOBQ_OK) ||
		jobq_prepare(conn, claim_stmt) != JOBQ_OK)
		goto done;

	if (!PQenterPipelineMode(conn->pg))
	{
		/* busy is fenced above: only a query sent through jobq_pgconn */
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT,
					   "the connection is not idle (a query sent through "
					   "jobq_pgconn is still pending); nothing was sent");
		goto done;
	}
	if (n > 0)
	{
		cvalues[0] = idarr.data;
		cvalues[1] = tokarr.data;
		cvalues[2] = resarr.data;	/* NULL (SQL NULL) without results */
		if (jobq_send(conn, complete_stmt, 3, cvalues) != JOBQ_OK)
			goto pipeline_out;
		nqueries++;
	}
	if (jobq_send(conn, claim_stmt, 5, qvalues) != JOBQ_OK)
		goto pipeline_out;
	nqueries++;
	if (!PQpipelineSync(conn->pg))
	{
		jobq_set_result_error(conn, NULL);
		goto pipeline_out;
	}
	jobq_call_started(conn, 0);

	/*
	 * Each query yields its result then NULL; the sync yields
	 * PGRES_PIPELINE_SYNC.  A lost connection yields an error and NULLs,
	 * hence the bound on NULLs.
	 */
	while (!synced)
	{
		PGresult   *r;

		if (jobq_await_answer(conn) != JOBQ_OK)
			goto done;			/* timed out: the session is closed */
		r = PQgetResult(conn->pg);

		if (r == NULL)
		{
			qi++;
			if (++nulls > nqueries || PQstatus(conn->pg) == CONNECTION_BAD)
				break;
			continue;
		}
		switch (PQresultStatus(r))
		{
			case PGRES_PIPELINE_SYNC:
				synced = 1;
				PQclear(r);
				break;
			case PGRES_TUPLES_OK:
				if (qi < nqueries && results[qi] == NULL)
					results[qi] = r;
				else
					PQclear(r);
				break;
			case PGRES_FATAL_ERROR:
				if (error == NULL)
					error = r;
				else
					PQclear(r);
				break;
			default:			/* PGRES_PIPELINE_ABORTED and the like */
				PQclear(r);
				break;
		}
	}

pipeline_out:
	if (PQpipelineStatus(conn->pg) != PQ_PIPELINE_OFF &&
		!PQexitPipelineMode(conn->pg) && error == NULL &&
		conn->err == JOBQ_ERR_NONE)
		jobq_set_error(conn, JOBQ_ERR_CONNECTION, "%s", PQerrorMessage(conn->pg));
	if (conn->err != JOBQ_ERR_NONE)
		goto done;
	if (error != NULL)
	{
		jobq_note_failure(conn, error);
		error = NULL;
		goto done;
	}
	if (!synced || results[nqueries - 1] == NULL || (n > 0 && results[0] == NULL))
	{
		jobq_set_result_error(conn, NULL);
		if (conn->err != JOBQ_ERR_CONNECTION)
			jobq_set_error(conn, JOBQ_ERR_PROTOCOL,
						   "incomplete pipeline reply from the server");
		goto done;
	}
	list = jobq_joblist_from_result(conn, results[nqueries - 1]);
	if (list != NULL && n > 0)
		mark_accepted(results[0], complete_stmt, n, ids, accepted_out, NULL);

done:
	PQclear(error);
	PQclear(results[0]);
	PQclear(results[1]);
	jobq_buf_free(&idarr);
	jobq_buf_free(&tokarr);
	jobq_buf_free(&resarr);
	jobq_buf_free(&qarr);
	return list;
}

/*
 * jobq_complete_and_claim: see jobq-client.h.
 */
JobqJobList *
jobq_complete_and_claim(JobqConn *conn, size_t n, const int64_t *ids,
						const char *const *tokens, int *accepted_out,
						const char *const *queues, int nqueues,
						int max_jobs, int lease_s, const char *worker)
{
	return complete_and_claim(conn, n, ids, tokens, NULL, NULL, accepted_out,
							  queues, nqueues, max_jobs, lease_s, worker);
}

/*
 * jobq_complete_and_claim_results: see jobq-client.h.
 */
JobqJobList *
jobq_complete_and_claim_results(JobqConn *conn, size_t n, const int64_t *ids,
								const char *const *tokens,
								const char *const *results,
								const size_t *result_lens, int *accepted_out,
								const char *const *queues, int nqueues,
								int max_jobs, int lease_s, const char *worker)
{
	return complete_and_claim(conn, n, ids, tokens, results, result_lens,
							  accepted_out, queues, nqueues, max_jobs, lease_s,
							  worker);
}

/*
 * jobq_fail: see jobq-client.h.
 */
int
jobq_fail(JobqConn *conn, int64_t id, const char *token, const char *error,
		  int retry_in_s, int permanent, JobqState *new_state)
{
	char		idbuf[24],
				retry[32];
	const char *values[5];
	PGresult   *res;
	const char *v;

	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	if (jobq_check_id(conn, id) != JOBQ_OK || jobq_check_token(conn, token) != JOBQ_OK)
		return JOBQ_ERR;
	if (retry_in_s != -1 &&
		jobq_check_range(conn, "retry_in_s", retry_in_s, 0, JOBQ_DELAY_MAX_S) != JOBQ_OK)
		return JOBQ_ERR;
	snprintf(idbuf, sizeof(idbuf), "%lld", (long long) id);
	if (retry_in_s != -1)
		jobq_fmt_interval(retry, sizeof(retry), retry_in_s);
	values[0] = idbuf;
	values[1] = token;
	values[2] = error;
	values[3] = retry_in_s != -1 ? retry : NULL;
	values[4] = permanent ? "true" : "false";
	res = fenced_exec(conn, STMT_FAIL, 5, values, id, "nothing changed", &v);
	if (res == NULL)
		return JOBQ_ERR;
	if (new_state != NULL)
		*new_state = jobq_state_from_name(v);
	PQclear(res);
	return JOBQ_OK;
}

/*
 * jobq_fail_rate_limited: see jobq-client.h.
 */
int
jobq_fail_rate_limited(JobqConn *conn, int64_t id, const char *token, const char *error,
					   int rate_limit_for_s)
{
	char		idbuf[24],
				hold[32];
	const char *values[4];
	PGresult   *res;
	const char *v;

	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	if (jobq_check_id(conn, id) != JOBQ_OK || jobq_check_token(conn, token) != JOBQ_OK ||
		jobq_check_range(conn, "rate_limit_for_s", rate_limit_for_s, 1,
						 JOBQ_DELAY_MAX_S) != JOBQ_OK)
		return JOBQ_ERR;
	if (jobq_require_sql(conn, JOBQ_SQL_RATE_LIMITED, "jobq_fail_rate_limited") != JOBQ_OK)
		return JOBQ_ERR;
	snprintf(idbuf, sizeof(idbuf), "%lld", (long long) id);
	jobq_fmt_interval(hold, sizeof(hold), rate_limit_for_s);
	values[0] = idbuf;
	values[1] = token;
	values[2] = error;
	values[3] = hold;
	res = fenced_exec(conn, STMT_FAIL_RATE_LIMITED, 4, values, id, "nothing changed", &v);
	if (res == NULL)
		return JOBQ_ERR;
	PQclear(res);
	return JOBQ_OK;
}

/*
 * jobq_extend: see jobq-client.h.
 */
int
jobq_extend(JobqConn *conn, int64_t id, const char *token, int lease_s)
{
	char		idbuf[24],
				lease[32];
	const char *values[3];
	PGresult   *res;
	const char *v;

	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	if (jobq_check_id(conn, id) != JOBQ_OK || jobq_check_token(conn, token) != JOBQ_OK)
		return JOBQ_ERR;
	if (lease_s != -1 &&
		jobq_check_range(conn, "lease_s", lease_s, JOBQ_LEASE_MIN_S,
						 JOBQ_LEASE_MAX_S) != JOBQ_OK)
		return JOBQ_ERR;
	snprintf(idbuf, sizeof(idbuf), "%lld", (long long) id);
	if (lease_s != -1)
		jobq_fmt_interval(lease, sizeof(lease), lease_s);
	values[0] = idbuf;
	values[1] = token;
	values[2] = lease_s != -1 ? lease : NULL;
	res = fenced_exec(conn, STMT_EXTEND, 3, values, id, "lease not extended", &v);
	if (res == NULL)
		return JOBQ_ERR;
	PQclear(res);
	return JOBQ_OK;
}

/*
 * jobq_release: see jobq-client.h.
 */
int
jobq_release(JobqConn *conn, int64_t id, const char *token)
{
	char		idbuf[24];
	const char *values[2];
	PGresult   *res;
	const char *v;

	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	if (jobq_check_id(conn, id) != JOBQ_OK || jobq_check_token(conn, token) != JOBQ_OK)
		return JOBQ_ERR;
	snprintf(idbuf, sizeof(idbuf), "%lld", (long long) id);
	values[0] = idbuf;
	values[1] = token;
	res = fenced_exec(conn, STMT_RELEASE, 2, values, id, "not released", &v);
	if (res == NULL)
		return JOBQ_ERR;
	PQclear(res);
	return JOBQ_OK;
}
