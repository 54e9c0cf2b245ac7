/*-------------------------------------------------------------------------
 *
 * web.h
 *	  jobq-web, the operator's dashboard: what its files share.
 *
 * main.c parses the options and starts the daemon; library.c holds the
 * configuration and the log, and libjobq-web's entry points (the dashboard
 * in another program's libmicrohttpd daemon, include/jobq-web.h); http.c is the
 * libmicrohttpd access handler (routing, limits, headers, cross-origin
 * checks, static assets); auth.c the users file and the failure limit;
 * db.c the connection pool and the one transaction shape every request
 * runs in; api.c the endpoints; cache.c the per-endpoint result cache;
 * the UI (the files of ui/) is compiled in by embed.py as build/web/assets.c.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/web/web.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JOBQ_WEB_H
#define JOBQ_WEB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <microhttpd.h>

#define WEB_BODY_MAX (64 * 1024)	/* request body cap */
#define WEB_CONN_LIMIT 64
#define WEB_PER_IP_LIMIT 16
#define WEB_CONN_TIMEOUT_S 30
#define WEB_AUTH_FAILURES_PER_MIN 10
#define WEB_MAX_TRUSTED_ORIGINS 16

/* per-client rate limits (ratelimit.c): the defaults of --rate-limits, per second and the burst */
#define WEB_RATE_READS_PER_S 20
#define WEB_RATE_READS_BURST 200
#define WEB_RATE_ACTIONS_PER_S 5
#define WEB_RATE_ACTIONS_BURST 60
#define WEB_RATE_ENQUEUES_PER_S 20
#define WEB_RATE_ENQUEUES_BURST 200

typedef enum WebRateKind
{
	WEB_RATE_READ, WEB_RATE_ACTION, WEB_RATE_ENQUEUE, WEB_RATE__COUNT
} WebRateKind;

/* The options, set once by main.c before the daemon starts. */
typedef struct WebConfig
{
	const char *conninfo;
	const char *schema;
	char		listen_host[256];
	int			listen_port;
	int			loopback;		/* listen address is a loopback one */
	const char *auth_file;		/* --auth basic:FILE, else NULL */
	const char *proxy_header;	/* --auth proxy:HEADER, else NULL */
	const char *tls_cert;		/* --tls-cert, --tls-key: PEM files, or NULL */
	const char *tls_key;
	char		prefix[256];	/* "" or "/jobq" (no trailing slash) */
	int			read_only;
	int			query_timeout_ms;
	int			min_refresh_ms;
	int			threads;
	const char *trusted_origins[WEB_MAX_TRUSTED_ORIGINS];
	int			ntrusted_origins;
	double		rate[WEB_RATE__COUNT];	/* requests a second per client; 0: no limit */
	double		burst[WEB_RATE__COUNT];
} WebConfig;

extern WebConfig web_config;

/* library.c: the defaults of the options, before they are read */
void		web_config_defaults(void);

/* log lines on stderr, with a timestamp and a level */
void		web_log(const char *level, const char *fmt,...)
			__attribute__((format(printf, 2, 3)));

/* auth.c */
typedef struct WebUser
{
	char		name[128];
	char		role[128];		/* PostgreSQL role to SET ROLE to, "" for none */
} WebUser;

int			web_auth_load(const char *path, char *err, size_t errlen);
/* 1 ok (user filled), 0 wrong, -1 too many failures from this address */
int			web_auth_check(const char *authorization, const char *ip, WebUser *user);

/* proxy.c: --auth proxy:HEADER, --trusted-proxy, --proxy-roles */
int			web_proxy_add(const char *spec, char *err, size_t errlen);
int			web_proxy_count(void);
int			web_proxy_trusted(const struct sockaddr *sa);
int			web_proxy_roles_load(const char *path, char *err, size_t errlen);
/* 1 ok (user filled), 0 no user named, -1 no role for the user */
int			web_proxy_user(const char *name, WebUser *user);

/* healthcheck.c: GET PREFIX/readyz of the jobq-web at ss (TLS when
 * web_config.tls_cert is set): the exit status of --healthcheck */
int			web_healthcheck(const struct sockaddr_storage *ss, socklen_t sslen);

/* ratelimit.c: 1 when a request of this kind from ip may go on, else 0 */
int			web_rate_take(const char *ip, WebRateKind kind);

/* db.c: one result of a request, as HTTP sees it */
typedef struct WebResult
{
	int			status;			/* HTTP status */
	char	   *body;			/* JSON, malloc'd */
	char		download[64];	/* "" or the file name of an attachment */
} WebResult;

