/*-------------------------------------------------------------------------
 *
 * grants.c
 *	  Per-queue privileges (jobq_grant, jobq_revoke, jobq_grants, and the
 *	  checks the API functions make), and who may read payloads.
 *
 * The jobq roles decide which functions a role may call; per-queue grants
 * decide on which queues.  While jobq.queue_grants is empty (the default)
 * every role may use every queue, as in 0.1.0.  Once it holds a row, each
 * call on a queue needs the call's privilege on that queue, granted to the
 * caller or to a role whose privileges it has:
 *
 *	  enqueue	jobq_enqueue, jobq_enqueue_batch (and so the dedupe probe)
 *	  claim		jobq_claim, jobq_pop, jobq_complete(_batch), jobq_fail,
 *				jobq_extend, jobq_release, jobq_sweep(queue)
 *	  inspect	jobq_stats, jobq_list, jobq_job, jobq_queues (rows of other
 *				queues are left out; jobq_job shows no row)
 *	  admin		all of the above, and jobq_alter_queue, jobq_pause,
 *				jobq_resume, jobq_drop_queue, jobq_retry, jobq_cancel,
 *				jobq_purge, jobq_grant, jobq_revoke on that queue
 *
 * Superusers and members of jobq_admin pass every check: they can grant
 * themselves anything with jobq_grant, so limiting them would be show.
 * jobq_sweep() of every queue and jobq_create_queue need no queue grant.
 *
 * The caller is the session's current role (GetOuterUserId: SET ROLE
 * counts), not the current user, which inside these SECURITY DEFINER
 * functions is always jobq_owner.  A SECURITY DEFINER function of the
 * application that calls jobq is checked as the session's role.
 *
 * The hot paths pay one test of a cached flag while no grant exists: the
 * flag is read once per backend and forgotten by the relcache
 * invalidation that the statement trigger of jobq.queue_grants sends
 * (jobq.queues_changed, as for the queue cache), through queue_cache.c's
 * callback.  A database whose SQL is still 0.1.0 has no such table, and
 * no per-queue grants.
 *
 * Payloads, results and error texts (jobq_job's payload, errors and
 * result, jobq_list's last_error) are shown only to a caller with the
 * privileges of jobq_reader (0.2.0; granted to jobq_admin); others, such
 * as jobq_monitor, get NULL there and see counts and job metadata only.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/grants.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"

PG_FUNCTION_INFO_V1(jobq_grant);
PG_FUNCTION_INFO_V1(jobq_revoke);
PG_FUNCTION_INFO_V1(jobq_grants);

static const char *const priv_names[] = {
	[JOBQ_PRIV_ENQUEUE] = "enqueue",
	[JOBQ_PRIV_CLAIM] = "claim",
	[JOBQ_PRIV_INSPECT] = "inspect",
	[JOBQ_PRIV_ADMIN] = "admin",
};

enum
{
	ST_ANY_GRANT,
	ST_ALLOWED,
	ST_JOB_QUEUE,
	ST_JOBS_QUEUES,
	ST_ALL_JOBS_QUEUES,
	ST_GRANT,
	ST_REVOKE,
	ST_GRANTS,
	NUM_STATEMENTS
};

#define COL_ANY_GRANT		1
#define COL_ALLOWED			1
#define COL_JOB_QUEUE		1

static const JobqStatement statements[NUM_STATEMENTS] = {
	[ST_ANY_GRANT] = {"any_queue_grant",
		"SELECT EXISTS (SELECT 1 FROM jobq.queue_grants)",
		0, {InvalidOid}},
	/* $1 queue, $2 privilege, $3 the caller */
	[ST_ALLOWED] = {"queue_allowed",
		"SELECT EXISTS (SELECT 1 FROM jobq.queue_grants g"
		" WHERE g.queue = $1 AND g.privilege IN ($2, 'admin')"
		"   AND pg_catalog.pg_has_role($3, g.grantee::oid, 'USAGE'))",
		3, {TEXTOID, TEXTOID, OIDOID}},
	/* $1 id: the job's queue, live or finished */
	[ST_JOB_QUEUE] = {"job_queue",
		"SELECT queue FROM jobq.jobs WHERE id = $1"
		" UNION ALL SELECT queue FROM jobq.history WHERE id = $1"
		" LIMIT 1",
		1, {INT8OID}},
	/* $1 ids: the queues of those that are live */
	[ST_JOBS_QUEUES] = {"jobs_queues",
		"SELECT DISTINCT queue FROM jobq.jobs WHERE id = ANY ($1)",
		1, {INT8ARRAYOID}},
	/* $1 ids: the queues of those that are live or finished */
	[ST_ALL_JOBS_QUEUES] = {"all_jobs_queues",
		"SELECT queue FROM jobq.jobs WHERE id = ANY ($1)"
		" UNION SELECT queue FROM jobq.history WHERE id = ANY ($1)",
		1, {INT8ARRAYOID}},
	/* $1 queue, $2 role, $3 privilege */
	[ST_GRANT] = {"grant",
		"INSERT INTO jobq.queue_grants (queue, grantee, privilege)"
		" VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
		3, {TEXTOID, REGROLEOID, TEXTOID}},
	[ST_REVOKE] = {"revoke",
		"DELETE FROM jobq.queue_grants"
		" WHERE queue = $1 AND grantee = $2 AND privilege = $3",
		3, {TEXTOID, REGROLEOID, TEXTOID}},
	/* $1 queue or NULL; named as jobq_grants' result columns */
	[ST_GRANTS] = {"queue_grants",
		"SELECT queue, grantee::text AS role, privilege FROM jobq.queue_grants"
		" WHERE $1::text IS NULL OR queue = $1"
		" ORDER BY queue, grantee::text, privilege",
		1, {TEXTOID}},
};

