/*-------------------------------------------------------------------------
 *
 * list_filter.c
 *	  Job filters: the jsonb a caller passes to jobq_list (and to the bulk
 *	  actions), checked, bound to statement parameters, and the choice of
 *	  the statement variant whose index finds the rows (list_filter.h).
 *
 * Every key is checked before any statement runs: an unknown key or a
 * value of the wrong type is 22023 naming the key, so that a typo never
 * reads as "no filter".  The error and payload filters read what only
 * jobq_reader may read (a monitor could otherwise probe payloads a
 * character at a time): 42501 for other callers.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/list_filter.c
 *
 *-------------------------------------------------------------------------
 */
#include "list_filter.h"

#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/formatting.h"
#include "utils/guc.h"
#include "utils/numeric.h"

int			jobq_list_scan_limit = JOBQ_LIST_SCAN_LIMIT_DEFAULT;

/* The filter keys, in the order the hint lists them */
static const char *const filter_keys[] = {
	"priority_min", "priority_max", "worker", "key", "key_prefix",
	"since", "until", "ids", "error", "payload"
};

/*
 * jobq_list_filter_init
 *	  Define jobq.list_scan_limit (from _PG_init).
 */
void
jobq_list_filter_init(void)
{
	DefineCustomIntVariable("jobq.list_scan_limit",
							"Rows a job filter is evaluated on at most, per call.",
							"Filters that no index answers (error text, payload, worker...) "
							"stop after this many rows and report scan_truncated.",
							&jobq_list_scan_limit,
							JOBQ_LIST_SCAN_LIMIT_DEFAULT, 1, INT_MAX,
							PGC_USERSET, 0,
							NULL, NULL, NULL);
}

static void
bad_filter(const char *key, const char *expected)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("filter \"%s\" must be %s", key, expected)));
}

/* Whether v is a whole number within [min, max]; *out is it */
static bool
whole_number(JsonbValue *v, int64 min, int64 max, int64 *out)
{
	char	   *digits;
	char	   *end;
	long long	n;

	if (v->type != jbvNumeric)
		return false;
	digits = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(v->val.numeric)));
	errno = 0;
	n = strtoll(digits, &end, 10);
	if (errno != 0 || *end != '\0' || n < min || n > max)
		return false;
	*out = (int64) n;
	return true;
}

/* A jsonb number that is a whole number within [min, max], or 22023 */
static int64
filter_integer(const char *key, JsonbValue *v, int64 min, int64 max)
{
	int64		n = 0;

	if (!whole_number(v, min, max, &n))
		bad_filter(key, psprintf("a whole number between " INT64_FORMAT " and " INT64_FORMAT,
								 min, max));
	return n;
}

/* A jsonb string of 1..max bytes, or 22023 */
static text *
filter_text(const char *key, JsonbValue *v, int max)
{
	if (v->type != jbvString || v->val.string.len == 0 || v->val.string.len > max)
		bad_filter(key, psprintf("a string of 1 to %d bytes", max));
	return cstring_to_text_with_len(v->val.string.val, v->val.string.len);
}

/*
 * A jsonb string that is a timestamp with time zone, or 22023.  The input
 * function's own error (22007, without the key) is replaced by ours.
 */
static TimestampTz
filter_timestamp(const char *key, JsonbValue *v)
{
	MemoryContext cxt = CurrentMemoryContext;
	char	   *s;
	volatile TimestampTz t = 0;
	volatile bool ok = true;

	if (v->type != jbvString)
		bad_filter(key, "a timestamp (a string)");
	s = pnstrdup(v->val.string.val, v->val.string.len);
	PG_TRY();
	{
		t = DatumGetTimestampTz(DirectFunctionCall3(timestamptz_in, CStringGetDatum(s),
													ObjectIdGetDatum(InvalidOid),
													Int32GetDatum(-1)));
	}
	PG_CATCH();
	{
		/* rethrown as ours at once: nothing ran after the input function */
		MemoryContextSwitchTo(cxt);
		FlushErrorState();
		ok = false;
	}
	PG_END_TRY();
	if (!ok || TIMESTAMP_NOT_FINITE(t))
		bad_filter(key, "a finite timestamp");
	return t;
}

