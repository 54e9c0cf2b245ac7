/*-------------------------------------------------------------------------
 *
 * queues.c
 *	  Queue management: jobq_create_queue, jobq_alter_queue, jobq_drop_queue,
 *	  jobq_pause, jobq_resume, jobq_queues.
 *
 * A queue is a row of jobq.queues holding the settings its jobs follow:
 * lease (how long a claim holds a job), max_attempts, exponential backoff
 * base and cap, retention of completed and of dead jobs, paused, and
 * whether enqueue sends a NOTIFY; with 0.2.0's SQL also the settings of
 * JOBQ_QUEUE_SETTINGS_020 (completion events, groups, limits, rates).
 *
 * One library serves both releases' SQL: a 0.1.0 definition passes the
 * 0.1.0 settings only (PG_NARGS tells), and a database whose jobq.queues
 * lacks the 0.2.0 columns (jobq_queues_have_020) is read and written
 * without them; its queues behave as with the defaults.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/queues.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"
#include "jobq_sql.h"
#include "groups.h"

#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/lock.h"
#include "storage/lockdefs.h"
#include "storage/proc.h"
#include "utils/inval.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

PG_FUNCTION_INFO_V1(jobq_create_queue);
PG_FUNCTION_INFO_V1(jobq_alter_queue);
PG_FUNCTION_INFO_V1(jobq_drop_queue);
PG_FUNCTION_INFO_V1(jobq_pause);
PG_FUNCTION_INFO_V1(jobq_resume);
PG_FUNCTION_INFO_V1(jobq_queues);

/*
 * The settings (JOBQ_QUEUE_SETTINGS and JOBQ_QUEUE_SETTINGS_020 in
 * jobq-contract.h): each is an argument of create and alter, at
 * ARG_<name> after the queue, and a column of jobq.queues of the same
 * name.  The 0.1.0 ones come first, so that the first NUM_SETTINGS_010
 * arguments are a 0.1.0 call's.
 */
#define ALL_SETTINGS(X)		JOBQ_QUEUE_SETTINGS(X) JOBQ_QUEUE_SETTINGS_020(X)

#define SETTING_ARG(name, kind, min, max, def) ARG_##name,
enum
{
	ARG_QUEUE,
	ALL_SETTINGS(SETTING_ARG)
	NUM_ARGS
};

#define NUM_SETTINGS		(NUM_ARGS - 1)
#define SETTING_ONE(name, kind, min, max, def) + 1
#define NUM_SETTINGS_010	(0 JOBQ_QUEUE_SETTINGS(SETTING_ONE))

StaticAssertDecl(NUM_SETTINGS - NUM_SETTINGS_010 == JOBQ_NUM_SETTINGS_020,
				 "JobqSetting020 must list JOBQ_QUEUE_SETTINGS_020");

/* What the kinds of settings are in SQL and how they are checked */
typedef enum SettingKind
{
	KIND_SECONDS,				/* an interval, bounds in seconds */
	KIND_INTEGER,
	KIND_BOOLEAN,
	KIND_CHOICE					/* text, one of choices; held as its index */
} SettingKind;

#define KIND_TYPE_SECONDS	INTERVALOID
#define KIND_TYPE_INTEGER	INT4OID
#define KIND_TYPE_BOOLEAN	BOOLOID
#define KIND_TYPE_CHOICE	TEXTOID

typedef struct SettingDef
{
	const char *name;
	SettingKind kind;
	Oid			type;
	int64		min;
	int64		max;
	int64		def;			/* seconds, the number, 0/1, or an index */
	const char *const *choices; /* KIND_CHOICE: max + 1 values */
} SettingDef;

