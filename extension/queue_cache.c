/*-------------------------------------------------------------------------
 *
 * queue_cache.c
 *	  A backend-local cache of the queue settings that enqueues, claims
 *	  from one queue and pops read.
 *
 * Every enqueue needs three settings of its queue: max_attempts (the
 * default for the job), paused and notify (whether to wake workers); a
 * claim from one queue needs paused and the lease, a pop whether the queue
 * keeps completed history.
 * Reading them with the insert, in one statement, cost a CTE, a scan of
 * jobq.queues and a sub-plan per call: with the cache, an enqueue took
 * 41-69 us of backend CPU instead of 83-85 (a plain INSERT 33-53; pgbench,
 * one client, fsync off; bench/findings.md).  Settings change rarely, so
 * each backend keeps the ones it has read.
 *
 * Staleness is ruled out the way PostgreSQL keeps its own caches true:
 * a statement trigger on jobq.queues (jobq_queues_changed) registers a
 * relcache invalidation of the table for any change, however it is made
 * (jobq's functions, or a superuser's UPDATE).  PostgreSQL sends it to all
 * backends when the changing transaction commits, before its locks are
 * released, and replays it locally at the end of the changing command and
 * on rollback.  Our callback then forgets every entry.  A lookup first
 * calls AcceptInvalidationMessages, so it sees every change that committed
 * before it began: in particular a jobq_drop_queue that committed while
 * the enqueue waited for the queue's name lock.  The trigger fires in
 * every session_replication_role (ENABLE ALWAYS), so changes applied by
 * logical replication or a restore invalidate too.
 *
 * A miss reads jobq.queues with the latest snapshot, not the caller's:
 * under REPEATABLE READ the caller's snapshot may predate a change whose
 * invalidation was already processed, and what it read would then be
 * cached for good.
 *
 * One window remains: a commit becomes visible to new snapshots a moment
 * before it sends its invalidations (its commit callbacks run in
 * between), so a claim in that moment may still see a queue as not yet
 * paused, an enqueue the old max_attempts, and a complete the old list
 * of queues that keep history (a job completed in that moment of a
 * retention change from 0 gets no history row).  A call that started a
 * moment earlier would have done the same; a drop is covered by the name
 * lock, which is released after the invalidations are sent.  For the same
 * reason a SERIALIZABLE complete does not take a predicate lock on
 * jobq.queues: settings are configuration, not data the transaction
 * reads.
 *
 * Only queues that exist are cached; a missing queue is looked up every
 * time, so that creating it takes effect at once.
 *
 * Completes also ask whether any queue keeps completed history
 * (jobq_any_history_queue): when none does, a complete is a plain DELETE
 * that looks at no queue (ack.c).  That answer is cached the same way and
 * forgotten with the entries.  (Until 0.2.0 it was the list of those
 * queues, which every complete copied and compared its jobs' queues with:
 * a cost per job that grew with the number of queues.)
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/queue_cache.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"
#include "groups.h"
#include "direct.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

PG_FUNCTION_INFO_V1(jobq_queues_changed);

/* Far more queues than anyone runs; past it the cache starts over */
#define QUEUE_CACHE_MAX		1024

typedef struct QueueCacheEntry
{
	char		name[JOBQ_QUEUE_NAME_MAX + 1];	/* hash key, NUL-terminated */
	JobqQueueSettings settings;
} QueueCacheEntry;

static HTAB *queue_cache = NULL;

/* jobq.queues when the entries were read; InvalidOid: not resolved yet */
static Oid	queues_relid = InvalidOid;

/* Bumped by every invalidation, so a lookup can tell it raced one */
static uint64 inval_count = 0;

/* Whether jobq.queues has the 0.2.0 columns: 1 yes, 0 no, -1 not read */
static int	queues_have_020 = -1;

/* Whether some queue keeps completed history: 1 yes, 0 no, -1 not read */
static int	any_history_queue = -1;

/* Whether some queue groups its jobs (groups.h): 1 yes, 0 no, -1 not read */
static int	any_grouped_queue = -1;

/* Whether some queue has max_running or a rate (claim_limits.c): the same */
static int	any_limited_queue = -1;

static bool callback_registered = false;

static bool lookup(const char *key, JobqQueueSettings *out);
/*
 * The statements, read with the latest snapshot (see above): a queue's
 * settings ($1 its name; COL_SETTINGS_*), and the names of the queues that
 * keep completed history.
 */
