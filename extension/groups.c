/*-------------------------------------------------------------------------
 *
 * groups.c
 *	  The rows of jobq.groups, kept true in the transaction of every change
 *	  of a grouped job (issue 19, doc/groups.md).
 *
 * A group's row holds what claims need to find work without walking busy
 * groups: running (how many of its jobs run), the head (the ready job
 * with the lowest group_seq: its id, priority and run_at), blocked_by (a
 * dead head that holds a FIFO group) and eligible (a head, running below
 * the limit, not blocked), which puts the row in the partial indexes that
 * claims read (group_claim.c).
 *
 * Every change takes the group row's lock first and computes the new head
 * in a later statement, whose snapshot sees everything committed before
 * the lock was granted.  One statement that read the jobs and updated the
 * row would compute the head from a snapshot taken before it waited for
 * the lock, and could miss a job that the lock holder had just enqueued:
 * the group would keep a ready job and no head.  Locks on several groups
 * are taken in key order.  Enqueues hold their group's lock to commit
 * (that is what makes group_seq commit order); claims take group locks
 * with SKIP LOCKED and never wait.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/groups.c
 *
 *-------------------------------------------------------------------------
 */
#include "groups.h"

#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"

/*
 * The statements.  $1 is the queue in each.
 *
 * reserve: create the group's row or lock it, and draw $3 consecutive
 * group_seq values; returns the first and whether the group has a head.
 * refresh: for the locked groups $2 (distinct keys), add $3 to running,
 * read the head again through the group's line, and say whether the group
 * is eligible under group_limit $4; a claim sets last_claim_at ($5).
 * "g.key = ANY ($2)" makes the generic plan probe the primary key of
 * jobq.groups for the keys, not hash them against a scan of the groups
 * (sql/jobq_groups.sql checks the plans).
 */
enum
{
	ST_RESERVE,
	ST_LOCK,
	ST_REFRESH,
	ST_BLOCK,
	ST_UNBLOCK_GONE,
	ST_ADOPT,
	ST_TO_BACK,
	ST_LINE_LEAVE,
	ST_LINE_JOIN,
	ST_LINE_JOIN_BACK,
	ST_DROP_IDLE,
	ST_HISTORY_GROUP,
	ST_GROUPED_JOB,
	ST_GROUPED_JOBS,
	ST_ANY_LIVE_JOB,
	ST_FORGET,
	NUM_STATEMENTS
};

#define COL_RESERVE_SEQ		1
#define COL_RESERVE_HEAD	2
#define COL_REFRESH_ELIGIBLE 1
#define COL_REFRESH_HEAD_RUN_AT 2
#define COL_REFRESH_IDLE	3
#define COL_REFRESH_KEY		4
#define COL_JOB_ID			1
#define COL_JOB_QUEUE		2
#define COL_JOB_KEY			3
#define COL_JOB_SEQ			4