#define CHOICE_VALUE(value) CppAsString(value),
#define KIND_CHOICES_SECONDS(name) NULL
#define KIND_CHOICES_INTEGER(name) NULL
#define KIND_CHOICES_BOOLEAN(name) NULL
#define KIND_CHOICES_CHOICE(name) \
	((const char *const[]) {JOBQ_CHOICES_##name(CHOICE_VALUE) NULL})

#define SETTING_DEF(name, kind, min, max, def) \
	{CppAsString(name), KIND_##kind, KIND_TYPE_##kind, min, max, def, \
	 KIND_CHOICES_##kind(name)},

/* settings[i] is argument i + 1 */
static const SettingDef settings[NUM_SETTINGS] = {ALL_SETTINGS(SETTING_DEF)};

/* ", lease, max_attempts, ...": the setting columns, after another */
#define SETTING_COLUMN(name, kind, min, max, def) ", " CppAsString(name)
#define SETTING_COLUMNS_010	JOBQ_QUEUE_SETTINGS(SETTING_COLUMN)
#define SETTING_COLUMNS_020 JOBQ_QUEUE_SETTINGS_020(SETTING_COLUMN)

/*
 * The statements.  create_queue and alter_queue have a parameter per
 * setting, so their texts (and types) are made once per backend from the
 * settings (build_statements): fixed pieces, never values.  The _010
 * ones leave out the 0.2.0 columns, for a database still on 0.1.0's SQL.
 */
enum
{
	ST_CREATE_QUEUE,
	ST_CREATE_QUEUE_010,
	ST_LOCK_QUEUE,
	ST_LOCK_QUEUE_010,
	ST_ALTER_QUEUE,
	ST_ALTER_QUEUE_010,
	ST_COUNT_LIVE_JOBS,
	ST_DROP_QUEUE,
	ST_DROP_QUEUE_FLOW,
	ST_SET_PAUSED,
	ST_QUEUES,
	ST_QUEUES_010,
	NUM_STATEMENTS
};

/* The statement of a kind for nsettings settings: the full one or _010 */
#define ST_FOR(st, nsettings) ((nsettings) == NUM_SETTINGS ? (st) : (st##_010))

/* count_live_jobs */
#define COL_LIVE_COUNT		1

static void build_statements(void);

static JobqStatement statements[NUM_STATEMENTS] = {
	/* $1 queue, a setting each, then created_at: made by build_statements */
	[ST_CREATE_QUEUE] = {"create_queue", NULL, 0, {InvalidOid}},
	[ST_CREATE_QUEUE_010] = {"create_queue_010", NULL, 0, {InvalidOid}},
	/* $1 queue: its settings after the name, the row locked */
	[ST_LOCK_QUEUE] = {"lock_queue",
		"SELECT name" SETTING_COLUMNS_010 SETTING_COLUMNS_020
		" FROM jobq.queues WHERE name = $1 FOR UPDATE",
		1, {TEXTOID}},
	[ST_LOCK_QUEUE_010] = {"lock_queue_010",
		"SELECT name" SETTING_COLUMNS_010 " FROM jobq.queues WHERE name = $1 FOR UPDATE",
		1, {TEXTOID}},
	/* $1 queue, a setting each: made by build_statements */
	[ST_ALTER_QUEUE] = {"alter_queue", NULL, 0, {InvalidOid}},
	[ST_ALTER_QUEUE_010] = {"alter_queue_010", NULL, 0, {InvalidOid}},
	[ST_COUNT_LIVE_JOBS] = {"count_live_jobs",
		"SELECT count(*) FROM jobq.jobs WHERE queue = $1",
		1, {TEXTOID}},
	[ST_DROP_QUEUE] = {"drop_queue",
		"WITH j AS (DELETE FROM jobq.jobs WHERE queue = $1),"
		" h AS (DELETE FROM jobq.history WHERE queue = $1),"
		" s AS (DELETE FROM jobq.stale_acks WHERE queue = $1)"
		" DELETE FROM jobq.queues WHERE name = $1",
		1, {TEXTOID}},

	/*
	 * flows (0.2.0's SQL): the same, forgetting the edges and memberships
	 * of the queue's jobs (JOBQ_FLOW_FORGET_SQL), and returning its live
	 * jobs of flows (id, flow_id), whose dependents in other queues are
	 * then resolved as of parents purged (flows.c)
	 */
	[ST_DROP_QUEUE_FLOW] = {"drop_queue_flow",
		"WITH j AS (DELETE FROM jobq.jobs WHERE queue = $1 RETURNING id, flow_id),"
		" h AS (DELETE FROM jobq.history WHERE queue = $1 RETURNING id, flow_id),"
		" s AS (DELETE FROM jobq.stale_acks WHERE queue = $1),"
		" q AS (DELETE FROM jobq.queues WHERE name = $1),"
		" g AS (SELECT j.id, j.flow_id FROM j WHERE j.flow_id IS NOT NULL"
		"       UNION ALL SELECT h.id, h.flow_id FROM h WHERE h.flow_id IS NOT NULL),"
		JOBQ_FLOW_FORGET_SQL("g")
		" SELECT j.id, j.flow_id FROM j WHERE j.flow_id IS NOT NULL",
		1, {TEXTOID}},
	/* $1 queue, $2 paused; o: the row before the update, to tell a real resume */
	[ST_SET_PAUSED] = {"set_paused",
		"WITH o AS (SELECT name, paused FROM jobq.queues"
		"  WHERE name = $1 FOR NO KEY UPDATE)"
		" UPDATE jobq.queues q SET paused = $2 FROM o"
		" WHERE q.name = o.name"
		" RETURNING q.notify, o.paused AND NOT $2",
		2, {TEXTOID, BOOLOID}},
	/* named as jobq_queues' result columns, which take them by name */
	[ST_QUEUES] = {"queues",
		"SELECT name AS queue" SETTING_COLUMNS_010 ", paused, created_at"
		SETTING_COLUMNS_020 " FROM jobq.queues ORDER BY name",
		0, {InvalidOid}},
	[ST_QUEUES_010] = {"queues_010",
		"SELECT name AS queue" SETTING_COLUMNS_010 ", paused, created_at"
		" FROM jobq.queues ORDER BY name",
		0, {InvalidOid}},
};

static SPIPlanPtr plans[NUM_STATEMENTS];

const JobqStatements jobq_queues_statements = {statements, NUM_STATEMENTS, plans,
build_statements};

/*
 * build_create_alter
 *	  Make the texts and argument types of create_queue and alter_queue for
 *	  the first nsettings settings, in TopMemoryContext.
 */
static void
build_create_alter(JobqStatement *cs, JobqStatement *as, int nsettings)
{
	StringInfoData create;
	StringInfoData alter;
	MemoryContext oldcxt = MemoryContextSwitchTo(TopMemoryContext);

	initStringInfo(&create);
	initStringInfo(&alter);
	appendStringInfoString(&create, "INSERT INTO jobq.queues (name");
	for (int i = 0; i < nsettings; i++)
		appendStringInfo(&create, ", %s", settings[i].name);
	appendStringInfoString(&create, ", created_at) VALUES ($1");
	appendStringInfoString(&alter, "UPDATE jobq.queues SET ");
	cs->argtypes[0] = as->argtypes[0] = TEXTOID;
	for (int i = 0; i < nsettings; i++)
	{
		appendStringInfo(&create, ", $%d", i + 2);
		appendStringInfo(&alter, "%s%s = $%d", i > 0 ? ", " : "", settings[i].name, i + 2);
		cs->argtypes[i + 1] = as->argtypes[i + 1] = settings[i].type;
	}
	appendStringInfo(&create, ", $%d) ON CONFLICT (name) DO NOTHING", nsettings + 2);
	appendStringInfoString(&alter, " WHERE name = $1");
	cs->argtypes[nsettings + 1] = TIMESTAMPTZOID;
	cs->nargs = nsettings + 2;
	as->nargs = nsettings + 1;
	MemoryContextSwitchTo(oldcxt);
	as->sql = alter.data;
	cs->sql = create.data;
}

/*
 * build_statements
 *	  Make create_queue and alter_queue, for all settings and for 0.1.0's,
 *	  once per backend.
 */
static void
build_statements(void)
{
	if (statements[ST_CREATE_QUEUE].sql != NULL)
		return;
	StaticAssertStmt(NUM_ARGS + 1 <= JOBQ_STATEMENT_MAX_ARGS,
					 "too many queue settings for a statement");
	build_create_alter(&statements[ST_CREATE_QUEUE_010], &statements[ST_ALTER_QUEUE_010],
					   NUM_SETTINGS_010);
	build_create_alter(&statements[ST_CREATE_QUEUE], &statements[ST_ALTER_QUEUE],
					   NUM_SETTINGS);
}

/*
 * settings_passed
 *	  How many settings this call's SQL definition passes: all of them
 *	  (0.2.0's) or 0.1.0's.  A 0.2.0 definition on a table without the
 *	  0.2.0 columns cannot happen (one script adds both).
 */
static int
settings_passed(FunctionCallInfo fcinfo)
{
	int			n = PG_NARGS() - 1;

	if (n != NUM_SETTINGS && n != NUM_SETTINGS_010)
		elog(ERROR, "jobq: a queue function defined with %d settings, expected %d or %d",
			 n, NUM_SETTINGS_010, NUM_SETTINGS);
	return n;
}

/*
 * choice_index
 *	  The index of value among the choices of setting def, or -1.
 */
static int
choice_index(const SettingDef *def, text *value)
{
	const char *v = VARDATA_ANY(value);
	int			len = VARSIZE_ANY_EXHDR(value);

	for (int i = 0; def->choices[i] != NULL; i++)
		if ((int) strlen(def->choices[i]) == len && memcmp(def->choices[i], v, len) == 0)
			return i;
	return -1;
}

/*
 * bad_choice
 *	  22023 for a value of a CHOICE setting that is none of its choices.
 */
static void
bad_choice(const SettingDef *def, text *value)
{
	StringInfoData list;

	initStringInfo(&list);
	for (int i = 0; def->choices[i] != NULL; i++)
		appendStringInfo(&list, "%s%s", i > 0 ? ", " : "", def->choices[i]);
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("%s must be one of %s, not \"%s\"", def->name, list.data,
					text_to_cstring(value))));
}

/*
 * check_settings
 *	  Validate the first nsettings queue settings given as datums at the
 *	  argument positions; isnull[i] marks "not given" (alter) and is an
 *	  error when all_required.  Interval settings are replaced by their
 *	  normalized form (jobq_check_interval), which is what gets stored.
 */
static void
check_settings(Datum *values, bool *isnull, bool all_required, int nsettings)
{
	for (int i = 0; i < nsettings; i++)
		if (all_required && isnull[i + 1])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s must not be null", settings[i].name)));

	for (int i = 0; i < nsettings; i++)
	{
		const SettingDef *def = &settings[i];

		if (isnull[i + 1])
			continue;
		switch (def->kind)
		{
			case KIND_SECONDS:
				values[i + 1] = IntervalPGetDatum(jobq_check_interval(DatumGetIntervalP(values[i + 1]),
																	  def->name,
																	  def->min * USECS_PER_SEC,
																	  def->max * USECS_PER_SEC));
				break;
			case KIND_INTEGER:
				jobq_check_int_range(DatumGetInt32(values[i + 1]), def->name,
									 def->min, def->max);
				break;
			case KIND_BOOLEAN:
				break;
			case KIND_CHOICE:
				if (choice_index(def, DatumGetTextPP(values[i + 1])) < 0)
					bad_choice(def, DatumGetTextPP(values[i + 1]));
				break;
		}
	}
	if (!isnull[ARG_backoff_base] && !isnull[ARG_backoff_cap] &&
		jobq_interval_usecs(DatumGetIntervalP(values[ARG_backoff_cap])) <
		jobq_interval_usecs(DatumGetIntervalP(values[ARG_backoff_base])))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("backoff_cap must not be less than backoff_base")));
}

