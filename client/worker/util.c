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
	char	   *s = jobq_xmalloc(r->len + off + 1);

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

/*
 * buf_int
 *		Append v in decimal to b.  The job lines of the log and of
 *		--persistent are written per job, and printf's machinery cost more
 *		than everything else the worker does for a job (callgrind).
 */
void
buf_int(JobqBuf *b, long long v)
{
	char		tmp[24];
	char	   *p = tmp + sizeof(tmp);
	unsigned long long u = v < 0 ? 0 - (unsigned long long) v : (unsigned long long) v;

	do
	{
		*--p = (char) ('0' + u % 10);
		u /= 10;
	} while (u > 0);
	if (v < 0)
		*--p = '-';
	jobq_buf_append(b, p, (size_t) (tmp + sizeof(tmp) - p));
}
