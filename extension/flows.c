/*-------------------------------------------------------------------------
 *
 * flows.c
 *	  Jobs that wait for other jobs: the 'waiting' state, the edges of
 *	  jobq.deps, and their resolution when a parent finishes.
 *
 * Vocabulary:
 *	edge	a row of jobq.deps: child waits for parent, with the edge's
 *			failure policy (on_failure: cancel, ignore or wait) and its state
 *			(pending, satisfied, blocked, cascaded)
 *	flow	the jobs that share a flow_id; every job with a dependency or a
 *			dependent has one, every other job has NULL there
 *	waiting	a live job with pending_deps > 0 unsatisfied edges; not
 *			claimable (it is outside jobs_claim_idx, whose rows are 'ready')
 *
 * A child is inserted together with its edges (jobq_flow_insert_job),
 * pointing only at jobs that exist: cycles cannot be made.  The insert
 * first locks every live parent (FOR NO KEY UPDATE, in id order), which
 * every finishing transition of the parent (a DELETE from jobq.jobs) waits
 * for; and it sets flow_id on a parent that had none, so that the
 * parent's DELETE, re-reading the row after our commit, no longer matches
 * the statements for jobs outside flows (ack.c) and goes through the flow
 * path, which resolves the new edge.  A parent that finished before the
 * lock is found in history and its edge resolved at insert; one found in
 * neither table is an error.  So no edge is ever left pending for a
 * finished parent, whatever the interleaving (specs/iso_flows_*.spec).
 *
 * Resolution runs in the transaction that finishes the parent, so the
 * children it readies are announced at that commit and waiting claims wake
 * (wake.c).  A completed parent satisfies its pending edges and its
 * outcome ({"state": "completed", "result": ...}, the result only up to
 * JOBQ_DEP_RESULT_MAX bytes) is stored on the edge, where the child reads
 * it with jobq_dep_results: the parent's history may then be purged.  A
 * parent that ends dead or cancelled applies each edge's policy: ignore
 * satisfies it (the outcome says how the parent ended), wait blocks it
 * (the child stays waiting until the parent is retried), cancel cancels
 * the child and, in turn, the children of the child (a loop over
 * generations, each generation one set of statements); a child already
 * cancelled by another parent's cascade gets its edge cascaded too (both
 * parents must be retried to bring it back), one cancelled by hand keeps
 * its edges as they were (no retry brings it back).  A parent that
 * completes satisfies its cascaded edges too (a child cancelled by its
 * earlier failure then no longer waits for it).  Children are
 * locked in id order before their counters change, so that two parents
 * finishing at once never deadlock and decrement each child once each.
 *
 * Only jobs with a flow_id pay for any of this: see ack.c for how a
 * complete of any other job runs the statements it ran before flows.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/flows.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"
#include "counters.h"
#include "groups.h"
#include "jobq_sql.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "lib/qunique.h"
#include "storage/lockdefs.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/uuid.h"

PG_FUNCTION_INFO_V1(jobq_dep_results);
PG_FUNCTION_INFO_V1(jobq_flow_jobs);

/*
 * The statements.  $n are described per statement; edges are always
 * found through deps_parent_idx (by parent) or the primary key (by child).
 */
enum
{
	ST_LOCK_PARENTS,
	ST_FINISHED_PARENTS,
	ST_MARK_PARENTS,
	ST_ADD_MEMBER,
	ST_SELF_FLOW,
	ST_INSERT_CHILD,
	ST_INSERT_EDGES,
	ST_SATISFY,
	ST_BLOCK,
	ST_CASCADE,
	ST_CANCEL_NEW,
	ST_UNBLOCK,
	ST_REOPEN_IGNORED,
	ST_REVIVE,
	ST_REVIVED_LOCK,
	ST_REVIVED_REOPEN,
	ST_REVIVED_RECOUNT,
	ST_REJOIN,
	ST_DEP_RESULTS,
	ST_FLOW_JOBS,
	ST_FLOW_LIVE,
	ST_FORGET,
	NUM_STATEMENTS
};

/*
 * The edges of alias A that a parent's end satisfies ($3: of that policy
 * only, or all when NULL) and that it cascades.  Read before the
 * statement's own updates (every part of a statement sees the same
 * snapshot), so that a child's count drops by exactly the edges updated.
 * Each child's edges are probed per parent of $1, by (child, parent), in a
 * subplan the planner cannot turn into a join: a child waiting for 10,000
 * parents is not scanned whole at each one's end.
 */
#define EDGES_TO_SATISFY(A) \
	"(" A ".state = 'pending' AND ($3::text IS NULL OR " A ".on_failure = $3)" \
	" OR " A ".state = 'cascaded' AND $3::text IS NULL)"
#define EDGES_TO_CASCADE(A) \
	A ".state = 'pending' AND " A ".on_failure = 'cancel'"
/*
 * Whether the child of edge alias A was, or is now, cancelled by a
 * cascade: it is waiting (the cascade cancels it), or another parent's
 * failure cancelled it (an edge of it is cascaded).  A child cancelled by
 * hand is neither: its edges stay as they were, and no retry brings it
 * back.
 */
#define CHILD_CASCADES(A) \
	"((SELECT c.state FROM jobq.jobs c WHERE c.id = " A ".child) = 'waiting'" \
	" OR " CHILD_HAS_CASCADED(A ".child", "true") ")"
/*
 * Whether job CHILD has a cascaded edge, to a parent that matches COND
 * (alias o): scalar subqueries, one probe of deps_pkey (and of jobs_pkey
 * in COND) per row, which the planner cannot turn into a hashed subplan
 * or a join that scans the tables
 */
#define CHILD_HAS_CASCADED(CHILD, COND) \
	"COALESCE((SELECT true FROM jobq.deps o WHERE o.child = " CHILD " AND o.state = 'cascaded'" \
	" AND " COND " LIMIT 1), false)"
/* an 'ignore' edge of alias A satisfied by its parent's failure */
#define IGNORED_FAILURE(A) \
	A ".state = 'satisfied' AND " A ".on_failure = 'ignore'" \
	" AND (" A ".outcome OPERATOR(pg_catalog.->>) 'state') IS DISTINCT FROM 'completed'"
/* whether edge (CHILD, PARENT) is one of COND: one probe of deps_pkey */
#define EDGE_OF(CHILD, PARENT, COND) \
	"EXISTS (SELECT 1 FROM jobq.deps y WHERE y.child = " CHILD " AND y.parent = " PARENT \
	" AND " COND ")"

/*
 * The history row of a child cancelled because its dependency DEP ended
 * in state DEP_STATE ($3 is now): the errors gain an entry naming them.
 */
#define CASCADE_ERROR_SQL \
	JOBQ_ERRORS_PUSH_SQL("d.errors", \
						 "pg_catalog.jsonb_build_object('attempt', d.attempt, 'at', $3," \
						 " 'error', pg_catalog.format('dependency %s ended %s', d.dep, d.dep_state)," \
						 " 'truncated', false, 'dependency', d.dep, 'state', d.dep_state)")

/* The history rows of the children in CTE d, cancelled: their ids and queues */
#define CASCADED_HISTORY_SQL \
	" " JOBQ_HISTORY_ROW_FLOW_SQL("'cancelled'", "d.attempt", "NULL", "d.worker", "d.claimed_at", \
								  "$3", CASCADE_ERROR_SQL, "NULL") \
	" RETURNING id, queue"

