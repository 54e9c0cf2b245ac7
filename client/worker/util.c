/*-------------------------------------------------------------------------
 *
 * util.c
 *	  Small helpers for jobq-worker: monotonic time, bounded buffers.
 *
 * Handlers are untrusted programs: their stdout (the result) and stderr
 * (the error) are kept in buffers with hard limits so that a chatty or
 * runaway handler cannot make the worker grow without bound.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/worker/util.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "worker.h"

/*
 * now_mono
 *		Seconds on the monotonic clock.  All of the worker's timers use it,
 *		so a wall-clock step (NTP, suspend) never fires or stalls a timer.
 */
double
now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * xmalloc, xstrdup
 *		Allocate or die: the worker cannot do anything useful without memory,
 *		and its jobs come back through their leases.
 */
void *
xmalloc(size_t n)
{
	void	   *p = malloc(n ? n : 1);

	if (p == NULL)
	{
		fprintf(stderr, "jobq-worker: out of memory\n");
		exit(1);
	}
	return p;
}

char *
xstrdup(const char *s)
{
	size_t		n = strlen(s) + 1;

	return memcpy(xmalloc(n), s, n);
}

/*
 * buf_init
 *		An empty buffer that keeps at most limit bytes.
 */
void
buf_init(Buf *b, size_t limit)
{
	b->cap = 256;
	b->data = xmalloc(b->cap);
	b->data[0] = '\0';
	b->len = 0;
	b->limit = limit;
	b->overflow = false;
}

/*
 * buf_append
 *		Append n bytes; bytes past the limit are dropped and flagged.
 */
void
buf_append(Buf *b, const char *p, size_t n)
{
	if (b->len + n > b->limit)
	{
		b->overflow = true;
		n = b->limit - b->len;
	}
	if (b->len + n + 1 > b->cap)
	{
		size_t		cap = b->cap;
		char	   *d;

		while (b->len + n + 1 > cap)
			cap *= 2;
		d = realloc(b->data, cap);
		if (d == NULL)
		{
			fprintf(stderr, "jobq-worker: out of memory\n");
			exit(1);
		}
		b->data = d;
		b->cap = cap;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void
buf_free(Buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

/*
 * ring_append
 *		Keep the last STDERR_TAIL_BYTES bytes: the end of stderr is where a
 *		failing program says why it failed.
 */
void
ring_append(Ring *r, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
	{
		if (r->len < sizeof(r->data))
			r->data[(r->start + r->len++) % sizeof(r->data)] = p[i];
		else
		{
			r->data[r->start] = p[i];
			r->start = (r->start + 1) % sizeof(r->data);
			r->wrapped = true;
		}
	}
}

/*
 * ring_string
 *		The ring's contents as a malloc'd string (caller frees), with "..."
 *		in front when older output was dropped and NUL bytes replaced, since
 *		the error travels as text.
 */
char *
ring_string(const Ring *r)
{
	size_t		off = r->wrapped ? 3 : 0;
	size_t		skip = 0;
	size_t		n = 0;
	char	   *s = xmalloc(r->len + off + 1);

	if (off)
		memcpy(s, "...", 3);

	/* after a wrap, do not start in the middle of a UTF-8 sequence */
	while (r->wrapped && skip < r->len &&
		   ((unsigned char) r->data[(r->start + skip) % sizeof(r->data)] & 0xC0) == 0x80)
		skip++;
	for (size_t i = skip; i < r->len; i++)
	{
		char		c = r->data[(r->start + i) % sizeof(r->data)];

		s[off + n++] = c ? c : ' ';
	}
	s[off + n] = '\0';
	return s;
}
