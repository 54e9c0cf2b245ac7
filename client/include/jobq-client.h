/*-------------------------------------------------------------------------
 *
 * jobq-client.h
 *	  Public API of libjobq, the C client library of the jobq job queue.
 *
 * jobq keeps jobs in PostgreSQL.  A *queue* is a named stream of jobs; a
 * *job* is a JSON payload plus bookkeeping.  A worker *claims* ready jobs
 * and gets, for each, a *lease* (the job is its own until locked_until) and
 * a fresh random *claim token*.  Every call that changes a claimed job
 * (complete, fail, extend, release) presents that token; when the lease ran
 * out and the job was swept or claimed again, the token is *stale* and the
 * call changes nothing.  *attempt* counts claims (a crash burns an attempt).
 * Execution is at least once: handlers must be idempotent.
 *
 * This library is a thin, explicit layer over libpq: every function maps
 * to one SQL function of the extension (schema-qualified, parameterized,
 * prepared once per connection), except jobq_complete_and_claim and
 * jobq_complete_and_claim_results, which pipeline two of them in one round
 * trip, jobq_wait_for_work, which waits for NOTIFY on the connection's
 * socket, and jobq_claim_start and its siblings, which split a waiting
 * claim into send / poll / take for event loops.
 *
 * Conventions (hiredis / libpq style):
 *	- All types are opaque; their layout may change in any release.
 *	- Calls return JOBQ_OK (0) or JOBQ_ERR (-1), or a pointer that is NULL on
 *	  error.  After any call, jobq_status(conn) gives the error class of that
 *	  call (JOBQ_ERR_NONE on success) and jobq_errmsg(conn) a message.  The
 *	  message is owned by the connection and valid until the next call on it.
 *	- Constructors (jobq_connect*) return NULL only when out of memory; a
 *	  failed connection is returned and must be checked with jobq_status().
 *	- Every object the caller receives is owned by the caller and released
 *	  with the matching NULL-safe jobq_*_free.  Pointers obtained *from* an
 *	  object (a job's payload, a row's value) are owned by that object and
 *	  live exactly as long as it.
 *	- Strings passed in are only read during the call; the library keeps no
 *	  pointer to caller memory.
 *	- Durations are whole seconds (arguments named *_s); waits are in
 *	  milliseconds (*_ms).  -1 means "the default" (usually the queue's
 *	  setting); other negative values are rejected.
 *	- Payloads and results are JSON text passed with an explicit length.
 *	  The server validates the JSON; the client rejects a NUL byte inside
 *	  the given length (JSON text cannot contain one and jsonb rejects
 *	  \u0000), so embedded NULs can never silently truncate a payload.
 *	- A JobqConn is not thread-safe; use one per thread.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/include/jobq-client.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JOBQ_CLIENT_H
#define JOBQ_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "jobq-contract.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Library version; MAJOR is the soname (libjobq.so.MAJOR). */
#define JOBQ_VERSION_MAJOR 0
#define JOBQ_VERSION_MINOR 2
#define JOBQ_VERSION_PATCH 0
/* "MAJOR.MINOR.PATCH", spelled from the three numbers above */
#define JOBQ_VERSION_STR_(n) #n
#define JOBQ_VERSION_STR(n) JOBQ_VERSION_STR_(n)
#define JOBQ_VERSION_STRING JOBQ_VERSION_STR(JOBQ_VERSION_MAJOR) "." \
	JOBQ_VERSION_STR(JOBQ_VERSION_MINOR) "." JOBQ_VERSION_STR(JOBQ_VERSION_PATCH)
/* MAJOR*10000 + MINOR*100 + PATCH, for #if comparisons */
#define JOBQ_VERSION_NUM \
	(JOBQ_VERSION_MAJOR * 10000 + JOBQ_VERSION_MINOR * 100 + JOBQ_VERSION_PATCH)

/* Return codes */
#define JOBQ_OK 0
#define JOBQ_ERR (-1)

/*
 * Limits checked on the client before anything is sent (the server checks
 * them again and stays authoritative) are the extension's own, from
 * jobq-contract.h (included above), which also lists the job states and
 * queue settings.  The payload limit actually enforced is the server's
 * jobq.max_payload_size (1 MiB by default), reported as SQLSTATE 54000.
 * These few are the client's alone:
 */
#define JOBQ_SCHEMA_NAME_MAX 63			/* bytes; same allow-list as queues */
#define JOBQ_TOKEN_LEN 36				/* text form of a uuid */
#define JOBQ_CLAIM_WAIT_MAX_MS (JOBQ_CLAIM_WAIT_MAX_S * 1000)

/*
 * Error classes, from jobq_status().  What to do about each is given by
 * jobq_error_action().
 */
typedef enum JobqErrorClass
{
	JOBQ_ERR_NONE = 0,			/* the last call succeeded */
	JOBQ_ERR_CONNECTION,		/* connect failed or connection lost; see
								 * jobq_reconnect() */
	JOBQ_ERR_BAD_ARGUMENT,		/* rejected on the client, nothing sent */
	JOBQ_ERR_SERVER,			/* the server raised an error; see
								 * jobq_sqlstate() */
	JOBQ_ERR_STALE,				/* token stale (lease lost) or unknown job:
								 * nothing changed */
	JOBQ_ERR_NOT_FOUND,			/* no such job or queue (SQLSTATE 42704 for
								 * queues) */
	JOBQ_ERR_STATE,				/* the job exists but its state does not
								 * allow the operation (cancel a running job,
								 * retry a job that is not dead) */
	JOBQ_ERR_OOM,				/* out of memory */
	JOBQ_ERR_PROTOCOL,			/* unexpected reply shape */
	JOBQ_ERR_VERSION			/* at connect: the server's jobq SQL is a
								 * release this library does not work with
								 * (doc/upgrading.md); not connected */
} JobqErrorClass;

/* What a caller should do after an error (doc/reliability.md section 3). */
typedef enum JobqAction
{
	JOBQ_ACTION_NONE = 0,		/* no error */
	JOBQ_ACTION_RETRY,			/* transient conflict (40001, 40P01): run the
								 * same call again now */
	JOBQ_ACTION_RECONNECT,		/* wrong or lost node (08*, 25006, 57P01..3):
								 * jobq_reconnect(), then retry */
	JOBQ_ACTION_BACKOFF,		/* other server trouble (resources, timeout,
								 * unknown): retry after a delay */
	JOBQ_ACTION_NEVER			/* caller bug or final answer (22*, 42*, bad
								 * argument, stale, not found): do not retry */
} JobqAction;

