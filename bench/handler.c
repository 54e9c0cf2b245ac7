/*
 * handler.c: the job handler the benchmarks give jobq-worker.  A real
 * process per job, as small as one can be: no libraries beyond libc.  Reads
 * the payload on stdin, appends "JOBQ_JOB_ID start_ns" (CLOCK_MONOTONIC, the
 * moment the handler runs) to $JOBQ_BENCH_LOG when set, exits 0.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int
main(void)
{
	struct timespec ts;
	const char *log = getenv("JOBQ_BENCH_LOG");
	const char *id = getenv("JOBQ_JOB_ID");
	char		buf[4096];

	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (log && id)
	{
		int			fd = open(log, O_WRONLY | O_APPEND | O_CREAT, 0644);

		if (fd >= 0)
		{
			int			n = snprintf(buf, sizeof buf, "%lld %lld\n", atoll(id),
									 (long long) ts.tv_sec * 1000000000LL + ts.tv_nsec);

			if (write(fd, buf, n) != n)
				return 1;
			close(fd);
		}
	}
	while (read(0, buf, sizeof buf) > 0)
		;
	return 0;
}
