/*-------------------------------------------------------------------------
 *
 * flow.c
 *	  jobq-worker's job flow: the claim policy (when to claim, how many),
 *	  the backlog of claimed jobs waiting for a slot, the ack queue of
 *	  finished jobs waiting to be reported, and the heartbeats.
 *
 * The loop (loop.c) calls these in the order described there; the
 * database calls they make are db.c's.  A claim asks for the free slots,
 * at most --batch; the worker holds at most max(--concurrency, --batch)
 * jobs, running or claimed and waiting.  want_claim says a claim should
 * go out as soon as there is room: set when a claim came back full, on a
 * NOTIFY and after a reconnect (loop.c), cleared when a claim found
 * nothing.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/worker/flow.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"

/* ----------------------------------------------------------------------
 * Slots
 * ---------------------------------------------------------------------- */

int
flow_running(Worker *w)
{
	int			n = 0;

	for (int i = 0; i < w->concurrency; i++)
		if (w->slots[i].busy)
			n++;
	return n;
}

/* jobs that could start now: free slots, and with --persistent, room in
 * ready handler processes */
static int
free_slots(Worker *w)
{
	int			n = w->concurrency - flow_running(w);

	if (w->persistent > 0)
	{
		int			room = persistent_room(w);

		if (room < n)
			n = room;
	}
	return n;
}

/* ----------------------------------------------------------------------
 * Claim policy: when to claim, and how many
 * ---------------------------------------------------------------------- */

/*
 * ahead
 *		How many claimed jobs may wait for a slot on top of the running ones
 *		(--prefetch).  auto: with --persistent, --batch jobs while the jobs
 *		take less than PREFETCH_JOB_MAX_S on average, once that is known,
 *		until they take twice that (flow_job_time); otherwise none.  Why: short jobs in long-lived processes finish
 *		within a round trip to the server, so a worker that claims only for
 *		free slots leaves its handlers idle for every round trip (the claim
 *		and the completions go out only when the answers are in, and the next
 *		jobs arrive a round trip later).  Claimed ahead, the next batch is
 *		there when the answers come: it starts at once, and the round trip
 *		that completes the answered jobs claims the batch after it while the
 *		handlers run.  A job claimed ahead waits about one job's time, so
 *		long jobs are not claimed ahead: they would sit claimed while another
 *		worker could run them.
 */
static int
ahead(Worker *w)
{
	if (w->prefetch >= 0)
		return w->prefetch;
	return w->claiming_ahead ? w->batch : 0;
}

/*
 * flow_job_time
 *		A job of a handler process ended after secs: keep the moving average
 *		of the jobs' time (the last ten or so weigh most) that
 *		--prefetch=auto goes by, and log when it starts or stops claiming
 *		ahead.
 */
void
flow_job_time(Worker *w, double secs)
{
	bool		fast;

	w->job_time_avg = w->jobs_timed == 0 ? secs : 0.9 * w->job_time_avg + 0.1 * secs;
	w->jobs_timed++;
	fast = w->claiming_ahead ? w->job_time_avg <= 2 * PREFETCH_JOB_MAX_S :
		w->job_time_avg < PREFETCH_JOB_MAX_S;
	if (w->prefetch >= 0 || w->persistent == 0 || fast == w->claiming_ahead)
		return;
	w->claiming_ahead = fast;
	if (fast)
		wlog(w, "info", "claiming up to %d job(s) ahead: jobs take %.1f ms on average",
			 w->batch, w->job_time_avg * 1000);
	else
		wlog(w, "info", "no longer claiming ahead: jobs take %.1f ms on average",
			 w->job_time_avg * 1000);
}

/*
 * claim_size
 *		How many jobs the next claim asks for: the room left, at most
 *		max(--batch, ahead).  The worker holds at most max(--concurrency +
 *		ahead, --batch) jobs, running or claimed and waiting for a slot: with
 *		the default --batch (= --concurrency) and nothing ahead a claim takes
 *		exactly the free slots and nothing waits; a larger --batch lets up to
 *		--batch - 1 claimed jobs wait, --prefetch=N up to N (their leases kept
 *		alive by the heartbeat).  --max counts too.
 */
