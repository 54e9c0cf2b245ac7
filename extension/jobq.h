/*-------------------------------------------------------------------------
 *
 * jobq.h
 *	  Declarations shared by the C files of the jobq extension.
 *
 * Vocabulary used throughout:
 *	queue	a named stream of jobs with its own settings (a row of
 *			jobq.queues; the name is data, never an identifier)
 *	job		a jsonb payload plus bookkeeping; live jobs (ready, running)
 *			sit in jobq.jobs, finished ones in jobq.history
 *	claim	taking ready jobs with FOR NO KEY UPDATE SKIP LOCKED; each
 *			claimed job gets a lease (locked_until) and a fresh token
 *	attempt	counted at claim time, so a crashed worker burns one
 *	token	fences every later state change: a stale token changes nothing
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/jobq.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JOBQ_H
#define JOBQ_H

#include "postgres.h"

#include "executor/spi.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/array.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "jobq-contract.h"

/*
 * The limits of the contract, in the units the C here compares: bytes and
 * counts as jobq-contract.h gives them, times in microseconds.
 */
#define JOBQ_LEASE_MIN_USECS		((int64) JOBQ_LEASE_MIN_S * USECS_PER_SEC)
#define JOBQ_LEASE_MAX_USECS		((int64) JOBQ_LEASE_MAX_S * USECS_PER_SEC)
#define JOBQ_DELAY_MAX_USECS		((int64) JOBQ_DELAY_MAX_S * USECS_PER_SEC)
#define JOBQ_BACKOFF_BASE_MAX_USECS	((int64) JOBQ_BACKOFF_BASE_MAX_S * USECS_PER_SEC)
#define JOBQ_BACKOFF_CAP_MAX_USECS	((int64) JOBQ_BACKOFF_CAP_MAX_S * USECS_PER_SEC)
#define JOBQ_RETENTION_MAX_USECS	((int64) JOBQ_RETENTION_MAX_S * USECS_PER_SEC)
#define JOBQ_WAIT_MAX_USECS			((int64) JOBQ_CLAIM_WAIT_MAX_S * USECS_PER_SEC)
#define JOBQ_PAYLOAD_HARD_MAX_KB	(JOBQ_PAYLOAD_HARD_MAX / 1024)	/* the GUC's unit */
#define JOBQ_WAIT_QUEUES_MAX		JOBQ_CLAIM_QUEUES_MAX	/* waiter slot size: any claim */

/* The server's own */
#define JOBQ_WAIT_POLL_MS			100		/* re-check interval without preload */
#define JOBQ_SWEEPER_DATABASES_MAX	16

/* jobq.c */
extern int	jobq_max_payload_kb;
extern int	jobq_claim_recheck_ms;
extern char *jobq_sweeper_databases;
extern int	jobq_sweep_interval_ms;
extern int	jobq_sweep_batch_size;
extern int	jobq_worker_timeout_s;

/*
 * wake.c: a queue the current transaction made jobs ready in, for the
 * relay and the waiting claims to hear of at commit
 */
typedef struct JobqReadyNote
{
	char		queue[JOBQ_QUEUE_NAME_MAX + 1];	/* NUL-terminated name */
	uint32		hash;			/* of the name: waiters know queues by it */
	int			level;			/* subtransaction nesting level of the note */
	bool		relay;			/* the relay is to notify the queue */
	int64		count;			/* jobs made ready: waiters to wake, at most */
	TimestampTz due;			/* when the earliest of them is ready */
	bool		signal;			/* not a queue: a worker label whose waiting
								 * claim is to return (workers.c) */
} JobqReadyNote;

extern void jobq_wake_register_callbacks(void);
extern void jobq_announce_ready(text *queue, int64 count, TimestampTz due,
								TimestampTz now, bool notify, bool paused);
extern void jobq_announce_signal(text *worker);

