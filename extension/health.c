/*-------------------------------------------------------------------------
 *
 * health.c
 *	  jobq_health(): what kills a queue before anyone notices, as findings
 *	  (severity, check, subject, detail, advice).
 *
 * Checks, each documented in doc/operations.md ("Health"):
 *	vacuum			dead tuples, last (auto)vacuum and analyze of each jobq
 *					table
 *	xmin_horizon	who holds back vacuum: a long or idle-in-transaction
 *					session (with its pid), a prepared transaction, a
 *					replication slot, a standby's hot_standby_feedback
 *	visibility		sessions whose state the caller may not see
 *	sweeper			whether the background sweeper runs for this database
 *	leases			leases expiring about as often as jobs complete, and
 *					expired leases nobody sweeps
 *	retry_storm		a queue whose live jobs are mostly failing and retrying
 *	backlog			a queue with jobs due and nobody claiming them
 *	consumers		a queue with jobs due, not paused, and no live
 *					registered worker that claims from it (consumers.c)
 *
 * Severity is "critical" (act now), "warning" (act soon) or "ok"; every
 * check that finds nothing says so in one ok row, and every finding
 * carries a sentence that says what to do.  Rows come critical first.
 *
 * Who sees what: jobq_health runs as jobq_owner for the jobq tables, and
 * with the caller's own rights for the server's views (pg_stat_activity,
 * pg_stat_replication), so a role sees there what it may see anyway.  A
 * role without pg_read_all_stats (pg_monitor has it) does not see the
 * state and start time of other roles' sessions: such a session is judged
 * by the age of its xmin in transactions alone, and a visibility row says
 * how many were hidden.  Queues the caller may not inspect (grants.c) are
 * left out.
 *
 * Cost: one pass over the live table (ready and running jobs only), and
 * per queue a few bounded probes of history through
 * history_queue_state_idx; never a scan of history.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/health.c
 *
 *-------------------------------------------------------------------------
 */
#include "counters.h"

#include "catalog/pg_authid.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "commands/dbcommands.h"
#include "utils/guc.h"
#include "utils/varlena.h"

PG_FUNCTION_INFO_V1(jobq_health);

/* GUC variables */
int			jobq_health_dead_tuples = 10000;
int			jobq_health_xact_age_ms = 5 * 60 * 1000;
int			jobq_health_xact_age_critical_ms = 30 * 60 * 1000;
int			jobq_health_backlog_age_ms = 5 * 60 * 1000;

/*
 * Documented constants (doc/operations.md, "Health")
 *
 * An xmin holder whose age is known only in transactions (a replication
 * slot, a standby, a session hidden from the caller) is a warning at
 * XID_AGE_WARNING transactions and critical at XID_AGE_CRITICAL; an
 * inactive slot, which nobody will release, is critical at the first.
 */
#define XID_AGE_WARNING			1000000
#define XID_AGE_CRITICAL		10000000
/* the window of the lease and retry checks */
#define WINDOW_SECS				(15 * 60)
/* an expired lease still not swept after this is nobody's */
#define UNSWEPT_SECS			60
/* retry storm: this many live jobs waiting to retry, and half of them */
#define RETRY_STORM_JOBS		100
#define RETRY_STORM_CRITICAL	1000
/*
 * a table past autovacuum's trigger that no vacuum took for this many
 * autovacuum_naptime rounds is overdue
 */
#define VACUUM_OVERDUE_NAPTIMES	10
/* the most holders and findings listed */
#define HOLDERS_MAX				20

enum
{
	ST_TABLES,
	ST_SESSIONS,
	ST_PREPARED,
	ST_SLOTS,
	ST_STANDBYS,
	ST_QUEUES,
	NUM_STATEMENTS
};

