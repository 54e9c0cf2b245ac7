/*-------------------------------------------------------------------------
 *
 * group_counts.c
 *	  The groups of a queue in jobq_counts: how many run a job, how many a
 *	  dead head blocks (issue 19; FEATURES-0.2.md 6.4.11; doc/groups.md).
 *
 * Both are exact and cost what the claims' own bookkeeping costs, not the
 * number of groups: the active groups are the distinct keys of the queue's
 * running jobs, read through jobs_lease_idx as max_running counts them
 * (claim_limits.c: the running jobs of the database, thousands at most);
 * the blocked groups are the rows of groups_blocked_idx (one per dead head
 * that holds a group).  A queue with 100,000 groups that wait costs
 * nothing more here.  Only asked of grouped queues, and only where the
 * result type of jobq_counts has the columns (0.2.0's SQL).
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/group_counts.c
 *
 *-------------------------------------------------------------------------
 */
#include "groups.h"

#include "catalog/pg_type.h"

enum
{
	ST_GROUP_COUNTS,
	NUM_STATEMENTS
};

static const JobqStatement statements[NUM_STATEMENTS] = {
	/* $1 queue: groups with a running job, groups a dead head blocks */
	[ST_GROUP_COUNTS] = {"group_counts",
		"SELECT (SELECT count(DISTINCT j.group_key) FROM jobq.jobs j"
		"        WHERE j.state = 'running' AND j.queue = $1),"
		"  (SELECT count(*) FROM jobq.groups g"
		"   WHERE g.blocked_by IS NOT NULL AND g.queue = $1)",
		1, {TEXTOID}},
};

static SPIPlanPtr plans[NUM_STATEMENTS];

const JobqStatements jobq_group_counts_statements = {statements, NUM_STATEMENTS, plans, NULL};

/*
 * jobq_group_counts
 *	  The active and blocked groups of queue (0 and 0 for a queue that does
 *	  not group its jobs).  Inside SPI.
 */
void
jobq_group_counts(text *queue, int64 *active, int64 *blocked)
{
	JobqQueueSettings settings;
	Datum		arg = PointerGetDatum(queue);
	bool		isnull;
	int			rc;

	*active = *blocked = 0;
	if (!jobq_queue_settings(queue, &settings) || !jobq_queue_grouped(&settings))
		return;
	rc = SPI_execute_plan(jobq_plan(&jobq_group_counts_statements, ST_GROUP_COUNTS), &arg, NULL,
						  true, 1);
	jobq_spi_check(rc, SPI_OK_SELECT, "count groups");
	*active = jobq_spi_getint64(0, 1, &isnull);
	*blocked = jobq_spi_getint64(0, 2, &isnull);
	SPI_freetuptable(SPI_tuptable);
}