/* A jsonb array of 1..JOBQ_LIST_IDS_MAX job ids, as int8[], or 22023 */
static ArrayType *
filter_ids(const char *key, JsonbValue *v)
{
	JsonbIterator *it;
	JsonbValue	e;
	JsonbIteratorToken tok;
	Datum	   *items;
	int			n = 0;
	int64		id = 0;
	const char *expected = "an array of 1 to " CppAsString2(JOBQ_LIST_IDS_MAX) " job ids";

	if (v->type != jbvBinary || !JsonContainerIsArray(v->val.binary.data) ||
		JsonContainerIsScalar(v->val.binary.data))
		bad_filter(key, expected);
	items = palloc(sizeof(Datum) * JOBQ_LIST_IDS_MAX);
	it = JsonbIteratorInit(v->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &e, true)) != WJB_DONE)
	{
		if (tok != WJB_ELEM)
			continue;
		if (n == JOBQ_LIST_IDS_MAX)
			bad_filter(key, expected);
		if (!whole_number(&e, 1, PG_INT64_MAX, &id))
			bad_filter(key, expected);
		items[n++] = Int64GetDatum(id);
	}
	if (n == 0)
		bad_filter(key, expected);
	return construct_array(items, n, INT8OID, sizeof(int64), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
}

/* 42501 unless the caller reads payloads and error texts */
static void
require_reader(const char *key)
{
	if (!jobq_caller_reads_payloads())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("filter \"%s\" needs the privileges of jobq_reader", key),
				 errdetail("It reads payloads or error texts.")));
}

/*
 * jobq_list_filter_parse
 *	  Check filters (a jsonb object, possibly empty) and fill f.  Every
 *	  error is raised before the caller runs anything.
 */
void
jobq_list_filter_parse(Jsonb *filters, JobqListFilter *f)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	char	   *key = NULL;

	memset(f, 0, sizeof(*f));
	if (!JB_ROOT_IS_OBJECT(filters))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("filters must be a JSON object"),
				 errhint("Filter keys are %s.",
						 jobq_name_list(filter_keys, lengthof(filter_keys), "and"))));

	it = JsonbIteratorInit(&filters->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
		{
			key = pnstrdup(v.val.string.val, v.val.string.len);
			continue;
		}
		if (tok != WJB_VALUE)
			continue;

		if (strcmp(key, "priority_min") == 0)
		{
			f->priority_min = (int32) filter_integer(key, &v, JOBQ_PRIORITY_MIN, JOBQ_PRIORITY_MAX);
			f->has_priority_min = true;
		}
		else if (strcmp(key, "priority_max") == 0)
		{
			f->priority_max = (int32) filter_integer(key, &v, JOBQ_PRIORITY_MIN, JOBQ_PRIORITY_MAX);
			f->has_priority_max = true;
		}
		else if (strcmp(key, "worker") == 0)
			f->worker = filter_text(key, &v, JOBQ_WORKER_NAME_MAX);
		else if (strcmp(key, "key") == 0)
			f->key = filter_text(key, &v, JOBQ_DEDUPE_KEY_MAX);
		else if (strcmp(key, "key_prefix") == 0)
			f->key_prefix = filter_text(key, &v, JOBQ_DEDUPE_KEY_MAX);
		else if (strcmp(key, "since") == 0)
		{
			f->since = filter_timestamp(key, &v);
			f->has_since = true;
		}
		else if (strcmp(key, "until") == 0)
		{
			f->until = filter_timestamp(key, &v);
			f->has_until = true;
		}
		else if (strcmp(key, "ids") == 0)
			f->ids = filter_ids(key, &v);
		else if (strcmp(key, "error") == 0)
		{
			text	   *t = filter_text(key, &v, JOBQ_ERROR_TEXT_MAX);
			char	   *lower = str_tolower(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t),
											DEFAULT_COLLATION_OID);

			require_reader(key);
			f->error = cstring_to_text(lower);
		}
		else if (strcmp(key, "payload") == 0)
		{
			if (v.type != jbvBinary)
				bad_filter(key, "a JSON object or array (payload @> it)");
			require_reader(key);
			f->payload = JsonbValueToJsonb(&v);
		}
		else
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("unknown filter \"%s\"", key),
					 errhint("Filter keys are %s.",
							 jobq_name_list(filter_keys, lengthof(filter_keys), "and"))));
	}

	if (f->has_priority_min && f->has_priority_max && f->priority_min > f->priority_max)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("filter \"priority_min\" must not be above \"priority_max\"")));
	if (f->has_since && f->has_until && f->since >= f->until)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("filter \"since\" must be before \"until\"")));
}

/*
 * jobq_list_filter_bind
 *	  Parameters $1 .. $JOBQ_FILTER_NPARAMS of a filter statement: queue,
 *	  state (NULL: any), now, then the filter's; nulls in SPI's ' '/'n'
 *	  form.
 */
