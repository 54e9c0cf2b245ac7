/*-------------------------------------------------------------------------
 *
 * schedules.h
 *	  What schedules.c (the SQL functions that manage schedules) and
 *	  tick.c (jobq_cron_tick) share.
 *
 * Vocabulary:
 *	schedule	a row of jobq.schedules: a cron expression (or @every
 *				interval) in a time zone, and the job each tick enqueues
 *	tick		one fire time of a schedule; next_run_at is the next one,
 *				and only ever moves forward
 *	due			a schedule whose next_run_at (and retry_at, while a
 *				failing schedule backs off) has come
 *	grace		how late a tick may still fire; older ticks are missed
 *	catch-up	which due ticks fire when several are (latest, none, all)
 *	overlap		'skip': no tick fires while the schedule's last job is live
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/schedules.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JOBQ_SCHEDULES_H
#define JOBQ_SCHEDULES_H

#include "jobq.h"
#include "cron.h"

/* The payload key under which a job learns its schedule and tick */
#define JOBQ_CRON_PAYLOAD_KEY	"_cron"

/* A failing schedule retries after 1 s, 2 s, 4 s ... at most 60 s */
#define JOBQ_SCHEDULE_RETRY_MIN_USECS	USECS_PER_SEC
#define JOBQ_SCHEDULE_RETRY_MAX_USECS	(60 * USECS_PER_SEC)

/* jobq.cron_max_backfill: ticks catch-up 'all' fires per schedule per call */
extern int	jobq_cron_max_backfill;

/*
 * When a schedule fires: its parsed expression and zone, and the bounds.
 * @every schedules tick at anchor + k * every (anchor: start_at, else the
 * creation time to the second), so they never drift.
 */
typedef struct ScheduleTiming
{
	JobqCron   *cron;
	pg_tz	   *tz;
	int64		every;			/* usecs; 0: a calendar expression */
	TimestampTz anchor;			/* of @every */
	bool		has_start;
	TimestampTz start_at;
	bool		has_end;
	TimestampTz end_at;
} ScheduleTiming;

extern void schedule_timing(ScheduleTiming *timing, const char *expr, const char *tz,
							bool has_start, TimestampTz start_at,
							bool has_end, TimestampTz end_at,
							TimestampTz created_at);
extern TimestampTz schedule_next(const ScheduleTiming *timing, TimestampTz after);

extern text *schedule_dedupe_key(const char *name, const char *kind, TimestampTz tick);
extern Jsonb *schedule_job_payload(Jsonb *payload, const char *name, TimestampTz tick,
								   bool backfilled, bool manual);
extern bool schedule_job_live(int64 job_id);

#endif							/* JOBQ_SCHEDULES_H */