/*
 * default_settings
 *	  The settings of a queue created without them, as datums at the
 *	  positions of the create arguments.  Defined in C (the contract's
 *	  defaults), not as SQL DEFAULTs, so that NULL means "default" for
 *	  positional callers too.
 */
static void
default_settings(Datum *values)
{
	for (int i = 0; i < NUM_SETTINGS; i++)
	{
		const SettingDef *def = &settings[i];

		switch (def->kind)
		{
			case KIND_SECONDS:
				{
					Interval   *span = palloc0(sizeof(Interval));

					span->time = def->def * USECS_PER_SEC;
					values[i + 1] = IntervalPGetDatum(span);
				}
				break;
			case KIND_INTEGER:
				values[i + 1] = Int32GetDatum((int32) def->def);
				break;
			case KIND_BOOLEAN:
				values[i + 1] = BoolGetDatum(def->def != 0);
				break;
			case KIND_CHOICE:
				values[i + 1] = CStringGetTextDatum(def->choices[def->def]);
				break;
		}
	}
}

/*
 * jobq_setting_020_default, jobq_setting_020_value
 *	  A 0.2.0 setting (index i of JOBQ_QUEUE_SETTINGS_020) as the backend
 *	  cache holds it (jobq_setting_020 in jobq.h): its default, or the
 *	  value of its column d.  Seconds for an interval, the number, 0/1, or
 *	  the index of a choice.  A column value no jobq function writes (a
 *	  superuser's UPDATE) is an error naming the queue's setting.
 */
