/*-------------------------------------------------------------------------
 *
 * group_claim.c
 *	  The claim from a queue that groups its jobs (group_mode fifo or
 *	  limit; issue 19, doc/groups.md).
 *
 * Two statements.  The first locks, with FOR NO KEY UPDATE SKIP LOCKED,
 * up to max_jobs groups of the queue that are eligible (a head, fewer
 * running jobs than the limit, not blocked) and whose head is due, best
 * first: by the head's priority, then the head's run_at and id
 * (group_order oldest, groups_eligible_idx) or the time the group was
 * last served (round_robin, groups_round_robin_idx).  Groups at their
 * limit or blocked are not in those partial indexes, so however many
 * there are, the claim never walks over them; a group another claimer
 * (or an enqueuing transaction) holds is skipped, not waited for.
 *
 * The second, with a snapshot taken after those locks were granted,
 * takes from each locked group, in group_seq order through its line
 * (jobq.group_jobs, JOBQ_GROUP_LINE_SQL): in FIFO mode its head, if the head is due and no one
 * else holds its row; in limit mode up to group_limit - running of its
 * due ready jobs.  It claims them as every claim does (JOBQ_CLAIM_SET_SQL:
 * attempt, token, lease) and, in the same statement, adds them to their
 * groups' running counts, reads each group's next head and says whether
 * the group stays eligible.  The cost is O(groups locked + jobs taken),
 * never O(jobs in the queue).
 *
 * A claim attempt that the group rate held back (a group it took from
 * allowed fewer jobs than it could run, or a group whose head is due
 * waits for its rate, and the claim took fewer than max_jobs) counts in
 * the queue's rate_held at once; only queues with a group_rate pay for
 * the look.
 *
 * NB: a group locked by the first statement from which the second takes
 * nothing (its head was being cancelled) stays locked to the end of the
 * caller's transaction, as rows a claim's LIMIT dropped do (claim.c).
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/group_claim.c
 *
 *-------------------------------------------------------------------------
 */
#include "counters.h"
#include "groups.h"
#include "jobq_sql.h"

#include "catalog/pg_type.h"
#include "utils/array.h"

/*
 * The groups to take from: $1 queue, $2 now, $3 how many, $4 the
 * tolerance of the group rate (NULL: none; a group whose rate allows no
 * claim yet is left out).  ORDER is the group order, the key of the index
 * the statement walks.
 */
#define PICK_GROUPS_SQL(ORDER) \
	"SELECT g.key, g.running, g.tat FROM jobq.groups g" \
	" WHERE g.queue = $1 AND g.eligible AND g.head_run_at <= $2" \
	"   AND ($4::interval IS NULL OR g.tat IS NULL OR g.tat <= $2 + $4)" \
	" ORDER BY " ORDER \
	" LIMIT $3 FOR NO KEY UPDATE SKIP LOCKED"

/*
 * The claim from the locked groups: $1 queue, $2 now, $3 max_jobs, $4
 * lease, $5 worker, $6 tokens as in claim.c; $7 the groups' keys in
 * order, $8 how many each may start, $9 group_limit, $10 the emission
 * interval of the group rate (NULL: none), by which each group's tat moves
 * on per job taken.  TAKE is the
 * lateral that finds the jobs of group k (id, group_key, group_seq).
 * Claim order is the groups' order, then group_seq.
 */
#define GROUP_CLAIM_SQL(TAKE) \
	"WITH k AS (SELECT * FROM unnest($7::text[], $8::int4[]) WITH ORDINALITY AS k(key, take, kn))," \
	" c AS MATERIALIZED (" \
	"  SELECT l.id, l.group_key, l.group_seq, k.kn FROM k CROSS JOIN LATERAL (" TAKE ") l" \
	"  ORDER BY k.kn, l.group_seq LIMIT $3)," \
	" u AS (" JOBQ_CLAIM_SET_SQL \
	"  locked_until = $2 + $4, claimed_at = $2, worker = $5" \
	"  FROM unnest(ARRAY(SELECT c.id FROM c ORDER BY c.kn, c.group_seq))" \
	"    WITH ORDINALITY AS o(id, n)" \
	JOBQ_CLAIM_RETURN_FLOW_SQL ")," \
	" t AS (SELECT c.group_key AS key, count(*)::int4 AS n," \
	"   pg_catalog.array_agg(c.id) AS ids FROM c GROUP BY c.group_key)," \
	" g AS (UPDATE jobq.groups g SET running = g.running + t.n, last_claim_at = $2," \
	"   tat = CASE WHEN $10::interval IS NULL THEN g.tat" \
	"         ELSE GREATEST(COALESCE(g.tat, $2), $2) + t.n * $10 END," \
	"   head_id = h.id, head_priority = h.priority, head_run_at = h.run_at," \
	"   eligible = h.id IS NOT NULL AND g.blocked_by IS NULL AND g.running + t.n < $9" \
	"  FROM t LEFT JOIN LATERAL (" \
	JOBQ_GROUP_LINE_SQL("x.id, x.priority, x.run_at", "$1", "t.key", " AND x.id <> ALL (t.ids)") \
	"    LIMIT 1) h ON true" \
	"  WHERE g.queue = $1 AND g.key = t.key)" \
	" SELECT * FROM u"

