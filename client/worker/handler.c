/*-------------------------------------------------------------------------
 *
 * handler.c
 *	  Run one job's handler in a child process and judge how it ended.
 *
 * The handler protocol (see doc/jobq-worker.md, "Handler protocol"):
 *	- the job's payload (JSON text) arrives on stdin, then EOF;
 *	- JOBQ_JOB_ID, JOBQ_QUEUE, JOBQ_ATTEMPT and JOBQ_MAX_ATTEMPTS are set in
 *	  the environment;
 *	- exit 0: done, stdout is the result (stored as JSON when it parses,
 *	  else as a JSON string); exit 75 (EX_TEMPFAIL): retry later; exit 65
 *	  (EX_DATAERR): permanent failure, the job goes dead at once; any other
 *	  exit or a signal: failure, retried with backoff while attempts are
 *	  left, with the tail of stderr as the error.
 *
 * Each handler runs in a process group of its own (setpgid in the child
 * and in the worker, whichever runs first) so that a timeout or a shutdown
 * stops whatever it started (a shell script's children too): SIGTERM to
 * the group first, then SIGKILL after --kill-after seconds.  When the
 * handler exits, whatever is still in its group is sent SIGKILL: nothing a
 * job started outlives it (a child that must has to leave the group with
 * setsid, and is then on its own).  On Linux the handler also gets SIGKILL
 * when the worker dies, because a handler whose worker is gone can no
 * longer report and its job comes back through the lease anyway.
 *
 * The worker never blocks on a pipe: stdin is written and stdout/stderr are
 * read as poll() reports them ready, into bounded buffers (util.c).
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/worker/handler.c
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE				/* pipe2, memfd_create */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "worker.h"

/*
 * job_free
 *		Free what a Job owns (not the Job itself).  NULL-safe.
 */
void
job_free(Job *job)
{
	jobq_job_free(job->jj);
	job->jj = NULL;
	jobq_free(job->deps);
	job->deps = NULL;
	checkpoint_free(job);
}

static void
close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/*
 * handler_child_reset
 *		The first steps of every handler child, forked (C callback) or
 *		vfork'ed (executable): own process group, death signal, default
 *		handling of the signals the worker catches, nothing blocked, pipes
 *		on 0/1/2.  System calls only, as a vfork'ed child requires.  Exits
 *		127 (like a shell that cannot run a command) when it fails.
 */
void
handler_child_reset(int in, int out, int err, pid_t parent)
{
	static const int sigs[] = {SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGCHLD};
	struct sigaction dfl;
	sigset_t	none;

	setpgid(0, 0);
#ifdef __linux__
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)	/* the worker died before prctl */
		_exit(127);
#else
	(void) parent;
#endif
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &dfl, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
		_exit(127);
}

/*
 * deps_file
 *		For a job in a flow, an anonymous file (memfd) holding its
 *		dependency results, which the handler finds on DEPS_FD (and by the
 *		name DEPS_PATH in JOBQ_DEP_RESULTS): any size (a fan-in may hand
 *		over megabytes, past what an environment variable or a pipe takes),
 *		a file the handler may read as often as it likes, and nothing left
 *		on disk whatever happens to the worker.  Close-on-exec: the child
 *		moves it to DEPS_FD (child_deps_fd).  -1 for a job without results,
 *		or when the file cannot be made (logged; the caller fails the job).
 */
#define DEPS_FD		3
#define DEPS_PATH	"/dev/fd/3"

