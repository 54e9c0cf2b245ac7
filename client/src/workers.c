/*-------------------------------------------------------------------------
 *
 * workers.c
 *	  The worker registry calls: jobq_worker_register, _heartbeat,
 *	  _deregister, jobq_workers and jobq_worker_signal (0.2.0 SQL).
 *
 * Each mirrors its SQL function (doc/sql.md, "Workers").  Arguments are
 * checked here as the server checks them, so that a bad one is
 * JOBQ_ERR_BAD_ARGUMENT with nothing sent; a server whose jobq SQL is
 * 0.1.0 has no registry, which is JOBQ_ERR_VERSION, also with nothing
 * sent, so that a worker can tell "not supported here" from a failure.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/src/workers.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobq-int.h"

static const size_t worker_opts_sizes[] = JOBQ_WORKER_OPTS_SIZES;

static const char *const state_names[] = {
	[JOBQ_WORKER_UNREGISTERED] = "unregistered",
	[JOBQ_WORKER_RUNNING] = "running",
	[JOBQ_WORKER_QUIET] = "quiet",
	[JOBQ_WORKER_STOPPING] = "stopping",
};

const char *
jobq_worker_state_name(JobqWorkerState state)
{
	if ((int) state < 0 || (size_t) state >= lengthof(state_names))
		return "unknown";
	return state_names[state];
}

/* the state named s, or -1 */
static int
state_from_name(const char *s)
{
	for (size_t i = 0; i < lengthof(state_names); i++)
		if (strcmp(s, state_names[i]) == 0)
			return (int) i;
	return -1;
}

/*
 * registry_available: the server has the registry; else JOBQ_ERR_VERSION.
 * A server whose version could not be read (server_sql 0) is tried.
 */
static int
registry_available(JobqConn *conn)
{
	return jobq_require_sql(conn, JOBQ_SQL_WORKERS, "the worker registry");
}

/* a worker id: the text form of a uuid (the server parses it) */
static int
check_worker_id(JobqConn *conn, const char *what, const char *id)
{
	if (id == NULL || strlen(id) != JOBQ_WORKER_ID_LEN)
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT, "%s must be a worker id of %d characters",
					   what, JOBQ_WORKER_ID_LEN);
		return JOBQ_ERR;
	}
	return JOBQ_OK;
}

/* a label of 1..JOBQ_WORKER_NAME_MAX bytes, or NULL when may_be_null */
static int
check_label(JobqConn *conn, const char *what, const char *s, int may_be_null)
{
	size_t		len;

	if (s == NULL && may_be_null)
		return JOBQ_OK;
	len = s ? strlen(s) : 0;
	if (len == 0 || len > JOBQ_WORKER_NAME_MAX)
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT, "%s must be 1 to %d bytes long",
					   what, JOBQ_WORKER_NAME_MAX);
		return JOBQ_ERR;
	}
	return JOBQ_OK;
}

int
jobq_worker_register(JobqConn *conn, const char *name, const JobqWorkerOpts *given,
					 char *worker_id, int *heartbeat_ms)
{
	JobqWorkerOpts opts = JOBQ_WORKER_OPTS_INIT;
	char		pid[16],
				slots[16],
				timeout[24];
	const char *values[9];
	JobqBuf		arr;
	PGresult   *res;
	int			rc = JOBQ_ERR;

	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	if (worker_id == NULL)
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT, "worker_id must not be NULL");
		return JOBQ_ERR;
	}
	if (jobq_copy_opts(conn, "JobqWorkerOpts", given, &opts, worker_opts_sizes,
					   lengthof(worker_opts_sizes)) != JOBQ_OK ||
		check_label(conn, "name", name, 0) != JOBQ_OK ||
		check_label(conn, "host", opts.host, 1) != JOBQ_OK ||
		check_label(conn, "version", opts.version, 1) != JOBQ_OK ||
		jobq_check_range(conn, "pid", opts.pid, 0, 0x7fffffff) != JOBQ_OK ||
		jobq_check_range(conn, "slots", opts.slots, 0, JOBQ_WORKER_SLOTS_MAX) != JOBQ_OK ||
		jobq_check_range(conn, "nqueues", opts.nqueues, 0, JOBQ_CLAIM_QUEUES_MAX) != JOBQ_OK)
		return JOBQ_ERR;
	if (opts.timeout_s != 0 &&
		jobq_check_range(conn, "timeout_s", opts.timeout_s, JOBQ_WORKER_TIMEOUT_MIN_S,
						 JOBQ_WORKER_TIMEOUT_MAX_S) != JOBQ_OK)
		return JOBQ_ERR;
	if (opts.worker_id != NULL && check_worker_id(conn, "worker_id", opts.worker_id) != JOBQ_OK)
		return JOBQ_ERR;
	for (int i = 0; i < opts.nqueues; i++)
		if (jobq_check_queue(conn, opts.queues[i]) != JOBQ_OK)
			return JOBQ_ERR;
	if (registry_available(conn) != JOBQ_OK)
		return JOBQ_ERR;

	jobq_buf_init(&arr);
	if (opts.nqueues > 0)
	{
		jobq_buf_append(&arr, "{", 1);
		for (int i = 0; i < opts.nqueues; i++)
			jobq_buf_array_elem(&arr, opts.queues[i], strlen(opts.queues[i]));
		jobq_buf_append(&arr, "}", 1);
		if (arr.failed)
		{
			jobq_buf_free(&arr);
			jobq_set_error(conn, JOBQ_ERR_OOM, "out of memory");
			return JOBQ_ERR;
		}
	}
	snprintf(pid, sizeof(pid), "%d", opts.pid);
	snprintf(slots, sizeof(slots), "%d", opts.slots);
	snprintf(timeout, sizeof(timeout), "%d seconds", opts.timeout_s);
	values[0] = name;
	values[1] = opts.host;
	values[2] = opts.pid > 0 ? pid : NULL;
	values[3] = opts.nqueues > 0 ? arr.data : NULL;
	values[4] = opts.slots > 0 ? slots : NULL;
	values[5] = opts.version;
	values[6] = opts.metadata;
	values[7] = opts.timeout_s > 0 ? timeout : NULL;
	values[8] = opts.worker_id;
	res = jobq_exec(conn, STMT_WORKER_REGISTER, 9, values, 1);
	jobq_buf_free(&arr);
	if (res == NULL)
		return JOBQ_ERR;
	if (PQntuples(res) != 1 || PQnfields(res) != 2 || PQgetisnull(res, 0, 0) ||
		strlen(PQgetvalue(res, 0, 0)) != JOBQ_WORKER_ID_LEN)
		jobq_set_error(conn, JOBQ_ERR_PROTOCOL, "unexpected result from jobq_worker_register");
	else
	{
		memcpy(worker_id, PQgetvalue(res, 0, 0), JOBQ_WORKER_ID_LEN + 1);
		if (heartbeat_ms != NULL)
			*heartbeat_ms = atoi(PQgetvalue(res, 0, 1));
		rc = JOBQ_OK;
	}
	PQclear(res);
	return rc;
}

