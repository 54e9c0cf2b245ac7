/*
 * gproducer.c: enqueue grouped jobs from several producers into the same
 * groups, in transactions of a few statements, and record every outcome
 * (the G1 scenario, README.md).
 *
 * It speaks SQL through libpq, not libjobq: its transactions hold several
 * enqueues and read back each job's group_seq before they commit.
 * Each transaction holds 1 to 3 statements, each a single jobq_enqueue or
 * a jobq_enqueue_batch of 2 to --max-batch jobs of one group, into random
 * groups (so two producers may lock the same groups in opposite orders:
 * a deadlock rolls one back, and its jobs must not exist), then sleeps
 * --hold-ms with the groups' locks held, then commits.  Producers that
 * enqueue into a group meanwhile wait for the lock, and their jobs take
 * their places in commit order.
 *
 * Payload {"uid": PREFIX-N, "ms": handler time, "hang": 0, "g": key}.
 * History (HIST, read by stress-check):
 *   E <uid> ok <id>            committed
 *   E <uid> fail - <sqlstate>  the transaction rolled back (or never
 *                              reached COMMIT before the connection died)
 *   E <uid> unknown -          COMMIT was sent, the answer was lost
 * Order history (--order-out ORD, read by stress-group-check):
 *   Q <uid> <id> <key> <group_seq> <send_us> <ack_us>
 *                              a job whose COMMIT was sent: its group_seq
 *                              read back in its own transaction (final:
 *                              drawn under the group's lock, held to
 *                              commit; jobq.history keeps no group of a
 *                              completed job), the wall clock before its
 *                              statement was sent and after COMMIT came
 *                              back (the server's clock: same host; 0
 *                              when the answer was lost)
 * With --procs P the program forks P producers (PREFIX.k, HIST.k, ORD.k).
 */
#include "common.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

#define MAX_TX_JOBS		64

static const char *conninfo = NULL, *queue = "g", *hist = NULL, *ordhist = NULL,
		   *prefix = "gp";
static int	duration_s = 10, groups = 8, max_batch = 4, ms_max = 5, procs = 1,
			pause_ms = 0, hold_ms = 0;

typedef struct TxJob
{
	char		uid[96];
	char		key[32];
	int64_t		id;
	int64_t		seq;
	int64_t		send_us;
} TxJob;

static int64_t
wall_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static PGconn *
pg_connect_retry(void)
{
	int64_t		deadline = mono_ms() + 90000;

	for (;;)
	{
		PGconn	   *pg = PQconnectdb(conninfo);

		if (PQstatus(pg) == CONNECTION_OK)
			return pg;
		PQfinish(pg);
		if (mono_ms() > deadline || stop_flag)
			return NULL;
		sleep_ms(200);
	}
}

/* run a command; returns its result (caller clears) */
static PGresult *
run(PGconn *pg, const char *sql, int n, const char *const *params)
{
	return PQexecParams(pg, sql, n, NULL, params, NULL, NULL, 0);
}

static const char *
state_of(PGresult *r)
{
	const char *s = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;

	return s ? s : "08006";
}

/*
 * one_statement
 *	  Enqueue jobs[0..n) of one group in one statement (n == 1: the
 *	  single form).  Returns 0 on success.
 */
