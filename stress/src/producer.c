/*
 * producer.c: enqueue jobs with unique ids and record every outcome.
 *
 * Each job's payload is {"uid": PREFIX-N, "ms": handler time, "hang": 0|1}.
 * History lines (one per job):
 *   E <uid> ok <id>            the enqueue was acknowledged
 *   E <uid> fail - <sqlstate>  the server answered with an error
 *   E <uid> unknown -          the connection was lost before the answer
 * With --procs P the program forks P producers, each with its own prefix
 * (PREFIX.k) and history file (HIST.k); the parent prints the totals.
 */
#include "common.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *conninfo = NULL, *queue = "stress", *hist = NULL, *prefix = "p";
static long count = 0;
static int	duration_s = 0, batch = 1, ms_min = 0, ms_max = 5, prio_range = 0,
			delay_max = 0, procs = 1, pause_ms = 0, quiet = 0;
static double hang_pct = 0;
static unsigned flags = 0;

static long n_ok, n_fail, n_unknown;

static int
run_one(const char *pfx, const char *histpath)
{
	FILE	   *h = hist_open(histpath);
	JobqConn   *c = connect_retry(conninfo, flags, 60000);
	int64_t		start = mono_ms();
	long		i = 0;

	if (c == NULL)
		return 2;
	rnd_seed((uint64_t) getpid() * 2654435761u ^ (uint64_t) start);
	while (!stop_flag)
	{
		char		payload[256][256];
		const char *pp[256];
		size_t		pl[256];
		char		uids[256][96];
		int64_t		ids[256];
		JobqEnqueueOpts o = JOBQ_ENQUEUE_OPTS_INIT;
		int			k, nb = batch > 256 ? 256 : batch, rc;

		if (count > 0 && i >= count)
			break;
		if (duration_s > 0 && mono_ms() - start > duration_s * 1000L)
			break;
		if (count > 0 && i + nb > count)
			nb = (int) (count - i);
		for (k = 0; k < nb; k++)
		{
			int			ms = ms_min + (ms_max > ms_min ? (int) (rnd() % (ms_max - ms_min + 1)) : 0);
			int			hang = rnd01() < hang_pct / 100.0;

			snprintf(uids[k], sizeof(uids[k]), "%s-%ld", pfx, i + k);
			pl[k] = snprintf(payload[k], sizeof(payload[k]),
							 "{\"uid\":\"%s\",\"ms\":%d,\"hang\":%d}", uids[k], ms, hang);
			pp[k] = payload[k];
		}
		if (prio_range > 0)
			o.priority = (int) (rnd() % (2 * prio_range + 1)) - prio_range;
		if (delay_max > 0)
			o.delay_s = (int) (rnd() % (delay_max + 1));
		if (nb == 1)
			rc = jobq_enqueue(c, queue, pp[0], pl[0], &o, &ids[0]);
		else
			rc = jobq_enqueue_batch(c, queue, nb, pp, pl, NULL, &o, ids, NULL);
		for (k = 0; k < nb; k++)
		{
			if (rc == JOBQ_OK)
			{
				fprintf(h, "E %s ok %lld\n", uids[k], (long long) ids[k]);
				n_ok++;
			}
			else if (conn_lost(c))
			{
				fprintf(h, "E %s unknown -\n", uids[k]);
				n_unknown++;
			}
			else
			{
				fprintf(h, "E %s fail - %s\n", uids[k],
						jobq_sqlstate(c) ? jobq_sqlstate(c) : jobq_error_name(jobq_status(c)));
				n_fail++;
			}
		}
		i += nb;
		if (rc != JOBQ_OK)
		{
			if (conn_lost(c))
			{
				if (reconnect_retry(c, 90000) != JOBQ_OK)
				{
					fprintf(stderr, "producer %s: cannot reconnect, giving up\n", pfx);
					break;
				}
			}
			else
				sleep_ms(20);
		}
		if (pause_ms > 0)
			sleep_ms(pause_ms);
	}
	jobq_disconnect(c);
	fclose(h);
	if (!quiet)
		printf("producer %s: ok=%ld fail=%ld unknown=%ld ms=%lld\n", pfx, n_ok, n_fail,
			   n_unknown, (long long) (mono_ms() - start));
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
		{"count", required_argument, NULL, 'n'},
		{"duration", required_argument, NULL, 't'},
		{"batch", required_argument, NULL, 'b'},
		{"ms-min", required_argument, NULL, 1},
		{"ms-max", required_argument, NULL, 2},
		{"hang-pct", required_argument, NULL, 3},
		{"prio-range", required_argument, NULL, 4},
		{"delay-max", required_argument, NULL, 5},
		{"procs", required_argument, NULL, 6},
		{"pooler", no_argument, NULL, 7},
		{"pause-ms", required_argument, NULL, 8},
		{"quiet", no_argument, NULL, 9},
		{NULL, 0, NULL, 0}
	};
	int			ch, k;
	int64_t		t0;
	char		pfx[128], hp[1024];

	while ((ch = getopt_long(argc, argv, "d:q:o:p:n:t:b:", opts, NULL)) != -1)
	{
		switch (ch)
		{
			case 'd': conninfo = optarg; break;
			case 'q': queue = optarg; break;
			case 'o': hist = optarg; break;
			case 'p': prefix = optarg; break;
			case 'n': count = atol(optarg); break;
			case 't': duration_s = atoi(optarg); break;
			case 'b': batch = atoi(optarg); break;
			case 1: ms_min = atoi(optarg); break;
			case 2: ms_max = atoi(optarg); break;
			case 3: hang_pct = atof(optarg); break;
			case 4: prio_range = atoi(optarg); break;
			case 5: delay_max = atoi(optarg); break;
			case 6: procs = atoi(optarg); break;
			case 7: flags = JOBQ_CONNECT_POOLER; break;
			case 8: pause_ms = atoi(optarg); break;
			case 9: quiet = 1; break;
			default:
				fprintf(stderr, "usage: stress-producer -d CONNINFO -q QUEUE -o HIST -p PREFIX [-n N | -t SECONDS] ...\n");
				return 2;
		}
	}
	if (hist == NULL || (count <= 0 && duration_s <= 0))
	{
		fprintf(stderr, "stress-producer: -o and one of -n/-t are required\n");
		return 2;
	}
	install_stop_handler();
	if (batch < 1)
		batch = 1;
	if (procs <= 1)
		return run_one(prefix, hist);

	t0 = mono_ms();
	for (k = 0; k < procs; k++)
	{
		pid_t		pid = fork();

		if (pid == 0)
		{
			snprintf(pfx, sizeof(pfx), "%s.%d", prefix, k);
			snprintf(hp, sizeof(hp), "%s.%d", hist, k);
			quiet = 1;
			_exit(run_one(pfx, hp));
		}
	}
	{
		int			st, bad = 0;

		while (wait(&st) > 0)
			if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
				bad++;
		printf("producers: %d processes, %lld ms, %d failed\n", procs,
			   (long long) (mono_ms() - t0), bad);
		return bad ? 1 : 0;
	}
}
