/*-------------------------------------------------------------------------
 *
 * job.c
 *	  Producing and consuming: enqueue (single and batch), claim, complete
 *	  (single, batch, and pipelined with the next claim), fail, extend,
 *	  release, sweep, and the JobqJob / JobqJobList objects.
 *
 * A claimed job carries its claim token: the proof that this worker holds
 * the job's lease.  complete, fail, extend and release present it; a
 * stale token (the lease ran out and the job was swept or claimed again)
 * makes the server change nothing, which this library reports as
 * JOBQ_ERR_STALE so that it cannot be mistaken for success.
 *
 * Payloads are JSON text passed with an explicit length.  libpq sends
 * text parameters as NUL-terminated strings, so a payload is copied into
 * a terminated buffer after checking it holds no NUL byte: otherwise a
 * payload with an embedded NUL would be cut short silently.
 *
 * Copyright (c) 2025, jobq authors
 *
 * IDENTIFICATION
 *	  client/src/job.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobq-int.h"

/* Column numbers of a claim result (CLAIM_COLUMNS in conn.c) */
#define CLAIM_COL_ID 0
#define CLAIM_COL_QUEUE 1
#define CLAIM_COL_PAYLOAD 2
#define CLAIM_COL_ATTEMPT 3
#define CLAIM_COL_MAX_ATTEMPTS 4
#define CLAIM_COL_TOKEN 5
#define CLAIM_COL_LOCKED_UNTIL 6
#define CLAIM_COL_ENQUEUED_AT 7
#define CLAIM_COL_LEASE_LEFT 8
#define CLAIM_NCOLS 9

#define MAX_QUEUES_PER_CLAIM 1000

/*
 * jobq_copy_json: check a JSON argument and return a NUL-terminated copy
 * (caller frees), or NULL with the error set.  The JSON itself is not
 * parsed here: the server's parser is the authority (22P02).
 */
char *
jobq_copy_json(JobqConn *conn, const char *what, const char *text, size_t len)
{
	char	   *copy;
	const char *nul;

	if (text == NULL)
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT, "%s is NULL", what);
		return NULL;
	}
	if (len > JOBQ_PAYLOAD_HARD_MAX)
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT,
					   "%s is %zu bytes, above the hard limit of %d bytes",
					   what, len, JOBQ_PAYLOAD_HARD_MAX);
		return NULL;
	}
	nul = memchr(text, '\0', len);
	if (nul != NULL)
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT,
					   "%s contains a NUL byte at offset %zu (JSON text cannot)",
					   what, (size_t) (nul - text));
		return NULL;
	}
	copy = malloc(len + 1);
	if (copy == NULL)
	{
		jobq_set_error(conn, JOBQ_ERR_OOM, "out of memory");
		return NULL;
	}
	memcpy(copy, text, len);
	copy[len] = '\0';
	return copy;
}

/* jobq_fmt_interval: an interval literal for a number of seconds. */
void
jobq_fmt_interval(char *buf, size_t size, int seconds)
{
	snprintf(buf, size, "%d seconds", seconds);
}

/*
 * parse_int64: a server integer in text form.  The server only sends
 * well-formed integers; anything else is a protocol error.
 */
static int
parse_int64(JobqConn *conn, const char *s, int64_t *out)
{
	char	   *end;
	long long	v;

	if (s == NULL || *s == '\0')
		goto bad;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0')
		goto bad;
	*out = (int64_t) v;
	return JOBQ_OK;
bad:
	jobq_set_error(conn, JOBQ_ERR_PROTOCOL, "unexpected integer from server: \"%s\"",
				   s ? s : "(null)");
	return JOBQ_ERR;
}

/*
 * single_value: the result must have exactly one row and one column;
 * returns its value (NULL for SQL NULL) and sets *ok.
 */
static const char *
single_value(JobqConn *conn, const PGresult *res, int *ok)
{
	if (PQntuples(res) != 1 || PQnfields(res) != 1)
	{
		jobq_set_error(conn, JOBQ_ERR_PROTOCOL,
					   "expected one value from the server, got %d rows of %d columns",
					   PQntuples(res), PQnfields(res));
		*ok = 0;
		return NULL;
	}
	*ok = 1;
	return PQgetisnull(res, 0, 0) ? NULL : PQgetvalue(res, 0, 0);
}

