/*-------------------------------------------------------------------------
 *
 * http.c
 *	  jobq-web's libmicrohttpd side: the access handler (the body read in
 *	  chunks under a hard cap, never through MHD's form parser), --prefix,
 *	  the probes, authentication, the checks of every unsafe method
 *	  (--read-only, cross-origin, JSON bodies), the security headers, the
 *	  UI's files and the API (api.c).
 *
 *	  Cross-origin protection, for every method but GET and HEAD, in this
 *	  order: a Sec-Fetch-Site header must be "same-origin"; without it, an
 *	  Origin header must name the Host the request was sent to (or a
 *	  --trusted-origin); without either, the request must carry
 *	  "X-Jobq-Request: 1", which a cross-site form cannot send and a
 *	  cross-origin fetch cannot send without a preflight that is never
 *	  answered.  So browsers on plain http to a private address (which send
 *	  no Sec-Fetch-Site) still work, and so does curl in an incident.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/web/http.c
 *
 *-------------------------------------------------------------------------
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <microhttpd.h>

#include "jobq-common.h"
#include "web.h"

#define CSP "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " \
	"connect-src 'self'; base-uri 'self'; form-action 'none'; frame-ancestors 'none'"

typedef struct Request
{
	JobqBuf		body;
	int			too_large;
} Request;

/* index.html with <base href> set to the prefix, made once at start */
static char *index_html;
static size_t index_len;
static const WebAsset *index_asset;

int
web_http_init(void)
{
	static const char marker[] = "<base href=\"/\">";
	const char *at;
	JobqBuf		b;

	for (int i = 0; i < web_nassets; i++)
		if (strcmp(web_assets[i].path, "/index.html") == 0)
			index_asset = &web_assets[i];
	if (index_asset == NULL)
		return -1;
	at = strstr((const char *) index_asset->data, marker);
	if (at == NULL)
		return -1;
	jobq_buf_init(&b);
	jobq_buf_append(&b, (const char *) index_asset->data, at - (const char *) index_asset->data);
	/* the prefix passed main.c's check: [A-Za-z0-9/_.-] only */
	jobq_buf_printf(&b, "<base href=\"%s/\">", web_config.prefix);
	jobq_buf_puts(&b, at + strlen(marker));
	jobq_xcheck(&b);
	index_html = b.data;
	index_len = b.len;
	return 0;
}

void
web_http_completed(void *cls, struct MHD_Connection *c, void **con_cls,
				   enum MHD_RequestTerminationCode toe)
{
	Request    *r = *con_cls;

	(void) cls;
	(void) c;
	(void) toe;
	if (r != NULL)
	{
		jobq_buf_free(&r->body);
		free(r);
		*con_cls = NULL;
	}
}

static void
common_headers(struct MHD_Response *resp)
{
	MHD_add_response_header(resp, "Content-Security-Policy", CSP);
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "Referrer-Policy", "same-origin");
	MHD_add_response_header(resp, "X-Frame-Options", "DENY");
	MHD_add_response_header(resp, "Cross-Origin-Opener-Policy", "same-origin");
	MHD_add_response_header(resp, "Cross-Origin-Resource-Policy", "same-origin");
}

