/*-------------------------------------------------------------------------
 *
 * db.c
 *	  jobq-worker's database side: one libpq connection, the SQL API calls
 *	  the worker makes, and what to do when they fail.
 *
 * Every call is a single statement in autocommit mode, so no transaction
 * is ever open while a handler runs, and the connection is free between
 * calls (PgBouncer transaction mode works with --no-listen).  Statements
 * go through PQexecParams: parameters are never pasted into SQL, and no
 * named prepared statement or other session state has to survive a
 * reconnect or a pooler.
 *
 * Errors are classified (RELIABILITY.md §3):
 *	DB_CONN		the connection is gone or points at the wrong node
 *				(08*, 57P01..57P03, 25006, or libpq lost the socket): the
 *				connection is dropped and the main loop reconnects with
 *				backoff; acks wait and are sent after the reconnect
 *	DB_ERROR	the statement itself failed (22*, 42*, ...): retrying the
 *				same call cannot help
 *
 * The lease is never measured with the client's clock: claim and extend
 * return locked_until - clock_timestamp() from the server, and the worker
 * counts that many seconds on its monotonic clock.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/worker/db.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"

/*
 * is_conn_error
 *		Does this failed result mean "reconnect"?  A NULL SQLSTATE is an
 *		error libpq made up itself, which is about the connection.
 */
static bool
is_conn_error(PGconn *conn, const PGresult *res)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

	if (PQstatus(conn) == CONNECTION_BAD || state == NULL)
		return true;
	return strncmp(state, "08", 2) == 0 ||
		strcmp(state, "57P01") == 0 ||	/* admin_shutdown, terminate_backend */
		strcmp(state, "57P02") == 0 ||	/* crash_shutdown */
		strcmp(state, "57P03") == 0 ||	/* cannot_connect_now */
		strcmp(state, "25006") == 0;	/* read_only_sql_transaction: standby */
}

static const char *
sqlstate(const PGresult *res)
{
	const char *s = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

	return s ? s : "";
}

/* one line of error text, from a result or else from the connection */
static const char *
errtext(Worker *w, const PGresult *res)
{
	static char msg[512];
	const char *m = res ? PQresultErrorMessage(res) : "";

	if (m == NULL || m[0] == '\0')
		m = w->conn ? PQerrorMessage(w->conn) : "no connection";
	snprintf(msg, sizeof(msg), "%s", m);
	for (char *p = msg; *p; p++)
		if (*p == '\n')
			*p = (p[1] ? ' ' : '\0');
	return msg;
}

/*
 * take_notifies
 *		Consume queued NOTIFYs; any of them means "claim now".  They carry
 *		no payload we would trust: a notification is only a hint.
 */
static bool
take_notifies(Worker *w)
{
	PGnotify   *n;
	bool		got = false;

	while (w->conn && (n = PQnotifies(w->conn)) != NULL)
	{
		got = true;
		PQfreemem(n);
	}
	if (got)
		w->want_claim = true;
	return got;
}

/*
 * run
 *		Execute one statement.  On success *res holds the result (caller
 *		clears it).  On failure *res holds the error result or NULL (caller
 *		clears it), and DB_CONN has already dropped the connection.
 */
static DbStatus
run(Worker *w, PGresult **res, const char *sql, int nparams,
	const char *const *values, ExecStatusType want)
{
	*res = NULL;
	if (w->conn == NULL)
		return DB_CONN;
	*res = PQexecParams(w->conn, sql, nparams, NULL, values, NULL, NULL, 0);
	take_notifies(w);
	if (*res != NULL && PQresultStatus(*res) == want)
		return DB_OK;
	if (is_conn_error(w->conn, *res))
	{
		wlog(w, "warning", "lost the database connection: %s", errtext(w, *res));
		db_disconnect(w);
		return DB_CONN;
	}
	return DB_ERROR;
}

/*
 * db_disconnect
 *		Drop the connection (if any) and schedule a reconnect.
 */
void
db_disconnect(Worker *w)
{
	if (w->conn)
		PQfinish(w->conn);
	w->conn = NULL;
	w->listening = false;
	w->reconnect_at = now_mono() + w->backoff;
}

/*
 * notice_to_log
 *		Server notices (and the FATAL a terminated backend sends while we are
 *		idle) go to our log instead of libpq's default of raw stderr.
 */
static void
notice_to_log(void *arg, const char *message)
{
	wlog((Worker *) arg, "notice", "%s", message);
}

/*
 * db_connect
 *		Open the connection, force UTF8 and LISTEN on "jobq.<queue>" for every
 *		queue (unless --no-listen).  On failure returns DB_CONN, logs why and
 *		doubles the reconnect backoff (0.5 s up to 30 s).
 */