static int
claim_size(Worker *w)
{
	int			a = ahead(w);
	int			hold = w->batch > w->concurrency + a ? w->batch : w->concurrency + a;
	long		n = hold - flow_running(w) - w->nbacklog;

	if (n > (w->batch > a ? w->batch : a))
		n = w->batch > a ? w->batch : a;
	if (w->max_jobs > 0 && w->max_jobs - w->started_jobs - w->nbacklog < n)
		n = w->max_jobs - w->started_jobs - w->nbacklog;
	return n > 0 ? (int) n : 0;
}

/*
 * flow_may_claim
 *		A claim now would have somewhere to go: a slot is free (so the
 *		backlog is empty: start_jobs fills free slots first), or jobs are
 *		claimed ahead and the backlog is empty; the session is free, and
 *		--max is not reached.
 */
bool
flow_may_claim(Worker *w)
{
	int			free = free_slots(w);

	if (w->stopping || w->quiet || !w->db.connected || w->db.claiming || w->nbacklog > 0 ||
		claim_size(w) <= 0)
		return false;

	/*
	 * Claiming ahead (see ahead()): the next batch as soon as the backlog is
	 * empty, while the handlers run.  NB: only while jobs run, which says
	 * the handlers are there to take it.
	 */
	if (ahead(w) > 0 && flow_running(w) > 0)
		return true;
	if (free <= 0)
		return false;

	/*
	 * --persistent: answers come back within milliseconds, so a claim for
	 * the one slot just freed would be a round trip for one job.  While
	 * jobs run, wait until half the slots are free (the acks wait the same
	 * way, flow_acks_due, and go out with that claim).
	 */
	if (w->persistent > 0 && flow_running(w) > 0 && free < (w->concurrency + 1) / 2)
		return false;
	return true;
}

/*
 * took_jobs
 *		Take the jobs of a claim that asked for `asked` into the backlog (or
 *		note that it found none).  A claim that came back full may have left
 *		more behind: claim again as soon as there is room.  One that came
 *		back short emptied the queues for now; the next claim comes with the
 *		next completion, a NOTIFY, the idle blocking claim or the poll.
 */
static void
took_jobs(Worker *w, Job *jobs, int njobs, int asked, double now)
{
	if (njobs == 0)
	{
		w->want_claim = false;
		w->drained = true;
		w->next_poll = now + w->poll_interval;
	}
	else
	{
		w->want_claim = njobs >= asked;
		w->drained = false;
		if (w->nbacklog + njobs > w->backlog_cap)
		{
			w->backlog_cap = w->nbacklog + njobs;
			w->backlog = realloc(w->backlog, sizeof(Job) * w->backlog_cap);
			if (w->backlog == NULL)
			{
				fprintf(stderr, "jobq-worker: out of memory\n");
				exit(1);
			}
		}
		memcpy(w->backlog + w->nbacklog, jobs, sizeof(Job) * njobs);
		w->nbacklog += njobs;
	}
	free(jobs);
}

void
flow_claim(Worker *w, double now)
{
	int			n = claim_size(w);
	Job		   *jobs;
	int			njobs;
	DbStatus	st;

	/*
	 * --persistent: answers waiting to be reported (flow_acks_due) go in
	 * the same round trip as the claim, which flow_flush_acks makes with
	 * the completions; a claim of its own would cost a round trip more.
	 */
	if (w->persistent > 0 && w->acks_head != NULL)
	{
		flow_flush_acks(w, now);
		if (!flow_may_claim(w) || !(w->want_claim || now >= w->next_poll))
			return;				/* the completions claimed (or found none) */
		n = claim_size(w);
	}

	st = db_claim(w, n, &jobs, &njobs);
	if (st == DB_ERROR)
	{
		/* a bad lease, a missing extension, no privilege: not transient */
		wlog(w, "error", "stopping: claims fail");
		w->exit_code = 1;
		w->stopping = true;
		w->stop_deadline = now + w->grace;
		return;
	}
	if (st != DB_OK)
		return;
	took_jobs(w, jobs, njobs, n, now);
}