static const JobqStatement statements[NUM_STATEMENTS] = {
	[ST_TABLES] = {"health_tables",
		"SELECT s.relname::text, s.n_live_tup, s.n_dead_tup,"
		"  GREATEST(s.last_vacuum, s.last_autovacuum)::text,"
		"  GREATEST(s.last_analyze, s.last_autoanalyze)::text,"
		/* 6: the dead rows at which autovacuum takes the table */
		"  (COALESCE(o.threshold,"
		"     pg_catalog.current_setting('autovacuum_vacuum_threshold')::float8)"
		"   + COALESCE(o.scale,"
		"     pg_catalog.current_setting('autovacuum_vacuum_scale_factor')::float8)"
		"     * s.n_live_tup)::int8,"
		/* 7: seconds autovacuum has had to come: since the last vacuum, or
		 * since the statistics began (server start, reset) */
		"  EXTRACT(epoch FROM pg_catalog.now() - GREATEST(s.last_vacuum,"
		"    s.last_autovacuum, pg_catalog.pg_postmaster_start_time(),"
		"    (SELECT d.stats_reset FROM pg_catalog.pg_stat_database d"
		"      WHERE d.datname = pg_catalog.current_database())))::float8,"
		/* 8: autovacuum_naptime in seconds; 9: autovacuum on for it */
		"  EXTRACT(epoch FROM pg_catalog.current_setting('autovacuum_naptime')::interval)::float8,"
		"  pg_catalog.current_setting('autovacuum')::bool AND COALESCE(o.enabled, true)"
		" FROM pg_catalog.pg_stat_all_tables s"
		" JOIN pg_catalog.pg_class c ON c.oid = s.relid"
		" CROSS JOIN LATERAL (SELECT"
		"   pg_catalog.max(t.option_value) FILTER (WHERE t.option_name = 'autovacuum_vacuum_threshold')::float8 AS threshold,"
		"   pg_catalog.max(t.option_value) FILTER (WHERE t.option_name = 'autovacuum_vacuum_scale_factor')::float8 AS scale,"
		"   pg_catalog.max(t.option_value) FILTER (WHERE t.option_name = 'autovacuum_enabled')::bool AS enabled"
		"   FROM pg_catalog.pg_options_to_table(c.reloptions) t) o"
		" WHERE s.schemaname = 'jobq' ORDER BY s.relname",
		0, {InvalidOid}},
	/*
	 * $1 this database, $2 now.  Sessions of this database holding an xmin
	 * or an xid (each holds back vacuum of its tables), oldest first; the
	 * state and xact_start are NULL when hidden from the caller.  A session
	 * whose snapshot merely starts at the horizon another one holds has the
	 * same age: of those, the one whose transaction began first is the
	 * holder, and comes first.
	 * Autovacuum's own snapshot holds back nobody; walsenders are counted
	 * as standbys.
	 */
	[ST_SESSIONS] = {"health_sessions",
		"SELECT a.pid, a.usename::text, a.application_name, a.state,"
		"  EXTRACT(EPOCH FROM $2 - a.xact_start)::float8,"
		"  GREATEST(pg_catalog.age(a.backend_xmin), pg_catalog.age(a.backend_xid))"
		" FROM pg_catalog.pg_stat_activity a"
		" WHERE (a.backend_xmin IS NOT NULL OR a.backend_xid IS NOT NULL)"
		"   AND a.pid <> pg_catalog.pg_backend_pid()"
		"   AND (a.datid = $1 OR a.datid IS NULL)"
		"   AND a.backend_type IS DISTINCT FROM 'autovacuum worker'"
		"   AND a.backend_type IS DISTINCT FROM 'walsender'"
		" ORDER BY 6 DESC, a.xact_start NULLS LAST LIMIT " CppAsString2(HOLDERS_MAX),
		2, {OIDOID, TIMESTAMPTZOID}},
	/* $1 now: prepared transactions of this database, oldest first */
	[ST_PREPARED] = {"health_prepared",
		"SELECT p.gid, p.owner::text, EXTRACT(EPOCH FROM $1 - p.prepared)::float8,"
		"  pg_catalog.age(p.transaction)"
		" FROM pg_catalog.pg_prepared_xacts p"
		" WHERE p.database = pg_catalog.current_database()"
		" ORDER BY p.prepared LIMIT " CppAsString2(HOLDERS_MAX),
		1, {TIMESTAMPTZOID}},
	/* replication slots holding an xmin (for every database) */
	[ST_SLOTS] = {"health_slots",
		"SELECT s.slot_name::text, s.slot_type, s.active, s.active_pid,"
		"  pg_catalog.age(s.xmin)"
		" FROM pg_catalog.pg_replication_slots s WHERE s.xmin IS NOT NULL"
		" ORDER BY 5 DESC LIMIT " CppAsString2(HOLDERS_MAX),
		0, {InvalidOid}},
	/* standbys whose hot_standby_feedback holds an xmin */
	[ST_STANDBYS] = {"health_standbys",
		"SELECT r.pid, r.application_name, r.client_addr::text, pg_catalog.age(r.backend_xmin)"
		" FROM pg_catalog.pg_stat_replication r WHERE r.backend_xmin IS NOT NULL"
		" ORDER BY 4 DESC LIMIT " CppAsString2(HOLDERS_MAX),
		0, {InvalidOid}},

	/*
	 * $1 now, $2 the window's start, $3 the unswept cut-off, $4 and $5 the
	 * positions of the completed and lease_expired counters in the stored
	 * metrics (JOBQ_METRIC_COUNTERS).  Per queue:
	 * from one pass over the live table, the jobs due, running, waiting to
	 * retry after a failure in the window, leases that expired in the
	 * window (the last error of a job says so) and leases expired long ago
	 * but not swept, the oldest due job; from history, bounded probes of
	 * completions and of lease expiries that ended dead in the window;
	 * from jobq.metrics_minute (the flushed minutes of the window, one row
	 * per queue and minute), the counted completions and lease expiries,
	 * which also know the jobs no table keeps (completed_retention 0).
	 */
	[ST_QUEUES] = {"health_queues",
		"SELECT q.name, q.paused, EXTRACT(EPOCH FROM q.lease)::float8,"
		"  COALESCE(l.due, 0), COALESCE(l.running, 0), COALESCE(l.retrying, 0),"
		"  COALESCE(l.expired, 0)"
		"   + (SELECT count(*) FROM (SELECT 1 FROM jobq.history h"
		"       WHERE h.queue = q.name AND h.state = 'dead' AND h.finished_at >= $2"
		"         AND h.errors -> -1 ->> 'error' = 'lease expired'"
		"       LIMIT 10001) x),"
		"  COALESCE(l.unswept, 0),"
		"  EXTRACT(EPOCH FROM $1 - l.oldest_due)::float8,"
		"  (SELECT count(*) FROM (SELECT 1 FROM jobq.history h"
		"    WHERE h.queue = q.name AND h.state = 'completed' AND h.finished_at >= $2"
		"    LIMIT 10001) x),"
		"  COALESCE(l.live, 0),"
		"  (SELECT sum(m.counters[$4]) FROM jobq.metrics_minute m"
		"    WHERE m.queue = q.name AND m.start >= $2)::bigint,"
		"  (SELECT sum(m.counters[$5]) FROM jobq.metrics_minute m"
		"    WHERE m.queue = q.name AND m.start >= $2)::bigint"
		" FROM jobq.queues q LEFT JOIN ("
		"  SELECT j.queue,"
		"   count(*) AS live,"
		"   count(*) FILTER (WHERE j.state = 'ready' AND j.run_at <= $1) AS due,"
		"   count(*) FILTER (WHERE j.state = 'running') AS running,"
		"   count(*) FILTER (WHERE j.state = 'ready' AND j.attempt > 0"
		"     AND (j.errors -> -1 ->> 'at')::timestamptz >= $2) AS retrying,"
		"   count(*) FILTER (WHERE j.errors -> -1 ->> 'error' = 'lease expired'"
		"     AND (j.errors -> -1 ->> 'at')::timestamptz >= $2) AS expired,"
		"   count(*) FILTER (WHERE j.state = 'running' AND j.locked_until < $3) AS unswept,"
		"   min(j.run_at) FILTER (WHERE j.state = 'ready' AND j.run_at <= $1) AS oldest_due"
		"  FROM jobq.jobs j GROUP BY j.queue) l ON l.queue = q.name"
		" ORDER BY q.name",
		5, {TIMESTAMPTZOID, TIMESTAMPTZOID, TIMESTAMPTZOID, INT4OID, INT4OID}},
};

