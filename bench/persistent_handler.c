/*
 * persistent_handler.c: the no-op persistent handler the benchmarks give
 * jobq-worker --persistent (doc/jobq-worker.md, "Persistent handlers"): says
 * it takes JOBS jobs at a time (argv[1], default 1), then answers each job
 * line with {"id":N,"status":"completed"}.  It reads what the pipe holds and
 * answers every whole line of it in one write.  The worker writes "id"
 * first, so the id is read without parsing the rest.  With $JOBQ_BENCH_LOG
 * set, it appends "id start_ns" (CLOCK_MONOTONIC, the moment it read the job
 * line) for every job to that file, as bench/handler does for a process per
 * job: the latency rows of the persistent mode.  libc only.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BUF (1 << 20)

int
main(int argc, char **argv)
{
	static char in[BUF];
	static char out[BUF];
	size_t		have = 0;
	int			jobs = argc > 1 ? atoi(argv[1]) : 1;
	int			n = snprintf(out, sizeof(out), "{\"ready\": true, \"jobs\": %d}\n",
							 jobs > 0 ? jobs : 1);
	ssize_t		got;
	const char *logpath = getenv("JOBQ_BENCH_LOG");
	int			logfd = logpath ? open(logpath, O_WRONLY | O_APPEND | O_CREAT, 0644) : -1;
	static char logbuf[BUF];

	if (write(1, out, n) != n)
		return 1;
	while ((got = read(0, in + have, sizeof(in) - have)) > 0)
	{
		size_t		start = 0,
					len = 0,
					loglen = 0;
		char	   *nl;
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		have += (size_t) got;
		while ((nl = memchr(in + start, '\n', have - start)) != NULL)
		{
			const char *id = strstr(in + start, "{\"id\":");

			if (id == NULL || id != in + start || len + 64 > sizeof(out))
				return 1;
			len += snprintf(out + len, sizeof(out) - len,
							"{\"id\":%lld,\"status\":\"completed\"}\n", atoll(id + 6));
			if (logfd >= 0 && loglen + 64 < sizeof(logbuf))
				loglen += snprintf(logbuf + loglen, sizeof(logbuf) - loglen, "%lld %lld\n",
								   atoll(id + 6),
								   (long long) ts.tv_sec * 1000000000LL + ts.tv_nsec);
			start = (size_t) (nl - in) + 1;
		}
		memmove(in, in + start, have - start);
		have -= start;
		if (have == sizeof(in))
			return 1;			/* a line longer than the buffer */
		if (loglen > 0 && write(logfd, logbuf, loglen) != (ssize_t) loglen)
			return 1;
		if (len > 0 && write(1, out, len) != (ssize_t) len)
			return 1;
	}
	return 0;
}
