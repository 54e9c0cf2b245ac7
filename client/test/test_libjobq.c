/*-------------------------------------------------------------------------
 *
 * test_libjobq.c
 *	  Tests of libjobq against a real PostgreSQL server with the jobq
 *	  extension installed (no mocks), hiredis test()/test_cond() style.
 *
 *	  JOBQ_TEST_DSN="host=... dbname=..." ./test/test-libjobq
 *
 * Covers the client-side rows of the bad-input table (doc/reliability.md
 * section 4: each must fail with the documented error class, before
 * anything is sent when the client can tell) and the happy paths:
 * enqueue, claim, complete, fail, extend, release, batches, the pipelined
 * complete-and-claim, fencing with stale tokens, wait_for_work woken by
 * NOTIFY and by timeout, stats, job detail, admin calls and reconnects.
 *
 * Every queue this test creates is named "t<pid>-..." and dropped at the
 * end, so runs do not disturb each other or other data.  The database
 * role must be a superuser or jobq_admin (the test also plants a hostile
 * schema to check search_path cannot redirect calls, which needs CREATE).
 *
 * The last line printed is "N passed, N failed"; the exit status is
 * non-zero when anything failed.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/test/test_libjobq.c
 *
 *-------------------------------------------------------------------------
 */
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "jobq-client.h"

static int	tests = 0;
static int	fails = 0;
static const char *dsn = "";
static char qa[64],				/* main queue */
			qb[64],				/* second queue (multi-queue claims) */
			qw[64],				/* wait_for_work queue */
			qp[64];				/* pipeline / batch queue */

#define test(_s) do { printf("#%03d %-66s ", ++tests, _s); fflush(stdout); } while (0)
#define test_cond(_c) do { \
	if (_c) printf("PASSED\n"); \
	else { printf("FAILED (line %d)\n", __LINE__); fails++; } \
} while (0)

/* the last call failed with class cls (and, when given, that SQLSTATE) */
static int
failed_with(JobqConn *c, JobqErrorClass cls, const char *sqlstate)
{
	int			ok = jobq_status(c) == cls &&
		(sqlstate == NULL ||
		 (jobq_sqlstate(c) && strncmp(jobq_sqlstate(c), sqlstate, strlen(sqlstate)) == 0));

	if (!ok)
		printf("\n      got %s sqlstate=%s: %s\n      ",
			   jobq_error_name(jobq_status(c)),
			   jobq_sqlstate(c) ? jobq_sqlstate(c) : "-", jobq_errmsg(c));
	return ok;
}

static void
msleep(int ms)
{
	struct timespec ts;

	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (long) (ms % 1000) * 1000000L;
	nanosleep(&ts, NULL);
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* stat: one counter of jobq_stats for queue q, -1 on error */
static int64_t
qstat(JobqConn *c, const char *q, const char *col)
{
	JobqRows   *r = jobq_stats(c, q);
	int64_t		v = -1;

	if (r != NULL && jobq_rows_count(r) == 1)
		v = jobq_rows_get_int64(r, 0, col);
	jobq_rows_free(r);
	return v;
}

/* job_state: the state of job id as jobq_job reports it ("" if none) */
static void
job_state(JobqConn *c, int64_t id, char *out, size_t size)
{
	JobqRows   *r = jobq_job_info(c, id);

	snprintf(out, size, "%s", r && jobq_rows_get(r, 0, "state") ? jobq_rows_get(r, 0, "state") : "");
	jobq_rows_free(r);
}

/* queue_setting_is: jobq_queues says setting col of queue q is text v */
static int
queue_setting_is(JobqConn *c, const char *q, const char *col, const char *v)
{
	JobqRows   *r = jobq_queues(c);
	int			ok = 0;

	for (size_t i = 0; r != NULL && i < jobq_rows_count(r); i++)
		if (strcmp(jobq_rows_get(r, i, "queue"), q) == 0)
			ok = jobq_rows_get(r, i, col) != NULL && strcmp(jobq_rows_get(r, i, col), v) == 0;
	if (!ok)
		printf("\n      queue %s: %s is not %s\n      ", q, col, v);
	jobq_rows_free(r);
	return ok;
}

static int
enq(JobqConn *c, const char *q, const char *json, int64_t *id)
{
	return jobq_enqueue(c, q, json, strlen(json), NULL, id);
}

/* claim1: claim one job from q; NULL when none or on error */
static JobqJob *
claim1(JobqConn *c, const char *q, int lease_s)
{
	const char *qs[1] = {q};
	JobqJobList *l = jobq_claim(c, qs, 1, 1, lease_s, "test");
	JobqJob    *j = NULL;

	if (l != NULL && jobq_joblist_count(l) == 1)
		j = jobq_job_dup(jobq_joblist_get(l, 0));
	jobq_joblist_free(l);
	return j;
}

/* exec_ok: run raw SQL on a fresh libpq connection (test setup only) */
static int
exec_ok(const char *sql)
{
	PGconn	   *pg = PQconnectdb(dsn);
	PGresult   *res;

	PQclear(PQexec(pg, "SET client_min_messages = warning"));
	res = PQexec(pg, sql);
	int			ok = PQresultStatus(res) == PGRES_COMMAND_OK ||
		PQresultStatus(res) == PGRES_TUPLES_OK;

	if (!ok)
		printf("\n      setup SQL failed: %s", PQerrorMessage(pg));
	PQclear(res);
	PQfinish(pg);
	return ok;
}

/* ---------------------------------------------------------------------- */

static void
test_pure(void)
{
	test("jobq_version matches the header");
	test_cond(strcmp(jobq_version(), JOBQ_VERSION_STRING) == 0 &&
			  strcmp(jobq_version(), "0.2.0") == 0 && JOBQ_VERSION_NUM == 200);

	test("queue allow-list accepts good names");
	test_cond(jobq_valid_queue_name("a") && jobq_valid_queue_name("mails") &&
			  jobq_valid_queue_name("a_b-c9") && jobq_valid_queue_name("0") &&
			  jobq_valid_queue_name("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));

	test("queue allow-list rejects bad names");
	{
		const char *bad[] = {"", "Emails", "a b", "a'b", "a\"b", "a;b", "a--b", "a$b",
			"a.b", "a/b", "a\nb", "a\tb", "\xc3\xa9t\xc3\xa9", "_a", "a_", "-a", "a-",
			"a__b", "a_-b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", NULL};
		int			ok = !jobq_valid_queue_name(NULL);
		int			i;

		for (i = 0; bad[i]; i++)
			if (jobq_valid_queue_name(bad[i]))
			{
				printf("\n      accepted \"%s\" ", bad[i]);
				ok = 0;
			}
		test_cond(ok);
	}

	test("SQLSTATE classification (doc/reliability.md section 3)");
	test_cond(jobq_sqlstate_action("40001") == JOBQ_ACTION_RETRY &&
			  jobq_sqlstate_action("40P01") == JOBQ_ACTION_RETRY &&
			  jobq_sqlstate_action("25006") == JOBQ_ACTION_RECONNECT &&
			  jobq_sqlstate_action("57P01") == JOBQ_ACTION_RECONNECT &&
			  jobq_sqlstate_action("08006") == JOBQ_ACTION_RECONNECT &&
			  jobq_sqlstate_action("08000") == JOBQ_ACTION_RECONNECT &&
			  jobq_sqlstate_action("22023") == JOBQ_ACTION_NEVER &&
			  jobq_sqlstate_action("22P02") == JOBQ_ACTION_NEVER &&
			  jobq_sqlstate_action("42501") == JOBQ_ACTION_NEVER &&
			  jobq_sqlstate_action("54000") == JOBQ_ACTION_NEVER &&
			  jobq_sqlstate_action("53300") == JOBQ_ACTION_BACKOFF &&
			  jobq_sqlstate_action(NULL) == JOBQ_ACTION_NONE);

	test("error and state names");
	test_cond(strcmp(jobq_error_name(JOBQ_ERR_STALE), "JOBQ_ERR_STALE") == 0 &&
			  strcmp(jobq_state_name(JOBQ_STATE_DEAD), "dead") == 0 &&
			  jobq_state_from_name("cancelled") == JOBQ_STATE_CANCELLED &&
			  jobq_state_from_name("bogus") == JOBQ_STATE_UNKNOWN &&
			  jobq_state_from_name(NULL) == JOBQ_STATE_UNKNOWN);

	test("free functions and accessors are NULL-safe");
	jobq_disconnect(NULL);
	jobq_joblist_free(NULL);
	jobq_job_free(NULL);
	jobq_rows_free(NULL);
	jobq_free(NULL);
	test_cond(jobq_joblist_count(NULL) == 0 && jobq_joblist_get(NULL, 0) == NULL &&
			  jobq_job_id(NULL) == 0 && jobq_job_token(NULL) == NULL &&
			  jobq_rows_count(NULL) == 0 && jobq_rows_value(NULL, 0, 0) == NULL &&
			  jobq_status(NULL) == JOBQ_ERR_OOM && jobq_job_dup(NULL) == NULL);
}

static void
test_connect(void)
{
	JobqConn   *c;

	test("connect with an invalid schema name: BAD_ARGUMENT, not connected");
	c = jobq_connect_ex(dsn, "Bad Schema", 0);
	test_cond(c != NULL && failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) &&
			  !jobq_is_connected(c));
	jobq_disconnect(c);

	test("connect with a too long schema name: BAD_ARGUMENT");
	c = jobq_connect_ex(dsn, "s123456789012345678901234567890123456789012345678901234567890123", 0);
	test_cond(c != NULL && failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));
	jobq_disconnect(c);

	test("connect to nowhere: CONNECTION with a message");
	c = jobq_connect("host=/nonexistent-jobq-dir port=1 connect_timeout=2");
	test_cond(c != NULL && failed_with(c, JOBQ_ERR_CONNECTION, NULL) &&
			  strlen(jobq_errmsg(c)) > 0 && !jobq_is_connected(c));
	test("calls on a failed connection fail with CONNECTION");
	{
		int64_t		id;

		test_cond(jobq_enqueue(c, "a", "{}", 2, NULL, &id) == JOBQ_ERR &&
				  failed_with(c, JOBQ_ERR_CONNECTION, NULL));
	}
	jobq_disconnect(c);

	test("connect: OK, client_encoding forced to UTF8");
	c = jobq_connect(dsn);
	{
		PGresult   *r = NULL;

		if (c && jobq_status(c) == JOBQ_ERR_NONE)
			r = PQexec(jobq_pgconn(c), "SHOW client_encoding");
		test_cond(r && PQresultStatus(r) == PGRES_TUPLES_OK &&
				  strcmp(PQgetvalue(r, 0, 0), "UTF8") == 0 &&
				  jobq_is_connected(c) && strcmp(jobq_schema(c), "public") == 0 &&
				  jobq_socket(c) >= 0 && strcmp(jobq_errmsg(c), "") == 0);
		PQclear(r);
	}
	jobq_disconnect(c);

	test("client_encoding in the conninfo is overridden to UTF8");
	{
		char		buf[1024];
		PGresult   *r = NULL;

		snprintf(buf, sizeof(buf), "%s client_encoding=LATIN1", dsn);
		c = jobq_connect(buf);
		if (c && jobq_status(c) == JOBQ_ERR_NONE)
			r = PQexec(jobq_pgconn(c), "SHOW client_encoding");
		test_cond(r && strcmp(PQgetvalue(r, 0, 0), "UTF8") == 0);
		PQclear(r);
		jobq_disconnect(c);
	}

	test("API schema that does not exist: calls fail with a server error");
	c = jobq_connect_ex(dsn, "no-such-schema", 0);
	{
		int64_t		id;
		int			rc = jobq_enqueue(c, qa, "{}", 2, NULL, &id);

		test_cond(jobq_status(c) != JOBQ_ERR_NONE || rc == JOBQ_ERR);
		test("... and the error is classified SERVER 3F000 (never retry: 3F)");
		test_cond(rc == JOBQ_ERR && failed_with(c, JOBQ_ERR_SERVER, "3F000"));
	}
	jobq_disconnect(c);
}

/*
 * test_limits: the limits libjobq was compiled with (jobq-contract.h) are
 * the server's, as jobq_limits() returns them: every one, same value, no
 * other.  A server without jobq_limits (0.1.0 SQL) skips the test.
 */
static void
test_limits(JobqConn *c)
{
#define LIMIT_ROW(n, v, u) {n, (long long) (v), u},
	static const struct
	{
		const char *name;
		long long	value;
		const char *unit;
	}			ours[] = {
		JOBQ_LIMITS(LIMIT_ROW)
	};
#undef LIMIT_ROW
	size_t		nours = sizeof(ours) / sizeof(ours[0]);
	PGresult   *res;
	const char *state;
	int			ok;

	test("the compiled limits equal the server's jobq_limits()");
	res = PQexec(jobq_pgconn(c), "SELECT name, value, unit FROM jobq_limits() ORDER BY name");
	state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	if (state != NULL && strcmp(state, "42883") == 0)
	{
		printf("PASSED (skipped: the server has no jobq_limits)\n");
		PQclear(res);
		return;
	}
	ok = res != NULL && PQresultStatus(res) == PGRES_TUPLES_OK &&
		(size_t) PQntuples(res) == nours;
	if (!ok)
		printf("\n      jobq_limits: %s, %d rows, %zu compiled\n      ",
			   res ? PQresStatus(PQresultStatus(res)) : "no result",
			   res ? PQntuples(res) : 0, nours);
	for (size_t i = 0; ok && i < nours; i++)
	{
		int			found = 0;

		for (int r = 0; r < PQntuples(res) && !found; r++)
			found = strcmp(PQgetvalue(res, r, 0), ours[i].name) == 0 &&
				strtoll(PQgetvalue(res, r, 1), NULL, 10) == ours[i].value &&
				strcmp(PQgetvalue(res, r, 2), ours[i].unit) == 0;
		if (!found)
			printf("\n      %s = %lld %s differs on the server\n      ", ours[i].name,
				   ours[i].value, ours[i].unit);
		ok = found;
	}
	test_cond(ok);
	PQclear(res);
}

static void
test_queues_admin(JobqConn *c)
{
	JobqQueueOpts o = JOBQ_QUEUE_OPTS_INIT;

	test("create_queue with defaults");
	test_cond(jobq_create_queue(c, qa, NULL) == JOBQ_OK);

	test("create_queue with options");
	o.lease_s = 30;
	o.max_attempts = 3;
	o.backoff_base_s = 0;
	o.backoff_cap_s = 0;
	o.notify = 1;
	test_cond(jobq_create_queue(c, qb, &o) == JOBQ_OK &&
			  jobq_create_queue(c, qw, NULL) == JOBQ_OK &&
			  jobq_create_queue(c, qp, NULL) == JOBQ_OK);

	test("create_queue: settings not given take the server's defaults");
	test_cond(queue_setting_is(c, qb, "lease", "00:00:30") &&
			  queue_setting_is(c, qb, "max_attempts", "3") &&
			  queue_setting_is(c, qb, "backoff_cap", "00:00:00") &&
			  queue_setting_is(c, qb, "completed_retention", "1 day") &&
			  queue_setting_is(c, qb, "dead_retention", "14 days") &&
			  queue_setting_is(c, qa, "lease", "00:05:00") &&
			  queue_setting_is(c, qa, "max_attempts", "25") &&
			  queue_setting_is(c, qa, "notify", "t"));

	test("queue opts of size 0 (not made with the INIT macro): BAD_ARGUMENT");
	memset(&o, 0, sizeof(o));
	o.lease_s = 30;
	test_cond(jobq_create_queue(c, "t-never", &o) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) &&
			  strstr(jobq_errmsg(c), "JOBQ_") == NULL &&
			  strstr(jobq_errmsg(c), "INIT macro") != NULL);

	test("queue opts larger than the library's (a newer header): BAD_ARGUMENT");
	o = (JobqQueueOpts) JOBQ_QUEUE_OPTS_INIT;
	o.size = sizeof(o) + sizeof(int);
	test_cond(jobq_alter_queue(c, qa, &o) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) &&
			  strstr(jobq_errmsg(c), "newer") != NULL);

	test("queue opts of a size no release had (filled by position, 0.1.0 style): BAD_ARGUMENT");
	{
		JobqQueueOpts pos = JOBQ_QUEUE_OPTS_INIT;
		JobqQueueOpts odd = JOBQ_QUEUE_OPTS_INIT;
		JobqEnqueueOpts eo = JOBQ_ENQUEUE_OPTS_INIT;
		int64_t		id = 0;
		int			ok;

		/*
		 * 0.1.0's struct had no size field, so {10, 1, 3600, ...} filled by
		 * position puts the lease into size
		 */
		pos.size = 10;
		ok = jobq_create_queue(c, "t-never", &pos) == JOBQ_ERR &&
			failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) &&
			strstr(jobq_errmsg(c), "no released") != NULL;
		pos.size = 32;
		ok = ok && jobq_create_queue(c, "t-never", &pos) == JOBQ_ERR &&
			failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL);
		odd.size = offsetof(JobqQueueOpts, lease_s) + 2;	/* inside a field */
		ok = ok && jobq_alter_queue(c, qa, &odd) == JOBQ_ERR &&
			failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL);
		test_cond(ok && queue_setting_is(c, qa, "lease", "00:05:00"));

		test("enqueue opts: size 0 or a size no release had: BAD_ARGUMENT, nothing enqueued");
		eo.size = 0;
		ok = jobq_enqueue(c, qa, "{}", 2, &eo, &id) == JOBQ_ERR &&
			failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL);
		eo.size = offsetof(JobqEnqueueOpts, priority) + sizeof(int);
		ok = ok && jobq_enqueue(c, qa, "{}", 2, &eo, &id) == JOBQ_ERR &&
			failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL);
		test_cond(ok && id == 0);
	}

	test("create_queue with settings of 0.2.0: they arrive, the others take their defaults");
	o = (JobqQueueOpts) JOBQ_QUEUE_OPTS_INIT;
	o.group_mode = "limit";
	o.group_limit = 3;
	o.rate = 10;
	o.rate_per_s = 60;
	o.notify_finished = 1;
	test_cond(jobq_create_queue(c, "t-settings", &o) == JOBQ_OK &&
			  queue_setting_is(c, "t-settings", "group_mode", "limit") &&
			  queue_setting_is(c, "t-settings", "group_limit", "3") &&
			  queue_setting_is(c, "t-settings", "rate", "10") &&
			  queue_setting_is(c, "t-settings", "rate_per", "00:01:00") &&
			  queue_setting_is(c, "t-settings", "notify_finished", "t") &&
			  queue_setting_is(c, "t-settings", "group_order", "oldest") &&
			  queue_setting_is(c, "t-settings", "max_running", "0"));

	test("alter_queue: a text setting that is none of its values: BAD_ARGUMENT, nothing changed");
	o = (JobqQueueOpts) JOBQ_QUEUE_OPTS_INIT;
	o.group_mode = "fifo ";
	o.max_running = 5;
	test_cond(jobq_alter_queue(c, "t-settings", &o) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) &&
			  strstr(jobq_errmsg(c), "none, fifo, limit") != NULL &&
			  queue_setting_is(c, "t-settings", "max_running", "0") &&
			  jobq_drop_queue(c, "t-settings", 0) == JOBQ_OK);

	test("create_queue twice: SERVER 42710");
	test_cond(jobq_create_queue(c, qa, NULL) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_SERVER, "42710"));

	test("create_queue with lease 0: BAD_ARGUMENT");
	o = (JobqQueueOpts) JOBQ_QUEUE_OPTS_INIT;
	o.lease_s = 0;
	test_cond(jobq_create_queue(c, "t-never", &o) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));

	test("create_queue with max_attempts 1001: BAD_ARGUMENT");
	o = (JobqQueueOpts) JOBQ_QUEUE_OPTS_INIT;
	o.max_attempts = 1001;
	test_cond(jobq_create_queue(c, "t-never", &o) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));

	test("create_queue with uppercase name: BAD_ARGUMENT");
	test_cond(jobq_create_queue(c, "Emails", NULL) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));

	test("alter_queue: lease and max_attempts take effect");
	o = (JobqQueueOpts) JOBQ_QUEUE_OPTS_INIT;
	o.lease_s = 60;
	o.max_attempts = 2;
	o.backoff_base_s = 0;
	o.backoff_cap_s = 0;
	{
		JobqRows   *r;
		int			ok = jobq_alter_queue(c, qa, &o) == JOBQ_OK;
		size_t		i;

		r = jobq_queues(c);
		ok = ok && r != NULL;
		for (i = 0; r && i < jobq_rows_count(r); i++)
			if (strcmp(jobq_rows_get(r, i, "queue"), qa) == 0)
				ok = ok && jobq_rows_get_int64(r, i, "max_attempts") == 2;
		jobq_rows_free(r);
		test_cond(ok);
	}

	test("alter_queue with no options is a no-op");
	test_cond(jobq_alter_queue(c, qa, NULL) == JOBQ_OK);

	test("alter_queue of an unknown queue: NOT_FOUND (42704)");
	test_cond(jobq_alter_queue(c, "t-no-such-queue", &o) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_NOT_FOUND, "42704"));

	test("pause / resume unknown queue: NOT_FOUND");
	test_cond(jobq_pause(c, "t-no-such-queue") == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_NOT_FOUND, NULL));
}

