/*-------------------------------------------------------------------------
 *
 * jobq-abi-0.1.h
 *	  The option structs of libjobq 0.1.0, which had no size field: what a
 *	  program linked against 0.1.0 passes.  compat.c converts them;
 *	  test/test_abi.c calls the 0.1.0 entry points with them.
 *
 * Frozen: these are the layouts of a released ABI.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/src/jobq-abi-0.1.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JOBQ_ABI_0_1_H
#define JOBQ_ABI_0_1_H

typedef struct QueueOpts_0_1
{
	int			lease_s;
	int			max_attempts;
	int			backoff_base_s;
	int			backoff_cap_s;
	int			completed_retention_s;
	int			dead_retention_s;
	int			notify;
} QueueOpts_0_1;

typedef struct EnqueueOpts_0_1
{
	int			delay_s;
	const char *run_at;
	int			priority;
	int			max_attempts;
	const char *dedupe_key;
} EnqueueOpts_0_1;

#endif							/* JOBQ_ABI_0_1_H */
