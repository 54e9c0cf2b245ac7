/*-------------------------------------------------------------------------
 *
 * jobq-worker.h
 *	  Run the jobq-worker loop with a C callback as the handler.
 *
 * A program that links libjobq-worker.a (the jobq-worker sources minus
 * main.c, built by "make -C client") before libjobq.a and libpq gets the
 * whole worker (claiming, heartbeats, timeouts, reconnects, signals, the
 * same command-line options) with a C function in place of the HANDLER
 * executable:
 *
 *		cc -o my-worker my-worker.c -Iclient/include \
 *		   client/libjobq-worker.a client/libjobq.a $(pkg-config --libs libpq) -lm
 *
 * It is a static library on purpose: a program framework (it owns main's
 * argv, the signal handlers and SIGCHLD) rather than part of libjobq's
 * shared-library ABI.  client/examples/callback_worker.c is a complete
 * example:
 *
 *		static int handle(const JobqWorkerJob *job, void *arg)
 *		{
 *			printf("{\"done\": %lld}", job->id);	-- the result (stdout)
 *			return 0;								-- same codes as a handler
 *		}
 *		int main(int argc, char **argv)
 *		{
 *			return jobq_worker_main(argc, argv, handle, NULL);
 *		}
 *
 * The callback runs in a forked child, one per job, so a crash, a leak or
 * a hang in it costs one attempt of one job and never the worker: the
 * worker keeps extending the lease, enforces --timeout and reports the
 * result exactly as it does for an executable.  Contract of the callback:
 *	- job and everything it points to belong to the worker; valid until the
 *	  callback returns.
 *	- what it writes to stdout is the result (JSON if it parses, else a
 *	  JSON string); what it writes to stderr becomes the error on failure.
 *	- the return value is the exit code: 0 done, 75 retry later, 65
 *	  permanent failure (dead), anything else a failure that is retried
 *	  while attempts are left.
 *	- the child is not the worker: it must not use the worker's database
 *	  connection (open its own if it needs one).
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/include/jobq-worker.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JOBQ_WORKER_API_H
#define JOBQ_WORKER_API_H

#ifdef __cplusplus
extern "C"
{
#endif

typedef struct JobqWorkerJob
{
	long long	id;
	const char *queue;
	const char *payload;		/* the job's JSON, NUL-terminated */
	int			attempt;		/* 1 on the first run */
	int			max_attempts;
	const char *deps;			/* a job in a flow: its dependency results
								 * (JSON, doc/flows.md); NULL outside flows */
} JobqWorkerJob;

typedef int (*JobqWorkerCallback) (const JobqWorkerJob *job, void *arg);

/*
 * jobq_worker_main
 *		Parse jobq-worker's command line and run the worker.  With a
 *		callback, "-- HANDLER" is not needed (and is refused).  Returns the
 *		process exit status: 0 done or stopped gracefully, 1 fatal error or
 *		stopped at once, 2 bad usage, 3 could not connect at start.
 */
extern int	jobq_worker_main(int argc, char **argv, JobqWorkerCallback callback,
							 void *arg);

#ifdef __cplusplus
}
#endif

#endif							/* JOBQ_WORKER_API_H */
