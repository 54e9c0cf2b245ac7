/*-------------------------------------------------------------------------
 *
 * cron.c
 *	  Cron expressions: the parser, time zones by IANA name, the fire-time
 *	  computation, and the SQL function jobq_cron_next.
 *
 * Vocabulary.  An expression is a calendar (five fields, or an alias for
 * one) or an interval (@every).  A wall time is a reading of the clock on
 * the wall in the schedule's zone (a Timestamp without zone, in
 * microseconds); an instant is a TimestampTz.  A fire time is the instant
 * a schedule's tick is due.
 *
 * Calendar expressions match wall times at whole minutes; turning them
 * into instants follows classic cron (Vixie cron, cronie) across clock
 * changes.  An entry is "wildcard" when its minute or hour field begins
 * with '*' (cronie's MIN_STAR | HR_STAR), "fixed" otherwise.
 *  - fixed: a matching wall time w fires at the first instant whose wall
 *    reading is w or later: once at its first occurrence when the clock
 *    falls back, once at the end of the gap (the transition itself) when
 *    the clock springs over it;
 *  - wildcard: a matching wall time fires at every instant that reads it:
 *    twice in a repeated hour, never in a skipped one (the clock is read
 *    every minute, and a skipped minute is never read).
 * Both follow from the zone's real transitions, as pg_next_dst_boundary
 * reports them (so 30-minute shifts and 45-minute offsets need nothing
 * special).  The clock is cut into spans of constant UTC offset; within a
 * span, wall time and instants advance together.
 *
 * The calendar repeats every 400 years (146097 days, a whole number of
 * weeks), so an expression that matches no day in 400 years never
 * matches: the parser refuses it, and a search never looks further.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/cron.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"

#include <ctype.h>

#include "common/int.h"
#include "cron.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "utils/builtins.h"
#include "utils/datetime.h"

PG_FUNCTION_INFO_V1(jobq_cron_next_sql);

#define CRON_FIELDS			5
#define CRON_MINUTE			0
#define CRON_HOUR			1
#define CRON_DOM			2
#define CRON_MONTH			3
#define CRON_DOW			4

#define CRON_CYCLE_DAYS		146097	/* days in 400 Gregorian years */

/* 48 hours: more than any UTC offset (at most 26 hours apart) can shift */
#define CRON_LOOKBACK_USECS	(INT64CONST(48) * USECS_PER_HOUR)

typedef enum CronKind
{
	CRON_CALENDAR,
	CRON_EVERY
} CronKind;

struct JobqCron
{
	CronKind	kind;
	uint64		bits[CRON_FIELDS];	/* bit v: value v matches (dow: 0-6) */
	uint64		dow_last;		/* dow "nL": bit n = last weekday n */
	bool		dom_last;		/* dom "L": the last day of the month */
	bool		dom_star;		/* the field begins with '*' (the OR rule) */
	bool		dow_star;
	bool		wildcard;		/* minute or hour begins with '*' */
	int64		every_usec;		/* CRON_EVERY */
};

typedef struct CronFieldDef
{
	const char *name;
	int			min;
	int			max;			/* dow: 7, folded into 0 */
	const char *const *names;	/* names[i] is value min + i, or NULL */
} CronFieldDef;

static const char *const month_names[] = {
	"jan", "feb", "mar", "apr", "may", "jun",
	"jul", "aug", "sep", "oct", "nov", "dec", NULL
};
static const char *const dow_names[] = {
	"sun", "mon", "tue", "wed", "thu", "fri", "sat", NULL
};

static const CronFieldDef cron_fields[CRON_FIELDS] = {
	{"minute", 0, 59, NULL},
	{"hour", 0, 23, NULL},
	{"day of month", 1, 31, NULL},
	{"month", 1, 12, month_names},
	{"day of week", 0, 7, dow_names},
};

/* The aliases, as the five fields they stand for */
static const struct
{
	const char *alias;
	const char *fields;
}			cron_aliases[] = {
	{"@yearly", "0 0 1 1 *"},
	{"@annually", "0 0 1 1 *"},
	{"@monthly", "0 0 1 * *"},
	{"@weekly", "0 0 * * 0"},
	{"@daily", "0 0 * * *"},
	{"@midnight", "0 0 * * *"},
	{"@hourly", "0 * * * *"},
};

