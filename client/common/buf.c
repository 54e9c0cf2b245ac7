/*-------------------------------------------------------------------------
 *
 * buf.c
 *	  JobqBuf, the growable byte buffer of libjobq, jobq-worker and jobq.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/common/buf.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobq-common.h"

void
jobq_buf_init(JobqBuf *b)
{
	memset(b, 0, sizeof(*b));
}

/* jobq_buf_free: release the data; the buffer is empty again (limit kept) */
void
jobq_buf_free(JobqBuf *b)
{
	size_t		limit = b->limit;

	free(b->data);
	jobq_buf_init(b);
	b->limit = limit;
}

/*
 * jobq_buf_reserve: make room for extra more bytes plus a terminating NUL.
 * Returns 0 (and latches failed) when that is impossible.
 */
int
jobq_buf_reserve(JobqBuf *b, size_t extra)
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
	if (b->limit > 0 && len > b->limit - b->len)
	{
		b->overflow = 1;
		len = b->limit - b->len;
	}
	if (!jobq_buf_reserve(b, len))
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
	char	   *big;
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
	/* rare: format again into a buffer of the right size */
	big = malloc((size_t) n + 1);
	if (big == NULL)
	{
		b->failed = 1;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(big, (size_t) n + 1, fmt, ap);
	va_end(ap);
	jobq_buf_append(b, big, (size_t) n);
	free(big);
}
