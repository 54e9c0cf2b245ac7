/*
 * common.c: helpers shared by the stress programs.
 */
#include "common.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

volatile int stop_flag = 0;

static void
on_stop(int sig)
{
	(void) sig;
	stop_flag = 1;
}

void
install_stop_handler(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int64_t
ts_to_us(const char *s)
{
	struct tm	tm;
	int			y, mo, d, h, mi, sec, n = 0;
	int64_t		us = 0, off = 0;
	const char *p;

	if (s == NULL)
		return 0;
	if (sscanf(s, "%d-%d-%d %d:%d:%d%n", &y, &mo, &d, &h, &mi, &sec, &n) < 6)
		return 0;
	p = s + n;
	if (*p == '.')
	{
		int			digits = 0;

		p++;
		while (*p >= '0' && *p <= '9')
		{
			if (digits < 6)
			{
				us = us * 10 + (*p - '0');
				digits++;
			}
			p++;
		}
		while (digits++ < 6)
			us *= 10;
	}
	if (*p == '+' || *p == '-')
	{
		int			sign = (*p == '-') ? -1 : 1;
		int			oh = 0, om = 0, os = 0;

		p++;
		sscanf(p, "%d", &oh);
		if ((p = strchr(p, ':')) != NULL)
		{
			sscanf(p + 1, "%d", &om);
			if ((p = strchr(p + 1, ':')) != NULL)
				sscanf(p + 1, "%d", &os);
		}
		off = sign * ((int64_t) oh * 3600 + om * 60 + os);
	}
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	return ((int64_t) timegm(&tm) - off) * 1000000 + us;
}

int64_t
server_now_us(JobqConn *conn)
{
	PGconn	   *pg = jobq_pgconn(conn);
	PGresult   *r;
	int64_t		v = 0;

	if (pg == NULL || PQstatus(pg) != CONNECTION_OK)
		return 0;
	r = PQexec(pg, "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint");
	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
		v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	return v;
}

static const char *
json_find(const char *json, const char *key)
{
	char		pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\"", key);
	p = strstr(json, pat);
	if (p == NULL)
		return NULL;
	p += strlen(pat);
	while (*p == ' ')
		p++;
	if (*p != ':')
		return NULL;
	p++;
	while (*p == ' ')
		p++;
	return p;
}

int
json_str_field(const char *json, const char *key, char *buf, size_t bufsz)
{
	const char *p = json ? json_find(json, key) : NULL;
	size_t		n = 0;

	if (p == NULL || *p != '"')
		return -1;
	p++;
	while (*p && *p != '"' && n + 1 < bufsz)
		buf[n++] = *p++;
	buf[n] = '\0';
	return 0;
}

long long
json_int_field(const char *json, const char *key, long long def)
{
	const char *p = json ? json_find(json, key) : NULL;

	if (p == NULL || !((*p >= '0' && *p <= '9') || *p == '-'))
		return def;
	return strtoll(p, NULL, 10);
}

FILE *
hist_open(const char *path)
{
	FILE	   *f = fopen(path, "a");

	if (f == NULL)
	{
		fprintf(stderr, "cannot open %s: %s\n", path, strerror(errno));
		exit(2);
	}
	setvbuf(f, NULL, _IOLBF, 0);
	return f;
}

int64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
sleep_ms(int ms)
{
	struct timespec ts;

	if (ms <= 0)
		return;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (long) (ms % 1000) * 1000000L;
	nanosleep(&ts, NULL);
}

static uint64_t rstate = 88172645463325252ULL;

void
rnd_seed(uint64_t s)
{
	rstate = s ? s : 88172645463325252ULL;
}

uint64_t
rnd(void)
{
	rstate ^= rstate << 13;
	rstate ^= rstate >> 7;
	rstate ^= rstate << 17;
	return rstate;
}

double
rnd01(void)
{
	return (rnd() >> 11) * (1.0 / 9007199254740992.0);
}

JobqConn *
connect_retry(const char *conninfo, unsigned flags, int timeout_ms)
{
	int64_t		deadline = mono_ms() + timeout_ms;

	for (;;)
	{
		JobqConn   *c = jobq_connect_ex(conninfo, NULL, flags);

		if (c && jobq_status(c) == JOBQ_ERR_NONE)
			return c;
		if (mono_ms() > deadline || stop_flag)
		{
			fprintf(stderr, "connect failed: %s\n", jobq_errmsg(c));
			jobq_disconnect(c);
			return NULL;
		}
		jobq_disconnect(c);
		sleep_ms(200);
	}
}

int
reconnect_retry(JobqConn *conn, int timeout_ms)
{
	int64_t		deadline = mono_ms() + timeout_ms;

	for (;;)
	{
		if (jobq_reconnect(conn) == JOBQ_OK)
			return JOBQ_OK;
		if (mono_ms() > deadline || stop_flag)
			return JOBQ_ERR;
		sleep_ms(200);
	}
}

int
conn_lost(JobqConn *conn)
{
	if (jobq_status(conn) == JOBQ_ERR_CONNECTION)
		return 1;
	if (jobq_error_action(conn) == JOBQ_ACTION_RECONNECT)
		return 1;
	return !jobq_is_connected(conn);
}
