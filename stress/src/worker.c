/*
 * worker.c: a libjobq worker that records every execution.
 *
 * History lines (times in microseconds of the server clock):
 *   C <uid> <id> <token> <attempt> <claimed_us> <locked_until_us> <worker>
 *       a claim; claimed_us = locked_until - lease, both from the claim's
 *       own clock read on the server; with --claim-clock an eighth field,
 *       the server clock read after the claim answered (0 if the read
 *       failed): the claim's snapshot was taken before it, while the
 *       claim's own clock is read before its snapshot (scenario FL)
 *   I <uid> <id> <token> <attempt>
 *       a complete is about to be sent (if no D line follows, the worker
 *       died with the complete in flight: its outcome is unknown)
 *   D <uid> <id> <token> <attempt> ok|stale|error|unknown <t0> <t1> <sqlstate>
 *       a complete; t0/t1 = server clock read just before/after it
 *       (unknown: the connection was lost before the answer)
 *   F <uid> <id> <token> <attempt> ok|stale|error|unknown <t0> <t1>
 *       a fail with retry_in 0 (--fail-pct), or a permanent one (payload
 *       die=1: the job is dead at once; not with STRESS_NO_DIE set)
 *   H <uid> <id> <token> <attempt>
 *       a "hanging" job (payload hang=1): abandoned, never acknowledged
 *   R <uid> <id> <token> <attempt> ok|error <t0>
 *       a release (jobs claimed by the last pipelined call at exit)
 *   R <uid> <id> <token> <attempt> ok|stale|error|unknown <t0> <t1> <hold_s>
 *       a rate-limited fail (--rate-limit-pct: jobq_fail_rate_limited for
 *       hold_s seconds; the attempt is given back, as by a release); t0/t1
 *       as for D (scenario G1)
 * Payload ms = handler time (sleep), capped by --ms-cap.
 */
#include "common.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *conninfo = NULL, *queue = "stress", *hist = NULL, *wname = "w";
static int	lease_s = 5, batch = 1, pipe_mode = 0, idle_exit_s = 0, sweep_ms = 0,
			ms_cap = 1000, claim_wait_ms = 0, hang_sleep = 0, claim_clock = 0;
static double fail_pct = 0, rate_limit_pct = 0;
static int	rate_limit_s = 1;
static unsigned flags = 0;
static FILE *h;
static JobqConn *c;
static long n_claimed, n_done, n_stale, n_unknown, n_err;

typedef struct Item
{
	int64_t		id;
	char		token[JOBQ_TOKEN_LEN + 1];
	char		uid[96];
	int			attempt;
} Item;

static void
ensure_conn(void)
{
	if (conn_lost(c))
	{
		if (reconnect_retry(c, 120000) != JOBQ_OK)
		{
			fprintf(stderr, "worker %s: cannot reconnect, exiting\n", wname);
			exit(3);
		}
	}
}

static const char *
sqlstate_of(void)
{
	const char *s = jobq_sqlstate(c);

	return s ? s : jobq_error_name(jobq_status(c));
}

/* complete one job; retries after a lost connection or a server error
 * with the same token (idempotent) */
static void
complete_one(const Item *it)
{
	int			tries;

	for (tries = 0; tries < 4; tries++)
	{
		int64_t		t0 = server_now_us(c), t1;
		int			rc;

		fprintf(h, "I %s %lld %s %d\n", it->uid, (long long) it->id, it->token, it->attempt);
		rc = jobq_complete(c, it->id, it->token, "{\"ok\":1}", 8);
		const char *st;

		if (rc == JOBQ_OK)
			st = "ok";
		else if (jobq_status(c) == JOBQ_ERR_STALE)
			st = "stale";
		else if (conn_lost(c))
			st = "unknown";
		else
			st = "error";
		t1 = (rc == JOBQ_OK || jobq_status(c) == JOBQ_ERR_STALE) ? server_now_us(c) : 0;
		fprintf(h, "D %s %lld %s %d %s %lld %lld %s\n", it->uid, (long long) it->id,
				it->token, it->attempt, st, (long long) t0, (long long) t1,
				rc == JOBQ_OK ? "-" : sqlstate_of());
		if (rc == JOBQ_OK)
		{
			n_done++;
			return;
		}
		if (jobq_status(c) == JOBQ_ERR_STALE)
		{
			n_stale++;
			return;
		}
		if (strcmp(st, "unknown") == 0)
		{
			n_unknown++;
			ensure_conn();
		}
		else
		{
			n_err++;
			sleep_ms(50);
		}
	}
}