static SPIPlanPtr plans[NUM_STATEMENTS];

const JobqStatements jobq_grants_statements = {statements, NUM_STATEMENTS, plans, NULL};

/* Whether jobq.queue_grants has a row: 1 yes, 0 no (or no table), -1 unread */
static int	grants_state = -1;

/* jobq.queue_grants when grants_state was read; InvalidOid: none or unread */
static Oid	grants_relid = InvalidOid;

/* Bumped by every invalidation, so a read can tell it raced one */
static uint64 grants_inval_count = 0;

/*
 * jobq_grants_inval
 *	  Called by queue_cache.c's relcache callback: forget the flag when
 *	  jobq.queue_grants changed (or every cache is reset, or the table was
 *	  not there to tell).
 */
void
jobq_grants_inval(Oid relid)
{
	if (relid != InvalidOid && grants_relid != InvalidOid && relid != grants_relid)
		return;
	grants_inval_count++;
	grants_state = -1;
	grants_relid = InvalidOid;
}

/*
 * grants_exist
 *	  Whether any per-queue grant exists.  Reads the table (with the latest
 *	  snapshot, as the queue cache does) only when the flag is unknown.
 */
static bool
grants_exist(void)
{
	uint64		before;
	bool		isnull;
	bool		result;
	Oid			relid;
	int			rc;

	if (likely(grants_state >= 0))
		return grants_state > 0;

	/* registers the invalidation callback that serves us too */
	(void) jobq_queues_relid();
	before = grants_inval_count;
	relid = get_relname_relid("queue_grants", get_namespace_oid("jobq", false));
	if (relid == InvalidOid)
		result = false;			/* SQL 0.1.0 */
	else
	{
		jobq_spi_connect();
		rc = SPI_execute_snapshot(jobq_plan(&jobq_grants_statements, ST_ANY_GRANT),
								  NULL, NULL, GetLatestSnapshot(),
								  InvalidSnapshot, false, false, 1);
		jobq_spi_check(rc, SPI_OK_SELECT, "read whether queue grants exist");
		result = jobq_spi_getbool(0, COL_ANY_GRANT, &isnull);
		jobq_spi_finish();
	}
	if (grants_inval_count == before)
	{
		grants_state = result ? 1 : 0;
		grants_relid = relid;
	}
	return result;
}

