/*-------------------------------------------------------------------------
 *
 * buf.c
 *	  A growable byte buffer, and the two text encodings libjobq builds
 *	  with it: PostgreSQL array literals (for jsonb[], text[], uuid[]
 *	  parameters) and JSON strings (for jobq_rows_json).
 *
 * Array literals are parameter *values*, never SQL text: they are parsed
 * by the array input function on the server, so the only concern is that
 * every element round-trips exactly, which quoting every element and
 * backslash-escaping '"' and '\' guarantees.
 *
 * An allocation failure latches buf->failed and turns later appends into
 * no-ops, so callers check once at the end.
 *
 * Copyright (c) 2025, jobq authors
 *
 * IDENTIFICATION
 *	  client/src/buf.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobq-int.h"

void
jobq_buf_init(JobqBuf *b)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->failed = 0;
}

void
jobq_buf_free(JobqBuf *b)
{
	free(b->data);
	jobq_buf_init(b);
}

/*
 * reserve: make room for extra more bytes plus a terminating NUL.
 * Returns 0 (and latches failed) when that is impossible.
 */
static int
reserve(JobqBuf *b, size_t extra)
{
	size_t		need;
	size_t		cap;
	char	   *p;

	if (b->failed)
		return 0;
	if (extra > SIZE_MAX / 2 - b->len)
	{
		b->failed = 1;
		return 0;
	}
	need = b->len + extra + 1;
	if (need <= b->cap)
		return 1;
	cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap *= 2;
	p = realloc(b->data, cap);
	if (p == NULL)
	{
		b->failed = 1;
		return 0;
	}
	b->data = p;
	b->cap = cap;
	return 1;
}

void
jobq_buf_append(JobqBuf *b, const char *s, size_t len)
{
	if (!reserve(b, len))
		return;
	if (len > 0)
		memcpy(b->data + b->len, s, len);
	b->len += len;
	b->data[b->len] = '\0';
}

void
jobq_buf_puts(JobqBuf *b, const char *s)
{
	jobq_buf_append(b, s, strlen(s));
}

void
jobq_buf_printf(JobqBuf *b, const char *fmt,...)
{
	char		small[128];
	va_list		ap;
	int			n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
	{
		b->failed = 1;
		return;
	}
	if ((size_t) n < sizeof(small))
	{
		jobq_buf_append(b, small, (size_t) n);
		return;
	}
	if (!reserve(b, (size_t) n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t) n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t) n;
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
	if (!reserve(b, 2 * len + 2))
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

/*
 * jobq_buf_json_string: append s as a JSON string.  s is UTF-8 (the
 * connection's client_encoding), so only '"', '\' and control characters
 * need escaping.
 */
void
jobq_buf_json_string(JobqBuf *b, const char *s)
{
	const unsigned char *p;

	jobq_buf_append(b, "\"", 1);
	for (p = (const unsigned char *) s; *p; p++)
	{
		switch (*p)
		{
			case '"':
				jobq_buf_append(b, "\\\"", 2);
				break;
			case '\\':
				jobq_buf_append(b, "\\\\", 2);
				break;
			case '\n':
				jobq_buf_append(b, "\\n", 2);
				break;
			case '\r':
				jobq_buf_append(b, "\\r", 2);
				break;
			case '\t':
				jobq_buf_append(b, "\\t", 2);
				break;
			default:
				if (*p < 0x20)
					jobq_buf_printf(b, "\\u%04x", *p);
				else
					jobq_buf_append(b, (const char *) p, 1);
		}
	}
	jobq_buf_append(b, "\"", 1);
}

/* jobq_strdup: strdup that is NULL-safe on input. */
char *
jobq_strdup(const char *s)
{
	size_t		len;
	char	   *p;

	if (s == NULL)
		return NULL;
	len = strlen(s);
	p = malloc(len + 1);
	if (p != NULL)
		memcpy(p, s, len + 1);
	return p;
}

void
jobq_free(void *ptr)
{
	free(ptr);
}
