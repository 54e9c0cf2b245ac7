/*-------------------------------------------------------------------------
 *
 * callback_worker.c
 *	  jobq-worker with a C function as the handler (jobq-worker.h).
 *
 *	  callback_worker -d CONNINFO -q QUEUE [any jobq-worker option]...
 *
 * Everything but the handler is jobq-worker itself: claiming, leases and
 * heartbeats, --timeout, reconnects, signals, the log.  The callback runs
 * in a forked child per job, so it may crash, leak or hang without
 * harming the worker; what it prints is the job's result and its return
 * value is the handler's exit code (0 done, 75 retry later, 65 dead).
 *
 * This one answers {"length": <bytes of the payload>, "attempt": N}; a
 * payload containing "poison" fails for good, one containing "flaky"
 * asks to be retried on its first attempt.
 *
 * Build: make -C client (it links libjobq-worker.a, libjobq.a and libpq).
 *
 * IDENTIFICATION
 *	  client/examples/callback_worker.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <string.h>

#include "jobq-worker.h"

static int
handle(const JobqWorkerJob *job, void *arg)
{
	const char *prefix = arg;

	if (strstr(job->payload, "poison") != NULL)
	{
		fprintf(stderr, "%s: job %lld is poison\n", prefix, job->id);
		return 65;				/* permanent failure: dead at once */
	}
	if (strstr(job->payload, "flaky") != NULL && job->attempt == 1)
	{
		fprintf(stderr, "%s: job %lld: try again later\n", prefix, job->id);
		return 75;				/* retry after the queue's backoff */
	}
	printf("{\"length\": %zu, \"attempt\": %d}", strlen(job->payload), job->attempt);
	return 0;
}

int
main(int argc, char **argv)
{
	return jobq_worker_main(argc, argv, handle, (void *) "callback_worker");
}