static SPIPlanPtr plans[NUM_STATEMENTS];

/* The positions (0-based) of the metric counters, JOBQ_METRIC_COUNTERS */
#define METRIC_POSITION(name) METRIC_##name,
enum
{
	JOBQ_METRIC_COUNTERS(METRIC_POSITION)
	NUM_METRICS
};

const JobqStatements jobq_health_statements = {statements, NUM_STATEMENTS, plans, NULL};

typedef enum Severity
{
	SEV_OK,
	SEV_WARNING,
	SEV_CRITICAL
} Severity;

static const char *const severity_names[] = {"ok", "warning", "critical"};

typedef struct Finding
{
	Severity	severity;
	const char *check;
	char	   *subject;
	char	   *detail;
	char	   *advice;
} Finding;

typedef struct Findings
{
	Finding    *items;
	int			n;
	int			cap;
} Findings;

/*
 * add
 *	  Append a finding, its strings copied.  Everything jobq_health
 *	  allocates lives in SPI's procedure context, until the rows are put
 *	  and SPI_finish frees it.
 */
static void
add(Findings *f, Severity severity, const char *check, const char *subject,
	const char *detail, const char *advice)
{
	if (f->n == f->cap)
	{
		f->cap = f->cap ? f->cap * 2 : 32;
		f->items = f->items ? repalloc(f->items, sizeof(Finding) * f->cap)
			: palloc(sizeof(Finding) * f->cap);
	}
	f->items[f->n].severity = severity;
	f->items[f->n].check = check;
	f->items[f->n].subject = pstrdup(subject);
	f->items[f->n].detail = pstrdup(detail);
	f->items[f->n].advice = pstrdup(advice);
	f->n++;
}

/* column accessors of the last SPI result */
static char *
col_text(uint64 row, int col)
{
	return SPI_getvalue(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, col);
}

