/*-------------------------------------------------------------------------
 *
 * await.c
 *	  jobq_await: wait for a job's outcome (the procedure jobq_await,
 *	  extension/await.c).
 *
 * One CALL per await.  The server decides how it waits: outside a
 * transaction it commits before sleeping and holds no snapshot, inside
 * one (the caller's BEGIN) it waits at most 30 s.  So libjobq needs no
 * second path for an open transaction; it only gives the call its wait on
 * top of the call timeout.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/src/await.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobq-int.h"

/* The first SQL release with jobq_await */
#define JOBQ_SQL_AWAIT 200

/* The columns of CALL jobq_await (its INOUT arguments) */
enum
{
	COL_STATE, COL_RESULT, COL_LAST_ERROR, COL_ATTEMPT, COL_FINISHED_AT, COL_TIMED_OUT,
	NUM_COLS
};

void
jobq_outcome_clear(JobqOutcome *out)
{
	if (out == NULL || out->size != sizeof(JobqOutcome))
		return;
	free(out->result);
	free(out->last_error);
	free(out->finished_at);
	out->state = JOBQ_STATE_UNKNOWN;
	out->purged = 0;
	out->timed_out = 0;
	out->attempt = -1;
	out->result = NULL;
	out->last_error = NULL;
	out->finished_at = NULL;
}

/* text_or_null: a malloc'd copy of the value, NULL for SQL NULL */
static char *
text_or_null(const PGresult *res, int col)
{
	return PQgetisnull(res, 0, col) ? NULL : jobq_strdup(PQgetvalue(res, 0, col));
}

int
jobq_await(JobqConn *conn, int64_t id, int timeout_ms, int flags, JobqOutcome *out)
{
	char		idbuf[24];
	char		tmo[32];
	const char *values[4];
	const char *state;
	PGresult   *res;

	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	if (out == NULL || out->size != sizeof(JobqOutcome))
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT,
					   "out must be a JobqOutcome made with JOBQ_OUTCOME_INIT");
		return JOBQ_ERR;
	}
	jobq_outcome_clear(out);
	if (jobq_check_id(conn, id) != JOBQ_OK ||
		jobq_check_range(conn, "timeout_ms", timeout_ms, 0,
						 (long long) JOBQ_AWAIT_MAX_S * 1000) != JOBQ_OK)
		return JOBQ_ERR;
	if ((flags & ~(JOBQ_AWAIT_ATTEMPT | JOBQ_AWAIT_CANCEL_ON_TIMEOUT)) != 0)
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT, "unknown await flags 0x%x", flags);
		return JOBQ_ERR;
	}
	if (jobq_require_sql(conn, JOBQ_SQL_AWAIT, "jobq_await") != JOBQ_OK)
		return JOBQ_ERR;
	snprintf(idbuf, sizeof(idbuf), "%lld", (long long) id);
	snprintf(tmo, sizeof(tmo), "%d milliseconds", timeout_ms);
	values[0] = idbuf;
	values[1] = tmo;
	values[2] = (flags & JOBQ_AWAIT_ATTEMPT) ? "attempt" : "finished";
	values[3] = (flags & JOBQ_AWAIT_CANCEL_ON_TIMEOUT) ? "true" : "false";
	res = jobq_exec_within(conn, STMT_AWAIT, 4, values, 1, timeout_ms);
	if (res == NULL)
		return JOBQ_ERR;
	if (PQntuples(res) != 1 || PQnfields(res) != NUM_COLS || PQgetisnull(res, 0, COL_STATE))
	{
		PQclear(res);
		jobq_set_error(conn, JOBQ_ERR_PROTOCOL, "unexpected result from the server");
		return JOBQ_ERR;
	}
	state = PQgetvalue(res, 0, COL_STATE);
	out->state = jobq_state_from_name(state);
	out->purged = strcmp(state, "purged_or_never") == 0;
	out->timed_out = strcmp(PQgetvalue(res, 0, COL_TIMED_OUT), "t") == 0;
	out->attempt = PQgetisnull(res, 0, COL_ATTEMPT) ? -1 : atoi(PQgetvalue(res, 0, COL_ATTEMPT));
	out->result = text_or_null(res, COL_RESULT);
	out->last_error = text_or_null(res, COL_LAST_ERROR);
	out->finished_at = text_or_null(res, COL_FINISHED_AT);
	if ((out->result == NULL && !PQgetisnull(res, 0, COL_RESULT)) ||
		(out->last_error == NULL && !PQgetisnull(res, 0, COL_LAST_ERROR)) ||
		(out->finished_at == NULL && !PQgetisnull(res, 0, COL_FINISHED_AT)))
	{
		PQclear(res);
		jobq_outcome_clear(out);
		jobq_set_error(conn, JOBQ_ERR_OOM, "out of memory");
		return JOBQ_ERR;
	}
	PQclear(res);
	return JOBQ_OK;
}
