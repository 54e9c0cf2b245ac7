/*-------------------------------------------------------------------------
 *
 * queues.c
 *	  Queue management: create, alter, drop, pause, resume and the list of
 *	  queues (extension/queues.c).
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/src/queues.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobq-int.h"

/*
 * The JobqQueueOpts fields in SQL argument order, with their limits, from
 * the contract's JOBQ_QUEUE_SETTINGS.  Drives the create and alter
 * parameters; a setting of kind SECONDS is the field <name>_s.
 */
typedef enum QueueOptKind
{
	KIND_SECONDS,				/* seconds -> interval */
	KIND_INTEGER,
	KIND_BOOLEAN
} QueueOptKind;

typedef struct QueueOptDesc
{
	const char *name;			/* SQL argument name */
	size_t		offset;			/* in JobqQueueOpts */
	QueueOptKind kind;
	long long	lo;
	long long	hi;
} QueueOptDesc;

#define QUEUE_FIELD_SECONDS(name) name##_s
#define QUEUE_FIELD_INTEGER(name) name
#define QUEUE_FIELD_BOOLEAN(name) name
#define QUEUE_OPT_DESC(name, kind, lo, hi, dflt) \
	{#name, offsetof(JobqQueueOpts, QUEUE_FIELD_##kind(name)), KIND_##kind, lo, hi},

static const QueueOptDesc queue_opts[] = {
	JOBQ_QUEUE_SETTINGS(QUEUE_OPT_DESC)
};

#define NQUEUE_OPTS (sizeof(queue_opts) / sizeof(queue_opts[0]))

/* NB: the statements name each setting as a parameter (conn.c) */
_Static_assert(NQUEUE_OPTS == JOBQ_QUEUE_STMT_SETTINGS,
			   "STMT_CREATE_QUEUE and STMT_ALTER_QUEUE must pass every queue setting");

/*
 * queue_opt_values: check opts (NULL: none given) and render each set
 * field as a text parameter in bufs[i] (values[i] = NULL when the field
 * is -1 or past the caller's size).
 */
static int
queue_opt_values(JobqConn *conn, const JobqQueueOpts *given,
				 char bufs[][32], const char **values)
{
	static const size_t sizes[] = JOBQ_QUEUE_OPTS_SIZES;
	JobqQueueOpts opts = JOBQ_QUEUE_OPTS_INIT;
	size_t		i;

	if (jobq_copy_opts(conn, "JobqQueueOpts", given, &opts, sizes,
					   lengthof(sizes)) != JOBQ_OK)
		return JOBQ_ERR;
	for (i = 0; i < NQUEUE_OPTS; i++)
	{
		int			v;

		memcpy(&v, (const char *) &opts + queue_opts[i].offset, sizeof(v));
		values[i] = NULL;
		if (v == -1)
			continue;
		if (jobq_check_range(conn, queue_opts[i].name, v, queue_opts[i].lo,
							 queue_opts[i].hi) != JOBQ_OK)
			return JOBQ_ERR;
		if (queue_opts[i].kind == KIND_SECONDS)
			jobq_fmt_interval(bufs[i], 32, v);
		else if (queue_opts[i].kind == KIND_BOOLEAN)
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
 * queue_settings_call
 *	  Run STMT (create or alter) with the queue and every setting, NULL for
 *	  those not given: the server then takes its default (create) or keeps
 *	  the setting (alter).
 */
static int
queue_settings_call(JobqConn *conn, JobqStmt stmt, const char *queue,
					const JobqQueueOpts *opts)
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
	return run_void(conn, stmt, NQUEUE_OPTS + 1, values);
}

/*
 * jobq_create_queue: see jobq-client.h.
 */
int
jobq_create_queue(JobqConn *conn, const char *queue, const JobqQueueOpts *opts)
{
	return queue_settings_call(conn, STMT_CREATE_QUEUE, queue, opts);
}

/*
 * jobq_alter_queue: see jobq-client.h.
 */
int
jobq_alter_queue(JobqConn *conn, const char *queue, const JobqQueueOpts *opts)
{
	return queue_settings_call(conn, STMT_ALTER_QUEUE, queue, opts);
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

