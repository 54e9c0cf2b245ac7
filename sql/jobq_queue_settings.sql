-- jobq_queue_settings: the queue settings of 0.2.0 (JOBQ_QUEUE_SETTINGS_020:
-- completion events, reclaiming a dead worker's jobs, groups, limits and
-- rates). Their defaults on create, each one set on create and on alter,
-- NULL keeping a setting, the text settings' values (22023 for any other,
-- before anything changes), 0.1.0 calls meaning what they meant, and the
-- column DEFAULTs of the update script (which fill the rows of queues
-- created before it) agreeing with the defaults of jobq_create_queue.
-- The bounds of the numbers are jobq_limits' (sql/jobq_limits.sql).
\set VERBOSITY terse
SET client_min_messages = warning;

SELECT jobq_create_queue('qs-default');
SELECT notify_finished, reclaim_on_worker_death, group_mode, group_limit, group_order,
       fifo_block, max_running, rate, rate_per, rate_burst, group_rate, group_rate_per,
       group_rate_burst
FROM jobq_queues() WHERE queue = 'qs-default';

-- every setting given on create
SELECT jobq_create_queue('qs-all', notify_finished => true, reclaim_on_worker_death => true,
                         group_mode => 'limit', group_limit => 3, group_order => 'round_robin',
                         fifo_block => 'retry', max_running => 40, rate => 10,
                         rate_per => '1 minute', rate_burst => 5, group_rate => 2,
                         group_rate_per => '10 seconds', group_rate_burst => 2);
SELECT notify_finished, reclaim_on_worker_death, group_mode, group_limit, group_order,
       fifo_block, max_running, rate, rate_per, rate_burst, group_rate, group_rate_per,
       group_rate_burst
FROM jobq_queues() WHERE queue = 'qs-all';

-- alter: the given ones change, NULL and the others stay
SELECT jobq_alter_queue('qs-all', group_mode => 'fifo', group_limit => 1, rate => 0,
                        fifo_block => NULL);
SELECT group_mode, group_limit, fifo_block, rate, rate_per, max_running, notify_finished
FROM jobq_queues() WHERE queue = 'qs-all';

-- a 0.1.0 call, positional: the 0.2.0 settings keep their values
SELECT jobq_alter_queue('qs-all', '1 minute', 7);
SELECT lease, max_attempts, group_mode, max_running FROM jobq_queues() WHERE queue = 'qs-all';

-- the text settings take exactly their values: 22023, nothing changed
\set VERBOSITY sqlstate
SELECT jobq_alter_queue('qs-all', group_mode => 'FIFO');
SELECT jobq_alter_queue('qs-all', group_mode => '');
SELECT jobq_alter_queue('qs-all', group_order => 'newest');
SELECT jobq_alter_queue('qs-all', fifo_block => 'dead');
SELECT jobq_create_queue('qs-bad', group_mode => 'fifo ');
\set VERBOSITY terse
SELECT jobq_alter_queue('qs-all', max_running => 3, group_mode => 'groups');
SELECT jobq_create_queue('qs-bad', fifo_block => 'always');
SELECT count(*) AS bad_created FROM jobq_queues() WHERE queue = 'qs-bad';
SELECT group_mode, max_running FROM jobq_queues() WHERE queue = 'qs-all';
-- an interval setting is normalized as 0.1.0's are, and bounded
SELECT jobq_alter_queue('qs-all', rate_per => '90 seconds');
SELECT rate_per FROM jobq_queues() WHERE queue = 'qs-all';
SELECT jobq_alter_queue('qs-all', rate_per => '0.5 seconds');
SELECT jobq_alter_queue('qs-all', group_rate_per => '1 month');

-- The column DEFAULTs (what an update from 0.1.0 gives the queues it
-- finds) equal what jobq_create_queue gives a new queue, setting by
-- setting: the defaults are written in the contract and restated once in
-- the update script.
CREATE FUNCTION regress_column_default(col text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    v text;
BEGIN
    EXECUTE format('SELECT (%s)::text',
                   (SELECT pg_get_expr(d.adbin, d.adrelid)
                    FROM pg_attrdef d JOIN pg_attribute a
                      ON a.attrelid = d.adrelid AND a.attnum = d.adnum
                    WHERE d.adrelid = 'jobq.queues'::regclass AND a.attname = col))
    INTO v;
    RETURN v;
END
$$;
SELECT s.key AS setting, regress_column_default(s.key) AS column_default,
       s.value AS create_default, regress_column_default(s.key) = s.value AS agree
FROM jobq_queues() q, jsonb_each_text(to_jsonb(q)) s
WHERE q.queue = 'qs-default'
  AND s.key IN (SELECT attname FROM pg_attribute
                WHERE attrelid = 'jobq.queues'::regclass AND attnum > 0 AND NOT attisdropped)
  AND s.key NOT IN ('name', 'lease', 'max_attempts', 'backoff_base', 'backoff_cap',
                    'completed_retention', 'dead_retention', 'paused', 'notify', 'created_at')
ORDER BY s.key;
DROP FUNCTION regress_column_default(text);

SELECT jobq_drop_queue('qs-default'), jobq_drop_queue('qs-all', true);