int64
jobq_setting_020_default(int i)
{
	Assert(i >= 0 && i < JOBQ_NUM_SETTINGS_020);
	return settings[NUM_SETTINGS_010 + i].def;
}

int64
jobq_setting_020_value(int i, Datum d)
{
	const SettingDef *def = &settings[NUM_SETTINGS_010 + i];
	int64		v = 0;

	Assert(i >= 0 && i < JOBQ_NUM_SETTINGS_020);
	switch (def->kind)
	{
		case KIND_SECONDS:
			v = jobq_interval_usecs(DatumGetIntervalP(d)) / USECS_PER_SEC;
			break;
		case KIND_INTEGER:
			v = DatumGetInt32(d);
			break;
		case KIND_BOOLEAN:
			v = DatumGetBool(d) ? 1 : 0;
			break;
		case KIND_CHOICE:
			v = choice_index(def, DatumGetTextPP(d));
			if (v < 0)
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("jobq.queues holds an unknown %s", def->name),
						 errhint("Set it with jobq_alter_queue.")));
			break;
	}
	return v;
}

/*
 * jobq_create_queue(queue, lease, max_attempts, backoff_base, backoff_cap,
 *					 completed_retention, dead_retention, notify
 *					 [, the settings of 0.2.0]) -> void
 *	  Create a queue; a NULL setting takes its default (lease 5 min,
 *	  max_attempts 25, backoff 1 s .. 1 h, completed kept 1 day, dead kept
 *	  14 days, notify on; JOBQ_QUEUE_SETTINGS_020 for the others).  42710
 *	  if the queue exists already.
 */
