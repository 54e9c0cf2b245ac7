/*-------------------------------------------------------------------------
 *
 * db.c
 *	  jobq-web's database side: a small pool of libjobq connections (one
 *	  per HTTP worker thread), the statements, and the one transaction
 *	  shape every request runs in:
 *
 *		BEGIN
 *		SELECT set_config('statement_timeout', T, true)	-- --query-timeout
 *		SELECT set_config('role', R, true)				-- the user's role
 *		SELECT set_config('jobq.actor', U, true)		-- mutating calls
 *		<the endpoint's statements>
 *		COMMIT
 *
 *	  so every statement runs under the timeout, as the dashboard user's
 *	  PostgreSQL role (a read-only user cannot mutate even through the
 *	  API), and the audit trail sees who did it.  Every statement returns
 *	  its answer as JSON built by the server (json_agg, to_jsonb), so types
 *	  and quoting follow PostgreSQL.  A lost connection is re-established
 *	  by the next request that takes it (at most once a second per
 *	  connection); errors are logged here and become a status and a short
 *	  message that says nothing about the database.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/web/db.c
 *
 *-------------------------------------------------------------------------
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libpq-fe.h>

#include "jobq-client.h"
#include "jobq-common.h"
#include "web.h"

/*
 * The statements, "%s" being the quoted API schema (substituted once per
 * connection, as libjobq does).  Each returns one text column of JSON.
 */
