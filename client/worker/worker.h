/*-------------------------------------------------------------------------
 *
 * worker.h
 *	  Declarations shared by the files of jobq-worker.
 *
 * jobq-worker claims jobs from one or more queues and runs a handler for
 * each: an executable (payload on stdin, result on stdout) or, for programs
 * that link these files, a C callback run in a forked child (jobq-worker.h).
 * Vocabulary:
 *	job		a claimed row: id, queue, payload, attempt, token
 *	lease	how long the claim is ours (locked_until on the server); kept
 *			alive by the heartbeat while the handler runs
 *	token	the claim token; complete, fail, extend and release present it,
 *			and a stale token (lease lost) changes nothing
 *	slot	one of the --concurrency places a handler process runs in
 *	ack		the complete/fail/release that reports a finished job; acks
 *			wait in a queue while the server is unreachable
 *
 * The worker is single-threaded: one poll() loop over the handler pipes,
 * the connection's socket (LISTEN, or the answer of a waiting claim) and
 * a self-pipe the signal handlers write to.  It uses exactly one database
 * connection, through libjobq, and never holds a transaction open while a
 * handler runs (every statement is its own transaction).
 *
 * Files: options.c (command line), loop.c (start-up, signals, the event
 * loop), flow.c (claim policy, backlog, acks, heartbeats), db.c (the
 * database session and its calls), handler.c (handler processes), log.c,
 * util.c, registry.c (the worker registry: register, heartbeat, the state
 * asked of us), title.c (the process title), checkpoint.c (an earlier
 * attempt's checkpoint handed to the handler, a persistent handler's stored).
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/worker/worker.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JOBQ_WORKER_H
#define JOBQ_WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <poll.h>
#include <sys/types.h>

#include "jobq-client.h"
#include "jobq-common.h"
#include "jobq-worker.h"

/* Bounds on what we keep of a handler's output (see handler.c). */
#define MAX_RESULT_BYTES	(1024 * 1024)	/* server's default payload limit */
#define STDERR_TAIL_BYTES	4000	/* server keeps 4096 bytes of error */

/* Handler exit codes with a meaning of their own (sysexits.h values). */
#define EXIT_RETRY_LATER	75		/* EX_TEMPFAIL */
#define EXIT_PERMANENT		65		/* EX_DATAERR */
#define EXIT_RATE_LIMITED	69		/* EX_UNAVAILABLE: the upstream said "too many
										 * requests"; stdout may say for how long:
										 * JOBQ_RETRY_AFTER=<seconds> */
#define RATE_LIMITED_DEFAULT_S	60	/* without JOBQ_RETRY_AFTER */

/* --persistent: the most jobs one handler process may take at a time */
#define JOBQ_PERSISTENT_JOBS_MAX 1000
/* --persistent: the longest an answered job waits for others to be reported with */
#define PERSISTENT_ACK_WAIT_S 0.002
/*
 * --prefetch=auto: jobs are claimed ahead (--persistent) once the jobs of the
 * handler processes take less than this on average, and no longer once they
 * take twice as long (flow.c).  NB: a job's time as the worker sees it
 * includes the round trip the worker was in when the answer came, so a slow
 * server or a busy machine makes jobs look longer: the gap between the two
 * keeps the worker from turning it on and off with every batch.
 */
#define PREFETCH_JOB_MAX_S 0.025
/* --persistent: the most handler processes */
#define JOBQ_PERSISTENT_PROCS_MAX 1000

/* jobq-worker's own exit status when the handler cannot be executed any more */
#define WORKER_EXIT_HANDLER_GONE 4

/* A ring that keeps the last STDERR_TAIL_BYTES bytes written to it. */
typedef struct Ring
{
	char		data[STDERR_TAIL_BYTES];
	size_t		start;
	size_t		len;
	bool		wrapped;		/* older bytes were lost */
} Ring;

/*
 * One claimed job: libjobq's JobqJob (taken from the claim's list, so the
 * payload is not copied again) plus the worker's monotonic timers.
 */
typedef struct Job
{
	JobqJob    *jj;				/* owned; NULL once freed */
	char	   *deps;			/* owned: a job in a flow, its dependency
								 * results (JSON, jobq_dep_results), read
								 * with the claim; NULL outside flows */
	double		claimed_at;		/* monotonic seconds */
	double		lease_len;		/* seconds the claim granted (server clock) */
	double		next_heartbeat; /* monotonic; 0 = none */
	double		lease_ends;		/* monotonic estimate of locked_until */
	/* checkpoints (checkpoint.c): an earlier attempt's state, if any */
	char	   *checkpoint;		/* --persistent: the state (JSON text) */
	char	   *checkpoint_file;	/* else: a file holding it */
} Job;