/* wait.c */
extern Size jobq_wait_shmem_size(void);
extern void jobq_wait_shmem_init(void);
extern uint32 jobq_wait_queue_hash(const char *name, int len);
extern void jobq_wait_wake(const JobqReadyNote *notes, int n);
extern bool jobq_wait_register(Datum *queues, int nqueues, text *worker);
extern bool jobq_wait_signalled(void);
extern void jobq_wait_signal_self(void);
extern void jobq_wait_hold(void);
extern void jobq_wait_rearm(void);
extern void jobq_wait_unregister(void);
extern bool jobq_wait_available(void);
extern void jobq_wait_counters(int64 *waiting, int64 *wakeups);
extern void jobq_wait_sleep(long timeout_ms);

/*
 * await_slots.c: awaited job ids, woken (and handed the outcome) by the
 * commit that ends an attempt of their job
 */
typedef enum JobqAwaitState
{
	JOBQ_AWAIT_READY,			/* an attempt failed, the job is retried */
	JOBQ_AWAIT_COMPLETED,
	JOBQ_AWAIT_DEAD,
	JOBQ_AWAIT_CANCELLED
} JobqAwaitState;

extern int	jobq_max_await_ids;
extern int	jobq_await_handover_kb;
extern bool jobq_await_on;
extern Size jobq_await_shmem_size(void);
extern void jobq_await_shmem_init(void);
extern void jobq_await_register_callbacks(void);
extern bool jobq_await_available(void);
extern bool jobq_await_register(const int64 *ids, int n);
extern void jobq_await_unregister(void);
extern bool jobq_await_handed(int k, JobqAwaitState *state, TimestampTz *finished_at,
							  struct varlena **value, bool *lost);
extern void jobq_await_counters(int64 *awaiting, int64 *capacity, int64 *wakeups,
								int64 *handovers);
extern void jobq_await_note_slow(int64 id, JobqAwaitState state, TimestampTz finished_at,
								 const struct varlena *value);
extern void jobq_await_recheck_all(void);

/*
 * jobq_await_note
 *	  This statement ended an attempt of job id: it became state at
 *	  finished_at, with value (its result or error, or NULL).  Costs one
 *	  flag test without preload and an atomic read while nobody awaits it.
 */
static inline void
jobq_await_note(int64 id, JobqAwaitState state, TimestampTz finished_at,
				const struct varlena *value)
{
	if (jobq_await_on)
		jobq_await_note_slow(id, state, finished_at, value);
}

/* await.c, admin.c */
extern bool jobq_cancel_if_ready(Datum id);

/* finished.c: completion events (notify_finished) */
#define JOBQ_FINISHED_CHANNEL_PREFIX	"jobq.finished."
#define JOBQ_FINISHED_PAYLOAD_MAX		7900	/* bytes per notification */

typedef struct JobqFinishedNote
{
	int64		id;
	int			level;			/* subtransaction nesting level */
	char		state;			/* JobqAwaitState: completed, dead, cancelled */
	char		queue[JOBQ_QUEUE_NAME_MAX + 1];
} JobqFinishedNote;

typedef struct JobqFinishedSender
{
	char		channel[NAMEDATALEN];
	StringInfoData payload;
} JobqFinishedSender;

extern const char *jobq_finished_state_name(JobqAwaitState state);
extern bool jobq_finished_any(void);
extern void jobq_finished_rows_slow(JobqAwaitState state, int id_col, int64 id, int queue_col);

/*
 * jobq_finished_rows
 *	  After a statement that finished jobs (completed, dead, cancelled):
 *	  their completion events, for the queues with notify_finished.  The
 *	  rows are SPI_tuptable's: ids in id_col (0: every row is job id),
 *	  queues in queue_col.  Costs a comparison while no queue has it on.
 */
static inline void
jobq_finished_rows(JobqAwaitState state, int id_col, int64 id, int queue_col)
{
	if (SPI_processed > 0 && unlikely(jobq_finished_any()))
		jobq_finished_rows_slow(state, id_col, id, queue_col);
}
extern void jobq_finished_note(const char *queue, int len, int64 id, JobqAwaitState state);
extern void jobq_finished_sender_begin(JobqFinishedSender *s, const char *queue);
extern void jobq_finished_sender_line(JobqFinishedSender *s, const char *line);
extern void jobq_finished_sender_job(JobqFinishedSender *s, int64 id, JobqAwaitState state);
extern void jobq_finished_sender_end(JobqFinishedSender *s);