static void
test_bad_input(JobqConn *c)
{
	int64_t		id = 0;
	JobqEnqueueOpts eo = JOBQ_ENQUEUE_OPTS_INIT;
	const char *tok = "6f1c1f4e-5c37-4d4f-9a2b-1e8f4c6b7a10";
	int64_t		ready0 = qstat(c, qa, "ready");

	test("enqueue: NULL queue -> BAD_ARGUMENT");
	test_cond(jobq_enqueue(c, NULL, "{}", 2, NULL, &id) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));
	test("... the error action is NEVER (do not retry)");
	test_cond(jobq_error_action(c) == JOBQ_ACTION_NEVER);

	test("enqueue: empty queue -> BAD_ARGUMENT");
	test_cond(jobq_enqueue(c, "", "{}", 2, NULL, &id) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));

	test("enqueue: 49-byte queue -> BAD_ARGUMENT");
	test_cond(jobq_enqueue(c, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "{}", 2,
						   NULL, &id) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));

	test("enqueue: 48-byte unknown queue reaches the server -> NOT_FOUND");
	test_cond(jobq_enqueue(c, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "{}", 2,
						   NULL, &id) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_NOT_FOUND, "42704"));

	test("enqueue: quotes, ';', '--', '$', space, dot, '/', control, non-ASCII");
	{
		const char *bad[] = {"a'b", "a\"b", "a;b", "a--b", "a$b", "a b", "a.b", "a/b",
		"a\x01" "b", "caf\xc3\xa9", NULL};
		int			ok = 1,
					i;

		for (i = 0; bad[i]; i++)
			ok = ok && jobq_enqueue(c, bad[i], "{}", 2, NULL, &id) == JOBQ_ERR &&
				failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL);
		test_cond(ok);
	}

	test("enqueue: uppercase queue -> BAD_ARGUMENT");
	test_cond(jobq_enqueue(c, "Emails", "{}", 2, NULL, &id) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));

	test("enqueue: NULL payload -> BAD_ARGUMENT");
	test_cond(jobq_enqueue(c, qa, NULL, 0, NULL, &id) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));

	test("enqueue: payload with an embedded NUL byte -> BAD_ARGUMENT");
	test_cond(jobq_enqueue(c, qa, "{\"a\":\"x\0y\"}", 11, NULL, &id) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));

	test("enqueue: invalid JSON -> SERVER 22P02, nothing enqueued");
	test_cond(jobq_enqueue(c, qa, "{not json", 9, NULL, &id) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_SERVER, "22P02") &&
			  jobq_error_action(c) == JOBQ_ACTION_NEVER);

	test("enqueue: empty payload (0 bytes) -> SERVER 22P02");
	test_cond(jobq_enqueue(c, qa, "", 0, NULL, &id) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_SERVER, "22P02"));

	test("enqueue: JSON with \\u0000 -> SERVER class 22 (jsonb rejects it)");
	test_cond(enq(c, qa, "{\"a\":\"\\u0000\"}", &id) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_SERVER, "22"));

	test("enqueue: invalid UTF-8 -> SERVER 22021");
	test_cond(enq(c, qa, "{\"a\":\"\xff\xfe\"}", &id) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_SERVER, "22021"));

	test("enqueue: payload over the server limit (1 MiB) -> SERVER 54000");
	{
		size_t		n = 1100 * 1024;
		char	   *big = malloc(n + 8);

		memset(big, 'x', n + 8);
		memcpy(big, "{\"a\":\"", 6);
		memcpy(big + n + 6, "\"}", 2);
		test_cond(jobq_enqueue(c, qa, big, n + 8, NULL, &id) == JOBQ_ERR &&
				  failed_with(c, JOBQ_ERR_SERVER, "54000") &&
				  jobq_error_action(c) == JOBQ_ACTION_NEVER);
		free(big);
	}

	test("enqueue: payload over the 64 MiB hard limit -> BAD_ARGUMENT, not read");
	/* the length check comes before any byte is read, so a lie is safe */
	test_cond(jobq_enqueue(c, qa, "{}", (size_t) JOBQ_PAYLOAD_HARD_MAX + 1, NULL, &id) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));

	test("enqueue: negative delay -> BAD_ARGUMENT");
	eo.delay_s = -5;
	test_cond(jobq_enqueue(c, qa, "{}", 2, &eo, &id) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));

	test("enqueue: delay over 365 days / INT_MAX -> BAD_ARGUMENT");
	eo.delay_s = JOBQ_DELAY_MAX_S + 1;
	{
		int			ok = jobq_enqueue(c, qa, "{}", 2, &eo, &id) == JOBQ_ERR &&
			failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL);

		eo.delay_s = 2147483647;
		test_cond(ok && jobq_enqueue(c, qa, "{}", 2, &eo, &id) == JOBQ_ERR &&
				  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));
	}

	test("enqueue: run_at and delay together -> BAD_ARGUMENT");
	eo.delay_s = 5;
	eo.run_at = "2030-01-01 00:00:00+00";
	test_cond(jobq_enqueue(c, qa, "{}", 2, &eo, &id) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));

	test("enqueue: run_at 'infinity' -> SERVER 22023");
	eo = (JobqEnqueueOpts) JOBQ_ENQUEUE_OPTS_INIT;
	eo.run_at = "infinity";
	test_cond(jobq_enqueue(c, qa, "{}", 2, &eo, &id) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_SERVER, "22"));

	test("enqueue: run_at garbage -> SERVER class 22");
	eo.run_at = "next tuesday'; DROP TABLE x; --";
	test_cond(jobq_enqueue(c, qa, "{}", 2, &eo, &id) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_SERVER, "22"));

	test("enqueue: priority 1001 / -1001 -> BAD_ARGUMENT");
	eo = (JobqEnqueueOpts) JOBQ_ENQUEUE_OPTS_INIT;
	eo.priority = 1001;
	{
		int			ok = jobq_enqueue(c, qa, "{}", 2, &eo, &id) == JOBQ_ERR &&
			failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL);

		eo.priority = -1001;
		test_cond(ok && jobq_enqueue(c, qa, "{}", 2, &eo, &id) == JOBQ_ERR &&
				  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));
	}

	test("enqueue: max_attempts 0 / 1001 / -2 -> BAD_ARGUMENT");
	eo = (JobqEnqueueOpts) JOBQ_ENQUEUE_OPTS_INIT;
	{
		int			ok = 1;
		int			vals[] = {0, 1001, -2};
		int			i;

		for (i = 0; i < 3; i++)
		{
			eo.max_attempts = vals[i];
			ok = ok && jobq_enqueue(c, qa, "{}", 2, &eo, &id) == JOBQ_ERR &&
				failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL);
		}
		test_cond(ok);
	}

	test("enqueue: dedupe key empty / 513 bytes -> BAD_ARGUMENT");
	eo = (JobqEnqueueOpts) JOBQ_ENQUEUE_OPTS_INIT;
	{
		char		key[514];
		int			ok;

		eo.dedupe_key = "";
		ok = jobq_enqueue(c, qa, "{}", 2, &eo, &id) == JOBQ_ERR &&
			failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL);
		memset(key, 'k', 513);
		key[513] = '\0';
		eo.dedupe_key = key;
		test_cond(ok && jobq_enqueue(c, qa, "{}", 2, &eo, &id) == JOBQ_ERR &&
				  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));
	}

	test("none of the rejected enqueues created a job");
	test_cond(qstat(c, qa, "ready") == ready0);

	test("enqueue_batch: 0 and 10001 payloads -> BAD_ARGUMENT");
	{
		const char *p[1] = {"{}"};
		size_t		l[1] = {2};

		test_cond(jobq_enqueue_batch(c, qa, 0, p, l, NULL, NULL, NULL, NULL) == JOBQ_ERR &&
				  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) &&
				  jobq_enqueue_batch(c, qa, 10001, p, l, NULL, NULL, NULL, NULL) == JOBQ_ERR &&
				  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));
	}

	test("enqueue_batch: a NULL element -> BAD_ARGUMENT");
	{
		const char *p[2] = {"{}", NULL};
		size_t		l[2] = {2, 0};

		test_cond(jobq_enqueue_batch(c, qa, 2, p, l, NULL, NULL, NULL, NULL) == JOBQ_ERR &&
				  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));
	}

	test("enqueue_batch: one invalid JSON -> SERVER 22P02, none enqueued");
	{
		const char *p[3] = {"{\"ok\":1}", "{bad", "{\"ok\":2}"};
		size_t		l[3] = {8, 4, 8};

		test_cond(jobq_enqueue_batch(c, qa, 3, p, l, NULL, NULL, NULL, NULL) == JOBQ_ERR &&
				  failed_with(c, JOBQ_ERR_SERVER, "22P02") &&
				  qstat(c, qa, "ready") == ready0);
	}

	test("enqueue_batch: an empty dedupe key -> BAD_ARGUMENT");
	{
		const char *p[2] = {"{}", "{}"};
		size_t		l[2] = {2, 2};
		const char *k[2] = {"x", ""};

		test_cond(jobq_enqueue_batch(c, qa, 2, p, l, k, NULL, NULL, NULL) == JOBQ_ERR &&
				  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));
	}

	test("claim: NULL queue list / 0 queues / NULL element -> BAD_ARGUMENT");
	{
		const char *qs[2] = {qa, NULL};
		JobqJobList *l1 = jobq_claim(c, NULL, 1, 1, -1, NULL);
		int			ok1 = l1 == NULL && failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL);
		JobqJobList *l2 = jobq_claim(c, qs, 0, 1, -1, NULL);
		int			ok2 = l2 == NULL && failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL);
		JobqJobList *l3 = jobq_claim(c, qs, 2, 1, -1, NULL);
		int			ok3 = l3 == NULL && failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL);

		test_cond(ok1 && ok2 && ok3);
	}

	test("claim: batch 0 / -1 / 1001 -> BAD_ARGUMENT");
	{
		const char *qs[1] = {qa};
		int			ok = 1;
		int			vals[] = {0, -1, 1001};
		int			i;

		for (i = 0; i < 3; i++)
			ok = ok && jobq_claim(c, qs, 1, vals[i], -1, NULL) == NULL &&
				failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL);
		test_cond(ok);
	}

	test("claim: lease 0 / -5 / 86401 -> BAD_ARGUMENT");
	{
		const char *qs[1] = {qa};
		int			ok = 1;
		int			vals[] = {0, -5, 86401};
		int			i;

		for (i = 0; i < 3; i++)
			ok = ok && jobq_claim(c, qs, 1, 1, vals[i], NULL) == NULL &&
				failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL);
		test_cond(ok);
	}

	test("claim: unknown (valid) queue -> empty list, not an error");
	{
		const char *qs[1] = {"t-no-such-queue"};
		JobqJobList *l = jobq_claim(c, qs, 1, 1, -1, NULL);

		test_cond(l != NULL && jobq_joblist_count(l) == 0 &&
				  jobq_status(c) == JOBQ_ERR_NONE);
		jobq_joblist_free(l);
	}

	test("complete/fail/extend/release: NULL token -> BAD_ARGUMENT");
	test_cond(jobq_complete(c, 1, NULL, NULL, 0) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) &&
			  jobq_fail(c, 1, NULL, "x", -1, 0, NULL) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) &&
			  jobq_extend(c, 1, NULL, -1) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) &&
			  jobq_release(c, 1, NULL) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));

	test("complete: id 0 / negative -> BAD_ARGUMENT");
	test_cond(jobq_complete(c, 0, tok, NULL, 0) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) &&
			  jobq_complete(c, INT64_MIN, tok, NULL, 0) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));

	test("complete: malformed token -> SERVER 22P02");
	test_cond(jobq_complete(c, 1, "not-a-uuid", NULL, 0) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_SERVER, "22P02"));

	test("complete: unknown job (INT64_MAX) -> STALE, nothing changed");
	test_cond(jobq_complete(c, INT64_MAX, tok, NULL, 0) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_STALE, NULL) &&
			  jobq_error_action(c) == JOBQ_ACTION_NEVER);

	test("fail: retry_in -2 / over 365 days -> BAD_ARGUMENT");
	test_cond(jobq_fail(c, 1, tok, "e", -2, 0, NULL) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) &&
			  jobq_fail(c, 1, tok, "e", JOBQ_DELAY_MAX_S + 1, 0, NULL) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));

	test("extend: lease 0 / 86401 -> BAD_ARGUMENT");
	test_cond(jobq_extend(c, 1, tok, 0) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) &&
			  jobq_extend(c, 1, tok, 86401) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));

	test("complete_batch: 0 / 1001 ids -> BAD_ARGUMENT");
	{
		int64_t		ids[1] = {1};
		const char *toks[1] = {tok};

		test_cond(jobq_complete_batch(c, 0, ids, toks, NULL, NULL, NULL, NULL) == JOBQ_ERR &&
				  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) &&
				  jobq_complete_batch(c, 1001, ids, toks, NULL, NULL, NULL, NULL) == JOBQ_ERR &&
				  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));
	}

	test("complete_batch: a NULL token -> BAD_ARGUMENT");
	{
		int64_t		ids[2] = {1, 2};
		const char *toks[2] = {tok, NULL};

		test_cond(jobq_complete_batch(c, 2, ids, toks, NULL, NULL, NULL, NULL) == JOBQ_ERR &&
				  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));
	}

	test("job_info / cancel / retry of an unknown job -> NOT_FOUND");
	{
		JobqRows   *r = jobq_job_info(c, INT64_MAX);
		int			ok = r == NULL && failed_with(c, JOBQ_ERR_NOT_FOUND, NULL);

		test_cond(ok && jobq_cancel(c, INT64_MAX) == JOBQ_ERR &&
				  failed_with(c, JOBQ_ERR_NOT_FOUND, NULL) &&
				  jobq_retry(c, INT64_MAX) == JOBQ_ERR &&
				  failed_with(c, JOBQ_ERR_NOT_FOUND, NULL));
	}

	test("sweep: max_rows 0 / bad queue -> BAD_ARGUMENT");
	test_cond(jobq_sweep(c, NULL, 0, NULL, NULL, NULL) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) &&
			  jobq_sweep(c, "Bad", -1, NULL, NULL, NULL) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));

	test("list: bad state / purge: state 'ready' -> BAD_ARGUMENT");
	{
		JobqRows   *r = jobq_list(c, qa, "bogus", -1);
		int			ok = r == NULL && failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL);

		test_cond(ok && jobq_purge(c, qa, "ready", -1, NULL) == JOBQ_ERR &&
				  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));
	}

	test("wait_for_work: negative timeout / bad queue -> BAD_ARGUMENT");
	{
		const char *qs[1] = {qa};
		const char *bad[1] = {"a b"};

		test_cond(jobq_wait_for_work(c, qs, 1, -1) == JOBQ_ERR &&
				  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) &&
				  jobq_wait_for_work(c, bad, 1, 10) == JOBQ_ERR &&
				  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));
	}

	test("a successful call clears the previous error");
	{
		JobqRows   *r = jobq_stats(c, qa);

		test_cond(r != NULL && jobq_status(c) == JOBQ_ERR_NONE &&
				  jobq_errmsg(c)[0] == '\0' && jobq_sqlstate(c) == NULL &&
				  jobq_error_action(c) == JOBQ_ACTION_NONE);
		jobq_rows_free(r);
	}
}

