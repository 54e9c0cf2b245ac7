/*-------------------------------------------------------------------------
 *
 * rows.c
 *	  JobqRows, the result tables of the queue and inspection calls, and
 *	  their JSON rendering.
 *
 * JobqRows wraps the PGresult itself: libpq results are independent of
 * their connection, hold the server's text form of every value, and
 * carry column names and types, which is all a table printer or the JSON
 * renderer needs.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/src/rows.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "jobq-int.h"

/* Built-in type OIDs (pg_type.h is server-side; these never change) */
#define BOOLOID 16
#define INT8OID 20
#define INT2OID 21
#define INT4OID 23
#define OIDOID 26
#define FLOAT4OID 700
#define FLOAT8OID 701
#define NUMERICOID 1700
#define JSONOID 114
#define JSONBOID 3802
#define TIMESTAMPOID 1114
#define TIMESTAMPTZOID 1184

/*
 * jobq_rows_from: wrap a result (taking ownership), or NULL when out of
 * memory (res freed) or when res is NULL (error already set).
 */
JobqRows *
jobq_rows_from(JobqConn *conn, PGresult *res)
{
	JobqRows   *rows;

	if (res == NULL)
		return NULL;
	rows = malloc(sizeof(JobqRows));
	if (rows == NULL)
	{
		PQclear(res);
		jobq_set_error(conn, JOBQ_ERR_OOM, "out of memory");
		return NULL;
	}
	rows->res = res;
	return rows;
}

size_t
jobq_rows_count(const JobqRows *rows)
{
	return rows ? (size_t) PQntuples(rows->res) : 0;
}

int
jobq_rows_ncols(const JobqRows *rows)
{
	return rows ? PQnfields(rows->res) : 0;
}

const char *
jobq_rows_colname(const JobqRows *rows, int col)
{
	if (rows == NULL || col < 0 || col >= PQnfields(rows->res))
		return NULL;
	return PQfname(rows->res, col);
}

/*
 * jobq_rows_colindex: exact (case-sensitive) column lookup.  PQfnumber is
 * not used because it case-folds unquoted names.
 */
int
jobq_rows_colindex(const JobqRows *rows, const char *name)
{
	int			i;

	if (rows == NULL || name == NULL)
		return -1;
	for (i = 0; i < PQnfields(rows->res); i++)
		if (strcmp(PQfname(rows->res, i), name) == 0)
			return i;
	return -1;
}

const char *
jobq_rows_value(const JobqRows *rows, size_t row, int col)
{
	if (rows == NULL || row >= (size_t) PQntuples(rows->res) ||
		col < 0 || col >= PQnfields(rows->res) ||
		PQgetisnull(rows->res, (int) row, col))
		return NULL;
	return PQgetvalue(rows->res, (int) row, col);
}

const char *
jobq_rows_get(const JobqRows *rows, size_t row, const char *name)
{
	return jobq_rows_value(rows, row, jobq_rows_colindex(rows, name));
}

int64_t
jobq_rows_get_int64(const JobqRows *rows, size_t row, const char *name)
{
	const char *v = jobq_rows_get(rows, row, name);

	return v ? (int64_t) strtoll(v, NULL, 10) : 0;
}

/*
 * jobq_rows_json: see jobq-client.h.  Numbers go out bare unless they are
 * NaN or infinite (not JSON), which are quoted.
 */
char *
jobq_rows_json(const JobqRows *rows)
{
	JobqBuf		b;
	int			nrows = rows ? PQntuples(rows->res) : 0;
	int			ncols = rows ? PQnfields(rows->res) : 0;
	int			r,
				c;

	jobq_buf_init(&b);
	jobq_buf_append(&b, "[", 1);
	for (r = 0; r < nrows; r++)
	{
		jobq_buf_append(&b, r ? ",{" : "{", r ? 2 : 1);
		for (c = 0; c < ncols; c++)
		{
			const char *v = PQgetvalue(rows->res, r, c);
			Oid			t = PQftype(rows->res, c);

			if (c)
				jobq_buf_append(&b, ",", 1);
			jobq_buf_json_string(&b, PQfname(rows->res, c));
			jobq_buf_append(&b, ":", 1);
			if (PQgetisnull(rows->res, r, c))
				jobq_buf_puts(&b, "null");
			else if (t == BOOLOID)
				jobq_buf_puts(&b, v[0] == 't' ? "true" : "false");
			else if ((t == INT2OID || t == INT4OID || t == INT8OID || t == OIDOID ||
					  t == FLOAT4OID || t == FLOAT8OID || t == NUMERICOID) &&
					 strpbrk(v, "NnIi") == NULL)
				jobq_buf_puts(&b, v);
			else if (t == JSONOID || t == JSONBOID)
				jobq_buf_puts(&b, v);
			else if (t == TIMESTAMPOID || t == TIMESTAMPTZOID)
				jobq_buf_json_timestamp(&b, v);
			else
				jobq_buf_json_string(&b, v);
		}
		jobq_buf_append(&b, "}", 1);
	}
	jobq_buf_append(&b, "]", 1);
	if (b.failed)
	{
		jobq_buf_free(&b);
		return NULL;
	}
	return b.data;
}

void
jobq_rows_free(JobqRows *rows)
{
	if (rows == NULL)
		return;
	PQclear(rows->res);
	free(rows);
}
