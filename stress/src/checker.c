/*
 * checker.c: check a recorded history against the final database state.
 *
 * usage: stress-check [--allow-dead] [--order] [--expect-stale] [--label L] FILE...
 *
 * Reads history lines written by stress-producer (E), stress-worker (C, D,
 * F, H, R), the jobq-worker handler (S, J) and the database dump written by
 * run.sh (B), in any order and from any number of files:
 *   B <id> <uid> <state> <attempt> <token|-> <claimed_us> <finished_us>
 *     <run_at_us> <priority> <hang>       one row of jobq.jobs/jobq.history
 *   I <uid> <id> <token> <attempt>      stress-worker: complete in flight
 *   S <uid> <id> <attempt> <start_us>     jobq-worker handler started
 *   J <uid> <id> <attempt> <start_us> <end_us>  jobq-worker handler ended
 *   G, W, X (stress-flows), Q (jobq.deps, dumped by run.sh) and Y (FL's
 *     retries): the flows of scenario FL, read and judged by
 *     checker-flows.c; a retried job's attempts start again at 1
 *
 * Verdicts (any non-zero is a violation, exit 1):
 *   lost        acknowledged enqueues (E ok) that are not completed or dead
 *   unexpected  executions or rows of jobs never enqueued (or whose
 *               enqueue failed)
 *   accepted    a completed job without exactly one accepted completion
 *               token, a job whose accepted completion is not in the
 *               database, a complete answered stale/error that was applied
 *   overlaps    S2: two claims of one job whose validity intervals overlap
 *               ([claimed, locked_until), cut short by an accepted fail or
 *               release; the accepted token's runs to finished_at), or a
 *               claim after the accepted one
 *   unexplained duplicates: a re-execution that is not after the previous
 *               lease expired, an accepted fail or a release
 *   other       non-terminal jobs at the end, dead jobs without
 *               --allow-dead (except payload hang=1), attempts not
 *               increasing, duplicate rows
 * With --order (S5): claimed_at >= run_at for every job, and each claim
 * took the smallest (priority, run_at, id) among the jobs ready then.
 * With --expect-stale (P1, partitioned workers): at least one complete
 * was answered stale; the other rules make that the only way the stopped
 * worker's job ran twice (one accepted token, duplicates after expiry).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checker.h"

Uid		   *uids;
size_t		nuids;
static size_t capuids;
static int *htab;
static size_t hcap;
Row		   *rows;
size_t		nrows;
static size_t caprows;
Ev		   *evs;
size_t		nevs;
static size_t capevs;

static int	allow_dead = 0, order_mode = 0, expect_stale = 0;
const char *label = "check";
static long viol_shown = 0;

static long n_lost, n_unexpected, n_accepted, n_overlap, n_unexplained, n_other;

void
violation(long *counter, const char *fmt, const char *uid, const char *detail)
{
	(*counter)++;
	if (viol_shown++ < 25)
		fprintf(stderr, "%s: VIOLATION %s uid=%s %s\n", label, fmt, uid, detail ? detail : "");
}

static unsigned long
hash(const char *s)
{
	unsigned long h = 1469598103934665603UL;

	while (*s)
		h = (h ^ (unsigned char) *s++) * 1099511628211UL;
	return h;
}

static void
rehash(void)
{
	size_t		i;

	hcap = hcap ? hcap * 2 : 1 << 16;
	free(htab);
	htab = malloc(hcap * sizeof(int));
	memset(htab, 0xff, hcap * sizeof(int));
	for (i = 0; i < nuids; i++)
	{
		size_t		k = hash(uids[i].uid) & (hcap - 1);

		while (htab[k] >= 0)
			k = (k + 1) & (hcap - 1);
		htab[k] = (int) i;
	}
}

int
uid_get(const char *s)
{
	size_t		k;

	if (nuids * 2 >= hcap)
		rehash();
	k = hash(s) & (hcap - 1);
	while (htab[k] >= 0)
	{
		if (strcmp(uids[htab[k]].uid, s) == 0)
			return htab[k];
		k = (k + 1) & (hcap - 1);
	}
	if (nuids == capuids)
	{
		capuids = capuids ? capuids * 2 : 4096;
		uids = realloc(uids, capuids * sizeof(Uid));
	}
	memset(&uids[nuids], 0, sizeof(Uid));
	uids[nuids].uid = strdup(s);
	uids[nuids].brow = -1;
	htab[k] = (int) nuids;
	return (int) nuids++;
}

static Ev *
ev_new(void)
{
	if (nevs == capevs)
	{
		capevs = capevs ? capevs * 2 : 65536;
		evs = realloc(evs, capevs * sizeof(Ev));
	}
	memset(&evs[nevs], 0, sizeof(Ev));
	return &evs[nevs++];
}

static void
read_file(const char *path)
{
	FILE	   *f = fopen(path, "r");
	char		line[1024], a[256], b[64], c[64], d[64], e[64], g[64], hh[64], i9[64], j10[64],
				k11[64];
	long		lineno = 0;

	if (f == NULL)
	{
		perror(path);
		exit(2);
	}
	while (fgets(line, sizeof(line), f))
	{
		int			n;
		Ev		   *ev;

		lineno++;
		if (line[0] == '\n' || line[0] == '#')
			continue;
		n = sscanf(line + 1, "%255s %63s %63s %63s %63s %63s %63s %63s %63s %63s", a, b, c, d, e,
				   g, hh, i9, j10, k11);
		switch (line[0])
		{
			case 'E':
				if (n < 2)
					goto bad;
				{
					int			ui = uid_get(a);
					Uid		   *u = &uids[ui];

					if (strcmp(b, "ok") == 0)
					{
						u->enq_ok++;
						u->enq_id = n >= 3 ? atoll(c) : 0;
					}
					else if (strcmp(b, "fail") == 0)
						u->enq_fail++;
					else
						u->enq_unknown++;
				}
				break;
			case 'B':
				/* B id uid state attempt token claimed finished run_at prio hang */
				if (n < 10)
					goto bad;
				if (nrows == caprows)
				{
					caprows = caprows ? caprows * 2 : 65536;
					rows = realloc(rows, caprows * sizeof(Row));
				}
				{
					Row		   *r = &rows[nrows];

					r->id = atoll(a);
					r->u = uid_get(b);
					snprintf(r->state, sizeof(r->state), "%s", c);
					r->attempt = atoi(d);
					snprintf(r->token, sizeof(r->token), "%s", e);
					r->claimed = atoll(g);
					r->finished = atoll(hh);
					r->run_at = atoll(i9);
					r->priority = atoi(j10);
					r->hang = atoi(k11);
					if (uids[r->u].brow >= 0)
						violation(&n_other, "duplicate-row", uids[r->u].uid, "(a uid has two rows)");
					uids[r->u].brow = (int) nrows;
					uids[r->u].nb++;
					nrows++;
				}
				break;
			case 'C':			/* C uid id token attempt claimed lu worker [answered] */
				if (n < 6)
					goto bad;
				ev = ev_new();
				ev->u = uid_get(a);
				ev->type = 'C';
				ev->id = atoll(b);
				snprintf(ev->token, sizeof(ev->token), "%s", c);
				ev->attempt = atoi(d);
				ev->t0 = atoll(e);
				ev->t1 = atoll(g);
				ev->t2 = n >= 8 ? atoll(i9) : 0;
				break;
			case 'D':			/* D uid id token attempt status t0 t1 sqlstate */
			case 'F':
				if (n < 7)
					goto bad;
				ev = ev_new();
				ev->u = uid_get(a);
				ev->type = line[0];
				ev->id = atoll(b);
				snprintf(ev->token, sizeof(ev->token), "%s", c);
				ev->attempt = atoi(d);
				snprintf(ev->status, sizeof(ev->status), "%s", e);
				ev->t0 = atoll(g);
				ev->t1 = atoll(hh);
				break;
			case 'I':			/* I uid id token attempt: complete in flight */
			case 'H':			/* H uid id token attempt */
				if (n < 4)
					goto bad;
				ev = ev_new();
				ev->u = uid_get(a);
				ev->type = line[0];
				ev->id = atoll(b);
				snprintf(ev->token, sizeof(ev->token), "%s", c);
				ev->attempt = atoi(d);
				break;
			case 'R':			/* R uid id token attempt status t0 */
				if (n < 6)
					goto bad;
				ev = ev_new();
				ev->u = uid_get(a);
				ev->type = 'R';
				ev->id = atoll(b);
				snprintf(ev->token, sizeof(ev->token), "%s", c);
				ev->attempt = atoi(d);
				snprintf(ev->status, sizeof(ev->status), "%s", e);
				ev->t0 = atoll(g);
				break;
			case 'S':			/* S uid id attempt start */
			case 'J':			/* J uid id attempt start end */
				if (n < 4)
					goto bad;
				ev = ev_new();
				ev->u = uid_get(a);
				ev->type = line[0];
				ev->id = atoll(b);
				ev->attempt = atoi(c);
				ev->t0 = atoll(d);
				ev->t1 = n >= 5 ? atoll(e) : 0;
				break;
			case 'G':			/* flows (FL): checker-flows.c */
			case 'W':
			case 'X':
			case 'Q':
			case 'Y':
				if (flows_read_line(line) != 0)
					goto bad;
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

