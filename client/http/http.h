/*-------------------------------------------------------------------------
 *
 * http.h
 *	  Declarations shared by the files of jobq-http.
 *
 * jobq-http is a persistent handler of jobq-worker (doc/jobq-worker.md,
 * "Persistent handlers"): it takes jobs as JSON lines on stdin and POSTs
 * each job's payload to a URL, then answers the worker with what the
 * response means (deliver.c).  main.c has the options and the loop, which
 * drives libcurl's multi interface next to stdin.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/http/http.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JOBQ_HTTP_H
#define JOBQ_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include <curl/curl.h>

#include "jobq-common.h"

/* the most of a response body kept: the server's default payload limit */
#define HTTP_BODY_MAX		(1024 * 1024)
/* the most of a response body quoted in an error */
#define HTTP_ERROR_BODY_MAX	1000
/* the most jobs at a time (the persistent protocol's own bound) */
#define HTTP_JOBS_MAX		1000

typedef struct HttpOptions
{
	const char *url;
	char	   *secret;			/* HMAC key (--secret-file), NULL = unsigned */
	size_t		secret_len;
	long		timeout_ms;		/* per request */
	long		connect_timeout_ms;
	int			jobs;			/* in flight at once */
	struct curl_slist *headers; /* --header, and ours */
} HttpOptions;

/* One delivery in flight: the job and its request. */
typedef struct Delivery
{
	long long	id;
	char	   *body;			/* the payload: the request body */
	size_t		body_len;
	JobqBuf		response;		/* at most HTTP_BODY_MAX */
	char		retry_after[64];	/* the Retry-After header, if any */
	struct curl_slist *headers; /* the options' and this job's */
	CURL	   *easy;
} Delivery;

/* deliver.c */
extern Delivery *delivery_start(const HttpOptions *o, CURLM *multi, const char *line,
								size_t len, char **answer);
extern char *delivery_finish(Delivery *d, CURLcode result);
extern void delivery_free(Delivery *d, CURLM *multi);
extern int	retry_after_seconds(const char *value, long now);

#endif							/* JOBQ_HTTP_H */