/*
 * FIFO: the group's head, the first ready job in group_seq order, only
 * if it is due and nobody holds its row; never a later job instead.
 */
#define TAKE_HEAD_SQL \
	"SELECT l.id, l.group_key, l.group_seq FROM (" \
	JOBQ_GROUP_LINE_SQL("x.id", "$1", "k.key", "") " LIMIT 1) hd" \
	" CROSS JOIN LATERAL (" \
	"  SELECT l.id, l.group_key, l.group_seq FROM jobq.jobs l" \
	"  WHERE l.id = hd.id AND l.state = 'ready' AND l.run_at <= $2" \
	"  FOR NO KEY UPDATE SKIP LOCKED) l"

/* limit: up to k.take due ready jobs of the group, in group_seq order */
#define TAKE_DUE_SQL \
	JOBQ_GROUP_LINE_SQL("x.id, x.group_key, gl.seq AS group_seq", "$1", "k.key", " AND x.run_at <= $2") \
	" LIMIT k.take FOR NO KEY UPDATE OF x SKIP LOCKED"

enum
{
	ST_PICK_OLDEST,
	ST_PICK_ROUND_ROBIN,
	ST_CLAIM_HEADS,
	ST_CLAIM_DUE,
	ST_RATE_HELD,
	NUM_STATEMENTS
};

#define COL_PICK_KEY		1
#define COL_PICK_RUNNING	2
#define COL_PICK_TAT		3

static const JobqStatement statements[NUM_STATEMENTS] = {
	[ST_PICK_OLDEST] = {"group_pick_oldest",
		PICK_GROUPS_SQL("g.head_priority, g.head_run_at, g.head_id"),
		4, {TEXTOID, TIMESTAMPTZOID, INT8OID, INTERVALOID}},
	[ST_PICK_ROUND_ROBIN] = {"group_pick_round_robin",
		PICK_GROUPS_SQL("g.head_priority, g.last_claim_at NULLS FIRST, g.key"),
		4, {TEXTOID, TIMESTAMPTZOID, INT8OID, INTERVALOID}},
	[ST_CLAIM_HEADS] = {"group_claim_heads",
		GROUP_CLAIM_SQL(TAKE_HEAD_SQL),
		10, {TEXTOID, TIMESTAMPTZOID, INT8OID, INTERVALOID, TEXTOID, UUIDARRAYOID,
		TEXTARRAYOID, INT4ARRAYOID, INT4OID, INTERVALOID}},
	[ST_CLAIM_DUE] = {"group_claim_due",
		GROUP_CLAIM_SQL(TAKE_DUE_SQL),
		10, {TEXTOID, TIMESTAMPTZOID, INT8OID, INTERVALOID, TEXTOID, UUIDARRAYOID,
		TEXTARRAYOID, INT4ARRAYOID, INT4OID, INTERVALOID}},
	/* $1 queue, $2 now, $3 tolerance: a group whose due head waits for its rate */
	[ST_RATE_HELD] = {"group_rate_held",
		"SELECT EXISTS (SELECT 1 FROM jobq.groups g"
		" WHERE g.queue = $1 AND g.eligible AND g.head_run_at <= $2 AND g.tat > $2 + $3)",
		3, {TEXTOID, TIMESTAMPTZOID, INTERVALOID}},
};

static SPIPlanPtr plans[NUM_STATEMENTS];

const JobqStatements jobq_group_claim_statements = {statements, NUM_STATEMENTS, plans, NULL};

/*
 * count_rate_held
 *	  After a claim of queue at now that took claimed of max_jobs: count a
 *	  hold of the group rate (tolerance tau) if cut (a group's rate allowed
 *	  less than it could run) or a due group waits for its rate.  The
 *	  claim's rows stay in SPI_tuptable.
 */
static void
count_rate_held(text *queue, TimestampTz now, Interval *tau, bool cut, uint64 claimed,
				int64 max_jobs)
{
	SPITupleTable *rows = SPI_tuptable;
	Datum		args[3] = {PointerGetDatum(queue), TimestampTzGetDatum(now),
	IntervalPGetDatum(tau)};
	bool		isnull;
	int			rc;

	if ((int64) claimed >= max_jobs)
		return;
	if (!cut)
	{
		rc = SPI_execute_plan(jobq_plan(&jobq_group_claim_statements, ST_RATE_HELD), args, NULL,
							  true, 1);
		jobq_spi_check(rc, SPI_OK_SELECT, "look for groups held by their rate");
		cut = jobq_spi_getbool(0, 1, &isnull);
		SPI_freetuptable(SPI_tuptable);
		SPI_tuptable = rows;
		SPI_processed = claimed;
	}
	if (cut)
		jobq_count(queue, JOBQ_EV_RATE_LIMITED, 1);
}