static int
ev_cmp(const void *x, const void *y)
{
	const Ev   *a = x, *b = y;

	if (a->u != b->u)
		return a->u < b->u ? -1 : 1;
	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	if (a->type == 'C' && a->t0 != b->t0)
		return a->t0 < b->t0 ? -1 : 1;
	if (a->type == 'J' && a->attempt != b->attempt)
		return a->attempt < b->attempt ? -1 : 1;
	return 0;
}

static int
row_claim_cmp(const void *x, const void *y)
{
	const Row  *a = *(Row * const *) x, *b = *(Row * const *) y;

	if (a->claimed != b->claimed)
		return a->claimed < b->claimed ? -1 : 1;
	if (a->priority != b->priority)
		return a->priority < b->priority ? -1 : 1;
	if (a->run_at != b->run_at)
		return a->run_at < b->run_at ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

static int
key_less(const Row *a, const Row *b)
{
	if (a->priority != b->priority)
		return a->priority < b->priority;
	if (a->run_at != b->run_at)
		return a->run_at < b->run_at;
	return a->id < b->id;
}

static long
check_order(void)
{
	Row		  **v = malloc(nrows * sizeof(Row *));
	char	   *done = calloc(nrows, 1);
	size_t		i, j, n = 0;
	long		bad = 0;
	char		det[256];

	for (i = 0; i < nrows; i++)
		if (rows[i].claimed > 0)
			v[n++] = &rows[i];
	qsort(v, n, sizeof(Row *), row_claim_cmp);
	for (i = 0; i < n; i++)
	{
		Row		   *r = v[i];

		if (r->claimed < r->run_at)
		{
			snprintf(det, sizeof(det), "id=%lld claimed %lld us before its run_at", r->id,
					 r->run_at - r->claimed);
			violation(&bad, "ran-before-run_at", uids[r->u].uid, det);
		}
		for (j = 0; j < n; j++)
		{
			Row		   *o = v[j];

			if (o == r || done[o - rows] || o->claimed < r->claimed)
				continue;
			if (o->claimed == r->claimed && !key_less(o, r))
				continue;
			/* o was still unclaimed when r was claimed */
			if (o->run_at <= r->claimed && key_less(o, r))
			{
				snprintf(det, sizeof(det),
						 "id=%lld (prio %d) claimed while ready id=%lld (prio %d, run_at %lld us earlier) waited",
						 r->id, r->priority, o->id, o->priority, r->run_at - o->run_at);
				violation(&bad, "order", uids[r->u].uid, det);
				break;
			}
		}
		done[r - rows] = 1;
	}
	free(v);
	free(done);
	return bad;
}

int
main(int argc, char **argv)
{
	int			ai;
	size_t		i, s;
	long		n_enq = 0, n_ok = 0, n_fail = 0, n_unk = 0, n_recovered = 0, n_exec = 0,
				n_completed = 0, n_dead = 0, n_dup = 0, n_dup_lease = 0, n_dup_jw = 0,
				n_retry = 0, n_order = 0, n_claimed_mismatch = 0, n_hang_dead = 0,
				n_stale = 0;
	char		det[512];

	for (ai = 1; ai < argc; ai++)
	{
		if (strcmp(argv[ai], "--allow-dead") == 0)
			allow_dead = 1;
		else if (strcmp(argv[ai], "--order") == 0)
			order_mode = 1;
		else if (strcmp(argv[ai], "--expect-stale") == 0)
			expect_stale = 1;
		else if (strcmp(argv[ai], "--label") == 0 && ai + 1 < argc)
			label = argv[++ai];
		else
			read_file(argv[ai]);
	}
	qsort(evs, nevs, sizeof(Ev), ev_cmp);

	s = 0;
	for (i = 0; i < nuids; i++)
	{
		Uid		   *u = &uids[i];
		Row		   *r = u->brow >= 0 ? &rows[u->brow] : NULL;
		size_t		e0 = s, e1, k, m;
		int			ncl = 0, nj = 0, accepted_tokens = 0, executed = 0;
		const char *acc_tok = NULL;
		Ev		   *prev = NULL;

		while (s < nevs && evs[s].u == (int) i)
			s++;
		e1 = s;
		if (u->enq_ok + u->enq_fail + u->enq_unknown > 1)
			violation(&n_other, "uid-reused", u->uid, "(the producer wrote it twice)");
		n_enq += u->enq_ok + u->enq_fail + u->enq_unknown;
		n_ok += u->enq_ok;
		n_fail += u->enq_fail;
		n_unk += u->enq_unknown;
		for (k = e0; k < e1; k++)
			if (evs[k].type == 'C' || evs[k].type == 'S')
				executed = 1;

		/* unexpected: executions or rows of jobs never (successfully) enqueued */
		if ((executed || r) && u->enq_ok == 0 && u->enq_unknown == 0)
			violation(&n_unexpected, u->enq_fail ? "failed-enqueue-exists" : "unexpected", u->uid,
					  r ? "(in the database)" : "(executed)");
		if (u->enq_unknown && r)
			n_recovered++;
		if (r && u->enq_ok && u->enq_id != r->id)
		{
			snprintf(det, sizeof(det), "enqueue returned id %lld, row has %lld", u->enq_id, r->id);
			violation(&n_other, "id-mismatch", u->uid, det);
		}
		/* lost: acknowledged but not terminal (or vanished); a job of a
		 * flow may end cancelled or waiting: flows_check judges it */
		if (flows_member((int) i))
			;
		else if (u->enq_ok && (r == NULL || (strcmp(r->state, "completed") != 0 &&
										strcmp(r->state, "dead") != 0)))
		{
			snprintf(det, sizeof(det), "enqueued id %lld, final state %s", u->enq_id,
					 r ? r->state : "(no row)");
			violation(&n_lost, "lost", u->uid, det);
		}
		else if (r && u->enq_ok == 0 && strcmp(r->state, "completed") != 0 &&
				 strcmp(r->state, "dead") != 0)
			violation(&n_other, "not-terminal", u->uid, r->state);
		if (r && strcmp(r->state, "completed") == 0)
		{
			n_completed++;
			/* every consumer of the run is recorded: a completion without
			 * any recorded execution came from outside the history */
			if (!executed)
				violation(&n_accepted, "completed-unrecorded", u->uid, r->token);
		}
		if (r && strcmp(r->state, "dead") == 0)
		{
			n_dead++;
			if (r->hang)
				n_hang_dead++;
			else if (!allow_dead && !flows_member((int) i))
				violation(&n_other, "dead", u->uid, "(a job that does not hang went dead)");
		}

		/* accepted completions */
		for (k = e0; k < e1; k++)
		{
			Ev		   *ev = &evs[k];

			if (ev->type != 'D')
				continue;
			if (strcmp(ev->status, "stale") == 0)
				n_stale++;		/* a late complete, refused (P1) */
			if (strcmp(ev->status, "ok") == 0)
			{
				if (acc_tok == NULL)
				{
					acc_tok = ev->token;
					accepted_tokens = 1;
				}
				else if (strcmp(acc_tok, ev->token) != 0)
				{
					accepted_tokens++;
					violation(&n_accepted, "two-accepted-tokens", u->uid, ev->token);
				}
			}
		}
		if (acc_tok && (r == NULL || strcmp(r->state, "completed") != 0 ||
						strcmp(r->token, acc_tok) != 0))
		{
			snprintf(det, sizeof(det), "complete(%s) was accepted; database: %s token %s",
					 acc_tok, r ? r->state : "(no row)", r ? r->token : "-");
			violation(&n_accepted, "acked-complete-lost", u->uid, det);
		}
		if (r && strcmp(r->state, "completed") == 0)
		{
			int			token_seen = 0, applied_ok = 0, applied_bad = 0, intent = 0;

			for (k = e0; k < e1; k++)
			{
				Ev		   *ev = &evs[k];

				if (ev->type == 'C' && strcmp(ev->token, r->token) == 0)
					token_seen = 1;
				if (ev->type == 'I' && strcmp(ev->token, r->token) == 0)
					intent++;
				if (ev->type == 'D' && strcmp(ev->token, r->token) == 0)
				{
					intent--;
					if (strcmp(ev->status, "ok") == 0 || strcmp(ev->status, "unknown") == 0)
						applied_ok = 1;
					else
						applied_bad = 1;
				}
			}
			if (intent > 0)
				applied_ok = 1;	/* the worker died with this complete in flight */
			if (applied_bad && !applied_ok)
				violation(&n_accepted, "refused-complete-applied", u->uid,
						  "(complete answered stale/error, yet its token completed the job)");
			/* executed by libjobq workers only: the completing token must be ours */
			for (k = e0; k < e1; k++)
				if (evs[k].type == 'S' || evs[k].type == 'J')
					nj++;
			if (nj == 0 && executed && !token_seen)
				violation(&n_accepted, "unknown-completing-token", u->uid, r->token);
			if (nj == 0 && executed && token_seen && !applied_ok)
				violation(&n_accepted, "completed-without-complete", u->uid, r->token);
		}

		/* S2: claims in claim order; validity intervals must not overlap */
		prev = NULL;
		for (k = e0; k < e1; k++)
		{
			Ev		   *cl = &evs[k];
			long long	end;
			int			failed = 0, released = 0, fail_ok = 0;

			if (cl->type != 'C')
				continue;
			ncl++;
			n_exec++;
			if (prev)
			{
				long long	pend_t = prev->t1;	/* locked_until */

				for (m = e0; m < e1; m++)
				{
					Ev		   *x = &evs[m];

					if ((x->type == 'F' || x->type == 'R') && strcmp(x->token, prev->token) == 0 &&
						strcmp(x->status, "stale") != 0 && x->t0 > 0)
					{
						if (x->t0 < pend_t)
							pend_t = x->t0;
						if (x->type == 'F')
							failed = 1;
						else
							released = 1;
						if (x->type == 'F' && strcmp(x->status, "ok") == 0)
							fail_ok = 1;
					}
				}
				end = pend_t;
				if (r && strcmp(r->state, "completed") == 0 && strcmp(prev->token, r->token) == 0)
				{
					snprintf(det, sizeof(det), "token %s claimed at %lld after the completing token %s",
							 cl->token, cl->t0, prev->token);
					violation(&n_overlap, "claim-after-completion", u->uid, det);
				}
				else if (cl->t0 < end)
				{
					snprintf(det, sizeof(det),
							 "token %s (attempt %d) claimed at %lld while token %s (attempt %d) valid until %lld (%lld us overlap)",
							 cl->token, cl->attempt, cl->t0, prev->token, prev->attempt, end, end - cl->t0);
					violation(&n_overlap, "overlap", u->uid, det);
				}
				if (cl->attempt < prev->attempt + (released ? 0 : 1) && !flows_retried((int) i))
				{
					snprintf(det, sizeof(det), "attempt %d after attempt %d", cl->attempt, prev->attempt);
					violation(&n_other, "attempt-not-increasing", u->uid, det);
				}
				if (fail_ok)
					n_retry++;
				else if (released)
					;
				else if (cl->t0 >= prev->t1)
				{
					n_dup++;
					n_dup_lease++;
				}
				else if (!failed)
				{
					n_dup++;
					violation(&n_unexplained, "unexplained-duplicate", u->uid, cl->token);
				}
				else
					n_retry++;
			}
			prev = cl;
		}
		if (r && strcmp(r->state, "completed") == 0 && prev && r->finished > 0)
		{
			/* the completing claim's interval runs to finished_at */
			for (k = e0; k < e1; k++)
			{
				Ev		   *cl = &evs[k];

				if (cl->type == 'C' && strcmp(cl->token, r->token) == 0)
				{
					if (r->finished < cl->t0)
						violation(&n_overlap, "finished-before-claim", u->uid, r->token);
					if (r->claimed && llabs(r->claimed - cl->t0) > 1000)
						n_claimed_mismatch++;
				}
			}
		}
		/* jobq-worker executions: one per attempt */
		{
			int			last_attempt = -1;

			for (k = e0; k < e1; k++)
			{
				Ev		   *x = &evs[k];

				if (x->type != 'J')
					continue;
				n_exec++;
				if (x->attempt == last_attempt && !flows_retried((int) i))
				{
					snprintf(det, sizeof(det), "attempt %d ran twice", x->attempt);
					violation(&n_unexplained, "jobq-worker-same-attempt", u->uid, det);
				}
				else if (last_attempt >= 0 || ncl > 0)
				{
					int			after_fail = 0;

					/* a retry after an accepted fail of the previous attempt */
					for (m = e0; m < e1; m++)
						if (evs[m].type == 'F' && strcmp(evs[m].status, "ok") == 0 &&
							evs[m].attempt == x->attempt - 1)
							after_fail = 1;
					if (after_fail)
						n_retry++;
					else
					{
						n_dup++;
						n_dup_jw++;
					}
				}
				last_attempt = x->attempt;
			}
		}
		(void) accepted_tokens;
	}
	/* P1: a worker stopped past its lease must have had a late complete refused */
	if (expect_stale && n_stale == 0)
		violation(&n_other, "no-stale-ack", "-",
				  "(--expect-stale: no complete was refused as stale, the partition did not bite)");
	if (order_mode)
		n_order = check_order();
	n_other += n_order;

	{
		long		bad = n_lost + n_unexpected + n_accepted + n_overlap + n_unexplained + n_other;

		bad += flows_check();

		printf("%s: enqueued=%ld (ok=%ld fail=%ld unknown=%ld recovered=%ld) executions=%ld "
			   "completed=%ld dead=%ld (hang=%ld) lost=%ld unexpected=%ld duplicates=%ld "
			   "(after-lease-expiry=%ld, jobq-worker-new-attempt=%ld, unexplained=%ld) "
			   "retries-after-fail=%ld stale-acks=%ld accepted-violations=%ld overlaps=%ld "
			   "order=%ld other=%ld%s: %s\n",
			   label, n_enq, n_ok, n_fail, n_unk, n_recovered, n_exec, n_completed, n_dead,
			   n_hang_dead, n_lost, n_unexpected, n_dup, n_dup_lease, n_dup_jw, n_unexplained,
			   n_retry, n_stale, n_accepted, n_overlap, n_order, n_other - n_order,
			   n_claimed_mismatch ? " claimed_at-mismatch!" : "", bad ? "FAIL" : "PASS");
		return bad ? 1 : 0;
	}
}