/* Parser state: the expression as written, for messages */
typedef struct CronParser
{
	const char *expr;			/* as the user wrote it */
	const char *text;			/* what is parsed (an alias's expansion) */
	const char *p;
	bool		alias;			/* positions are the alias's, not text's */
} CronParser;

static void cron_parse_fields(CronParser *ps, JobqCron *cron);
static void cron_parse_every(CronParser *ps, JobqCron *cron);
static bool cron_day_matches(const JobqCron *cron, int year, int month,
							 int day, int wday);
static bool cron_fires_ever(const JobqCron *cron);
static void cron_error(CronParser *ps, const char *pos, const char *hint,
					   const char *fmt,...) pg_attribute_printf(4, 5) pg_attribute_noreturn();

/*
 * cron_error
 *	  Raise 22023 for the expression at position pos (a pointer into the
 *	  parsed text) with a message of what is wrong there.
 */
static void
cron_error(CronParser *ps, const char *pos, const char *hint,
		   const char *fmt,...)
{
	char		what[256];
	va_list		args;
	int			position;

	va_start(args, fmt);
	vsnprintf(what, sizeof(what), fmt, args);
	va_end(args);

	/* positions count characters, as the user sees them */
	position = ps->alias ? 1 : pg_mbstrlen_with_len(ps->text, pos - ps->text) + 1;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid cron expression \"%s\" at position %d: %s",
					ps->expr, position, what),
			 hint ? errhint("%s", hint) : 0));
}

static inline bool
cron_space(char c)
{
	return c == ' ' || c == '\t';
}

/*
 * jobq_cron_parse
 *	  See cron.h.
 */
JobqCron *
jobq_cron_parse(const char *expr)
{
	CronParser	ps;
	JobqCron   *cron;
	size_t		len = strlen(expr);

	ps.expr = expr;
	ps.text = expr;
	ps.p = expr;
	ps.alias = false;

	if (len > JOBQ_CRON_EXPR_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cron expression is %zu bytes long, over the limit of %d bytes",
						len, JOBQ_CRON_EXPR_MAX)));

	cron = palloc0(sizeof(JobqCron));

	while (cron_space(*ps.p))
		ps.p++;
	if (*ps.p == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cron expression must not be empty")));

	if (*ps.p == '@')
	{
		const char *start = ps.p;
		const char *end = start;

		while (*end != '\0' && !cron_space(*end))
			end++;
		if (end - start == 6 && pg_strncasecmp(start, "@every", 6) == 0)
		{
			ps.p = end;
			cron_parse_every(&ps, cron);
			return cron;
		}
		for (int i = 0; i < lengthof(cron_aliases); i++)
		{
			if (strlen(cron_aliases[i].alias) == end - start &&
				pg_strncasecmp(start, cron_aliases[i].alias, end - start) == 0)
			{
				const char *rest = end;

				while (cron_space(*rest))
					rest++;
				if (*rest != '\0')
					cron_error(&ps, rest, NULL,
							   "expected the end of the expression after %s",
							   cron_aliases[i].alias);
				ps.text = cron_aliases[i].fields;
				ps.p = ps.text;
				ps.alias = true;
				cron_parse_fields(&ps, cron);
				return cron;
			}
		}
		cron_error(&ps, start,
				   "The aliases are @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly and @every <interval>.",
				   "unknown alias \"%.*s\"", pg_mbcliplen(start, end - start, 64), start);
	}

	cron_parse_fields(&ps, cron);
	return cron;
}

/*
 * cron_parse_value
 *	  A number or (for month and day of week) a name at ps->p, within the
 *	  field's bounds.  Advances ps->p.
 */
