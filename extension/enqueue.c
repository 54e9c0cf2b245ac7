/*-------------------------------------------------------------------------
 *
 * enqueue.c
 *	  jobq_enqueue and jobq_enqueue_batch: add jobs to a queue.
 *
 * An enqueue runs in the caller's transaction: the job becomes visible to
 * claims when, and only if, that transaction commits.  It first takes a
 * share lock on the queue's name (jobq_lock_queue_name), so a concurrent
 * jobq_drop_queue either waits for us or makes us fail with "queue does not
 * exist"; no job is ever left in a dropped queue.
 *
 * Dedupe keys: while a live job (ready or running) with the same key exists
 * in the queue, enqueue returns that job's id and creates nothing.  The
 * unique partial index jobs_dedupe_idx makes this race-free; ON CONFLICT
 * DO NOTHING waits for a concurrent inserter of the same key to finish, so
 * no unique_violation reaches the caller.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/enqueue.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"
#include "counters.h"
#include "groups.h"
#include "direct.h"

#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "storage/lockdefs.h"
#include "utils/lsyscache.h"

PG_FUNCTION_INFO_V1(jobq_enqueue);
PG_FUNCTION_INFO_V1(jobq_enqueue_batch);
PG_FUNCTION_INFO_V1(jobq_enqueue_0_2);

/* Arguments shared by both functions */
#define ARG_QUEUE			0
#define ARG_PAYLOAD			1
#define ARG_RUN_AT			2
#define ARG_DELAY			3
#define ARG_PRIORITY		4
#define ARG_MAX_ATTEMPTS	5
#define ARG_DEDUPE			6
#define ARG_GROUP			7	/* 0.2.0's SQL: group_key, group_keys */
/* jobq_enqueue 0.2 (flows) */
#define ARG_DEPENDS_ON		8
#define ARG_ON_DEP_FAILURE	9
#define ARG_FLOW_ID			10

/* How often a dedupe conflict is retried when the holder vanishes */
#define DEDUPE_RETRIES		10

/*
 * The statements.  Each insert names every column it fills, as the direct
 * insert (insert_job.c) does, so that all paths write the same row without
 * relying on the table's defaults.  Two single inserts: ON CONFLICT makes
 * every insert speculative (an extra index probe and an extra WAL record
 * to confirm the insertion), which a job without a dedupe key can never
 * need.  $1 queue, $2 payload (batch: payloads), $3 priority, $4 run_at,
 * $5 max_attempts, $6 enqueued_at, $7 dedupe_key.
 */
#define ENQUEUE_SQL(CONFLICT) \
	"INSERT INTO jobq.jobs (queue, state, priority, run_at, attempt, max_attempts," \
	"                       enqueued_at, dedupe_key, payload)" \
	" VALUES ($1, 'ready', $3, $4, 0, $5, $6, $7, $2)" \
	CONFLICT \
	" RETURNING id"

/*
 * A grouped job (groups.h): also $8 group_key, $9 group_seq, and its
 * place in its group's line (jobq.group_jobs) in the same statement
 */
#define ENQUEUE_GROUPED_SQL(CONFLICT) \
	"WITH j AS (" \
	"  INSERT INTO jobq.jobs (queue, state, priority, run_at, attempt, max_attempts," \
	"                         enqueued_at, dedupe_key, payload, group_key, group_seq)" \
	"  VALUES ($1, 'ready', $3, $4, 0, $5, $6, $7, $2, $8, $9)" \
	CONFLICT \
	"  RETURNING id)" \
	" INSERT INTO jobq.group_jobs (queue, key, seq, id) SELECT $1, $8, $9, j.id FROM j" \
	" RETURNING id"

#define DEDUPE_CONFLICT_SQL " ON CONFLICT (queue, dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING"

enum
{
	ST_ENQUEUE,
	ST_ENQUEUE_KEYED,
	ST_ENQUEUE_GROUPED,
	ST_ENQUEUE_GROUPED_KEYED,
	ST_ENQUEUE_BATCH,
	ST_FIND_DEDUPE_KEY,
	NUM_STATEMENTS
};

/* every statement here returns the job's id */
#define COL_ID		1

