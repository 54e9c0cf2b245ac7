/*-------------------------------------------------------------------------
 *
 * consumer.c
 *	  Claim jobs in batches of 10 and complete them with libjobq, until a
 *	  claim finds nothing.
 *
 *	  usage: consumer QUEUE       (the connection from PGHOST, PGPORT, ...)
 *
 * The same consumer as examples/psql, python and node.  Every libjobq call
 * is one autocommit statement, so the claim has committed before the work
 * starts.  Each job is completed with the token of its claim; a stale token
 * (JOBQ_ERR_STALE) means the lease ran out and the job may run elsewhere:
 * nothing changed, and the consumer goes on.  A long-running consumer would
 * wait when a claim finds nothing (jobq_claim_wait, jobq_wait_for_work)
 * instead of stopping; jobq-worker does all of this for a program.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  examples/c/consumer.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>

#include "jobq-client.h"

int
main(int argc, char **argv)
{
	const char *queues[1];
	JobqConn   *conn;
	long		completed = 0;

	if (argc != 2)
	{
		fprintf(stderr, "usage: consumer QUEUE\n");
		return 2;
	}
	queues[0] = argv[1];
	conn = jobq_connect(NULL);		/* NULL: the PG* environment */
	if (conn == NULL || jobq_status(conn) != JOBQ_ERR_NONE)
	{
		fprintf(stderr, "connect: %s\n", conn ? jobq_errmsg(conn) : "out of memory");
		jobq_disconnect(conn);
		return 1;
	}
	for (;;)
	{
		JobqJobList *jobs = jobq_claim(conn, queues, 1, 10, -1, "c-consumer");
		size_t		count;
		size_t		i;

		if (jobs == NULL)
		{
			fprintf(stderr, "claim: %s\n", jobq_errmsg(conn));
			jobq_disconnect(conn);
			return 1;
		}
		count = jobq_joblist_count(jobs);
		for (i = 0; i < count; i++)
		{
			const JobqJob *job = jobq_joblist_get(jobs, i);

			/* the work of the job would be done here */
			if (jobq_complete(conn, jobq_job_id(job), jobq_job_token(job), NULL, 0) == JOBQ_OK)
				completed++;
			else if (jobq_status(conn) != JOBQ_ERR_STALE)
			{
				fprintf(stderr, "complete: %s\n", jobq_errmsg(conn));
				jobq_joblist_free(jobs);
				jobq_disconnect(conn);
				return 1;
			}
		}
		jobq_joblist_free(jobs);
		if (count == 0)
			break;
	}
	printf("completed %ld\n", completed);
	jobq_disconnect(conn);
	return 0;
}
