/*-------------------------------------------------------------------------
 *
 * audit.c
 *	  The audit trail: one row of jobq.audit per mutating operator call,
 *	  its reader jobq_audit, and its retention (jobq_audit_purge, a duty
 *	  of the sweeper).
 *
 * Operator calls are those that change queues, grants or jobs on an
 * operator's behalf: jobq_retry, jobq_cancel, jobq_purge, the bulk actions
 * (bulk.c), jobq_create_queue, jobq_alter_queue, jobq_drop_queue,
 * jobq_pause, jobq_resume, jobq_grant, jobq_revoke, and jobq_sweep when an
 * operator names itself (jobq.actor set: workers and the sweeper sweep all
 * the time, doing only what the queues' settings prescribe).  The worker's
 * path (enqueue, claim, complete, fail, extend, release) writes nothing.
 *
 * A row says who (actor: jobq.actor when set, which is how the dashboard
 * passes the name of its user, else the role; role: the session's current
 * role, always, since jobq.actor is whatever the caller claims), what
 * (action, and detail: the arguments that are not ids nor filters), where
 * (queue, ids, filters) and how many rows changed (affected, 0 included:
 * an attempt that found nothing is recorded too).  The row is written in
 * the caller's transaction, after the action: it commits and rolls back
 * with what it records, and a call refused with an error records nothing
 * (it changed nothing).
 *
 * A database whose SQL is still 0.1.0 has no jobq.audit: then nothing is
 * recorded.  Rows older than jobq.audit_retention are deleted by the
 * sweeper, in bounded batches, or by jobq_audit_purge.  Only jobq_admin
 * reads the trail.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/audit.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"

PG_FUNCTION_INFO_V1(jobq_audit);
PG_FUNCTION_INFO_V1(jobq_audit_purge);

/* GUC variables */
char	   *jobq_actor = NULL;
int			jobq_audit_retention_s = 90 * 86400;

/* The longest actor kept; a longer jobq.actor is cut (at a character) */
#define AUDIT_ACTOR_MAX				200

/* Key/value pairs of detail one call may pass */
#define AUDIT_DETAIL_MAX			8

/*
 * The queue of the jobs of ids ($6), when they are all of one queue (as
 * far as they exist), else NULL
 */
#define AUDIT_QUEUE_OF_IDS_SQL(IDS) \
	"(SELECT pg_catalog.min(x.queue) FROM" \
	"  (SELECT j.queue FROM jobq.jobs j WHERE j.id = ANY (" IDS ")" \
	"   UNION SELECT h.queue FROM jobq.history h WHERE h.id = ANY (" IDS ")) x" \
	"  HAVING count(*) = 1)"

enum
{
	ST_RECORD,
	ST_QUEUE_OF,
	ST_READ,
	ST_PURGE,
	NUM_STATEMENTS
};

static const JobqStatement statements[NUM_STATEMENTS] = {
	/*
	 * $1 at, $2 actor, $3 role, $4 action, $5 queue, $6 ids, $7 filters, $8
	 * affected, $9 detail as alternating keys and values.  A call on jobs
	 * by id names no queue: when the jobs are all of one queue (as far as
	 * they still exist), that one is recorded.
	 */
	[ST_RECORD] = {"audit_record",
		"INSERT INTO jobq.audit (at, actor, role, action, queue, ids, filters, detail, affected)"
		" VALUES ($1, $2, $3, $4,"
		"  COALESCE($5, " AUDIT_QUEUE_OF_IDS_SQL("$6") "),"
		"  $6, $7, CASE WHEN $9 IS NOT NULL THEN pg_catalog.jsonb_object($9) END, $8)",
		9, {TIMESTAMPTZOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, INT8ARRAYOID, JSONBOID,
			INT8OID, TEXTARRAYOID}},
	/* $1 ids: their one queue, for a call that removes them (delete_many) */
	[ST_QUEUE_OF] = {"audit_queue_of",
		"SELECT " AUDIT_QUEUE_OF_IDS_SQL("$1"),
		1, {INT8ARRAYOID}},
	/*
	 * $1 queue or NULL, $2 since or NULL, $3 max_rows, $4 before id or NULL;
	 * newest first, along the primary key (or audit_queue_idx)
	 */
	[ST_READ] = {"audit_read",
		"SELECT id, at, actor, role, action, queue, ids, filters, detail, affected"
		" FROM jobq.audit"
		" WHERE ($1::text IS NULL OR queue = $1)"
		"   AND ($2::timestamptz IS NULL OR at >= $2)"
		"   AND ($4::bigint IS NULL OR id < $4)"
		" ORDER BY id DESC LIMIT $3",
		4, {TEXTOID, TIMESTAMPTZOID, INT4OID, INT8OID}},
	/* $1 cut-off, $2 max rows; oldest first along audit_at_idx */
	[ST_PURGE] = {"audit_purge",
		"WITH p AS (SELECT id FROM jobq.audit WHERE at < $1"
		"  ORDER BY at LIMIT $2 FOR UPDATE SKIP LOCKED)"
		" DELETE FROM jobq.audit a WHERE a.id = ANY (ARRAY(SELECT p.id FROM p))",
		2, {TIMESTAMPTZOID, INT8OID}},
};

