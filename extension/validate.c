/*-------------------------------------------------------------------------
 *
 * validate.c
 *	  Argument checks shared by the SQL-callable functions.
 *
 * Every user-triggerable problem is reported with ereport and a specific
 * SQLSTATE before any statement runs, so a rejected call has no side
 * effect.  NULL is never silently turned into "no job": a NULL where a
 * value is required is 22004 (null_value_not_allowed).
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/validate.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"

#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/datetime.h"

/*
 * jobq_require
 *	  Raise 22004 when argument argno is NULL.
 */
void
jobq_require(FunctionCallInfo fcinfo, int argno, const char *argname)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", argname)));
}

/*
 * jobq_check_name
 *	  Names of queues and schedules follow the allow-list
 *	  ^[a-z0-9]+([_-][a-z0-9]+)*$ and are at most max bytes; what (and
 *	  What, capitalized) names the kind in the messages.  Checked byte by
 *	  byte, so no multibyte or control character can slip through.
 */
void
jobq_check_name(const char *name, int len, int max, const char *what, const char *What)
{
	bool		prev_sep = true;	/* no separator at the start */

	if (len == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s name must not be empty", what)));
	if (len > max)
		ereport(ERROR,
				(errcode(ERRCODE_NAME_TOO_LONG),
				 errmsg("%s name is %d bytes long, over the limit of %d bytes",
						what, len, max)));

	for (int i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) name[i];
		bool		alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
		bool		sep = (c == '_' || c == '-');

		if (!alnum && !(sep && !prev_sep && i + 1 < len))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid %s name \"%s\"", what, pnstrdup(name, len)),
					 errdetail("%s names are lowercase letters and digits, in words joined by single \"_\" or \"-\".",
							   What)));
		prev_sep = sep;
	}
}

/*
 * jobq_check_queue_name
 *	  A queue name: the allow-list, at most JOBQ_QUEUE_NAME_MAX bytes.
 */
void
jobq_check_queue_name(const char *name, int len)
{
	jobq_check_name(name, len, JOBQ_QUEUE_NAME_MAX, "queue", "Queue");
}

/*
 * jobq_check_queue_names
 *	  A text[] of queue names (claims, worker registrations): one
 *	  dimension, min_n to max_n elements, none NULL, each a valid name.
 *	  Returns its elements in *items (*n of them).
 */
void
jobq_check_queue_names(ArrayType *queues, int min_n, int max_n, Datum **items, int *n)
{
	bool	   *nulls;

	if (ARR_NDIM(queues) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("queues must be a one-dimensional array")));
	deconstruct_array(queues, TEXTOID, -1, false, TYPALIGN_INT, items, &nulls, n);
	if (*n < min_n || *n > max_n)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("queues must name %d to %d queues, not %d", min_n, max_n, *n)));
	for (int i = 0; i < *n; i++)
	{
		text	   *name;

		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("queue name must not be null")));
		name = DatumGetTextPP((*items)[i]);
		jobq_check_queue_name(VARDATA_ANY(name), VARSIZE_ANY_EXHDR(name));
	}
}

/*
 * jobq_queue_arg
 *	  Fetch and validate the queue-name argument argno.  Returns the text
 *	  datum, ready to pass to SPI.
 */
text *
jobq_queue_arg(FunctionCallInfo fcinfo, int argno)
{
	text	   *name;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("queue name must not be null")));
	name = PG_GETARG_TEXT_PP(argno);
	jobq_check_queue_name(VARDATA_ANY(name), VARSIZE_ANY_EXHDR(name));
	return name;
}

/*
 * jobq_queue_not_found
 *	  The error every call that needs an existing queue raises for an
 *	  unknown one: 42704, with the same message and hint everywhere.
 */
void
jobq_queue_not_found(text *queue)
{
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("queue \"%s\" does not exist", text_to_cstring(queue)),
			 errhint("Create it with jobq_create_queue('%s').", text_to_cstring(queue))));
}

/*
 * jobq_worker_arg
 *	  The optional worker label of a claim: NULL is allowed, an empty or
 *	  oversized label is not.
 */
text *
jobq_worker_arg(FunctionCallInfo fcinfo, int argno)
{
	text	   *worker;
	int			len;

	if (PG_ARGISNULL(argno))
		return NULL;
	worker = PG_GETARG_TEXT_PP(argno);
	len = VARSIZE_ANY_EXHDR(worker);
	if (len == 0 || len > JOBQ_WORKER_NAME_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("worker must be 1 to %d bytes long", JOBQ_WORKER_NAME_MAX)));
	return worker;
}

/*
 * jobq_interval_usecs
 *	  The length of an interval in microseconds, counting a month as 30 days
 *	  and a day as 24 hours, as interval comparison does.  Saturates instead
 *	  of wrapping, so an absurd interval compares as absurd.
 */
