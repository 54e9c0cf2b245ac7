/*-------------------------------------------------------------------------
 *
 * db.c
 *	  jobq-worker's database side: one libjobq connection, the calls the
 *	  worker makes, and what to do when they fail.
 *
 * Every call goes through libjobq, which qualifies it with --schema (so
 * no search_path can redirect it), checks arguments, passes values as
 * parameters and forces client_encoding UTF8.  Each is a single statement
 * in autocommit mode, so no transaction is ever open while a handler
 * runs, and the connection is free between calls.  In the poll and
 * blocking wait modes the connection uses no LISTEN and no named prepared
 * statements (JOBQ_CONNECT_POOLER), so PgBouncer in transaction mode works.
 *
 * Errors are classified by libjobq (doc/reliability.md §3):
 *	DB_CONN		the connection is gone or points at the wrong node
 *				(JOBQ_ERR_CONNECTION, or the action RECONNECT: 08*,
 *				57P01..57P03, 25006): the session is dropped and the main
 *				loop reconnects with backoff; acks wait and are sent after
 *				the reconnect
 *	DB_ERROR	the statement itself failed (22*, 42*, ...): retrying the
 *				same call cannot help
 *
 * The lease is never measured with the client's clock: libjobq returns the
 * lease left on the server clock (jobq_job_lease_ms), and the worker counts
 * that many seconds on its monotonic clock.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/worker/db.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libpq-fe.h"
#include "worker.h"

/*
 * Reconnect backoff (doc/jobq-worker.md, "Connection loss"): the delay
 * before a reconnect doubles after each failed connect and each session
 * that ended before it did any work, up to BACKOFF_MAX; only a session in
 * which the server answered a claim or a heartbeat (session_worked) sets
 * it back to the minimum.  A node that accepts connections and then
 * refuses the worker's calls (read-only, a standby) therefore costs one
 * attempt per backoff step, not two a second, while a worker whose
 * backend is terminated now and then reconnects at once each time.
 */
#define BACKOFF_MIN 0.5			/* seconds */
#define BACKOFF_MAX 30

/* one line of the last call's error text */
static const char *
errtext(Worker *w)
{
	static char msg[512];

	snprintf(msg, sizeof(msg), "%s", w->db.conn ? jobq_errmsg(w->db.conn) : "no connection");
	for (char *p = msg; *p; p++)
		if (*p == '\n')
			*p = (p[1] ? ' ' : '\0');
	return msg;
}

static const char *
sqlstate(Worker *w)
{
	const char *s = jobq_sqlstate(w->db.conn);

	return s ? s : "";
}

/* the lease to ask for: --lease in whole seconds (rounded up), or -1 */
static int
lease_s(Worker *w)
{
	return w->lease > 0 ? (int) ceil(w->lease) : -1;
}

/*
 * failed
 *		Classify the error of the last libjobq call.  A lost connection is
 *		logged and dropped (DB_CONN); anything else is DB_ERROR, for the
 *		caller to log.
 */
static DbStatus
failed(Worker *w)
{
	if (jobq_status(w->db.conn) == JOBQ_ERR_CONNECTION ||
		jobq_error_action(w->db.conn) == JOBQ_ACTION_RECONNECT)
	{
		wlog(w, "warning", "lost the database connection: %s", errtext(w));
		db_disconnect(w);
		return DB_CONN;
	}
	return DB_ERROR;
}

/*
 * db_init
 *		The session state before the first db_connect.
 */
void
db_init(Worker *w)
{
	memset(&w->db, 0, sizeof(w->db));
	w->db.backoff = BACKOFF_MIN;
}

/* session_gone: the flags of a session that ended */
static void
session_gone(Worker *w)
{
	w->db.connected = false;
	w->db.listening = false;
	w->db.claiming = false;
}

/*
 * schedule_reconnect
 *		Set the time of the next connect attempt from the backoff, log it,
 *		and double the backoff for the attempt after it.
 */
