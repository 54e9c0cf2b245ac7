/*-------------------------------------------------------------------------
 *
 * schedules.c
 *	  Schedules, recurring jobs: jobq_schedule (an upsert by name),
 *	  jobq_unschedule, jobq_pause_schedule, jobq_resume_schedule,
 *	  jobq_trigger_schedule and jobq_schedules; the fire-time arithmetic and
 *	  the marks a schedule's job carries, which the tick (tick.c) shares;
 *	  the settings jobq.test_now and jobq.cron_max_backfill.
 *
 * A schedule is a row of jobq.schedules.  Its expression and zone are
 * parsed by cron.c each time they are used, so a stored schedule always
 * means what the library that runs it says.  next_run_at is the next tick:
 * jobq_schedule computes it from now when the expression, zone, start_at
 * or end_at change (an edit never backfills), and keeps it otherwise, so
 * that re-applying the same definition moves nothing; only the tick moves
 * it afterwards, and only forward.  NULL means no tick is left.
 *
 * Every job of a schedule carries the dedupe key
 * 'schedule:<name>:<tick, UTC, ISO 8601>' (a manual run
 * 'schedule:<name>:manual:<time>'), and its payload, a JSON object, the
 * key "_cron": {"schedule", "tick", "backfilled", "manual"}.  The key makes
 * a schedule's runs a prefix of dedupe keys, which jobq_list finds through
 * an index, in live jobs and in history; names cannot hold ':', so the
 * prefix of one schedule is never that of another.
 *
 * Writes need jobq_admin (and admin on the queue when per-queue grants
 * exist); jobq_schedules() is for jobq_monitor and jobq_reader too, the
 * payload shown only to jobq_reader's members.  Nothing here takes the
 * queue's name lock: the foreign key to jobq.queues keeps the queue alive
 * until commit.  The tick locks a schedule and then, to enqueue, the
 * queue's name; jobq_drop_queue takes the queue's schedules before the
 * name (jobq_schedules_before_drop), in the same order, so the two never
 * deadlock.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/schedules.c
 *
 *-------------------------------------------------------------------------
 */
#include "schedules.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"

PG_FUNCTION_INFO_V1(jobq_schedule);
PG_FUNCTION_INFO_V1(jobq_unschedule);
PG_FUNCTION_INFO_V1(jobq_pause_schedule);
PG_FUNCTION_INFO_V1(jobq_resume_schedule);
PG_FUNCTION_INFO_V1(jobq_trigger_schedule);
PG_FUNCTION_INFO_V1(jobq_schedules);

/* Arguments of jobq_schedule */
#define ARG_NAME			0
#define ARG_QUEUE			1
#define ARG_EXPR			2
#define ARG_PAYLOAD			3
#define ARG_TZ				4
#define ARG_OVERLAP			5
#define ARG_CATCHUP			6
#define ARG_GRACE			7
#define ARG_PRIORITY		8
#define ARG_MAX_ATTEMPTS	9
#define ARG_START_AT		10
#define ARG_END_AT			11
#define ARG_SOURCE			12

#define SOURCE_MAX			1024	/* bytes of source */
#define DEFAULT_GRACE_USECS	(5 * USECS_PER_MINUTE)

enum
{
	ST_GET,
	ST_INSERT,
	ST_UPDATE,
	ST_DELETE,
	ST_PAUSE,
	ST_RESUME,
	ST_SET_LAST_JOB,
	ST_LIST,
	ST_QUEUE_SCHEDULES,
	ST_UNSCHEDULE_QUEUE,
	ST_JOB_LIVE,
	NUM_STATEMENTS
};

/* ST_GET */
#define COL_GET_QUEUE			1
#define COL_GET_EXPR			2
#define COL_GET_TZ				3
#define COL_GET_START_AT		4
#define COL_GET_END_AT			5
#define COL_GET_NEXT_RUN_AT		6
#define COL_GET_CREATED_AT		7
#define COL_GET_PAUSED			8
#define COL_GET_PAYLOAD			9
#define COL_GET_PRIORITY		10
#define COL_GET_MAX_ATTEMPTS	11
/* ST_DELETE, ST_PAUSE */
#define COL_QUEUE				1
/* ST_LIST */
#define COL_LIST_QUEUE			2

/* name and settings, in the order of jobq_schedule's arguments: $1 .. $12 */
#define SETTINGS_TYPES \
	TEXTOID, TEXTOID, TEXTOID, TEXTOID, JSONBOID, TEXTOID, TEXTOID, INTERVALOID, \
	INT2OID, INT4OID, TIMESTAMPTZOID, TIMESTAMPTZOID

