/*-------------------------------------------------------------------------
 *
 * conn.c
 *	  Connections: connect, reconnect, disconnect, and the one place where
 *	  statements are prepared and executed.
 *
 * Every statement libjobq sends is one of the fixed texts below with the
 * API schema substituted once, at connect time, as a quoted identifier.
 * The schema passed the allow-list first, so the quoting is belt and
 * braces; user data only ever travels as parameters.  Function names,
 * casts and operators are qualified (pg_catalog.*, OPERATOR(pg_catalog.-))
 * so that nothing an untrusted role puts on the search_path can capture a
 * call.
 *
 * Statements are prepared by name on first use, once per server session
 * (JOBQ_CONNECT_NO_PREPARE switches to unnamed statements for poolers
 * that cannot keep them).  The session is new after jobq_reconnect, so
 * the "prepared" flags are reset there.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/src/conn.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jobq-int.h"

/*
 * TCP settings every session gets unless the caller's defaults or the
 * conninfo name them (doc/libjobq.md, "Dead connections").  A peer that
 * vanishes without a FIN (power loss, a partition, a NAT or firewall that
 * forgot the flow) otherwise leaves libpq waiting for ever: keepalives
 * find an idle dead peer within idle + interval * count = 25 s, and
 * tcp_user_timeout closes a connection whose sent data stays unacknowledged
 * for 30 s.  libpq ignores all of them on Unix sockets.
 */
static const char *const tcp_default_keys[] = {
	"keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count",
	"tcp_user_timeout"
};
static const char *const tcp_default_vals[] = {
	"1", "10", "5", "3", "30000"
};

#define NTCP_DEFAULTS (sizeof(tcp_default_keys) / sizeof(tcp_default_keys[0]))

/*
 * The columns of a claim: the SQL function's, plus the lease left in
 * seconds on the server clock (see jobq_job_lease_ms).
 */
#define CLAIM_COLUMNS \
	"c.id, c.queue, c.payload, c.attempt, c.max_attempts, c.token, " \
	"c.locked_until, c.enqueued_at, " \
	"pg_catalog.date_part('epoch', c.locked_until OPERATOR(pg_catalog.-) " \
	"pg_catalog.clock_timestamp())"
/* ... and 0.2.0's flow_id (JOBQ_SQL_FLOWS) */
#define CLAIM_COLUMNS_020 CLAIM_COLUMNS ", c.flow_id"

/* Indexed by JobqStmt; "%s" is the quoted schema. */
/*
 * The queue name and every queue setting, in the order of
 * JOBQ_QUEUE_SETTINGS then JOBQ_QUEUE_SETTINGS_020 (JOBQ_QUEUE_STMT_SETTINGS_020)
 */
#define QUEUE_SETTINGS_PARAMS_020 \
	"($1::pg_catalog.text, $2::pg_catalog.interval, " \
	"$3::pg_catalog.int4, $4::pg_catalog.interval, $5::pg_catalog.interval, " \
	"$6::pg_catalog.interval, $7::pg_catalog.interval, $8::pg_catalog.bool, " \
	"$9::pg_catalog.bool, $10::pg_catalog.bool, $11::pg_catalog.text, $12::pg_catalog.int4, " \
	"$13::pg_catalog.text, $14::pg_catalog.text, $15::pg_catalog.int4, $16::pg_catalog.int4, " \
	"$17::pg_catalog.interval, $18::pg_catalog.int4, $19::pg_catalog.int4, " \
	"$20::pg_catalog.interval, $21::pg_catalog.int4)"