enum
{
	ST_QUEUE_SETTINGS,
	ST_QUEUE_SETTINGS_020,
	ST_ANY_HISTORY_QUEUE,
	ST_ANY_GROUPED_QUEUE,
	ST_ANY_LIMITED_QUEUE,
	NUM_STATEMENTS
};

/* ", notify_finished, ...": the columns of the 0.2.0 settings */
#define COLUMN_020(name, kind, min, max, def) ", " CppAsString(name)
#define NAME_020(name, kind, min, max, def) CppAsString(name),
static const char *const columns_020[JOBQ_NUM_SETTINGS_020] = {
	JOBQ_QUEUE_SETTINGS_020(NAME_020)
};

#define COL_SETTINGS_MAX_ATTEMPTS	1
#define COL_SETTINGS_PAUSED			2
#define COL_SETTINGS_NOTIFY			3
#define COL_SETTINGS_LEASE			4
#define COL_SETTINGS_KEEPS_COMPLETED 5
#define COL_SETTINGS_020			6	/* and on, in JOBQ_QUEUE_SETTINGS_020 order */
#define COL_ANY_QUEUE_FLAG			1	/* of any_history_queue, any_grouped_queue */

static const JobqStatement statements[NUM_STATEMENTS] = {
	[ST_QUEUE_SETTINGS] = {"queue_settings",
		"SELECT max_attempts, paused, notify, lease,"
		" completed_retention > interval '0'"
		" FROM jobq.queues WHERE name = $1",
		1, {TEXTOID}},
	[ST_QUEUE_SETTINGS_020] = {"queue_settings_020",
		"SELECT max_attempts, paused, notify, lease,"
		" completed_retention > interval '0'"
		JOBQ_QUEUE_SETTINGS_020(COLUMN_020)
		" FROM jobq.queues WHERE name = $1",
		1, {TEXTOID}},
	[ST_ANY_HISTORY_QUEUE] = {"any_history_queue",
		"SELECT EXISTS (SELECT 1 FROM jobq.queues"
		" WHERE completed_retention > interval '0')",
		0, {InvalidOid}},
	/* 0.2.0's SQL only (jobq_queues_have_020) */
	[ST_ANY_GROUPED_QUEUE] = {"any_grouped_queue",
		"SELECT EXISTS (SELECT 1 FROM jobq.queues WHERE group_mode <> 'none')",
		0, {InvalidOid}},
	[ST_ANY_LIMITED_QUEUE] = {"any_limited_queue",
		"SELECT EXISTS (SELECT 1 FROM jobq.queues WHERE max_running > 0 OR rate > 0)",
		0, {InvalidOid}},
};

static SPIPlanPtr plans[NUM_STATEMENTS];

const JobqStatements jobq_queue_cache_statements = {statements, NUM_STATEMENTS, plans, NULL};

/*
 * queue_cache_inval
 *	  Relcache callback: relid is the invalidated table, or InvalidOid when
 *	  every cache is reset (e.g. after the invalidation queue overflowed).
 *	  It may run inside any catalog access, so it only drops the table.
 *	  It also serves insert_job.c (a backend has few callback slots), whose
 *	  direct insert runs only after a lookup here registered it, and
 *	  grants.c, which registers it through jobq_queues_relid.
 */
static void
queue_cache_inval(Datum arg, Oid relid)
{
	jobq_insert_job_inval(relid);
	jobq_flows_inval(relid);
	jobq_direct_inval(relid);
	jobq_direct_history_inval(relid);
	jobq_direct_claim_inval(relid);
	jobq_grants_inval(relid);

	/* while jobq.queues is not resolved, any table may be it */
	if (relid != InvalidOid && queues_relid != InvalidOid && relid != queues_relid)
		return;
	inval_count++;
	queues_relid = InvalidOid;	/* re-resolved: the extension may be new */
	queues_have_020 = -1;		/* or updated */
	if (queue_cache != NULL)
	{
		hash_destroy(queue_cache);
		queue_cache = NULL;
	}
	any_history_queue = -1;
	any_grouped_queue = -1;
	any_limited_queue = -1;
}

/*
 * ensure_cache
 *	  Create the table and resolve jobq.queues if an invalidation dropped
 *	  them.
 */
