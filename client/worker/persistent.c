/*-------------------------------------------------------------------------
 *
 * persistent.c
 *	  jobq-worker --persistent: long-lived handler processes that take jobs
 *	  as lines on stdin and answer with lines on stdout.
 *
 * A process per job costs a fork and an exec (and a language runtime's
 * start) per job: 2-3k jobs/s at best.  With --persistent=N the worker
 * starts N handler processes once and streams jobs to them; everything
 * else stays the worker's: claims and their batching with completes,
 * leases and heartbeats, tokens, per-job timeouts, graceful stop.
 *
 * The line protocol (the handler's ready line, the job lines, the answers)
 * is documented in one place, doc/jobq-worker.md, "Persistent handlers";
 * proc_line parses what it describes.  stderr is the handler's log: its
 * lines go to the worker's log, and its tail into the error text of jobs
 * that die with the process.
 *
 * What it costs per job: persistent_start buffers the job lines of a claim
 * and persistent_feed writes them in one write per process; the answers of
 * one read are parsed together; flow.c reports them together and claims
 * ahead for short jobs (--prefetch).
 *
 * What happens when things go wrong:
 *	- a job runs past --timeout: its process is stopped (SIGTERM, SIGKILL
 *	  after --kill-after) and started again; that job fails ("timed out"),
 *	  the process's other jobs are released (their attempts given back:
 *	  they did nothing wrong);
 *	- a process exits: its jobs fail with the reason and its stderr tail;
 *	  it is started again after a backoff (0.1 s, doubling up to 10 s while
 *	  it keeps dying young), the other processes go on;
 *	- a process breaks the protocol: it is stopped, its jobs are released
 *	  (not their doing), and it is started again the same way;
 *	- a job's lease is lost: its answer will be refused as stale, so it is
 *	  logged and dropped when it comes;
 *	- SIGTERM: claims stop, running jobs finish within --grace, then the
 *	  processes see EOF on stdin and have --kill-after to exit.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/worker/persistent.c
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE				/* pipe2, execvpe */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "worker.h"

/* the longest line a handler may write: a result of the server's size */
#define LINE_MAX_BYTES		(MAX_RESULT_BYTES + 64 * 1024)
/* how long a started process has to say it is ready */
#define READY_TIMEOUT_S		30.0
#define BACKOFF_MIN_S		0.1
#define BACKOFF_MAX_S		10.0
/* a process that lived this long was not dying young: no backoff */
#define LIVED_LONG_S		10.0

static void
close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void
set_nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/*
 * proc_spawn
 *		Start the handler command as process p.  The exec's failure comes
 *		back through a close-on-exec status pipe (empty when the exec
 *		worked): the handler is gone, and the worker stops as it does
 *		without --persistent.
 */
