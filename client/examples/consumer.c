/*-------------------------------------------------------------------------
 *
 * consumer.c
 *	  Minimal libjobq consumer: claim jobs, "handle" them, complete them,
 *	  and sleep on LISTEN/NOTIFY when the queue is empty.
 *
 *	  usage: consumer [conninfo] [queue] [max-idle-seconds]
 *
 * Shows the loop every worker has: claim a batch; for each job run the
 * handler and complete (or fail) it with its claim token; when there is
 * nothing to do, wait for a notification or the poll interval; on a lost
 * connection, reconnect (claimed jobs keep their leases).  A stale token
 * means the lease ran out and someone else may be running the job: stop
 * and move on.  Exits after max-idle-seconds without work (default 5).
 *
 * Copyright (c) 2025, jobq authors
 *
 * IDENTIFICATION
 *	  client/examples/consumer.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>

#include "jobq-client.h"

#define POLL_MS 1000

int
main(int argc, char **argv)
{
	const char *conninfo = argc > 1 ? argv[1] : NULL;
	const char *queues[1];
	int			max_idle = argc > 3 ? atoi(argv[3]) : 5;
	int			idle_ms = 0;
	JobqConn   *conn;

	queues[0] = argc > 2 ? argv[2] : "example";
	conn = jobq_connect(conninfo);
	if (conn == NULL || jobq_status(conn) != JOBQ_ERR_NONE)
	{
		fprintf(stderr, "connect: %s\n", jobq_errmsg(conn));
		jobq_disconnect(conn);
		return 1;
	}

	while (idle_ms < max_idle * 1000)
	{
		JobqJobList *jobs = jobq_claim(conn, queues, 1, 10, -1, "example-consumer");
		size_t		i;
		int			woken;

		if (jobs == NULL)
		{
			fprintf(stderr, "claim: %s\n", jobq_errmsg(conn));
			if (jobq_error_action(conn) == JOBQ_ACTION_RECONNECT &&
				jobq_reconnect(conn) == JOBQ_OK)
				continue;
			break;
		}
		for (i = 0; i < jobq_joblist_count(jobs); i++)
		{
			const JobqJob *job = jobq_joblist_get(jobs, i);
			size_t		len;
			const char *payload = jobq_job_payload(job, &len);

			printf("job %lld (attempt %d/%d): %.*s\n",
				   (long long) jobq_job_id(job), jobq_job_attempt(job),
				   jobq_job_max_attempts(job), (int) len, payload);
			if (jobq_complete(conn, jobq_job_id(job), jobq_job_token(job),
							  "{\"ok\": true}", 12) != JOBQ_OK)
				fprintf(stderr, "complete %lld: %s (%s)\n",
						(long long) jobq_job_id(job), jobq_errmsg(conn),
						jobq_error_name(jobq_status(conn)));
		}
		if (jobq_joblist_count(jobs) > 0)
		{
			idle_ms = 0;
			jobq_joblist_free(jobs);
			continue;
		}
		jobq_joblist_free(jobs);

		/* nothing to do: wait for NOTIFY, at most the poll interval */
		woken = jobq_wait_for_work(conn, queues, 1, POLL_MS);
		if (woken == JOBQ_ERR)
		{
			fprintf(stderr, "wait: %s\n", jobq_errmsg(conn));
			if (jobq_reconnect(conn) != JOBQ_OK)
				break;
		}
		else if (woken == 0)
			idle_ms += POLL_MS;
	}
	jobq_disconnect(conn);
	return 0;
}