static const JobqStatement statements[NUM_STATEMENTS] = {
	[ST_ENQUEUE] = {"enqueue",
		ENQUEUE_SQL(""),
		7, {TEXTOID, JSONBOID, INT2OID, TIMESTAMPTZOID, INT4OID, TIMESTAMPTZOID, TEXTOID}},
	[ST_ENQUEUE_KEYED] = {"enqueue_keyed",
		ENQUEUE_SQL(DEDUPE_CONFLICT_SQL),
		7, {TEXTOID, JSONBOID, INT2OID, TIMESTAMPTZOID, INT4OID, TIMESTAMPTZOID, TEXTOID}},
	[ST_ENQUEUE_GROUPED] = {"enqueue_grouped",
		ENQUEUE_GROUPED_SQL(""),
		9, {TEXTOID, JSONBOID, INT2OID, TIMESTAMPTZOID, INT4OID, TIMESTAMPTZOID, TEXTOID,
		TEXTOID, INT8OID}},
	[ST_ENQUEUE_GROUPED_KEYED] = {"enqueue_grouped_keyed",
		ENQUEUE_GROUPED_SQL(DEDUPE_CONFLICT_SQL),
		9, {TEXTOID, JSONBOID, INT2OID, TIMESTAMPTZOID, INT4OID, TIMESTAMPTZOID, TEXTOID,
		TEXTOID, INT8OID}},
	/*
	 * Rows are inserted, and so returned, in input order: the RETURNING
	 * rows are the ids of payloads 1, 2, ... in turn.
	 */
	[ST_ENQUEUE_BATCH] = {"enqueue_batch",
		"INSERT INTO jobq.jobs (queue, state, priority, run_at, attempt, max_attempts,"
		"                       enqueued_at, payload)"
		" SELECT $1, 'ready', $3, $4, 0, $5, $6, p.payload"
		" FROM unnest($2) WITH ORDINALITY AS p(payload, ord)"
		" ORDER BY p.ord"
		" RETURNING id",
		6, {TEXTOID, JSONBARRAYOID, INT2OID, TIMESTAMPTZOID, INT4OID, TIMESTAMPTZOID}},
	/* $1 queue, $2 dedupe_key: the live job holding the key */
	[ST_FIND_DEDUPE_KEY] = {"find_dedupe_key",
		"SELECT id FROM jobq.jobs WHERE queue = $1 AND dedupe_key = $2",
		2, {TEXTOID, TEXTOID}},
};

static SPIPlanPtr plans[NUM_STATEMENTS];

const JobqStatements jobq_enqueue_statements = {statements, NUM_STATEMENTS, plans, NULL};

/* The settings every job of one call shares, validated once */
typedef struct EnqueueArgs
{
	text	   *queue;
	TimestampTz now;
	TimestampTz run_at;
	int16		priority;
	Datum		max_attempts;	/* int4: given, or the queue's */
	bool		max_attempts_null;	/* not given */
	JobqQueueSettings settings;	/* of the queue, read under its name lock */
} EnqueueArgs;

/*
 * jobq_enqueue_run_at
 *	  When a job enqueued at now with run_at and delay (each NULL when not
 *	  given) is due: they are exclusive; neither means now; a past run_at
 *	  means now; more than a year ahead, or infinite, is 22023.
 */
TimestampTz
jobq_enqueue_run_at(TimestampTz now, const TimestampTz *run_at, Interval *delay)
{
	if (run_at != NULL && delay != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("run_at and delay cannot both be given")));
	if (delay != NULL)
		return jobq_add_interval(now, jobq_check_interval(delay, "delay", 0,
														  JOBQ_DELAY_MAX_USECS));
	if (run_at != NULL)
	{
		if (TIMESTAMP_NOT_FINITE(*run_at) || *run_at - now > JOBQ_DELAY_MAX_USECS)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("run_at must be finite and at most 365 days ahead")));
		/* a past run_at means now: it must not jump ahead of older jobs */
		return Max(*run_at, now);
	}
	return now;
}

/*
 * read_common_args
 *	  Validate queue, run_at/delay, priority and max_attempts.  run_at and
 *	  delay are exclusive; neither means now.  A run_at in the past means
 *	  now (the job is ready at once, behind jobs already waiting); one more
 *	  than a year ahead, or infinite, is not allowed.
 */
