/*-------------------------------------------------------------------------
 *
 * enqueue.c
 *	  jobq_enqueue and jobq_enqueue_batch (extension/enqueue.c).
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/src/enqueue.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobq-int.h"

static const size_t enqueue_opts_sizes[] = JOBQ_ENQUEUE_OPTS_SIZES;

/*
 * enqueue_args: the arguments both enqueue calls share.  Copies the
 * caller's options (NULL: none) over *local, which holds the defaults, and
 * validates the queue name and the options; allow_key = 0 for the batch
 * form, whose keys come separately.  Fills the interval buffer and the
 * text forms of the numbers.
 */
static int
enqueue_args(JobqConn *conn, const char *queue, const JobqEnqueueOpts *given,
			 JobqEnqueueOpts *local, int allow_key,
			 char *delay, char *prio, char *maxatt)
{
	const JobqEnqueueOpts *opts = local;

	if (jobq_copy_opts(conn, "JobqEnqueueOpts", given, local, enqueue_opts_sizes,
					   lengthof(enqueue_opts_sizes)) != JOBQ_OK ||
		jobq_check_queue(conn, queue) != JOBQ_OK)
		return JOBQ_ERR;
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
	JobqEnqueueOpts local = JOBQ_ENQUEUE_OPTS_INIT;
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
	if (enqueue_args(conn, queue, opts, &local, 1, delay, prio, maxatt) != JOBQ_OK)
		return JOBQ_ERR;
	opts = &local;
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
	v = jobq_single_value(conn, res, &ok);
	if (ok && jobq_parse_int64(conn, v, &id) == JOBQ_OK)
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
	JobqEnqueueOpts local = JOBQ_ENQUEUE_OPTS_INIT;
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
	if (enqueue_args(conn, queue, opts, &local, 0, delay, prio, maxatt) != JOBQ_OK)
		return JOBQ_ERR;
	opts = &local;
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

		if (jobq_parse_int64(conn, PQgetvalue(res, (int) i, 0), &id) != JOBQ_OK)
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
