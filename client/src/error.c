/*-------------------------------------------------------------------------
 *
 * error.c
 *	  Error state, error classes, SQLSTATE classification and the
 *	  client-side argument checks of libjobq.
 *
 * Every public call starts by clearing the connection's error state and
 * ends with it describing that call, so jobq_status()/jobq_errmsg() always
 * speak about the last call.  Arguments are checked here before anything
 * is sent, with the same allow-list and limits as the extension, so a bad
 * argument costs no round trip and has no side effect; the server checks
 * them again and remains the authority.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/src/error.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <string.h>

#include "jobq-int.h"

/*
 * jobq_clear_error: reset conn's error state to "success".
 */
void
jobq_clear_error(JobqConn *conn)
{
	conn->err = JOBQ_ERR_NONE;
	conn->errmsg[0] = '\0';
	conn->sqlstate[0] = '\0';
	conn->errprimary[0] = '\0';
	conn->errdetail[0] = '\0';
	conn->errhint[0] = '\0';
}

/*
 * jobq_set_error: record an error of class cls with a printf-style
 * message (truncated to the buffer; one trailing newline removed, since
 * libpq's messages end with one).
 */
void
jobq_set_error(JobqConn *conn, JobqErrorClass cls, const char *fmt,...)
{
	va_list		ap;
	size_t		len;

	conn->err = cls;
	conn->sqlstate[0] = '\0';
	conn->errprimary[0] = '\0';
	conn->errdetail[0] = '\0';
	conn->errhint[0] = '\0';
	va_start(ap, fmt);
	vsnprintf(conn->errmsg, sizeof(conn->errmsg), fmt, ap);
	va_end(ap);
	len = strlen(conn->errmsg);
	while (len > 0 && conn->errmsg[len - 1] == '\n')
		conn->errmsg[--len] = '\0';
}

/*
 * jobq_set_result_error: record the error of a failed PGresult (res may be
 * NULL when libpq could not even build one).  A connection that libpq now
 * marks bad is JOBQ_ERR_CONNECTION whatever the result says; an unknown
 * queue (42704) is JOBQ_ERR_NOT_FOUND; every other server error is
 * JOBQ_ERR_SERVER.  The SQLSTATE is kept in all cases.
 */
void
jobq_set_result_error(JobqConn *conn, const PGresult *res)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *primary = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	const char *hint = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_HINT) : NULL;
	JobqErrorClass cls;

	if (conn->pg == NULL || PQstatus(conn->pg) == CONNECTION_BAD)
		cls = JOBQ_ERR_CONNECTION;
	else if (state != NULL && strncmp(state, "08", 2) == 0)
		cls = JOBQ_ERR_CONNECTION;
	else if (state != NULL && strcmp(state, "42704") == 0)
		cls = JOBQ_ERR_NOT_FOUND;
	else if (res == NULL)
		cls = JOBQ_ERR_CONNECTION;
	else
		cls = JOBQ_ERR_SERVER;

	if (primary != NULL)
		jobq_set_error(conn, cls, "%s%s%s", primary,
					   hint ? " (hint: " : "", hint ? hint : "");
	else
		jobq_set_error(conn, cls, "%s",
					   conn->pg ? PQerrorMessage(conn->pg) : "out of memory");
	if (hint != NULL)
	{
		size_t		len = strlen(conn->errmsg);

		if (len + 1 < sizeof(conn->errmsg))
		{
			conn->errmsg[len] = ')';
			conn->errmsg[len + 1] = '\0';
		}
	}
	if (conn->errmsg[0] == '\0')
		jobq_set_error(conn, cls, "connection to server lost");
	if (state != NULL && strlen(state) == 5)
		memcpy(conn->sqlstate, state, 6);
	if (res != NULL)
	{
		const char *detail = PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL);

		snprintf(conn->errprimary, sizeof(conn->errprimary), "%s", primary ? primary : "");
		snprintf(conn->errdetail, sizeof(conn->errdetail), "%s", detail ? detail : "");
		snprintf(conn->errhint, sizeof(conn->errhint), "%s", hint ? hint : "");
	}
}

/*
 * jobq_errfield: see jobq-client.h.
 */
const char *
jobq_errfield(const JobqConn *conn, int field)
{
	const char *v;

	if (conn == NULL)
		return NULL;
	switch (field)
	{
		case JOBQ_ERRFIELD_MESSAGE:
			v = conn->errprimary;
			break;
		case JOBQ_ERRFIELD_DETAIL:
			v = conn->errdetail;
			break;
		case JOBQ_ERRFIELD_HINT:
			v = conn->errhint;
			break;
		default:
			return NULL;
	}
	return v[0] ? v : NULL;
}

/*
 * Error-state accessors.  A NULL conn can only come from a failed
 * constructor, which fails only when out of memory.
 */
JobqErrorClass
jobq_status(const JobqConn *conn)
{
	return conn ? conn->err : JOBQ_ERR_OOM;
}

const char *
jobq_errmsg(const JobqConn *conn)
{
	return conn ? conn->errmsg : "out of memory";
}