static int
cron_parse_value(CronParser *ps, const CronFieldDef *f)
{
	const char *start = ps->p;

	if (isdigit((unsigned char) *ps->p))
	{
		int			v = 0;

		while (isdigit((unsigned char) *ps->p))
		{
			if (v < 1000)
				v = v * 10 + (*ps->p - '0');
			ps->p++;
		}
		if (v < f->min || v > f->max)
			cron_error(ps, start, NULL, "%s must be between %d and %d, not %.*s",
					   f->name, f->min, f->max, (int) Min(ps->p - start, 16), start);
		return v;
	}
	if (f->names != NULL && isalpha((unsigned char) *ps->p))
	{
		const char *end = start;

		while (isalpha((unsigned char) *end))
			end++;
		/* "5L" and "friL" are the day of week's; stop before the L */
		if (end - start == 4 && (end[-1] == 'l' || end[-1] == 'L') && f->names == dow_names)
			end--;
		if (end - start == 3)
		{
			for (int i = 0; f->names[i] != NULL; i++)
			{
				if (pg_strncasecmp(start, f->names[i], 3) == 0)
				{
					ps->p = end;
					return f->min + i;
				}
			}
		}
		cron_error(ps, start, NULL, "expected a %s (%s), found \"%.*s\"", f->name,
				   f->names == month_names ? "1-12 or jan-dec" : "0-7 or sun-sat",
				   (int) Min(end - start, 16), start);
	}
	if (*ps->p == '\0' || cron_space(*ps->p))
		cron_error(ps, start, NULL, "expected a value for %s, found the end of the field",
				   f->name);
	cron_error(ps, start, NULL, "expected a value for %s, found \"%.*s\"", f->name,
			   pg_mblen(ps->p), ps->p);
}

/*
 * cron_parse_field
 *	  One field: a comma-separated list of items, each "*", a value, a
 *	  range "a-b", any of those with a step "/n" ("a/n" is "a-max/n"),
 *	  "L" in day of month, "nL" (last weekday n of the month) in day of
 *	  week.
 */
static void
cron_parse_field(CronParser *ps, JobqCron *cron, int field)
{
	const CronFieldDef *f = &cron_fields[field];
	uint64		bits = 0;

	if (field == CRON_DOM && *ps->p == '*')
		cron->dom_star = true;
	if (field == CRON_DOW && *ps->p == '*')
		cron->dow_star = true;
	if ((field == CRON_MINUTE || field == CRON_HOUR) && *ps->p == '*')
		cron->wildcard = true;

	for (;;)
	{
		const char *item = ps->p;
		int			lo,
					hi,
					step = 1;
		bool		ranged = false;

		if (*ps->p == '*')
		{
			lo = f->min;
			hi = f->max;
			ranged = true;
			ps->p++;
		}
		else if (field == CRON_DOM && (*ps->p == 'L' || *ps->p == 'l' || *ps->p == '$') &&
				 (ps->p[1] == ',' || ps->p[1] == '\0' || cron_space(ps->p[1])))
		{
			cron->dom_last = true;
			ps->p++;
			goto next;
		}
		else if (field == CRON_DOM && (*ps->p == 'L' || *ps->p == 'l'))
			cron_error(ps, item,
					   "Day of month accepts L (or $) alone for the last day of the month; LW, L-n and W are not supported.",
					   "expected L alone (the last day of the month)");
		else
		{
			lo = cron_parse_value(ps, f);
			hi = lo;
			if (field == CRON_DOW && (*ps->p == 'L' || *ps->p == 'l'))
			{
				/* "5L": the last Friday of the month */
				ps->p++;
				if (*ps->p == '/' || *ps->p == '-')
					cron_error(ps, ps->p, NULL,
							   "expected \",\" or the end of the field after a last weekday");
				cron->dow_last |= UINT64CONST(1) << (lo % 7);
				goto next;
			}
			if (*ps->p == '-')
			{
				const char *hipos;

				ps->p++;
				hipos = ps->p;
				hi = cron_parse_value(ps, f);
				if (hi < lo)
					cron_error(ps, hipos,
							   "Ranges do not wrap around; write two, as in 22-23,0-2.",
							   "%s range %d-%d ends before it starts", f->name, lo, hi);
				ranged = true;
			}
		}
		if (*ps->p == '/')
		{
			const char *steppos = ++ps->p;
			int			span = (field == CRON_DOW ? 7 : f->max - f->min + 1);

			if (!isdigit((unsigned char) *ps->p))
				cron_error(ps, steppos, NULL, "expected a step (a number) after \"/\"");
			step = 0;
			while (isdigit((unsigned char) *ps->p))
			{
				if (step < 1000)
					step = step * 10 + (*ps->p - '0');
				ps->p++;
			}
			if (step < 1 || step > span)
				cron_error(ps, steppos, NULL, "%s step must be between 1 and %d, not %d",
						   f->name, span, step);
			if (!ranged)
				hi = f->max;	/* "a/n": from a to the end */
		}
		for (int v = lo; v <= hi; v += step)
			bits |= UINT64CONST(1) << v;
next:
		if (*ps->p == ',')
		{
			ps->p++;
			continue;
		}
		if (*ps->p == '\0' || cron_space(*ps->p))
			break;
		cron_error(ps, ps->p, NULL,
				   "expected \",\", \"-\", \"/\" or a space in the %s field, found \"%.*s\"",
				   f->name, pg_mblen(ps->p), ps->p);
	}

	if (field == CRON_DOW && (bits & (UINT64CONST(1) << 7)))
		bits = (bits | 1) & ~(UINT64CONST(1) << 7);	/* 7 is Sunday too */
	cron->bits[field] = bits;
}