/*
 * caller_exempt
 *	  Superusers and roles with jobq_admin's privileges pass every check.
 */
static bool
caller_exempt(Oid caller)
{
	Oid			admin = get_role_oid("jobq_admin", true);

	return superuser_arg(caller) ||
		(OidIsValid(admin) && has_privs_of_role(caller, admin));
}

/*
 * queue_allowed
 *	  Whether caller holds priv (or admin) on queue.  Grants exist.
 */
static bool
queue_allowed(text *queue, JobqQueuePriv priv, Oid caller)
{
	Datum		args[3];
	bool		isnull;
	bool		ok;
	int			rc;

	args[0] = PointerGetDatum(queue);
	args[1] = CStringGetTextDatum(priv_names[priv]);
	args[2] = ObjectIdGetDatum(caller);
	jobq_spi_connect();
	rc = SPI_execute_plan(jobq_plan(&jobq_grants_statements, ST_ALLOWED),
						  args, NULL, true, 1);
	jobq_spi_check(rc, SPI_OK_SELECT, "check queue privilege");
	ok = jobq_spi_getbool(0, COL_ALLOWED, &isnull);
	jobq_spi_finish();
	return ok;
}

/*
 * jobq_queue_allowed
 *	  Whether the caller may use queue for priv: always while no grant
 *	  exists, for superusers and for jobq_admin's members.
 */
bool
jobq_queue_allowed(text *queue, JobqQueuePriv priv)
{
	Oid			caller;

	if (likely(!grants_exist()))
		return true;
	caller = GetOuterUserId();
	return caller_exempt(caller) || queue_allowed(queue, priv, caller);
}

/*
 * jobq_check_queue
 *	  Raise 42501 unless the caller may use queue for priv.
 */
void
jobq_check_queue(text *queue, JobqQueuePriv priv)
{
	if (likely(jobq_queue_allowed(queue, priv)))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied for queue \"%s\"", text_to_cstring(queue)),
			 errdetail("Role \"%s\" has no %s privilege on it.",
					   GetUserNameFromId(GetOuterUserId(), false), priv_names[priv]),
			 errhint("A member of jobq_admin can grant it: jobq_grant('%s', '%s', '%s').",
					 text_to_cstring(queue),
					 GetUserNameFromId(GetOuterUserId(), false), priv_names[priv])));
}

/*
 * jobq_job_allowed
 *	  Whether the caller may use the job with this id for priv: true when
 *	  no grant exists or the job is unknown (then the call finds nothing
 *	  to change or show anyway).
 */
bool
jobq_job_allowed(Datum id, JobqQueuePriv priv)
{
	bool		isnull;
	bool		ok = true;
	Datum		queue;
	int			rc;

	if (likely(!grants_exist()) || caller_exempt(GetOuterUserId()))
		return true;
	jobq_spi_connect();
	rc = SPI_execute_plan(jobq_plan(&jobq_grants_statements, ST_JOB_QUEUE),
						  &id, NULL, true, 1);
	jobq_spi_check(rc, SPI_OK_SELECT, "find the job's queue");
	if (SPI_processed > 0)
	{
		queue = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
							  COL_JOB_QUEUE, &isnull);
		ok = queue_allowed(DatumGetTextPP(queue), priv, GetOuterUserId());
	}
	jobq_spi_finish();
	return ok;
}

/*
 * jobq_check_job
 *	  Raise 42501 unless the caller may use the job with this id for priv.
 *	  The message names no queue: the caller may not know it.
 */
