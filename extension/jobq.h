/*-------------------------------------------------------------------------
 *
 * jobq.h
 *	  Declarations shared by the C files of the jobq extension.
 *
 * Vocabulary used throughout:
 *	queue	a named stream of jobs with its own settings (a row of
 *			jobq.queues; the name is data, never an identifier)
 *	job		a jsonb payload plus bookkeeping; live jobs (ready, running)
 *			sit in jobq.jobs, finished ones in jobq.history
 *	claim	taking ready jobs with FOR NO KEY UPDATE SKIP LOCKED; each
 *			claimed job gets a lease (locked_until) and a fresh token
 *	attempt	counted at claim time, so a crashed worker burns one
 *	token	fences every later state change: a stale token changes nothing
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/jobq.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JOBQ_H
#define JOBQ_H

#include "postgres.h"

#include "executor/spi.h"
#include "fmgr.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"

/* Hard limits of the contract (README "Limits") */
#define JOBQ_QUEUE_NAME_MAX			48		/* bytes; "jobq." + name fits NAMEDATALEN */
#define JOBQ_LEASE_MIN_USECS		(INT64CONST(1) * USECS_PER_SEC)
#define JOBQ_LEASE_MAX_USECS		(INT64CONST(24) * 3600 * USECS_PER_SEC)
#define JOBQ_DELAY_MAX_USECS		(INT64CONST(365) * USECS_PER_DAY)
#define JOBQ_BACKOFF_BASE_MAX_USECS	(USECS_PER_DAY)
#define JOBQ_BACKOFF_CAP_MAX_USECS	(INT64CONST(365) * USECS_PER_DAY)
#define JOBQ_RETENTION_MAX_USECS	(INT64CONST(3650) * USECS_PER_DAY)
#define JOBQ_MAX_ATTEMPTS_LIMIT		1000
#define JOBQ_PRIORITY_MIN			(-1000)
#define JOBQ_PRIORITY_MAX			1000
#define JOBQ_CLAIM_BATCH_MAX		1000
#define JOBQ_ENQUEUE_BATCH_MAX		10000
#define JOBQ_COMPLETE_BATCH_MAX		1000
#define JOBQ_SWEEP_BATCH_MAX		100000
#define JOBQ_LIST_MAX				10000
#define JOBQ_DEDUPE_KEY_MAX			512
#define JOBQ_WORKER_NAME_MAX		200
#define JOBQ_ERROR_TEXT_MAX			4096	/* bytes kept per error */
#define JOBQ_ERRORS_KEPT			10		/* errors kept per job */
#define JOBQ_PAYLOAD_HARD_MAX_KB	(64 * 1024)

/* GUCs (jobq.c) */
extern int	jobq_max_payload_kb;

/* plans.c */
extern SPIPlanPtr jobq_prepare(const char *sql, int nargs, Oid *argtypes);
extern void jobq_spi_connect(void);
extern void jobq_spi_finish(void);
extern void jobq_spi_check(int rc, int expected, const char *what);

/* validate.c */
extern void jobq_require(FunctionCallInfo fcinfo, int argno, const char *argname);
extern text *jobq_queue_arg(FunctionCallInfo fcinfo, int argno);
extern void jobq_check_queue_name(const char *name, int len);
extern int64 jobq_interval_usecs(const Interval *span);
extern void jobq_check_interval(const Interval *span, const char *argname,
								int64 min_usecs, int64 max_usecs);
extern void jobq_check_int_range(int64 value, const char *argname,
								 int64 min, int64 max);
extern void jobq_check_payload(Jsonb *value, const char *argname);
extern text *jobq_worker_arg(FunctionCallInfo fcinfo, int argno);
extern TimestampTz jobq_add_interval(TimestampTz t, const Interval *span);
extern TimestampTz jobq_now(void);

/* ack.c: shared by fail and sweep */
extern void jobq_count_stale(Datum job_id);

#endif							/* JOBQ_H */