/*
 * check_enqueue_opts: validate opts (never NULL here) for a call that
 * enqueues; allow_key = 0 for the batch form, whose keys come separately.
 * Fills the interval buffer and the text forms of the numbers.
 */
static int
check_enqueue_opts(JobqConn *conn, const JobqEnqueueOpts *opts, int allow_key,
				   char *delay, char *prio, char *maxatt)
{
	if (opts->delay_s != -1 &&
		jobq_check_range(conn, "delay_s", opts->delay_s, 0, JOBQ_DELAY_MAX_S) != JOBQ_OK)
		return JOBQ_ERR;
	if (opts->run_at != NULL && opts->delay_s != -1)
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT,
					   "give run_at or delay_s, not both");
		return JOBQ_ERR;
	}
	if (opts->run_at != NULL && (opts->run_at[0] == '\0' || strlen(opts->run_at) > 128))
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT,
					   "run_at must be a timestamp literal of 1 to 128 bytes");
		return JOBQ_ERR;
	}
	if (jobq_check_range(conn, "priority", opts->priority,
						 JOBQ_PRIORITY_MIN, JOBQ_PRIORITY_MAX) != JOBQ_OK)
		return JOBQ_ERR;
	if (opts->max_attempts != -1 &&
		jobq_check_range(conn, "max_attempts", opts->max_attempts, 1,
						 JOBQ_MAX_ATTEMPTS_MAX) != JOBQ_OK)
		return JOBQ_ERR;
	if (opts->dedupe_key != NULL)
	{
		size_t		klen = strlen(opts->dedupe_key);

		if (!allow_key)
		{
			jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT,
						   "the batch form takes dedupe_keys, not opts->dedupe_key");
			return JOBQ_ERR;
		}
		if (klen == 0 || klen > JOBQ_DEDUPE_KEY_MAX)
		{
			jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT,
						   "dedupe key is %zu bytes, must be 1..%d",
						   klen, JOBQ_DEDUPE_KEY_MAX);
			return JOBQ_ERR;
		}
	}
	if (opts->delay_s != -1)
		jobq_fmt_interval(delay, 32, opts->delay_s);
	snprintf(prio, 16, "%d", opts->priority);
	if (opts->max_attempts != -1)
		snprintf(maxatt, 16, "%d", opts->max_attempts);
	return JOBQ_OK;
}

/*
 * jobq_enqueue: see jobq-client.h.
 */
int
jobq_enqueue(JobqConn *conn, const char *queue, const char *payload,
			 size_t payload_len, const JobqEnqueueOpts *opts, int64_t *id_out)
{
	static const JobqEnqueueOpts defaults = JOBQ_ENQUEUE_OPTS_INIT;
	char		delay[32],
				prio[16],
				maxatt[16];
	const char *values[7];
	char	   *json;
	PGresult   *res;
	const char *v;
	int			ok;
	int64_t		id;

	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	if (opts == NULL)
		opts = &defaults;
	if (jobq_check_queue(conn, queue) != JOBQ_OK ||
		check_enqueue_opts(conn, opts, 1, delay, prio, maxatt) != JOBQ_OK)
		return JOBQ_ERR;
	json = jobq_copy_json(conn, "payload", payload, payload_len);
	if (json == NULL)
		return JOBQ_ERR;

	values[0] = queue;
	values[1] = json;
	values[2] = opts->run_at;
	values[3] = opts->delay_s != -1 ? delay : NULL;
	values[4] = prio;
	values[5] = opts->max_attempts != -1 ? maxatt : NULL;
	values[6] = opts->dedupe_key;
	res = jobq_exec(conn, STMT_ENQUEUE, 7, values, 1);
	free(json);
	if (res == NULL)
		return JOBQ_ERR;
	v = single_value(conn, res, &ok);
	if (ok && parse_int64(conn, v, &id) == JOBQ_OK)
	{
		if (id_out != NULL)
			*id_out = id;
		PQclear(res);
		return JOBQ_OK;
	}
	PQclear(res);
	return JOBQ_ERR;
}