void
jobq_check_job(Datum id, JobqQueuePriv priv)
{
	if (likely(jobq_job_allowed(id, priv)))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied for job " INT64_FORMAT, DatumGetInt64(id)),
			 errdetail("Role \"%s\" has no %s privilege on the job's queue.",
					   GetUserNameFromId(GetOuterUserId(), false), priv_names[priv])));
}

/*
 * check_jobs
 *	  jobq_check_job for every job whose queue statement st finds among
 *	  ids (an int8[]).
 */
static void
check_jobs(Datum ids, JobqQueuePriv priv, int st)
{
	SPITupleTable *tt;
	bool		isnull;
	int			rc;

	if (likely(!grants_exist()) || caller_exempt(GetOuterUserId()))
		return;
	jobq_spi_connect();
	rc = SPI_execute_plan(jobq_plan(&jobq_grants_statements, st), &ids, NULL, true, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "find the jobs' queues");
	tt = SPI_tuptable;
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		text	   *queue = DatumGetTextPP(SPI_getbinval(tt->vals[i], tt->tupdesc,
														 COL_JOB_QUEUE, &isnull));

		if (!queue_allowed(queue, priv, GetOuterUserId()))
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("permission denied for a job of queue \"%s\"",
							text_to_cstring(queue)),
					 errdetail("Role \"%s\" has no %s privilege on it.",
							   GetUserNameFromId(GetOuterUserId(), false), priv_names[priv])));
	}
	jobq_spi_finish();
}

/*
 * jobq_check_jobs
 *	  jobq_check_job for every live job among ids (an int8[]).
 */
void
jobq_check_jobs(Datum ids, JobqQueuePriv priv)
{
	check_jobs(ids, priv, ST_JOBS_QUEUES);
}

/*
 * jobq_check_any_jobs
 *	  jobq_check_job for every job among ids (an int8[]), live or finished
 *	  (the bulk actions, bulk.c).
 */
void
jobq_check_any_jobs(Datum ids, JobqQueuePriv priv)
{
	check_jobs(ids, priv, ST_ALL_JOBS_QUEUES);
}

/* what keep_allowed_row needs */
typedef struct AllowedFilter
{
	int			col;			/* the queue's column in the statement */
	JobqQueuePriv priv;
	Oid			caller;
} AllowedFilter;

static bool
keep_allowed_row(HeapTuple row, TupleDesc rowdesc, void *arg)
{
	AllowedFilter *f = (AllowedFilter *) arg;
	bool		isnull;
	Datum		queue = heap_getattr(row, f->col, rowdesc, &isnull);

	return !isnull && queue_allowed(DatumGetTextPP(queue), f->priv, f->caller);
}

/*
 * jobq_srf_put_spi_allowed
 *	  jobq_srf_put_spi (by_name: jobq_srf_put_spi_by_name), leaving out
 *	  the rows whose queue (column col of the statement) the caller may not
 *	  use for priv.
 */
void
jobq_srf_put_spi_allowed(Tuplestorestate *store, TupleDesc desc, int col,
						 JobqQueuePriv priv, bool by_name)
{
	AllowedFilter f = {col, priv, GetOuterUserId()};
	bool		all = likely(!grants_exist()) || caller_exempt(f.caller);

	jobq_srf_put_spi_rows(store, desc, by_name, all ? NULL : keep_allowed_row, &f);
}

/*
 * jobq_caller_reads_payloads
 *	  Whether the caller has jobq_reader's privileges.  Without that role
 *	  (SQL 0.1.0) everyone who may call jobq_job reads payloads, as then.
 */
bool
jobq_caller_reads_payloads(void)
{
	Oid			reader = get_role_oid("jobq_reader", true);

	return !OidIsValid(reader) || has_privs_of_role(GetOuterUserId(), reader);
}

/*
 * grant_args
 *	  The validated (queue, role, privilege) of jobq_grant and jobq_revoke,
 *	  as statement arguments; the queue must exist, and the caller must
 *	  hold admin on it.
 */