static SPIPlanPtr plans[NUM_STATEMENTS];

const JobqStatements jobq_audit_statements = {statements, NUM_STATEMENTS, plans, NULL};

/*
 * jobq_audit_define_gucs
 *	  Called from _PG_init.  jobq.actor is a user setting: the dashboard
 *	  sets it per transaction (SET LOCAL) to the name of its user.
 */
void
jobq_audit_define_gucs(void)
{
	DefineCustomStringVariable("jobq.actor",
							   "Who the audit trail names for this session's operator calls.",
							   "Empty: the session's role.  The role is recorded as well.",
							   &jobq_actor,
							   "",
							   PGC_USERSET, 0,
							   NULL, NULL, NULL);

	DefineCustomIntVariable("jobq.audit_retention",
							"How long rows of the audit trail are kept.",
							"The sweeper deletes older rows; -1 keeps them forever.",
							&jobq_audit_retention_s,
							90 * 86400, -1, JOBQ_RETENTION_MAX_S,
							PGC_SIGHUP, GUC_UNIT_S,
							NULL, NULL, NULL);
}

/*
 * audit_table_exists
 *	  Whether this database's SQL has jobq.audit (0.2.0 and later).  A
 *	  catalog cache look-up: operator calls are not a hot path.
 */
static bool
audit_table_exists(void)
{
	Oid			nsp = get_namespace_oid("jobq", true);

	return OidIsValid(nsp) && OidIsValid(get_relname_relid("audit", nsp));
}

/*
 * jobq_actor_named
 *	  Whether the session names its operator (jobq.actor is set).
 */
bool
jobq_actor_named(void)
{
	return jobq_actor != NULL && jobq_actor[0] != '\0';
}

/*
 * jobq_audit_id_array
 *	  The int8[] of one job id, for the record of a call on one job.
 */
Datum
jobq_audit_id_array(Datum id)
{
	return PointerGetDatum(construct_array(&id, 1, INT8OID, 8, FLOAT8PASSBYVAL,
										   TYPALIGN_DOUBLE));
}

/*
 * jobq_audit_queue_of
 *	  The queue of the jobs of ids (an int8[] datum) if they are all of one
 *	  queue, else NULL; for a call that is about to delete them, whose
 *	  record could not find it afterwards.  Runs inside SPI.  NULL without
 *	  jobq.audit (SQL 0.1.0).
 */
text *
jobq_audit_queue_of(Datum ids)
{
	bool		isnull;
	Datum		d;
	int			rc;

	if (!audit_table_exists())
		return NULL;
	rc = SPI_execute_plan(jobq_plan(&jobq_audit_statements, ST_QUEUE_OF), &ids, NULL, true, 1);
	jobq_spi_check(rc, SPI_OK_SELECT, "read the queue of jobs");
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	return isnull ? NULL : (text *) SPI_datumTransfer(d, false, -1);
}

/*
 * jobq_audit_record
 *	  Record one operator call: action (a word, such as "retry_many"), its
 *	  queue (NULL: none, or the jobs' if they are of one queue), ids (an
 *	  int8[] datum, or 0 for none), filters (NULL for none), how many rows
 *	  it changed, then detail as pairs of C strings (key, value; a NULL
 *	  value is left out), ended by one NULL key.  Runs its own SPI connection, so
 *	  it may be called inside or outside one.  Without jobq.audit (SQL
 *	  0.1.0) it does nothing.
 */
