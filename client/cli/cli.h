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
 *	4, 5, 6, 7	await, enqueue --wait: the job is dead, was cancelled, is
 *		not finished when the wait ended, is in no table
 *		(purged_or_never); 0 when it completed
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

#include <libpq-fe.h>

#include "jobq-client.h"
#include "jobq-common.h"

#define CLI_NORETURN __attribute__((noreturn))

#define EXIT_OK			0
#define EXIT_FAILED		1
#define EXIT_USAGE		2
#define EXIT_CONNECTION 3
#define EXIT_DEAD		4
#define EXIT_CANCELLED	5
#define EXIT_TIMED_OUT	6
#define EXIT_PURGED		7

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

/*
 * main.c, for the bulk, health and audit commands: rows as JSON, a result
 * that must be there (else the error ends the program), an integer option
 * by its long name checked like the others (exit 2), and the error of the
 * last libjobq call reported without ending the program (returns its exit
 * code, 1 or 3).
 */
extern void cli_print_rows_json(const JobqRows *rows);
extern JobqRows *cli_need(JobqRows *rows);
extern int	cli_int_option(const char *name, int dflt, long long lo, long long hi);
extern int	cli_report_error(void);

/* health.c, audit.c, bulk.c: the commands */
extern int	cmd_health(void);
extern int	cmd_audit(void);
extern int	cmd_bulk_where(const char *command, JobqBulkAction action);

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

/*
 * main.c: what the commands in files of their own use.  cli_failed and
 * cli_usage_error end the program (1 or 3, and 2).
 */
extern const char *cli_progname(void);
extern JobqConn *cli_connect(void);
extern void cli_failed(void) CLI_NORETURN;
extern void cli_usage_error(const char *fmt, const char *arg) CLI_NORETURN;
extern void cli_allow_only(const char *command, const char *const *options);
extern void cli_want_args(const char *command, int min, int max);
extern const char *cli_arg(int i);
extern const char *cli_option(const char *name);
extern bool cli_json(void);
extern int64_t cli_job_id(const char *s);
extern int	cli_int_arg(const char *s, const char *what, int dflt, long long lo, long long hi);

/* await.c */
extern int	cli_await_timeout_ms(const char *s, const char *what);
extern int	cli_await_print(JobqConn *conn, int64_t id, int timeout_ms, bool json);
extern int	cmd_await(void);

/* metrics.c */
extern int	cmd_metrics(void);

/* schedules.c */
extern int	cmd_schedule(void);
extern int	cmd_schedules(void);
/* jobs.c */
extern int	cmd_list(void);
extern int	cmd_show(void);

/* groups.c: jobq groups QUEUE */
extern int	cmd_groups(void);

/* flows.c: jobq flow create|show|cancel|retry */
extern int	cmd_flow(void);

/*
 * sql.c: statements of the CLI's own (schedules.c, flows.c) on main.c's
 * connection; cli_sql_error and cli_sql_leave end the program
 */
extern void cli_sql_connect(void);
extern void cli_sql_disconnect(void);
extern PGresult *cli_sql_run(const char *sql, int nparams, const char *const *params,
							 const char *where);
extern void cli_sql_command(const char *sql);
extern void cli_sql_error(PGresult *res, const char *where) CLI_NORETURN;
extern void cli_sql_leave(int code) CLI_NORETURN;

/* workers.c: jobq workers, jobq worker quiet|stop|resume */
extern int	cmd_workers(void);
extern int	cmd_worker(void);

#endif							/* JOBQ_CLI_H */
