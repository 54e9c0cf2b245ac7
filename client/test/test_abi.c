/*-------------------------------------------------------------------------
 *
 * test_abi.c
 *	  A program as it was linked against libjobq 0.1.0: it calls the
 *	  functions that take option structs through their JOBQ_0 symbol
 *	  versions, with the 0.1.0 layouts (no size field), against the shared
 *	  library of today, and checks that every setting arrives.
 *
 * Run by test/run.sh before test-libjobq, against JOBQ_TEST_DSN.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/test/test_abi.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jobq-client.h"
#include "jobq-abi-0.1.h"

/* the references such a program has: version JOBQ_0 */
int			old_create_queue(JobqConn *conn, const char *queue, const QueueOpts_0_1 *o);
int			old_alter_queue(JobqConn *conn, const char *queue, const QueueOpts_0_1 *o);
int			old_enqueue(JobqConn *conn, const char *queue, const char *payload,
						size_t payload_len, const EnqueueOpts_0_1 *o, int64_t *id_out);
int			old_enqueue_batch(JobqConn *conn, const char *queue, size_t n,
							  const char *const *payloads, const size_t *payload_lens,
							  const char *const *dedupe_keys, const EnqueueOpts_0_1 *o,
							  int64_t *ids_out, int *created_out);

__asm__(".symver old_create_queue, jobq_create_queue@JOBQ_0");
__asm__(".symver old_alter_queue, jobq_alter_queue@JOBQ_0");
__asm__(".symver old_enqueue, jobq_enqueue@JOBQ_0");
__asm__(".symver old_enqueue_batch, jobq_enqueue_batch@JOBQ_0");

static int	tests = 0;
static int	fails = 0;

static void
check(const char *what, int ok, JobqConn *c)
{
	printf("#A%02d %-66s %s\n", ++tests, what, ok ? "PASSED" : "FAILED");
	if (!ok)
	{
		fails++;
		printf("      last error: %s\n", jobq_errmsg(c));
	}
}

/* the value of column col of job id or queue q ("" when none) */
static const char *
field(JobqRows *r, size_t row, const char *col)
{
	const char *v = r ? jobq_rows_get(r, row, col) : NULL;

	return v ? v : "";
}

static int
queue_is(JobqConn *c, const char *q, const char *lease, const char *max_attempts,
		 const char *notify)
{
	JobqRows   *r = jobq_queues(c);
	int			ok = 0;

	for (size_t i = 0; r && i < jobq_rows_count(r); i++)
		if (strcmp(field(r, i, "queue"), q) == 0)
			ok = strcmp(field(r, i, "lease"), lease) == 0 &&
				strcmp(field(r, i, "max_attempts"), max_attempts) == 0 &&
				strcmp(field(r, i, "notify"), notify) == 0;
	jobq_rows_free(r);
	return ok;
}

static int
job_is(JobqConn *c, int64_t id, const char *priority, const char *max_attempts)
{
	JobqRows   *r = jobq_job_info(c, id);
	int			ok = r && strcmp(field(r, 0, "priority"), priority) == 0 &&
		strcmp(field(r, 0, "max_attempts"), max_attempts) == 0;

	jobq_rows_free(r);
	return ok;
}

int
main(void)
{
	const char *dsn = getenv("JOBQ_TEST_DSN");
	JobqConn   *c = jobq_connect(dsn && *dsn ? dsn : NULL);
	QueueOpts_0_1 qo = {42, 7, -1, -1, -1, -1, -1};
	EnqueueOpts_0_1 eo = {-1, NULL, 9, 3, NULL};
	const char *pl[2] = {"{}", "{}"};
	size_t		ln[2] = {2, 2};
	int64_t		id = 0,
				ids[2] = {0, 0};
	char		q[64];

	snprintf(q, sizeof(q), "t%d-abi", (int) getpid());
	check("0.1.0 jobq_create_queue: lease and max_attempts arrive",
		  old_create_queue(c, q, &qo) == JOBQ_OK &&
		  queue_is(c, q, "00:00:42", "7", "t"), c);
	qo = (QueueOpts_0_1) {-1, -1, -1, -1, -1, -1, 0};
	check("0.1.0 jobq_alter_queue: notify (the last field) arrives, the rest stays",
		  old_alter_queue(c, q, &qo) == JOBQ_OK &&
		  queue_is(c, q, "00:00:42", "7", "f"), c);
	check("0.1.0 jobq_enqueue: priority and max_attempts arrive",
		  old_enqueue(c, q, "{}", 2, &eo, &id) == JOBQ_OK && job_is(c, id, "9", "3"), c);
	eo.priority = -4;
	check("0.1.0 jobq_enqueue_batch: the options arrive for every job",
		  old_enqueue_batch(c, q, 2, pl, ln, NULL, &eo, ids, NULL) == JOBQ_OK &&
		  job_is(c, ids[0], "-4", "3") && job_is(c, ids[1], "-4", "3"), c);
	check("0.1.0 NULL options still mean the defaults",
		  old_enqueue(c, q, "{}", 2, NULL, &id) == JOBQ_OK && job_is(c, id, "0", "7"), c);
	jobq_drop_queue(c, q, 1);
	jobq_disconnect(c);
	printf("abi: %d passed, %d failed\n", tests - fails, fails);
	return fails ? 1 : 0;
}