/*
 * jobq_enqueue_batch: see jobq-client.h.  The payloads travel as one
 * jsonb[] parameter, so the batch is one statement and one commit.
 */
int
jobq_enqueue_batch(JobqConn *conn, const char *queue, size_t n,
				   const char *const *payloads, const size_t *payload_lens,
				   const char *const *dedupe_keys, const JobqEnqueueOpts *opts,
				   int64_t *ids_out, int *created_out)
{
	static const JobqEnqueueOpts defaults = JOBQ_ENQUEUE_OPTS_INIT;
	char		delay[32],
				prio[16],
				maxatt[16];
	const char *values[7];
	JobqBuf		arr,
				keys;
	PGresult   *res;
	size_t		i;
	int			rc = JOBQ_ERR;

	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	if (opts == NULL)
		opts = &defaults;
	if (jobq_check_queue(conn, queue) != JOBQ_OK ||
		check_enqueue_opts(conn, opts, 0, delay, prio, maxatt) != JOBQ_OK)
		return JOBQ_ERR;
	if (jobq_check_range(conn, "batch size", (long long) n, 1,
						 JOBQ_ENQUEUE_BATCH_MAX) != JOBQ_OK)
		return JOBQ_ERR;
	if (payloads == NULL || payload_lens == NULL)
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT,
					   "payloads and payload_lens must not be NULL");
		return JOBQ_ERR;
	}

	jobq_buf_init(&arr);
	jobq_buf_init(&keys);
	jobq_buf_append(&arr, "{", 1);
	for (i = 0; i < n; i++)
	{
		char		what[48];

		snprintf(what, sizeof(what), "payload %zu", i);
		if (payloads[i] == NULL)
		{
			jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT, "%s is NULL", what);
			goto done;
		}
		if (payload_lens[i] > JOBQ_PAYLOAD_HARD_MAX ||
			memchr(payloads[i], '\0', payload_lens[i]) != NULL)
		{
			/* reuse the single-payload checks for their messages */
			char	   *c = jobq_copy_json(conn, what, payloads[i], payload_lens[i]);

			free(c);
			goto done;
		}
		jobq_buf_array_elem(&arr, payloads[i], payload_lens[i]);
	}
	jobq_buf_append(&arr, "}", 1);

	if (dedupe_keys != NULL)
	{
		jobq_buf_append(&keys, "{", 1);
		for (i = 0; i < n; i++)
		{
			size_t		klen = dedupe_keys[i] ? strlen(dedupe_keys[i]) : 0;

			if (dedupe_keys[i] != NULL && (klen == 0 || klen > JOBQ_DEDUPE_KEY_MAX))
			{
				jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT,
							   "dedupe key %zu is %zu bytes, must be 1..%d",
							   i, klen, JOBQ_DEDUPE_KEY_MAX);
				goto done;
			}
			jobq_buf_array_elem(&keys, dedupe_keys[i], klen);
		}
		jobq_buf_append(&keys, "}", 1);
	}
	if (arr.failed || keys.failed)
	{
		jobq_set_error(conn, JOBQ_ERR_OOM, "out of memory");
		goto done;
	}

	values[0] = queue;
	values[1] = arr.data;
	values[2] = opts->run_at;
	values[3] = opts->delay_s != -1 ? delay : NULL;
	values[4] = prio;
	values[5] = opts->max_attempts != -1 ? maxatt : NULL;
	values[6] = dedupe_keys ? keys.data : NULL;
	res = jobq_exec(conn, STMT_ENQUEUE_BATCH, 7, values, 1);
	if (res == NULL)
		goto done;
	if ((size_t) PQntuples(res) != n || PQnfields(res) != 2)
	{
		jobq_set_error(conn, JOBQ_ERR_PROTOCOL,
					   "enqueue batch of %zu returned %d rows", n, PQntuples(res));
		PQclear(res);
		goto done;
	}
	for (i = 0; i < n; i++)
	{
		int64_t		id;

		if (parse_int64(conn, PQgetvalue(res, (int) i, 0), &id) != JOBQ_OK)
		{
			PQclear(res);
			goto done;
		}
		if (ids_out != NULL)
			ids_out[i] = id;
		if (created_out != NULL)
			created_out[i] = PQgetvalue(res, (int) i, 1)[0] == 't';
	}
	PQclear(res);
	rc = JOBQ_OK;