static enum MHD_Result
send_buf(struct MHD_Connection *c, int status, const char *type, const void *data, size_t len,
		 enum MHD_ResponseMemoryMode mode, const char *cache, const char *etag)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(len, (void *) data, mode);
	enum MHD_Result ret;

	if (resp == NULL)
		return MHD_NO;
	common_headers(resp);
	MHD_add_response_header(resp, "Content-Type", type);
	MHD_add_response_header(resp, "Cache-Control", cache);
	if (etag != NULL)
		MHD_add_response_header(resp, "ETag", etag);
	if (status == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(resp, "WWW-Authenticate",
								"Basic realm=\"jobq-web\", charset=\"UTF-8\"");
	ret = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/*
 * A JSON answer of the API (the body is freed here), with one more header
 * when extra is set; a download is an attachment.
 */
static enum MHD_Result
send_json(struct MHD_Connection *c, WebResult r, const char *extra, const char *extra_value)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(strlen(r.body), r.body,
																MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ret;

	if (resp == NULL)
	{
		free(r.body);
		return MHD_NO;
	}
	common_headers(resp);
	MHD_add_response_header(resp, "Content-Type", "application/json; charset=utf-8");
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	if (extra != NULL)
		MHD_add_response_header(resp, extra, extra_value);
	if (r.download[0] != '\0')
	{
		char		disposition[96];

		/* the name is api.c's "job-ID-PART.json": nothing to quote */
		snprintf(disposition, sizeof(disposition), "attachment; filename=\"%s\"", r.download);
		MHD_add_response_header(resp, "Content-Disposition", disposition);
	}
	if (r.status == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(resp, "WWW-Authenticate",
								"Basic realm=\"jobq-web\", charset=\"UTF-8\"");
	ret = MHD_queue_response(c, r.status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result
send_result(struct MHD_Connection *c, WebResult r)
{
	return send_json(c, r, NULL, NULL);
}

static enum MHD_Result
send_error(struct MHD_Connection *c, int status, const char *message)
{
	return send_result(c, web_error(status, message));
}

/* 429 with Retry-After */
static enum MHD_Result
send_too_many(struct MHD_Connection *c, const char *message, const char *retry_after)
{
	return send_json(c, web_error(MHD_HTTP_TOO_MANY_REQUESTS, message), "Retry-After", retry_after);
}

static const char *
header(struct MHD_Connection *c, const char *name)
{
	return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

/* "http://host:port" -> "host:port" compared with Host */
static int
origin_matches_host(const char *origin, const char *host)
{
	const char *p = strstr(origin, "://");

	if (p == NULL || host == NULL)
		return 0;
	return strcasecmp(p + 3, host) == 0;
}

/* the cross-origin rule of the file header; NULL when the request passes */
static const char *
cross_origin_refusal(struct MHD_Connection *c)
{
	const char *site = header(c, "Sec-Fetch-Site");
	const char *origin = header(c, "Origin");
	const char *custom = header(c, "X-Jobq-Request");

	if (site != NULL)
		return strcmp(site, "same-origin") == 0 ? NULL :
			"cross-origin request refused (Sec-Fetch-Site is not same-origin)";
	if (origin != NULL)
	{
		if (origin_matches_host(origin, header(c, "Host")))
			return NULL;
		for (int i = 0; i < web_config.ntrusted_origins; i++)
			if (strcasecmp(origin, web_config.trusted_origins[i]) == 0)
				return NULL;
		return "cross-origin request refused (Origin is not this server)";
	}
	if (custom != NULL && strcmp(custom, "1") == 0)
		return NULL;
	return "request refused: without Origin or Sec-Fetch-Site it needs the header "
		"\"X-Jobq-Request: 1\"";
}

static void
client_ip(struct MHD_Connection *c, char *buf, size_t len)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);

	snprintf(buf, len, "?");
	if (ci == NULL || ci->client_addr == NULL)
		return;
	if (ci->client_addr->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *) ci->client_addr)->sin_addr, buf, len);
	else if (ci->client_addr->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *) ci->client_addr)->sin6_addr, buf, len);
}

static enum MHD_Result
send_asset(struct MHD_Connection *c, const WebAsset *a)
{
	const char *inm = header(c, "If-None-Match");

	if (inm != NULL && strcmp(inm, a->etag) == 0)
		return send_buf(c, MHD_HTTP_NOT_MODIFIED, a->type, "", 0, MHD_RESPMEM_PERSISTENT,
						"no-cache", a->etag);
	return send_buf(c, MHD_HTTP_OK, a->type, a->data, a->len, MHD_RESPMEM_PERSISTENT,
					"no-cache", a->etag);
}

/* the UI: its files, and index.html for every page route (a deep link) */
static enum MHD_Result
ui(struct MHD_Connection *c, const char *path)
{
	if (strncmp(path, "/assets/", 8) == 0)
	{
		for (int i = 0; i < web_nassets; i++)
			if (strcmp(web_assets[i].path, path + 7) == 0 && &web_assets[i] != index_asset)
				return send_asset(c, &web_assets[i]);
		return send_error(c, MHD_HTTP_NOT_FOUND, "not found");
	}
	if (strcmp(path, "/") == 0 || strcmp(path, "/jobs") == 0 ||
		strncmp(path, "/jobs/", 6) == 0 || strcmp(path, "/workers") == 0 ||
		strcmp(path, "/schedules") == 0 || strcmp(path, "/audit") == 0 ||
		strcmp(path, "/groups") == 0 || strcmp(path, "/flows") == 0 || strncmp(path, "/flows/", 7) == 0 ||
		strncmp(path, "/queues/", 8) == 0)
		return send_buf(c, MHD_HTTP_OK, "text/html; charset=utf-8", index_html, index_len,
						MHD_RESPMEM_PERSISTENT, "no-cache", NULL);
	return send_error(c, MHD_HTTP_NOT_FOUND, "not found");
}

