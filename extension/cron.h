/*-------------------------------------------------------------------------
 *
 * cron.h
 *	  Cron expressions: parsing, time zones and fire times (cron.c).
 *
 * An expression is what a schedule fires on: five fields (minute, hour,
 * day of month, month, day of week), an alias (@hourly ... @yearly) or
 * @every <interval>.  Parsing refuses, with 22023 and the position of the
 * problem, anything malformed and anything that can never fire.  Fire
 * times of the five-field form are computed on the wall clock of an IANA
 * time zone with classic cron's daylight saving rules; @every ignores the
 * calendar (doc/sql.md, "Cron expressions", is the user's reference).
 *
 * Everything here is pure: no catalog access, no SPI, only the time zone
 * data PostgreSQL loads itself (pg_tzset).  Callers: the SQL function
 * jobq_cron_next (cron.c) and the schedules (their tick and upsert).
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/cron.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JOBQ_CRON_H
#define JOBQ_CRON_H

#include "postgres.h"

#include "datatype/timestamp.h"
#include "pgtime.h"

/* A parsed expression: palloc'd in one chunk (pfree it, or let its context go) */
typedef struct JobqCron JobqCron;

/*
 * jobq_cron_parse
 *	  Parse expr (NUL-terminated, at most JOBQ_CRON_EXPR_MAX bytes).  Raises
 *	  22023 naming the position (1-based, in characters) and what was
 *	  expected there, and refuses an expression that never fires (such as
 *	  "0 0 30 2 *").  Never returns NULL.
 */
extern JobqCron *jobq_cron_parse(const char *expr);

/*
 * jobq_cron_zone
 *	  The time zone of an IANA name (Area/Location, or UTC), from
 *	  PostgreSQL's tz data.  NULL means UTC, never the session's TimeZone:
 *	  a schedule fires in a background worker, whose TimeZone is not the
 *	  session's.  Abbreviations (EST, CDT), POSIX strings and bare offsets
 *	  (UTC+3, EST5EDT) are refused with 22023 and a hint, and so is an
 *	  unknown name.  The zone is cached by PostgreSQL for the backend's life.
 */
extern pg_tz *jobq_cron_zone(const char *name);

/*
 * jobq_cron_next
 *	  The first fire time strictly after `after`, in zone tz (NULL = UTC);
 *	  DT_NOEND when there is none before the end of the timestamp range (or
 *	  after is not finite).  An @every expression is anchored at the Unix
 *	  epoch here (fires at epoch + k * interval); use
 *	  jobq_cron_next_anchored to anchor it elsewhere.
 */
extern TimestampTz jobq_cron_next(const JobqCron *cron, pg_tz *tz,
								  TimestampTz after);

/*
 * jobq_cron_next_anchored
 *	  As jobq_cron_next, but an @every expression fires at anchor + k *
 *	  interval (k any integer), so that a schedule started at start_at
 *	  keeps its phase without drift.  The anchor is ignored by the other
 *	  forms.
 */
extern TimestampTz jobq_cron_next_anchored(const JobqCron *cron, pg_tz *tz,
										   TimestampTz anchor,
										   TimestampTz after);

/*
 * jobq_cron_every_usec
 *	  The interval of an @every expression in microseconds; 0 for every
 *	  other form.
 */
extern int64 jobq_cron_every_usec(const JobqCron *cron);

#endif							/* JOBQ_CRON_H */
