-- jobq_audit: the audit trail (issue 14). Every mutating operator call
-- writes one row of jobq.audit in its own transaction (actor: jobq.actor
-- or the role; role: always the session's role), the worker's path writes
-- none, a rolled-back or refused call leaves none, jobq_audit reads the
-- trail newest first with keyset paging, and jobq_audit_purge applies the
-- retention (jobq.audit_retention, 90 days by default).
\set VERBOSITY terse
SET client_min_messages = warning;

SELECT coalesce(max(id), 0) AS start FROM jobq.audit \gset
CREATE VIEW regress_audit AS
SELECT actor, role, action, queue, cardinality(ids) AS nids, filters, detail, affected
FROM jobq_audit(max_rows => 1000) WHERE id > :start ORDER BY id;

CREATE ROLE regress_aud_admin IN ROLE jobq_admin;

-- queue management, per-queue grants, retry, cancel, purge
SELECT jobq_create_queue('aud', max_attempts => 1);
SELECT jobq_alter_queue('aud', lease => '1 minute');
SELECT jobq_pause('aud');
SELECT jobq_resume('aud');
SELECT jobq_grant('aud', 'regress_aud_admin', 'inspect');
SELECT jobq_grant('aud', 'regress_aud_admin', 'inspect') AS again;
SELECT jobq_revoke('aud', 'regress_aud_admin', 'inspect');
SELECT jobq_enqueue('aud', '{"a": 1}') AS j1 \gset
SELECT jobq_fail(id, token, 'boom') FROM jobq_claim('aud');
SELECT jobq_retry(:j1);
SELECT jobq_cancel(:j1);
SELECT jobq_retry('aud');
SELECT jobq_purge('aud', 'cancelled');
SELECT * FROM regress_audit;

-- the worker's path writes nothing: enqueue, claim, extend, complete,
-- fail, release, and a sweep that names no actor
SELECT count(*) AS before FROM regress_audit \gset
SELECT jobq_enqueue('aud', '{"a": 2}') AS j2 \gset
SELECT jobq_extend(id, token) IS NOT NULL AS extended, jobq_release(id, token) AS released
FROM jobq_claim('aud');
SELECT jobq_complete(id, token) FROM jobq_claim('aud');
SELECT jobq_enqueue_batch('aud', ARRAY['{}', '{}']::jsonb[]) IS NOT NULL AS enqueued;
SELECT jobq_fail(id, token, 'x') FROM jobq_claim('aud', max_jobs => 2);
SELECT requeued FROM jobq_sweep('aud');
SELECT count(*) - :before AS new_rows FROM regress_audit;

-- jobq.actor names the operator (the dashboard's user); the role stays
-- the session's.  A sweep by a named operator is recorded.
SET ROLE regress_aud_admin;
SET jobq.actor = 'alice@example.org';
SELECT jobq_pause('aud');
SELECT requeued, dead, purged FROM jobq_sweep('aud');
RESET jobq.actor;
SELECT jobq_resume('aud');
RESET ROLE;
SELECT actor, role, action, queue, detail, affected FROM regress_audit
WHERE action IN ('pause', 'resume', 'sweep') ORDER BY 1, 3;

-- a bulk action records its ids; a call on one job finds the queue
SELECT array_agg(id) AS ids FROM jobq_enqueue_batch('aud', ARRAY['{}', '{}', '{}']::jsonb[]) \gset
SELECT * FROM jobq_cancel_many(:'ids'::bigint[] || ARRAY[-1]);
SELECT action, queue, nids, affected FROM regress_audit WHERE action = 'cancel_many';
SELECT jobq_cancel(-1);
SELECT action, queue, nids, affected FROM regress_audit WHERE action = 'cancel' ORDER BY affected DESC;

-- a rolled-back call leaves no row, nor does a refused one
SELECT count(*) AS before FROM regress_audit \gset
BEGIN;
SELECT jobq_pause('aud');
ROLLBACK;
SELECT regress_fails($$SELECT jobq_pause('no-such-queue')$$);
SELECT regress_fails($$SELECT jobq_purge('aud', 'ready')$$);
SELECT count(*) - :before AS new_rows FROM regress_audit;

-- reading: newest first, by queue, since a time, and page by page
SELECT action FROM jobq_audit('aud', max_rows => 3);
SELECT min(id) AS last_id FROM jobq_audit('aud', max_rows => 3) \gset
SELECT action FROM jobq_audit('aud', max_rows => 2, before_id => :last_id);
SELECT count(*) AS none_since FROM jobq_audit(since => clock_timestamp() + interval '1 hour');
SELECT count(*) > 0 AS some_since FROM jobq_audit(since => clock_timestamp() - interval '1 hour');
SELECT count(*) AS none_other FROM jobq_audit('aud-none');
-- bad input
SELECT regress_fails($$SELECT jobq_audit(max_rows => 0)$$);
SELECT regress_fails($$SELECT jobq_audit(max_rows => 10001)$$);
SELECT regress_fails($$SELECT jobq_audit(max_rows => NULL)$$);
SELECT regress_fails($$SELECT jobq_audit('Bad Queue')$$);
SELECT regress_fails($$SELECT jobq_audit_purge(0)$$);
SELECT regress_fails($$SELECT jobq_audit_purge(NULL)$$);

-- retention: rows older than 90 days go, in batches
UPDATE jobq.audit SET at = at - interval '91 days' WHERE id > :start AND action IN ('grant', 'revoke');
SELECT jobq_audit_purge(2) AS purged;
SELECT jobq_audit_purge() AS purged;
SELECT jobq_audit_purge() AS purged;
SELECT count(*) AS grants_left FROM regress_audit WHERE action IN ('grant', 'revoke');
SHOW jobq.audit_retention;

-- dropping the queue is recorded, and the trail outlives the queue
SELECT jobq_drop_queue('aud', force => true);
SELECT action, queue, detail FROM jobq_audit('aud', max_rows => 1);

DROP VIEW regress_audit;
DROP ROLE regress_aud_admin;