static int
deps_file(Worker *w, const Job *job, bool *failed)
{
	size_t		len,
				off = 0;
	int			fd;

	*failed = false;
	if (job->deps == NULL)
		return -1;
	len = strlen(job->deps);
	fd = memfd_create("jobq-dep-results", MFD_CLOEXEC);
	if (fd < 0)
		goto fail;
	while (off < len)
	{
		ssize_t		n = write(fd, job->deps + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto fail;
		off += (size_t) n;
	}
	if (lseek(fd, 0, SEEK_SET) < 0)
		goto fail;
	return fd;
fail:
	wlog(w, "error", "job %lld: could not store its dependency results for the handler: %s",
		 job_id(job), strerror(errno));
	if (fd >= 0)
		close(fd);
	*failed = true;
	return -1;
}

/*
 * child_deps_fd
 *		In a handler child (system calls only): the dependency results'
 *		file on DEPS_FD, open across exec; nothing when fd is -1.  *keep is
 *		a descriptor the child still needs (the exec status pipe), moved off
 *		DEPS_FD first.
 */
static void
child_deps_fd(int fd, int *keep)
{
	if (fd < 0)
		return;
	if (keep != NULL && *keep == DEPS_FD)
	{
		*keep = fcntl(DEPS_FD, F_DUPFD_CLOEXEC, DEPS_FD + 1);
		if (*keep < 0)
			_exit(127);
	}
	if (fd == DEPS_FD)
	{
		if (fcntl(fd, F_SETFD, 0) < 0)
			_exit(127);
	}
	else if (dup2(fd, DEPS_FD) < 0)
		_exit(127);
}

/*
 * child_setup
 *		In the forked child of a C callback: child_reset, then the job's
 *		environment.  An executable's child is set up by exec_child
 *		instead.
 */
static void
child_setup(Worker *w, Slot *self, const Job *job, int in, int out, int err,
			pid_t parent, int deps_fd)
{
	char		num[32];

	handler_child_reset(in, out, err, parent);
	child_deps_fd(deps_fd, NULL);
	close(in);
	close(out);
	close(err);

	/*
	 * NB: the other slots' pipe ends are close-on-exec, but a callback runs
	 * without exec; holding another handler's stdin open would keep it from
	 * ever seeing EOF.
	 */
	for (int i = 0; i < w->concurrency; i++)
	{
		Slot	   *o = &w->slots[i];

		if (o == self || !o->busy)
			continue;
		if (o->fd_in >= 0)
			close(o->fd_in);
		if (o->fd_out >= 0)
			close(o->fd_out);
		if (o->fd_err >= 0)
			close(o->fd_err);
	}

	snprintf(num, sizeof(num), "%lld", job_id(job));
	setenv("JOBQ_JOB_ID", num, 1);
	setenv("JOBQ_QUEUE", job_queue(job), 1);
	snprintf(num, sizeof(num), "%d", job_attempt(job));
	setenv("JOBQ_ATTEMPT", num, 1);
	snprintf(num, sizeof(num), "%d", job_max_attempts(job));
	setenv("JOBQ_MAX_ATTEMPTS", num, 1);
	if (deps_fd >= 0)
		setenv("JOBQ_DEP_RESULTS", DEPS_PATH, 1);
	else
		unsetenv("JOBQ_DEP_RESULTS");
	if (job->checkpoint_file != NULL)
		setenv("JOBQ_CHECKPOINT_FILE", job->checkpoint_file, 1);
	else
		unsetenv("JOBQ_CHECKPOINT_FILE");
}

/*
 * the names of the variables a handler gets (replacing inherited ones):
 * the job's four, then JOBQ_DEP_RESULTS, set for a job in a flow only, and
 * JOBQ_CHECKPOINT_FILE, for a job with a checkpoint
 */
static const char *const job_vars[] = {
	"JOBQ_JOB_ID=", "JOBQ_QUEUE=", "JOBQ_ATTEMPT=", "JOBQ_MAX_ATTEMPTS=",
	"JOBQ_DEP_RESULTS=",
	"JOBQ_CHECKPOINT_FILE="		/* only when the job has one (checkpoint.c) */
};
#define NJOB_VARS	(sizeof(job_vars) / sizeof(job_vars[0]))
#define JOB_VARS_MALLOCD	4	/* the first four; free_environ frees them */

/*
 * job_environ
 *		The environment of an executable handler, built in the worker before
 *		vfork (the child may not allocate): the job's four variables first
 *		(malloc'd; free with free_environ), then the worker's environment
 *		without any variables of the same names.
 */
static char **
job_environ(const Job *job, bool deps)
{
	static char deps_var[] = "JOBQ_DEP_RESULTS=" DEPS_PATH;
	size_t		n = 0,
				k = 0;
	char	  **env;
	char		buf[64];

	while (environ[n])
		n++;
	env = jobq_xmalloc(sizeof(char *) * (n + NJOB_VARS + 1));
	snprintf(buf, sizeof(buf), "%lld", job_id(job));
	env[k] = jobq_xmalloc(strlen(job_vars[0]) + strlen(buf) + 1);
	sprintf(env[k++], "%s%s", job_vars[0], buf);
	env[k] = jobq_xmalloc(strlen(job_vars[1]) + strlen(job_queue(job)) + 1);
	sprintf(env[k++], "%s%s", job_vars[1], job_queue(job));
	snprintf(buf, sizeof(buf), "%d", job_attempt(job));
	env[k] = jobq_xmalloc(strlen(job_vars[2]) + strlen(buf) + 1);
	sprintf(env[k++], "%s%s", job_vars[2], buf);
	snprintf(buf, sizeof(buf), "%d", job_max_attempts(job));
	env[k] = jobq_xmalloc(strlen(job_vars[3]) + strlen(buf) + 1);
	sprintf(env[k++], "%s%s", job_vars[3], buf);
	if (deps)
		env[k++] = deps_var;
	if (job->checkpoint_file != NULL)
	{
		env[k] = jobq_xmalloc(strlen(job_vars[5]) + strlen(job->checkpoint_file) + 1);
		sprintf(env[k++], "%s%s", job_vars[5], job->checkpoint_file);
	}
	for (size_t i = 0; i < n; i++)
	{
		bool		ours = false;

		for (size_t v = 0; v < NJOB_VARS && !ours; v++)
			ours = strncmp(environ[i], job_vars[v], strlen(job_vars[v])) == 0;
		if (!ours)
			env[k++] = environ[i];
	}
	env[k] = NULL;
	return env;
}

static void
free_environ(char **env)
{
	for (int v = 0; v < JOB_VARS_MALLOCD; v++)
		free(env[v]);
	/* and the checkpoint file's, after JOBQ_DEP_RESULTS when that is set */
	for (int v = JOB_VARS_MALLOCD; v < JOB_VARS_MALLOCD + 2 && env[v] != NULL; v++)
		if (strncmp(env[v], job_vars[5], strlen(job_vars[5])) == 0)
			free(env[v]);
	free(env);
}

/* append s at *p (not past end): the vfork child has no stdio */
static void
put_str(char **p, const char *end, const char *s)
{
	while (*s && *p < end)
		*(*p)++ = *s++;
}

/*
 * exec_child
 *		In the vfork'ed child of an executable handler: child_reset (system
 *		calls only: the child shares the worker's memory until it execs, so
 *		it may not allocate, use stdio or change any variable), then exec.
 *		Signals arrive blocked (the worker blocks them around vfork, so that
 *		no handler of ours runs here); child_reset sets them to their
 *		defaults and unblocks them.  Never returns.
 */
static void exec_child(Worker *w, int in, int out, int err, int status,
					   pid_t parent, char **env, int deps_fd) __attribute__((noreturn));

static void
exec_child(Worker *w, int in, int out, int err, int status, pid_t parent,
		   char **env, int deps_fd)
{
	char		msg[600];
	char	   *p = msg;
	const char *end = msg + sizeof(msg) - 1;
	int			e;

	handler_child_reset(in, out, err, parent);
	child_deps_fd(deps_fd, &status);
	/* the pipes' own descriptors are close-on-exec, as are other slots' */
	execvpe(w->handler_argv[0], w->handler_argv, env);
	e = errno;
	/* tell the worker why (status is close-on-exec: empty when exec worked) */
	if (write(status, &e, sizeof(e)) < 0)
		_exit(127);
	put_str(&p, end, "jobq-worker: could not execute \"");
	put_str(&p, end, w->handler_argv[0]);
	put_str(&p, end, "\": ");
	put_str(&p, end, strerror(e));
	put_str(&p, end, "\n");
	if (write(2, msg, (size_t) (p - msg)) < 0)
		_exit(127);
	_exit(127);
}

/*
 * spawn_exec
 *		vfork and exec an executable handler with the job's environment;
 *		returns the child's pid, or -1 with errno set.  When the exec itself
 *		failed (the handler vanished or lost its execute permission), the
 *		child is reaped, -1 is returned and *exec_errno says why.  Every
 *		signal is blocked across the vfork, so that no handler of ours can
 *		run in the child while it shares our memory.
 *
 *		NB: vfork returns only once the child has exec'd or exited, so the
 *		close-on-exec status pipe then holds the exec's errno or nothing:
 *		reading it never waits.  A handler that runs and exits 126 or 127
 *		itself is an ordinary failure; only a failed exec is not.
 */
static pid_t
spawn_exec(Worker *w, const Job *job, int in, int out, int err, pid_t parent,
		   int deps_fd, int *exec_errno)
{
	char	  **env = job_environ(job, deps_fd >= 0);
	int			status[2];
	sigset_t	all,
				old;
	pid_t		pid;
	int			e;

	*exec_errno = 0;
	if (pipe2(status, O_CLOEXEC) < 0)
	{
		e = errno;
		free_environ(env);
		errno = e;
		return -1;
	}
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	pid = vfork();
	if (pid == 0)
		exec_child(w, in, out, err, status[1], parent, env, deps_fd);
	e = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	free_environ(env);
	close(status[1]);
	if (pid > 0)
	{
		int			child_errno;
		ssize_t		n;

		while ((n = read(status[0], &child_errno, sizeof(child_errno))) < 0 &&
			   errno == EINTR)
			;
		if (n == (ssize_t) sizeof(child_errno))
		{
			while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
				;
			*exec_errno = child_errno;
			pid = -1;
			e = child_errno;
		}
	}
	close(status[0]);
	errno = e;
	return pid;
}

/*
 * handler_executable
 *		Whether the handler command can be executed, judged as execvp
 *		would find it: a name with a '/' is the file, any other is looked
 *		up in PATH.  On false, *why says what is wrong (static text).
 */
bool
handler_executable(const char *cmd, const char **why)
{
	struct stat st;
	const char *path;

	if (strchr(cmd, '/') != NULL)
	{
		if (stat(cmd, &st) < 0)
		{
			*why = strerror(errno);
			return false;
		}
		if (S_ISDIR(st.st_mode))
		{
			*why = strerror(EISDIR);
			return false;
		}
		if (access(cmd, X_OK) < 0)
		{
			*why = strerror(errno);
			return false;
		}
		return true;
	}
	path = getenv("PATH");
	if (path == NULL || *path == '\0')
		path = "/usr/local/bin:/bin:/usr/bin";
	while (*path)
	{
		const char *colon = strchr(path, ':');
		size_t		len = colon ? (size_t) (colon - path) : strlen(path);
		char		file[4096];

		if (snprintf(file, sizeof(file), "%.*s/%s", (int) len, len ? path : ".", cmd)
			< (int) sizeof(file) &&
			stat(file, &st) == 0 && !S_ISDIR(st.st_mode) && access(file, X_OK) == 0)
			return true;
		path += len + (colon ? 1 : 0);
	}
	*why = "not found in PATH";
	return false;
}


/*
 * feed_stdin
 *		Write as much of the payload as the (non-blocking) pipe *fd takes;
 *		close it once the whole payload is in, or when the handler does not
 *		read its stdin (EPIPE: fine).
 */
static void
feed_stdin(Slot *s, int *fd)
{
	size_t		total;
	const char *payload = jobq_job_payload(s->job.jj, &total);

	while (s->in_off < total)
	{
		ssize_t		n = write(*fd, payload + s->in_off, total - s->in_off);

		if (n > 0)
			s->in_off += n;
		else if (n < 0 && errno == EINTR)
			continue;
		else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		else
			s->in_off = total;
	}
	close_fd(fd);
}

/*
 * prefill_stdin
 *		Put the payload into the handler's stdin pipe before the handler
 *		starts, and close our end when it all fitted.  Then a handler never
 *		reads a payload cut short: if this worker is killed (SIGKILL) right
 *		after the spawn, the handler still gets the whole payload and EOF,
 *		instead of EOF on a partial or empty one.  The pipe is grown to the
 *		payload's size where Linux allows it (up to fs.pipe-max-size, 1 MiB
 *		by default, the default jobq.max_payload_size); whatever does not
 *		fit is written by handler_io as the handler reads.
 */
static void
prefill_stdin(Slot *s, int in[2])
{
#ifdef F_SETPIPE_SZ
	size_t		total;

	(void) jobq_job_payload(s->job.jj, &total);

	if (total > 65536)
		(void) fcntl(in[1], F_SETPIPE_SZ, (int) (total < (1 << 30) ? total : (1 << 30)));
#endif
	fcntl(in[1], F_SETFL, fcntl(in[1], F_GETFL) | O_NONBLOCK);
	feed_stdin(s, &in[1]);		/* the rest, if any, from handler_io */
}

/*
 * handler_start
 *		Start the handler for job in slot s, which takes ownership of job's
 *		fields.  Returns false when the process could not be started (the
 *		slot is then free again): with *exec_errno set when the handler
 *		could not be executed (the caller releases the job and stops), 0
 *		for any other reason (the caller fails the job).
 *
 *		An executable handler is started with vfork + exec: the worker's
 *		page tables are not copied and its memory is not made copy-on-write
 *		for each job, which on a small virtual machine is most of the cost of
 *		starting a process.  A C callback needs a real fork (it runs in the
 *		child's copy of the worker).
 */
bool
handler_start(Worker *w, Slot *s, const Job *job, int *exec_errno)
{
	int			in[2] = {-1, -1},
				out[2] = {-1, -1},
				err[2] = {-1, -1};
	pid_t		parent = getpid();
	pid_t		pid;
	int			deps_fd;
	bool		deps_failed;

	memset(s, 0, sizeof(*s));
	s->job = *job;
	s->fd_in = s->fd_out = s->fd_err = -1;
	*exec_errno = 0;
	deps_fd = deps_file(w, job, &deps_failed);
	if (deps_failed)
		return false;

	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 ||
		pipe2(err, O_CLOEXEC) < 0)
	{
		wlog(w, "error", "could not create pipes: %s", strerror(errno));
		goto fail;
	}

	prefill_stdin(s, in);

	log_flush();
	fflush(NULL);
	*exec_errno = 0;
	if (w->callback == NULL)
		pid = spawn_exec(w, job, in[0], out[1], err[1], parent, deps_fd, exec_errno);
	else
		pid = fork();
	if (pid < 0)
	{
		if (*exec_errno == 0)
			wlog(w, "error", "could not fork: %s", strerror(errno));
		goto fail;
	}
	if (pid == 0)
	{
		/* the forked child of a C callback (an executable is exec_child's) */
		JobqWorkerJob cj;
		int			rc;

		close(in[1]);
		close(out[0]);
		close(err[0]);
		child_setup(w, s, job, in[0], out[1], err[1], parent, deps_fd);
		cj.id = job_id(job);
		cj.queue = job_queue(job);
		cj.payload = jobq_job_payload(job->jj, NULL);
		cj.attempt = job_attempt(job);
		cj.max_attempts = job_max_attempts(job);
		cj.deps = job->deps;
		rc = w->callback(&cj, w->callback_arg);
		fflush(stdout);
		fflush(stderr);
		_exit(rc >= 0 && rc <= 255 ? rc : 1);
	}

	if (deps_fd >= 0)
		close(deps_fd);
	/* both sides set the group: whichever runs first wins the race */
	setpgid(pid, pid);
	close(in[0]);
	close(out[1]);
	close(err[1]);
	s->fd_in = in[1];			/* -1 when prefill_stdin wrote it all */
	s->fd_out = out[0];
	s->fd_err = err[0];
	if (s->fd_in >= 0)
		fcntl(s->fd_in, F_SETFL, fcntl(s->fd_in, F_GETFL) | O_NONBLOCK);
	fcntl(s->fd_out, F_SETFL, fcntl(s->fd_out, F_GETFL) | O_NONBLOCK);
	fcntl(s->fd_err, F_SETFL, fcntl(s->fd_err, F_GETFL) | O_NONBLOCK);
	s->busy = true;
	s->pid = pid;
	s->started = now_mono();
	s->deadline = w->timeout > 0 ? s->started + w->timeout : 0;
	jobq_buf_init(&s->out);
	s->out.limit = MAX_RESULT_BYTES;
	return true;

fail:
	for (int i = 0; i < 2; i++)
	{
		close_fd(&in[i]);
		close_fd(&out[i]);
		close_fd(&err[i]);
	}
	close_fd(&deps_fd);
	return false;
}