done:
	jobq_buf_free(&arr);
	jobq_buf_free(&keys);
	return rc;
}

/*
 * jobq_claim_params: validate a claim's arguments and fill values[0..4]
 * and *stmt.  arr receives the text[] literal for several queues; nbuf
 * (16 bytes), lbuf and wbuf (32 bytes) the numbers.  Shared by the claim
 * calls and jobq_complete_and_claim.
 */
int
jobq_claim_params(JobqConn *conn, const char *const *queues, int nqueues,
				  int max_jobs, int lease_s, const char *worker, int wait_ms,
				  JobqBuf *arr, char *nbuf, char *lbuf, char *wbuf,
				  const char **values, JobqStmt *stmt)
{
	int			i;

	if (queues == NULL)
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT, "queue list is NULL");
		return JOBQ_ERR;
	}
	if (jobq_check_range(conn, "number of queues", nqueues, 1,
						 MAX_QUEUES_PER_CLAIM) != JOBQ_OK ||
		jobq_check_range(conn, "max_jobs", max_jobs, 1, JOBQ_CLAIM_MAX) != JOBQ_OK)
		return JOBQ_ERR;
	if (lease_s != -1 &&
		jobq_check_range(conn, "lease_s", lease_s, JOBQ_LEASE_MIN_S,
						 JOBQ_LEASE_MAX_S) != JOBQ_OK)
		return JOBQ_ERR;
	if (worker != NULL && strlen(worker) > JOBQ_WORKER_NAME_MAX)
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT,
					   "worker name is longer than %d bytes", JOBQ_WORKER_NAME_MAX);
		return JOBQ_ERR;
	}
	if (jobq_check_range(conn, "wait_ms", wait_ms, 0, JOBQ_CLAIM_WAIT_MAX_MS) != JOBQ_OK ||
		(wait_ms > 0 &&
		 jobq_check_range(conn, "number of queues of a waiting claim", nqueues, 1,
						  JOBQ_CLAIM_WAIT_QUEUES_MAX) != JOBQ_OK))
		return JOBQ_ERR;
	for (i = 0; i < nqueues; i++)
		if (jobq_check_queue(conn, queues[i]) != JOBQ_OK)
			return JOBQ_ERR;

	if (nqueues == 1)
	{
		*stmt = STMT_CLAIM_ONE;
		values[0] = queues[0];
	}
	else
	{
		*stmt = STMT_CLAIM_ANY;
		jobq_buf_append(arr, "{", 1);
		for (i = 0; i < nqueues; i++)
			jobq_buf_array_elem(arr, queues[i], strlen(queues[i]));
		jobq_buf_append(arr, "}", 1);
		if (arr->failed)
		{
			jobq_set_error(conn, JOBQ_ERR_OOM, "out of memory");
			return JOBQ_ERR;
		}
		values[0] = arr->data;
	}
	snprintf(nbuf, 16, "%d", max_jobs);
	if (lease_s != -1)
		jobq_fmt_interval(lbuf, 32, lease_s);
	values[1] = worker;
	values[2] = nbuf;
	values[3] = lease_s != -1 ? lbuf : NULL;
	values[4] = NULL;
	if (wait_ms > 0)
	{
		snprintf(wbuf, 32, "%d milliseconds", wait_ms);
		values[4] = wbuf;
	}
	return JOBQ_OK;
}

/* free_job_fields: the strings of one job (not the struct). */
static void
free_job_fields(JobqJob *job)
{
	free(job->queue);
	free(job->payload);
	free(job->locked_until);
	free(job->enqueued_at);
}

/*
 * jobq_joblist_from_result: build a list from a claim result, or NULL
 * with the error set.
 */
