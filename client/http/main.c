/*-------------------------------------------------------------------------
 *
 * main.c
 *	  jobq-http: deliver jobs to an HTTP endpoint, as a persistent handler
 *	  of jobq-worker.
 *
 *		jobq-worker -q hooks -c 32 --persistent=1 -- \
 *			jobq-http --secret-file /etc/jobq/hooks.key https://example.com/hook
 *
 * The worker keeps the leases, tokens, retries and batching; jobq-http
 * turns each job into a POST (deliver.c) and each response into the
 * worker's answer, up to --jobs requests at once over reused connections
 * (libcurl's multi interface, driven here next to stdin in one loop).
 * At EOF on stdin it finishes the requests in flight and exits 0.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/http/main.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jobq-contract.h"
#include "http.h"

static void
usage(FILE *f)
{
	fprintf(f,
			"jobq-http POSTs jobs to a URL: a persistent handler of jobq-worker, which\n"
			"runs it (see jobq-http(1)).\n\n"
			"Usage:\n"
			"  jobq-http [OPTION]... URL\n\n"
			"Options:\n"
			"      --secret-file=FILE     sign each request with the key in FILE\n"
			"                             (X-Jobq-Signature: t=..,v1=HMAC-SHA256)\n"
			"      --header=\"NAME: VALUE\" add a request header (repeatable)\n"
			"      --timeout=DURATION     a request with no response this long is retried\n"
			"                             (default 30s)\n"
			"      --connect-timeout=DURATION  (default 10s)\n"
			"      --jobs=N               requests at once, 1.." JOBQ_STR(HTTP_JOBS_MAX)
			" (default 64)\n"
			"  -h, --help                 show this help, then exit\n"
			"  -V, --version              show the version, then exit\n\n"
			JOBQ_DURATION_HELP "\n"
			"Responses: 2xx completes the job (the body is its result); 429 and 503 retry\n"
			"after Retry-After; other 4xx fail it for good; 5xx, timeouts and connection\n"
			"errors retry.  Redirects are not followed.\n");
}

/* the key of --secret-file: the file's bytes, one trailing newline dropped */
static bool
read_secret(const char *path, HttpOptions *o)
{
	FILE	   *f = fopen(path, "rb");
	JobqBuf		b;
	char		chunk[4096];
	size_t		n;

	if (f == NULL)
	{
		fprintf(stderr, "jobq-http: could not open --secret-file \"%s\": %s\n", path,
				strerror(errno));
		return false;
	}
	jobq_buf_init(&b);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0 && b.len < 65536)
		jobq_buf_append(&b, chunk, n);
	fclose(f);
	jobq_xcheck(&b);
	if (b.len > 0 && b.data[b.len - 1] == '\n')
		b.data[--b.len] = '\0';
	if (b.len == 0 || b.len >= 65536)
	{
		fprintf(stderr, "jobq-http: --secret-file \"%s\" must hold 1 to 65535 bytes\n", path);
		jobq_buf_free(&b);
		return false;
	}
	o->secret = b.data;
	o->secret_len = b.len;
	return true;
}

static bool
duration_ms(const char *opt, const char *arg, long *out)
{
	double		s;

	if (jobq_parse_duration(arg, 0, &s) != 0 || s <= 0 || s > 86400)
	{
		fprintf(stderr, "jobq-http: invalid duration \"%s\" for %s (more than 0, at most 1d)\n%s",
				arg, opt, JOBQ_DURATION_HELP);
		return false;
	}
	*out = (long) (s * 1000 + 0.5);
	if (*out < 1)
		*out = 1;
	return true;
}