static inline long long
job_id(const Job *job)
{
	return (long long) jobq_job_id(job->jj);
}

static inline const char *
job_queue(const Job *job)
{
	return jobq_job_queue(job->jj);
}

static inline const char *
job_token(const Job *job)
{
	return jobq_job_token(job->jj);
}

static inline int
job_attempt(const Job *job)
{
	return jobq_job_attempt(job->jj);
}

static inline int
job_max_attempts(const Job *job)
{
	return jobq_job_max_attempts(job->jj);
}

typedef enum KillReason
{
	KILL_NONE = 0,
	KILL_TIMEOUT,
	KILL_LEASE_LOST,
	KILL_SHUTDOWN
} KillReason;

struct Proc;

/*
 * A running job: in a handler process of its own, or (--persistent) in one
 * of the long-lived handler processes (proc), which may run several.
 */
typedef struct Slot
{
	bool		busy;
	Job			job;
	struct Proc *proc;			/* --persistent: its process; NULL = its own */
	pid_t		pid;
	bool		exited;
	int			status;			/* from waitpid */
	int			fd_in;			/* payload to the child; -1 when done */
	int			fd_out;
	int			fd_err;
	size_t		in_off;
	JobqBuf		out;			/* stdout, at most MAX_RESULT_BYTES */
	Ring		err;
	double		started;
	double		deadline;		/* --timeout; 0 = none */
	double		kill_at;		/* SIGKILL after SIGTERM; 0 = not yet */
	KillReason	kill_reason;
} Slot;

typedef enum AckKind
{
	ACK_COMPLETE,
	ACK_FAIL,
	ACK_RELEASE
} AckKind;

/* A finished job waiting to be reported to the server. */
typedef struct Ack
{
	struct Ack *next;
	AckKind		kind;
	Job			job;
	char	   *result;			/* ACK_COMPLETE: stdout, may be NULL */
	char	   *error;			/* ACK_FAIL */
	bool		permanent;
	bool		has_retry_in;	/* ACK_FAIL: retry after retry_in seconds, */
	int			retry_in;		/* not after the queue's backoff */
	bool		rate_limited;	/* ACK_FAIL: back after retry_in seconds, the
								 * attempt not counted, the rate held */
	const char *outcome;		/* for the log: completed, retry, ... */
	int			exit_code;		/* -1 when signalled */
	int			signo;
	double		duration;
} Ack;

typedef enum DbStatus
{
	DB_OK,
	DB_CONN,					/* connection lost or wrong node: reconnect */
	DB_ERROR					/* the statement failed; not worth retrying */
} DbStatus;

/* How an idle worker waits for work (--wait-mode). */
typedef enum WaitMode
{
	WAIT_AUTO,					/* blocking when the server is preloaded, else
								 * LISTEN; LISTEN while handlers run */
	WAIT_BLOCKING,				/* blocking claim when idle, no LISTEN */
	WAIT_LISTEN,				/* LISTEN + poll */
	WAIT_POLL					/* poll only (--no-listen) */
} WaitMode;

/*
 * The database session, written by db.c alone; the rest of the worker
 * reads it.  db.c reports what happened through its return values, and
 * the loop decides what to do about it.
 */
typedef struct DbSession
{
	JobqConn   *conn;			/* NULL before the first connect */
	bool		connected;		/* conn has a live session */
	bool		listening;		/* LISTENs in this session */
	bool		blocking;		/* idle claims wait on the server (session) */
	bool		claiming;		/* a waiting claim is in flight */
	double		claim_started;	/* monotonic */
	double		claim_deadline; /* monotonic: no answer by then = dead */
	bool		mode_logged;
	double		reconnect_at;	/* monotonic; when not connected */
	double		backoff;		/* the next reconnect's delay */
	bool		ever_connected;
} DbSession;

/*
 * The worker's registration in the server's worker registry (registry.c).
 * The id is kept across registrations: after the registry lost us (a
 * prune, a server crash) we register again under it, so the jobs we
 * claimed under it stay ours.
 */