/*
 * cron_parse_fields
 *	  The five fields, then the check that the expression ever fires.
 */
static void
cron_parse_fields(CronParser *ps, JobqCron *cron)
{
	cron->kind = CRON_CALENDAR;
	for (int field = 0; field < CRON_FIELDS; field++)
	{
		while (cron_space(*ps->p))
			ps->p++;
		if (*ps->p == '\0')
			cron_error(ps, ps->p,
					   "A cron expression has five fields: minute, hour, day of month, month, day of week.",
					   "expected the %s field, found the end of the expression",
					   cron_fields[field].name);
		cron_parse_field(ps, cron, field);
	}
	while (cron_space(*ps->p))
		ps->p++;
	if (*ps->p != '\0')
		cron_error(ps, ps->p,
				   "There is no seconds or year field; for intervals under a minute, use @every (as in @every 10s).",
				   "expected the end of the expression after the day of week field");

	if (!cron_fires_ever(cron))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cron expression \"%s\" never fires", ps->expr),
				 errdetail("No day matches its day of month, month and day of week fields."),
				 errhint("When both day of month and day of week are restricted, a day matches either; when one begins with *, a day must match both.")));
}

/*
 * cron_parse_every
 *	  "@every <interval>": one or more <number><unit>, spaces allowed
 *	  around units ("90s", "1h30m", "2 hours 15 minutes").  Units: s, sec,
 *	  second; m, min, minute; h, hr, hour; d, day; w, week (plurals too).
 *	  Months and years have no fixed length and are refused.
 */
static void
cron_parse_every(CronParser *ps, JobqCron *cron)
{
	static const struct
	{
		const char *name;
		int64		secs;
	}			units[] = {
		{"s", 1}, {"sec", 1}, {"secs", 1}, {"second", 1}, {"seconds", 1},
		{"m", 60}, {"min", 60}, {"mins", 60}, {"minute", 60}, {"minutes", 60},
		{"h", 3600}, {"hr", 3600}, {"hrs", 3600}, {"hour", 3600}, {"hours", 3600},
		{"d", 86400}, {"day", 86400}, {"days", 86400},
		{"w", 604800}, {"week", 604800}, {"weeks", 604800},
	};
	const char *hint = "Write the interval as numbers with units s, m, h, d or w, as in @every 10s or @every 1h30m.";
	int64		total = 0;
	bool		any = false;

	cron->kind = CRON_EVERY;
	for (;;)
	{
		const char *num;
		const char *unit;
		int64		n = 0;
		int			i;

		while (cron_space(*ps->p))
			ps->p++;
		if (*ps->p == '\0')
			break;
		num = ps->p;
		if (!isdigit((unsigned char) *ps->p))
			cron_error(ps, num, hint, "expected a number in the interval of @every, found \"%.*s\"",
					   pg_mblen(ps->p), ps->p);
		while (isdigit((unsigned char) *ps->p))
		{
			if (n <= JOBQ_CRON_EVERY_MAX_S)
				n = n * 10 + (*ps->p - '0');
			ps->p++;
		}
		while (cron_space(*ps->p))
			ps->p++;
		unit = ps->p;
		while (isalpha((unsigned char) *ps->p))
			ps->p++;
		if (ps->p == unit)
			cron_error(ps, unit, hint, "expected a unit after %.*s in the interval of @every",
					   (int) Min(unit - num, 16), num);
		for (i = 0; i < lengthof(units); i++)
			if (strlen(units[i].name) == ps->p - unit &&
				pg_strncasecmp(unit, units[i].name, ps->p - unit) == 0)
				break;
		if (i == lengthof(units))
			cron_error(ps, unit, hint, "unknown unit \"%.*s\" in the interval of @every",
					   (int) Min(ps->p - unit, 16), unit);
		if (total <= JOBQ_CRON_EVERY_MAX_S)
			total += Min(n, (int64) JOBQ_CRON_EVERY_MAX_S + 1) * units[i].secs;
		any = true;
	}
	if (!any)
		cron_error(ps, ps->p, hint, "expected an interval after @every");
	if (total < JOBQ_CRON_EVERY_MIN_S || total > JOBQ_CRON_EVERY_MAX_S)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("interval of cron expression \"%s\" must be between %d second and %d days",
						ps->expr, JOBQ_CRON_EVERY_MIN_S, JOBQ_CRON_EVERY_MAX_S / 86400)));
	cron->every_usec = total * USECS_PER_SEC;
}