static const char *const stmt_templates[ST__COUNT] = {
	[ST_OVERVIEW_STATS] =
	"SELECT coalesce(json_agg(s ORDER BY s.queue), '[]')::text FROM %s.jobq_stats() s",
	[ST_OVERVIEW_COUNTS] =
	"SELECT coalesce(json_agg(c ORDER BY c.queue), '[]')::text FROM %s.jobq_counts() c",
	[ST_HEALTH] =
	"SELECT coalesce(json_agg(h), '[]')::text FROM %s.jobq_health() h",
	[ST_QUEUES] =
	"SELECT coalesce(json_agg(q ORDER BY q.queue), '[]')::text FROM %s.jobq_queues() q",
	[ST_JOBS] =
	"SELECT json_build_object("
	"'jobs', coalesce(json_agg(to_jsonb(l) - 'next_cursor' - 'scan_truncated' - 'ordinality' ORDER BY l.ordinality)"
	" FILTER (WHERE l.id IS NOT NULL), '[]'),"
	"'next_cursor', max(l.next_cursor),"
	"'scan_truncated', coalesce(bool_or(l.scan_truncated), false))::text "
	"FROM %s.jobq_list($1, $2, $3::int, $4, coalesce($5, '{}')::jsonb) WITH ORDINALITY l",
	/* 0.1.0 SQL: no cursor, no filters */
	[ST_JOBS_V1] =
	"SELECT json_build_object("
	"'jobs', coalesce(json_agg(to_jsonb(l) - 'ordinality' ORDER BY l.ordinality), '[]'),"
	"'next_cursor', NULL, 'scan_truncated', false)::text "
	"FROM %s.jobq_list($1, $2, $3::int) WITH ORDINALITY l",
	[ST_JOB] =
	"SELECT to_jsonb(j)::text FROM %s.jobq_job($1::bigint) j",
	[ST_METRICS] =
	"SELECT coalesce(json_agg(m ORDER BY m.queue, m.bucket), '[]')::text "
	"FROM %s.jobq_metrics($1, coalesce($2::timestamptz, now() - interval '1 hour'),"
	" coalesce($3::timestamptz, now()), coalesce($4::interval, interval '1 minute')) m",
	[ST_WORKERS] =
	"SELECT coalesce(json_agg(w ORDER BY w.name), '[]')::text FROM %s.jobq_workers() w",
	[ST_SCHEDULES] =
	"SELECT coalesce(json_agg(s ORDER BY s.name), '[]')::text FROM %s.jobq_schedules() s",
	[ST_PAUSE] =
	"SELECT json_build_object('queue', $1::text, 'paused', true)::text FROM %s.jobq_pause($1)",
	[ST_RESUME] =
	"SELECT json_build_object('queue', $1::text, 'paused', false)::text FROM %s.jobq_resume($1)",
	[ST_SWEEP] =
	"SELECT to_jsonb(s)::text FROM %s.jobq_sweep($1) s",
	[ST_ENQUEUE] =
	"SELECT json_build_object('id', %s.jobq_enqueue(b->>'queue', b->'payload',"
	" (b->>'run_at')::timestamptz, (b->>'delay')::interval,"
	" coalesce((b->>'priority')::int, 0), (b->>'max_attempts')::int,"
	" b->>'dedupe_key'))::text FROM (SELECT $1::jsonb AS b) a",
	[ST_RETRY] =
	"SELECT json_build_object('id', $1::bigint, 'changed', %s.jobq_retry($1::bigint))::text",
	[ST_CANCEL] =
	"SELECT json_build_object('id', $1::bigint, 'changed', %s.jobq_cancel($1::bigint))::text",
	[ST_READY] =
	"SELECT '{\"ready\": true}'::text",
	/* who the request runs as, and what that role may do (the UI hides the rest) */
	[ST_SESSION] =
	"SELECT json_build_object('role', current_user,"
	" 'admin', pg_has_role(current_user, 'jobq_admin', 'USAGE'),"
	" 'producer', pg_has_role(current_user, 'jobq_producer', 'USAGE'),"
	" 'worker', pg_has_role(current_user, 'jobq_worker', 'USAGE'))::text",

	/*
	 * The bulk actions take the request's JSON body as $1 (api.c checked its
	 * shape): by ids {"ids": [...]}, or by filter {"queue", "state",
	 * "filters", "max_rows", "after"}; one call is one batch, one
	 * transaction.  The one-job delete and run-now are the id forms with one
	 * id.
	 */
#define BULK_IDS(fn) \
	"SELECT to_jsonb(r)::text FROM %s." fn "(ARRAY(SELECT jsonb_array_elements_text($1::jsonb -> 'ids'))::bigint[]) r"
#define BULK_WHERE(fn) \
	"SELECT to_jsonb(r)::text FROM (SELECT $1::jsonb AS b) a, %s." fn "(b ->> 'queue', b ->> 'state'," \
	" coalesce(b -> 'filters', '{}'), coalesce((b ->> 'max_rows')::int, 1000), b ->> 'after') r"
	[ST_RETRY_MANY] = BULK_IDS("jobq_retry_many"),
	[ST_CANCEL_MANY] = BULK_IDS("jobq_cancel_many"),
	[ST_DELETE_MANY] = BULK_IDS("jobq_delete_many"),
	[ST_RUN_NOW_MANY] = BULK_IDS("jobq_run_now_many"),
	[ST_RETRY_WHERE] = BULK_WHERE("jobq_retry_where"),
	[ST_CANCEL_WHERE] = BULK_WHERE("jobq_cancel_where"),
	[ST_DELETE_WHERE] = BULK_WHERE("jobq_delete_where"),
	[ST_RUN_NOW_WHERE] = BULK_WHERE("jobq_run_now_where"),
	[ST_DELETE] =
	"SELECT json_build_object('id', $1::bigint, 'changed', r.affected > 0)::text"
	" FROM %s.jobq_delete_many(ARRAY[$1::bigint]) r",
	[ST_RUN_NOW] =
	"SELECT json_build_object('id', $1::bigint, 'changed', r.affected > 0)::text"
	" FROM %s.jobq_run_now_many(ARRAY[$1::bigint]) r",

	/*
	 * How many jobs a filter selects, capped: the ids of at most 10,000 of
	 * them through jobq_list (its indexes and scan cap); "capped" when the
	 * list goes on or the scan stopped short.
	 */
	[ST_COUNT_MATCHING] =
	"SELECT json_build_object('count', count(l.id),"
	" 'capped', coalesce(bool_or(l.next_cursor IS NOT NULL OR l.scan_truncated), false))::text"
	" FROM %s.jobq_list($1, $2, 10000, NULL, coalesce($3, '{}')::jsonb) l",
	[ST_AUDIT] =
	"SELECT coalesce(json_agg(a ORDER BY a.id DESC), '[]')::text"
	" FROM %s.jobq_audit($1, NULL, coalesce($2::int, 100), $3::bigint) a",
	[ST_JOB_VALUE] =
	"SELECT v::text FROM %s.jobq_job_value($1::bigint, $2) v WHERE v IS NOT NULL",
	[ST_WORKER_SIGNAL] =
	"SELECT json_build_object('target', $1::text, 'signal', $2::text,"
	" 'workers', %s.jobq_worker_signal($1, $2))::text",
	[ST_SCHEDULE_PAUSE] =
	"SELECT json_build_object('name', $1::text, 'paused', true)::text FROM %s.jobq_pause_schedule($1)",
	[ST_SCHEDULE_RESUME] =
	"SELECT json_build_object('name', $1::text, 'paused', false, 'next_run_at', r)::text"
	" FROM %s.jobq_resume_schedule($1) r",
	[ST_SCHEDULE_TRIGGER] =
	"SELECT json_build_object('name', $1::text, 'id', %s.jobq_trigger_schedule($1))::text",

	/*
	 * $1 the queue, $2 the request's JSON object of settings (api.c checked
	 * its names): each setting passed by name from it, a missing or null one
	 * as NULL, which jobq_alter_queue leaves as it is.  The settings are
	 * those of jobq-contract.h, so a new one needs no change here.
	 */
#define ALTER_SQL_TYPE_SECONDS "interval"
#define ALTER_SQL_TYPE_INTEGER "integer"
#define ALTER_SQL_TYPE_BOOLEAN "boolean"
#define ALTER_SQL_TYPE_CHOICE "text"
#define ALTER_ARG(name, kind, lo, hi, dflt) \
	", " #name " => (a.b ->> '" #name "')::" ALTER_SQL_TYPE_##kind
	[ST_ALTER_QUEUE] =
	"SELECT json_build_object('queue', $1::text)::text FROM (SELECT $2::jsonb AS b) a,"
	" %s.jobq_alter_queue($1" JOBQ_QUEUE_SETTINGS(ALTER_ARG) ") r",
	[ST_ALTER_QUEUE_020] =
	"SELECT json_build_object('queue', $1::text)::text FROM (SELECT $2::jsonb AS b) a,"
	" %s.jobq_alter_queue($1" JOBQ_QUEUE_SETTINGS(ALTER_ARG) JOBQ_QUEUE_SETTINGS_020(ALTER_ARG) ") r",

	/* $1 queue, $2 only the blocked ones, $3 max_rows, $4 after this key */
	[ST_GROUPS] =
	"SELECT coalesce(json_agg(g ORDER BY g.key), '[]')::text"
	" FROM %s.jobq_groups($1, coalesce($2::boolean, false), coalesce($3::int, 100), $4) g",
	[ST_BLOCKED_GROUPS] =
	"SELECT coalesce(json_agg(g), '[]')::text FROM %s.jobq_blocked_groups($1) g",
	[ST_SKIP_HEAD] =
	"SELECT json_build_object('queue', $1::text, 'key', $2::text, 'id', %s.jobq_skip_head($1, $2))::text",
	/* $1 the flow's id: its jobs (none: 404) */
	[ST_FLOW_JOBS] =
	"SELECT json_build_object('flow', $1::bigint, 'jobs', json_agg(f ORDER BY f.id))::text"
	" FROM %s.jobq_flow_jobs($1::bigint) f HAVING count(*) > 0",
	[ST_CANCEL_FLOW] =
	"SELECT json_build_object('flow', $1::bigint, 'cancelled', %s.jobq_cancel_flow($1::bigint))::text",
};

