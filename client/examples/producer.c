/*-------------------------------------------------------------------------
 *
 * producer.c
 *	  Minimal libjobq producer: enqueue a few jobs, one by one and as a
 *	  batch.
 *
 *	  usage: producer [conninfo] [queue] [count]
 *
 * The queue must exist (jobq_create_queue, or the jobq CLI).  A job is a
 * JSON payload; the library passes it with an explicit length, and the
 * server validates it.
 *
 * Copyright (c) 2025, jobq authors
 *
 * IDENTIFICATION
 *	  client/examples/producer.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobq-client.h"

int
main(int argc, char **argv)
{
	const char *conninfo = argc > 1 ? argv[1] : NULL;	/* NULL: PG* env */
	const char *queue = argc > 2 ? argv[2] : "example";
	int			count = argc > 3 ? atoi(argv[3]) : 3;
	JobqConn   *conn;
	char		payload[64];
	const char *batch[2] = {"{\"n\": 100}", "{\"n\": 101}"};
	size_t		lens[2] = {strlen(batch[0]), strlen(batch[1])};
	int64_t		ids[2];
	int			i;

	conn = jobq_connect(conninfo);
	if (conn == NULL)
	{
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	if (jobq_status(conn) != JOBQ_ERR_NONE)
	{
		fprintf(stderr, "connect: %s\n", jobq_errmsg(conn));
		jobq_disconnect(conn);
		return 1;
	}

	for (i = 0; i < count; i++)
	{
		int64_t		id;
		int			len = snprintf(payload, sizeof(payload), "{\"n\": %d}", i);

		if (jobq_enqueue(conn, queue, payload, (size_t) len, NULL, &id) != JOBQ_OK)
		{
			fprintf(stderr, "enqueue: %s (%s)\n", jobq_errmsg(conn),
					jobq_error_name(jobq_status(conn)));
			jobq_disconnect(conn);
			return 1;
		}
		printf("enqueued job %lld\n", (long long) id);
	}

	/* a batch is one statement and one commit: all or nothing */
	if (jobq_enqueue_batch(conn, queue, 2, batch, lens, NULL, NULL, ids, NULL) != JOBQ_OK)
	{
		fprintf(stderr, "enqueue batch: %s\n", jobq_errmsg(conn));
		jobq_disconnect(conn);
		return 1;
	}
	printf("enqueued jobs %lld and %lld\n", (long long) ids[0], (long long) ids[1]);
	jobq_disconnect(conn);
	return 0;
}
