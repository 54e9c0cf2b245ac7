/*-------------------------------------------------------------------------
 *
 * alloc.c
 *	  strdup for the library (NULL when out of memory) and
 *	  allocate-or-exit for the programs.
 *
 * jobq-worker and jobq cannot do anything useful without memory (a
 * worker's jobs come back through their leases), so they exit 1 with
 * "<program>: out of memory"; the program names itself once with
 * jobq_set_progname.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/common/alloc.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobq-common.h"

static const char *progname = "jobq";

/* jobq_strdup: strdup that is NULL-safe on input; NULL when out of memory */
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

/* jobq_set_progname: the name the out-of-memory message starts with */
void
jobq_set_progname(const char *name)
{
	progname = name;
}

static void
out_of_memory(void)
{
	fprintf(stderr, "%s: out of memory\n", progname);
	exit(1);
}

void *
jobq_xmalloc(size_t n)
{
	void	   *p = malloc(n ? n : 1);

	if (p == NULL)
		out_of_memory();
	return p;
}

char *
jobq_xstrdup(const char *s)
{
	size_t		n = strlen(s) + 1;

	return memcpy(jobq_xmalloc(n), s, n);
}

/* jobq_xcheck: exit when an allocation of buffer b failed */
void
jobq_xcheck(const JobqBuf *b)
{
	if (b->failed)
		out_of_memory();
}
