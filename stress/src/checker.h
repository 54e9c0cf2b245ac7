/*
 * checker.h: what the checker's files share (checker.c reads the histories
 * and applies the rules of every scenario; checker-flows.c adds the rules
 * of flows, scenario FL).
 */
#ifndef STRESS_CHECKER_H
#define STRESS_CHECKER_H

#include <stddef.h>

/* one uid (a job as the producers named it) */
typedef struct Uid
{
	char	   *uid;
	int			enq_ok, enq_fail, enq_unknown;
	long long	enq_id;
	int			brow;			/* index in rows, -1 */
	int			nb;
} Uid;

/* one row of the final database dump (B line) */
typedef struct Row
{
	long long	id;
	int			u;
	char		state[16];
	int			attempt;
	char		token[40];
	long long	claimed, finished, run_at;
	int			priority, hang;
} Row;

/* one recorded event of a worker or handler (C D F H I R S J lines) */
typedef struct Ev
{
	int			u;
	char		type;			/* C D F H R S J */
	char		token[40];
	char		status[16];
	int			attempt;
	long long	id, t0, t1;
	long long	t2;				/* C: the server clock after the claim answered
								 * (stress-worker --claim-clock), 0 if unknown */
} Ev;

extern Uid *uids;
extern size_t nuids;
extern Row *rows;
extern size_t nrows;
extern Ev  *evs;				/* sorted by uid, then type, then claim time */
extern size_t nevs;
extern const char *label;

/* the index of a uid, created when new */
int			uid_get(const char *s);
/* count a violation and print the first 25 */
void		violation(long *counter, const char *fmt, const char *uid, const char *detail);

/* checker-flows.c: scenario FL */
/* a G, W, X, Q or Y line (see checker-flows.c); 0 when parsed */
int			flows_read_line(const char *line);
/* is the uid a job of a recorded flow (its final state is judged by
 * flows_check, not by the lost and dead rules)? */
int			flows_member(int u);
/* was the uid retried by jobq_retry (Y ok)?  its attempts start again */
int			flows_retried(int u);
/* the flow rules after everything was read (evs sorted); prints the
 * flows summary line when there were flows; returns the violations */
long		flows_check(void);

#endif