/* Job states (jobq_fail's new state, job listings). */
typedef enum JobqState
{
	JOBQ_STATE_UNKNOWN = 0,
	JOBQ_STATE_READY,
	JOBQ_STATE_RUNNING,
	JOBQ_STATE_COMPLETED,
	JOBQ_STATE_DEAD,
	JOBQ_STATE_CANCELLED,
	JOBQ_STATE_WAITING			/* 0.2.0: waits for its dependencies */
} JobqState;

/* Opaque handles.  Each is owned by whoever received it; see *_free. */
typedef struct JobqConn JobqConn;		/* a connection (wraps a PGconn) */
typedef struct JobqJob JobqJob;			/* one claimed job */
typedef struct JobqJobList JobqJobList; /* the jobs of one claim */
typedef struct JobqRows JobqRows;		/* a small result table (stats, list,
										 * job detail, queues) */

/* Connect flags (jobq_connect_ex). */
#define JOBQ_CONNECT_DEFAULT 0
#define JOBQ_CONNECT_NO_LISTEN 0x01		/* never LISTEN: jobq_wait_for_work
										 * just sleeps (poll only) */
#define JOBQ_CONNECT_NO_PREPARE 0x02	/* no named prepared statements: use
										 * unnamed ones (PQexecParams) */
/* PgBouncer transaction pooling: no session state at all */
#define JOBQ_CONNECT_POOLER (JOBQ_CONNECT_NO_LISTEN | JOBQ_CONNECT_NO_PREPARE)

/* ----------------------------------------------------------------------
 * Library
 * ---------------------------------------------------------------------- */

/* jobq_version: JOBQ_VERSION_STRING of the library actually linked. */
const char *jobq_version(void);

/* jobq_error_name: static name of an error class ("JOBQ_ERR_STALE"). */
const char *jobq_error_name(JobqErrorClass cls);

/* jobq_state_name / jobq_state_from_name: "ready" <-> JOBQ_STATE_READY.
 * Unknown names give JOBQ_STATE_UNKNOWN; unknown states give "unknown". */
const char *jobq_state_name(JobqState state);
JobqState	jobq_state_from_name(const char *name);

/*
 * jobq_sqlstate_action: classify a five-character SQLSTATE.
 *	40001, 40P01 -> RETRY; 08*, 25006, 57P01, 57P02, 57P03 -> RECONNECT;
 *	22*, 23*, 42*, 54* -> NEVER; NULL -> NONE; anything else -> BACKOFF.
 */
JobqAction	jobq_sqlstate_action(const char *sqlstate);

/*
 * jobq_valid_queue_name / jobq_valid_schema_name: 1 when the name passes
 * the allow-list ^[a-z0-9]+([_-][a-z0-9]+)*$ and the byte limit, else 0.
 * NULL gives 0.
 */
int			jobq_valid_queue_name(const char *name);
int			jobq_valid_schema_name(const char *name);

/* jobq_free: release a string returned by this library (NULL-safe). */
void		jobq_free(void *ptr);

/* ----------------------------------------------------------------------
 * Connections
 * ---------------------------------------------------------------------- */

/*
 * jobq_connect: connect with a libpq conninfo string or URI; NULL or ""
 * means the PG* environment variables.  client_encoding is forced to UTF8.
 * The API is called in schema "public".
 *
 * Returns NULL only when out of memory.  Otherwise the caller owns the
 * handle (jobq_disconnect) and must check jobq_status(): on failure it is
 * JOBQ_ERR_CONNECTION and jobq_errmsg() says why; the handle may then be
 * passed to jobq_reconnect() or freed.
 */
JobqConn   *jobq_connect(const char *conninfo);

/*
 * jobq_connect_ex: as jobq_connect, with the schema in which CREATE
 * EXTENSION created the API functions (NULL = "public"; checked with the
 * allow-list, JOBQ_ERR_BAD_ARGUMENT otherwise, before connecting) and
 * JOBQ_CONNECT_* flags.  Every call is qualified with this schema, so
 * search_path can never redirect it.
 */
JobqConn   *jobq_connect_ex(const char *conninfo, const char *schema,
							unsigned flags);

/*
 * jobq_connect_params: as jobq_connect_ex, with default libpq connection
 * parameters: keywords and values are parallel NULL-terminated arrays
 * (both may be NULL), such as {"fallback_application_name",
 * "connect_timeout", NULL} and {"my-worker", "10", NULL}.  They apply
 * before conninfo, so anything the conninfo (or the PG* environment, for
 * keywords not given here) says wins; client_encoding is still forced to
 * UTF8.  The arrays are copied (the caller keeps ownership) and used
 * again by jobq_reconnect.
 */
JobqConn   *jobq_connect_params(const char *conninfo, const char *schema,
								unsigned flags, const char *const *keywords,
								const char *const *values);

/* jobq_disconnect: close and free the connection (NULL-safe).  Jobs, job
 * lists and rows obtained from it stay valid: they are independent. */
void		jobq_disconnect(JobqConn *conn);

/*
 * jobq_reconnect: drop the server connection and open a new one with the
 * same parameters.  Prepared statements and LISTENs are set up again
 * lazily.  Claimed jobs keep their leases and tokens (they are server
 * state), so a worker can still complete them after reconnecting.
 * Returns JOBQ_OK or JOBQ_ERR (JOBQ_ERR_CONNECTION).
 */
int			jobq_reconnect(JobqConn *conn);

/* jobq_is_connected: 1 when libpq considers the connection usable.  A dead
 * peer is often only noticed by the next call, which then fails with
 * JOBQ_ERR_CONNECTION. */
int			jobq_is_connected(const JobqConn *conn);

/* Error state of the last call on conn (NULL conn: JOBQ_ERR_OOM, "out of
 * memory", NULL sqlstate). */
JobqErrorClass jobq_status(const JobqConn *conn);
const char *jobq_errmsg(const JobqConn *conn);	/* "" on success */
const char *jobq_sqlstate(const JobqConn *conn);	/* NULL unless the server
													 * sent one */
JobqAction	jobq_error_action(const JobqConn *conn);

/*
 * jobq_errfield: one field of the last call's server error, as libpq's
 * PQresultErrorField names them, or NULL when the server did not send it
 * (or the error did not come from the server).  Owned by conn, valid
 * until the next call on it.  jobq_errmsg() is the primary message with
 * the hint appended; these give the parts apart, e.g. for a program that
 * prints "DETAIL:" and "HINT:" lines as psql does.
 */
#define JOBQ_ERRFIELD_MESSAGE 'M'	/* primary message, alone */
#define JOBQ_ERRFIELD_DETAIL 'D'
#define JOBQ_ERRFIELD_HINT 'H'
const char *jobq_errfield(const JobqConn *conn, int field);

/* jobq_schema: the API schema in use (owned by conn). */
const char *jobq_schema(const JobqConn *conn);

