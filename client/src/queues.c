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
 * the contract's JOBQ_QUEUE_SETTINGS and JOBQ_QUEUE_SETTINGS_020.  Drives
 * the create and alter parameters; a setting of kind SECONDS is the int
 * field <name>_s, one of kind CHOICE the string field <name>.
 */
typedef enum QueueOptKind
{
	KIND_SECONDS,				/* seconds -> interval */
	KIND_INTEGER,
	KIND_BOOLEAN,
	KIND_CHOICE					/* const char *, one of choices */
} QueueOptKind;

typedef struct QueueOptDesc
{
	const char *name;			/* SQL argument name */
	size_t		offset;			/* in JobqQueueOpts */
	QueueOptKind kind;
	long long	lo;
	long long	hi;
	const char *const *choices; /* KIND_CHOICE: NULL-terminated */
} QueueOptDesc;

#define QUEUE_FIELD_SECONDS(name) name##_s
#define QUEUE_FIELD_INTEGER(name) name
#define QUEUE_FIELD_BOOLEAN(name) name
#define QUEUE_FIELD_CHOICE(name) name
#define CHOICE_VALUE(value) #value,
#define QUEUE_CHOICES_SECONDS(name) NULL
#define QUEUE_CHOICES_INTEGER(name) NULL
#define QUEUE_CHOICES_BOOLEAN(name) NULL
#define QUEUE_CHOICES_CHOICE(name) \
	((const char *const[]) {JOBQ_CHOICES_##name(CHOICE_VALUE) NULL})
#define QUEUE_OPT_DESC(name, kind, lo, hi, dflt) \
	{#name, offsetof(JobqQueueOpts, QUEUE_FIELD_##kind(name)), KIND_##kind, lo, hi, \
	 QUEUE_CHOICES_##kind(name)},

static const QueueOptDesc queue_opts[] = {
	JOBQ_QUEUE_SETTINGS(QUEUE_OPT_DESC)
	JOBQ_QUEUE_SETTINGS_020(QUEUE_OPT_DESC)
};

#define NQUEUE_OPTS (sizeof(queue_opts) / sizeof(queue_opts[0]))

/* NB: the statements name each setting as a parameter (conn.c) */
_Static_assert(NQUEUE_OPTS == JOBQ_QUEUE_STMT_SETTINGS_020,
			   "STMT_CREATE_QUEUE_020 and STMT_ALTER_QUEUE_020 must pass every queue setting");

/*
 * queue_opt_values: check opts (NULL: none given) and render each set
 * field as a text parameter in bufs[i] (values[i] = NULL when the field
 * is -1 or NULL, or past the caller's size).  *given_020: whether any
 * setting of 0.2.0 was given.
 */
static int
queue_opt_values(JobqConn *conn, const JobqQueueOpts *given,
				 char bufs[][32], const char **values, int *given_020)
{
	static const size_t sizes[] = JOBQ_QUEUE_OPTS_SIZES;
	JobqQueueOpts opts = JOBQ_QUEUE_OPTS_INIT;
	size_t		i;

	*given_020 = 0;
	if (jobq_copy_opts(conn, "JobqQueueOpts", given, &opts, sizes,
					   lengthof(sizes)) != JOBQ_OK)
		return JOBQ_ERR;
	for (i = 0; i < NQUEUE_OPTS; i++)
	{
		const QueueOptDesc *d = &queue_opts[i];
		const char *field = (const char *) &opts + d->offset;
		int			v;

		values[i] = NULL;
		if (d->kind == KIND_CHOICE)
		{
			const char *c;
			size_t		k;

			memcpy(&c, field, sizeof(c));
			if (c == NULL)
				continue;
			for (k = 0; d->choices[k] != NULL && strcmp(d->choices[k], c) != 0; k++)
				;
			if (d->choices[k] == NULL)
			{
				char		list[128] = "";

				for (k = 0; d->choices[k] != NULL; k++)
					snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
							 k ? ", " : "", d->choices[k]);
				jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT, "%s must be one of %s, not \"%.64s\"",
							   d->name, list, c);
				return JOBQ_ERR;
			}
			values[i] = d->choices[k];
		}
		else
		{
			memcpy(&v, field, sizeof(v));
			if (v == -1)
				continue;
			if (jobq_check_range(conn, d->name, v, d->lo, d->hi) != JOBQ_OK)
				return JOBQ_ERR;
			if (d->kind == KIND_SECONDS)
				jobq_fmt_interval(bufs[i], 32, v);
			else if (d->kind == KIND_BOOLEAN)
				snprintf(bufs[i], 32, "%s", v ? "true" : "false");
			else
				snprintf(bufs[i], 32, "%d", v);
			values[i] = bufs[i];
		}
		if (i >= JOBQ_QUEUE_STMT_SETTINGS)
			*given_020 = 1;
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
 *	  the setting (alter).  A server on 0.1.0's SQL gets the 0.1.0
 *	  settings only (STMT), and a setting of 0.2.0 given to it is refused;
 *	  any other (or one whose release could not be read) all of them
 *	  (STMT_020).
 */
static int
queue_settings_call(JobqConn *conn, JobqStmt stmt, JobqStmt stmt_020, const char *queue,
					const JobqQueueOpts *opts)
{
	char		bufs[NQUEUE_OPTS][32];
	const char *values[NQUEUE_OPTS + 1];
	int			given_020;
	int			old_sql;

	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	if (jobq_check_queue(conn, queue) != JOBQ_OK ||
		queue_opt_values(conn, opts, bufs, values + 1, &given_020) != JOBQ_OK)
		return JOBQ_ERR;
	if (jobq_ensure_connected(conn) != JOBQ_OK)
		return JOBQ_ERR;
	old_sql = conn->server_sql != 0 && conn->server_sql < JOBQ_SQL_QUEUE_SETTINGS;
	if (old_sql && given_020)
	{
		jobq_set_error(conn, JOBQ_ERR_VERSION,
					   "the server's jobq SQL has no queue settings of 0.2.0 "
					   "(ALTER EXTENSION jobq UPDATE adds them)");
		return JOBQ_ERR;
	}
	values[0] = queue;
	if (old_sql)
		return run_void(conn, stmt, JOBQ_QUEUE_STMT_SETTINGS + 1, values);
	return run_void(conn, stmt_020, NQUEUE_OPTS + 1, values);
}

/*
 * jobq_create_queue: see jobq-client.h.
 */
int
jobq_create_queue(JobqConn *conn, const char *queue, const JobqQueueOpts *opts)
{
	return queue_settings_call(conn, STMT_CREATE_QUEUE, STMT_CREATE_QUEUE_020, queue, opts);
}

/*
 * jobq_alter_queue: see jobq-client.h.
 */
int
jobq_alter_queue(JobqConn *conn, const char *queue, const JobqQueueOpts *opts)
{
	return queue_settings_call(conn, STMT_ALTER_QUEUE, STMT_ALTER_QUEUE_020, queue, opts);
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