static void
schedule_reconnect(Worker *w)
{
	w->db.reconnect_at = now_mono() + w->db.backoff;
	wlog(w, "info", "reconnecting in %g s", w->db.backoff);
	w->db.backoff = w->db.backoff * 2 > BACKOFF_MAX ? BACKOFF_MAX : w->db.backoff * 2;
}

/* session_worked: the server answered a claim or heartbeat of this session */
static void
session_worked(Worker *w)
{
	w->db.backoff = BACKOFF_MIN;
}

/*
 * db_disconnect
 *		Mark the session gone and schedule a reconnect.  The handle stays:
 *		jobq_reconnect opens the next session with the same parameters.
 */
void
db_disconnect(Worker *w)
{
	session_gone(w);
	schedule_reconnect(w);
}

/*
 * db_restart
 *		End the session now and reconnect at once (SIGHUP).
 */
void
db_restart(Worker *w)
{
	session_gone(w);
	w->db.reconnect_at = now_mono();
}

/* db_close: free the connection handle (at exit) */
void
db_close(Worker *w)
{
	jobq_disconnect(w->db.conn);
	w->db.conn = NULL;
	w->db.connected = false;
}

/*
 * notice_to_log
 *		Server notices (and the FATAL a terminated backend sends while we are
 *		idle) go to our log; libjobq discards them by default.
 */
static void
notice_to_log(void *arg, const char *message)
{
	wlog((Worker *) arg, "notice", "%s", message);
}

/*
 * choose_wait
 *		Decide for this session how an idle worker waits: a server-side
 *		blocking claim (woken at the enqueue's commit) or LISTEN/poll.  In
 *		auto mode the blocking claim is used when the server can wake it
 *		with a latch (jobq preloaded); when the role may not ask
 *		(jobq_wait_stats needs jobq_monitor), LISTEN it is.
 */
static DbStatus
choose_wait(Worker *w)
{
	const char *why = NULL;

	w->db.blocking = false;
	if (w->wait_mode == WAIT_BLOCKING)
		w->db.blocking = true;
	else if (w->wait_mode == WAIT_AUTO)
	{
		int			preloaded = 0;

		if (jobq_wait_stats(w->db.conn, &preloaded, NULL, NULL) != JOBQ_OK)
		{
			if (failed(w) == DB_CONN)
				return DB_CONN;
			why = errtext(w);
		}
		else if (!preloaded)
			why = "jobq is not in shared_preload_libraries";
		else
			w->db.blocking = true;
	}
	if (!w->db.mode_logged)
	{
		if (w->db.blocking)
			wlog(w, "info", "waiting for work with blocking claims%s",
				 w->db.listening ? " when idle, LISTEN while handlers run" : "");
		else if (w->db.listening)
			wlog(w, "info", "waiting for work with LISTEN and polling%s%s",
				 why ? ": no blocking claim: " : "", why ? why : "");
		else
			wlog(w, "info", "waiting for work by polling every %.3g s", w->poll_interval);
		w->db.mode_logged = true;
	}
	return DB_OK;
}

/*
 * read_only_node
 *		The session cannot write: a standby, or default_transaction_read_only
 *		on (for the server, the database or the role).  Both are reported by
 *		the server at connect (PostgreSQL 14 and later), so this costs no
 *		round trip.  Every call the worker makes writes, so such a node is
 *		the wrong one: logged, and the caller reconnects with backoff.
 */
static bool
read_only_node(Worker *w)
{
	PGconn	   *pg = jobq_pgconn(w->db.conn);
	const char *standby = PQparameterStatus(pg, "in_hot_standby");
	const char *ro = PQparameterStatus(pg, "default_transaction_read_only");

	if (standby != NULL && strcmp(standby, "on") == 0)
		wlog(w, "warning", "the server is a standby (in_hot_standby=on); "
			 "jobq-worker needs a read-write node");
	else if (ro != NULL && strcmp(ro, "on") == 0)
		wlog(w, "warning", "the session is read-only (default_transaction_read_only=on); "
			 "jobq-worker needs a read-write node");
	else
		return false;
	return true;
}