/*
 * jobq_socket / jobq_pgconn: escape hatches.  The PGconn stays owned by
 * conn; use it for your own transactions (BEGIN; jobq_enqueue(...); your
 * INSERT; COMMIT makes the enqueue transactional), never PQfinish it, and
 * leave it idle (no pending results) before the next jobq_* call.
 */
int			jobq_socket(const JobqConn *conn);
struct pg_conn *jobq_pgconn(JobqConn *conn);

/*
 * jobq_set_call_timeout: how long a call waits for the server's answer
 * before it gives up on the connection, in milliseconds (0 = for ever;
 * default JOBQ_CALL_TIMEOUT_DEFAULT_MS).  A claim that waits for work
 * (wait_ms) gets its wait on top.  A call that times out fails with
 * JOBQ_ERR_CONNECTION and closes the session, whose state is then unknown
 * (the statement may or may not have run): jobq_reconnect() opens the next
 * one.  This catches what TCP cannot see, such as a proxy or a server that
 * stopped answering but keeps the connection open.  Returns JOBQ_OK, or
 * JOBQ_ERR (JOBQ_ERR_BAD_ARGUMENT) for a negative value.
 */
#define JOBQ_CALL_TIMEOUT_DEFAULT_MS 60000
int			jobq_set_call_timeout(JobqConn *conn, int timeout_ms);

/* ----------------------------------------------------------------------
 * Queues (role jobq_admin)
 * ---------------------------------------------------------------------- */

/*
 * Options structs that can grow.  JobqQueueOpts and JobqEnqueueOpts start
 * with a size field, which their INIT macros set to the size of the
 * struct the program was compiled with; always start from the macro.  The
 * library reads only the fields that size covers: a program built against
 * an older header, whose struct ends before a new field, gets that field
 * unset (its default).  A size no released header had (0: the struct not
 * made with the macro; a 0.1.0 positional initializer, whose first value
 * lands in size) or one larger than this library knows (the program was built against a
 * newer header) is JOBQ_ERR_BAD_ARGUMENT, so no setting is ever ignored.
 * New fields are only ever appended.
 *
 * Why a size field, and not opaque option objects with setters or libpq's
 * keyword/value arrays: it keeps the typed struct and the INIT macros
 * every caller already uses (a caller that starts from the macro needs no
 * change), the compiler still checks field names and types, and there is
 * no allocation, no setter per field and no number written as text.
 * Programs linked against libjobq 0.1.0, whose structs had no size field,
 * keep working: the shared library still has their entry points under
 * the symbol version JOBQ_0 (compat.c), so the soname stays libjobq.so.0.
 */

/*
 * Queue settings.  Every field -1 = the server default (create) or
 * unchanged (alter).  Durations in seconds.
 */
typedef struct JobqQueueOpts
{
	size_t		size;			/* sizeof(JobqQueueOpts): JOBQ_QUEUE_OPTS_INIT */
	int			lease_s;		/* 1..86400, default 300 */
	int			max_attempts;	/* 1..1000, default 25 */
	int			backoff_base_s; /* 0..86400, default 1 */
	int			backoff_cap_s;	/* base..365 days, default 3600 */
	int			completed_retention_s;	/* 0..3650 days, default 1 day */
	int			dead_retention_s;	/* 0..3650 days, default 14 days */
	int			notify;			/* 0 or 1, default 1 */

	/*
	 * The settings of 0.2.0 (JOBQ_QUEUE_SETTINGS_020 in jobq-contract.h;
	 * doc/sql.md says what each does).  A server still on 0.1.0's SQL
	 * refuses them (JOBQ_ERR_VERSION).  Text settings: NULL = not given,
	 * else one of JOBQ_CHOICES_<name> ("fifo").
	 */
	int			notify_finished;	/* 0 or 1, default 0 */
	int			reclaim_on_worker_death;	/* 0 or 1, default 0 */
	const char *group_mode;		/* "none" (default), "fifo", "limit" */
	int			group_limit;	/* 1..10000, default 1 */
	const char *group_order;	/* "oldest" (default), "round_robin" */
	const char *fifo_block;		/* "retry_and_dead" (default), "retry", "none" */
	int			max_running;	/* 0 (no limit, default) .. 1000000 */
	int			rate;			/* 0 (no limit, default) .. 1000000 */
	int			rate_per_s;		/* 1..86400, default 1 */
	int			rate_burst;		/* 1..1000000, default 1 */
	int			group_rate;		/* as rate, per group */
	int			group_rate_per_s;
	int			group_rate_burst;
} JobqQueueOpts;

#define JOBQ_QUEUE_OPTS_INIT { sizeof(JobqQueueOpts), -1, -1, -1, -1, -1, -1, -1, \
	-1, -1, NULL, -1, NULL, NULL, -1, -1, -1, -1, -1, -1, -1 }

/* opts may be NULL (all defaults).  Existing queue: JOBQ_ERR_SERVER,
 * SQLSTATE 42710. */
int			jobq_create_queue(JobqConn *conn, const char *queue,
							  const JobqQueueOpts *opts);
/* opts may be NULL (no change).  Unknown queue: JOBQ_ERR_NOT_FOUND. */
int			jobq_alter_queue(JobqConn *conn, const char *queue,
							 const JobqQueueOpts *opts);
/* Live jobs and !force: JOBQ_ERR_SERVER, SQLSTATE 55006. */
int			jobq_drop_queue(JobqConn *conn, const char *queue, int force);
int			jobq_pause(JobqConn *conn, const char *queue);
int			jobq_resume(JobqConn *conn, const char *queue);

/* jobq_queues: all queues and their settings, one row each (caller frees
 * with jobq_rows_free).  NULL on error. */
JobqRows   *jobq_queues(JobqConn *conn);

/* ----------------------------------------------------------------------
 * Producing (role jobq_producer)
 * ---------------------------------------------------------------------- */

/* Enqueue options; NULL means JOBQ_ENQUEUE_OPTS_INIT.  See JobqQueueOpts
 * for the size field. */