JobqJobList *
jobq_joblist_from_result(JobqConn *conn, const PGresult *res)
{
	JobqJobList *list;
	int			n = PQntuples(res);
	int			i;

	if (PQnfields(res) != CLAIM_NCOLS)
	{
		jobq_set_error(conn, JOBQ_ERR_PROTOCOL,
					   "claim returned %d columns, expected %d",
					   PQnfields(res), CLAIM_NCOLS);
		return NULL;
	}
	list = calloc(1, sizeof(JobqJobList));
	if (list == NULL)
		goto oom;
	if (n > 0)
	{
		list->jobs = calloc((size_t) n, sizeof(JobqJob));
		if (list->jobs == NULL)
			goto oom;
	}
	for (i = 0; i < n; i++)
	{
		JobqJob    *job = &list->jobs[i];
		const char *token = PQgetvalue(res, i, CLAIM_COL_TOKEN);

		list->n++;				/* so that jobq_joblist_free sees it */
		job->borrowed = 1;
		if (parse_int64(conn, PQgetvalue(res, i, CLAIM_COL_ID), &job->id) != JOBQ_OK)
		{
			jobq_joblist_free(list);
			return NULL;
		}
		job->attempt = atoi(PQgetvalue(res, i, CLAIM_COL_ATTEMPT));
		job->max_attempts = atoi(PQgetvalue(res, i, CLAIM_COL_MAX_ATTEMPTS));
		if (strlen(token) > JOBQ_TOKEN_LEN)
		{
			jobq_set_error(conn, JOBQ_ERR_PROTOCOL, "claim token too long");
			jobq_joblist_free(list);
			return NULL;
		}
		strcpy(job->token, token);
		job->payload_len = (size_t) PQgetlength(res, i, CLAIM_COL_PAYLOAD);
		job->queue = jobq_strdup(PQgetvalue(res, i, CLAIM_COL_QUEUE));
		job->payload = jobq_strdup(PQgetvalue(res, i, CLAIM_COL_PAYLOAD));
		job->locked_until = jobq_strdup(PQgetvalue(res, i, CLAIM_COL_LOCKED_UNTIL));
		job->enqueued_at = jobq_strdup(PQgetvalue(res, i, CLAIM_COL_ENQUEUED_AT));
		job->lease_ms = (int64_t) (strtod(PQgetvalue(res, i, CLAIM_COL_LEASE_LEFT),
										  NULL) * 1000.0);
		if (!job->queue || !job->payload || !job->locked_until || !job->enqueued_at)
		{
			jobq_joblist_free(list);
			list = NULL;
			goto oom;
		}
	}
	return list;
oom:
	if (list != NULL)
		jobq_joblist_free(list);
	jobq_set_error(conn, JOBQ_ERR_OOM, "out of memory");
	return NULL;
}

/*
 * jobq_claim / jobq_claim_wait: see jobq-client.h.
 */
JobqJobList *
jobq_claim_wait(JobqConn *conn, const char *const *queues, int nqueues,
				int max_jobs, int lease_s, const char *worker, int wait_ms)
{
	const char *values[5];
	char		nbuf[16],
				lbuf[32],
				wbuf[32];
	JobqBuf		arr;
	JobqStmt	stmt;
	PGresult   *res;
	JobqJobList *list = NULL;

	if (conn == NULL)
		return NULL;
	jobq_clear_error(conn);
	jobq_buf_init(&arr);
	if (jobq_claim_params(conn, queues, nqueues, max_jobs, lease_s, worker,
						  wait_ms, &arr, nbuf, lbuf, wbuf, values,
						  &stmt) == JOBQ_OK)
	{
		res = jobq_exec(conn, stmt, 5, values, 1);
		if (res != NULL)
		{
			list = jobq_joblist_from_result(conn, res);
			PQclear(res);
		}
	}
	jobq_buf_free(&arr);
	return list;
}

JobqJobList *
jobq_claim(JobqConn *conn, const char *const *queues, int nqueues,
		   int max_jobs, int lease_s, const char *worker)
{
	return jobq_claim_wait(conn, queues, nqueues, max_jobs, lease_s, worker, 0);
}