const char *
jobq_sqlstate(const JobqConn *conn)
{
	return (conn && conn->sqlstate[0]) ? conn->sqlstate : NULL;
}

/*
 * jobq_error_name: a static, stable name for each error class.
 */
const char *
jobq_error_name(JobqErrorClass cls)
{
	switch (cls)
	{
		case JOBQ_ERR_NONE:
			return "JOBQ_ERR_NONE";
		case JOBQ_ERR_CONNECTION:
			return "JOBQ_ERR_CONNECTION";
		case JOBQ_ERR_BAD_ARGUMENT:
			return "JOBQ_ERR_BAD_ARGUMENT";
		case JOBQ_ERR_SERVER:
			return "JOBQ_ERR_SERVER";
		case JOBQ_ERR_STALE:
			return "JOBQ_ERR_STALE";
		case JOBQ_ERR_NOT_FOUND:
			return "JOBQ_ERR_NOT_FOUND";
		case JOBQ_ERR_STATE:
			return "JOBQ_ERR_STATE";
		case JOBQ_ERR_OOM:
			return "JOBQ_ERR_OOM";
		case JOBQ_ERR_PROTOCOL:
			return "JOBQ_ERR_PROTOCOL";
		case JOBQ_ERR_VERSION:
			return "JOBQ_ERR_VERSION";
	}
	return "JOBQ_ERR_UNKNOWN";
}

/*
 * jobq_sqlstate_action: doc/reliability.md section 3.  Serialization failures
 * and deadlocks are safe to retry at once (the transaction was rolled
 * back).  Connection errors, a read-only node (25006, e.g. after failover)
 * and administrator shutdowns mean this session is on the wrong or a dead
 * node.  Data exceptions (22), integrity (23), syntax/access (42) and
 * program limits (54, payload too large) are caller bugs that would fail
 * the same way again.  Anything else is treated as transient.
 */
JobqAction
jobq_sqlstate_action(const char *sqlstate)
{
	if (sqlstate == NULL || sqlstate[0] == '\0')
		return JOBQ_ACTION_NONE;
	if (strcmp(sqlstate, "40001") == 0 || strcmp(sqlstate, "40P01") == 0)
		return JOBQ_ACTION_RETRY;
	if (strncmp(sqlstate, "08", 2) == 0 ||
		strcmp(sqlstate, "25006") == 0 ||
		strcmp(sqlstate, "57P01") == 0 ||
		strcmp(sqlstate, "57P02") == 0 ||
		strcmp(sqlstate, "57P03") == 0)
		return JOBQ_ACTION_RECONNECT;
	if (strncmp(sqlstate, "22", 2) == 0 ||
		strncmp(sqlstate, "23", 2) == 0 ||
		strncmp(sqlstate, "42", 2) == 0 ||
		strncmp(sqlstate, "54", 2) == 0)
		return JOBQ_ACTION_NEVER;
	return JOBQ_ACTION_BACKOFF;
}

/*
 * jobq_error_action: what to do about the last call's error.  A stale
 * token, a missing object or a bad argument will not change by retrying.
 */
JobqAction
jobq_error_action(const JobqConn *conn)
{
	if (conn == NULL)
		return JOBQ_ACTION_BACKOFF;
	switch (conn->err)
	{
		case JOBQ_ERR_NONE:
			return JOBQ_ACTION_NONE;
		case JOBQ_ERR_CONNECTION:
			return JOBQ_ACTION_RECONNECT;
		case JOBQ_ERR_SERVER:
			return jobq_sqlstate_action(jobq_sqlstate(conn));
		case JOBQ_ERR_OOM:
			return JOBQ_ACTION_BACKOFF;
		case JOBQ_ERR_BAD_ARGUMENT:
		case JOBQ_ERR_STALE:
		case JOBQ_ERR_NOT_FOUND:
		case JOBQ_ERR_STATE:
		case JOBQ_ERR_PROTOCOL:
		case JOBQ_ERR_VERSION:
			return JOBQ_ACTION_NEVER;
	}
	return JOBQ_ACTION_NEVER;
}

/*
 * valid_name: the allow-list ^[a-z0-9]+([_-][a-z0-9]+)*$ within maxlen
 * bytes.  Written out by hand rather than with regex.h so that the check
 * is byte-exact and locale-independent.
 */
static int
valid_name(const char *name, size_t maxlen)
{
	size_t		len;
	size_t		i;
	int			prev_sep = 1;	/* at the start, as after a separator */

	if (name == NULL)
		return 0;
	len = strlen(name);
	if (len == 0 || len > maxlen)
		return 0;
	for (i = 0; i < len; i++)
	{
		unsigned char ch = (unsigned char) name[i];

		if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9'))
			prev_sep = 0;
		else if ((ch == '_' || ch == '-') && !prev_sep)
			prev_sep = 1;
		else
			return 0;
	}
	return !prev_sep;			/* no trailing separator */
}

int
jobq_valid_queue_name(const char *name)
{
	return valid_name(name, JOBQ_QUEUE_NAME_MAX);
}