typedef struct JobqEnqueueOpts
{
	size_t		size;			/* sizeof(JobqEnqueueOpts): JOBQ_ENQUEUE_OPTS_INIT */
	int			delay_s;		/* -1 = none; 0..365 days */
	const char *run_at;			/* NULL, or a timestamptz literal such as
								 * "2030-01-01 00:00:00+00"; not with
								 * delay_s */
	int			priority;		/* -1000..1000, lower runs first; 0 */
	int			max_attempts;	/* -1 = queue default; 1..1000 */
	const char *dedupe_key;		/* NULL = none; 1..512 bytes.  A live job
								 * with the same key in the queue is
								 * returned instead of a new one */

	/*
	 * The rest needs the server's jobq SQL 0.2.0 (else JOBQ_ERR_VERSION);
	 * all left at their defaults, an enqueue runs 0.1.0's statement.
	 */
	const char *group_key;		/* NULL = none; 1..256 bytes: the job's
								 * group in a queue with a group_mode
								 * (doc/groups.md).  The batch form gives
								 * it to every job */
	const char *const *group_keys;	/* batch form only, instead of
									 * group_key: NULL or one key per job
									 * (no NULL entries) */
	const int64_t *depends_on;	/* single enqueue only: NULL, or
								 * n_depends_on job ids (1..10000) the job
								 * waits for (doc/flows.md) */
	size_t		n_depends_on;
	const char *on_dep_failure; /* with depends_on: NULL = "cancel",
								 * "ignore" or "wait" */
	int64_t		flow_id;		/* with depends_on: 0 = the flow of its
								 * dependencies, else this flow */
} JobqEnqueueOpts;

#define JOBQ_ENQUEUE_OPTS_INIT { sizeof(JobqEnqueueOpts), -1, NULL, 0, -1, NULL, \
		NULL, NULL, NULL, 0, NULL, 0 }

/*
 * jobq_enqueue: add one job.  payload is JSON text of payload_len bytes
 * (need not be NUL-terminated).  On success stores the job id in *id_out
 * (may be NULL) and returns JOBQ_OK.  Unknown queue: JOBQ_ERR_NOT_FOUND;
 * invalid JSON: JOBQ_ERR_SERVER 22P02; over the size limit: 54000.
 */
int			jobq_enqueue(JobqConn *conn, const char *queue,
						 const char *payload, size_t payload_len,
						 const JobqEnqueueOpts *opts, int64_t *id_out);

/*
 * jobq_enqueue_batch: add n jobs (1..10000) in one statement and one
 * transaction: all or nothing.  payloads[i] has payload_lens[i] bytes.
 * dedupe_keys is NULL or n entries (NULL entries = no key); opts->dedupe_key
 * must then be NULL.  ids_out and created_out, when not NULL, have room for
 * n entries and receive, in input order, each job's id and 1 when it was
 * created (0 when an existing live job with its dedupe key was returned).
 */
int			jobq_enqueue_batch(JobqConn *conn, const char *queue, size_t n,
							   const char *const *payloads,
							   const size_t *payload_lens,
							   const char *const *dedupe_keys,
							   const JobqEnqueueOpts *opts,
							   int64_t *ids_out, int *created_out);

/* ----------------------------------------------------------------------
 * Consuming (role jobq_worker)
 * ---------------------------------------------------------------------- */

/*
 * jobq_claim: claim up to max_jobs (1..1000) ready jobs from the nqueues
 * (>= 1) queues in (priority, run_at, id) order, each with a lease of
 * lease_s seconds (-1 = each queue's lease).  worker (NULL allowed) is
 * recorded for operators.  Returns a list, possibly empty (no work, unknown
 * or paused queues), owned by the caller (jobq_joblist_free); NULL on error.
 */
JobqJobList *jobq_claim(JobqConn *conn, const char *const *queues,
						int nqueues, int max_jobs, int lease_s,
						const char *worker);

/*
 * jobq_claim_wait: jobq_claim that, when nothing is ready, waits on the
 * server up to wait_ms (0..300000) for a job to be enqueued (woken by the
 * enqueue's commit when the extension is preloaded, else by its polling)
 * and claims it, for as many queues as jobq_claim takes.  The connection
 * is busy for the whole wait; the claim runs at READ COMMITTED in its own
 * statement.  wait_ms 0 is exactly jobq_claim.
 */
JobqJobList *jobq_claim_wait(JobqConn *conn, const char *const *queues,
							 int nqueues, int max_jobs, int lease_s,
							 const char *worker, int wait_ms);

/*
 * jobq_complete: finish a claimed job.  result is NULL or JSON text of
 * result_len bytes, stored with the job.  JOBQ_OK when completed now or
 * already completed with this same token (idempotent).  JOBQ_ERR with
 * JOBQ_ERR_STALE when the token is stale or the job unknown: nothing
 * changed, and the handler's work must be assumed to run again.
 */
int			jobq_complete(JobqConn *conn, int64_t id, const char *token,
						  const char *result, size_t result_len);

/*
 * jobq_complete_batch: complete n (1..1000) jobs in one statement.  Stale
 * tokens are not an error: accepted_out (NULL or room for n) gets 1 for
 * each job completed, 0 for each stale one, in input order; *naccepted (may
 * be NULL) the number completed.  results is NULL (no results) or n entries
 * (NULL = no result) with lengths in result_lens.  The flags are per
 * (id, token) pair: an id given twice, once with a stale token, has one
 * pair accepted.  (Against a server whose jobq SQL is still 0.1.0, which
 * answers with ids, every pair of an accepted id reads as accepted.)
 */
int			jobq_complete_batch(JobqConn *conn, size_t n, const int64_t *ids,
								const char *const *tokens,
								const char *const *results,
								const size_t *result_lens,
								int *accepted_out, size_t *naccepted);

/*
 * jobq_complete_and_claim: complete n (0..1000) jobs as jobq_complete_batch
 * does, and claim the next ones as jobq_claim does, in ONE round trip
 * (libpq pipeline mode) and one transaction: if either part fails, neither
 * happened, and the call can be repeated.  Returns the new claim's list
 * (caller frees) or NULL on error.
 */
JobqJobList *jobq_complete_and_claim(JobqConn *conn, size_t n,
									 const int64_t *ids,
									 const char *const *tokens,
									 int *accepted_out,
									 const char *const *queues, int nqueues,
									 int max_jobs, int lease_s,
									 const char *worker);

/*
 * jobq_complete_and_claim_results: jobq_complete_and_claim with a result
 * per job, as jobq_complete_batch takes them: results is NULL (no results)
 * or n entries (NULL = no result) with lengths in result_lens.  A result
 * the server refuses (not JSON: 22P02; too large: 54000) fails the whole
 * call, claim included, and nothing changes.  Returns the new claim's list
 * (caller frees with jobq_joblist_free) or NULL on error; the library keeps
 * no pointer to ids, tokens or results after the call.
 */
JobqJobList *jobq_complete_and_claim_results(JobqConn *conn, size_t n,
											 const int64_t *ids,
											 const char *const *tokens,
											 const char *const *results,
											 const size_t *result_lens,
											 int *accepted_out,
											 const char *const *queues,
											 int nqueues, int max_jobs,
											 int lease_s, const char *worker);

/*
 * jobq_fail: report a failed attempt.  error (NULL allowed) is kept with
 * the job (truncated by the server to 4096 bytes).  retry_in_s: -1 = the
 * queue's exponential backoff, else 0..365 days.  permanent != 0 sends the
 * job to dead now.  On JOBQ_OK, *new_state (may be NULL) is
 * JOBQ_STATE_READY or JOBQ_STATE_DEAD.  Stale token: JOBQ_ERR_STALE.
 */
