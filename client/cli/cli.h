/*-------------------------------------------------------------------------
 *
 * cli.h
 *	  Declarations shared by the files of the jobq command-line tool.
 *
 * Exit codes of jobq (documented in client/README-worker.md):
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

#include "libpq-fe.h"

#define EXIT_OK			0
#define EXIT_FAILED		1
#define EXIT_USAGE		2
#define EXIT_CONNECTION 3

/* output.c */
extern void print_table(const PGresult *res);
extern void print_record(const PGresult *res);

#endif							/* JOBQ_CLI_H */