static const char *const stmt_templates[STMT__COUNT] = {
	[STMT_ENQUEUE] =
	"SELECT %s.jobq_enqueue($1::pg_catalog.text, $2::pg_catalog.jsonb, "
	"$3::pg_catalog.timestamptz, $4::pg_catalog.interval, $5::pg_catalog.int4, "
	"$6::pg_catalog.int4, $7::pg_catalog.text)",
	[STMT_ENQUEUE_BATCH] =
	"SELECT b.id, b.created FROM %s.jobq_enqueue_batch($1::pg_catalog.text, "
	"$2::pg_catalog.jsonb[], $3::pg_catalog.timestamptz, $4::pg_catalog.interval, "
	"$5::pg_catalog.int4, $6::pg_catalog.int4, $7::pg_catalog.text[]) AS b",
	[STMT_ENQUEUE_020] =
	"SELECT %s.jobq_enqueue($1::pg_catalog.text, $2::pg_catalog.jsonb, "
	"$3::pg_catalog.timestamptz, $4::pg_catalog.interval, $5::pg_catalog.int4, "
	"$6::pg_catalog.int4, $7::pg_catalog.text, group_key => $8::pg_catalog.text, "
	"depends_on => $9::pg_catalog.int8[], on_dep_failure => $10::pg_catalog.text, "
	"flow_id => $11::pg_catalog.int8)",
	[STMT_ENQUEUE_BATCH_020] =
	"SELECT b.id, b.created FROM %s.jobq_enqueue_batch($1::pg_catalog.text, "
	"$2::pg_catalog.jsonb[], $3::pg_catalog.timestamptz, $4::pg_catalog.interval, "
	"$5::pg_catalog.int4, $6::pg_catalog.int4, $7::pg_catalog.text[], "
	"group_keys => $8::pg_catalog.text[]) AS b",
	[STMT_CLAIM_ONE] =
	"SELECT " CLAIM_COLUMNS " FROM %s.jobq_claim($1::pg_catalog.text, "
	"$2::pg_catalog.text, $3::pg_catalog.int4, $4::pg_catalog.interval, " \
	"$5::pg_catalog.interval) AS c",
	[STMT_CLAIM_ANY] =
	"SELECT " CLAIM_COLUMNS " FROM %s.jobq_claim($1::pg_catalog.text[], "
	"$2::pg_catalog.text, $3::pg_catalog.int4, $4::pg_catalog.interval, " \
	"$5::pg_catalog.interval) AS c",
	[STMT_CLAIM_ONE_020] =
	"SELECT " CLAIM_COLUMNS_020 " FROM %s.jobq_claim($1::pg_catalog.text, "
	"$2::pg_catalog.text, $3::pg_catalog.int4, $4::pg_catalog.interval, " \
	"$5::pg_catalog.interval) AS c",
	[STMT_CLAIM_ANY_020] =
	"SELECT " CLAIM_COLUMNS_020 " FROM %s.jobq_claim($1::pg_catalog.text[], "
	"$2::pg_catalog.text, $3::pg_catalog.int4, $4::pg_catalog.interval, " \
	"$5::pg_catalog.interval) AS c",
	[STMT_DEP_RESULTS] =
	"SELECT %s.jobq_dep_results($1::pg_catalog.int8, $2::pg_catalog.uuid)",
	/* in the order of the arrays; one jobq_dep_results per job */
	[STMT_DEP_RESULTS_MANY] =
	"SELECT %s.jobq_dep_results(d.id, d.token) FROM ROWS FROM ("
	"pg_catalog.unnest($1::pg_catalog.int8[]), pg_catalog.unnest($2::pg_catalog.uuid[])) "
	"WITH ORDINALITY AS d(id, token, n) ORDER BY d.n",
	[STMT_COMPLETE] =
	"SELECT %s.jobq_complete($1::pg_catalog.int8, $2::pg_catalog.uuid, "
	"$3::pg_catalog.jsonb)",
	[STMT_COMPLETE_BATCH] =
	"SELECT a FROM %s.jobq_complete_batch($1::pg_catalog.int8[], "
	"$2::pg_catalog.uuid[], $3::pg_catalog.jsonb[]) AS a",
	[STMT_COMPLETE_BATCH_POS] =
	"SELECT p FROM %s.jobq_complete_batch_positions($1::pg_catalog.int8[], "
	"$2::pg_catalog.uuid[], $3::pg_catalog.jsonb[]) AS p",
	[STMT_FAIL] =
	"SELECT %s.jobq_fail($1::pg_catalog.int8, $2::pg_catalog.uuid, "
	"$3::pg_catalog.text, $4::pg_catalog.interval, $5::pg_catalog.bool)",
	[STMT_EXTEND] =
	"SELECT %s.jobq_extend($1::pg_catalog.int8, $2::pg_catalog.uuid, "
	"$3::pg_catalog.interval)",
	[STMT_RELEASE] =
	"SELECT %s.jobq_release($1::pg_catalog.int8, $2::pg_catalog.uuid)",
	[STMT_SWEEP] =
	"SELECT s.requeued, s.dead, s.purged FROM %s.jobq_sweep($1::pg_catalog.text, "
	"$2::pg_catalog.int4) AS s",
	[STMT_STATS] =
	"SELECT * FROM %s.jobq_stats($1::pg_catalog.text)",
	[STMT_JOB] =
	"SELECT * FROM %s.jobq_job($1::pg_catalog.int8)",
	[STMT_LIST] =
	"SELECT * FROM %s.jobq_list($1::pg_catalog.text, $2::pg_catalog.text, "
	"$3::pg_catalog.int4)",
	[STMT_LIST_PAGE] =
	"SELECT * FROM %s.jobq_list($1::pg_catalog.text, $2::pg_catalog.text, "
	"$3::pg_catalog.int4, $4::pg_catalog.text, $5::pg_catalog.jsonb)",
	[STMT_QUEUES] =
	"SELECT * FROM %s.jobq_queues()",
	[STMT_RETRY] =
	"SELECT %s.jobq_retry($1::pg_catalog.int8)",
	[STMT_RETRY_QUEUE] =
	"SELECT %s.jobq_retry($1::pg_catalog.text)",
	[STMT_CANCEL] =
	"SELECT %s.jobq_cancel($1::pg_catalog.int8)",
	[STMT_PURGE] =
	"SELECT %s.jobq_purge($1::pg_catalog.text, $2::pg_catalog.text, "
	"$3::pg_catalog.interval)",
	[STMT_PAUSE] =
	"SELECT %s.jobq_pause($1::pg_catalog.text)",
	[STMT_RESUME] =
	"SELECT %s.jobq_resume($1::pg_catalog.text)",
	[STMT_DROP_QUEUE] =
	"SELECT %s.jobq_drop_queue($1::pg_catalog.text, $2::pg_catalog.bool)",
	[STMT_CREATE_QUEUE] =
	"SELECT %s.jobq_create_queue($1::pg_catalog.text, $2::pg_catalog.interval, "
	"$3::pg_catalog.int4, $4::pg_catalog.interval, $5::pg_catalog.interval, "
	"$6::pg_catalog.interval, $7::pg_catalog.interval, $8::pg_catalog.bool)",
	[STMT_ALTER_QUEUE] =
	"SELECT %s.jobq_alter_queue($1::pg_catalog.text, $2::pg_catalog.interval, "
	"$3::pg_catalog.int4, $4::pg_catalog.interval, $5::pg_catalog.interval, "
	"$6::pg_catalog.interval, $7::pg_catalog.interval, $8::pg_catalog.bool)",
	[STMT_CREATE_QUEUE_020] = "SELECT %s.jobq_create_queue" QUEUE_SETTINGS_PARAMS_020,
	[STMT_ALTER_QUEUE_020] = "SELECT %s.jobq_alter_queue" QUEUE_SETTINGS_PARAMS_020,
	[STMT_WAIT_STATS] =
	"SELECT w.preloaded, w.waiting, w.wakeups FROM %s.jobq_wait_stats() AS w",
	[STMT_SERVER_VERSION] =
	"SELECT v.sql_version, v.library_version FROM %s.jobq_server_version() AS v",
	[STMT_AWAIT] =
	"CALL %s.jobq_await($1::pg_catalog.int8, $2::pg_catalog.interval, $3::pg_catalog.text, "
	"$4::pg_catalog.bool)",
	/* NULL since, until, bucket: the SQL function's defaults */
	[STMT_METRICS] =
	"SELECT * FROM %s.jobq_metrics($1::pg_catalog.text, "
	"COALESCE($2::pg_catalog.timestamptz, "
	"pg_catalog.now() OPERATOR(pg_catalog.-) '1 hour'::pg_catalog.interval), "
	"COALESCE($3::pg_catalog.timestamptz, pg_catalog.now()), "
	"COALESCE($4::pg_catalog.interval, '1 minute'::pg_catalog.interval))",
	[STMT_STAT_JOBQ] =
	"SELECT * FROM %s.pg_stat_jobq "
	"WHERE $1::pg_catalog.text IS NULL OR queue OPERATOR(pg_catalog.=) $1",
	[STMT_CRON_TICK] =
	"SELECT t.schedule, t.tick, t.job_id, t.status FROM %s.jobq_cron_tick($1::pg_catalog.int4) AS t",
	[STMT_WORKER_REGISTER] =
	"SELECT r.worker_id, (pg_catalog.date_part('epoch', r.heartbeat_every) "
	"OPERATOR(pg_catalog.*) 1000)::pg_catalog.int8 "
	"FROM %s.jobq_worker_register($1::pg_catalog.text, $2::pg_catalog.text, "
	"$3::pg_catalog.int4, $4::pg_catalog.text[], $5::pg_catalog.int4, $6::pg_catalog.text, "
	"$7::pg_catalog.jsonb, $8::pg_catalog.interval, $9::pg_catalog.uuid) AS r",
	[STMT_WORKER_HEARTBEAT] =
	"SELECT %s.jobq_worker_heartbeat($1::pg_catalog.uuid, $2::pg_catalog.int4, "
	"$3::pg_catalog.text, $4::pg_catalog.jsonb)",
	[STMT_WORKER_DEREGISTER] =
	"SELECT %s.jobq_worker_deregister($1::pg_catalog.uuid)",
	[STMT_WORKERS] =
	"SELECT * FROM %s.jobq_workers()",
	[STMT_QUEUE_CONSUMERS] =
	"SELECT * FROM %s.jobq_queue_consumers()",
	[STMT_WORKER_SIGNAL] =
	"SELECT %s.jobq_worker_signal($1::pg_catalog.text, $2::pg_catalog.text)",
	[STMT_HEALTH] =
	"SELECT * FROM %s.jobq_health()",
	[STMT_AUDIT] =
	"SELECT * FROM %s.jobq_audit($1::pg_catalog.text, NULL, $2::pg_catalog.int4, "
	"$3::pg_catalog.int8)",
	[STMT_RETRY_WHERE] =
	"SELECT w.affected, w.more, w.next_cursor FROM %s.jobq_retry_where($1::pg_catalog.text, "
	"$2::pg_catalog.text, $3::pg_catalog.jsonb, $4::pg_catalog.int4, $5::pg_catalog.text) AS w",
	[STMT_CANCEL_WHERE] =
	"SELECT w.affected, w.more, w.next_cursor FROM %s.jobq_cancel_where($1::pg_catalog.text, "
	"$2::pg_catalog.text, $3::pg_catalog.jsonb, $4::pg_catalog.int4, $5::pg_catalog.text) AS w",
	[STMT_DELETE_WHERE] =
	"SELECT w.affected, w.more, w.next_cursor FROM %s.jobq_delete_where($1::pg_catalog.text, "
	"$2::pg_catalog.text, $3::pg_catalog.jsonb, $4::pg_catalog.int4, $5::pg_catalog.text) AS w",
	[STMT_CHECKPOINT] =
	"SELECT %s.jobq_checkpoint($1::pg_catalog.int8, $2::pg_catalog.uuid, $3::pg_catalog.jsonb)",
	[STMT_CHECKPOINT_READ] =
	"SELECT %s.jobq_checkpoint_read($1::pg_catalog.int8, $2::pg_catalog.uuid)",
	[STMT_GROUPS] =
	"SELECT * FROM %s.jobq_groups($1::pg_catalog.text, $2::pg_catalog.bool, "
	"$3::pg_catalog.int4, $4::pg_catalog.text)",
	[STMT_FAIL_RATE_LIMITED] =
	"SELECT %s.jobq_fail($1::pg_catalog.int8, $2::pg_catalog.uuid, "
	"$3::pg_catalog.text, rate_limit_for => $4::pg_catalog.interval)",
	[STMT_RUN_NOW_WHERE] =
	"SELECT w.affected, w.more, w.next_cursor FROM %s.jobq_run_now_where($1::pg_catalog.text, "
	"$2::pg_catalog.text, $3::pg_catalog.jsonb, $4::pg_catalog.int4, $5::pg_catalog.text) AS w",
};

