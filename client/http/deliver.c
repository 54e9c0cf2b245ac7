/*-------------------------------------------------------------------------
 *
 * deliver.c
 *	  jobq-http: one job as one POST, and what its response means.
 *
 * The request: the job's payload as the body (Content-Type:
 * application/json), the job in X-Jobq-Job-Id, X-Jobq-Queue and
 * X-Jobq-Attempt (a receiver dedupes by the id: delivery is at least once),
 * and with --secret-file the signature
 *
 *		X-Jobq-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>
 *
 * so the receiver can check the sender and refuse a replay older than it
 * likes.  The answer to the worker (the persistent protocol):
 *
 *	2xx						completed; the body is the result (as JSON when it
 *							is JSON, else as a JSON string; empty = null)
 *	429, 503				retry, after Retry-After (seconds or an HTTP date)
 *							when given, else after the queue's backoff
 *	other 4xx				failed for good: the request itself is wrong
 *	5xx, timeouts, errors	retry: the receiver may come back
 *	1xx, 3xx				failed for good: redirects are not followed (a POST
 *							redirected is not what the receiver was told)
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/http/deliver.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "jobq-contract.h"
#include "http.h"

static size_t
on_body(char *p, size_t size, size_t n, void *arg)
{
	Delivery   *d = arg;
	size_t		len = size * n;
	size_t		room = d->response.len < HTTP_BODY_MAX ? HTTP_BODY_MAX - d->response.len : 0;

	/* what is past the cap is read and dropped: the result is cut */
	jobq_buf_append(&d->response, p, len < room ? len : room);
	if (len > room)
		d->response.overflow = 1;
	return len;
}

static size_t
on_header(char *p, size_t size, size_t n, void *arg)
{
	Delivery   *d = arg;
	size_t		len = size * n;
	static const char name[] = "retry-after:";

	if (len > sizeof(name) - 1 && strncasecmp(p, name, sizeof(name) - 1) == 0)
	{
		size_t		v = sizeof(name) - 1,
					end = len;

		while (v < len && (p[v] == ' ' || p[v] == '\t'))
			v++;
		while (end > v && (p[end - 1] == '\r' || p[end - 1] == '\n' || p[end - 1] == ' '))
			end--;
		if (end - v < sizeof(d->retry_after))
		{
			memcpy(d->retry_after, p + v, end - v);
			d->retry_after[end - v] = '\0';
		}
	}
	return len;
}

/* "X-Jobq-Signature: t=...,v1=..." for body at now, into buf */
static void
signature(const HttpOptions *o, const char *body, size_t len, long now, char *buf,
		  size_t size)
{
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int maclen = 0;
	char		ts[32];
	JobqBuf		msg;
	int			n;

	snprintf(ts, sizeof(ts), "%ld.", now);
	jobq_buf_init(&msg);
	jobq_buf_puts(&msg, ts);
	jobq_buf_append(&msg, body, len);
	jobq_xcheck(&msg);
	HMAC(EVP_sha256(), o->secret, (int) o->secret_len, (const unsigned char *) msg.data,
		 msg.len, mac, &maclen);
	jobq_buf_free(&msg);
	n = snprintf(buf, size, "X-Jobq-Signature: t=%ld,v1=", now);
	for (unsigned int i = 0; i < maclen && (size_t) n + 3 < size; i++)
		n += snprintf(buf + n, size - n, "%02x", mac[i]);
}

/* an answer line for job id: {"id":..,"status":..[,"error":..][,"delay":..]} */
static char *
answer(long long id, const char *status, const char *error, int delay)
{
	JobqBuf		b;

	jobq_buf_init(&b);
	jobq_buf_printf(&b, "{\"id\":%lld,\"status\":\"%s\"", id, status);
	if (error)
	{
		jobq_buf_puts(&b, ",\"error\":");
		jobq_buf_json_string(&b, error);
	}
	if (delay >= 0)
		jobq_buf_printf(&b, ",\"delay\":%d", delay);
	jobq_buf_puts(&b, "}\n");
	jobq_xcheck(&b);
	return b.data;
}