typedef struct Slot
{
	JobqConn   *conn;
	char	   *sql[ST__COUNT];
	int			busy;
	time_t		last_attempt;	/* of a reconnect */
} Slot;

static WebResult error_result(int status, const char *message, const char *sqlstate);
static Slot *slots;
static int	nslots;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_free = PTHREAD_COND_INITIALIZER;
static WebFeatures features;	/* under pool_lock */

static void
free_sql(Slot *s)
{
	for (int i = 0; i < ST__COUNT; i++)
	{
		free(s->sql[i]);
		s->sql[i] = NULL;
	}
}

/* what this database has, read once per (re)connect */
static void
probe_features(PGconn *pg, const char *schema)
{
	static const char *q =
		"SELECT coalesce(bool_or(p.proname = 'jobq_counts'), false),"
		" coalesce(bool_or(p.proname = 'jobq_health' AND p.pronargs = p.pronargdefaults), false),"
		" coalesce(bool_or(p.proname = 'jobq_list' AND p.pronargs = 5), false),"
		" coalesce(bool_or(p.proname = 'jobq_metrics'), false),"
		" coalesce(bool_or(p.proname = 'jobq_workers'), false),"
		" coalesce(bool_or(p.proname = 'jobq_schedules'), false),"
		" coalesce(bool_or(p.proname = 'jobq_run_now_where'), false),"
		" coalesce(bool_or(p.proname = 'jobq_audit'), false),"
		" coalesce(bool_or(p.proname = 'jobq_job_value'), false),"
		" coalesce(bool_or(p.proname = 'jobq_worker_signal'), false),"
		" coalesce(bool_or(p.proname = 'jobq_trigger_schedule'), false),"
		" coalesce(bool_or(p.proname = 'jobq_alter_queue' AND p.pronargs > $2::int), false),"
		" coalesce(bool_or(p.proname = 'jobq_skip_head'), false),"
		" coalesce(bool_or(p.proname = 'jobq_cancel_flow'), false),"
		/* the audit trail reads jobq.actor as a placeholder setting */
		" EXISTS (SELECT FROM pg_settings WHERE name = 'jobq.actor')"
		" OR coalesce(bool_or(p.proname = 'jobq_audit'), false)"
		" FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
		" WHERE n.nspname = $1 AND p.proname LIKE 'jobq\\_%'";
#define COUNT_ONE(name, kind, lo, hi, dflt) + 1
	char		nargs_010[16];
	const char *params[2] = {schema, nargs_010};
	PGresult   *r;

	/* jobq_alter_queue of 0.1.0: the queue and its settings */
	snprintf(nargs_010, sizeof(nargs_010), "%d", 1 JOBQ_QUEUE_SETTINGS(COUNT_ONE));
	r = PQexecParams(pg, q, 2, NULL, params, NULL, NULL, 0);

	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
	{
		WebFeatures f = {0};

		f.known = 1;
		f.counts = PQgetvalue(r, 0, 0)[0] == 't';
		f.health = PQgetvalue(r, 0, 1)[0] == 't';
		f.list_keyset = PQgetvalue(r, 0, 2)[0] == 't';
		f.metrics = PQgetvalue(r, 0, 3)[0] == 't';
		f.workers = PQgetvalue(r, 0, 4)[0] == 't';
		f.schedules = PQgetvalue(r, 0, 5)[0] == 't';
		f.bulk = PQgetvalue(r, 0, 6)[0] == 't';
		f.audit = PQgetvalue(r, 0, 7)[0] == 't';
		f.job_value = PQgetvalue(r, 0, 8)[0] == 't';
		f.worker_signal = PQgetvalue(r, 0, 9)[0] == 't';
		f.schedule_actions = PQgetvalue(r, 0, 10)[0] == 't';
		f.settings_020 = PQgetvalue(r, 0, 11)[0] == 't';
		f.groups = PQgetvalue(r, 0, 12)[0] == 't';
		f.flows = PQgetvalue(r, 0, 13)[0] == 't';
		f.actor = PQgetvalue(r, 0, 14)[0] == 't';
		pthread_mutex_lock(&pool_lock);
		features = f;
		pthread_mutex_unlock(&pool_lock);
	}
	else
		web_log("warning", "reading the database's jobq functions failed: %s",
				PQerrorMessage(pg));
	PQclear(r);
}