static const JobqStatement statements[NUM_STATEMENTS] = {
	/* $1 parent ids: the live ones, locked in id order, with their flows */
	[ST_LOCK_PARENTS] = {"flow_lock_parents",
		"SELECT id, flow_id FROM jobq.jobs WHERE id = ANY ($1)"
		" ORDER BY id FOR NO KEY UPDATE",
		1, {INT8ARRAYOID}},
	/* $1 parent ids: the finished ones, their final state and outcome */
	[ST_FINISHED_PARENTS] = {"flow_finished_parents",
		"SELECT id, state::text, flow_id,"
		"  CASE WHEN state = 'completed' THEN"
		"    pg_catalog.jsonb_build_object('state', 'completed', 'result',"
		"      CASE WHEN pg_catalog.octet_length(result::text) <= " CppAsString2(JOBQ_DEP_RESULT_MAX)
		"      THEN result END)"
		"    OPERATOR(pg_catalog.||) CASE WHEN pg_catalog.octet_length(result::text) > "
		CppAsString2(JOBQ_DEP_RESULT_MAX)
		"      THEN '{\"in_history\": true}'::jsonb ELSE '{}'::jsonb END"
		"  ELSE pg_catalog.jsonb_build_object('state', state::text,"
		"    'error', errors OPERATOR(pg_catalog.->) -1 OPERATOR(pg_catalog.->>) 'error') END"
		" FROM jobq.history WHERE id = ANY ($1)",
		1, {INT8ARRAYOID}},
	/*
	 * $1 live parent ids, $2 the flow: parents join it unless in one.
	 * Every parent gets a new row version, also one already in a flow, so
	 * that a complete in a REPEATABLE READ transaction that did not see
	 * this edge fails to serialize instead of missing it.
	 */
	[ST_MARK_PARENTS] = {"flow_mark_parents",
		"WITH u AS ("
		"  UPDATE jobq.jobs SET flow_id = COALESCE(flow_id, $2) WHERE id = ANY ($1)"
		"  RETURNING id, flow_id)"
		" INSERT INTO jobq.flow_jobs (flow_id, id) SELECT u.flow_id, u.id FROM u"
		" ON CONFLICT DO NOTHING",
		2, {INT8ARRAYOID, INT8OID}},
	/* $1 the first job of a new flow: the flow is named after it */
	[ST_SELF_FLOW] = {"flow_self",
		"UPDATE jobq.jobs SET flow_id = id WHERE id = $1",
		1, {INT8OID}},
	/* $1 flow, $2 job: a member of the flow */
	[ST_ADD_MEMBER] = {"flow_add_member",
		"INSERT INTO jobq.flow_jobs (flow_id, id) VALUES ($1, $2) ON CONFLICT DO NOTHING",
		2, {INT8OID, INT8OID}},
	/*
	 * $1 queue, $2 payload, $3 priority, $4 run_at, $5 max_attempts, $6
	 * enqueued_at, $7 dedupe_key, $8 state (waiting or ready), $9 flow, $10
	 * pending edges
	 */
	[ST_INSERT_CHILD] = {"flow_insert_child",
		"INSERT INTO jobq.jobs (queue, state, priority, run_at, attempt, max_attempts,"
		"                       enqueued_at, dedupe_key, payload, flow_id, pending_deps)"
		" VALUES ($1, $8::text::jobq.job_state, $3, $4, 0, $5, $6, $7, $2, $9, $10)"
		" ON CONFLICT (queue, dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING"
		" RETURNING id",
		10, {TEXTOID, JSONBOID, INT2OID, TIMESTAMPTZOID, INT4OID, TIMESTAMPTZOID, TEXTOID,
		TEXTOID, INT8OID, INT4OID}},
	/* $1 child, $2 parents, $3 policy, $4 edge states, $5 outcomes */
	[ST_INSERT_EDGES] = {"flow_insert_edges",
		"INSERT INTO jobq.deps (child, parent, on_failure, state, outcome)"
		" SELECT $1, e.parent, $3, e.state, e.outcome"
		" FROM unnest($2, $4, $5) AS e(parent, state, outcome)",
		5, {INT8OID, INT8ARRAYOID, TEXTOID, TEXTARRAYOID, JSONBARRAYOID}},
	/*
	 * $1 parents, $2 their outcomes, $3 the policy of the edges to satisfy
	 * (NULL: all pending ones, the parents completed); returns the children
	 * made ready, with their queue's notify and paused.
	 *
	 * One statement in three steps, in this order: l locks the waiting
	 * children of every pending edge of the parents, in id order (see the
	 * header), e satisfies the edges, u moves the children's counts.  l
	 * runs first and whole because e's one-time filter counts its rows
	 * (a CTE is read only as far as its reader reads, and LockRows locks
	 * each row as it passes), and u reads e.  A child that a sibling's
	 * transaction changed after this statement's snapshot is locked in its
	 * newest version; u then updates that version (the executor re-checks
	 * u's conditions and computes its counts on it, EvalPlanQual), so two
	 * parents completing at once still decrement a child once each
	 * (specs/iso_flows_fan_in.spec).
	 */
	[ST_SATISFY] = {"flow_satisfy",
		"WITH l AS MATERIALIZED ("
		"  SELECT j.id FROM jobq.jobs j"
		"  WHERE j.id = ANY (ARRAY(SELECT d.child FROM jobq.deps d"
		"                          WHERE d.parent = ANY ($1) AND d.state = 'pending'))"
		"    AND j.state = 'waiting'"
		"  ORDER BY j.id FOR NO KEY UPDATE),"
		" e AS ("
		"  UPDATE jobq.deps d SET state = 'satisfied',"
		"    outcome = $2[pg_catalog.array_position($1, d.parent)]"
		"  WHERE d.parent = ANY ($1) AND " EDGES_TO_SATISFY("d")
		"    AND (SELECT pg_catalog.count(*) FROM l) >= 0"
		"  RETURNING d.child),"
		" u AS ("
		"  UPDATE jobq.jobs j SET (pending_deps, state) = ("
		"    SELECT j.pending_deps - x.k,"
		"      CASE WHEN j.pending_deps - x.k <= 0 THEN 'ready'::jobq.job_state ELSE j.state END"
		"    FROM (SELECT count(*) FILTER (WHERE " EDGE_OF("j.id", "p.parent", EDGES_TO_SATISFY("y")) ")::integer AS k"
		"          FROM unnest($1) AS p(parent)) x)"
		"  WHERE j.id = ANY (ARRAY(SELECT e.child FROM e)) AND j.state = 'waiting'"
		"  RETURNING j.id, j.queue, j.state = 'ready' AS ready, j.run_at)"
		" SELECT u.id, u.queue, u.run_at, q.notify, q.paused"
		" FROM u JOIN jobq.queues q ON q.name = u.queue WHERE u.ready",
		3, {INT8ARRAYOID, JSONBARRAYOID, TEXTOID}},
	/* $1 parents: their 'wait' edges block */
	[ST_BLOCK] = {"flow_block",
		"UPDATE jobq.deps SET state = 'blocked'"
		" WHERE parent = ANY ($1) AND state = 'pending' AND on_failure = 'wait'",
		1, {INT8ARRAYOID}},

	/*
	 * $1 parents, $2 how each ended, $3 now: their 'cancel' edges cascade;
	 * the waiting children move to history as cancelled, naming the first
	 * such parent.  Returns the children cancelled.
	 */
	[ST_CASCADE] = {"flow_cascade",
		"WITH e AS ("
		"  UPDATE jobq.deps x SET state = 'cascaded'"
		"  WHERE x.parent = ANY ($1) AND " EDGES_TO_CASCADE("x") " AND " CHILD_CASCADES("x")
		"  RETURNING x.child),"
		" g AS (DELETE FROM jobq.jobs j"
		"       WHERE j.id = ANY (ARRAY(SELECT e.child FROM e)) AND j.state = 'waiting'"
		"       RETURNING j.*,"
		"         (SELECT min(p.parent) FILTER (WHERE " EDGE_OF("j.id", "p.parent", EDGES_TO_CASCADE("y")) ")"
		"          FROM unnest($1) AS p(parent)) AS dep),"
		" d AS (SELECT g.*, $2[pg_catalog.array_position($1, g.dep)] AS dep_state FROM g)"
		CASCADED_HISTORY_SQL,
		3, {INT8ARRAYOID, TEXTARRAYOID, TIMESTAMPTZOID}},
	/*
	 * $1 a new waiting job, $2 how its dependency $4 ended, $3 now: it is
	 * cancelled at once (a cancel edge to a parent that had failed)
	 */
	[ST_CANCEL_NEW] = {"flow_cancel_new",
		"WITH d AS (DELETE FROM jobq.jobs j WHERE j.id = $1 AND j.state = 'waiting'"
		"           RETURNING j.*, $4::bigint AS dep, $2::text AS dep_state)"
		CASCADED_HISTORY_SQL,
		4, {INT8OID, TEXTOID, TIMESTAMPTZOID, INT8OID}},
	/* $1 parents live again: their blocked edges wait for them again */
	[ST_UNBLOCK] = {"flow_unblock",
		"UPDATE jobq.deps SET state = 'pending'"
		" WHERE parent = ANY ($1) AND state = 'blocked'",
		1, {INT8ARRAYOID}},

	/*
	 * $1 parents live again: the 'ignore' edges that their failure
	 * satisfied wait for their new end, when the child still waits (for
	 * other parents), so that it sees the parent's last end as it would
	 * have had the retry come first.  A child already ready or running
	 * keeps the outcome it was given.  The children are locked in id order
	 * first, as by flow_satisfy, and only those still waiting once locked
	 * are changed.
	 */
	[ST_REOPEN_IGNORED] = {"flow_reopen_ignored",
		"WITH l AS MATERIALIZED ("
		"  SELECT j.id FROM jobq.jobs j"
		"  WHERE j.id = ANY (ARRAY(SELECT d.child FROM jobq.deps d"
		"                          WHERE d.parent = ANY ($1) AND " IGNORED_FAILURE("d") "))"
		"    AND j.state = 'waiting'"
		"  ORDER BY j.id FOR NO KEY UPDATE),"
		" e AS ("
		"  UPDATE jobq.deps d SET state = 'pending', outcome = NULL"
		"  WHERE d.parent = ANY ($1) AND " IGNORED_FAILURE("d")
		"    AND d.child = ANY (ARRAY(SELECT l.id FROM l))"
		"  RETURNING d.child)"
		" UPDATE jobq.jobs j"
		" SET pending_deps = j.pending_deps + (SELECT count(*) FROM e WHERE e.child = j.id)::integer"
		" WHERE j.id = ANY (ARRAY(SELECT e.child FROM e)) AND j.state = 'waiting'",
		1, {INT8ARRAYOID}},

	/*
	 * $1 parents live again, $2 now: the children their cascades cancelled
	 * come back waiting, for every edge not satisfied, unless a failure
	 * of another parent also cancelled them (a cascaded edge to a parent
	 * that is not live: that one must be retried too).  A kept dedupe key
	 * that a live job now holds keeps the child cancelled.  A child
	 * cancelled by hand has no cascaded edge (CHILD_CASCADES) and stays.
	 */
	[ST_REVIVE] = {"flow_revive",
		"WITH c AS ("
		"  UPDATE jobq.deps SET state = 'pending'"
		"  WHERE parent = ANY ($1) AND state = 'cascaded'"
		"  RETURNING child),"
		" ins AS ("
		"  INSERT INTO jobq.jobs (id, queue, state, priority, run_at, attempt, max_attempts,"
		"                         enqueued_at, dedupe_key, errors, payload, flow_id, pending_deps)"
		"  SELECT h.id, h.queue, 'waiting', h.priority, $2, 0, h.max_attempts,"
		"         h.enqueued_at, h.dedupe_key, h.errors, h.payload, h.flow_id,"
		"         (SELECT count(*) FROM jobq.deps e"
		"          WHERE e.child = h.id AND e.state <> 'satisfied')::integer"
		"  FROM jobq.history h"
		"  WHERE h.id = ANY (ARRAY(SELECT DISTINCT c.child FROM c)) AND h.state = 'cancelled'"
		"    AND NOT " CHILD_HAS_CASCADED("h.id", "o.parent <> ALL ($1) AND"
									  " (SELECT p.id FROM jobq.jobs p WHERE p.id = o.parent) IS NULL")
		"  ON CONFLICT (queue, dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING"
		"  RETURNING id, queue),"
		" del AS (DELETE FROM jobq.history h WHERE h.id = ANY (ARRAY(SELECT ins.id FROM ins)))"
		" SELECT ins.id, ins.queue FROM ins",
		2, {INT8ARRAYOID, TIMESTAMPTZOID}},
	/*
	 * $1 revived children, $2 the parents that revived them: the other live
	 * parents of their open edges, locked in id order, before any of those
	 * edges changes.  A parent that completes or fails meanwhile did not
	 * see the child come back (it was in history at its snapshot): its
	 * end is committed before the lock returns, and ST_REVIVED_RECOUNT,
	 * a later statement, sees what it did; one that ends after waits for
	 * this transaction and then sees the child waiting.
	 */
	[ST_REVIVED_LOCK] = {"flow_revived_lock",
		"SELECT j.id FROM jobq.jobs j"
		" WHERE j.id = ANY (ARRAY(SELECT d.parent FROM jobq.deps d"
		"                         WHERE d.child = ANY ($1) AND d.state <> 'satisfied'"
		"                           AND d.parent <> ALL ($2)))"
		" ORDER BY j.id FOR NO KEY UPDATE",
		2, {INT8ARRAYOID, INT8ARRAYOID}},
	/* $1 revived children: their counts, read again after ST_REVIVED_LOCK */
	[ST_REVIVED_RECOUNT] = {"flow_revived_recount",
		"UPDATE jobq.jobs j SET pending_deps ="
		"  (SELECT count(*) FROM jobq.deps e WHERE e.child = j.id AND e.state <> 'satisfied')::integer"
		" WHERE j.id = ANY ($1) AND j.state = 'waiting'",
		1, {INT8ARRAYOID}},
	/*
	 * $1 revived children, $2 the parents that revived them: their other
	 * cascaded edges (to parents retried without dependents, live again:
	 * ST_REVIVE revives no child with one to a parent that is not) wait
	 * for those parents again
	 */
	[ST_REVIVED_REOPEN] = {"flow_revived_reopen",
		"UPDATE jobq.deps SET state = 'pending'"
		" WHERE child = ANY ($1) AND state = 'cascaded' AND parent <> ALL ($2)",
		2, {INT8ARRAYOID, INT8ARRAYOID}},
	/*
	 * $1 a re-driven job: if jobs wait for it again and it is in no flow
	 * (they were enqueued after it had failed), it joins theirs, so that
	 * its complete takes the flow path
	 */
	[ST_REJOIN] = {"flow_rejoin",
		"WITH u AS ("
		"  UPDATE jobq.jobs p SET flow_id = ("
		"    SELECT min(c.flow_id) FROM jobq.deps d JOIN jobq.jobs c ON c.id = d.child"
		"    WHERE d.parent = $1 AND d.state = 'pending')"
		"  WHERE p.id = $1 AND p.flow_id IS NULL"
		"    AND EXISTS (SELECT 1 FROM jobq.deps d WHERE d.parent = $1 AND d.state = 'pending')"
		"  RETURNING p.id, p.flow_id)"
		" INSERT INTO jobq.flow_jobs (flow_id, id) SELECT u.flow_id, u.id FROM u"
		" ON CONFLICT DO NOTHING",
		1, {INT8OID}},
	/* $1 id, $2 token: the outcomes of the satisfied edges, if the token holds */
	[ST_DEP_RESULTS] = {"flow_dep_results",
		"SELECT COALESCE((SELECT pg_catalog.jsonb_object_agg(d.parent::text, d.outcome"
		"                         ORDER BY d.parent)"
		"                 FROM jobq.deps d WHERE d.child = $1 AND d.state = 'satisfied'),"
		"                '{}'::jsonb)"
		" FROM jobq.jobs j WHERE j.id = $1 AND j.token = $2",
		2, {INT8OID, UUIDOID}},

	/*
	 * $1 flow: its jobs in id order, live or finished ('purged' when in
	 * neither table), each with its dependencies and their edges' states;
	 * at most JOBQ_LIST_MAX_ROWS + 1 (the caller says when cut)
	 */
	[ST_FLOW_JOBS] = {"flow_jobs",
		"SELECT m.id, COALESCE(j.queue, h.queue) AS queue,"
		"  COALESCE(j.state::text, h.state::text, 'purged') AS state,"
		"  ARRAY(SELECT d.parent FROM jobq.deps d WHERE d.child = m.id ORDER BY d.parent)"
		"    AS depends_on,"
		"  ARRAY(SELECT d.state FROM jobq.deps d WHERE d.child = m.id ORDER BY d.parent)"
		"    AS dep_states,"
		"  j.pending_deps, COALESCE(j.enqueued_at, h.enqueued_at) AS enqueued_at,"
		"  h.finished_at, COALESCE(j.dedupe_key, h.dedupe_key) AS dedupe_key"
		" FROM jobq.flow_jobs m"
		" LEFT JOIN jobq.jobs j ON j.id = m.id"
		" LEFT JOIN jobq.history h ON h.id = m.id"
		" WHERE m.flow_id = $1"
		" ORDER BY m.id LIMIT " CppAsString2(JOBQ_LIST_MAX_ROWS) " + 1",
		1, {INT8OID}},
	/* $1 flow: its ready and waiting jobs, in id order */
	[ST_FLOW_LIVE] = {"flow_live",
		"SELECT j.id FROM jobq.flow_jobs m JOIN jobq.jobs j ON j.id = m.id"
		" WHERE m.flow_id = $1 AND j.state IN ('ready', 'waiting')"
		" ORDER BY j.id",
		1, {INT8OID}},
	/*
	 * $1 jobs of flows that ended without a history row, $2 their flows:
	 * their own edges (all satisfied: they ran) and their memberships go,
	 * as a purge takes those of a job that had one (JOBQ_FLOW_FORGET_SQL)
	 */
	[ST_FORGET] = {"flow_forget",
		"WITH e AS (DELETE FROM jobq.deps WHERE child = ANY ($1))"
		" DELETE FROM jobq.flow_jobs m USING unnest($2, $1) AS x(flow_id, id)"
		" WHERE m.flow_id = x.flow_id AND m.id = x.id",
		2, {INT8ARRAYOID, INT8ARRAYOID}},
};