/* relay.c */
extern void jobq_relay_hand_finished(int slot, const JobqFinishedNote *notes, int n);
extern Size jobq_relay_shmem_size(void);
extern void jobq_relay_shmem_init(void);
extern int	jobq_relay_for_database(void);
extern void jobq_relay_hand_over(int slot, const JobqReadyNote *notes, int n);
extern void jobq_send_notify(const char *queue, int len);
extern void jobq_relay_attach(int slot);
extern bool jobq_relay_pending(void);
extern long jobq_relay_next_round(void);
extern void jobq_relay_round(void);
extern void jobq_relay_schedules_changed(void);
extern bool jobq_relay_take_schedules_changed(void);

/* queues.c */
extern void jobq_lock_queue_name(text *queue, int mode);
extern int64 jobq_setting_020_default(int i);
extern int64 jobq_setting_020_value(int i, Datum d);

/* sweep.c, sweeper.c, launcher.c */
#define JOBQ_SWEEPER_RESTART_SECS	5	/* a stopped sweeper or launcher comes back */
extern void jobq_sweep_run(text *queue, int64 max_rows, int64 *out);
extern List *jobq_sweeper_database_list(void);
extern void jobq_register_sweepers(void);
extern int	jobq_counts_reconcile_due(void);	/* counts.c */

/*
 * spi.c: the statements of each file, declared as data (a table indexed by
 * the file's enum of statements), and the plan cache of each table.
 */
#define JOBQ_STATEMENT_MAX_ARGS		24	/* job filters take 13 (list_filter.h) */

typedef struct JobqStatement
{
	const char *name;			/* unique across tables: jobq._statement(name) */
	const char *sql;
	int			nargs;
	Oid			argtypes[JOBQ_STATEMENT_MAX_ARGS];
} JobqStatement;

typedef struct JobqStatements
{
	const JobqStatement *statements;	/* indexed by the file's enum */
	int			count;
	SPIPlanPtr *plans;			/* count slots, NULL until prepared; spi.c's */
	void		(*build) (void);	/* fills in texts made once at run time, or
									 * NULL when all are literals */
} JobqStatements;

extern SPIPlanPtr jobq_prepare_statement(const JobqStatements *set, int index);

/*
 * jobq_plan
 *	  The plan of statement index of set, prepared on first use (inside
 *	  SPI) and kept for the backend's life.
 */
static inline SPIPlanPtr
jobq_plan(const JobqStatements *set, int index)
{
	SPIPlanPtr	plan = set->plans[index];

	if (unlikely(plan == NULL))
		plan = jobq_prepare_statement(set, index);
	return plan;
}

/* The tables, one per file (spi.c lists them for jobq._statement) */
extern const JobqStatements jobq_ack_statements;
extern const JobqStatements jobq_admin_statements;
extern const JobqStatements jobq_await_statements;
extern const JobqStatements jobq_events_statements;
extern const JobqStatements jobq_finished_statements;
extern const JobqStatements jobq_audit_statements;
extern const JobqStatements jobq_bulk_statements;
extern const JobqStatements jobq_claim_statements;
extern const JobqStatements jobq_counters_statements;	/* counters.h */
extern const JobqStatements jobq_counts_statements;
extern const JobqStatements jobq_consumers_statements;
extern const JobqStatements jobq_enqueue_statements;
extern const JobqStatements jobq_grants_statements;
extern const JobqStatements jobq_health_statements;
extern const JobqStatements jobq_inspect_statements;
extern const JobqStatements jobq_metrics_statements;
extern const JobqStatements jobq_pop_statements;
extern const JobqStatements jobq_queue_cache_statements;
extern const JobqStatements jobq_queues_statements;
extern const JobqStatements jobq_sweep_statements;
extern const JobqStatements jobq_workers_statements;
extern const JobqStatements jobq_schedules_statements;
extern const JobqStatements jobq_tick_statements;