DbStatus
db_connect(Worker *w)
{
	/* NB: order matters: keys after dbname override the conninfo's */
	const char *keys[] = {"fallback_application_name", "connect_timeout",
	"dbname", "client_encoding", NULL};
	const char *vals[] = {"jobq-worker", "10", w->conninfo, "UTF8", NULL};
	PGresult   *res;

	if (w->conn)
		return DB_OK;
	w->conn = PQconnectdbParams(keys, vals, 1);
	if (w->conn == NULL || PQstatus(w->conn) != CONNECTION_OK)
	{
		wlog(w, "warning", "could not connect to the database: %s",
			 w->conn ? errtext(w, NULL) : "out of memory");
		goto fail;
	}
	PQsetNoticeProcessor(w->conn, notice_to_log, w);

	for (int i = 0; w->listen && i < w->nqueues; i++)
	{
		char		chan[128];
		char	   *ident;
		char		sql[200];

		snprintf(chan, sizeof(chan), "jobq.%s", w->queues[i]);
		ident = PQescapeIdentifier(w->conn, chan, strlen(chan));
		if (ident == NULL)
		{
			wlog(w, "warning", "could not quote channel name: %s", errtext(w, NULL));
			goto fail;
		}
		snprintf(sql, sizeof(sql), "LISTEN %s", ident);
		PQfreemem(ident);
		res = PQexec(w->conn, sql);
		if (PQresultStatus(res) != PGRES_COMMAND_OK)
		{
			/* a standby cannot LISTEN: that is a wrong node too */
			wlog(w, "warning", "LISTEN failed: %s", errtext(w, res));
			PQclear(res);
			goto fail;
		}
		PQclear(res);
	}
	w->listening = w->listen;
	if (w->ever_connected)
		wlog(w, "info", "reconnected to the database");
	w->ever_connected = true;
	w->backoff = 0.5;
	/* anything may have been enqueued while we were away */
	w->want_claim = true;
	return DB_OK;

fail:
	if (w->conn)
		PQfinish(w->conn);
	w->conn = NULL;
	w->listening = false;
	w->reconnect_at = now_mono() + w->backoff;
	w->backoff = w->backoff * 2 > 30 ? 30 : w->backoff * 2;
	return DB_CONN;
}

/*
 * text_array
 *		The queue names as a text[] literal, each element double-quoted
 *		with " and \ escaped, so no name can change the array's shape.
 *		Caller frees.
 */
static char *
text_array(char **items, int n)
{
	size_t		len = 3;
	char	   *s,
			   *p;

	for (int i = 0; i < n; i++)
		len += 2 * strlen(items[i]) + 3;
	p = s = xmalloc(len);
	*p++ = '{';
	for (int i = 0; i < n; i++)
	{
		if (i)
			*p++ = ',';
		*p++ = '"';
		for (const char *c = items[i]; *c; c++)
		{
			if (*c == '"' || *c == '\\')
				*p++ = '\\';
			*p++ = *c;
		}
		*p++ = '"';
	}
	*p++ = '}';
	*p = '\0';
	return s;
}

/*
 * db_claim
 *		Claim up to max_jobs jobs from the worker's queues.  On DB_OK *jobs
 *		is a malloc'd array of *njobs jobs (possibly 0; caller frees the
 *		array and, through job_free, each job's fields).
 */
DbStatus
db_claim(Worker *w, int max_jobs, Job **jobs, int *njobs)
{
	static const char sql[] =
		"SELECT c.id, c.queue, c.payload, c.attempt, c.max_attempts, c.token,"
		" extract(epoch FROM c.locked_until - clock_timestamp())::float8"
		" FROM jobq_claim($1::text[], $2::text, $3::integer, $4::interval) c";
	char	   *arr = text_array(w->queues, w->nqueues);
	char		maxs[16],
				lease[64];
	const char *vals[4];
	PGresult   *res;
	DbStatus	st;
	double		now;

	*jobs = NULL;
	*njobs = 0;
	snprintf(maxs, sizeof(maxs), "%d", max_jobs);
	snprintf(lease, sizeof(lease), "%.3f seconds", w->lease);
	vals[0] = arr;
	vals[1] = w->worker_name;
	vals[2] = maxs;
	vals[3] = w->lease > 0 ? lease : NULL;
	st = run(w, &res, sql, 4, vals, PGRES_TUPLES_OK);
	free(arr);
	if (st == DB_ERROR)
		wlog(w, "error", "claim failed: %s", errtext(w, res));
	if (st != DB_OK)
	{
		PQclear(res);
		return st;
	}

	now = now_mono();
	*njobs = PQntuples(res);
	*jobs = xmalloc(sizeof(Job) * (*njobs ? *njobs : 1));
	for (int i = 0; i < *njobs; i++)
	{
		Job		   *j = &(*jobs)[i];
		double		left = atof(PQgetvalue(res, i, 6));

		memset(j, 0, sizeof(*j));
		j->id = atoll(PQgetvalue(res, i, 0));
		j->queue = xstrdup(PQgetvalue(res, i, 1));
		j->payload = xstrdup(PQgetvalue(res, i, 2));
		j->attempt = atoi(PQgetvalue(res, i, 3));
		j->max_attempts = atoi(PQgetvalue(res, i, 4));
		snprintf(j->token, sizeof(j->token), "%s", PQgetvalue(res, i, 5));
		j->claimed_at = now;
		j->lease_ends = now + left;
		if (w->heartbeat < 0)
			j->next_heartbeat = now + left / 3;
		else if (w->heartbeat > 0)
			j->next_heartbeat = now + w->heartbeat;
	}
	PQclear(res);
	return DB_OK;
}

