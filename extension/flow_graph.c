/*-------------------------------------------------------------------------
 *
 * flow_graph.c
 *	  jobq_flow: insert a whole graph of jobs (a flow) in one call.
 *
 * The argument is a JSON array of job objects, in any order:
 *
 *	{"ref": "pdf", "queue": "render", "payload": {...},
 *	 "depends_on": ["upload", 41], "on_dep_failure": "cancel",
 *	 "run_at": "...", "delay": "10 minutes", "priority": 0,
 *	 "max_attempts": 5, "dedupe_key": "..."}
 *
 * ref names the job within the call (unique, 1 to JOBQ_FLOW_REF_MAX
 * bytes); depends_on holds refs of the same call (strings) and ids of
 * existing jobs (numbers).  Every element is read and checked, and the
 * refs sorted topologically (Kahn's algorithm over the local edges), before
 * anything is written; a cycle among refs is 22023 and the message names
 * it.  Then the jobs are inserted in that order through flows.c, each
 * knowing the ids of its local dependencies, all in the caller's
 * transaction and one flow: the flow of the first job inserted (its
 * dependencies' flow, or its own id).  Returns (ref, id, created) per
 * element, in input order; created is false for a job whose dedupe key a
 * live job held (that job's id is returned, and depended on).
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/flow_graph.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"

#include "lib/stringinfo.h"
#include "storage/lockdefs.h"
#include "utils/builtins.h"
#include "utils/numeric.h"

PG_FUNCTION_INFO_V1(jobq_flow);

/* One element of the argument, read */
typedef struct FlowElem
{
	char	   *ref;
	text	   *queue;
	Jsonb	   *payload;
	TimestampTz *run_at;		/* NULL: not given */
	Interval   *delay;			/* NULL: not given */
	int32		priority;
	int32		max_attempts;	/* 0: the queue's */
	text	   *dedupe_key;
	const char *policy;
	int			nlocal;			/* local dependencies: indexes of elems */
	int		   *local;
	int			nids;			/* dependencies on existing jobs */
	int64	   *ids;
	int64		id;				/* once inserted */
	bool		created;
	int			indegree;		/* Kahn's algorithm */
} FlowElem;

/* A ref and its element, sorted by ref for lookups */
typedef struct RefIndex
{
	const char *ref;
	int			elem;
} RefIndex;

static const char *const elem_keys[] = {
	"ref", "queue", "payload", "depends_on", "on_dep_failure", "run_at", "delay",
	"priority", "max_attempts", "dedupe_key"
};

static void
bad_elem(int i, const char *fmt, const char *what) pg_attribute_noreturn();

/*
 * bad_elem
 *	  22023 for element i (1-based in the message), with detail fmt.
 */
static void
bad_elem(int i, const char *fmt, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("jobs[%d]: %s", i + 1, psprintf(fmt, what))));
}

static char *
string_value(JsonbValue *v, int i, const char *key)
{
	if (v->type != jbvString)
		bad_elem(i, "%s must be a string", key);
	return pnstrdup(v->val.string.val, v->val.string.len);
}

static int32
int_value(JsonbValue *v, int i, const char *key)
{
	if (v->type != jbvNumeric)
		bad_elem(i, "%s must be a number", key);
	return DatumGetInt32(DirectFunctionCall1(numeric_int4, NumericGetDatum(v->val.numeric)));
}

static int
cmp_ref(const void *a, const void *b)
{
	return strcmp(((const RefIndex *) a)->ref, ((const RefIndex *) b)->ref);
}

/*
 * find_ref
 *	  The element whose ref is ref, or -1.
 */
static int
find_ref(RefIndex *index, int n, const char *ref)
{
	RefIndex	key = {ref, 0};
	RefIndex   *hit = bsearch(&key, index, n, sizeof(RefIndex), cmp_ref);

	return hit ? hit->elem : -1;
}

/*
 * read_elem
 *	  Read and check element i (container obj) into e; local refs are
 *	  kept as strings in *deprefs (resolved once every ref is known).
 */
