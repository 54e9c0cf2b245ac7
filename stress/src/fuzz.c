/*
 * fuzz.c: call every libjobq function with fuzzed arguments.
 *
 * usage: stress-fuzz CONNINFO ITERATIONS [SEED]
 *
 * Every call that could change the database gets at least one argument
 * that must be refused: queue names are invalid or name no queue (never
 * the fuzz database's real queue "fz"), job ids are <= 0 or >= 10^12, and
 * the fuzz database holds only ready jobs (nothing to sweep, retry or
 * purge).  So every call must return an error or an empty answer, never
 * crash, and leave the database as it was (run.sh compares a checksum
 * before and after).  Built with ASan + UBSan together with the library's
 * sources, so a memory error anywhere aborts the run.
 * Arguments: random lengths (0..2 MiB), invalid UTF-8, NUL bytes inside
 * explicit lengths, SQL metacharacters, huge and negative numbers, NULL
 * pointers where the header allows them (and NULL connections).
 */
#include "common.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static char *pool[4096];
static size_t poollen[4096];
static int	npool;

static void
pfree_all(void)
{
	while (npool > 0)
	{
		npool--;
		free(pool[npool]);
	}
}

/* a random byte string of length *len (caller's buffer stays valid until pfree_all) */
static char *
rbytes(size_t *len, int allow_nul)
{
	size_t		n;
	char	   *s;
	size_t		i;
	int			kind = (int) (rnd() % 10);

	switch (rnd() % 8)
	{
		case 0: n = 0; break;
		case 1: n = rnd() % 4; break;
		case 2: n = 47 + rnd() % 4; break;
		case 3: n = 60 + rnd() % 10; break;
		case 4: n = 500 + rnd() % 30; break;
		case 5: n = rnd() % 5000; break;
		case 6: n = (rnd() % 20 == 0) ? (1 << 20) + rnd() % 100 : rnd() % 200; break;
		default: n = rnd() % 40; break;
	}
	s = malloc(n + 1);
	for (i = 0; i < n; i++)
	{
		switch (kind)
		{
			case 0: s[i] = (char) (rnd() & 0xff); break;	/* anything */
			case 1: s[i] = "abcxyz019_-"[rnd() % 11]; break;	/* near-valid names */
			case 2: s[i] = "'\";--$\\ ./\t\n%"[rnd() % 14]; break;	/* SQL metas */
			case 3: s[i] = (char) (0x80 + rnd() % 0x40); break;	/* lone continuation bytes */
			case 4: s[i] = "{}[]\":,0123456789truefalsn \\u0000"[rnd() % 34]; break;	/* JSON-ish */
			case 5: s[i] = (char) ("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xed\xa0\x80"[rnd() % 12]); break;
			default: s[i] = (char) (32 + rnd() % 95); break;
		}
		if (!allow_nul && s[i] == '\0')
			s[i] = 'Z';
	}
	if (allow_nul && n > 0 && rnd() % 3 == 0)
		s[rnd() % n] = '\0';
	s[n] = '\0';
	if (npool < 4096)
	{
		pool[npool] = s;
		poollen[npool++] = n;
	}
	*len = n;
	return s;
}

static const char *rstr(void);

/* an invalid queue name (for calls that would create something) */
static const char *
rbadq(void)
{
	const char *s = rstr();

	if (s != NULL && jobq_valid_queue_name(s))
		return rnd() % 2 ? "Bad-Name" : "bad name";
	return s;
}

/* a NUL-terminated string argument, sometimes NULL; never the real queue */
static const char *
rstr(void)
{
	size_t		n;
	const char *s;

	if (rnd() % 12 == 0)
		return NULL;
	if (rnd() % 6 == 0)
	{
		static const char *fixed[] = {"", "FZ", "fz ", "f z", "nosuchqueue", "a", "a-b_c",
			"jobq", "public", "x'; DROP TABLE jobq.jobs; --", "completed", "dead", "ready",
		"00000000-0000-0000-0000-000000000000", "1", "-1", "1e400", "infinity", "NaN"};

		return fixed[rnd() % (sizeof(fixed) / sizeof(fixed[0]))];
	}
	s = rbytes(&n, 0);
	if (strcmp(s, "fz") == 0)
		return "fz0";
	return s;
}

static int
rint_(void)
{
	static const int v[] = {-1, 0, 1, -2, INT_MIN, INT_MAX, INT_MAX - 1, 86400, 86401,
	31536000, 31536001, 1000, 1001, -1000, -1001, 300000, 300001, 10000, 10001, 65536};

	if (rnd() % 3 == 0)
		return (int) rnd();
	return v[rnd() % (sizeof(v) / sizeof(v[0]))];
}