int			jobq_fail(JobqConn *conn, int64_t id, const char *token,
					  const char *error, int retry_in_s, int permanent,
					  JobqState *new_state);

/*
 * jobq_fail_rate_limited: back-pressure from an upstream that answered
 * "too many requests" (0.2.0 server, else JOBQ_ERR_VERSION): the job is
 * ready again after rate_limit_for_s (1 s .. 365 days) without counting
 * the attempt, and the queue's or the job's group's rate is held that long
 * (jobq_fail(..., rate_limit_for), doc/groups.md).  error (NULL allowed)
 * is kept with the attempt.  Stale token: JOBQ_ERR_STALE.
 */
int			jobq_fail_rate_limited(JobqConn *conn, int64_t id, const char *token,
								   const char *error, int rate_limit_for_s);

/*
 * jobq_dep_results: the outcomes of the dependencies of the running job id
 * (doc/flows.md, "Results"), while token holds it: JSON text keyed by the
 * dependencies' ids, {"41": {"state": "completed", "result": ...}}, "{}"
 * for a job without any.  On JOBQ_OK *results is the caller's (free it
 * with jobq_free); otherwise NULL.  Stale token or unknown job:
 * JOBQ_ERR_STALE.  Needs the server's 0.2.0 SQL (else JOBQ_ERR_VERSION)
 * and role jobq_worker.  Only jobs with jobq_job_flow_id != 0 can have any.
 *
 * jobq_dep_results_many: the same for n jobs (1 .. JOBQ_CLAIM_MAX, the jobs
 * of a claim) in one round trip: results[i] is job i's (caller frees each
 * with jobq_free), NULL when its token is stale.  On an error every
 * results[i] is NULL (none is touched when an argument is bad).
 */
int			jobq_dep_results(JobqConn *conn, int64_t id, const char *token,
							 char **results);
int			jobq_dep_results_many(JobqConn *conn, size_t n, const int64_t *ids,
								  const char *const *tokens, char **results);

/*
 * jobq_extend: renew the lease to now + lease_s (-1 = the queue's lease),
 * measured on the server clock.  The heartbeat of long handlers.  Stale
 * token: JOBQ_ERR_STALE (stop working on the job).
 */
int			jobq_extend(JobqConn *conn, int64_t id, const char *token,
						int lease_s);

/* jobq_release: give a claimed job back (ready again, attempt returned).
 * Stale token: JOBQ_ERR_STALE. */
int			jobq_release(JobqConn *conn, int64_t id, const char *token);

/*
 * jobq_checkpoint: store a running job's progress (0.2.0 server, else
 * JOBQ_ERR_VERSION): state is JSON text of state_len bytes (at most
 * JOBQ_CHECKPOINT_MAX), replacing the job's checkpoint before; the job's
 * next attempt reads it with jobq_checkpoint_read (doc/flows.md,
 * "Checkpoints").  Stale token: JOBQ_ERR_STALE, nothing stored.
 */
int			jobq_checkpoint(JobqConn *conn, int64_t id, const char *token,
							const char *state, size_t state_len);

/*
 * jobq_checkpoint_read: the state of the job's last checkpoint, in this
 * attempt or an earlier one, as JSON text in *state (free with jobq_free),
 * or *state NULL when it has none or the token no longer holds the job.
 * 0.2.0 server, else JOBQ_ERR_VERSION.
 */
int			jobq_checkpoint_read(JobqConn *conn, int64_t id, const char *token,
								 char **state);

/*
 * jobq_sweep: requeue expired leases and purge history past retention, for
 * one queue or all (queue NULL), at most max_rows rows per step (-1 =
 * 1000; 1..100000).  Counts go to the non-NULL out arguments.  Safe to call
 * from any number of workers at once.
 */
int			jobq_sweep(JobqConn *conn, const char *queue, int max_rows,
					   int64_t *requeued, int64_t *dead, int64_t *purged);

/*
 * jobq_wait_for_work: wait until one of the queues may have work.  LISTENs
 * on the channels "jobq.<queue>" (once per connection) and waits on the
 * connection socket for a notification, at most timeout_ms (>= 0).
 * Returns 1 when woken (a notification arrived, or LISTEN was just issued
 * for a new channel: a job enqueued before it would have been missed, so
 * claim again), 0 on timeout or when interrupted by a signal (check your
 * flags, then call again), JOBQ_ERR on error (usually connection lost).
 * Notifications are hints: always claim after waking, and poll (claim
 * after a timeout) as well.  With JOBQ_CONNECT_NO_LISTEN it only sleeps
 * timeout_ms and returns 0.  Do not call it inside a transaction:
 * notifications are delivered only between transactions.
 */
int			jobq_wait_for_work(JobqConn *conn, const char *const *queues,
							   int nqueues, int timeout_ms);

/*
 * jobq_consume_input: for event loops that poll() jobq_socket() for
 * POLLIN themselves.  Reads what the server sent, without blocking, and
 * consumes queued notifications.  Returns 1 when at least one
 * notification arrived (a hint: claim now), 0 when none, JOBQ_ERR when
 * the connection is lost (JOBQ_ERR_CONNECTION: the socket read EOF, e.g.
 * the backend was terminated while idle).  LISTEN first with
 * jobq_wait_for_work(conn, queues, n, 0).
 */
int			jobq_consume_input(JobqConn *conn);

/*
 * Asynchronous claim, for event loops that must stay responsive (signals,
 * child processes) while a waiting claim sleeps on the server:
 *
 *	jobq_claim_start	sends the claim (arguments as jobq_claim_wait) and
 *						returns JOBQ_OK at once.  Until jobq_claim_finish,
 *						the connection is busy: any other call fails with
 *						JOBQ_ERR_BAD_ARGUMENT and nothing sent.
 *	jobq_claim_ready	reads without blocking: 1 when the answer is in (so
 *						jobq_claim_finish will not block), 0 when not yet
 *						(poll jobq_socket() for POLLIN, then ask again),
 *						JOBQ_ERR on error (connection lost: call
 *						jobq_claim_finish or jobq_reconnect).
 *	jobq_claim_interrupt asks the server to stop waiting (a cancel request
 *						over a new short connection, as PQcancel does; it
 *						blocks for that round trip).  The claim then
 *						finishes with an empty list, or with the jobs it
 *						claimed before the request arrived, which the
 *						caller owns as usual.  JOBQ_OK when sent or when
 *						no claim is in progress.
 *	jobq_claim_finish	waits for the answer (at once after
 *						jobq_claim_ready said 1) and returns the list
 *						(caller frees) or NULL with the error set; either
 *						way the connection is free again.
 */