typedef struct Registry
{
	bool		off;			/* the server has no registry (0.1.0 SQL) */
	bool		registered;		/* in the registry of this session's server */
	bool		fresh;			/* no heartbeat since the registration */
	char		id[JOBQ_WORKER_ID_LEN + 1]; /* "" before the first registration */
	double		every;			/* heartbeat interval (seconds) */
	double		next_beat;		/* monotonic */
} Registry;

/*
 * A long-lived handler process of --persistent (persistent.c): jobs go to
 * it as lines on its stdin, answers come back as lines on its stdout.
 */
typedef struct Proc
{
	int			index;			/* in Worker.procs, for the log */
	pid_t		pid;			/* 0 = not running */
	int			fd_in;			/* -1 when closed */
	int			fd_out;
	int			fd_err;
	JobqBuf		inbuf;			/* lines not yet written to its stdin */
	size_t		in_off;
	JobqBuf		line;			/* stdout read, not yet a whole line */
	JobqBuf		errline;		/* stderr read, not yet a whole line */
	Ring		err;			/* stderr tail, for the jobs' error texts */
	bool		ready;			/* sent its ready line */
	int			capacity;		/* jobs at a time (its ready line) */
	int			running;		/* jobs it has now */
	long		jobs_done;
	double		started;		/* monotonic */
	double		restart_at;		/* monotonic, when pid == 0; 0 = never */
	double		backoff;		/* the next restart's delay */
	double		kill_at;		/* SIGKILL after SIGTERM; 0 = none due */
	const char *stop_why;		/* why we stopped it: the others' error */
} Proc;

typedef struct Worker
{
	/* options */
	const char *conninfo;
	char	  **queues;
	int			nqueues;
	int			concurrency;
	int			batch;			/* jobs per claim; default --concurrency */
	double		lease;			/* 0 = the queue's lease */
	double		heartbeat;		/* <0 = a third of the lease; 0 = off */
	double		timeout;		/* 0 = none */
	double		kill_after;		/* SIGTERM -> SIGKILL delay */
	long		max_jobs;		/* 0 = unlimited */
	bool		burst;
	WaitMode	wait_mode;
	const char *schema;
	double		poll_interval;
	double		sweep_interval; /* 0 = never */
	double		cron_interval;	/* 0 = never; also once the server has no
								 * jobq_cron_tick (SQL 0.1.0) */
	double		db_timeout;		/* seconds a call waits for an answer */
	double		grace;
	const char *registry_name;	/* --name; NULL = worker_name */
	double		worker_timeout; /* --worker-timeout; 0 = the server's */
	bool		log_json;
	const char *log_file;
	char	  **handler_argv;
	int			persistent;		/* --persistent: long-lived processes; 0 = a
								 * process per job */
	int			prefetch;		/* --prefetch: jobs claimed ahead; -1 = auto */
	JobqWorkerCallback callback;
	void	   *callback_arg;

	/* state */
	char		worker_name[128];
	const char *claim_label;	/* the claims' worker label: worker_name, or
								 * the registry id once registered */
	Registry	reg;
	bool		quiet;			/* the registry asked us not to claim */
	DbSession	db;
	int			claim_asked;	/* jobs the waiting claim asked for */
	double		claim_wait;		/* and how long it may wait (seconds) */
	Slot	   *slots;
	Proc	   *procs;			/* --persistent of them */
	Job		   *backlog;		/* claimed, not started */
	int			nbacklog;
	int			backlog_cap;
	Ack		   *acks_head;
	Ack		   *acks_tail;
	double		acks_since;		/* monotonic: when acks_head was queued */
	long		started_jobs;
	long		finished_jobs;
	double		job_time_avg;	/* --persistent: moving average of the jobs'
								 * time in a handler process (seconds) */
	long		jobs_timed;		/* the answers it is made of */
	bool		claiming_ahead; /* --prefetch=auto says so now (logged) */
	bool		want_claim;		/* claim as soon as there is room (flow.c) */
	double		next_poll;
	double		block_after;	/* monotonic; no idle blocking claim before */
	double		next_sweep;
	double		next_cron;
	bool		stopping;		/* SIGTERM: finish running jobs */
	double		stop_deadline;
	bool		got_sigterm;
	bool		abort_now;		/* second SIGTERM or SIGINT */
	bool		drained;		/* --burst: the last claim found nothing */
	int			exit_code;
} Worker;

/* registry.c */
extern void registry_register(Worker *w, double now);
extern void registry_beat(Worker *w, double now);
extern void registry_beat_soon(Worker *w, double now);
extern double registry_next_beat(Worker *w);
extern void registry_deregister(Worker *w);