/*
 * jobq_claim_start / _ready / _interrupt / _finish: see jobq-client.h.
 *
 * The claim is sent with PQsendQueryPrepared and its answer collected with
 * PQconsumeInput/PQisBusy/PQgetResult, libpq's asynchronous pattern; the
 * statement is prepared (synchronously, a short round trip) before it is
 * sent.  conn->busy fences every other call until the answer is taken.
 */
int
jobq_claim_start(JobqConn *conn, const char *const *queues, int nqueues,
				 int max_jobs, int lease_s, const char *worker, int wait_ms)
{
	const char *values[5];
	char		nbuf[16],
				lbuf[32],
				wbuf[32];
	JobqBuf		arr;
	JobqStmt	stmt;
	int			rc = JOBQ_ERR;

	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	jobq_buf_init(&arr);
	if (jobq_claim_params(conn, queues, nqueues, max_jobs, lease_s, worker,
						  wait_ms, &arr, nbuf, lbuf, wbuf, values,
						  &stmt) == JOBQ_OK &&
		jobq_ensure_connected(conn) == JOBQ_OK &&
		jobq_prepare(conn, stmt) == JOBQ_OK &&
		jobq_send(conn, stmt, 5, values) == JOBQ_OK)
	{
		conn->busy = 1;
		conn->interrupted = 0;
		rc = JOBQ_OK;
	}
	jobq_buf_free(&arr);
	return rc;
}

int
jobq_claim_ready(JobqConn *conn)
{
	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	if (!conn->busy)
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT, "no claim in progress");
		return JOBQ_ERR;
	}
	if (!PQconsumeInput(conn->pg))
	{
		jobq_set_error(conn, JOBQ_ERR_CONNECTION, "%s", PQerrorMessage(conn->pg));
		return JOBQ_ERR;
	}
	return PQisBusy(conn->pg) ? 0 : 1;
}

int
jobq_claim_interrupt(JobqConn *conn)
{
	PGcancel   *cancel;
	char		errbuf[256];
	int			ok;

	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	if (!conn->busy || conn->pg == NULL)
		return JOBQ_OK;
	cancel = PQgetCancel(conn->pg);
	if (cancel == NULL)
	{
		jobq_set_error(conn, JOBQ_ERR_CONNECTION, "could not build a cancel request");
		return JOBQ_ERR;
	}
	errbuf[0] = '\0';
	ok = PQcancel(cancel, errbuf, sizeof(errbuf));
	PQfreeCancel(cancel);
	if (!ok)
	{
		jobq_set_error(conn, JOBQ_ERR_CONNECTION, "cancel request failed: %s", errbuf);
		return JOBQ_ERR;
	}
	conn->interrupted = 1;
	return JOBQ_OK;
}

JobqJobList *
jobq_claim_finish(JobqConn *conn)
{
	PGresult   *res;
	PGresult   *extra;
	JobqJobList *list = NULL;
	const char *state;

	if (conn == NULL)
		return NULL;
	jobq_clear_error(conn);
	if (!conn->busy)
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT, "no claim in progress");
		return NULL;
	}
	res = PQgetResult(conn->pg);
	/* NB: the connection is free only once PQgetResult returned NULL */
	while ((extra = PQgetResult(conn->pg)) != NULL)
		PQclear(extra);
	conn->busy = 0;
	state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	if (res != NULL && PQresultStatus(res) == PGRES_TUPLES_OK)
		list = jobq_joblist_from_result(conn, res);
	else if (conn->interrupted && state != NULL && strcmp(state, "57014") == 0)
	{
		/* our own cancel: the claim rolled back, nothing was claimed */
		list = calloc(1, sizeof(JobqJobList));
		if (list == NULL)
			jobq_set_error(conn, JOBQ_ERR_OOM, "out of memory");
	}
	else
	{
		jobq_note_failure(conn, res);
		res = NULL;				/* freed by jobq_note_failure */
	}
	conn->interrupted = 0;
	PQclear(res);
	return list;
}

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
	*value = single_value(conn, res, &ok);
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
 * jobq_complete_params: validate a batch of completions and build its
 * int8[], uuid[] and jsonb[] literals.  resarr stays empty (data NULL,
 * i.e. SQL NULL) when results is NULL.
 */
