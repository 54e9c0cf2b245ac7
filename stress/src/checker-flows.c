/*
 * checker-flows.c: the checker's rules for flows (scenario FL).
 *
 * Lines read (any file, any order):
 *   G <uid> <flow> <policy> <die>   stress-flows: a job of a flow, its
 *                                   on_dep_failure, die=1 if a worker
 *                                   fails it permanently
 *   W <child uid> <parent uid>      stress-flows: an edge
 *   X <uid> ok|no|unknown           stress-flows: jobq_cancel of the job
 *   Q <child id> <parent id> <on_failure> <state>
 *                                   run.sh: a row of jobq.deps at the end
 *   Y <uid> ok|no <server_us>       run.sh, FL's retry phase: jobq_retry(id,
 *                                   with_dependents => true) of a dead job
 *
 * Rules (each violation is printed and counted; checker.c adds them to
 * its verdict):
 *   started-before-dependency  (a) no run of a job started before the
 *       finished_at of any of its dependencies (the server clock), and each
 *       dependency had completed, except under 'ignore', where it had
 *       ended in any way.  A run starts when its claim answered: the
 *       stress-worker reads the server clock right after (C lines with
 *       --claim-clock), a jobq-worker handler records its start (S; the
 *       same host's clock).  Not claimed_at: the server reads it before
 *       the claim's snapshot, so a job readied by a commit in between is
 *       claimed "before" that commit (the figure
 *       claimed_at-before-dependency-end counts those edges)
 *   flow-not-ended  (b) no job of a flow is ready or running at the end,
 *       nor waiting when every dependency is final and none failed under
 *       'wait'
 *   flow-wrong-state  (b) each job ended as its dependencies' final states
 *       and its policy say: a job cancelled by jobq_cancel (X ok) is
 *       cancelled; under 'cancel' a job with a dependency dead or
 *       cancelled is cancelled; under 'wait' it is still waiting; a job
 *       waiting for a dependency that is itself waiting waits; every other
 *       job ran: completed, or dead when die=1 (queues have attempts
 *       enough that nothing else dies)
 *   edge-not-blocked  (b) the edge of a waiting 'wait' job to a dependency
 *       that ended dead or cancelled is 'blocked' in jobq.deps
 *   edge-state  (b) jobq.deps has each recorded edge; a job that ran has
 *       every edge satisfied; a waiting job has an edge not satisfied, and
 *       its edge to a dependency still live is pending
 *   flow-job-lost  (c) an acknowledged job of a flow has no row at the end
 * With Y lines (the retry phase, from the first Y line's time on, the
 * workers no longer fail die=1 jobs): a run that started before the retry
 * phase is not checked against a dependency that ended again in it (retried,
 * or brought back with it), whose finished_at moved: the first check, before
 * the retries, covered that edge; nor is an 'ignore' edge to such a
 * dependency: the first end satisfied it, and it stays satisfied, so the
 * dependent may run before the new end (when it was no longer waiting at
 * the retry); nor is a run that ended before the retries against a
 * dependency they brought back that is still live, and such a job keeps
 * its end; a die=1 job that ran in the retry phase ends completed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checker.h"

enum
{
	POL_CANCEL,
	POL_IGNORE,
	POL_WAIT
};

typedef struct Member
{
	int			flow;			/* index in flow_names, -1: not in a flow */
	int			policy;
	int			die;
	int			cancel_ok;		/* X ok */
	int			cancel_unknown; /* X unknown */
	int			retried;		/* Y ok */
} Member;

typedef struct Edge
{
	int			child, parent;	/* uid indices */
} Edge;

typedef struct DbEdge
{
	long long	child, parent;
	char		state[16];
} DbEdge;

static Member *members;
static size_t nmembers;
static char **flow_names;
static size_t nflows, capflows;
static Edge *edges;
static size_t nedges, capedges;
static DbEdge *dbedges;
static size_t ndbedges, capdbedges;

static long long retry_phase;	/* the first Y line's server clock, 0: none */
static long n_retried;
static long n_before_dep, n_not_ended, n_wrong_state, n_not_blocked, n_edge_state, n_flow_lost;