/*
 * The server SQL releases this library works with (doc/upgrading.md,
 * "Compatibility"): the previous release's and this one's, and later ones
 * of the same major version, which only append (new functions, parameters
 * at the end with defaults, result columns that the statements above do
 * not read).  A later major version may change what is there: refused.
 */
#define JOBQ_SERVER_SQL_OLDEST "0.1.0"	/* the release before this one */
#define JOBQ_SERVER_SQL_NO_VERSION 100	/* 0.1.0: jobq_server_version()
										 * came with 0.2.0 */

/*
 * reset_session_state: forget what lived in the previous server session.
 */
static void
reset_session_state(JobqConn *conn)
{
	size_t		i;

	memset(conn->prepared, 0, sizeof(conn->prepared));
	conn->busy = 0;
	conn->interrupted = 0;
	conn->server_sql = 0;
	conn->call_deadline = 0;
	for (i = 0; i < conn->nchannels; i++)
		free(conn->channels[i]);
	conn->nchannels = 0;
}

/*
 * build_statements: quote the schema and render every statement text.
 * Needs a live PGconn for PQescapeIdentifier.  Returns JOBQ_OK or JOBQ_ERR
 * (out of memory).  Done once: the schema never changes.
 */
static int
build_statements(JobqConn *conn)
{
	int			i;

	if (conn->qschema != NULL)
		return JOBQ_OK;
	{
		char	   *q = PQescapeIdentifier(conn->pg, conn->schema,
										   strlen(conn->schema));

		if (q == NULL)
		{
			jobq_set_error(conn, JOBQ_ERR_OOM, "out of memory");
			return JOBQ_ERR;
		}
		conn->qschema = jobq_strdup(q);
		PQfreemem(q);
		if (conn->qschema == NULL)
		{
			jobq_set_error(conn, JOBQ_ERR_OOM, "out of memory");
			return JOBQ_ERR;
		}
	}
	for (i = 0; i < STMT__COUNT; i++)
	{
		size_t		size = strlen(stmt_templates[i]) + strlen(conn->qschema) + 1;

		conn->sql[i] = malloc(size);
		if (conn->sql[i] == NULL)
		{
			jobq_set_error(conn, JOBQ_ERR_OOM, "out of memory");
			return JOBQ_ERR;
		}
		snprintf(conn->sql[i], size, stmt_templates[i], conn->qschema);
	}
	return JOBQ_OK;
}