int
jobq_complete_params(JobqConn *conn, size_t n, const int64_t *ids,
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
 * jobq_mark_accepted: from the set of accepted ids the server returned,
 * flag each input.  n and the result are at most 1000, so the quadratic
 * scan is cheaper than building anything.
 */
void
jobq_mark_accepted(const PGresult *res, size_t n, const int64_t *ids,
				   int *accepted_out, size_t *naccepted)
{
	int			rows = PQntuples(res);
	size_t		count = 0;
	size_t		i;
	int			r;

	for (i = 0; i < n; i++)
	{
		int			hit = 0;

		for (r = 0; r < rows && !hit; r++)
			hit = strtoll(PQgetvalue(res, r, 0), NULL, 10) == (long long) ids[i];
		if (accepted_out != NULL)
			accepted_out[i] = hit;
		count += hit;
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
	int			rc = JOBQ_ERR;

	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	jobq_buf_init(&idarr);
	jobq_buf_init(&tokarr);
	jobq_buf_init(&resarr);
	if (jobq_complete_params(conn, n, ids, tokens, results, result_lens,
							 &idarr, &tokarr, &resarr) == JOBQ_OK)
	{
		values[0] = idarr.data;
		values[1] = tokarr.data;
		values[2] = resarr.data;
		res = jobq_exec(conn, STMT_COMPLETE_BATCH, 3, values, 1);
		if (res != NULL)
		{
			jobq_mark_accepted(res, n, ids, accepted_out, naccepted);
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
		jobq_complete_params(conn, n, ids, tokens, res_texts, res_lens,
							 &idarr, &tokarr, &resarr) != JOBQ_OK)
		goto done;
	/* never a waiting claim: the completions would stay uncommitted */
	if (jobq_claim_params(conn, queues, nqueues, max_jobs, lease_s, worker, 0,
						  &qarr, nbuf, lbuf, wbuf, qvalues, &claim_stmt) != JOBQ_OK)
		goto done;
	if (jobq_ensure_connected(conn) != JOBQ_OK)
		goto done;
	/* named statements must exist before the pipeline starts */
	if ((n > 0 && jobq_prepare(conn, STMT_COMPLETE_BATCH) != JOBQ_OK) ||
		jobq_prepare(conn, claim_stmt) != JOBQ_OK)
		goto done;

	if (!PQenterPipelineMode(conn->pg))
	{
		jobq_set_error(conn, JOBQ_ERR_STATE,
					   "cannot enter pipeline mode (results still pending?)");
		goto done;
	}
	if (n > 0)
	{
		cvalues[0] = idarr.data;
		cvalues[1] = tokarr.data;
		cvalues[2] = resarr.data;	/* NULL (SQL NULL) without results */
		if (jobq_send(conn, STMT_COMPLETE_BATCH, 3, cvalues) != JOBQ_OK)
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

	/*
	 * Each query yields its result then NULL; the sync yields
	 * PGRES_PIPELINE_SYNC.  A lost connection yields an error and NULLs,
	 * hence the bound on NULLs.
	 */
	while (!synced)
	{
		PGresult   *r = PQgetResult(conn->pg);

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
		jobq_mark_accepted(results[0], n, ids, accepted_out, NULL);

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

/*
 * jobq_sweep: see jobq-client.h.
 */
int
jobq_sweep(JobqConn *conn, const char *queue, int max_rows,
		   int64_t *requeued, int64_t *dead, int64_t *purged)
{
	char		rows[16];
	const char *values[2];
	PGresult   *res;
	int64_t		counts[3] = {0, 0, 0};
	int			i;

	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	if (queue != NULL && jobq_check_queue(conn, queue) != JOBQ_OK)
		return JOBQ_ERR;
	if (max_rows == -1)
		max_rows = JOBQ_SWEEP_DEFAULT_ROWS;
	if (jobq_check_range(conn, "max_rows", max_rows, 1, JOBQ_SWEEP_MAX_ROWS) != JOBQ_OK)
		return JOBQ_ERR;
	snprintf(rows, sizeof(rows), "%d", max_rows);
	values[0] = queue;
	values[1] = rows;
	res = jobq_exec(conn, STMT_SWEEP, 2, values, 1);
	if (res == NULL)
		return JOBQ_ERR;
	if (PQntuples(res) != 1 || PQnfields(res) != 3)
	{
		jobq_set_error(conn, JOBQ_ERR_PROTOCOL, "unexpected sweep result");
		PQclear(res);
		return JOBQ_ERR;
	}
	for (i = 0; i < 3; i++)
		if (!PQgetisnull(res, 0, i) &&
			parse_int64(conn, PQgetvalue(res, 0, i), &counts[i]) != JOBQ_OK)
		{
			PQclear(res);
			return JOBQ_ERR;
		}
	PQclear(res);
	if (requeued)
		*requeued = counts[0];
	if (dead)
		*dead = counts[1];
	if (purged)
		*purged = counts[2];
	return JOBQ_OK;
}

/* ----------------------------------------------------------------------
 * JobqJob and JobqJobList
 * ---------------------------------------------------------------------- */

size_t
jobq_joblist_count(const JobqJobList *list)
{
	return list ? list->n : 0;
}

const JobqJob *
jobq_joblist_get(const JobqJobList *list, size_t i)
{
	return (list && i < list->n) ? &list->jobs[i] : NULL;
}

void
jobq_joblist_free(JobqJobList *list)
{
	size_t		i;

	if (list == NULL)
		return;
	for (i = 0; i < list->n; i++)
		free_job_fields(&list->jobs[i]);
	free(list->jobs);
	free(list);
}

int64_t
jobq_job_id(const JobqJob *job)
{
	return job ? job->id : 0;
}

const char *
jobq_job_queue(const JobqJob *job)
{
	return job ? job->queue : NULL;
}

const char *
jobq_job_payload(const JobqJob *job, size_t *len)
{
	if (len != NULL)
		*len = job ? job->payload_len : 0;
	return job ? job->payload : NULL;
}

int
jobq_job_attempt(const JobqJob *job)
{
	return job ? job->attempt : 0;
}

int
jobq_job_max_attempts(const JobqJob *job)
{
	return job ? job->max_attempts : 0;
}

const char *
jobq_job_token(const JobqJob *job)
{
	return job ? job->token : NULL;
}

const char *
jobq_job_locked_until(const JobqJob *job)
{
	return job ? job->locked_until : NULL;
}

const char *
jobq_job_enqueued_at(const JobqJob *job)
{
	return job ? job->enqueued_at : NULL;
}

int64_t
jobq_job_lease_ms(const JobqJob *job)
{
	return job ? job->lease_ms : 0;
}

/*
 * jobq_job_dup: a deep, caller-owned copy.  The payload is copied with
 * its length, so a payload is never re-measured with strlen.
 */
JobqJob *
jobq_job_dup(const JobqJob *job)
{
	JobqJob    *copy;

	if (job == NULL)
		return NULL;
	copy = calloc(1, sizeof(JobqJob));
	if (copy == NULL)
		return NULL;
	*copy = *job;
	copy->borrowed = 0;
	copy->queue = jobq_strdup(job->queue);
	copy->payload = malloc(job->payload_len + 1);
	copy->locked_until = jobq_strdup(job->locked_until);
	copy->enqueued_at = jobq_strdup(job->enqueued_at);
	if (!copy->queue || !copy->payload || !copy->locked_until || !copy->enqueued_at)
	{
		free_job_fields(copy);
		free(copy);
		return NULL;
	}
	memcpy(copy->payload, job->payload, job->payload_len + 1);
	return copy;
}

/*
 * jobq_job_free: frees a job from jobq_job_dup.  A job borrowed from a
 * list is ignored rather than corrupting the list.
 */
void
jobq_job_free(JobqJob *job)
{
	if (job == NULL || job->borrowed)
		return;
	free_job_fields(job);
	free(job);
}