/*
 * db_connect
 *		Open the session (the first time) or a new one, LISTEN on
 *		"jobq.<queue>" for every queue (auto and listen modes) and decide
 *		how to wait.  On failure returns DB_CONN, logs why and schedules the
 *		next attempt (schedule_reconnect).
 */
DbStatus
db_connect(Worker *w)
{
	/* defaults the conninfo may override */
	static const char *const keys[] = {"fallback_application_name", "connect_timeout", NULL};
	static const char *const vals[] = {"jobq-worker", "10", NULL};
	bool		listen = w->wait_mode == WAIT_AUTO || w->wait_mode == WAIT_LISTEN;

	if (w->db.connected)
		return DB_OK;
	if (w->db.conn == NULL)
	{
		w->db.conn = jobq_connect_params(w->conninfo, w->schema,
									  listen ? JOBQ_CONNECT_DEFAULT : JOBQ_CONNECT_POOLER,
									  keys, vals);
		if (w->db.conn == NULL)
		{
			wlog(w, "error", "out of memory");
			goto fail;
		}
		(void) jobq_set_call_timeout(w->db.conn, (int) (w->db_timeout * 1000));
	}
	else
		jobq_reconnect(w->db.conn);
	if (jobq_status(w->db.conn) != JOBQ_ERR_NONE)
	{
		wlog(w, "warning", "could not connect to the database: %s", errtext(w));
		goto fail;
	}
	PQsetNoticeProcessor(jobq_pgconn(w->db.conn), notice_to_log, w);
	if (read_only_node(w))
	{
		/* close it now: the next attempt opens a new handle */
		jobq_disconnect(w->db.conn);
		w->db.conn = NULL;
		goto fail;
	}
	w->db.connected = true;

	if (listen)
	{
		/* LISTEN now; returns at once (timeout 0) */
		if (jobq_wait_for_work(w->db.conn, (const char *const *) w->queues, w->nqueues, 0)
			== JOBQ_ERR)
		{
			/* a standby cannot LISTEN: that is a wrong node too */
			wlog(w, "warning", "LISTEN failed: %s", errtext(w));
			goto fail;
		}
		w->db.listening = true;
	}
	if (choose_wait(w) != DB_OK)
		goto fail;
	if (w->db.ever_connected)
		wlog(w, "info", "reconnected to the database");
	w->db.ever_connected = true;
	return DB_OK;

fail:
	session_gone(w);
	schedule_reconnect(w);
	return DB_CONN;
}

/*
 * read_dep_results
 *		The dependency results of the claimed jobs that are in a flow
 *		(jobq_job_flow_id), for all of them in one round trip, into each
 *		Job's deps; jobs outside flows cost nothing, not even the call.
 *		A job whose results cannot be read is not run, and is dropped from
 *		jobs: released (its attempt given back) when the call failed and the
 *		session still works, else left to its lease; a stale token (the
 *		lease passed meanwhile) leaves it to whoever holds it now.
 */