static void
proc_spawn(Worker *w, Proc *p)
{
	int			in[2] = {-1, -1},
				out[2] = {-1, -1},
				err[2] = {-1, -1},
				status[2] = {-1, -1};
	pid_t		parent = getpid();
	pid_t		pid;
	int			child_errno;
	ssize_t		n;

	p->restart_at = 0;
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 ||
		pipe2(err, O_CLOEXEC) < 0 || pipe2(status, O_CLOEXEC) < 0)
	{
		wlog(w, "error", "handler process %d: could not create pipes: %s",
			 p->index, strerror(errno));
		goto retry;
	}
	log_flush();
	fflush(NULL);
	pid = fork();
	if (pid < 0)
	{
		wlog(w, "error", "handler process %d: could not fork: %s", p->index,
			 strerror(errno));
		goto retry;
	}
	if (pid == 0)
	{
		int			e;

		handler_child_reset(in[0], out[1], err[1], parent);
		setenv("JOBQ_PROTOCOL", "1", 1);
		execvp(w->handler_argv[0], w->handler_argv);
		e = errno;
		if (write(status[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	setpgid(pid, pid);
	close_fd(&in[0]);
	close_fd(&out[1]);
	close_fd(&err[1]);
	close_fd(&status[1]);
	while ((n = read(status[0], &child_errno, sizeof(child_errno))) < 0 && errno == EINTR)
		;
	close_fd(&status[0]);
	if (n == (ssize_t) sizeof(child_errno))
	{
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		wlog(w, "error", "handler \"%s\" cannot be executed: %s; stopping",
			 w->handler_argv[0], strerror(child_errno));
		close_fd(&in[1]);
		close_fd(&out[0]);
		close_fd(&err[0]);
		w->exit_code = WORKER_EXIT_HANDLER_GONE;
		if (!w->stopping)
			w->stop_deadline = now_mono() + w->grace;
		w->stopping = true;
		return;
	}
	p->pid = pid;
	p->fd_in = in[1];
	p->fd_out = out[0];
	p->fd_err = err[0];
	set_nonblock(p->fd_in);
	set_nonblock(p->fd_out);
	set_nonblock(p->fd_err);
	p->ready = false;
	p->capacity = 0;
	p->running = 0;
	p->in_off = 0;
	p->inbuf.len = p->line.len = p->errline.len = 0;
	p->kill_at = 0;
	p->stop_why = NULL;
	memset(&p->err, 0, sizeof(p->err));
	p->started = now_mono();
	return;

retry:
	for (int i = 0; i < 2; i++)
	{
		close_fd(&in[i]);
		close_fd(&out[i]);
		close_fd(&err[i]);
		close_fd(&status[i]);
	}
	p->restart_at = now_mono() + BACKOFF_MAX_S;
}

void
persistent_init(Worker *w)
{
	w->procs = jobq_xmalloc(sizeof(Proc) * w->persistent);
	memset(w->procs, 0, sizeof(Proc) * w->persistent);
	for (int i = 0; i < w->persistent; i++)
	{
		Proc	   *p = &w->procs[i];

		p->index = i;
		p->fd_in = p->fd_out = p->fd_err = -1;
		jobq_buf_init(&p->inbuf);
		jobq_buf_init(&p->line);
		jobq_buf_init(&p->errline);
		p->backoff = BACKOFF_MIN_S;
		proc_spawn(w, p);
	}
}

/* how many more jobs the ready processes take now */
int
persistent_room(Worker *w)
{
	int			n = 0;

	for (int i = 0; i < w->persistent; i++)
	{
		Proc	   *p = &w->procs[i];

		if (p->pid > 0 && p->ready && p->stop_why == NULL && p->running < p->capacity)
			n += p->capacity - p->running;
	}
	return n;
}

/* write what is buffered for p's stdin, as far as the pipe takes it */
static void
proc_feed(Worker *w, Proc *p)
{
	while (p->fd_in >= 0 && p->in_off < p->inbuf.len)
	{
		ssize_t		n = write(p->fd_in, p->inbuf.data + p->in_off, p->inbuf.len - p->in_off);

		if (n < 0)
		{
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
			{
				/* it closed its stdin: it is exiting, reap() will tell */
				wlog(w, "warning", "handler process %d (pid %d): stdin closed: %s",
					 p->index, (int) p->pid, strerror(errno));
				close_fd(&p->fd_in);
			}
			return;
		}
		p->in_off += (size_t) n;
	}
	if (p->in_off == p->inbuf.len)
		p->inbuf.len = p->in_off = 0;
}

/*
 * persistent_start
 *		Give job to the ready process with the most room (the least busy),
 *		as one line for its stdin (buffered: persistent_feed writes it), and
 *		make slot s run it.  Returns false when
 *		no process has room (the job stays in the backlog).
 */
bool
persistent_start(Worker *w, Slot *s, const Job *job)
{
	Proc	   *best = NULL;
	size_t		len;
	const char *payload;

	for (int i = 0; i < w->persistent; i++)
	{
		Proc	   *p = &w->procs[i];

		if (p->pid > 0 && p->ready && p->stop_why == NULL && p->running < p->capacity &&
			(best == NULL || p->capacity - p->running > best->capacity - best->running))
			best = p;
	}
	if (best == NULL)
		return false;

	payload = jobq_job_payload(job->jj, &len);
	jobq_buf_puts(&best->inbuf, "{\"id\":");
	buf_int(&best->inbuf, job_id(job));
	jobq_buf_puts(&best->inbuf, ",\"queue\":");
	jobq_buf_json_string(&best->inbuf, job_queue(job));
	jobq_buf_puts(&best->inbuf, ",\"attempt\":");
	buf_int(&best->inbuf, job_attempt(job));
	jobq_buf_puts(&best->inbuf, ",\"max_attempts\":");
	buf_int(&best->inbuf, job_max_attempts(job));
	if (job->checkpoint != NULL)
	{
		/* an earlier attempt's checkpoint (checkpoint.c) */
		jobq_buf_puts(&best->inbuf, ",\"checkpoint\":");
		jobq_buf_puts(&best->inbuf, job->checkpoint);
	}
	jobq_buf_puts(&best->inbuf, ",\"payload\":");
	jobq_buf_append(&best->inbuf, payload ? payload : "null", payload ? len : 4);
	/* a job in a flow: its dependency results (jsonb's text: one line) */
	if (job->deps != NULL)
	{
		jobq_buf_puts(&best->inbuf, ",\"deps\":");
		jobq_buf_puts(&best->inbuf, job->deps);
	}
	jobq_buf_append(&best->inbuf, "}\n", 2);
	jobq_xcheck(&best->inbuf);

	memset(s, 0, sizeof(*s));
	s->busy = true;
	s->job = *job;
	s->proc = best;
	s->fd_in = s->fd_out = s->fd_err = -1;
	s->started = now_mono();
	s->deadline = w->timeout > 0 ? s->started + w->timeout : 0;
	best->running++;
	return true;				/* persistent_feed writes it, with the others */
}

/*
 * persistent_feed
 *		Write the job lines persistent_start buffered to their processes: one
 *		write per process for all the jobs started together (a claim's), not
 *		one per job.  The loop calls it after starting jobs, before any round
 *		trip to the server, so that the handlers work while the worker waits
 *		for the server.
 */
void
persistent_feed(Worker *w)
{
	for (int i = 0; i < w->persistent; i++)
	{
		Proc	   *p = &w->procs[i];

		if (p->pid > 0 && p->in_off < p->inbuf.len)
			proc_feed(w, p);
	}
}

int
persistent_pollfds(Worker *w, struct pollfd *pfd)
{
	int			n = 0;

	for (int i = 0; i < w->persistent; i++)
	{
		Proc	   *p = &w->procs[i];

		if (p->pid <= 0)
			continue;
		if (p->fd_in >= 0 && p->in_off < p->inbuf.len)
		{
			pfd[n].fd = p->fd_in;
			pfd[n++].events = POLLOUT;
		}
		if (p->fd_out >= 0)
		{
			pfd[n].fd = p->fd_out;
			pfd[n++].events = POLLIN;
		}
		if (p->fd_err >= 0)
		{
			pfd[n].fd = p->fd_err;
			pfd[n++].events = POLLIN;
		}
	}
	return n;
}

/* the slot running job id in process p, or NULL */
static Slot *
find_slot(Worker *w, Proc *p, long long id)
{
	for (int i = 0; i < w->concurrency; i++)
	{
		Slot	   *s = &w->slots[i];

		if (s->busy && s->proc == p && job_id(&s->job) == id)
			return s;
	}
	return NULL;
}

/* the slot is done: its Ack (or NULL) goes to the ack queue */
static void
slot_done(Worker *w, Slot *s, Ack *a)
{
	Proc	   *p = s->proc;

	if (a != NULL && s->kill_reason == KILL_LEASE_LOST)
	{
		/* the server would refuse it: the job runs again or ran elsewhere */
		a->outcome = "lost";
		log_job(w, a, "stale");
		job_free(&a->job);
		free(a->result);
		free(a->error);
		free(a);
		a = NULL;
	}
	if (a != NULL)
		flow_job_time(w, a->duration);	/* for --prefetch=auto */
	p->running--;
	p->jobs_done++;
	memset(s, 0, sizeof(*s));
	flow_push_ack(w, a);
}

static Ack *
new_ack(Slot *s, AckKind kind, const char *outcome)
{
	Ack		   *a = jobq_xmalloc(sizeof(Ack));

	memset(a, 0, sizeof(*a));
	a->job = s->job;
	a->kind = kind;
	a->outcome = outcome;
	a->exit_code = -1;
	a->duration = now_mono() - s->started;
	return a;
}

/* stop process p (SIGTERM now, SIGKILL after --kill-after); why is for its jobs */
static void
proc_stop(Worker *w, Proc *p, const char *why)
{
	if (p->pid <= 0 || p->stop_why != NULL)
		return;
	p->stop_why = why;
	kill(-p->pid, SIGTERM);
	close_fd(&p->fd_in);
	p->kill_at = now_mono() + w->kill_after;
}

/* a line on p's stdout breaks the protocol: stop p, its jobs fail with why */
static void
protocol_error(Worker *w, Proc *p, const char *why, const char *line, size_t len)
{
	wlog(w, "error", "handler process %d (pid %d): protocol error: %s: %.*s",
		 p->index, (int) p->pid, why, len > 200 ? 200 : (int) len, line);
	proc_stop(w, p, "the handler broke the protocol");
}

/*
 * checkpoint_message
 *	  {"id": N, "checkpoint": STATE}: job N's progress, stored at once
 *	  (checkpoint.c); the job goes on.
 */
static void
checkpoint_message(Worker *w, Proc *p, const JobqJsonMember *m, int n, const char *line,
				   size_t len)
{
	const JobqJsonMember *id = jobq_json_member(m, n, "id");
	const JobqJsonMember *state = jobq_json_member(m, n, "checkpoint");
	char	   *end;
	long long	job;
	Slot	   *s;

	if (id == NULL || id->kind != JOBQ_JV_NUMBER ||
		(job = strtoll(id->value, &end, 10), end != id->value + id->valuelen))
	{
		protocol_error(w, p, "a checkpoint needs \"id\" (an integer)", line, len);
		return;
	}
	if ((s = find_slot(w, p, job)) == NULL)
	{
		wlog(w, "warning", "handler process %d (pid %d): checkpoint for job %lld, which "
			 "it does not have; ignored", p->index, (int) p->pid, job);
		return;
	}
	checkpoint_store(w, &s->job, state->value, state->valuelen);
}

/*
 * rate_limited_answer
 *	  The Ack of {"id": N, "status": "rate_limited", "retry_after": S,
 *	  "error": "..."}: the upstream said "too many requests" (issue 19).  The
 *	  job comes back after S seconds (absent: RATE_LIMITED_DEFAULT_S, as a
 *	  process handler's exit 69 without JOBQ_RETRY_AFTER), the attempt not
 *	  counted, and the server holds the queue's or the group's rate that
 *	  long (jobq_fail with rate_limit_for).  NULL after a protocol error.
 */
static Ack *
rate_limited_answer(Worker *w, Proc *p, Slot *s, const JobqJsonMember *m, int n,
					const char *line, size_t len)
{
	const JobqJsonMember *e = jobq_json_member(m, n, "error");
	const JobqJsonMember *r = jobq_json_member(m, n, "retry_after");
	double		secs = RATE_LIMITED_DEFAULT_S;
	char	   *end;
	Ack		   *a;

	if (r != NULL)
	{
		secs = r->kind == JOBQ_JV_NUMBER ? strtod(r->value, &end) : -1;
		if (r->kind != JOBQ_JV_NUMBER || secs <= 0 || secs > JOBQ_DELAY_MAX_S)
		{
			protocol_error(w, p, "\"retry_after\" must be a number of seconds above 0, "
						   "at most " JOBQ_STR(JOBQ_DELAY_MAX_S), line, len);
			return NULL;
		}
	}
	if (e != NULL && e->kind != JOBQ_JV_STRING && e->kind != JOBQ_JV_NULL)
	{
		protocol_error(w, p, "\"error\" must be a string", line, len);
		return NULL;
	}
	a = new_ack(s, ACK_FAIL, "rate limited");
	a->rate_limited = true;
	a->has_retry_in = true;
	a->retry_in = (int) ceil(secs);
	a->error = e != NULL && e->kind == JOBQ_JV_STRING ? jobq_json_string_decode(e) : NULL;
	if (a->error == NULL)
		a->error = jobq_xstrdup("handler was rate limited");
	return a;
}

/* one whole line from p's stdout */
static void
proc_line(Worker *w, Proc *p, const char *line, size_t len)
{
	JobqJsonMember	m[16];
	int			n;
	const char *err;
	const JobqJsonMember *id,
			   *status,
			   *ready;
	char	   *end;
	long long	job;
	Slot	   *s;
	Ack		   *a;
	char	   *st;

	if (len == 0)
		return;
	if (!jobq_json_object_scan(line, len, m, 16, &n, &err))
	{
		protocol_error(w, p, err, line, len);
		return;
	}
	if ((ready = jobq_json_member(m, n, "ready")) != NULL)
	{
		const JobqJsonMember *jobs = jobq_json_member(m, n, "jobs");
		long		k = 1;

		if (ready->kind != JOBQ_JV_TRUE || p->ready)
		{
			protocol_error(w, p, p->ready ? "a second ready line" : "\"ready\" must be true",
						   line, len);
			return;
		}
		if (jobs != NULL)
		{
			k = jobs->kind == JOBQ_JV_NUMBER ? strtol(jobs->value, &end, 10) : 0;
			if (jobs->kind != JOBQ_JV_NUMBER || end != jobs->value + jobs->valuelen ||
				k < 1 || k > JOBQ_PERSISTENT_JOBS_MAX)
			{
				protocol_error(w, p, "\"jobs\" must be an integer from 1 to "
							   JOBQ_STR(JOBQ_PERSISTENT_JOBS_MAX), line, len);
				return;
			}
		}
		p->ready = true;
		p->capacity = (int) k;
		w->want_claim = true;
		wlog(w, "info", "handler process %d (pid %d) ready for %d job(s) at a time",
			 p->index, (int) p->pid, p->capacity);
		return;
	}
	if (!p->ready)
	{
		protocol_error(w, p, "an answer before the ready line", line, len);
		return;
	}
	if (jobq_json_member(m, n, "checkpoint") != NULL && jobq_json_member(m, n, "status") == NULL)
	{
		checkpoint_message(w, p, m, n, line, len);
		return;
	}
	id = jobq_json_member(m, n, "id");
	status = jobq_json_member(m, n, "status");
	if (id == NULL || id->kind != JOBQ_JV_NUMBER || status == NULL || status->kind != JOBQ_JV_STRING)
	{
		protocol_error(w, p, "an answer needs \"id\" (a number) and \"status\" (a string)",
					   line, len);
		return;
	}
	job = strtoll(id->value, &end, 10);
	if (end != id->value + id->valuelen)
	{
		protocol_error(w, p, "\"id\" must be an integer", line, len);
		return;
	}
	s = find_slot(w, p, job);
	if (s == NULL)
	{
		wlog(w, "warning", "handler process %d (pid %d): answer for job %lld, which "
			 "it does not have; ignored", p->index, (int) p->pid, job);
		return;
	}
	st = jobq_json_string_decode(status);
	if (st != NULL && strcmp(st, "completed") == 0)
	{
		const JobqJsonMember *r = jobq_json_member(m, n, "result");

		a = new_ack(s, ACK_COMPLETE, "completed");
		a->exit_code = 0;
		if (r != NULL && r->kind != JOBQ_JV_NULL)
		{
			a->result = jobq_xmalloc(r->valuelen + 1);
			memcpy(a->result, r->value, r->valuelen);
			a->result[r->valuelen] = '\0';
		}
	}
	else if (st != NULL && (strcmp(st, "retry") == 0 || strcmp(st, "failed") == 0))
	{
		const JobqJsonMember *e = jobq_json_member(m, n, "error");
		const JobqJsonMember *d = jobq_json_member(m, n, "delay");
		bool		permanent = st[0] == 'f';
		double		delay = 0;

		if (d != NULL && !permanent)
		{
			delay = d->kind == JOBQ_JV_NUMBER ? strtod(d->value, &end) : -1;
			if (d->kind != JOBQ_JV_NUMBER || delay < 0 || delay > JOBQ_DELAY_MAX_S)
			{
				free(st);
				protocol_error(w, p, "\"delay\" must be a number of seconds from 0 to "
							   JOBQ_STR(JOBQ_DELAY_MAX_S), line, len);
				return;
			}
		}
		if (e != NULL && e->kind != JOBQ_JV_STRING && e->kind != JOBQ_JV_NULL)
		{
			free(st);
			protocol_error(w, p, "\"error\" must be a string", line, len);
			return;
		}
		a = new_ack(s, ACK_FAIL, permanent ? "permanent" : "retry");
		a->permanent = permanent;
		a->error = e != NULL && e->kind == JOBQ_JV_STRING ? jobq_json_string_decode(e) : NULL;
		if (a->error == NULL)
			a->error = jobq_xstrdup(permanent ? "handler failed the job permanently" :
									"handler asked to retry");
		if (d != NULL && !permanent)
		{
			a->has_retry_in = true;
			a->retry_in = (int) ceil(delay);
		}
	}
	else if (st != NULL && strcmp(st, "rate_limited") == 0)
	{
		a = rate_limited_answer(w, p, s, m, n, line, len);
		if (a == NULL)
		{
			free(st);
			return;				/* a protocol error, handled */
		}
	}
	else
	{
		free(st);
		protocol_error(w, p, "\"status\" must be completed, retry, failed or rate_limited",
					   line, len);
		return;
	}
	free(st);
	slot_done(w, s, a);
}

/* take whole lines out of b, calling fn on each; keep the rest */
static void
take_lines(Worker *w, Proc *p, JobqBuf *b, void (*fn) (Worker *, Proc *, const char *, size_t))
{
	size_t		start = 0;
	char	   *nl;

	while (start < b->len && (nl = memchr(b->data + start, '\n', b->len - start)) != NULL)
	{
		size_t		len = (size_t) (nl - (b->data + start));

		if (len > 0 && b->data[start + len - 1] == '\r')
			len--;
		fn(w, p, b->data + start, len);
		start = (size_t) (nl - b->data) + 1;
		if (p->stop_why != NULL && b == &p->line)
		{
			start = b->len;		/* nothing more from a broken process */
			break;
		}
	}
	if (start > 0)
	{
		memmove(b->data, b->data + start, b->len - start);
		b->len -= start;
	}
}

/* one line of p's stderr: to the log, and to the tail of the error texts */
static void
err_line(Worker *w, Proc *p, const char *line, size_t len)
{
	ring_append(&p->err, line, len);
	ring_append(&p->err, "\n", 1);
	wlog(w, "info", "handler process %d (pid %d): %.*s", p->index, (int) p->pid,
		 len > 2000 ? 2000 : (int) len, line);
}

/* read what is there on *fd into b; false at EOF or error (fd closed) */
static bool
read_into(int *fd, JobqBuf *b)
{
	char		chunk[65536];

	for (int round = 0; round < 16; round++)
	{
		ssize_t		n = read(*fd, chunk, sizeof(chunk));

		if (n > 0)
		{
			jobq_buf_append(b, chunk, (size_t) n);
			jobq_xcheck(b);
			if ((size_t) n < sizeof(chunk))
				return true;	/* drained for now; poll() says when more came */
			continue;
		}
		if (n < 0 && (errno == EINTR))
			continue;
		if (n < 0 && errno == EAGAIN)
			return true;
		close_fd(fd);
		return false;
	}
	return true;
}

/* read p's stdout (out) and stderr (err) */
static void
proc_read(Worker *w, Proc *p, bool out, bool err)
{
	if (out && p->fd_out >= 0)
	{
		read_into(&p->fd_out, &p->line);
		take_lines(w, p, &p->line, proc_line);
		if (p->line.len > LINE_MAX_BYTES)
		{
			protocol_error(w, p, "a line longer than a result may be", p->line.data, 100);
			p->line.len = 0;
		}
	}
	if (err && p->fd_err >= 0)
	{
		read_into(&p->fd_err, &p->errline);
		take_lines(w, p, &p->errline, err_line);
		if (p->errline.len > STDERR_TAIL_BYTES)
		{
			err_line(w, p, p->errline.data, p->errline.len);
			p->errline.len = 0;
		}
	}
}

void
persistent_io(Worker *w, int fd, short revents)
{
	for (int i = 0; i < w->persistent; i++)
	{
		Proc	   *p = &w->procs[i];

		if (p->pid <= 0)
			continue;
		if (fd == p->fd_in && (revents & (POLLOUT | POLLERR | POLLHUP)))
			proc_feed(w, p);
		else if (fd == p->fd_out || fd == p->fd_err)
			proc_read(w, p, fd == p->fd_out, fd == p->fd_err);
	}
}

/*
 * persistent_reap
 *		pid exited: if it was one of our processes, take its last output,
 *		end its jobs (see the file header), and plan its restart.  Returns
 *		whether pid was ours.
 */
bool
persistent_reap(Worker *w, pid_t pid, int status)
{
	Proc	   *p = NULL;
	char		first[300];
	double		now = now_mono();

	for (int i = 0; i < w->persistent && p == NULL; i++)
		if (w->procs[i].pid == pid)
			p = &w->procs[i];
	if (p == NULL)
		return false;

	kill(-pid, SIGKILL);		/* what it left behind goes with it */
	close_fd(&p->fd_in);
	proc_read(w, p, true, true);	/* answers written just before the end count */
	if (p->errline.len > 0)
		err_line(w, p, p->errline.data, p->errline.len);
	close_fd(&p->fd_out);
	close_fd(&p->fd_err);

	if (WIFEXITED(status))
		snprintf(first, sizeof(first), "handler process exited with code %d",
				 WEXITSTATUS(status));
	else
		snprintf(first, sizeof(first), "handler process killed by signal %d",
				 WTERMSIG(status));
	if (p->stop_why == NULL && !w->stopping)
		wlog(w, "warning", "handler process %d (pid %d): %s with %d job(s)",
			 p->index, (int) pid, first, p->running);

	for (int i = 0; i < w->concurrency; i++)
	{
		Slot	   *s = &w->slots[i];
		Ack		   *a;
		char		msg[400];

		if (!s->busy || s->proc != p)
			continue;
		if (s->kill_reason == KILL_TIMEOUT)
		{
			a = new_ack(s, ACK_FAIL, "timeout");
			snprintf(msg, sizeof(msg), "handler timed out after %g s", w->timeout);
			a->error = handler_error(msg, &p->err);
		}
		else if (s->kill_reason == KILL_SHUTDOWN || p->stop_why != NULL)
		{
			/* not this job's doing: its attempt is given back */
			a = new_ack(s, ACK_RELEASE, "interrupted");
		}
		else
		{
			a = new_ack(s, ACK_FAIL, WIFEXITED(status) ? "failed" : "signal");
			a->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
			a->signo = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
			a->error = handler_error(first, &p->err);
		}
		slot_done(w, s, a);
	}

	p->pid = 0;
	p->ready = false;
	p->running = 0;
	p->kill_at = 0;
	if (w->stopping)
		p->restart_at = 0;
	else
	{
		if (now - p->started >= LIVED_LONG_S)
			p->backoff = BACKOFF_MIN_S;
		p->restart_at = now + p->backoff;
		p->backoff = fmin(p->backoff * 2, BACKOFF_MAX_S);
	}
	p->stop_why = NULL;
	return true;
}

/*
 * persistent_kill_job
 *		Slot s's job must stop (its --timeout passed, or shutdown): only its
 *		whole process can be stopped.  A lost lease stops nothing: the
 *		answer, when it comes, is dropped (slot_done).
 */
void
persistent_kill_job(Worker *w, Slot *s, KillReason why)
{
	if (!s->busy || s->kill_reason != KILL_NONE)
		return;
	s->kill_reason = why;
	if (why == KILL_TIMEOUT)
		proc_stop(w, s->proc, "another job of its process timed out");
	else if (why == KILL_SHUTDOWN)
		proc_stop(w, s->proc, "the worker is stopping");
}

/* restarts due, processes that never said ready, SIGKILLs due */
void
persistent_timers(Worker *w, double now)
{
	for (int i = 0; i < w->persistent; i++)
	{
		Proc	   *p = &w->procs[i];

		if (p->pid <= 0)
		{
			if (p->restart_at > 0 && now >= p->restart_at && !w->stopping)
				proc_spawn(w, p);
			continue;
		}
		if (!p->ready && p->stop_why == NULL && now - p->started >= READY_TIMEOUT_S)
		{
			wlog(w, "error", "handler process %d (pid %d) sent no ready line in %.0f s",
				 p->index, (int) p->pid, READY_TIMEOUT_S);
			proc_stop(w, p, "the handler never became ready");
		}
		if (p->kill_at > 0 && now >= p->kill_at)
		{
			kill(-p->pid, SIGKILL);
			p->kill_at = 0;
		}
	}
}

double
persistent_next_timer(Worker *w)
{
	double		t = 0;

#define NEAR(x) do { if ((x) > 0 && (t == 0 || (x) < t)) t = (x); } while (0)
	for (int i = 0; i < w->persistent; i++)
	{
		Proc	   *p = &w->procs[i];

		if (p->pid <= 0)
		{
			if (!w->stopping)
				NEAR(p->restart_at);
			continue;
		}
		if (!p->ready && p->stop_why == NULL)
			NEAR(p->started + READY_TIMEOUT_S);
		NEAR(p->kill_at);
	}
#undef NEAR
	return t;
}

/*
 * persistent_shutdown
 *		At exit: EOF on every process's stdin, --kill-after for them to exit,
 *		then SIGKILL; reap them all.
 */
void
persistent_shutdown(Worker *w)
{
	double		deadline = now_mono() + w->kill_after;
	bool		left;

	for (int i = 0; i < w->persistent; i++)
		close_fd(&w->procs[i].fd_in);
	do
	{
		left = false;
		for (int i = 0; i < w->persistent; i++)
		{
			Proc	   *p = &w->procs[i];
			int			status;

			if (p->pid <= 0)
				continue;
			if (waitpid(p->pid, &status, WNOHANG) == p->pid)
			{
				kill(-p->pid, SIGKILL);
				p->pid = 0;
				continue;
			}
			if (now_mono() >= deadline)
			{
				kill(-p->pid, SIGKILL);
				waitpid(p->pid, &status, 0);
				p->pid = 0;
				continue;
			}
			left = true;
		}
		if (left)
			usleep(10000);
	} while (left);
	for (int i = 0; i < w->persistent; i++)
	{
		Proc	   *p = &w->procs[i];

		close_fd(&p->fd_out);
		close_fd(&p->fd_err);
		jobq_buf_free(&p->inbuf);
		jobq_buf_free(&p->line);
		jobq_buf_free(&p->errline);
	}
	free(w->procs);
	w->procs = NULL;
}
