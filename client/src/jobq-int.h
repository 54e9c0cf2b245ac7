/*-------------------------------------------------------------------------
 *
 * jobq-int.h
 *	  Private declarations of libjobq: the structs behind the opaque
 *	  handles of jobq-client.h and helpers shared by the source files.
 *
 * Nothing here is part of the ABI.  Programs include jobq-client.h only;
 * these structs may change in any release.
 *
 * A JobqConn owns its PGconn, the schema-qualified text of every
 * statement, the per-connection "already prepared" flags (named prepared
 * statements live in the server session, so they are forgotten on
 * reconnect) and the set of channels it LISTENs on.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/src/jobq-int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JOBQ_INT_H
#define JOBQ_INT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "jobq-client.h"

/* the number of elements of an array */
#define lengthof(array) (sizeof(array) / sizeof((array)[0]))
#include "jobq-common.h"

#ifndef LIBPQ_HAS_PIPELINING
#error "libjobq needs libpq 14 or later (pipeline mode)"
#endif

#define JOBQ_ERRMSG_SIZE 1024

/*
 * The fixed statements.  Each has a template with one "%s" for the quoted
 * API schema (see stmt_templates in conn.c) and becomes the named
 * prepared statement "jobq_<index>" on first use.
 */
typedef enum JobqStmt
{
	STMT_ENQUEUE = 0,
	STMT_ENQUEUE_BATCH,
	STMT_CLAIM_ONE,
	STMT_CLAIM_ANY,
	STMT_COMPLETE,
	STMT_COMPLETE_BATCH,
	STMT_COMPLETE_BATCH_POS,	/* 0.2.0 SQL: JOBQ_SQL_BATCH_POSITIONS */
	STMT_FAIL,
	STMT_EXTEND,
	STMT_RELEASE,
	STMT_SWEEP,
	STMT_STATS,
	STMT_JOB,
	STMT_LIST,
	STMT_LIST_PAGE,				/* 0.2.0 SQL: JOBQ_SQL_LIST_PAGES */
	STMT_QUEUES,
	STMT_RETRY,
	STMT_RETRY_QUEUE,
	STMT_CANCEL,
	STMT_PURGE,
	STMT_PAUSE,
	STMT_RESUME,
	STMT_DROP_QUEUE,
	STMT_CREATE_QUEUE,			/* these two pass the 0.1.0 settings, */
	STMT_ALTER_QUEUE,			/* JOBQ_QUEUE_STMT_SETTINGS of them */
	STMT_CREATE_QUEUE_020,		/* and these every setting: */
	STMT_ALTER_QUEUE_020,		/* JOBQ_SQL_QUEUE_SETTINGS, JOBQ_QUEUE_STMT_SETTINGS_020 */
	STMT_WAIT_STATS,
	STMT_SERVER_VERSION,
	STMT_AWAIT,					/* 0.2.0 SQL: the procedure jobq_await */
	STMT_METRICS,				/* 0.2.0 SQL: metrics.c */
	STMT_STAT_JOBQ,
	STMT_CRON_TICK,				/* 0.2.0 SQL */
	STMT_WORKER_REGISTER,		/* the worker registry: 0.2.0 SQL, */
	STMT_WORKER_HEARTBEAT,		/* JOBQ_SQL_WORKERS */
	STMT_WORKER_DEREGISTER,
	STMT_WORKERS,
	STMT_QUEUE_CONSUMERS,
	STMT_WORKER_SIGNAL,
	STMT_HEALTH,				/* 0.2.0 SQL: health and audit */
	STMT_AUDIT,
	STMT_RETRY_WHERE,			/* the bulk actions by filter, in */
	STMT_CANCEL_WHERE,			/* JobqBulkAction order */
	STMT_DELETE_WHERE,
	STMT_RUN_NOW_WHERE,
	STMT_FAIL_RATE_LIMITED,		/* JOBQ_SQL_RATE_LIMITED */
	STMT_GROUPS,				/* JOBQ_SQL_GROUPS */
	STMT_ENQUEUE_020,			/* enqueue with a group or dependencies: */
	STMT_ENQUEUE_BATCH_020,		/* JOBQ_SQL_ENQUEUE_020 */
	STMT_CLAIM_ONE_020,			/* the claims with the jobs' flow_id, */
	STMT_CLAIM_ANY_020,			/* JOBQ_SQL_FLOWS */
	STMT_DEP_RESULTS,			/* JOBQ_SQL_FLOWS: the dependency results */
	STMT_DEP_RESULTS_MANY,		/* of one job, of many */
	STMT_CHECKPOINT,			/* JOBQ_SQL_CHECKPOINTS */
	STMT_CHECKPOINT_READ,
	STMT__COUNT
} JobqStmt;