static Member *
member(int u)
{
	if ((size_t) u >= nmembers)
	{
		size_t		n = nmembers ? nmembers : 1024, i;

		while (n <= (size_t) u)
			n *= 2;
		members = realloc(members, n * sizeof(Member));
		for (i = nmembers; i < n; i++)
		{
			memset(&members[i], 0, sizeof(Member));
			members[i].flow = -1;
		}
		nmembers = n;
	}
	return &members[u];
}

int
flows_member(int u)
{
	return (size_t) u < nmembers && members[u].flow >= 0;
}

int
flows_retried(int u)
{
	return (size_t) u < nmembers && members[u].retried;
}

static int
flow_index(const char *name)
{
	/* flows arrive in order: the name is almost always the last one */
	if (nflows > 0 && strcmp(flow_names[nflows - 1], name) == 0)
		return (int) nflows - 1;
	if (nflows == capflows)
	{
		capflows = capflows ? capflows * 2 : 1024;
		flow_names = realloc(flow_names, capflows * sizeof(char *));
	}
	flow_names[nflows] = strdup(name);
	return (int) nflows++;
}

int
flows_read_line(const char *line)
{
	char		a[256], b[256], c[64], d[64];
	int			n = sscanf(line + 1, "%255s %255s %63s %63s", a, b, c, d);

	switch (line[0])
	{
		case 'G':
			if (n < 4)
				return -1;
			{
				int			u = uid_get(a);
				Member	   *m = member(u);

				m->flow = flow_index(b);
				m->policy = strcmp(c, "ignore") == 0 ? POL_IGNORE :
					strcmp(c, "wait") == 0 ? POL_WAIT : POL_CANCEL;
				m->die = atoi(d);
			}
			return 0;
		case 'W':
			if (n < 2)
				return -1;
			if (nedges == capedges)
			{
				capedges = capedges ? capedges * 2 : 4096;
				edges = realloc(edges, capedges * sizeof(Edge));
			}
			edges[nedges].child = uid_get(a);
			edges[nedges].parent = uid_get(b);
			nedges++;
			return 0;
		case 'X':
			if (n < 2)
				return -1;
			{
				Member	   *m = member(uid_get(a));

				if (strcmp(b, "ok") == 0)
					m->cancel_ok = 1;
				else if (strcmp(b, "unknown") == 0)
					m->cancel_unknown = 1;
			}
			return 0;
		case 'Y':
			if (n < 3)
				return -1;
			if (strcmp(b, "ok") == 0)
			{
				member(uid_get(a))->retried = 1;
				n_retried++;
			}
			if (retry_phase == 0 || atoll(c) < retry_phase)
				retry_phase = atoll(c);
			return 0;
		case 'Q':
			if (n < 4)
				return -1;
			if (ndbedges == capdbedges)
			{
				capdbedges = capdbedges ? capdbedges * 2 : 4096;
				dbedges = realloc(dbedges, capdbedges * sizeof(DbEdge));
			}
			dbedges[ndbedges].child = atoll(a);
			dbedges[ndbedges].parent = atoll(b);
			snprintf(dbedges[ndbedges].state, sizeof(dbedges[ndbedges].state), "%s", d);
			ndbedges++;
			return 0;
	}
	return -1;
}

static int
edge_cmp(const void *x, const void *y)
{
	const Edge *a = x, *b = y;

	if (a->child != b->child)
		return a->child < b->child ? -1 : 1;
	return a->parent < b->parent ? -1 : a->parent > b->parent;
}

static int
dbedge_cmp(const void *x, const void *y)
{
	const DbEdge *a = x, *b = y;

	if (a->child != b->child)
		return a->child < b->child ? -1 : 1;
	return a->parent < b->parent ? -1 : a->parent > b->parent;
}

static const Row *
row_of(int u)
{
	return uids[u].brow >= 0 ? &rows[uids[u].brow] : NULL;
}

static int
is_state(const Row *r, const char *st)
{
	return r != NULL && strcmp(r->state, st) == 0;
}

static int
failed(const Row *r)
{
	return is_state(r, "dead") || is_state(r, "cancelled");
}

static int
final(const Row *r)
{
	return is_state(r, "completed") || failed(r);
}

/* the state of the edge child -> parent in jobq.deps, NULL if none */
static const char *
db_edge_state(long long child, long long parent)
{
	DbEdge		key, *e;

	key.child = child;
	key.parent = parent;
	e = bsearch(&key, dbedges, ndbedges, sizeof(DbEdge), dbedge_cmp);
	return e ? e->state : NULL;
}