static double
col_float(uint64 row, int col, bool *isnull)
{
	Datum		d = SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, col, isnull);

	return *isnull ? 0 : DatumGetFloat8(d);
}

static bool
col_bool(uint64 row, int col)
{
	bool		isnull;
	Datum		d = SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, col, &isnull);

	return !isnull && DatumGetBool(d);
}

static int64
col_int(uint64 row, int col)
{
	bool		isnull;
	Datum		d = SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, col, &isnull);
	Oid			type = SPI_gettypeid(SPI_tuptable->tupdesc, col);

	if (isnull)
		return 0;
	if (type == INT4OID || type == XIDOID)
		return DatumGetInt32(d);
	return DatumGetInt64(d);
}

/* a duration in seconds as people read it */
static char *
human_secs(double s)
{
	if (s < 120)
		return psprintf("%.0f s", s);
	if (s < 7200)
		return psprintf("%.0f min", s / 60);
	if (s < 172800)
		return psprintf("%.1f h", s / 3600);
	return psprintf("%.1f days", s / 86400);
}

/*
 * run
 *	  Execute statement st, read-only, with the given arguments.
 */
static void
run(int st, Datum *values)
{
	int			rc = SPI_execute_plan(jobq_plan(&jobq_health_statements, st), values, NULL,
									  true, 0);

	jobq_spi_check(rc, SPI_OK_SELECT, statements[st].name);
}

/*
 * check_vacuum
 *	  Dead tuples of each jobq table: a warning at jobq.health_dead_tuples
 *	  when they outnumber the live rows, or when autovacuum is overdue (past
 *	  its trigger and no vacuum for VACUUM_OVERDUE_NAPTIMES naptimes, or
 *	  off for the table); critical at ten times both.  Without the second
 *	  rule a backlog of millions of live jobs hid any number of dead rows.
 *
 *	  oldest names the oldest xmin holder (check_horizon), NULL when there
 *	  is none.  When no holder is old enough to be reported yet, the advice
 *	  names it anyway: a session idle in transaction for a minute holds
 *	  back every row that died since, and at a thousand jobs a second that
 *	  is the whole of these dead rows long before jobq.health_xact_age
 *	  (bench/RESULTS.md, "A session idle in transaction under load").
 */
static void
check_vacuum(Findings *f, bool horizon_held, const char *oldest)
{
	run(ST_TABLES, NULL);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		char	   *rel = psprintf("jobq.%s", col_text(i, 1));
		int64		live = col_int(i, 2);
		int64		dead = col_int(i, 3);
		char	   *vacuumed = col_text(i, 4);
		char	   *analyzed = col_text(i, 5);
		Severity	sev = SEV_OK;
		char	   *detail;

		int64		trigger = col_int(i, 6);
		bool		isnull;
		double		waited = col_float(i, 7, &isnull);
		double		naptime = col_float(i, 8, &isnull);
		bool		autovacuum = col_bool(i, 9);
		bool		overdue;

		/*
		 * Overdue: past autovacuum's own trigger and no vacuum for
		 * VACUUM_OVERDUE_NAPTIMES naptimes (or autovacuum off for it).  This
		 * is what catches a large backlog, where the dead rows never
		 * outnumber the live ones.
		 */
		overdue = dead > trigger &&
			(!autovacuum || waited > VACUUM_OVERDUE_NAPTIMES * naptime);
		if (dead >= (int64) jobq_health_dead_tuples * 10 &&
			(dead > live * 10 || (overdue && dead > trigger * 10)))
			sev = SEV_CRITICAL;
		else if (dead >= jobq_health_dead_tuples && (dead > live || overdue))
			sev = SEV_WARNING;
		detail = psprintf(INT64_FORMAT " dead and " INT64_FORMAT " live rows; last vacuum %s, last analyze %s",
						  dead, live, vacuumed ? vacuumed : "never",
						  analyzed ? analyzed : "never");
		add(f, sev, "vacuum", rel, detail,
			sev == SEV_OK ? "Nothing to do." :
			horizon_held ? "Vacuum cannot remove them while the xmin horizon is held: end the holder the xmin_horizon rows name, then VACUUM the table." :
			oldest ? psprintf("Vacuum cannot remove rows that died after the oldest xmin holder began, %s: if it is idle in transaction or runs long, end it; else run VACUUM on the table, and check that autovacuum is on and not throttled (autovacuum_vacuum_cost_delay, autovacuum_max_workers).", oldest) :
			"Run VACUUM on the table, and check that autovacuum is on and not throttled (autovacuum_vacuum_cost_delay, autovacuum_max_workers).");
	}
}

/*
 * xid_severity
 *	  Severity of an xmin holder known only by its age in transactions.
 */
