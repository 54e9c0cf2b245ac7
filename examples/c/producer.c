/*-------------------------------------------------------------------------
 *
 * producer.c
 *	  Enqueue N jobs, each {"n": i}, with libjobq.
 *
 *	  usage: producer QUEUE N     (the connection from PGHOST, PGPORT, ...)
 *
 * The same producer as examples/psql, python and node.  jobq_enqueue is one
 * autocommit statement per job; jobq_enqueue_batch would send them in one.
 * A payload is JSON text with an explicit length: the library never relies
 * on a terminating NUL, and the server validates the JSON.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  examples/c/producer.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>

#include "jobq-client.h"

int
main(int argc, char **argv)
{
	JobqConn   *conn;
	int			n;
	int			i;

	if (argc != 3 || (n = atoi(argv[2])) < 1)
	{
		fprintf(stderr, "usage: producer QUEUE N\n");
		return 2;
	}
	conn = jobq_connect(NULL);		/* NULL: the PG* environment */
	if (conn == NULL || jobq_status(conn) != JOBQ_ERR_NONE)
	{
		fprintf(stderr, "connect: %s\n", conn ? jobq_errmsg(conn) : "out of memory");
		jobq_disconnect(conn);
		return 1;
	}
	for (i = 1; i <= n; i++)
	{
		char		payload[32];
		int			len = snprintf(payload, sizeof(payload), "{\"n\": %d}", i);
		int64_t		id;

		if (jobq_enqueue(conn, argv[1], payload, (size_t) len, NULL, &id) != JOBQ_OK)
		{
			fprintf(stderr, "enqueue: %s (%s, SQLSTATE %s)\n", jobq_errmsg(conn),
					jobq_error_name(jobq_status(conn)),
					jobq_sqlstate(conn) ? jobq_sqlstate(conn) : "-");
			jobq_disconnect(conn);
			return 1;
		}
	}
	printf("enqueued %d\n", n);
	jobq_disconnect(conn);
	return 0;
}