static void
test_lifecycle(JobqConn *c)
{
	int64_t		id = 0,
				id2 = 0;
	JobqJob    *j;
	char		st[32];
	const char *payload =
		"{\"n\": [1, 2], \"s\": \"q\\\"uote \\\\ back $$ '; -- caf\xc3\xa9 \xe2\x9c\x93\"}";

	test("enqueue returns a positive id");
	test_cond(jobq_enqueue(c, qa, payload, strlen(payload), NULL, &id) == JOBQ_OK && id > 0);

	test("claim returns that job with attempt 1, a token and the lease left");
	j = claim1(c, qa, 30);
	test_cond(j != NULL && jobq_job_id(j) == id && jobq_job_attempt(j) == 1 &&
			  jobq_job_max_attempts(j) == 2 &&
			  strlen(jobq_job_token(j)) == JOBQ_TOKEN_LEN &&
			  strcmp(jobq_job_queue(j), qa) == 0 &&
			  jobq_job_lease_ms(j) > 25000 && jobq_job_lease_ms(j) <= 30000 &&
			  jobq_job_locked_until(j) != NULL && jobq_job_enqueued_at(j) != NULL);

	test("payload round-trips byte for byte (quotes, backslash, $$, UTF-8)");
	{
		size_t		len = 0;
		const char *p = jobq_job_payload(j, &len);

		/* jsonb normalizes whitespace and key order; this payload is
		 * already in normal form, so it must come back identical */
		test_cond(p != NULL && len == strlen(payload) && memcmp(p, payload, len) == 0);
	}

	test("claimed job is running in stats and job detail");
	job_state(c, id, st, sizeof(st));
	test_cond(strcmp(st, "running") == 0 && qstat(c, qa, "running") == 1);

	test("extend with the token: OK");
	test_cond(jobq_extend(c, id, jobq_job_token(j), 120) == JOBQ_OK);
	test("extend with the queue's lease (-1): OK");
	test_cond(jobq_extend(c, id, jobq_job_token(j), -1) == JOBQ_OK);

	test("complete with a wrong token: STALE, job still running");
	test_cond(jobq_complete(c, id, "00000000-0000-0000-0000-000000000000", NULL, 0) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_STALE, NULL) &&
			  (job_state(c, id, st, sizeof(st)), strcmp(st, "running") == 0));

	test("complete with the token and a result: OK, completed");
	test_cond(jobq_complete(c, id, jobq_job_token(j), "{\"r\": 1}", 8) == JOBQ_OK &&
			  (job_state(c, id, st, sizeof(st)), strcmp(st, "completed") == 0));

	test("complete twice with the same token: idempotent OK");
	test_cond(jobq_complete(c, id, jobq_job_token(j), NULL, 0) == JOBQ_OK);

	test("extend / fail / release after completion: STALE");
	test_cond(jobq_extend(c, id, jobq_job_token(j), -1) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_STALE, NULL) &&
			  jobq_fail(c, id, jobq_job_token(j), "late", -1, 0, NULL) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_STALE, NULL) &&
			  jobq_release(c, id, jobq_job_token(j)) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_STALE, NULL));

	test("job detail has the result and renders as JSON");
	{
		JobqRows   *r = jobq_job_info(c, id);
		char	   *js = jobq_rows_json(r);

		test_cond(r != NULL && jobq_rows_count(r) == 1 &&
				  jobq_rows_get(r, 0, "result") != NULL &&
				  js != NULL && js[0] == '[' && strstr(js, "\"state\":\"completed\"") &&
				  strstr(js, "\"result\":{\"r\": 1}") && strstr(js, "\"attempt\":1"));
		jobq_free(js);
		jobq_rows_free(r);
	}
	jobq_job_free(j);

	/* release gives the attempt back; the old token is then stale */
	test("release: OK, attempt given back, old token fenced after re-claim");
	enq(c, qa, "{\"k\": \"release\"}", &id);
	j = claim1(c, qa, 30);
	{
		JobqJob    *j2;
		int			ok = j && jobq_job_id(j) == id &&
			jobq_release(c, id, jobq_job_token(j)) == JOBQ_OK;

		j2 = claim1(c, qa, 30);
		ok = ok && j2 && jobq_job_id(j2) == id && jobq_job_attempt(j2) == 1 &&
			strcmp(jobq_job_token(j2), jobq_job_token(j)) != 0;
		test_cond(ok);

		test("stale token (A) after re-claim (B): complete/extend/fail/release STALE");
		test_cond(jobq_complete(c, id, jobq_job_token(j), NULL, 0) == JOBQ_ERR &&
				  failed_with(c, JOBQ_ERR_STALE, NULL) &&
				  jobq_extend(c, id, jobq_job_token(j), -1) == JOBQ_ERR &&
				  failed_with(c, JOBQ_ERR_STALE, NULL) &&
				  jobq_fail(c, id, jobq_job_token(j), "x", -1, 0, NULL) == JOBQ_ERR &&
				  failed_with(c, JOBQ_ERR_STALE, NULL) &&
				  jobq_release(c, id, jobq_job_token(j)) == JOBQ_ERR &&
				  failed_with(c, JOBQ_ERR_STALE, NULL));

		test("stale acks are counted per queue");
		test_cond(qstat(c, qa, "stale_acks") >= 4);

		/* fail with attempts left -> ready; the queue allows 2 attempts */
		test("fail with retry_in 0 and attempts left -> ready");
		{
			JobqState	ns = JOBQ_STATE_UNKNOWN;

			test_cond(j2 && jobq_fail(c, id, jobq_job_token(j2), "boom", 0, 0, &ns) == JOBQ_OK &&
					  ns == JOBQ_STATE_READY);
		}
		jobq_job_free(j2);
		jobq_job_free(j);

		test("re-claim after fail: attempt 2; fail again -> dead (attempts used up)");
		j = claim1(c, qa, 30);
		{
			JobqState	ns = JOBQ_STATE_UNKNOWN;

			test_cond(j && jobq_job_id(j) == id && jobq_job_attempt(j) == 2 &&
					  jobq_fail(c, id, jobq_job_token(j), "boom again", -1, 0, &ns) == JOBQ_OK &&
					  ns == JOBQ_STATE_DEAD);
		}
		jobq_job_free(j);
	}

	test("job detail keeps the errors");
	{
		JobqRows   *r = jobq_job_info(c, id);
		const char *e = jobq_rows_get(r, 0, "errors");

		test_cond(e != NULL && strstr(e, "boom again") != NULL &&
				  strcmp(jobq_rows_get(r, 0, "state"), "dead") == 0);
		jobq_rows_free(r);
	}

	test("cancel a dead job: OK; cancel again: STATE");
	test_cond(jobq_cancel(c, id) == JOBQ_OK &&
			  jobq_cancel(c, id) == JOBQ_ERR && failed_with(c, JOBQ_ERR_STATE, NULL));

	test("retry a cancelled job: STATE");
	test_cond(jobq_retry(c, id) == JOBQ_ERR && failed_with(c, JOBQ_ERR_STATE, NULL));

	test("permanent fail -> dead at once; retry -> ready again");
	enq(c, qa, "{\"k\": \"perm\"}", &id2);
	j = claim1(c, qa, 30);
	{
		JobqState	ns = JOBQ_STATE_UNKNOWN;
		int			ok = j && jobq_job_id(j) == id2 &&
			jobq_fail(c, id2, jobq_job_token(j), NULL, -1, 1, &ns) == JOBQ_OK &&
			ns == JOBQ_STATE_DEAD && jobq_retry(c, id2) == JOBQ_OK;

		job_state(c, id2, st, sizeof(st));
		test_cond(ok && strcmp(st, "ready") == 0);
	}
	jobq_job_free(j);

	test("cancel a running job: STATE");
	j = claim1(c, qa, 30);
	test_cond(j && jobq_cancel(c, jobq_job_id(j)) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_STATE, NULL));
	test("a borrowed-looking free is harmless; complete it");
	test_cond(j && jobq_complete(c, jobq_job_id(j), jobq_job_token(j), NULL, 0) == JOBQ_OK);
	jobq_job_free(j);

	test("retry_queue and purge return counts");
	{
		int64_t		n1 = -1,
					n2 = -1;

		test_cond(jobq_retry_queue(c, qa, &n1) == JOBQ_OK && n1 == 0 &&
				  jobq_purge(c, qa, "cancelled", -1, &n2) == JOBQ_OK && n2 == 1);
	}

	test("dedupe: the same key returns the live job's id");
	{
		JobqEnqueueOpts eo = JOBQ_ENQUEUE_OPTS_INIT;
		int64_t		a = 0,
					b = 0;

		eo.dedupe_key = "once";
		test_cond(jobq_enqueue(c, qa, "{}", 2, &eo, &a) == JOBQ_OK &&
				  jobq_enqueue(c, qa, "{\"x\": 1}", 8, &eo, &b) == JOBQ_OK && a == b);
	}

	test("delay: a delayed job is not claimable and counts as delayed");
	{
		JobqEnqueueOpts eo = JOBQ_ENQUEUE_OPTS_INIT;
		int64_t		before = qstat(c, qb, "delayed");

		eo.delay_s = 3600;
		eo.priority = -5;
		test_cond(jobq_enqueue(c, qb, "{\"later\": true}", 15, &eo, &id) == JOBQ_OK &&
				  claim1(c, qb, -1) == NULL && qstat(c, qb, "delayed") == before + 1);
	}

	test("pause: claim skips the queue; resume: claimable again");
	{
		int64_t		pid;
		JobqJob    *pj;
		int			ok;

		ok = jobq_pause(c, qb) == JOBQ_OK && enq(c, qb, "{\"p\": 1}", &pid) == JOBQ_OK;
		pj = claim1(c, qb, -1);
		ok = ok && pj == NULL && jobq_resume(c, qb) == JOBQ_OK;
		pj = claim1(c, qb, -1);
		test_cond(ok && pj && jobq_job_id(pj) == pid && jobq_job_lease_ms(pj) > 25000 &&
				  jobq_job_lease_ms(pj) <= 30000);
		if (pj)
			jobq_complete(c, pid, jobq_job_token(pj), NULL, 0);
		jobq_job_free(pj);
	}

	test("claim from several queues at once, in priority order");
	{
		const char *qs[2] = {qa, qb};
		JobqEnqueueOpts eo = JOBQ_ENQUEUE_OPTS_INIT;
		int64_t		lo = 0,
					hi = 0;
		JobqJobList *l;
		int			ok;
		size_t		i;

		eo.priority = 10;
		ok = jobq_enqueue(c, qa, "{\"prio\": 10}", 12, &eo, &lo) == JOBQ_OK;
		eo.priority = -10;
		ok = ok && jobq_enqueue(c, qb, "{\"prio\": -10}", 13, &eo, &hi) == JOBQ_OK;
		l = jobq_claim(c, qs, 2, 1000, 30, "multi");
		ok = ok && l && jobq_joblist_count(l) >= 2 &&
			jobq_job_id(jobq_joblist_get(l, 0)) == hi;
		for (i = 0; l && i < jobq_joblist_count(l); i++)
		{
			const JobqJob *x = jobq_joblist_get(l, i);

			ok = ok && jobq_complete(c, jobq_job_id(x), jobq_job_token(x), NULL, 0) == JOBQ_OK;
		}
		ok = ok && jobq_joblist_get(l, jobq_joblist_count(l)) == NULL;
		jobq_joblist_free(l);
		test_cond(ok);
	}

	test("lease expiry: sweep requeues, new claim fences the old token");
	{
		JobqJob    *a,
				   *b;
		int64_t		rq = -1;
		int			ok;

		enq(c, qa, "{\"k\": \"expire\"}", &id);
		a = claim1(c, qa, 1);
		ok = a && jobq_job_id(a) == id;
		msleep(1300);
		ok = ok && jobq_sweep(c, qa, -1, &rq, NULL, NULL) == JOBQ_OK && rq == 1;
		b = claim1(c, qa, 30);
		ok = ok && b && jobq_job_id(b) == id && jobq_job_attempt(b) == 2;
		ok = ok && jobq_complete(c, id, jobq_job_token(a), NULL, 0) == JOBQ_ERR &&
			failed_with(c, JOBQ_ERR_STALE, NULL);
		ok = ok && jobq_complete(c, id, jobq_job_token(b), NULL, 0) == JOBQ_OK;
		test_cond(ok);
		jobq_job_free(a);
		jobq_job_free(b);
	}

	test("sweep of all queues returns counts");
	{
		int64_t		r = -1,
					d = -1,
					p = -1;

		test_cond(jobq_sweep(c, NULL, 10, &r, &d, &p) == JOBQ_OK && r >= 0 && d >= 0 && p >= 0);
	}

	test("stats: all queues; unknown queue: NOT_FOUND (42704)");
	{
		JobqRows   *all = jobq_stats(c, NULL);
		JobqRows   *none = jobq_stats(c, "t-no-such-queue");
		int			not_found = none == NULL && failed_with(c, JOBQ_ERR_NOT_FOUND, "42704");
		char	   *js = jobq_rows_json(all);

		test_cond(all && jobq_rows_count(all) >= 4 && not_found &&
				  jobq_rows_colindex(all, "oldest_ready_age") >= 0 &&
				  jobq_rows_colindex(all, "nope") == -1 &&
				  jobq_rows_ncols(all) == 11 &&
				  strcmp(jobq_rows_colname(all, 0), "queue") == 0 &&
				  js && strstr(js, "\"paused\":false") != NULL);
		jobq_free(js);
		jobq_rows_free(all);
		jobq_rows_free(none);
	}

	test("list: jobs of a queue by state");
	{
		JobqRows   *r = jobq_list(c, qa, "completed", -1);
		JobqRows   *d = jobq_list(c, qb, "delayed", 10);

		test_cond(r && jobq_rows_count(r) >= 3 && d && jobq_rows_count(d) == 1);
		jobq_rows_free(r);
		jobq_rows_free(d);
	}
}