static Severity
xid_severity(int64 age, bool stuck)
{
	if (age >= XID_AGE_CRITICAL || (stuck && age >= XID_AGE_WARNING))
		return SEV_CRITICAL;
	if (age >= XID_AGE_WARNING)
		return SEV_WARNING;
	return SEV_OK;
}

/*
 * check_horizon
 *	  Every xmin holder past its threshold, or one ok row that names the
 *	  oldest.  Returns whether any holder was reported.  *hidden receives
 *	  how many sessions hid their state, *oldest_out the oldest holder
 *	  (NULL: none).
 */
static bool
check_horizon(Findings *f, TimestampTz now, int *hidden, char **oldest_out)
{
	Datum		values[2];
	bool		found = false;
	char	   *oldest = NULL;
	double		warn_s = jobq_health_xact_age_ms / 1000.0;
	double		crit_s = jobq_health_xact_age_critical_ms / 1000.0;

	*hidden = 0;

	/* sessions: with the caller's rights (see the file header) */
	values[0] = ObjectIdGetDatum(MyDatabaseId);
	values[1] = TimestampTzGetDatum(now);
	run(ST_SESSIONS, values);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		int64		pid = col_int(i, 1);
		char	   *user = col_text(i, 2);
		char	   *app = col_text(i, 3);
		char	   *state = col_text(i, 4);
		bool		isnull;
		double		age_s = col_float(i, 5, &isnull);
		int64		xids = col_int(i, 6);
		Severity	sev;
		char	   *subject = psprintf("pid " INT64_FORMAT, pid);
		char	   *who = psprintf("role %s, application \"%s\"", user ? user : "?",
								   app ? app : "");
		bool		idle = state && strncmp(state, "idle in transaction", 19) == 0;

		if (state == NULL || isnull)
		{
			(*hidden)++;
			sev = xid_severity(xids, false);
			if (sev != SEV_OK)
				add(f, sev, "xmin_horizon", subject,
					psprintf("a session (%s) holds back vacuum by " INT64_FORMAT " transactions; its state is hidden from you", who, xids),
					"Find out what it does (as a member of pg_monitor) and end it: SELECT pg_terminate_backend(pid).");
		}
		else
		{
			sev = SEV_OK;
			if (age_s >= crit_s || (idle && age_s >= warn_s))
				sev = SEV_CRITICAL;
			else if (age_s >= warn_s)
				sev = SEV_WARNING;
			if (sev != SEV_OK)
				add(f, sev, "xmin_horizon", subject,
					psprintf(idle ? "a session (%s) idle in transaction, its transaction open for %s, holds back vacuum by " INT64_FORMAT " transactions"
							 : "a transaction (%s) open for %s holds back vacuum by " INT64_FORMAT " transactions",
							 who, human_secs(age_s), xids),
					idle ? "The session does nothing while holding the horizon: end it (SELECT pg_terminate_backend(pid)) and set idle_in_transaction_session_timeout." :
					"Dead jobs cannot be vacuumed while it runs: shorten it, or end it (SELECT pg_cancel_backend(pid)); consider a statement_timeout.");
		}
		found |= sev != SEV_OK;
		if (oldest == NULL)
			oldest = state == NULL || isnull ?
				psprintf("pid " INT64_FORMAT " (%s), " INT64_FORMAT " transactions behind",
						 pid, who, xids) :
				psprintf("pid " INT64_FORMAT " (%s), %s, its transaction open for %s, " INT64_FORMAT " transactions behind",
						 pid, who, state, human_secs(age_s), xids);
	}

	run(ST_PREPARED, values + 1);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		char	   *gid = col_text(i, 1);
		bool		isnull;
		double		age_s = col_float(i, 3, &isnull);
		int64		xids = col_int(i, 4);
		Severity	sev = age_s >= warn_s ? SEV_CRITICAL : SEV_OK;

		/* a prepared transaction never ends by itself */
		if (sev != SEV_OK)
			add(f, sev, "xmin_horizon", psprintf("prepared transaction \"%s\"", gid),
				psprintf("prepared %s ago by role %s, holds back vacuum by " INT64_FORMAT " transactions",
						 human_secs(age_s), col_text(i, 2), xids),
				"Finish it: COMMIT PREPARED or ROLLBACK PREPARED with its gid (ask whoever prepared it which).");
		found |= sev != SEV_OK;
		if (oldest == NULL)
			oldest = psprintf("prepared transaction \"%s\", " INT64_FORMAT " transactions behind",
							  gid, xids);
	}

	run(ST_SLOTS, NULL);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		char	   *slot = col_text(i, 1);
		bool		isnull;
		bool		active = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[i],
														SPI_tuptable->tupdesc, 3, &isnull));
		int64		xids = col_int(i, 5);
		Severity	sev = xid_severity(xids, !active);

		if (sev != SEV_OK)
			add(f, sev, "xmin_horizon", psprintf("replication slot \"%s\"", slot),
				psprintf("%s %s slot holds back vacuum by " INT64_FORMAT " transactions",
						 active ? "an active" : "an inactive", col_text(i, 2), xids),
				active ? "Its standby or consumer lags: check it, or turn hot_standby_feedback off there." :
				"Nobody uses it: drop it (SELECT pg_drop_replication_slot(name)) unless its standby is coming back.");
		found |= sev != SEV_OK;
		if (oldest == NULL)
			oldest = psprintf("replication slot \"%s\", " INT64_FORMAT " transactions behind",
							  slot, xids);
	}

	run(ST_STANDBYS, NULL);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		int64		xids = col_int(i, 4);
		Severity	sev = xid_severity(xids, false);
		char	   *app = col_text(i, 2);

		if (sev != SEV_OK)
			add(f, sev, "xmin_horizon",
				psprintf("standby \"%s\" (pid " INT64_FORMAT ")", app ? app : "", col_int(i, 1)),
				psprintf("hot_standby_feedback from %s holds back vacuum by " INT64_FORMAT " transactions",
						 col_text(i, 3) ? col_text(i, 3) : "a local standby", xids),
				"A long query on the standby holds it: end it there, or set hot_standby_feedback = off and accept query conflicts.");
		found |= sev != SEV_OK;
		if (oldest == NULL)
			oldest = psprintf("standby \"%s\", " INT64_FORMAT " transactions behind",
							  app ? app : "", xids);
	}

	if (!found)
		add(f, SEV_OK, "xmin_horizon", "database",
			oldest ? psprintf("the oldest xmin holder is %s", oldest)
			: pstrdup("no session, prepared transaction, slot or standby holds back vacuum"),
			"Nothing to do.");
	*oldest_out = oldest;
	return found;
}

