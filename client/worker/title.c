/*-------------------------------------------------------------------------
 *
 * title.c
 *	  The process title: what ps and top show for jobq-worker, e.g.
 *	  "jobq-worker: quiet 3/8 busy mails,sms".
 *
 * There is no setproctitle on Linux: the title is written over the
 * memory of the original command line (argv's strings, which the kernel
 * shows as /proc/PID/cmdline), so it is at most as long as the command
 * line was, and cut to fit.  title_init moves argv's strings to the heap
 * first, so that the options, which point into them, stay intact.  The
 * environment, which on Linux follows argv, is left alone.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/worker/title.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <string.h>

#include "worker.h"

static char *title_area = NULL;	/* the original argv strings */
static size_t title_size = 0;	/* bytes of them, NULs included */
static char last_title[256];

/*
 * title_init
 *		Take over the command line's memory: argv[i] point to copies
 *		afterwards.  Call before anything keeps a pointer into argv.
 */
void
title_init(int argc, char **argv)
{
	char	   *end;

	if (argc <= 0 || argv[0] == NULL)
		return;
	/* only the strings that follow each other in memory are ours to use */
	end = argv[0] + strlen(argv[0]) + 1;
	for (int i = 1; i < argc && argv[i] == end; i++)
		end = argv[i] + strlen(argv[i]) + 1;
	title_area = argv[0];
	title_size = (size_t) (end - argv[0]);
	for (int i = 0; i < argc; i++)
		argv[i] = jobq_xstrdup(argv[i]);
}

/* set the title to s, cut to the area, the rest zeroed */
static void
title_set(const char *s)
{
	size_t		n = strlen(s);

	if (title_area == NULL || title_size < 2)
		return;
	if (n > title_size - 1)
		n = title_size - 1;
	memcpy(title_area, s, n);
	memset(title_area + n, 0, title_size - n);
}

/*
 * title_update
 *		"jobq-worker: STATE RUNNING/CONCURRENCY busy QUEUES", written only
 *		when it changed (once per loop round otherwise costs a compare).
 *		STATE: running, quiet, stopping, or disconnected.
 */
void
title_update(Worker *w)
{
	char		t[sizeof(last_title)];
	const char *state = w->stopping ? "stopping" : !w->db.connected ? "disconnected" :
		w->quiet ? "quiet" : "running";
	int			len;

	if (title_area == NULL)
		return;
	len = snprintf(t, sizeof(t), "jobq-worker: %s %d/%d busy", state, flow_running(w),
				   w->concurrency);
	for (int i = 0; i < w->nqueues && len > 0 && (size_t) len < sizeof(t); i++)
		len += snprintf(t + len, sizeof(t) - len, "%s%s", i ? "," : " ", w->queues[i]);
	if (strcmp(t, last_title) == 0)
		return;
	memcpy(last_title, t, sizeof(t));
	title_set(t);
}