static void
test_batches(JobqConn *c)
{
	const char *p[5] = {"{\"b\": 0}", "{\"b\": 1}", "{\"b\": 2}", "[1, 2, 3]", "\"str\\\"ing\""};
	size_t		l[5];
	const char *keys[5] = {"k0", NULL, "k2", NULL, NULL};
	int64_t		ids[5] = {0};
	int			created[5] = {0};
	int			i;

	for (i = 0; i < 5; i++)
		l[i] = strlen(p[i]);

	/*
	 * With dedupe keys the server inserts in key order (so that crossing
	 * batches cannot deadlock): ids come back in input order but need not
	 * increase along it.
	 */
	test("enqueue_batch: 5 jobs, one id per input, all created");
	test_cond(jobq_enqueue_batch(c, qp, 5, p, l, keys, NULL, ids, created) == JOBQ_OK &&
			  ids[0] > 0 && ids[1] > 0 && ids[2] > 0 && ids[3] > 0 && ids[4] > 0 &&
			  ids[0] != ids[1] && ids[1] != ids[2] && ids[2] != ids[3] && ids[3] != ids[4] &&
			  ids[0] != ids[2] && ids[0] != ids[4] && ids[1] != ids[3] && ids[2] != ids[4] &&
			  ids[0] != ids[3] && ids[1] != ids[4] &&
			  created[0] && created[1] && created[4] && qstat(c, qp, "ready") == 5);

	test("enqueue_batch: an existing live dedupe key returns its job");
	{
		int64_t		ids2[2];
		int			cr2[2] = {1, 1};
		const char *k2[2] = {"k2", "k9"};

		test_cond(jobq_enqueue_batch(c, qp, 2, p, l, k2, NULL, ids2, cr2) == JOBQ_OK &&
				  ids2[0] == ids[2] && cr2[0] == 0 && cr2[1] == 1);
	}

	test("enqueue_batch with opts->dedupe_key set: BAD_ARGUMENT");
	{
		JobqEnqueueOpts eo = JOBQ_ENQUEUE_OPTS_INIT;

		eo.dedupe_key = "k";
		test_cond(jobq_enqueue_batch(c, qp, 1, p, l, NULL, &eo, NULL, NULL) == JOBQ_ERR &&
				  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));
	}

	test("batch payloads with quotes and backslashes round-trip");
	{
		const char *qs[1] = {qp};
		JobqJobList *cl = jobq_claim(c, qs, 1, 10, 30, "batch");
		int			ok = cl && jobq_joblist_count(cl) == 6;
		int64_t		cids[6];
		const char *ctoks[6];
		int			acc[6];
		size_t		nacc = 0;
		size_t		k;

		for (k = 0; ok && k < 6; k++)
		{
			const JobqJob *x = jobq_joblist_get(cl, k);

			cids[k] = jobq_job_id(x);
			ctoks[k] = jobq_job_token(x);
			if (cids[k] == ids[4])
				ok = ok && strcmp(jobq_job_payload(x, NULL), "\"str\\\"ing\"") == 0;
		}
		test_cond(ok);

		test("complete_batch: one stale token -> accepted flags, no error");
		if (ok)
		{
			ctoks[1] = "00000000-0000-0000-0000-000000000000";
			ok = jobq_complete_batch(c, 3, cids, ctoks, NULL, NULL, acc, &nacc) == JOBQ_OK &&
				acc[0] == 1 && acc[1] == 0 && acc[2] == 1 && nacc == 2;
			ctoks[1] = jobq_job_token(jobq_joblist_get(cl, 1));
		}
		test_cond(ok);

		test("complete_batch with results");
		{
			const char *res[3] = {"{\"r\": 1}", NULL, "[]"};
			size_t		rl[3] = {8, 0, 2};

			test_cond(ok && jobq_complete_batch(c, 3, cids + 1, ctoks + 1, res, rl, acc,
												&nacc) == JOBQ_OK &&
					  acc[0] == 1 && acc[1] == 1 && acc[2] == 1 && nacc == 3);
		}

		test("complete_batch with a result containing NUL: BAD_ARGUMENT");
		{
			const char *res[1] = {"{}\0"};
			size_t		rl[1] = {3};

			test_cond(jobq_complete_batch(c, 1, cids + 4, ctoks + 4, res, rl, NULL, NULL) == JOBQ_ERR &&
					  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));
		}

		/* pipelined: complete the last two and claim the next batch */
		test("complete_and_claim: completes and claims in one round trip");
		{
			int64_t		nid[3];
			const char *np[3] = {"{\"n\": 1}", "{\"n\": 2}", "{\"n\": 3}"};
			size_t		nl[3] = {8, 8, 8};
			int			acc2[2] = {0, 0};
			JobqJobList *next;

			ok = jobq_enqueue_batch(c, qp, 3, np, nl, NULL, NULL, nid, NULL) == JOBQ_OK;
			next = jobq_complete_and_claim(c, 2, cids + 4, ctoks + 4, acc2, qs, 1, 2, 30, "pipe");
			ok = ok && next && jobq_joblist_count(next) == 2 && acc2[0] == 1 && acc2[1] == 1 &&
				jobq_job_id(jobq_joblist_get(next, 0)) == nid[0] &&
				qstat(c, qp, "running") == 2 && qstat(c, qp, "completed") >= 6;
			test_cond(ok);

			test("complete_and_claim: a failing complete rolls back the claim too");
			if (next)
			{
				int64_t		pids[2];
				const char *ptoks[2];
				JobqJobList *bad;
				int64_t		running = qstat(c, qp, "running");
				int64_t		ready = qstat(c, qp, "ready");

				pids[0] = jobq_job_id(jobq_joblist_get(next, 0));
				ptoks[0] = jobq_job_token(jobq_joblist_get(next, 0));
				pids[1] = jobq_job_id(jobq_joblist_get(next, 1));
				ptoks[1] = "not-a-uuid";
				bad = jobq_complete_and_claim(c, 2, pids, ptoks, NULL, qs, 1, 5, 30, "pipe");
				ok = bad == NULL && failed_with(c, JOBQ_ERR_SERVER, "22P02") &&
					qstat(c, qp, "running") == running && qstat(c, qp, "ready") == ready;
				test_cond(ok);

				test("complete_and_claim: connection usable after a pipeline error");
				ptoks[1] = jobq_job_token(jobq_joblist_get(next, 1));
				bad = jobq_complete_and_claim(c, 2, pids, ptoks, acc2, qs, 1, 5, 30, "pipe");
				ok = bad && jobq_joblist_count(bad) == 1 && acc2[0] && acc2[1];
				test_cond(ok);

				test("complete_and_claim with nothing to complete (n = 0)");
				{
					JobqJobList *none = jobq_complete_and_claim(c, 0, NULL, NULL, NULL, qs, 1,
																5, 30, "pipe");

					test_cond(none && jobq_joblist_count(none) == 0);
					jobq_joblist_free(none);
				}
				if (bad)
				{
					const JobqJob *x = jobq_joblist_get(bad, 0);

					jobq_complete(c, jobq_job_id(x), jobq_job_token(x), NULL, 0);
				}
				jobq_joblist_free(bad);
			}
			test("complete_and_claim: bad arguments are caught before sending");
			{
				JobqJobList *x = jobq_complete_and_claim(c, 1001, cids, ctoks, NULL, qs, 1, 1,
														 30, NULL);
				int			ok1 = x == NULL && failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL);

				x = jobq_complete_and_claim(c, 0, NULL, NULL, NULL, qs, 1, 0, 30, NULL);
				test_cond(ok1 && x == NULL && failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));
			}
			test("complete_and_claim on a connection not idle (jobq_pgconn): BAD_ARGUMENT");
			{
				PGconn	   *pg = jobq_pgconn(c);
				PGresult   *r;
				JobqJobList *x = NULL;
				int			sent = PQsendQuery(pg, "SELECT 1");

				/* both statements are prepared already: the pipeline is refused */
				if (sent)
					x = jobq_complete_and_claim(c, 0, NULL, NULL, NULL, qs, 1, 1, 30, NULL);
				test_cond(sent && x == NULL && failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) &&
						  strstr(jobq_errmsg(c), "not idle") != NULL);
				while ((r = PQgetResult(pg)) != NULL)
					PQclear(r);
				jobq_joblist_free(x);
			}
			jobq_joblist_free(next);
		}
		jobq_joblist_free(cl);
	}

	/* complete_and_claim_results: results per job, and the claim, in one go */
	test("complete_and_claim_results: results stored per job, next claimed");
	{
		char		qr[80];
		const char *qs[1] = {qr};
		const char *np[4] = {"{\"n\": 1}", "{\"n\": 2}", "{\"n\": 3}", "{\"n\": 4}"};
		size_t		nl[4] = {8, 8, 8, 8};
		int64_t		nid[4];
		JobqJobList *first = NULL,
				   *next = NULL,
				   *bad = NULL;
		int			ok;

		snprintf(qr, sizeof(qr), "%s-res", qp);
		ok = jobq_create_queue(c, qr, NULL) == JOBQ_OK &&
			jobq_enqueue_batch(c, qr, 4, np, nl, NULL, NULL, nid, NULL) == JOBQ_OK &&
			(first = jobq_claim(c, qs, 1, 3, 30, "res")) != NULL &&
			jobq_joblist_count(first) == 3;
		if (ok)
		{
			int64_t		ids3[3];
			const char *toks3[3];
			const char *res[3] = {"{\"r\": \"one\"}", NULL, "[2]"};
			size_t		rl[3] = {12, 0, 3};
			int			acc[3] = {0, 0, 0};
			char		st[32];

			for (size_t k = 0; k < 3; k++)
			{
				ids3[k] = jobq_job_id(jobq_joblist_get(first, k));
				toks3[k] = jobq_job_token(jobq_joblist_get(first, k));
			}
			/* the second one's token is stale: accepted 0, the rest commits */
			toks3[1] = "00000000-0000-0000-0000-000000000000";
			next = jobq_complete_and_claim_results(c, 3, ids3, toks3, res, rl, acc,
												   qs, 1, 5, 30, "res");
			ok = next != NULL && jobq_joblist_count(next) == 1 &&
				jobq_job_id(jobq_joblist_get(next, 0)) == nid[3] &&
				acc[0] == 1 && acc[1] == 0 && acc[2] == 1;
			if (ok)
			{
				JobqRows   *r0 = jobq_job_info(c, ids3[0]);
				JobqRows   *r2 = jobq_job_info(c, ids3[2]);

				ok = r0 && r2 && jobq_rows_get(r0, 0, "result") &&
					strcmp(jobq_rows_get(r0, 0, "result"), "{\"r\": \"one\"}") == 0 &&
					jobq_rows_get(r2, 0, "result") &&
					strcmp(jobq_rows_get(r2, 0, "result"), "[2]") == 0;
				jobq_rows_free(r0);
				jobq_rows_free(r2);
				job_state(c, ids3[1], st, sizeof(st));
				ok = ok && strcmp(st, "running") == 0;
			}
			test_cond(ok);

			test("complete_and_claim_results: a result that is not JSON rolls back both");
			if (next)
			{
				int64_t		id1[2];
				const char *tok1[2];
				const char *res2[2] = {"{}", "not json"};
				size_t		rl2[2] = {2, 8};

				id1[0] = ids3[1];
				tok1[0] = jobq_job_token(jobq_joblist_get(first, 1));
				id1[1] = jobq_job_id(jobq_joblist_get(next, 0));
				tok1[1] = jobq_job_token(jobq_joblist_get(next, 0));
				/* a job is ready again for the claim half to take */
				ok = enq(c, qr, "{\"n\": 5}", NULL) == JOBQ_OK;
				bad = jobq_complete_and_claim_results(c, 2, id1, tok1, res2, rl2, NULL,
													  qs, 1, 5, 30, "res");
				ok = ok && bad == NULL && failed_with(c, JOBQ_ERR_SERVER, "22P02") &&
					qstat(c, qr, "running") == 2 && qstat(c, qr, "ready") == 1;
				test_cond(ok);

				test("complete_and_claim_results: NULL results = complete_and_claim");
				bad = jobq_complete_and_claim_results(c, 2, id1, tok1, NULL, NULL, acc,
													  qs, 1, 5, 30, "res");
				ok = bad != NULL && jobq_joblist_count(bad) == 1 && acc[0] == 1 &&
					acc[1] == 1 && qstat(c, qr, "running") == 1;
				test_cond(ok);
				if (bad && jobq_joblist_count(bad) == 1)
					jobq_complete(c, jobq_job_id(jobq_joblist_get(bad, 0)),
								  jobq_job_token(jobq_joblist_get(bad, 0)), NULL, 0);
			}
		}
		else
			test_cond(0);

		test("complete_and_claim_results: result with NUL, result_lens NULL: BAD_ARGUMENT");
		{
			int64_t		one = 1;
			const char *tok = "00000000-0000-0000-0000-000000000000";
			const char *resn[1] = {"{}\0"};
			size_t		rln[1] = {3};
			JobqJobList *x = jobq_complete_and_claim_results(c, 1, &one, &tok, resn, rln,
															 NULL, qs, 1, 1, 30, NULL);
			int			ok1 = x == NULL && failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL);

			x = jobq_complete_and_claim_results(c, 1, &one, &tok, resn, NULL, NULL,
												qs, 1, 1, 30, NULL);
			test_cond(ok1 && x == NULL && failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));
		}
		jobq_joblist_free(first);
		jobq_joblist_free(next);
		jobq_joblist_free(bad);
		jobq_drop_queue(c, qr, 1);
	}

	test("job_dup outlives its list");
	{
		const char *qs[1] = {qp};
		int64_t		nid;
		JobqJobList *cl;
		JobqJob    *d = NULL;

		enq(c, qp, "{\"dup\": true}", &nid);
		cl = jobq_claim(c, qs, 1, 1, 30, NULL);
		if (cl && jobq_joblist_count(cl) == 1)
			d = jobq_job_dup(jobq_joblist_get(cl, 0));
		/* freeing a borrowed job must be ignored, not corrupt the list */
		jobq_job_free((JobqJob *) jobq_joblist_get(cl, 0));
		jobq_joblist_free(cl);
		test_cond(d && jobq_job_id(d) == nid &&
				  strcmp(jobq_job_payload(d, NULL), "{\"dup\": true}") == 0 &&
				  jobq_complete(c, nid, jobq_job_token(d), NULL, 0) == JOBQ_OK);
		jobq_job_free(d);
	}
}

/* A producer thread for the NOTIFY test: enqueue after a pause. */
static void *
late_producer(void *arg)
{
	JobqConn   *p;
	int64_t		id;

	(void) arg;
	msleep(300);
	p = jobq_connect(dsn);
	if (p != NULL && jobq_status(p) == JOBQ_ERR_NONE)
		enq(p, qw, "{\"wake\": true}", &id);
	jobq_disconnect(p);
	return NULL;
}

/* wait_readable: poll the connection's socket up to ms; 1 when readable */
static int
wait_readable(JobqConn *c, int ms)
{
	struct pollfd pfd;

	pfd.fd = jobq_socket(c);
	pfd.events = POLLIN;
	pfd.revents = 0;
	return poll(&pfd, 1, ms) > 0;
}

/* claim_collect: drive a started claim to its end with poll(); NULL on error */
static JobqJobList *
claim_collect(JobqConn *c, int max_ms)
{
	int64_t		t0 = now_ms();
	int			r;

	while ((r = jobq_claim_ready(c)) == 0 && now_ms() - t0 < max_ms)
		wait_readable(c, 100);
	return jobq_claim_finish(c);
}

/* conn_option_is: libpq's session of c uses value for keyword */
static int
conn_option_is(JobqConn *c, const char *keyword, const char *value)
{
	PQconninfoOption *opts = PQconninfo(jobq_pgconn(c));
	int			ok = 0;

	for (PQconninfoOption *o = opts; o && o->keyword; o++)
		if (strcmp(o->keyword, keyword) == 0)
			ok = o->val != NULL && strcmp(o->val, value) == 0;
	if (!ok)
		printf("\n      %s is not %s\n      ", keyword, value);
	PQconninfoFree(opts);
	return ok;
}

/*
 * The additions for event loops and command-line tools: connection
 * defaults, error fields, jobq_wait_stats, the asynchronous claim and
 * jobq_consume_input.
 */
