/*-------------------------------------------------------------------------
 *
 * log.c
 *	  jobq-worker's log: one line per event, as text or as JSON.
 *
 * Every finished job gets exactly one line with its id, queue, attempt,
 * outcome and duration, so the log can be grepped or shipped as is.  The
 * log goes to stderr, or to --log-file, which SIGHUP reopens (logrotate).
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/worker/log.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "worker.h"

static FILE *log_fp = NULL;
/* the worker's pid, for the lines (getpid() is a system call per line) */
static pid_t log_pid = 0;
/* job lines not written yet (log_job, log_flush) */
static JobqBuf job_lines;
/* job lines are written at the latest when this much has gathered */
#define LOG_FLUSH_BYTES		(64 * 1024)

/*
 * log_open
 *		Open --log-file for appending, or use stderr.  Exits on failure: a
 *		daemon that cannot log should say so at start, not later.
 */
void
log_open(Worker *w)
{
	log_pid = getpid();
	jobq_buf_init(&job_lines);
	if (w->log_file == NULL)
	{
		log_fp = stderr;
		return;
	}
	log_fp = fopen(w->log_file, "a");
	if (log_fp == NULL)
	{
		fprintf(stderr, "jobq-worker: could not open log file \"%s\": %s\n",
				w->log_file, strerror(errno));
		exit(1);
	}
	setvbuf(log_fp, NULL, _IOLBF, 0);
}

/*
 * log_reopen
 *		SIGHUP: reopen --log-file so that a rotated file is let go.  On
 *		failure keep the old stream and say so in it.
 */
void
log_reopen(Worker *w)
{
	FILE	   *f;

	if (w->log_file == NULL)
		return;
	f = fopen(w->log_file, "a");
	if (f == NULL)
	{
		wlog(w, "warning", "could not reopen log file \"%s\": %s",
			 w->log_file, strerror(errno));
		return;
	}
	setvbuf(f, NULL, _IOLBF, 0);
	if (log_fp != stderr)
		fclose(log_fp);
	log_fp = f;
}

static void
timestamp(char *out, size_t len)
{
	static time_t last_sec = -1;
	static char tmp[32];		/* last_sec as text, up to the seconds */
	struct timeval tv;
	struct tm	tm;

	gettimeofday(&tv, NULL);
	if (tv.tv_sec != last_sec)
	{
		gmtime_r(&tv.tv_sec, &tm);
		strftime(tmp, sizeof(tmp), "%Y-%m-%dT%H:%M:%S", &tm);
		last_sec = tv.tv_sec;
	}
	snprintf(out, len, "%s.%03dZ", tmp, (int) (tv.tv_usec / 1000));
}

/* append secs as seconds with three decimals (printf's %.3f, by hand) */
static void
buf_secs3(JobqBuf *b, double secs)
{
	long long	ms = secs > 0 ? llround(secs * 1000) : 0;
	char		frac[4];

	buf_int(b, ms / 1000);
	frac[0] = '.';
	frac[1] = (char) ('0' + ms / 100 % 10);
	frac[2] = (char) ('0' + ms / 10 % 10);
	frac[3] = (char) ('0' + ms % 10);
	jobq_buf_append(b, frac, 4);
}

/* json_str: s as a JSON string literal on f */
static void
json_str(FILE *f, const char *s)
{
	jobq_fputs_json(f, jobq_buf_json_string, s);
}

/*
 * wlog
 *		Log one message at level (info, warning, error).  Newlines in the
 *		message are flattened so that one event stays one line.
 */