static int
one_statement(PGconn *pg, TxJob *jobs, int n, char *sqlstate)
{
	char		payload[MAX_TX_JOBS][160], arr[MAX_TX_JOBS * 170], keys[MAX_TX_JOBS * 40];
	const char *params[3];
	PGresult   *r;
	int			k, ok;
	size_t		ap = 0, kp = 0;

	for (k = 0; k < n; k++)
		snprintf(payload[k], sizeof(payload[k]),
				 "{\"uid\":\"%s\",\"ms\":%d,\"hang\":0,\"g\":\"%s\"}", jobs[k].uid,
				 ms_max > 0 ? (int) (rnd() % (ms_max + 1)) : 0, jobs[k].key);
	params[0] = queue;
	if (n == 1)
	{
		params[1] = payload[0];
		params[2] = jobs[0].key;
		jobs[0].send_us = wall_us();
		r = run(pg, "SELECT jobq_enqueue($1, $2::jsonb, group_key => $3)", 3, params);
	}
	else
	{
		/* array literals: the payloads hold no quotes or backslashes but ours */
		arr[ap++] = '{';
		keys[kp++] = '{';
		for (k = 0; k < n; k++)
		{
			const char *p;

			if (k > 0)
			{
				arr[ap++] = ',';
				keys[kp++] = ',';
			}
			arr[ap++] = '"';
			for (p = payload[k]; *p; p++)
			{
				if (*p == '"')
					arr[ap++] = '\\';
				arr[ap++] = *p;
			}
			arr[ap++] = '"';
			kp += snprintf(keys + kp, sizeof(keys) - kp, "\"%s\"", jobs[k].key);
		}
		arr[ap++] = '}';
		arr[ap] = '\0';
		keys[kp++] = '}';
		keys[kp] = '\0';
		params[1] = arr;
		params[2] = keys;
		for (k = 0; k < n; k++)
			jobs[k].send_us = wall_us();
		r = run(pg, "SELECT id FROM jobq_enqueue_batch($1, $2::jsonb[], group_keys => $3::text[])",
				3, params);
	}
	ok = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == n;
	if (ok)
		for (k = 0; k < n; k++)
			jobs[k].id = atoll(PQgetvalue(r, n == 1 ? 0 : k, 0));
	else
		snprintf(sqlstate, 6, "%s", state_of(r));
	PQclear(r);
	if (!ok)
		return 1;
	/* the jobs' places in their group, as this transaction sees them */
	for (k = 0; k < n; k++)
	{
		char		idbuf[24];
		const char *p1[1] = {idbuf};

		snprintf(idbuf, sizeof(idbuf), "%lld", (long long) jobs[k].id);
		r = run(pg, "SELECT group_seq FROM jobq.jobs WHERE id = $1", 1, p1);
		ok = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1;
		if (ok)
			jobs[k].seq = atoll(PQgetvalue(r, 0, 0));
		else
			snprintf(sqlstate, 6, "%s", state_of(r));
		PQclear(r);
		if (!ok)
			return 1;
	}
	return 0;
}

static int
run_one(const char *pfx, const char *histpath, const char *ordpath)
{
	FILE	   *h = hist_open(histpath), *o = hist_open(ordpath);
	PGconn	   *pg;
	int64_t		start = mono_ms();
	long		i = 0, n_ok = 0, n_fail = 0, n_unknown = 0, n_tx = 0;

	pg = pg_connect_retry();
	if (pg == NULL)
		return 2;
	rnd_seed((uint64_t) getpid() * 2654435761u ^ (uint64_t) start);
	while (!stop_flag && mono_ms() - start < duration_s * 1000L)
	{
		TxJob		jobs[MAX_TX_JOBS];
		char		sqlstate[6] = "";
		int			nst = 1 + (int) (rnd() % 3), st, nj = 0, k, failed = 0, lost;
		PGresult   *r;

		r = PQexec(pg, "BEGIN");
		if (PQresultStatus(r) != PGRES_COMMAND_OK)
		{
			PQclear(r);
			goto reconnect;
		}
		PQclear(r);
		for (st = 0; st < nst && !failed; st++)
		{
			int			n = rnd01() < 0.5 ? 1 : 2 + (int) (rnd() % (max_batch - 1));
			char		key[32];

			snprintf(key, sizeof(key), "k%d", (int) (rnd() % groups));
			for (k = 0; k < n; k++)
			{
				snprintf(jobs[nj + k].uid, sizeof(jobs[nj + k].uid), "%s-%ld", pfx, i++);
				snprintf(jobs[nj + k].key, sizeof(jobs[nj + k].key), "%s", key);
			}
			failed = one_statement(pg, jobs + nj, n, sqlstate);
			nj += n;
		}
		if (!failed && hold_ms > 0)
			sleep_ms((int) (rnd() % (hold_ms + 1)));
		lost = 0;
		if (failed)
		{
			/* the transaction is rolled back (or the connection is gone) */
			r = PQexec(pg, "ROLLBACK");
			PQclear(r);
		}
		else
		{
			r = PQexec(pg, "COMMIT");
			if (PQresultStatus(r) != PGRES_COMMAND_OK)
			{
				if (PQstatus(pg) != CONNECTION_OK)
					lost = 1;
				else
				{
					failed = 1;
					snprintf(sqlstate, sizeof(sqlstate), "%s", state_of(r));
				}
			}
			PQclear(r);
		}
		{
			int64_t		ack = wall_us();

			for (k = 0; k < nj; k++)
			{
				if (lost)
				{
					fprintf(h, "E %s unknown -\n", jobs[k].uid);
					fprintf(o, "Q %s %lld %s %lld %lld 0\n", jobs[k].uid, (long long) jobs[k].id,
							jobs[k].key, (long long) jobs[k].seq, (long long) jobs[k].send_us);
					n_unknown++;
				}
				else if (failed)
				{
					fprintf(h, "E %s fail - %s\n", jobs[k].uid, sqlstate);
					n_fail++;
				}
				else
				{
					fprintf(h, "E %s ok %lld\n", jobs[k].uid, (long long) jobs[k].id);
					fprintf(o, "Q %s %lld %s %lld %lld %lld\n", jobs[k].uid,
							(long long) jobs[k].id, jobs[k].key, (long long) jobs[k].seq,
							(long long) jobs[k].send_us, (long long) ack);
					n_ok++;
				}
			}
		}
		n_tx++;
		if (PQstatus(pg) != CONNECTION_OK)
			goto reconnect;
		if (pause_ms > 0)
			sleep_ms((int) (rnd() % (pause_ms + 1)));
		continue;
reconnect:
		PQfinish(pg);
		pg = pg_connect_retry();
		if (pg == NULL)
		{
			fprintf(stderr, "gproducer %s: cannot reconnect, giving up\n", pfx);
			break;
		}
	}
	if (pg)
		PQfinish(pg);
	fclose(h);
	fclose(o);
	printf("gproducer %s: transactions=%ld ok=%ld fail=%ld unknown=%ld\n", pfx, n_tx, n_ok,
		   n_fail, n_unknown);
	return 0;
}

