/*-------------------------------------------------------------------------
 *
 * output.c
 *	  jobq CLI output: aligned tables for people, JSON for programs.
 *
 * Tables are aligned on display width (UTF-8 code points, not bytes),
 * numbers are right-aligned, NULL prints as an empty cell, and cells are
 * kept on one line (newlines and tabs become spaces, long text is cut
 * with "...") so that a table stays a table in a terminal or in grep.
 * JSON comes from the server (json_agg / row_to_json), so its quoting and
 * types are PostgreSQL's, not ours.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/cli/output.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define MAX_CELL 60				/* display width of a cell before "..." */

/* type oids of numbers (pg_type.h is a server header) */
static bool
is_numeric_type(Oid t)
{
	return t == 20 || t == 21 || t == 23 || t == 26 || t == 700 || t == 701 ||
		t == 1700;
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
 *		points.  Returns a malloc'd string (caller frees).
 */
static char *
cell_text(const PGresult *res, int row, int col, bool cut)
{
	const char *v = PQgetisnull(res, row, col) ? "" : PQgetvalue(res, row, col);
	size_t		n = strlen(v);
	char	   *out = malloc(n + 4);
	size_t		w = 0,
				o = 0;

	if (out == NULL)
	{
		fprintf(stderr, "jobq: out of memory\n");
		exit(EXIT_FAILED);
	}
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
 *		Print res as an aligned table with a header and a dashed rule.
 */
void
print_table(const PGresult *res)
{
	int			ncols = PQnfields(res);
	int			nrows = PQntuples(res);
	size_t	   *w = calloc(ncols ? ncols : 1, sizeof(size_t));

	if (w == NULL)
	{
		fprintf(stderr, "jobq: out of memory\n");
		exit(EXIT_FAILED);
	}
	for (int c = 0; c < ncols; c++)
	{
		w[c] = width(PQfname(res, c));
		for (int r = 0; r < nrows; r++)
		{
			char	   *t = cell_text(res, r, c, true);
			size_t		tw = width(t);

			if (tw > w[c])
				w[c] = tw;
			free(t);
		}
	}
	for (int c = 0; c < ncols; c++)
		printf("%s%-*s", c ? "  " : "",
			   (int) (w[c] + strlen(PQfname(res, c)) - width(PQfname(res, c))),
			   PQfname(res, c));
	putchar('\n');
	for (int c = 0; c < ncols; c++)
	{
		printf("%s", c ? "  " : "");
		for (size_t i = 0; i < w[c]; i++)
			putchar('-');
	}
	putchar('\n');
	for (int r = 0; r < nrows; r++)
	{
		for (int c = 0; c < ncols; c++)
		{
			char	   *t = cell_text(res, r, c, true);
			int			pad = (int) (w[c] - width(t));
			bool		last = c == ncols - 1;

			printf("%s", c ? "  " : "");
			if (is_numeric_type(PQftype(res, c)))
				printf("%*s%s", pad, "", t);
			else if (last)
				printf("%s", t);	/* no trailing blanks */
			else
				printf("%s%*s", t, pad, "");
			free(t);
		}
		putchar('\n');
	}
	free(w);
}

/*
 * print_record
 *		Print the first row of res vertically, "name  value" per line: for
 *		one job, which has more columns than a terminal is wide.  Long values
 *		(payload, errors) are printed in full.
 */
void
print_record(const PGresult *res)
{
	int			ncols = PQnfields(res);
	size_t		kw = 0;

	for (int c = 0; c < ncols; c++)
		if (width(PQfname(res, c)) > kw)
			kw = width(PQfname(res, c));
	for (int c = 0; c < ncols; c++)
	{
		char	   *t = cell_text(res, 0, c, false);

		printf("%-*s  %s\n", (int) kw, PQfname(res, c), t);
		free(t);
	}
}