static SPIPlanPtr plans[NUM_STATEMENTS];

static void failed_generations(const int64 *first_ids, int n, const char *state,
							   const char *error, TimestampTz now);

const JobqStatements jobq_flows_statements = {statements, NUM_STATEMENTS, plans, NULL};

/*
 * Whether this database runs 0.2.0's SQL (jobq.jobs has flow_id): cached,
 * forgotten on any invalidation of jobq.jobs (ALTER EXTENSION UPDATE adds
 * the column) or of every relation.
 */
static bool flows_known = false;
static bool flows_on = false;
static Oid	flows_jobs_relid = InvalidOid;

/*
 * jobq_flows_inval
 *	  Relcache callback (through queue_cache.c): relid was invalidated.
 */
void
jobq_flows_inval(Oid relid)
{
	if (relid == InvalidOid || relid == flows_jobs_relid)
		flows_known = false;
}

/*
 * jobq_flows_available
 *	  Whether jobq.jobs has the columns of flows (0.2.0's SQL).
 */
bool
jobq_flows_available(void)
{
	if (likely(flows_known))
		return flows_on;
	flows_jobs_relid = get_relname_relid("jobs", get_namespace_oid("jobq", false));
	flows_on = OidIsValid(flows_jobs_relid) &&
		get_attnum(flows_jobs_relid, "flow_id") != InvalidAttrNumber;
	flows_known = true;
	return flows_on;
}

