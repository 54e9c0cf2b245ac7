/*-------------------------------------------------------------------------
 *
 * admin.c
 *	  Queue management (create, alter, drop, pause, resume, list), the
 *	  operating calls (stats, job detail, list, retry, cancel, purge) and
 *	  the JobqRows result tables they return.
 *
 * JobqRows wraps the PGresult itself: libpq results are independent of
 * their connection, hold the server's text form of every value, and
 * carry column names and types, which is all a table printer or the JSON
 * renderer needs.
 *
 * Copyright (c) 2025, jobq authors
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
 * json_timestamp: a timestamp in ISO DateStyle ("2026-01-02 03:04:05.6+00")
 * as PostgreSQL's own JSON conversion writes it ("2026-01-02T03:04:05.6+00:00"),
 * so that jobq_rows_json and row_to_json agree.  Other styles (and BC
 * dates, infinity) go out as the plain quoted text.
 */
static void
json_timestamp(JobqBuf *b, const char *v)
{
	char		tmp[64];
	size_t		len = strlen(v);
	size_t		sign;

	if (len < 19 || len + 4 >= sizeof(tmp) || v[10] != ' ' || v[4] != '-' ||
		strchr(v, 'B') != NULL)
	{
		jobq_buf_json_string(b, v);
		return;
	}
	memcpy(tmp, v, len + 1);
	tmp[10] = 'T';
	/* a zone offset of hours only ("+00", "-03") gets its minutes */
	sign = strcspn(tmp + 19, "+-") + 19;
	if (sign < len && len - sign == 3)
		memcpy(tmp + len, ":00", 4);
	jobq_buf_json_string(b, tmp);
}

/*
 * The JobqQueueOpts fields in SQL argument order, with their limits.
 * Drives both the create statement and the alter parameters.
 */
typedef struct QueueOptDesc
{
	const char *name;			/* SQL argument name */
	size_t		offset;			/* in JobqQueueOpts */
	int			interval;		/* 1 = seconds -> interval, 0 = integer */
	long long	lo;
	long long	hi;
} QueueOptDesc;

static const QueueOptDesc queue_opts[] = {
	{"lease", offsetof(JobqQueueOpts, lease_s), 1, JOBQ_LEASE_MIN_S, JOBQ_LEASE_MAX_S},
	{"max_attempts", offsetof(JobqQueueOpts, max_attempts), 0, 1, JOBQ_MAX_ATTEMPTS_MAX},
	{"backoff_base", offsetof(JobqQueueOpts, backoff_base_s), 1, 0, 86400},
	{"backoff_cap", offsetof(JobqQueueOpts, backoff_cap_s), 1, 0, JOBQ_DELAY_MAX_S},
	{"completed_retention", offsetof(JobqQueueOpts, completed_retention_s), 1, 0,
	JOBQ_RETENTION_MAX_S},
	{"dead_retention", offsetof(JobqQueueOpts, dead_retention_s), 1, 0,
	JOBQ_RETENTION_MAX_S},
	{"notify", offsetof(JobqQueueOpts, notify), 2, 0, 1},
};

#define NQUEUE_OPTS (sizeof(queue_opts) / sizeof(queue_opts[0]))

/*
 * queue_opt_values: check opts and render each set field as a text
 * parameter in bufs[i] (values[i] = NULL when the field is -1).
 */
static int
queue_opt_values(JobqConn *conn, const JobqQueueOpts *opts,
				 char bufs[][32], const char **values)
{
	size_t		i;

	for (i = 0; i < NQUEUE_OPTS; i++)
	{
		int			v = opts ? *(const int *) ((const char *) opts + queue_opts[i].offset) : -1;

		values[i] = NULL;
		if (v == -1)
			continue;
		if (jobq_check_range(conn, queue_opts[i].name, v, queue_opts[i].lo,
							 queue_opts[i].hi) != JOBQ_OK)
			return JOBQ_ERR;
		if (queue_opts[i].interval == 1)
			jobq_fmt_interval(bufs[i], 32, v);
		else if (queue_opts[i].interval == 2)
			snprintf(bufs[i], 32, "%s", v ? "true" : "false");
		else
			snprintf(bufs[i], 32, "%d", v);
		values[i] = bufs[i];
	}
	return JOBQ_OK;
}

/* run_void: execute a statement whose only output is success. */
static int
run_void(JobqConn *conn, JobqStmt stmt, int nparams, const char *const *values)
{
	PGresult   *res = jobq_exec(conn, stmt, nparams, values, 1);

	if (res == NULL)
		return JOBQ_ERR;
	PQclear(res);
	return JOBQ_OK;
}

/*
 * jobq_create_queue: see jobq-client.h.
 *
 * Unset options must take the *server's* defaults, and passing NULL would
 * not do that, so the statement names only the options given
 * ("lease => $2 ...").  It is assembled from constant fragments (argument
 * names and casts from queue_opts), never from caller text; values still
 * travel as parameters.
 */