static const JobqStatement statements[NUM_STATEMENTS] = {
	/* $1 name: the row, locked against ticks and other edits */
	[ST_GET] = {"schedule_get",
		"SELECT queue, expr, tz, start_at, end_at, next_run_at, created_at, paused,"
		" payload, priority, max_attempts"
		" FROM jobq.schedules WHERE name = $1 FOR NO KEY UPDATE",
		1, {TEXTOID}},
	/*
	 * $1 name, $2 queue ... $12 end_at (jobq_schedule's order), $13
	 * next_run_at, $14 source, $15 now
	 */
	[ST_INSERT] = {"schedule_insert",
		"INSERT INTO jobq.schedules (name, queue, expr, tz, payload, overlap, catchup,"
		"  grace, priority, max_attempts, start_at, end_at, next_run_at, source,"
		"  created_at, updated_at)"
		" VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $15)"
		" ON CONFLICT (name) DO NOTHING",
		15, {SETTINGS_TYPES, TIMESTAMPTZOID, TEXTOID, TIMESTAMPTZOID}},
	/* the same arguments; an edit ends a failing schedule's backoff */
	[ST_UPDATE] = {"schedule_update",
		"UPDATE jobq.schedules SET queue = $2, expr = $3, tz = $4, payload = $5,"
		"  overlap = $6, catchup = $7, grace = $8, priority = $9, max_attempts = $10,"
		"  start_at = $11, end_at = $12, next_run_at = $13, source = $14,"
		"  updated_at = $15, failures = 0, retry_at = NULL"
		" WHERE name = $1",
		15, {SETTINGS_TYPES, TIMESTAMPTZOID, TEXTOID, TIMESTAMPTZOID}},
	[ST_DELETE] = {"schedule_delete",
		"DELETE FROM jobq.schedules WHERE name = $1 RETURNING queue",
		1, {TEXTOID}},
	/* $1 name, $2 now */
	[ST_PAUSE] = {"schedule_pause",
		"UPDATE jobq.schedules SET paused = true, updated_at = $2"
		" WHERE name = $1 RETURNING queue",
		2, {TEXTOID, TIMESTAMPTZOID}},
	/* $1 name, $2 now, $3 the next tick from now */
	[ST_RESUME] = {"schedule_resume",
		"UPDATE jobq.schedules SET paused = false, updated_at = $2, next_run_at = $3,"
		"  failures = 0, retry_at = NULL"
		" WHERE name = $1",
		3, {TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID}},
	/* $1 name, $2 job id */
	[ST_SET_LAST_JOB] = {"schedule_set_last_job",
		"UPDATE jobq.schedules SET last_job_id = $2 WHERE name = $1",
		2, {TEXTOID, INT8OID}},
	/*
	 * $1 whether the caller reads payloads.  Named as jobq_schedules'
	 * result columns; the last job's state is found by its primary key in
	 * jobq.jobs or jobq.history.
	 */
	[ST_LIST] = {"schedules",
		"SELECT s.name, s.queue, s.expr, s.tz, CASE WHEN $1 THEN s.payload END AS payload,"
		"  s.overlap, s.catchup, s.grace, s.priority::integer AS priority, s.max_attempts,"
		"  s.start_at, s.end_at, s.paused, s.next_run_at, s.last_run_at,"
		"  s.last_job_id,"
		"  (SELECT x.state::text FROM (SELECT j.state FROM jobq.jobs j WHERE j.id = s.last_job_id"
		"     UNION ALL SELECT h.state FROM jobq.history h WHERE h.id = s.last_job_id) x"
		"   LIMIT 1) AS last_job_state,"
		"  s.missed_ticks, s.skipped_ticks, s.failures, s.retry_at, s.last_error,"
		"  s.source, s.created_at, s.updated_at"
		" FROM jobq.schedules s ORDER BY s.name",
		1, {BOOLOID}},
	/* $1 queue: its schedules, locked (jobq_drop_queue) */
	[ST_QUEUE_SCHEDULES] = {"queue_schedules",
		"SELECT name FROM jobq.schedules WHERE queue = $1 ORDER BY name FOR UPDATE",
		1, {TEXTOID}},
	[ST_UNSCHEDULE_QUEUE] = {"unschedule_queue",
		"DELETE FROM jobq.schedules WHERE queue = $1",
		1, {TEXTOID}},
	/* $1 job id: whether the job is live */
	[ST_JOB_LIVE] = {"schedule_job_live",
		"SELECT 1 FROM jobq.jobs WHERE id = $1",
		1, {INT8OID}},
};

static SPIPlanPtr plans[NUM_STATEMENTS];

const JobqStatements jobq_schedules_statements = {statements, NUM_STATEMENTS, plans, NULL};

/* GUC variables */
int			jobq_cron_max_backfill = 100;
static char *test_now_string = NULL;
static bool test_now_set = false;
static TimestampTz test_now = 0;

/*
 * check_test_now
 *	  jobq.test_now must be empty or a finite timestamptz (read in the
 *	  session's TimeZone when it names no zone).  The parsed value travels
 *	  to the assign hook as the GUC's malloc'd extra.
 */