/*
 * require_flows
 *	  0A000 while the database still runs 0.1.0's SQL.
 */
static void
require_flows(void)
{
	if (!jobq_flows_available())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("dependencies need jobq 0.2.0's SQL"),
				 errhint("Run ALTER EXTENSION jobq UPDATE.")));
}

/*
 * jobq_dep_policy
 *	  The policy named by text policy (NULL: the default, cancel), or 22023.
 */
const char *
jobq_dep_policy(text *policy)
{
	static const char *const policies[] = {"cancel", "ignore", "wait"};
	int			len;

	if (policy == NULL)
		return policies[0];
	/* compared in place: every enqueue passes the default */
	len = VARSIZE_ANY_EXHDR(policy);
	for (int i = 0; i < lengthof(policies); i++)
		if (len == strlen(policies[i]) && memcmp(VARDATA_ANY(policy), policies[i], len) == 0)
			return policies[i];
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown on_dep_failure \"%s\"", text_to_cstring(policy)),
			 errhint("Use %s.", jobq_name_list(policies, lengthof(policies), "or"))));
	return NULL;				/* keep compiler quiet */
}

static int
cmp_int64(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return x < y ? -1 : x > y ? 1 : 0;
}

/*
 * jobq_dep_ids
 *	  The parent ids of array depends_on (an int8[]), sorted and without
 *	  repeats, checked: one-dimensional, no NULLs, 1 to JOBQ_DEPS_MAX ids.
 *	  Returns how many; *ids is palloc'd.
 */
