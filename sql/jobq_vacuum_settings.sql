-- jobq_vacuum_settings: jobq.jobs is autovacuumed after a fixed number of
-- dead rows whatever its size, always with its indexes (0.2.0, issue 20:
-- the dead entries that drained jobs leave at the head of jobs_claim_idx,
-- which every claim reads, go only with an index pass; see the upgrade
-- script's section "Vacuum of jobq.jobs on a deep backlog").
SELECT option FROM pg_class c, unnest(c.reloptions) AS option
WHERE c.oid = 'jobq.jobs'::regclass ORDER BY option COLLATE "C";