static const JobqStatement statements[NUM_STATEMENTS] = {
	/* $1 queue, $2 key, $3 how many, $4 now, $5 the first group_seq of a new row */
	[ST_RESERVE] = {"group_reserve",
		"INSERT INTO jobq.groups AS g (queue, key, seq_next, running, eligible, created_at)"
		" VALUES ($1, $2, $5 + $3, 0, false, $4)"
		" ON CONFLICT (queue, key) DO UPDATE SET seq_next = g.seq_next + $3"
		" RETURNING g.seq_next - $3, g.head_id IS NOT NULL",
		5, {TEXTOID, TEXTOID, INT8OID, TIMESTAMPTZOID, INT8OID}},
	/* $1 queue, $2 keys */
	[ST_LOCK] = {"group_lock",
		"SELECT g.key FROM jobq.groups g"
		" WHERE g.queue = $1 AND g.key = ANY ($2)"
		" ORDER BY g.key COLLATE \"C\" FOR NO KEY UPDATE",
		2, {TEXTOID, TEXTARRAYOID}},
	/* $1 queue, $2 keys, $3 running deltas, $4 group_limit, $5 claimed at or NULL */
	[ST_REFRESH] = {"group_refresh",
		"UPDATE jobq.groups g SET running = GREATEST(g.running + c.delta, 0),"
		"  last_claim_at = COALESCE($5, g.last_claim_at),"
		"  head_id = h.id, head_priority = h.priority, head_run_at = h.run_at,"
		"  eligible = h.id IS NOT NULL AND g.blocked_by IS NULL AND g.running + c.delta < $4"
		" FROM unnest($2, $3) AS c(key, delta)"
		"  LEFT JOIN LATERAL ("
		JOBQ_GROUP_LINE_SQL("x.id, x.priority, x.run_at", "$1", "c.key", "")
		"    LIMIT 1) h ON true"
		" WHERE g.queue = $1 AND g.key = ANY ($2) AND g.key = c.key"
		" RETURNING g.eligible, g.head_run_at,"
		"  g.head_id IS NULL AND g.running = 0 AND g.blocked_by IS NULL, g.key",
		5, {TEXTOID, TEXTARRAYOID, INT4ARRAYOID, INT4OID, TIMESTAMPTZOID}},
	/* $1 queue, $2 key, $3 the dead head, $4 now */
	[ST_BLOCK] = {"group_block",
		"UPDATE jobq.groups SET blocked_by = $3, blocked_at = $4"
		" WHERE queue = $1 AND key = $2",
		4, {TEXTOID, TEXTOID, INT8OID, TIMESTAMPTZOID}},
	/* $1 ids: the groups blocked by one of them that is no longer dead */
	[ST_UNBLOCK_GONE] = {"group_unblock_gone",
		"UPDATE jobq.groups g SET blocked_by = NULL, blocked_at = NULL"
		" WHERE g.blocked_by IS NOT NULL AND g.blocked_by = ANY ($1)"
		"   AND NOT EXISTS (SELECT 1 FROM jobq.history h"
		"                   WHERE h.id = g.blocked_by AND h.state = 'dead')"
		" RETURNING g.queue, g.key",
		1, {INT8ARRAYOID}},
	/* $1 queue, $2 key, $3 past the highest group_seq of its re-driven jobs, $4 now */
	[ST_ADOPT] = {"group_adopt",
		"INSERT INTO jobq.groups AS g (queue, key, seq_next, running, eligible, created_at)"
		" VALUES ($1, $2, $3, 0, false, $4)"
		" ON CONFLICT (queue, key) DO UPDATE SET seq_next = GREATEST(g.seq_next, $3)",
		4, {TEXTOID, TEXTOID, INT8OID, TIMESTAMPTZOID}},
	/* $1 queue, $2 key, $3 a job of the group, $4 its group_seq: behind every other */
	[ST_TO_BACK] = {"group_to_back",
		"WITH s AS (UPDATE jobq.groups SET seq_next = seq_next + 1"
		"  WHERE queue = $1 AND key = $2 RETURNING seq_next - 1 AS seq),"
		" l AS (UPDATE jobq.group_jobs gl SET seq = s.seq FROM s"
		"  WHERE gl.queue = $1 AND gl.key = $2 AND gl.seq = $4)"
		" UPDATE jobq.jobs j SET group_seq = s.seq FROM s WHERE j.id = $3",
		4, {TEXTOID, TEXTOID, INT8OID, INT8OID}},
	/* $1 queue, $2 key, $3 group_seq: out of the line, if the job left */
	[ST_LINE_LEAVE] = {"group_line_leave",
		"DELETE FROM jobq.group_jobs gl"
		" WHERE gl.queue = $1 AND gl.key = $2 AND gl.seq = $3"
		"   AND NOT EXISTS (SELECT 1 FROM jobq.jobs j WHERE j.id = gl.id)",
		3, {TEXTOID, TEXTOID, INT8OID}},
	/*
	 * $1 queue, $2 key, $3 group_seq, $4 id: a re-driven job, back in line;
	 * returns the job that holds that place (another one: the group's row
	 * was removed while it was dead and its place given again)
	 */
	[ST_LINE_JOIN] = {"group_line_join",
		"WITH i AS (INSERT INTO jobq.group_jobs (queue, key, seq, id) VALUES ($1, $2, $3, $4)"
		"  ON CONFLICT DO NOTHING RETURNING id)"
		" SELECT id FROM i UNION ALL SELECT gl.id FROM jobq.group_jobs gl"
		"  WHERE gl.queue = $1 AND gl.key = $2 AND gl.seq = $3",
		4, {TEXTOID, TEXTOID, INT8OID, INT8OID}},
	/* $1 queue, $2 key, $3 id: a re-driven job whose place is taken, at the back */
	[ST_LINE_JOIN_BACK] = {"group_line_join_back",
		"WITH s AS (UPDATE jobq.groups SET seq_next = seq_next + 1"
		"  WHERE queue = $1 AND key = $2 RETURNING seq_next - 1 AS seq),"
		" l AS (INSERT INTO jobq.group_jobs (queue, key, seq, id) SELECT $1, $2, s.seq, $3 FROM s)"
		" UPDATE jobq.jobs j SET group_seq = s.seq FROM s WHERE j.id = $3 RETURNING s.seq",
		3, {TEXTOID, TEXTOID, INT8OID}},
	/*
	 * $1 queue, $2 keys of locked groups, $3 now: remove those that are
	 * idle (no job in line, none running, no dead head holding them) and
	 * whose rate has nothing left to hold back (tat reached: a new row
	 * allows the same burst)
	 */
	[ST_DROP_IDLE] = {"group_drop_idle",
		"DELETE FROM jobq.groups g WHERE g.queue = $1 AND g.key = ANY ($2)"
		" AND " JOBQ_GROUP_IDLE_SQL("$3"),
		3, {TEXTOID, TEXTARRAYOID, TIMESTAMPTZOID}},
	/* $1 id, $2 key, $3 seq: a grouped job that just went to history */
	[ST_HISTORY_GROUP] = {"group_history",
		"UPDATE jobq.history SET group_key = $2, group_seq = $3 WHERE id = $1",
		3, {INT8OID, TEXTOID, INT8OID}},
	/* $1 id, $2 token or NULL: the job, if it is grouped */
	[ST_GROUPED_JOB] = {"grouped_job",
		"SELECT id, queue, group_key, group_seq FROM jobq.jobs"
		" WHERE id = $1 AND group_key IS NOT NULL AND ($2::uuid IS NULL OR token = $2)",
		2, {INT8OID, UUIDOID}},
	/* $1 ids: those of grouped jobs */
	[ST_GROUPED_JOBS] = {"grouped_jobs",
		"SELECT id, queue, group_key, group_seq FROM jobq.jobs"
		" WHERE id = ANY ($1) AND group_key IS NOT NULL",
		1, {INT8ARRAYOID}},
	/* $1 queue */
	[ST_ANY_LIVE_JOB] = {"group_any_live_job",
		"SELECT EXISTS (SELECT 1 FROM jobq.jobs WHERE queue = $1)",
		1, {TEXTOID}},
	[ST_FORGET] = {"groups_forget",
		"WITH r AS (DELETE FROM jobq.queue_rates WHERE queue = $1),"
		" l AS (DELETE FROM jobq.group_jobs WHERE queue = $1)"
		" DELETE FROM jobq.groups WHERE queue = $1",
		1, {TEXTOID}},
};