static bool
check_test_now(char **newval, void **extra, GucSource source)
{
	char		workbuf[MAXDATELEN + MAXDATEFIELDS];
	char	   *field[MAXDATEFIELDS];
	int			ftype[MAXDATEFIELDS];
	int			nf;
	int			dtype;
	int			tz;
	struct pg_tm tm;
	fsec_t		fsec;
	TimestampTz result;
	TimestampTz *parsed;

	if (*newval == NULL || (*newval)[0] == '\0')
		return true;
	if (ParseDateTime(*newval, workbuf, sizeof(workbuf), field, ftype,
					  MAXDATEFIELDS, &nf) != 0 ||
		DecodeDateTime(field, ftype, nf, &dtype, &tm, &fsec, &tz) != 0 ||
		dtype != DTK_DATE ||
		tm2timestamp(&tm, fsec, &tz, &result) != 0)
	{
		GUC_check_errdetail("jobq.test_now must be empty or a finite timestamp with time zone.");
		return false;
	}
	parsed = malloc(sizeof(TimestampTz));
	if (parsed == NULL)
		return false;
	*parsed = result;
	*extra = parsed;
	return true;
}

static void
assign_test_now(const char *newval, void *extra)
{
	test_now_set = extra != NULL;
	test_now = extra != NULL ? *(TimestampTz *) extra : 0;
}

/*
 * jobq_schedules_define_gucs
 *	  Called by _PG_init.
 */
void
jobq_schedules_define_gucs(void)
{
	DefineCustomStringVariable("jobq.test_now",
							   "For tests only: the time schedules use instead of the clock.",
							   "Empty (the default) means the server's clock.  Only superusers may set it.",
							   &test_now_string,
							   "",
							   PGC_SUSET, GUC_NOT_IN_SAMPLE,
							   check_test_now, assign_test_now, NULL);

	DefineCustomIntVariable("jobq.cron_max_backfill",
							"Missed ticks a schedule with catchup 'all' fires per tick call.",
							"The rest of its ticks within the grace fire in the next calls.",
							&jobq_cron_max_backfill,
							100, 1, 10000,
							PGC_SUSET, 0,
							NULL, NULL, NULL);
}

/* Whether this transaction wrote a schedule (to wake the sweeper at commit) */
static bool schedule_written = false;
static bool xact_callback_registered = false;

static void
schedules_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT && schedule_written)
		jobq_relay_schedules_changed();
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PREPARE)
		schedule_written = false;
}

/*
 * note_schedule_written
 *	  The current transaction wrote a schedule's timing: at its commit,
 *	  the database's sweeper is told to read when the next tick is due
 *	  (a rollback, or a write that does not commit, tells it nothing).
 */
static void
note_schedule_written(void)
{
	if (!xact_callback_registered)
	{
		RegisterXactCallback(schedules_xact_callback, NULL);
		xact_callback_registered = true;
	}
	schedule_written = true;
}

/*
 * jobq_schedule_now
 *	  The time of the schedules: jobq.test_now when set, else the clock.
 */
TimestampTz
jobq_schedule_now(void)
{
	return test_now_set ? test_now : GetCurrentTimestamp();
}

/*
 * schedule_timing
 *	  Parse expr and tz (22023 from cron.c when either is bad) into
 *	  *timing, with the bounds.  created_at anchors an @every without a
 *	  start_at, to the second.
 */
void
schedule_timing(ScheduleTiming *timing, const char *expr, const char *tz,
				bool has_start, TimestampTz start_at,
				bool has_end, TimestampTz end_at, TimestampTz created_at)
{
	timing->cron = jobq_cron_parse(expr);
	timing->tz = jobq_cron_zone(tz);
	timing->every = jobq_cron_every_usec(timing->cron);
	timing->has_start = has_start;
	timing->start_at = start_at;
	timing->has_end = has_end;
	timing->end_at = end_at;
	timing->anchor = has_start ? start_at : created_at - created_at % USECS_PER_SEC;
}

/*
 * schedule_next
 *	  The first tick strictly after after, or DT_NOEND when none is left
 *	  (past end_at, or an expression that fires no more).  No tick comes
 *	  before start_at; an @every ticks at anchor + k * every.
 */
TimestampTz
schedule_next(const ScheduleTiming *timing, TimestampTz after)
{
	TimestampTz from = after;
	TimestampTz next;

	/* start_at itself may be a tick */
	if (timing->has_start && timing->start_at > after)
		from = timing->start_at - 1;
	next = jobq_cron_next_anchored(timing->cron, timing->tz, timing->anchor, from);
	if (next == DT_NOEND || (timing->has_end && next > timing->end_at))
		return DT_NOEND;
	return next;
}

/*
 * format_utc
 *	  t as ISO 8601 in UTC ("2026-12-01T03:00:00Z", microseconds only when
 *	  there are some), for dedupe keys and payloads.
 */
