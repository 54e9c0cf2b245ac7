/*-------------------------------------------------------------------------
 *
 * version.c
 *	  jobq_server_version(): which release of jobq's SQL this database
 *	  runs, and which release the loaded library was built as.
 *
 * The two differ between "make install" of a new release and ALTER
 * EXTENSION jobq UPDATE in a database: the new library then serves the
 * previous release's SQL (doc/upgrading.md).  Clients (libjobq) read both
 * once per connection to decide whether they can talk to this server.
 *
 * The library version is the control file's default_version, passed in by
 * the Makefile as JOBQ_LIBRARY_VERSION, so it is written in one place.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/version.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/pg_extension.h"
#include "commands/extension.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"

#ifndef JOBQ_LIBRARY_VERSION
#error "JOBQ_LIBRARY_VERSION must be defined by the Makefile (from jobq.control)"
#endif

PG_FUNCTION_INFO_V1(jobq_server_version);

/*
 * installed_sql_version
 *	  pg_extension.extversion of jobq in this database, palloc'd; NULL when
 *	  the extension is not installed (only possible while it is being
 *	  dropped, since the function itself belongs to it).
 *
 * Read straight from the catalog, through its oid index: no SPI, no plan.
 */
static text *
installed_sql_version(void)
{
	Oid			extoid = get_extension_oid("jobq", true);
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;
	text	   *version = NULL;

	if (!OidIsValid(extoid))
		return NULL;
	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_oid, BTEqualStrategyNumber,
				F_OIDEQ, ObjectIdGetDatum(extoid));
	scan = systable_beginscan(rel, ExtensionOidIndexId, true, NULL, 1, &key);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
	{
		bool		isnull;
		Datum		d = heap_getattr(tuple, Anum_pg_extension_extversion,
									 RelationGetDescr(rel), &isnull);

		if (!isnull)
			version = DatumGetTextPCopy(d);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return version;
}

/*
 * jobq_server_version() -> TABLE (sql_version text, library_version text)
 *	  One row.  sql_version: the version of jobq's SQL installed in this
 *	  database (what CREATE or ALTER EXTENSION last brought it to; NULL only
 *	  while the extension is being dropped); library_version: the release
 *	  this jobq.so was built as.
 */
Datum
jobq_server_version(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	Tuplestorestate *store = jobq_srf_begin(fcinfo, &desc);
	Datum		values[2];
	bool		nulls[2] = {false, false};
	text	   *sql_version = installed_sql_version();

	if (sql_version != NULL)
		values[0] = PointerGetDatum(sql_version);
	else
		nulls[0] = true;
	values[1] = CStringGetTextDatum(JOBQ_LIBRARY_VERSION);
	tuplestore_putvalues(store, desc, values, nulls);
	return (Datum) 0;
}
