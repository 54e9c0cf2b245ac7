/*-------------------------------------------------------------------------
 *
 * listen.c
 *	  jobq_wait_for_work: sleep until a queue may have work, woken by
 *	  LISTEN/NOTIFY on the connection's own socket.
 *
 * jobq_enqueue NOTIFYs the channel "jobq.<queue>" with an empty payload
 * when a job is ready at once.  A notification is only a hint: anyone in
 * the database can send one, the listener's connection can die silently
 * behind a proxy, and a job can become ready without one (a delay runs
 * out, a lease expires, a queue is resumed).  So the caller always polls
 * too: it claims after every wake-up *and* after every timeout.
 *
 * The race this file is careful about: a worker claims (nothing), a
 * producer enqueues and notifies, and only then does the worker LISTEN:
 * that notification is lost.  So the first wait after a new LISTEN
 * returns 1 at once, making the caller claim again now that it listens.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/src/listen.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "jobq-int.h"

/* drain_notifies: consume every queued notification; 1 if there was any */
static int
drain_notifies(JobqConn *conn)
{
	PGnotify   *n;
	int			got = 0;

	while ((n = PQnotifies(conn->pg)) != NULL)
	{
		got = 1;
		PQfreemem(n);
	}
	return got;
}

/* is_listening: conn already LISTENs on channel in this session */
static int
is_listening(const JobqConn *conn, const char *channel)
{
	size_t		i;

	for (i = 0; i < conn->nchannels; i++)
		if (strcmp(conn->channels[i], channel) == 0)
			return 1;
	return 0;
}

/*
 * listen_queue: LISTEN on "jobq.<queue>" unless already done.  Returns 1
 * when a new LISTEN was issued, 0 when it existed, JOBQ_ERR on error.
 *
 * LISTEN takes an identifier, not a parameter, so the channel is quoted
 * with PQescapeIdentifier (the queue name passed the allow-list too).
 */
static int
listen_queue(JobqConn *conn, const char *queue)
{
	char		channel[8 + JOBQ_QUEUE_NAME_MAX];
	char	   *quoted;
	char	   *sql;
	char	   *copy;
	PGresult   *res;
	size_t		len;

	strcpy(channel, "jobq.");
	strcat(channel, queue);
	if (is_listening(conn, channel))
		return 0;
	if (conn->nchannels == conn->channels_cap)
	{
		size_t		cap = conn->channels_cap ? conn->channels_cap * 2 : 8;
		char	  **p = realloc(conn->channels, cap * sizeof(char *));

		if (p == NULL)
			goto oom;
		conn->channels = p;
		conn->channels_cap = cap;
	}
	quoted = PQescapeIdentifier(conn->pg, channel, strlen(channel));
	if (quoted == NULL)
		goto oom;
	len = strlen(quoted) + sizeof("LISTEN ");
	sql = malloc(len);
	copy = jobq_strdup(channel);
	if (sql == NULL || copy == NULL)
	{
		PQfreemem(quoted);
		free(sql);
		free(copy);
		goto oom;
	}
	strcpy(sql, "LISTEN ");
	strcat(sql, quoted);
	PQfreemem(quoted);
	if (!PQsendQuery(conn->pg, sql))
	{
		free(sql);
		free(copy);
		jobq_set_result_error(conn, NULL);
		return JOBQ_ERR;
	}
	free(sql);
	if (jobq_get_result(conn, 0, &res) != JOBQ_OK)
	{
		free(copy);
		return JOBQ_ERR;
	}
	if (res == NULL || PQresultStatus(res) != PGRES_COMMAND_OK)
	{
		free(copy);
		jobq_note_failure(conn, res);
		return JOBQ_ERR;
	}
	PQclear(res);
	conn->channels[conn->nchannels++] = copy;
	return 1;
oom:
	jobq_set_error(conn, JOBQ_ERR_OOM, "out of memory");
	return JOBQ_ERR;
}

/* sleep_ms: poll()-based sleep; returns early on a signal */
static void
sleep_ms(int ms)
{
	if (ms > 0)
		(void) poll(NULL, 0, ms);
}

/*
 * jobq_wait_for_work: see jobq-client.h.
 */
