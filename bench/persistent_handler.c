/*
 * persistent_handler.c: the no-op persistent handler the benchmarks give
 * jobq-worker --persistent (doc/jobq-worker.md, "Persistent handlers"): says
 * it takes JOBS jobs at a time (argv[1], default 1), then answers each job
 * line with {"id":N,"status":"completed"}.  It reads what the pipe holds and
 * answers every whole line of it in one write.  The worker writes "id"
 * first, so the id is read without parsing the rest.  libc only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

	if (write(1, out, n) != n)
		return 1;
	while ((got = read(0, in + have, sizeof(in) - have)) > 0)
	{
		size_t		start = 0,
					len = 0;
		char	   *nl;

		have += (size_t) got;
		while ((nl = memchr(in + start, '\n', have - start)) != NULL)
		{
			const char *id = strstr(in + start, "{\"id\":");

			if (id == NULL || id != in + start || len + 64 > sizeof(out))
				return 1;
			len += snprintf(out + len, sizeof(out) - len,
							"{\"id\":%lld,\"status\":\"completed\"}\n", atoll(id + 6));
			start = (size_t) (nl - in) + 1;
		}
		memmove(in, in + start, have - start);
		have -= start;
		if (have == sizeof(in))
			return 1;			/* a line longer than the buffer */
		if (len > 0 && write(1, out, len) != (ssize_t) len)
			return 1;
	}
	return 0;
}
