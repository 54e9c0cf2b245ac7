/*
 * flows.c: stress-flows, the producer of random flow graphs (scenario FL).
 *
 * Each round inserts one random DAG with jobq_flow in one call: a chain,
 * a fan-out, a fan-in or a layered graph of 1 to 5 levels, every job
 * with a random on_dep_failure policy (cancel, ignore, wait), and some
 * edges to jobs of earlier rounds (jobs already finished, read from
 * jobq.history, or still live).  Payload {"uid", "ms", "hang": 0,
 * "die": 0|1}: a worker fails a die=1 job permanently (dead at once).
 * After a round, with --cancel-pct, one random job of the flow (die=0) is
 * cancelled with jobq_cancel (ready and waiting jobs are cancelled, and
 * their dependents' policies apply).
 *
 * History lines, read by stress-check (checker-flows.c):
 *   E <uid> ok <id> | E <uid> fail - <sqlstate> | E <uid> unknown -
 *                                    each job, as stress-producer writes
 *   G <uid> <flow> <policy> <die>    the job belongs to flow <flow> (this
 *                                    program's name for the round)
 *   W <child uid> <parent uid>       an edge: the child depends on it
 *   X <uid> ok|no|unknown            jobq_cancel of the job answered
 *                                    true, false, or the connection broke
 * G and W lines are written before the call, E lines after its answer: a
 * flow whose answer was lost (E unknown) may exist, and is then checked.
 */
#include "common.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpq-fe.h>

#define MAX_JOBS	40			/* jobs of one flow */
#define MAX_DEPS	4			/* dependencies of one job */
#define POOL_SIZE	256			/* jobs of earlier rounds to depend on */

typedef struct FlowJob
{
	char		uid[96];
	int			level;
	int			policy;			/* index in policies[] */
	int			die;
	int			ndeps;
	int			dep[MAX_DEPS];	/* >= 0: local index; < 0: -1 - pool index */
	long long	id;
} FlowJob;

typedef struct PoolJob
{
	long long	id;
	char		uid[96];
} PoolJob;

static const char *const policies[] = {"cancel", "ignore", "wait"};

static const char *conninfo = NULL, *queue = "fl", *hist = NULL, *prefix = "fl";
static long count = 0;
static int	duration_s = 0, pause_ms = 0, ms_max = 10;
static double die_pct = 5, cancel_pct = 10, old_pct = 10;

static PoolJob pool[POOL_SIZE];
static int	npool, pool_next;
static long n_flows, n_jobs, n_edges, n_old_edges, n_failed, n_unknown, n_cancel_ok,
			n_cancel_no, n_shape[4], n_policy[3];

static int
rnd_int(int lo, int hi)
{
	return lo + (int) (rnd() % (uint64_t) (hi - lo + 1));
}

static void
pool_add(long long id, const char *uid)
{
	int			i;

	for (i = 0; i < npool; i++)
		if (pool[i].id == id)
			return;
	pool[pool_next].id = id;
	snprintf(pool[pool_next].uid, sizeof(pool[pool_next].uid), "%s", uid);
	pool_next = (pool_next + 1) % POOL_SIZE;
	if (npool < POOL_SIZE)
		npool++;
}

/* jobs already finished (completed, dead or cancelled) join the pool */
static void
pool_refresh(PGconn *pg)
{
	const char *params[1] = {queue};
	PGresult   *r = PQexecParams(pg,
								 "SELECT id, payload->>'uid' FROM jobq.history"
								 " WHERE queue = $1 AND payload ? 'uid'"
								 " ORDER BY id DESC LIMIT 32",
								 1, NULL, params, NULL, NULL, 0);
	int			i;

	if (PQresultStatus(r) == PGRES_TUPLES_OK)
		for (i = 0; i < PQntuples(r); i++)
			pool_add(atoll(PQgetvalue(r, i, 0)), PQgetvalue(r, i, 1));
	PQclear(r);
}