extern SPIPlanPtr jobq_prepare(const char *sql, int nargs, Oid *argtypes);
extern void jobq_spi_connect(void);
extern void jobq_spi_finish(void);
extern void jobq_spi_check(int rc, int expected, const char *what);
extern Tuplestorestate *jobq_srf_begin(FunctionCallInfo fcinfo, TupleDesc *tupdesc);
extern void jobq_srf_put_spi(Tuplestorestate *store, TupleDesc desc);
extern void jobq_srf_put_spi_by_name(Tuplestorestate *store, TupleDesc desc);
extern int *jobq_spi_column_map(TupleDesc desc, bool by_name);
extern void jobq_srf_put_spi_rows(Tuplestorestate *store, TupleDesc desc, bool by_name,
								  bool (*keep) (HeapTuple row, TupleDesc rowdesc, void *arg),
								  void *arg);
extern int64 jobq_spi_getint64(uint64 row, int col, bool *isnull);
extern Datum jobq_fenced_read(FunctionCallInfo fcinfo, const JobqStatements *set, int st,
							  const char *what);
extern void *jobq_xact_array_grow(void *array, int *cap, Size elemsize);
extern int	jobq_xact_array_subxact(void *array, int n, Size elemsize, Size level_offset,
									bool committed);
extern bool jobq_spi_getbool(uint64 row, int col, bool *isnull);

/* validate.c */
extern void jobq_require(FunctionCallInfo fcinfo, int argno, const char *argname);
extern text *jobq_queue_arg(FunctionCallInfo fcinfo, int argno);
extern void jobq_queue_not_found(text *queue) pg_attribute_noreturn();
extern void jobq_check_name(const char *name, int len, int max,
							const char *what, const char *What);
extern void jobq_check_queue_name(const char *name, int len);
extern void jobq_check_queue_names(ArrayType *queues, int min_n, int max_n, Datum **items,
								   int *n);
extern int64 jobq_interval_usecs(const Interval *span);
extern Interval *jobq_check_interval(const Interval *span, const char *argname,
									 int64 min_usecs, int64 max_usecs);
extern void jobq_check_int_range(int64 value, const char *argname,
								 int64 min, int64 max);
extern void jobq_check_payload(Jsonb *value, const char *argname);
extern text *jobq_worker_arg(FunctionCallInfo fcinfo, int argno);
extern TimestampTz jobq_add_interval(TimestampTz t, const Interval *span);
extern TimestampTz jobq_now(void);
extern char *jobq_name_list(const char *const *names, int n, const char *conjunction);

/* grants.c */
typedef enum JobqQueuePriv
{
	JOBQ_PRIV_ENQUEUE,
	JOBQ_PRIV_CLAIM,
	JOBQ_PRIV_INSPECT,
	JOBQ_PRIV_ADMIN
} JobqQueuePriv;

extern bool jobq_queue_allowed(text *queue, JobqQueuePriv priv);
extern void jobq_check_queue(text *queue, JobqQueuePriv priv);
extern bool jobq_job_allowed(Datum id, JobqQueuePriv priv);
extern void jobq_check_job(Datum id, JobqQueuePriv priv);
extern void jobq_check_jobs(Datum ids, JobqQueuePriv priv);
extern void jobq_check_any_jobs(Datum ids, JobqQueuePriv priv);
extern void jobq_srf_put_spi_allowed(Tuplestorestate *store, TupleDesc desc, int col,
									 JobqQueuePriv priv, bool by_name);
extern bool jobq_caller_reads_payloads(void);
extern void jobq_grants_inval(Oid relid);

/* admin.c */
extern int64 jobq_run_redrive(SPIPlanPtr plan, Datum *values, const char *nulls);
extern int64 *jobq_redriven_ids(void);

/* audit.c */
extern char *jobq_actor;
extern int	jobq_audit_retention_s;
extern void jobq_audit_define_gucs(void);
extern bool jobq_actor_named(void);
extern Datum jobq_audit_id_array(Datum id);
extern text *jobq_audit_queue_of(Datum ids);
extern void jobq_audit_record(const char *action, text *queue, Datum ids, Jsonb *filters,
							  int64 affected,...);
extern int64 jobq_audit_purge_run(int64 max_rows);

/* health.c */
extern void jobq_health_define_gucs(void);

