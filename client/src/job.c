/*-------------------------------------------------------------------------
 *
 * job.c
 *	  The JobqJob and JobqJobList objects: accessors, copies, frees.
 *	  Lists are built by claim.c.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/src/job.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "jobq-int.h"

/* free_job_fields: the strings of one job (not the struct). */
static void
free_job_fields(JobqJob *job)
{
	free(job->queue);
	free(job->payload);
	free(job->locked_until);
	free(job->enqueued_at);
}

size_t
jobq_joblist_count(const JobqJobList *list)
{
	return list ? list->n : 0;
}

const JobqJob *
jobq_joblist_get(const JobqJobList *list, size_t i)
{
	return (list && i < list->n && !list->jobs[i].taken) ? &list->jobs[i] : NULL;
}

/*
 * jobq_joblist_take: see jobq-client.h.  The strings move to a struct of
 * their own; the slot left behind owns nothing.
 */
JobqJob *
jobq_joblist_take(JobqJobList *list, size_t i)
{
	JobqJob    *job;
	JobqJob    *slot;

	if (list == NULL || i >= list->n || list->jobs[i].taken)
		return NULL;
	job = malloc(sizeof(JobqJob));
	if (job == NULL)
		return NULL;
	slot = &list->jobs[i];
	*job = *slot;
	job->borrowed = 0;
	memset(slot, 0, sizeof(JobqJob));
	slot->borrowed = 1;
	slot->taken = 1;
	return job;
}

void
jobq_joblist_free(JobqJobList *list)
{
	size_t		i;

	if (list == NULL)
		return;
	for (i = 0; i < list->n; i++)
		free_job_fields(&list->jobs[i]);
	free(list->jobs);
	free(list);
}

int64_t
jobq_job_id(const JobqJob *job)
{
	return job ? job->id : 0;
}

const char *
jobq_job_queue(const JobqJob *job)
{
	return job ? job->queue : NULL;
}

const char *
jobq_job_payload(const JobqJob *job, size_t *len)
{
	if (len != NULL)
		*len = job ? job->payload_len : 0;
	return job ? job->payload : NULL;
}

int
jobq_job_attempt(const JobqJob *job)
{
	return job ? job->attempt : 0;
}

int
jobq_job_max_attempts(const JobqJob *job)
{
	return job ? job->max_attempts : 0;
}

const char *
jobq_job_token(const JobqJob *job)
{
	return job ? job->token : NULL;
}

const char *
jobq_job_locked_until(const JobqJob *job)
{
	return job ? job->locked_until : NULL;
}

const char *
jobq_job_enqueued_at(const JobqJob *job)
{
	return job ? job->enqueued_at : NULL;
}

int64_t
jobq_job_lease_ms(const JobqJob *job)
{
	return job ? job->lease_ms : 0;
}

int64_t
jobq_job_flow_id(const JobqJob *job)
{
	return job ? job->flow_id : 0;
}

/*
 * jobq_job_dup: a deep, caller-owned copy.  The payload is copied with
 * its length, so a payload is never re-measured with strlen.
 */
JobqJob *
jobq_job_dup(const JobqJob *job)
{
	JobqJob    *copy;

	if (job == NULL)
		return NULL;
	copy = calloc(1, sizeof(JobqJob));
	if (copy == NULL)
		return NULL;
	*copy = *job;
	copy->borrowed = 0;
	copy->queue = jobq_strdup(job->queue);
	copy->payload = malloc(job->payload_len + 1);
	copy->locked_until = jobq_strdup(job->locked_until);
	copy->enqueued_at = jobq_strdup(job->enqueued_at);
	if (!copy->queue || !copy->payload || !copy->locked_until || !copy->enqueued_at)
	{
		free_job_fields(copy);
		free(copy);
		return NULL;
	}
	memcpy(copy->payload, job->payload, job->payload_len + 1);
	return copy;
}

/*
 * jobq_job_free: frees a job from jobq_job_dup.  A job borrowed from a
 * list is ignored rather than corrupting the list.
 */
void
jobq_job_free(JobqJob *job)
{
	if (job == NULL || job->borrowed)
		return;
	free_job_fields(job);
	free(job);
}