/* render the statements for this connection's schema */
static int
build_sql(Slot *s)
{
	PGconn	   *pg = jobq_pgconn(s->conn);
	const char *schema = jobq_schema(s->conn);
	char	   *q = PQescapeIdentifier(pg, schema, strlen(schema));

	if (q == NULL)
		return -1;
	free_sql(s);
	for (int i = 0; i < ST__COUNT; i++)
	{
		JobqBuf		b;

		jobq_buf_init(&b);
		jobq_buf_printf(&b, stmt_templates[i], q);
		jobq_xcheck(&b);
		s->sql[i] = b.data;
	}
	PQfreemem(q);
	probe_features(pg, schema);
	return 0;
}

static int
slot_connect(Slot *s)
{
	static const char *const kw[] = {"fallback_application_name", "connect_timeout", NULL};
	static const char *const val[] = {"jobq-web", "5", NULL};

	s->last_attempt = time(NULL);
	if (s->conn == NULL)
	{
		s->conn = jobq_connect_params(web_config.conninfo, web_config.schema, 0, kw, val);
		if (s->conn == NULL)
			return -1;
	}
	else
		(void) jobq_reconnect(s->conn);
	if (jobq_status(s->conn) != JOBQ_ERR_NONE || !jobq_is_connected(s->conn))
	{
		web_log("error", "cannot connect to the database: %s", jobq_errmsg(s->conn));
		return -1;
	}
	return build_sql(s);
}

