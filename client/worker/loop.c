/*-------------------------------------------------------------------------
 *
 * loop.c
 *	  jobq-worker: the start-up order, signals and the event loop.
 *
 * The loop, once per wake-up:
 *	1. reconnect when the connection is gone (backoff 0.5 s .. 30 s);
 *	2. start claimed jobs in free slots, then send the acks of the jobs that
 *	   finished since the last round trip: fails and releases one call
 *	   each, completions together (one jobq_complete_batch, or, when slots
 *	   are free, one pipelined jobq_complete_and_claim_results that claims
 *	   for them in the same round trip), and start what that claimed;
 *	3. heartbeat: extend the lease of every job we hold that is due, and
 *	   heartbeat in the worker registry (registry.c);
 *	4. sweep every --sweep-interval, fire due schedules every --cron-interval;
 *	5. claim more when a slot is free and a NOTIFY arrived, the last claim
 *	   came back full, or the poll interval passed (NOTIFY is a hint,
 *	   polling is the guarantee); a claim asks for the free slots, at most
 *	   --batch (flow.c).  An idle worker (nothing running, nothing to
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
 * handler never holds a connection or a transaction.  What to claim and
 * report is flow.c's; the database calls are db.c's, which owns the session
 * and tells the loop what happened (the loop then sets want_claim).
 *
 * Signals (written to a self-pipe by the handlers, acted on in the loop):
 *	SIGTERM		stop claiming, release claimed jobs not yet started, let
 *				running handlers finish within --grace (then SIGTERM/SIGKILL
 *				them and release their jobs), exit 0
 *	SIGTERM again, or SIGINT
 *				stop at once: SIGKILL the handlers and exit 1; their jobs
 *				come back when their leases expire
 *	SIGHUP		reopen --log-file, reconnect to the database now (also when
 *				waiting for the next attempt of a backoff), log the state
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/worker/loop.c
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE				/* pipe2 */
#include <errno.h>
#include <fcntl.h>
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

/* SIGCHLD: collect exited handlers and queue their acks */
static void
reap(Worker *w)
{
	pid_t		pid;
	int			status;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
	{
		if (w->persistent > 0 && persistent_reap(w, pid, status))
			continue;
		for (int i = 0; i < w->concurrency; i++)
		{
			Slot	   *s = &w->slots[i];

			if (s->busy && s->pid == pid)
			{
				s->exited = true;
				s->status = status;
				handler_drain(s);
				flow_push_ack(w, handler_finish(w, s));
				break;
			}
		}
	}
}

