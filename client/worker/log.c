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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "worker.h"

static FILE *log_fp = NULL;

/*
 * log_open
 *		Open --log-file for appending, or use stderr.  Exits on failure: a
 *		daemon that cannot log should say so at start, not later.
 */
void
log_open(Worker *w)
{
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
	struct timeval tv;
	struct tm	tm;
	char		tmp[32];

	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	strftime(tmp, sizeof(tmp), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, len, "%s.%03dZ", tmp, (int) (tv.tv_usec / 1000));
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

	if (log_fp == NULL)
		log_fp = stderr;
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
				ts, (int) getpid(), level);
		json_str(log_fp, msg);
		fputs("}\n", log_fp);
	}
	else
		fprintf(log_fp, "%s jobq-worker[%d] %s: %s\n", ts, (int) getpid(), level, msg);
	fflush(log_fp);
}

/*
 * log_job
 *		The line for one finished job.  state is what the server says the
 *		job became (completed, ready, dead, or "stale" when our token was no
 *		longer valid); the error, when any, is shortened to its last line.
 */
void
log_job(Worker *w, const Ack *a, const char *state)
{
	char		ts[40];
	char		errline[200] = "";

	if (log_fp == NULL)
		log_fp = stderr;
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
	if (w->log_json)
	{
		fprintf(log_fp, "{\"ts\":\"%s\",\"pid\":%d,\"level\":\"info\",\"event\":\"job\","
				"\"id\":%lld,\"queue\":", ts, (int) getpid(), job_id(&a->job));
		json_str(log_fp, job_queue(&a->job));
		fprintf(log_fp, ",\"attempt\":%d,\"max_attempts\":%d,\"outcome\":\"%s\","
				"\"state\":\"%s\",\"duration\":%.3f",
				job_attempt(&a->job), job_max_attempts(&a->job), a->outcome, state, a->duration);
		if (a->exit_code >= 0)
			fprintf(log_fp, ",\"exit\":%d", a->exit_code);
		if (a->signo > 0)
			fprintf(log_fp, ",\"signal\":%d", a->signo);
		if (errline[0])
		{
			fputs(",\"error\":", log_fp);
			json_str(log_fp, errline);
		}
		fputs("}\n", log_fp);
	}
	else
	{
		fprintf(log_fp, "%s jobq-worker[%d] info: job id=%lld queue=%s attempt=%d/%d "
				"outcome=%s state=%s duration=%.3fs",
				ts, (int) getpid(), job_id(&a->job), job_queue(&a->job), job_attempt(&a->job),
				job_max_attempts(&a->job), a->outcome, state, a->duration);
		if (a->exit_code >= 0)
			fprintf(log_fp, " exit=%d", a->exit_code);
		if (a->signo > 0)
			fprintf(log_fp, " signal=%d", a->signo);
		if (errline[0])
		{
			fputs(" error=", log_fp);
			json_str(log_fp, errline);
		}
		fputc('\n', log_fp);
	}
	fflush(log_fp);
}