/*
 * discard_notice: libpq prints server notices (and the FATAL of a killed
 * session) to stderr by default; a library must not write to its host
 * program's stderr, and every condition that matters reaches the caller
 * as an error class instead.
 */
static void
discard_notice(void *arg, const char *message)
{
	(void) arg;
	(void) message;
}

/* version_num: "X.Y.Z" as X*10000+Y*100+Z, or -1 when it is not that */
static int
version_num(const char *v)
{
	int			major,
				minor,
				patch;
	char		rest;

	if (v == NULL ||
		sscanf(v, "%d.%d.%d%c", &major, &minor, &patch, &rest) != 3 ||
		major < 0 || minor < 0 || minor > 99 || patch < 0 || patch > 99)
		return -1;
	return major * 10000 + minor * 100 + patch;
}

/*
 * check_server_version: which release of jobq's SQL the server runs, read
 * once per session with jobq_server_version(); JOBQ_ERR_VERSION for one
 * this library does not work with.  A server without the function (42883;
 * 3F000 when the API schema is missing altogether) predates it and is
 * taken as 0.1.0: a missing schema or extension is then reported by the
 * first call, as before.  A role that may not execute it (42501) connects
 * with the version unknown, and its calls get their own 42501.
 */
static int
check_server_version(JobqConn *conn)
{
	PGresult   *res = NULL;
	const char *state;
	const char *sql;
	int			num;

	if (!PQsendQueryParams(conn->pg, conn->sql[STMT_SERVER_VERSION],
						   0, NULL, NULL, NULL, NULL, 0))
	{
		jobq_set_result_error(conn, NULL);
		return JOBQ_ERR;
	}
	if (jobq_get_result(conn, 0, &res) != JOBQ_OK)
		return JOBQ_ERR;
	state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	if (state != NULL && (strcmp(state, "42883") == 0 ||
						  strcmp(state, "3F000") == 0 ||
						  strcmp(state, "42501") == 0))
	{
		conn->server_sql = strcmp(state, "42501") == 0 ? 0 : JOBQ_SERVER_SQL_NO_VERSION;
		PQclear(res);
		return JOBQ_OK;
	}
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK ||
		PQntuples(res) != 1 || PQnfields(res) != 2)
	{
		jobq_note_failure(conn, res);
		return JOBQ_ERR;
	}
	sql = PQgetisnull(res, 0, 0) ? "(none)" : PQgetvalue(res, 0, 0);
	num = version_num(sql);
	if (num < 0)
		jobq_set_error(conn, JOBQ_ERR_VERSION,
					   "the server's jobq SQL reports version \"%s\", which libjobq "
					   "%s cannot read", sql, JOBQ_VERSION_STRING);
	else if (num < version_num(JOBQ_SERVER_SQL_OLDEST))
		jobq_set_error(conn, JOBQ_ERR_VERSION,
					   "the server's jobq SQL is version %s (library %s), older "
					   "than %s, the oldest libjobq %s works with: run ALTER "
					   "EXTENSION jobq UPDATE in this database",
					   sql, PQgetvalue(res, 0, 1), JOBQ_SERVER_SQL_OLDEST,
					   JOBQ_VERSION_STRING);
	else if (num / 10000 > JOBQ_VERSION_MAJOR)
		jobq_set_error(conn, JOBQ_ERR_VERSION,
					   "the server's jobq SQL is version %s (library %s), a later "
					   "major version than libjobq %s works with: use a libjobq "
					   "of release %d or later",
					   sql, PQgetvalue(res, 0, 1), JOBQ_VERSION_STRING, num / 10000);
	else
	{
		conn->server_sql = num;
		PQclear(res);
		return JOBQ_OK;
	}
	PQclear(res);
	return JOBQ_ERR;
}

