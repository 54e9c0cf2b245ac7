/*-------------------------------------------------------------------------
 *
 * driver.c
 *	  Benchmark driver for jobq through libjobq (linked statically with
 *	  client/libjobq.a).  One process per client, each with its own
 *	  connection; all clients connect first, then start together, and the
 *	  clock runs from that start to the last client's end (connection set-up
 *	  is excluded, as pgbench does).  The handler is a no-op in-process.
 *
 *	  driver drain    -d CONNINFO -q QUEUE -c CLIENTS -b BATCH
 *	      claim BATCH jobs, no-op, complete, until a claim comes back empty.
 *	      As jobq-worker does, each call completes the previous batch and
 *	      claims the next in one round trip and transaction
 *	      (jobq_complete_and_claim).  With -w USEC, each batch takes USEC of
 *	      work (a sleep: jobs of that length run in parallel, one slot each;
 *	      0: none) before it is completed, and the drain ends at the first
 *	      empty claim once the queue has no live job left: a claim of a
 *	      grouped or limited queue comes back empty while others hold its
 *	      groups or slots.
 *	  driver enqueue  -d CONNINFO -q QUEUE -c CLIENTS -T SECONDS
 *	      jobq_enqueue, one job per call (= per transaction), for SECONDS.
 *	  driver enqueue-batch -d CONNINFO -q QUEUE -c CLIENTS -n CALLS -s SIZE
 *	      jobq_enqueue_batch of SIZE payloads, CALLS times per client.
 *	  driver produce  -d CONNINFO -q QUEUE -n JOBS -i MILLISECONDS -o FILE
 *	      enqueue JOBS jobs one at a time, one per transaction, about
 *	      MILLISECONDS apart; write "id commit_ns" lines (CLOCK_MONOTONIC,
 *	      taken when the commit returned) to FILE.
 *	  driver consume  -d CONNINFO -q QUEUE -c CLIENTS -o FILE [-p POLL_MS]
 *	                  [--no-listen | --blocking]
 *	      idle workers: claim 1, write "id start_ns" to FILE (the handler
 *	      start), complete; when nothing is ready, jobq_wait_for_work
 *	      (LISTEN) or sleep POLL_MS (--no-listen); with --blocking, a
 *	      blocking claim (jobq_claim_wait, 5 s) that the server wakes at the
 *	      enqueue's commit, no LISTEN.  Runs until SIGTERM.
 *	  driver wait     -d CONNINFO -q QUEUE -c CLIENTS
 *	      CLIENTS connections that sit in blocking claims on QUEUE (which
 *	      gets no jobs) until SIGTERM: idle waiters, to measure what they
 *	      cost producers of other queues.
 *	  driver handler
 *	      a job handler for jobq-worker: reads the payload on stdin,
 *	      appends "JOBQ_JOB_ID start_ns" to $JOBQ_BENCH_LOG when set, exits 0.
 *	  driver spawn    -n N -i MILLISECONDS -o FILE -x PROGRAM
 *	      no database: vfork + exec PROGRAM (bench/handler) N times, about
 *	      MILLISECONDS apart, as jobq-worker starts handlers; write "i t0_ns"
 *	      lines (taken just before vfork) to FILE.  The floor of the
 *	      jobq-worker latency rows.
 *
 *	  drain/enqueue/enqueue-batch print one line:
 *	      jobs=N seconds=S rate=R errors=E
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  bench/driver.c
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jobq-client.h"

#define MAX_CLIENTS 256
#define PAYLOAD "{\"to\":\"user@example.com\",\"n\":1}"

static const char *conninfo = "";
static const char *queue = "bench";
static int	clients = 1;
static int	batch = 1;
static double seconds = 1.0;
static long ncalls = 1;
static int	size = 1000;
static long njobs = 100;
static int	interval_ms = 5;
static long work_us = -1;	/* -w: -1 none */
static int	poll_ms = 50;
static int	no_listen = 0;
static int	blocking = 0;
static const char *outfile = NULL;
static const char *program = NULL;
static volatile sig_atomic_t stop = 0;

/* per-client results, shared with the parent */
typedef struct Shared
{
	volatile int go;
	long		jobs[MAX_CLIENTS];
	long		errors[MAX_CLIENTS];
} Shared;
static Shared *shared;

static int64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void
die(const char *what, JobqConn *conn)
{
	fprintf(stderr, "driver: %s: %s\n", what, conn ? jobq_errmsg(conn) : "");
	exit(2);
}

static JobqConn *
connect_or_die(unsigned flags)
{
	JobqConn   *conn = jobq_connect_ex(conninfo, NULL, flags);

	if (conn == NULL || jobq_status(conn) != JOBQ_ERR_NONE)
		die("connect", conn);
	return conn;
}