static void
read_common_args(FunctionCallInfo fcinfo, EnqueueArgs *args)
{
	TimestampTz run_at;

	args->queue = jobq_queue_arg(fcinfo, ARG_QUEUE);
	args->now = jobq_now();
	run_at = PG_ARGISNULL(ARG_RUN_AT) ? 0 : PG_GETARG_TIMESTAMPTZ(ARG_RUN_AT);
	args->run_at = jobq_enqueue_run_at(args->now, PG_ARGISNULL(ARG_RUN_AT) ? NULL : &run_at,
									   PG_ARGISNULL(ARG_DELAY) ? NULL :
									   PG_GETARG_INTERVAL_P(ARG_DELAY));

	jobq_require(fcinfo, ARG_PRIORITY, "priority");
	jobq_check_int_range(PG_GETARG_INT32(ARG_PRIORITY), "priority",
						 JOBQ_PRIORITY_MIN, JOBQ_PRIORITY_MAX);
	args->priority = (int16) PG_GETARG_INT32(ARG_PRIORITY);

	args->max_attempts_null = PG_ARGISNULL(ARG_MAX_ATTEMPTS);
	args->max_attempts = args->max_attempts_null ? (Datum) 0 : PG_GETARG_DATUM(ARG_MAX_ATTEMPTS);
	if (!args->max_attempts_null)
		jobq_check_int_range(DatumGetInt32(args->max_attempts), "max_attempts",
							 1, JOBQ_MAX_ATTEMPTS_MAX);
}

/*
 * jobq_check_dedupe_key
 *	  NULL means "no dedupe"; an empty or oversized key is an error.
 */
void
jobq_check_dedupe_key(text *key)
{
	int			len = VARSIZE_ANY_EXHDR(key);

	if (len < 1 || len > JOBQ_DEDUPE_KEY_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("dedupe_key must be 1 to %d bytes long, not %d",
						JOBQ_DEDUPE_KEY_MAX, len)));
}

/*
 * default_max_attempts
 *	  A job's max_attempts, when not given, is its queue's.
 */
static void
default_max_attempts(EnqueueArgs *args)
{
	if (args->max_attempts_null)
		args->max_attempts = Int32GetDatum(args->settings.max_attempts);
}

/*
 * read_queue_settings
 *	  Fill in the queue's settings, or fail if it does not exist.  Called
 *	  with the queue's name lock held, inside SPI, before anything is
 *	  written.
 */
static void
read_queue_settings(EnqueueArgs *args)
{
	if (!jobq_queue_settings(args->queue, &args->settings))
		jobq_queue_not_found(args->queue);
	default_max_attempts(args);
}

/*
 * announce_ready
 *	  Tell workers of count new jobs once this transaction commits (wake.c).
 */
static void
announce_ready(EnqueueArgs *args, int64 count)
{
	jobq_announce_ready(args->queue, count, args->run_at, args->now,
						args->settings.notify, args->settings.paused);
	jobq_count(args->queue, JOBQ_EV_ENQUEUED, count);
}

/*
 * enqueue_one
 *	  Insert one job; returns its id, or the id of the live job holding its
 *	  dedupe key (then *created = false).  A grouped job (group_key not
 *	  NULL) takes group_seq, drawn by the caller, or with group_seq 0 the
 *	  next of its group, drawn here under the group's lock.  Runs inside
 *	  SPI.
 */