/* The first SQL release with jobq_complete_batch_positions (server_sql) */
#define JOBQ_SQL_BATCH_POSITIONS 200
/* The first SQL release with the worker registry */
#define JOBQ_SQL_WORKERS 200
/* The first SQL release whose jobq_list takes after and filters */
#define JOBQ_SQL_LIST_PAGES 200
/* the queue settings of 0.2.0 (JOBQ_QUEUE_SETTINGS_020) */
#define JOBQ_SQL_QUEUE_SETTINGS 200
/* jobq_fail with rate_limit_for (issue 19) */
#define JOBQ_SQL_RATE_LIMITED 200
/* jobq_groups (issue 19) */
#define JOBQ_SQL_GROUPS 200
/* jobq_enqueue's group_key and depends_on, jobq_enqueue_batch's group_keys */
#define JOBQ_SQL_ENQUEUE_020 200
/* flows (issue 18): jobq_claim's flow_id, jobq_dep_results */
#define JOBQ_SQL_FLOWS 200
/* jobq_checkpoint, jobq_checkpoint_read (issue 18) */
#define JOBQ_SQL_CHECKPOINTS 200

/* Settings after the queue name in STMT_CREATE_QUEUE and STMT_ALTER_QUEUE */
#define JOBQ_QUEUE_STMT_SETTINGS 7
/* ... and in STMT_CREATE_QUEUE_020 and STMT_ALTER_QUEUE_020 */
#define JOBQ_QUEUE_STMT_SETTINGS_020 20

struct JobqConn
{
	PGconn	   *pg;				/* NULL only after an out-of-memory */
	char	   *conninfo;		/* as given (NULL = environment) */
	char	   *schema;			/* validated API schema name */
	unsigned	flags;			/* JOBQ_CONNECT_* */
	char	  **defkeys;		/* jobq_connect_params defaults (copies), */
	char	  **defvals;		/* NULL-terminated, or NULL */
	int			busy;			/* a jobq_claim_start claim is in flight */
	int			interrupted;	/* jobq_claim_interrupt was called for it */
	char	   *sql[STMT__COUNT];	/* schema-qualified statement texts */
	char	   *qschema;		/* the schema, quoted as an identifier */
	unsigned char prepared[STMT__COUNT];	/* prepared in this session */
	int			call_timeout_ms;	/* jobq_set_call_timeout; 0 = none */
	int64_t		call_deadline;	/* monotonic ms: the answer in flight is
								 * overdue after this; 0 = no call or no
								 * timeout */
	int			server_sql;		/* the server's jobq SQL release, as
								 * MAJOR*10000+MINOR*100+PATCH (0.1.0 when
								 * it has no jobq_server_version; 0 when it
								 * could not be read); checked at connect */

	/* channels LISTENed on in this session ("jobq.<queue>") */
	char	  **channels;
	size_t		nchannels;
	size_t		channels_cap;

	/* error state of the last call */
	JobqErrorClass err;
	char		errmsg[JOBQ_ERRMSG_SIZE];
	char		sqlstate[6];
	char		errprimary[JOBQ_ERRMSG_SIZE];	/* server error fields, "" = */
	char		errdetail[JOBQ_ERRMSG_SIZE];	/* not sent */
	char		errhint[JOBQ_ERRMSG_SIZE];
};

struct JobqJob
{
	int64_t		id;
	char	   *queue;
	char	   *payload;
	size_t		payload_len;
	int			attempt;
	int			max_attempts;
	char		token[JOBQ_TOKEN_LEN + 1];
	char	   *locked_until;
	char	   *enqueued_at;
	int64_t		lease_ms;
	int64_t		flow_id;		/* 0: outside every flow (or a 0.1.0 server) */
	int			borrowed;		/* part of a JobqJobList: not freed alone */
	int			taken;			/* moved out by jobq_joblist_take */
};