Datum
jobq_create_queue(PG_FUNCTION_ARGS)
{
	Datum		values[NUM_ARGS + 1];
	bool		isnull[NUM_ARGS] = {false};
	text	   *queue = jobq_queue_arg(fcinfo, ARG_QUEUE);
	int			nsettings = settings_passed(fcinfo);
	int			rc;

	default_settings(values);
	for (int i = 1; i <= nsettings; i++)
		if (!PG_ARGISNULL(i))
			values[i] = PG_GETARG_DATUM(i);
	values[ARG_QUEUE] = PointerGetDatum(queue);
	check_settings(values, isnull, true, nsettings);
	values[nsettings + 1] = TimestampTzGetDatum(jobq_now());

	jobq_spi_connect();
	rc = SPI_execute_plan(jobq_plan(&jobq_queues_statements, ST_FOR(ST_CREATE_QUEUE, nsettings)),
						  values, NULL, false, 0);
	jobq_spi_check(rc, SPI_OK_INSERT, "create queue");
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("queue \"%s\" already exists", text_to_cstring(queue))));
	if (nsettings > ARG_max_running)
		jobq_slots_resize(queue, DatumGetInt32(values[ARG_max_running]));
	jobq_audit_record("create_queue", queue, (Datum) 0, NULL, 1, NULL);
	jobq_spi_finish();
	PG_RETURN_VOID();
}

/*
 * lock_queue
 *	  Lock the queue row FOR UPDATE and return its first nsettings settings
 *	  as datums in values[1..nsettings] (the positions of the create/alter
 *	  arguments), copied out of SPI memory.  Raises 42704 for an unknown
 *	  queue.
 */
static void
lock_queue(text *queue, Datum *values, int nsettings)
{
	Datum		arg = PointerGetDatum(queue);
	int			rc;

	rc = SPI_execute_plan(jobq_plan(&jobq_queues_statements, ST_FOR(ST_LOCK_QUEUE, nsettings)),
						  &arg, NULL, false, 1);
	jobq_spi_check(rc, SPI_OK_SELECT, "lock queue");
	if (SPI_processed == 0)
		jobq_queue_not_found(queue);
	jobq_check_queue(queue, JOBQ_PRIV_ADMIN);
	/* column 1 is the name, column i + 1 the setting of argument i */
	for (int i = 1; i <= nsettings; i++)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, i + 1, &isnull);
		Form_pg_attribute att = TupleDescAttr(SPI_tuptable->tupdesc, i);

		values[i] = SPI_datumTransfer(d, att->attbyval, att->attlen);
	}
}

/*
 * jobq_alter_queue(queue, lease, max_attempts, backoff_base, backoff_cap,
 *					completed_retention, dead_retention, notify
 *					[, the settings of 0.2.0]) -> void
 *	  Change the given settings; a NULL argument keeps the current value.
 *	  The merged settings are validated together (cap >= base).
 */