/*
 * flow_idle_blocking
 *		The worker is idle (nothing running, claimed or waiting to be
 *		reported) and this session claims with a server-side wait.
 */
bool
flow_idle_blocking(Worker *w)
{
	return w->db.blocking && !w->burst && flow_running(w) == 0 && w->nbacklog == 0 &&
		w->acks_head == NULL;
}

/*
 * flow_blocking_claim
 *		When the worker is idle (nothing running, claimed or waiting to be
 *		reported) and the session claims with a server-side wait, send a
 *		claim that waits up to the poll interval, and less when a sweep is
 *		due sooner.  Returns false when the caller should claim the usual
 *		way (not idle, no blocking in this session, --burst, a sweep due).
 */
bool
flow_blocking_claim(Worker *w, double now)
{
	double		wait = w->poll_interval;
	int			n = claim_size(w);

	if (!flow_idle_blocking(w) || n <= 0)
		return false;
	if (w->sweep_interval > 0 && w->next_sweep - now < wait)
		wait = w->next_sweep - now;
	if (w->cron_interval > 0 && w->next_cron - now < wait)
		wait = w->next_cron - now;
	/* (the registry heartbeat needs the session too) */
	if (registry_next_beat(w) > 0 && registry_next_beat(w) - now < wait)
		wait = registry_next_beat(w) - now;
	if (wait > JOBQ_CLAIM_WAIT_MAX_MS / 1000.0)
		wait = JOBQ_CLAIM_WAIT_MAX_MS / 1000.0;
	if (wait < 0.05)
		return false;
	if (db_claim_start(w, n, (int) (wait * 1000)) != DB_OK)
		return false;
	w->claim_asked = n;
	w->claim_wait = wait;
	return true;
}

/*
 * flow_quiet_wait
 *		A quiet idle worker waits in a claim too: the server holds a quiet
 *		worker's waiting claim, which takes no job, until its wait ends or
 *		the next signal for it commits (the server's workers.c), so that a
 *		resume is heard at once, not at the next heartbeat.
 */
bool
flow_quiet_wait(Worker *w, double now)
{
	if (!w->quiet || w->stopping || !w->reg.registered || !w->db.connected ||
		w->db.claiming || now < w->block_after)
		return false;
	return flow_blocking_claim(w, now);
}

/* the socket of a waiting claim is readable: take the answer when it is in */
void
flow_claim_poll(Worker *w, double now)
{
	bool		done = false;
	Job		   *jobs;
	int			njobs;

	db_claim_poll(w, &done);
	if (!done)
		return;
	if (db_claim_finish(w, &jobs, &njobs) != DB_OK)
		return;
	took_jobs(w, jobs, njobs, w->claim_asked, now);
	/*
	 * Empty before its wait was over: maybe a signal for us (registry.c).
	 * Jobs while we are quiet: the server held the claim of a quiet worker
	 * and a resume let it claim, so the registry says running now; beat to
	 * hear it (NB: else "resumed" waited for the next heartbeat, and the
	 * worker claimed nothing more meanwhile).
	 */
	if ((njobs == 0 && now < w->db.claim_started + w->claim_wait - 0.05) ||
		(njobs > 0 && w->quiet))
		registry_beat_soon(w, now);

	/*
	 * An empty answer means the wait is over (or another worker took the
	 * job that woke us): wait again at once, but not more than ten times a
	 * second.  NB: only then.  After jobs, the next wait starts as soon as
	 * the worker is idle again; throttling it too held every job that came
	 * within 100 ms of the last claim until the 100 ms were over (jobs 20 ms
	 * apart: p50 45 ms from commit to handler start, 4 ms with LISTEN).
	 */
	w->block_after = njobs == 0 ? w->db.claim_started + 0.1 : now;
}