static void
format_utc(TimestampTz t, char *buf, size_t len)
{
	struct pg_tm tm;
	fsec_t		fsec;

	if (timestamp2tm(t, NULL, &tm, &fsec, NULL, NULL) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range")));
	if (fsec != 0)
		snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ",
				 tm.tm_year, tm.tm_mon, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
				 (int) fsec);
	else
		snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02dZ",
				 tm.tm_year, tm.tm_mon, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

/*
 * schedule_dedupe_key
 *	  'schedule:<name>:<tick>', or with kind 'schedule:<name>:<kind>:<time>'.
 */
text *
schedule_dedupe_key(const char *name, const char *kind, TimestampTz tick)
{
	char		when[64];

	format_utc(tick, when, sizeof(when));
	if (kind != NULL)
		return cstring_to_text(psprintf("schedule:%s:%s:%s", name, kind, when));
	return cstring_to_text(psprintf("schedule:%s:%s", name, when));
}

/*
 * schedule_job_payload
 *	  The schedule's payload with "_cron" added.  The name is allow-listed
 *	  and the time is digits, so neither needs JSON escaping.
 */
Jsonb *
schedule_job_payload(Jsonb *payload, const char *name, TimestampTz tick,
					 bool backfilled, bool manual)
{
	char		when[64];
	char	   *mark;
	Datum		extra;

	format_utc(tick, when, sizeof(when));
	mark = psprintf("{\"" JOBQ_CRON_PAYLOAD_KEY "\": {\"schedule\": \"%s\", \"tick\": \"%s\","
					" \"backfilled\": %s, \"manual\": %s}}",
					name, when, backfilled ? "true" : "false", manual ? "true" : "false");
	extra = DirectFunctionCall1(jsonb_in, CStringGetDatum(mark));
	return DatumGetJsonbP(DirectFunctionCall2(jsonb_concat, JsonbPGetDatum(payload), extra));
}

/*
 * schedule_job_live
 *	  Whether the job is still ready or running.  Inside SPI.
 */
bool
schedule_job_live(int64 job_id)
{
	Datum		arg = Int64GetDatum(job_id);
	int			rc;

	rc = SPI_execute_plan(jobq_plan(&jobq_schedules_statements, ST_JOB_LIVE),
						  &arg, NULL, false, 1);
	jobq_spi_check(rc, SPI_OK_SELECT, "find the schedule's last job");
	return SPI_processed > 0;
}

/*
 * schedule_name_arg
 *	  The schedule-name argument argno, checked: required, the queue
 *	  names' allow-list, at most JOBQ_SCHEDULE_NAME_MAX bytes.
 */
static text *
schedule_name_arg(FunctionCallInfo fcinfo, int argno)
{
	text	   *name;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("schedule name must not be null")));
	name = PG_GETARG_TEXT_PP(argno);
	jobq_check_name(VARDATA_ANY(name), VARSIZE_ANY_EXHDR(name),
					JOBQ_SCHEDULE_NAME_MAX, "schedule", "Schedule");
	return name;
}

static void
schedule_not_found(text *name)
{
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("schedule \"%s\" does not exist", text_to_cstring(name)),
			 errhint("Create it with jobq_schedule('%s', queue, expr).", text_to_cstring(name))));
}

/*
 * word_arg
 *	  A text argument that must be one of words (NULL: the first).
 */
static char *
word_arg(FunctionCallInfo fcinfo, int argno, const char *argname,
		 const char *const *words, int nwords)
{
	char	   *value;

	if (PG_ARGISNULL(argno))
		return pstrdup(words[0]);
	value = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	for (int i = 0; i < nwords; i++)
		if (strcmp(value, words[i]) == 0)
			return value;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("%s must be %s, not \"%s\"", argname,
					jobq_name_list(words, nwords, "or"), value)));
	return NULL;				/* keep compiler quiet */
}

/*
 * check_schedule_payload
 *	  A schedule's payload is a JSON object (the tick adds "_cron" to it)
 *	  without a "_cron" key of its own, within jobq.max_payload_size.
 */
static void
check_schedule_payload(Jsonb *payload)
{
	if (!JB_ROOT_IS_OBJECT(payload) || JB_ROOT_IS_SCALAR(payload))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("payload of a schedule must be a JSON object"),
				 errdetail("Each job gets the key \"" JOBQ_CRON_PAYLOAD_KEY "\" added to it.")));
	if (DatumGetBool(DirectFunctionCall2(jsonb_exists, JsonbPGetDatum(payload),
										 CStringGetTextDatum(JOBQ_CRON_PAYLOAD_KEY))))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("payload of a schedule must not have the key \"" JOBQ_CRON_PAYLOAD_KEY "\""),
				 errdetail("The tick sets it to the schedule's name and the tick's time.")));
	jobq_check_payload(payload, "payload");
}