/* title.c */
extern void title_init(int argc, char **argv);
extern void title_update(Worker *w);

/* util.c */
extern double now_mono(void);
extern void ring_append(Ring *r, const char *p, size_t n);
extern char *ring_string(const Ring *r);
extern void buf_int(JobqBuf *b, long long v);

/* log.c */
extern void log_open(Worker *w);
extern void log_reopen(Worker *w);
extern void wlog(Worker *w, const char *level, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));
extern void log_job(Worker *w, const Ack *a, const char *state);
extern void log_flush(void);

/* handler.c */
extern bool handler_executable(const char *cmd, const char **why);
extern bool handler_start(Worker *w, Slot *s, const Job *job, int *exec_errno);
extern void handler_io(Worker *w, Slot *s, short in_ev, short out_ev, short err_ev);
extern void handler_drain(Slot *s);
extern void handler_kill(Worker *w, Slot *s, KillReason why);
extern void handler_timers(Worker *w, Slot *s, double now);
extern Ack *handler_finish(Worker *w, Slot *s);
extern void job_free(Job *job);
extern void handler_child_reset(int in, int out, int err, pid_t parent);
extern char *handler_error(const char *first, const Ring *r);

/* persistent.c */
extern void persistent_init(Worker *w);
extern int	persistent_room(Worker *w);
extern bool persistent_start(Worker *w, Slot *s, const Job *job);
extern void persistent_feed(Worker *w);
extern int	persistent_pollfds(Worker *w, struct pollfd *pfd);
extern void persistent_io(Worker *w, int fd, short revents);
extern bool persistent_reap(Worker *w, pid_t pid, int status);
extern void persistent_timers(Worker *w, double now);
extern double persistent_next_timer(Worker *w);
extern void persistent_kill_job(Worker *w, Slot *s, KillReason why);
extern void persistent_shutdown(Worker *w);


/* checkpoint.c */
extern void checkpoint_fetch(Worker *w, Job *jobs, int n);
extern void checkpoint_store(Worker *w, const Job *job, const char *state, size_t len);
extern void checkpoint_free(Job *job);

/* options.c */
extern int	worker_options(Worker *w, int argc, char **argv);

/* flow.c */
extern int	flow_running(Worker *w);
extern bool flow_may_claim(Worker *w);
extern void flow_claim(Worker *w, double now);
extern bool flow_idle_blocking(Worker *w);
extern bool flow_blocking_claim(Worker *w, double now);
extern bool flow_quiet_wait(Worker *w, double now);
extern void flow_claim_poll(Worker *w, double now);
extern void flow_claim_abort(Worker *w, double now);
extern void flow_start_jobs(Worker *w);
extern void flow_release_backlog(Worker *w);
extern void flow_push_ack(Worker *w, Ack *a);
extern void flow_job_time(Worker *w, double secs);
extern bool flow_acks_due(Worker *w, double now);
extern void flow_flush_acks(Worker *w, double now);
extern void flow_heartbeats(Worker *w, double now);

/* db.c */
extern void db_init(Worker *w);
extern DbStatus db_connect(Worker *w);
extern void db_disconnect(Worker *w);
extern void db_restart(Worker *w);
extern void db_close(Worker *w);
extern DbStatus db_claim(Worker *w, int max_jobs, Job **jobs, int *njobs);
extern DbStatus db_claim_start(Worker *w, int max_jobs, int wait_ms);
extern DbStatus db_claim_poll(Worker *w, bool *done);
extern DbStatus db_claim_finish(Worker *w, Job **jobs, int *njobs);
extern void db_claim_interrupt(Worker *w);
extern DbStatus db_ack(Worker *w, Ack *a, char *state, size_t statelen);
extern DbStatus db_complete_many(Worker *w, Ack **acks, int n, int claim_n,
								 const char **states, Job **jobs, int *njobs);
extern DbStatus db_extend(Worker *w, Job *job, bool *stale, double *lease_left);
extern DbStatus db_release(Worker *w, Job *job, bool *released);
extern DbStatus db_sweep(Worker *w);
extern DbStatus db_cron_tick(Worker *w);
extern DbStatus db_consume(Worker *w, bool *notified);
extern DbStatus db_failed(Worker *w);
extern const char *db_errtext(Worker *w);

#endif							/* JOBQ_WORKER_H */