static void
ensure_cache(void)
{
	HASHCTL		ctl;

	if (!callback_registered)
	{
		CacheRegisterRelcacheCallback(queue_cache_inval, (Datum) 0);
		callback_registered = true;
	}
	if (queues_relid == InvalidOid)
		queues_relid = get_relname_relid("queues", get_namespace_oid("jobq", false));
	if (queues_have_020 < 0 && queues_relid != InvalidOid)
		queues_have_020 = get_attnum(queues_relid, columns_020[0]) != InvalidAttrNumber;
	if (queue_cache != NULL)
		return;

	ctl.keysize = JOBQ_QUEUE_NAME_MAX + 1;
	ctl.entrysize = sizeof(QueueCacheEntry);
	ctl.hcxt = CacheMemoryContext;
	queue_cache = hash_create("jobq queue settings", 16, &ctl,
							  HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
}

/*
 * jobq_queues_relid
 *	  The OID of jobq.queues, resolved once per backend and again after an
 *	  invalidation of it (the extension may have been created anew).  Does
 *	  not accept invalidations itself.
 */
Oid
jobq_queues_relid(void)
{
	if (queues_relid == InvalidOid)
		ensure_cache();
	return queues_relid;
}

/*
 * jobq_queues_have_020
 *	  Whether jobq.queues has the columns of the 0.2.0 settings, that is,
 *	  whether this database's SQL is 0.2.0 or later; known once per
 *	  backend and again after an invalidation of the table (ALTER
 *	  EXTENSION UPDATE adds them).
 */
bool
jobq_queues_have_020(void)
{
	if (queues_have_020 < 0)
		ensure_cache();
	return queues_have_020 > 0;
}

/*
 * cache_key
 *	  The hash key of a validated queue name.
 */
static void
cache_key(text *queue, char *key)
{
	int			len = VARSIZE_ANY_EXHDR(queue);

	/* the name was validated: at most JOBQ_QUEUE_NAME_MAX bytes */
	Assert(len <= JOBQ_QUEUE_NAME_MAX);
	memset(key, 0, JOBQ_QUEUE_NAME_MAX + 1);
	memcpy(key, VARDATA_ANY(queue), len);
}

/*
 * jobq_queue_settings_cached
 *	  Fill *out from the cache and return true; false when the queue is not
 *	  cached (it may still exist).  Needs no SPI: an enqueue whose queue is
 *	  cached does not connect to SPI at all.
 */
bool
jobq_queue_settings_cached(text *queue, JobqQueueSettings *out)
{
	char		key[JOBQ_QUEUE_NAME_MAX + 1];

	cache_key(queue, key);
	return lookup(key, out);
}

/*
 * lookup
 *	  The cached settings of the queue with hash key key, after accepting
 *	  pending invalidations.
 */
static bool
lookup(const char *key, JobqQueueSettings *out)
{
	QueueCacheEntry *entry;

	AcceptInvalidationMessages();
	ensure_cache();
	entry = hash_search(queue_cache, key, HASH_FIND, NULL);
	if (entry == NULL)
		return false;
	*out = entry->settings;
	return true;
}

/*
 * jobq_queue_settings
 *	  Fill *out with the settings of queue and return true, or return false
 *	  when there is no such queue.  Runs inside SPI.  The caller holds the
 *	  queue's name lock when it needs the queue to go on existing.
 */
bool
jobq_queue_settings(text *queue, JobqQueueSettings *out)
{
	char		key[JOBQ_QUEUE_NAME_MAX + 1];
	QueueCacheEntry *entry;
	uint64		before;
	Datum		arg = PointerGetDatum(queue);
	bool		isnull;
	bool		have_020;
	int			rc;

	cache_key(queue, key);
	if (lookup(key, out))
		return true;

	before = inval_count;
	have_020 = jobq_queues_have_020();
	rc = SPI_execute_snapshot(jobq_plan(&jobq_queue_cache_statements,
										have_020 ? ST_QUEUE_SETTINGS_020 : ST_QUEUE_SETTINGS),
							  &arg, NULL, GetLatestSnapshot(),
							  InvalidSnapshot, false, false, 1);
	jobq_spi_check(rc, SPI_OK_SELECT, "read queue settings");
	if (SPI_processed == 0)
	{
		SPI_freetuptable(SPI_tuptable);
		return false;
	}
	out->max_attempts = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0],
													SPI_tuptable->tupdesc,
													COL_SETTINGS_MAX_ATTEMPTS, &isnull));
	out->paused = jobq_spi_getbool(0, COL_SETTINGS_PAUSED, &isnull);
	out->notify = jobq_spi_getbool(0, COL_SETTINGS_NOTIFY, &isnull);
	out->lease = *DatumGetIntervalP(SPI_getbinval(SPI_tuptable->vals[0],
												  SPI_tuptable->tupdesc,
												  COL_SETTINGS_LEASE, &isnull));
	out->keeps_completed = jobq_spi_getbool(0, COL_SETTINGS_KEEPS_COMPLETED, &isnull);
	for (int i = 0; i < JOBQ_NUM_SETTINGS_020; i++)
		out->v020[i] = have_020 ?
			jobq_setting_020_value(i, SPI_getbinval(SPI_tuptable->vals[0],
													SPI_tuptable->tupdesc,
													COL_SETTINGS_020 + i, &isnull)) :
			jobq_setting_020_default(i);
	SPI_freetuptable(SPI_tuptable);

	/*
	 * An invalidation that arrived while we read may be for a change our
	 * snapshot does not show: use what we read, but do not keep it.
	 * ensure_cache may read the catalogs, and so take invalidations too.
	 */
	if (inval_count != before)
		return true;
	if (queue_cache != NULL && hash_get_num_entries(queue_cache) >= QUEUE_CACHE_MAX)
	{
		hash_destroy(queue_cache);
		queue_cache = NULL;
	}
	ensure_cache();
	if (inval_count != before)
		return true;
	entry = hash_search(queue_cache, key, HASH_ENTER, NULL);
	entry->settings = *out;
	return true;
}