static void
on_term(int sig)
{
	(void) sig;
	stop = 1;
}

/* ---------------------------------------------------------------------- */

/*
 * queue_has_jobs: whether the queue still has live jobs (jobq_stats).
 */
static int
queue_has_jobs(JobqConn *conn)
{
	JobqRows   *rows = jobq_stats(conn, queue);
	int			live;

	if (rows == NULL)
		die("counts", conn);
	live = jobq_rows_count(rows) > 0 &&
		jobq_rows_get_int64(rows, 0, "ready") + jobq_rows_get_int64(rows, 0, "delayed") +
		jobq_rows_get_int64(rows, 0, "running") > 0;
	jobq_rows_free(rows);
	return live;
}

/*
 * client_drain: the shape jobq-worker uses.  Each round trip completes the
 * previous batch and claims the next in one transaction
 * (jobq_complete_and_claim): one commit per batch instead of two.
 */
static long
client_drain(JobqConn *conn, long *errors)
{
	const char *qs[1] = {queue};
	long		done = 0;
	int64_t    *ids = malloc(sizeof(int64_t) * batch);
	const char **toks = malloc(sizeof(char *) * batch);
	int		   *acc = malloc(sizeof(int) * batch);
	JobqJobList *prev = NULL;
	size_t		n = 0;

	for (;;)
	{
		JobqJobList *list = jobq_complete_and_claim(conn, n, ids, toks, acc,
													qs, 1, batch, -1, "driver");

		if (list == NULL)
		{
			(*errors)++;
			die("complete_and_claim", conn);
		}
		for (size_t i = 0; i < n; i++)
		{
			if (acc[i])
				done++;
			else
				(*errors)++;
		}
		jobq_joblist_free(prev);	/* the tokens just completed */
		prev = list;
		n = jobq_joblist_count(list);
		if (n == 0 && work_us >= 0 && queue_has_jobs(conn))
		{
			usleep(1000);		/* the slots are others': try again */
			continue;
		}
		if (n == 0)
			break;
		if (work_us > 0)
			usleep((useconds_t) work_us);
		for (size_t i = 0; i < n; i++)
		{
			const JobqJob *job = jobq_joblist_get(list, i);
			size_t		len;

			(void) jobq_job_payload(job, &len);	/* the no-op handler */
			ids[i] = jobq_job_id(job);
			toks[i] = jobq_job_token(job);	/* points into list */
		}
	}
	jobq_joblist_free(prev);
	free(ids);
	free(toks);
	free(acc);
	return done;
}

static long
client_enqueue(JobqConn *conn, long *errors, int64_t deadline)
{
	long		done = 0;

	while (now_ns() < deadline)
	{
		if (jobq_enqueue(conn, queue, PAYLOAD, strlen(PAYLOAD), NULL, NULL) != JOBQ_OK)
		{
			(*errors)++;
			die("enqueue", conn);
		}
		done++;
	}
	return done;
}

static long
client_enqueue_batch(JobqConn *conn, long *errors)
{
	const char **p = malloc(sizeof(char *) * size);
	size_t	   *lens = malloc(sizeof(size_t) * size);
	char	  **bufs = malloc(sizeof(char *) * size);
	long		done = 0;

	for (int i = 0; i < size; i++)
	{
		bufs[i] = malloc(64);
		snprintf(bufs[i], 64, "{\"to\":\"user@example.com\",\"n\":%d}", i + 1);
		p[i] = bufs[i];
		lens[i] = strlen(bufs[i]);
	}
	for (long c = 0; c < ncalls; c++)
	{
		if (jobq_enqueue_batch(conn, queue, (size_t) size, p, lens, NULL, NULL, NULL, NULL) != JOBQ_OK)
		{
			(*errors)++;
			die("enqueue_batch", conn);
		}
		done += size;
	}
	return done;
}

/*
 * run_clients: fork the clients, let them connect, start them together,
 * wait for all, print the figure.
 */