/* A finite timestamptz argument, or none */
static bool
time_arg(FunctionCallInfo fcinfo, int argno, const char *argname, TimestampTz *out)
{
	if (PG_ARGISNULL(argno))
		return false;
	*out = PG_GETARG_TIMESTAMPTZ(argno);
	if (TIMESTAMP_NOT_FINITE(*out))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be finite", argname),
				 errhint("Pass NULL for no bound.")));
	return true;
}

/* Whether two nullable texts or times differ */
static bool
text_differs(bool null_a, Datum a, const char *b)
{
	return null_a || strcmp(TextDatumGetCString(a), b) != 0;
}

static bool
time_differs(bool null_a, Datum a, bool has_b, TimestampTz b)
{
	if (null_a || !has_b)
		return null_a != !has_b;
	return DatumGetTimestampTz(a) != b;
}

/*
 * jobq_schedule(name, queue, expr, payload, tz, overlap, catchup, grace,
 *				 priority, max_attempts, start_at, end_at, source)
 *	  -> timestamptz
 *
 *	  Create the schedule, or change it (an upsert by name), and return its
 *	  next tick (NULL: none is left).  A NULL argument after expr takes its
 *	  default.  Every argument, the expression and the zone are checked
 *	  before anything is written.
 */
Datum
jobq_schedule(PG_FUNCTION_ARGS)
{
	static const char *const overlaps[] = {"allow", "skip"};
	static const char *const catchups[] = {"latest", "none", "all"};
	text	   *name = schedule_name_arg(fcinfo, ARG_NAME);
	text	   *queue = jobq_queue_arg(fcinfo, ARG_QUEUE);
	char	   *expr;
	Jsonb	   *payload;
	char	   *tz;
	char	   *overlap;
	char	   *catchup;
	Interval   *grace;
	int32		priority = 0;
	bool		has_start,
				has_end;
	TimestampTz start_at = 0,
				end_at = 0;
	char	   *source = "sql";
	TimestampTz now;
	TimestampTz next;
	ScheduleTiming timing;
	JobqQueueSettings settings;
	Datum		values[15];
	char		nulls[15];
	int			rc;

	jobq_require(fcinfo, ARG_EXPR, "expr");
	expr = text_to_cstring(PG_GETARG_TEXT_PP(ARG_EXPR));
	if (PG_ARGISNULL(ARG_PAYLOAD))
		payload = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum("{}")));
	else
		payload = PG_GETARG_JSONB_P(ARG_PAYLOAD);
	check_schedule_payload(payload);
	tz = PG_ARGISNULL(ARG_TZ) ? "UTC" : text_to_cstring(PG_GETARG_TEXT_PP(ARG_TZ));
	overlap = word_arg(fcinfo, ARG_OVERLAP, "overlap", overlaps, lengthof(overlaps));
	catchup = word_arg(fcinfo, ARG_CATCHUP, "catchup", catchups, lengthof(catchups));
	if (PG_ARGISNULL(ARG_GRACE))
	{
		grace = palloc0(sizeof(Interval));
		grace->time = DEFAULT_GRACE_USECS;
	}
	else
		grace = jobq_check_interval(PG_GETARG_INTERVAL_P(ARG_GRACE), "grace", 0,
									(int64) JOBQ_SCHEDULE_GRACE_MAX_S * USECS_PER_SEC);
	if (!PG_ARGISNULL(ARG_PRIORITY))
	{
		priority = PG_GETARG_INT32(ARG_PRIORITY);
		jobq_check_int_range(priority, "priority", JOBQ_PRIORITY_MIN, JOBQ_PRIORITY_MAX);
	}
	if (!PG_ARGISNULL(ARG_MAX_ATTEMPTS))
		jobq_check_int_range(PG_GETARG_INT32(ARG_MAX_ATTEMPTS), "max_attempts",
							 1, JOBQ_MAX_ATTEMPTS_MAX);
	has_start = time_arg(fcinfo, ARG_START_AT, "start_at", &start_at);
	has_end = time_arg(fcinfo, ARG_END_AT, "end_at", &end_at);
	if (has_start && has_end && end_at <= start_at)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("end_at must be after start_at")));
	if (!PG_ARGISNULL(ARG_SOURCE))
	{
		source = text_to_cstring(PG_GETARG_TEXT_PP(ARG_SOURCE));
		if (strlen(source) < 1 || strlen(source) > SOURCE_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("source must be 1 to %d bytes long, not %d",
							SOURCE_MAX, (int) strlen(source))));
	}
	now = jobq_schedule_now();
	/* the expression and the zone: 22023 from the parser */
	schedule_timing(&timing, expr, tz, has_start, start_at, has_end, end_at, now);

	jobq_spi_connect();
	if (!jobq_queue_settings(queue, &settings))
		jobq_queue_not_found(queue);
	jobq_check_queue(queue, JOBQ_PRIV_ADMIN);

	memset(nulls, ' ', sizeof(nulls));
	values[0] = PointerGetDatum(name);
	values[1] = PointerGetDatum(queue);
	values[2] = CStringGetTextDatum(expr);
	values[3] = CStringGetTextDatum(tz);
	values[4] = JsonbPGetDatum(payload);
	values[5] = CStringGetTextDatum(overlap);
	values[6] = CStringGetTextDatum(catchup);
	values[7] = IntervalPGetDatum(grace);
	values[8] = Int16GetDatum((int16) priority);
	values[9] = PG_ARGISNULL(ARG_MAX_ATTEMPTS) ? (Datum) 0 : PG_GETARG_DATUM(ARG_MAX_ATTEMPTS);
	nulls[9] = PG_ARGISNULL(ARG_MAX_ATTEMPTS) ? 'n' : ' ';
	values[10] = TimestampTzGetDatum(start_at);
	nulls[10] = has_start ? ' ' : 'n';
	values[11] = TimestampTzGetDatum(end_at);
	nulls[11] = has_end ? ' ' : 'n';
	values[13] = CStringGetTextDatum(source);
	values[14] = TimestampTzGetDatum(now);

	for (;;)
	{
		HeapTuple	row;
		TupleDesc	desc;
		bool		null_expr,
					null_tz,
					null_start,
					null_end,
					null_next,
					null_created;
		Datum		old_expr,
					old_tz,
					old_start,
					old_end,
					old_next,
					created_at;

		rc = SPI_execute_plan(jobq_plan(&jobq_schedules_statements, ST_GET),
							  values, NULL, false, 1);
		jobq_spi_check(rc, SPI_OK_SELECT, "read schedule");
		if (SPI_processed == 0)
		{
			/* new: the first tick after now */
			next = schedule_next(&timing, now);
			values[12] = TimestampTzGetDatum(next);
			nulls[12] = next == DT_NOEND ? 'n' : ' ';
			rc = SPI_execute_plan(jobq_plan(&jobq_schedules_statements, ST_INSERT),
								  values, nulls, false, 0);
			jobq_spi_check(rc, SPI_OK_INSERT, "insert schedule");
			if (SPI_processed == 1)
				break;
			continue;			/* created meanwhile: change it */
		}

		row = SPI_tuptable->vals[0];
		desc = SPI_tuptable->tupdesc;
		old_expr = SPI_getbinval(row, desc, COL_GET_EXPR, &null_expr);
		old_tz = SPI_getbinval(row, desc, COL_GET_TZ, &null_tz);
		old_start = SPI_getbinval(row, desc, COL_GET_START_AT, &null_start);
		old_end = SPI_getbinval(row, desc, COL_GET_END_AT, &null_end);
		old_next = SPI_getbinval(row, desc, COL_GET_NEXT_RUN_AT, &null_next);
		created_at = SPI_getbinval(row, desc, COL_GET_CREATED_AT, &null_created);

		if (text_differs(null_expr, old_expr, expr) ||
			text_differs(null_tz, old_tz, tz) ||
			time_differs(null_start, old_start, has_start, start_at) ||
			time_differs(null_end, old_end, has_end, end_at))
		{
			/* new timing: from now, never backfilling */
			schedule_timing(&timing, expr, tz, has_start, start_at, has_end, end_at,
							DatumGetTimestampTz(created_at));
			next = schedule_next(&timing, now);
		}
		else
			next = null_next ? DT_NOEND : DatumGetTimestampTz(old_next);

		values[12] = TimestampTzGetDatum(next);
		nulls[12] = next == DT_NOEND ? 'n' : ' ';
		rc = SPI_execute_plan(jobq_plan(&jobq_schedules_statements, ST_UPDATE),
							  values, nulls, false, 0);
		jobq_spi_check(rc, SPI_OK_UPDATE, "update schedule");
		break;
	}
	jobq_spi_finish();
	note_schedule_written();

	if (next == DT_NOEND)
		PG_RETURN_NULL();
	PG_RETURN_TIMESTAMPTZ(next);
}

