/*-------------------------------------------------------------------------
 *
 * cache.c
 *	  The server-side cache of GET answers: at most one database query per
 *	  key (the role, the endpoint and its parameters) per --min-refresh,
 *	  however many browser tabs poll.  A request that misses while another
 *	  one fills the same key waits for that answer instead of querying too,
 *	  so concurrent pollers cost one query.  A failed answer (a statement
 *	  timeout, the database gone) goes to the requests that waited for it
 *	  and is kept for a second (at most --min-refresh): a query over the
 *	  timeout costs the polling tabs one timeout, not one each in turn (each
 *	  libmicrohttpd thread serves its connections one at a time), while a
 *	  database back after a restart is seen within a second.  The table is
 *	  small and its oldest entry makes room.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/web/cache.c
 *
 *-------------------------------------------------------------------------
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jobq-common.h"
#include "web.h"

#define CACHE_SLOTS 256
#define CACHE_FAILED_MS 1000	/* a failed answer is kept this long at most */

typedef struct Entry
{
	char	   *key;
	WebResult	res;			/* body NULL while filling */
	int64_t		at_ms;			/* when filled (or started filling) */
	int			filling;
	int			failed;			/* res is a failure: kept CACHE_FAILED_MS at most */
	unsigned	fills;			/* fills finished, so a waiter knows its own */
} Entry;

static Entry entries[CACHE_SLOTS];
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cache_filled = PTHREAD_COND_INITIALIZER;

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* how long a failed answer is kept: a second at most, never past --min-refresh */
static int64_t
failed_keep_ms(void)
{
	return web_config.min_refresh_ms < CACHE_FAILED_MS ? web_config.min_refresh_ms : CACHE_FAILED_MS;
}

static Entry *
find(const char *key)
{
	for (int i = 0; i < CACHE_SLOTS; i++)
		if (entries[i].key != NULL && strcmp(entries[i].key, key) == 0)
			return &entries[i];
	return NULL;
}

/*
 * web_cache_get: 1 and a copy of a fresh answer in out; or 0, and the
 * caller must query and then call web_cache_put with the same key (also
 * on failure: the waiters get it, and requests for a second after).
 */
int
web_cache_get(const char *key, WebResult *out)
{
	Entry	   *e;

	pthread_mutex_lock(&cache_lock);
	for (;;)
	{
		unsigned	fills;

		e = find(key);
		if (e == NULL ||
			(!e->filling && now_ms() - e->at_ms >= (e->failed ? failed_keep_ms() :
													 web_config.min_refresh_ms)))
			break;
		if (!e->filling)
			goto answer;
		/* another request fills it: wait for that fill, and take its answer */
		fills = e->fills;
		while (e->key != NULL && strcmp(e->key, key) == 0 && e->filling && e->fills == fills)
			pthread_cond_wait(&cache_filled, &cache_lock);
		if (e->key != NULL && strcmp(e->key, key) == 0 && !e->filling && e->fills != fills &&
			e->res.body != NULL)
			goto answer;
		/* the entry went (made room for another key): look again */
	}
	if (e == NULL)
	{
		Entry	   *oldest = &entries[0];

		for (int i = 0; i < CACHE_SLOTS; i++)
		{
			if (entries[i].key == NULL)
			{
				oldest = &entries[i];
				break;
			}
			if (!entries[i].filling && entries[i].at_ms < oldest->at_ms)
				oldest = &entries[i];
		}
		e = oldest;
		free(e->key);
		e->key = jobq_xstrdup(key);
	}
	free(e->res.body);
	e->res.body = NULL;
	e->failed = 0;
	e->filling = 1;
	e->at_ms = now_ms();
	pthread_mutex_unlock(&cache_lock);
	return 0;

answer:
	out->status = e->res.status;
	out->body = jobq_xstrdup(e->res.body);
	out->download[0] = '\0';
	pthread_mutex_unlock(&cache_lock);
	return 1;
}

void
web_cache_put(const char *key, const WebResult *res)
{
	Entry	   *e;

	pthread_mutex_lock(&cache_lock);
	e = find(key);
	if (e != NULL && e->filling)
	{
		e->filling = 0;
		e->fills++;
		free(e->res.body);
		e->res.status = res->status;
		e->res.body = jobq_xstrdup(res->body);
		e->failed = res->status != 200;
		e->at_ms = now_ms();
	}
	pthread_cond_broadcast(&cache_filled);
	pthread_mutex_unlock(&cache_lock);
}

/* after an action: every kept answer may be stale now */
void
web_cache_invalidate(void)
{
	pthread_mutex_lock(&cache_lock);
	for (int i = 0; i < CACHE_SLOTS; i++)
		if (entries[i].key != NULL && !entries[i].filling)
			entries[i].at_ms = INT64_MIN / 2;
	pthread_mutex_unlock(&cache_lock);
}
