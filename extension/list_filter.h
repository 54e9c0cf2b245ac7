/*-------------------------------------------------------------------------
 *
 * list_filter.h
 *	  The job filters of jobq_list (and of the bulk actions that act on
 *	  the jobs a filter selects): parsing a filters jsonb, binding it to
 *	  statement parameters, and choosing the statement variant whose plan
 *	  finds the rows through an index.
 *
 * A filter is a jsonb object; every key is optional (doc/sql.md, "Job
 * filters"):
 *	priority_min, priority_max	integers, inclusive
 *	worker						text, equal to the worker of the last claim
 *	key							text, equal to the dedupe key
 *	key_prefix					text, a prefix of the dedupe key
 *	since, until				timestamps: since <= t < until, where t is
 *								run_at of a live job, finished_at of a
 *								finished one
 *	ids							array of job ids (1..JOBQ_LIST_IDS_MAX)
 *	error						text, found (case-insensitively) in one of
 *								the kept error texts; needs jobq_reader
 *	payload						object or array, payload @> it; needs
 *								jobq_reader
 * Unknown keys and wrong types are 22023 naming the key.
 *
 * Statements that use a filter follow one parameter layout, so that the
 * fragments below can be shared: $1 .. $JOBQ_FILTER_NPARAMS are the
 * filter's (JOBQ_FILTER_PARAM_TYPES), the statement's own come after.
 * A NULL parameter turns its predicate off.  The plans are generic
 * (spi.c), so each predicate is written to leave the plan's index choice
 * alone: the index range of a variant is in its own WHERE clause
 * (JOBQ_FILTER_*_RANGE_SQL), everything else in JOBQ_FILTER_MATCH_SQL,
 * evaluated on the rows of that range.  A caller caps those rows
 * (jobq_list_scan_limit) when the match is not all index-backed.
 *
 * This API is shared with the bulk actions: keep it stable.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/list_filter.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JOBQ_LIST_FILTER_H
#define JOBQ_LIST_FILTER_H

#include "jobq.h"

/* jobq.list_scan_limit: rows a filter's match is evaluated on, at most */
extern int	jobq_list_scan_limit;

/* The parsed filter (jobq_list_filter_parse) */
typedef struct JobqListFilter
{
	bool		has_priority_min;
	bool		has_priority_max;
	int32		priority_min;
	int32		priority_max;
	text	   *worker;			/* NULL: any */
	text	   *key;			/* dedupe key equal, NULL: any */
	text	   *key_prefix;		/* dedupe key prefix, NULL: any */
	bool		has_since;
	bool		has_until;
	TimestampTz since;
	TimestampTz until;
	ArrayType  *ids;			/* int8[], NULL: any */
	text	   *error;			/* lower-cased substring, NULL: any */
	Jsonb	   *payload;		/* payload @> it, NULL: any */
} JobqListFilter;

/*
 * The parameters: $1 queue, $2 state or NULL (every state of the table),
 * $3 now (delayed vs ready), then the filter's.
 */
#define JOBQ_FILTER_NPARAMS 13
#define JOBQ_FILTER_PARAM_TYPES \
	TEXTOID, TEXTOID, TIMESTAMPTZOID, INT4OID, INT4OID, TEXTOID, TEXTOID, TEXTOID, \
	TIMESTAMPTZOID, TIMESTAMPTZOID, INT8ARRAYOID, TEXTOID, JSONBOID

/*
 * JOBQ_FILTER_LIVE_STATE_SQL: the state of live job A as operators see it
 * (ready, delayed or running).
 */
#define JOBQ_FILTER_LIVE_STATE_SQL(A) \
	"CASE WHEN " A ".state = 'ready' AND " A ".run_at > $3 THEN 'delayed'" \
	" ELSE " A ".state::text END"

/*
 * JOBQ_FILTER_MATCH_SQL: whether job A (a row of jobq.jobs or
 * jobq.history) passes every filter; T is its time column (A.run_at or
 * A.finished_at).  The state is not part of it (see the ranges).
 */
#define JOBQ_FILTER_MATCH_SQL(A, T) \
	"(($4::integer IS NULL OR " A ".priority >= $4)" \
	" AND ($5::integer IS NULL OR " A ".priority <= $5)" \
	" AND ($6::text IS NULL OR " A ".worker = $6)" \
	" AND ($7::text IS NULL OR " A ".dedupe_key = $7)" \
	" AND ($8::text IS NULL OR pg_catalog.starts_with(" A ".dedupe_key, $8))" \
	" AND ($9::timestamptz IS NULL OR " T " >= $9)" \
	" AND ($10::timestamptz IS NULL OR " T " < $10)" \
	" AND ($11::bigint[] IS NULL OR " A ".id = ANY ($11))" \
	" AND ($12::text IS NULL OR EXISTS (SELECT 1" \
	"      FROM pg_catalog.jsonb_array_elements(" A ".errors) AS fe(e)" \
	"      WHERE pg_catalog.strpos(pg_catalog.lower(fe.e ->> 'error'), $12) > 0))" \
	" AND ($13::jsonb IS NULL OR " A ".payload @> $13))"

