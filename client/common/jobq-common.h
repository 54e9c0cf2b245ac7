/*-------------------------------------------------------------------------
 *
 * jobq-common.h
 *	  The private helper library of the client: a growable buffer, JSON
 *	  text, allocation, and durations.  Linked into libjobq (static and
 *	  shared), jobq-worker and jobq; never installed, never exported (the
 *	  shared library's version script keeps these symbols local).
 *
 * Two allocation styles live here on purpose.  libjobq must never exit,
 * so its buffer latches "failed" and jobq_strdup returns NULL; the
 * programs cannot do anything useful without memory, so jobq_xmalloc and
 * jobq_xstrdup print "<program>: out of memory" and exit 1.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/common/jobq-common.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JOBQ_COMMON_H
#define JOBQ_COMMON_H

#include <stddef.h>
#include <stdio.h>

#if defined(__GNUC__)
#define JOBQ_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define JOBQ_PRINTF(f, a)
#endif

/* JOBQ_STR(JOBQ_CLAIM_MAX): a numeric macro's value as a string literal */
#define JOBQ_STR_(x) #x
#define JOBQ_STR(x) JOBQ_STR_(x)

/*
 * A growable byte buffer, always NUL-terminated once anything was
 * appended (data is NULL while empty).  "failed" latches after an
 * allocation error: later appends do nothing, and the caller checks it
 * once at the end.  With a limit (0 = none), bytes beyond it are dropped
 * and "overflow" says so.
 */
typedef struct JobqBuf
{
	char	   *data;
	size_t		len;
	size_t		cap;
	size_t		limit;
	int			failed;
	int			overflow;
} JobqBuf;

/* buf.c */
void		jobq_buf_init(JobqBuf *b);
void		jobq_buf_free(JobqBuf *b);
void		jobq_buf_append(JobqBuf *b, const char *s, size_t len);
void		jobq_buf_puts(JobqBuf *b, const char *s);
void		jobq_buf_printf(JobqBuf *b, const char *fmt,...) JOBQ_PRINTF(2, 3);
int			jobq_buf_reserve(JobqBuf *b, size_t extra);

/* json.c */
void		jobq_buf_json_string(JobqBuf *b, const char *s);
void		jobq_buf_json_timestamp(JobqBuf *b, const char *ts);
void		jobq_fputs_json(FILE *f, void (*render) (JobqBuf *, const char *),
							const char *s);

/* json_scan.c: check one JSON object and give its top-level members */
typedef enum JobqJsonKind
{
	JOBQ_JV_STRING, JOBQ_JV_NUMBER, JOBQ_JV_OBJECT, JOBQ_JV_ARRAY,
	JOBQ_JV_TRUE, JOBQ_JV_FALSE, JOBQ_JV_NULL
} JobqJsonKind;

typedef struct JobqJsonMember
{
	const char *name;			/* between its quotes, not decoded */
	size_t		namelen;
	const char *value;			/* the whole value's text */
	size_t		valuelen;
	JobqJsonKind kind;
} JobqJsonMember;

int			jobq_json_object_scan(const char *text, size_t len, JobqJsonMember *m,
								  int max, int *n, const char **err);
int			jobq_json_valid(const char *text, size_t len);
const JobqJsonMember *jobq_json_member(const JobqJsonMember *m, int n, const char *name);
char	   *jobq_json_string_decode(const JobqJsonMember *m);

/* alloc.c */
char	   *jobq_strdup(const char *s);
void		jobq_set_progname(const char *name);
void	   *jobq_xmalloc(size_t n);
char	   *jobq_xstrdup(const char *s);
void		jobq_xcheck(const JobqBuf *b);

/*
 * duration.c
 *
 * The one duration syntax of jobq-worker and jobq (JOBQ_DURATION_HELP).
 * jobq_parse_duration returns 0 and the seconds, or -1 for text that is
 * not a duration.  JOBQ_DURATION_SIGNED also takes a sign on each term,
 * as PostgreSQL prints negative intervals ("-1 days +02:00:00").
 */
#define JOBQ_DURATION_SIGNED 1
#define JOBQ_DURATION_HELP \
	"DURATION is seconds (90, 2.5) or numbers with units: 500ms, 5min, 1h30m,\n" \
	"\"2 days\", 01:30:00 (units: ms, s, min, h, d, w; also the long names)\n"

int			jobq_parse_duration(const char *s, int flags, double *secs);
void		jobq_format_duration(char *buf, size_t size, double secs);
void		jobq_fmt_interval(char *buf, size_t size, int seconds);

#endif							/* JOBQ_COMMON_H */