/* queue_cache.c */
/*
 * The settings of 0.2.0 (JOBQ_QUEUE_SETTINGS_020), as the backend cache
 * holds them: JobqQueueSettings.v020[JOBQ_SETTING_020_<name>], read with
 * jobq_setting_020(&settings, name).  Seconds for an interval, the number,
 * 0/1, or the index of a CHOICE value (the enums below); the defaults
 * while the database runs 0.1.0's SQL.
 */
#define JOBQ_SETTING_020_ENUM(name, kind, min, max, def) JOBQ_SETTING_020_##name,
typedef enum JobqSetting020
{
	JOBQ_QUEUE_SETTINGS_020(JOBQ_SETTING_020_ENUM)
	JOBQ_NUM_SETTINGS_020
} JobqSetting020;

#define jobq_setting_020(settings, name) ((settings)->v020[JOBQ_SETTING_020_##name])

#define JOBQ_GROUP_MODE_ENUM(value) JOBQ_GROUP_MODE_##value,
#define JOBQ_GROUP_ORDER_ENUM(value) JOBQ_GROUP_ORDER_##value,
#define JOBQ_FIFO_BLOCK_ENUM(value) JOBQ_FIFO_BLOCK_##value,
typedef enum JobqGroupMode
{
JOBQ_CHOICES_group_mode(JOBQ_GROUP_MODE_ENUM)
} JobqGroupMode;
typedef enum JobqGroupOrder
{
JOBQ_CHOICES_group_order(JOBQ_GROUP_ORDER_ENUM)
} JobqGroupOrder;
typedef enum JobqFifoBlock
{
JOBQ_CHOICES_fifo_block(JOBQ_FIFO_BLOCK_ENUM)
} JobqFifoBlock;

typedef struct JobqQueueSettings
{
	int32		max_attempts;
	bool		paused;
	bool		notify;
	Interval	lease;
	bool		keeps_completed;	/* completed_retention > 0 */
	int64		v020[JOBQ_NUM_SETTINGS_020];
} JobqQueueSettings;

extern bool jobq_queue_settings(text *queue, JobqQueueSettings *out);
extern bool jobq_queue_settings_cached(text *queue, JobqQueueSettings *out);
extern bool jobq_any_history_queue(void);
extern Oid	jobq_queues_relid(void);
extern bool jobq_queues_have_020(void);
extern uint64 jobq_queue_cache_generation(void);

/* workers.c */
extern int64 jobq_worker_prune_run(int64 max_rows, int64 *reclaimed);
extern bool jobq_worker_held(text *worker);

/* inspect.c */
extern void jobq_require_inspect(text *queue);

/* metrics.c: stored metrics; the sweeper flushes once a minute */
extern void jobq_metrics_define_gucs(void);
extern bool jobq_metrics_flush_run(int64 *out);
extern TimestampTz jobq_metrics_next_flush(TimestampTz now);
extern void jobq_metrics_sweeper_flush(void);

/* enqueue.c */
extern int64 jobq_enqueue_scheduled(text *queue, Jsonb *payload, int16 priority,
									Datum max_attempts, bool max_attempts_null,
									text *dedupe_key, bool *created);

/* schedules.c, tick.c */
extern void jobq_schedules_define_gucs(void);
extern TimestampTz jobq_schedule_now(void);
extern bool jobq_schedules_exist_table(void);
extern void jobq_schedules_before_drop(text *queue, bool force);
extern int	jobq_cron_tick_run(int max_schedules, Tuplestorestate *store, TupleDesc desc);
extern TimestampTz jobq_cron_next_due(void);

/* flows.c: dependencies between jobs (flows) */
typedef struct JobqFlowJob
{
	text	   *queue;
	Jsonb	   *payload;
	int16		priority;
	TimestampTz run_at;
	TimestampTz now;
	int32		max_attempts;
	text	   *dedupe_key;		/* NULL: none */
	int64	   *parents;		/* sorted, without repeats */
	int			nparents;
	const char *policy;			/* on_dep_failure: cancel, ignore, wait */
	int64		flow_id;		/* 0: the parents' flow, or a new one; set to
								 * the job's flow by jobq_flow_insert_job */
	JobqQueueSettings settings; /* of the queue */
} JobqFlowJob;

