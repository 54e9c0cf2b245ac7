/*-------------------------------------------------------------------------
 *
 * values.c
 *	  The text forms every call shares: a JSON argument checked and
 *	  copied, an element of an array literal, an integer or single value
 *	  read from a server result; and jobq_free.
 *
 * Payloads are JSON text passed with an explicit length.  libpq sends
 * text parameters as NUL-terminated strings, so a payload is copied into
 * a terminated buffer after checking it holds no NUL byte: otherwise a
 * payload with an embedded NUL would be cut short silently.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/src/values.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobq-int.h"

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

/*
 * jobq_parse_int64: a server integer in text form.  The server only sends
 * well-formed integers; anything else is a protocol error.
 */
int
jobq_parse_int64(JobqConn *conn, const char *s, int64_t *out)
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
 * jobq_single_value: the result must have exactly one row and one column;
 * returns its value (NULL for SQL NULL) and sets *ok.
 */
const char *
jobq_single_value(JobqConn *conn, const PGresult *res, int *ok)
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
 * jobq_buf_array_elem: append one element of an array literal: the
 * separator when needed, then s (len bytes) double-quoted with '"' and
 * '\' escaped, or the unquoted NULL when s is NULL.  The caller writes
 * the enclosing braces.
 */
void
jobq_buf_array_elem(JobqBuf *b, const char *s, size_t len)
{
	size_t		i;
	size_t		start;

	if (b->len > 0 && b->data[b->len - 1] != '{')
		jobq_buf_append(b, ",", 1);
	if (s == NULL)
	{
		jobq_buf_append(b, "NULL", 4);
		return;
	}
	/* worst case every byte escaped, reserved once */
	if (!jobq_buf_reserve(b, 2 * len + 2))
		return;
	jobq_buf_append(b, "\"", 1);
	start = 0;
	for (i = 0; i < len; i++)
	{
		if (s[i] == '"' || s[i] == '\\')
		{
			jobq_buf_append(b, s + start, i - start);
			jobq_buf_append(b, "\\", 1);
			start = i;
		}
	}
	jobq_buf_append(b, s + start, len - start);
	jobq_buf_append(b, "\"", 1);
}

/* jobq_free: see jobq-client.h */
void
jobq_free(void *ptr)
{
	free(ptr);
}

/*
 * jobq_copy_opts: copy the options struct the caller passed (NULL: none),
 * whose first field is its size (jobq-client.h, JobqQueueOpts), over
 * *local, which holds this library's defaults on entry: the fields past
 * the caller's size keep them.  sizes[] are the sizes the struct had in
 * released headers (jobq-int.h), the last one this library's.  Any other
 * size is refused: a setting would be misread or ignored.
 */
int
jobq_copy_opts(JobqConn *conn, const char *what, const void *given,
			   void *local, const size_t *sizes, size_t nsizes)
{
	size_t		local_size = sizes[nsizes - 1];
	size_t		size;
	size_t		i;

	if (given == NULL)
		return JOBQ_OK;
	memcpy(&size, given, sizeof(size));
	for (i = 0; i < nsizes && sizes[i] != size; i++)
		;
	if (i == nsizes && size <= local_size)
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT,
					   "%s.size is %zu, the size of no released %s: start the options from its INIT macro (a struct filled by position puts its first value into size)",
					   what, size, what);
		return JOBQ_ERR;
	}
	if (size > local_size)
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT,
					   "%s of %zu bytes is larger than libjobq %s knows (%zu bytes): "
					   "the program was built against a newer jobq-client.h",
					   what, size, JOBQ_VERSION_STRING, local_size);
		return JOBQ_ERR;
	}
	memcpy((char *) local + sizeof(size_t), (const char *) given + sizeof(size_t),
		   size - sizeof(size_t));
	return JOBQ_OK;
}