static void
read_dep_results(Worker *w, Job *jobs, int *njobs)
{
	static int64_t ids[JOBQ_CLAIM_MAX];
	static const char *tokens[JOBQ_CLAIM_MAX];
	static char *results[JOBQ_CLAIM_MAX];
	static int	at[JOBQ_CLAIM_MAX];
	int			k = 0;
	int			kept = 0;
	DbStatus	st = DB_OK;

	for (int i = 0; i < *njobs && k < JOBQ_CLAIM_MAX; i++)
		if (jobq_job_flow_id(jobs[i].jj) != 0)
		{
			ids[k] = jobq_job_id(jobs[i].jj);
			tokens[k] = jobq_job_token(jobs[i].jj);
			at[k++] = i;
		}
	if (k == 0)
		return;
	if (jobq_dep_results_many(w->db.conn, (size_t) k, ids, tokens, results) != JOBQ_OK)
	{
		st = failed(w);
		wlog(w, "warning", "could not read the dependency results of %d job(s): %s; "
			 "they are not run", k, errtext(w));
	}
	for (int j = 0; j < k; j++)
	{
		Job		   *job = &jobs[at[j]];
		bool		released = false;

		if (st == DB_OK && results[j] != NULL)
		{
			job->deps = results[j];
			continue;
		}
		if (st == DB_OK)
			wlog(w, "warning", "job %lld: the lease passed before its dependency results "
				 "were read (stale token); not run", job_id(job));
		else if (st == DB_ERROR && db_release(w, job, &released) == DB_OK && released)
			wlog(w, "info", "job %lld released", job_id(job));
		job_free(job);
	}
	/* close the gaps of the jobs dropped */
	for (int i = 0; i < *njobs; i++)
		if (jobs[i].jj != NULL)
			jobs[kept++] = jobs[i];
	*njobs = kept;
}

/*
 * jobs_from_list
 *		The worker's jobs of a claim: a malloc'd array of *njobs (caller
 *		frees the array and, through job_free, each job).  The JobqJobs are
 *		taken out of the list, not copied; the list is freed.  Jobs in a
 *		flow come with their dependency results (read_dep_results).
 */
static void
jobs_from_list(Worker *w, JobqJobList *list, Job **jobs, int *njobs)
{
	double		now = now_mono();

	session_worked(w);
	*njobs = (int) jobq_joblist_count(list);
	*jobs = jobq_xmalloc(sizeof(Job) * (*njobs ? *njobs : 1));
	for (int i = 0; i < *njobs; i++)
	{
		Job		   *j = &(*jobs)[i];
		double		left;

		memset(j, 0, sizeof(*j));
		j->jj = jobq_joblist_take(list, (size_t) i);
		if (j->jj == NULL)
		{
			fprintf(stderr, "jobq-worker: out of memory\n");
			exit(1);
		}
		left = jobq_job_lease_ms(j->jj) / 1000.0;
		j->claimed_at = now;
		j->lease_len = left;
		j->lease_ends = now + left;
		if (w->heartbeat < 0)
			j->next_heartbeat = now + left / 3;
		else if (w->heartbeat > 0)
			j->next_heartbeat = now + w->heartbeat;
	}
	jobq_joblist_free(list);
	read_dep_results(w, *jobs, njobs);
	checkpoint_fetch(w, *jobs, *njobs);
}

/*
 * db_claim
 *		Claim up to max_jobs jobs from the worker's queues, without waiting.
 *		On DB_OK *jobs is a malloc'd array of *njobs jobs (possibly 0).
 */
DbStatus
db_claim(Worker *w, int max_jobs, Job **jobs, int *njobs)
{
	JobqJobList *list;

	*jobs = NULL;
	*njobs = 0;
	if (!w->db.connected)
		return DB_CONN;
	list = jobq_claim(w->db.conn, (const char *const *) w->queues, w->nqueues, max_jobs,
					  lease_s(w), w->claim_label);
	if (list == NULL)
	{
		DbStatus	st = failed(w);

		if (st == DB_ERROR)
			wlog(w, "error", "claim failed: %s", errtext(w));
		return st;
	}
	jobs_from_list(w, list, jobs, njobs);
	return DB_OK;
}

/*
 * db_claim_start
 *		Send a claim that waits on the server up to wait_ms when nothing is
 *		ready (the idle worker's blocking claim).  The connection is busy
 *		until db_claim_finish; the loop polls its socket meanwhile.
 */
DbStatus
db_claim_start(Worker *w, int max_jobs, int wait_ms)
{
	if (!w->db.connected)
		return DB_CONN;
	if (jobq_claim_start(w->db.conn, (const char *const *) w->queues, w->nqueues, max_jobs,
						 lease_s(w), w->claim_label, wait_ms) != JOBQ_OK)
	{
		DbStatus	st = failed(w);

		if (st == DB_ERROR)
			wlog(w, "error", "claim failed: %s", errtext(w));
		return st;
	}
	w->db.claiming = true;
	w->db.claim_started = now_mono();
	w->db.claim_deadline = w->db.claim_started + wait_ms / 1000.0 + w->db_timeout;
	return DB_OK;
}