/*
 * flow_claim_abort
 *		End a waiting claim now (SIGTERM, SIGHUP): interrupt it on the
 *		server and take its answer, which may still hold jobs claimed just
 *		before; they go to the backlog, where shutdown releases them.
 */
void
flow_claim_abort(Worker *w, double now)
{
	Job		   *jobs;
	int			njobs;

	if (!w->db.claiming)
		return;
	db_claim_interrupt(w);
	if (db_claim_finish(w, &jobs, &njobs) == DB_OK)
		took_jobs(w, jobs, njobs, w->claim_asked, now);
}

/* ----------------------------------------------------------------------
 * The backlog: claimed jobs waiting for a slot
 * ---------------------------------------------------------------------- */

/*
 * handler_gone
 *		The handler could not be executed for job (it was removed, or lost
 *		its execute permission, after the start-up check): the job is not to
 *		blame, so it is released with its attempt given back instead of
 *		failed, and the worker stops claiming (every other job would go the
 *		same way) and exits WORKER_EXIT_HANDLER_GONE after its running jobs.
 */
static void
handler_gone(Worker *w, Job *job, int exec_errno)
{
	Ack		   *a = jobq_xmalloc(sizeof(Ack));

	wlog(w, "error", "handler \"%s\" cannot be executed: %s; releasing job %lld "
		 "and stopping", w->handler_argv[0], strerror(exec_errno), job_id(job));
	memset(a, 0, sizeof(*a));
	a->job = *job;
	a->kind = ACK_RELEASE;
	a->outcome = "not-executable";
	a->exit_code = -1;
	flow_push_ack(w, a);
	w->exit_code = WORKER_EXIT_HANDLER_GONE;
	if (!w->stopping)
		w->stop_deadline = now_mono() + w->grace;
	w->stopping = true;
}

/* take jobs from the backlog (oldest first) into free slots */
void
flow_start_jobs(Worker *w)
{
	for (int i = 0; i < w->concurrency && w->nbacklog > 0 && !w->stopping; i++)
	{
		Slot	   *s = &w->slots[i];
		Job			job;
		int			exec_errno;

		if (s->busy)
			continue;
		if (w->persistent > 0)
		{
			if (!persistent_start(w, s, &w->backlog[0]))
				break;			/* no process has room: the job waits */
			memmove(w->backlog, w->backlog + 1, sizeof(Job) * (--w->nbacklog));
			w->started_jobs++;
			continue;
		}
		job = w->backlog[0];
		memmove(w->backlog, w->backlog + 1, sizeof(Job) * (--w->nbacklog));
		if (handler_start(w, s, &job, &exec_errno))
			w->started_jobs++;
		else if (exec_errno != 0)
			handler_gone(w, &job, exec_errno);
		else
		{
			Ack		   *a = jobq_xmalloc(sizeof(Ack));

			memset(a, 0, sizeof(*a));
			a->job = job;
			a->kind = ACK_FAIL;
			a->outcome = "failed";
			a->exit_code = -1;
			a->error = jobq_xstrdup("could not start the handler");
			flow_push_ack(w, a);
			w->started_jobs++;
		}
	}
	if (w->persistent > 0)
		persistent_feed(w);
}

/* SIGTERM: jobs claimed but not started go back at once */
void
flow_release_backlog(Worker *w)
{
	while (w->nbacklog > 0 && w->db.connected)
	{
		Job		   *job = &w->backlog[w->nbacklog - 1];
		bool		released;

		if (db_release(w, job, &released) == DB_CONN)
			return;
		wlog(w, "info", "job %lld released (not started)", job_id(job));
		job_free(job);
		w->nbacklog--;
	}
}

/* ----------------------------------------------------------------------
 * The ack queue: finished jobs waiting to be reported
 * ---------------------------------------------------------------------- */

void
flow_push_ack(Worker *w, Ack *a)
{
	if (a == NULL)
	{
		w->finished_jobs++;
		return;
	}
	if (w->acks_head == NULL)
		w->acks_since = now_mono();
	a->next = NULL;
	if (w->acks_tail)
		w->acks_tail->next = a;
	else
		w->acks_head = a;
	w->acks_tail = a;
}