/*
 * open_session: (re)connect conn->pg with the stored conninfo.
 *
 * client_encoding is forced to UTF8 by listing it after the conninfo,
 * which libpq lets override anything the conninfo said: every byte we
 * send or read is then UTF-8 whatever the server or environment default,
 * which closes the multibyte-escaping class of bugs (CVE-2006-2313).
 */
static int
open_session(JobqConn *conn)
{
	const char **keywords;
	const char **values;
	size_t		ndefs = 0;
	size_t		k = 0;
	size_t		i;

	if (conn->pg != NULL)
	{
		PQfinish(conn->pg);
		conn->pg = NULL;
	}
	reset_session_state(conn);

	/*
	 * libpq reads the arrays in order and the last value of a keyword wins:
	 * our fallback name and TCP settings, then the caller's defaults, then
	 * the conninfo, then the one setting nobody may change.
	 */
	while (conn->defkeys != NULL && conn->defkeys[ndefs] != NULL)
		ndefs++;
	keywords = calloc(ndefs + NTCP_DEFAULTS + 4, sizeof(char *));
	values = calloc(ndefs + NTCP_DEFAULTS + 4, sizeof(char *));
	if (keywords == NULL || values == NULL)
	{
		free(keywords);
		free(values);
		jobq_set_error(conn, JOBQ_ERR_OOM, "out of memory");
		return JOBQ_ERR;
	}
	keywords[k] = "fallback_application_name";
	values[k++] = "libjobq";
	for (i = 0; i < NTCP_DEFAULTS; i++)
	{
		keywords[k] = tcp_default_keys[i];
		values[k++] = tcp_default_vals[i];
	}
	for (i = 0; i < ndefs; i++)
	{
		keywords[k] = conn->defkeys[i];
		values[k++] = conn->defvals[i];
	}
	if (conn->conninfo != NULL && conn->conninfo[0] != '\0')
	{
		keywords[k] = "dbname";
		values[k++] = conn->conninfo;
	}
	keywords[k] = "client_encoding";
	values[k++] = "UTF8";
	keywords[k] = NULL;
	values[k] = NULL;

	conn->pg = PQconnectdbParams(keywords, values, 1);
	free(keywords);
	free(values);
	if (conn->pg == NULL)
	{
		jobq_set_error(conn, JOBQ_ERR_OOM, "out of memory");
		return JOBQ_ERR;
	}
	if (PQstatus(conn->pg) != CONNECTION_OK)
	{
		jobq_set_error(conn, JOBQ_ERR_CONNECTION, "%s", PQerrorMessage(conn->pg));
		return JOBQ_ERR;
	}
	PQsetNoticeProcessor(conn->pg, discard_notice, NULL);
	if (strcmp(pg_encoding_to_char(PQclientEncoding(conn->pg)), "UTF8") != 0)
	{
		jobq_set_error(conn, JOBQ_ERR_CONNECTION,
					   "could not set client_encoding to UTF8 (got %s)",
					   pg_encoding_to_char(PQclientEncoding(conn->pg)));
		PQfinish(conn->pg);
		conn->pg = NULL;
		return JOBQ_ERR;
	}
	if (build_statements(conn) != JOBQ_OK)
		return JOBQ_ERR;
	if (check_server_version(conn) != JOBQ_OK)
	{
		PQfinish(conn->pg);
		conn->pg = NULL;
		return JOBQ_ERR;
	}
	return JOBQ_OK;
}