/* replace bytes >= 0x80: the last resort for an error text that is not UTF-8 */
static char *
ascii_only(const char *s)
{
	char	   *c = xstrdup(s);

	for (char *p = c; *p; p++)
		if ((unsigned char) *p >= 0x80)
			*p = '?';
	return c;
}

/*
 * ack_complete
 *		jobq_complete with the handler's stdout: as jsonb when it parses
 *		(the server judges, 22P02 when not), else as a JSON string, else
 *		(not valid text, too large) as NULL with a warning: the handler did
 *		its work, and losing the result is better than running it again.
 */
static DbStatus
ack_complete(Worker *w, Ack *a, char *state, size_t statelen)
{
	static const char *const sqls[] = {
		"SELECT jobq_complete($1::bigint, $2::uuid, $3::jsonb)",
		"SELECT jobq_complete($1::bigint, $2::uuid, to_jsonb($3::text))",
		"SELECT jobq_complete($1::bigint, $2::uuid, NULL)",
	};
	char		id[32];
	const char *vals[3];
	PGresult   *res = NULL;
	DbStatus	st = DB_ERROR;

	snprintf(id, sizeof(id), "%lld", a->job.id);
	vals[0] = id;
	vals[1] = a->job.token;
	vals[2] = a->result;
	for (int i = a->result ? 0 : 2; i < 3; i++)
	{
		PQclear(res);
		st = run(w, &res, sqls[i], i < 2 ? 3 : 2, vals, PGRES_TUPLES_OK);
		if (st != DB_ERROR)
			break;
		if (i == 0 && strcmp(sqlstate(res), "22P02") == 0)
			continue;			/* not JSON: store it as a string */
		if (i < 2)
		{
			wlog(w, "warning", "job %lld: result not stored (%s), storing null",
				 a->job.id, errtext(w, res));
			i = 1;				/* next: NULL */
			continue;
		}
		wlog(w, "error", "job %lld: complete failed: %s", a->job.id, errtext(w, res));
	}
	if (st == DB_OK)
		snprintf(state, statelen, "%s",
				 strcmp(PQgetvalue(res, 0, 0), "t") == 0 ? "completed" : "stale");
	PQclear(res);
	return st;
}

/*
 * db_ack
 *		Report a finished job: complete, fail or release with its token.  On
 *		DB_OK, state is what the job became: completed, ready, dead,
 *		released, or stale (our token was no longer valid; nothing changed).
 *		DB_CONN: nothing is known; send again after reconnecting (all three
 *		calls are safe to repeat with the same token).  DB_ERROR: logged;
 *		the job comes back through its lease.
 */
DbStatus
db_ack(Worker *w, Ack *a, char *state, size_t statelen)
{
	char		id[32];
	const char *vals[3];
	PGresult   *res;
	DbStatus	st;

	if (a->kind == ACK_COMPLETE)
		return ack_complete(w, a, state, statelen);

	snprintf(id, sizeof(id), "%lld", a->job.id);
	vals[0] = id;
	vals[1] = a->job.token;
	if (a->kind == ACK_RELEASE)
	{
		st = run(w, &res, "SELECT jobq_release($1::bigint, $2::uuid)", 2, vals,
				 PGRES_TUPLES_OK);
		if (st == DB_OK)
			snprintf(state, statelen, "%s",
					 strcmp(PQgetvalue(res, 0, 0), "t") == 0 ? "released" : "stale");
		else if (st == DB_ERROR)
			wlog(w, "error", "job %lld: release failed: %s", a->job.id, errtext(w, res));
		PQclear(res);
		return st;
	}

	vals[2] = a->error;
	for (int i = 0; i < 2; i++)
	{
		char	   *clean = NULL;

		if (i == 1)
			vals[2] = clean = ascii_only(a->error);
		st = run(w, &res,
				 a->permanent
				 ? "SELECT jobq_fail($1::bigint, $2::uuid, $3::text, NULL, true)"
				 : "SELECT jobq_fail($1::bigint, $2::uuid, $3::text, NULL, false)",
				 3, vals, PGRES_TUPLES_OK);
		free(clean);
		if (st == DB_ERROR && i == 0 && strncmp(sqlstate(res), "22", 2) == 0)
		{
			PQclear(res);		/* most likely not UTF-8: try plain ASCII */
			continue;
		}
		break;
	}
	if (st == DB_OK)
		snprintf(state, statelen, "%s",
				 PQgetisnull(res, 0, 0) ? "stale" : PQgetvalue(res, 0, 0));
	else if (st == DB_ERROR)
		wlog(w, "error", "job %lld: fail failed: %s", a->job.id, errtext(w, res));
	PQclear(res);
	return st;
}