static SPIPlanPtr plans[NUM_STATEMENTS];

const JobqStatements jobq_groups_statements = {statements, NUM_STATEMENTS, plans, NULL};

/*
 * jobq_queue_grouped
 *	  Whether the queue's jobs go through groups (group_mode fifo or limit).
 */
bool
jobq_queue_grouped(const JobqQueueSettings *settings)
{
	return jobq_setting_020(settings, group_mode) != JOBQ_GROUP_MODE_none;
}

/*
 * group_limit
 *	  How many jobs of one group may run at once: 1 in FIFO mode.
 */
static int32
group_limit(const JobqQueueSettings *settings)
{
	if (jobq_setting_020(settings, group_mode) == JOBQ_GROUP_MODE_fifo)
		return 1;
	return (int32) jobq_setting_020(settings, group_limit);
}

/*
 * jobq_check_group_key
 *	  A group key is 1 to JOBQ_GROUP_KEY_MAX bytes; what names the argument.
 */
void
jobq_check_group_key(text *key, const char *what)
{
	int			len = VARSIZE_ANY_EXHDR(key);

	if (len < 1 || len > JOBQ_GROUP_KEY_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be 1 to %d bytes long, not %d",
						what, JOBQ_GROUP_KEY_MAX, len)));
}

/*
 * jobq_require_grouped
 *	  A job has a group key exactly when its queue groups its jobs: a key
 *	  on a job of an ungrouped queue would promise an order nothing keeps,
 *	  and an ungrouped job in a grouped queue would have to be found among
 *	  the grouped ones (doc/groups.md, "Every job of a grouped queue has a
 *	  key").  22023 otherwise.
 */
void
jobq_require_grouped(text *queue, const JobqQueueSettings *settings, bool grouped_job)
{
	bool		grouped = jobq_queue_grouped(settings);

	if (grouped_job && !grouped)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("queue \"%s\" does not group its jobs: group_key must be null",
						text_to_cstring(queue)),
				 errhint("Set the queue's group_mode to fifo or limit (jobq_alter_queue) while it has no live jobs.")));
	if (!grouped_job && grouped)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("queue \"%s\" groups its jobs: group_key must be given",
						text_to_cstring(queue)),
				 errhint("A job that needs no order of its own can take a key no other job has, such as its own identifier.")));
}

/*
 * first_seq
 *	  The first group_seq of a group's new row: the clock, in microseconds.
 *	  A group's row goes when it is idle (drop_idle_groups) and comes back
 *	  with its next enqueue; starting there keeps the group's group_seq
 *	  above every value it had before, so that order and the uniqueness of
 *	  a place hold across the removal, for as long as a group never draws
 *	  more than a million places a second (each row draws one per job).
 *	  The clock, not the transaction's time: one transaction may end a
 *	  group and start it again.
 */
static int64
first_seq(void)
{
	return (int64) GetCurrentTimestamp();
}

