/*-------------------------------------------------------------------------
 *
 * ratelimit.c
 *	  Per-client rate limits of jobq-web: a token bucket per client address
 *	  and kind of request (API reads, actions, enqueues).  A bucket holds at
 *	  most its burst and refills at its rate; a request that finds it empty
 *	  is answered 429 before anything else is done.  The table is small and
 *	  the longest-idle address makes room.  The rates and bursts are
 *	  web_config's (--rate-limits); a rate of 0 is no limit.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/web/ratelimit.c
 *
 *-------------------------------------------------------------------------
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "web.h"

#define RATE_SLOTS 1024

typedef struct Client
{
	char		ip[64];
	double		tokens[WEB_RATE__COUNT];
	double		at[WEB_RATE__COUNT];	/* when tokens were last brought up to date */
	double		seen;
} Client;

static Client clients[RATE_SLOTS];
static pthread_mutex_t rate_lock = PTHREAD_MUTEX_INITIALIZER;

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int
web_rate_take(const char *ip, WebRateKind kind)
{
	double		now = now_s();
	Client	   *c = NULL;
	Client	   *idle = &clients[0];
	int			ok;
	const double *rate = web_config.rate;
	const double *burst = web_config.burst;

	if (rate[kind] == 0)
		return 1;
	pthread_mutex_lock(&rate_lock);
	for (int i = 0; i < RATE_SLOTS && c == NULL; i++)
	{
		if (clients[i].ip[0] != '\0' && strcmp(clients[i].ip, ip) == 0)
			c = &clients[i];
		else if (clients[i].seen < idle->seen)
			idle = &clients[i];
	}
	if (c == NULL)
	{
		c = idle;
		snprintf(c->ip, sizeof(c->ip), "%s", ip);
		for (int k = 0; k < WEB_RATE__COUNT; k++)
		{
			c->tokens[k] = burst[k];
			c->at[k] = now;
		}
	}
	c->seen = now;
	c->tokens[kind] += (now - c->at[kind]) * rate[kind];
	if (c->tokens[kind] > burst[kind])
		c->tokens[kind] = burst[kind];
	c->at[kind] = now;
	ok = c->tokens[kind] >= 1;
	if (ok)
		c->tokens[kind] -= 1;
	pthread_mutex_unlock(&rate_lock);
	return ok;
}