/*
 * jobq_unschedule(name) -> boolean
 *	  Delete the schedule; false when there is none.  Jobs it enqueued
 *	  stay.  Waits for a tick that holds the schedule.
 */
Datum
jobq_unschedule(PG_FUNCTION_ARGS)
{
	text	   *name = schedule_name_arg(fcinfo, 0);
	Datum		arg = PointerGetDatum(name);
	bool		found;
	bool		isnull;
	int			rc;

	jobq_spi_connect();
	rc = SPI_execute_plan(jobq_plan(&jobq_schedules_statements, ST_DELETE),
						  &arg, NULL, false, 0);
	jobq_spi_check(rc, SPI_OK_DELETE_RETURNING, "delete schedule");
	found = SPI_processed > 0;
	if (found)
		jobq_check_queue(DatumGetTextPP(SPI_getbinval(SPI_tuptable->vals[0],
													  SPI_tuptable->tupdesc,
													  COL_QUEUE, &isnull)),
						 JOBQ_PRIV_ADMIN);
	jobq_spi_finish();
	PG_RETURN_BOOL(found);
}

/*
 * jobq_pause_schedule(name) -> void
 *	  The schedule fires nothing until resumed; 42704 when there is none.
 */
Datum
jobq_pause_schedule(PG_FUNCTION_ARGS)
{
	text	   *name = schedule_name_arg(fcinfo, 0);
	Datum		args[2];
	bool		isnull;
	int			rc;

	args[0] = PointerGetDatum(name);
	args[1] = TimestampTzGetDatum(jobq_schedule_now());
	jobq_spi_connect();
	rc = SPI_execute_plan(jobq_plan(&jobq_schedules_statements, ST_PAUSE),
						  args, NULL, false, 0);
	jobq_spi_check(rc, SPI_OK_UPDATE_RETURNING, "pause schedule");
	if (SPI_processed == 0)
		schedule_not_found(name);
	jobq_check_queue(DatumGetTextPP(SPI_getbinval(SPI_tuptable->vals[0],
												  SPI_tuptable->tupdesc,
												  COL_QUEUE, &isnull)),
					 JOBQ_PRIV_ADMIN);
	jobq_spi_finish();
	PG_RETURN_VOID();
}

