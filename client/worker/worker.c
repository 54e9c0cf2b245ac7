/*-------------------------------------------------------------------------
 *
 * worker.c
 *	  jobq-worker: options, signals and the event loop.
 *
 * The loop, once per wake-up:
 *	1. reconnect when the connection is gone (backoff 0.5 s .. 30 s);
 *	2. start claimed jobs in free slots, then send the acks of the jobs that
 *	   finished since the last round trip: fails and releases one call
 *	   each, completions together (one jobq_complete_batch, or, when slots
 *	   are free, one pipelined jobq_complete_and_claim_results that claims
 *	   for them in the same round trip), and start what that claimed;
 *	3. heartbeat: extend the lease of every job we hold that is due;
 *	4. sweep every --sweep-interval;
 *	5. claim more when a slot is free and a NOTIFY arrived, the last claim
 *	   came back full, or the poll interval passed (NOTIFY is a hint,
 *	   polling is the guarantee); a claim asks for the free slots, at most
 *	   --batch (claim_size).  An idle worker (nothing running, nothing to
 *	   report) in blocking mode sends instead, at once, a claim that waits
 *	   on the server, bounded by the poll interval and the next sweep, and
 *	   keeps polling its socket and the signal pipe meanwhile: an enqueue's
 *	   commit wakes it, a signal interrupts it;
 *	6. exit when --once/--max/--burst/SIGTERM say so and nothing is left;
 *	7. poll() on the self-pipe, the connection's socket and the handlers'
 *	   pipes, until the nearest timer.
 * Database calls are short single statements on the one connection (or
 * the one waiting claim of an idle worker); handlers run in child
 * processes, so nothing a handler does can block the loop, and a slow
 * handler never holds a connection or a transaction.
 *
 * Signals (written to a self-pipe by the handlers, acted on in the loop):
 *	SIGTERM		stop claiming, release claimed jobs not yet started, let
 *				running handlers finish within --grace (then SIGTERM/SIGKILL
 *				them and release their jobs), exit 0
 *	SIGTERM again, or SIGINT
 *				stop at once: SIGKILL the handlers and exit 1; their jobs
 *				come back when their leases expire
 *	SIGHUP		reopen --log-file, reconnect to the database, log the state
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/worker/worker.c
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE				/* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "worker.h"

static int	sigpipe_fds[2] = {-1, -1};

static void
usage(FILE *f, const char *progname, bool callback)
{
	fprintf(f,
			"%s runs a handler for each job claimed from jobq queues.\n\n"
			"Usage:\n"
			"  %s [OPTION]... -q QUEUE%s\n\n"
			"Options:\n"
			"  -d, --dbname=CONNINFO      database connection string (default: PG* environment)\n"
			"  -q, --queue=QUEUE          queue to claim from (repeatable)\n"
			"  -c, --concurrency=N        handlers running in parallel (default 1)\n"
			"  -b, --batch=N              jobs claimed per call at most, 1..1000 (default:\n"
			"                             --concurrency); above it, extra claimed jobs wait\n"
			"  -l, --lease=SECONDS        lease per claim (default: the queue's lease)\n"
			"      --heartbeat=SECONDS    extend the lease this often while a job runs\n"
			"                             (default: a third of the lease; 0 = never)\n"
			"  -t, --timeout=SECONDS      stop a handler running longer (default: none)\n"
			"      --kill-after=SECONDS   SIGKILL a handler this long after SIGTERM (default 5)\n"
			"      --once                 run one job, then exit\n"
			"      --max=N                run N jobs, then exit\n"
			"      --burst                run until the queues are empty, then exit\n"
			"      --poll-interval=SECONDS  claim at least this often (default 5)\n"
			"      --sweep-interval=SECONDS call jobq_sweep this often (default 30; 0 = never)\n"
			"      --wait-mode=MODE       how an idle worker waits: auto (default: blocking\n"
			"                             claims when the server has jobq preloaded, else\n"
			"                             LISTEN), blocking, listen or poll\n"
			"      --no-listen            poll only, no LISTEN (= --wait-mode=poll)\n"
			"      --schema=SCHEMA        schema of the jobq functions (default: public)\n"
			"      --grace=SECONDS        on SIGTERM, wait this long for handlers (default 30)\n"
			"      --log-format=FORMAT    text or json (default text)\n"
			"      --log-file=FILE        log to FILE instead of stderr (SIGHUP reopens it)\n"
			"  -h, --help                 show this help, then exit\n"
			"  -V, --version              show the version, then exit\n\n"
			"Handler: the job's JSON on stdin; JOBQ_JOB_ID, JOBQ_QUEUE, JOBQ_ATTEMPT and\n"
			"JOBQ_MAX_ATTEMPTS in the environment.  Exit 0: done, stdout is the result;\n"
			"75: retry later; 65: failed for good (dead); other or a signal: failed, retried\n"
			"while attempts are left, with the end of stderr as the error.\n\n"
			"Signals: SIGTERM finishes running jobs (within --grace) and exits 0; a second\n"
			"SIGTERM or SIGINT stops at once; SIGHUP reopens the log and the connection.\n",
			progname, progname, callback ? "" : " -- HANDLER [ARG]...");
}

static void
on_signal(int signo)
{
	int			save = errno;
	char		c = signo == SIGTERM ? 'T' : signo == SIGINT ? 'I' :
		signo == SIGHUP ? 'H' : 'C';

	if (write(sigpipe_fds[1], &c, 1) < 0)
	{
		/* the pipe is full: a wake-up is pending anyway */
	}
	errno = save;
}

