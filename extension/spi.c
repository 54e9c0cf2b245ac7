/*-------------------------------------------------------------------------
 *
 * spi.c
 *	  SPI helpers: the statement tables and their plan cache, SPI calls
 *	  with their failures reported, set-returning results.
 *
 * Every statement jobq runs is fixed text with parameters, declared as
 * data next to its code: each C file has a table of JobqStatement (name,
 * text, argument types) indexed by an enum of its own, with COL_* names
 * for the result columns it reads.  The shared fragments of those texts
 * are in jobq_sql.h.  jobq_plan() prepares a statement on first use and
 * keeps the plan in the table's slot: SPI_keepplan moves the plan out of
 * the SPI procedure context, which is freed at SPI_finish, into
 * CacheMemoryContext's care, so the plan survives the call and later
 * calls skip parse analysis.  Plan invalidation (ALTER TABLE, new
 * indexes) is handled by the plan cache.  jobq._statement(name) returns
 * a table's text, so that tests check the very statement the C runs.
 *
 * The plans are generic (CURSOR_OPT_GENERIC_PLAN): planned once, not per
 * call.  Left to choose, the plan cache kept re-planning the claim for
 * every call with the parameter values (its custom plans looked cheaper
 * than the generic one), and planning was a third of a claim's CPU.  The
 * statements are written so that their generic plans use the right
 * indexes whatever the values (sql/jobq_explain.sql checks this).
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/spi.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"
#include "groups.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(jobq_statement);

/* Every table of statements, for jobq._statement */
static const JobqStatements *const statement_tables[] = {
	&jobq_ack_statements,
	&jobq_admin_statements,
	&jobq_await_statements,
	&jobq_events_statements,
	&jobq_finished_statements,
	&jobq_audit_statements,
	&jobq_bulk_statements,
	&jobq_claim_statements,
	&jobq_counters_statements,
	&jobq_counts_statements,
	&jobq_consumers_statements,
	&jobq_enqueue_statements,
	&jobq_flows_statements,
	&jobq_flow_repair_statements,
	&jobq_grants_statements,
	&jobq_health_statements,
	&jobq_inspect_statements,
	&jobq_metrics_statements,
	&jobq_pop_statements,
	&jobq_queue_cache_statements,
	&jobq_queues_statements,
	&jobq_sweep_statements,
	&jobq_workers_statements,
	&jobq_schedules_statements,
	&jobq_tick_statements,
	&jobq_groups_statements,
	&jobq_group_claim_statements,
	&jobq_claim_limits_statements,
	&jobq_claim_slots_statements,
	&jobq_groups_admin_statements,
	&jobq_groups_reconcile_statements,
	&jobq_fail_rate_limited_statements,
	&jobq_group_counts_statements,
	&jobq_spawn_statements,
	&jobq_checkpoint_statements,
};

/*
 * jobq_prepare
 *	  Prepare sql with the given parameter types as a generic plan and keep
 *	  it for the life of the backend.  Must be called inside SPI_connect/SPI_finish.
 *	  Never returns NULL: a failure to prepare fixed text is a bug.  The
 *	  statement tables go through jobq_plan; the shared-memory services
 *	  (relay.c, sweeper.c) call this directly.
 */
SPIPlanPtr
jobq_prepare(const char *sql, int nargs, Oid *argtypes)
{
	SPIPlanPtr	plan;

	plan = SPI_prepare_cursor(sql, nargs, argtypes, CURSOR_OPT_GENERIC_PLAN);
	if (plan == NULL)
		elog(ERROR, "jobq: SPI_prepare failed: %s",
			 SPI_result_code_string(SPI_result));
	if (SPI_keepplan(plan) != 0)
		elog(ERROR, "jobq: SPI_keepplan failed");
	return plan;
}

/*
 * jobq_prepare_statement
 *	  Prepare statement index of set and keep its plan in the set's slot
 *	  (jobq_plan calls this on first use).  Inside SPI.
 */
SPIPlanPtr
jobq_prepare_statement(const JobqStatements *set, int index)
{
	const JobqStatement *st;

	Assert(index >= 0 && index < set->count);
	if (set->build != NULL)
		set->build();
	st = &set->statements[index];
	Assert(st->nargs <= JOBQ_STATEMENT_MAX_ARGS);
	set->plans[index] = jobq_prepare(st->sql, st->nargs, (Oid *) st->argtypes);
	return set->plans[index];
}

/*
 * jobq._statement(name text) -> text  (C name jobq_statement)
 *	  The text of the statement called name in the tables, for tests that
 *	  EXPLAIN it (sql/jobq_explain.sql).  42704 for an unknown name.
 *	  Internal: the 0.2.0 script grants EXECUTE on it to no role.
 */
Datum
jobq_statement(PG_FUNCTION_ARGS)
{
	char	   *name;

	jobq_require(fcinfo, 0, "name");
	name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	for (int t = 0; t < lengthof(statement_tables); t++)
	{
		const JobqStatements *set = statement_tables[t];

		if (set->build != NULL)
			set->build();
		for (int i = 0; i < set->count; i++)
			if (strcmp(set->statements[i].name, name) == 0)
				PG_RETURN_TEXT_P(cstring_to_text(set->statements[i].sql));
	}
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("statement \"%s\" does not exist", name)));
	PG_RETURN_NULL();			/* keep compiler quiet */
}