static void
read_elem(JsonbContainer *obj, int i, FlowElem *e, List **deprefs, TimestampTz now)
{
	JsonbIterator *it = JsonbIteratorInit(obj);
	JsonbIteratorToken tok;
	JsonbValue	v;
	JsonbValue *f;

	/* no key but the known ones */
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
		{
			bool		known = false;

			for (int k = 0; k < lengthof(elem_keys); k++)
				known |= v.val.string.len == strlen(elem_keys[k]) &&
					memcmp(v.val.string.val, elem_keys[k], v.val.string.len) == 0;
			if (!known)
				bad_elem(i, "unknown key \"%s\"", pnstrdup(v.val.string.val, v.val.string.len));
		}
	}

	if ((f = getKeyJsonValueFromContainer(obj, "ref", 3, NULL)) == NULL)
		bad_elem(i, "%s is required", "ref");
	e->ref = string_value(f, i, "ref");
	if (strlen(e->ref) < 1 || strlen(e->ref) > JOBQ_FLOW_REF_MAX)
		bad_elem(i, "ref must be 1 to %s bytes long", CppAsString2(JOBQ_FLOW_REF_MAX));

	if ((f = getKeyJsonValueFromContainer(obj, "queue", 5, NULL)) == NULL)
		bad_elem(i, "%s is required", "queue");
	{
		char	   *q = string_value(f, i, "queue");

		jobq_check_queue_name(q, strlen(q));
		e->queue = cstring_to_text(q);
	}

	f = getKeyJsonValueFromContainer(obj, "payload", 7, NULL);
	if (f == NULL)
		e->payload = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum("{}")));
	else
		e->payload = JsonbValueToJsonb(f);
	jobq_check_payload(e->payload, "payload");

	{
		TimestampTz *run_at = NULL;
		Interval   *delay = NULL;

		if ((f = getKeyJsonValueFromContainer(obj, "run_at", 6, NULL)) != NULL)
		{
			run_at = palloc(sizeof(TimestampTz));
			*run_at = DatumGetTimestampTz(DirectFunctionCall3(timestamptz_in,
															  CStringGetDatum(string_value(f, i, "run_at")),
															  ObjectIdGetDatum(InvalidOid),
															  Int32GetDatum(-1)));
		}
		if ((f = getKeyJsonValueFromContainer(obj, "delay", 5, NULL)) != NULL)
			delay = DatumGetIntervalP(DirectFunctionCall3(interval_in,
														  CStringGetDatum(string_value(f, i, "delay")),
														  ObjectIdGetDatum(InvalidOid),
														  Int32GetDatum(-1)));
		e->run_at = palloc(sizeof(TimestampTz));
		*e->run_at = jobq_enqueue_run_at(now, run_at, delay);
	}

	e->priority = 0;
	if ((f = getKeyJsonValueFromContainer(obj, "priority", 8, NULL)) != NULL)
		e->priority = int_value(f, i, "priority");
	jobq_check_int_range(e->priority, "priority", JOBQ_PRIORITY_MIN, JOBQ_PRIORITY_MAX);
	e->max_attempts = 0;
	if ((f = getKeyJsonValueFromContainer(obj, "max_attempts", 12, NULL)) != NULL)
	{
		e->max_attempts = int_value(f, i, "max_attempts");
		jobq_check_int_range(e->max_attempts, "max_attempts", 1, JOBQ_MAX_ATTEMPTS_MAX);
	}
	e->dedupe_key = NULL;
	if ((f = getKeyJsonValueFromContainer(obj, "dedupe_key", 10, NULL)) != NULL)
	{
		e->dedupe_key = cstring_to_text(string_value(f, i, "dedupe_key"));
		jobq_check_dedupe_key(e->dedupe_key);
	}
	e->policy = jobq_dep_policy(NULL);
	if ((f = getKeyJsonValueFromContainer(obj, "on_dep_failure", 14, NULL)) != NULL)
		e->policy = jobq_dep_policy(cstring_to_text(string_value(f, i, "on_dep_failure")));

	/* depends_on: refs (strings) and ids (numbers) */
	*deprefs = NIL;
	e->nids = 0;
	e->ids = NULL;
	if ((f = getKeyJsonValueFromContainer(obj, "depends_on", 10, NULL)) != NULL)
	{
		JsonbIterator *dit;
		int			n;

		if (f->type != jbvBinary || !JsonContainerIsArray(f->val.binary.data))
			bad_elem(i, "%s must be an array of refs and job ids", "depends_on");
		n = JsonContainerSize(f->val.binary.data);
		if (n > JOBQ_DEPS_MAX)
			bad_elem(i, "depends_on must hold at most %s dependencies", CppAsString2(JOBQ_DEPS_MAX));
		e->ids = palloc(sizeof(int64) * Max(n, 1));
		dit = JsonbIteratorInit(f->val.binary.data);
		while ((tok = JsonbIteratorNext(&dit, &v, true)) != WJB_DONE)
		{
			if (tok != WJB_ELEM)
				continue;
			if (v.type == jbvString)
				*deprefs = lappend(*deprefs, pnstrdup(v.val.string.val, v.val.string.len));
			else if (v.type == jbvNumeric)
				e->ids[e->nids++] = DatumGetInt64(DirectFunctionCall1(numeric_int8,
																	  NumericGetDatum(v.val.numeric)));
			else
				bad_elem(i, "%s must be an array of refs and job ids", "depends_on");
		}
	}
}

