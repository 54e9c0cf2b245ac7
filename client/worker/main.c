/*-------------------------------------------------------------------------
 *
 * main.c
 *	  jobq-worker: run an executable handler for each claimed job.
 *
 * Everything is in libjobq-worker.a (jobq_worker_main, loop.c), so that
 * a program can link the same worker with a C callback (jobq-worker.h).
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/worker/main.c
 *
 *-------------------------------------------------------------------------
 */
#include "worker.h"

int
main(int argc, char **argv)
{
	return jobq_worker_main(argc, argv, NULL, NULL);
}