int
jobq_wait_for_work(JobqConn *conn, const char *const *queues, int nqueues,
				   int timeout_ms)
{
	int			i;
	int			fresh = 0;
	int64_t		deadline;

	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	if (queues == NULL)
	{
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT, "queue list is NULL");
		return JOBQ_ERR;
	}
	if (jobq_check_range(conn, "number of queues", nqueues, 1, 1000) != JOBQ_OK ||
		jobq_check_range(conn, "timeout_ms", timeout_ms, 0, 86400000) != JOBQ_OK)
		return JOBQ_ERR;
	for (i = 0; i < nqueues; i++)
		if (jobq_check_queue(conn, queues[i]) != JOBQ_OK)
			return JOBQ_ERR;

	if (conn->flags & JOBQ_CONNECT_NO_LISTEN)
	{
		sleep_ms(timeout_ms);
		return 0;
	}
	if (jobq_ensure_connected(conn) != JOBQ_OK)
		return JOBQ_ERR;
	if (PQtransactionStatus(conn->pg) != PQTRANS_IDLE)
	{
		/* notifications are only delivered between transactions */
		jobq_set_error(conn, JOBQ_ERR_BAD_ARGUMENT,
					   "jobq_wait_for_work called inside a transaction");
		return JOBQ_ERR;
	}
	for (i = 0; i < nqueues; i++)
	{
		int			r = listen_queue(conn, queues[i]);

		if (r == JOBQ_ERR)
			return JOBQ_ERR;
		fresh |= r;
	}
	if (fresh)
	{
		drain_notifies(conn);
		return 1;				/* see the race in the file header */
	}

	/* notifications that arrived during earlier calls */
	if (drain_notifies(conn))
		return 1;

	deadline = jobq_now_ms() + timeout_ms;
	for (;;)
	{
		struct pollfd pfd;
		int64_t		left = deadline - jobq_now_ms();
		int			r;

		if (left <= 0)
			return 0;
		pfd.fd = PQsocket(conn->pg);
		pfd.events = POLLIN;
		pfd.revents = 0;
		if (pfd.fd < 0)
		{
			jobq_set_error(conn, JOBQ_ERR_CONNECTION, "connection has no socket");
			return JOBQ_ERR;
		}
		r = poll(&pfd, 1, (int) left);
		if (r < 0)
		{
			if (errno == EINTR)
				return 0;		/* let the caller look at its signal flags */
			jobq_set_error(conn, JOBQ_ERR_CONNECTION, "poll failed: %s",
						   strerror(errno));
			return JOBQ_ERR;
		}
		if (r == 0)
			return 0;
		/* readable, or hung up: libpq tells which */
		if (!PQconsumeInput(conn->pg))
		{
			jobq_set_error(conn, JOBQ_ERR_CONNECTION, "%s", PQerrorMessage(conn->pg));
			return JOBQ_ERR;
		}
		if (drain_notifies(conn))
			return 1;
		if (PQstatus(conn->pg) == CONNECTION_BAD)
		{
			jobq_set_error(conn, JOBQ_ERR_CONNECTION, "connection to server lost");
			return JOBQ_ERR;
		}
	}
}

/*
 * jobq_consume_input: see jobq-client.h.
 */
int
jobq_consume_input(JobqConn *conn)
{
	int			i;

	if (conn == NULL)
		return JOBQ_ERR;
	jobq_clear_error(conn);
	if (conn->pg == NULL || PQstatus(conn->pg) != CONNECTION_OK)
	{
		jobq_set_error(conn, JOBQ_ERR_CONNECTION,
					   "not connected to the server; call jobq_reconnect()");
		return JOBQ_ERR;
	}
	/*
	 * A terminated backend sends its FATAL message and then closes: one
	 * read takes the message, the next finds EOF.  So read while the
	 * socket stays readable (a few rounds at most; never blocks).
	 */
	for (i = 0; i < 8; i++)
	{
		struct pollfd pfd;

		if (!PQconsumeInput(conn->pg) || PQstatus(conn->pg) == CONNECTION_BAD)
		{
			jobq_set_error(conn, JOBQ_ERR_CONNECTION, "%s", PQerrorMessage(conn->pg));
			return JOBQ_ERR;
		}
		pfd.fd = PQsocket(conn->pg);
		pfd.events = POLLIN;
		pfd.revents = 0;
		if (PQisBusy(conn->pg) || poll(&pfd, 1, 0) <= 0)
			break;
	}
	return drain_notifies(conn);
}