/*
 * jobq_group_claim
 *	  Claim up to max_jobs jobs of the grouped queue, which exists and is
 *	  not paused, at the time values[1]; values and nulls as claim.c's
 *	  (values[3] is the lease, NULL for the queue's).  Returns how many
 *	  were claimed; the rows are in SPI_tuptable, in the shape of every
 *	  claim statement.
 */
uint64
jobq_group_claim(Datum *values, const char *nulls, text *queue,
				 const JobqQueueSettings *settings)
{
	bool		fifo = jobq_setting_020(settings, group_mode) == JOBQ_GROUP_MODE_fifo;
	bool		round_robin = jobq_setting_020(settings, group_order) ==
		JOBQ_GROUP_ORDER_round_robin;
	int32		limit = fifo ? 1 : (int32) jobq_setting_020(settings, group_limit);
	int64		max_jobs = DatumGetInt64(values[2]);
	int64		rate = jobq_setting_020(settings, group_rate);
	TimestampTz now = DatumGetTimestampTz(values[1]);
	Interval	tau = {0};
	Interval	interval = {0};
	Datum		args[10];
	char		args_nulls[10] = {' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};
	Datum	   *keys;
	Datum	   *takes;
	uint64		ngroups;
	bool		cut = false;
	int			rc;

	/* the group rate (GCRA, claim_limits.c): its interval T and tolerance */
	if (rate > 0)
	{
		interval.time = jobq_gcra_interval(rate, jobq_setting_020(settings, group_rate_per));
		tau.time = interval.time * (jobq_setting_020(settings, group_rate_burst) - 1);
	}

	/* the groups, locked */
	args[0] = PointerGetDatum(queue);
	args[1] = values[1];
	args[2] = values[2];
	args[3] = IntervalPGetDatum(&tau);
	args_nulls[3] = rate > 0 ? ' ' : 'n';
	rc = SPI_execute_plan(jobq_plan(&jobq_group_claim_statements,
									round_robin ? ST_PICK_ROUND_ROBIN : ST_PICK_OLDEST),
						  args, args_nulls, false, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "pick groups");
	ngroups = SPI_processed;
	if (ngroups == 0)
	{
		if (rate > 0)
			count_rate_held(queue, now, &tau, false, 0, max_jobs);
		return 0;
	}
	keys = palloc(sizeof(Datum) * ngroups);
	takes = palloc(sizeof(Datum) * ngroups);
	for (uint64 i = 0; i < ngroups; i++)
	{
		bool		isnull;
		int64		running = jobq_spi_getint64(i, COL_PICK_RUNNING, &isnull);

		int64		take = Min(Max(limit - running, 0), max_jobs);

		keys[i] = SPI_datumTransfer(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc,
												  COL_PICK_KEY, &isnull), false, -1);
		if (rate > 0)
		{
			Datum		tat = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc,
											COL_PICK_TAT, &isnull);
			TimestampTz retry_at;
			int64		allows = jobq_gcra_allowance(isnull ? 0 : DatumGetTimestampTz(tat), now,
													 interval.time,
													 jobq_setting_020(settings, group_rate_burst),
													 &retry_at);

			cut |= allows < take;
			take = Min(take, allows);
		}
		takes[i] = Int32GetDatum((int32) take);
	}
	SPI_freetuptable(SPI_tuptable);

	/* their jobs */
	args[3] = nulls[3] == 'n' ? IntervalPGetDatum(&settings->lease) : values[3];
	args_nulls[3] = ' ';
	args[4] = values[4];
	args_nulls[4] = nulls[4];
	args[5] = values[5];
	args[6] = PointerGetDatum(construct_array(keys, (int) ngroups, TEXTOID, -1, false,
											  TYPALIGN_INT));
	args[7] = PointerGetDatum(construct_array(takes, (int) ngroups, INT4OID, 4, true,
											  TYPALIGN_INT));
	args[8] = Int32GetDatum(limit);
	args[9] = IntervalPGetDatum(&interval);
	args_nulls[9] = rate > 0 ? ' ' : 'n';
	rc = SPI_execute_plan(jobq_plan(&jobq_group_claim_statements,
									fifo ? ST_CLAIM_HEADS : ST_CLAIM_DUE),
						  args, args_nulls, false, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "claim from groups");
	if (rate > 0)
		count_rate_held(queue, now, &tau, cut, SPI_processed, max_jobs);
	return SPI_processed;
}