static void
log_state(Worker *w, const char *why)
{
	wlog(w, "info", "%s: running=%d claimed=%d unacked=%s finished=%ld connected=%s",
		 why, flow_running(w), w->nbacklog, w->acks_head ? "yes" : "no",
		 w->finished_jobs, w->db.connected ? "yes" : "no");
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
					if (w->db.connected)
						flow_claim_abort(w, now);
					db_restart(w);	/* also ends a reconnect backoff */
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
						registry_beat_soon(w, now);
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
		flow_claim_abort(w, now);
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
	if (!w->db.connected)
		NEAR(w->db.reconnect_at);
	if (w->db.connected && flow_may_claim(w))
	{
		if (w->want_claim)
			return 0;
		NEAR(w->next_poll);
		if (flow_idle_blocking(w))
		{
			if (w->block_after <= now)
				return 0;
			NEAR(w->block_after);
		}
	}
	if (w->db.connected && w->sweep_interval > 0 && !w->db.claiming)
		NEAR(w->next_sweep);	/* (a waiting claim ends by then) */
	if (w->db.connected && w->cron_interval > 0 && !w->db.claiming)
		NEAR(w->next_cron);
	if (w->db.connected && w->db.claiming)
		NEAR(w->db.claim_deadline);
	if (w->db.connected && !w->db.claiming)
		NEAR(registry_next_beat(w));
	if (w->db.connected && !w->db.claiming && w->quiet && !w->stopping && flow_idle_blocking(w))
		NEAR(w->block_after);	/* flow_quiet_wait */
	if (w->stopping)
		NEAR(w->stop_deadline);
	if (w->persistent > 0)
	{
		NEAR(persistent_next_timer(w));
		if (w->acks_head && w->db.connected)
			NEAR(w->acks_since + PERSISTENT_ACK_WAIT_S);
	}
	for (int i = 0; i < w->concurrency; i++)
	{
		Slot	   *s = &w->slots[i];

		if (!s->busy)
			continue;
		if (s->kill_reason == KILL_NONE)
			NEAR(s->deadline);
		NEAR(s->kill_at);
		if (w->db.connected)
			NEAR(s->job.next_heartbeat);
	}
	if (w->db.connected)
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
	int			nfds = 2 + 3 * w->concurrency + 3 * w->persistent;
	struct pollfd *pfd = jobq_xmalloc(sizeof(struct pollfd) * nfds);
	bool		shutdown_kill_sent = false;

	w->next_sweep = now_mono();
	w->next_cron = now_mono();
	for (;;)
	{
		double		now = now_mono();
		int			n,
					timeout;

		if (w->abort_now)
		{
			wlog(w, "warning", "stopping at once: killing %d handler(s); their jobs "
				 "come back when their leases expire", flow_running(w));
			for (int i = 0; i < w->concurrency; i++)
				if (w->slots[i].busy && w->slots[i].proc == NULL)
					kill(-w->slots[i].pid, SIGKILL);
			for (int i = 0; i < w->persistent; i++)
				if (w->procs[i].pid > 0)
					kill(-w->procs[i].pid, SIGKILL);
			free(pfd);
			return 1;
		}

		/* anything may have been enqueued while we were away */
		if (!w->db.connected && now >= w->db.reconnect_at && db_connect(w) == DB_OK)
		{
			w->want_claim = true;
			registry_register(w, now);
		}
		/* claimed jobs into free slots before any round trip */
		if (!w->stopping)
			flow_start_jobs(w);
		/* a waiting claim with no answer by its deadline: the peer is gone */
		if (w->db.claiming && now >= w->db.claim_deadline)
			flow_claim_poll(w, now);
		if (!w->db.claiming)
		{
			if (flow_acks_due(w, now))
				flow_flush_acks(w, now);	/* may claim for the free slots too */
			if (!w->stopping)
				flow_start_jobs(w);
			flow_heartbeats(w, now);
			registry_beat(w, now);
		}
		for (int i = 0; i < w->concurrency; i++)
			handler_timers(w, &w->slots[i], now);
		if (w->persistent > 0)
			persistent_timers(w, now);

		if (w->stopping)
		{
			flow_release_backlog(w);
			if (now >= w->stop_deadline && !shutdown_kill_sent && flow_running(w) > 0)
			{
				wlog(w, "warning", "grace period over: stopping %d handler(s)",
					 flow_running(w));
				for (int i = 0; i < w->concurrency; i++)
					handler_kill(w, &w->slots[i], KILL_SHUTDOWN);
				shutdown_kill_sent = true;
			}
		}
		else
		{
			if (w->db.connected && !w->db.claiming && w->sweep_interval > 0 && now >= w->next_sweep)
			{
				db_sweep(w);
				w->next_sweep = now + w->sweep_interval;
			}
			if (w->db.connected && !w->db.claiming && w->cron_interval > 0 && now >= w->next_cron)
			{
				db_cron_tick(w);
				w->next_cron = now + w->cron_interval;
			}
			flow_start_jobs(w);
			if (flow_may_claim(w) && (w->want_claim || now >= w->next_poll))
			{
				if (!flow_blocking_claim(w, now))
					flow_claim(w, now);
				flow_start_jobs(w);
			}
			else if (flow_may_claim(w) && flow_idle_blocking(w) && now >= w->block_after)
			{
				/* idle: wait on the server at once, not at the next poll */
				flow_blocking_claim(w, now);
			}
			else
				flow_quiet_wait(w, now);	/* quiet and idle: wait for a resume */
		}

		/* done? */
		if (flow_running(w) == 0 && w->nbacklog == 0)
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
		title_update(w);
		n = 0;
		pfd[n].fd = sigpipe_fds[0];
		pfd[n++].events = POLLIN;
		if (w->db.connected)
		{
			pfd[n].fd = jobq_socket(w->db.conn);
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
		if (w->persistent > 0)
			n += persistent_pollfds(w, pfd + n);
		timeout = poll_timeout(w, now);
		log_flush();
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
			if (w->db.connected && pfd[k].fd == jobq_socket(w->db.conn))
			{
				bool		notified;

				if (w->db.claiming)
					flow_claim_poll(w, now);
				else if (db_consume(w, &notified) == DB_OK && notified)
					w->want_claim = true;
				continue;
			}
			if (w->persistent > 0)
				persistent_io(w, pfd[k].fd, pfd[k].revents);
			for (int i = 0; i < w->concurrency; i++)
			{
				Slot	   *s = &w->slots[i];

				if (!s->busy || s->proc != NULL)
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
	Worker		w;
	char		host[64];
	int			rc;

	jobq_set_progname("jobq-worker");
	title_init(argc, argv);
	memset(&w, 0, sizeof(w));
	w.callback = callback;
	w.callback_arg = arg;
	rc = worker_options(&w, argc, argv);
	if (rc >= 0)
		return rc;

	gethostname(host, sizeof(host));
	host[sizeof(host) - 1] = '\0';
	snprintf(w.worker_name, sizeof(w.worker_name), "%s:%d", host, (int) getpid());
	w.claim_label = w.worker_name;
	w.slots = jobq_xmalloc(sizeof(Slot) * w.concurrency);
	memset(w.slots, 0, sizeof(Slot) * w.concurrency);

	log_open(&w);
	setup_signals();
	if (w.persistent > 0)
		persistent_init(&w);
	db_init(&w);
	if (db_connect(&w) != DB_OK)
	{
		wlog(&w, "error", "could not connect at start, exiting");
		rc = 3;
	}
	else
	{
		w.want_claim = true;
		wlog(&w, "info", "started: worker=%s queues=%d concurrency=%d batch=%d",
			 w.worker_name, w.nqueues, w.concurrency, w.batch);
		registry_register(&w, now_mono());
		rc = run_loop(&w);
	}
	db_claim_interrupt(&w);
	registry_deregister(&w);
	if (w.persistent > 0)
		persistent_shutdown(&w);
	db_close(&w);
	log_flush();
	for (int i = 0; i < w.nbacklog; i++)
		job_free(&w.backlog[i]);
	free(w.backlog);
	free(w.slots);
	free(w.queues);
	return rc;

}
