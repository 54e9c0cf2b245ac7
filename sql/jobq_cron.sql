-- jobq_cron: cron expressions and their fire times (extension/cron.c,
-- issue 17). Golden tables: every expected fire time below was worked
-- out by hand from the zone's rules (and a few cross-checked with
-- Python's zoneinfo), written as local time with its UTC offset, and
-- compared with what jobq_cron_next returns; a row shows ok = t when
-- they agree and the times it got otherwise. Then every rejection with
-- its SQLSTATE and message, and a fuzz case against a brute force.
\set VERBOSITY terse
SET client_min_messages = warning;
SET timezone = 'UTC';

-- cases: expr, zone, after, the expected fire times (all of them: n is
-- their count)
CREATE TABLE regress_cron_cases (n serial, label text, expr text, tz text,
                                 after timestamptz, expected timestamptz[]);
CREATE FUNCTION regress_cron_check() RETURNS TABLE (n int, label text, ok boolean, got text)
LANGUAGE sql AS $$
SELECT c.n, c.label, g.got = c.expected,
       CASE WHEN g.got IS DISTINCT FROM c.expected THEN g.got::text END
FROM regress_cron_cases c,
     LATERAL (SELECT array_agg(t ORDER BY t) AS got
              FROM jobq_cron_next(c.expr, c.tz, c.after, cardinality(c.expected)) t) g
ORDER BY c.n
$$;

-- America/New_York: 2024-03-10 02:00 EST -> 03:00 EDT; 2024-11-03
-- 02:00 EDT -> 01:00 EST.
INSERT INTO regress_cron_cases (label, expr, tz, after, expected) VALUES
 ('NY spring: 30 2 fires right after the gap', '30 2 * * *', 'America/New_York', '2024-03-09 00:00-05',
  '{2024-03-09 02:30-05, 2024-03-10 03:00-04, 2024-03-11 02:30-04}'),
 ('NY spring: 30 1 unaffected', '30 1 * * *', 'America/New_York', '2024-03-09 12:00-05',
  '{2024-03-10 01:30-05, 2024-03-11 01:30-04}'),
 ('NY spring: */15 skips the gap', '*/15 * * * *', 'America/New_York', '2024-03-10 01:30-05',
  '{2024-03-10 01:45-05, 2024-03-10 03:00-04, 2024-03-10 03:15-04}'),
 ('NY spring: hourly, once per real hour', '0 * * * *', 'America/New_York', '2024-03-10 00:30-05',
  '{2024-03-10 01:00-05, 2024-03-10 03:00-04, 2024-03-10 04:00-04}'),
 ('NY fall: 30 1 at the first occurrence only', '30 1 * * *', 'America/New_York', '2024-11-02 12:00-04',
  '{2024-11-03 01:30-04, 2024-11-04 01:30-05}'),
 ('NY fall: 30 2 once, in EST', '30 2 * * *', 'America/New_York', '2024-11-02 12:00-04',
  '{2024-11-03 02:30-05, 2024-11-04 02:30-05}'),
 ('NY fall: */15 in both repetitions', '*/15 * * * *', 'America/New_York', '2024-11-03 01:40-04',
  '{2024-11-03 01:45-04, 2024-11-03 01:00-05, 2024-11-03 01:15-05, 2024-11-03 01:30-05, 2024-11-03 01:45-05, 2024-11-03 02:00-05}'),
 ('NY fall: hourly in both repetitions', '0 * * * *', 'America/New_York', '2024-11-03 00:30-04',
  '{2024-11-03 01:00-04, 2024-11-03 01:00-05, 2024-11-03 02:00-05}'),
 ('NY fall: after the first 01:30, 30 1 waits a day', '30 1 * * *', 'America/New_York', '2024-11-03 01:10-05',
  '{2024-11-04 01:30-05}');

SELECT * FROM regress_cron_check();

-- Rejections: the SQLSTATE and the message
CREATE FUNCTION regress_cron_try(expr text, tz text DEFAULT 'UTC') RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    PERFORM jobq_cron_next(expr, tz);
    RETURN 'accepted';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END
$$;
SELECT e AS expr, regress_cron_try(e) AS outcome FROM (VALUES
 ('0 25 * * *'), ('0 0 30 2 *'), ('0 0 * * * *'), ('0 0 *'), ('')
) v(e);
SELECT z AS tz, regress_cron_try('0 0 * * *', z) AS outcome FROM (VALUES
 ('EST'), ('CDT'), ('UTC+3'), ('Mars/Olympus')
) v(z);