/* never a real job id (they are small) */
static int64_t
rid(void)
{
	static const int64_t v[] = {0, -1, INT64_MIN, INT64_MAX, INT64_MAX - 1, 1000000000000LL,
	-(int64_t) 1 << 40};

	if (rnd() % 3 == 0)
		return 1000000000000LL + (int64_t) (rnd() % 1000000000);
	return v[rnd() % (sizeof(v) / sizeof(v[0]))];
}

/* small waits only, so that a valid wait never blocks the run */
static int
rwait(void)
{
	static const int v[] = {-1, -2, 0, 1, 5, INT_MIN, INT_MAX, 300001};

	return v[rnd() % (sizeof(v) / sizeof(v[0]))];
}

static void
fuzz_rows(JobqRows *rows)
{
	int			k;

	for (k = 0; k < 8; k++)
	{
		size_t		r = (size_t) (rnd() % 4 == 0 ? rnd() : rnd() % 3);
		int			c = rnd() % 4 == 0 ? rint_() : (int) (rnd() % 20) - 2;
		const char *name = rstr();

		(void) jobq_rows_value(rows, r, c);
		(void) jobq_rows_colname(rows, c);
		(void) jobq_rows_colindex(rows, name);
		(void) jobq_rows_get(rows, r, name);
		(void) jobq_rows_get_int64(rows, r, name);
	}
	(void) jobq_rows_count(rows);
	(void) jobq_rows_ncols(rows);
	jobq_free(jobq_rows_json(rows));
	jobq_rows_free(rows);
}

static void
fuzz_list(JobqJobList *l)
{
	size_t		i = (size_t) (rnd() % 3 == 0 ? rnd() : rnd() % 3);
	const JobqJob *j = jobq_joblist_get(l, i);
	size_t		len;
	JobqJob    *d;

	(void) jobq_joblist_count(l);
	(void) jobq_job_id(j);
	(void) jobq_job_queue(j);
	(void) jobq_job_payload(j, rnd() % 2 ? &len : NULL);
	(void) jobq_job_attempt(j);
	(void) jobq_job_max_attempts(j);
	(void) jobq_job_token(j);
	(void) jobq_job_locked_until(j);
	(void) jobq_job_enqueued_at(j);
	(void) jobq_job_lease_ms(j);
	d = jobq_job_dup(j);
	jobq_job_free(d);
	jobq_joblist_free(l);
}

static const char *
rtoken(void)
{
	static char buf[64];
	int			i;

	if (rnd() % 2)
		return rstr();
	for (i = 0; i < 36; i++)
		buf[i] = "0123456789abcdef"[rnd() % 16];
	buf[8] = buf[13] = buf[18] = buf[23] = '-';
	buf[36] = '\0';
	return buf;
}

/* the size field is fuzzed too, now and then: 0, short, too long */
static size_t
rsize(size_t real)
{
	return rnd() % 8 ? real : (size_t) (rnd() % (2 * real + 1));
}

static void
ropts_q(JobqQueueOpts *o)
{
	o->size = rsize(sizeof(*o));
	o->lease_s = rint_();
	o->max_attempts = rint_();
	o->backoff_base_s = rint_();
	o->backoff_cap_s = rint_();
	o->completed_retention_s = rint_();
	o->dead_retention_s = rint_();
	o->notify = rint_();
}

static void
ropts_e(JobqEnqueueOpts *o)
{
	o->size = rsize(sizeof(*o));
	o->delay_s = rint_();
	o->run_at = rnd() % 2 ? NULL : rstr();
	o->priority = rint_();
	o->max_attempts = rint_();
	o->dedupe_key = rnd() % 2 ? NULL : rstr();
}

/* an array of n random queue names */
static const char **
rqueues(int n)
{
	static const char *qs[64];
	int			i;

	for (i = 0; i < n && i < 64; i++)
		qs[i] = rstr();
	return qs;
}

static long calls, errors, oks;

static void
count(int rc)
{
	calls++;
	if (rc == JOBQ_OK)
		oks++;
	else
		errors++;
}