/*
 * jobq_group_reserve
 *	  Lock the group (queue, key), creating its row, and draw n group_seq
 *	  values; returns the first, and *has_head whether the group already
 *	  has a head.  The lock is held to the end of the transaction.  Runs
 *	  inside SPI.
 */
int64
jobq_group_reserve(text *queue, text *key, int64 n, bool *has_head)
{
	Datum		args[5];
	bool		isnull;
	int64		seq;
	int			rc;

	args[0] = PointerGetDatum(queue);
	args[1] = PointerGetDatum(key);
	args[2] = Int64GetDatum(n);
	args[3] = TimestampTzGetDatum(jobq_now());
	args[4] = Int64GetDatum(first_seq());
	rc = SPI_execute_plan(jobq_plan(&jobq_groups_statements, ST_RESERVE), args, NULL, false, 0);
	jobq_spi_check(rc, SPI_OK_INSERT_RETURNING, "reserve group sequence");
	seq = jobq_spi_getint64(0, COL_RESERVE_SEQ, &isnull);
	*has_head = jobq_spi_getbool(0, COL_RESERVE_HEAD, &isnull);
	SPI_freetuptable(SPI_tuptable);
	return seq;
}

/*
 * text_array
 *	  A text[] of n values.
 */
static Datum
text_array(text **items, int n)
{
	return PointerGetDatum(construct_array((Datum *) items, n, TEXTOID, -1, false,
										   TYPALIGN_INT));
}

/*
 * lock_groups
 *	  Lock the rows of the groups keys[0..n-1] of queue, in key order.
 */
static void
lock_groups(text *queue, text **keys, int n)
{
	Datum		args[2] = {PointerGetDatum(queue), text_array(keys, n)};
	int			rc;

	rc = SPI_execute_plan(jobq_plan(&jobq_groups_statements, ST_LOCK), args, NULL, false, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "lock groups");
	SPI_freetuptable(SPI_tuptable);
}

/*
 * drop_idle_groups
 *	  Remove the rows of the locked groups keys[0..n-1] of queue that the
 *	  change just left idle (doc/groups.md, "Idle groups").  The caller
 *	  holds their row locks since before its changes, so no enqueue into
 *	  them is under way: an enqueue that comes now waits for this
 *	  transaction, and its INSERT ... ON CONFLICT then finds the row gone
 *	  and makes a new one.  The statement checks the line itself (a
 *	  snapshot after the locks), not only the copies in the row.
 */
static void
drop_idle_groups(text *queue, text **keys, int n)
{
	Datum		args[3] = {PointerGetDatum(queue), text_array(keys, n),
	TimestampTzGetDatum(jobq_now())};
	int			rc;

	rc = SPI_execute_plan(jobq_plan(&jobq_groups_statements, ST_DROP_IDLE), args, NULL, false, 0);
	jobq_spi_check(rc, SPI_OK_DELETE, "remove idle groups");
}

/*
 * refresh_groups
 *	  Apply the running deltas to the locked groups keys[0..n-1] (distinct)
 *	  of queue, and read their heads and eligibility again; claimed_at is
 *	  the claim's time, or 0 for any other change.  With announce, tell
 *	  waiting claims of the groups that may run now (wake.c): a complete
 *	  that frees a FIFO group makes its next job claimable.  A change that
 *	  is not a claim may leave a group idle: its row goes.
 */
static void
refresh_groups(text *queue, const JobqQueueSettings *settings, text **keys,
			   int32 *deltas, int n, TimestampTz claimed_at, bool announce)
{
	Datum		args[5];
	char		nulls[5] = {' ', ' ', ' ', ' ', ' '};
	Datum	   *delta_items = palloc(sizeof(Datum) * n);
	text	  **idle = NULL;
	int			nidle = 0;
	TimestampTz now = jobq_now();
	TimestampTz due = 0;
	int64		count = 0;
	int			rc;

	for (int i = 0; i < n; i++)
		delta_items[i] = Int32GetDatum(deltas[i]);
	args[0] = PointerGetDatum(queue);
	args[1] = text_array(keys, n);
	args[2] = PointerGetDatum(construct_array(delta_items, n, INT4OID, 4, true, TYPALIGN_INT));
	args[3] = Int32GetDatum(group_limit(settings));
	args[4] = TimestampTzGetDatum(claimed_at);
	if (claimed_at == 0)
		nulls[4] = 'n';
	rc = SPI_execute_plan(jobq_plan(&jobq_groups_statements, ST_REFRESH), args, nulls, false, 0);
	jobq_spi_check(rc, SPI_OK_UPDATE_RETURNING, "refresh groups");
	pfree(delta_items);
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		bool		isnull;

		if (claimed_at == 0 && jobq_spi_getbool(r, COL_REFRESH_IDLE, &isnull))
		{
			if (idle == NULL)
				idle = palloc(sizeof(text *) * SPI_processed);
			idle[nidle++] = (text *) SPI_datumTransfer(SPI_getbinval(SPI_tuptable->vals[r],
																	 SPI_tuptable->tupdesc,
																	 COL_REFRESH_KEY,
																	 &isnull), false, -1);
			continue;
		}
		if (!announce || !jobq_spi_getbool(r, COL_REFRESH_ELIGIBLE, &isnull))
			continue;
		{
			TimestampTz at = DatumGetTimestampTz(SPI_getbinval(SPI_tuptable->vals[r],
															   SPI_tuptable->tupdesc,
															   COL_REFRESH_HEAD_RUN_AT,
															   &isnull));

			if (count == 0 || at < due)
				due = at;
		}
		count++;
	}
	SPI_freetuptable(SPI_tuptable);
	if (count > 0)
		jobq_announce_ready(queue, count, Max(due, now), now, settings->notify,
							settings->paused);
	if (nidle > 0)
		drop_idle_groups(queue, idle, nidle);
}

