/*-------------------------------------------------------------------------
 *
 * library.c
 *	  What jobq-web's files share at run time (the configuration and the
 *	  log), and libjobq-web's entry points (include/jobq-web.h): the
 *	  dashboard as an access handler of someone else's libmicrohttpd
 *	  daemon.  jobq-web's main.c fills web_config from its options itself;
 *	  jobq_web_start does it from a JobqWebOptions.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/web/library.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "jobq-client.h"
#include "jobq-web.h"
#include "web.h"

WebConfig	web_config;

void
web_log(const char *level, const char *fmt,...)
{
	char		ts[32];
	char		line[2048];
	struct timeval tv;
	struct tm	tm;
	va_list		ap;

	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* one write per line, so threads do not interleave */
	fprintf(stderr, "%s.%03dZ jobq-web %s: %s\n", ts, (int) (tv.tv_usec / 1000), level, line);
}

/* the defaults of both jobq-web and the library */
void
web_config_defaults(void)
{
	web_config.query_timeout_ms = 5000;
	web_config.min_refresh_ms = 2000;
	web_config.threads = 4;
	web_config.rate[WEB_RATE_READ] = WEB_RATE_READS_PER_S;
	web_config.burst[WEB_RATE_READ] = WEB_RATE_READS_BURST;
	web_config.rate[WEB_RATE_ACTION] = WEB_RATE_ACTIONS_PER_S;
	web_config.burst[WEB_RATE_ACTION] = WEB_RATE_ACTIONS_BURST;
	web_config.rate[WEB_RATE_ENQUEUE] = WEB_RATE_ENQUEUES_PER_S;
	web_config.burst[WEB_RATE_ENQUEUE] = WEB_RATE_ENQUEUES_BURST;
}

int
jobq_web_start(const JobqWebOptions *opts, char *err, size_t errlen)
{
	JobqWebOptions o;
	size_t		plen;

	/* an older caller's smaller struct: the fields it does not have are 0 */
	memset(&o, 0, sizeof(o));
	memcpy(&o, opts, opts->size < sizeof(o) ? opts->size : sizeof(o));
	web_config_defaults();
	web_config.conninfo = o.conninfo;
	if (o.schema != NULL && !jobq_valid_schema_name(o.schema))
	{
		snprintf(err, errlen, "invalid schema name \"%s\"", o.schema);
		return -1;
	}
	web_config.schema = o.schema;
	plen = o.prefix ? strlen(o.prefix) : 0;
	while (plen > 0 && o.prefix[plen - 1] == '/')
		plen--;
	if (plen >= sizeof(web_config.prefix) || (plen > 0 && o.prefix[0] != '/') ||
		(plen > 0 && (strspn(o.prefix, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
							 "0123456789/_.-") < plen || strstr(o.prefix, "..") != NULL)))
	{
		snprintf(err, errlen, "the prefix must be a path like /jobq (letters, digits, / _ . -)");
		return -1;
	}
	if (plen > 0)
		memcpy(web_config.prefix, o.prefix, plen);
	web_config.prefix[plen] = '\0';
	web_config.read_only = o.read_only != 0;
	if (o.query_timeout_ms > 0)
		web_config.query_timeout_ms = o.query_timeout_ms;
	if (o.min_refresh_ms != 0)
		web_config.min_refresh_ms = o.min_refresh_ms < 0 ? 0 : o.min_refresh_ms;
	if (o.connections < 0 || o.connections > 32)
	{
		snprintf(err, errlen, "connections must be 1..32");
		return -1;
	}
	if (o.connections > 0)
		web_config.threads = o.connections;
	web_config.auth_file = o.users_file;
	if (o.users_file != NULL && web_auth_load(o.users_file, err, errlen) != 0)
		return -1;
	if (web_http_init() != 0)
	{
		snprintf(err, errlen, "the UI's index.html is missing from the build");
		return -1;
	}
	return web_db_init(web_config.threads, err, errlen);
}

enum MHD_Result
jobq_web_handle(void *cls, struct MHD_Connection *connection, const char *url,
				const char *method, const char *version, const char *upload_data,
				size_t *upload_data_size, void **con_cls)
{
	return web_http_handle(cls, connection, url, method, version, upload_data,
						   upload_data_size, con_cls);
}

void
jobq_web_completed(void *cls, struct MHD_Connection *connection, void **con_cls,
				   enum MHD_RequestTerminationCode toe)
{
	web_http_completed(cls, connection, con_cls, toe);
}