int64
jobq_interval_usecs(const Interval *span)
{
	int128		total;

	total = (int128) span->time
		+ (int128) span->day * USECS_PER_DAY
		+ (int128) span->month * DAYS_PER_MONTH * USECS_PER_DAY;
	if (total > PG_INT64_MAX)
		return PG_INT64_MAX;
	if (total < PG_INT64_MIN)
		return PG_INT64_MIN;
	return (int64) total;
}

/*
 * interval_from_usecs
 *	  An interval of usecs microseconds: whole days in the day field when
 *	  keep_days, the rest as time.
 */
static Interval *
interval_from_usecs(int64 usecs, bool keep_days)
{
	Interval   *result = palloc0(sizeof(Interval));

	if (keep_days)
	{
		result->day = (int32) (usecs / USECS_PER_DAY);
		usecs -= (int64) result->day * USECS_PER_DAY;
	}
	result->time = usecs;
	return result;
}

/*
 * jobq_check_interval
 *	  Reject an interval whose length lies outside [min_usecs, max_usecs]
 *	  with 22023, and return it normalized: the length that was checked is
 *	  exactly the length that will be used.
 *
 *	  The length counts a month as 30 days (as interval comparison does).
 *	  Months never reach the result, so "1 month -29 days" is one day, not
 *	  a date-dependent 1 to 3 days, and a span that passed the check cannot
 *	  become longer, or negative, when added to a date.  Spans of at most a
 *	  day (leases, waits, backoff base) become pure time, so a daylight
 *	  saving change cannot stretch them either; longer ones keep whole days.
 */
Interval *
jobq_check_interval(const Interval *span, const char *argname,
					int64 min_usecs, int64 max_usecs)
{
	int64		usecs = jobq_interval_usecs(span);

	if (usecs < min_usecs || usecs > max_usecs)
	{
		bool		days = max_usecs > USECS_PER_DAY && max_usecs % USECS_PER_DAY == 0;

		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be between %s and %s", argname,
						DatumGetCString(DirectFunctionCall1(interval_out,
															IntervalPGetDatum(interval_from_usecs(min_usecs, days)))),
						DatumGetCString(DirectFunctionCall1(interval_out,
															IntervalPGetDatum(interval_from_usecs(max_usecs, days)))))));
	}
	return interval_from_usecs(usecs, max_usecs > USECS_PER_DAY);
}

/*
 * jobq_check_int_range
 *	  Reject an integer argument outside [min, max] with 22023.
 */
void
jobq_check_int_range(int64 value, const char *argname, int64 min, int64 max)
{
	if (value < min || value > max)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be between " INT64_FORMAT " and " INT64_FORMAT,
						argname, min, max)));
}

/*
 * jobq_check_payload
 *	  A payload or result over jobq.max_payload_size is 54000
 *	  (program_limit_exceeded), with the size in the message.  The size is
 *	  that of the stored jsonb value.
 */
void
jobq_check_payload(Jsonb *value, const char *argname)
{
	Size		size = VARSIZE(value);
	Size		limit = (Size) jobq_max_payload_kb * 1024;

	if (size > limit)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s is %zu bytes, over the limit of %zu bytes",
						argname, size, limit),
				 errhint("Store large data elsewhere and enqueue a reference, or raise jobq.max_payload_size.")));
}

/*
 * jobq_add_interval
 *	  t + span with timestamptz semantics (months and days in the session
 *	  time zone); overflow raises 22008 from timestamptz_pl_interval.
 */
TimestampTz
jobq_add_interval(TimestampTz t, const Interval *span)
{
	return DatumGetTimestampTz(DirectFunctionCall2(timestamptz_pl_interval,
												   TimestampTzGetDatum(t),
												   IntervalPGetDatum(span)));
}

/*
 * jobq_name_list
 *	  names[0..n-1] as an English list for a message: "a, b and c" (with
 *	  conjunction "and"), palloc'd.
 */
char *
jobq_name_list(const char *const *names, int n, const char *conjunction)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (int i = 0; i < n; i++)
	{
		if (i > 0)
			appendStringInfoString(&buf, i == n - 1 ? " " : ", ");
		if (i > 0 && i == n - 1)
			appendStringInfo(&buf, "%s ", conjunction);
		appendStringInfoString(&buf, names[i]);
	}
	return buf.data;
}

/*
 * jobq_now
 *	  The one clock jobq uses: the server's clock_timestamp(), read once per
 *	  call and passed to every statement as a parameter.  Never the client's
 *	  clock, never the transaction start (a claim in a long transaction must
 *	  not hand out leases that are already partly spent).
 */
TimestampTz
jobq_now(void)
{
	return GetCurrentTimestamp();
}