/*
 * read_some
 *		Read what is available on *fd into b (stdout) or r (stderr); close
 *		*fd at EOF.  Stops at EAGAIN, or after a bounded number of reads so a
 *		flood on one pipe cannot starve the rest of the loop.
 */
static void
read_some(int *fd, JobqBuf *b, Ring *r)
{
	char		chunk[65536];

	for (int i = 0; i < 16 && *fd >= 0; i++)
	{
		ssize_t		n = read(*fd, chunk, sizeof(chunk));

		if (n > 0)
		{
			if (b)
			{
				jobq_buf_append(b, chunk, n);
				jobq_xcheck(b);
			}
			else
				ring_append(r, chunk, n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		close_fd(fd);			/* EOF or a real error */
	}
}

/*
 * handler_io
 *		Move bytes for slot s as poll() reported: the rest of the payload to
 *		stdin, stdout and stderr into their buffers.
 */
void
handler_io(Worker *w, Slot *s, short in_ev, short out_ev, short err_ev)
{
	(void) w;
	if (s->fd_in >= 0 && (in_ev & (POLLOUT | POLLERR | POLLHUP)))
		feed_stdin(s, &s->fd_in);
	if (s->fd_out >= 0 && (out_ev & (POLLIN | POLLERR | POLLHUP)))
		read_some(&s->fd_out, &s->out, NULL);
	if (s->fd_err >= 0 && (err_ev & (POLLIN | POLLERR | POLLHUP)))
		read_some(&s->fd_err, NULL, &s->err);
}

/*
 * handler_drain
 *		After the child exited: take what is still in its pipes and close
 *		them.  A grandchild may hold the pipes open forever, so this does
 *		not wait for EOF.
 */
void
handler_drain(Slot *s)
{
	close_fd(&s->fd_in);
	read_some(&s->fd_out, &s->out, NULL);
	read_some(&s->fd_err, NULL, &s->err);
	close_fd(&s->fd_out);
	close_fd(&s->fd_err);
}

/*
 * handler_kill
 *		Ask the handler's process group to stop (SIGTERM) and arm the SIGKILL
 *		that follows after --kill-after.  The first reason sticks.
 */
void
handler_kill(Worker *w, Slot *s, KillReason why)
{
	if (s->busy && s->proc != NULL)
	{
		persistent_kill_job(w, s, why);
		return;
	}
	if (!s->busy || s->exited || s->kill_reason != KILL_NONE)
		return;
	s->kill_reason = why;
	kill(-s->pid, SIGTERM);
	s->kill_at = now_mono() + w->kill_after;
}

/*
 * handler_timers
 *		Fire the slot's timers that are due at now: the job timeout, then the
 *		SIGKILL that follows a SIGTERM the handler did not obey.
 */
void
handler_timers(Worker *w, Slot *s, double now)
{
	if (!s->busy || s->exited)
		return;
	if (s->deadline > 0 && now >= s->deadline && s->kill_reason == KILL_NONE)
	{
		wlog(w, "warning", "job %lld timed out after %.0f s, stopping its handler",
			 job_id(&s->job), w->timeout);
		handler_kill(w, s, KILL_TIMEOUT);
	}
	if (s->proc != NULL)
		return;					/* its process's timers are persistent.c's */
	if (s->kill_at > 0 && now >= s->kill_at)
	{
		kill(-s->pid, SIGKILL);
		s->kill_at = 0;
	}
}

static const char *
signame(int signo)
{
	switch (signo)
	{
		case SIGKILL:
			return "SIGKILL";
		case SIGTERM:
			return "SIGTERM";
		case SIGSEGV:
			return "SIGSEGV";
		case SIGABRT:
			return "SIGABRT";
		case SIGINT:
			return "SIGINT";
		case SIGBUS:
			return "SIGBUS";
		case SIGPIPE:
			return "SIGPIPE";
		default:
			return "signal";
	}
}

/* error text: a first line of our own, then the handler's stderr tail */
char *
handler_error(const char *first, const Ring *r)
{
	char	   *tail = ring_string(r);
	size_t		n = strlen(first) + strlen(tail) + 2;
	char	   *e = jobq_xmalloc(n);

	if (tail[0])
		snprintf(e, n, "%s\n%s", first, tail);
	else
		snprintf(e, n, "%s", first);
	free(tail);
	return e;
}


/*
 * retry_after: the seconds a rate-limited handler asked for, from a line
 * "JOBQ_RETRY_AFTER=<seconds>" of its stdout (as HTTP's Retry-After), or
 * RATE_LIMITED_DEFAULT_S; at least 1, at most 365 days.
 */
static int
retry_after(const JobqBuf *out)
{
	static const char key[] = "JOBQ_RETRY_AFTER=";
	const char *p = out->data;

	while (p != NULL && out->len > 0)
	{
		if (strncmp(p, key, sizeof(key) - 1) == 0)
		{
			char	   *end;
			double		v = strtod(p + sizeof(key) - 1, &end);

			if (end != p + sizeof(key) - 1 && v >= 1 && v <= JOBQ_DELAY_MAX_S)
				return (int) v + (v > (int) v);	/* up */
			break;
		}
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
	return RATE_LIMITED_DEFAULT_S;
}

/*
 * handler_finish
 *		The child of slot s has exited (and its pipes are drained): turn how
 *		it ended into the Ack that reports it, and free the slot.  Returns
 *		NULL when there is nothing to report (the lease was lost; a line is
 *		logged here).  The Ack takes over the job's fields.
 */
Ack *
handler_finish(Worker *w, Slot *s)
{
	Ack		   *a = jobq_xmalloc(sizeof(Ack));
	int			st = s->status;
	char		first[200];

	memset(a, 0, sizeof(*a));
	a->job = s->job;
	a->duration = now_mono() - s->started;
	a->exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	a->signo = WIFSIGNALED(st) ? WTERMSIG(st) : 0;

	/*
	 * Whatever is left in the handler's process group goes with it: the
	 * children of a killed handler, and those a handler left running when
	 * it exited ("(sleep 20) &"), which would otherwise outlive their job
	 * and every worker.  NB: now, before anything else is forked: the
	 * group's id is the reaped handler's pid, which a later child could
	 * get again once the group is empty.
	 */
	kill(-s->pid, SIGKILL);

	if (s->kill_reason == KILL_LEASE_LOST)
	{
		a->outcome = "lost";
		log_job(w, a, "stale");
		job_free(&a->job);
		free(a);
		a = NULL;
	}
	else if (s->kill_reason == KILL_SHUTDOWN)
	{
		a->kind = ACK_RELEASE;
		a->outcome = "interrupted";
	}
	else if (s->kill_reason == KILL_TIMEOUT)
	{
		a->kind = ACK_FAIL;
		a->outcome = "timeout";
		snprintf(first, sizeof(first), "handler timed out after %g s", w->timeout);
		a->error = handler_error(first, &s->err);
	}
	else if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
	{
		a->kind = ACK_COMPLETE;
		a->outcome = "completed";
		/* drop trailing newlines: "echo" adds one */
		while (s->out.len > 0 && (s->out.data[s->out.len - 1] == '\n' ||
								  s->out.data[s->out.len - 1] == '\r'))
			s->out.data[--s->out.len] = '\0';
		if (s->out.overflow)
			wlog(w, "warning", "job %lld: result over %d bytes, stored as null",
				 job_id(&s->job), MAX_RESULT_BYTES);
		else if (s->out.len > 0 && memchr(s->out.data, '\0', s->out.len) != NULL)
			wlog(w, "warning", "job %lld: result contains NUL bytes, stored as null",
				 job_id(&s->job));
		else if (s->out.len > 0)
			a->result = jobq_xstrdup(s->out.data);
	}
	else if (WIFEXITED(st))
	{
		int			code = WEXITSTATUS(st);

		a->kind = ACK_FAIL;
		if (code == EXIT_RETRY_LATER)
		{
			a->outcome = "retry";
			snprintf(first, sizeof(first), "handler asked to retry later (exit code %d)", code);
		}
		else if (code == EXIT_PERMANENT)
		{
			a->outcome = "permanent";
			a->permanent = true;
			snprintf(first, sizeof(first), "handler failed permanently (exit code %d)", code);
		}
		else if (code == EXIT_RATE_LIMITED)
		{
			a->outcome = "rate limited";
			a->rate_limited = true;
			a->has_retry_in = true;
			a->retry_in = retry_after(&s->out);
			snprintf(first, sizeof(first), "handler was rate limited (exit code %d), back in %d s",
					 code, a->retry_in);
		}
		else
		{
			a->outcome = "failed";
			snprintf(first, sizeof(first), "handler exited with code %d", code);
		}
		a->error = handler_error(first, &s->err);
	}
	else
	{
		a->kind = ACK_FAIL;
		a->outcome = "signal";
		snprintf(first, sizeof(first), "handler killed by signal %d (%s)",
				 WTERMSIG(st), signame(WTERMSIG(st)));
		a->error = handler_error(first, &s->err);
	}

	jobq_buf_free(&s->out);
	s->busy = false;
	s->exited = false;
	s->pid = 0;
	memset(&s->job, 0, sizeof(s->job));
	return a;
}