Datum
jobq_alter_queue(PG_FUNCTION_ARGS)
{
	Datum		values[NUM_ARGS];
	Datum		current[NUM_ARGS];
	bool		isnull[NUM_ARGS];
	bool		none[NUM_ARGS] = {false};
	text	   *queue = jobq_queue_arg(fcinfo, ARG_QUEUE);
	int			nsettings = settings_passed(fcinfo);
	int			rc;

	for (int i = 1; i <= nsettings; i++)
	{
		isnull[i] = PG_ARGISNULL(i);
		values[i] = isnull[i] ? (Datum) 0 : PG_GETARG_DATUM(i);
	}
	isnull[ARG_QUEUE] = false;
	check_settings(values, isnull, false, nsettings);

	jobq_spi_connect();
	/* NB: a new group mode needs the queue without enqueues (groups.c), name lock first */
	if (nsettings > ARG_group_mode && !isnull[ARG_group_mode])
		jobq_lock_queue_name(queue, ExclusiveLock);
	lock_queue(queue, current, nsettings);
	for (int i = 1; i <= nsettings; i++)
		if (isnull[i])
			values[i] = current[i];
	values[ARG_QUEUE] = PointerGetDatum(queue);
	check_settings(values, none, true, nsettings);
	if (nsettings > ARG_group_mode && !isnull[ARG_group_mode] &&
		!DatumGetBool(DirectFunctionCall2Coll(texteq, C_COLLATION_OID, values[ARG_group_mode],
												current[ARG_group_mode])))
		jobq_group_mode_changing(queue);

	rc = SPI_execute_plan(jobq_plan(&jobq_queues_statements, ST_FOR(ST_ALTER_QUEUE, nsettings)),
						  values, NULL, false, 0);
	jobq_spi_check(rc, SPI_OK_UPDATE, "alter queue");
	if (nsettings > ARG_max_running && !isnull[ARG_max_running])
		jobq_slots_resize(queue, DatumGetInt32(values[ARG_max_running]));
	jobq_audit_record("alter_queue", queue, (Datum) 0, NULL, 1, NULL);
	jobq_spi_finish();
	PG_RETURN_VOID();
}

/*
 * jobq_drop_queue(queue, force) -> void
 *	  Drop a queue.  Refuses (55006) while live jobs exist or schedules
 *	  point at it unless force, in which case its live jobs, history and
 *	  schedules go too; workers holding its jobs then find their tokens
 *	  stale.  The queue's name is locked first
 *	  (jobq_lock_queue_name), so an enqueue either committed before and is
 *	  counted, or waits and then finds no queue.
 */
Datum
jobq_drop_queue(PG_FUNCTION_ARGS)
{
	text	   *queue = jobq_queue_arg(fcinfo, 0);
	bool		force;
	Datum		arg = PointerGetDatum(queue);
	Datum		current[NUM_ARGS];
	int			rc;

	jobq_require(fcinfo, 1, "force");
	force = PG_GETARG_BOOL(1);

	jobq_spi_connect();
	/* NB: before the name lock, in the tick's order (schedules.c) */
	jobq_schedules_before_drop(queue, force);
	jobq_lock_queue_name(queue, ExclusiveLock);
	lock_queue(queue, current, NUM_SETTINGS_010);

	if (!force)
	{
		bool		isnull;

		/*
		 * Not read-only: a read-only statement would run with the snapshot
		 * of the caller's statement, taken before the wait for the name
		 * lock, and miss the jobs of the enqueues it waited for (which the
		 * DELETE below, with a new snapshot, would then delete).
		 */
		rc = SPI_execute_plan(jobq_plan(&jobq_queues_statements, ST_COUNT_LIVE_JOBS),
							  &arg, NULL, false, 1);
		jobq_spi_check(rc, SPI_OK_SELECT, "count live jobs");
		if (jobq_spi_getint64(0, COL_LIVE_COUNT, &isnull) > 0)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_IN_USE),
					 errmsg("queue \"%s\" has " INT64_FORMAT " live jobs",
							text_to_cstring(queue), jobq_spi_getint64(0, COL_LIVE_COUNT, &isnull)),
					 errhint("Wait for them to finish, cancel them, or pass force => true.")));
	}

	if (jobq_flows_available())
	{
		rc = SPI_execute_plan(jobq_plan(&jobq_queues_statements, ST_DROP_QUEUE_FLOW),
							  &arg, NULL, false, 0);
		jobq_spi_check(rc, SPI_OK_SELECT, "drop queue");
		/* the dropped jobs left no trace: their dependents see them purged */
		/* (the statement forgot their edges and memberships already) */
		jobq_flow_resolve_rows(1, 2, "purged", false, jobq_now());
	}
	else
	{
		rc = SPI_execute_plan(jobq_plan(&jobq_queues_statements, ST_DROP_QUEUE),
							  &arg, NULL, false, 0);
		jobq_spi_check(rc, SPI_OK_DELETE, "drop queue");
	}
	jobq_groups_forget(queue);
	if (jobq_queues_have_020())
		jobq_slots_resize(queue, 0);
	jobq_audit_record("drop_queue", queue, (Datum) 0, NULL, 1, "force", force ? "true" : "false",
					  NULL);
	jobq_spi_finish();
	PG_RETURN_VOID();
}

