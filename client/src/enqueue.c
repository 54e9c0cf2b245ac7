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

/* wants_020: options only 0.2.0's enqueue statements pass */
static int
wants_020(const JobqEnqueueOpts *o)
{
	return o->group_key != NULL || o->group_keys != NULL || o->depends_on != NULL ||
		o->n_depends_on != 0 || o->on_dep_failure != NULL || o->flow_id != 0;
}

/*
 * check_020_args: the options of 0.2.0 (groups and dependencies), checked
 * before anything is sent; single = 0 for the batch form.  The server
 * checks what only it can (the policy's name, that the ids exist).
 */
static int
check_020_args(JobqConn *conn, const JobqEnqueueOpts *o, int single)
{
	if (!wants_020(o))
		return JOBQ_OK;
	if (o->group_key != NULL &&
		(o->group_key[0] == '\0' || strlen(o->group_key) > JOBQ_GROUP_KEY_MAX))
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT,
					   "group_key is %zu bytes, must be 1..%d",
					   strlen(o->group_key), JOBQ_GROUP_KEY_MAX);
		return JOBQ_ERR;
	}
	if (o->group_keys != NULL && (single || o->group_key != NULL))
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT, "%s",
					   single ? "group_keys is for the batch form: give group_key"
					   : "give group_key or group_keys, not both");
		return JOBQ_ERR;
	}
	if ((o->depends_on != NULL || o->n_depends_on != 0) && !single)
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT,
					   "depends_on is for a single enqueue (jobq_flow inserts a graph)");
		return JOBQ_ERR;
	}
	if ((o->depends_on == NULL) != (o->n_depends_on == 0) ||
		o->n_depends_on > JOBQ_DEPS_MAX)
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT,
					   "depends_on must hold 1..%d job ids (%zu given)",
					   JOBQ_DEPS_MAX, o->n_depends_on);
		return JOBQ_ERR;
	}
	for (size_t i = 0; i < o->n_depends_on; i++)
		if (jobq_check_id(conn, o->depends_on[i]) != JOBQ_OK)
			return JOBQ_ERR;
	if (o->flow_id < 0)
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT, "flow_id must be positive");
		return JOBQ_ERR;
	}
	return jobq_require_sql(conn, JOBQ_SQL_ENQUEUE_020, "a group key or dependencies");
}

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
	if (check_020_args(conn, opts, allow_key) != JOBQ_OK)
		return JOBQ_ERR;
	if (opts->delay_s != -1)
		jobq_fmt_interval(delay, 32, opts->delay_s);
	snprintf(prio, 16, "%d", opts->priority);
	if (opts->max_attempts != -1)
		snprintf(maxatt, 16, "%d", opts->max_attempts);
	return JOBQ_OK;
}

/*
 * key_array: the text[] literal of n keys of 1..max bytes each into *b,
 * which the caller initialised and frees; NULL entries (no key) only when
 * allow_null.
 */
static int
key_array(JobqConn *conn, JobqBuf *b, const char *const *keys, size_t n,
		  const char *what, int max, int allow_null)
{
	jobq_buf_append(b, "{", 1);
	for (size_t i = 0; i < n; i++)
	{
		size_t		klen = keys[i] ? strlen(keys[i]) : 0;

		if (keys[i] == NULL && !allow_null)
		{
			jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT, "%s %zu is NULL", what, i);
			return JOBQ_ERR;
		}
		if (keys[i] != NULL && (klen == 0 || klen > (size_t) max))
		{
			jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT,
						   "%s %zu is %zu bytes, must be 1..%d", what, i, klen, max);
			return JOBQ_ERR;
		}
		jobq_buf_array_elem(b, keys[i], klen);
	}
	jobq_buf_append(b, "}", 1);
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
	const char *values[11];
	char	   *json;
	char		flow[24];
	JobqBuf		deps;
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
	jobq_buf_init(&deps);
	if (wants_020(opts))
	{
		jobq_buf_append(&deps, "{", 1);
		for (size_t i = 0; i < opts->n_depends_on; i++)
		{
			char		one[24];

			snprintf(one, sizeof(one), "%s%lld", i ? "," : "",
					 (long long) opts->depends_on[i]);
			jobq_buf_append(&deps, one, strlen(one));
		}
		jobq_buf_append(&deps, "}", 1);
		snprintf(flow, sizeof(flow), "%lld", (long long) opts->flow_id);
		values[7] = opts->group_key;
		values[8] = opts->n_depends_on ? deps.data : NULL;
		values[9] = opts->on_dep_failure;
		values[10] = opts->flow_id ? flow : NULL;
		res = deps.failed ? NULL : jobq_exec(conn, STMT_ENQUEUE_020, 11, values, 1);
		if (deps.failed)
			jobq_set_error(conn, JOBQ_ERR_OOM, "out of memory");
	}
	else
		res = jobq_exec(conn, STMT_ENQUEUE, 7, values, 1);
	jobq_buf_free(&deps);
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
	const char *values[8];
	JobqBuf		arr,
				keys,
				groups;
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
	jobq_buf_init(&groups);
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

	if (dedupe_keys != NULL &&
		key_array(conn, &keys, dedupe_keys, n, "dedupe key", JOBQ_DEDUPE_KEY_MAX, 1) != JOBQ_OK)
		goto done;
	if (opts->group_keys != NULL &&
		key_array(conn, &groups, opts->group_keys, n, "group key", JOBQ_GROUP_KEY_MAX, 0) != JOBQ_OK)
		goto done;
	if (opts->group_key != NULL)
	{
		/* one key for every job */
		jobq_buf_append(&groups, "{", 1);
		for (i = 0; i < n; i++)
			jobq_buf_array_elem(&groups, opts->group_key, strlen(opts->group_key));
		jobq_buf_append(&groups, "}", 1);
	}
	if (arr.failed || keys.failed || groups.failed)
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
	values[7] = groups.len > 0 ? groups.data : NULL;
	res = wants_020(opts) ? jobq_exec(conn, STMT_ENQUEUE_BATCH_020, 8, values, 1)
		: jobq_exec(conn, STMT_ENQUEUE_BATCH, 7, values, 1);
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
	jobq_buf_free(&groups);
	return rc;
}