void
jobq_list_filter_bind(const JobqListFilter *f, text *queue, const char *state,
					  TimestampTz now, Datum *values, char *nulls)
{
	for (int i = 0; i < JOBQ_FILTER_NPARAMS; i++)
	{
		values[i] = (Datum) 0;
		nulls[i] = 'n';
	}
#define BIND(i, cond, datum) \
	do { if (cond) { values[(i) - 1] = (datum); nulls[(i) - 1] = ' '; } } while (0)
	BIND(1, true, PointerGetDatum(queue));
	BIND(2, state != NULL, CStringGetTextDatum(state != NULL ? state : ""));
	BIND(3, true, TimestampTzGetDatum(now));
	BIND(4, f->has_priority_min, Int32GetDatum(f->priority_min));
	BIND(5, f->has_priority_max, Int32GetDatum(f->priority_max));
	BIND(6, f->worker != NULL, PointerGetDatum(f->worker));
	BIND(7, f->key != NULL, PointerGetDatum(f->key));
	BIND(8, f->key_prefix != NULL, PointerGetDatum(f->key_prefix));
	BIND(9, f->has_since, TimestampTzGetDatum(f->since));
	BIND(10, f->has_until, TimestampTzGetDatum(f->until));
	BIND(11, f->ids != NULL, PointerGetDatum(f->ids));
	BIND(12, f->error != NULL, PointerGetDatum(f->error));
	BIND(13, f->payload != NULL, JsonbPGetDatum(f->payload));
#undef BIND
}

/*
 * jobq_list_filter_variant
 *	  The variant whose index finds the filter's rows in jobq.jobs or (with
 *	  history) jobq.history: an id list by the primary key, a dedupe key of
 *	  a live job by jobs_dedupe_idx, else the queue's range.
 */
/*
 * schedule_prefix
 *	  Whether a key prefix is exactly "schedule:<name>:", the runs of one
 *	  schedule (the name as jobq_valid_schedule_name allows it).
 */
static bool
schedule_prefix(const text *prefix)
{
	static const char head[] = "schedule:";
	const char *p = VARDATA_ANY(prefix);
	int			len = VARSIZE_ANY_EXHDR(prefix);
	int			n = len - (int) (sizeof(head) - 1) - 1;

	if (n < 1 || n > JOBQ_SCHEDULE_NAME_MAX || memcmp(p, head, sizeof(head) - 1) != 0 ||
		p[len - 1] != ':')
		return false;
	for (int i = sizeof(head) - 1; i < len - 1; i++)
		if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= '0' && p[i] <= '9') ||
			  p[i] == '_' || p[i] == '-'))
			return false;
	return true;
}

JobqFilterVariant
jobq_list_filter_variant(const JobqListFilter *f, bool history)
{
	if (f->ids != NULL)
		return history ? JOBQ_FILTER_HISTORY_IDS : JOBQ_FILTER_LIVE_IDS;
	if (history && f->key_prefix != NULL && schedule_prefix(f->key_prefix))
		return JOBQ_FILTER_HISTORY_SCHEDULE;
	if (history)
		return JOBQ_FILTER_HISTORY_RANGE;
	return f->key != NULL ? JOBQ_FILTER_LIVE_KEY : JOBQ_FILTER_LIVE_RANGE;
}

/*
 * jobq_list_filter_capped
 *	  Whether the match of variant's rows tests anything its index does
 *	  not, so that the rows it reads must be capped at
 *	  jobq.list_scan_limit.  The id and key variants read at most
 *	  JOBQ_LIST_IDS_MAX rows, resp. one.
 */
bool
jobq_list_filter_capped(const JobqListFilter *f, JobqFilterVariant variant)
{
	bool		residual = f->has_priority_min || f->has_priority_max || f->worker != NULL ||
		f->key_prefix != NULL || f->error != NULL || f->payload != NULL;

	switch (variant)
	{
		case JOBQ_FILTER_LIVE_KEY:
		case JOBQ_FILTER_LIVE_IDS:
		case JOBQ_FILTER_HISTORY_IDS:
			return false;
		case JOBQ_FILTER_LIVE_RANGE:
			return residual || f->has_since || f->has_until;
		case JOBQ_FILTER_HISTORY_RANGE:
			return residual || f->key != NULL;
		case JOBQ_FILTER_HISTORY_SCHEDULE:
			/* the prefix is the index's; every other key is not */
			return f->has_priority_min || f->has_priority_max || f->worker != NULL ||
				f->error != NULL || f->payload != NULL || f->key != NULL;
	}
	return true;
}