/*
 * db_claim_poll
 *		The socket is readable, or the waiting claim's deadline passed:
 *		*done when the answer is in.  No answer by the deadline (the wait
 *		plus --db-timeout) means the connection is dead: DB_CONN.
 */
DbStatus
db_claim_poll(Worker *w, bool *done)
{
	int			r = jobq_claim_ready(w->db.conn);

	*done = false;
	if (r == JOBQ_ERR && jobq_status(w->db.conn) == JOBQ_ERR_CONNECTION)
		return failed(w);
	*done = r != 0;				/* on another error, finish collects it */
	return DB_OK;
}

/*
 * db_claim_finish
 *		Take the answer of the waiting claim (blocks until it is in).  As
 *		db_claim otherwise.  A blocking claim that the server refuses
 *		(statement_timeout shorter than the wait, a default isolation level
 *		above READ COMMITTED) is not fatal: the session falls back to
 *		LISTEN/poll.
 */
DbStatus
db_claim_finish(Worker *w, Job **jobs, int *njobs)
{
	JobqJobList *list;

	*jobs = NULL;
	*njobs = 0;
	if (!w->db.claiming)
		return DB_OK;
	w->db.claiming = false;
	list = jobq_claim_finish(w->db.conn);
	if (list == NULL)
	{
		DbStatus	st = failed(w);

		if (st == DB_ERROR)
		{
			wlog(w, "warning", "blocking claim failed (%s, SQLSTATE %s); "
				 "waiting with %s instead", errtext(w), sqlstate(w),
				 w->db.listening ? "LISTEN" : "polling");
			w->db.blocking = false;
			return DB_OK;
		}
		return st;
	}
	jobs_from_list(w, list, jobs, njobs);
	return DB_OK;
}

/* db_claim_interrupt: ask the server to end the waiting claim now */
void
db_claim_interrupt(Worker *w)
{
	if (w->db.claiming && jobq_claim_interrupt(w->db.conn) != JOBQ_OK)
		wlog(w, "warning", "could not interrupt the waiting claim: %s", errtext(w));
}

/* replace bytes >= 0x80: the last resort for an error text that is not UTF-8 */
static char *
ascii_only(const char *s)
{
	char	   *c = jobq_xstrdup(s);

	for (char *p = c; *p; p++)
		if ((unsigned char) *p >= 0x80)
			*p = '?';
	return c;
}

/* s as a JSON string literal (caller frees) */
static char *
json_string(const char *s)
{
	JobqBuf		b;

	jobq_buf_init(&b);
	jobq_buf_json_string(&b, s);
	jobq_xcheck(&b);
	return b.data;
}

/*
 * ack_complete
 *		jobq_complete with the handler's stdout: as JSON when it parses
 *		(the server judges, 22P02 when not), else as a JSON string, else
 *		(not valid text, too large) as NULL with a warning: the handler did
 *		its work, and losing the result is better than running it again.
 */
static DbStatus
ack_complete(Worker *w, Ack *a, char *state, size_t statelen)
{
	char	   *asstring = NULL;
	int			rc = JOBQ_ERR;

	for (int i = a->result ? 0 : 2; i < 3; i++)
	{
		const char *r = i == 0 ? a->result : i == 1 ? (asstring = json_string(a->result)) : NULL;

		rc = jobq_complete(w->db.conn, job_id(&a->job), job_token(&a->job), r, r ? strlen(r) : 0);
		if (rc == JOBQ_OK || jobq_status(w->db.conn) == JOBQ_ERR_STALE)
			break;
		if (failed(w) == DB_CONN)
		{
			free(asstring);
			return DB_CONN;
		}
		if (i == 0 && strcmp(sqlstate(w), "22P02") == 0)
			continue;			/* not JSON: store it as a string */
		if (i < 2)
		{
			wlog(w, "warning", "job %lld: result not stored (%s), storing null",
				 job_id(&a->job), errtext(w));
			i = 1;				/* next: NULL */
			continue;
		}
		wlog(w, "error", "job %lld: complete failed: %s", job_id(&a->job), errtext(w));
		free(asstring);
		return DB_ERROR;
	}
	free(asstring);
	snprintf(state, statelen, "%s", rc == JOBQ_OK ? "completed" : "stale");
	return DB_OK;
}