/*
 * jobq_group_enqueued
 *	  After the first job of a group without a head went in (its lock is
 *	  held since jobq_group_reserve): the job is the head.
 */
void
jobq_group_enqueued(text *queue, text *key)
{
	JobqQueueSettings settings;
	int32		delta = 0;

	if (!jobq_queue_settings(queue, &settings))
		jobq_queue_not_found(queue);
	refresh_groups(queue, &settings, &key, &delta, 1, 0, false);
}

/*
 * grouped_job_from_row
 *	  The grouped job in row r of the last statement (COL_JOB_*), its
 *	  texts copied out of SPI's memory (SPI_datumTransfer: into the
 *	  caller's context, which outlives the statement's result).
 */
static void
grouped_job_from_row(uint64 r, JobqGroupedJob *job)
{
	bool		isnull;

	job->id = jobq_spi_getint64(r, COL_JOB_ID, &isnull);
	job->queue = (text *) SPI_datumTransfer(SPI_getbinval(SPI_tuptable->vals[r],
														  SPI_tuptable->tupdesc,
														  COL_JOB_QUEUE, &isnull),
											false, -1);
	job->key = (text *) SPI_datumTransfer(SPI_getbinval(SPI_tuptable->vals[r],
														SPI_tuptable->tupdesc,
														COL_JOB_KEY, &isnull),
										  false, -1);
	job->seq = jobq_spi_getint64(r, COL_JOB_SEQ, &isnull);
}

/*
 * jobq_grouped_job
 *	  Whether job id (with token, unless token is 0) is a live grouped
 *	  job; if so *job says which.  The release paths ask before they
 *	  change a job, and only when some queue groups its jobs: a job's group
 *	  never changes, and the change they then make with the same token
 *	  proves that the job was still this one.  Runs inside SPI.
 */
bool
jobq_grouped_job(Datum id, Datum token, JobqGroupedJob *job)
{
	Datum		args[2] = {id, token};
	char		nulls[2] = {' ', token == (Datum) 0 ? 'n' : ' '};
	bool		found;
	int			rc;

	rc = SPI_execute_plan(jobq_plan(&jobq_groups_statements, ST_GROUPED_JOB), args, nulls,
						  false, 1);
	jobq_spi_check(rc, SPI_OK_SELECT, "read the job's group");
	found = SPI_processed > 0;
	if (found)
		grouped_job_from_row(0, job);
	SPI_freetuptable(SPI_tuptable);
	return found;
}

/*
 * jobq_grouped_jobs
 *	  The grouped jobs among ids (an int8[]), in *jobs (palloc'd); returns
 *	  how many.  Runs inside SPI.
 */
int
jobq_grouped_jobs(Datum ids, JobqGroupedJob **jobs)
{
	int			rc;
	int			n;

	rc = SPI_execute_plan(jobq_plan(&jobq_groups_statements, ST_GROUPED_JOBS), &ids, NULL,
						  false, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "read the jobs' groups");
	n = (int) SPI_processed;
	*jobs = palloc(sizeof(JobqGroupedJob) * Max(n, 1));
	for (int i = 0; i < n; i++)
		grouped_job_from_row(i, &(*jobs)[i]);
	SPI_freetuptable(SPI_tuptable);
	return n;
}

/*
 * to_back
 *	  Give a job of a locked group the next group_seq: behind every job of
 *	  the group enqueued so far.
 */
static void
to_back(const JobqGroupedJob *job)
{
	Datum		args[4] = {PointerGetDatum(job->queue), PointerGetDatum(job->key),
	Int64GetDatum(job->id), Int64GetDatum(job->seq)};
	int			rc;

	rc = SPI_execute_plan(jobq_plan(&jobq_groups_statements, ST_TO_BACK), args, NULL, false, 0);
	jobq_spi_check(rc, SPI_OK_UPDATE, "move a job to the back of its group");
}