/*
 * cron_day_matches
 *	  Whether a date matches the day-of-month, month and day-of-week
 *	  fields.  When both day fields are restricted (neither begins with
 *	  '*'), a day matches if either does: classic cron's rule.
 */
static bool
cron_day_matches(const JobqCron *cron, int year, int month, int day, int wday)
{
	int			mdays = day_tab[isleap(year)][month - 1];
	bool		dom,
				dow;

	if ((cron->bits[CRON_MONTH] & (UINT64CONST(1) << month)) == 0)
		return false;
	dom = (cron->bits[CRON_DOM] & (UINT64CONST(1) << day)) != 0 ||
		(cron->dom_last && day == mdays);
	dow = (cron->bits[CRON_DOW] & (UINT64CONST(1) << wday)) != 0 ||
		((cron->dow_last & (UINT64CONST(1) << wday)) != 0 && day + 7 > mdays);
	if (cron->dom_star || cron->dow_star)
		return dom && dow;
	return dom || dow;
}

/*
 * cron_fires_ever
 *	  Whether any day of a 400-year cycle matches (the calendar, weekdays
 *	  included, repeats after it; minutes and hours always have a value).
 */
static bool
cron_fires_ever(const JobqCron *cron)
{
	int			j0 = date2j(2000, 1, 1);

	for (int j = j0; j < j0 + CRON_CYCLE_DAYS; j++)
	{
		int			y,
					m,
					d;

		j2date(j, &y, &m, &d);
		if ((cron->bits[CRON_MONTH] & (UINT64CONST(1) << m)) == 0)
		{
			/* skip the rest of the month */
			j += day_tab[isleap(y)][m - 1] - d;
			continue;
		}
		if (cron_day_matches(cron, y, m, d, j2day(j)))
			return true;
	}
	return false;
}

/* the lowest set bit at or above from, or -1 */
static inline int
cron_next_bit(uint64 bits, int from)
{
	uint64		rest = from >= 64 ? 0 : bits & (~UINT64CONST(0) << from);

	return rest == 0 ? -1 : pg_rightmost_one_pos64(rest);
}