void
jobq_audit_record(const char *action, text *queue, Datum ids, Jsonb *filters,
				  int64 affected,...)
{
	Datum		values[9];
	char		nulls[9];
	Datum		pairs[AUDIT_DETAIL_MAX * 2];
	int			npairs = 0;
	const char *actor;
	const char *role = GetUserNameFromId(GetOuterUserId(), false);
	va_list		ap;
	int			rc;

	if (!audit_table_exists())
		return;

	va_start(ap, affected);
	for (;;)
	{
		const char *key = va_arg(ap, const char *);
		const char *value;

		if (key == NULL)
			break;
		value = va_arg(ap, const char *);
		if (value == NULL)
			continue;
		Assert(npairs < lengthof(pairs));
		pairs[npairs++] = CStringGetTextDatum(key);
		pairs[npairs++] = CStringGetTextDatum(value);
	}
	va_end(ap);

	actor = jobq_actor_named() ? jobq_actor : role;
	memset(nulls, ' ', sizeof(nulls));
	values[0] = TimestampTzGetDatum(jobq_now());
	values[1] = PointerGetDatum(cstring_to_text_with_len(actor,
														 pg_mbcliplen(actor, strlen(actor),
																	  AUDIT_ACTOR_MAX)));
	values[2] = CStringGetTextDatum(role);
	values[3] = CStringGetTextDatum(action);
	values[4] = PointerGetDatum(queue);
	nulls[4] = queue ? ' ' : 'n';
	values[5] = ids;
	nulls[5] = ids ? ' ' : 'n';
	values[6] = PointerGetDatum(filters);
	nulls[6] = filters ? ' ' : 'n';
	values[7] = Int64GetDatum(affected);
	if (npairs > 0)
		values[8] = PointerGetDatum(construct_array(pairs, npairs, TEXTOID, -1, false,
													TYPALIGN_INT));
	else
		nulls[8] = 'n';

	jobq_spi_connect();
	rc = SPI_execute_plan(jobq_plan(&jobq_audit_statements, ST_RECORD),
						  values, nulls, false, 0);
	jobq_spi_check(rc, SPI_OK_INSERT, "record audit row");
	jobq_spi_finish();
}

/*
 * jobq_audit(queue, since, max_rows, before_id) -> setof (id, at, actor,
 *			  role, action, queue, ids, filters, detail, affected)
 *	  The newest max_rows rows of the trail, newest first, optionally of one
 *	  queue, since a time, and before a row id (keyset paging: pass the
 *	  last id of a page to get the next).
 */
Datum
jobq_audit(PG_FUNCTION_ARGS)
{
	Datum		values[4];
	char		nulls[4] = {' ', ' ', ' ', ' '};
	TupleDesc	desc;
	Tuplestorestate *store;
	int			rc;

	if (PG_ARGISNULL(0))
		nulls[0] = 'n';
	else
		values[0] = PointerGetDatum(jobq_queue_arg(fcinfo, 0));
	values[1] = PG_ARGISNULL(1) ? (Datum) 0 : PG_GETARG_DATUM(1);
	nulls[1] = PG_ARGISNULL(1) ? 'n' : ' ';
	jobq_require(fcinfo, 2, "max_rows");
	jobq_check_int_range(PG_GETARG_INT32(2), "max_rows", 1, JOBQ_LIST_MAX_ROWS);
	values[2] = PG_GETARG_DATUM(2);
	values[3] = PG_ARGISNULL(3) ? (Datum) 0 : PG_GETARG_DATUM(3);
	nulls[3] = PG_ARGISNULL(3) ? 'n' : ' ';

	store = jobq_srf_begin(fcinfo, &desc);
	jobq_spi_connect();
	rc = SPI_execute_plan(jobq_plan(&jobq_audit_statements, ST_READ),
						  values, nulls, true, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "read audit trail");
	jobq_srf_put_spi(store, desc);
	jobq_spi_finish();
	return (Datum) 0;
}

/*
 * jobq_audit_purge_run
 *	  Delete at most max_rows rows older than jobq.audit_retention; returns
 *	  how many.  Inside SPI; the sweeper calls it once per batch.  Safe
 *	  when many sessions run it at once (SKIP LOCKED).  Nothing without
 *	  jobq.audit, or with a retention of -1.
 */
int64
jobq_audit_purge_run(int64 max_rows)
{
	Datum		values[2];
	int			rc;

	if (jobq_audit_retention_s < 0 || !audit_table_exists())
		return 0;
	values[0] = TimestampTzGetDatum(jobq_now() -
									(TimestampTz) jobq_audit_retention_s * USECS_PER_SEC);
	values[1] = Int64GetDatum(max_rows);
	rc = SPI_execute_plan(jobq_plan(&jobq_audit_statements, ST_PURGE),
						  values, NULL, false, 0);
	jobq_spi_check(rc, SPI_OK_DELETE, "purge audit trail");
	return (int64) SPI_processed;
}

/*
 * jobq_audit_purge(max_rows int) -> bigint
 *	  The sweeper's retention of the audit trail, by hand.
 */
Datum
jobq_audit_purge(PG_FUNCTION_ARGS)
{
	int64		purged;

	jobq_require(fcinfo, 0, "max_rows");
	jobq_check_int_range(PG_GETARG_INT32(0), "max_rows", 1, JOBQ_SWEEP_MAX_ROWS);
	jobq_spi_connect();
	purged = jobq_audit_purge_run(PG_GETARG_INT32(0));
	jobq_spi_finish();
	PG_RETURN_INT64(purged);
}