/*
 * The index ranges, one per variant (JobqFilterVariant).  Each is a FROM
 * and WHERE of rows of queue $1 in state $2 (NULL: any state of the
 * table), to be followed by the caller's own conditions (AND ...), order
 * and limit.  Live jobs are ordered by id (jobs_pkey), finished ones by
 * (finished_at, id), newest first (history_queue_state_idx).
 *
 * LIVE_RANGE: the queue's live jobs, along jobs_pkey.
 * LIVE_KEY: the live job holding dedupe key $7 (jobs_dedupe_idx).
 * LIVE_IDS / HISTORY_IDS: the jobs of id list $11 (primary keys).
 * HISTORY_RANGE(STATE): the queue's finished jobs in STATE (a literal
 * state: one index range per state; the caller unions them), between $9
 * and $10 (finished_at, in the index).
 */
#define JOBQ_FILTER_LIVE_RANGE_SQL(A) \
	" FROM jobq.jobs " A \
	" WHERE " A ".queue = $1" \
	"   AND ($2::text IS NULL OR " JOBQ_FILTER_LIVE_STATE_SQL(A) " = $2)"

#define JOBQ_FILTER_LIVE_KEY_SQL(A) \
	JOBQ_FILTER_LIVE_RANGE_SQL(A) " AND " A ".dedupe_key = $7"

#define JOBQ_FILTER_LIVE_IDS_SQL(A) \
	" FROM (SELECT DISTINCT fi.id FROM pg_catalog.unnest($11::bigint[]) AS fi(id)) fi" \
	" JOIN jobq.jobs " A " ON " A ".id = fi.id" \
	" WHERE " A ".queue = $1" \
	"   AND ($2::text IS NULL OR " JOBQ_FILTER_LIVE_STATE_SQL(A) " = $2)"

#define JOBQ_FILTER_HISTORY_RANGE_SQL(A, STATE) \
	" FROM jobq.history " A \
	" WHERE " A ".queue = $1 AND " A ".state = '" STATE "'" \
	"   AND ($2::text IS NULL OR $2 = '" STATE "')" \
	"   AND " A ".finished_at >= COALESCE($9, '-infinity'::timestamptz)" \
	"   AND " A ".finished_at < COALESCE($10, 'infinity'::timestamptz)"

/*
 * HISTORY_SCHEDULE(STATE): the runs of one schedule, when the key prefix $8
 * is "schedule:<name>:" (the dedupe key of a scheduled job is
 * schedule:<name>:<tick>, extension/schedules.c): finished jobs of the
 * queue in STATE with that name, between $9 and $10, along
 * history_schedule_idx (one index range per state, as HISTORY_RANGE).
 */
#define JOBQ_FILTER_HISTORY_SCHEDULE_SQL(A, STATE) \
	" FROM jobq.history " A \
	" WHERE " A ".queue = $1" \
	"   AND " A ".dedupe_key LIKE 'schedule:%'" \
	"   AND pg_catalog.split_part(" A ".dedupe_key, ':', 2) = pg_catalog.split_part($8, ':', 2)" \
	"   AND " A ".state = '" STATE "'" \
	"   AND ($2::text IS NULL OR $2 = '" STATE "')" \
	"   AND " A ".finished_at >= COALESCE($9, '-infinity'::timestamptz)" \
	"   AND " A ".finished_at < COALESCE($10, 'infinity'::timestamptz)"

#define JOBQ_FILTER_HISTORY_IDS_SQL(A) \
	" FROM (SELECT DISTINCT fi.id FROM pg_catalog.unnest($11::bigint[]) AS fi(id)) fi" \
	" JOIN jobq.history " A " ON " A ".id = fi.id" \
	" WHERE " A ".queue = $1" \
	"   AND ($2::text IS NULL OR " A ".state::text = $2)"

/* Which index finds a filter's rows (jobq_list_filter_variant) */
typedef enum JobqFilterVariant
{
	JOBQ_FILTER_LIVE_RANGE,
	JOBQ_FILTER_LIVE_KEY,
	JOBQ_FILTER_LIVE_IDS,
	JOBQ_FILTER_HISTORY_RANGE,
	JOBQ_FILTER_HISTORY_IDS,
	JOBQ_FILTER_HISTORY_SCHEDULE
} JobqFilterVariant;

extern void jobq_list_filter_init(void);
extern void jobq_list_filter_parse(Jsonb *filters, JobqListFilter *f);
extern void jobq_list_filter_bind(const JobqListFilter *f, text *queue, const char *state,
								  TimestampTz now, Datum *values, char *nulls);
extern JobqFilterVariant jobq_list_filter_variant(const JobqListFilter *f, bool history);
extern bool jobq_list_filter_capped(const JobqListFilter *f, JobqFilterVariant variant);

#endif							/* JOBQ_LIST_FILTER_H */