int
jobq_dep_ids(ArrayType *depends_on, int64 **ids)
{
	Datum	   *items;
	bool	   *nulls;
	int			n;
	int64	   *out;

	if (ARR_NDIM(depends_on) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("depends_on must be a one-dimensional array")));
	deconstruct_array(depends_on, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
					  &items, &nulls, &n);
	if (n < 1 || n > JOBQ_DEPS_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("depends_on must hold 1 to %d job ids, not %d", JOBQ_DEPS_MAX, n)));
	out = palloc(sizeof(int64) * n);
	for (int i = 0; i < n; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("depends_on must not contain nulls")));
		out[i] = DatumGetInt64(items[i]);
	}
	*ids = out;
	return jobq_dep_ids_sorted(out, n);
}

/*
 * jobq_dep_ids_sorted
 *	  Sort ids[0 .. n-1] in place and drop repeats; returns how many are
 *	  left.
 */
int
jobq_dep_ids_sorted(int64 *ids, int n)
{
	if (n < 2)
		return n;
	qsort(ids, n, sizeof(int64), cmp_int64);
	return (int) qunique(ids, n, sizeof(int64), cmp_int64);
}

static Datum
int8_array(const int64 *v, int n)
{
	Datum	   *d = palloc(sizeof(Datum) * Max(n, 1));

	for (int i = 0; i < n; i++)
		d[i] = Int64GetDatum(v[i]);
	return PointerGetDatum(construct_array(d, n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

static Datum
text_array(const char *const *v, int n)
{
	Datum	   *d = palloc(sizeof(Datum) * Max(n, 1));

	for (int i = 0; i < n; i++)
		d[i] = CStringGetTextDatum(v[i]);
	return PointerGetDatum(construct_array(d, n, TEXTOID, -1, false, TYPALIGN_INT));
}

static Datum
jsonb_array(Datum *v, bool *isnull, int n)
{
	int			dims[1] = {n};
	int			lbs[1] = {1};

	return PointerGetDatum(construct_md_array(v, isnull, 1, dims, lbs, JSONBOID, -1, false,
											  TYPALIGN_INT));
}

/*
 * jobq_flow_announce_readied
 *	  Count and announce the children the last ST_SATISFY made ready
 *	  (columns id, queue, run_at, notify, paused).
 */
void
jobq_flow_announce_readied(TimestampTz now)
{
	SPITupleTable *tt = SPI_tuptable;
	uint64		n = SPI_processed;

	for (uint64 i = 0; i < n; i++)
	{
		bool		isnull;
		text	   *queue = DatumGetTextPP(SPI_getbinval(tt->vals[i], tt->tupdesc, 2, &isnull));
		TimestampTz run_at = DatumGetTimestampTz(SPI_getbinval(tt->vals[i], tt->tupdesc, 3,
															   &isnull));
		bool		notify = DatumGetBool(SPI_getbinval(tt->vals[i], tt->tupdesc, 4, &isnull));
		bool		paused = DatumGetBool(SPI_getbinval(tt->vals[i], tt->tupdesc, 5, &isnull));

		jobq_count(queue, JOBQ_EV_UNBLOCKED, 1);
		jobq_announce_ready(queue, 1, Max(run_at, now), now, notify, paused);
	}
}

/*
 * satisfy
 *	  Lock the waiting children of the pending edges of parents, in id
 *	  order; satisfy the edges (with policy, or all when NULL), storing
 *	  each parent's outcome; ready the children that wait for nothing more.
 */
static void
satisfy(Datum parents, Datum outcomes, const char *policy, TimestampTz now)
{
	Datum		args[3] = {parents, outcomes, policy ? CStringGetTextDatum(policy) : (Datum) 0};
	int			rc;

	rc = SPI_execute_plan(jobq_plan(&jobq_flows_statements, ST_SATISFY), args,
						  policy ? NULL : "  n", false, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "satisfy dependencies");
	jobq_flow_announce_readied(now);
}

/*
 * completed_outcome
 *	  The outcome a completed parent leaves on its edges: its result, or
 *	  when larger than JOBQ_DEP_RESULT_MAX a mark that it is in history.
 */
static Jsonb *
completed_outcome(Jsonb *result)
{
	JsonbParseState *state = NULL;
	JsonbValue	k,
				v;
	JsonbValue *out;

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	k.type = jbvString;
	k.val.string.val = "state";
	k.val.string.len = 5;
	pushJsonbValue(&state, WJB_KEY, &k);
	v.type = jbvString;
	v.val.string.val = "completed";
	v.val.string.len = 9;
	pushJsonbValue(&state, WJB_VALUE, &v);
	k.val.string.val = "result";
	k.val.string.len = 6;
	if (result == NULL || VARSIZE(result) <= JOBQ_DEP_RESULT_MAX)
	{
		pushJsonbValue(&state, WJB_KEY, &k);
		if (result == NULL)
		{
			v.type = jbvNull;
			pushJsonbValue(&state, WJB_VALUE, &v);
		}
		else
		{
			v.type = jbvBinary;
			v.val.binary.data = &result->root;
			v.val.binary.len = VARSIZE(result) - VARHDRSZ;
			pushJsonbValue(&state, WJB_VALUE, &v);
		}
	}
	else
	{
		k.val.string.val = "in_history";
		k.val.string.len = 10;
		pushJsonbValue(&state, WJB_KEY, &k);
		v.type = jbvBool;
		v.val.boolean = true;
		pushJsonbValue(&state, WJB_VALUE, &v);
	}
	out = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	return JsonbValueToJsonb(out);
}

/*
 * failed_outcome
 *	  The outcome a parent that ended in state (dead, cancelled) leaves on
 *	  the edges that ignore it: {"state": ..., "error": ...}.
 */
static Jsonb *
failed_outcome(const char *state, const char *error)
{
	JsonbParseState *ps = NULL;
	JsonbValue	k,
				v;

	pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
	k.type = jbvString;
	k.val.string.val = "state";
	k.val.string.len = 5;
	pushJsonbValue(&ps, WJB_KEY, &k);
	v.type = jbvString;
	v.val.string.val = (char *) state;
	v.val.string.len = strlen(state);
	pushJsonbValue(&ps, WJB_VALUE, &v);
	k.val.string.val = "error";
	k.val.string.len = 5;
	pushJsonbValue(&ps, WJB_KEY, &k);
	if (error == NULL)
		v.type = jbvNull;
	else
	{
		v.type = jbvString;
		v.val.string.val = (char *) error;
		v.val.string.len = strlen(error);
	}
	pushJsonbValue(&ps, WJB_VALUE, &v);
	return JsonbValueToJsonb(pushJsonbValue(&ps, WJB_END_OBJECT, NULL));
}

/*
 * jobq_flow_completed
 *	  Job id, which had a flow_id, completed now with result (NULL for
 *	  none) in this transaction: satisfy its edges and ready the children
 *	  that wait for nothing more.  Inside SPI.
 */
void
jobq_flow_completed(int64 id, Jsonb *result, TimestampTz now)
{
	jobq_flow_completed_many(&id, &result, 1, now);
}

/*
 * jobq_flow_completed_many
 *	  The same for the n jobs ids[], completed with results[] (results
 *	  NULL: none had a result).  Inside SPI.
 */
void
jobq_flow_completed_many(const int64 *ids, Jsonb **results, int n, TimestampTz now)
{
	Datum		parents = int8_array(ids, n);
	Datum	   *outcomes = palloc(sizeof(Datum) * Max(n, 1));
	bool	   *onulls = palloc0(sizeof(bool) * Max(n, 1));

	for (int i = 0; i < n; i++)
		outcomes[i] = JsonbPGetDatum(completed_outcome(results ? results[i] : NULL));
	satisfy(parents, jsonb_array(outcomes, onulls, n), NULL, now);
}

/*
 * jobq_flow_failed
 *	  Job id, which had a flow_id, ended in state ("dead" or "cancelled")
 *	  with error (NULL for none) in this transaction: apply the policy of
 *	  each of its pending edges, generation after generation for the
 *	  children that a cascade cancels.  Inside SPI.
 */
void
jobq_flow_failed(int64 id, const char *state, const char *error, TimestampTz now)
{
	failed_generations(&id, 1, state, error, now);
}

/*
 * jobq_flow_failed_many
 *	  The same for the n jobs ids[], all ended in state, without an error
 *	  text (a cancel, a drop).  Inside SPI.
 */
void
jobq_flow_failed_many(const int64 *ids, int n, const char *state, TimestampTz now)
{
	failed_generations(ids, n, state, NULL, now);
}

/*
 * failed_generations
 *	  The body of jobq_flow_failed(_many): the first generation is the n
 *	  jobs first_ids[], ended in state (error, if any, is theirs); each next
 *	  one the children that the last cascade cancelled.
 */
static void
failed_generations(const int64 *first_ids, int n, const char *state, const char *error,
				   TimestampTz now)
{
	int64	   *ids = palloc(sizeof(int64) * Max(n, 1));
	const char **states = palloc(sizeof(char *) * Max(n, 1));
	bool		first = true;

	for (int i = 0; i < n; i++)
	{
		ids[i] = first_ids[i];
		states[i] = state;
	}
	while (n > 0)
	{
		Datum		parents = int8_array(ids, n);
		Datum	   *outcomes = palloc(sizeof(Datum) * n);
		bool	   *onulls = palloc0(sizeof(bool) * n);
		Datum		args[3];
		int			rc;
		uint64		next;

		/* the children are locked by the satisfy, before the block and the cascade */
		for (int i = 0; i < n; i++)
			outcomes[i] = JsonbPGetDatum(failed_outcome(states[i], first ? error : NULL));
		first = false;
		satisfy(parents, jsonb_array(outcomes, onulls, n), "ignore", now);
		rc = SPI_execute_plan(jobq_plan(&jobq_flows_statements, ST_BLOCK), &parents, NULL,
							  false, 0);
		jobq_spi_check(rc, SPI_OK_UPDATE, "block dependencies");

		args[0] = parents;
		args[1] = text_array(states, n);
		args[2] = TimestampTzGetDatum(now);
		rc = SPI_execute_plan(jobq_plan(&jobq_flows_statements, ST_CASCADE), args, NULL,
							  false, 0);
		jobq_spi_check(rc, SPI_OK_INSERT_RETURNING, "cancel dependent jobs");
		jobq_finished_rows(JOBQ_AWAIT_CANCELLED, 1, 0, 2);

		/* the next generation: the children just cancelled */
		next = SPI_processed;
		ids = palloc(sizeof(int64) * Max(next, 1));
		states = palloc(sizeof(char *) * Max(next, 1));
		for (uint64 i = 0; i < next; i++)
		{
			bool		isnull;
			text	   *queue = DatumGetTextPP(SPI_getbinval(SPI_tuptable->vals[i],
															 SPI_tuptable->tupdesc, 2, &isnull));

			ids[i] = jobq_spi_getint64(i, 1, &isnull);
			states[i] = "cancelled";
			jobq_count(queue, JOBQ_EV_CANCELLED_WAITING, 1);
			jobq_await_note(ids[i], JOBQ_AWAIT_CANCELLED, now, NULL);
		}
		n = (int) next;
	}
}

/*
 * jobq_flow_resolve_rows
 *	  After a statement that ended jobs outside the complete and fail
 *	  paths (jobq_pop, the bulk cancels, jobq_drop_queue): the jobs of
 *	  flows among the rows of the last SPI result (column id_col their id,
 *	  flow_col their flow_id, NULL outside flows) resolve their dependents
 *	  as ended in state: "completed" satisfies their edges (without a
 *	  result), any other applies the edges' policies.  gone: the jobs left
 *	  no history row, and their own edges and memberships go too
 *	  (jobq_flow_forget).  The rows (one per job) are read before any
 *	  statement runs; without a job of a flow among them, nothing runs.
 *	  Inside SPI.
 */
void
jobq_flow_resolve_rows(int id_col, int flow_col, const char *state, bool gone, TimestampTz now)
{
	uint64		rows = SPI_processed;
	int64	   *ids = NULL;
	int64	   *flows = NULL;
	int			n = 0;

	for (uint64 r = 0; r < rows; r++)
	{
		bool		isnull;
		int64		id = jobq_spi_getint64(r, id_col, &isnull);
		int64		flow = jobq_spi_getint64(r, flow_col, &isnull);

		if (isnull)
			continue;
		if (ids == NULL)
		{
			ids = palloc(sizeof(int64) * rows);
			flows = palloc(sizeof(int64) * rows);
		}
		flows[n] = flow;
		ids[n++] = id;
	}
	if (n == 0)
		return;
	if (strcmp(state, "completed") == 0)
		jobq_flow_completed_many(ids, NULL, n, now);
	else
		jobq_flow_failed_many(ids, n, state, now);
	if (gone)
		jobq_flow_forget(ids, flows, n);
}

/*
 * jobq_flow_forget
 *	  The n jobs ids[] of flows flows[] ended without a history row (their
 *	  queue keeps none): forget their own edges and memberships, which no
 *	  purge will see.  Inside SPI.
 */
void
jobq_flow_forget(const int64 *ids, const int64 *flows, int n)
{
	Datum		args[2] = {int8_array(ids, n), int8_array(flows, n)};
	int			rc = SPI_execute_plan(jobq_plan(&jobq_flows_statements, ST_FORGET), args, NULL,
									  false, 0);

	jobq_spi_check(rc, SPI_OK_DELETE, "forget flow jobs");
}

/*
 * jobq_flow_redriven_many
 *	  Finished jobs ids[] (n of them) are live again, re-driven by a bulk
 *	  or queue retry: as jobq_flow_redriven without with_dependents, for
 *	  each.  Inside SPI.
 */
void
jobq_flow_redriven_many(const int64 *ids, int64 n, TimestampTz now)
{
	for (int64 i = 0; i < n; i++)
		(void) jobq_flow_redriven(ids[i], false, now);
}

/*
 * jobq_flow_redriven
 *	  Finished job id is live again (jobq_retry moved it back from
 *	  history with its flow_id): the edges its failure blocked wait for it
 *	  again, so do the 'ignore' edges it satisfied of children still
 *	  waiting, and with with_dependents the children its cascades cancelled
 *	  come back waiting, generation after generation (each one only when no
 *	  other failed parent cancelled it too).  Without with_dependents its
 *	  cascaded edges stay cascaded: they say that its failure cancelled the
 *	  child, until it completes (which satisfies them) or a retry with
 *	  dependents of it or of the child's other parents brings the child
 *	  back.  Returns how many jobs came back with it.  Inside SPI.
 */
int64
jobq_flow_redriven(int64 id, bool with_dependents, TimestampTz now)
{
	Datum		args[2];
	int64	   *ids = palloc(sizeof(int64));
	int			n = 1;
	int64		revived = 0;
	int			rc;

	ids[0] = id;
	while (n > 0)
	{
		Datum		parents = int8_array(ids, n);
		uint64		next;

		rc = SPI_execute_plan(jobq_plan(&jobq_flows_statements, ST_UNBLOCK), &parents, NULL,
							  false, 0);
		jobq_spi_check(rc, SPI_OK_UPDATE, "unblock dependencies");
		rc = SPI_execute_plan(jobq_plan(&jobq_flows_statements, ST_REOPEN_IGNORED), &parents,
							  NULL, false, 0);
		jobq_spi_check(rc, SPI_OK_UPDATE, "reopen ignored dependencies");
		if (!with_dependents)
			break;
		args[0] = parents;
		args[1] = TimestampTzGetDatum(now);
		rc = SPI_execute_plan(jobq_plan(&jobq_flows_statements, ST_REVIVE), args, NULL,
							  false, 0);
		jobq_spi_check(rc, SPI_OK_SELECT, "revive dependent jobs");
		next = SPI_processed;
		ids = palloc(sizeof(int64) * Max(next, 1));
		for (uint64 i = 0; i < next; i++)
		{
			bool		isnull;
			text	   *queue = DatumGetTextPP(SPI_getbinval(SPI_tuptable->vals[i],
															 SPI_tuptable->tupdesc, 2, &isnull));

			ids[i] = jobq_spi_getint64(i, 1, &isnull);
			jobq_count(queue, JOBQ_EV_REVIVED_WAITING, 1);
		}
		if (next > 0)
		{
			args[0] = int8_array(ids, (int) next);
			args[1] = parents;
			rc = SPI_execute_plan(jobq_plan(&jobq_flows_statements, ST_REVIVED_LOCK), args,
								  NULL, false, 0);
			jobq_spi_check(rc, SPI_OK_SELECT, "lock dependencies of revived jobs");
			rc = SPI_execute_plan(jobq_plan(&jobq_flows_statements, ST_REVIVED_REOPEN), args,
								  NULL, false, 0);
			jobq_spi_check(rc, SPI_OK_UPDATE, "reopen revived dependencies");
			rc = SPI_execute_plan(jobq_plan(&jobq_flows_statements, ST_REVIVED_RECOUNT), args,
								  NULL, false, 0);
			jobq_spi_check(rc, SPI_OK_UPDATE, "count revived dependencies");
		}
		revived += next;
		n = (int) next;
	}
	args[0] = Int64GetDatum(id);
	rc = SPI_execute_plan(jobq_plan(&jobq_flows_statements, ST_REJOIN), args, NULL, false, 0);
	jobq_spi_check(rc, SPI_OK_INSERT, "rejoin flow");
	return revived;
}

/*
 * jobq_flow_insert_job
 *	  Insert job (queue settings read, arguments checked) waiting for the
 *	  parents job->parents; returns its id, or the id of the live job that
 *	  holds its dedupe key (*created false, nothing written).  Inside SPI,
 *	  with the queue's name lock held.
 *
 *	  Parents still live are locked (see the header) and join the flow;
 *	  finished ones resolve at once: completed satisfies the edge, dead or
 *	  cancelled applies the policy (cancel: the child is cancelled at
 *	  once, its edges kept so that jobq_retry(parent, true) can bring it
 *	  back).  A parent in neither table is 22023.
 */
int64
jobq_flow_insert_job(JobqFlowJob *job, bool *created)
{
	int			n = job->nparents;
	Datum		pa = int8_array(job->parents, n);
	bool	   *live = palloc0(sizeof(bool) * n);
	const char **edge_state = palloc(sizeof(char *) * n);
	Datum	   *outcome = palloc0(sizeof(Datum) * n);
	bool	   *outcome_null = palloc(sizeof(bool) * n);
	const char *failed_state = NULL;
	int64		failed_parent = 0;
	int64		flow = job->flow_id;
	int64		first_flow = 0;
	int			pending = 0;
	int			nlive = 0;
	int64	   *live_ids = palloc(sizeof(int64) * n);
	int64		id;
	Datum		values[10];
	char		nulls[10];
	int			rc;
	bool		isnull;

	require_flows();

	/*
	 * A grouped queue's claim finds its jobs through their groups, and a job
	 * of a flow has none yet: it would never be claimed.
	 */
	if (jobq_queue_grouped(&job->settings))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("queue \"%s\" groups its jobs: a job with dependencies or dependents cannot go into it yet",
						text_to_cstring(job->queue)),
				 errhint("Put the flow's jobs into queues without a group_mode (doc/flows.md, \"Not yet\").")));
	if (n > 0)
	{
		jobq_check_any_jobs(pa, JOBQ_PRIV_ENQUEUE);
		/* the live parents, locked */
		rc = SPI_execute_plan(jobq_plan(&jobq_flows_statements, ST_LOCK_PARENTS), &pa, NULL,
							  false, 0);
		jobq_spi_check(rc, SPI_OK_SELECT, "lock dependencies");
	}
	for (uint64 r = 0; n > 0 && r < SPI_processed; r++)
	{
		int64		pid = jobq_spi_getint64(r, 1, &isnull);
		int64		pflow = jobq_spi_getint64(r, 2, &isnull);

		for (int i = 0; i < n; i++)
			if (job->parents[i] == pid)
				live[i] = true;
		if (!isnull && first_flow == 0)
			first_flow = pflow;
		live_ids[nlive++] = pid;
	}
	for (int i = 0; i < n; i++)
	{
		edge_state[i] = "pending";
		outcome_null[i] = true;
		if (live[i])
			pending++;
	}

	/* the finished ones, from history */
	if (nlive < n)
	{
		SPITupleTable *tt;
		uint64		found;

		rc = SPI_execute_plan(jobq_plan(&jobq_flows_statements, ST_FINISHED_PARENTS), &pa,
							  NULL, false, 0);
		jobq_spi_check(rc, SPI_OK_SELECT, "read finished dependencies");
		tt = SPI_tuptable;
		found = SPI_processed;
		for (uint64 r = 0; r < found; r++)
		{
			int64		pid = jobq_spi_getint64(r, 1, &isnull);
			char	   *st = TextDatumGetCString(SPI_getbinval(tt->vals[r], tt->tupdesc, 2,
															   &isnull));
			int64		pflow = jobq_spi_getint64(r, 3, &isnull);
			Datum		out;
			int			i;

			if (!isnull && first_flow == 0)
				first_flow = pflow;
			out = SPI_getbinval(tt->vals[r], tt->tupdesc, 4, &isnull);
			for (i = 0; i < n && job->parents[i] != pid; i++)
				;
			if (i == n || live[i])
				continue;
			live[i] = true;		/* found */
			if (strcmp(st, "completed") == 0 || strcmp(job->policy, "ignore") == 0)
			{
				edge_state[i] = "satisfied";
				outcome[i] = SPI_datumTransfer(out, false, -1);
				outcome_null[i] = false;
			}
			else if (strcmp(job->policy, "wait") == 0)
			{
				edge_state[i] = "blocked";
				pending++;
			}
			else
			{
				edge_state[i] = "cascaded";
				pending++;
				if (failed_state == NULL)
				{
					failed_state = pstrdup(st);
					failed_parent = pid;
				}
			}
		}
		for (int i = 0; i < n; i++)
			if (!live[i])
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("dependency " INT64_FORMAT " does not exist (never existed, or purged)",
								job->parents[i]),
						 errhint("A job can depend on live jobs and on finished jobs still kept in history.")));
	}

	if (flow == 0 && n > 0)
		flow = first_flow != 0 ? first_flow : job->parents[0];

	/* the child, waiting unless every edge is satisfied */
	values[0] = PointerGetDatum(job->queue);
	values[1] = JsonbPGetDatum(job->payload);
	values[2] = Int16GetDatum(job->priority);
	values[3] = TimestampTzGetDatum(job->run_at);
	values[4] = Int32GetDatum(job->max_attempts);
	values[5] = TimestampTzGetDatum(job->now);
	values[6] = PointerGetDatum(job->dedupe_key);
	values[7] = CStringGetTextDatum(pending > 0 ? "waiting" : "ready");
	values[8] = Int64GetDatum(flow);
	values[9] = Int32GetDatum(pending);
	memset(nulls, ' ', sizeof(nulls));
	if (job->dedupe_key == NULL)
		nulls[6] = 'n';
	if (flow == 0)
		nulls[8] = 'n';			/* named after the job itself, below */
	rc = SPI_execute_plan(jobq_plan(&jobq_flows_statements, ST_INSERT_CHILD), values, nulls,
						  false, 0);
	jobq_spi_check(rc, SPI_OK_INSERT_RETURNING, "enqueue waiting job");
	if (SPI_processed == 0)
	{
		/* the key is taken: the holder's id, as jobq_enqueue gives it */
		*created = false;
		return jobq_enqueue_find_key(job->queue, job->dedupe_key);
	}
	id = jobq_spi_getint64(0, 1, &isnull);
	*created = true;
	if (flow == 0)
	{
		Datum		sv = Int64GetDatum(id);

		rc = SPI_execute_plan(jobq_plan(&jobq_flows_statements, ST_SELF_FLOW), &sv, NULL,
							  false, 0);
		jobq_spi_check(rc, SPI_OK_UPDATE, "start flow");
		flow = id;
	}
	job->flow_id = flow;

	if (n > 0)
	{
		Datum		ev[5];

		ev[0] = Int64GetDatum(id);
		ev[1] = pa;
		ev[2] = CStringGetTextDatum(job->policy);
		ev[3] = text_array(edge_state, n);
		ev[4] = jsonb_array(outcome, outcome_null, n);
		rc = SPI_execute_plan(jobq_plan(&jobq_flows_statements, ST_INSERT_EDGES), ev, NULL,
							  false, 0);
		jobq_spi_check(rc, SPI_OK_INSERT, "insert dependencies");
	}
	if (nlive > 0)
	{
		Datum		mv[2] = {int8_array(live_ids, nlive), Int64GetDatum(flow)};

		rc = SPI_execute_plan(jobq_plan(&jobq_flows_statements, ST_MARK_PARENTS), mv, NULL,
							  false, 0);
		jobq_spi_check(rc, SPI_OK_INSERT, "mark dependencies");
	}
	{
		Datum		av[2] = {Int64GetDatum(flow), Int64GetDatum(id)};

		rc = SPI_execute_plan(jobq_plan(&jobq_flows_statements, ST_ADD_MEMBER), av, NULL,
							  false, 0);
		jobq_spi_check(rc, SPI_OK_INSERT, "add flow member");
	}

	if (pending == 0)
	{
		jobq_count(job->queue, JOBQ_EV_ENQUEUED, 1);
		jobq_announce_ready(job->queue, 1, job->run_at, job->now, job->settings.notify,
							job->settings.paused);
	}
	else
	{
		jobq_count(job->queue, JOBQ_EV_ENQUEUED_WAITING, 1);
		if (failed_state != NULL)
		{
			/* a cancel edge to a parent that had failed: cancelled at once */
			Datum		cv[4];

			cv[0] = Int64GetDatum(id);
			cv[1] = CStringGetTextDatum(failed_state);
			cv[2] = TimestampTzGetDatum(job->now);
			cv[3] = Int64GetDatum(failed_parent);
			rc = SPI_execute_plan(jobq_plan(&jobq_flows_statements, ST_CANCEL_NEW), cv, NULL,
								  false, 0);
			jobq_spi_check(rc, SPI_OK_INSERT_RETURNING, "cancel dependent job");
			jobq_finished_rows(JOBQ_AWAIT_CANCELLED, 0, id, 2);
			jobq_count(job->queue, JOBQ_EV_CANCELLED_WAITING, SPI_processed);
		}
	}
	return id;
}