/*
 * The earliest start of each uid, from clocks read after a claim answered:
 * the stress-worker's read after its claim (C, --claim-clock) and the
 * jobq-worker handler's start (S), and the latest.  And, apart, the earliest claim by the
 * claim's own clock (C claimed_us, the final row's claimed_at), which the
 * server reads before the claim's snapshot.
 */
static void
earliest_starts(long long *started, long long *last_start, long long *claimed, long *unclocked)
{
	size_t		i;

	for (i = 0; i < nevs; i++)
	{
		const Ev   *e = &evs[i];
		long long	t = e->type == 'C' ? e->t2 : e->type == 'S' ? e->t0 : 0;

		if (e->type == 'C' && e->t2 <= 0 && flows_member(e->u))
			(*unclocked)++;
		if (t > 0 && (started[e->u] == 0 || t < started[e->u]))
			started[e->u] = t;
		if (t > last_start[e->u])
			last_start[e->u] = t;
		if (e->type == 'C' && e->t0 > 0 && (claimed[e->u] == 0 || e->t0 < claimed[e->u]))
			claimed[e->u] = e->t0;
	}
	for (i = 0; i < nrows; i++)
		if (rows[i].claimed > 0 && (claimed[rows[i].u] == 0 || rows[i].claimed < claimed[rows[i].u]))
			claimed[rows[i].u] = rows[i].claimed;
}

/*
 * (b) the job's edges as jobq.deps has them: each edge recorded is there; a
 * job that ran has every edge satisfied; a waiting job has an edge not
 * satisfied, and its edge to a dependency still live is pending
 */
static void
check_edges(const Row *r, int u, size_t e0, size_t e1, int ran)
{
	char		det[512];
	int			open = 0;
	size_t		k;

	for (k = e0; k < e1; k++)
	{
		const Row  *p = row_of(edges[k].parent);
		const char *st,
				   *why = NULL;

		if (p == NULL)
			continue;			/* started-before-dependency or wrong state says it */
		st = db_edge_state(r->id, p->id);
		if (st == NULL)
			why = "missing";
		else if (ran && strcmp(st, "satisfied") != 0)
			why = "not satisfied, though the job ran";
		else if (is_state(r, "waiting") && !final(p) && strcmp(st, "pending") != 0)
			why = "not pending, though its dependency is live";
		if (st != NULL && strcmp(st, "satisfied") != 0)
			open = 1;
		if (why != NULL)
		{
			snprintf(det, sizeof(det), "(%s) edge to %s (id %lld, %s) is %s: %s", r->state,
					 uids[edges[k].parent].uid, p->id, p->state, st ? st : "-", why);
			violation(&n_edge_state, "edge-state", uids[u].uid, det);
		}
	}
	if (is_state(r, "waiting") && e1 > e0 && !open)
		violation(&n_edge_state, "edge-state", uids[u].uid, "(waiting) every edge is satisfied");
}

