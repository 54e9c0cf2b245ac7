/*-------------------------------------------------------------------------
 *
 * jobq-web.h
 *	  libjobq-web: jobq's dashboard (the JSON API and the UI of jobq-web)
 *	  as a libmicrohttpd access handler, for C programs that already run a
 *	  libmicrohttpd daemon and want the dashboard under a path of their
 *	  own.  The jobq-web program is the main way to run the dashboard
 *	  (doc/jobq-web.md); this is the same code without its main().
 *
 *	  Start it once with jobq_web_start, then hand the requests of its
 *	  prefix to jobq_web_handle (as the daemon's access handler, or from
 *	  your own one, passing the same con_cls of the connection every time)
 *	  and give MHD_OPTION_NOTIFY_COMPLETED jobq_web_completed (or call it
 *	  from yours for those requests).  Link with libjobq-web.a, libjobq.a,
 *	  libpq, libmicrohttpd, GnuTLS, libcrypt and pthreads.  One dashboard
 *	  per process.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/include/jobq-web.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JOBQ_WEB_PUBLIC_H
#define JOBQ_WEB_PUBLIC_H

#include <stddef.h>

#include <microhttpd.h>

typedef struct JobqWebOptions
{
	size_t		size;			/* sizeof(JobqWebOptions): fields added later
								 * read as 0 from an older caller */
	const char *conninfo;		/* libpq connection string; NULL: PG* environment */
	const char *schema;			/* of the jobq functions; NULL: public */
	const char *prefix;			/* the path the dashboard is served under, such
								 * as "/jobq" (no trailing slash); NULL or "": / */
	const char *users_file;		/* Basic authentication, lines user:crypt-hash:role;
								 * NULL: none (every request as the connection's role) */
	int			read_only;		/* 1: no actions */
	int			query_timeout_ms;	/* statement timeout; 0: 5000 */
	int			min_refresh_ms; /* the cache; 0: 2000, negative: no cache */
	int			connections;	/* database connections, 1..32; 0: 4 (as many as
								 * the daemon's threads that may call in at once) */
} JobqWebOptions;

/* 0 when ready; else -1 with the reason in err (the database unreachable,
 * a bad users file, a bad option) */
int			jobq_web_start(const JobqWebOptions *opts, char *err, size_t errlen);

/* the access handler (MHD_AccessHandlerCallback); cls is not used */
enum MHD_Result jobq_web_handle(void *cls, struct MHD_Connection *connection, const char *url,
								const char *method, const char *version,
								const char *upload_data, size_t *upload_data_size,
								void **con_cls);

/* the request-completed callback (MHD_RequestCompletedCallback) */
void		jobq_web_completed(void *cls, struct MHD_Connection *connection, void **con_cls,
							   enum MHD_RequestTerminationCode toe);

#endif							/* JOBQ_WEB_PUBLIC_H */