JobqConn *
jobq_connect(const char *conninfo)
{
	return jobq_connect_ex(conninfo, NULL, JOBQ_CONNECT_DEFAULT);
}

/*
 * jobq_connect_ex: see jobq-client.h.  The handle is returned even when
 * the schema is invalid or the connection fails, so that the caller can
 * read the error; only an allocation failure yields NULL.
 */
JobqConn *
jobq_connect_ex(const char *conninfo, const char *schema, unsigned flags)
{
	return jobq_connect_params(conninfo, schema, flags, NULL, NULL);
}

/* copy_strv: a copy of a NULL-terminated array of n strings, or NULL */
static char **
copy_strv(const char *const *v, size_t n)
{
	char	  **c = calloc(n + 1, sizeof(char *));
	size_t		i;

	if (c == NULL)
		return NULL;
	for (i = 0; i < n; i++)
		if ((c[i] = jobq_strdup(v[i] ? v[i] : "")) == NULL)
		{
			while (i-- > 0)
				free(c[i]);
			free(c);
			return NULL;
		}
	return c;
}

static void
free_strv(char **v)
{
	size_t		i;

	for (i = 0; v != NULL && v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

/*
 * jobq_connect_params: see jobq-client.h.  jobq_connect_ex is this with
 * no defaults.
 */
JobqConn *
jobq_connect_params(const char *conninfo, const char *schema, unsigned flags,
					const char *const *keywords, const char *const *values)
{
	JobqConn   *conn = calloc(1, sizeof(JobqConn));
	size_t		n = 0;

	if (conn == NULL)
		return NULL;
	conn->flags = flags;
	conn->call_timeout_ms = JOBQ_CALL_TIMEOUT_DEFAULT_MS;
	conn->schema = jobq_strdup(schema ? schema : "public");
	while (keywords != NULL && values != NULL && keywords[n] != NULL)
		n++;
	if (conn->schema == NULL ||
		(conninfo != NULL && (conn->conninfo = jobq_strdup(conninfo)) == NULL) ||
		(n > 0 && ((conn->defkeys = copy_strv(keywords, n)) == NULL ||
				   (conn->defvals = copy_strv(values, n)) == NULL)))
	{
		jobq_disconnect(conn);
		return NULL;
	}
	jobq_clear_error(conn);
	if (!jobq_valid_schema_name(conn->schema))
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT,
					   "invalid schema name: only lowercase letters, digits and "
					   "single inner '_' or '-' are allowed, at most %d bytes",
					   JOBQ_SCHEMA_NAME_MAX);
		return conn;
	}
	if (open_session(conn) != JOBQ_OK && conn->err == JOBQ_ERR_OOM &&
		conn->pg == NULL)
	{
		/* PQconnectdbParams itself could not allocate */
		jobq_disconnect(conn);
		return NULL;
	}
	return conn;
}

void
jobq_disconnect(JobqConn *conn)
{
	int			i;

	if (conn == NULL)
		return;
	if (conn->pg != NULL)
		PQfinish(conn->pg);
	conn->pg = NULL;
	reset_session_state(conn);
	free(conn->channels);
	for (i = 0; i < STMT__COUNT; i++)
		free(conn->sql[i]);
	free(conn->qschema);
	free(conn->schema);
	free(conn->conninfo);
	free_strv(conn->defkeys);
	free_strv(conn->defvals);
	free(conn);
}

/*
 * jobq_reconnect: a fresh session with the same parameters.  PQreset is
 * not used because it keeps the PGconn of a connection that may have been
 * half-open; a new PQconnectdbParams starts from a clean slate.
 */
int
jobq_reconnect(JobqConn *conn)
{
	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	if (!jobq_valid_schema_name(conn->schema))
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT, "invalid schema name");
		return JOBQ_ERR;
	}
	return open_session(conn);
}

int
jobq_is_connected(const JobqConn *conn)
{
	return conn != NULL && conn->pg != NULL &&
		PQstatus(conn->pg) == CONNECTION_OK && conn->qschema != NULL;
}

const char *
jobq_schema(const JobqConn *conn)
{
	return conn ? conn->schema : NULL;
}

int
jobq_socket(const JobqConn *conn)
{
	return (conn && conn->pg) ? PQsocket(conn->pg) : -1;
}

struct pg_conn *
jobq_pgconn(JobqConn *conn)
{
	return conn ? conn->pg : NULL;
}

/* jobq_set_call_timeout: see jobq-client.h */
int
jobq_set_call_timeout(JobqConn *conn, int timeout_ms)
{
	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	if (timeout_ms < 0)
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT,
					   "call timeout must be 0 (none) or a positive number of "
					   "milliseconds, not %d", timeout_ms);
		return JOBQ_ERR;
	}
	conn->call_timeout_ms = timeout_ms;
	return JOBQ_OK;
}