static void
setup_signals(void)
{
	struct sigaction sa;

	if (pipe2(sigpipe_fds, O_CLOEXEC | O_NONBLOCK) < 0)
	{
		perror("jobq-worker: pipe");
		exit(1);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_flags |= SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, NULL);
	/* a handler that closes its stdin early must not kill us */
	signal(SIGPIPE, SIG_IGN);
}

/*
 * parse_num
 *		A number in [min, max] from an option argument, or usage error.
 */
static bool
parse_num(const char *arg, double min, double max, double *out)
{
	char	   *end;
	double		v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end != '\0' || !isfinite(v) || v < min || v > max)
		return false;
	*out = v;
	return true;
}

/*
 * Things the loop does, in the order described at the top of the file.
 */

static int
free_slots(Worker *w)
{
	int			n = 0;

	for (int i = 0; i < w->concurrency; i++)
		if (!w->slots[i].busy)
			n++;
	return n;
}

static int
running_count(Worker *w)
{
	return w->concurrency - free_slots(w);
}

static void
push_ack(Worker *w, Ack *a)
{
	if (a == NULL)
	{
		w->finished_jobs++;
		return;
	}
	a->next = NULL;
	if (w->acks_tail)
		w->acks_tail->next = a;
	else
		w->acks_head = a;
	w->acks_tail = a;
}

/* log the line of a reported job, count it, free the ack */
static void
ack_done(Worker *w, Ack *a, const char *state)
{
	log_job(w, a, state);
	w->finished_jobs++;
	job_free(&a->job);
	free(a->result);
	free(a->error);
	free(a);
}

/* forward declarations: the claim side, below */
static bool may_claim(Worker *w);
static int	claim_size(Worker *w);
static void took_jobs(Worker *w, Job *jobs, int njobs, int asked, double now);