/*
 * name_cycle
 *	  Every element left with indegree > 0 after the sort is on a cycle or
 *	  behind one: walk local dependencies from one of them until an element
 *	  repeats, and raise 22023 naming that cycle.
 */
static void
name_cycle(FlowElem *elems, int n)
{
	int			start = -1;
	int		   *seen = palloc(sizeof(int) * n);
	int		   *path = palloc(sizeof(int) * (n + 1));
	int			len = 0;
	int			cur;
	StringInfoData msg;

	for (int i = 0; i < n && start < 0; i++)
		if (elems[i].indegree > 0)
			start = i;
	for (int i = 0; i < n; i++)
		seen[i] = -1;
	cur = start;
	while (seen[cur] < 0)
	{
		int			next = -1;

		seen[cur] = len;
		path[len++] = cur;
		/* a dependency that is itself still blocked */
		for (int k = 0; k < elems[cur].nlocal && next < 0; k++)
			if (elems[elems[cur].local[k]].indegree > 0)
				next = elems[cur].local[k];
		cur = next;
	}
	initStringInfo(&msg);
	for (int k = seen[cur]; k < len; k++)
		appendStringInfo(&msg, "%s -> ", elems[path[k]].ref);
	appendStringInfoString(&msg, elems[cur].ref);
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("jobs form a cycle: %s", msg.data),
			 errdetail("Each job of the cycle depends on the one after it.")));
}

/*
 * jobq_flow(jobs jsonb) -> setof (ref text, id bigint, created boolean)
 */
Datum
jobq_flow(PG_FUNCTION_ARGS)
{
	jobq_require(fcinfo, 0, "jobs");
	return jobq_flow_insert_graph(fcinfo, PG_GETARG_JSONB_P(0), NULL);
}

/*
 * jobq_flow_insert_graph
 *	  The body of jobq_flow, and of jobq_spawn (spawn.c) with the spawning
 *	  job in spawner (NULL for jobq_flow): read and check jobs, sort them,
 *	  insert them, return the rows of fcinfo's result.
 */
