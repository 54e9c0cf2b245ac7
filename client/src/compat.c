/*-------------------------------------------------------------------------
 *
 * compat.c
 *	  The entry points of programs linked against libjobq 0.1.0, whose
 *	  option structs had no size field.
 *
 * 0.2.0 gave JobqQueueOpts and JobqEnqueueOpts a leading size field so
 * that they can grow (jobq-client.h).  A program built against 0.1.0
 * still passes the old layout; its references carry the symbol version
 * JOBQ_0, which the .symver lines below bind to these functions, while
 * programs built now get the JOBQ_0.2 versions.  Each copies the old
 * struct into the new one and calls the current function, so the soname
 * stays libjobq.so.0.  Only the shared library has them: a static link
 * always takes the current functions.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/src/compat.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq-int.h"
#include "jobq-abi-0.1.h"

#ifdef JOBQ_SHARED

int			jobq_create_queue_0_1(JobqConn *conn, const char *queue,
								  const QueueOpts_0_1 *old);
int			jobq_alter_queue_0_1(JobqConn *conn, const char *queue,
								 const QueueOpts_0_1 *old);
int			jobq_enqueue_0_1(JobqConn *conn, const char *queue,
							 const char *payload, size_t payload_len,
							 const EnqueueOpts_0_1 *old, int64_t *id_out);
int			jobq_enqueue_batch_0_1(JobqConn *conn, const char *queue, size_t n,
								   const char *const *payloads,
								   const size_t *payload_lens,
								   const char *const *dedupe_keys,
								   const EnqueueOpts_0_1 *old,
								   int64_t *ids_out, int *created_out);

__asm__(".symver jobq_create_queue_0_1, jobq_create_queue@JOBQ_0");
__asm__(".symver jobq_alter_queue_0_1, jobq_alter_queue@JOBQ_0");
__asm__(".symver jobq_enqueue_0_1, jobq_enqueue@JOBQ_0");
__asm__(".symver jobq_enqueue_batch_0_1, jobq_enqueue_batch@JOBQ_0");

/* queue_opts: the new form of old (NULL stays NULL) */
static const JobqQueueOpts *
queue_opts(const QueueOpts_0_1 *old, JobqQueueOpts *o)
{
	if (old == NULL)
		return NULL;
	o->lease_s = old->lease_s;
	o->max_attempts = old->max_attempts;
	o->backoff_base_s = old->backoff_base_s;
	o->backoff_cap_s = old->backoff_cap_s;
	o->completed_retention_s = old->completed_retention_s;
	o->dead_retention_s = old->dead_retention_s;
	o->notify = old->notify;
	return o;
}

static const JobqEnqueueOpts *
enqueue_opts(const EnqueueOpts_0_1 *old, JobqEnqueueOpts *o)
{
	if (old == NULL)
		return NULL;
	o->delay_s = old->delay_s;
	o->run_at = old->run_at;
	o->priority = old->priority;
	o->max_attempts = old->max_attempts;
	o->dedupe_key = old->dedupe_key;
	return o;
}

int
jobq_create_queue_0_1(JobqConn *conn, const char *queue, const QueueOpts_0_1 *old)
{
	JobqQueueOpts o = JOBQ_QUEUE_OPTS_INIT;

	return jobq_create_queue(conn, queue, queue_opts(old, &o));
}

int
jobq_alter_queue_0_1(JobqConn *conn, const char *queue, const QueueOpts_0_1 *old)
{
	JobqQueueOpts o = JOBQ_QUEUE_OPTS_INIT;

	return jobq_alter_queue(conn, queue, queue_opts(old, &o));
}

int
jobq_enqueue_0_1(JobqConn *conn, const char *queue, const char *payload,
				 size_t payload_len, const EnqueueOpts_0_1 *old, int64_t *id_out)
{
	JobqEnqueueOpts o = JOBQ_ENQUEUE_OPTS_INIT;

	return jobq_enqueue(conn, queue, payload, payload_len, enqueue_opts(old, &o),
						id_out);
}

int
jobq_enqueue_batch_0_1(JobqConn *conn, const char *queue, size_t n,
					   const char *const *payloads, const size_t *payload_lens,
					   const char *const *dedupe_keys, const EnqueueOpts_0_1 *old,
					   int64_t *ids_out, int *created_out)
{
	JobqEnqueueOpts o = JOBQ_ENQUEUE_OPTS_INIT;

	return jobq_enqueue_batch(conn, queue, n, payloads, payload_lens, dedupe_keys,
							  enqueue_opts(old, &o), ids_out, created_out);
}

#endif							/* JOBQ_SHARED */