/*
 * flush_acks
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
static void
flush_acks(Worker *w, double now)
{
	Ack		   *batch[JOBQ_COMPLETE_BATCH_MAX];
	const char *states[JOBQ_COMPLETE_BATCH_MAX];
	Ack		   *keep = NULL,
			  **keep_tail = &keep;
	Ack		   *a;
	int			n = 0;

	/* fails and releases, in order; completions are set aside */
	while ((a = w->acks_head) != NULL && w->connected)
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
		ack_done(w, a, state);
	}
	/* completions first again, then whatever was not sent */
	*keep_tail = w->acks_head;
	w->acks_head = keep;
	w->acks_tail = NULL;
	for (a = w->acks_head; a; a = a->next)
		w->acks_tail = a;

	while (w->connected && w->acks_head && w->acks_head->kind == ACK_COMPLETE)
	{
		int			claim_n = may_claim(w) ? claim_size(w) : 0;
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

/* heartbeat one job; returns false when its lease is lost */
static bool
beat(Worker *w, Job *job, double now)
{
	bool		stale = false;
	double		left = 0;

	if (job->next_heartbeat <= 0 || now < job->next_heartbeat || !w->connected)
		return true;
	if (db_extend(w, job, &stale, &left) != DB_OK)
	{
		/* retry soon; the lease still has time, or the sweep will decide */
		job->next_heartbeat = now + 1;
		return true;
	}
	if (stale)
	{
		wlog(w, "warning", "job %lld: lease lost (token no longer valid)", job->id);
		return false;
	}
	job->lease_ends = now + left;
	if (w->heartbeat < 0)
		job->next_heartbeat = now + (left / 3 > 0.2 ? left / 3 : 0.2);
	else
		job->next_heartbeat = now + w->heartbeat;
	return true;
}

static void
heartbeats(Worker *w, double now)
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

/* SIGTERM: jobs claimed but not started go back at once */
static void
release_backlog(Worker *w)
{
	while (w->nbacklog > 0 && w->connected)
	{
		Job		   *job = &w->backlog[w->nbacklog - 1];
		bool		released;

		if (db_release(w, job, &released) == DB_CONN)
			return;
		wlog(w, "info", "job %lld released (not started)", job->id);
		job_free(job);
		w->nbacklog--;
	}
}

/* take jobs from the backlog (oldest first) into free slots */
static void
start_jobs(Worker *w)
{
	for (int i = 0; i < w->concurrency && w->nbacklog > 0; i++)
	{
		Slot	   *s = &w->slots[i];
		Job			job;

		if (s->busy)
			continue;
		job = w->backlog[0];
		memmove(w->backlog, w->backlog + 1, sizeof(Job) * (--w->nbacklog));
		if (!handler_start(w, s, &job))
		{
			Ack		   *a = xmalloc(sizeof(Ack));

			memset(a, 0, sizeof(*a));
			a->job = job;
			a->kind = ACK_FAIL;
			a->outcome = "failed";
			a->exit_code = -1;
			a->error = xstrdup("could not start the handler");
			push_ack(w, a);
		}
		w->started_jobs++;
	}
}

/*
 * may_claim
 *		A claim now would have somewhere to go: a slot is free (so the
 *		backlog is empty: start_jobs fills free slots first), the session is
 *		free, and --max is not reached.
 */
static bool
may_claim(Worker *w)
{
	return !w->stopping && w->connected && !w->claiming && w->nbacklog == 0 &&
		free_slots(w) > 0 && claim_size(w) > 0;
}

/*
 * claim_size
 *		How many jobs the next claim asks for: the room left, at most
 *		--batch.  The worker holds at most max(--concurrency, --batch) jobs,
 *		running or claimed and waiting for a slot: with the default --batch
 *		(= --concurrency) a claim takes exactly the free slots and nothing
 *		waits; a larger --batch lets up to --batch - 1 claimed jobs wait (their
 *		leases kept alive by the heartbeat).  --max counts too.
 */
static int
claim_size(Worker *w)
{
	int			hold = w->batch > w->concurrency ? w->batch : w->concurrency;
	long		n = hold - running_count(w) - w->nbacklog;

	if (n > w->batch)
		n = w->batch;
	if (w->max_jobs > 0 && w->max_jobs - w->started_jobs - w->nbacklog < n)
		n = w->max_jobs - w->started_jobs - w->nbacklog;
	return n > 0 ? (int) n : 0;
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

/*
 * blocking_claim
 *		When the worker is idle (nothing running, claimed or waiting to be
 *		reported) and the session claims with a server-side wait, send a
 *		claim that waits up to the poll interval, and less when a sweep is
 *		due sooner.  Returns false when the caller should claim the usual
 *		way (not idle, no blocking in this session, --burst, a sweep due).
 */
static bool
idle_blocking(Worker *w)
{
	return w->blocking && !w->burst && running_count(w) == 0 && w->nbacklog == 0 &&
		w->acks_head == NULL;
}

static bool
blocking_claim(Worker *w, double now)
{
	double		wait = w->poll_interval;
	int			n = claim_size(w);

	if (!idle_blocking(w) || n <= 0)
		return false;
	if (w->sweep_interval > 0 && w->next_sweep - now < wait)
		wait = w->next_sweep - now;
	if (wait > JOBQ_CLAIM_WAIT_MAX_MS / 1000.0)
		wait = JOBQ_CLAIM_WAIT_MAX_MS / 1000.0;
	if (wait < 0.05)
		return false;
	if (db_claim_start(w, n, (int) (wait * 1000)) != DB_OK)
		return false;
	w->claim_asked = n;
	return true;
}

/* the socket of a waiting claim is readable: take the answer when it is in */
static void
claim_poll(Worker *w, double now)
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
	 * An empty answer means the wait is over (or another worker took the
	 * job that woke us): wait again at once, but not more than ten times a
	 * second.  NB: only then.  After jobs, the next wait starts as soon as
	 * the worker is idle again; throttling it too held every job that came
	 * within 100 ms of the last claim until the 100 ms were over (jobs 20 ms
	 * apart: p50 45 ms from commit to handler start, 4 ms with LISTEN).
	 */
	w->block_after = njobs == 0 ? w->claim_started + 0.1 : now;
}

/*
 * claim_abort
 *		End a waiting claim now (SIGTERM, SIGHUP): interrupt it on the
 *		server and take its answer, which may still hold jobs claimed just
 *		before; they go to the backlog, where shutdown releases them.
 */
static void
claim_abort(Worker *w, double now)
{
	Job		   *jobs;
	int			njobs;

	if (!w->claiming)
		return;
	db_claim_interrupt(w);
	if (db_claim_finish(w, &jobs, &njobs) == DB_OK)
		took_jobs(w, jobs, njobs, w->claim_asked, now);
}

static void
claim(Worker *w, double now)
{
	int			n = claim_size(w);
	Job		   *jobs;
	int			njobs;
	DbStatus	st;

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

/* SIGCHLD: collect exited handlers and queue their acks */
static void
reap(Worker *w)
{
	pid_t		pid;
	int			status;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
	{
		for (int i = 0; i < w->concurrency; i++)
		{
			Slot	   *s = &w->slots[i];

			if (s->busy && s->pid == pid)
			{
				s->exited = true;
				s->status = status;
				handler_drain(s);
				push_ack(w, handler_finish(w, s));
				break;
			}
		}
	}
}

static void
log_state(Worker *w, const char *why)
{
	wlog(w, "info", "%s: running=%d claimed=%d unacked=%s finished=%ld connected=%s",
		 why, running_count(w), w->nbacklog, w->acks_head ? "yes" : "no",
		 w->finished_jobs, w->connected ? "yes" : "no");
}

static void
on_signals(Worker *w, double now)
{
	char		c[64];
	ssize_t		n;

	while ((n = read(sigpipe_fds[0], c, sizeof(c))) > 0)
	{
		for (ssize_t i = 0; i < n; i++)
		{
			switch (c[i])
			{
				case 'C':
					reap(w);
					break;
				case 'H':
					log_reopen(w);
					log_state(w, "SIGHUP");
					if (w->connected)
					{
						claim_abort(w, now);
						db_disconnect(w);
						w->reconnect_at = now;
					}
					break;
				case 'T':
					if (w->got_sigterm)
						w->abort_now = true;
					else
					{
						w->got_sigterm = true;
						if (!w->stopping)
							w->stop_deadline = now + w->grace;
						w->stopping = true;
						log_state(w, "SIGTERM: stopping after running jobs");
					}
					break;
				case 'I':
					w->abort_now = true;
					break;
			}
		}
	}
	/* a waiting claim must not outlive our wish to stop */
	if (w->abort_now)
		db_claim_interrupt(w);
	else if (w->stopping)
		claim_abort(w, now);
}

/*
 * the nearest timer, as a poll() timeout in ms.  NB: while disconnected only
 * the reconnect and the handlers' own timers count: claim, sweep and
 * heartbeat times need the connection, and once past due they would make
 * every poll() return at once (a busy loop until the server is back).
 */
static int
poll_timeout(Worker *w, double now)
{
	double		t = now + 60;

#define NEAR(x) do { if ((x) > 0 && (x) < t) t = (x); } while (0)
	if (!w->connected)
		NEAR(w->reconnect_at);
	if (w->connected && may_claim(w))
	{
		if (w->want_claim)
			return 0;
		NEAR(w->next_poll);
		if (idle_blocking(w))
		{
			if (w->block_after <= now)
				return 0;
			NEAR(w->block_after);
		}
	}
	if (w->connected && w->sweep_interval > 0 && !w->claiming)
		NEAR(w->next_sweep);	/* (a waiting claim ends by then) */
	if (w->stopping)
		NEAR(w->stop_deadline);
	for (int i = 0; i < w->concurrency; i++)
	{
		Slot	   *s = &w->slots[i];

		if (!s->busy)
			continue;
		if (s->kill_reason == KILL_NONE)
			NEAR(s->deadline);
		NEAR(s->kill_at);
		if (w->connected)
			NEAR(s->job.next_heartbeat);
	}
	if (w->connected)
		for (int i = 0; i < w->nbacklog; i++)
			NEAR(w->backlog[i].next_heartbeat);
#undef NEAR
	if (t <= now)
		return 0;
	return (int) ceil((t - now) * 1000);
}

/*
 * run_loop
 *		The event loop; returns the exit status.
 */
static int
run_loop(Worker *w)
{
	int			nfds = 2 + 3 * w->concurrency;
	struct pollfd *pfd = xmalloc(sizeof(struct pollfd) * nfds);
	bool		shutdown_kill_sent = false;

	w->next_sweep = now_mono();
	for (;;)
	{
		double		now = now_mono();
		int			n,
					timeout;

		if (w->abort_now)
		{
			wlog(w, "warning", "stopping at once: killing %d handler(s); their jobs "
				 "come back when their leases expire", running_count(w));
			for (int i = 0; i < w->concurrency; i++)
				if (w->slots[i].busy)
					kill(-w->slots[i].pid, SIGKILL);
			free(pfd);
			return 1;
		}

		if (!w->connected && now >= w->reconnect_at)
			db_connect(w);
		/* claimed jobs into free slots before any round trip */
		if (!w->stopping)
			start_jobs(w);
		if (!w->claiming)
		{
			flush_acks(w, now);	/* may claim for the free slots too */
			if (!w->stopping)
				start_jobs(w);
			heartbeats(w, now);
		}
		for (int i = 0; i < w->concurrency; i++)
			handler_timers(w, &w->slots[i], now);

		if (w->stopping)
		{
			release_backlog(w);
			if (now >= w->stop_deadline && !shutdown_kill_sent && running_count(w) > 0)
			{
				wlog(w, "warning", "grace period over: stopping %d handler(s)",
					 running_count(w));
				for (int i = 0; i < w->concurrency; i++)
					handler_kill(w, &w->slots[i], KILL_SHUTDOWN);
				shutdown_kill_sent = true;
			}
		}
		else
		{
			if (w->connected && !w->claiming && w->sweep_interval > 0 && now >= w->next_sweep)
			{
				db_sweep(w);
				w->next_sweep = now + w->sweep_interval;
			}
			start_jobs(w);
			if (may_claim(w) && (w->want_claim || now >= w->next_poll))
			{
				if (!blocking_claim(w, now))
					claim(w, now);
				start_jobs(w);
			}
			else if (may_claim(w) && idle_blocking(w) && now >= w->block_after)
			{
				/* idle: wait on the server at once, not at the next poll */
				blocking_claim(w, now);
			}
		}

		/* done? */
		if (running_count(w) == 0 && w->nbacklog == 0)
		{
			if (w->acks_head == NULL)
			{
				if (w->stopping)
				{
					wlog(w, "info", "stopped");
					break;
				}
				if (w->max_jobs > 0 && w->started_jobs >= w->max_jobs)
				{
					wlog(w, "info", "ran %ld job(s), exiting", w->started_jobs);
					break;
				}
				if (w->burst && w->drained)
				{
					wlog(w, "info", "queues drained, exiting");
					break;
				}
			}
			else if (w->stopping && now >= w->stop_deadline + w->kill_after)
			{
				wlog(w, "warning", "stopping without reaching the database; "
					 "unreported jobs come back when their leases expire");
				w->exit_code = 1;
				break;
			}
		}

		/* wait */
		n = 0;
		pfd[n].fd = sigpipe_fds[0];
		pfd[n++].events = POLLIN;
		if (w->connected)
		{
			pfd[n].fd = jobq_socket(w->conn);
			pfd[n++].events = POLLIN;
		}
		for (int i = 0; i < w->concurrency; i++)
		{
			Slot	   *s = &w->slots[i];

			if (!s->busy)
				continue;
			if (s->fd_in >= 0)
			{
				pfd[n].fd = s->fd_in;
				pfd[n++].events = POLLOUT;
			}
			if (s->fd_out >= 0)
			{
				pfd[n].fd = s->fd_out;
				pfd[n++].events = POLLIN;
			}
			if (s->fd_err >= 0)
			{
				pfd[n].fd = s->fd_err;
				pfd[n++].events = POLLIN;
			}
		}
		timeout = poll_timeout(w, now);
		if (poll(pfd, n, timeout) < 0 && errno != EINTR)
		{
			wlog(w, "error", "poll failed: %s", strerror(errno));
			free(pfd);
			return 1;
		}
		now = now_mono();

		/* handler pipes first, so a reaped child's output is complete */
		for (int k = 1; k < n; k++)
		{
			if (pfd[k].revents == 0)
				continue;
			if (w->connected && pfd[k].fd == jobq_socket(w->conn))
			{
				bool		notified;

				if (w->claiming)
					claim_poll(w, now);
				else
					db_consume(w, &notified);
				continue;
			}
			for (int i = 0; i < w->concurrency; i++)
			{
				Slot	   *s = &w->slots[i];

				if (!s->busy)
					continue;
				if (pfd[k].fd == s->fd_in)
					handler_io(w, s, pfd[k].revents, 0, 0);
				else if (pfd[k].fd == s->fd_out)
					handler_io(w, s, 0, pfd[k].revents, 0);
				else if (pfd[k].fd == s->fd_err)
					handler_io(w, s, 0, 0, pfd[k].revents);
			}
		}
		if (pfd[0].revents)
			on_signals(w, now);
	}
	free(pfd);
	return w->exit_code;
}

/*
 * jobq_worker_main
 *		See jobq-worker.h.  main.c calls it with no callback.
 */
int
jobq_worker_main(int argc, char **argv, JobqWorkerCallback callback, void *arg)
{
	static const struct option longopts[] = {
		{"dbname", required_argument, NULL, 'd'},
		{"queue", required_argument, NULL, 'q'},
		{"concurrency", required_argument, NULL, 'c'},
		{"batch", required_argument, NULL, 'b'},
		{"lease", required_argument, NULL, 'l'},
		{"heartbeat", required_argument, NULL, 1},
		{"timeout", required_argument, NULL, 't'},
		{"kill-after", required_argument, NULL, 2},
		{"once", no_argument, NULL, 3},
		{"max", required_argument, NULL, 4},
		{"burst", no_argument, NULL, 5},
		{"poll-interval", required_argument, NULL, 6},
		{"sweep-interval", required_argument, NULL, 7},
		{"no-listen", no_argument, NULL, 8},
		{"wait-mode", required_argument, NULL, 12},
		{"schema", required_argument, NULL, 13},
		{"grace", required_argument, NULL, 9},
		{"log-format", required_argument, NULL, 10},
		{"log-file", required_argument, NULL, 11},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0}
	};
	const char *progname = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	Worker		w;
	char		host[64];
	double		v;
	int			c;
	int			rc;

	memset(&w, 0, sizeof(w));
	w.queues = xmalloc(sizeof(char *) * (argc + 1));
	w.concurrency = 1;
	w.batch = 0;				/* = --concurrency unless given */
	w.heartbeat = -1;
	w.kill_after = 5;
	w.wait_mode = WAIT_AUTO;
	w.schema = "public";
	w.poll_interval = 5;
	w.sweep_interval = 30;
	w.grace = 30;
	w.backoff = 0.5;
	w.callback = callback;
	w.callback_arg = arg;

	/* "+": the first non-option starts the handler's command line */
	while ((c = getopt_long(argc, argv, "+d:q:c:b:l:t:hV", longopts, NULL)) != -1)
	{
		switch (c)
		{
			case 'd':
				w.conninfo = optarg;
				break;
			case 'q':
				w.queues[w.nqueues++] = optarg;
				break;
			case 'c':
				if (!parse_num(optarg, 1, 1000, &v) || v != floor(v))
					goto bad_value;
				w.concurrency = (int) v;
				break;
			case 'b':
				if (!parse_num(optarg, 1, 1000, &v) || v != floor(v))
					goto bad_value;
				w.batch = (int) v;
				break;
			case 'l':
				if (!parse_num(optarg, 1, 86400, &w.lease))
					goto bad_value;
				break;
			case 1:
				if (!parse_num(optarg, 0, 86400, &w.heartbeat))
					goto bad_value;
				break;
			case 't':
				if (!parse_num(optarg, 0, 1e9, &w.timeout))
					goto bad_value;
				break;
			case 2:
				if (!parse_num(optarg, 0, 3600, &w.kill_after))
					goto bad_value;
				break;
			case 3:
				w.max_jobs = 1;
				break;
			case 4:
				if (!parse_num(optarg, 1, 1e15, &v) || v != floor(v))
					goto bad_value;
				w.max_jobs = (long) v;
				break;
			case 5:
				w.burst = true;
				break;
			case 6:
				if (!parse_num(optarg, 0.01, 86400, &w.poll_interval))
					goto bad_value;
				break;
			case 7:
				if (!parse_num(optarg, 0, 86400, &w.sweep_interval))
					goto bad_value;
				break;
			case 8:
				w.wait_mode = WAIT_POLL;
				break;
			case 12:
				if (strcmp(optarg, "auto") == 0)
					w.wait_mode = WAIT_AUTO;
				else if (strcmp(optarg, "blocking") == 0)
					w.wait_mode = WAIT_BLOCKING;
				else if (strcmp(optarg, "listen") == 0)
					w.wait_mode = WAIT_LISTEN;
				else if (strcmp(optarg, "poll") == 0)
					w.wait_mode = WAIT_POLL;
				else
					goto bad_value;
				break;
			case 13:
				if (!jobq_valid_schema_name(optarg))
					goto bad_value;
				w.schema = optarg;
				break;
			case 9:
				if (!parse_num(optarg, 0, 86400, &w.grace))
					goto bad_value;
				break;
			case 10:
				if (strcmp(optarg, "json") == 0)
					w.log_json = true;
				else if (strcmp(optarg, "text") == 0)
					w.log_json = false;
				else
					goto bad_value;
				break;
			case 11:
				w.log_file = optarg;
				break;
			case 'h':
				usage(stdout, progname, callback != NULL);
				free(w.queues);
				return 0;
			case 'V':
				printf("%s (jobq) %s\n", progname, JOBQ_WORKER_VERSION);
				free(w.queues);
				return 0;
			default:
				goto try_help;
		}
	}
	if (w.nqueues == 0)
	{
		fprintf(stderr, "%s: no queue given (-q QUEUE)\n", progname);
		goto try_help;
	}
	if (callback == NULL && optind >= argc)
	{
		fprintf(stderr, "%s: no handler given (-- HANDLER [ARG]...)\n", progname);
		goto try_help;
	}
	if (callback != NULL && optind < argc)
	{
		fprintf(stderr, "%s: this worker has a built-in handler; unexpected \"%s\"\n",
				progname, argv[optind]);
		goto try_help;
	}
	if (w.lease > 0 && w.heartbeat > 0 && w.heartbeat >= w.lease)
	{
		fprintf(stderr, "%s: --heartbeat must be shorter than --lease\n", progname);
		goto try_help;
	}
	w.handler_argv = argv + optind;
	if (w.batch == 0)
		w.batch = w.concurrency;

	gethostname(host, sizeof(host));
	host[sizeof(host) - 1] = '\0';
	snprintf(w.worker_name, sizeof(w.worker_name), "%s:%d", host, (int) getpid());
	w.slots = xmalloc(sizeof(Slot) * w.concurrency);
	memset(w.slots, 0, sizeof(Slot) * w.concurrency);

	log_open(&w);
	setup_signals();
	if (db_connect(&w) != DB_OK)
	{
		wlog(&w, "error", "could not connect at start, exiting");
		rc = 3;
	}
	else
	{
		wlog(&w, "info", "started: worker=%s queues=%d concurrency=%d batch=%d",
			 w.worker_name, w.nqueues, w.concurrency, w.batch);
		rc = run_loop(&w);
	}
	db_claim_interrupt(&w);
	db_close(&w);
	for (int i = 0; i < w.nbacklog; i++)
		job_free(&w.backlog[i]);
	free(w.backlog);
	free(w.slots);
	free(w.queues);
	return rc;

bad_value:
	fprintf(stderr, "%s: invalid value \"%s\" for option %s\n", progname, optarg,
			argv[optind - 1]);
try_help:
	fprintf(stderr, "Try \"%s --help\" for more information.\n", progname);
	free(w.queues);
	return 2;
}