static inline int64
floor_div(int64 a, int64 b)
{
	int64		q = a / b;

	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/*
 * cron_next_wall
 *	  The first matching wall time at a whole minute in [lo, hi) (hi may be
 *	  DT_NOEND), looking at most one 400-year cycle past lo.  false when
 *	  there is none.
 */
static bool
cron_next_wall(const JobqCron *cron, Timestamp lo, Timestamp hi, Timestamp *out)
{
	int64		minutes = floor_div(lo, USECS_PER_MINUTE);
	int64		jd;
	int64		jlimit;
	int			tod,
				h,
				mi;
	int			y,
				m,
				d;

	if (minutes * USECS_PER_MINUTE < lo)
		minutes++;
	jd = floor_div(minutes, MINS_PER_HOUR * HOURS_PER_DAY);
	tod = (int) (minutes - jd * MINS_PER_HOUR * HOURS_PER_DAY);
	h = tod / MINS_PER_HOUR;
	mi = tod % MINS_PER_HOUR;
	jd += POSTGRES_EPOCH_JDATE;
	/* (stop at the end of the timestamp range, before w could overflow) */
	jlimit = Min(jd + CRON_CYCLE_DAYS + 1, (int64) TIMESTAMP_END_JULIAN);
	if (jd < 0 || jd > jlimit)
		return false;
	j2date((int) jd, &y, &m, &d);

	for (;;)
	{
		Timestamp	w;
		int			nh,
					nmi;

		if (jd > jlimit)
			return false;
		w = ((jd - POSTGRES_EPOCH_JDATE) * HOURS_PER_DAY + h) * USECS_PER_HOUR +
			mi * USECS_PER_MINUTE;
		if (hi != DT_NOEND && w >= hi)
			return false;
		if ((cron->bits[CRON_MONTH] & (UINT64CONST(1) << m)) == 0)
		{
			/* the first of the next month */
			jd += day_tab[isleap(y)][m - 1] - d + 1;
			j2date((int) jd, &y, &m, &d);
			h = mi = 0;
			continue;
		}
		if (!cron_day_matches(cron, y, m, d, j2day((int) jd)))
		{
			jd++;
			j2date((int) jd, &y, &m, &d);
			h = mi = 0;
			continue;
		}
		nh = cron_next_bit(cron->bits[CRON_HOUR], h);
		if (nh != h)
		{
			if (nh < 0)
			{
				jd++;
				j2date((int) jd, &y, &m, &d);
				h = mi = 0;
			}
			else
			{
				h = nh;
				mi = 0;
			}
			continue;
		}
		nmi = cron_next_bit(cron->bits[CRON_MINUTE], mi);
		if (nmi != mi)
		{
			if (nmi < 0)
			{
				mi = 0;
				if (++h == HOURS_PER_DAY)
				{
					jd++;
					j2date((int) jd, &y, &m, &d);
					h = 0;
				}
			}
			else
				mi = nmi;
			continue;
		}
		if (!IS_VALID_TIMESTAMP(w))
			return false;
		*out = w;
		return true;
	}
}

/*
 * A stretch of time with one UTC offset: [start, end), end DT_NOEND when
 * the zone changes no more.
 */
typedef struct ZoneSpan
{
	TimestampTz start;
	TimestampTz end;
	int64		off;			/* microseconds east of UTC */
} ZoneSpan;

#define UNIX_EPOCH_SECS	((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY)

/*
 * zone_span
 *	  The span of tz that contains instant x, cut to begin at x.
 */
static void
zone_span(pg_tz *tz, TimestampTz x, ZoneSpan *span)
{
	pg_time_t	t = (pg_time_t) floor_div(x, USECS_PER_SEC) + UNIX_EPOCH_SECS;
	long int	before_off,
				after_off;
	int			before_dst,
				after_dst;
	pg_time_t	boundary;
	int			r;

	r = pg_next_dst_boundary(&t, &before_off, &before_dst, &boundary,
							 &after_off, &after_dst, tz);
	if (r == 1 && boundary <= t)
	{
		/* a transition at t itself: t is in the span it starts */
		pg_time_t	t1 = t + 1;

		r = pg_next_dst_boundary(&t1, &before_off, &before_dst, &boundary,
								 &after_off, &after_dst, tz);
		if (r == 1 && boundary <= t1)
			r = 0;
	}
	span->start = x;
	span->off = (int64) before_off * USECS_PER_SEC;
	span->end = DT_NOEND;
	if (r == 1)
	{
		int64		secs = boundary - UNIX_EPOCH_SECS;

		if (secs < (END_TIMESTAMP / USECS_PER_SEC))
			span->end = secs * USECS_PER_SEC;
	}
}

/*
 * wall_sup
 *	  The latest wall reading of any instant up to and including `after`
 *	  (later than the reading at `after` itself only shortly after the
 *	  clock fell back).  Fixed entries fire only for wall times past it.
 */
static Timestamp
wall_sup(pg_tz *tz, TimestampTz after)
{
	TimestampTz x = after - CRON_LOOKBACK_USECS;
	Timestamp	sup = DT_NOBEGIN;

	if (x < MIN_TIMESTAMP)
		x = MIN_TIMESTAMP;
	for (;;)
	{
		ZoneSpan	span;
		TimestampTz last;

		zone_span(tz, x, &span);
		last = (span.end == DT_NOEND || span.end > after) ? after : span.end - 1;
		sup = Max(sup, last + span.off);
		if (span.end == DT_NOEND || span.end > after)
			return sup;
		x = span.end;
	}
}

/*
 * cron_next_calendar
 *	  The first fire time after `after` of a calendar expression in tz.
 *	  Walks the zone's spans forward from after: in each, the fire times
 *	  are the matching wall times of the span's wall range (wildcard
 *	  entries), or the matching wall times past every reading so far, the
 *	  ones a gap skipped firing at the span's start (fixed entries).
 */
static TimestampTz
cron_next_calendar(const JobqCron *cron, pg_tz *tz, TimestampTz after)
{
	TimestampTz x = after + 1;
	Timestamp	seen = cron->wildcard ? DT_NOBEGIN : wall_sup(tz, after);
	Timestamp	limit = DT_NOEND;

	for (;;)
	{
		ZoneSpan	span;
		Timestamp	lo,
					hi,
					w;

		zone_span(tz, x, &span);
		lo = cron->wildcard ? span.start + span.off : seen + 1;
		hi = span.end == DT_NOEND ? DT_NOEND : span.end + span.off;
		if (limit == DT_NOEND)
			limit = lo > END_TIMESTAMP - (int64) (CRON_CYCLE_DAYS + 2) * USECS_PER_DAY ?
				END_TIMESTAMP : lo + (int64) (CRON_CYCLE_DAYS + 2) * USECS_PER_DAY;
		if (lo > limit)
			return DT_NOEND;
		if (cron_next_wall(cron, lo, hi, &w))
		{
			TimestampTz t = w - span.off;

			/* a fixed wall time in the gap before this span fires at its start */
			if (t < span.start)
				t = span.start;
			return IS_VALID_TIMESTAMP(t) ? t : DT_NOEND;
		}
		if (span.end == DT_NOEND)
			return DT_NOEND;
		if (!cron->wildcard)
			seen = Max(seen, hi - 1);
		x = span.end;
	}
}

/*
 * jobq_cron_next_anchored
 *	  See cron.h.
 */
TimestampTz
jobq_cron_next_anchored(const JobqCron *cron, pg_tz *tz, TimestampTz anchor,
						TimestampTz after)
{
	if (!IS_VALID_TIMESTAMP(after) || after >= END_TIMESTAMP - 1)
		return DT_NOEND;
	if (tz == NULL)
		tz = jobq_cron_zone(NULL);

	if (cron->kind == CRON_EVERY)
	{
		int64		k = floor_div(after - anchor, cron->every_usec) + 1;
		TimestampTz t;

		if (pg_mul_s64_overflow(k, cron->every_usec, &t) ||
			pg_add_s64_overflow(t, anchor, &t) || !IS_VALID_TIMESTAMP(t))
			return DT_NOEND;
		return t;
	}
	return cron_next_calendar(cron, tz, after);
}

/*
 * jobq_cron_next
 *	  See cron.h: @every anchored at the Unix epoch.
 */
TimestampTz
jobq_cron_next(const JobqCron *cron, pg_tz *tz, TimestampTz after)
{
	return jobq_cron_next_anchored(cron, tz,
								   -UNIX_EPOCH_SECS * USECS_PER_SEC, after);
}

/*
 * jobq_cron_every_usec
 *	  See cron.h.
 */
int64
jobq_cron_every_usec(const JobqCron *cron)
{
	return cron->kind == CRON_EVERY ? cron->every_usec : 0;
}

/*
 * jobq_cron_zone
 *	  See cron.h.  The name must be UTC or look like Area/Location (letters,
 *	  digits, "_", "+", "-" in parts joined by "/"): that form is never a
 *	  POSIX TZ string, which pg_tzset would otherwise accept ("UTC+3",
 *	  "XYZ5"), nor an abbreviation.  posix/ and right/ are the system tz
 *	  directory's copies (right/ counts leap seconds), not names.
 */
pg_tz *
jobq_cron_zone(const char *name)
{
	const char *hint = "Abbreviations (EST, CDT) and offsets (UTC+3, EST5EDT) do not follow daylight saving time; write an IANA zone name such as America/New_York or Europe/Berlin, or UTC.";
	pg_tz	   *tz;
	bool		slash = false;
	bool		part_start = true;
	size_t		len;

	if (name == NULL)
		name = "UTC";
	len = strlen(name);
	if (len == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("time zone name must not be empty"),
				 errhint("%s", hint)));

	if (pg_strcasecmp(name, "UTC") != 0)
	{
		for (const char *c = name; *c != '\0'; c++)
		{
			if (*c == '/')
			{
				if (part_start)
					break;		/* empty part: refused below */
				slash = true;
				part_start = true;
				continue;
			}
			if (!(isalnum((unsigned char) *c) || *c == '_' || *c == '+' ||
				  *c == '-') || (part_start && c == name && !isalpha((unsigned char) *c)))
			{
				slash = false;
				break;
			}
			part_start = false;
		}
		if (!slash || part_start || len > TZ_STRLEN_MAX ||
			pg_strncasecmp(name, "posix/", 6) == 0 ||
			pg_strncasecmp(name, "right/", 6) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("time zone \"%s\" is not an IANA zone name", name),
					 errhint("%s", hint)));
	}

	tz = pg_tzset(name);
	if (tz == NULL || !pg_tz_acceptable(tz))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown time zone \"%s\"", name),
				 errhint("The zone names are those of pg_timezone_names, such as America/New_York.")));
	return tz;
}