int
jobq_valid_schema_name(const char *name)
{
	return valid_name(name, JOBQ_SCHEMA_NAME_MAX);
}

/*
 * jobq_check_queue: JOBQ_OK when queue is a valid name, else JOBQ_ERR with
 * a message saying which rule it broke.
 */
int
jobq_check_queue(JobqConn *conn, const char *queue)
{
	if (queue == NULL)
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT, "queue name is NULL");
		return JOBQ_ERR;
	}
	if (queue[0] == '\0')
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT, "queue name is empty");
		return JOBQ_ERR;
	}
	if (strlen(queue) > JOBQ_QUEUE_NAME_MAX)
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT,
					   "queue name is %zu bytes long, the limit is %d",
					   strlen(queue), JOBQ_QUEUE_NAME_MAX);
		return JOBQ_ERR;
	}
	if (!jobq_valid_queue_name(queue))
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT,
					   "invalid queue name: only lowercase letters, digits and "
					   "single inner '_' or '-' are allowed");
		return JOBQ_ERR;
	}
	return JOBQ_OK;
}

/* jobq_check_id: job ids are identity values, always >= 1. */
int
jobq_check_id(JobqConn *conn, int64_t id)
{
	if (id <= 0)
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT,
					   "job id %lld is not positive", (long long) id);
		return JOBQ_ERR;
	}
	return JOBQ_OK;
}

/*
 * jobq_check_token: NULL, empty or overlong tokens are caller bugs.  The
 * uuid syntax itself is left to the server (22P02), which accepts several
 * spellings.
 */
int
jobq_check_token(JobqConn *conn, const char *token)
{
	size_t		len;

	if (token == NULL)
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT, "claim token is NULL");
		return JOBQ_ERR;
	}
	len = strlen(token);
	if (len == 0 || len > 64)
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT,
					   "claim token has an invalid length (%zu)", len);
		return JOBQ_ERR;
	}
	return JOBQ_OK;
}

/* jobq_check_range: lo <= v <= hi, else BAD_ARGUMENT naming "what". */
int
jobq_check_range(JobqConn *conn, const char *what, long long v,
				 long long lo, long long hi)
{
	if (v < lo || v > hi)
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT,
					   "%s %lld is out of range (%lld..%lld)", what, v, lo, hi);
		return JOBQ_ERR;
	}
	return JOBQ_OK;
}

/*
 * State names, as the SQL API spells them, and which are finished (in
 * jobq.history), from the contract's JOBQ_JOB_STATES; index = JobqState.
 */
#define STATE_NAME(name, kind) #name,
#define STATE_IS_LIVE 0
#define STATE_IS_FINISHED 1
#define STATE_FINISHED(name, kind) STATE_IS_##kind,

static const char *const state_names[] = {
	"unknown", JOBQ_JOB_STATES(STATE_NAME)
};
static const unsigned char state_finished[] = {
	0, JOBQ_JOB_STATES(STATE_FINISHED)
};

_Static_assert(sizeof(state_names) / sizeof(state_names[0]) == JOBQ_STATE_WAITING + 1,
			   "JobqState (jobq-client.h) must list the states of JOBQ_JOB_STATES");

/* jobq_state_finished: state is one a job ends in (completed, dead, ...) */
int
jobq_state_finished(JobqState state)
{
	return (int) state > 0 && (size_t) state < sizeof(state_finished) &&
		state_finished[state];
}

/*
 * jobq_states_text: the state names for a message, "a, b or c": all of
 * them, or the finished ones only; extra (when not NULL) follows the
 * first, as "delayed" follows "ready" in jobq_list.
 */
void
jobq_states_text(char *buf, size_t size, int finished_only, const char *extra)
{
	const char *names[sizeof(state_names) / sizeof(state_names[0]) + 1];
	size_t		n = 0;
	size_t		len = 0;

	for (size_t i = 1; i < sizeof(state_names) / sizeof(state_names[0]); i++)
	{
		if (finished_only && !state_finished[i])
			continue;
		names[n++] = state_names[i];
		if (n == 1 && extra != NULL)
			names[n++] = extra;
	}
	buf[0] = '\0';
	for (size_t i = 0; i < n && len < size; i++)
		len += snprintf(buf + len, size - len, "%s%s",
						i == 0 ? "" : i == n - 1 ? " or " : ", ", names[i]);
}

const char *
jobq_state_name(JobqState state)
{
	if ((int) state < 0 || (size_t) state >= sizeof(state_names) / sizeof(state_names[0]))
		return "unknown";
	return state_names[state];
}

JobqState
jobq_state_from_name(const char *name)
{
	size_t		i;

	if (name == NULL)
		return JOBQ_STATE_UNKNOWN;
	for (i = 1; i < sizeof(state_names) / sizeof(state_names[0]); i++)
		if (strcmp(name, state_names[i]) == 0)
			return (JobqState) i;
	return JOBQ_STATE_UNKNOWN;
}

const char *
jobq_version(void)
{
	return JOBQ_VERSION_STRING;
}