/*
 * jobq_spi_connect / jobq_spi_finish
 *	  SPI_connect and SPI_finish with their "cannot happen" failures
 *	  reported.
 */
void
jobq_spi_connect(void)
{
	int			rc = SPI_connect();

	if (rc != SPI_OK_CONNECT)
		elog(ERROR, "jobq: SPI_connect failed: %s", SPI_result_code_string(rc));
}

void
jobq_spi_finish(void)
{
	int			rc = SPI_finish();

	if (rc != SPI_OK_FINISH)
		elog(ERROR, "jobq: SPI_finish failed: %s", SPI_result_code_string(rc));
}

/*
 * jobq_spi_check
 *	  Check the result of SPI_execute_plan against the exact SPI_OK_* code
 *	  the statement must produce.
 */
void
jobq_spi_check(int rc, int expected, const char *what)
{
	if (rc != expected)
		elog(ERROR, "jobq: %s failed: %s", what, SPI_result_code_string(rc));
}

/*
 * jobq_srf_begin
 *	  Set up a set-returning function in materialize mode: the rows go into
 *	  a tuplestore that lives in the per-query context, so they survive
 *	  SPI_finish.  Returns the store; *tupdesc receives the result shape
 *	  (for SETOF scalar functions, a one-column descriptor).
 *	  Written here rather than with InitMaterializedSRF, which wants a
 *	  composite result, so that SETOF scalar functions use it too.
 */
Tuplestorestate *
jobq_srf_begin(FunctionCallInfo fcinfo, TupleDesc *tupdesc)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext oldcxt;
	TupleDesc	desc;
	Oid			rettype;
	Tuplestorestate *store;

	if (rsinfo == NULL || !IsA(rsinfo, ReturnSetInfo) ||
		(rsinfo->allowedModes & SFRM_Materialize) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("set-valued function called in context that cannot accept a set")));

	oldcxt = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	switch (get_call_result_type(fcinfo, &rettype, &desc))
	{
		case TYPEFUNC_COMPOSITE:
			desc = CreateTupleDescCopy(desc);
			break;
		case TYPEFUNC_SCALAR:
			desc = CreateTemplateTupleDesc(1);
			TupleDescInitEntry(desc, (AttrNumber) 1, "value", rettype, -1, 0);
			break;
		default:
			elog(ERROR, "jobq: unexpected result type of a set-returning function");
	}
	store = tuplestore_begin_heap(true, false, work_mem);
	rsinfo->returnMode = SFRM_Materialize;
	rsinfo->setResult = store;
	rsinfo->setDesc = desc;
	MemoryContextSwitchTo(oldcxt);

	*tupdesc = desc;
	return store;
}

/*
 * jobq_spi_column_map
 *	  For each column of desc, the column (1-based) of the last SPI result
 *	  that fills it: the same position, or with by_name the column of the
 *	  same name, wherever it is.  A mismatch is a bug in our fixed SQL,
 *	  hence elog.
 */
int *
jobq_spi_column_map(TupleDesc desc, bool by_name)
{
	TupleDesc	from_desc = SPI_tuptable->tupdesc;
	int		   *from = palloc(sizeof(int) * desc->natts);

	if (!by_name && from_desc->natts != desc->natts)
		elog(ERROR, "jobq: statement returned %d columns, expected %d",
			 from_desc->natts, desc->natts);
	for (int c = 0; c < desc->natts; c++)
	{
		const char *name = NameStr(TupleDescAttr(desc, c)->attname);

		from[c] = by_name ? SPI_fnumber(from_desc, name) : c + 1;
		if (from[c] <= 0)
			elog(ERROR, "jobq: statement returned no column \"%s\"", name);
	}
	return from;
}

/*
 * jobq_srf_put_spi
 *	  Append every row of the last SPI result to store.  The statement's
 *	  columns must match desc in number and type; a mismatch is a bug in
 *	  our fixed SQL, hence elog.
 */
void
jobq_srf_put_spi(Tuplestorestate *store, TupleDesc desc)
{
	SPITupleTable *tt = SPI_tuptable;
	Datum	   *values;
	bool	   *nulls;

	if (tt == NULL)
		return;
	if (tt->tupdesc->natts != desc->natts)
		elog(ERROR, "jobq: statement returned %d columns, expected %d",
			 tt->tupdesc->natts, desc->natts);

	values = palloc(sizeof(Datum) * desc->natts);
	nulls = palloc(sizeof(bool) * desc->natts);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		heap_deform_tuple(tt->vals[i], tt->tupdesc, values, nulls);
		tuplestore_putvalues(store, desc, values, nulls);
	}
	pfree(values);
	pfree(nulls);
}

/*
 * jobq_srf_put_spi_by_name
 *	  As jobq_srf_put_spi, but each column of desc takes the statement's
 *	  column of the same name, wherever it is: for a result whose order
 *	  the SQL function fixed and the statement need not follow.
 */
