/*-------------------------------------------------------------------------
 *
 * json.c
 *	  JSON text: a string literal, and a timestamp as PostgreSQL's own JSON
 *	  conversion writes it.  Used by jobq_rows_json, the worker's JSON log
 *	  and results, and the CLI's JSON output.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/common/json.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <string.h>

#include "jobq-common.h"

/*
 * jobq_buf_json_string: append s as a JSON string.  s is UTF-8 (the
 * connection's client_encoding), so only '"', '\' and control characters
 * need escaping.  NULL appends null.
 */
void
jobq_buf_json_string(JobqBuf *b, const char *s)
{
	const unsigned char *p;
	const char *run;

	if (s == NULL)
	{
		jobq_buf_append(b, "null", 4);
		return;
	}
	jobq_buf_append(b, "\"", 1);
	run = s;
	for (p = (const unsigned char *) s; *p; p++)
	{
		const char *esc = NULL;
		char		u[8];

		switch (*p)
		{
			case '"':
				esc = "\\\"";
				break;
			case '\\':
				esc = "\\\\";
				break;
			case '\n':
				esc = "\\n";
				break;
			case '\r':
				esc = "\\r";
				break;
			case '\t':
				esc = "\\t";
				break;
			default:
				if (*p < 0x20)
				{
					static const char hex[] = "0123456789abcdef";

					memcpy(u, "\\u00", 4);
					u[4] = hex[*p >> 4];
					u[5] = hex[*p & 15];
					u[6] = '\0';
					esc = u;
				}
		}
		if (esc != NULL)
		{
			/* the plain bytes before this one, then its escape */
			jobq_buf_append(b, run, (const char *) p - run);
			jobq_buf_puts(b, esc);
			run = (const char *) p + 1;
		}
	}
	jobq_buf_append(b, run, (const char *) p - run);
	jobq_buf_append(b, "\"", 1);
}

/*
 * jobq_buf_json_timestamp: a timestamp in ISO DateStyle
 * ("2026-01-02 03:04:05.6+00") as PostgreSQL's own JSON conversion writes
 * it ("2026-01-02T03:04:05.6+00:00"), so that jobq_rows_json and
 * row_to_json agree.  Other styles (and BC dates, infinity) go out as the
 * plain quoted text; NULL as null.
 */
void
jobq_buf_json_timestamp(JobqBuf *b, const char *ts)
{
	char		tmp[64];
	size_t		len = ts ? strlen(ts) : 0;
	size_t		sign;

	if (ts == NULL || len < 19 || len + 4 >= sizeof(tmp) || ts[10] != ' ' ||
		ts[4] != '-' || strchr(ts, 'B') != NULL)
	{
		jobq_buf_json_string(b, ts);
		return;
	}
	memcpy(tmp, ts, len + 1);
	tmp[10] = 'T';
	/* a zone offset of hours only ("+00", "-03") gets its minutes */
	sign = strcspn(tmp + 19, "+-") + 19;
	if (sign < len && len - sign == 3)
		memcpy(tmp + len, ":00", 4);
	jobq_buf_json_string(b, tmp);
}

/*
 * jobq_fputs_json: render s with render (jobq_buf_json_string or
 * jobq_buf_json_timestamp) onto f; exits when out of memory (programs
 * only).
 */
void
jobq_fputs_json(FILE *f, void (*render) (JobqBuf *, const char *), const char *s)
{
	JobqBuf		b;

	jobq_buf_init(&b);
	render(&b, s);
	jobq_xcheck(&b);
	fputs(b.data, f);
	jobq_buf_free(&b);
}
