/*-------------------------------------------------------------------------
 *
 * flows.c
 *	  The dependency results of a running job in a flow (jobq_dep_results,
 *	  extension/flows.c; doc/flows.md, "Results"), of one job or of the
 *	  jobs of a claim in one round trip.
 *
 * Which claimed jobs can have results is in the claim (jobq_job_flow_id,
 * claim.c): a caller asks only for those, so jobs outside flows cost no
 * call at all.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/src/flows.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobq-int.h"

/*
 * jobq_dep_results: see jobq-client.h.
 */
int
jobq_dep_results(JobqConn *conn, int64_t id, const char *token, char **results)
{
	char		idbuf[24];
	const char *values[2];
	const char *v;
	PGresult   *res;
	int			ok;

	if (results != NULL)
		*results = NULL;
	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	if (results == NULL)
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT, "results must not be NULL");
		return JOBQ_ERR;
	}
	if (jobq_check_id(conn, id) != JOBQ_OK || jobq_check_token(conn, token) != JOBQ_OK ||
		jobq_require_sql(conn, JOBQ_SQL_FLOWS, "jobq_dep_results") != JOBQ_OK)
		return JOBQ_ERR;
	snprintf(idbuf, sizeof(idbuf), "%lld", (long long) id);
	values[0] = idbuf;
	values[1] = token;
	res = jobq_exec(conn, STMT_DEP_RESULTS, 2, values, 1);
	if (res == NULL)
		return JOBQ_ERR;
	v = jobq_single_value(conn, res, &ok);
	if (ok && v == NULL)
	{
		jobq_set_error(conn, JOBQ_ERR_STALE,
					   "job %lld: stale claim token or unknown job; no results read",
					   (long long) id);
		ok = 0;
	}
	if (ok && (*results = jobq_strdup(v)) == NULL)
	{
		jobq_set_error(conn, JOBQ_ERR_OOM, "out of memory");
		ok = 0;
	}
	PQclear(res);
	return ok ? JOBQ_OK : JOBQ_ERR;
}

/*
 * jobq_dep_results_many: see jobq-client.h.
 */
int
jobq_dep_results_many(JobqConn *conn, size_t n, const int64_t *ids,
					  const char *const *tokens, char **results)
{
	JobqBuf		idarr,
				tokarr;
	const char *values[2];
	PGresult   *res = NULL;
	int			rc = JOBQ_ERR;
	size_t		i;

	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	if (ids == NULL || tokens == NULL || results == NULL)
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT, "ids, tokens and results must not be NULL");
		return JOBQ_ERR;
	}
	if (jobq_check_range(conn, "number of jobs", (long long) n, 1, JOBQ_CLAIM_MAX) != JOBQ_OK)
		return JOBQ_ERR;
	for (i = 0; i < n; i++)
		results[i] = NULL;
	jobq_buf_init(&idarr);
	jobq_buf_init(&tokarr);
	jobq_buf_append(&idarr, "{", 1);
	jobq_buf_append(&tokarr, "{", 1);
	for (i = 0; i < n; i++)
	{
		if (jobq_check_id(conn, ids[i]) != JOBQ_OK ||
			jobq_check_token(conn, tokens[i]) != JOBQ_OK)
			goto done;
		jobq_buf_printf(&idarr, "%s%lld", i ? "," : "", (long long) ids[i]);
		jobq_buf_array_elem(&tokarr, tokens[i], strlen(tokens[i]));
	}
	jobq_buf_append(&idarr, "}", 1);
	jobq_buf_append(&tokarr, "}", 1);
	if (idarr.failed || tokarr.failed)
	{
		jobq_set_error(conn, JOBQ_ERR_OOM, "out of memory");
		goto done;
	}
	if (jobq_require_sql(conn, JOBQ_SQL_FLOWS, "jobq_dep_results_many") != JOBQ_OK)
		goto done;
	values[0] = idarr.data;
	values[1] = tokarr.data;
	res = jobq_exec(conn, STMT_DEP_RESULTS_MANY, 2, values, 1);
	if (res == NULL)
		goto done;
	if (PQntuples(res) != (int) n || PQnfields(res) != 1)
	{
		jobq_set_error(conn, JOBQ_ERR_PROTOCOL,
					   "dependency results: %d rows for %zu jobs", PQntuples(res), n);
		goto done;
	}
	for (i = 0; i < n; i++)
	{
		if (PQgetisnull(res, (int) i, 0))
			continue;			/* stale */
		if ((results[i] = jobq_strdup(PQgetvalue(res, (int) i, 0))) == NULL)
		{
			jobq_set_error(conn, JOBQ_ERR_OOM, "out of memory");
			for (size_t k = 0; k < i; k++)
			{
				free(results[k]);
				results[k] = NULL;
			}
			goto done;
		}
	}
	rc = JOBQ_OK;
done:
	PQclear(res);
	jobq_buf_free(&idarr);
	jobq_buf_free(&tokarr);
	return rc;
}