static int64
enqueue_one(EnqueueArgs *args, Jsonb *payload, text *dedupe_key, text *group_key,
			int64 group_seq, bool *created)
{
	Datum		values[9];
	char		nulls[9] = {' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};
	bool		has_head = true;
	int			st;
	int			rc;

	values[0] = PointerGetDatum(args->queue);
	values[1] = JsonbPGetDatum(payload);
	values[2] = Int16GetDatum(args->priority);
	values[3] = TimestampTzGetDatum(args->run_at);
	values[4] = args->max_attempts;
	values[5] = TimestampTzGetDatum(args->now);
	values[6] = PointerGetDatum(dedupe_key);
	if (dedupe_key == NULL)
		nulls[6] = 'n';
	st = dedupe_key ? ST_ENQUEUE_KEYED : ST_ENQUEUE;
	if (group_key != NULL)
	{
		/* NB: the group's lock, held to commit, orders the group's jobs */
		values[7] = PointerGetDatum(group_key);
		if (group_seq == 0)
			group_seq = jobq_group_reserve(args->queue, group_key, 1, &has_head);
		values[8] = Int64GetDatum(group_seq);
		st = dedupe_key ? ST_ENQUEUE_GROUPED_KEYED : ST_ENQUEUE_GROUPED;
	}

	for (int tries = 0; tries < DEDUPE_RETRIES; tries++)
	{
		bool		isnull;

		rc = SPI_execute_plan(jobq_plan(&jobq_enqueue_statements, st),
							  values, nulls, false, 0);
		jobq_spi_check(rc, SPI_OK_INSERT_RETURNING, "enqueue");
		if (SPI_processed == 1)
		{
			int64		id = jobq_spi_getint64(0, COL_ID, &isnull);

			if (!has_head)
				jobq_group_enqueued(args->queue, group_key);
			announce_ready(args, 1);
			*created = true;
			return id;
		}

		/*
		 * The key is held by a live job.  Read its id with a new snapshot;
		 * if it finished in between, the key is free again: try again.
		 */
		{
			Datum		kv[2] = {values[0], values[6]};

			rc = SPI_execute_plan(jobq_plan(&jobq_enqueue_statements, ST_FIND_DEDUPE_KEY),
								  kv, NULL, false, 1);
		}
		jobq_spi_check(rc, SPI_OK_SELECT, "find dedupe key");
		if (SPI_processed == 1)
		{
			*created = false;
			return jobq_spi_getint64(0, COL_ID, &isnull);
		}
	}
	ereport(ERROR,
			(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
			 errmsg("could not enqueue: the job holding dedupe_key kept changing"),
			 errhint("Retry the transaction.")));
	return 0;					/* keep compiler quiet */
}

/*
 * jobq_enqueue(queue, payload, run_at, delay, priority, max_attempts,
 *				dedupe_key) -> bigint
 *	  Enqueue one job and return its id (or the id of the live job with the
 *	  same dedupe key).  Every argument is checked before anything is
 *	  written.
 */
Datum
jobq_enqueue(PG_FUNCTION_ARGS)
{
	EnqueueArgs args;
	Jsonb	   *payload;
	text	   *dedupe_key = NULL;
	text	   *group_key = NULL;
	bool		created;
	int64		id;

	read_common_args(fcinfo, &args);
	if (PG_ARGISNULL(ARG_PAYLOAD))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("payload must not be null"),
				 errhint("Use '{}' or 'null'::jsonb for a job without data.")));
	payload = PG_GETARG_JSONB_P(ARG_PAYLOAD);
	jobq_check_payload(payload, "payload");
	if (!PG_ARGISNULL(ARG_DEDUPE))
	{
		dedupe_key = PG_GETARG_TEXT_PP(ARG_DEDUPE);
		jobq_check_dedupe_key(dedupe_key);
	}
	/* NB: PG_NARGS guards against 0.1.0's definition, without group_key */
	if (PG_NARGS() > ARG_GROUP && !PG_ARGISNULL(ARG_GROUP))
	{
		group_key = PG_GETARG_TEXT_PP(ARG_GROUP);
		jobq_check_group_key(group_key, "group_key");
	}

	jobq_lock_queue_name(args.queue, ShareLock);
	jobq_check_queue(args.queue, JOBQ_PRIV_ENQUEUE);

	/*
	 * The common case, a job without a dedupe key into a queue whose
	 * settings this backend has cached, needs no SPI: insert_job.c writes
	 * the row.  Anything else, or a jobq.jobs that insert_job.c does not
	 * recognise, goes through SPI.
	 */
	if (dedupe_key == NULL && group_key == NULL &&
		jobq_queue_settings_cached(args.queue, &args.settings) &&
		!jobq_queue_grouped(&args.settings))
	{
		default_max_attempts(&args);
		if (jobq_insert_job(args.queue, args.priority, args.run_at,
							DatumGetInt32(args.max_attempts), args.now, payload, &id))
		{
			announce_ready(&args, 1);
			PG_RETURN_INT64(id);
		}
	}
	jobq_spi_connect();
	read_queue_settings(&args);
	jobq_require_grouped(args.queue, &args.settings, group_key != NULL);
	id = enqueue_one(&args, payload, dedupe_key, group_key, 0, &created);
	jobq_spi_finish();
	PG_RETURN_INT64(id);
}