int
jobq_create_queue(JobqConn *conn, const char *queue, const JobqQueueOpts *opts)
{
	char		bufs[NQUEUE_OPTS][32];
	const char *optvals[NQUEUE_OPTS];
	const char *values[NQUEUE_OPTS + 1];
	JobqBuf		sql;
	PGresult   *res;
	size_t		i;
	int			np = 1;

	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	if (jobq_check_queue(conn, queue) != JOBQ_OK ||
		queue_opt_values(conn, opts, bufs, optvals) != JOBQ_OK)
		return JOBQ_ERR;
	if (jobq_ensure_connected(conn) != JOBQ_OK)
		return JOBQ_ERR;

	jobq_buf_init(&sql);
	jobq_buf_printf(&sql, "SELECT %s.jobq_create_queue($1::pg_catalog.text",
					conn->qschema);
	values[0] = queue;
	for (i = 0; i < NQUEUE_OPTS; i++)
	{
		if (optvals[i] == NULL)
			continue;
		values[np++] = optvals[i];
		jobq_buf_printf(&sql, ", %s => $%d::pg_catalog.%s", queue_opts[i].name, np,
						queue_opts[i].interval == 1 ? "interval" :
						queue_opts[i].interval == 2 ? "bool" : "int4");
	}
	jobq_buf_append(&sql, ")", 1);
	if (sql.failed)
	{
		jobq_buf_free(&sql);
		jobq_set_error(conn, JOBQ_ERR_OOM, "out of memory");
		return JOBQ_ERR;
	}
	res = jobq_exec_sql(conn, sql.data, np, values);
	jobq_buf_free(&sql);
	if (res == NULL)
		return JOBQ_ERR;
	PQclear(res);
	return JOBQ_OK;
}

int
jobq_alter_queue(JobqConn *conn, const char *queue, const JobqQueueOpts *opts)
{
	char		bufs[NQUEUE_OPTS][32];
	const char *values[NQUEUE_OPTS + 1];

	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	if (jobq_check_queue(conn, queue) != JOBQ_OK ||
		queue_opt_values(conn, opts, bufs, values + 1) != JOBQ_OK)
		return JOBQ_ERR;
	values[0] = queue;
	return run_void(conn, STMT_ALTER_QUEUE, NQUEUE_OPTS + 1, values);
}

int
jobq_drop_queue(JobqConn *conn, const char *queue, int force)
{
	const char *values[2];

	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	if (jobq_check_queue(conn, queue) != JOBQ_OK)
		return JOBQ_ERR;
	values[0] = queue;
	values[1] = force ? "true" : "false";
	return run_void(conn, STMT_DROP_QUEUE, 2, values);
}

int
jobq_pause(JobqConn *conn, const char *queue)
{
	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	if (jobq_check_queue(conn, queue) != JOBQ_OK)
		return JOBQ_ERR;
	return run_void(conn, STMT_PAUSE, 1, &queue);
}

int
jobq_resume(JobqConn *conn, const char *queue)
{
	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	if (jobq_check_queue(conn, queue) != JOBQ_OK)
		return JOBQ_ERR;
	return run_void(conn, STMT_RESUME, 1, &queue);
}

/* rows_from: wrap a result (taking ownership), or NULL when out of memory */
static JobqRows *
rows_from(JobqConn *conn, PGresult *res)
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

JobqRows *
jobq_queues(JobqConn *conn)
{
	if (conn == NULL)
		return NULL;
	jobq_clear_error(conn);
	return rows_from(conn, jobq_exec(conn, STMT_QUEUES, 0, NULL, 1));
}

JobqRows *
jobq_stats(JobqConn *conn, const char *queue)
{
	if (conn == NULL)
		return NULL;
	jobq_clear_error(conn);
	if (queue != NULL && jobq_check_queue(conn, queue) != JOBQ_OK)
		return NULL;
	return rows_from(conn, jobq_exec(conn, STMT_STATS, 1, &queue, 1));
}

/* job_lookup: the jobq_job row of id, or NULL (error set, NOT_FOUND when
 * there is no such job). */
static JobqRows *
job_lookup(JobqConn *conn, int64_t id)
{
	char		idbuf[24];
	const char *values[1];
	PGresult   *res;

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
	return rows_from(conn, res);
}

JobqRows *
jobq_job_info(JobqConn *conn, int64_t id)
{
	if (conn == NULL)
		return NULL;
	jobq_clear_error(conn);
	if (jobq_check_id(conn, id) != JOBQ_OK)
		return NULL;
	return job_lookup(conn, id);
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
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT,
					   "invalid state \"%.32s\": expected ready, delayed, running, "
					   "completed, dead or cancelled", state);
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
	return rows_from(conn, jobq_exec(conn, STMT_LIST, 3, values, 1));
}

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

	info = job_lookup(conn, id);
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
	if (state != NULL && st != JOBQ_STATE_COMPLETED && st != JOBQ_STATE_DEAD &&
		st != JOBQ_STATE_CANCELLED)
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT,
					   "invalid state \"%.32s\": only completed, dead or cancelled "
					   "jobs can be purged", state);
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

/* ----------------------------------------------------------------------
 * JobqRows
 * ---------------------------------------------------------------------- */

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
				json_timestamp(&b, v);
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