/*
 * surely_not_json
 *		True when text cannot be JSON, judged by its first non-blank
 *		character alone (and the three bare literals): plain text such as
 *		"done" or "ok: 3 rows".  Such a result goes into a batch as a JSON
 *		string at once, which is what ack_complete ends up storing after the
 *		server's 22P02; anything that may be JSON is sent as it is and the
 *		server judges.  Never true for text the server would accept.
 */
static bool
surely_not_json(const char *text)
{
	static const char *const literals[] = {"true", "false", "null"};
	const char *p = text;
	size_t		n;

	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	if (*p == '{' || *p == '[' || *p == '"' || *p == '-' || (*p >= '0' && *p <= '9'))
		return false;
	for (int i = 0; i < 3; i++)
	{
		n = strlen(literals[i]);
		if (strncmp(p, literals[i], n) == 0)
		{
			p += n;
			while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
				p++;
			return *p != '\0';
		}
	}
	return true;
}

/*
 * db_complete_many
 *		Complete the n (1..1000) jobs of acks in one statement, with each
 *		job's result, and, when claim_n > 0, claim up to claim_n jobs in the
 *		same round trip and transaction (jobq_complete_and_claim_results).
 *		On DB_OK states[i] is "completed" or "stale" (the token was refused;
 *		nothing changed), and *jobs / *njobs are the new claim as db_claim
 *		gives it (NULL / 0 when claim_n is 0).  DB_CONN: nothing is known;
 *		send again after reconnecting (same tokens: safe).  DB_ERROR: the
 *		statement failed as a whole and nothing changed, claim included
 *		(typically a result the server refuses: not JSON, too large); the
 *		caller then reports each job with db_ack, which has the fallbacks.
 *		Nothing is logged for DB_ERROR.
 */