int
jobq_worker_heartbeat(JobqConn *conn, const char *worker_id, int busy,
					  JobqWorkerState own, const char *metadata)
{
	char		busybuf[16];
	const char *values[4];
	const char *v;
	PGresult   *res;
	int			ok;
	int			state;

	if (conn == NULL)
		return -1;
	jobq_clear_error(conn);
	if (check_worker_id(conn, "worker_id", worker_id) != JOBQ_OK ||
		jobq_check_range(conn, "busy", busy, -1, JOBQ_WORKER_SLOTS_MAX) != JOBQ_OK ||
		jobq_check_range(conn, "own", own, JOBQ_WORKER_UNREGISTERED, JOBQ_WORKER_STOPPING) != JOBQ_OK ||
		registry_available(conn) != JOBQ_OK)
		return -1;
	snprintf(busybuf, sizeof(busybuf), "%d", busy);
	values[0] = worker_id;
	values[1] = busy >= 0 ? busybuf : NULL;
	values[2] = own == JOBQ_WORKER_QUIET || own == JOBQ_WORKER_STOPPING ?
		state_names[own] : NULL;
	values[3] = metadata;
	res = jobq_exec(conn, STMT_WORKER_HEARTBEAT, 4, values, 1);
	if (res == NULL)
		return -1;
	v = jobq_single_value(conn, res, &ok);
	state = ok && v != NULL ? state_from_name(v) : -1;
	if (ok && state < 0)
		jobq_set_error(conn, JOBQ_ERR_PROTOCOL, "unexpected worker state \"%.32s\"",
					   v ? v : "(null)");
	PQclear(res);
	return state;
}

int
jobq_worker_deregister(JobqConn *conn, const char *worker_id)
{
	const char *values[1];
	const char *v;
	PGresult   *res;
	int			ok;

	if (conn == NULL)
		return -1;
	jobq_clear_error(conn);
	if (check_worker_id(conn, "worker_id", worker_id) != JOBQ_OK || registry_available(conn) != JOBQ_OK)
		return -1;
	values[0] = worker_id;
	res = jobq_exec(conn, STMT_WORKER_DEREGISTER, 1, values, 1);
	if (res == NULL)
		return -1;
	v = jobq_single_value(conn, res, &ok);
	ok = ok ? (v != NULL && v[0] == 't') : -1;
	PQclear(res);
	return ok;
}

JobqRows *
jobq_workers(JobqConn *conn)
{
	if (conn == NULL)
		return NULL;
	jobq_clear_error(conn);
	if (registry_available(conn) != JOBQ_OK)
		return NULL;
	return jobq_rows_from(conn, jobq_exec(conn, STMT_WORKERS, 0, NULL, 1));
}

JobqRows *
jobq_queue_consumers(JobqConn *conn)
{
	if (conn == NULL)
		return NULL;
	jobq_clear_error(conn);
	if (registry_available(conn) != JOBQ_OK)
		return NULL;
	return jobq_rows_from(conn, jobq_exec(conn, STMT_QUEUE_CONSUMERS, 0, NULL, 1));
}

int
jobq_worker_signal(JobqConn *conn, const char *target, const char *signal)
{
	const char *values[2];
	const char *v;
	PGresult   *res;
	int			ok;
	int			n = -1;

	if (conn == NULL)
		return -1;
	jobq_clear_error(conn);
	if (check_label(conn, "target", target, 0) != JOBQ_OK)
		return -1;
	if (signal == NULL ||
		(strcmp(signal, "quiet") != 0 && strcmp(signal, "stop") != 0 &&
		 strcmp(signal, "resume") != 0))
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT,
					   "signal must be quiet, stop or resume, not \"%.32s\"",
					   signal ? signal : "(null)");
		return -1;
	}
	if (registry_available(conn) != JOBQ_OK)
		return -1;
	values[0] = target;
	values[1] = signal;
	res = jobq_exec(conn, STMT_WORKER_SIGNAL, 2, values, 1);
	if (res == NULL)
		return -1;
	v = jobq_single_value(conn, res, &ok);
	if (ok && v != NULL)
		n = atoi(v);
	PQclear(res);
	return n;
}