void
wlog(Worker *w, const char *level, const char *fmt,...)
{
	char		msg[2048];
	char		ts[40];
	va_list		ap;

	log_flush();				/* the job lines before it came first */
	if (log_fp == NULL)
		log_fp = stderr;
	if (log_pid == 0)
		log_pid = getpid();
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (char *p = msg; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	timestamp(ts, sizeof(ts));
	if (w->log_json)
	{
		fprintf(log_fp, "{\"ts\":\"%s\",\"pid\":%d,\"level\":\"%s\",\"msg\":",
				ts, (int) log_pid, level);
		json_str(log_fp, msg);
		fputs("}\n", log_fp);
	}
	else
		fprintf(log_fp, "%s jobq-worker[%d] %s: %s\n", ts, (int) log_pid, level, msg);
	fflush(log_fp);
}

/* a literal, then a number or a string: the pieces of a job's line */
static void
put_int(JobqBuf *b, const char *lit, long long v)
{
	jobq_buf_puts(b, lit);
	buf_int(b, v);
}

static void
put_str(JobqBuf *b, const char *lit, const char *s)
{
	jobq_buf_puts(b, lit);
	jobq_buf_puts(b, s);
}

/* the fields a job's line has only sometimes: exit, signal, error */
static void
job_line_end(JobqBuf *b, bool json, const Ack *a, const char *errline)
{
	if (a->exit_code >= 0)
		put_int(b, json ? ",\"exit\":" : " exit=", a->exit_code);
	if (a->signo > 0)
		put_int(b, json ? ",\"signal\":" : " signal=", a->signo);
	if (errline[0])
	{
		jobq_buf_puts(b, json ? ",\"error\":" : " error=");
		jobq_buf_json_string(b, errline);
	}
}

/*
 * log_job
 *		The line for one finished job.  state is what the server says the
 *		job became (completed, ready, dead, or "stale" when our token was no
 *		longer valid); the error, when any, is shortened to its last line.
 *		The line waits in job_lines until log_flush (the loop calls it before
 *		it sleeps, wlog before its own line): one write for the lines of a
 *		whole batch instead of one per job.
 */
void
log_job(Worker *w, const Ack *a, const char *state)
{
	char		ts[40];
	char		errline[200] = "";
	JobqBuf    *b = &job_lines;
	bool		json = w->log_json;

	if (log_pid == 0)
		log_pid = getpid();
	if (a->error)
	{
		/* the last non-empty line says most */
		const char *e = a->error;
		size_t		n = strlen(e);

		while (n > 0 && (e[n - 1] == '\n' || e[n - 1] == ' '))
			n--;
		size_t		st = n;

		while (st > 0 && e[st - 1] != '\n')
			st--;
		snprintf(errline, sizeof(errline), "%.*s", (int) (n - st), e + st);
	}
	timestamp(ts, sizeof(ts));
	/* the two formats piece by piece (by hand, not printf: see buf_int) */
	put_str(b, json ? "{\"ts\":\"" : "", ts);
	put_int(b, json ? "\",\"pid\":" : " jobq-worker[", log_pid);
	put_int(b, json ? ",\"level\":\"info\",\"event\":\"job\",\"id\":" : "] info: job id=",
			job_id(&a->job));
	jobq_buf_puts(b, json ? ",\"queue\":" : " queue=");
	if (json)
		jobq_buf_json_string(b, job_queue(&a->job));
	else
		jobq_buf_puts(b, job_queue(&a->job));
	put_int(b, json ? ",\"attempt\":" : " attempt=", job_attempt(&a->job));
	put_int(b, json ? ",\"max_attempts\":" : "/", job_max_attempts(&a->job));
	put_str(b, json ? ",\"outcome\":\"" : " outcome=", a->outcome);
	put_str(b, json ? "\",\"state\":\"" : " state=", state);
	jobq_buf_puts(b, json ? "\",\"duration\":" : " duration=");
	buf_secs3(b, a->duration);
	if (!json)
		jobq_buf_puts(b, "s");
	job_line_end(b, json, a, errline);
	jobq_buf_puts(b, json ? "}\n" : "\n");
	jobq_xcheck(b);
	/* a stream of jobs between two sleeps must not pile up without bound */
	if (b->len >= LOG_FLUSH_BYTES)
		log_flush();
}

/*
 * log_flush
 *		Write the job lines log_job has kept, in one write.  NB: a worker
 *		killed with SIGKILL loses the lines of the jobs it finished since it
 *		last slept (their state is in the database all the same).
 */
void
log_flush(void)
{
	if (job_lines.len == 0)
		return;
	size_t		off = 0;

	if (log_fp == NULL)
		log_fp = stderr;
	/* (past stdio: a line-buffered stream would write line by line) */
	fflush(log_fp);
	while (off < job_lines.len)
	{
		ssize_t		n = write(fileno(log_fp), job_lines.data + off, job_lines.len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;				/* a full disk: nowhere to say so */
		off += (size_t) n;
	}
	job_lines.len = 0;
}