/*
 * set_paused
 *	  Shared body of jobq_pause and jobq_resume.
 */
static void
set_paused(text *queue, bool paused)
{
	Datum		args[2] = {PointerGetDatum(queue), BoolGetDatum(paused)};
	int			rc;
	bool		isnull;

	jobq_spi_connect();
	jobq_check_queue(queue, JOBQ_PRIV_ADMIN);
	rc = SPI_execute_plan(jobq_plan(&jobq_queues_statements, ST_SET_PAUSED),
						  args, NULL, false, 0);
	jobq_spi_check(rc, SPI_OK_UPDATE_RETURNING, "pause queue");
	if (SPI_processed == 0)
		jobq_queue_not_found(queue);

	/*
	 * A resumed queue may hold ready jobs that nobody was told about: wake
	 * its idle workers, all of them (they find out how many jobs there are).
	 */
	if (jobq_spi_getbool(0, 2, &isnull))
	{
		TimestampTz now = jobq_now();

		jobq_announce_ready(queue, PG_INT64_MAX, now, now, jobq_spi_getbool(0, 1, &isnull), false);
	}
	jobq_audit_record(paused ? "pause" : "resume", queue, (Datum) 0, NULL, 1, NULL);
	jobq_spi_finish();
}

/*
 * jobq_pause(queue) -> void
 *	  Claims skip a paused queue; enqueue still accepts jobs (without
 *	  NOTIFY, since nobody could claim them).
 */
Datum
jobq_pause(PG_FUNCTION_ARGS)
{
	set_paused(jobq_queue_arg(fcinfo, 0), true);
	PG_RETURN_VOID();
}

/*
 * jobq_resume(queue) -> void
 */
Datum
jobq_resume(PG_FUNCTION_ARGS)
{
	set_paused(jobq_queue_arg(fcinfo, 0), false);
	PG_RETURN_VOID();
}

/*
 * jobq_queues() -> setof (queue, settings..., paused, created_at
 *						   [, the settings of 0.2.0])
 */
Datum
jobq_queues(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	Tuplestorestate *store = jobq_srf_begin(fcinfo, &desc);
	int			rc;

	jobq_spi_connect();
	rc = SPI_execute_plan(jobq_plan(&jobq_queues_statements,
									ST_FOR(ST_QUEUES, jobq_queues_have_020() ? NUM_SETTINGS : 0)),
						  NULL, NULL, true, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "list queues");
	jobq_srf_put_spi_allowed(store, desc, 1, JOBQ_PRIV_INSPECT, true);
	jobq_spi_finish();
	return (Datum) 0;
}

/*
 * How many queue name locks this transaction took (and which transaction
 * that is): at most JOBQ_QUEUES_PER_XACT_MAX, see jobq_lock_queue_name.
 * An upper bound: a rolled-back subtransaction releases the locks it took
 * but does not lower the count, so at the limit the locks really held are
 * counted again (held_queue_locks).
 */
static int	xact_queue_locks = 0;
static LocalTransactionId xact_queue_locks_lxid = InvalidLocalTransactionId;

/*
 * held_queue_locks
 *	  How many queue name locks (object locks of class relid in this
 *	  database) this backend holds.  Reads the whole lock table, as
 *	  pg_locks does, so it runs only when the count above reaches the
 *	  limit; a loop of savepoints rolled back pays it once per
 *	  JOBQ_QUEUES_PER_XACT_MAX locks.
 */