/* jobq_now_ms: monotonic milliseconds, immune to wall-clock steps */
int64_t
jobq_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * drop_session: close a session that stopped answering.  Its state is
 * unknown (a statement may or may not have run), so it cannot be used
 * again; jobq_reconnect opens the next one.  NB: non-blocking first, so
 * that PQfinish's goodbye message cannot block on a peer that reads
 * nothing.
 */
static void
drop_session(JobqConn *conn)
{
	if (conn->pg != NULL)
	{
		(void) PQsetnonblocking(conn->pg, 1);
		PQfinish(conn->pg);
		conn->pg = NULL;
	}
	reset_session_state(conn);
}

/*
 * jobq_call_started: start the clock of a call whose request was just
 * sent; extra_ms is how long the server may rightly take on top of the
 * call timeout (a claim that waits for work).  No deadline when the
 * timeout is 0.
 */
void
jobq_call_started(JobqConn *conn, int extra_ms)
{
	conn->call_deadline = conn->call_timeout_ms > 0 ?
		jobq_now_ms() + conn->call_timeout_ms + (extra_ms > 0 ? extra_ms : 0) : 0;
}

/*
 * jobq_call_expired: the answer of the call in flight is overdue.  The
 * session is closed and the error set (JOBQ_ERR_CONNECTION): returns 1;
 * else 0.
 */
int
jobq_call_expired(JobqConn *conn)
{
	int			ms = conn->call_timeout_ms;

	if (conn->call_deadline == 0 || jobq_now_ms() < conn->call_deadline)
		return 0;
	drop_session(conn);
	jobq_set_error(conn, JOBQ_ERR_CONNECTION,
				   "no answer from the server within the call timeout (%d ms); "
				   "the connection was closed", ms);
	return 1;
}

/*
 * jobq_await_answer: wait until the answer to what was sent is in (libpq would
 * not block in PQgetResult), at most until the call's deadline
 * (jobq_call_started).  Returns JOBQ_OK, also when the connection broke
 * (PQgetResult then reports it); JOBQ_ERR when the deadline passed: the
 * session is closed and the error set.
 */
int
jobq_await_answer(JobqConn *conn)
{
	while (PQisBusy(conn->pg))
	{
		struct pollfd pfd;
		int			left = -1;
		int			r;

		if (conn->call_deadline != 0)
		{
			int64_t		ms = conn->call_deadline - jobq_now_ms();

			if (ms <= 0)
				return jobq_call_expired(conn) ? JOBQ_ERR : JOBQ_OK;
			left = ms > 60000 ? 60000 : (int) ms;
		}
		pfd.fd = PQsocket(conn->pg);
		pfd.events = POLLIN;
		pfd.revents = 0;
		if (pfd.fd < 0)
			return JOBQ_OK;
		r = poll(&pfd, 1, left);
		if (r < 0 && errno != EINTR)
			return JOBQ_OK;		/* PQgetResult says what is wrong */
		if (r > 0 && !PQconsumeInput(conn->pg))
			return JOBQ_OK;
	}
	return JOBQ_OK;
}

/*
 * jobq_get_result: the first result of the statement just sent, within the
 * call timeout; the rest are read and dropped, so that the connection is
 * free again.  extra_ms as for jobq_call_started.  JOBQ_OK with *res
 * (NULL only when libpq had none: a broken connection); JOBQ_ERR after a
 * timeout (error set, session closed, *res NULL).
 */
int
jobq_get_result(JobqConn *conn, int extra_ms, PGresult **res)
{
	PGresult   *extra;

	*res = NULL;
	jobq_call_started(conn, extra_ms);
	if (jobq_await_answer(conn) != JOBQ_OK)
		return JOBQ_ERR;
	*res = PQgetResult(conn->pg);
	for (;;)
	{
		if (jobq_await_answer(conn) != JOBQ_OK)
		{
			PQclear(*res);
			*res = NULL;
			return JOBQ_ERR;
		}
		if ((extra = PQgetResult(conn->pg)) == NULL)
			break;
		PQclear(extra);
	}
	conn->call_deadline = 0;
	return JOBQ_OK;
}

/*
 * jobq_ensure_connected: JOBQ_OK when calls can be sent.  Does not
 * reconnect on its own: a reconnect silently drops the session (its
 * LISTENs, an open transaction of the caller), so it is the caller's
 * decision (jobq_reconnect).
 */
int
jobq_ensure_connected(JobqConn *conn)
{
	if (conn->busy)
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT,
					   "a claim started with jobq_claim_start is in progress; "
					   "call jobq_claim_finish first");
		return JOBQ_ERR;
	}
	if (conn->pg == NULL || PQstatus(conn->pg) != CONNECTION_OK ||
		conn->qschema == NULL)
	{
		jobq_set_error(conn, JOBQ_ERR_CONNECTION,
					   "not connected to the server; call jobq_reconnect()");
		return JOBQ_ERR;
	}
	return JOBQ_OK;
}