static void
test_async(JobqConn *c)
{
	const char *qs[1] = {qw};
	int64_t		t0;
	int64_t		id;
	JobqJobList *l;

	test("connect_params: defaults apply, the conninfo overrides them");
	{
		const char *k[] = {"fallback_application_name", "connect_timeout", NULL};
		const char *v[] = {"jobq-test-app", "10", NULL};
		JobqConn   *d = jobq_connect_params(dsn, NULL, 0, k, v);
		char		ci[512];
		JobqConn   *e;
		PGresult   *r1 = NULL,
				   *r2 = NULL;

		snprintf(ci, sizeof(ci), "%s%sapplication_name=jobq-override", dsn, dsn[0] ? " " : "");
		e = jobq_connect_params(ci, NULL, 0, k, v);
		if (d && jobq_status(d) == JOBQ_ERR_NONE && jobq_reconnect(d) == JOBQ_OK)
			r1 = PQexec(jobq_pgconn(d), "SELECT current_setting('application_name')");
		if (e && jobq_status(e) == JOBQ_ERR_NONE)
			r2 = PQexec(jobq_pgconn(e), "SELECT current_setting('application_name')");
		test_cond(r1 && PQntuples(r1) == 1 && strcmp(PQgetvalue(r1, 0, 0), "jobq-test-app") == 0 &&
				  r2 && PQntuples(r2) == 1 && strcmp(PQgetvalue(r2, 0, 0), "jobq-override") == 0);
		PQclear(r1);
		PQclear(r2);
		jobq_disconnect(d);
		jobq_disconnect(e);
	}

	test("tcp defaults: keepalives and tcp_user_timeout unless given");
	{
		const char *k[] = {"tcp_user_timeout", NULL};
		const char *v[] = {"1234", NULL};
		char		ci[512];
		JobqConn   *d = jobq_connect(dsn);
		JobqConn   *e;

		snprintf(ci, sizeof(ci), "%s%skeepalives_idle=7", dsn, dsn[0] ? " " : "");
		e = jobq_connect_params(ci, NULL, 0, k, v);
		test_cond(d && jobq_status(d) == JOBQ_ERR_NONE &&
				  e && jobq_status(e) == JOBQ_ERR_NONE &&
				  conn_option_is(d, "keepalives", "1") &&
				  conn_option_is(d, "keepalives_idle", "10") &&
				  conn_option_is(d, "keepalives_interval", "5") &&
				  conn_option_is(d, "keepalives_count", "3") &&
				  conn_option_is(d, "tcp_user_timeout", "30000") &&
				  conn_option_is(e, "keepalives", "1") &&
				  conn_option_is(e, "keepalives_idle", "7") &&
				  conn_option_is(e, "keepalives_interval", "5") &&
				  conn_option_is(e, "tcp_user_timeout", "1234"));
		jobq_disconnect(d);
		jobq_disconnect(e);
	}

	test("call timeout: negative refused; 0 and positive accepted");
	test_cond(jobq_set_call_timeout(c, -1) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) &&
			  jobq_set_call_timeout(c, 0) == JOBQ_OK &&
			  jobq_set_call_timeout(c, JOBQ_CALL_TIMEOUT_DEFAULT_MS) == JOBQ_OK &&
			  jobq_set_call_timeout(NULL, 10) == JOBQ_ERR);

	test("call timeout: a call the server does not answer closes the session");
	{
		JobqConn   *d = jobq_connect(dsn);
		PGconn	   *locker = PQconnectdb(dsn);
		PGresult   *r = PQexec(locker, "BEGIN; LOCK TABLE jobq.queues IN ACCESS EXCLUSIVE MODE");
		int64_t		start = now_ms();
		JobqRows   *rows;
		int			ok;

		jobq_set_call_timeout(d, 300);
		rows = jobq_stats(d, qa);
		ok = rows == NULL && failed_with(d, JOBQ_ERR_CONNECTION, NULL) &&
			strstr(jobq_errmsg(d), "no answer from the server within the call timeout (300 ms)") != NULL &&
			jobq_error_action(d) == JOBQ_ACTION_RECONNECT &&
			jobq_socket(d) == -1 && !jobq_is_connected(d) &&
			now_ms() - start >= 300 && now_ms() - start < 5000;
		PQclear(r);
		PQclear(PQexec(locker, "COMMIT"));
		PQfinish(locker);
		jobq_rows_free(rows);
		test_cond(ok && jobq_reconnect(d) == JOBQ_OK &&
				  (rows = jobq_stats(d, qa)) != NULL);
		jobq_rows_free(rows);
		jobq_disconnect(d);
	}

	test("call timeout: a waiting claim gets its wait on top");
	{
		JobqConn   *d = jobq_connect(dsn);
		int64_t		start = now_ms();

		jobq_set_call_timeout(d, 200);
		l = jobq_claim_wait(d, qs, 1, 1, -1, "t-timeout", 700);
		test_cond(l != NULL && jobq_joblist_count(l) == 0 &&
				  jobq_status(d) == JOBQ_ERR_NONE && jobq_is_connected(d) &&
				  now_ms() - start < 5000);
		jobq_joblist_free(l);
		jobq_disconnect(d);
	}

	test("errfield: message, detail and hint apart; NULL for client errors");
	{
		int			ok1 = jobq_enqueue(c, "t-no-such-queue-x", "{}", 2, NULL, NULL) == JOBQ_ERR &&
			jobq_errfield(c, JOBQ_ERRFIELD_HINT) != NULL &&
			jobq_errfield(c, JOBQ_ERRFIELD_MESSAGE) != NULL &&
			strstr(jobq_errfield(c, JOBQ_ERRFIELD_MESSAGE), "hint") == NULL &&
			strstr(jobq_errmsg(c), jobq_errfield(c, JOBQ_ERRFIELD_HINT)) != NULL &&
			jobq_errfield(c, 'X') == NULL;
		int			ok2 = jobq_enqueue(c, "Bad", "{}", 2, NULL, NULL) == JOBQ_ERR &&
			jobq_errfield(c, JOBQ_ERRFIELD_MESSAGE) == NULL &&
			jobq_errfield(c, JOBQ_ERRFIELD_DETAIL) == NULL;

		test_cond(ok1 && ok2 && jobq_errfield(NULL, JOBQ_ERRFIELD_MESSAGE) == NULL);
	}

	test("wait_stats: OK, preloaded is 0 or 1");
	{
		int			pre = -1;
		int64_t		waiting = -1;

		test_cond(jobq_wait_stats(c, &pre, &waiting, NULL) == JOBQ_OK &&
				  (pre == 0 || pre == 1) && waiting >= 0);
	}

	test("claim_start: returns at once; the connection is busy meanwhile");
	t0 = now_ms();
	test_cond(jobq_claim_start(c, qs, 1, 1, 30, "async", 400) == JOBQ_OK &&
			  now_ms() - t0 < 300 && jobq_claim_ready(c) == 0 &&
			  jobq_stats(c, NULL) == NULL && failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) &&
			  jobq_claim_start(c, qs, 1, 1, 30, "async", 0) == JOBQ_ERR);

	test("claim_finish after the wait: an empty list, connection free again");
	l = claim_collect(c, 5000);
	t0 = now_ms() - t0;
	test_cond(l != NULL && jobq_joblist_count(l) == 0 && t0 >= 350 &&
			  qstat(c, qw, "ready") == 0);
	jobq_joblist_free(l);

	test("claim_start: woken by another session's enqueue, gets the job");
	{
		pthread_t	th;

		pthread_create(&th, NULL, late_producer, NULL);
		t0 = now_ms();
		l = NULL;
		if (jobq_claim_start(c, qs, 1, 1, 30, "async", 20000) == JOBQ_OK)
			l = claim_collect(c, 20000);
		pthread_join(th, NULL);
		test_cond(l != NULL && jobq_joblist_count(l) == 1 && now_ms() - t0 < 10000 &&
				  jobq_complete(c, jobq_job_id(jobq_joblist_get(l, 0)),
								jobq_job_token(jobq_joblist_get(l, 0)), NULL, 0) == JOBQ_OK);
		jobq_joblist_free(l);
	}

	test("claim_interrupt: a long wait ends at once with an empty list");
	t0 = now_ms();
	l = NULL;
	if (jobq_claim_start(c, qs, 1, 1, 30, "async", 60000) == JOBQ_OK)
	{
		msleep(200);
		if (jobq_claim_interrupt(c) == JOBQ_OK)
			l = claim_collect(c, 20000);
	}
	test_cond(l != NULL && jobq_joblist_count(l) == 0 && now_ms() - t0 < 5000 &&
			  jobq_status(c) == JOBQ_ERR_NONE && qstat(c, qw, "ready") == 0);
	jobq_joblist_free(l);

	test("claim_ready / _finish without a claim: BAD_ARGUMENT; interrupt: OK");
	test_cond(jobq_claim_ready(c) == JOBQ_ERR && failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) &&
			  jobq_claim_finish(c) == NULL && failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) &&
			  jobq_claim_interrupt(c) == JOBQ_OK);

	test("consume_input: a NOTIFY read from the socket returns 1");
	{
		JobqConn   *p = jobq_connect(dsn);
		int			r = -2;

		jobq_wait_for_work(c, qs, 1, 0);	/* LISTEN (already, from test_wait) */
		if (jobq_consume_input(c) == 0 && enq(p, qw, "{}", &id) == JOBQ_OK &&
			wait_readable(c, 5000))
			r = jobq_consume_input(c);
		test_cond(r == 1 && jobq_consume_input(c) == 0);
		jobq_disconnect(p);
	}

	test("consume_input on a terminated backend: CONNECTION");
	{
		JobqConn   *d = jobq_connect(dsn);
		PGresult   *res = NULL;
		char		sql[96];
		int			r = 0;

		if (d && jobq_status(d) == JOBQ_ERR_NONE)
		{
			snprintf(sql, sizeof(sql), "SELECT pg_terminate_backend(%d)",
					 PQbackendPID(jobq_pgconn(d)));
			res = PQexec(jobq_pgconn(c), sql);
			/* as an event loop does: read whenever the socket is readable */
			for (int k = 0; k < 50 && r != JOBQ_ERR; k++)
				if (wait_readable(d, 100))
					r = jobq_consume_input(d);
		}
		test_cond(r == JOBQ_ERR && failed_with(d, JOBQ_ERR_CONNECTION, NULL));
		PQclear(res);
		jobq_disconnect(d);
	}

	test("rows_json: timestamps in PostgreSQL's JSON form (ISO 8601, T)");
	{
		JobqRows   *r = jobq_job_info(c, id);
		char	   *js = jobq_rows_json(r);
		const char *at = js ? strstr(js, "\"enqueued_at\":\"") : NULL;

		test_cond(at != NULL && at[15 + 10] == 'T' &&
				  (strstr(at, "+00:00\"") != NULL || at[15 + 26] != '\0'));
		jobq_free(js);
		jobq_rows_free(r);
	}
}

static void
test_wait(JobqConn *c)
{
	const char *qs[1] = {qw};
	int64_t		t0;
	int			r;

	test("wait_for_work: the first call LISTENs and returns 1 (claim again)");
	test_cond(jobq_wait_for_work(c, qs, 1, 1000) == 1);

	test("wait_for_work: times out with 0 after about timeout_ms");
	t0 = now_ms();
	r = jobq_wait_for_work(c, qs, 1, 250);
	test_cond(r == 0 && now_ms() - t0 >= 240 && now_ms() - t0 < 2000);

	test("wait_for_work: woken by NOTIFY from another session's enqueue");
	{
		pthread_t	th;

		pthread_create(&th, NULL, late_producer, NULL);
		t0 = now_ms();
		r = jobq_wait_for_work(c, qs, 1, 10000);
		pthread_join(th, NULL);
		test_cond(r == 1 && now_ms() - t0 < 5000);
	}

	test("... and the job is then claimable");
	{
		JobqJob    *j = claim1(c, qw, 30);

		test_cond(j != NULL && jobq_complete(c, jobq_job_id(j), jobq_job_token(j), NULL, 0) == JOBQ_OK);
		jobq_job_free(j);
	}

	test("wait_for_work: a notification that arrived earlier wakes at once");
	{
		int64_t		id;
		JobqConn   *p = jobq_connect(dsn);

		enq(p, qw, "{\"early\": true}", &id);
		jobq_disconnect(p);
		/* any round trip lets libpq pick up the notification */
		jobq_rows_free(jobq_stats(c, qw));
		t0 = now_ms();
		r = jobq_wait_for_work(c, qs, 1, 5000);
		test_cond(r == 1 && now_ms() - t0 < 2000);
		/* take that job, so that the queue is empty again */
		{
			JobqJob    *j = claim1(c, qw, 30);

			if (j)
				jobq_complete(c, jobq_job_id(j), jobq_job_token(j), NULL, 0);
			jobq_job_free(j);
		}
	}

	test("claim_wait: wait_ms -1 / 300001 -> BAD_ARGUMENT");
	{
		JobqJobList *l1 = jobq_claim_wait(c, qs, 1, 1, 30, NULL, -1);
		int			ok = l1 == NULL && failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL);
		JobqJobList *l2 = jobq_claim_wait(c, qs, 1, 1, 30, NULL, JOBQ_CLAIM_WAIT_MAX_MS + 1);

		test_cond(ok && l2 == NULL && failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));
	}

	test("claim_wait: on JOBQ_CLAIM_QUEUES_MAX queues (0.1.0 refused more than 16)");
	{
		const char *many[JOBQ_CLAIM_QUEUES_MAX];
		JobqJobList *l;
		int			i;

		for (i = 0; i < JOBQ_CLAIM_QUEUES_MAX; i++)
			many[i] = qw;
		l = jobq_claim_wait(c, many, JOBQ_CLAIM_QUEUES_MAX, 1, 30, NULL, 100);
		if (l == NULL)
			printf("\n      %s ", jobq_errmsg(c));
		test_cond(l != NULL && jobq_joblist_count(l) == 0);
		jobq_joblist_free(l);
	}

	test("claim_wait: empty queue returns an empty list after the wait");
	{
		JobqJobList *l;

		t0 = now_ms();
		l = jobq_claim_wait(c, qs, 1, 1, 30, "waiter", 300);
		if (l == NULL || jobq_joblist_count(l) != 0)
			printf("\n      n=%zu elapsed=%lld %s ", jobq_joblist_count(l), (long long) (now_ms() - t0), jobq_errmsg(c));
		test_cond(l != NULL && jobq_joblist_count(l) == 0 && now_ms() - t0 >= 250 &&
				  now_ms() - t0 < 5000);
		jobq_joblist_free(l);
	}

	test("claim_wait: a job enqueued during the wait is claimed at once");
	{
		pthread_t	th;
		JobqJobList *l;

		pthread_create(&th, NULL, late_producer, NULL);
		t0 = now_ms();
		l = jobq_claim_wait(c, qs, 1, 1, 30, "waiter", 10000);
		pthread_join(th, NULL);
		test_cond(l != NULL && jobq_joblist_count(l) == 1 && now_ms() - t0 < 5000 &&
				  jobq_complete(c, jobq_job_id(jobq_joblist_get(l, 0)),
								jobq_job_token(jobq_joblist_get(l, 0)), NULL, 0) == JOBQ_OK);
		jobq_joblist_free(l);
	}
	/* the notification of that enqueue is still queued: consume it */
	jobq_wait_for_work(c, qs, 1, 0);

	test("wait_for_work inside a transaction: BAD_ARGUMENT");
	PQclear(PQexec(jobq_pgconn(c), "BEGIN"));
	test_cond(jobq_wait_for_work(c, qs, 1, 10) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));
	PQclear(PQexec(jobq_pgconn(c), "ROLLBACK"));

	test("pooler mode (no LISTEN, no prepare): wait just sleeps, calls work");
	{
		JobqConn   *pc = jobq_connect_ex(dsn, "public", JOBQ_CONNECT_POOLER);
		JobqJob    *j;
		int			ok;

		int64_t		id;

		t0 = now_ms();
		ok = pc && jobq_status(pc) == JOBQ_ERR_NONE &&
			jobq_wait_for_work(pc, qs, 1, 200) == 0 && now_ms() - t0 >= 190;
		ok = ok && enq(pc, qw, "{\"pooled\": true}", &id) == JOBQ_OK;
		j = claim1(pc, qw, 30);
		ok = ok && j && jobq_complete(pc, jobq_job_id(j), jobq_job_token(j), NULL, 0) == JOBQ_OK;
		jobq_job_free(j);
		{
			const char *q2[1] = {qw};
			JobqJobList *l = jobq_complete_and_claim(pc, 0, NULL, NULL, NULL, q2, 1, 1, 30, NULL);

			ok = ok && l != NULL;
			jobq_joblist_free(l);
		}
		test_cond(ok);
		jobq_disconnect(pc);
	}
}