/*
 * get_schedule
 *	  Lock and read the schedule's row (SPI_tuptable row 0); 42704 when
 *	  there is none, 42501 without admin on its queue.  Inside SPI.
 */
static HeapTuple
get_schedule(text *name)
{
	Datum		arg = PointerGetDatum(name);
	bool		isnull;
	int			rc;

	rc = SPI_execute_plan(jobq_plan(&jobq_schedules_statements, ST_GET),
						  &arg, NULL, false, 1);
	jobq_spi_check(rc, SPI_OK_SELECT, "read schedule");
	if (SPI_processed == 0)
		schedule_not_found(name);
	jobq_check_queue(DatumGetTextPP(SPI_getbinval(SPI_tuptable->vals[0],
												  SPI_tuptable->tupdesc,
												  COL_GET_QUEUE, &isnull)),
					 JOBQ_PRIV_ADMIN);
	return SPI_tuptable->vals[0];
}

/*
 * jobq_resume_schedule(name) -> timestamptz
 *	  Resume a paused schedule from now: the ticks it slept through are
 *	  not fired.  Returns the next tick (NULL: none is left); a schedule
 *	  that was not paused keeps its next tick.
 */
Datum
jobq_resume_schedule(PG_FUNCTION_ARGS)
{
	text	   *name = schedule_name_arg(fcinfo, 0);
	TimestampTz now = jobq_schedule_now();
	TimestampTz next;
	HeapTuple	row;
	TupleDesc	desc;
	bool		null_start,
				null_end,
				null_next,
				isnull;
	Datum		start_at,
				end_at,
				args[3];
	char		nulls[3] = {' ', ' ', ' '};
	ScheduleTiming timing;
	int			rc;

	jobq_spi_connect();
	row = get_schedule(name);
	desc = SPI_tuptable->tupdesc;
	if (!DatumGetBool(SPI_getbinval(row, desc, COL_GET_PAUSED, &isnull)))
	{
		Datum		d = SPI_getbinval(row, desc, COL_GET_NEXT_RUN_AT, &null_next);

		jobq_spi_finish();
		if (null_next)
			PG_RETURN_NULL();
		PG_RETURN_DATUM(d);
	}
	start_at = SPI_getbinval(row, desc, COL_GET_START_AT, &null_start);
	end_at = SPI_getbinval(row, desc, COL_GET_END_AT, &null_end);
	schedule_timing(&timing,
					TextDatumGetCString(SPI_getbinval(row, desc, COL_GET_EXPR, &isnull)),
					TextDatumGetCString(SPI_getbinval(row, desc, COL_GET_TZ, &isnull)),
					!null_start, null_start ? 0 : DatumGetTimestampTz(start_at),
					!null_end, null_end ? 0 : DatumGetTimestampTz(end_at),
					DatumGetTimestampTz(SPI_getbinval(row, desc, COL_GET_CREATED_AT, &isnull)));
	next = schedule_next(&timing, now);

	args[0] = PointerGetDatum(name);
	args[1] = TimestampTzGetDatum(now);
	args[2] = TimestampTzGetDatum(next);
	nulls[2] = next == DT_NOEND ? 'n' : ' ';
	rc = SPI_execute_plan(jobq_plan(&jobq_schedules_statements, ST_RESUME),
						  args, nulls, false, 0);
	jobq_spi_check(rc, SPI_OK_UPDATE, "resume schedule");
	jobq_spi_finish();
	note_schedule_written();
	if (next == DT_NOEND)
		PG_RETURN_NULL();
	PG_RETURN_TIMESTAMPTZ(next);
}

