/*-------------------------------------------------------------------------
 *
 * limits.c
 *	  jobq_limits: the limits this server was built with, as SQL rows.
 *
 * The limits are those of client/include/jobq-contract.h (JOBQ_LIMITS),
 * the header libjobq is built with too.  A client, or a test, compares
 * its own copy with these rows instead of trusting that both sides were
 * built from the same header.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/limits.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"

#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(jobq_limits);

/*
 * jobq_limits() -> setof (name text, value bigint, unit text)
 *	  One row per entry of JOBQ_LIMITS, in its order.  Only the 0.2.0
 *	  script defines the SQL function.
 */
Datum
jobq_limits(PG_FUNCTION_ARGS)
{
	static const struct
	{
		const char *name;
		int64		value;
		const char *unit;
	}			limits[] = {
#define JOBQ_LIMIT_ROW(NAME, VALUE, UNIT) {NAME, VALUE, UNIT},
		JOBQ_LIMITS(JOBQ_LIMIT_ROW)
#undef JOBQ_LIMIT_ROW
	};
	TupleDesc	desc;
	Tuplestorestate *store = jobq_srf_begin(fcinfo, &desc);

	for (int i = 0; i < lengthof(limits); i++)
	{
		Datum		out[3];
		bool		nulls[3] = {false, false, false};

		out[0] = CStringGetTextDatum(limits[i].name);
		out[1] = Int64GetDatum(limits[i].value);
		out[2] = CStringGetTextDatum(limits[i].unit);
		tuplestore_putvalues(store, desc, out, nulls);
	}
	return (Datum) 0;
}
