/*-------------------------------------------------------------------------
 *
 * web-load.c
 *	  A small HTTP/1.1 load generator for jobq-web's read endpoints (no
 *	  load tool is packaged on the benchmark machines): CONNS threads, each
 *	  one keep-alive connection sending GET PATH back to back for SECONDS;
 *	  prints one line of JSON with the requests a second, the latency
 *	  percentiles and the statuses that were not 200.
 *
 *	  web-load HOST PORT PATH CONNS SECONDS
 *
 *	  Answers are read by Content-Length (jobq-web always sends it); a
 *	  connection the server closes is opened again.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  bench/web-load.c
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE				/* strcasestr */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_SAMPLES (4 * 1024 * 1024)

static struct sockaddr_in addr;
static char request[2048];
static double stop_at;
static double *samples;			/* latencies, ms */
static long nsamples;
static long non200;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
open_conn(void)
{
	int			fd = socket(AF_INET, SOCK_STREAM, 0);
	int			one = 1;

	if (fd < 0)
		return -1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *) &addr, sizeof(addr)) != 0)
	{
		close(fd);
		return -1;
	}
	return fd;
}

/* one request and its answer; the status, or -1 when the connection broke */
static int
exchange(int fd, char *buf, size_t size)
{
	size_t		have = 0;
	char	   *end = NULL;
	long		length = -1;
	int			status;

	if (write(fd, request, strlen(request)) != (ssize_t) strlen(request))
		return -1;
	for (;;)
	{
		ssize_t		n = read(fd, buf + have, size - 1 - have);

		if (n <= 0)
			return -1;
		have += n;
		buf[have] = '\0';
		if (end == NULL && (end = strstr(buf, "\r\n\r\n")) != NULL)
		{
			const char *cl = strcasestr(buf, "\r\nContent-Length:");

			if (cl == NULL || cl > end)
				return -1;
			length = strtol(cl + 17, NULL, 10);
		}
		if (end != NULL && have >= (size_t) (end + 4 - buf) + length)
			break;
		if (have == size - 1)
			return -1;			/* larger than the buffer: not a read this bench makes */
	}
	if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1)
		return -1;
	return status;
}

static void *
run(void *arg)
{
	char	   *buf = malloc(4 * 1024 * 1024);
	int			fd = -1;

	(void) arg;
	while (now_s() < stop_at)
	{
		double		t0;
		int			st;

		if (fd < 0 && (fd = open_conn()) < 0)
			break;
		t0 = now_s();
		st = exchange(fd, buf, 4 * 1024 * 1024);
		if (st < 0)
		{
			close(fd);
			fd = -1;
			continue;
		}
		pthread_mutex_lock(&lock);
		if (nsamples < MAX_SAMPLES)
			samples[nsamples++] = (now_s() - t0) * 1000;
		if (st != 200)
			non200++;
		pthread_mutex_unlock(&lock);
	}
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

static int
cmp(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	int			conns;
	double		seconds,
				t0;
	pthread_t  *th;

	if (argc != 6)
	{
		fprintf(stderr, "usage: web-load HOST PORT PATH CONNS SECONDS\n");
		return 2;
	}
	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_port = htons((uint16_t) atoi(argv[2]));
	if (inet_pton(AF_INET, argv[1], &addr.sin_addr) != 1)
	{
		fprintf(stderr, "web-load: HOST must be an IPv4 address\n");
		return 2;
	}
	snprintf(request, sizeof(request),
			 "GET %s HTTP/1.1\r\nHost: %s:%s\r\nAccept: application/json\r\n\r\n",
			 argv[3], argv[1], argv[2]);
	conns = atoi(argv[4]);
	seconds = atof(argv[5]);
	if (conns < 1 || conns > 256 || seconds <= 0)
	{
		fprintf(stderr, "web-load: CONNS 1..256, SECONDS > 0\n");
		return 2;
	}
	samples = malloc(sizeof(double) * MAX_SAMPLES);
	th = calloc(conns, sizeof(pthread_t));
	t0 = now_s();
	stop_at = t0 + seconds;
	for (int i = 0; i < conns; i++)
		pthread_create(&th[i], NULL, run, NULL);
	for (int i = 0; i < conns; i++)
		pthread_join(th[i], NULL);
	seconds = now_s() - t0;
	qsort(samples, nsamples, sizeof(double), cmp);
#define PCT(p) (nsamples ? samples[(long) ((nsamples - 1) * (p))] : 0)
	printf("{\"path\": \"%s\", \"conns\": %d, \"requests\": %ld, \"per_s\": %.0f, "
		   "\"p50_ms\": %.2f, \"p95_ms\": %.2f, \"p99_ms\": %.2f, \"non200\": %ld}\n",
		   argv[3], conns, nsamples, nsamples / seconds, PCT(0.50), PCT(0.95), PCT(0.99), non200);
	return nsamples > 0 ? 0 : 1;
}