/*
 * jobq_enqueue_find_key
 *	  The id of the live job of queue holding dedupe_key, or 0.  Inside SPI.
 */
int64
jobq_enqueue_find_key(text *queue, text *dedupe_key)
{
	Datum		kv[2] = {PointerGetDatum(queue), PointerGetDatum(dedupe_key)};
	bool		isnull;
	int			rc;

	rc = SPI_execute_plan(jobq_plan(&jobq_enqueue_statements, ST_FIND_DEDUPE_KEY),
						  kv, NULL, false, 1);
	jobq_spi_check(rc, SPI_OK_SELECT, "find dedupe key");
	return SPI_processed == 1 ? jobq_spi_getint64(0, COL_ID, &isnull) : 0;
}

/*
 * jobq_enqueue(queue, payload, run_at, delay, priority, max_attempts,
 *				dedupe_key, depends_on, on_dep_failure, flow_id) -> bigint
 *	  (C name jobq_enqueue_0_2)
 *	  0.2.0's enqueue.  Without depends_on, exactly jobq_enqueue.  With it,
 *	  the job waits for those jobs (flows.c): it is 'waiting' until every
 *	  one completed, and on_dep_failure (cancel, ignore, wait) says what a
 *	  dependency ending dead or cancelled does to it.  flow_id puts it in
 *	  a flow of the caller's choosing (default: the flow of its first
 *	  dependency in one, else a flow named after its first dependency).
 */
Datum
jobq_enqueue_0_2(PG_FUNCTION_ARGS)
{
	EnqueueArgs args;
	JobqFlowJob job;
	bool		created;
	int64		id;

	if (PG_ARGISNULL(ARG_DEPENDS_ON))
	{
		if (!PG_ARGISNULL(ARG_FLOW_ID))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("flow_id needs depends_on"),
					 errhint("A job joins a flow through its dependencies; use jobq_flow to start one.")));
		(void) jobq_dep_policy(PG_ARGISNULL(ARG_ON_DEP_FAILURE) ? NULL :
							   PG_GETARG_TEXT_PP(ARG_ON_DEP_FAILURE));
		return jobq_enqueue(fcinfo);
	}

	read_common_args(fcinfo, &args);
	memset(&job, 0, sizeof(job));
	if (PG_ARGISNULL(ARG_PAYLOAD))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("payload must not be null"),
				 errhint("Use '{}' or 'null'::jsonb for a job without data.")));
	job.payload = PG_GETARG_JSONB_P(ARG_PAYLOAD);
	jobq_check_payload(job.payload, "payload");
	if (!PG_ARGISNULL(ARG_DEDUPE))
	{
		job.dedupe_key = PG_GETARG_TEXT_PP(ARG_DEDUPE);
		jobq_check_dedupe_key(job.dedupe_key);
	}
	if (!PG_ARGISNULL(ARG_GROUP))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a job with depends_on cannot have a group_key yet"),
				 errhint("doc/flows.md, \"Not yet\".")));
	job.nparents = jobq_dep_ids(PG_GETARG_ARRAYTYPE_P(ARG_DEPENDS_ON), &job.parents);
	job.policy = jobq_dep_policy(PG_ARGISNULL(ARG_ON_DEP_FAILURE) ? NULL :
								 PG_GETARG_TEXT_PP(ARG_ON_DEP_FAILURE));
	if (!PG_ARGISNULL(ARG_FLOW_ID))
	{
		job.flow_id = PG_GETARG_INT64(ARG_FLOW_ID);
		if (job.flow_id < 1)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("flow_id must be positive")));
	}

	jobq_lock_queue_name(args.queue, ShareLock);
	jobq_check_queue(args.queue, JOBQ_PRIV_ENQUEUE);
	jobq_spi_connect();
	read_queue_settings(&args);
	job.queue = args.queue;
	job.priority = args.priority;
	job.run_at = args.run_at;
	job.now = args.now;
	job.max_attempts = DatumGetInt32(args.max_attempts);
	job.settings = args.settings;
	id = jobq_flow_insert_job(&job, &created);
	jobq_spi_finish();
	PG_RETURN_INT64(id);
}

/* A batch element and its dedupe key, for sorting by key */
typedef struct KeyedItem
{
	int			index;			/* position in the input */
	text	   *key;			/* NULL: no dedupe key */
} KeyedItem;