Datum
jobq_flow_insert_graph(FunctionCallInfo fcinfo, Jsonb *jobs, JobqSpawner *spawner)
{
	int			n;
	FlowElem   *elems;
	RefIndex   *index;
	List	  **deprefs;
	int		   *order;
	int			norder = 0;
	int64		flow = 0;
	TimestampTz now = jobq_now();
	TupleDesc	desc;
	Tuplestorestate *store;

	if (!JB_ROOT_IS_ARRAY(jobs) || JB_ROOT_IS_SCALAR(jobs))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("jobs must be a JSON array of job objects")));
	n = JB_ROOT_COUNT(jobs);
	if (n < 1 || n > JOBQ_FLOW_JOBS_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("jobs must hold 1 to %d jobs, not %d", JOBQ_FLOW_JOBS_MAX, n)));

	/* read and check every element */
	elems = palloc0(sizeof(FlowElem) * n);
	deprefs = palloc0(sizeof(List *) * n);
	for (int i = 0; i < n; i++)
	{
		JsonbValue *v = getIthJsonbValueFromContainer(&jobs->root, i);

		if (v == NULL || v->type != jbvBinary || !JsonContainerIsObject(v->val.binary.data))
			bad_elem(i, "%s", "each job must be a JSON object");
		read_elem(v->val.binary.data, i, &elems[i], &deprefs[i], now);
	}

	/* refs: unique, then local dependencies resolved to elements */
	index = palloc(sizeof(RefIndex) * n);
	for (int i = 0; i < n; i++)
	{
		index[i].ref = elems[i].ref;
		index[i].elem = i;
	}
	qsort(index, n, sizeof(RefIndex), cmp_ref);
	for (int i = 1; i < n; i++)
		if (strcmp(index[i - 1].ref, index[i].ref) == 0)
			bad_elem(Max(index[i - 1].elem, index[i].elem), "ref \"%s\" is not unique",
					 index[i].ref);
	for (int i = 0; i < n; i++)
	{
		ListCell   *lc;

		elems[i].local = palloc(sizeof(int) * Max(list_length(deprefs[i]), 1));
		foreach(lc, deprefs[i])
		{
			int			d = find_ref(index, n, lfirst(lc));

			if (d < 0)
				bad_elem(i, "depends_on names unknown ref \"%s\"", lfirst(lc));
			elems[i].local[elems[i].nlocal++] = d;
		}
		if (elems[i].nlocal + elems[i].nids > JOBQ_DEPS_MAX)
			bad_elem(i, "depends_on must hold at most %s dependencies", CppAsString2(JOBQ_DEPS_MAX));
		elems[i].indegree = elems[i].nlocal;
	}

	/* topological order: Kahn's algorithm, dependents found by a scan per round */
	{
		int		   *ndependents = palloc0(sizeof(int) * n);
		int		  **dependents = palloc(sizeof(int *) * n);
		int		   *fill = palloc0(sizeof(int) * n);
		int			head = 0;

		for (int i = 0; i < n; i++)
			for (int k = 0; k < elems[i].nlocal; k++)
				ndependents[elems[i].local[k]]++;
		for (int i = 0; i < n; i++)
			dependents[i] = palloc(sizeof(int) * Max(ndependents[i], 1));
		for (int i = 0; i < n; i++)
			for (int k = 0; k < elems[i].nlocal; k++)
			{
				int			d = elems[i].local[k];

				dependents[d][fill[d]++] = i;
			}
		order = palloc(sizeof(int) * n);
		for (int i = 0; i < n; i++)
			if (elems[i].indegree == 0)
				order[norder++] = i;
		while (head < norder)
		{
			int			cur = order[head++];

			for (int k = 0; k < ndependents[cur]; k++)
				if (--elems[dependents[cur][k]].indegree == 0)
					order[norder++] = dependents[cur][k];
		}
		if (norder < n)
			name_cycle(elems, n);
	}

	/* insert, in that order */
	store = jobq_srf_begin(fcinfo, &desc);
	jobq_spi_connect();
	if (spawner != NULL)
	{
		/* the token checked, the children in the spawner's flow (spawn.c) */
		jobq_spawn_begin(spawner);
		flow = spawner->flow_id;
	}
	for (int o = 0; o < n; o++)
	{
		FlowElem   *e = &elems[order[o]];
		JobqFlowJob job;
		int			np = 0;

		/* spawned by an earlier attempt of the spawner: that job again */
		if (spawner != NULL && jobq_spawn_find(spawner, e->ref, &e->id))
		{
			e->created = false;
			continue;
		}
		memset(&job, 0, sizeof(job));
		jobq_lock_queue_name(e->queue, ShareLock);
		jobq_check_queue(e->queue, JOBQ_PRIV_ENQUEUE);
		if (!jobq_queue_settings(e->queue, &job.settings))
			jobq_queue_not_found(e->queue);
		job.queue = e->queue;
		job.payload = e->payload;
		job.priority = (int16) e->priority;
		job.run_at = *e->run_at;
		job.now = now;
		job.max_attempts = e->max_attempts > 0 ? e->max_attempts : job.settings.max_attempts;
		job.dedupe_key = e->dedupe_key;
		job.policy = e->policy;
		job.flow_id = flow;
		job.parents = palloc(sizeof(int64) * Max(e->nlocal + e->nids, 1));
		for (int k = 0; k < e->nlocal; k++)
			job.parents[np++] = elems[e->local[k]].id;
		for (int k = 0; k < e->nids; k++)
			job.parents[np++] = e->ids[k];
		job.nparents = jobq_dep_ids_sorted(job.parents, np);
		e->id = jobq_flow_insert_job(&job, &e->created);
		if (spawner != NULL)
			jobq_spawn_record(spawner, e->ref, e->id);
		if (flow == 0)
			flow = job.flow_id;
	}
	jobq_spi_finish();

	for (int i = 0; i < n; i++)
	{
		Datum		out[3];
		bool		nulls[3] = {false, false, false};

		out[0] = CStringGetTextDatum(elems[i].ref);
		out[1] = Int64GetDatum(elems[i].id);
		out[2] = BoolGetDatum(elems[i].created);
		tuplestore_putvalues(store, desc, out, nulls);
	}
	return (Datum) 0;
}