static void
test_reconnect_and_security(JobqConn *c)
{
	int64_t		id;
	JobqJob    *j;

	test("connection killed by the server: next call fails with CONNECTION");
	enq(c, qa, "{\"k\": \"reconnect\"}", &id);
	j = claim1(c, qa, 60);
	{
		char		sql[128];
		int			pid = PQbackendPID(jobq_pgconn(c));

		snprintf(sql, sizeof(sql), "SELECT pg_terminate_backend(%d)", pid);
		exec_ok(sql);
		msleep(100);
		test_cond(jobq_enqueue(c, qa, "{}", 2, NULL, &id) == JOBQ_ERR &&
				  failed_with(c, JOBQ_ERR_CONNECTION, NULL) &&
				  jobq_error_action(c) == JOBQ_ACTION_RECONNECT && !jobq_is_connected(c));
	}

	test("jobq_reconnect: OK; the claimed job's token is still valid");
	test_cond(jobq_reconnect(c) == JOBQ_OK && jobq_is_connected(c) &&
			  j && jobq_complete(c, jobq_job_id(j), jobq_job_token(j), NULL, 0) == JOBQ_OK);
	jobq_job_free(j);

	test("wait_for_work detects a killed connection");
	{
		const char *qs[1] = {qw};
		char		sql[128];

		jobq_wait_for_work(c, qs, 1, 10);	/* LISTEN */
		snprintf(sql, sizeof(sql), "SELECT pg_terminate_backend(%d)",
				 PQbackendPID(jobq_pgconn(c)));
		exec_ok(sql);
		test_cond(jobq_wait_for_work(c, qs, 1, 3000) == JOBQ_ERR &&
				  failed_with(c, JOBQ_ERR_CONNECTION, NULL) &&
				  jobq_reconnect(c) == JOBQ_OK &&
				  jobq_wait_for_work(c, qs, 1, 10) == 1);	/* LISTENs again */
	}

	test("search_path cannot redirect calls to a planted function");
	if (exec_ok("DROP SCHEMA IF EXISTS jobq_evil CASCADE; CREATE SCHEMA jobq_evil;"
				"CREATE FUNCTION jobq_evil.jobq_enqueue(text, jsonb, timestamptz, interval, "
				"integer, integer, text) RETURNS bigint LANGUAGE sql AS 'SELECT -666::bigint'"))
	{
		int			ok;

		PQclear(PQexec(jobq_pgconn(c), "SET search_path = jobq_evil, public"));
		ok = jobq_enqueue(c, qa, "{\"safe\": true}", 14, NULL, &id) == JOBQ_OK && id > 0;
		PQclear(PQexec(jobq_pgconn(c), "RESET search_path"));
		exec_ok("DROP SCHEMA jobq_evil CASCADE");
		test_cond(ok);
	}
	else
		test_cond(0);

	test("values are parameters: a hostile dedupe key / worker are plain data");
	{
		JobqEnqueueOpts eo = JOBQ_ENQUEUE_OPTS_INIT;
		int64_t		a = 0,
					b = 0;
		const char *qs[1] = {qa};
		JobqJobList *l;

		eo.dedupe_key = "x'); DROP TABLE jobq.jobs; --\"\\";
		l = jobq_claim(c, qs, 1, 1, 30, "w'); DROP SCHEMA jobq; --");
		test_cond(jobq_enqueue(c, qa, "{}", 2, &eo, &a) == JOBQ_OK &&
				  jobq_enqueue(c, qa, "{}", 2, &eo, &b) == JOBQ_OK && a == b && l != NULL);
		jobq_joblist_free(l);
	}
}

static void
test_drop(JobqConn *c)
{
	test("drop_queue with live jobs and no force: SERVER 55006");
	test_cond(jobq_drop_queue(c, qa, 0) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_SERVER, "55006"));

	test("drop_queue with force: OK, then unknown");
	test_cond(jobq_drop_queue(c, qa, 1) == JOBQ_OK &&
			  jobq_drop_queue(c, qa, 1) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_NOT_FOUND, "42704"));
}

/*
 * fake_version_schema: a schema "t<pid>_ver" whose jobq_server_version()
 * claims sql_version v (NULL: a schema without the function, as on a 0.1.0
 * server).  Returns the schema name (static) or NULL on setup failure.
 */
static const char *
fake_version_schema(const char *v)
{
	static char schema[64];
	char		sql[512];

	snprintf(schema, sizeof(schema), "t%d_ver", (int) getpid());
	snprintf(sql, sizeof(sql),
			 "DROP SCHEMA IF EXISTS %s CASCADE; CREATE SCHEMA %s;", schema, schema);
	if (!exec_ok(sql))
		return NULL;
	if (v == NULL)
		return schema;
	snprintf(sql, sizeof(sql),
			 "CREATE FUNCTION %s.jobq_server_version() RETURNS TABLE "
			 "(sql_version text, library_version text) "
			 "LANGUAGE sql AS $$SELECT '%s', '%s'$$",
			 schema, v, v);
	return exec_ok(sql) ? schema : NULL;
}

/* refused: connect to schema (faking sql_version v) fails with VERSION */
static int
refused(const char *v, const char *words)
{
	const char *schema = fake_version_schema(v);
	JobqConn   *vc = schema ? jobq_connect_ex(dsn, schema, 0) : NULL;
	int			ok = vc != NULL && failed_with(vc, JOBQ_ERR_VERSION, NULL) &&
		!jobq_is_connected(vc) && jobq_error_action(vc) == JOBQ_ACTION_NEVER &&
		strstr(jobq_errmsg(vc), words) != NULL &&
		strcmp(jobq_error_name(JOBQ_ERR_VERSION), "JOBQ_ERR_VERSION") == 0;

	if (vc != NULL && !ok)
		printf("\n      message: %s\n      ", jobq_errmsg(vc));
	/* a reconnect asks again, and is refused again */
	ok = ok && jobq_reconnect(vc) == JOBQ_ERR && failed_with(vc, JOBQ_ERR_VERSION, NULL);
	jobq_disconnect(vc);
	return ok;
}

/*
 * test_server_version: libjobq reads jobq_server_version() once per
 * session and refuses a server SQL release it does not work with
 * (doc/upgrading.md, "Compatibility"); a server without the function is
 * taken as 0.1.0.
 */
static void
test_server_version(JobqConn *c)
{
	char		sql[128];

	test("jobq_server_version: the SQL and library versions of the server");
	{
		PGresult   *r = PQexec(jobq_pgconn(c),
							   "SELECT v.sql_version = e.extversion, v.library_version "
							   "FROM jobq_server_version() v, pg_extension e "
							   "WHERE e.extname = 'jobq'");

		test_cond(r && PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 &&
				  strcmp(PQgetvalue(r, 0, 0), "t") == 0 && PQgetvalue(r, 0, 1)[0] != '\0');
		PQclear(r);
	}

	test("server SQL older than the previous release: VERSION, not connected");
	test_cond(refused("0.0.9", "ALTER EXTENSION jobq UPDATE"));

	test("server SQL of a later major version: VERSION, not connected");
	test_cond(refused("1.0.0", "later major version"));

	test("server SQL version that cannot be read: VERSION, not connected");
	test_cond(refused("0.2-beta", "cannot read"));

	test("a later release of the same major version is accepted");
	{
		const char *schema = fake_version_schema("0.99.0");
		JobqConn   *vc = schema ? jobq_connect_ex(dsn, schema, 0) : NULL;

		test_cond(vc != NULL && jobq_status(vc) == JOBQ_ERR_NONE && jobq_is_connected(vc));
		jobq_disconnect(vc);
	}

	test("no jobq_server_version (a 0.1.0 server): connected, calls go on");
	{
		const char *schema = fake_version_schema(NULL);
		JobqConn   *vc = schema ? jobq_connect_ex(dsn, schema, 0) : NULL;
		int64_t		id;

		/* the fake schema has no jobq API, so the call itself says 42883 */
		test_cond(vc != NULL && jobq_status(vc) == JOBQ_ERR_NONE && jobq_is_connected(vc) &&
				  jobq_enqueue(vc, qa, "{}", 2, NULL, &id) == JOBQ_ERR &&
				  failed_with(vc, JOBQ_ERR_SERVER, "42883"));
		jobq_disconnect(vc);
	}
	snprintf(sql, sizeof(sql), "DROP SCHEMA IF EXISTS t%d_ver CASCADE", (int) getpid());
	exec_ok(sql);
}

/*
 * claim_one: enqueue one job into q and claim it; its id and token (a
 * static copy) to *id / *tok.  0 on failure.
 */
static int
claim_one(JobqConn *c, const char *q, int64_t *id, const char **tok)
{
	static char token[2][JOBQ_TOKEN_LEN + 1];
	static int	which = 0;
	const char *qs[1] = {q};
	JobqJobList *l;
	int			ok;

	if (enq(c, q, "{}", id) != JOBQ_OK)
		return 0;
	l = jobq_claim(c, qs, 1, 1, 30, "pos");
	ok = l != NULL && jobq_joblist_count(l) == 1 &&
		jobq_job_id(jobq_joblist_get(l, 0)) == *id;
	if (ok)
	{
		which = !which;
		snprintf(token[which], sizeof(token[which]), "%s",
				 jobq_job_token(jobq_joblist_get(l, 0)));
		*tok = token[which];
	}
	jobq_joblist_free(l);
	return ok;
}

/*
 * test_batch_positions: a batch complete reports exactly the pairs the
 * server accepted.  The 0.2.0 SQL answers with positions, so for ids
 * [5, 5] with tokens [wrong, right] only the second is accepted; against
 * 0.1.0 SQL (a schema without jobq_server_version whose
 * jobq_complete_batch is the old one, answering with ids) libjobq falls
 * back to matching ids, and can only report both.
 */
/*
 * jobq_health and jobq_audit (0.2.0 servers): the health rows, the trail
 * of a pause and a resume newest first, a page before an id, bad
 * arguments refused before any round trip.
 */
static void
test_health_audit(JobqConn *c)
{
	char		q[64];
	JobqRows   *r;
	int64_t		newest;

	snprintf(q, sizeof(q), "t%d-aud", (int) getpid());

	test("health: rows with a severity, the sweeper among the checks");
	r = jobq_health(c);
	{
		int			sweeper = 0,
					bad = 0;

		for (size_t i = 0; r && i < jobq_rows_count(r); i++)
		{
			const char *sev = jobq_rows_get(r, i, "severity");

			sweeper += strcmp(jobq_rows_get(r, i, "check"), "sweeper") == 0;
			bad += strcmp(sev, "ok") != 0 && strcmp(sev, "warning") != 0 &&
				strcmp(sev, "critical") != 0;
			bad += jobq_rows_get(r, i, "advice") == NULL;
		}
		test_cond(r != NULL && sweeper == 1 && bad == 0);
	}
	jobq_rows_free(r);

	test("audit: pause and resume of a queue, newest first");
	r = NULL;
	if (jobq_create_queue(c, q, NULL) == JOBQ_OK && jobq_pause(c, q) == JOBQ_OK &&
		jobq_resume(c, q) == JOBQ_OK)
		r = jobq_audit(c, q, 10, 0);
	test_cond(r != NULL && jobq_rows_count(r) == 3 &&
			  strcmp(jobq_rows_get(r, 0, "action"), "resume") == 0 &&
			  strcmp(jobq_rows_get(r, 1, "action"), "pause") == 0 &&
			  strcmp(jobq_rows_get(r, 2, "action"), "create_queue") == 0 &&
			  jobq_rows_get_int64(r, 0, "affected") == 1);
	newest = r ? jobq_rows_get_int64(r, 0, "id") : 0;
	jobq_rows_free(r);

	test("audit: the page before the newest row");
	r = jobq_audit(c, q, 1, newest);
	test_cond(r != NULL && jobq_rows_count(r) == 1 &&
			  strcmp(jobq_rows_get(r, 0, "action"), "pause") == 0);
	jobq_rows_free(r);

	test("audit: bad queue, max_rows, before_id refused without a call");
	test_cond(jobq_audit(c, "Bad Q", 10, 0) == NULL && failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) &&
			  jobq_audit(c, q, 0, 0) == NULL && failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) &&
			  jobq_audit(c, q, JOBQ_LIST_MAX_ROWS + 1, 0) == NULL &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) &&
			  jobq_audit(c, q, 10, -1) == NULL && failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));

	test("bulk_where: retry 3 dead jobs 2 at a time, through the cursor");
	{
		JobqQueueOpts o = JOBQ_QUEUE_OPTS_INIT;
		int64_t		a1 = -1,
					a2 = -1;
		char	   *cur = NULL,
				   *end = (char *) "x";
		const char *qs[1] = {q};
		JobqJobList *l;
		int			ok;

		o.max_attempts = 1;
		jobq_drop_queue(c, q, 1);
		ok = jobq_create_queue(c, q, &o) == JOBQ_OK;
		for (int i = 0; ok && i < 3; i++)
			ok = jobq_enqueue(c, q, "{}", 2, NULL, NULL) == JOBQ_OK;
		l = ok ? jobq_claim(c, qs, 1, 3, 30, "t") : NULL;
		for (size_t i = 0; l && i < jobq_joblist_count(l); i++)
		{
			const JobqJob *j = jobq_joblist_get(l, i);

			ok = ok && jobq_fail(c, jobq_job_id(j), jobq_job_token(j), "timeout", -1, 0, NULL) == JOBQ_OK;
		}
		jobq_joblist_free(l);
		ok = ok && jobq_bulk_where(c, JOBQ_BULK_RETRY, q, NULL, "{\"error\": \"timeout\"}", 2,
								   NULL, &a1, &cur) == JOBQ_OK;
		ok = ok && cur != NULL &&
			jobq_bulk_where(c, JOBQ_BULK_RETRY, q, "dead", NULL, 2, cur, &a2, &end) == JOBQ_OK;
		test_cond(ok && a1 == 2 && a2 == 1 && end == NULL && qstat(c, q, "ready") == 3);
		jobq_free(cur);
	}

	test("bulk_where: bad queue, max_rows, action refused without a call; bad state by the server");
	{
		int64_t		a = 0;

		test_cond(jobq_bulk_where(c, JOBQ_BULK_CANCEL, "Bad Q", NULL, NULL, -1, NULL, &a, NULL) == JOBQ_ERR &&
				  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) &&
				  jobq_bulk_where(c, JOBQ_BULK_CANCEL, q, NULL, NULL, 0, NULL, &a, NULL) == JOBQ_ERR &&
				  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) &&
				  jobq_bulk_where(c, (JobqBulkAction) 9, q, NULL, NULL, -1, NULL, &a, NULL) == JOBQ_ERR &&
				  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) &&
				  jobq_bulk_where(c, JOBQ_BULK_RUN_NOW, q, "running", NULL, -1, NULL, &a, NULL) == JOBQ_ERR &&
				  failed_with(c, JOBQ_ERR_SERVER, "22023"));
	}
	jobq_drop_queue(c, q, 1);
}

static void
test_batch_positions(JobqConn *c)
{
	static const char *wrong = "00000000-0000-0000-0000-000000000000";
	char		q[64];
	char		sql[512];
	const char *qs[1];
	int64_t		id = 0,
				ids[2];
	const char *tok = NULL;
	const char *toks[2];
	int			acc[2] = {-1, -1};
	size_t		nacc = 0;
	JobqJobList *l;
	const char *schema;
	JobqConn   *old = NULL;
	int			ok;

	snprintf(q, sizeof(q), "t%d-pos", (int) getpid());
	qs[0] = q;
	ok = jobq_create_queue(c, q, NULL) == JOBQ_OK;

	test("complete_batch [5,5] with tokens [wrong,right]: exactly the second accepted");
	ok = ok && claim_one(c, q, &id, &tok);
	ids[0] = ids[1] = id;
	toks[0] = wrong;
	toks[1] = tok;
	test_cond(ok && jobq_complete_batch(c, 2, ids, toks, NULL, NULL, acc, &nacc) == JOBQ_OK &&
			  acc[0] == 0 && acc[1] == 1 && nacc == 1);

	test("complete_batch [5,5] with tokens [right,wrong]: exactly the first accepted");
	ok = ok && claim_one(c, q, &id, &tok);
	ids[0] = ids[1] = id;
	toks[0] = tok;
	toks[1] = wrong;
	test_cond(ok && jobq_complete_batch(c, 2, ids, toks, NULL, NULL, acc, &nacc) == JOBQ_OK &&
			  acc[0] == 1 && acc[1] == 0 && nacc == 1);

	test("complete_and_claim [5,5] with tokens [wrong,right]: the same, pipelined");
	ok = ok && claim_one(c, q, &id, &tok);
	ids[0] = ids[1] = id;
	toks[0] = wrong;
	toks[1] = tok;
	acc[0] = acc[1] = -1;
	l = ok ? jobq_complete_and_claim(c, 2, ids, toks, acc, qs, 1, 1, 30, "pos") : NULL;
	test_cond(l != NULL && acc[0] == 0 && acc[1] == 1);
	jobq_joblist_free(l);

	test("against 0.1.0 SQL: falls back to jobq_complete_batch (ids)");
	schema = fake_version_schema(NULL);
	snprintf(sql, sizeof(sql),
			 "CREATE FUNCTION %s.jobq_complete_batch(i bigint[], t uuid[], "
			 "r jsonb[] DEFAULT NULL) RETURNS SETOF bigint LANGUAGE sql "
			 "AS $$SELECT public.jobq_complete_batch(i, t, r)$$", schema ? schema : "x");
	ok = ok && schema != NULL && exec_ok(sql) && claim_one(c, q, &id, &tok);
	old = ok ? jobq_connect_ex(dsn, schema, 0) : NULL;
	ids[0] = ids[1] = id;
	toks[0] = wrong;
	toks[1] = tok;
	acc[0] = acc[1] = -1;
	test_cond(old != NULL &&
			  jobq_complete_batch(old, 2, ids, toks, NULL, NULL, acc, &nacc) == JOBQ_OK &&
			  acc[0] == 1 && acc[1] == 1 && nacc == 2);
	jobq_disconnect(old);
	if (schema != NULL)
	{
		snprintf(sql, sizeof(sql), "DROP SCHEMA %s CASCADE", schema);
		exec_ok(sql);
	}
	jobq_drop_queue(c, q, 1);
}

/*
 * jobq_await: the outcome as a value (completed with its result, dead with
 * its error, cancelled on timeout, still running, purged), the struct's
 * ownership (cleared on reuse, freed by jobq_outcome_clear: valgrind
 * checks), bad arguments before anything is sent, a 0.1.0 server refused.
 */