/*
 * jobq_trigger_schedule(name) -> bigint
 *	  Enqueue the schedule's job now, as a manual run ("_cron": manual
 *	  true, dedupe key 'schedule:<name>:manual:<now>'), also when paused;
 *	  the next tick does not move.  It becomes the schedule's last job, so
 *	  overlap 'skip' waits for it too.  Returns the job's id.
 */
Datum
jobq_trigger_schedule(PG_FUNCTION_ARGS)
{
	text	   *name = schedule_name_arg(fcinfo, 0);
	char	   *cname = text_to_cstring(name);
	TimestampTz now = jobq_schedule_now();
	HeapTuple	row;
	TupleDesc	desc;
	text	   *queue;
	Jsonb	   *payload;
	int16		priority;
	Datum		max_attempts;
	bool		null_max,
				isnull,
				created;
	int64		id;
	Datum		args[2];
	int			rc;

	jobq_spi_connect();
	row = get_schedule(name);
	desc = SPI_tuptable->tupdesc;
	queue = DatumGetTextPP(SPI_getbinval(row, desc, COL_GET_QUEUE, &isnull));
	payload = DatumGetJsonbP(SPI_getbinval(row, desc, COL_GET_PAYLOAD, &isnull));
	priority = DatumGetInt16(SPI_getbinval(row, desc, COL_GET_PRIORITY, &isnull));
	max_attempts = SPI_getbinval(row, desc, COL_GET_MAX_ATTEMPTS, &null_max);

	id = jobq_enqueue_scheduled(queue, schedule_job_payload(payload, cname, now, false, true),
								priority, max_attempts, null_max,
								schedule_dedupe_key(cname, "manual", now), &created);
	args[0] = PointerGetDatum(name);
	args[1] = Int64GetDatum(id);
	rc = SPI_execute_plan(jobq_plan(&jobq_schedules_statements, ST_SET_LAST_JOB),
						  args, NULL, false, 0);
	jobq_spi_check(rc, SPI_OK_UPDATE, "record the schedule's job");
	jobq_spi_finish();
	PG_RETURN_INT64(id);
}

/*
 * jobq_schedules() -> setof (name, queue, expr, ..., updated_at)
 *	  Every schedule whose queue the caller may inspect, by name; the
 *	  payload only for jobq_reader's members.
 */
Datum
jobq_schedules(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	Tuplestorestate *store = jobq_srf_begin(fcinfo, &desc);
	Datum		reads = BoolGetDatum(jobq_caller_reads_payloads());
	int			rc;

	jobq_spi_connect();
	rc = SPI_execute_plan(jobq_plan(&jobq_schedules_statements, ST_LIST),
						  &reads, NULL, true, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "list schedules");
	jobq_srf_put_spi_allowed(store, desc, COL_LIST_QUEUE, JOBQ_PRIV_INSPECT, true);
	jobq_spi_finish();
	return (Datum) 0;
}

/*
 * jobq_schedules_exist_table
 *	  Whether jobq.schedules exists (SQL 0.2.0 or later).
 */
bool
jobq_schedules_exist_table(void)
{
	return OidIsValid(get_relname_relid("schedules", get_namespace_oid("jobq", false)));
}

/*
 * jobq_schedules_before_drop
 *	  Called by jobq_drop_queue before it locks the queue's name: refuse
 *	  (55006) while schedules point at the queue, or with force delete
 *	  them.  Either waits for a tick that holds one of them (and then gets
 *	  the name lock it needs).  Inside SPI.  Nothing to do while the SQL is
 *	  0.1.0.  A schedule created meanwhile makes the queue's delete fail on
 *	  the foreign key: never a schedule left without its queue.
 */
void
jobq_schedules_before_drop(text *queue, bool force)
{
	Datum		arg = PointerGetDatum(queue);
	int			rc;

	if (!jobq_schedules_exist_table())
		return;
	if (force)
	{
		rc = SPI_execute_plan(jobq_plan(&jobq_schedules_statements, ST_UNSCHEDULE_QUEUE),
							  &arg, NULL, false, 0);
		jobq_spi_check(rc, SPI_OK_DELETE, "unschedule the queue's schedules");
		return;
	}
	rc = SPI_execute_plan(jobq_plan(&jobq_schedules_statements, ST_QUEUE_SCHEDULES),
						  &arg, NULL, false, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "lock the queue's schedules");
	if (SPI_processed > 0)
	{
		bool		isnull;

		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("queue \"%s\" has " UINT64_FORMAT " schedules",
						text_to_cstring(queue), SPI_processed),
				 errdetail("Schedule \"%s\" enqueues into it.",
						   TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[0],
															 SPI_tuptable->tupdesc,
															 1, &isnull))),
				 errhint("Unschedule them first, or pass force => true, which unschedules them.")));
	}
}
