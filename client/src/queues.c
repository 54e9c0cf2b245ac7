/*-------------------------------------------------------------------------
 *
 * queues.c
 *	  Queue management: create, alter, drop, pause, resume and the list of
 *	  queues (extension/queues.c).
 *
 * Copyright (c) 2025, jobq authors
 *
 * IDENTIFICATION
 *	  client/src/queues.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>

#include "jobq-int.h"

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
 * jobq_create_queue: see jobq-client.h.  Every setting is passed, NULL
 * for those not given: the server then takes its default.
 */
int
jobq_create_queue(JobqConn *conn, const char *queue, const JobqQueueOpts *opts)
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
	return run_void(conn, STMT_CREATE_QUEUE, NQUEUE_OPTS + 1, values);
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


JobqRows *
jobq_queues(JobqConn *conn)
{
	if (conn == NULL)
		return NULL;
	jobq_clear_error(conn);
	return jobq_rows_from(conn, jobq_exec(conn, STMT_QUEUES, 0, NULL, 1));
}