/*
 * line_leave, line_join
 *	  Take a job of a locked group out of its line once it left jobq.jobs
 *	  (finished, dead, cancelled, deleted), or put a re-driven one back.
 */
static void
line_leave(const JobqGroupedJob *job)
{
	Datum		args[3] = {PointerGetDatum(job->queue), PointerGetDatum(job->key),
	Int64GetDatum(job->seq)};
	int			rc;

	rc = SPI_execute_plan(jobq_plan(&jobq_groups_statements, ST_LINE_LEAVE), args, NULL, false, 0);
	jobq_spi_check(rc, SPI_OK_DELETE, "take a job out of its group's line");
}

static void
line_join(JobqGroupedJob *job)
{
	Datum		args[4] = {PointerGetDatum(job->queue), PointerGetDatum(job->key),
	Int64GetDatum(job->seq), Int64GetDatum(job->id)};
	bool		isnull;
	bool		taken;
	int			rc;

	rc = SPI_execute_plan(jobq_plan(&jobq_groups_statements, ST_LINE_JOIN), args, NULL, false, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "put a job back in its group's line");
	taken = SPI_processed > 0 && jobq_spi_getint64(0, 1, &isnull) != job->id;
	SPI_freetuptable(SPI_tuptable);
	if (!taken)
		return;

	/*
	 * The group's row was removed while the job was dead (doc/groups.md,
	 * "Idle groups": no job of the group was live), and a new row gave its
	 * group_seq to a job enqueued since: this one goes behind them.
	 */
	args[2] = args[3];
	rc = SPI_execute_plan(jobq_plan(&jobq_groups_statements, ST_LINE_JOIN_BACK), args, NULL,
						  false, 0);
	jobq_spi_check(rc, SPI_OK_UPDATE_RETURNING, "put a job at the back of its group's line");
	if (SPI_processed > 0)
		job->seq = jobq_spi_getint64(0, 1, &isnull);
	SPI_freetuptable(SPI_tuptable);
}

/*
 * block_group
 *	  The locked group of job waits for its dead head until it is retried,
 *	  cancelled or skipped.
 */
static void
block_group(const JobqGroupedJob *job, TimestampTz now)
{
	Datum		args[4] = {PointerGetDatum(job->queue), PointerGetDatum(job->key),
	Int64GetDatum(job->id), TimestampTzGetDatum(now)};
	int			rc;

	rc = SPI_execute_plan(jobq_plan(&jobq_groups_statements, ST_BLOCK), args, NULL, false, 0);
	jobq_spi_check(rc, SPI_OK_UPDATE, "block group");
}

/*
 * keep_group_in_history
 *	  Write the group of a job that just went to history into its row, so
 *	  that a retry puts it back in its group and place.
 */
static void
keep_group_in_history(const JobqGroupedJob *job)
{
	Datum		args[3] = {Int64GetDatum(job->id), PointerGetDatum(job->key),
	Int64GetDatum(job->seq)};
	int			rc;

	rc = SPI_execute_plan(jobq_plan(&jobq_groups_statements, ST_HISTORY_GROUP), args, NULL,
						  false, 0);
	jobq_spi_check(rc, SPI_OK_UPDATE, "keep the group of a finished job");
}

/* qsort comparator of texts in byte order, as COLLATE "C" orders them */
static int
text_cmp(const text *x, const text *y)
{
	int			lx = VARSIZE_ANY_EXHDR(x);
	int			ly = VARSIZE_ANY_EXHDR(y);
	int			c = memcmp(VARDATA_ANY(x), VARDATA_ANY(y), Min(lx, ly));

	return c != 0 ? c : (lx > ly) - (lx < ly);
}

/* A change of one job, for sorting by group */
typedef struct GroupEvent
{
	const JobqGroupedJob *job;
	JobqGroupChange change;
} GroupEvent;

static int
group_event_cmp(const void *a, const void *b)
{
	const JobqGroupedJob *x = ((const GroupEvent *) a)->job;
	const JobqGroupedJob *y = ((const GroupEvent *) b)->job;
	int			c = text_cmp(x->queue, y->queue);

	return c != 0 ? c : text_cmp(x->key, y->key);
}

/*
 * apply_change
 *	  What change does to the locked group of job besides its running
 *	  count, which it returns the delta of.
 *
 *	  A failed job that will run again keeps its place (and holds a FIFO
 *	  group while it waits for its retry) unless fifo_block is none or the
 *	  group only limits concurrency: then it goes behind the group's other
 *	  jobs.  A dead job blocks its FIFO group when fifo_block is
 *	  retry_and_dead.
 */