int			jobq_claim_start(JobqConn *conn, const char *const *queues,
							 int nqueues, int max_jobs, int lease_s,
							 const char *worker, int wait_ms);
int			jobq_claim_ready(JobqConn *conn);
int			jobq_claim_interrupt(JobqConn *conn);
JobqJobList *jobq_claim_finish(JobqConn *conn);

/*
 * jobq_wait_stats: whether the server can wake waiting claims at commit
 * (*preloaded = 1: jobq is in shared_preload_libraries; 0: waiting claims
 * poll every 100 ms), and how many claims wait now and have been woken.
 * Out arguments may be NULL.  Needs role jobq_monitor; without it
 * JOBQ_ERR_SERVER with SQLSTATE 42501.
 */
int			jobq_wait_stats(JobqConn *conn, int *preloaded, int64_t *waiting,
							int64_t *wakeups);

/* ----------------------------------------------------------------------
 * Claimed jobs.  Accessors never fail on a valid job; strings are owned by
 * the job.  A NULL job gives 0 / NULL.
 * ---------------------------------------------------------------------- */

size_t		jobq_joblist_count(const JobqJobList *list);
/* Borrowed: valid while the list lives; NULL when i is out of range. */
const JobqJob *jobq_joblist_get(const JobqJobList *list, size_t i);
void		jobq_joblist_free(JobqJobList *list);

int64_t		jobq_job_id(const JobqJob *job);
const char *jobq_job_queue(const JobqJob *job);
/* JSON text, NUL-terminated; its length (without the NUL) to *len. */
const char *jobq_job_payload(const JobqJob *job, size_t *len);
int			jobq_job_attempt(const JobqJob *job);	/* 1 on the first run */
int			jobq_job_max_attempts(const JobqJob *job);
const char *jobq_job_token(const JobqJob *job);
/* The lease deadline as the server printed it (timestamptz text). */
const char *jobq_job_locked_until(const JobqJob *job);
const char *jobq_job_enqueued_at(const JobqJob *job);
/*
 * Milliseconds of lease left when the server answered, computed on the
 * server clock, so a skewed client clock does not matter: schedule the
 * heartbeat (jobq_extend) from this with a monotonic clock.
 */
int64_t		jobq_job_lease_ms(const JobqJob *job);
/*
 * The flow the job belongs to (doc/flows.md): the id jobq_flow_jobs takes;
 * 0 for a job outside every flow, and from a server whose jobq SQL is
 * 0.1.0.  Only a job in a flow can have dependency results
 * (jobq_dep_results).
 */
int64_t		jobq_job_flow_id(const JobqJob *job);

/* jobq_job_dup: an independent copy (caller frees), NULL when out of
 * memory.  Use it to keep a job after freeing its list. */
JobqJob    *jobq_job_dup(const JobqJob *job);
/* jobq_job_free: only for jobs from jobq_job_dup or jobq_joblist_take
 * (NULL-safe); never for jobs borrowed from a list. */
void		jobq_job_free(JobqJob *job);
/*
 * jobq_joblist_take: move job i out of the list without copying it (the
 * payload may be large), caller frees with jobq_job_free.  Afterwards
 * jobq_joblist_get(list, i) returns NULL; the count is unchanged.  NULL
 * when i is out of range, already taken, or out of memory (the job then
 * stays in the list).
 */
JobqJob    *jobq_joblist_take(JobqJobList *list, size_t i);

/* ----------------------------------------------------------------------
 * Operating (stats: jobq_producer/jobq_monitor; job, list: jobq_monitor;
 * retry, cancel, purge: jobq_admin)
 * ---------------------------------------------------------------------- */

/* jobq_stats: one row per queue (queue NULL = all): queue, paused, ready,
 * delayed, running, expired, dead, completed, cancelled, oldest_ready_age,
 * stale_acks.  Unknown queue: NULL with JOBQ_ERR_NOT_FOUND (a 0.2.0
 * server; 0.1.0 returned no row).  jobq_list likewise. */
JobqRows   *jobq_stats(JobqConn *conn, const char *queue);

/* jobq_job_info: everything about one job, live or finished, as one row
 * (see jobq_job in doc/sql.md).  No such job: NULL with
 * JOBQ_ERR_NOT_FOUND. */
JobqRows   *jobq_job_info(JobqConn *conn, int64_t id);

/* jobq_list: jobs of a queue ordered by id; state NULL or one of ready,
 * delayed, running, completed, dead, cancelled; max_rows -1 = 100. */
JobqRows   *jobq_list(JobqConn *conn, const char *queue, const char *state,
					  int max_rows);

/*
 * jobq_list_page: a page of the jobs of a queue (doc/sql.md, jobq_list):
 * live jobs by id, then finished ones newest first, from a cursor, passing
 * filters.  Each row also has worker, dedupe_key, next_cursor (the after
 * of the next page; NULL: nothing follows) and scan_truncated.  A 0.1.0
 * server lists without after and filters (no such columns), and refuses
 * them with JOBQ_ERR_VERSION.  opts may be NULL (every state, 100 rows).
 */
typedef struct JobqListOpts
{
	size_t		size;			/* sizeof(JobqListOpts): JOBQ_LIST_OPTS_INIT */
	const char *state;			/* NULL: every state */
	int			max_rows;		/* 1..10000, -1 = 100 */
	const char *after;			/* a next_cursor; NULL: from the start */
	const char *filters;		/* a JSON object of job filters; NULL: none */
} JobqListOpts;

#define JOBQ_LIST_OPTS_INIT { sizeof(JobqListOpts), NULL, -1, NULL, NULL }

JobqRows   *jobq_list_page(JobqConn *conn, const char *queue, const JobqListOpts *opts);

/* jobq_retry: dead -> ready.  Not found: JOBQ_ERR_NOT_FOUND; not dead, or
 * its dedupe key is taken by a live job: JOBQ_ERR_STATE. */
int			jobq_retry(JobqConn *conn, int64_t id);
/* jobq_retry_queue: retry every dead job of a queue; count to *n. */
int			jobq_retry_queue(JobqConn *conn, const char *queue, int64_t *n);
/* jobq_cancel: ready or dead -> cancelled.  Not found: JOBQ_ERR_NOT_FOUND;
 * other states (running, finished): JOBQ_ERR_STATE. */
int			jobq_cancel(JobqConn *conn, int64_t id);
/* jobq_purge: delete finished jobs (state NULL = completed, dead and
 * cancelled) finished at least older_than_s ago (-1 = 0); count to *n. */
int			jobq_purge(JobqConn *conn, const char *queue, const char *state,
					   int older_than_s, int64_t *n);