typedef enum WebStmt
{
	ST_OVERVIEW_STATS,
	ST_OVERVIEW_COUNTS,
	ST_HEALTH,
	ST_QUEUES,
	ST_JOBS,
	ST_JOBS_V1,
	ST_JOB,
	ST_METRICS,
	ST_WORKERS,
	ST_SCHEDULES,
	ST_PAUSE,
	ST_RESUME,
	ST_SWEEP,
	ST_ENQUEUE,
	ST_RETRY,
	ST_CANCEL,
	ST_READY,
	ST_SESSION,
	/* bulk actions, by ids and by filter, and the one-job forms on top */
	ST_RETRY_MANY,
	ST_CANCEL_MANY,
	ST_DELETE_MANY,
	ST_RUN_NOW_MANY,
	ST_RETRY_WHERE,
	ST_CANCEL_WHERE,
	ST_DELETE_WHERE,
	ST_RUN_NOW_WHERE,
	ST_DELETE,
	ST_RUN_NOW,
	ST_COUNT_MATCHING,
	ST_AUDIT,
	ST_JOB_VALUE,
	ST_WORKER_SIGNAL,
	ST_SCHEDULE_PAUSE,
	ST_SCHEDULE_RESUME,
	ST_SCHEDULE_TRIGGER,
	/* queue settings (jobq_alter_queue), of 0.1.0's SQL and of 0.2.0's */
	ST_ALTER_QUEUE,
	ST_ALTER_QUEUE_020,
	/* groups (issue 19), where the server has them */
	ST_GROUPS,
	ST_BLOCKED_GROUPS,
	ST_SKIP_HEAD,
	/* flows (issue 18), where the server has them */
	ST_FLOW_JOBS,
	ST_CANCEL_FLOW,
	ST__COUNT
} WebStmt;

/* what the database offers, found at connect (1 = present) */
typedef struct WebFeatures
{
	int			known;
	int			counts;			/* jobq_counts() */
	int			health;			/* jobq_health() */
	int			list_keyset;	/* jobq_list with after and filters */
	int			metrics;		/* jobq_metrics() */
	int			workers;		/* jobq_workers() */
	int			schedules;		/* jobq_schedules() */
	int			bulk;			/* jobq_*_many, jobq_*_where */
	int			audit;			/* jobq_audit() */
	int			job_value;		/* jobq_job_value() */
	int			worker_signal;	/* jobq_worker_signal() */
	int			schedule_actions;	/* jobq_trigger_schedule() and the like */
	int			settings_020;	/* jobq_alter_queue takes JOBQ_QUEUE_SETTINGS_020 */
	int			groups;			/* jobq_groups(), jobq_blocked_groups(), jobq_skip_head() */
	int			flows;			/* jobq_flow_jobs(), jobq_cancel_flow() */
	int			actor;			/* the jobq.actor setting exists */
} WebFeatures;

int			web_db_init(int nconns, char *err, size_t errlen);
void		web_db_features(WebFeatures *f);
/*
 * web_db_run: run the statements in one transaction as user (NULL:
 * the connection's role), under the query timeout; mutating says
 * whether jobq.actor is set.  Each statement returns one text column of
 * JSON in one row, or no row.  Without names the body is the one
 * statement's JSON (status 404 when it returned no row); with names it is
 * an object of each statement's JSON under its name (null for no row).
 * Errors: see map_error in db.c.
 */
WebResult	web_db_run(const WebUser *user, int mutating, int nstmts, const WebStmt *stmts,
					   const char *const *names, const int *nparams,
					   const char *const *const *params);
int			web_db_ready(void);

/* cache.c */
int			web_cache_get(const char *key, WebResult *out);
void		web_cache_put(const char *key, const WebResult *res);
void		web_cache_invalidate(void);

/* http.c: the access handler and what it needs made once at start */
int			web_http_init(void);
void		web_http_completed(void *cls, struct MHD_Connection *c, void **con_cls,
							   enum MHD_RequestTerminationCode toe);
enum MHD_Result web_http_handle(void *cls, struct MHD_Connection *c, const char *url,
								const char *method, const char *version,
								const char *upload_data, size_t *upload_data_size,
								void **con_cls);

/* api.c: route one /api/ request (path after "/api"); the body may be NULL */
WebResult	web_api(struct MHD_Connection *conn, const char *method, const char *path,
					const char *body, size_t bodylen, const WebUser *user);
WebResult	web_error(int status, const char *message);

/* assets (generated) */
typedef struct WebAsset
{
	const char *path;			/* "/app.js" */
	const char *type;
	const unsigned char *data;
	size_t		len;
	const char *etag;
} WebAsset;

extern const WebAsset web_assets[];
extern const int web_nassets;

#endif							/* JOBQ_WEB_H */