static int32
apply_change(const JobqGroupedJob *job, JobqGroupChange change,
			 const JobqQueueSettings *settings, TimestampTz now)
{
	bool		fifo = jobq_setting_020(settings, group_mode) == JOBQ_GROUP_MODE_fifo;
	int64		block = jobq_setting_020(settings, fifo_block);

	switch (change)
	{
		case JOBQ_GROUP_FINISHED:
			line_leave(job);
			return -1;
		case JOBQ_GROUP_REQUEUED:
			return -1;
		case JOBQ_GROUP_RETRYING:
			if (!fifo || block == JOBQ_FIFO_BLOCK_none)
				to_back(job);
			return -1;
		case JOBQ_GROUP_DIED:
			line_leave(job);
			keep_group_in_history(job);
			if (fifo && block == JOBQ_FIFO_BLOCK_retry_and_dead)
				block_group(job, now);
			return -1;
		case JOBQ_GROUP_READY_GONE:
			line_leave(job);	/* if it left: a bulk run-now keeps it */
			break;
		case JOBQ_GROUP_DEAD_GONE:
			break;
	}
	return 0;
}

/*
 * jobq_groups_changed
 *	  Bring the groups of jobs[0..n-1] up to date after changes[i], in the
 *	  caller's transaction: per queue, lock the groups (in key order, as
 *	  every lock of several groups is taken), apply the changes, read the
 *	  heads again.  A queue dropped or no longer grouped has no groups
 *	  left: nothing to do.  Runs inside SPI.
 */
void
jobq_groups_changed(const JobqGroupedJob *jobs, const JobqGroupChange *changes, int n,
					TimestampTz now)
{
	GroupEvent *events = palloc(sizeof(GroupEvent) * Max(n, 1));
	text	  **keys = palloc(sizeof(text *) * Max(n, 1));
	int32	   *deltas = palloc(sizeof(int32) * Max(n, 1));

	for (int i = 0; i < n; i++)
	{
		events[i].job = &jobs[i];
		events[i].change = changes[i];
	}
	qsort(events, n, sizeof(GroupEvent), group_event_cmp);
	for (int q = 0; q < n;)
	{
		text	   *queue = events[q].job->queue;
		JobqQueueSettings settings;
		int			end = q;
		int			nkeys = 0;

		while (end < n && text_cmp(events[end].job->queue, queue) == 0)
			end++;
		if (jobq_queue_settings(queue, &settings) && jobq_queue_grouped(&settings))
		{
			for (int i = q; i < end; i++)
				if (nkeys == 0 || text_cmp(keys[nkeys - 1], events[i].job->key) != 0)
					keys[nkeys++] = events[i].job->key;
			lock_groups(queue, keys, nkeys);
			nkeys = 0;
			for (int i = q; i < end; i++)
			{
				if (nkeys == 0 || text_cmp(keys[nkeys - 1], events[i].job->key) != 0)
				{
					keys[nkeys] = events[i].job->key;
					deltas[nkeys++] = 0;
				}
				deltas[nkeys - 1] += apply_change(events[i].job, events[i].change, &settings, now);
			}
			refresh_groups(queue, &settings, keys, deltas, nkeys, 0, true);
		}
		q = end;
	}
	pfree(events);
	pfree(keys);
	pfree(deltas);
}

/*
 * jobq_group_changed
 *	  jobq_groups_changed for one job.
 */
void
jobq_group_changed(const JobqGroupedJob *job, JobqGroupChange change, TimestampTz now)
{
	jobq_groups_changed(job, &change, 1, now);
}

/*
 * jobq_groups_claimed
 *	  After a claim took counts[i] jobs of the locked groups keys[i]
 *	  (distinct) of queue at now.
 */
void
jobq_groups_claimed(text *queue, const JobqQueueSettings *settings, text **keys,
					int32 *counts, int n, TimestampTz now)
{
	refresh_groups(queue, settings, keys, counts, n, now, false);
}

/*
 * jobq_groups_unblock_gone
 *	  Some of the jobs ids (an int8[]) left the dead state (cancelled,
 *	  deleted, retried): the groups they blocked may run again.  Runs
 *	  inside SPI.
 */
void
jobq_groups_unblock_gone(Datum ids)
{
	int			rc;
	int			n;
	JobqGroupedJob *groups;
	JobqGroupChange *changes;

	rc = SPI_execute_plan(jobq_plan(&jobq_groups_statements, ST_UNBLOCK_GONE), &ids, NULL,
						  false, 0);
	jobq_spi_check(rc, SPI_OK_UPDATE_RETURNING, "unblock groups");
	n = (int) SPI_processed;
	if (n == 0)
		return;
	groups = palloc0(sizeof(JobqGroupedJob) * n);
	changes = palloc(sizeof(JobqGroupChange) * n);
	for (int i = 0; i < n; i++)
	{
		bool		isnull;

		groups[i].queue = (text *) SPI_datumTransfer(SPI_getbinval(SPI_tuptable->vals[i],
																   SPI_tuptable->tupdesc, 1,
																   &isnull), false, -1);
		groups[i].key = (text *) SPI_datumTransfer(SPI_getbinval(SPI_tuptable->vals[i],
																 SPI_tuptable->tupdesc, 2,
																 &isnull), false, -1);
		changes[i] = JOBQ_GROUP_DEAD_GONE;
	}
	SPI_freetuptable(SPI_tuptable);
	jobq_groups_changed(groups, changes, n, jobq_now());
}