/*
 * ack_done
 *		Log the line of a reported job, count it, free the ack.  A refused
 *		report (stale: the lease passed, typically while the server was out
 *		of reach, and the job was swept or claimed again) gets a warning of
 *		its own: the handler's work is not recorded, and the job runs again.
 */
static void
ack_done(Worker *w, Ack *a, const char *state)
{
	if (strcmp(state, "stale") == 0)
		wlog(w, "warning", "job %lld: the server refused its %s: the lease had "
			 "passed (stale token); the job runs again or ran elsewhere",
			 job_id(&a->job), a->kind == ACK_COMPLETE ? "completion" :
			 a->kind == ACK_FAIL ? "failure" : "release");
	log_job(w, a, state);
	w->finished_jobs++;
	job_free(&a->job);
	free(a->result);
	free(a->error);
	free(a);
}

/*
 * flow_acks_due
 *		Whether the acks should go out now.  With a process per job, always:
 *		each one ends with its process.  With --persistent, answers trickle
 *		in over the pipes, a few at a time: reporting each trickle costs a
 *		round trip for a small batch and leaves the handlers idle meanwhile.
 *		So the acks wait until half the jobs in flight are answered, or
 *		PERSISTENT_ACK_WAIT_S after the first one, whichever is first (a
 *		stop, or nothing left running, sends them at once).
 */
bool
flow_acks_due(Worker *w, double now)
{
	int			queued = 0;

	if (w->acks_head == NULL)
		return false;
	if (w->persistent == 0 || w->stopping || now >= w->acks_since + PERSISTENT_ACK_WAIT_S)
		return true;
	for (Ack *a = w->acks_head; a; a = a->next)
		queued++;
	return queued >= flow_running(w);
}

/*
 * claim_with_acks
 *		How many jobs the round trip that reports completions claims too:
 *		what a claim would now (flow_may_claim), and, while claiming ahead,
 *		also when the jobs claimed ahead have not all started yet: that
 *		tops them up in a round trip that goes anyway, where waiting for
 *		them to start would cost a claim of its own later.
 */
static int
claim_with_acks(Worker *w)
{
	if (flow_may_claim(w))
		return claim_size(w);
	if (ahead(w) > 0 && flow_running(w) > 0 && !w->stopping && !w->quiet &&
		w->db.connected && !w->db.claiming)
		return claim_size(w);
	return 0;
}

/*
 * flow_flush_acks
 *		Report the jobs that finished since the last round trip.  Fails and
 *		releases go one call each (each has its own error text and outcome).
 *		Completions go together: one jobq_complete_batch with a result per
 *		job, or, when a slot is free to take more work, one pipelined
 *		jobq_complete_and_claim_results that also claims the next jobs, so
 *		a finished handler's slot is refilled in the same round trip.  A lone
 *		completion with nothing to claim is a plain jobq_complete.  When the
 *		batch as a whole is refused (a result the server will not take), each
 *		job is reported on its own, with ack_complete's fallbacks (result as a
 *		JSON string, then NULL).  Every job logs its line with the state the
 *		server gave it (completed, or stale when the token was refused).  On
 *		a lost connection the acks stay queued for after the reconnect.
 */