/* a job of level lv depends on 1..MAX_DEPS jobs: at least one of level lv-1 */
static void
add_deps(FlowJob *jobs, int n, int j, int first_prev, int nprev, int nearlier)
{
	FlowJob    *fj = &jobs[j];
	int			want = rnd_int(1, nprev < 2 ? 1 : 2), k;

	(void) n;
	fj->ndeps = 0;
	for (k = 0; k < want && fj->ndeps < MAX_DEPS; k++)
	{
		int			d = first_prev + rnd_int(0, nprev - 1), m, dup = 0;

		for (m = 0; m < fj->ndeps; m++)
			dup |= fj->dep[m] == d;
		if (!dup)
			fj->dep[fj->ndeps++] = d;
	}
	/* sometimes an edge that skips levels */
	if (nearlier > 0 && rnd01() < 0.2 && fj->ndeps < MAX_DEPS)
	{
		int			d = rnd_int(0, nearlier - 1), m, dup = 0;

		for (m = 0; m < fj->ndeps; m++)
			dup |= fj->dep[m] == d;
		if (!dup)
			fj->dep[fj->ndeps++] = d;
	}
	/* sometimes an edge to a job of an earlier round (finished or live) */
	if (npool > 0 && rnd01() < old_pct / 100.0 && fj->ndeps < MAX_DEPS)
		fj->dep[fj->ndeps++] = -1 - rnd_int(0, npool - 1);
}

/* a random graph; returns the number of jobs */
static int
make_graph(FlowJob *jobs, int *shape)
{
	int			levels = rnd_int(1, 5), n = 0, lv, j;
	int			first_prev = 0, nprev = 0;

	*shape = rnd_int(0, 3);
	for (lv = 0; lv < levels; lv++)
	{
		int			width, first = n;

		switch (*shape)
		{
			case 0: width = 1; break;	/* chain */
			case 1: width = lv == 0 ? 1 : rnd_int(2, 5); break;	/* fan-out */
			case 2: width = lv == levels - 1 ? 1 : rnd_int(2, 6); break;	/* fan-in */
			default: width = rnd_int(1, 4); break;	/* layered */
		}
		for (j = 0; j < width && n < MAX_JOBS; j++, n++)
		{
			memset(&jobs[n], 0, sizeof(FlowJob));
			jobs[n].level = lv;
			jobs[n].policy = rnd_int(0, 9) < 5 ? 0 : rnd_int(1, 2);
			jobs[n].die = rnd01() < die_pct / 100.0;
			if (lv > 0)
			{
				/* fan-out: each child of one parent of the level before */
				if (*shape == 1 && nprev > 1)
				{
					jobs[n].ndeps = 1;
					jobs[n].dep[0] = first_prev + rnd_int(0, nprev - 1);
				}
				else if (*shape == 2 || *shape == 0)
				{
					/* fan-in and chain: on every job of the level before */
					int			k;

					for (k = 0; k < nprev && k < MAX_DEPS; k++)
						jobs[n].dep[jobs[n].ndeps++] = first_prev + k;
				}
				else
					add_deps(jobs, n, n, first_prev, nprev, first_prev);
			}
			else if (npool > 0 && rnd01() < old_pct / 100.0)
			{
				/* a root that waits for a job of an earlier round */
				jobs[n].ndeps = 1;
				jobs[n].dep[0] = -1 - rnd_int(0, npool - 1);
			}
		}
		first_prev = first;
		nprev = n - first;
	}
	return n;
}