static int
run_clients(const char *mode)
{
	pid_t		pids[MAX_CLIENTS];
	int			ready[2];
	int64_t		t0,
				t1;
	long		jobs = 0,
				errors = 0;
	int			failed = 0;

	shared = mmap(NULL, sizeof(Shared), PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED)
	{
		perror("mmap");
		return 2;
	}
	if (pipe(ready) != 0)
	{
		perror("pipe");
		return 2;
	}
	for (int c = 0; c < clients; c++)
	{
		pids[c] = fork();
		if (pids[c] < 0)
		{
			perror("fork");
			return 2;
		}
		if (pids[c] == 0)
		{
			JobqConn   *conn;
			long		n = 0;

			close(ready[0]);
			conn = connect_or_die(JOBQ_CONNECT_NO_LISTEN);
			if (write(ready[1], "r", 1) != 1)
				_exit(2);
			close(ready[1]);
			while (!shared->go)
				usleep(100);
			if (strcmp(mode, "drain") == 0)
				n = client_drain(conn, &shared->errors[c]);
			else if (strcmp(mode, "enqueue") == 0)
				n = client_enqueue(conn, &shared->errors[c],
								   now_ns() + (int64_t) (seconds * 1e9));
			else
				n = client_enqueue_batch(conn, &shared->errors[c]);
			shared->jobs[c] = n;
			jobq_disconnect(conn);
			_exit(0);
		}
	}
	close(ready[1]);
	for (int c = 0; c < clients; c++)
	{
		char		b;

		if (read(ready[0], &b, 1) != 1)
		{
			fprintf(stderr, "driver: a client failed to connect\n");
			failed = 1;
			break;
		}
	}
	t0 = now_ns();
	__atomic_store_n(&shared->go, 1, __ATOMIC_SEQ_CST);
	for (int c = 0; c < clients; c++)
	{
		int			st;

		waitpid(pids[c], &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			failed = 1;
	}
	t1 = now_ns();
	for (int c = 0; c < clients; c++)
	{
		jobs += shared->jobs[c];
		errors += shared->errors[c];
	}
	{
		double		s = (t1 - t0) / 1e9;

		printf("jobs=%ld seconds=%.4f rate=%.1f errors=%ld\n",
			   jobs, s, s > 0 ? jobs / s : 0.0, errors);
	}
	return failed ? 1 : 0;
}

/* ---------------------------------------------------------------------- */

static int
produce(void)
{
	JobqConn   *conn = connect_or_die(JOBQ_CONNECT_NO_LISTEN);
	FILE	   *out = fopen(outfile, "w");
	int64_t		next = now_ns();

	if (out == NULL)
	{
		perror(outfile);
		return 2;
	}
	for (long i = 0; i < njobs; i++)
	{
		int64_t		id,
					t;

		while (now_ns() < next)
			usleep(200);
		if (jobq_enqueue(conn, queue, PAYLOAD, strlen(PAYLOAD), NULL, &id) != JOBQ_OK)
			die("enqueue", conn);
		t = now_ns();			/* autocommit: the commit has returned */
		fprintf(out, "%lld %lld\n", (long long) id, (long long) t);
		next += (int64_t) interval_ms * 1000000;
	}
	fclose(out);
	jobq_disconnect(conn);
	return 0;
}

static void
log_start(int fd, int64_t id, int64_t t)
{
	char		line[64];
	int			len = snprintf(line, sizeof line, "%lld %lld\n", (long long) id, (long long) t);

	if (write(fd, line, len) != len)
		perror("write");
}

static int
consume(void)
{
	pid_t		pids[MAX_CLIENTS];
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	for (int c = 0; c < clients; c++)
	{
		pids[c] = fork();
		if (pids[c] == 0)
		{
			JobqConn   *conn = connect_or_die(no_listen ? JOBQ_CONNECT_NO_LISTEN : 0);
			int			fd = open(outfile, O_WRONLY | O_APPEND | O_CREAT, 0644);
			const char *qs[1] = {queue};

			if (fd < 0)
			{
				perror(outfile);
				_exit(2);
			}
			while (!stop)
			{
				JobqJobList *list = blocking
					? jobq_claim_wait(conn, qs, 1, 1, -1, "driver", 5000)
					: jobq_claim(conn, qs, 1, 1, -1, "driver");

				if (list == NULL)
				{
					if (stop)
						break;
					die("claim", conn);
				}
				if (jobq_joblist_count(list) > 0)
				{
					const JobqJob *job = jobq_joblist_get(list, 0);

					log_start(fd, jobq_job_id(job), now_ns());
					if (jobq_complete(conn, jobq_job_id(job), jobq_job_token(job), NULL, 0) != JOBQ_OK)
						fprintf(stderr, "driver: complete: %s\n", jobq_errmsg(conn));
					jobq_joblist_free(list);
					continue;
				}
				jobq_joblist_free(list);
				if (!blocking &&
					jobq_wait_for_work(conn, qs, 1, poll_ms) == JOBQ_ERR && !stop)
					die("wait_for_work", conn);
			}
			close(fd);
			jobq_disconnect(conn);
			_exit(0);
		}
	}
	while (!stop)
		pause();
	/* signal them all first: each may sit in a blocking claim for seconds */
	for (int c = 0; c < clients; c++)
		kill(pids[c], SIGTERM);
	for (int c = 0; c < clients; c++)
		waitpid(pids[c], NULL, 0);
	return 0;
}

static int
handler(void)
{
	int64_t		t = now_ns();
	const char *log = getenv("JOBQ_BENCH_LOG");
	const char *id = getenv("JOBQ_JOB_ID");
	char		buf[4096];

	if (log && id)
	{
		int			fd = open(log, O_WRONLY | O_APPEND | O_CREAT, 0644);

		if (fd >= 0)
		{
			log_start(fd, strtoll(id, NULL, 10), t);
			close(fd);
		}
	}
	while (read(0, buf, sizeof buf) > 0)
		;
	return 0;
}

/*
 * spawn: the baseline of the jobq-worker latency figures.  Start program
 * (bench/handler) njobs times, interval_ms apart, with vfork + exec as
 * jobq-worker does, and log "i t0" to outfile just before each vfork; the
 * handler logs its start as it does under jobq-worker.  What this measures
 * is the operating system's part of "commit -> handler start".
 */
static int
spawn(void)
{
	FILE	   *out = fopen(outfile, "w");

	if (out == NULL)
	{
		perror(outfile);
		return 2;
	}
	for (long i = 1; i <= njobs; i++)
	{
		char		id[32];
		int64_t		t0;
		pid_t		pid;
		int			status;

		snprintf(id, sizeof id, "%ld", i);
		setenv("JOBQ_JOB_ID", id, 1);
		t0 = now_ns();
		pid = vfork();
		if (pid == 0)
		{
			execl(program, program, (char *) NULL);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
			WEXITSTATUS(status) != 0)
		{
			fprintf(stderr, "driver: could not run %s\n", program);
			return 1;
		}
		fprintf(out, "%ld %lld\n", i, (long long) t0);
		usleep((useconds_t) interval_ms * 1000);
	}
	fclose(out);
	return 0;
}

/* ---------------------------------------------------------------------- */

static void
usage(void)
{
	fprintf(stderr,
			"usage: driver drain|enqueue|enqueue-batch|produce|consume|handler|spawn\n"
			"  -d CONNINFO -q QUEUE -c CLIENTS -b BATCH -T SECONDS -n N -s SIZE\n"
			"  -i INTERVAL_MS -p POLL_MS -o FILE -x PROGRAM -w WORK_USEC --no-listen --blocking\n"
			"  (modes also: wait)\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	const char *mode;

	if (argc < 2)
		usage();
	mode = argv[1];
	for (int i = 2; i < argc; i++)
	{
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--no-listen") == 0)
		{
			no_listen = 1;
			continue;
		}
		if (strcmp(a, "--blocking") == 0)
		{
			blocking = 1;
			no_listen = 1;
			continue;
		}
		if (v == NULL)
			usage();
		i++;
		if (strcmp(a, "-d") == 0)
			conninfo = v;
		else if (strcmp(a, "-q") == 0)
			queue = v;
		else if (strcmp(a, "-c") == 0)
			clients = atoi(v);
		else if (strcmp(a, "-b") == 0)
			batch = atoi(v);
		else if (strcmp(a, "-T") == 0)
			seconds = atof(v);
		else if (strcmp(a, "-n") == 0)
			ncalls = njobs = atol(v);
		else if (strcmp(a, "-s") == 0)
			size = atoi(v);
		else if (strcmp(a, "-i") == 0)
			interval_ms = atoi(v);
		else if (strcmp(a, "-p") == 0)
			poll_ms = atoi(v);
		else if (strcmp(a, "-o") == 0)
			outfile = v;
		else if (strcmp(a, "-x") == 0)
			program = v;
		else if (strcmp(a, "-w") == 0)
			work_us = atol(v);
		else
			usage();
	}
	if (clients < 1 || clients > MAX_CLIENTS || batch < 1 || batch > 1000 || size < 1)
		usage();

	if (strcmp(mode, "handler") == 0)
		return handler();
	if (strcmp(mode, "produce") == 0)
		return outfile ? produce() : (usage(), 2);
	if (strcmp(mode, "spawn") == 0)
		return outfile && program ? spawn() : (usage(), 2);
	if (strcmp(mode, "wait") == 0)
	{
		blocking = 1;
		no_listen = 1;
		if (outfile == NULL)
			outfile = "/dev/null";
		return consume();
	}
	if (strcmp(mode, "consume") == 0)
		return outfile ? consume() : (usage(), 2);
	if (strcmp(mode, "drain") == 0 || strcmp(mode, "enqueue") == 0 ||
		strcmp(mode, "enqueue-batch") == 0)
		return run_clients(mode);
	usage();
	return 2;
}