static void
test_await(JobqConn *c)
{
	char		q[64];
	int64_t		id = 0;
	const char *tok = NULL;
	JobqOutcome out = JOBQ_OUTCOME_INIT;
	JobqOutcome bad = JOBQ_OUTCOME_INIT;
	JobqState	st;
	int			ok;

	snprintf(q, sizeof(q), "t%d-await", (int) getpid());
	ok = jobq_create_queue(c, q, NULL) == JOBQ_OK;

	test("await a running job: RUNNING, timed_out, its attempt");
	ok = ok && claim_one(c, q, &id, &tok);
	test_cond(ok && jobq_await(c, id, 0, 0, &out) == JOBQ_OK &&
			  out.state == JOBQ_STATE_RUNNING && out.timed_out && !out.purged &&
			  out.attempt == 1 && out.result == NULL && out.finished_at == NULL);

	test("await a completed job: COMPLETED with its result, the struct reused");
	ok = ok && jobq_complete(c, id, tok, "{\"r\": 7}", 8) == JOBQ_OK;
	test_cond(ok && jobq_await(c, id, 1000, 0, &out) == JOBQ_OK &&
			  out.state == JOBQ_STATE_COMPLETED && !out.timed_out &&
			  out.result != NULL && strcmp(out.result, "{\"r\": 7}") == 0 &&
			  out.finished_at != NULL && out.last_error == NULL);

	test("await a dead job: DEAD with its last error, not an error");
	ok = ok && claim_one(c, q, &id, &tok) &&
		jobq_fail(c, id, tok, "it broke", -1, 1, &st) == JOBQ_OK;
	test_cond(ok && jobq_await(c, id, 1000, 0, &out) == JOBQ_OK &&
			  out.state == JOBQ_STATE_DEAD && out.result == NULL &&
			  out.last_error != NULL && strcmp(out.last_error, "it broke") == 0);

	test("CANCEL_ON_TIMEOUT: a ready job comes back CANCELLED");
	ok = ok && jobq_enqueue(c, q, "{}", 2, NULL, &id) == JOBQ_OK;
	test_cond(ok && jobq_await(c, id, 0, JOBQ_AWAIT_CANCEL_ON_TIMEOUT, &out) == JOBQ_OK &&
			  out.state == JOBQ_STATE_CANCELLED && !out.timed_out);

	test("an issued id found nowhere: purged");
	{
		int64_t		gone = 0;

		if (ok)
		{
			PQclear(PQexec(jobq_pgconn(c), "BEGIN"));
			ok = jobq_enqueue(c, q, "{}", 2, NULL, &gone) == JOBQ_OK;
			PQclear(PQexec(jobq_pgconn(c), "ROLLBACK"));
		}
		test_cond(ok && gone > 0 && jobq_await(c, gone, 0, 0, &out) == JOBQ_OK &&
				  out.purged && out.state == JOBQ_STATE_UNKNOWN && !out.timed_out);
	}

	test("bad arguments: BAD_ARGUMENT before anything is sent; never issued: 22023");
	bad.size = 0;
	test_cond(jobq_await(c, id, 0, 0, NULL) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) &&
			  jobq_await(c, id, 0, 0, &bad) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) &&
			  jobq_await(c, 0, 0, 0, &out) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) &&
			  jobq_await(c, id, -1, 0, &out) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) &&
			  jobq_await(c, id, JOBQ_AWAIT_MAX_S * 1000 + 1, 0, &out) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) &&
			  jobq_await(c, id, 0, 0x80, &out) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) &&
			  jobq_await(c, INT64_MAX, 0, 0, &out) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_SERVER, "22023") &&
			  jobq_await(NULL, id, 0, 0, &out) == JOBQ_ERR);

	test("against 0.1.0 SQL: JOBQ_ERR_VERSION");
	{
		const char *schema = fake_version_schema("0.1.0");
		JobqConn   *old = schema ? jobq_connect_ex(dsn, schema, 0) : NULL;

		test_cond(old != NULL && jobq_await(old, id, 0, 0, &out) == JOBQ_ERR &&
				  failed_with(old, JOBQ_ERR_VERSION, NULL));
		jobq_disconnect(old);
		if (schema != NULL)
		{
			char		sql[128];

			snprintf(sql, sizeof(sql), "DROP SCHEMA %s CASCADE", schema);
			exec_ok(sql);
		}
	}
	jobq_outcome_clear(&out);
	jobq_outcome_clear(NULL);
	jobq_drop_queue(c, q, 1);
}

/*
 * test_workers: the worker registry calls (issue 16): register, heartbeat
 * answers, the running jobs listed by the claim's worker label, signals,
 * deregister, and bad arguments refused before anything is sent.  With
 * jobq preloaded, a waiting claim labelled with the worker id ends at the
 * commit of a signal from another session.
 */
static void
test_workers(JobqConn *c)
{
	JobqWorkerOpts o = JOBQ_WORKER_OPTS_INIT;
	const char *queues[1];
	char		id[JOBQ_WORKER_ID_LEN + 1];
	char		id2[JOBQ_WORKER_ID_LEN + 1];
	int			every_ms = 0;
	int			preloaded = 0;
	JobqRows   *r;
	JobqJobList *l;
	int64_t		job;
	int			found = 0;
	char		q[32];

	snprintf(q, sizeof(q), "t%d-reg", (int) getpid());
	jobq_create_queue(c, q, NULL);
	queues[0] = q;
	o.host = "test-host";
	o.pid = 4242;
	o.queues = queues;
	o.nqueues = 1;
	o.slots = 3;
	o.version = "test";
	o.metadata = "{\"k\": 1}";
	o.timeout_s = 40;
	test("worker_register: an id and a quarter of the timeout");
	test_cond(jobq_worker_register(c, "t-worker", &o, id, &every_ms) == JOBQ_OK &&
			  strlen(id) == JOBQ_WORKER_ID_LEN && every_ms == 10000);

	test("worker_heartbeat: running, then quiet after a signal, then running");
	{
		int			a = jobq_worker_heartbeat(c, id, 1, JOBQ_WORKER_RUNNING, NULL);
		int			n = jobq_worker_signal(c, id, "quiet");
		int			b = jobq_worker_heartbeat(c, id, -1, JOBQ_WORKER_UNREGISTERED, "{}");
		int			m = jobq_worker_signal(c, "t-work%", "resume");
		int			d = jobq_worker_heartbeat(c, id, 0, JOBQ_WORKER_RUNNING, NULL);

		test_cond(a == JOBQ_WORKER_RUNNING && n == 1 && b == JOBQ_WORKER_QUIET && m == 1 &&
				  d == JOBQ_WORKER_RUNNING);
	}

	test("jobq_workers lists the job claimed with the worker id as label");
	jobq_enqueue(c, q, "{\"w\": 1}", 8, NULL, &job);
	l = jobq_claim(c, queues, 1, 1, -1, id);
	r = jobq_workers(c);
	for (size_t i = 0; r && i < jobq_rows_count(r); i++)
		if (strcmp(jobq_rows_get(r, i, "worker_id"), id) == 0)
		{
			char		want[32];

			snprintf(want, sizeof(want), "{%lld}", (long long) job);
			found = strcmp(jobq_rows_get(r, i, "running"), want) == 0 &&
				strcmp(jobq_rows_get(r, i, "host"), "test-host") == 0 &&
				jobq_rows_get_int64(r, i, "slots") == 3;
		}
	test_cond(l != NULL && jobq_joblist_count(l) == 1 && found);
	if (l != NULL && jobq_joblist_count(l) == 1)
		jobq_complete(c, jobq_job_id(jobq_joblist_get(l, 0)),
					  jobq_job_token(jobq_joblist_get(l, 0)), NULL, 0);
	jobq_joblist_free(l);
	jobq_rows_free(r);

	test("jobq_queue_consumers: the worker claims from its queue with its 3 slots");
	found = 0;
	r = jobq_queue_consumers(c);
	for (size_t i = 0; r && i < jobq_rows_count(r); i++)
		if (strcmp(jobq_rows_get(r, i, "queue"), q) == 0)
			found = jobq_rows_get_int64(r, i, "workers") == 1 &&
				jobq_rows_get_int64(r, i, "claiming") == 1 &&
				jobq_rows_get_int64(r, i, "slots") == 3 &&
				strcmp(jobq_rows_get(r, i, "unserved"), "f") == 0;
	test_cond(found);
	jobq_rows_free(r);

	test("worker_register again under the same id keeps it");
	o.worker_id = id;
	test_cond(jobq_worker_register(c, "t-worker", &o, id2, NULL) == JOBQ_OK &&
			  strcmp(id, id2) == 0);

	if (jobq_wait_stats(c, &preloaded, NULL, NULL) == JOBQ_OK && preloaded)
	{
		JobqConn   *admin = jobq_connect(dsn);
		int64_t		t0;
		int			n;

		test("a signal ends the worker's waiting claim at its commit, empty");
		t0 = now_ms();
		n = jobq_claim_start(c, queues, 1, 1, -1, id, 20000) == JOBQ_OK ? 0 : -1;
		msleep(200);
		if (n == 0)
			n = jobq_worker_signal(admin, id, "stop");
		while (n == 1 && jobq_claim_ready(c) == 0 && now_ms() - t0 < 15000)
			msleep(10);
		l = jobq_claim_finish(c);
		test_cond(n == 1 && l != NULL && jobq_joblist_count(l) == 0 &&
				  now_ms() - t0 < 15000 &&
				  jobq_worker_heartbeat(c, id, 0, JOBQ_WORKER_RUNNING, NULL) == JOBQ_WORKER_STOPPING);
		jobq_joblist_free(l);
		jobq_disconnect(admin);
	}

	test("worker_deregister: 1, then 0, then heartbeat says unregistered");
	test_cond(jobq_worker_deregister(c, id) == 1 && jobq_worker_deregister(c, id) == 0 &&
			  jobq_worker_heartbeat(c, id, 0, JOBQ_WORKER_RUNNING, NULL) == JOBQ_WORKER_UNREGISTERED);

	test("worker calls refuse bad arguments before sending");
	{
		JobqWorkerOpts bad = JOBQ_WORKER_OPTS_INIT;
		int			ok = 1;

		ok &= jobq_worker_register(c, "", NULL, id2, NULL) == JOBQ_ERR &&
			failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL);
		ok &= jobq_worker_register(c, "w", NULL, NULL, NULL) == JOBQ_ERR &&
			failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL);
		bad.timeout_s = 1;
		ok &= jobq_worker_register(c, "w", &bad, id2, NULL) == JOBQ_ERR &&
			failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL);
		bad.timeout_s = 0;
		bad.size = 8;
		ok &= jobq_worker_register(c, "w", &bad, id2, NULL) == JOBQ_ERR &&
			failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL);
		ok &= jobq_worker_heartbeat(c, "nope", 0, JOBQ_WORKER_RUNNING, NULL) == -1 &&
			failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL);
		ok &= jobq_worker_signal(c, "*", "pause") == -1 &&
			failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL);
		ok &= jobq_worker_signal(c, "", "quiet") == -1 &&
			failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL);
		ok &= jobq_worker_deregister(c, NULL) == -1 &&
			failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL);
		ok &= jobq_worker_register(c, "w", NULL, id2, NULL) == JOBQ_OK &&
			jobq_worker_heartbeat(c, id2, 0, JOBQ_WORKER_RUNNING, "[1]") == -1 &&
			failed_with(c, JOBQ_ERR_SERVER, "22023") &&
			jobq_worker_deregister(c, id2) == 1;
		ok &= strcmp(jobq_worker_state_name(JOBQ_WORKER_QUIET), "quiet") == 0 &&
			strcmp(jobq_worker_state_name((JobqWorkerState) 9), "unknown") == 0;
		test_cond(ok);
	}
	jobq_drop_queue(c, q, 1);
}

/*
 * test_list_page: jobq_list_page pages by cursor and filters; a bad
 * options size and a bad filter key are refused; against 0.1.0 SQL a
 * cursor or filter is JOBQ_ERR_VERSION before any call.
 */
/*
 * test_rate_limited: jobq_fail_rate_limited gives the attempt back and puts
 * the job back after the hold (issue 19); bad holds are refused before any
 * round trip.
 */
static void
test_rate_limited(JobqConn *c)
{
	char		q[64];
	char		st[32];
	int64_t		id = 0;
	JobqJob    *j;
	int			ok;

	snprintf(q, sizeof(q), "t%d-429", (int) getpid());
	ok = jobq_create_queue(c, q, NULL) == JOBQ_OK && enq(c, q, "{}", &id) == JOBQ_OK;
	j = ok ? claim1(c, q, 30) : NULL;

	test("fail_rate_limited: a hold of 0 or past 365 days is BAD_ARGUMENT");
	test_cond(j != NULL &&
			  jobq_fail_rate_limited(c, id, jobq_job_token(j), "429", 0) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) &&
			  jobq_fail_rate_limited(c, id, jobq_job_token(j), "429", JOBQ_DELAY_MAX_S + 1) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));

	test("fail_rate_limited: OK, ready again later with the attempt given back");
	test_cond(j != NULL && jobq_fail_rate_limited(c, id, jobq_job_token(j), "429", 3600) == JOBQ_OK &&
			  (job_state(c, id, st, sizeof(st)), strcmp(st, "ready") == 0) &&
			  claim1(c, q, 30) == NULL);

	test("fail_rate_limited with the old token: STALE");
	test_cond(j != NULL && jobq_fail_rate_limited(c, id, jobq_job_token(j), "429", 60) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_STALE, NULL));
	jobq_job_free(j);
	jobq_drop_queue(c, q, 1);
}

/* group_of: the group key of job id as jobq.jobs has it ("" if none) */
static void
group_of(int64_t id, char *out, size_t size)
{
	char		sql[96];
	PGresult   *r;
	PGconn	   *pg = PQconnectdb(dsn);

	snprintf(sql, sizeof(sql), "SELECT group_key FROM jobq.jobs WHERE id = %lld",
			 (long long) id);
	r = PQexec(pg, sql);
	snprintf(out, size, "%s",
			 r && PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 ?
			 PQgetvalue(r, 0, 0) : "?");
	PQclear(r);
	PQfinish(pg);
}

/*
 * test_enqueue_020: group keys and dependencies through jobq_enqueue and
 * jobq_enqueue_batch (0.2.0 SQL), their bad input, and a 0.1.0 server
 */
