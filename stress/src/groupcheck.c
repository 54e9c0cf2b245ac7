/*
 * groupcheck.c: the group and limit rules of one queue's recorded history
 * (the G1 scenario; README.md "The group checker").
 *
 * usage: stress-group-check [--label L] [--lease S] [--group-limit N]
 *            [--fifo] [--max-running N] [--rate R/PER_S/BURST]
 *            [--group-rate R/PER_S/BURST] [--commit-order] FILE...
 *
 * Reads the lines of stress-worker (C, D, F, I, R), of the jobq-worker
 * handler (S, J), of stress-gproducer's order file (Q: each job's key and
 * group_seq as its enqueuing transaction read them), run.sh's dump (B)
 * and group dump (K id uid key group_seq: the final place of the jobs
 * still in jobq.jobs and of dead ones; jobq.history keeps no group of a
 * completed job); other lines (E, H) are skipped.
 *
 * A run is one execution of a job.  Its interval is the time in which the
 * job was surely running on the server, in the server's clock (the
 * workers run on the server's host, so their wall clock is the server's):
 *   stress-worker (--claim-clock): from the server clock read once the
 *     claim answered (the claim had committed; 0, the read failed: the
 *     run is left out) to the first of: the server clock read before its first
 *     complete, fail or release was sent, and the lease's end
 *     (locked_until: after it a sweep may give the slot to another run).
 *     A complete in flight when the worker died (I without a timed D) ends
 *     the run at finished_at when its token completed the job, else at
 *     its start (nothing is claimed about it).
 *   jobq-worker handler: from S to J (inside the claim and the complete).
 *     A run without J (killed) ends at its start; a run that took a lease
 *     or longer is left out (its lease may have ended inside it).
 * Rules, each a function below:
 *   limit        at most group_limit runs of one key overlap (1 with --fifo)
 *   order        (--fifo) in each group, runs start in group_seq order,
 *                except a run recorded as started after its claim had
 *                surely lost the job (its lease had ended, or a later
 *                attempt of its job had started: a re-execution after the
 *                lease expired took its place)
 *   rate         (--rate, --group-rate) the claims of the queue, and of
 *                each group, number at most burst + W/T in any window of
 *                length W (T = per / rate); a claim's time is the claim's
 *                own clock (claimed_us, and claimed_at of each job's last
 *                claim for the runs no stress-worker recorded)
 *   rate-hold    (--rate, --group-rate) after a rate-limited fail (an R
 *                line with t1 and hold_s), no claim of the queue, or of
 *                its group, between its answer and its clock + the hold
 *   max_running  (--max-running) at most max_running runs of the queue
 *                overlap
 *   commit_order (--commit-order) a job whose enqueue committed before
 *                another job's enqueue was sent, in the same group, has
 *                the lower group_seq
 *   other        a job of the dump without a key, two jobs of the dump in
 *                one group with the same group_seq, unparsable lines
 * Prints one line and exits 1 on any violation (the first 25 listed).
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Job
{
	long long	id;
	int			key;			/* index in keys, -1: none */
	int			keyed_by_dump;	/* key and seq from a K line */
	long long	seq;
	int			in_dump;
	char		state[16];
	char		token[40];
	long long	claimed, finished;
} Job;

typedef struct Run
{
	int			job;
	int			jw;				/* a jobq-worker handler run */
	int			attempt;
	char		token[40];
	long long	stamp;			/* the claim's clock (stress-worker) */
	long long	start, end, lu;
} Run;

typedef struct TokEv			/* D, F, R, I lines by token */
{
	char		token[40];
	char		type;
	long long	t0;
} TokEv;

typedef struct HandlerEv		/* S, J lines */
{
	long long	id;
	int			attempt;
	char		type;
	long long	t0, t1;
} HandlerEv;

typedef struct Commit			/* Q lines */
{
	int			job;
	long long	send, ack;
} Commit;

typedef struct Hold			/* a rate-limited fail (R with t1 and hold_s) */
{
	int			job;
	long long	from, until;	/* its answer; its clock read before + hold */
} Hold;

typedef struct Rate
{
	long long	rate, per_s, burst;
} Rate;