enum MHD_Result
web_http_handle(void *cls, struct MHD_Connection *c, const char *url,
				const char *method, const char *version,
				const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	Request    *r = *con_cls;
	const char *path = url;
	size_t		plen = strlen(web_config.prefix);
	int			safe;
	WebUser		user;
	WebUser    *userp = NULL;
	char		ip[64];

	(void) cls;
	(void) version;
	if (r == NULL)
	{
		r = calloc(1, sizeof(Request));
		if (r == NULL)
			return MHD_NO;
		jobq_buf_init(&r->body);
		*con_cls = r;
		return MHD_YES;
	}
	if (*upload_data_size > 0)
	{
		if (r->body.len + *upload_data_size > WEB_BODY_MAX)
			r->too_large = 1;
		else
			jobq_buf_append(&r->body, upload_data, *upload_data_size);
		*upload_data_size = 0;
		return MHD_YES;
	}

	if (plen > 0)
	{
		if (strncmp(url, web_config.prefix, plen) != 0 ||
			(url[plen] != '/' && url[plen] != '\0'))
			return send_error(c, MHD_HTTP_NOT_FOUND, "not found");
		path = url[plen] == '\0' ? "/" : url + plen;
	}

	/* the probes: no authentication, nothing but up or down */
	if (strcmp(path, "/healthz") == 0)
		return send_buf(c, MHD_HTTP_OK, "text/plain; charset=utf-8", "ok\n", 3,
						MHD_RESPMEM_PERSISTENT, "no-store", NULL);
	if (strcmp(path, "/readyz") == 0)
	{
		if (web_db_ready())
			return send_buf(c, MHD_HTTP_OK, "text/plain; charset=utf-8", "ready\n", 6,
							MHD_RESPMEM_PERSISTENT, "no-store", NULL);
		return send_buf(c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain; charset=utf-8",
						"database not reachable\n", 23, MHD_RESPMEM_PERSISTENT, "no-store", NULL);
	}

	client_ip(c, ip, sizeof(ip));
	if (web_config.proxy_header != NULL)
	{
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		int			a;

		/* only the proxy's word counts, and nobody may go around it */
		if (!web_proxy_trusted(ci ? ci->client_addr : NULL))
		{
			web_log("warning", "%s %s from %s: not a --trusted-proxy address", method, path, ip);
			return send_error(c, MHD_HTTP_FORBIDDEN,
							  "jobq-web answers only through its authenticating proxy");
		}
		a = web_proxy_user(header(c, web_config.proxy_header), &user);
		if (a == 0)
			return send_error(c, MHD_HTTP_FORBIDDEN, "the proxy named no user");
		if (a < 0)
		{
			web_log("warning", "%s %s: proxy user \"%s\" has no role in --proxy-roles",
					method, path, user.name);
			return send_error(c, MHD_HTTP_FORBIDDEN, "this user has no role in jobq-web");
		}
		userp = &user;
	}
	else if (web_config.auth_file != NULL)
	{
		int			a = web_auth_check(header(c, "Authorization"), ip, &user);

		if (a < 0)
			return send_too_many(c, "too many failed logins from this address: wait a minute",
								 "60");
		if (a == 0)
			return send_error(c, MHD_HTTP_UNAUTHORIZED, "authentication required");
		userp = &user;
	}

	safe = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
	if (!safe)
	{
		const char *why;
		const char *type = header(c, "Content-Type");

		if (web_config.read_only)
			return send_error(c, MHD_HTTP_FORBIDDEN, "jobq-web runs with --read-only");
		if ((why = cross_origin_refusal(c)) != NULL)
		{
			web_log("warning", "%s %s from %s: %s", method, path, ip, why);
			return send_error(c, MHD_HTTP_FORBIDDEN, why);
		}
		if (r->too_large)
			return send_error(c, 413,
							  "the body is larger than 64 kB");
		if (r->body.len > 0 &&
			(type == NULL || strncasecmp(type, "application/json", 16) != 0 ||
			 (type[16] != '\0' && type[16] != ';')))
			return send_error(c, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE,
							  "the body must be Content-Type: application/json");
		jobq_xcheck(&r->body);
	}

	if (strncmp(path, "/api/", 5) == 0)
	{
		WebResult	res;
		WebRateKind kind = safe ? WEB_RATE_READ :
			strcmp(path, "/api/enqueue") == 0 ? WEB_RATE_ENQUEUE : WEB_RATE_ACTION;

		if (!web_rate_take(ip, kind))
			return send_too_many(c, "too many requests from this address: slow down", "1");
		res = web_api(c, method, path + 4, r->body.data, r->body.len, userp);

		if (!safe)
			web_log("info", "%s %s by %s from %s: %d", method, path,
					userp ? userp->name : "-", ip, res.status);
		return send_result(c, res);
	}
	if (!safe)
		return send_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed");
	return ui(c, path);
}