static void
test_enqueue_020(JobqConn *c)
{
	char		q[64],
				qd[64];
	char		g[3][32];
	char		st[96];
	char		longkey[JOBQ_GROUP_KEY_MAX + 2];
	JobqQueueOpts qo = JOBQ_QUEUE_OPTS_INIT;
	JobqEnqueueOpts eo = JOBQ_ENQUEUE_OPTS_INIT;
	const char *payloads[3] = {"{}", "{}", "{}"};
	const size_t lens[3] = {2, 2, 2};
	const char *keys[3] = {"b", "c", "a"};
	int64_t		ids[3] = {0, 0, 0};
	int64_t		one = 0,
				parent = 0,
				child = 0,
				bad = 0;
	int			ok;

	snprintf(q, sizeof(q), "t%d-g20", (int) getpid());
	qo.group_mode = "fifo";
	snprintf(qd, sizeof(qd), "t%d-d20", (int) getpid());
	ok = jobq_create_queue(c, q, &qo) == JOBQ_OK && jobq_create_queue(c, qd, NULL) == JOBQ_OK;

	test("enqueue with group_key: the job is in its group");
	eo.group_key = "a";
	test_cond(ok && jobq_enqueue(c, q, "{}", 2, &eo, &one) == JOBQ_OK &&
			  (group_of(one, g[0], sizeof(g[0])), strcmp(g[0], "a") == 0));

	test("enqueue_batch with group_key: every job in that group");
	test_cond(ok && jobq_enqueue_batch(c, q, 2, payloads, lens, NULL, &eo, ids, NULL) == JOBQ_OK &&
			  (group_of(ids[0], g[0], sizeof(g[0])), group_of(ids[1], g[1], sizeof(g[1])),
			   strcmp(g[0], "a") == 0 && strcmp(g[1], "a") == 0));

	test("enqueue_batch with group_keys: a key each");
	eo.group_key = NULL;
	eo.group_keys = keys;
	test_cond(ok && jobq_enqueue_batch(c, q, 3, payloads, lens, NULL, &eo, ids, NULL) == JOBQ_OK &&
			  (group_of(ids[0], g[0], sizeof(g[0])), group_of(ids[1], g[1], sizeof(g[1])),
			   group_of(ids[2], g[2], sizeof(g[2])),
			   strcmp(g[0], "b") == 0 && strcmp(g[1], "c") == 0 && strcmp(g[2], "a") == 0));

	test("group_keys in a single enqueue, or with group_key: BAD_ARGUMENT");
	test_cond(jobq_enqueue(c, q, "{}", 2, &eo, &bad) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) &&
			  (eo.group_key = "a",
			   jobq_enqueue_batch(c, q, 3, payloads, lens, NULL, &eo, ids, NULL) == JOBQ_ERR) &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));

	test("a group_key of 0 or 257 bytes, a NULL or 257-byte key in group_keys: BAD_ARGUMENT");
	memset(longkey, 'k', sizeof(longkey) - 1);
	longkey[sizeof(longkey) - 1] = '\0';
	eo = (JobqEnqueueOpts) JOBQ_ENQUEUE_OPTS_INIT;
	eo.group_key = "";
	ok = jobq_enqueue(c, q, "{}", 2, &eo, &bad) == JOBQ_ERR &&
		failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL);
	eo.group_key = longkey;
	ok = ok && jobq_enqueue(c, q, "{}", 2, &eo, &bad) == JOBQ_ERR &&
		failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL);
	eo.group_key = NULL;
	keys[1] = NULL;
	eo.group_keys = keys;
	ok = ok && jobq_enqueue_batch(c, q, 3, payloads, lens, NULL, &eo, ids, NULL) == JOBQ_ERR &&
		failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL);
	keys[1] = longkey;
	test_cond(ok && jobq_enqueue_batch(c, q, 3, payloads, lens, NULL, &eo, ids, NULL) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) && bad == 0);

	test("depends_on: the job waits for its parent, and is ready once it completes");
	eo = (JobqEnqueueOpts) JOBQ_ENQUEUE_OPTS_INIT;
	ok = enq(c, qd, "{}", &parent) == JOBQ_OK;
	eo.depends_on = &parent;
	eo.n_depends_on = 1;
	eo.on_dep_failure = "wait";
	ok = ok && jobq_enqueue(c, qd, "{}", 2, &eo, &child) == JOBQ_OK &&
		(job_state(c, child, st, sizeof(st)), strcmp(st, "waiting") == 0);
	{
		/* the parent is qd's only ready job */
		JobqJob    *j = ok ? claim1(c, qd, 30) : NULL;

		ok = ok && j != NULL && jobq_job_id(j) == parent &&
			jobq_complete(c, parent, jobq_job_token(j), NULL, 0) == JOBQ_OK;
		jobq_job_free(j);
	}
	test_cond(ok && (job_state(c, child, st, sizeof(st)), strcmp(st, "ready") == 0));

	test("an unknown on_dep_failure: SERVER 22023, no job");
	bad = 0;
	eo.on_dep_failure = "later";
	test_cond(jobq_enqueue(c, qd, "{}", 2, &eo, &bad) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_SERVER, "22023") && bad == 0);

	test("depends_on in a batch, without ids, with id 0, a negative flow_id: BAD_ARGUMENT");
	eo.on_dep_failure = NULL;
	ok = jobq_enqueue_batch(c, qd, 1, payloads, lens, NULL, &eo, ids, NULL) == JOBQ_ERR &&
		failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL);
	eo.n_depends_on = 0;
	ok = ok && jobq_enqueue(c, qd, "{}", 2, &eo, &bad) == JOBQ_ERR &&
		failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL);
	{
		int64_t		zero = 0;

		eo.depends_on = &zero;
		eo.n_depends_on = 1;
		ok = ok && jobq_enqueue(c, qd, "{}", 2, &eo, &bad) == JOBQ_ERR &&
			failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL);
	}
	eo.depends_on = &parent;
	eo.flow_id = -1;
	test_cond(ok && jobq_enqueue(c, qd, "{}", 2, &eo, &bad) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) && bad == 0);

	test("a group_key against 0.1.0's SQL: VERSION, nothing sent");
	{
		const char *schema = fake_version_schema("0.1.0");
		JobqConn   *vc = schema ? jobq_connect_ex(dsn, schema, 0) : NULL;

		eo = (JobqEnqueueOpts) JOBQ_ENQUEUE_OPTS_INIT;
		eo.group_key = "a";
		test_cond(vc != NULL && jobq_enqueue(vc, q, "{}", 2, &eo, &bad) == JOBQ_ERR &&
				  failed_with(vc, JOBQ_ERR_VERSION, NULL));
		jobq_disconnect(vc);
	}
	snprintf(st, sizeof(st), "DROP SCHEMA t%d_ver CASCADE", (int) getpid());
	exec_ok(st);
	jobq_drop_queue(c, q, 1);
	jobq_drop_queue(c, qd, 1);
}

/*
 * test_dep_results: a claimed job tells its flow (jobq_job_flow_id, 0
 * outside flows, kept by jobq_job_dup); jobq_dep_results and
 * jobq_dep_results_many hand a child its parent's result, "{}" to a job
 * with no dependencies, NULL / STALE for a stale token; bad arguments are
 * refused before any round trip.
 */
static void
test_dep_results(JobqConn *c)
{
	char		q[64];
	char		sql[512];
	int64_t		alone = 0;
	int64_t		ids[3];
	const char *toks[3];
	char	   *res[3] = {NULL, NULL, NULL};
	char	   *one = NULL;
	char		want[128];
	JobqJob    *parent,
			   *lone,
			   *child;
	int			ok;

	snprintf(q, sizeof(q), "t%d-flow", (int) getpid());
	ok = jobq_create_queue(c, q, NULL) == JOBQ_OK;
	snprintf(sql, sizeof(sql),
			 "SELECT jobq_flow('[{\"ref\": \"p\", \"queue\": \"%s\", \"payload\": {}},"
			 " {\"ref\": \"c\", \"queue\": \"%s\", \"payload\": {}, \"depends_on\": [\"p\"]}]')",
			 q, q);
	ok = ok && exec_ok(sql);
	parent = ok ? claim1(c, q, 30) : NULL;
	ok = ok && enq(c, q, "{}", &alone) == JOBQ_OK;
	lone = ok ? claim1(c, q, 30) : NULL;

	test("dep_results: the claim tells the flow (the first job's id), 0 outside flows");
	test_cond(parent != NULL && lone != NULL &&
			  jobq_job_flow_id(parent) == jobq_job_id(parent) && jobq_job_flow_id(lone) == 0 &&
			  jobq_job_flow_id(NULL) == 0);

	test("dep_results: a job without dependencies has {}");
	test_cond(parent != NULL &&
			  jobq_dep_results(c, jobq_job_id(parent), jobq_job_token(parent), &one) == JOBQ_OK &&
			  one != NULL && strcmp(one, "{}") == 0);
	jobq_free(one);
	one = NULL;

	ok = parent != NULL &&
		jobq_complete(c, jobq_job_id(parent), jobq_job_token(parent), "{\"n\": 7}", 8) == JOBQ_OK;
	child = ok ? claim1(c, q, 30) : NULL;
	snprintf(want, sizeof(want), "{\"%lld\": {\"state\": \"completed\", \"result\": {\"n\": 7}}}",
			 (long long) jobq_job_id(parent));

	test("dep_results: the child gets its parent's result, and keeps its flow through dup");
	test_cond(child != NULL && jobq_job_flow_id(child) == jobq_job_id(parent) &&
			  jobq_dep_results(c, jobq_job_id(child), jobq_job_token(child), &one) == JOBQ_OK &&
			  one != NULL && strcmp(one, want) == 0);
	jobq_free(one);
	one = NULL;

	test("dep_results with the parent's old token: STALE, NULL results");
	test_cond(parent != NULL &&
			  jobq_dep_results(c, jobq_job_id(parent), jobq_job_token(parent), &one) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_STALE, NULL) && one == NULL);

	test("dep_results_many: in the order asked, NULL for a stale token");
	ids[0] = child ? jobq_job_id(child) : 1;
	toks[0] = child ? jobq_job_token(child) : "";
	ids[1] = parent ? jobq_job_id(parent) : 1;
	toks[1] = parent ? jobq_job_token(parent) : "";
	ids[2] = lone ? jobq_job_id(lone) : 1;
	toks[2] = lone ? jobq_job_token(lone) : "";
	test_cond(child != NULL && lone != NULL &&
			  jobq_dep_results_many(c, 3, ids, toks, res) == JOBQ_OK &&
			  res[0] != NULL && strcmp(res[0], want) == 0 && res[1] == NULL &&
			  res[2] != NULL && strcmp(res[2], "{}") == 0);
	for (int i = 0; i < 3; i++)
		jobq_free(res[i]);

	test("dep_results: bad arguments are BAD_ARGUMENT");
	test_cond(jobq_dep_results(c, 0, toks[0], &one) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) &&
			  jobq_dep_results(c, ids[0], toks[0], NULL) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) &&
			  jobq_dep_results_many(c, 0, ids, toks, res) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL) &&
			  jobq_dep_results_many(c, JOBQ_CLAIM_MAX + 1, ids, toks, res) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));
	jobq_job_free(parent);
	jobq_job_free(lone);
	jobq_job_free(child);
	jobq_drop_queue(c, q, 1);
}

/*
 * test_checkpoint: jobq_checkpoint stores a running job's progress and the
 * next attempt reads it with jobq_checkpoint_read (issue 18); a stale
 * token stores nothing; a state over JOBQ_CHECKPOINT_MAX is refused before
 * any round trip.
 */
static void
test_checkpoint(JobqConn *c)
{
	char		q[64];
	int64_t		id = 0;
	JobqJob    *j,
			   *j2 = NULL;
	char	   *state = NULL;
	char	   *big;
	int			ok;

	snprintf(q, sizeof(q), "t%d-ckpt", (int) getpid());
	ok = jobq_create_queue(c, q, NULL) == JOBQ_OK && enq(c, q, "{}", &id) == JOBQ_OK;
	j = ok ? claim1(c, q, 30) : NULL;

	test("checkpoint_read: none yet is OK with NULL");
	test_cond(j != NULL && jobq_checkpoint_read(c, id, jobq_job_token(j), &state) == JOBQ_OK &&
			  state == NULL);

	test("checkpoint: stored, and read back");
	test_cond(j != NULL &&
			  jobq_checkpoint(c, id, jobq_job_token(j), "{\"step\": 2}", 11) == JOBQ_OK &&
			  jobq_checkpoint_read(c, id, jobq_job_token(j), &state) == JOBQ_OK &&
			  state != NULL && strcmp(state, "{\"step\": 2}") == 0);
	jobq_free(state);
	state = NULL;

	test("checkpoint: a state over JOBQ_CHECKPOINT_MAX is BAD_ARGUMENT");
	big = malloc(JOBQ_CHECKPOINT_MAX + 2);
	if (big != NULL)
		memset(big, ' ', JOBQ_CHECKPOINT_MAX + 1);
	test_cond(j != NULL && big != NULL &&
			  jobq_checkpoint(c, id, jobq_job_token(j), big, JOBQ_CHECKPOINT_MAX + 1) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_BAD_ARGUMENT, NULL));
	free(big);

	test("checkpoint: the next attempt reads it; the old token is STALE");
	ok = j != NULL && jobq_release(c, id, jobq_job_token(j)) == JOBQ_OK;
	j2 = ok ? claim1(c, q, 30) : NULL;
	test_cond(j2 != NULL &&
			  jobq_checkpoint_read(c, id, jobq_job_token(j2), &state) == JOBQ_OK &&
			  state != NULL && strcmp(state, "{\"step\": 2}") == 0 &&
			  jobq_checkpoint(c, id, jobq_job_token(j), "{}", 2) == JOBQ_ERR &&
			  failed_with(c, JOBQ_ERR_STALE, NULL));
	jobq_free(state);
	jobq_job_free(j);
	jobq_job_free(j2);
	jobq_drop_queue(c, q, 1);
}

static void
test_list_page(JobqConn *c)
{
	char		q[64];
	char		filters[96];
	int64_t		ids[3] = {0, 0, 0};
	JobqListOpts lo = JOBQ_LIST_OPTS_INIT;
	JobqRows   *r;
	char	   *cursor = NULL;
	const char *schema;
	JobqConn   *old = NULL;
	int			ok;

	snprintf(q, sizeof(q), "t%d-page", (int) getpid());
	ok = jobq_create_queue(c, q, NULL) == JOBQ_OK;
	for (int i = 0; i < 3; i++)
		ok = ok && jobq_enqueue(c, q, "{}", 2, NULL, &ids[i]) == JOBQ_OK;

	test("list_page: 2 of 3 jobs, and a cursor");
	lo.max_rows = 2;
	r = ok ? jobq_list_page(c, q, &lo) : NULL;
	test_cond(r != NULL && jobq_rows_count(r) == 2 &&
			  jobq_rows_get(r, 1, "next_cursor") != NULL &&
			  strtoll(jobq_rows_get(r, 0, "id"), NULL, 10) == ids[0]);
	if (r != NULL && jobq_rows_get(r, 1, "next_cursor") != NULL)
		cursor = strdup(jobq_rows_get(r, 1, "next_cursor"));
	jobq_rows_free(r);

	test("list_page: after the cursor, the third job and no cursor");
	lo.after = cursor;
	lo.state = "ready";
	r = cursor != NULL ? jobq_list_page(c, q, &lo) : NULL;
	test_cond(r != NULL && jobq_rows_count(r) == 1 &&
			  strtoll(jobq_rows_get(r, 0, "id"), NULL, 10) == ids[2] &&
			  jobq_rows_get(r, 0, "next_cursor") == NULL);
	jobq_rows_free(r);
	free(cursor);

	test("list_page: filter by ids");
	lo = (JobqListOpts) JOBQ_LIST_OPTS_INIT;
	snprintf(filters, sizeof(filters), "{\"ids\": [%lld]}", (long long) ids[1]);
	lo.filters = filters;
	r = jobq_list_page(c, q, &lo);
	test_cond(r != NULL && jobq_rows_count(r) == 1 &&
			  strtoll(jobq_rows_get(r, 0, "id"), NULL, 10) == ids[1]);
	jobq_rows_free(r);

	test("list_page: unknown filter key is the server's 22023");
	lo.filters = "{\"bogus\": 1}";
	r = jobq_list_page(c, q, &lo);
	test_cond(r == NULL && jobq_status(c) == JOBQ_ERR_SERVER &&
			  jobq_sqlstate(c) != NULL && strcmp(jobq_sqlstate(c), "22023") == 0);

	test("list_page: an options size no release had is refused");
	lo.filters = NULL;
	lo.size = 3;
	r = jobq_list_page(c, q, &lo);
	test_cond(r == NULL && jobq_status(c) == JOBQ_ERR_BAD_ARGUMENT);

	test("list_page against 0.1.0 SQL: a filter is JOBQ_ERR_VERSION");
	schema = fake_version_schema(NULL);
	old = schema != NULL ? jobq_connect_ex(dsn, schema, 0) : NULL;
	lo = (JobqListOpts) JOBQ_LIST_OPTS_INIT;
	lo.filters = "{}";
	r = old != NULL ? jobq_list_page(old, q, &lo) : NULL;
	test_cond(old != NULL && r == NULL && jobq_status(old) == JOBQ_ERR_VERSION);
	jobq_disconnect(old);
	if (schema != NULL)
	{
		char		sql[128];

		snprintf(sql, sizeof(sql), "DROP SCHEMA %s CASCADE", schema);
		exec_ok(sql);
	}
	jobq_drop_queue(c, q, 1);
}

int
main(void)
{
	JobqConn   *c;
	int			pid = (int) getpid();

	if (getenv("JOBQ_TEST_DSN") != NULL)
		dsn = getenv("JOBQ_TEST_DSN");
	snprintf(qa, sizeof(qa), "t%d-a", pid);
	snprintf(qb, sizeof(qb), "t%d-b", pid);
	snprintf(qw, sizeof(qw), "t%d-wait", pid);
	snprintf(qp, sizeof(qp), "t%d-pipe", pid);
	setvbuf(stdout, NULL, _IOLBF, 0);

	test_pure();
	test_connect();

	c = jobq_connect(dsn);
	test("connect to the test database");
	test_cond(c != NULL && jobq_status(c) == JOBQ_ERR_NONE);
	if (c == NULL || jobq_status(c) != JOBQ_ERR_NONE)
	{
		printf("cannot connect (%s); set JOBQ_TEST_DSN\n", jobq_errmsg(c));
		jobq_disconnect(c);
		printf("%d passed, %d failed\n", tests - fails, fails);
		return 1;
	}

	test_limits(c);
	test_queues_admin(c);
	test_bad_input(c);
	test_lifecycle(c);
	test_batches(c);
	test_wait(c);
	test_async(c);
	test_reconnect_and_security(c);
	test_workers(c);

	/* clean up every queue of this run */
	jobq_drop_queue(c, qb, 1);
	jobq_drop_queue(c, qw, 1);
	jobq_drop_queue(c, qp, 1);
	test_drop(c);
	test_server_version(c);
	test_batch_positions(c);
	test_await(c);
	test_list_page(c);
	test_rate_limited(c);
	test_enqueue_020(c);
	test_dep_results(c);
	test_checkpoint(c);
	test_health_audit(c);
	jobq_disconnect(c);

	printf("%d passed, %d failed\n", tests - fails, fails);
	return fails ? 1 : 0;
}