static void
fail_one(const Item *it, int permanent)
{
	int64_t		t0 = server_now_us(c), t1;
	JobqState	ns;
	int			rc = jobq_fail(c, it->id, it->token, "stress: injected failure", 0, permanent, &ns);
	const char *st = rc == JOBQ_OK ? "ok" : jobq_status(c) == JOBQ_ERR_STALE ? "stale" :
		conn_lost(c) ? "unknown" : "error";

	t1 = rc == JOBQ_OK ? server_now_us(c) : 0;
	fprintf(h, "F %s %lld %s %d %s %lld %lld\n", it->uid, (long long) it->id, it->token,
			it->attempt, st, (long long) t0, (long long) t1);
	if (rc != JOBQ_OK)
		ensure_conn();
}

/* back-pressure: the upstream said "too many requests" (G1) */
static void
rate_limit_one(const Item *it)
{
	int64_t		t0 = server_now_us(c), t1;
	int			rc = jobq_fail_rate_limited(c, it->id, it->token, "stress: rate limited",
											rate_limit_s);
	const char *st = rc == JOBQ_OK ? "ok" : jobq_status(c) == JOBQ_ERR_STALE ? "stale" :
		conn_lost(c) ? "unknown" : "error";

	t1 = rc == JOBQ_OK ? server_now_us(c) : 0;
	fprintf(h, "R %s %lld %s %d %s %lld %lld %d\n", it->uid, (long long) it->id, it->token,
			it->attempt, st, (long long) t0, (long long) t1, rate_limit_s);
	if (rc != JOBQ_OK)
		ensure_conn();
}

/* record the claims of a list; returns the number of jobs */
static size_t
take(JobqJobList *l, Item *items, int *hang, int *ms, int *die)
{
	size_t		i, n = jobq_joblist_count(l);
	int64_t		answered = 0;

	if (claim_clock && n > 0)
		answered = server_now_us(c);

	for (i = 0; i < n; i++)
	{
		const JobqJob *j = jobq_joblist_get(l, i);
		size_t		len;
		const char *p = jobq_job_payload(j, &len);
		int64_t		lu = ts_to_us(jobq_job_locked_until(j));

		items[i].id = jobq_job_id(j);
		snprintf(items[i].token, sizeof(items[i].token), "%s", jobq_job_token(j));
		if (json_str_field(p, "uid", items[i].uid, sizeof(items[i].uid)) != 0)
			strcpy(items[i].uid, "?");
		items[i].attempt = jobq_job_attempt(j);
		hang[i] = (int) json_int_field(p, "hang", 0);
		die[i] = (int) json_int_field(p, "die", 0);
		ms[i] = (int) json_int_field(p, "ms", 0);
		if (ms[i] > ms_cap)
			ms[i] = ms_cap;
		fprintf(h, "C %s %lld %s %d %lld %lld %s", items[i].uid, (long long) items[i].id,
				items[i].token, items[i].attempt, (long long) (lu - (int64_t) lease_s * 1000000),
				(long long) lu, wname);
		if (claim_clock)
			fprintf(h, " %lld", (long long) answered);
		fputc('\n', h);
		n_claimed++;
	}
	return n;
}