/*
 * read_flag
 *	  A yes/no fact about all queues, as statement st answers it in its
 *	  one boolean column, kept in *flag (1, 0, -1: not read) until the
 *	  next invalidation.  Runs inside SPI.
 */
static bool
read_flag(int *flag, int st, const char *what)
{
	uint64		before;
	bool		isnull;
	bool		result;
	int			rc;

	AcceptInvalidationMessages();
	ensure_cache();
	if (*flag >= 0)
		return *flag > 0;

	before = inval_count;
	rc = SPI_execute_snapshot(jobq_plan(&jobq_queue_cache_statements, st),
							  NULL, NULL, GetLatestSnapshot(),
							  InvalidSnapshot, false, false, 1);
	jobq_spi_check(rc, SPI_OK_SELECT, what);
	result = jobq_spi_getbool(0, COL_ANY_QUEUE_FLAG, &isnull);
	SPI_freetuptable(SPI_tuptable);

	/* as in jobq_queue_settings: what raced an invalidation is not kept */
	if (inval_count == before)
		*flag = result ? 1 : 0;
	return result;
}

/*
 * jobq_any_history_queue
 *	  Whether any queue's completed_retention is above zero.  Runs inside
 *	  SPI.
 */
bool
jobq_any_history_queue(void)
{
	return read_flag(&any_history_queue, ST_ANY_HISTORY_QUEUE,
					 "read whether queues keep history");
}

/*
 * jobq_any_grouped_queue
 *	  Whether some queue groups its jobs (group_mode fifo or limit): then,
 *	  and only then, the paths that change jobs also keep their groups
 *	  (groups.h).  Never while the database runs 0.1.0's SQL.  Runs inside
 *	  SPI.
 */
bool
jobq_any_grouped_queue(void)
{
	AcceptInvalidationMessages();	/* ALTER EXTENSION UPDATE may just have run */
	if (!jobq_queues_have_020())
		return false;
	return read_flag(&any_grouped_queue, ST_ANY_GROUPED_QUEUE,
					 "read whether queues group their jobs");
}

/*
 * jobq_any_limited_queue
 *	  Whether some queue has queue-wide claim limits (max_running, a rate):
 *	  then claims from several queues take those queues apart (claim.c).
 *	  Never while the database runs 0.1.0's SQL.  Runs inside SPI.
 */
bool
jobq_any_limited_queue(void)
{
	AcceptInvalidationMessages();
	if (!jobq_queues_have_020())
		return false;
	return read_flag(&any_limited_queue, ST_ANY_LIMITED_QUEUE,
					 "read whether queues limit their claims");
}

/*
 * jobq_queues_changed
 *	  Statement trigger on jobq.queues, for every kind of change: have
 *	  every backend forget its cached settings once this transaction
 *	  commits (and this backend at once, and again on rollback).
 */
Datum
jobq_queues_changed(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("jobq_queues_changed must be called as a trigger")));
	CacheInvalidateRelcacheByRelid(RelationGetRelid(trigdata->tg_relation));
	return PointerGetDatum(NULL);
}

/*
 * jobq_queue_cache_generation
 *	  A number that changes whenever the cached settings are forgotten (an
 *	  invalidation of jobq.queues), for callers that cache an answer drawn
 *	  from the queues' settings themselves (finished.c).
 */
uint64
jobq_queue_cache_generation(void)
{
	ensure_cache();
	return inval_count;
}