/*
 * jobq_cron_tick: fire the due ticks of up to max_schedules schedules
 * (-1 = 100; 1 .. JOBQ_CRON_TICK_MAX), in a transaction of its own unless
 * the caller opened one.  One row per tick handled: schedule, tick, job_id
 * (NULL unless enqueued), status (enqueued, skipped, failed); caller frees
 * with jobq_rows_free.  NULL on error; a 0.1.0 server has no schedules
 * (JOBQ_ERR_SERVER, SQLSTATE 42883).  Role jobq_worker; any number of
 * callers at once is safe (doc/sql.md, jobq_cron_tick).
 */
JobqRows   *jobq_cron_tick(JobqConn *conn, int max_schedules);

/* ----------------------------------------------------------------------
 * Awaiting a job's outcome (roles jobq_producer, jobq_monitor; 0.2.0 SQL)
 * ---------------------------------------------------------------------- */

/*
 * What jobq_await found.  The caller owns the struct (start from
 * JOBQ_OUTCOME_INIT, which sets size); jobq_await fills it, and the
 * strings it points to are the struct's: jobq_outcome_clear frees them and
 * resets the struct for reuse.  A second jobq_await into the same struct
 * clears it first.
 *
 *	state		JOBQ_STATE_COMPLETED, _DEAD or _CANCELLED when finished;
 *				_READY or _RUNNING with timed_out = 1 when the wait ended
 *				first; JOBQ_STATE_UNKNOWN with purged = 1 when the id was
 *				issued but the job is in neither table (purged by
 *				retention, or its enqueue rolled back or not committed)
 *	result		the worker's result as JSON text, or NULL
 *	last_error	a dead job's last error (a live job's last failure), or NULL
 *	attempt		the attempt count as last seen, -1 when unknown
 *	finished_at	when it finished (timestamptz text), or NULL
 */
typedef struct JobqOutcome
{
	size_t		size;			/* sizeof(JobqOutcome): JOBQ_OUTCOME_INIT */
	JobqState	state;
	int			purged;
	int			timed_out;
	int			attempt;
	char	   *result;
	char	   *last_error;
	char	   *finished_at;
} JobqOutcome;

#define JOBQ_OUTCOME_INIT { sizeof(JobqOutcome), JOBQ_STATE_UNKNOWN, 0, 0, -1, NULL, NULL, NULL }

/* jobq_await flags */
#define JOBQ_AWAIT_ATTEMPT			0x01	/* return when the next attempt
											 * ends, not only when finished */
#define JOBQ_AWAIT_CANCEL_ON_TIMEOUT 0x02	/* cancel the job if still ready
											 * when the wait ends */

/*
 * jobq_await: wait up to timeout_ms (0 .. 3,600,000) for job id's outcome
 * and fill *out (CALL jobq_await, doc/sql.md "Awaiting a result").  A job
 * that died or was cancelled is JOBQ_OK with that state, not an error.
 * Outside a transaction the server holds no snapshot while it waits, and
 * it works through PgBouncer transaction pooling; inside one (the caller
 * ran BEGIN) its wait is capped at 30 s.  The call timeout
 * (jobq_set_call_timeout) runs on top of timeout_ms.  Errors: a bad id,
 * timeout, flags or out (JOBQ_ERR_BAD_ARGUMENT), an id never issued
 * (JOBQ_ERR_SERVER 22023), a 0.1.0 server (JOBQ_ERR_VERSION).
 */
int			jobq_await(JobqConn *conn, int64_t id, int timeout_ms, int flags,
					   JobqOutcome *out);
void		jobq_outcome_clear(JobqOutcome *out);

/* ----------------------------------------------------------------------
 * Metrics over time (0.2.0 SQL; jobq_producer, jobq_monitor, jobq_reader)
 * ---------------------------------------------------------------------- */

/* jobq_metrics: the rows of jobq_metrics(queue, since, until, bucket) (see
 * doc/sql.md): per queue (NULL = all) and bucket, counters, wait_hist and
 * run_hist as the server's array texts, the percentiles and
 * oldest_ready_age as intervals, complete.  since and until are
 * timestamptz texts, bucket an interval text; NULL takes the default (the
 * last hour, one minute).  Unknown queue: NULL with JOBQ_ERR_NOT_FOUND; a
 * bad period or bucket: JOBQ_ERR_SERVER with its SQLSTATE. */
JobqRows   *jobq_metrics(JobqConn *conn, const char *queue, const char *since,
						 const char *until, const char *bucket);

/* jobq_stat_jobq: the rows of the view pg_stat_jobq (queue NULL = all):
 * the counts and the last finished minute's counters and percentiles. */
JobqRows   *jobq_stat_jobq(JobqConn *conn, const char *queue);

/*
 * jobq_health: the server's findings (jobq_health in doc/sql.md), one row
 * each: severity (ok, warning, critical), check, subject, detail, advice,
 * critical first.  Needs a 0.2.0 server; jobq_monitor or jobq_reader.
 */
JobqRows   *jobq_health(JobqConn *conn);

/*
 * jobq_audit: the audit trail of operator calls, newest first: id, at,
 * actor, role, action, queue, ids, filters, detail, affected.  queue NULL =
 * every queue; max_rows -1 = 100 (at most 10000); before_id 0 = from the
 * newest, else rows with a smaller id (the next page).  Needs a 0.2.0
 * server; jobq_admin.
 */
/*
 * jobq_groups: a page of the groups of a queue that groups its jobs, in key
 * order after after_key (NULL: from the first): key, running, live,
 * live_capped, head_id, head_run_at, blocked_by, blocked_at, eligible, tat,
 * last_claim_at.  only_blocked != 0: those a dead head blocks.  max_rows -1
 * = 100 (at most 10000).  Needs a 0.2.0 server; jobq_monitor.  Caller frees
 * with jobq_rows_free.  NULL on error.
 */
JobqRows   *jobq_groups(JobqConn *conn, const char *queue, int only_blocked, int max_rows,
						const char *after_key);

JobqRows   *jobq_audit(JobqConn *conn, const char *queue, int max_rows,
					   int64_t before_id);

/*
 * jobq_bulk_where: one call of a bulk action by filter (jobq_retry_where,
 * jobq_cancel_where, jobq_delete_where, jobq_run_now_where in doc/sql.md):
 * on the page of at most max_rows (-1 = 1000) jobs of queue that jobq_list
 * lists for state (NULL = every state the action takes) and filters (a JSON
 * object, NULL = none) from cursor after (NULL = the start).  *affected
 * receives how many jobs changed; *next_cursor (when not NULL) the cursor
 * to pass as after for the rest, or NULL when there is no more: the caller
 * frees it with jobq_free.  Loop while *next_cursor is not NULL, one call
 * per transaction.  Needs a 0.2.0 server; jobq_admin.
 */