void
flow_flush_acks(Worker *w, double now)
{
	Ack		   *batch[JOBQ_COMPLETE_BATCH_MAX];
	const char *states[JOBQ_COMPLETE_BATCH_MAX];
	Ack		   *keep = NULL,
			  **keep_tail = &keep;
	Ack		   *a;
	int			n = 0;

	/* fails and releases, in order; completions are set aside */
	while ((a = w->acks_head) != NULL && w->db.connected)
	{
		char		state[32] = "error";

		w->acks_head = a->next;
		a->next = NULL;
		if (a->kind == ACK_COMPLETE)
		{
			*keep_tail = a;
			keep_tail = &a->next;
			continue;
		}
		if (db_ack(w, a, state, sizeof(state)) == DB_CONN)
		{
			a->next = w->acks_head;
			w->acks_head = a;
			break;				/* send again after reconnecting */
		}
		if (strcmp(state, "ready") == 0)
		{
			/*
			 * Back in the queue (a retry, a release): the queues are not
			 * drained until a claim after this says so.  NB: --burst would
			 * otherwise exit on an earlier empty claim with the job ready.
			 */
			w->drained = false;
			w->want_claim = true;
		}
		ack_done(w, a, state);
	}
	/* completions first again, then whatever was not sent */
	*keep_tail = w->acks_head;
	w->acks_head = keep;
	w->acks_tail = NULL;
	for (a = w->acks_head; a; a = a->next)
		w->acks_tail = a;

	while (w->db.connected && w->acks_head && w->acks_head->kind == ACK_COMPLETE)
	{
		int			claim_n = claim_with_acks(w);
		Job		   *jobs = NULL;
		int			njobs = 0;
		DbStatus	st;

		for (n = 0, a = w->acks_head; a && a->kind == ACK_COMPLETE &&
			 n < JOBQ_COMPLETE_BATCH_MAX; a = a->next)
			batch[n++] = a;
		if (n == 1 && claim_n == 0)
		{
			char		state[32] = "error";

			if (db_ack(w, batch[0], state, sizeof(state)) == DB_CONN)
				return;
			w->acks_head = batch[0]->next;
			ack_done(w, batch[0], state);
		}
		else
		{
			st = db_complete_many(w, batch, n, claim_n, states, &jobs, &njobs);
			if (st == DB_CONN)
				return;
			if (st == DB_ERROR)
			{
				/* one by one, with the fallbacks; claim on the next pass */
				for (int i = 0; i < n; i++)
				{
					char		state[32] = "error";

					if (db_ack(w, batch[i], state, sizeof(state)) == DB_CONN)
					{
						w->acks_head = batch[i];	/* the rest still follow it */
						return;
					}
					w->acks_head = batch[i]->next;
					ack_done(w, batch[i], state);
				}
				if (claim_n > 0)
					w->want_claim = true;
			}
			else
			{
				w->acks_head = batch[n - 1]->next;
				for (int i = 0; i < n; i++)
					ack_done(w, batch[i], states[i]);
				if (claim_n > 0)
					took_jobs(w, jobs, njobs, claim_n, now);
			}
		}
		if (w->acks_head == NULL)
			w->acks_tail = NULL;
	}
}

/* ----------------------------------------------------------------------
 * Heartbeats: keep the leases of held jobs alive
 * ---------------------------------------------------------------------- */

/* heartbeat one job; returns false when its lease is lost */
static bool
beat(Worker *w, Job *job, double now)
{
	bool		stale = false;
	double		left = 0;

	if (job->next_heartbeat <= 0 || now < job->next_heartbeat || !w->db.connected)
		return true;
	if (db_extend(w, job, &stale, &left) != DB_OK)
	{
		/* retry soon; the lease still has time, or the sweep will decide */
		job->next_heartbeat = now + 1;
		return true;
	}
	if (stale)
	{
		wlog(w, "warning", "job %lld: lease lost (token no longer valid)", job_id(job));
		return false;
	}
	job->lease_ends = now + left;
	if (w->heartbeat < 0)
		job->next_heartbeat = now + (left / 3 > 0.2 ? left / 3 : 0.2);
	else
		job->next_heartbeat = now + w->heartbeat;
	return true;
}

void
flow_heartbeats(Worker *w, double now)
{
	for (int i = 0; i < w->concurrency; i++)
	{
		Slot	   *s = &w->slots[i];

		if (s->busy && !s->exited && s->kill_reason == KILL_NONE &&
			!beat(w, &s->job, now))
			handler_kill(w, s, KILL_LEASE_LOST);
	}
	for (int i = 0; i < w->nbacklog; i++)
	{
		if (!beat(w, &w->backlog[i], now))
		{
			job_free(&w->backlog[i]);
			w->backlog[i--] = w->backlog[--w->nbacklog];
		}
	}
}
