/*-------------------------------------------------------------------------
 *
 * jobq.c
 *	  Module entry point of the jobq extension: PG_MODULE_MAGIC and GUCs.
 *
 * jobq turns a PostgreSQL database into a job queue.  Producers enqueue
 * jobs (a jsonb payload) into named queues; workers claim ready jobs, each
 * claim giving a lease and a fresh token; the token fences every later
 * state change (complete, fail, extend, release), so a worker whose lease
 * ran out changes nothing.  jobq_sweep returns jobs whose lease expired.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/jobq.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"

#include "commands/async.h"
#include "utils/guc.h"

PG_MODULE_MAGIC;

/* jobq.max_payload_size, in kB */
int			jobq_max_payload_kb = 1024;

void		_PG_init(void);

/*
 * _PG_init
 *	  Define the GUCs.  Settings live under the reserved "jobq." prefix.
 */
void
_PG_init(void)
{
	DefineCustomIntVariable("jobq.max_payload_size",
							"Largest payload or result a job may carry.",
							"Checked on enqueue and complete; the hard ceiling is 64MB.",
							&jobq_max_payload_kb,
							1024,
							1,
							JOBQ_PAYLOAD_HARD_MAX_KB,
							PGC_SUSET,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	MarkGUCPrefixReserved("jobq");
}

/*
 * jobq_notify_queue
 *	  NOTIFY "jobq.<queue>" with an empty payload: a hint for idle workers,
 *	  never data (any role may LISTEN on any channel).  PostgreSQL folds
 *	  identical notifications of one transaction into one, so a transaction
 *	  that makes many jobs ready sends one notification per queue, at
 *	  commit, and none if it rolls back.
 */
void
jobq_notify_queue(text *queue)
{
	char		channel[NAMEDATALEN];
	int			len = VARSIZE_ANY_EXHDR(queue);

	if (len > JOBQ_QUEUE_NAME_MAX)
		elog(ERROR, "jobq: queue name too long for a channel");
	memcpy(channel, "jobq.", 5);
	memcpy(channel + 5, VARDATA_ANY(queue), len);
	channel[5 + len] = '\0';
	Async_Notify(channel, "");
}