int
web_db_init(int nconns, char *err, size_t errlen)
{
	slots = calloc(nconns, sizeof(Slot));
	if (slots == NULL)
	{
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	nslots = nconns;
	/* the first connection at start, so that a wrong conninfo is seen */
	if (slot_connect(&slots[0]) != 0)
	{
		snprintf(err, errlen, "cannot connect to the database: %s",
				 slots[0].conn ? jobq_errmsg(slots[0].conn) : "out of memory");
		return -1;
	}
	return 0;
}

void
web_db_features(WebFeatures *f)
{
	pthread_mutex_lock(&pool_lock);
	*f = features;
	pthread_mutex_unlock(&pool_lock);
}

static Slot *
acquire(void)
{
	Slot	   *s = NULL;

	pthread_mutex_lock(&pool_lock);
	for (;;)
	{
		for (int i = 0; i < nslots; i++)
			if (!slots[i].busy)
			{
				s = &slots[i];
				break;
			}
		if (s != NULL)
			break;
		pthread_cond_wait(&pool_free, &pool_lock);
	}
	s->busy = 1;
	pthread_mutex_unlock(&pool_lock);
	return s;
}

static void
release(Slot *s)
{
	pthread_mutex_lock(&pool_lock);
	s->busy = 0;
	pthread_cond_signal(&pool_free);
	pthread_mutex_unlock(&pool_lock);
}

WebResult
web_error(int status, const char *message)
{
	return error_result(status, message, NULL);
}

static WebResult
error_result(int status, const char *message, const char *sqlstate)
{
	JobqBuf		b;
	WebResult	r;

	jobq_buf_init(&b);
	jobq_buf_puts(&b, "{\"error\": ");
	jobq_buf_json_string(&b, message);
	if (sqlstate != NULL)
	{
		jobq_buf_puts(&b, ", \"sqlstate\": ");
		jobq_buf_json_string(&b, sqlstate);
	}
	jobq_buf_puts(&b, "}");
	jobq_xcheck(&b);
	r.status = status;
	r.body = b.data;
	r.download[0] = '\0';
	return r;
}

/*
 * What a failed statement tells the user.  Bad input the server found in
 * the request's own arguments (class 22, an unknown queue) is the user's
 * to fix, and so is an action the object's state refuses (class 55, as
 * 409), so their messages are passed on; anything else stays in the log.
 */
static WebResult
map_error(PGresult *r, PGconn *pg)
{
	const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
	const char *msg = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;

	web_log("error", "database: %s%s%s", state ? state : "", state ? " " : "",
			msg ? msg : PQerrorMessage(pg));
	if (state == NULL || PQstatus(pg) != CONNECTION_OK)
		return error_result(503, "the database is not reachable", NULL);
	if (strcmp(state, "57014") == 0)
		return error_result(503, "the query took longer than the query timeout: narrow the filter",
							state);
	if (strcmp(state, "42501") == 0)
		return error_result(403, "permission denied", state);
	if (strcmp(state, "42704") == 0)
		return error_result(404, msg ? msg : "not found", state);
	if (strncmp(state, "22", 2) == 0 || strcmp(state, "54000") == 0)
		return error_result(400, msg ? msg : "invalid argument", state);
	/* the object is not in a state for it (55006: a group_mode while jobs are live) */
	if (strncmp(state, "55", 2) == 0)
		return error_result(409, msg ? msg : "not now", state);
	return error_result(500, "database error (see the jobq-web log)", NULL);
}

static int
exec_ok(PGconn *pg, const char *sql, int n, const char *const *params, PGresult **out)
{
	PGresult   *r = PQexecParams(pg, sql, n, NULL, params, NULL, NULL, 0);
	ExecStatusType st = PQresultStatus(r);

	*out = r;
	return st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK;
}

WebResult
web_db_run(const WebUser *user, int mutating, int nstmts, const WebStmt *stmts,
		   const char *const *names, const int *nparams, const char *const *const *params)
{
	Slot	   *s = acquire();
	PGconn	   *pg;
	PGresult   *r = NULL;
	WebResult	res;
	JobqBuf		out;
	char		timeout[32];
	WebFeatures f;

	if (s->conn == NULL || !jobq_is_connected(s->conn) || s->sql[0] == NULL)
	{
		if (time(NULL) == s->last_attempt || slot_connect(s) != 0)
		{
			release(s);
			return error_result(503, "the database is not reachable", NULL);
		}
	}
	pg = jobq_pgconn(s->conn);
	web_db_features(&f);
	snprintf(timeout, sizeof(timeout), "%d", web_config.query_timeout_ms);

	if (!exec_ok(pg, "BEGIN", 0, NULL, &r))
		goto fail;
	PQclear(r);
	{
		const char *p[1] = {timeout};

		if (!exec_ok(pg, "SELECT set_config('statement_timeout', $1, true)", 1, p, &r))
			goto fail;
		PQclear(r);
	}
	if (user != NULL && user->role[0] != '\0')
	{
		const char *p[1] = {user->role};

		if (!exec_ok(pg, "SELECT set_config('role', $1, true)", 1, p, &r))
			goto fail;
		PQclear(r);
	}
	if (mutating && f.actor && user != NULL)
	{
		const char *p[1] = {user->name};

		if (!exec_ok(pg, "SELECT set_config('jobq.actor', $1, true)", 1, p, &r))
			goto fail;
		PQclear(r);
	}

	jobq_buf_init(&out);
	res.status = 200;
	res.download[0] = '\0';
	if (names != NULL)
		jobq_buf_puts(&out, "{");
	for (int i = 0; i < nstmts; i++)
	{
		if (!exec_ok(pg, s->sql[stmts[i]], nparams[i], params[i], &r))
		{
			jobq_buf_free(&out);
			goto fail;
		}
		if (names != NULL)
		{
			jobq_buf_puts(&out, i > 0 ? ", " : "");
			jobq_buf_json_string(&out, names[i]);
			jobq_buf_puts(&out, ": ");
		}
		if (PQntuples(r) == 0 || PQgetisnull(r, 0, 0))
		{
			if (names == NULL)
				res.status = 404;
			jobq_buf_puts(&out, "null");
		}
		else
			jobq_buf_puts(&out, PQgetvalue(r, 0, 0));
		PQclear(r);
	}
	if (names != NULL)
		jobq_buf_puts(&out, "}");
	jobq_xcheck(&out);
	if (!exec_ok(pg, "COMMIT", 0, NULL, &r))
	{
		jobq_buf_free(&out);
		goto fail;
	}
	PQclear(r);
	release(s);
	if (res.status == 404)
	{
		jobq_buf_free(&out);
		return error_result(404, "not found", NULL);
	}
	res.body = out.data;
	return res;

fail:
	res = map_error(r, pg);
	PQclear(r);
	if (PQstatus(pg) == CONNECTION_OK)
	{
		r = PQexec(pg, "ROLLBACK");
		PQclear(r);
	}
	release(s);
	return res;
}

/* /readyz: a round trip on a pool connection, reconnecting if needed */
int
web_db_ready(void)
{
	static const WebStmt st[1] = {ST_READY};
	static const int np[1] = {0};
	static const char *const *const pp[1] = {NULL};
	WebResult	r = web_db_run(NULL, 0, 1, st, NULL, np, pp);
	int			ok = r.status == 200;

	free(r.body);
	return ok;
}