struct JobqJobList
{
	size_t		n;
	JobqJob    *jobs;
};

struct JobqRows
{
	PGresult   *res;			/* PGresults outlive their connection */
};

/* error.c */
void		jobq_clear_error(JobqConn *conn);
void		jobq_set_error(JobqConn *conn, JobqErrorClass cls,
						   const char *fmt,...) JOBQ_PRINTF(3, 4);
void		jobq_set_result_error(JobqConn *conn, const PGresult *res);
int			jobq_check_queue(JobqConn *conn, const char *queue);
int			jobq_check_id(JobqConn *conn, int64_t id);
int			jobq_check_token(JobqConn *conn, const char *token);
int			jobq_check_range(JobqConn *conn, const char *what, long long v,
							 long long lo, long long hi);
int			jobq_state_finished(JobqState state);
void		jobq_states_text(char *buf, size_t size, int finished_only,
							 const char *extra);

/* conn.c */
int			jobq_ensure_connected(JobqConn *conn);
int			jobq_require_sql(JobqConn *conn, int min, const char *what);
PGresult   *jobq_exec(JobqConn *conn, JobqStmt stmt, int nparams,
					  const char *const *values, int expect_tuples);
int			jobq_send(JobqConn *conn, JobqStmt stmt, int nparams,
					  const char *const *values);
int			jobq_prepare(JobqConn *conn, JobqStmt stmt);
void		jobq_note_failure(JobqConn *conn, PGresult *res);
PGresult   *jobq_exec_within(JobqConn *conn, JobqStmt stmt, int nparams,
							 const char *const *values, int expect_tuples,
							 int extra_ms);

/* the call timeout (conn.c) */
int64_t		jobq_now_ms(void);
void		jobq_call_started(JobqConn *conn, int extra_ms);
int			jobq_call_expired(JobqConn *conn);
int			jobq_await_answer(JobqConn *conn);
int			jobq_get_result(JobqConn *conn, int extra_ms, PGresult **res);

/* values.c */
char	   *jobq_copy_json(JobqConn *conn, const char *what, const char *text,
						   size_t len);
void		jobq_buf_array_elem(JobqBuf *b, const char *s, size_t len);
int			jobq_parse_int64(JobqConn *conn, const char *s, int64_t *out);
int			jobq_copy_opts(JobqConn *conn, const char *what, const void *given,
						   void *local, const size_t *sizes, size_t nsizes);

/*
 * The sizes each options struct had in a release that shipped it, oldest
 * first, the current sizeof last.  Any other size is refused: a program
 * that fills the struct by position (as 0.1.0's had no size field) puts
 * its first value into size, and a size that ends inside a field would
 * mix its bytes with the defaults.  A release that appends a field lists
 * the old size as offsetof(struct, new_field) before sizeof.
 */
#define JOBQ_QUEUE_OPTS_SIZES	{ sizeof(JobqQueueOpts) }	/* 0.2.0 */
#define JOBQ_ENQUEUE_OPTS_SIZES { sizeof(JobqEnqueueOpts) } /* 0.2.0 */
#define JOBQ_WORKER_OPTS_SIZES	{ sizeof(JobqWorkerOpts) }	/* 0.2.0 */
#define JOBQ_LIST_OPTS_SIZES	{ sizeof(JobqListOpts) }	/* 0.2.0 */
const char *jobq_single_value(JobqConn *conn, const PGresult *res, int *ok);

/* claim.c (the claim half of jobq_complete_and_claim in ack.c) */
JobqJobList *jobq_joblist_from_result(JobqConn *conn, const PGresult *res);
int			jobq_claim_params(JobqConn *conn, const char *const *queues,
							  int nqueues, int max_jobs, int lease_s,
							  const char *worker, int wait_ms, JobqBuf *arr,
							  char *nbuf, char *lbuf, char *wbuf,
							  const char **values, JobqStmt *stmt);

/* rows.c */
JobqRows   *jobq_rows_from(JobqConn *conn, PGresult *res);

#endif							/* JOBQ_INT_H */