/*
 * database_listed
 *	  Whether list (jobq.sweeper_databases) names this database.
 */
static bool
database_listed(const char *list)
{
	char	   *raw = pstrdup(list);
	char	   *me = get_database_name(MyDatabaseId);
	List	   *names;
	ListCell   *lc;

	if (!SplitIdentifierString(raw, ',', &names))
		return false;
	foreach(lc, names)
		if (strcmp((char *) lfirst(lc), me) == 0)
			return true;
	return false;
}

/*
 * check_sweeper
 *	  Whether a background sweeper serves this database: its relay slot
 *	  (relay.c) is taken while it runs.
 */
static void
check_sweeper(Findings *f)
{
	const char *listed = GetConfigOption("jobq.sweeper_databases", true, false);

	if (jobq_relay_for_database() >= 0)
		add(f, SEV_OK, "sweeper", get_database_name(MyDatabaseId),
			"the background sweeper runs for this database", "Nothing to do.");
	else if (!jobq_wait_available())
		add(f, SEV_WARNING, "sweeper", get_database_name(MyDatabaseId),
			"jobq is not in shared_preload_libraries: no background sweeper runs",
			"Expired leases come back only when workers sweep (jobq-worker does, every --sweep-interval): keep that on, or preload jobq and list this database in jobq.sweeper_databases.");
	else if (listed == NULL || !database_listed(listed))
		add(f, SEV_WARNING, "sweeper", get_database_name(MyDatabaseId),
			psprintf("this database is not in jobq.sweeper_databases (\"%s\")", listed ? listed : ""),
			"Add it to jobq.sweeper_databases and restart, or make sure workers sweep.");
	else
		add(f, SEV_CRITICAL, "sweeper", get_database_name(MyDatabaseId),
			"the background sweeper of this database is not running",
			"Look in the server log for why it stopped (it is restarted every few seconds); meanwhile expired leases stay expired unless workers sweep.");
}

/*
 * check_queues
 *	  The lease, retry storm and backlog checks, per queue the caller may
 *	  inspect.
 */