DbStatus
db_complete_many(Worker *w, Ack **acks, int n, int claim_n, const char **states,
				 Job **jobs, int *njobs)
{
	int64_t    *ids = jobq_xmalloc(sizeof(int64_t) * n);
	const char **tokens = jobq_xmalloc(sizeof(char *) * n);
	const char **results = jobq_xmalloc(sizeof(char *) * n);
	size_t	   *lens = jobq_xmalloc(sizeof(size_t) * n);
	char	  **owned = jobq_xmalloc(sizeof(char *) * n);
	int		   *accepted = jobq_xmalloc(sizeof(int) * n);
	bool		any_result = false;
	DbStatus	st = DB_OK;

	*jobs = NULL;
	*njobs = 0;
	for (int i = 0; i < n; i++)
	{
		const char *r = acks[i]->result;

		ids[i] = (int64_t) job_id(&acks[i]->job);
		tokens[i] = job_token(&acks[i]->job);
		owned[i] = NULL;
		if (r != NULL && surely_not_json(r))
			r = owned[i] = json_string(r);
		results[i] = r;
		lens[i] = r ? strlen(r) : 0;
		any_result |= r != NULL;
		accepted[i] = 0;
	}
	if (!w->db.connected)
		st = DB_CONN;
	else if (claim_n > 0)
	{
		JobqJobList *list;

		list = jobq_complete_and_claim_results(w->db.conn, (size_t) n, ids, tokens,
											   any_result ? results : NULL,
											   any_result ? lens : NULL, accepted,
											   (const char *const *) w->queues,
											   w->nqueues, claim_n, lease_s(w),
											   w->claim_label);
		if (list == NULL)
			st = failed(w);
		else
			jobs_from_list(w, list, jobs, njobs);
	}
	else if (jobq_complete_batch(w->db.conn, (size_t) n, ids, tokens,
								 any_result ? results : NULL,
								 any_result ? lens : NULL, accepted, NULL) != JOBQ_OK)
		st = failed(w);
	if (st == DB_OK)
		for (int i = 0; i < n; i++)
			states[i] = accepted[i] ? "completed" : "stale";
	for (int i = 0; i < n; i++)
		free(owned[i]);
	free(ids);
	free(tokens);
	free(results);
	free(lens);
	free(owned);
	free(accepted);
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
	DbStatus	st;

	if (!w->db.connected)
		return DB_CONN;
	if (a->kind == ACK_COMPLETE)
		return ack_complete(w, a, state, statelen);

	if (a->kind == ACK_RELEASE)
	{
		if (jobq_release(w->db.conn, job_id(&a->job), job_token(&a->job)) == JOBQ_OK)
			snprintf(state, statelen, "released");
		else if (jobq_status(w->db.conn) == JOBQ_ERR_STALE)
			snprintf(state, statelen, "stale");
		else
		{
			if ((st = failed(w)) == DB_ERROR)
				wlog(w, "error", "job %lld: release failed: %s", job_id(&a->job), errtext(w));
			return st;
		}
		return DB_OK;
	}

	for (int i = 0; i < 2; i++)
	{
		char	   *clean = i == 1 ? ascii_only(a->error ? a->error : "") : NULL;
		JobqState	ns = JOBQ_STATE_UNKNOWN;
		int			rc;

		if (a->rate_limited)
		{
			rc = jobq_fail_rate_limited(w->db.conn, job_id(&a->job), job_token(&a->job),
										clean ? clean : a->error, a->retry_in);
			ns = JOBQ_STATE_READY;
		}
		else
			rc = jobq_fail(w->db.conn, job_id(&a->job), job_token(&a->job),
						   clean ? clean : a->error, a->has_retry_in ? a->retry_in : -1,
						   a->permanent, &ns);
		free(clean);
		if (rc == JOBQ_OK)
		{
			snprintf(state, statelen, "%s", jobq_state_name(ns));
			return DB_OK;
		}
		if (jobq_status(w->db.conn) == JOBQ_ERR_STALE)
		{
			snprintf(state, statelen, "stale");
			return DB_OK;
		}
		if ((st = failed(w)) == DB_CONN)
			return st;
		if (i == 0 && strncmp(sqlstate(w), "22", 2) == 0)
			continue;			/* most likely not UTF-8: try plain ASCII */
		break;
	}
	wlog(w, "error", "job %lld: fail failed: %s", job_id(&a->job), errtext(w));
	return DB_ERROR;
}

/*
 * db_extend
 *		Heartbeat: extend job's lease by --lease (or the queue's lease).
 *		On DB_OK, *stale says whether our token was still valid, and
 *		*lease_left the seconds until the new locked_until: the lease asked
 *		for, or the length the claim granted (the queue's lease).
 */