extern const JobqStatements jobq_flows_statements;
extern bool jobq_flows_available(void);
extern void jobq_flows_inval(Oid relid);
extern const char *jobq_dep_policy(text *policy);
extern int	jobq_dep_ids(ArrayType *depends_on, int64 **ids);
extern int	jobq_dep_ids_sorted(int64 *ids, int n);
extern int64 *jobq_flow_live_jobs(int64 flow, int *n);
extern void jobq_flow_announce_readied(TimestampTz now);

/* spawn.c: jobs spawned by a running job, fenced by its token */
typedef struct JobqSpawner
{
	Datum		id;				/* the spawning job */
	Datum		token;
	int64		flow_id;		/* set by jobq_spawn_begin */
} JobqSpawner;

extern const JobqStatements jobq_spawn_statements;
extern void jobq_spawn_begin(JobqSpawner *spawner);
extern bool jobq_spawn_find(JobqSpawner *spawner, const char *ref, int64 *id);
extern void jobq_spawn_record(JobqSpawner *spawner, const char *ref, int64 id);
extern Datum jobq_flow_insert_graph(FunctionCallInfo fcinfo, Jsonb *jobs, JobqSpawner *spawner);

/* checkpoint.c: progress of a running job (jobq_checkpoint) */
extern const JobqStatements jobq_checkpoint_statements;

/* ack.c: a refused state change counted in the queue's stale_acks */
extern void jobq_count_stale(Datum job_id);

/* flow_repair.c: the repair pass of flows (sweeper duty, jobq_flow_repair) */
extern int	jobq_flow_repair_interval_s;
extern const JobqStatements jobq_flow_repair_statements;
extern void jobq_flow_repair_define_gucs(void);
extern void jobq_flow_repair_run(int64 max_rows, int64 *out);
extern bool jobq_flow_repair_due(int64 max_rows);
extern int64 jobq_flow_insert_job(JobqFlowJob *job, bool *created);
extern void jobq_flow_completed(int64 id, Jsonb *result, TimestampTz now);
extern void jobq_flow_failed(int64 id, const char *state, const char *error, TimestampTz now);
extern int64 jobq_flow_redriven(int64 id, bool with_dependents, TimestampTz now);
extern void jobq_flow_completed_many(const int64 *ids, Jsonb **results, int n, TimestampTz now);
extern void jobq_flow_failed_many(const int64 *ids, int n, const char *state, TimestampTz now);
extern void jobq_flow_resolve_rows(int id_col, int flow_col, const char *state, bool gone,
								   TimestampTz now);
extern void jobq_flow_forget(const int64 *ids, const int64 *flows, int n);
extern void jobq_flow_redriven_many(const int64 *ids, int64 n, TimestampTz now);

/* enqueue.c */
extern int64 jobq_enqueue_find_key(text *queue, text *dedupe_key);
extern TimestampTz jobq_enqueue_run_at(TimestampTz now, const TimestampTz *run_at,
									   Interval *delay);
extern void jobq_check_dedupe_key(text *key);

/* insert_job.c */
extern void jobq_insert_job_inval(Oid relid);
extern bool jobq_table_inserts_plainly(Relation rel);

/* a column the direct writes expect: its name, and type (InvalidOid: any) */
typedef struct JobqColumn
{
	const char *name;
	Oid			type;
	bool		optional;		/* absent while the database runs 0.1.0's SQL */
} JobqColumn;

extern bool jobq_match_columns(TupleDesc desc, const JobqColumn *cols, int n, size_t stride,
							   AttrNumber *attnum);
extern Oid	jobq_enum_label(Oid enum_type, const char *label);
extern bool jobq_insert_job(text *queue, int16 priority, TimestampTz run_at,
							int32 max_attempts, TimestampTz enqueued_at, Jsonb *payload,
							int64 *id);
extern bool jobq_insert_jobs(text *queue, int16 priority, TimestampTz run_at,
							 int32 max_attempts, TimestampTz enqueued_at, const Datum *payloads,
							 int n_jobs, int64 *ids);

#endif							/* JOBQ_H */