/*
 * delivery_start
 *		Start the POST of the job line[0..len) on multi.  Returns the
 *		Delivery in flight; or NULL with *answer set (malloc'd) when the
 *		request could not even start, or NULL with *answer NULL when the
 *		line is not a job (the worker broke the protocol: the caller exits).
 */
Delivery *
delivery_start(const HttpOptions *o, CURLM *multi, const char *line, size_t len,
			   char **ans)
{
	JobqJsonMember m[16];
	int			n;
	const char *err;
	const JobqJsonMember *id,
			   *payload,
			   *queue,
			   *attempt;
	Delivery   *d;
	char		hdr[256];
	char	   *q;

	*ans = NULL;
	if (!jobq_json_object_scan(line, len, m, 16, &n, &err) ||
		(id = jobq_json_member(m, n, "id")) == NULL || id->kind != JOBQ_JV_NUMBER ||
		(payload = jobq_json_member(m, n, "payload")) == NULL)
	{
		fprintf(stderr, "jobq-http: not a job line: %.*s\n", len > 200 ? 200 : (int) len, line);
		return NULL;
	}
	queue = jobq_json_member(m, n, "queue");
	attempt = jobq_json_member(m, n, "attempt");

	d = jobq_xmalloc(sizeof(Delivery));
	memset(d, 0, sizeof(*d));
	d->id = strtoll(id->value, NULL, 10);
	d->body = jobq_xmalloc(payload->valuelen + 1);
	memcpy(d->body, payload->value, payload->valuelen);
	d->body[payload->valuelen] = '\0';
	d->body_len = payload->valuelen;
	jobq_buf_init(&d->response);

	for (struct curl_slist *h = o->headers; h; h = h->next)
		d->headers = curl_slist_append(d->headers, h->data);
	snprintf(hdr, sizeof(hdr), "X-Jobq-Job-Id: %lld", d->id);
	d->headers = curl_slist_append(d->headers, hdr);
	if (queue && (q = jobq_json_string_decode(queue)) != NULL)
	{
		snprintf(hdr, sizeof(hdr), "X-Jobq-Queue: %s", q);	/* [a-z0-9_-] only */
		d->headers = curl_slist_append(d->headers, hdr);
		free(q);
	}
	if (attempt && attempt->kind == JOBQ_JV_NUMBER)
	{
		snprintf(hdr, sizeof(hdr), "X-Jobq-Attempt: %.*s", (int) attempt->valuelen,
				 attempt->value);
		d->headers = curl_slist_append(d->headers, hdr);
	}
	if (o->secret)
	{
		signature(o, d->body, d->body_len, (long) time(NULL), hdr, sizeof(hdr));
		d->headers = curl_slist_append(d->headers, hdr);
	}

	d->easy = curl_easy_init();
	if (d->easy == NULL || d->headers == NULL)
	{
		*ans = answer(d->id, "retry", "jobq-http: could not set up the request", -1);
		delivery_free(d, NULL);
		return NULL;
	}
	curl_easy_setopt(d->easy, CURLOPT_URL, o->url);
	curl_easy_setopt(d->easy, CURLOPT_POST, 1L);
	curl_easy_setopt(d->easy, CURLOPT_POSTFIELDS, d->body);
	curl_easy_setopt(d->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) d->body_len);
	curl_easy_setopt(d->easy, CURLOPT_HTTPHEADER, d->headers);
	curl_easy_setopt(d->easy, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(d->easy, CURLOPT_WRITEDATA, d);
	curl_easy_setopt(d->easy, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(d->easy, CURLOPT_HEADERDATA, d);
	curl_easy_setopt(d->easy, CURLOPT_TIMEOUT_MS, o->timeout_ms);
	curl_easy_setopt(d->easy, CURLOPT_CONNECTTIMEOUT_MS, o->connect_timeout_ms);
	curl_easy_setopt(d->easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(d->easy, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(d->easy, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(d->easy, CURLOPT_USERAGENT, "jobq-http/" JOBQ_HTTP_VERSION);
	curl_easy_setopt(d->easy, CURLOPT_PRIVATE, d);
	if (curl_multi_add_handle(multi, d->easy) != CURLM_OK)
	{
		*ans = answer(d->id, "retry", "jobq-http: could not start the request", -1);
		delivery_free(d, NULL);
		return NULL;
	}
	return d;
}

/*
 * retry_after_seconds
 *		The seconds a Retry-After value asks for (delay-seconds, or an
 *		HTTP-date from which now is subtracted), within 0 .. the longest
 *		delay of a retry; -1 when it is neither.
 */
int
retry_after_seconds(const char *value, long now)
{
	long		s;
	char	   *end;

	if (value == NULL || value[0] == '\0')
		return -1;
	s = strtol(value, &end, 10);
	if (end == value || *end != '\0')
	{
		time_t		t = curl_getdate(value, NULL);

		if (t < 0)
			return -1;
		s = (long) t - now;
	}
	if (s < 0)
		s = 0;
	if (s > JOBQ_DELAY_MAX_S)
		s = JOBQ_DELAY_MAX_S;
	return (int) s;
}

/*
 * delivery_finish
 *		The answer line (malloc'd) for the finished request d: see the file
 *		header.
 */
char *
delivery_finish(Delivery *d, CURLcode result)
{
	long		code = 0;
	char		error[HTTP_ERROR_BODY_MAX + 200];
	const char *body = d->response.data ? d->response.data : "";
	int			quoted = (int) (d->response.len < HTTP_ERROR_BODY_MAX ?
								d->response.len : HTTP_ERROR_BODY_MAX);
	JobqBuf		b;

	if (result != CURLE_OK)
	{
		snprintf(error, sizeof(error), "HTTP request failed: %s", curl_easy_strerror(result));
		return answer(d->id, "retry", error, -1);
	}
	curl_easy_getinfo(d->easy, CURLINFO_RESPONSE_CODE, &code);
	if (code >= 200 && code < 300)
	{
		jobq_buf_init(&b);
		jobq_buf_printf(&b, "{\"id\":%lld,\"status\":\"completed\",\"result\":", d->id);
		if (d->response.len == 0 || d->response.overflow)
			jobq_buf_puts(&b, "null");
		else if (jobq_json_valid(body, d->response.len))
			jobq_buf_append(&b, body, d->response.len);
		else
			jobq_buf_json_string(&b, body);
		jobq_buf_puts(&b, "}\n");
		jobq_xcheck(&b);
		if (d->response.overflow)
			fprintf(stderr, "jobq-http: job %lld: response body over %d bytes, result null\n",
					d->id, HTTP_BODY_MAX);
		return b.data;
	}
	snprintf(error, sizeof(error), "HTTP %ld%s%.*s", code, quoted ? ": " : "", quoted, body);
	if (code == 429 || code == 503)
		return answer(d->id, "retry", error,
					  retry_after_seconds(d->retry_after, (long) time(NULL)));
	if (code >= 500)
		return answer(d->id, "retry", error, -1);
	if (code >= 400)
		return answer(d->id, "failed", error, -1);
	snprintf(error, sizeof(error), "HTTP %ld: %s", code,
			 code >= 300 ? "redirects are not followed" : "not a final response");
	return answer(d->id, "failed", error, -1);
}

void
delivery_free(Delivery *d, CURLM *multi)
{
	if (d->easy)
	{
		if (multi)
			curl_multi_remove_handle(multi, d->easy);
		curl_easy_cleanup(d->easy);
	}
	curl_slist_free_all(d->headers);
	jobq_buf_free(&d->response);
	free(d->body);
	free(d);
}
