/*-------------------------------------------------------------------------
 *
 * checkpoint.c
 *	  A running job's progress: jobq_checkpoint stores it, the next
 *	  attempt reads it with jobq_checkpoint_read (extension/checkpoint.c,
 *	  doc/flows.md "Checkpoints").
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/src/checkpoint.c
 *
 *-------------------------------------------------------------------------
 */

#include <stdlib.h>
#include <string.h>

#include "jobq-int.h"

/*
 * jobq_checkpoint: see jobq-client.h.  The size is checked here as the
 * server checks it (the JSON text is about its jsonb's size; the server
 * has the last word), so a state far too large costs no round trip.
 */
int
jobq_checkpoint(JobqConn *conn, int64_t id, const char *token, const char *state,
				size_t state_len)
{
	char		idbuf[24];
	const char *values[3];
	char	   *json;
	PGresult   *res;
	const char *v;
	int			ok;

	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	if (jobq_check_id(conn, id) != JOBQ_OK || jobq_check_token(conn, token) != JOBQ_OK)
		return JOBQ_ERR;
	if (state != NULL && state_len > JOBQ_CHECKPOINT_MAX)
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT,
					   "state is %zu bytes, over the limit of %d bytes", state_len,
					   JOBQ_CHECKPOINT_MAX);
		return JOBQ_ERR;
	}
	if ((json = jobq_copy_json(conn, "state", state, state_len)) == NULL)
		return JOBQ_ERR;
	if (jobq_require_sql(conn, JOBQ_SQL_CHECKPOINTS, "jobq_checkpoint") != JOBQ_OK)
	{
		free(json);
		return JOBQ_ERR;
	}
	snprintf(idbuf, sizeof(idbuf), "%lld", (long long) id);
	values[0] = idbuf;
	values[1] = token;
	values[2] = json;
	res = jobq_exec(conn, STMT_CHECKPOINT, 3, values, 1);
	free(json);
	if (res == NULL)
		return JOBQ_ERR;
	v = jobq_single_value(conn, res, &ok);
	if (ok && (v == NULL || strcmp(v, "t") != 0))
	{
		jobq_set_error(conn, JOBQ_ERR_STALE,
					   "job %lld: stale claim token or unknown job; checkpoint not stored",
					   (long long) id);
		ok = 0;
	}
	PQclear(res);
	return ok ? JOBQ_OK : JOBQ_ERR;
}

/*
 * jobq_checkpoint_read: see jobq-client.h.
 */
int
jobq_checkpoint_read(JobqConn *conn, int64_t id, const char *token, char **state)
{
	char		idbuf[24];
	const char *values[2];
	PGresult   *res;
	const char *v;
	int			ok;

	if (state != NULL)
		*state = NULL;
	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	if (state == NULL)
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT, "state is NULL");
		return JOBQ_ERR;
	}
	if (jobq_check_id(conn, id) != JOBQ_OK || jobq_check_token(conn, token) != JOBQ_OK)
		return JOBQ_ERR;
	if (jobq_require_sql(conn, JOBQ_SQL_CHECKPOINTS, "jobq_checkpoint_read") != JOBQ_OK)
		return JOBQ_ERR;
	snprintf(idbuf, sizeof(idbuf), "%lld", (long long) id);
	values[0] = idbuf;
	values[1] = token;
	res = jobq_exec(conn, STMT_CHECKPOINT_READ, 2, values, 1);
	if (res == NULL)
		return JOBQ_ERR;
	v = jobq_single_value(conn, res, &ok);
	if (ok && v != NULL && (*state = strdup(v)) == NULL)
	{
		jobq_set_error(conn, JOBQ_ERR_OOM, "out of memory");
		ok = 0;
	}
	PQclear(res);
	return ok ? JOBQ_OK : JOBQ_ERR;
}
