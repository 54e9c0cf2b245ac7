/*-------------------------------------------------------------------------
 *
 * api.c
 *	  jobq-web's JSON API: each endpoint checks its arguments, picks its
 *	  statements (db.c) and, for reads, goes through the cache.  An
 *	  endpoint whose SQL function the database does not have (an older
 *	  jobq, a function not built yet) answers 404 like any unknown path;
 *	  GET /api/session says which are there.
 *
 *	  GET  /api/session              the user, the role and what it may do
 *	  GET  /api/overview             counts per queue (+ health findings)
 *	  GET  /api/queues               the queues and their settings
 *	  GET  /api/jobs?queue=Q&state=S&after=C&limit=N&filters=JSON
 *	  GET  /api/jobs/ID              one job (never its token)
 *	  GET  /api/metrics?queue=Q&since=T&until=T&bucket=I
 *	  GET  /api/workers
 *	  GET  /api/schedules
 *	  POST /api/queues/Q/pause, /api/queues/Q/resume
 *	  POST /api/sweep                {"queue": Q} or {}
 *	  POST /api/enqueue              {"queue": Q, "payload": ..., ...}
 *	  POST /api/jobs/ID/retry, /api/jobs/ID/cancel, /api/jobs/ID/delete,
 *	       /api/jobs/ID/run-now
 *	  GET  /api/jobs/ID/raw/payload, /api/jobs/ID/raw/result
 *	  POST /api/jobs/retry|cancel|delete|run-now  {"ids": [...]} or
 *	       {"queue", "state", "filters", "after", "max_rows"}: one batch
 *	  GET  /api/jobs/count?queue=Q&state=S&filters=JSON  (capped at 10,000)
 *	  GET  /api/audit?queue=Q&before=ID&limit=N
 *	  POST /api/workers/TARGET/quiet|stop|resume
 *	  POST /api/schedules/NAME/pause|resume|trigger
 *	  PATCH /api/queues/Q            {"setting": value, ...}: jobq_alter_queue
 *	  GET  /api/groups?queue=Q&blocked=1&after=KEY&limit=N, /api/groups/blocked?queue=Q
 *	  POST /api/groups/skip-head     {"queue": Q, "key": K}
 *	  GET  /api/flows/ID, POST /api/flows/ID/cancel
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/web/api.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <stdarg.h>

#include <microhttpd.h>

#include "jobq-client.h"
#include "jobq-common.h"
#include "web.h"

static const char *
arg(struct MHD_Connection *c, const char *name)
{
	const char *v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, name);

	return v != NULL && v[0] != '\0' ? v : NULL;
}

/* a job id: 1 to 18 digits */
static int
valid_id(const char *s, size_t len)
{
	if (len == 0 || len > 18)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

static WebResult
run1(const WebUser *user, int mutating, WebStmt st, int n, const char *const *params)
{
	const WebStmt sts[1] = {st};
	const int np[1] = {n};
	const char *const *pp[1] = {params};
	WebResult	r = web_db_run(user, mutating, 1, sts, NULL, np, pp);

	if (mutating && r.status == 200)
		web_cache_invalidate();
	return r;
}

/*
 * A read through the cache.  The key is the role, the statement and its
 * parameters, each followed by a NUL-free separator.
 */
static WebResult
cached(const WebUser *user, int nstmts, const WebStmt *sts, const char *const *names,
	   const int *np, const char *const *const *pp)
{
	JobqBuf		key;
	WebResult	r;

	jobq_buf_init(&key);
	jobq_buf_puts(&key, user ? user->role : "");
	for (int i = 0; i < nstmts; i++)
	{
		jobq_buf_printf(&key, "\x1f%d", (int) sts[i]);
		for (int j = 0; j < np[i]; j++)
		{
			jobq_buf_puts(&key, "\x1e");
			jobq_buf_puts(&key, pp[i][j] ? pp[i][j] : "\x1d");
		}
	}
	jobq_xcheck(&key);
	if (web_cache_get(key.data, &r))
	{
		jobq_buf_free(&key);
		return r;
	}
	r = web_db_run(user, 0, nstmts, sts, names, np, pp);
	web_cache_put(key.data, &r);
	jobq_buf_free(&key);
	return r;
}

static WebResult
cached1(const WebUser *user, WebStmt st, int n, const char *const *params)
{
	const WebStmt sts[1] = {st};
	const int np[1] = {n};
	const char *const *pp[1] = {params};

	return cached(user, 1, sts, NULL, np, pp);
}

/*
 * The queue settings (jobq-contract.h): the names PATCH /api/queues/Q
 * takes, the JSON kind of their values, and what GET /api/session tells
 * the UI about them (kind, bounds, default, choices).
 */
typedef struct SettingDesc
{
	const char *name;
	const char *kind;			/* SECONDS, INTEGER, BOOLEAN, CHOICE */
	long long	lo,
				hi,
				dflt;
	const char *const *choices; /* CHOICE: NULL-terminated */
	int			v020;			/* 0.2.0's SQL only */
} SettingDesc;

#define SETTING_CHOICE_VALUE(value) #value,
#define SETTING_CHOICES_SECONDS(name) NULL
#define SETTING_CHOICES_INTEGER(name) NULL
#define SETTING_CHOICES_BOOLEAN(name) NULL
#define SETTING_CHOICES_CHOICE(name) \
	((const char *const[]) {JOBQ_CHOICES_##name(SETTING_CHOICE_VALUE) NULL})
#define SETTING_DESC(name, kind, lo, hi, dflt) \
	{#name, #kind, lo, hi, dflt, SETTING_CHOICES_##kind(name), 0},
#define SETTING_DESC_020(name, kind, lo, hi, dflt) \
	{#name, #kind, lo, hi, dflt, SETTING_CHOICES_##kind(name), 1},

static const SettingDesc settings[] = {
	JOBQ_QUEUE_SETTINGS(SETTING_DESC)
	JOBQ_QUEUE_SETTINGS_020(SETTING_DESC_020)
};

#define NSETTINGS ((int) (sizeof(settings) / sizeof(settings[0])))

/* the settings this database takes, as the JSON array of the session */
static void
settings_json(JobqBuf *b, int v020)
{
	int			first = 1;

	jobq_buf_puts(b, "[");
	for (int i = 0; i < NSETTINGS; i++)
	{
		const SettingDesc *d = &settings[i];

		if (d->v020 && !v020)
			continue;
		jobq_buf_printf(b, "%s{\"name\": \"%s\", \"kind\": \"%s\", \"min\": %lld, "
						"\"max\": %lld, \"default\": %lld", first ? "" : ", ", d->name,
						d->kind, d->lo, d->hi, d->dflt);
		if (d->choices != NULL)
		{
			jobq_buf_puts(b, ", \"choices\": [");
			for (int k = 0; d->choices[k] != NULL; k++)
				jobq_buf_printf(b, "%s\"%s\"", k ? ", " : "", d->choices[k]);
			jobq_buf_puts(b, "]");
		}
		jobq_buf_puts(b, "}");
		first = 0;
	}
	jobq_buf_puts(b, "]");
}

/*
 * PATCH /api/queues/Q: {"setting": value, ...}, each a setting this
 * database has (null: leave it), SECONDS as a number of seconds or an
 * interval's text, INTEGER a number, BOOLEAN true or false, CHOICE one of
 * its values as a string.  The server checks the values (400 with its
 * message).
 */
static WebResult
alter_queue(const char *queue, const char *body, size_t len, const WebUser *user)
{
	WebFeatures f;
	JobqJsonMember m[64];
	int			n;
	const char *why;
	const char *p[2] = {queue, body};

	web_db_features(&f);
	if (len == 0 || !jobq_json_object_scan(body, len, m, 64, &n, &why))
		return web_error(400, "the body must be a JSON object of settings");
	for (int i = 0; i < n; i++)
	{
		const SettingDesc *d = NULL;
		int			ok;

		for (int k = 0; k < NSETTINGS; k++)
			if (strlen(settings[k].name) == m[i].namelen &&
				memcmp(settings[k].name, m[i].name, m[i].namelen) == 0 &&
				(!settings[k].v020 || f.settings_020))
				d = &settings[k];
		if (d == NULL)
			return web_error(400, "unknown queue setting in the body (GET /api/session lists "
							 "the settings of this database)");
		if (m[i].kind == JOBQ_JV_NULL)
			continue;
		switch (d->kind[0])
		{
			case 'S':
				ok = m[i].kind == JOBQ_JV_NUMBER || m[i].kind == JOBQ_JV_STRING;
				break;
			case 'I':
				ok = m[i].kind == JOBQ_JV_NUMBER;
				break;
			case 'B':
				ok = m[i].kind == JOBQ_JV_TRUE || m[i].kind == JOBQ_JV_FALSE;
				break;
			default:
				ok = m[i].kind == JOBQ_JV_STRING;
				break;
		}
		if (!ok)
			return web_error(400, "a setting of the wrong type: durations are seconds or "
							 "interval text, counts numbers, switches true or false, "
							 "choices strings");
	}
	return run1(user, 1, f.settings_020 ? ST_ALTER_QUEUE_020 : ST_ALTER_QUEUE, 2, p);
}

static WebResult
session(const WebUser *user)
{
	WebFeatures f;
	WebResult	r = run1(user, 0, ST_SESSION, 0, NULL);
	JobqBuf		b;

	if (r.status != 200)
		return r;
	web_db_features(&f);
	jobq_buf_init(&b);
	jobq_buf_puts(&b, "{\"user\": ");
	if (user != NULL)
		jobq_buf_json_string(&b, user->name);
	else
		jobq_buf_puts(&b, "null");
	jobq_buf_printf(&b, ", \"read_only\": %s, \"database\": %s, \"endpoints\": {"
					"\"overview\": true, \"queues\": true, \"jobs\": true, "
					"\"jobs_keyset\": %s, \"metrics\": %s, \"workers\": %s, \"schedules\": %s, "
					"\"health\": %s, \"counts\": %s, \"bulk\": %s, \"audit\": %s, "
					"\"raw\": %s, \"worker_signal\": %s, \"schedule_actions\": %s, "
					"\"groups\": %s, \"flows\": %s}}",
					web_config.read_only ? "true" : "false", r.body,
					f.list_keyset ? "true" : "false", f.metrics ? "true" : "false",
					f.workers ? "true" : "false", f.schedules ? "true" : "false",
					f.health ? "true" : "false",
					f.counts ? "true" : "false", f.bulk ? "true" : "false",
					f.audit ? "true" : "false", f.job_value ? "true" : "false",
					f.worker_signal ? "true" : "false",
					f.schedule_actions ? "true" : "false",
					f.groups ? "true" : "false", f.flows ? "true" : "false");
	/* the closing brace of the object goes after the settings */
	b.len--;
	b.data[b.len] = '\0';
	jobq_buf_puts(&b, ", \"settings\": ");
	settings_json(&b, f.settings_020);
	jobq_buf_puts(&b, "}");
	jobq_xcheck(&b);
	free(r.body);
	r.body = b.data;
	return r;
}

static WebResult
overview(const WebUser *user)
{
	WebFeatures f;
	WebStmt		sts[2];
	const char *names[2] = {"queues", "health"};
	const int	np[2] = {0, 0};
	const char *const *pp[2] = {NULL, NULL};

	web_db_features(&f);
	sts[0] = f.counts ? ST_OVERVIEW_COUNTS : ST_OVERVIEW_STATS;
	sts[1] = ST_HEALTH;
	return cached(user, f.health ? 2 : 1, sts, names, np, pp);
}

static WebResult
jobs(struct MHD_Connection *c, const WebUser *user)
{
	WebFeatures f;
	const char *p[5];
	const char *limit = arg(c, "limit");

	web_db_features(&f);
	p[0] = arg(c, "queue");
	p[1] = arg(c, "state");
	p[2] = limit ? limit : "50";
	p[3] = arg(c, "after");
	p[4] = arg(c, "filters");
	if (p[0] == NULL)
		return web_error(400, "the queue parameter is required");
	if (strspn(p[2], "0123456789") != strlen(p[2]) || strlen(p[2]) > 5)
		return web_error(400, "limit must be a whole number from 1 to 10000");
	if (p[4] != NULL && !jobq_json_valid(p[4], strlen(p[4])))
		return web_error(400, "filters must be a JSON object");
	if (!f.list_keyset)
	{
		if (p[3] != NULL || p[4] != NULL)
			return web_error(400, "this database's jobq has no cursors or filters "
							 "(ALTER EXTENSION jobq UPDATE)");
		return cached1(user, ST_JOBS_V1, 3, p);
	}
	return cached1(user, ST_JOBS, 5, p);
}

static WebResult
metrics(struct MHD_Connection *c, const WebUser *user)
{
	const char *p[4] = {arg(c, "queue"), arg(c, "since"), arg(c, "until"), arg(c, "bucket")};

	return cached1(user, ST_METRICS, 4, p);
}

/* the body of a POST that takes an optional {"queue": Q} */
static int
body_queue(const char *body, size_t len, char **queue, WebResult *err)
{
	JobqJsonMember m[8];
	int			n;
	const char *why;
	const JobqJsonMember *q;

	*queue = NULL;
	if (len == 0)
		return 0;
	if (!jobq_json_object_scan(body, len, m, 8, &n, &why))
	{
		*err = web_error(400, "the body must be a JSON object");
		return -1;
	}
	for (int i = 0; i < n; i++)
		if (!(m[i].namelen == 5 && memcmp(m[i].name, "queue", 5) == 0))
		{
			*err = web_error(400, "unknown member in the body (allowed: queue)");
			return -1;
		}
	q = jobq_json_member(m, n, "queue");
	if (q != NULL && q->kind != JOBQ_JV_NULL)
	{
		if (q->kind != JOBQ_JV_STRING)
		{
			*err = web_error(400, "queue must be a string");
			return -1;
		}
		*queue = jobq_json_string_decode(q);
	}
	return 0;
}

#define lengthof(a) ((int) (sizeof(a) / sizeof((a)[0])))

/* a member a request body may have, and its JSON kind (JOBQ_JV_NULL: any) */
typedef struct BodyMember
{
	const char *name;
	JobqJsonKind kind;
} BodyMember;

/*
 * The members of a body against the allowed ones: NULL when they pass,
 * else "unknown" (a name not allowed) or "kind" (a value of another kind;
 * null is accepted from the member nullable_from on).
 */
static const char *
check_members(const JobqJsonMember *m, int n, const BodyMember *allowed, int nallowed,
			  int nullable_from)
{
	for (int i = 0; i < n; i++)
	{
		int			k;

		for (k = 0; k < nallowed; k++)
			if (strlen(allowed[k].name) == m[i].namelen &&
				memcmp(allowed[k].name, m[i].name, m[i].namelen) == 0)
				break;
		if (k == nallowed)
			return "unknown";
		if (allowed[k].kind != JOBQ_JV_NULL && m[i].kind != allowed[k].kind &&
			!(k >= nullable_from && m[i].kind == JOBQ_JV_NULL))
			return "kind";
	}
	return NULL;
}

/*
 * POST /api/enqueue: a JSON object with queue (string) and payload (any
 * JSON) and optionally run_at, delay, dedupe_key (strings), priority and
 * max_attempts (numbers).  Checked here for shape; the server checks the
 * values (and answers 400 with its message).
 */
static WebResult
enqueue(const char *body, size_t len, const WebUser *user)
{
	static const BodyMember allowed[] = {
		{"queue", JOBQ_JV_STRING}, {"payload", JOBQ_JV_NULL}, {"run_at", JOBQ_JV_STRING},
		{"delay", JOBQ_JV_STRING}, {"dedupe_key", JOBQ_JV_STRING},
		{"priority", JOBQ_JV_NUMBER}, {"max_attempts", JOBQ_JV_NUMBER},
	};
	JobqJsonMember m[16];
	int			n;
	const char *why;
	const char *p[1];

	if (len == 0 || !jobq_json_object_scan(body, len, m, 16, &n, &why))
		return web_error(400, "the body must be a JSON object");
	why = check_members(m, n, allowed, lengthof(allowed), 2);
	if (why != NULL && why[0] == 'u')
		return web_error(400, "unknown member in the body (allowed: queue, payload, "
						 "run_at, delay, priority, max_attempts, dedupe_key)");
	if (why != NULL)
		return web_error(400, "queue, run_at, delay and dedupe_key must be strings, "
						 "priority and max_attempts numbers");
	if (jobq_json_member(m, n, "queue") == NULL || jobq_json_member(m, n, "payload") == NULL)
		return web_error(400, "queue and payload are required");
	p[0] = body;
	return run1(user, 1, ST_ENQUEUE, 1, p);
}

/*
 * The bulk actions: POST /api/jobs/ACTION with {"ids": [...]} (at most
 * 10,000, jobq_*_many) or with {"queue", "state", "filters", "after",
 * "max_rows"} (jobq_*_where: one batch; the client loops on next_cursor
 * while "more", so every batch is a transaction of its own and the user
 * can stop between them).  The shape is checked here, the values by the
 * server.
 */
static const struct
{
	const char *name;
	WebStmt		many;
	WebStmt		where;
}			bulk_actions[] = {
	{"retry", ST_RETRY_MANY, ST_RETRY_WHERE},
	{"cancel", ST_CANCEL_MANY, ST_CANCEL_WHERE},
	{"delete", ST_DELETE_MANY, ST_DELETE_WHERE},
	{"run-now", ST_RUN_NOW_MANY, ST_RUN_NOW_WHERE},
};

static WebResult
bulk(int action, const char *body, size_t len, const WebUser *user)
{
	static const BodyMember allowed[] = {
		{"ids", JOBQ_JV_ARRAY}, {"queue", JOBQ_JV_STRING}, {"state", JOBQ_JV_STRING},
		{"filters", JOBQ_JV_OBJECT}, {"after", JOBQ_JV_STRING}, {"max_rows", JOBQ_JV_NUMBER},
	};
	JobqJsonMember m[16];
	int			n;
	const char *why;
	const char *p[1] = {body};
	int			by_ids;

	if (len == 0 || !jobq_json_object_scan(body, len, m, 16, &n, &why))
		return web_error(400, "the body must be a JSON object");
	why = check_members(m, n, allowed, lengthof(allowed), 2);
	if (why != NULL && why[0] == 'u')
		return web_error(400, "unknown member in the body (allowed: ids, or queue, state, "
						 "filters, after, max_rows)");
	if (why != NULL)
		return web_error(400, "ids must be an array of job ids, queue, state and after "
						 "strings, filters an object, max_rows a number");
	by_ids = jobq_json_member(m, n, "ids") != NULL;
	if (by_ids == (jobq_json_member(m, n, "queue") != NULL))
		return web_error(400, "the body needs either ids or queue (with state, filters, "
						 "after, max_rows)");
	if (by_ids && n != 1)
		return web_error(400, "ids go alone: a call by ids takes no filter");
	return run1(user, 1, by_ids ? bulk_actions[action].many : bulk_actions[action].where, 1, p);
}

/* GET /api/jobs/count: how many jobs a filter selects, up to 10,000 */
static WebResult
count_matching(struct MHD_Connection *c, const WebUser *user)
{
	const char *p[3] = {arg(c, "queue"), arg(c, "state"), arg(c, "filters")};

	if (p[0] == NULL)
		return web_error(400, "the queue parameter is required");
	if (p[2] != NULL && !jobq_json_valid(p[2], strlen(p[2])))
		return web_error(400, "filters must be a JSON object");
	return cached1(user, ST_COUNT_MATCHING, 3, p);
}

/* GET /api/audit?queue=Q&before=ID&limit=N: the audit trail, newest first */
static WebResult
audit(struct MHD_Connection *c, const WebUser *user)
{
	const char *p[3] = {arg(c, "queue"), arg(c, "limit"), arg(c, "before")};

	if (p[1] != NULL && (strspn(p[1], "0123456789") != strlen(p[1]) || strlen(p[1]) > 5))
		return web_error(400, "limit must be a whole number from 1 to 10000");
	if (p[2] != NULL && !valid_id(p[2], strlen(p[2])))
		return web_error(400, "before must be an audit row id");
	return run1(user, 0, ST_AUDIT, 3, p);
}

/*
 * "/NAME/VERB" after a collection's path: NAME (1 .. 200 bytes, no "/")
 * into name, the verb returned; NULL when the path has another shape.
 */
static const char *
name_and_verb(const char *rest, char *name, size_t size)
{
	const char *slash = strchr(rest, '/');
	size_t		len = slash ? (size_t) (slash - rest) : 0;

	if (slash == NULL || len == 0 || len >= size || strchr(slash + 1, '/') != NULL)
		return NULL;
	memcpy(name, rest, len);
	name[len] = '\0';
	return slash + 1;
}

/* POST /api/workers/TARGET/quiet|stop|resume: jobq_worker_signal */
static WebResult
worker_signal(const char *rest, int post, const WebUser *user)
{
	char		target[201];
	const char *verb = name_and_verb(rest, target, sizeof(target));
	const char *p[2] = {target, verb};

	if (verb == NULL || (strcmp(verb, "quiet") != 0 && strcmp(verb, "stop") != 0 &&
						 strcmp(verb, "resume") != 0))
		return web_error(404, "not found");
	if (!post)
		return web_error(405, "method not allowed");
	return run1(user, 1, ST_WORKER_SIGNAL, 2, p);
}

/* POST /api/schedules/NAME/pause|resume|trigger */
static WebResult
schedule_action(const char *rest, int post, const WebUser *user)
{
	char		name[201];
	const char *verb = name_and_verb(rest, name, sizeof(name));
	const char *p[1] = {name};
	WebStmt		st;

	if (verb == NULL)
		return web_error(404, "not found");
	if (strcmp(verb, "pause") == 0)
		st = ST_SCHEDULE_PAUSE;
	else if (strcmp(verb, "resume") == 0)
		st = ST_SCHEDULE_RESUME;
	else if (strcmp(verb, "trigger") == 0)
		st = ST_SCHEDULE_TRIGGER;
	else
		return web_error(404, "not found");
	if (!post)
		return web_error(405, "method not allowed");
	return run1(user, 1, st, 1, p);
}

/*
 * GET /api/jobs/ID/raw/payload|result: the value whole (jobq_job_value;
 * jobq_job cuts it past 256 kB), as a JSON file to save.
 */
static WebResult
raw_value(const char *id, const char *part, const WebUser *user)
{
	const char *p[2] = {id, part};
	WebResult	r = run1(user, 0, ST_JOB_VALUE, 2, p);

	if (r.status == 200)
		snprintf(r.download, sizeof(r.download), "job-%s-%s.json", id, part);
	return r;
}

/* GET /api/groups: a page of the groups of a queue (jobq_groups) */
static WebResult
groups(struct MHD_Connection *c, const WebUser *user)
{
	const char *blocked = arg(c, "blocked");
	const char *p[4] = {arg(c, "queue"), blocked && strcmp(blocked, "1") == 0 ? "true" : "false",
	arg(c, "limit"), arg(c, "after")};

	if (p[0] == NULL)
		return web_error(400, "the queue parameter is required");
	if (p[2] != NULL && (strspn(p[2], "0123456789") != strlen(p[2]) || strlen(p[2]) > 5))
		return web_error(400, "limit must be a whole number from 1 to 10000");
	return cached1(user, ST_GROUPS, 4, p);
}

/* POST /api/groups/skip-head {"queue": Q, "key": K}: jobq_skip_head */
static WebResult
skip_head(const char *body, size_t len, const WebUser *user)
{
	static const BodyMember allowed[] = {{"queue", JOBQ_JV_STRING}, {"key", JOBQ_JV_STRING}};
	JobqJsonMember m[4];
	int			n;
	const char *why;
	char	   *queue,
			   *key;
	const char *p[2];
	WebResult	r;

	if (len == 0 || !jobq_json_object_scan(body, len, m, 4, &n, &why))
		return web_error(400, "the body must be a JSON object");
	if (check_members(m, n, allowed, lengthof(allowed), lengthof(allowed)) != NULL ||
		jobq_json_member(m, n, "queue") == NULL || jobq_json_member(m, n, "key") == NULL)
		return web_error(400, "the body must be {\"queue\": Q, \"key\": K}, both strings");
	queue = jobq_json_string_decode(jobq_json_member(m, n, "queue"));
	key = jobq_json_string_decode(jobq_json_member(m, n, "key"));
	p[0] = queue;
	p[1] = key;
	r = run1(user, 1, ST_SKIP_HEAD, 2, p);
	free(queue);
	free(key);
	return r;
}

/* /api/flows/ID and /api/flows/ID/cancel */
static WebResult
flow(const char *rest, int get, int post, const WebUser *user)
{
	size_t		idlen = strcspn(rest, "/");
	char		idbuf[24];
	const char *p[1] = {idbuf};

	if (!valid_id(rest, idlen))
		return web_error(404, "not found");
	memcpy(idbuf, rest, idlen);
	idbuf[idlen] = '\0';
	if (rest[idlen] == '\0')
		return get ? cached1(user, ST_FLOW_JOBS, 1, p) : web_error(405, "method not allowed");
	if (strcmp(rest + idlen, "/cancel") == 0)
		return post ? run1(user, 1, ST_CANCEL_FLOW, 1, p) : web_error(405, "method not allowed");
	return web_error(404, "not found");
}

WebResult
web_api(struct MHD_Connection *c, const char *method, const char *path,
		const char *body, size_t bodylen, const WebUser *user)
{
	int			get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
	int			post = strcmp(method, "POST") == 0;
	int			patch = strcmp(method, "PATCH") == 0;
	WebFeatures f;
	const char *rest;

	web_db_features(&f);
	if (!get && !post && !patch)
		return web_error(405, "method not allowed");
	/* PATCH /queues/Q: its settings */
	if (strncmp(path, "/queues/", 8) == 0 && strchr(path + 8, '/') == NULL)
	{
		if (!patch)
			return web_error(405, "method not allowed");
		if (!jobq_valid_queue_name(path + 8))
			return web_error(400, "invalid queue name");
		return alter_queue(path + 8, body, bodylen, user);
	}
	if (patch)
		return web_error(405, "method not allowed");

	if (strcmp(path, "/session") == 0)
		return get ? session(user) : web_error(405, "method not allowed");
	if (strcmp(path, "/overview") == 0)
		return get ? overview(user) : web_error(405, "method not allowed");
	if (strcmp(path, "/queues") == 0)
		return get ? cached1(user, ST_QUEUES, 0, NULL) : web_error(405, "method not allowed");
	if (strcmp(path, "/jobs") == 0)
		return get ? jobs(c, user) : web_error(405, "method not allowed");
	if (strcmp(path, "/metrics") == 0 && f.metrics)
		return get ? metrics(c, user) : web_error(405, "method not allowed");
	if (strcmp(path, "/workers") == 0 && f.workers)
		return get ? cached1(user, ST_WORKERS, 0, NULL) : web_error(405, "method not allowed");
	if (strcmp(path, "/schedules") == 0 && f.schedules)
		return get ? cached1(user, ST_SCHEDULES, 0, NULL) : web_error(405, "method not allowed");
	if (strcmp(path, "/sweep") == 0)
	{
		char	   *q;
		WebResult	r;
		const char *p[1];

		if (!post)
			return web_error(405, "method not allowed");
		if (body_queue(body, bodylen, &q, &r) != 0)
			return r;
		p[0] = q;
		r = run1(user, 1, ST_SWEEP, 1, p);
		free(q);
		return r;
	}
	if (strcmp(path, "/enqueue") == 0)
		return post ? enqueue(body, bodylen, user) : web_error(405, "method not allowed");
	if (strcmp(path, "/audit") == 0 && f.audit)
		return get ? audit(c, user) : web_error(405, "method not allowed");
	if (strcmp(path, "/jobs/count") == 0 && f.list_keyset)
		return get ? count_matching(c, user) : web_error(405, "method not allowed");
	if (strncmp(path, "/jobs/", 6) == 0 && f.bulk)
		for (int i = 0; i < (int) (sizeof(bulk_actions) / sizeof(bulk_actions[0])); i++)
			if (strcmp(path + 6, bulk_actions[i].name) == 0)
				return post ? bulk(i, body, bodylen, user) : web_error(405, "method not allowed");
	if (strcmp(path, "/groups") == 0 && f.groups)
		return get ? groups(c, user) : web_error(405, "method not allowed");
	if (strcmp(path, "/groups/blocked") == 0 && f.groups)
	{
		const char *p[1] = {arg(c, "queue")};

		if (!get)
			return web_error(405, "method not allowed");
		if (p[0] == NULL)
			return web_error(400, "the queue parameter is required");
		return cached1(user, ST_BLOCKED_GROUPS, 1, p);
	}
	if (strcmp(path, "/groups/skip-head") == 0 && f.groups)
		return post ? skip_head(body, bodylen, user) : web_error(405, "method not allowed");
	if (strncmp(path, "/flows/", 7) == 0 && f.flows)
		return flow(path + 7, get, post, user);
	if (strncmp(path, "/workers/", 9) == 0 && f.worker_signal)
		return worker_signal(path + 9, post, user);
	if (strncmp(path, "/schedules/", 11) == 0 && f.schedule_actions)
		return schedule_action(path + 11, post, user);

	/* /queues/Q/pause|resume */
	if (strncmp(path, "/queues/", 8) == 0 && (rest = strchr(path + 8, '/')) != NULL)
	{
		char		queue[64];
		size_t		qlen = rest - (path + 8);
		const char *p[1] = {queue};
		int			pause = strcmp(rest, "/pause") == 0;

		if ((!pause && strcmp(rest, "/resume") != 0) || qlen == 0 || qlen >= sizeof(queue))
			return web_error(404, "not found");
		if (!post)
			return web_error(405, "method not allowed");
		memcpy(queue, path + 8, qlen);
		queue[qlen] = '\0';
		if (!jobq_valid_queue_name(queue))
			return web_error(400, "invalid queue name");
		return run1(user, 1, pause ? ST_PAUSE : ST_RESUME, 1, p);
	}
	/* /jobs/ID and /jobs/ID/retry|cancel */
	if (strncmp(path, "/jobs/", 6) == 0)
	{
		const char *id = path + 6;
		size_t		idlen = strcspn(id, "/");
		char		idbuf[24];
		const char *p[1] = {idbuf};

		if (!valid_id(id, idlen))
			return web_error(404, "not found");
		memcpy(idbuf, id, idlen);
		idbuf[idlen] = '\0';
		rest = id + idlen;
		if (rest[0] == '\0')
			return get ? cached1(user, ST_JOB, 1, p) : web_error(405, "method not allowed");
		if (strcmp(rest, "/retry") == 0 || strcmp(rest, "/cancel") == 0)
			return post ? run1(user, 1, rest[1] == 'r' ? ST_RETRY : ST_CANCEL, 1, p)
				: web_error(405, "method not allowed");
		if (f.bulk && (strcmp(rest, "/delete") == 0 || strcmp(rest, "/run-now") == 0))
			return post ? run1(user, 1, rest[1] == 'd' ? ST_DELETE : ST_RUN_NOW, 1, p)
				: web_error(405, "method not allowed");
		if (f.job_value && (strcmp(rest, "/raw/payload") == 0 || strcmp(rest, "/raw/result") == 0))
			return get ? raw_value(idbuf, rest + 5, user) : web_error(405, "method not allowed");
	}
	return web_error(404, "not found");
}
