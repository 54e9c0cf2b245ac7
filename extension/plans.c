/*-------------------------------------------------------------------------
 *
 * plans.c
 *	  SPI helpers: prepare a statement once per backend and keep it.
 *
 * Every statement jobq runs is fixed text with parameters, so each C file
 * keeps one static SPIPlanPtr per statement and fills it on first use via
 * jobq_prepare().  SPI_keepplan moves the plan out of the SPI procedure
 * context, which is freed at SPI_finish, into CacheMemoryContext's care, so
 * the plan survives the call and later calls skip parse analysis.  Plan
 * invalidation (ALTER TABLE, new indexes) is handled by the plan cache.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/plans.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"

/*
 * jobq_prepare
 *	  Prepare sql with the given parameter types and keep the plan for the
 *	  life of the backend.  Must be called inside SPI_connect/SPI_finish.
 *	  Never returns NULL: a failure to prepare fixed text is a bug.
 */
SPIPlanPtr
jobq_prepare(const char *sql, int nargs, Oid *argtypes)
{
	SPIPlanPtr	plan;

	plan = SPI_prepare(sql, nargs, argtypes);
	if (plan == NULL)
		elog(ERROR, "jobq: SPI_prepare failed: %s",
			 SPI_result_code_string(SPI_result));
	if (SPI_keepplan(plan) != 0)
		elog(ERROR, "jobq: SPI_keepplan failed");
	return plan;
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
