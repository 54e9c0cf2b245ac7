/*-------------------------------------------------------------------------
 *
 * fail_rate_limited.c
 *	  jobq_fail(..., rate_limit_for): back-pressure from a handler whose
 *	  upstream answered "too many requests" (issue 19; FEATURES-0.2.md
 *	  6.4.9; doc/groups.md).
 *
 * The job goes back to ready at now + rate_limit_for without burning the
 * attempt (as jobq_release gives it back), keeping its place in its
 * group, with the error recorded as a 'rate limited' attempt; and the
 * rate that the upstream enforces is held for that long, so no other
 * worker hammers it meanwhile: the group's (when the queue has a
 * group_rate) and the queue's (when it has a rate) theoretical arrival
 * time moves far enough that the rate allows no claim before now +
 * rate_limit_for (tat = that time + the rate's tolerance, GCRA).  The queue's is written
 * under the lock that serializes its limited claims (claim_limits.c), so
 * no claim in flight overwrites it; the group's under the group's lock.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/fail_rate_limited.c
 *
 *-------------------------------------------------------------------------
 */
#include "groups.h"
#include "counters.h"
#include "jobq_sql.h"

#include "catalog/pg_type.h"

enum
{
	ST_FAIL_RATE_LIMITED,
	ST_HOLD_QUEUE_RATE,
	ST_HOLD_GROUP_RATE,
	NUM_STATEMENTS
};

static const JobqStatement statements[NUM_STATEMENTS] = {
	/* $1 id, $2 token, $3 now, $4 ready again at, $5 error, $6 cut */
	[ST_FAIL_RATE_LIMITED] = {"fail_rate_limited",
		"UPDATE jobq.jobs j SET state = 'ready', token = NULL, locked_until = NULL,"
		"  attempt = j.attempt - 1, run_at = $4,"
		"  errors = " JOBQ_ATTEMPT_END_SQL("j", "$3", "'rate limited'", "$5", "$6")
		" FROM jobq.queues q"
		" WHERE j.id = $1 AND j.token = $2 AND q.name = j.queue"
		" RETURNING j.queue, NOT q.paused, q.notify",
		6, {INT8OID, UUIDOID, TIMESTAMPTZOID, TIMESTAMPTZOID, TEXTOID, BOOLOID}},
	/* $1 queue, $2 held until */
	[ST_HOLD_QUEUE_RATE] = {"hold_queue_rate",
		"INSERT INTO jobq.queue_rates AS r (queue, tat) VALUES ($1, $2)"
		" ON CONFLICT (queue) DO UPDATE SET tat = GREATEST(r.tat, $2)",
		2, {TEXTOID, TIMESTAMPTZOID}},
	/* $1 queue, $2 key (locked), $3 held until */
	[ST_HOLD_GROUP_RATE] = {"hold_group_rate",
		"UPDATE jobq.groups SET tat = GREATEST(tat, $3) WHERE queue = $1 AND key = $2",
		3, {TEXTOID, TEXTOID, TIMESTAMPTZOID}},
};

static SPIPlanPtr plans[NUM_STATEMENTS];

const JobqStatements jobq_fail_rate_limited_statements = {statements, NUM_STATEMENTS, plans, NULL};

/*
 * jobq_fail_rate_limited
 *	  The body of jobq_fail with rate_limit_for: the job (id, token) is
 *	  ready again at until, its attempt given back; err (NULL for none,
 *	  truncated: it was cut) is recorded.  Returns false when the token is
 *	  stale.  Inside SPI; the caller checked the job's privilege.
 */
bool
jobq_fail_rate_limited(Datum id, Datum token, TimestampTz now, TimestampTz until,
					   text *err, bool truncated)
{
	Datum		values[6];
	char		nulls[6] = {' ', ' ', ' ', ' ', ' ', ' '};
	JobqGroupedJob group_job;
	JobqQueueSettings settings;
	bool		grouped;
	bool		isnull;
	text	   *queue;
	int			rc;

	grouped = jobq_any_grouped_queue() && jobq_grouped_job(id, token, &group_job);
	values[0] = id;
	values[1] = token;
	values[2] = TimestampTzGetDatum(now);
	values[3] = TimestampTzGetDatum(until);
	values[4] = PointerGetDatum(err);
	if (err == NULL)
		nulls[4] = 'n';
	values[5] = BoolGetDatum(truncated);
	rc = SPI_execute_plan(jobq_plan(&jobq_fail_rate_limited_statements, ST_FAIL_RATE_LIMITED),
						  values, nulls, false, 0);
	jobq_spi_check(rc, SPI_OK_UPDATE_RETURNING, "fail (rate limited)");
	jobq_count_rows(JOBQ_EV_RELEASED, 1, 0, 0);
	if (SPI_processed == 0)
		return false;
	queue = (text *) SPI_datumTransfer(SPI_getbinval(SPI_tuptable->vals[0],
													 SPI_tuptable->tupdesc, 1, &isnull),
									   false, -1);
	jobq_announce_ready(queue, 1, until, now, jobq_spi_getbool(0, 3, &isnull),
						!jobq_spi_getbool(0, 2, &isnull));
	jobq_await_note(DatumGetInt64(id), JOBQ_AWAIT_READY, now, NULL);

	if (!jobq_queue_settings(queue, &settings))
		return true;
	if (grouped)
	{
		/* the group's lock is held from here on */
		jobq_group_changed(&group_job, JOBQ_GROUP_REQUEUED, now);
		if (jobq_setting_020(&settings, group_rate) > 0)
		{
			int64		t = jobq_gcra_interval(jobq_setting_020(&settings, group_rate),
											   jobq_setting_020(&settings, group_rate_per));
			Datum		args[3] = {PointerGetDatum(queue), PointerGetDatum(group_job.key),
			TimestampTzGetDatum(until + t * (jobq_setting_020(&settings, group_rate_burst) - 1))};

			rc = SPI_execute_plan(jobq_plan(&jobq_fail_rate_limited_statements,
											ST_HOLD_GROUP_RATE),
								  args, NULL, false, 0);
			jobq_spi_check(rc, SPI_OK_UPDATE, "hold the group's rate");
		}
	}
	if (jobq_setting_020(&settings, rate) > 0)
	{
		int64		t = jobq_gcra_interval(jobq_setting_020(&settings, rate),
										   jobq_setting_020(&settings, rate_per));
		Datum		args[2] = {PointerGetDatum(queue),
		TimestampTzGetDatum(until + t * (jobq_setting_020(&settings, rate_burst) - 1))};

		jobq_lock_limited_claims(queue);
		rc = SPI_execute_plan(jobq_plan(&jobq_fail_rate_limited_statements, ST_HOLD_QUEUE_RATE),
							  args, NULL, false, 0);
		jobq_spi_check(rc, SPI_OK_INSERT, "hold the queue's rate");
	}
	return true;
}