/*
 * jobq_dep_results(id bigint, token uuid) -> jsonb
 *	  The outcomes of the job's satisfied dependencies, keyed by parent id
 *	  ({} when none), while token holds the job; NULL when the token is
 *	  stale.
 */
Datum
jobq_dep_results(PG_FUNCTION_ARGS)
{
	require_flows();
	return jobq_fenced_read(fcinfo, &jobq_flows_statements, ST_DEP_RESULTS,
							"read dependency results");
}

/*
 * jobq_flow_live_jobs
 *	  The ids of flow's ready and waiting jobs, in id order; *n their
 *	  number.  Inside SPI.
 */
int64 *
jobq_flow_live_jobs(int64 flow, int *n)
{
	Datum		arg = Int64GetDatum(flow);
	int64	   *ids;
	int			rc;

	require_flows();
	rc = SPI_execute_plan(jobq_plan(&jobq_flows_statements, ST_FLOW_LIVE), &arg, NULL,
						  false, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "read flow");
	*n = (int) SPI_processed;
	ids = palloc(sizeof(int64) * Max(*n, 1));
	for (int i = 0; i < *n; i++)
	{
		bool		isnull;

		ids[i] = jobq_spi_getint64(i, 1, &isnull);
	}
	return ids;
}

/*
 * jobq_flow_jobs(flow_id bigint) -> setof (id, queue, state, depends_on,
 *		dep_states, pending_deps, enqueued_at, finished_at, dedupe_key)
 *	  The jobs of a flow, live and finished, in id order, with their
 *	  edges; jobs of queues the caller may not inspect are left out.  At
 *	  most JOBQ_LIST_MAX_ROWS rows: more is 54000.
 */
Datum
jobq_flow_jobs(PG_FUNCTION_ARGS)
{
	Datum		arg;
	TupleDesc	desc;
	Tuplestorestate *store;
	int			rc;

	jobq_require(fcinfo, 0, "flow_id");
	require_flows();
	arg = PG_GETARG_DATUM(0);
	store = jobq_srf_begin(fcinfo, &desc);
	jobq_spi_connect();
	rc = SPI_execute_plan(jobq_plan(&jobq_flows_statements, ST_FLOW_JOBS), &arg, NULL,
						  true, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "read flow jobs");
	if (SPI_processed > JOBQ_LIST_MAX_ROWS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("flow " INT64_FORMAT " has more than %d jobs", DatumGetInt64(arg),
						JOBQ_LIST_MAX_ROWS),
				 errhint("Read jobq.flow_jobs directly, or list the jobs of each queue with jobq_list.")));
	jobq_srf_put_spi_allowed(store, desc, 2, JOBQ_PRIV_INSPECT, false);
	jobq_spi_finish();
	return (Datum) 0;
}