static Job *jobs;
static size_t njobs, capjobs;
static long *jtab;
static size_t jcap;
static char **keys;
static size_t nkeys, capkeys;
static Run *runs;
static size_t nruns, capruns;
static TokEv *tevs;
static size_t ntevs, captevs;
static HandlerEv *hevs;
static size_t nhevs, caphevs;
static Commit *commits;
static size_t ncommits, capcommits;
static Hold *holds;
static size_t nholds, capholds;

static const char *label = "group-check";
static int	lease_s = 3, group_limit = 0, fifo = 0, commit_order = 0;
static long max_running = 0;
static Rate qrate, grate;
static long shown;
static long n_limit, n_order, n_rate, n_hold, n_maxrun, n_commit, n_other;

#define GROW(arr, n, cap, first) \
	do { if ((n) == (cap)) { (cap) = (cap) ? (cap) * 2 : (first); \
		(arr) = realloc((arr), (cap) * sizeof(*(arr))); } } while (0)

static void
violation(long *counter, const char *rule, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
violation(long *counter, const char *rule, const char *fmt, ...)
{
	va_list		ap;

	(*counter)++;
	if (shown++ >= 25)
		return;
	fprintf(stderr, "%s: VIOLATION %s: ", label, rule);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---------------------------------------------------------------- lookups */

static int
job_get(long long id)
{
	size_t		k;

	if (njobs * 2 >= jcap)
	{
		size_t		i;

		jcap = jcap ? jcap * 2 : 1 << 14;
		free(jtab);
		jtab = malloc(jcap * sizeof(long));
		memset(jtab, 0xff, jcap * sizeof(long));
		for (i = 0; i < njobs; i++)
		{
			k = ((unsigned long long) jobs[i].id * 0x9E3779B97F4A7C15ull) & (jcap - 1);
			while (jtab[k] >= 0)
				k = (k + 1) & (jcap - 1);
			jtab[k] = (long) i;
		}
	}
	k = ((unsigned long long) id * 0x9E3779B97F4A7C15ull) & (jcap - 1);
	while (jtab[k] >= 0)
	{
		if (jobs[jtab[k]].id == id)
			return (int) jtab[k];
		k = (k + 1) & (jcap - 1);
	}
	GROW(jobs, njobs, capjobs, 4096);
	memset(&jobs[njobs], 0, sizeof(Job));
	jobs[njobs].id = id;
	jobs[njobs].key = -1;
	jtab[k] = (long) njobs;
	return (int) njobs++;
}

static int
key_get(const char *s)
{
	size_t		i;

	/* few groups (tens): a linear search */
	for (i = 0; i < nkeys; i++)
		if (strcmp(keys[i], s) == 0)
			return (int) i;
	GROW(keys, nkeys, capkeys, 64);
	keys[nkeys] = strdup(s);
	return (int) nkeys++;
}

static int
parse_rate(const char *s, Rate *r)
{
	return sscanf(s, "%lld/%lld/%lld", &r->rate, &r->per_s, &r->burst) == 3 &&
		r->rate > 0 && r->per_s > 0 && r->burst > 0 ? 0 : -1;
}

/* ---------------------------------------------------------------- reading */

static void
read_file(const char *path)
{
	FILE	   *f = fopen(path, "r");
	char		line[1024], a[256], b[64], c[64], d[64], e[64], g[64], h[64], i8[64];
	long		lineno = 0;

	if (f == NULL)
	{
		perror(path);
		exit(2);
	}
	while (fgets(line, sizeof(line), f))
	{
		int			n;

		lineno++;
		if (line[0] == '\n' || line[0] == '#' || line[0] == 'E' || line[0] == 'H')
			continue;
		n = sscanf(line + 1, "%255s %63s %63s %63s %63s %63s %63s %63s", a, b, c, d, e, g, h, i8);
		switch (line[0])
		{
			case 'C':			/* C uid id token attempt claimed lu worker answered */
				if (n < 7)
					goto bad;
				GROW(runs, nruns, capruns, 16384);
				{
					Run		   *r = &runs[nruns++];

					memset(r, 0, sizeof(Run));
					r->job = job_get(atoll(b));
					snprintf(r->token, sizeof(r->token), "%s", c);
					r->attempt = atoi(d);
					r->stamp = atoll(e);
					r->lu = atoll(g);
					r->start = n >= 8 ? atoll(i8) : 0;	/* without --claim-clock: none */
				}
				break;
			case 'D':			/* D uid id token attempt status t0 t1 sqlstate */
			case 'F':			/* F uid id token attempt status t0 t1 */
			case 'R':			/* R uid id token attempt status t0 */
			case 'I':			/* I uid id token attempt */
				if (n < (line[0] == 'I' ? 4 : 6))
					goto bad;
				GROW(tevs, ntevs, captevs, 16384);
				snprintf(tevs[ntevs].token, sizeof(tevs[ntevs].token), "%s", c);
				tevs[ntevs].type = line[0];
				tevs[ntevs].t0 = line[0] == 'I' ? 0 : atoll(g);
				ntevs++;
				/* R uid id token attempt status t0 t1 hold_s: a rate-limited fail */
				if (line[0] == 'R' && n >= 8 && strcmp(e, "ok") == 0 && atoll(h) > 0)
				{
					GROW(holds, nholds, capholds, 256);
					holds[nholds].job = job_get(atoll(b));
					holds[nholds].from = atoll(h);
					holds[nholds].until = atoll(g) + atoll(i8) * 1000000;
					nholds++;
				}
				break;
			case 'S':			/* S uid id attempt start */
			case 'J':			/* J uid id attempt start end */
				if (n < (line[0] == 'S' ? 4 : 5))
					goto bad;
				GROW(hevs, nhevs, caphevs, 16384);
				hevs[nhevs].id = atoll(b);
				hevs[nhevs].attempt = atoi(c);
				hevs[nhevs].type = line[0];
				hevs[nhevs].t0 = atoll(d);
				hevs[nhevs].t1 = line[0] == 'J' ? atoll(e) : 0;
				nhevs++;
				break;
			case 'Q':			/* Q uid id key seq send ack */
				if (n < 6)
					goto bad;
				GROW(commits, ncommits, capcommits, 16384);
				{
					int			ji = job_get(atoll(b));

					/* a K line with a key (the final place) takes precedence */
					if (!jobs[ji].keyed_by_dump)
					{
						jobs[ji].key = key_get(c);
						jobs[ji].seq = atoll(d);
					}
					commits[ncommits].job = ji;
					commits[ncommits].send = atoll(e);
					commits[ncommits].ack = atoll(g);
					ncommits++;
				}
				break;
			case 'B':			/* B id uid state attempt token claimed finished ... */
				if (n < 7)
					goto bad;
				{
					Job		   *j = &jobs[job_get(atoll(a))];

					j->in_dump = 1;
					snprintf(j->state, sizeof(j->state), "%s", c);
					snprintf(j->token, sizeof(j->token), "%s", e);
					j->claimed = atoll(g);
					j->finished = atoll(h);
				}
				break;
			case 'K':			/* K id uid key seq */
				if (n < 4)
					goto bad;
				{
					int			ji = job_get(atoll(a));

					/* "-": history keeps no group of a completed job (Q has it) */
					if (strcmp(c, "-") != 0)
					{
						jobs[ji].key = key_get(c);
						jobs[ji].seq = atoll(d);
						jobs[ji].keyed_by_dump = 1;
					}
				}
				break;
			default:
				goto bad;
		}
		continue;
bad:
		fprintf(stderr, "%s: %s:%ld: unparsable line: %s", label, path, lineno, line);
		n_other++;
	}
	fclose(f);
}

/* ---------------------------------------------------------------- runs */

static int
tev_cmp(const void *x, const void *y)
{
	return strcmp(((const TokEv *) x)->token, ((const TokEv *) y)->token);
}

static int
hev_cmp(const void *x, const void *y)
{
	const HandlerEv *a = x, *b = y;

	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	if (a->attempt != b->attempt)
		return a->attempt < b->attempt ? -1 : 1;
	return a->type - b->type;	/* J before S */
}

/*
 * end_runs
 *	  The end of each stress-worker run (the rules in the header), and the
 *	  jobq-worker handler runs from their S and J lines.
 */
static long n_jw_long;

static void
end_runs(void)
{
	size_t		i, k, base = nruns;

	qsort(tevs, ntevs, sizeof(TokEv), tev_cmp);
	for (i = 0; i < base; i++)
	{
		Run		   *r = &runs[i];
		TokEv		probe;
		size_t		lo = 0, hi = ntevs;
		int			in_flight = 0;
		const Job  *j = &jobs[r->job];

		r->end = r->lu;
		snprintf(probe.token, sizeof(probe.token), "%s", r->token);
		while (lo < hi)
		{
			size_t		mid = (lo + hi) / 2;

			if (strcmp(tevs[mid].token, probe.token) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (k = lo; k < ntevs && strcmp(tevs[k].token, r->token) == 0; k++)
		{
			if (tevs[k].type == 'I')
				in_flight++;
			else if (tevs[k].t0 > 0)
			{
				if (tevs[k].t0 < r->end)
					r->end = tevs[k].t0;
				if (tevs[k].type == 'D')
					in_flight--;
			}
		}
		/* a complete sent at an unknown time */
		if (in_flight > 0)
		{
			long long	e = strcmp(j->state, "completed") == 0 &&
				strcmp(j->token, r->token) == 0 && j->finished > r->start ? j->finished : r->start;

			if (e < r->end)
				r->end = e;
		}
	}
	qsort(hevs, nhevs, sizeof(HandlerEv), hev_cmp);
	for (i = 0; i < nhevs; i++)
	{
		HandlerEv  *s = &hevs[i];
		Run		   *r;

		if (s->type != 'S')
			continue;
		GROW(runs, nruns, capruns, 16384);
		r = &runs[nruns++];
		memset(r, 0, sizeof(Run));
		r->job = job_get(s->id);
		r->jw = 1;
		r->attempt = s->attempt;
		r->start = s->t0;
		r->end = s->t0;
		r->lu = s->t0 + (long long) lease_s * 1000000;	/* at the latest */
		/* its J sorts just before it */
		if (i > 0 && hevs[i - 1].type == 'J' && hevs[i - 1].id == s->id &&
			hevs[i - 1].attempt == s->attempt && hevs[i - 1].t1 > s->t0)
			r->end = hevs[i - 1].t1;
		if (r->end - r->start >= (long long) lease_s * 1000000)
		{
			n_jw_long++;
			r->end = r->start;
		}
	}
}

/* ---------------------------------------------------------------- overlap */

typedef struct Edge
{
	long long	t;
	int			delta;			/* -1 end, +1 start: ends first at a tie */
	int			run;
} Edge;

static int
edge_cmp(const void *x, const void *y)
{
	const Edge *a = x, *b = y;

	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	return a->delta - b->delta;
}

/*
 * max_overlap
 *	  The most runs among sel[0..n) (indexes in runs) that overlap at one
 *	  moment; each time more than limit do (limit > 0), a violation of
 *	  *counter.
 */
static long
max_overlap(const int *sel, size_t n, long limit, long *counter, const char *rule,
			const char *what)
{
	Edge	   *e = malloc((2 * n + 1) * sizeof(Edge));
	size_t		i, ne = 0;
	long		active = 0, peak = 0;

	for (i = 0; i < n; i++)
	{
		const Run  *r = &runs[sel[i]];

		if (r->end <= r->start || r->start <= 0)
			continue;
		e[ne++] = (Edge) {r->start, 1, sel[i]};
		e[ne++] = (Edge) {r->end, -1, sel[i]};
	}
	qsort(e, ne, sizeof(Edge), edge_cmp);
	for (i = 0; i < ne; i++)
	{
		active += e[i].delta;
		if (active > peak)
			peak = active;
		if (e[i].delta > 0 && limit > 0 && active > limit)
		{
			const Run  *r = &runs[e[i].run];

			violation(counter, rule,
					  "%s: %ld runs at once (limit %ld) when job %lld (%s, attempt %d) started at %lld",
					  what, active, limit, jobs[r->job].id, r->jw ? "jobq-worker" : r->token,
					  r->attempt, r->start);
		}
	}
	free(e);
	return peak;
}

/* the runs of each key, in key order: sel holds their indexes */
static int *by_key;
static size_t *key_first;

static int
run_key_cmp(const void *x, const void *y)
{
	const Run  *a = &runs[*(const int *) x], *b = &runs[*(const int *) y];
	int			ka = jobs[a->job].key, kb = jobs[b->job].key;

	if (ka != kb)
		return ka < kb ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return 0;
}

static void
index_by_key(void)
{
	size_t		i;

	by_key = malloc((nruns + 1) * sizeof(int));
	key_first = calloc(nkeys + 2, sizeof(size_t));
	for (i = 0; i < nruns; i++)
		by_key[i] = (int) i;
	qsort(by_key, nruns, sizeof(int), run_key_cmp);
	/* key_first[k] .. key_first[k + 1]: the runs of key k (keyless first) */
	{
		size_t		p = 0;

		while (p < nruns && jobs[runs[by_key[p]].job].key < 0)
			p++;
		for (size_t k = 0; k < nkeys; k++)
		{
			key_first[k] = p;
			while (p < nruns && jobs[runs[by_key[p]].job].key == (int) k)
				p++;
		}
		key_first[nkeys] = p;
	}
}

/*
 * check_group_limit
 *	  Rule 1: at most group_limit runs of one key at once.
 */
static long
check_group_limit(void)
{
	long		peak = 0;

	for (size_t k = 0; k < nkeys; k++)
	{
		char		what[300];
		long		p;

		snprintf(what, sizeof(what), "group %s", keys[k]);
		p = max_overlap(by_key + key_first[k], key_first[k + 1] - key_first[k], group_limit,
						&n_limit, "group-limit", what);
		if (p > peak)
			peak = p;
	}
	return peak;
}

/*
 * late_start
 *	  Whether run r's recorded start came after its claim had surely lost
 *	  the job: its own lease had ended (a stress-worker run: locked_until
 *	  is not after the start), or a later attempt of its job had already
 *	  started (the first runs of key k, up to p, in start order).  Such a
 *	  run's worker was held up between the claim and the record of its
 *	  start, and the job went on without it.
 */
static int
late_start(const Run *r, size_t k, size_t p)
{
	if (!r->jw && r->lu > 0 && r->lu <= r->start)
		return 1;
	for (size_t q = key_first[k]; q < p; q++)
	{
		const Run  *o = &runs[by_key[q]];

		if (o->job == r->job && o->attempt > r->attempt && o->start > 0)
			return 1;
	}
	return 0;
}

/*
 * check_fifo_order
 *	  Rule 2: in each group, runs start in group_seq order.  A run of a
 *	  lower seq after a higher one started is allowed only when it started
 *	  late (late_start): a re-execution after the lease expired took its
 *	  place, and ran first.
 */
static long n_late;

static long
check_fifo_order(void)
{
	long		checked = 0;

	for (size_t k = 0; k < nkeys; k++)
	{
		long long	max_seq = -1, max_job = 0;

		for (size_t p = key_first[k]; p < key_first[k + 1]; p++)
		{
			const Run  *r = &runs[by_key[p]];
			const Job  *j = &jobs[r->job];

			if (r->start <= 0)
				continue;		/* no start known */
			checked++;
			if (j->seq < max_seq)
			{
				if (late_start(r, k, p))
					n_late++;
				else
					violation(&n_order, "fifo-order",
							  "group %s: job %lld (seq %lld, attempt %d) started at %lld after job %lld (seq %lld) had started",
							  keys[k], j->id, j->seq, r->attempt, r->start, max_job, max_seq);
			}
			if (j->seq > max_seq)
			{
				max_seq = j->seq;
				max_job = j->id;
			}
		}
	}
	return checked;
}

static int
ll_cmp(const void *x, const void *y)
{
	long long	a = *(const long long *) x, b = *(const long long *) y;

	return a < b ? -1 : a > b;
}

/*
 * window_excess
 *	  For claim times t[0..n) (sorted here): the most claims in any window
 *	  beyond W/T, max over i <= j of (j - i + 1) - (t_j - t_i) * rate /
 *	  per.  GCRA allows at most burst.
 */
static double
window_excess(long long *t, size_t n, const Rate *r)
{
	double		per_us = (double) r->per_s * 1e6, best = 0, min_h = 0;

	qsort(t, n, sizeof(long long), ll_cmp);
	for (size_t j = 0; j < n; j++)
	{
		/* h(k) = k - (t_k - t_0) * rate / per; excess = h(j) - min h(i) + 1 */
		double		h = (double) j - (double) (t[j] - t[0]) * (double) r->rate / per_us;

		if (j == 0 || h < min_h)
			min_h = h;
		if (h - min_h + 1 > best)
			best = h - min_h + 1;
	}
	return best;
}

/*
 * claim_times
 *	  The claim times of the runs of key (-1: all), by the claim's clock:
 *	  every stress-worker claim, and the last claim of each job whose
 *	  token no stress-worker recorded (a jobq-worker's).  Returns how many
 *	  in *t (malloc'd).
 */
static int
str_cmp(const void *x, const void *y)
{
	return strcmp(*(char *const *) x, *(char *const *) y);
}

static size_t
claim_times(int key, long long **t)
{
	size_t		n = 0, ntok = 0;
	char	  **toks = malloc((nruns + 1) * sizeof(char *));

	*t = malloc((nruns + njobs + 1) * sizeof(long long));
	for (size_t i = 0; i < nruns; i++)
		if (!runs[i].jw && (key < 0 || jobs[runs[i].job].key == key))
		{
			(*t)[n++] = runs[i].stamp;
			toks[ntok++] = runs[i].token;
		}
	qsort(toks, ntok, sizeof(char *), str_cmp);
	for (size_t i = 0; i < njobs; i++)
	{
		char	   *tk = jobs[i].token;

		if (!jobs[i].in_dump || jobs[i].claimed <= 0 || (key >= 0 && jobs[i].key != key))
			continue;
		if (bsearch(&tk, toks, ntok, sizeof(char *), str_cmp) == NULL)
			(*t)[n++] = jobs[i].claimed;
	}
	free(toks);
	return n;
}

/*
 * check_rates
 *	  Rule 3: the claims of the queue, and of each group, in any window W
 *	  number at most burst + W/T.  Returns the largest excess seen (the
 *	  queue's in *q_excess, the groups' in *g_excess).
 */
static void
check_rates(double *q_excess, double *g_excess, size_t *nclaims)
{
	long long  *t;
	size_t		n;

	*q_excess = *g_excess = 0;
	*nclaims = 0;
	if (qrate.rate > 0)
	{
		n = claim_times(-1, &t);
		*nclaims = n;
		*q_excess = window_excess(t, n, &qrate);
		if (*q_excess > (double) qrate.burst + 1e-6)
			violation(&n_rate, "rate", "queue: %.2f claims in a window beyond W/T (burst %lld, %lld per %lld s)",
					  *q_excess, qrate.burst, qrate.rate, qrate.per_s);
		free(t);
	}
	if (grate.rate > 0)
		for (size_t k = 0; k < nkeys; k++)
		{
			double		x;

			n = claim_times((int) k, &t);
			x = window_excess(t, n, &grate);
			if (x > *g_excess)
				*g_excess = x;
			if (x > (double) grate.burst + 1e-6)
				violation(&n_rate, "group-rate",
						  "group %s: %.2f claims in a window beyond W/T (burst %lld, %lld per %lld s)",
						  keys[k], x, grate.burst, grate.rate, grate.per_s);
			free(t);
		}
}

/*
 * check_rate_holds
 *	  A rate-limited fail holds the queue's rate (with --rate) and its
 *	  group's (with --group-rate) until its clock + hold: no claim of the
 *	  queue, or of the group, has its clock between the fail's answer and
 *	  then.  (A claim whose clock is after the answer took its lock after
 *	  the fail committed, and found tat moved on: GCRA lets it take
 *	  nothing before the hold's end.)
 */
static long
count_in(const long long *t, size_t n, long long from, long long until)
{
	size_t		lo = 0, hi = n;

	while (lo < hi)
	{
		size_t		mid = (lo + hi) / 2;

		if (t[mid] < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	hi = lo;
	while (hi < n && t[hi] < until)
		hi++;
	return (long) (hi - lo);
}

static void
check_rate_holds(void)
{
	long long  *t;
	size_t		n;

	if (nholds == 0 || (qrate.rate == 0 && grate.rate == 0))
		return;
	if (qrate.rate > 0)
	{
		n = claim_times(-1, &t);
		qsort(t, n, sizeof(long long), ll_cmp);
		for (size_t i = 0; i < nholds; i++)
		{
			long		k = count_in(t, n, holds[i].from, holds[i].until);

			if (k > 0)
				violation(&n_hold, "rate-hold",
						  "queue: %ld claims in the %lld us after job %lld was rate limited (held until %lld)",
						  k, holds[i].until - holds[i].from, jobs[holds[i].job].id, holds[i].until);
		}
		free(t);
	}
	if (grate.rate > 0)
		for (size_t i = 0; i < nholds; i++)
		{
			int			key = jobs[holds[i].job].key;
			long		k;

			if (key < 0)
				continue;
			n = claim_times(key, &t);
			qsort(t, n, sizeof(long long), ll_cmp);
			k = count_in(t, n, holds[i].from, holds[i].until);
			if (k > 0)
				violation(&n_hold, "group-rate-hold",
						  "group %s: %ld claims in the %lld us after job %lld was rate limited",
						  keys[key], k, holds[i].until - holds[i].from, jobs[holds[i].job].id);
			free(t);
		}
}

/*
 * check_max_running
 *	  Rule 4: at most max_running runs of the queue at once.
 */
static long
check_max_running(void)
{
	int		   *sel = malloc((nruns + 1) * sizeof(int));
	long		peak;

	for (size_t i = 0; i < nruns; i++)
		sel[i] = (int) i;
	peak = max_overlap(sel, nruns, max_running, &n_maxrun, "max-running", "queue");
	free(sel);
	return peak;
}

/*
 * check_commit_order
 *	  In each group, a job whose enqueue's COMMIT came back before another
 *	  job's enqueue was sent has the lower group_seq.
 */
static int
commit_send_cmp(const void *x, const void *y)
{
	const Commit *a = x, *b = y;
	int			ka = jobs[a->job].key, kb = jobs[b->job].key;

	if (ka != kb)
		return ka < kb ? -1 : 1;
	return a->send < b->send ? -1 : a->send > b->send;
}

static int
commit_ack_cmp(const void *x, const void *y)
{
	const Commit *a = *(Commit * const *) x, *b = *(Commit * const *) y;

	return a->ack < b->ack ? -1 : a->ack > b->ack;
}

static long
check_commit_order(void)
{
	size_t		i, s, e;
	long		pairs = 0;
	Commit	  **by_ack = malloc((ncommits + 1) * sizeof(Commit *));

	/* the jobs that exist (an enqueue whose COMMIT answer was lost may not) */
	for (i = 0, e = 0; i < ncommits; i++)
		if (jobs[commits[i].job].in_dump)
			commits[e++] = commits[i];
	ncommits = e;
	qsort(commits, ncommits, sizeof(Commit), commit_send_cmp);
	for (s = 0; s < ncommits; s = e)
	{
		size_t		a = 0, na = 0;
		long long	max_seq = -1, max_id = 0;

		for (e = s; e < ncommits && jobs[commits[e].job].key == jobs[commits[s].job].key; e++)
			by_ack[na++] = &commits[e];
		qsort(by_ack, na, sizeof(Commit *), commit_ack_cmp);
		for (i = s; i < e; i++)
		{
			const Job  *b = &jobs[commits[i].job];

			while (a < na && by_ack[a]->ack < commits[i].send)
				if (by_ack[a]->ack == 0)
					a++;		/* the answer was lost: no known commit time */
				else
			{
				const Job  *x = &jobs[by_ack[a]->job];

				if (x->seq > max_seq)
				{
					max_seq = x->seq;
					max_id = x->id;
				}
				a++;
			}
			if (max_seq >= 0)
				pairs++;
			if (max_seq >= b->seq)
				violation(&n_commit, "commit-order",
						  "group %s: job %lld (seq %lld) was enqueued after job %lld (seq %lld) had committed",
						  keys[b->key], b->id, b->seq, max_id, max_seq);
		}
	}
	free(by_ack);
	return pairs;
}

/*
 * check_keys
 *	  Every job of the dump has a key, and no two jobs of one group the
 *	  same group_seq.
 */
static int
job_key_seq_cmp(const void *x, const void *y)
{
	const Job  *a = &jobs[*(const int *) x], *b = &jobs[*(const int *) y];

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static void
check_keys(void)
{
	int		   *v = malloc((njobs + 1) * sizeof(int));
	size_t		n = 0;

	for (size_t i = 0; i < njobs; i++)
	{
		if (jobs[i].in_dump && jobs[i].key < 0)
			violation(&n_other, "no-key", "job %lld has no group key", jobs[i].id);
		/* (a job of an enqueue whose COMMIT answer was lost may not exist) */
		if (jobs[i].in_dump && jobs[i].key >= 0)
			v[n++] = (int) i;
	}
	qsort(v, n, sizeof(int), job_key_seq_cmp);
	for (size_t i = 1; i < n; i++)
		if (jobs[v[i]].key == jobs[v[i - 1]].key && jobs[v[i]].seq == jobs[v[i - 1]].seq)
			violation(&n_other, "seq-twice", "group %s: jobs %lld and %lld both have seq %lld",
					  keys[jobs[v[i]].key], jobs[v[i - 1]].id, jobs[v[i]].id, jobs[v[i]].seq);
	free(v);
}

int
main(int argc, char **argv)
{
	long		peak_key = 0, peak_queue = 0, order_runs = 0, pairs = 0, jw = 0, ndump = 0;
	double		qx = 0, gx = 0;
	size_t		nclaims = 0;

	for (int ai = 1; ai < argc; ai++)
	{
		if (strcmp(argv[ai], "--label") == 0 && ai + 1 < argc)
			label = argv[++ai];
		else if (strcmp(argv[ai], "--lease") == 0 && ai + 1 < argc)
			lease_s = atoi(argv[++ai]);
		else if (strcmp(argv[ai], "--group-limit") == 0 && ai + 1 < argc)
			group_limit = atoi(argv[++ai]);
		else if (strcmp(argv[ai], "--fifo") == 0)
			fifo = 1;
		else if (strcmp(argv[ai], "--max-running") == 0 && ai + 1 < argc)
			max_running = atol(argv[++ai]);
		else if (strcmp(argv[ai], "--commit-order") == 0)
			commit_order = 1;
		else if (strcmp(argv[ai], "--rate") == 0 && ai + 1 < argc)
		{
			if (parse_rate(argv[++ai], &qrate) != 0)
				return fprintf(stderr, "--rate RATE/PER_S/BURST\n"), 2;
		}
		else if (strcmp(argv[ai], "--group-rate") == 0 && ai + 1 < argc)
		{
			if (parse_rate(argv[++ai], &grate) != 0)
				return fprintf(stderr, "--group-rate RATE/PER_S/BURST\n"), 2;
		}
		else if (argv[ai][0] == '-')
			return fprintf(stderr, "stress-group-check: unknown option %s\n", argv[ai]), 2;
		else
			read_file(argv[ai]);
	}
	if (fifo)
		group_limit = 1;
	end_runs();
	index_by_key();
	check_keys();
	for (size_t i = 0; i < nruns; i++)
		jw += runs[i].jw;
	for (size_t i = 0; i < njobs; i++)
		ndump += jobs[i].in_dump;
	if (group_limit > 0)
		peak_key = check_group_limit();
	if (fifo)
		order_runs = check_fifo_order();
	check_rates(&qx, &gx, &nclaims);
	check_rate_holds();
	peak_queue = check_max_running();
	if (commit_order)
		pairs = check_commit_order();
	{
		long		bad = n_limit + n_order + n_rate + n_hold + n_maxrun + n_commit + n_other;

		printf("%s: groups=%zu jobs=%ld runs=%zu (jobq-worker %ld, left out %ld) "
			   "peak-per-group=%ld (limit %d) peak-queue=%ld (max_running %ld) "
			   "order-runs=%ld (late starts %ld) rate-claims=%zu window-excess=%.2f (burst %lld) "
			   "group-window-excess=%.2f (burst %lld) rate-holds=%zu commit-order-pairs=%ld "
			   "violations: group-limit=%ld fifo-order=%ld rate=%ld rate-hold=%ld max-running=%ld "
			   "commit-order=%ld other=%ld: %s\n",
			   label, nkeys, ndump, nruns, jw, n_jw_long, peak_key, group_limit, peak_queue,
			   max_running, order_runs, n_late, nclaims, qx, qrate.burst, gx, grate.burst, nholds, pairs,
			   n_limit, n_order, n_rate, n_hold, n_maxrun, n_commit, n_other, bad ? "FAIL" : "PASS");
		return bad ? 1 : 0;
	}
}