/*
 * jobq_groups_redriven
 *	  Dead grouped jobs[0..n-1] went back to jobq.jobs with their group
 *	  and group_seq (JOBQ_REDRIVE_GROUPED_SQL): their groups take them
 *	  back, a group whose row is gone gets it again (with group_seq values
 *	  past theirs), a group they blocked runs again.  Runs inside SPI.
 */
void
jobq_groups_redriven(JobqGroupedJob *jobs, int n)
{
	GroupEvent *events = palloc(sizeof(GroupEvent) * Max(n, 1));
	JobqGroupChange *changes = palloc(sizeof(JobqGroupChange) * Max(n, 1));
	Datum	   *ids = palloc(sizeof(Datum) * Max(n, 1));
	TimestampTz now = jobq_now();

	for (int i = 0; i < n; i++)
	{
		events[i].job = &jobs[i];
		changes[i] = JOBQ_GROUP_DEAD_GONE;
		ids[i] = Int64GetDatum(jobs[i].id);
	}
	/* NB: group order, as every lock of several groups is taken */
	qsort(events, n, sizeof(GroupEvent), group_event_cmp);
	for (int i = 0; i < n;)
	{
		int			end = i + 1;
		int64		seq_next = events[i].job->seq + 1;
		Datum		args[4];
		int			rc;

		while (end < n && group_event_cmp(&events[i], &events[end]) == 0)
		{
			seq_next = Max(seq_next, events[end].job->seq + 1);
			end++;
		}
		args[0] = PointerGetDatum(events[i].job->queue);
		args[1] = PointerGetDatum(events[i].job->key);
		/* NB: a row made again starts above the group's old places too */
		args[2] = Int64GetDatum(Max(seq_next, first_seq()));
		args[3] = TimestampTzGetDatum(now);
		rc = SPI_execute_plan(jobq_plan(&jobq_groups_statements, ST_ADOPT), args, NULL, false, 0);
		jobq_spi_check(rc, SPI_OK_INSERT, "take re-driven jobs back into their group");
		for (int j = i; j < end; j++)
			line_join(&jobs[events[j].job - jobs]);	/* may move it back */
		i = end;
	}
	jobq_groups_unblock_gone(PointerGetDatum(construct_array(ids, n, INT8OID, 8, FLOAT8PASSBYVAL,
															 TYPALIGN_DOUBLE)));
	jobq_groups_changed(jobs, changes, n, now);
	pfree(events);
	pfree(changes);
	pfree(ids);
}

/*
 * jobq_group_mode_changing
 *	  jobq_alter_queue is about to give queue another group_mode; it holds
 *	  the queue's name lock, so no enqueue is under way.  Refused (55006)
 *	  while the queue has live jobs: they were enqueued under the old
 *	  rules (with or without keys, in or out of groups).  The groups of
 *	  the old mode go, blocked ones included.  Runs inside SPI.
 */
void
jobq_group_mode_changing(text *queue)
{
	Datum		arg = PointerGetDatum(queue);
	bool		isnull;
	int			rc;

	/* NB: not read-only: a snapshot after the name lock, which enqueues held */
	rc = SPI_execute_plan(jobq_plan(&jobq_groups_statements, ST_ANY_LIVE_JOB), &arg, NULL,
						  false, 1);
	jobq_spi_check(rc, SPI_OK_SELECT, "look for live jobs");
	if (jobq_spi_getbool(0, 1, &isnull))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("cannot change the group_mode of queue \"%s\" while it has live jobs",
						text_to_cstring(queue)),
				 errhint("Let its jobs finish (or cancel them), then change it; or use a new queue.")));
	SPI_freetuptable(SPI_tuptable);
	jobq_groups_forget(queue);
}

/*
 * jobq_groups_forget
 *	  Delete the group rows of queue (dropped, or changing group_mode),
 *	  and its rate's timestamp;
 *	  nothing while the database runs 0.1.0's SQL.  Runs inside SPI.
 */
void
jobq_groups_forget(text *queue)
{
	Datum		arg = PointerGetDatum(queue);
	int			rc;

	if (!jobq_queues_have_020())
		return;
	rc = SPI_execute_plan(jobq_plan(&jobq_groups_statements, ST_FORGET), &arg, NULL, false, 0);
	jobq_spi_check(rc, SPI_OK_DELETE, "forget groups");
}