static int
held_queue_locks(Oid relid)
{
	LockData   *data = GetLockStatusData();
	int			n = 0;

	for (int i = 0; i < data->nelements; i++)
	{
		LockInstanceData *l = &data->locks[i];

		if (l->pid == MyProcPid && l->holdMask != 0 &&
			l->locktag.locktag_type == LOCKTAG_OBJECT &&
			l->locktag.locktag_field1 == MyDatabaseId &&
			l->locktag.locktag_field2 == relid)
			n++;
	}
	pfree(data->locks);
	pfree(data);
	return n;
}

/*
 * jobq_lock_queue_name
 *	  Take a transaction-level lock on a queue's name: ShareLock by every
 *	  enqueue, ExclusiveLock by jobq_drop_queue.  A drop thus waits for the
 *	  enqueues in flight to commit (and then sees their jobs), and an
 *	  enqueue that starts during a drop waits and then finds no queue: no
 *	  job is ever left in a dropped queue.
 *
 *	  A lock in the lock manager, not a row lock on the queue row: a row
 *	  lock (FOR KEY SHARE, as a foreign key would take) writes WAL on every
 *	  enqueue and turns concurrent producers of one queue into multixacts.
 *	  Not an advisory lock either: any role that can connect can take
 *	  advisory locks, and one that held the queue's key froze its enqueues
 *	  (issue 13).  The tag is an object lock (LOCKTAG_OBJECT) whose class is
 *	  jobq.queues' OID and whose object is the hash of the name.  PostgreSQL
 *	  takes object locks only on the objects of system catalogs, whose
 *	  OIDs are below FirstNormalObjectId, and no SQL function takes one, so
 *	  no caller can take or wait for this tag (in pg_locks: locktype
 *	  "object", classid jobq.queues).  Two names with one hash share a
 *	  lock, which only makes a drop wait for the other queue's enqueues.
 *
 *	  The lock lives to the end of the transaction; it cannot be released
 *	  at the end of the enqueue's statement, because a drop that got it
 *	  then would not see the uncommitted job and would leave it behind.  So
 *	  a transaction takes at most JOBQ_QUEUES_PER_XACT_MAX of them: past
 *	  that (54000), before the shared lock table runs out for everyone.
 *
 *	  Taken before the statement that reads the queue, so that statement's
 *	  snapshot is taken after the wait.  The OID comes from the queue
 *	  cache; when invalidations processed after the wait change it (the
 *	  extension was dropped and created again), the lock is taken again
 *	  under the new OID.
 */
void
jobq_lock_queue_name(text *queue, int mode)
{
	LOCKTAG		tag;
	uint32		h = hash_bytes((const unsigned char *) VARDATA_ANY(queue),
							   VARSIZE_ANY_EXHDR(queue));
	Oid			relid = jobq_queues_relid();

	if (xact_queue_locks_lxid != MyProc->lxid)
	{
		xact_queue_locks_lxid = MyProc->lxid;
		xact_queue_locks = 0;
	}

	for (;;)
	{
		LockAcquireResult res;
		Oid			now;

		SET_LOCKTAG_OBJECT(tag, MyDatabaseId, relid, h, 0);
		if (xact_queue_locks >= JOBQ_QUEUES_PER_XACT_MAX &&
			!LockHeldByMe(&tag, mode))
			xact_queue_locks = held_queue_locks(relid);
		if (xact_queue_locks >= JOBQ_QUEUES_PER_XACT_MAX &&
			!LockHeldByMe(&tag, mode))
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("jobq: a transaction may use at most %d queues",
							JOBQ_QUEUES_PER_XACT_MAX),
					 errdetail("Each queue a transaction enqueues into holds a lock until it ends."),
					 errhint("Commit before enqueueing into more queues.")));
		res = LockAcquire(&tag, mode, false, false);
		if (res == LOCKACQUIRE_OK)
			xact_queue_locks++;

		AcceptInvalidationMessages();
		now = jobq_queues_relid();
		if (now == relid)
			return;
		if (res == LOCKACQUIRE_OK)
		{
			LockRelease(&tag, mode, false);
			xact_queue_locks--;
		}
		relid = now;
	}
}