/*
 * jobq_require_sql: JOBQ_OK when the server's jobq SQL is release min
 * (JOBQ_SQL_*) or later, or when its release is unknown (a role that may
 * not read it: the call is tried, and its own error says more); else
 * JOBQ_ERR_VERSION saying that what needs it, with nothing sent.
 * Connects first when needed.
 */
int
jobq_require_sql(JobqConn *conn, int min, const char *what)
{
	if (jobq_ensure_connected(conn) != JOBQ_OK)
		return JOBQ_ERR;
	if (conn->server_sql == 0 || conn->server_sql >= min)
		return JOBQ_OK;
	jobq_set_error(conn, JOBQ_ERR_VERSION,
				   "%s needs the server's jobq SQL %d.%d.%d or later: run "
				   "ALTER EXTENSION jobq UPDATE in this database",
				   what, min / 10000, min / 100 % 100, min % 100);
	return JOBQ_ERR;
}

/*
 * jobq_prepare: prepare stmt in this session unless done already.
 * Returns JOBQ_OK or JOBQ_ERR with the error set.
 */
int
jobq_prepare(JobqConn *conn, JobqStmt stmt)
{
	char		name[32];
	PGresult   *res;

	if (conn->prepared[stmt] || (conn->flags & JOBQ_CONNECT_NO_PREPARE))
		return JOBQ_OK;
	snprintf(name, sizeof(name), "jobq_%d", (int) stmt);
	if (!PQsendPrepare(conn->pg, name, conn->sql[stmt], 0, NULL))
	{
		jobq_set_result_error(conn, NULL);
		return JOBQ_ERR;
	}
	if (jobq_get_result(conn, 0, &res) != JOBQ_OK)
		return JOBQ_ERR;
	if (res == NULL || PQresultStatus(res) != PGRES_COMMAND_OK)
	{
		jobq_set_result_error(conn, res);
		PQclear(res);
		return JOBQ_ERR;
	}
	PQclear(res);
	conn->prepared[stmt] = 1;
	return JOBQ_OK;
}

/*
 * jobq_send: send stmt (asynchronously, for pipeline mode) with text
 * parameters.  Statements must have been prepared before entering the
 * pipeline.  Returns JOBQ_OK or JOBQ_ERR.
 */
int
jobq_send(JobqConn *conn, JobqStmt stmt, int nparams,
		  const char *const *values)
{
	int			ok;

	if (conn->flags & JOBQ_CONNECT_NO_PREPARE)
		ok = PQsendQueryParams(conn->pg, conn->sql[stmt], nparams, NULL,
							   values, NULL, NULL, 0);
	else
	{
		char		name[32];

		snprintf(name, sizeof(name), "jobq_%d", (int) stmt);
		ok = PQsendQueryPrepared(conn->pg, name, nparams, values, NULL, NULL, 0);
	}
	if (!ok)
	{
		jobq_set_result_error(conn, NULL);
		return JOBQ_ERR;
	}
	return JOBQ_OK;
}

/*
 * jobq_exec: run stmt with text parameters (all values NUL-terminated;
 * NULL = SQL NULL) and return its result, which the caller PQclears.
 * expect_tuples: 1 = the statement returns rows (every jobq statement
 * does, as SELECT).  On failure returns NULL with the error set, and the
 * connection is checked so that a lost one is reported as such.
 */
PGresult *
jobq_exec(JobqConn *conn, JobqStmt stmt, int nparams,
		  const char *const *values, int expect_tuples)
{
	return jobq_exec_within(conn, stmt, nparams, values, expect_tuples, 0);
}

/*
 * jobq_exec_within: jobq_exec for a statement that may rightly take
 * extra_ms longer than the call timeout (a claim that waits for work).
 */
PGresult *
jobq_exec_within(JobqConn *conn, JobqStmt stmt, int nparams,
				 const char *const *values, int expect_tuples, int extra_ms)
{
	PGresult   *res;

	if (jobq_ensure_connected(conn) != JOBQ_OK ||
		jobq_prepare(conn, stmt) != JOBQ_OK ||
		jobq_send(conn, stmt, nparams, values) != JOBQ_OK ||
		jobq_get_result(conn, extra_ms, &res) != JOBQ_OK)
		return NULL;
	if (res == NULL ||
		PQresultStatus(res) != (expect_tuples ? PGRES_TUPLES_OK : PGRES_COMMAND_OK))
	{
		jobq_note_failure(conn, res);
		return NULL;
	}
	return res;
}

/*
 * jobq_note_failure: record the error of a failed result and free it.
 *
 * NB: a prepared statement can fail with 26000 (it vanished: a pooler
 * moved us to another backend, or someone ran DEALLOCATE ALL); forget the
 * flags so the next call prepares again instead of failing forever.
 */
void
jobq_note_failure(JobqConn *conn, PGresult *res)
{
	const char *state;

	jobq_set_result_error(conn, res);
	state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	if (state != NULL && strcmp(state, "26000") == 0)
		memset(conn->prepared, 0, sizeof(conn->prepared));
	if (res != NULL && (PQresultStatus(res) == PGRES_TUPLES_OK ||
						PQresultStatus(res) == PGRES_COMMAND_OK))
		jobq_set_error(conn, JOBQ_ERR_PROTOCOL,
					   "unexpected result from the server");
	PQclear(res);
}