static size_t
append(char *buf, size_t len, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static size_t
append(char *buf, size_t len, size_t cap, const char *fmt, ...)
{
	va_list		ap;
	int			w;

	if (len >= cap)
		return len;
	va_start(ap, fmt);
	w = vsnprintf(buf + len, cap - len, fmt, ap);
	va_end(ap);
	return w < 0 ? len : len + (size_t) w;
}

static void
one_flow(JobqConn *c, FILE *h, long round)
{
	FlowJob		jobs[MAX_JOBS];
	char		json[32768], flow[96];
	size_t		len = 0;
	int			n, j, k, shape;
	const char *params[1];
	PGresult   *r;
	PGconn	   *pg = jobq_pgconn(c);

	n = make_graph(jobs, &shape);
	snprintf(flow, sizeof(flow), "%s-f%ld", prefix, round);
	len = append(json, len, sizeof(json), "[");
	for (j = 0; j < n; j++)
	{
		snprintf(jobs[j].uid, sizeof(jobs[j].uid), "%s-j%d", flow, j);
		len = append(json, len, sizeof(json),
					 "%s{\"ref\":\"j%d\",\"queue\":\"%s\",\"on_dep_failure\":\"%s\","
					 "\"payload\":{\"uid\":\"%s\",\"ms\":%d,\"hang\":0,\"die\":%d}",
					 j ? "," : "", j, queue, policies[jobs[j].policy], jobs[j].uid,
					 rnd_int(0, ms_max), jobs[j].die);
		if (jobs[j].ndeps > 0)
		{
			len = append(json, len, sizeof(json), ",\"depends_on\":[");
			for (k = 0; k < jobs[j].ndeps; k++)
			{
				int			d = jobs[j].dep[k];

				if (d >= 0)
					len = append(json, len, sizeof(json), "%s\"j%d\"", k ? "," : "", d);
				else
					len = append(json, len, sizeof(json), "%s%lld", k ? "," : "",
								 pool[-1 - d].id);
			}
			len = append(json, len, sizeof(json), "]");
		}
		len = append(json, len, sizeof(json), "}");
	}
	len = append(json, len, sizeof(json), "]");
	if (len >= sizeof(json))
	{
		fprintf(stderr, "stress-flows: flow %s too large\n", flow);
		exit(2);
	}

	/* the graph first: a flow whose answer is lost may exist */
	for (j = 0; j < n; j++)
	{
		fprintf(h, "G %s %s %s %d\n", jobs[j].uid, flow, policies[jobs[j].policy], jobs[j].die);
		for (k = 0; k < jobs[j].ndeps; k++)
		{
			int			d = jobs[j].dep[k];

			fprintf(h, "W %s %s\n", jobs[j].uid, d >= 0 ? jobs[d].uid : pool[-1 - d].uid);
		}
	}
	params[0] = json;
	r = PQexecParams(pg, "SELECT id FROM jobq_flow($1::jsonb)", 1, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != n)
	{
		int			lost = PQstatus(pg) != CONNECTION_OK;
		const char *st = PQresultErrorField(r, PG_DIAG_SQLSTATE);

		for (j = 0; j < n; j++)
		{
			if (lost)
				fprintf(h, "E %s unknown -\n", jobs[j].uid);
			else
				fprintf(h, "E %s fail - %s\n", jobs[j].uid, st ? st : "?");
		}
		if (lost)
			n_unknown++;
		else
		{
			n_failed++;
			fprintf(stderr, "stress-flows: flow %s: %s", flow, PQresultErrorMessage(r));
		}
		PQclear(r);
		if (lost && reconnect_retry(c, 90000) != JOBQ_OK)
		{
			fprintf(stderr, "stress-flows: cannot reconnect\n");
			exit(3);
		}
		return;
	}
	for (j = 0; j < n; j++)
	{
		jobs[j].id = atoll(PQgetvalue(r, j, 0));
		fprintf(h, "E %s ok %lld\n", jobs[j].uid, jobs[j].id);
		for (k = 0; k < jobs[j].ndeps; k++)
		{
			n_edges++;
			if (jobs[j].dep[k] < 0)
				n_old_edges++;
		}
		n_policy[jobs[j].policy]++;
	}
	PQclear(r);
	n_flows++;
	n_jobs += n;
	n_shape[shape]++;

	/*
	 * A deliberate cancel of one job of the flow: one with die=0, which never
	 * ends dead (cancelling a dead job would move its finished_at past the
	 * runs of its 'ignore' dependents)
	 */
	k = rnd_int(0, n - 1);
	if (rnd01() < cancel_pct / 100.0 && !jobs[k].die)
	{
		FlowJob    *v = &jobs[k];
		int			rc = jobq_cancel(c, v->id);

		if (rc == JOBQ_OK)
		{
			fprintf(h, "X %s ok\n", v->uid);
			n_cancel_ok++;
		}
		else if (conn_lost(c))
		{
			fprintf(h, "X %s unknown\n", v->uid);
			if (reconnect_retry(c, 90000) != JOBQ_OK)
				exit(3);
		}
		else
		{
			fprintf(h, "X %s no\n", v->uid);
			n_cancel_no++;
		}
	}
	/* the jobs of this round may be depended on by later rounds */
	for (j = 0; j < n; j++)
		if (rnd01() < 0.3)
			pool_add(jobs[j].id, jobs[j].uid);
	if (round % 8 == 0)
		pool_refresh(jobq_pgconn(c));
}

int
main(int argc, char **argv)
{
	static struct option opts[] = {
		{"dbname", required_argument, NULL, 'd'},
		{"queue", required_argument, NULL, 'q'},
		{"out", required_argument, NULL, 'o'},
		{"prefix", required_argument, NULL, 'p'},
		{"count", required_argument, NULL, 'n'},
		{"duration", required_argument, NULL, 't'},
		{"pause-ms", required_argument, NULL, 1},
		{"ms-max", required_argument, NULL, 2},
		{"die-pct", required_argument, NULL, 3},
		{"cancel-pct", required_argument, NULL, 4},
		{"old-pct", required_argument, NULL, 5},
		{NULL, 0, NULL, 0}
	};
	int			ch;
	long		round = 0;
	int64_t		start;
	FILE	   *h;
	JobqConn   *c;

	while ((ch = getopt_long(argc, argv, "d:q:o:p:n:t:", opts, NULL)) != -1)
	{
		switch (ch)
		{
			case 'd': conninfo = optarg; break;
			case 'q': queue = optarg; break;
			case 'o': hist = optarg; break;
			case 'p': prefix = optarg; break;
			case 'n': count = atol(optarg); break;
			case 't': duration_s = atoi(optarg); break;
			case 1: pause_ms = atoi(optarg); break;
			case 2: ms_max = atoi(optarg); break;
			case 3: die_pct = atof(optarg); break;
			case 4: cancel_pct = atof(optarg); break;
			case 5: old_pct = atof(optarg); break;
			default:
				fprintf(stderr, "usage: stress-flows -d CONNINFO -q QUEUE -o HIST -p PREFIX [-n FLOWS | -t SECONDS]\n"
						"  [--pause-ms N] [--ms-max N] [--die-pct P] [--cancel-pct P] [--old-pct P]\n");
				return 2;
		}
	}
	if (hist == NULL || (count <= 0 && duration_s <= 0))
	{
		fprintf(stderr, "stress-flows: -o and one of -n/-t are required\n");
		return 2;
	}
	install_stop_handler();
	h = hist_open(hist);
	c = connect_retry(conninfo, 0, 60000);
	if (c == NULL)
		return 2;
	start = mono_ms();
	rnd_seed((uint64_t) getpid() * 2654435761u ^ (uint64_t) start);
	while (!stop_flag)
	{
		if (count > 0 && round >= count)
			break;
		if (duration_s > 0 && mono_ms() - start > duration_s * 1000L)
			break;
		one_flow(c, h, round++);
		if (pause_ms > 0)
			sleep_ms(pause_ms);
	}
	jobq_disconnect(c);
	fclose(h);
	printf("stress-flows %s: flows=%ld jobs=%ld edges=%ld (to earlier rounds %ld) "
		   "shapes chain=%ld fanout=%ld fanin=%ld layered=%ld policies cancel=%ld ignore=%ld "
		   "wait=%ld cancels=%ld (refused %ld) failed=%ld unknown=%ld ms=%lld\n",
		   prefix, n_flows, n_jobs, n_edges, n_old_edges, n_shape[0], n_shape[1], n_shape[2],
		   n_shape[3], n_policy[0], n_policy[1], n_policy[2], n_cancel_ok, n_cancel_no,
		   n_failed, n_unknown, (long long) (mono_ms() - start));
	return 0;
}