/*
 * compare_keyed_items
 *	  qsort comparator: keyless items first, then keys in byte order, ties
 *	  by input position (qsort is not stable).
 */
static int
compare_keyed_items(const void *a, const void *b)
{
	const KeyedItem *x = a;
	const KeyedItem *y = b;
	int			lx,
				ly,
				c;

	if (x->key == NULL || y->key == NULL)
	{
		if (x->key != NULL)
			return 1;
		if (y->key != NULL)
			return -1;
		return x->index - y->index;
	}
	lx = VARSIZE_ANY_EXHDR(x->key);
	ly = VARSIZE_ANY_EXHDR(y->key);
	c = memcmp(VARDATA_ANY(x->key), VARDATA_ANY(y->key), Min(lx, ly));
	if (c == 0)
		c = (lx > ly) - (lx < ly);
	return c != 0 ? c : x->index - y->index;
}

/*
 * read_group_keys
 *	  The group_keys argument of a batch of n jobs: one valid key per job.
 */
static text **
read_group_keys(ArrayType *arr, int n)
{
	Datum	   *items;
	bool	   *item_nulls;
	int			nkeys;
	text	  **group_keys;

	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("group_keys must be a one-dimensional array")));
	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &items, &item_nulls, &nkeys);
	if (nkeys != n)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("group_keys has %d elements, payloads has %d", nkeys, n)));
	group_keys = palloc(sizeof(text *) * n);
	for (int i = 0; i < n; i++)
	{
		if (item_nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("group_keys[%d] must not be null", i + 1)));
		group_keys[i] = DatumGetTextPP(items[i]);
		jobq_check_group_key(group_keys[i], "group key");
	}
	return group_keys;
}

/*
 * reserve_group_seqs
 *	  Lock the groups of a batch of n jobs and draw their group_seq values,
 *	  consecutive per group in input order; returns them by input position,
 *	  and in *headless (*nheadless of them) the groups that had no head.
 *	  NB: the locks are taken in key order, so two batches sharing groups
 *	  queue behind each other instead of deadlocking; and all of them
 *	  before the first insert, so no batch holds a dedupe key's insert
 *	  while it waits for a group.
 */
static int64 *
reserve_group_seqs(EnqueueArgs *args, text **group_keys, int n, text ***headless,
				   int *nheadless)
{
	KeyedItem  *order = palloc(sizeof(KeyedItem) * n);
	int64	   *seqs = palloc(sizeof(int64) * n);

	*headless = palloc(sizeof(text *) * n);
	*nheadless = 0;
	for (int i = 0; i < n; i++)
	{
		order[i].index = i;
		order[i].key = group_keys[i];
	}
	/* key order, ties in input order */
	qsort(order, n, sizeof(KeyedItem), compare_keyed_items);
	for (int k = 0; k < n;)
	{
		int			end = k + 1;
		bool		has_head;
		int64		first;

		while (end < n && VARSIZE_ANY_EXHDR(order[end].key) == VARSIZE_ANY_EXHDR(order[k].key) &&
			   memcmp(VARDATA_ANY(order[end].key), VARDATA_ANY(order[k].key),
					  VARSIZE_ANY_EXHDR(order[k].key)) == 0)
			end++;
		first = jobq_group_reserve(args->queue, order[k].key, end - k, &has_head);
		for (int j = k; j < end; j++)
			seqs[order[j].index] = first + (j - k);
		if (!has_head)
			(*headless)[(*nheadless)++] = order[k].key;
		k = end;
	}
	pfree(order);
	return seqs;
}

/*
 * jobq_enqueue_batch(queue, payloads jsonb[], run_at, delay, priority,
 *					  max_attempts, dedupe_keys text[])
 *	  -> setof (id bigint, created boolean), in the order of payloads
 *
 *	  Without dedupe keys all jobs go in at once, one index descent per
 *	  index per row, one NOTIFY: written by insert_job.c (heap_insert and
 *	  index_insert, the table checked once), or when it cannot, with one
 *	  INSERT ... SELECT over unnest().  With dedupe keys each job takes the single-job path, since
 *	  each may resolve to an existing job, in key order (see below); the
 *	  ids still come back in input order.
 */