/*
 * jobq_cron_next(expr text, tz text DEFAULT 'UTC', after timestamptz
 *				  DEFAULT now(), n integer DEFAULT 1, anchor timestamptz
 *				  DEFAULT NULL) -> SETOF timestamptz
 *	  The next n fire times of expr in zone tz strictly after `after`, in
 *	  order; fewer when the timestamp range ends first.  anchor: the phase
 *	  of an @every expression (NULL: the Unix epoch).  A NULL tz is UTC;
 *	  NULL expr, after or n are 22004; n outside 1..JOBQ_CRON_NEXT_MAX and
 *	  an infinite after are 22023.  Pure: the same arguments give the same
 *	  rows, as long as the tz data stays the same (hence STABLE).
 */
Datum
jobq_cron_next_sql(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	Tuplestorestate *store;
	JobqCron   *cron;
	pg_tz	   *tz;
	TimestampTz after;
	TimestampTz anchor;
	int32		n;

	jobq_require(fcinfo, 0, "expr");
	jobq_require(fcinfo, 2, "after");
	jobq_require(fcinfo, 3, "n");
	n = PG_GETARG_INT32(3);
	if (n < 1 || n > JOBQ_CRON_NEXT_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("n must be between 1 and %d, not %d", JOBQ_CRON_NEXT_MAX, n)));
	after = PG_GETARG_TIMESTAMPTZ(2);
	if (TIMESTAMP_NOT_FINITE(after))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("after must be a finite timestamp")));
	anchor = PG_ARGISNULL(4) ? -UNIX_EPOCH_SECS * USECS_PER_SEC : PG_GETARG_TIMESTAMPTZ(4);
	if (TIMESTAMP_NOT_FINITE(anchor))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("anchor must be a finite timestamp")));

	cron = jobq_cron_parse(text_to_cstring(PG_GETARG_TEXT_PP(0)));
	tz = jobq_cron_zone(PG_ARGISNULL(1) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(1)));

	store = jobq_srf_begin(fcinfo, &desc);
	for (int i = 0; i < n; i++)
	{
		Datum		value;
		bool		isnull = false;

		after = jobq_cron_next_anchored(cron, tz, anchor, after);
		if (after == DT_NOEND)
			break;
		value = TimestampTzGetDatum(after);
		tuplestore_putvalues(store, desc, &value, &isnull);
		CHECK_FOR_INTERRUPTS();
	}
	return (Datum) 0;
}