/* write all of s to stdout (the worker reads it) */
static void
put_answer(char *s)
{
	size_t		len = strlen(s),
				off = 0;

	while (off < len)
	{
		ssize_t		n = write(1, s + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
		{
			/* the worker is gone: nothing is left to answer to */
			exit(1);
		}
		off += (size_t) n;
	}
	free(s);
}

static int
options(int argc, char **argv, HttpOptions *o)
{
	static const struct option longopts[] = {
		{"secret-file", required_argument, NULL, 1},
		{"header", required_argument, NULL, 2},
		{"timeout", required_argument, NULL, 3},
		{"connect-timeout", required_argument, NULL, 4},
		{"jobs", required_argument, NULL, 5},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0}
	};
	int			c;
	char	   *end;
	long		v;

	o->timeout_ms = 30000;
	o->connect_timeout_ms = 10000;
	o->jobs = 64;
	while ((c = getopt_long(argc, argv, "hV", longopts, NULL)) != -1)
	{
		switch (c)
		{
			case 1:
				if (!read_secret(optarg, o))
					return 2;
				break;
			case 2:
				if (strchr(optarg, ':') == NULL || optarg[0] == ':' ||
					strpbrk(optarg, "\r\n") != NULL)
				{
					fprintf(stderr, "jobq-http: --header must be \"NAME: VALUE\" on one line, "
							"not \"%s\"\n", optarg);
					return 2;
				}
				o->headers = curl_slist_append(o->headers, optarg);
				break;
			case 3:
				if (!duration_ms("--timeout", optarg, &o->timeout_ms))
					return 2;
				break;
			case 4:
				if (!duration_ms("--connect-timeout", optarg, &o->connect_timeout_ms))
					return 2;
				break;
			case 5:
				v = strtol(optarg, &end, 10);
				if (end == optarg || *end != '\0' || v < 1 || v > HTTP_JOBS_MAX)
				{
					fprintf(stderr, "jobq-http: --jobs must be a whole number between 1 and %d, "
							"not \"%s\"\n", HTTP_JOBS_MAX, optarg);
					return 2;
				}
				o->jobs = (int) v;
				break;
			case 'h':
				usage(stdout);
				return 0;
			case 'V':
				printf("jobq-http (jobq) %s\n", JOBQ_HTTP_VERSION);
				return 0;
			default:
				fprintf(stderr, "Try \"jobq-http --help\" for more information.\n");
				return 2;
		}
	}
	if (optind != argc - 1)
	{
		fprintf(stderr, "jobq-http: one URL expected\nTry \"jobq-http --help\" for more "
				"information.\n");
		return 2;
	}
	o->url = argv[optind];
	if (strncmp(o->url, "http://", 7) != 0 && strncmp(o->url, "https://", 8) != 0)
	{
		fprintf(stderr, "jobq-http: the URL must start with http:// or https://, not \"%s\"\n",
				o->url);
		return 2;
	}
	o->headers = curl_slist_append(o->headers, "Content-Type: application/json");
	/* no "Expect: 100-continue" round trip before a larger body */
	o->headers = curl_slist_append(o->headers, "Expect:");
	return -1;
}

int
main(int argc, char **argv)
{
	HttpOptions o;
	CURLM	   *multi;
	JobqBuf		in;
	bool		eof = false;
	int			running = 0;
	int			rc;
	char		ready[64];

	memset(&o, 0, sizeof(o));
	jobq_set_progname("jobq-http");
	if ((rc = options(argc, argv, &o)) >= 0)
		return rc;
	signal(SIGPIPE, SIG_IGN);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
		(multi = curl_multi_init()) == NULL)
	{
		fprintf(stderr, "jobq-http: could not initialise libcurl\n");
		return 1;
	}
	curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long) o.jobs);
	jobq_buf_init(&in);

	snprintf(ready, sizeof(ready), "{\"ready\": true, \"jobs\": %d}\n", o.jobs);
	put_answer(jobq_xstrdup(ready));

	while (!eof || running > 0)
	{
		struct curl_waitfd extra = {0, CURL_WAIT_POLLIN, 0};
		CURLMsg    *msg;
		int			left;

		curl_multi_poll(multi, eof ? NULL : &extra, eof ? 0 : 1, 1000, NULL);
		if (!eof && (extra.revents & (CURL_WAIT_POLLIN | CURL_WAIT_POLLPRI)))
		{
			char		chunk[65536];
			ssize_t		n = read(0, chunk, sizeof(chunk));
			char	   *nl;
			size_t		start = 0;

			if (n < 0 && errno != EINTR && errno != EAGAIN)
				eof = true;
			else if (n == 0)
				eof = true;
			else if (n > 0)
			{
				jobq_buf_append(&in, chunk, (size_t) n);
				jobq_xcheck(&in);
			}
			while ((nl = memchr(in.data + start, '\n', in.len - start)) != NULL)
			{
				char	   *answer;

				if (delivery_start(&o, multi, in.data + start,
								   (size_t) (nl - in.data) - start, &answer) == NULL)
				{
					if (answer == NULL)
						return 1;	/* not a job line: the worker ends our jobs */
					put_answer(answer);
				}
				start = (size_t) (nl - in.data) + 1;
			}
			memmove(in.data, in.data + start, in.len - start);
			in.len -= start;
		}
		curl_multi_perform(multi, &running);
		while ((msg = curl_multi_info_read(multi, &left)) != NULL)
		{
			Delivery   *d;

			if (msg->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **) &d);
			put_answer(delivery_finish(d, msg->data.result));
			delivery_free(d, multi);
		}
	}
	jobq_buf_free(&in);
	curl_multi_cleanup(multi);
	curl_slist_free_all(o.headers);
	free(o.secret);
	curl_global_cleanup();
	return 0;
}
