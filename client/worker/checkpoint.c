/*-------------------------------------------------------------------------
 *
 * checkpoint.c
 *	  jobq-worker's side of checkpoints (doc/flows.md, "Checkpoints"): the
 *	  state a job's earlier attempt stored is read when the job is claimed
 *	  again and handed to its handler; a persistent handler's checkpoint
 *	  messages are stored with the job's token.
 *
 * Only attempts after the first are read (a first attempt has none; see
 * jobq_checkpoint_read in doc/sql.md): a job that never checkpoints costs
 * no round trip.  A process handler gets the state in a file named by
 * JOBQ_CHECKPOINT_FILE (created here, removed with the job: job_free),
 * a persistent one as the job line's "checkpoint" member.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/worker/checkpoint.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "worker.h"

/* the server has no checkpoints (0.1.0 SQL): stop asking */
static bool unsupported = false;

/*
 * state_file
 *		A file holding state, for a process handler: its malloc'd path, or
 *		NULL (logged) when it cannot be written.
 */
static char *
state_file(Worker *w, const Job *job, const char *state)
{
	const char *dir = getenv("TMPDIR");
	char	   *path;
	size_t		len = strlen(state);
	int			fd;
	bool		ok;

	if (dir == NULL || dir[0] == '\0')
		dir = "/tmp";
	path = jobq_xmalloc(strlen(dir) + 64);
	sprintf(path, "%s/jobq-checkpoint-%lld-XXXXXX", dir, job_id(job));
	if ((fd = mkstemp(path)) < 0)
	{
		wlog(w, "warning", "job %lld: cannot create a checkpoint file in %s: %m; "
			 "the handler starts without its checkpoint", job_id(job), dir);
		free(path);
		return NULL;
	}
	ok = write(fd, state, len) == (ssize_t) len;
	if (close(fd) != 0 || !ok)
	{
		wlog(w, "warning", "job %lld: cannot write the checkpoint file %s; "
			 "the handler starts without its checkpoint", job_id(job), path);
		unlink(path);
		free(path);
		return NULL;
	}
	return path;
}

/*
 * checkpoint_fetch
 *		The checkpoints of the jobs just claimed that are not on their first
 *		attempt (db.c calls this once the claim's answer is in and the
 *		connection idle).  A failed read is logged and the job runs without
 *		one: it starts over, as without checkpoints.
 */
void
checkpoint_fetch(Worker *w, Job *jobs, int n)
{
	for (int i = 0; i < n && !unsupported; i++)
	{
		Job		   *job = &jobs[i];
		char	   *state = NULL;

		if (job_attempt(job) <= 1)
			continue;
		if (jobq_checkpoint_read(w->db.conn, jobq_job_id(job->jj), job_token(job),
								 &state) != JOBQ_OK)
		{
			if (jobq_status(w->db.conn) == JOBQ_ERR_VERSION)
				unsupported = true;
			else
				wlog(w, "warning", "job %lld: checkpoint not read: %s", job_id(job),
					 jobq_errmsg(w->db.conn));
			continue;
		}
		if (state == NULL)
			continue;
		if (w->persistent > 0)
			job->checkpoint = state;
		else
		{
			job->checkpoint_file = state_file(w, job, state);
			jobq_free(state);
		}
	}
}

/*
 * checkpoint_store
 *		A persistent handler's {"id": N, "checkpoint": STATE} for job (a
 *		running one): stored at once with the job's token.  Refusals are
 *		logged; the job goes on either way (a stale token stops it through
 *		the heartbeat, as always).
 */
void
checkpoint_store(Worker *w, const Job *job, const char *state, size_t len)
{
	/* a waiting claim holds the connection (not while handlers run, but
	 * to be sure): its answer goes to the backlog */
	if (w->db.claiming)
		flow_claim_abort(w, now_mono());
	if (!w->db.connected)
	{
		wlog(w, "warning", "job %lld: checkpoint not stored: no database connection",
			 job_id(job));
		return;
	}
	if (jobq_checkpoint(w->db.conn, jobq_job_id(job->jj), job_token(job), state, len) !=
		JOBQ_OK)
		wlog(w, "warning", "job %lld: checkpoint not stored: %s", job_id(job),
			 jobq_errmsg(w->db.conn));
}

/*
 * checkpoint_free
 *		What checkpoint_fetch gave job: its state, its file (removed).
 */
void
checkpoint_free(Job *job)
{
	jobq_free(job->checkpoint);
	job->checkpoint = NULL;
	if (job->checkpoint_file != NULL)
	{
		unlink(job->checkpoint_file);
		free(job->checkpoint_file);
		job->checkpoint_file = NULL;
	}
}