typedef enum JobqBulkAction
{
	JOBQ_BULK_RETRY,			/* dead -> ready */
	JOBQ_BULK_CANCEL,			/* ready, delayed, dead -> cancelled */
	JOBQ_BULK_DELETE,			/* finished jobs deleted */
	JOBQ_BULK_RUN_NOW			/* delayed -> due now */
} JobqBulkAction;

int			jobq_bulk_where(JobqConn *conn, JobqBulkAction action, const char *queue,
							const char *state, const char *filters, int max_rows,
							const char *after, int64_t *affected, char **next_cursor);

/* ----------------------------------------------------------------------
 * The worker registry (0.2.0 SQL; doc/libjobq.md, "Worker registry").
 * Advisory: a program that claims may register so that operators see it
 * and can quiet, stop or resume it; claiming never requires it.  Against
 * a database whose jobq SQL is 0.1.0 every call here is JOBQ_ERR_VERSION,
 * sent nothing.  Claim with the worker id as the claim's worker label:
 * then jobq_workers lists your running jobs, and a signal ends your
 * waiting claim at once (it returns no jobs: heartbeat then).
 * ---------------------------------------------------------------------- */

#define JOBQ_WORKER_ID_LEN 36			/* text form of a uuid */

/* The state a worker is asked to be in (jobq_worker_heartbeat's answer) */
typedef enum JobqWorkerState
{
	JOBQ_WORKER_UNREGISTERED = 0,	/* no registration: register again with
									 * the same id (JobqWorkerOpts.worker_id) */
	JOBQ_WORKER_RUNNING,		/* claim */
	JOBQ_WORKER_QUIET,			/* stop claiming, finish the running jobs,
								 * keep heartbeating */
	JOBQ_WORKER_STOPPING		/* exit as on SIGTERM */
} JobqWorkerState;

/*
 * What a worker says about itself; every field unset by the INIT macro
 * is not sent (NULL on the server).  A size field first, as the other
 * options structs (see above).
 */
typedef struct JobqWorkerOpts
{
	size_t		size;			/* sizeof(JobqWorkerOpts): JOBQ_WORKER_OPTS_INIT */
	const char *host;			/* NULL = none; 1..200 bytes */
	int			pid;			/* 0 = none */
	const char *const *queues;	/* the queues it claims from, nqueues of */
	int			nqueues;		/* them; 0 = none said */
	int			slots;			/* 0 = none said; else 1..100000 */
	const char *version;		/* NULL = none */
	const char *metadata;		/* a JSON object's text, NULL = {} */
	int			timeout_s;		/* 0 = jobq.worker_timeout; else 2..86400 */
	const char *worker_id;		/* NULL = a new id; else register again
								 * under this one */
} JobqWorkerOpts;

#define JOBQ_WORKER_OPTS_INIT \
	{ sizeof(JobqWorkerOpts), NULL, 0, NULL, 0, 0, NULL, NULL, 0, NULL }

/*
 * jobq_worker_register: register as name (1..200 bytes) with opts (NULL:
 * none).  Writes the worker id to worker_id (JOBQ_WORKER_ID_LEN + 1
 * bytes) and, when not NULL, the heartbeat interval the server asks for
 * to *heartbeat_ms.  Role jobq_worker.
 */
int			jobq_worker_register(JobqConn *conn, const char *name,
								 const JobqWorkerOpts *opts,
								 char *worker_id, int *heartbeat_ms);
/*
 * jobq_worker_heartbeat: the worker is alive and runs busy jobs (-1: as
 * last said); own is the state it is in by itself (JOBQ_WORKER_QUIET or
 * JOBQ_WORKER_STOPPING, e.g. after a SIGTERM; JOBQ_WORKER_RUNNING or
 * JOBQ_WORKER_UNREGISTERED: nothing to say); metadata a JSON object or
 * NULL (unchanged).  Returns the state asked of the worker, or -1 on
 * error.
 */
int			jobq_worker_heartbeat(JobqConn *conn, const char *worker_id,
								  int busy, JobqWorkerState own,
								  const char *metadata);
/* jobq_worker_deregister: on a clean exit; 1 removed, 0 not registered,
 * -1 on error. */
int			jobq_worker_deregister(JobqConn *conn, const char *worker_id);
/* jobq_workers: every registration, one row each (the columns of SQL's
 * jobq_workers()); caller frees with jobq_rows_free.  NULL on error.
 * Role jobq_monitor or jobq_worker. */
JobqRows   *jobq_workers(JobqConn *conn);
/* jobq_queue_consumers: per queue, the live registered workers that name
 * it, those claiming and their slots, and unserved ("t": jobs due, not
 * paused, nobody claiming): the columns of SQL's jobq_queue_consumers();
 * caller frees with jobq_rows_free.  NULL on error.  Role jobq_monitor or
 * jobq_worker. */
JobqRows   *jobq_queue_consumers(JobqConn *conn);
/*
 * jobq_worker_signal: ask workers to "quiet", "stop" or "resume"; target
 * is "*", a worker id, or a LIKE pattern of name or host.  Returns how
 * many workers are now in the state asked for, or -1 on error.  Role
 * jobq_admin.
 */
int			jobq_worker_signal(JobqConn *conn, const char *target,
							   const char *signal);
/* The name of a state ("running", ...), never NULL */
const char *jobq_worker_state_name(JobqWorkerState state);

/* ----------------------------------------------------------------------
 * Result tables.  Values are the server's text forms, owned by rows.
 * ---------------------------------------------------------------------- */

size_t		jobq_rows_count(const JobqRows *rows);
int			jobq_rows_ncols(const JobqRows *rows);
const char *jobq_rows_colname(const JobqRows *rows, int col);
/* -1 when there is no such column */
int			jobq_rows_colindex(const JobqRows *rows, const char *name);
/* NULL for SQL NULL or out-of-range row/col */
const char *jobq_rows_value(const JobqRows *rows, size_t row, int col);
/* By column name: NULL when missing or SQL NULL. */
const char *jobq_rows_get(const JobqRows *rows, size_t row, const char *name);
/* Integer column by name; 0 when missing or NULL. */
int64_t		jobq_rows_get_int64(const JobqRows *rows, size_t row,
								const char *name);
/*
 * jobq_rows_json: the rows as a JSON array of objects (numbers and booleans
 * unquoted, json/jsonb columns embedded, NULL as null).  Caller frees with
 * jobq_free; NULL when out of memory.
 */
char	   *jobq_rows_json(const JobqRows *rows);
void		jobq_rows_free(JobqRows *rows);

#ifdef __cplusplus
}
#endif

#endif							/* JOBQ_CLIENT_H */