DbStatus
db_extend(Worker *w, Job *job, bool *stale, double *lease_left)
{
	DbStatus	st;

	*stale = false;
	*lease_left = 0;
	if (!w->db.connected)
		return DB_CONN;
	if (jobq_extend(w->db.conn, job_id(job), job_token(job), lease_s(w)) == JOBQ_OK)
	{
		session_worked(w);
		*lease_left = lease_s(w) > 0 ? lease_s(w) : job->lease_len;
		return DB_OK;
	}
	if (jobq_status(w->db.conn) == JOBQ_ERR_STALE)
	{
		session_worked(w);
		*stale = true;
		return DB_OK;
	}
	if ((st = failed(w)) == DB_ERROR)
		wlog(w, "error", "job %lld: extend failed: %s", job_id(job), errtext(w));
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
	DbStatus	st;

	*released = false;
	if (!w->db.connected)
		return DB_CONN;
	if (jobq_release(w->db.conn, job_id(job), job_token(job)) == JOBQ_OK)
	{
		*released = true;
		return DB_OK;
	}
	if (jobq_status(w->db.conn) == JOBQ_ERR_STALE)
		return DB_OK;
	if ((st = failed(w)) == DB_ERROR)
		wlog(w, "error", "job %lld: release failed: %s", job_id(job), errtext(w));
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
		int64_t		r = 0,
					d = 0,
					p = 0;

		if (!w->db.connected)
			return DB_CONN;
		if (jobq_sweep(w->db.conn, w->queues[i], -1, &r, &d, &p) == JOBQ_OK)
		{
			if (r || d || p)
				wlog(w, "info", "sweep queue=%s requeued=%lld dead=%lld purged=%lld",
					 w->queues[i], (long long) r, (long long) d, (long long) p);
		}
		else if (failed(w) == DB_CONN)
			return DB_CONN;
		else
			wlog(w, "error", "sweep of queue %s failed: %s", w->queues[i], errtext(w));
	}
	return DB_OK;
}

/*
 * db_cron_tick
 *		Fire the schedules that are due (jobq_cron_tick): any number of
 *		workers and the server's sweeper may, at once; each tick fires
 *		once.  Logs each job enqueued and each schedule that failed.
 *		Against a server whose SQL has no schedules (0.1.0), or as a role
 *		that may not tick, it logs once and stops ticking.
 */
DbStatus
db_cron_tick(Worker *w)
{
	JobqRows   *rows;

	if (!w->db.connected)
		return DB_CONN;
	/* at most 32: each schedule is a subtransaction (see extension/tick.c) */
	rows = jobq_cron_tick(w->db.conn, 32);
	if (rows == NULL)
	{
		DbStatus	st;
		const char *state = jobq_sqlstate(w->db.conn);

		if (state != NULL && (strcmp(state, "42883") == 0 || strcmp(state, "42501") == 0))
		{
			wlog(w, "warning", "not firing schedules: %s", strcmp(state, "42883") == 0 ?
				 "the server has no jobq_cron_tick (jobq SQL before 0.2.0)" :
				 "the worker's role may not call jobq_cron_tick (grant it jobq_worker)");
			w->cron_interval = 0;
			return DB_OK;
		}
		if ((st = failed(w)) == DB_ERROR)
			wlog(w, "error", "cron tick failed: %s", errtext(w));
		return st;
	}
	for (size_t i = 0; i < jobq_rows_count(rows); i++)
	{
		const char *status = jobq_rows_get(rows, i, "status");

		if (status != NULL && strcmp(status, "enqueued") == 0)
			wlog(w, "info", "schedule %s tick=%s enqueued job=%s",
				 jobq_rows_get(rows, i, "schedule"), jobq_rows_get(rows, i, "tick"),
				 jobq_rows_get(rows, i, "job_id"));
		else if (status != NULL && strcmp(status, "failed") == 0)
			wlog(w, "warning", "schedule %s failed: see jobq_schedules() last_error",
				 jobq_rows_get(rows, i, "schedule"));
	}
	jobq_rows_free(rows);
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
	int			r;

	*notified = false;
	if (!w->db.connected)
		return DB_CONN;
	r = jobq_consume_input(w->db.conn);
	if (r == JOBQ_ERR)
	{
		wlog(w, "warning", "lost the database connection: %s", errtext(w));
		db_disconnect(w);
		return DB_CONN;
	}
	*notified = r > 0;
	return DB_OK;
}

/*
 * db_failed, db_errtext
 *		failed() and errtext() for the calls of other files (registry.c).
 */
DbStatus
db_failed(Worker *w)
{
	return failed(w);
}

const char *
db_errtext(Worker *w)
{
	return errtext(w);
}