static void
grant_args(FunctionCallInfo fcinfo, Datum *args)
{
	text	   *queue = jobq_queue_arg(fcinfo, 0);
	char	   *role;
	char	   *priv;
	bool		known = false;
	JobqQueueSettings settings;

	jobq_require(fcinfo, 1, "role");
	jobq_require(fcinfo, 2, "privilege");
	role = text_to_cstring(PG_GETARG_TEXT_PP(1));
	priv = text_to_cstring(PG_GETARG_TEXT_PP(2));
	for (int i = 0; i < lengthof(priv_names); i++)
		known |= strcmp(priv, priv_names[i]) == 0;
	if (!known)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown queue privilege \"%s\"", priv),
				 errhint("Privileges are %s.",
						 jobq_name_list(priv_names, lengthof(priv_names), "and"))));
	args[0] = PointerGetDatum(queue);
	/* 42704 for an unknown role, as GRANT says it */
	args[1] = ObjectIdGetDatum(get_role_oid(role, false));
	args[2] = CStringGetTextDatum(priv);

	if (!jobq_queue_settings(queue, &settings))
		jobq_queue_not_found(queue);
	jobq_check_queue(queue, JOBQ_PRIV_ADMIN);
}

/*
 * change_grant
 *	  Run the grant or revoke statement st with the validated arguments of
 *	  fcinfo; true when it changed a row.
 */
static bool
change_grant(FunctionCallInfo fcinfo, int st, int expected)
{
	Datum		args[3];
	bool		changed;
	int			rc;

	jobq_spi_connect();
	grant_args(fcinfo, args);
	rc = SPI_execute_plan(jobq_plan(&jobq_grants_statements, st), args, NULL, false, 0);
	jobq_spi_check(rc, expected, st == ST_GRANT ? "grant" : "revoke");
	changed = SPI_processed > 0;	/* NB: SPI_finish resets SPI_processed */
	jobq_audit_record(st == ST_GRANT ? "grant" : "revoke", DatumGetTextPP(args[0]), (Datum) 0, NULL,
					  changed ? 1 : 0, "role", text_to_cstring(PG_GETARG_TEXT_PP(1)),
					  "privilege", TextDatumGetCString(args[2]), NULL);
	jobq_spi_finish();
	return changed;
}

/*
 * jobq_grant(queue, role, privilege) -> boolean
 *	  Grant role privilege on queue; false when it already had it.  The
 *	  first grant of a database turns the checks on for every queue.
 */
Datum
jobq_grant(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(change_grant(fcinfo, ST_GRANT, SPI_OK_INSERT));
}

/*
 * jobq_revoke(queue, role, privilege) -> boolean
 *	  Revoke what jobq_grant granted; false when role did not have it.
 *	  Revoking the last grant of a database turns the checks off.
 */
Datum
jobq_revoke(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(change_grant(fcinfo, ST_REVOKE, SPI_OK_DELETE));
}

/*
 * jobq_grants(queue) -> setof (queue, role, privilege)
 *	  The per-queue grants, of one queue or of all.
 */
Datum
jobq_grants(PG_FUNCTION_ARGS)
{
	Datum		arg = (Datum) 0;
	char		null = 'n';
	TupleDesc	desc;
	Tuplestorestate *store;
	int			rc;

	if (!PG_ARGISNULL(0))
	{
		arg = PointerGetDatum(jobq_queue_arg(fcinfo, 0));
		null = ' ';
	}
	store = jobq_srf_begin(fcinfo, &desc);
	jobq_spi_connect();
	rc = SPI_execute_plan(jobq_plan(&jobq_grants_statements, ST_GRANTS),
						  &arg, &null, true, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "list queue grants");
	jobq_srf_put_spi_allowed(store, desc, 1, JOBQ_PRIV_INSPECT, false);
	jobq_spi_finish();
	return (Datum) 0;
}