int
main(int argc, char **argv)
{
	static struct option opts[] = {
		{"dbname", required_argument, NULL, 'd'},
		{"queue", required_argument, NULL, 'q'},
		{"out", required_argument, NULL, 'o'},
		{"name", required_argument, NULL, 'w'},
		{"lease", required_argument, NULL, 'l'},
		{"batch", required_argument, NULL, 'b'},
		{"pipeline", no_argument, NULL, 1},
		{"idle-exit", required_argument, NULL, 2},
		{"sweep-ms", required_argument, NULL, 3},
		{"fail-pct", required_argument, NULL, 4},
		{"ms-cap", required_argument, NULL, 5},
		{"pooler", no_argument, NULL, 6},
		{"no-listen", no_argument, NULL, 7},
		{"claim-wait", required_argument, NULL, 8},
		{"hang-sleep", no_argument, NULL, 9},
		{"claim-clock", no_argument, NULL, 10},
		{"rate-limit-pct", required_argument, NULL, 11},
		{"rate-limit-s", required_argument, NULL, 12},
		{NULL, 0, NULL, 0}
	};
	const char *queues[1];
	Item		items[JOBQ_CLAIM_MAX], pend[JOBQ_CLAIM_MAX];
	int			hang[JOBQ_CLAIM_MAX], ms[JOBQ_CLAIM_MAX], die[JOBQ_CLAIM_MAX];
	int64_t		last_work, last_sweep;
	size_t		npend = 0;
	JobqJobList *next = NULL;
	int			ch;

	while ((ch = getopt_long(argc, argv, "d:q:o:w:l:b:", opts, NULL)) != -1)
	{
		switch (ch)
		{
			case 'd': conninfo = optarg; break;
			case 'q': queue = optarg; break;
			case 'o': hist = optarg; break;
			case 'w': wname = optarg; break;
			case 'l': lease_s = atoi(optarg); break;
			case 'b': batch = atoi(optarg); break;
			case 1: pipe_mode = 1; break;
			case 2: idle_exit_s = atoi(optarg); break;
			case 3: sweep_ms = atoi(optarg); break;
			case 4: fail_pct = atof(optarg); break;
			case 5: ms_cap = atoi(optarg); break;
			case 6: flags = JOBQ_CONNECT_POOLER; break;
			case 7: flags |= JOBQ_CONNECT_NO_LISTEN; break;
			case 8: claim_wait_ms = atoi(optarg); break;
			case 9: hang_sleep = 1; break;
			case 10: claim_clock = 1; break;
			case 11: rate_limit_pct = atof(optarg); break;
			case 12: rate_limit_s = atoi(optarg); break;
			default:
				fprintf(stderr, "usage: stress-worker -d CONNINFO -q QUEUE -o HIST -w NAME ...\n");
				return 2;
		}
	}
	if (hist == NULL)
	{
		fprintf(stderr, "stress-worker: -o is required\n");
		return 2;
	}
	if (batch < 1 || batch > JOBQ_CLAIM_MAX)
		batch = 1;
	install_stop_handler();
	rnd_seed((uint64_t) getpid() * 0x9E3779B97F4A7C15ull ^ (uint64_t) mono_ms());
	h = hist_open(hist);
	queues[0] = queue;
	c = connect_retry(conninfo, flags, 60000);
	if (c == NULL)
		return 2;
	last_work = last_sweep = mono_ms();

	while (!stop_flag)
	{
		JobqJobList *l;
		size_t		n, i;

		if (next != NULL)
		{
			l = next;
			next = NULL;
		}
		else if (claim_wait_ms > 0)
			l = jobq_claim_wait(c, queues, 1, batch, lease_s, wname, claim_wait_ms);
		else
			l = jobq_claim(c, queues, 1, batch, lease_s, wname);
		if (l == NULL)
		{
			if (conn_lost(c))
				ensure_conn();
			else
				sleep_ms(20);	/* statement timeout, cancel, ... */
			continue;
		}
		n = take(l, items, hang, ms, die);
		jobq_joblist_free(l);
		npend = 0;
		for (i = 0; i < n; i++)
		{
			if (hang[i])
			{
				fprintf(h, "H %s %lld %s %d\n", items[i].uid, (long long) items[i].id,
						items[i].token, items[i].attempt);
				if (hang_sleep)
					while (!stop_flag)
						pause();	/* really hung (until SIGTERM) */
				continue;
			}
			sleep_ms(ms[i]);
			if (die[i] && getenv("STRESS_NO_DIE") == NULL)
				fail_one(&items[i], 1);	/* dead at once (FL) */
			else if (fail_pct > 0 && rnd01() < fail_pct / 100.0)
				fail_one(&items[i], 0);
			else if (rate_limit_pct > 0 && rnd01() < rate_limit_pct / 100.0)
				rate_limit_one(&items[i]);
			else if (pipe_mode)
				pend[npend++] = items[i];
			else
				complete_one(&items[i]);
		}
		if (pipe_mode && npend > 0 && !stop_flag)
		{
			int64_t		ids[JOBQ_CLAIM_MAX];
			const char *toks[JOBQ_CLAIM_MAX];
			int			acc[JOBQ_CLAIM_MAX];
			int64_t		t0 = server_now_us(c), t1;

			for (i = 0; i < npend; i++)
			{
				ids[i] = pend[i].id;
				toks[i] = pend[i].token;
				fprintf(h, "I %s %lld %s %d\n", pend[i].uid, (long long) pend[i].id,
						pend[i].token, pend[i].attempt);
			}
			next = jobq_complete_and_claim(c, npend, ids, toks, acc, queues, 1, batch,
										   lease_s, wname);
			t1 = next ? server_now_us(c) : 0;
			for (i = 0; i < npend; i++)
			{
				const char *st = next ? (acc[i] ? "ok" : "stale") : conn_lost(c) ? "unknown" : "error";

				fprintf(h, "D %s %lld %s %d %s %lld %lld %s\n", pend[i].uid,
						(long long) pend[i].id, pend[i].token, pend[i].attempt, st,
						(long long) t0, (long long) t1, next ? "-" : sqlstate_of());
				if (next && acc[i])
					n_done++;
				else if (next)
					n_stale++;
			}
			if (next == NULL)
			{
				/* neither part happened (or unknown): finish one by one */
				ensure_conn();
				for (i = 0; i < npend; i++)
					complete_one(&pend[i]);
			}
		}
		else if (pipe_mode && npend > 0)
			for (i = 0; i < npend; i++)
				complete_one(&pend[i]);

		if (sweep_ms > 0 && mono_ms() - last_sweep > sweep_ms)
		{
			int64_t		rq = 0, dd = 0, pg = 0;

			if (jobq_sweep(c, queue, 1000, &rq, &dd, &pg) != JOBQ_OK)
				ensure_conn();
			last_sweep = mono_ms();
		}
		if (n > 0 || next != NULL)
			last_work = mono_ms();
		else
		{
			if (idle_exit_s > 0 && mono_ms() - last_work > idle_exit_s * 1000L)
				break;
			if (claim_wait_ms == 0 &&
				jobq_wait_for_work(c, queues, 1, 200) == JOBQ_ERR)
				ensure_conn();
		}
	}
	if (next != NULL)
	{
		/* claimed on the way out: give the jobs back */
		size_t		i, n = take(next, items, hang, ms, die);

		for (i = 0; i < n; i++)
		{
			int64_t		t0 = server_now_us(c);
			int			rc = jobq_release(c, items[i].id, items[i].token);

			fprintf(h, "R %s %lld %s %d %s %lld\n", items[i].uid, (long long) items[i].id,
					items[i].token, items[i].attempt, rc == JOBQ_OK ? "ok" : "error",
					(long long) t0);
		}
		jobq_joblist_free(next);
	}
	jobq_disconnect(c);
	fprintf(stderr, "worker %s: claimed=%ld done=%ld stale=%ld unknown=%ld errors=%ld\n",
			wname, n_claimed, n_done, n_stale, n_unknown, n_err);
	return 0;
}