int
main(int argc, char **argv)
{
	const char *conninfo;
	long		iters, it;
	JobqConn   *c;
	size_t		len;

	if (argc < 3)
	{
		fprintf(stderr, "usage: stress-fuzz CONNINFO ITERATIONS [SEED]\n");
		return 2;
	}
	conninfo = argv[1];
	iters = atol(argv[2]);
	rnd_seed(argc > 3 ? strtoull(argv[3], NULL, 10) : (uint64_t) mono_ms());
	c = connect_retry(conninfo, 0, 10000);
	if (c == NULL)
		return 2;

	for (it = 0; it < iters; it++)
	{
		JobqConn   *cc = (rnd() % 25 == 0) ? NULL : c;
		int			op = (int) (rnd() % 34);
		JobqQueueOpts qo;
		JobqEnqueueOpts eo;
		int64_t		id, n64, a64, b64;
		JobqState	ns;
		int			nq = rnd() % 5 == 0 ? rint_() : (int) (rnd() % 4);
		int			qn = nq < 0 ? 0 : (nq > 64 ? 64 : nq);

		switch (op)
		{
			case 0:
				ropts_q(&qo);
				count(jobq_create_queue(cc, rbadq(), rnd() % 3 ? &qo : NULL));
				break;
			case 1:
				ropts_q(&qo);
				count(jobq_alter_queue(cc, rstr(), rnd() % 3 ? &qo : NULL));
				break;
			case 2: count(jobq_drop_queue(cc, rstr(), rint_())); break;
			case 3: count(jobq_pause(cc, rstr())); break;
			case 4: count(jobq_resume(cc, rstr())); break;
			case 5:
				{
					JobqRows   *r = jobq_queues(cc);

					calls++;
					fuzz_rows(r);
				}
				break;
			case 6:
			case 7:
				{
					const char *p = rbytes(&len, 1);

					ropts_e(&eo);
					if (rnd() % 3 == 0)
						len = len ? rnd() % len : 0;	/* a prefix */
					count(jobq_enqueue(cc, rstr(), p, len, rnd() % 3 ? &eo : NULL, rnd() % 2 ? &id : NULL));
				}
				break;
			case 8:
				{
					size_t		n = rnd() % 10 == 0 ? 10001 : rnd() % 6, i;
					const char **ps = calloc(n + 1, sizeof(char *));
					size_t	   *pl = calloc(n + 1, sizeof(size_t));
					const char **dk = calloc(n + 1, sizeof(char *));
					int64_t    *ids = calloc(n + 1, sizeof(int64_t));
					int		   *cr = calloc(n + 1, sizeof(int));

					for (i = 0; i < n; i++)
					{
						if (i < 8)
							ps[i] = rbytes(&pl[i], 1);
						else
						{
							ps[i] = "{}";
							pl[i] = 2;
						}
						dk[i] = i < 8 ? rstr() : NULL;
					}
					if (n > 0 && rnd() % 4 == 0)
						ps[rnd() % n] = NULL;	/* a NULL payload inside the array */
					ropts_e(&eo);
					count(jobq_enqueue_batch(cc, rstr(), rnd() % 8 == 0 ? (size_t) rint_() % 20000 : n, ps, pl,
											 rnd() % 2 ? dk : NULL, rnd() % 2 ? &eo : NULL,
											 rnd() % 2 ? ids : NULL, rnd() % 2 ? cr : NULL));
					free(ps);
					free(pl);
					free(dk);
					free(ids);
					free(cr);
				}
				break;
			case 9:
				{
					JobqJobList *l = jobq_claim(cc, rnd() % 10 ? rqueues(qn) : NULL, nq > 64 ? 64 : nq,
												rint_(), rint_(), rstr());

					calls++;
					fuzz_list(l);
				}
				break;
			case 10:
				{
					JobqJobList *l = jobq_claim_wait(cc, rqueues(qn), nq > 64 ? 64 : nq, rint_(), rint_(),
													 rstr(), rwait());

					calls++;
					fuzz_list(l);
				}
				break;
			case 11:
				{
					const char *r = rbytes(&len, 1);

					count(jobq_complete(cc, rid(), rtoken(), rnd() % 3 ? r : NULL, len));
				}
				break;
			case 12:
			case 13:
				{
					size_t		n = rnd() % 10 == 0 ? 1001 : rnd() % 5, i;
					int64_t    *ids = calloc(n + 1, sizeof(int64_t));
					const char **tk = calloc(n + 1, sizeof(char *));
					const char **rs = calloc(n + 1, sizeof(char *));
					size_t	   *rl = calloc(n + 1, sizeof(size_t));
					int		   *acc = calloc(n + 1, sizeof(int));
					size_t		na;
					char		(*tbuf)[64] = calloc(n + 1, 64);

					for (i = 0; i < n; i++)
					{
						const char *t = rtoken();

						ids[i] = rid();
						if (t)
							snprintf(tbuf[i], 64, "%s", t);
						tk[i] = t ? tbuf[i] : NULL;
						rs[i] = i < 8 && rnd() % 2 ? rbytes(&rl[i], 1) : NULL;
					}
					if (op == 12)
						count(jobq_complete_batch(cc, n, ids, tk, rnd() % 2 ? rs : NULL, rl,
												  rnd() % 2 ? acc : NULL, rnd() % 2 ? &na : NULL));
					else
					{
						JobqJobList *l = jobq_complete_and_claim(cc, n, ids, tk, rnd() % 2 ? acc : NULL,
																 rqueues(qn), nq > 64 ? 64 : nq,
																 rint_(), rint_(), rstr());

						calls++;
						fuzz_list(l);
					}
					free(ids);
					free(tk);
					free(rs);
					free(rl);
					free(acc);
					free(tbuf);
				}
				break;
			case 14:
				count(jobq_fail(cc, rid(), rtoken(), rstr(), rint_(), rint_(), rnd() % 2 ? &ns : NULL));
				break;
			case 15: count(jobq_extend(cc, rid(), rtoken(), rint_())); break;
			case 16: count(jobq_release(cc, rid(), rtoken())); break;
			case 17:
				count(jobq_sweep(cc, rstr(), rint_(), rnd() % 2 ? &a64 : NULL, rnd() % 2 ? &b64 : NULL,
								 rnd() % 2 ? &n64 : NULL));
				break;
			case 18:
				{
					int			rc = jobq_wait_for_work(cc, rqueues(qn), nq > 64 ? 64 : nq, rwait() % 10);

					calls++;
					if (rc < 0)
						errors++;
				}
				break;
			case 19: calls++; fuzz_rows(jobq_stats(cc, rstr())); break;
			case 20: calls++; fuzz_rows(jobq_job_info(cc, rid())); break;
			case 21: calls++; fuzz_rows(jobq_list(cc, rstr(), rstr(), rint_())); break;
			case 22: count(jobq_retry(cc, rid())); break;
			case 23: count(jobq_retry_queue(cc, rstr(), rnd() % 2 ? &n64 : NULL)); break;
			case 24: count(jobq_cancel(cc, rid())); break;
			case 25:
				{
					const char *q = rstr();

					/* queue NULL would mean every queue: keep one argument invalid */
					count(jobq_purge(cc, q ? q : "no-such", rstr(), rint_(), rnd() % 2 ? &n64 : NULL));
				}
				break;
			case 26:
				{
					JobqConn   *x = jobq_connect_ex(rnd() % 4 ? conninfo : rstr(), rstr(), (unsigned) rnd());

					calls++;
					(void) jobq_status(x);
					(void) jobq_errmsg(x);
					(void) jobq_sqlstate(x);
					(void) jobq_schema(x);
					(void) jobq_is_connected(x);
					(void) jobq_socket(x);
					jobq_disconnect(x);
				}
				break;
			case 27:
				calls += 7;
				(void) jobq_error_name((JobqErrorClass) rint_());
				(void) jobq_state_name((JobqState) rint_());
				(void) jobq_state_from_name(rstr());
				(void) jobq_sqlstate_action(rstr());
				(void) jobq_valid_queue_name(rstr());
				(void) jobq_valid_schema_name(rstr());
				(void) jobq_version();
				break;
			case 28:
				calls++;
				(void) jobq_status(cc);
				(void) jobq_errmsg(cc);
				(void) jobq_sqlstate(cc);
				(void) jobq_error_action(cc);
				(void) jobq_schema(cc);
				jobq_free(NULL);
				break;
			default:
				{
					/* enqueue with a valid payload to an unknown (valid) queue */
					char		q[40];

					snprintf(q, sizeof(q), "nosuch-%u", (unsigned) (rnd() % 100000));
					ropts_e(&eo);
					count(jobq_enqueue(cc, q, "{\"a\":1}", 7, &eo, &id));
				}
				break;
		}
		pfree_all();
		if (!jobq_is_connected(c))
		{
			fprintf(stderr, "fuzz: connection lost at call %ld (op %d): %s; reconnecting\n", it, op,
					jobq_errmsg(c));
			if (reconnect_retry(c, 10000) != JOBQ_OK)
				return 2;
		}
	}
	printf("FUZZ: %ld calls, %ld refused, %ld accepted (read-only or no-op)\n", calls, errors, oks);
	jobq_disconnect(c);
	return 0;
}