/*
 * db_extend
 *		Heartbeat: extend job's lease by --lease (or the queue's lease).
 *		On DB_OK, *stale says whether our token was still valid, and
 *		*lease_left the seconds until the new locked_until.
 */
DbStatus
db_extend(Worker *w, Job *job, bool *stale, double *lease_left)
{
	char		id[32],
				lease[64];
	const char *vals[3];
	PGresult   *res;
	DbStatus	st;

	snprintf(id, sizeof(id), "%lld", job->id);
	snprintf(lease, sizeof(lease), "%.3f seconds", w->lease);
	vals[0] = id;
	vals[1] = job->token;
	vals[2] = w->lease > 0 ? lease : NULL;
	st = run(w, &res,
			 "SELECT extract(epoch FROM jobq_extend($1::bigint, $2::uuid, $3::interval)"
			 " - clock_timestamp())::float8",
			 3, vals, PGRES_TUPLES_OK);
	if (st == DB_OK)
	{
		*stale = PQgetisnull(res, 0, 0);
		*lease_left = *stale ? 0 : atof(PQgetvalue(res, 0, 0));
	}
	else if (st == DB_ERROR)
		wlog(w, "error", "job %lld: extend failed: %s", job->id, errtext(w, res));
	PQclear(res);
	return st;
}

/*
 * db_release
 *		Give a claimed job back (ready, attempt returned).  *released is
 *		false when the token was stale.
 */
DbStatus
db_release(Worker *w, Job *job, bool *released)
{
	char		id[32];
	const char *vals[2];
	PGresult   *res;
	DbStatus	st;

	snprintf(id, sizeof(id), "%lld", job->id);
	vals[0] = id;
	vals[1] = job->token;
	st = run(w, &res, "SELECT jobq_release($1::bigint, $2::uuid)", 2, vals,
			 PGRES_TUPLES_OK);
	*released = st == DB_OK && strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	if (st == DB_ERROR)
		wlog(w, "error", "job %lld: release failed: %s", job->id, errtext(w, res));
	PQclear(res);
	return st;
}

/*
 * db_sweep
 *		Run jobq_sweep for each of our queues: expired leases go back to
 *		ready (or dead), old history is purged.  Any worker may do this,
 *		concurrently with others.  Logs what moved.
 */
DbStatus
db_sweep(Worker *w)
{
	for (int i = 0; i < w->nqueues; i++)
	{
		const char *vals[1] = {w->queues[i]};
		PGresult   *res;
		DbStatus	st;

		st = run(w, &res, "SELECT requeued, dead, purged FROM jobq_sweep($1::text)",
				 1, vals, PGRES_TUPLES_OK);
		if (st == DB_OK && PQntuples(res) == 1 &&
			(atoll(PQgetvalue(res, 0, 0)) || atoll(PQgetvalue(res, 0, 1)) ||
			 atoll(PQgetvalue(res, 0, 2))))
			wlog(w, "info", "sweep queue=%s requeued=%s dead=%s purged=%s", w->queues[i],
				 PQgetvalue(res, 0, 0), PQgetvalue(res, 0, 1), PQgetvalue(res, 0, 2));
		else if (st == DB_ERROR)
			wlog(w, "error", "sweep of queue %s failed: %s", w->queues[i], errtext(w, res));
		PQclear(res);
		if (st == DB_CONN)
			return st;
	}
	return DB_OK;
}

/*
 * db_consume
 *		The socket is readable: take the input, note NOTIFYs.  A closed
 *		socket (the backend was terminated, the server restarted) is found
 *		here while the worker is idle, not at the next statement.
 */
DbStatus
db_consume(Worker *w, bool *notified)
{
	*notified = false;
	if (w->conn == NULL)
		return DB_CONN;
	if (!PQconsumeInput(w->conn) || PQstatus(w->conn) == CONNECTION_BAD)
	{
		wlog(w, "warning", "lost the database connection: %s", errtext(w, NULL));
		db_disconnect(w);
		return DB_CONN;
	}
	*notified = take_notifies(w);
	return DB_OK;
}
