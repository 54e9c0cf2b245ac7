/*-------------------------------------------------------------------------
 *
 * duration.c
 *	  Durations: the one syntax jobq-worker and jobq take on their command
 *	  lines (JOBQ_DURATION_HELP), which also reads the intervals PostgreSQL
 *	  prints, a short form for messages, and the interval literal libjobq
 *	  sends.
 *
 * A duration is one or more terms, spaces between them optional:
 *	90			a bare number is seconds (only as the whole duration)
 *	2.5s 500ms	a number and a unit: ms, s, min (or m), h, d, w, and the
 *				long names (seconds, minutes, hours, days, weeks), plus
 *				mon/month (30 days) and year (365.25 days) as PostgreSQL
 *				counts them in extract(epoch ...)
 *	01:30:00	a clock, HH:MM[:SS]
 * So "5min", "1h30m", "2 days" and "1 day 04:05:06.5" all read.  Without
 * JOBQ_DURATION_SIGNED no sign is accepted anywhere.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/common/duration.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobq-common.h"

static const struct
{
	const char *unit;
	double		secs;
}			units[] = {
	{"ms", 0.001}, {"msec", 0.001}, {"msecs", 0.001},
	{"millisecond", 0.001}, {"milliseconds", 0.001},
	{"s", 1}, {"sec", 1}, {"secs", 1}, {"second", 1}, {"seconds", 1},
	{"m", 60}, {"min", 60}, {"mins", 60}, {"minute", 60}, {"minutes", 60},
	{"h", 3600}, {"hr", 3600}, {"hrs", 3600}, {"hour", 3600}, {"hours", 3600},
	{"d", 86400}, {"day", 86400}, {"days", 86400},
	{"w", 604800}, {"week", 604800}, {"weeks", 604800},
	{"mon", 30 * 86400.0}, {"mons", 30 * 86400.0},
	{"month", 30 * 86400.0}, {"months", 30 * 86400.0},
	{"year", 365.25 * 86400}, {"years", 365.25 * 86400},
};

/* an unsigned decimal number at *p (digits, optional fraction), or -1 */
static double
number(const char **p)
{
	const char *s = *p;
	char	   *end;
	double		v;

	if (!((*s >= '0' && *s <= '9') || (*s == '.' && s[1] >= '0' && s[1] <= '9')))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	/* strtod also reads hex, exponents, inf: only digits and one dot here */
	if (errno != 0 || !isfinite(v) || strspn(s, "0123456789.") != (size_t) (end - s))
		return -1;
	*p = end;
	return v;
}

/*
 * jobq_parse_duration: see jobq-common.h and the top of this file.
 */
int
jobq_parse_duration(const char *s, int flags, double *secs)
{
	const char *p = s;
	double		total = 0;
	int			terms = 0;
	int			bare = 0;

	if (s == NULL)
		return -1;
	for (;;)
	{
		double		sign = 1;
		double		n;
		size_t		ulen;
		size_t		i;

		while (*p == ' ')
			p++;
		if (*p == '\0')
			break;
		if ((flags & JOBQ_DURATION_SIGNED) && (*p == '-' || *p == '+'))
			sign = *p++ == '-' ? -1 : 1;
		if ((n = number(&p)) < 0)
			return -1;
		if (*p == ':')
		{
			/* HH:MM[:SS] */
			double		m,
						sec = 0;

			p++;
			if ((m = number(&p)) < 0)
				return -1;
			if (*p == ':')
			{
				p++;
				if ((sec = number(&p)) < 0)
					return -1;
			}
			total += sign * (n * 3600 + m * 60 + sec);
			terms++;
			continue;
		}
		while (*p == ' ')
			p++;
		ulen = strcspn(p, " +-.:0123456789");
		if (ulen == 0)
		{
			total += sign * n;	/* a bare number: seconds */
			bare = 1;
			terms++;
			continue;
		}
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (strlen(units[i].unit) == ulen && strncmp(p, units[i].unit, ulen) == 0)
				break;
		if (i == sizeof(units) / sizeof(units[0]))
			return -1;
		total += sign * n * units[i].secs;
		p += ulen;
		terms++;
	}
	if (terms == 0 || (bare && terms > 1) || !isfinite(total))
		return -1;
	*secs = total;
	return 0;
}

/*
 * jobq_format_duration: secs in the short form of the syntax, for
 * messages: "1d", "1h30min", "45s", "2.5s", "10ms", "0s".
 */
void
jobq_format_duration(char *buf, size_t size, double secs)
{
	static const struct
	{
		const char *unit;
		long long	secs;
	}			parts[] = {
		{"d", 86400}, {"h", 3600}, {"min", 60}
	};
	char	   *o = buf;
	size_t		left = size;
	long long	whole;
	double		frac;
	int			n;

	if (size == 0)
		return;
	buf[0] = '\0';
	if (secs < 0)
	{
		n = snprintf(o, left, "-");
		o += n;
		left -= n;
		secs = -secs;
	}
	if (secs < 1 && secs > 0)
	{
		snprintf(o, left, "%gms", secs * 1000);
		return;
	}
	whole = (long long) secs;
	frac = secs - (double) whole;
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
	{
		if (whole >= parts[i].secs)
		{
			n = snprintf(o, left, "%lld%s", whole / parts[i].secs, parts[i].unit);
			if (n < 0 || (size_t) n >= left)
				return;
			o += n;
			left -= n;
			whole %= parts[i].secs;
		}
	}
	if (whole > 0 || frac > 0 || o == buf)
		snprintf(o, left, "%gs", (double) whole + frac);
}

/* jobq_fmt_interval: the interval literal libjobq sends for whole seconds */
void
jobq_fmt_interval(char *buf, size_t size, int seconds)
{
	snprintf(buf, size, "%d seconds", seconds);
}