static void
check_queues(Findings *f, TimestampTz now)
{
	Datum		values[5];
	bool		leases = false,
				storms = false,
				backlogs = false;
	double		backlog_s = jobq_health_backlog_age_ms / 1000.0;

	values[0] = TimestampTzGetDatum(now);
	values[1] = TimestampTzGetDatum(now - (int64) WINDOW_SECS * USECS_PER_SEC);
	values[2] = TimestampTzGetDatum(now - (int64) UNSWEPT_SECS * USECS_PER_SEC);
	values[3] = Int32GetDatum(METRIC_completed + 1);
	values[4] = Int32GetDatum(METRIC_lease_expired + 1);
	run(ST_QUEUES, values);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		text	   *name = DatumGetTextPP(SPI_getbinval(SPI_tuptable->vals[i],
														SPI_tuptable->tupdesc, 1, &isnull));
		char	   *queue = text_to_cstring(name);
		bool		paused = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[i],
														SPI_tuptable->tupdesc, 2, &isnull));
		double		lease_s = col_float(i, 3, &isnull);
		int64		due = col_int(i, 4);
		int64		running = col_int(i, 5);
		int64		retrying = col_int(i, 6);
		int64		expired = col_int(i, 7);
		int64		unswept = col_int(i, 8);
		double		oldest_s = col_float(i, 9, &isnull);
		int64		completed = col_int(i, 10);
		int64		live = col_int(i, 11);

		/* the stored metrics count what the tables no longer show */
		completed = Max(completed, col_int(i, 12));
		expired = Max(expired, col_int(i, 13));

		if (!jobq_queue_allowed(name, JOBQ_PRIV_INSPECT))
			continue;

		if (expired > 0 && expired * 10 >= completed)
		{
			leases = true;
			add(f, expired >= completed ? SEV_CRITICAL : SEV_WARNING, "leases", queue,
				psprintf(INT64_FORMAT " leases expired and " INT64_FORMAT " jobs completed in the last %d min (lease %s)",
						 expired, completed, WINDOW_SECS / 60, human_secs(lease_s)),
				psprintf("Jobs outlive their lease or workers die: raise it (jobq_alter_queue('%s', lease => ...)), or have workers extend it while they run (jobq_extend; jobq-worker heartbeats).", queue));
		}
		if (unswept > 0)
		{
			leases = true;
			add(f, SEV_WARNING, "leases", queue,
				psprintf(INT64_FORMAT " running jobs have had an expired lease for over %d s and nobody swept them",
						 unswept, UNSWEPT_SECS),
				"Run the background sweeper for this database, or let workers sweep (jobq_sweep).");
		}
		if (retrying >= RETRY_STORM_JOBS && retrying * 2 >= live)
		{
			storms = true;
			add(f, retrying >= RETRY_STORM_CRITICAL ? SEV_CRITICAL : SEV_WARNING, "retry_storm", queue,
				psprintf(INT64_FORMAT " of its " INT64_FORMAT " live jobs failed in the last %d min and wait to retry",
						 retrying, live, WINDOW_SECS / 60),
				psprintf("Read their errors (jobq_list('%s', 'ready'), jobq_job(id)); pause the queue (jobq_pause) until the cause is fixed, then resume it.", queue));
		}
		if (due > 0 && !paused && oldest_s >= backlog_s)
		{
			backlogs = true;
			if (running == 0)
				add(f, SEV_CRITICAL, "backlog", queue,
					psprintf(INT64_FORMAT " jobs are due, the oldest for %s, and none is running",
							 due, human_secs(oldest_s)),
					"No worker claims from this queue: start workers for it, and check that they name it.");
			else
				add(f, SEV_WARNING, "backlog", queue,
					psprintf(INT64_FORMAT " jobs are due, the oldest for %s, with " INT64_FORMAT " running",
							 due, human_secs(oldest_s), running),
					"Workers do not keep up: add workers or concurrency, or find out why jobs got slower.");
		}
		else if (due > 0 && paused && oldest_s >= backlog_s)
		{
			backlogs = true;
			add(f, SEV_WARNING, "backlog", queue,
				psprintf("the queue is paused with " INT64_FORMAT " jobs due, the oldest for %s",
						 due, human_secs(oldest_s)),
				psprintf("Resume it when ready (jobq_resume('%s')).", queue));
		}
	}
	if (!leases)
		add(f, SEV_OK, "leases", "all queues",
			"no queue loses leases as often as it completes jobs", "Nothing to do.");
	if (!storms)
		add(f, SEV_OK, "retry_storm", "all queues", "no queue is mostly retrying", "Nothing to do.");
	if (!backlogs)
		add(f, SEV_OK, "backlog", "all queues",
			"no queue has jobs waiting longer than jobq.health_backlog_age", "Nothing to do.");
}

/*
 * check_consumers
 *	  Queues with due jobs, not paused, that no live registered worker
 *	  claims from (jobq_queue_consumers), reported at once: nobody is
 *	  coming for them.  Quiet while no worker is registered at all, since
 *	  programs that claim without registering are not seen (the backlog
 *	  check still reports a queue nobody drains).
 */