Datum
jobq_enqueue_batch(PG_FUNCTION_ARGS)
{
	EnqueueArgs args;
	ArrayType  *payloads;
	Datum	   *items;
	bool	   *item_nulls;
	int			nitems;
	Datum	   *keys = NULL;
	bool	   *key_nulls = NULL;
	int			nkeys = 0;
	text	  **group_keys = NULL;
	TupleDesc	desc;
	Tuplestorestate *store;
	Datum		out[2];
	bool		out_nulls[2] = {false, false};
	int64	   *ids;
	int			rc;

	read_common_args(fcinfo, &args);
	jobq_require(fcinfo, ARG_PAYLOAD, "payloads");
	payloads = PG_GETARG_ARRAYTYPE_P(ARG_PAYLOAD);
	if (ARR_NDIM(payloads) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("payloads must be a one-dimensional array")));
	deconstruct_array(payloads, JSONBOID, -1, false, TYPALIGN_INT,
					  &items, &item_nulls, &nitems);
	if (nitems < 1 || nitems > JOBQ_ENQUEUE_BATCH_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("payloads must hold 1 to %d jobs, not %d",
						JOBQ_ENQUEUE_BATCH_MAX, nitems)));
	for (int i = 0; i < nitems; i++)
	{
		if (item_nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("payloads[%d] must not be null", i + 1)));
		jobq_check_payload(DatumGetJsonbP(items[i]), "payload");
	}

	if (!PG_ARGISNULL(ARG_DEDUPE))
	{
		ArrayType  *karr = PG_GETARG_ARRAYTYPE_P(ARG_DEDUPE);

		if (ARR_NDIM(karr) > 1)
			ereport(ERROR,
					(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
					 errmsg("dedupe_keys must be a one-dimensional array")));
		deconstruct_array(karr, TEXTOID, -1, false, TYPALIGN_INT,
						  &keys, &key_nulls, &nkeys);
		if (nkeys != nitems)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("dedupe_keys has %d elements, payloads has %d", nkeys, nitems)));
		for (int i = 0; i < nkeys; i++)
			if (!key_nulls[i])
				jobq_check_dedupe_key(DatumGetTextPP(keys[i]));
	}

	/* NB: PG_NARGS guards against 0.1.0's definition, without group_keys */
	if (PG_NARGS() > ARG_GROUP && !PG_ARGISNULL(ARG_GROUP))
		group_keys = read_group_keys(PG_GETARG_ARRAYTYPE_P(ARG_GROUP), nitems);

	store = jobq_srf_begin(fcinfo, &desc);
	jobq_lock_queue_name(args.queue, ShareLock);
	jobq_check_queue(args.queue, JOBQ_PRIV_ENQUEUE);
	jobq_spi_connect();
	read_queue_settings(&args);
	jobq_require_grouped(args.queue, &args.settings, group_keys != NULL);

	if (keys != NULL || group_keys != NULL)
	{
		KeyedItem  *order = palloc(sizeof(KeyedItem) * nitems);
		int64	   *ids = palloc(sizeof(int64) * nitems);
		bool	   *created = palloc(sizeof(bool) * nitems);
		text	  **headless = NULL;
		int			nheadless = 0;
		int64	   *seqs = group_keys == NULL ? NULL :
			reserve_group_seqs(&args, group_keys, nitems, &headless, &nheadless);

		/*
		 * NB: insert in dedupe-key order, not input order.  Each insert of a
		 * key another transaction holds uncommitted waits for it; two
		 * batches taking the same keys in different orders would deadlock.
		 * In one global order they merely queue.
		 */
		for (int i = 0; i < nitems; i++)
		{
			order[i].index = i;
			order[i].key = keys == NULL || key_nulls[i] ? NULL : DatumGetTextPP(keys[i]);
		}
		qsort(order, nitems, sizeof(KeyedItem), compare_keyed_items);
		for (int k = 0; k < nitems; k++)
		{
			int			i = order[k].index;

			ids[i] = enqueue_one(&args, DatumGetJsonbP(items[i]), order[k].key,
								 seqs == NULL ? NULL : group_keys[i],
								 seqs == NULL ? 0 : seqs[i], &created[i]);
		}
		/* the groups' locks are held since reserve_group_seqs */
		for (int g = 0; g < nheadless; g++)
			jobq_group_enqueued(args.queue, headless[g]);
		for (int i = 0; i < nitems; i++)
		{
			out[0] = Int64GetDatum(ids[i]);
			out[1] = BoolGetDatum(created[i]);
			tuplestore_putvalues(store, desc, out, out_nulls);
		}
	}
	else if (jobq_direct_writes &&
			 jobq_insert_jobs(args.queue, args.priority, args.run_at,
							  DatumGetInt32(args.max_attempts), args.now, items, nitems,
							  (ids = palloc(sizeof(int64) * nitems))))
	{
		/* written by insert_job.c, in input order, as the statement would */
		announce_ready(&args, nitems);
		for (int i = 0; i < nitems; i++)
		{
			out[0] = Int64GetDatum(ids[i]);
			out[1] = BoolGetDatum(true);
			tuplestore_putvalues(store, desc, out, out_nulls);
		}
	}
	else
	{
		Datum		values[6];
		bool		isnull;

		values[0] = PointerGetDatum(args.queue);
		values[1] = PointerGetDatum(payloads);
		values[2] = Int16GetDatum(args.priority);
		values[3] = TimestampTzGetDatum(args.run_at);
		values[4] = args.max_attempts;
		values[5] = TimestampTzGetDatum(args.now);

		rc = SPI_execute_plan(jobq_plan(&jobq_enqueue_statements, ST_ENQUEUE_BATCH),
							  values, NULL, false, 0);
		jobq_spi_check(rc, SPI_OK_INSERT_RETURNING, "enqueue batch");
		if (SPI_processed != nitems)
			elog(ERROR, "jobq: batch inserted " UINT64_FORMAT " jobs, expected %d",
				 SPI_processed, nitems);
		announce_ready(&args, nitems);
		for (uint64 i = 0; i < SPI_processed; i++)
		{
			out[0] = Int64GetDatum(jobq_spi_getint64(i, COL_ID, &isnull));
			out[1] = BoolGetDatum(true);
			tuplestore_putvalues(store, desc, out, out_nulls);
		}
	}

	jobq_spi_finish();
	return (Datum) 0;
}