int
main(int argc, char **argv)
{
	static struct option opts[] = {
		{"dbname", required_argument, NULL, 'd'},
		{"queue", required_argument, NULL, 'q'},
		{"out", required_argument, NULL, 'o'},
		{"prefix", required_argument, NULL, 'p'},
		{"duration", required_argument, NULL, 't'},
		{"groups", required_argument, NULL, 1},
		{"max-batch", required_argument, NULL, 2},
		{"ms-max", required_argument, NULL, 3},
		{"procs", required_argument, NULL, 4},
		{"pause-ms", required_argument, NULL, 5},
		{"hold-ms", required_argument, NULL, 6},
		{"order-out", required_argument, NULL, 7},
		{NULL, 0, NULL, 0}
	};
	int			ch, k, st, bad = 0;
	char		pfx[128], hp[1024], op[1024];

	while ((ch = getopt_long(argc, argv, "d:q:o:p:t:", opts, NULL)) != -1)
	{
		switch (ch)
		{
			case 'd': conninfo = optarg; break;
			case 'q': queue = optarg; break;
			case 'o': hist = optarg; break;
			case 'p': prefix = optarg; break;
			case 't': duration_s = atoi(optarg); break;
			case 1: groups = atoi(optarg); break;
			case 2: max_batch = atoi(optarg); break;
			case 3: ms_max = atoi(optarg); break;
			case 4: procs = atoi(optarg); break;
			case 5: pause_ms = atoi(optarg); break;
			case 6: hold_ms = atoi(optarg); break;
			case 7: ordhist = optarg; break;
			default:
				fprintf(stderr, "usage: stress-gproducer -d CONNINFO -q QUEUE -o HIST --order-out ORD -p PREFIX -t SECONDS [--groups N] [--max-batch B] [--procs P] [--hold-ms H] [--pause-ms P] [--ms-max M]\n");
				return 2;
		}
	}
	if (hist == NULL || ordhist == NULL || conninfo == NULL || groups < 1 || max_batch < 2 || max_batch > 20)
	{
		fprintf(stderr, "stress-gproducer: -d, -o and --order-out are required; --groups >= 1, --max-batch 2..20\n");
		return 2;
	}
	install_stop_handler();
	for (k = 0; k < procs; k++)
	{
		pid_t		pid = fork();

		if (pid == 0)
		{
			snprintf(pfx, sizeof(pfx), "%s.%d", prefix, k);
			snprintf(hp, sizeof(hp), "%s.%d", hist, k);
			snprintf(op, sizeof(op), "%s.%d", ordhist, k);
			_exit(run_one(pfx, hp, op));
		}
	}
	while (wait(&st) > 0)
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			bad++;
	return bad ? 1 : 0;
}
