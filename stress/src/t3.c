/*
 * t3.c: claim, sweep and complete agree on a lease at its exact boundary.
 *
 * usage: stress-t3 CONNINFO QUEUE ITERATIONS
 *
 * Each iteration: enqueue a job, claim it on connection A with a 1 s lease
 * (deadline L on the server clock), then, as L approaches, thread B runs
 * sweep + claim in a tight loop while A sends complete(token A) at a
 * random moment within a few ms of L.  Asserts:
 *   - B never obtains the job before L (claim time >= L);
 *   - A's complete is accepted XOR B claims the job (never both);
 *   - the job ends completed exactly once, by the winner's token.
 * Prints the counts of each outcome.
 */
#include "common.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

static const char *conninfo, *queue;
static JobqConn *cb;
static volatile int go_b;
static int64_t b_deadline_ms;
static char b_token[64];
static int64_t b_claim_us, b_id;
static int	b_got;

static void *
thread_b(void *arg)
{
	const char *qs[1] = {queue};

	(void) arg;
	while (!go_b)
		;
	while (mono_ms() < b_deadline_ms)
	{
		JobqJobList *l;

		jobq_sweep(cb, queue, 100, NULL, NULL, NULL);
		l = jobq_claim(cb, qs, 1, 1, 1, "t3-b");
		if (l && jobq_joblist_count(l) > 0)
		{
			const JobqJob *j = jobq_joblist_get(l, 0);

			b_got = 1;
			b_id = jobq_job_id(j);
			snprintf(b_token, sizeof(b_token), "%s", jobq_job_token(j));
			b_claim_us = ts_to_us(jobq_job_locked_until(j)) - 1000000;
			jobq_joblist_free(l);
			break;
		}
		jobq_joblist_free(l);
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	JobqConn   *ca;
	const char *qs[1];
	int			iters, it, bad = 0;
	int			a_before = 0, a_late = 0, a_stale_b = 0, a_stale_swept = 0;
	long long	min_margin = -1;

	if (argc < 4)
	{
		fprintf(stderr, "usage: stress-t3 CONNINFO QUEUE ITERATIONS\n");
		return 2;
	}
	conninfo = argv[1];
	queue = argv[2];
	iters = atoi(argv[3]);
	qs[0] = queue;
	ca = connect_retry(conninfo, 0, 10000);
	cb = connect_retry(conninfo, 0, 10000);
	if (!ca || !cb)
		return 2;
	rnd_seed((uint64_t) mono_ms());
	for (it = 0; it < iters; it++)
	{
		int64_t		id, lu, t0, t1;
		JobqJobList *l;
		const JobqJob *j;
		char		tokA[64], payload[64];
		pthread_t	th;
		int			rc, a_ok, offset_us;
		JobqRows   *info;
		const char *st;

		snprintf(payload, sizeof(payload), "{\"uid\":\"t3-%d\"}", it);
		if (jobq_enqueue(ca, queue, payload, strlen(payload), NULL, &id) != JOBQ_OK)
		{
			fprintf(stderr, "t3: enqueue: %s\n", jobq_errmsg(ca));
			return 2;
		}
		l = jobq_claim(ca, qs, 1, 1, 1, "t3-a");
		if (l == NULL || jobq_joblist_count(l) != 1 || jobq_job_id(jobq_joblist_get(l, 0)) != id)
		{
			fprintf(stderr, "t3: claim did not return the job: %s\n", jobq_errmsg(ca));
			return 2;
		}
		j = jobq_joblist_get(l, 0);
		snprintf(tokA, sizeof(tokA), "%s", jobq_job_token(j));
		lu = ts_to_us(jobq_job_locked_until(j));
		jobq_joblist_free(l);

		/* B starts 5 ms before L and spins until 40 ms after it */
		go_b = 0;
		b_got = 0;
		b_deadline_ms = 0;
		pthread_create(&th, NULL, thread_b, NULL);
		{
			int64_t		now = server_now_us(ca);
			int64_t		start_ms = mono_ms() + (lu - now) / 1000 - 5;

			b_deadline_ms = start_ms + 45;
			while (mono_ms() < start_ms)
				sleep_ms(1);
			go_b = 1;
			/* A completes at L + offset, offset in [-4, +4] ms */
			offset_us = (int) (rnd() % 8001) - 4000;
			while (server_now_us(ca) < lu + offset_us - 300)
				;
		}
		t0 = server_now_us(ca);
		rc = jobq_complete(ca, id, tokA, NULL, 0);
		t1 = server_now_us(ca);
		a_ok = (rc == JOBQ_OK);
		if (rc != JOBQ_OK && jobq_status(ca) != JOBQ_ERR_STALE)
		{
			fprintf(stderr, "t3: complete(A) error: %s\n", jobq_errmsg(ca));
			bad++;
		}
		pthread_join(th, NULL);

		if (b_got)
		{
			long long	margin = b_claim_us - lu;

			if (margin < 0)
			{
				fprintf(stderr, "t3: VIOLATION job %lld claimed by B %lld us BEFORE A's lease ended\n",
						(long long) id, -margin);
				bad++;
			}
			if (min_margin < 0 || margin < min_margin)
				min_margin = margin;
			if (a_ok)
			{
				fprintf(stderr, "t3: VIOLATION job %lld: A's complete accepted (at %lld..%lld) AND B claimed it at %lld (L=%lld)\n",
						(long long) id, (long long) t0, (long long) t1, (long long) b_claim_us, (long long) lu);
				bad++;
			}
			if (jobq_complete(cb, b_id, b_token, NULL, 0) != JOBQ_OK)
			{
				fprintf(stderr, "t3: complete(B) refused: %s\n", jobq_errmsg(cb));
				bad++;
			}
			a_stale_b++;
		}
		else if (a_ok)
		{
			if (t0 < lu)
				a_before++;
			else
				a_late++;
		}
		else
		{
			/* swept but not yet re-claimed by B: take it and finish it */
			l = jobq_claim(ca, qs, 1, 1, 5, "t3-a2");
			if (l && jobq_joblist_count(l) == 1)
				jobq_complete(ca, jobq_job_id(jobq_joblist_get(l, 0)),
							  jobq_job_token(jobq_joblist_get(l, 0)), NULL, 0);
			jobq_joblist_free(l);
			a_stale_swept++;
		}
		info = jobq_job_info(ca, id);
		st = info ? jobq_rows_get(info, 0, "state") : NULL;
		if (st == NULL || strcmp(st, "completed") != 0)
		{
			fprintf(stderr, "t3: VIOLATION job %lld ends in state %s\n", (long long) id, st ? st : "(none)");
			bad++;
		}
		jobq_rows_free(info);
	}
	printf("T3: %d boundary races: complete(A) accepted before the deadline %d, accepted after it (not yet swept) %d, "
		   "stale and re-claimed by B %d (earliest re-claim %lld us after the deadline), stale and swept %d; violations %d\n",
		   iters, a_before, a_late, a_stale_b, min_margin, a_stale_swept, bad);
	jobq_disconnect(ca);
	jobq_disconnect(cb);
	return bad ? 1 : 0;
}
