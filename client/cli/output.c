/*-------------------------------------------------------------------------
 *
 * output.c
 *	  jobq CLI output: aligned tables for people, JSON for programs.
 *
 * Tables are aligned on display width (UTF-8 code points, not bytes),
 * numbers are right-aligned, NULL prints as an empty cell, and cells are
 * kept on one line (newlines and tabs become spaces, long text is cut
 * with "...") so that a table stays a table in a terminal or in grep.
 * JSON of whole result tables comes from libjobq (jobq_rows_json); the
 * helpers here write the few objects the CLI shapes itself, with the same
 * types PostgreSQL's json_agg gave them (numbers bare, float8 in its
 * shortest exact form).
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/cli/output.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define MAX_CELL 60				/* display width of a cell before "..." */

void
table_init(Table *t, int ncols, const char *const *names, const bool *numeric)
{
	memset(t, 0, sizeof(*t));
	t->ncols = ncols;
	t->names = names;
	t->numeric = numeric;
}

/* table_add: append a row of ncols cells (copied; NULL = empty) */
void
table_add(Table *t, const char *const *row)
{
	if (t->nrows == t->cap)
	{
		size_t		cap = t->cap ? t->cap * 2 : 16;
		char	  **c = realloc(t->cells, cap * t->ncols * sizeof(char *));

		if (c == NULL)
		{
			fprintf(stderr, "jobq: out of memory\n");
			exit(EXIT_FAILED);
		}
		t->cells = c;
		t->cap = cap;
	}
	for (int i = 0; i < t->ncols; i++)
		t->cells[t->nrows * t->ncols + i] = row[i] ? jobq_xstrdup(row[i]) : NULL;
	t->nrows++;
}

void
table_free(Table *t)
{
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	t->cells = NULL;
	t->nrows = t->cap = 0;
}

/* display width of a UTF-8 string: one column per code point */
static size_t
width(const char *s)
{
	size_t		w = 0;

	for (; *s; s++)
		if (((unsigned char) *s & 0xC0) != 0x80)
			w++;
	return w;
}

/*
 * cell_text
 *		One cell as printed: flattened to one line, cut at MAX_CELL code
 *		points when cut.  Returns a malloc'd string (caller frees).
 */
static char *
cell_text(const char *v, bool cut)
{
	size_t		n;
	char	   *out;
	size_t		w = 0,
				o = 0;

	v = v ? v : "";
	n = strlen(v);
	out = jobq_xmalloc(n + 4);
	for (size_t i = 0; i < n; i++)
	{
		unsigned char c = (unsigned char) v[i];

		if ((c & 0xC0) != 0x80)
		{
			if (cut && w == MAX_CELL - 3 && width(v + i) > 3)
			{
				memcpy(out + o, "...", 3);
				o += 3;
				break;
			}
			w++;
		}
		out[o++] = (c == '\n' || c == '\r' || c == '\t') ? ' ' : (char) c;
	}
	out[o] = '\0';
	return out;
}

/*
 * print_table
 *		Print t as an aligned table with a header and a dashed rule.
 */
void
print_table(const Table *t)
{
	int			ncols = t->ncols;
	size_t	   *w = jobq_xmalloc(sizeof(size_t) * (ncols ? ncols : 1));

	for (int c = 0; c < ncols; c++)
	{
		w[c] = width(t->names[c]);
		for (size_t r = 0; r < t->nrows; r++)
		{
			char	   *s = cell_text(t->cells[r * ncols + c], true);
			size_t		sw = width(s);

			if (sw > w[c])
				w[c] = sw;
			free(s);
		}
	}
	for (int c = 0; c < ncols; c++)
		printf("%s%-*s", c ? "  " : "",
			   (int) (w[c] + strlen(t->names[c]) - width(t->names[c])), t->names[c]);
	putchar('\n');
	for (int c = 0; c < ncols; c++)
	{
		printf("%s", c ? "  " : "");
		for (size_t i = 0; i < w[c]; i++)
			putchar('-');
	}
	putchar('\n');
	for (size_t r = 0; r < t->nrows; r++)
	{
		for (int c = 0; c < ncols; c++)
		{
			char	   *s = cell_text(t->cells[r * ncols + c], true);
			int			pad = (int) (w[c] - width(s));
			bool		last = c == ncols - 1;

			printf("%s", c ? "  " : "");
			if (t->numeric[c])
				printf("%*s%s", pad, "", s);
			else if (last)
				printf("%s", s);	/* no trailing blanks */
			else
				printf("%s%*s", s, pad, "");
			free(s);
		}
		putchar('\n');
	}
	free(w);
}

/*
 * print_record
 *		Print the first row of rows vertically, "name  value" per line: for
 *		one job, which has more columns than a terminal is wide.  Long values
 *		(payload, errors) are printed in full.
 */
void
print_record(const JobqRows *rows)
{
	int			ncols = jobq_rows_ncols(rows);
	size_t		kw = 0;

	for (int c = 0; c < ncols; c++)
		if (width(jobq_rows_colname(rows, c)) > kw)
			kw = width(jobq_rows_colname(rows, c));
	for (int c = 0; c < ncols; c++)
	{
		char	   *s = cell_text(jobq_rows_value(rows, 0, c), false);

		printf("%-*s  %s\n", (int) kw, jobq_rows_colname(rows, c), s);
		free(s);
	}
}

/*
 * print_json_string, print_json_time
 *		s as a JSON string (NULL: null); a timestamptz as PostgreSQL's JSON
 *		conversion writes it (see jobq_buf_json_timestamp).
 */
void
print_json_string(const char *s)
{
	jobq_fputs_json(stdout, jobq_buf_json_string, s);
}

void
print_json_time(const char *ts)
{
	jobq_fputs_json(stdout, jobq_buf_json_timestamp, ts);
}

/*
 * print_json_number
 *		v in the shortest form that reads back exactly, as PostgreSQL
 *		prints a float8 (86404.5, 2592000, 1e+100).
 */
void
print_json_number(double v)
{
	char		buf[64];

	if (v == floor(v) && fabs(v) < 1e15)
	{
		printf("%.0f", v);		/* PostgreSQL writes 3600, not 3.6e+03 */
		return;
	}
	for (int prec = 1; prec <= 17; prec++)
	{
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	fputs(buf, stdout);
}

/*
 * interval_seconds
 *		The length of an interval as the server prints it ("1 year 2 mons
 *		3 days 04:05:06.5", "-00:00:01") in seconds, as extract(epoch FROM
 *		...) computes it (a year of 365.25 days, a month of 30).  false when
 *		the text is in another style.
 */
bool
interval_seconds(const char *text, double *out)
{
	return jobq_parse_duration(text, JOBQ_DURATION_SIGNED, out) == 0;
}