void
jobq_srf_put_spi_by_name(Tuplestorestate *store, TupleDesc desc)
{
	jobq_srf_put_spi_rows(store, desc, true, NULL, NULL);
}

/*
 * jobq_srf_put_spi_rows
 *	  Append the rows of the last SPI result for which keep(row, arg) is
 *	  true (every row when keep is NULL), their columns taken by position
 *	  or by name (jobq_spi_column_map).  keep may run SPI statements of
 *	  its own, at a new SPI level.
 */
void
jobq_srf_put_spi_rows(Tuplestorestate *store, TupleDesc desc, bool by_name,
					  bool (*keep) (HeapTuple row, TupleDesc rowdesc, void *arg), void *arg)
{
	SPITupleTable *tt = SPI_tuptable;
	uint64		n = SPI_processed;
	int		   *from;
	Datum	   *values;
	bool	   *nulls;

	if (tt == NULL)
		return;
	from = jobq_spi_column_map(desc, by_name);
	values = palloc(sizeof(Datum) * desc->natts);
	nulls = palloc(sizeof(bool) * desc->natts);
	for (uint64 i = 0; i < n; i++)
	{
		if (keep != NULL && !keep(tt->vals[i], tt->tupdesc, arg))
			continue;
		for (int c = 0; c < desc->natts; c++)
			values[c] = SPI_getbinval(tt->vals[i], tt->tupdesc, from[c], &nulls[c]);
		tuplestore_putvalues(store, desc, values, nulls);
	}
	pfree(from);
	pfree(values);
	pfree(nulls);
}

/*
 * jobq_spi_getint64 / jobq_spi_getbool
 *	  Column col (1-based) of row row of the last SPI result; NULL gives
 *	  *isnull = true and 0.
 */
int64
jobq_spi_getint64(uint64 row, int col, bool *isnull)
{
	Datum		d = SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, col, isnull);

	return *isnull ? 0 : DatumGetInt64(d);
}

bool
jobq_spi_getbool(uint64 row, int col, bool *isnull)
{
	Datum		d = SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, col, isnull);

	return *isnull ? false : DatumGetBool(d);
}

/*
 * jobq_xact_array_grow
 *	  Grow a per-transaction array of notes that is full: *cap elements of
 *	  elemsize bytes in TopTransactionContext (array NULL and *cap 0 at the
 *	  start of a transaction).  Returns the array with room for twice as
 *	  many, at least 8, and updates *cap.
 */
void *
jobq_xact_array_grow(void *array, int *cap, Size elemsize)
{
	int			newcap = *cap == 0 ? 8 : *cap * 2;

	array = array == NULL ?
		MemoryContextAlloc(TopTransactionContext, elemsize * newcap) :
		repalloc(array, elemsize * newcap);
	*cap = newcap;
	return array;
}

/*
 * jobq_xact_array_subxact
 *	  At the end of a subtransaction, for a per-transaction array of n
 *	  notes of elemsize bytes whose int at level_offset is the nesting
 *	  level that took each: drop the notes the subtransaction took if it
 *	  rolled back, hand them to its parent if it committed.  Returns how
 *	  many notes are left (kept in order).
 */
int
jobq_xact_array_subxact(void *array, int n, Size elemsize, Size level_offset, bool committed)
{
	char	   *notes = array;
	int			level = GetCurrentTransactionNestLevel();
	int			kept = 0;

	for (int i = 0; i < n; i++)
	{
		int		   *note_level = (int *) (notes + i * elemsize + level_offset);

		if (*note_level >= level)
		{
			if (!committed)
				continue;
			*note_level = level - 1;
		}
		if (kept != i)
			memcpy(notes + kept * elemsize, notes + i * elemsize, elemsize);
		kept++;
	}
	return kept;
}

/*
 * jobq_fenced_read
 *	  The body of a function (id bigint, token uuid) -> one value of a
 *	  running job (its checkpoint, its dependencies' results): both
 *	  arguments required, the caller allowed to claim the job's queue, and
 *	  the first column of statement st of set ($1 id, $2 token) returned,
 *	  copied out of SPI; NULL when it returns no row (the statement is
 *	  what fences the read by the token) or NULL.
 */
Datum
jobq_fenced_read(FunctionCallInfo fcinfo, const JobqStatements *set, int st, const char *what)
{
	Datum		args[2];
	Datum		out = (Datum) 0;
	bool		isnull = true;
	int			rc;

	jobq_require(fcinfo, 0, "id");
	jobq_require(fcinfo, 1, "token");
	args[0] = PG_GETARG_DATUM(0);
	args[1] = PG_GETARG_DATUM(1);
	jobq_spi_connect();
	jobq_check_job(args[0], JOBQ_PRIV_CLAIM);
	rc = SPI_execute_plan(jobq_plan(set, st), args, NULL, true, 1);
	jobq_spi_check(rc, SPI_OK_SELECT, what);
	if (SPI_processed > 0)
	{
		out = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		if (!isnull)
			out = SPI_datumTransfer(out, false, -1);
	}
	jobq_spi_finish();
	if (isnull)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(out);
}
