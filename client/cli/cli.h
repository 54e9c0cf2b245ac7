/*-------------------------------------------------------------------------
 *
 * cli.h
 *	  Declarations shared by the files of the jobq command-line tool.
 *
 * Exit codes of jobq (documented in doc/jobq.md, "EXIT STATUS"):
 *	0	the command did what was asked
 *	1	the operation failed: a server error, a job or queue not found, a
 *		job not in a state that allows the operation
 *	2	bad usage
 *	3	could not connect, or lost the connection
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/cli/cli.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JOBQ_CLI_H
#define JOBQ_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "jobq-client.h"
#include "jobq-common.h"

#define EXIT_OK			0
#define EXIT_FAILED		1
#define EXIT_USAGE		2
#define EXIT_CONNECTION 3

/*
 * A table as printed: column names, which columns are numbers (printed
 * right-aligned), and rows of cells (NULL prints as an empty cell).  The
 * cells are the CLI's own copies, so a command can reshape what libjobq
 * returned (yes/no for booleans, truncated times) before printing.
 */
typedef struct Table
{
	int			ncols;
	const char *const *names;
	const bool *numeric;
	size_t		nrows;
	size_t		cap;
	char	  **cells;			/* nrows * ncols */
} Table;

/* output.c */
extern void table_init(Table *t, int ncols, const char *const *names,
					   const bool *numeric);
extern void table_add(Table *t, const char *const *row);
extern void table_free(Table *t);
extern void print_table(const Table *t);
extern void print_record(const JobqRows *rows);
extern void print_json_string(const char *s);
extern void print_json_number(double v);
extern void print_json_time(const char *ts);
extern bool interval_seconds(const char *text, double *out);

#endif							/* JOBQ_CLI_H */