static void
check_consumers(Findings *f)
{
	bool		registered;
	bool		found = false;
	int			n;
	JobqQueueConsumers *c = jobq_consumers_collect(&n, &registered);

	for (int i = 0; i < n && registered; i++)
	{
		if (!c[i].unserved)
			continue;
		found = true;
		add(f, SEV_WARNING, "consumers", c[i].queue,
			c[i].workers > 0 ?
			psprintf(INT64_FORMAT " jobs are due and the %d live registered workers that name the queue are all quiet or stopping",
					 c[i].ready, c[i].workers) :
			psprintf(INT64_FORMAT " jobs are due and no live registered worker names the queue",
					 c[i].ready),
			c[i].workers > 0 ?
			"Resume them (jobq worker resume TARGET) or start workers for it; jobq workers lists them." :
			"Start workers for it, or check the queues your workers name (jobq workers lists them).");
	}
	if (!registered)
		add(f, SEV_OK, "consumers", "all queues",
			"no live worker is registered, so consumers are not known",
			"Nothing to do (workers that register are checked here).");
	else if (!found)
		add(f, SEV_OK, "consumers", "all queues",
			"every queue with jobs due has a live registered worker claiming from it",
			"Nothing to do.");
}

/*
 * jobq_health() -> setof (severity, check, subject, detail, advice)
 */
Datum
jobq_health(PG_FUNCTION_ARGS)
{
	Findings	f = {NULL, 0, 0};
	TupleDesc	desc;
	Tuplestorestate *store;
	TimestampTz now = jobq_now();
	Oid			save_userid;
	int			save_sec_context;
	int			hidden;
	bool		held;
	char	   *oldest;

	store = jobq_srf_begin(fcinfo, &desc);
	jobq_spi_connect();

	/*
	 * The server's views with the caller's rights: what it sees there is
	 * what it may see anyway.  NB: an error on the way restores the user at
	 * abort.
	 */
	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(GetOuterUserId(), save_sec_context | SECURITY_LOCAL_USERID_CHANGE);
	held = check_horizon(&f, now, &hidden, &oldest);
	check_vacuum(&f, held, oldest);
	SetUserIdAndSecContext(save_userid, save_sec_context);

	if (hidden > 0 && !has_privs_of_role(GetOuterUserId(), ROLE_PG_READ_ALL_STATS))
		add(&f, SEV_OK, "visibility", GetUserNameFromId(GetOuterUserId(), false),
			psprintf("%d of the sessions holding back vacuum belong to other roles, which hide their state and start time from you: they were judged by transaction age alone", hidden),
			"For the full picture, call jobq_health as a member of pg_monitor (or pg_read_all_stats).");
	check_sweeper(&f);
	check_queues(&f, now);
	check_consumers(&f);

	for (int sev = SEV_CRITICAL; sev >= SEV_OK; sev--)
		for (int i = 0; i < f.n; i++)
		{
			Datum		out[5];
			bool		nulls[5] = {false, false, false, false, false};

			if (f.items[i].severity != sev)
				continue;
			out[0] = CStringGetTextDatum(severity_names[sev]);
			out[1] = CStringGetTextDatum(f.items[i].check);
			out[2] = CStringGetTextDatum(f.items[i].subject);
			out[3] = CStringGetTextDatum(f.items[i].detail);
			out[4] = CStringGetTextDatum(f.items[i].advice);
			tuplestore_putvalues(store, desc, out, nulls);
		}
	jobq_spi_finish();
	return (Datum) 0;
}

/*
 * jobq_health_define_gucs
 *	  Called from _PG_init.  The thresholds are user settings: they change
 *	  only what a report says.
 */
void
jobq_health_define_gucs(void)
{
	DefineCustomIntVariable("jobq.health_dead_tuples",
							"Dead rows of a jobq table that jobq_health reports.",
							"A warning when they also outnumber the live rows, critical at ten times both.",
							&jobq_health_dead_tuples,
							10000, 0, INT_MAX,
							PGC_USERSET, 0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("jobq.health_xact_age",
							"Age of a transaction holding back vacuum that jobq_health reports.",
							"A warning; critical for an idle-in-transaction session or a prepared transaction.",
							&jobq_health_xact_age_ms,
							5 * 60 * 1000, 0, INT_MAX,
							PGC_USERSET, GUC_UNIT_MS,
							NULL, NULL, NULL);
	DefineCustomIntVariable("jobq.health_xact_age_critical",
							"Age of a running transaction holding back vacuum that jobq_health calls critical.",
							NULL,
							&jobq_health_xact_age_critical_ms,
							30 * 60 * 1000, 0, INT_MAX,
							PGC_USERSET, GUC_UNIT_MS,
							NULL, NULL, NULL);
	DefineCustomIntVariable("jobq.health_backlog_age",
							"Age of the oldest due job at which jobq_health reports a backlog.",
							"Critical when no job of the queue is running, else a warning.",
							&jobq_health_backlog_age_ms,
							5 * 60 * 1000, 0, INT_MAX,
							PGC_USERSET, GUC_UNIT_MS,
							NULL, NULL, NULL);
}