long
flows_check(void)
{
	static const char *const pol_names[] = {"cancel", "ignore", "wait"};
	long long  *started, *last_start, *claimed;
	char		det[512];
	size_t		i, e0, e1;
	long		n_jobs = 0, n_checked_edges = 0, n_completed = 0, n_dead = 0,
				n_cancel_deliberate = 0, n_cancel_cascade = 0, n_wait_blocked = 0,
				n_wait_behind = 0, n_started_jobs = 0, n_ignored_failures = 0, bad;
	char	   *flow_open;
	long		n_flows_open = 0, n_flows_blocked = 0, n_unclocked = 0, n_clock_early = 0,
				n_before_retry = 0, n_ran_after_retry = 0, n_ended_before_retry = 0;
	long long	max_clock_early = 0;

	if (nflows == 0)
		return 0;
	qsort(edges, nedges, sizeof(Edge), edge_cmp);
	qsort(dbedges, ndbedges, sizeof(DbEdge), dbedge_cmp);
	started = calloc(nuids ? nuids : 1, sizeof(long long));
	last_start = calloc(nuids ? nuids : 1, sizeof(long long));
	claimed = calloc(nuids ? nuids : 1, sizeof(long long));
	earliest_starts(started, last_start, claimed, &n_unclocked);
	flow_open = calloc(nflows, 1);

	e0 = 0;
	for (i = 0; i < nuids; i++)
	{
		const Member *m;
		const Row  *r;
		int			any_failed = 0, any_open = 0, expect_ran = 0, came_back = 0, k;
		const char *expect;
		long long	t = started[i];

		/* this child's edges: edges[e0 .. e1) */
		while (e0 < nedges && edges[e0].child < (int) i)
			e0++;
		e1 = e0;
		while (e1 < nedges && edges[e1].child == (int) i)
			e1++;
		if (!flows_member((int) i))
			continue;
		m = &members[i];
		r = row_of((int) i);
		n_jobs++;
		if (uids[i].enq_ok == 0 && (uids[i].enq_unknown == 0 || r == NULL))
			continue;			/* a flow that failed, or was lost unanswered */
		if (r == NULL)
		{
			violation(&n_flow_lost, "flow-job-lost", uids[i].uid, "(no row at the end)");
			continue;
		}
		if (t > 0)
			n_started_jobs++;

		for (k = (int) e0; k < (int) e1; k++)
		{
			const Row  *p = row_of(edges[k].parent);
			const char *pname = uids[edges[k].parent].uid;

			if (failed(p))
				any_failed = 1;
			if (!final(p))
				any_open = 1;
			/* brought back by the retries, and still live */
			if (retry_phase > 0 && p != NULL && !final(p))
				came_back = 1;

			/* (a) no claim before the dependency ended as the policy demands */
			if (t == 0)
				continue;
			if (retry_phase > 0 && p != NULL &&
				((p->finished >= retry_phase && (t < retry_phase || m->policy == POL_IGNORE)) ||
				 (!final(p) && last_start[i] < retry_phase)))
			{
				n_before_retry++;
				continue;		/* it ended again: checked before the retries */
			}
			n_checked_edges++;
			if (p == NULL)
			{
				snprintf(det, sizeof(det), "started at %lld; its dependency %s has no row", t, pname);
				violation(&n_before_dep, "started-before-dependency", uids[i].uid, det);
			}
			else if (m->policy == POL_IGNORE ? !final(p) : !is_state(p, "completed"))
			{
				snprintf(det, sizeof(det), "(%s) started at %lld; dependency %s (id %lld) is %s",
						 pol_names[m->policy], t, pname, p->id, p->state);
				violation(&n_before_dep, "started-before-dependency", uids[i].uid, det);
			}
			else if (t < p->finished)
			{
				snprintf(det, sizeof(det),
						 "(%s) started at %lld, %lld us before dependency %s (id %lld) ended %s",
						 pol_names[m->policy], t, p->finished - t, pname, p->id, p->state);
				violation(&n_before_dep, "started-before-dependency", uids[i].uid, det);
			}
			else if (failed(p))
				n_ignored_failures++;
			/* the claim's own clock, read before its snapshot: a figure */
			if (p != NULL && claimed[i] > 0 && claimed[i] < p->finished)
			{
				n_clock_early++;
				if (p->finished - claimed[i] > max_clock_early)
					max_clock_early = p->finished - claimed[i];
			}
		}

		/*
		 * (b) the final state the dependencies and the policy call for.  A job
		 * that ran and ended before the retries, under 'ignore' of a
		 * dependency that came back in them, keeps the end the first check
		 * covered (a job that already ran is not taken back).
		 */
		if (came_back && t > 0 && last_start[i] < retry_phase && r->finished > 0 &&
			r->finished < retry_phase && (is_state(r, "completed") || is_state(r, "dead")))
		{
			expect = r->state;
			expect_ran = 1;
			n_ended_before_retry++;
		}
		else if (m->cancel_ok)
			expect = "cancelled";
		else if (m->policy == POL_CANCEL && any_failed)
			expect = "cancelled";
		else if (m->policy == POL_WAIT && any_failed)
			expect = "waiting";
		else if (any_open)
			expect = "waiting";
		else
		{
			/* die=1 fails for good, except in the retry phase */
			expect = m->die && (retry_phase == 0 || last_start[i] < retry_phase) ?
				"dead" : "completed";
			if (retry_phase > 0 && last_start[i] >= retry_phase)
				n_ran_after_retry++;
			expect_ran = 1;
		}
		if (m->cancel_unknown && is_state(r, "cancelled"))
			expect = "cancelled";
		if (!is_state(r, expect))
		{
			int			live = is_state(r, "ready") || is_state(r, "running") ||
				is_state(r, "waiting");

			snprintf(det, sizeof(det), "(%s, %d dependencies, die=%d%s) is %s, expected %s",
					 pol_names[m->policy], (int) (e1 - e0), m->die,
					 m->cancel_ok ? ", cancelled by jobq_cancel" : "", r->state, expect);
			if (live && (expect_ran || strcmp(expect, "cancelled") == 0))
				violation(&n_not_ended, "flow-not-ended", uids[i].uid, det);
			else
				violation(&n_wrong_state, "flow-wrong-state", uids[i].uid, det);
			flow_open[m->flow] = 1;
			continue;
		}
		check_edges(r, (int) i, e0, e1, expect_ran);
		if (is_state(r, "completed"))
			n_completed++;
		else if (is_state(r, "dead"))
			n_dead++;
		else if (is_state(r, "cancelled"))
		{
			if (m->cancel_ok)
				n_cancel_deliberate++;
			else
				n_cancel_cascade++;
		}
		else if (is_state(r, "waiting"))
		{
			if (flow_open[m->flow] == 0)
				flow_open[m->flow] = 2;
			if (m->policy == POL_WAIT && any_failed)
			{
				n_wait_blocked++;
				/* listed blocked: each failed dependency's edge */
				for (k = (int) e0; k < (int) e1; k++)
				{
					const Row  *p = row_of(edges[k].parent);
					const char *st;

					if (!failed(p))
						continue;
					st = db_edge_state(r->id, p->id);
					if (st == NULL || strcmp(st, "blocked") != 0)
					{
						snprintf(det, sizeof(det), "edge to %s (id %lld, %s) is %s, not blocked",
								 uids[edges[k].parent].uid, p->id, p->state, st ? st : "missing");
						violation(&n_not_blocked, "edge-not-blocked", uids[i].uid, det);
					}
				}
			}
			else
				n_wait_behind++;
		}
	}
	for (i = 0; i < nflows; i++)
	{
		if (flow_open[i] == 1)
			n_flows_open++;
		else if (flow_open[i] == 2)
			n_flows_blocked++;
	}
	bad = n_before_dep + n_not_ended + n_wrong_state + n_not_blocked + n_edge_state + n_flow_lost;
	printf("%s flows: flows=%zu jobs=%ld edges=%zu started-jobs=%ld edges-checked=%ld "
		   "claims-without-clock=%ld claimed_at-before-dependency-end=%ld (max %lld us) "
		   "ran-after-ignored-failure=%ld completed=%ld dead=%ld cancelled=%ld "
		   "(jobq_cancel=%ld cascade=%ld) waiting=%ld (blocked-wait=%ld behind-a-waiting-job=%ld) "
		   "flows-ended=%ld flows-blocked-by-wait=%ld started-before-dependency=%ld "
		   "flow-not-ended=%ld flow-wrong-state=%ld edge-not-blocked=%ld edge-state=%ld "
		   "flow-job-lost=%ld: %s\n",
		   label, nflows, n_jobs, nedges, n_started_jobs, n_checked_edges, n_unclocked,
		   n_clock_early, max_clock_early, n_ignored_failures,
		   n_completed, n_dead, n_cancel_deliberate + n_cancel_cascade, n_cancel_deliberate,
		   n_cancel_cascade, n_wait_blocked + n_wait_behind, n_wait_blocked, n_wait_behind,
		   (long) nflows - n_flows_open - n_flows_blocked, n_flows_blocked,
		   n_before_dep, n_not_ended, n_wrong_state, n_not_blocked, n_edge_state, n_flow_lost,
		   bad ? "FAIL" : "PASS");
	if (retry_phase > 0)
		printf("%s flows retry phase: dead jobs retried with dependents %ld, flow jobs run in it %ld, "
			   "edges not checked (the dependency ended again: a run before the retries, or under ignore) %ld, "
			   "jobs that ended before the retries, of a dependency that came back and still waits %ld\n",
			   label, n_retried, n_ran_after_retry, n_before_retry, n_ended_before_retry);
	free(started);
	free(last_start);
	free(claimed);
	free(flow_open);
	return bad;
}