/*
 * schedule_group_key
 *	  The group of a schedule's job in a queue that groups its jobs: the
 *	  schedule's own, "schedule:<name>", the tick's dedupe key up to its
 *	  second colon ("schedule:<name>:<time>", schedules.c), so that a FIFO
 *	  queue runs a schedule's jobs one at a time and in order.  NULL for
 *	  an ungrouped queue.
 */
static text *
schedule_group_key(EnqueueArgs *args, text *dedupe_key)
{
	const char *key = VARDATA_ANY(dedupe_key);
	int			len = VARSIZE_ANY_EXHDR(dedupe_key);
	int			colons = 0;
	int			end = 0;

	if (!jobq_queue_grouped(&args->settings))
		return NULL;
	while (end < len && (key[end] != ':' || ++colons < 2))
		end++;
	return cstring_to_text_with_len(key, Min(end, JOBQ_GROUP_KEY_MAX));
}

/*
 * jobq_enqueue_scheduled
 *	  Enqueue one job of a schedule (schedules.c): ready now, with the
 *	  schedule's priority and max_attempts (NULL: the queue's) and the
 *	  tick's dedupe key.  The normal path of jobq_enqueue (queue name lock,
 *	  settings, dedupe, wakeups), without the caller's per-queue enqueue
 *	  check: a schedule's jobs are its creator's, an admin of the queue,
 *	  whoever runs the tick.  Returns the job's id, or the id of the live
 *	  job holding the key (then *created = false).
 */
int64
jobq_enqueue_scheduled(text *queue, Jsonb *payload, int16 priority,
					   Datum max_attempts, bool max_attempts_null,
					   text *dedupe_key, bool *created)
{
	EnqueueArgs args;
	int64		id;

	memset(&args, 0, sizeof(args));
	args.queue = queue;
	args.now = jobq_now();
	args.run_at = args.now;
	args.priority = priority;
	args.max_attempts = max_attempts;
	args.max_attempts_null = max_attempts_null;
	jobq_check_payload(payload, "payload");
	jobq_check_dedupe_key(dedupe_key);

	jobq_lock_queue_name(queue, ShareLock);
	jobq_spi_connect();
	read_queue_settings(&args);
	id = enqueue_one(&args, payload, dedupe_key, schedule_group_key(&args, dedupe_key), 0,
					 created);
	jobq_spi_finish();
	return id;
}
