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
 ('NY spring: * 2 (wildcard) not in the gap', '* 2 * * *', 'America/New_York', '2024-03-10 01:58-05',
  '{2024-03-11 02:00-04, 2024-03-11 02:01-04}'),
 ('NY spring: 0,15,30,45 2 collapse into one', '0,15,30,45 2 * * *', 'America/New_York', '2024-03-10 00:00-05',
  '{2024-03-10 03:00-04, 2024-03-11 02:00-04}'),
 ('NY spring: 30 2 and 0 3 are one fire time', '0,30 2,3 * * *', 'America/New_York', '2024-03-10 01:00-05',
  '{2024-03-10 03:00-04, 2024-03-10 03:30-04, 2024-03-11 02:00-04}'),
 ('NY fall: 30 1 at the first occurrence only', '30 1 * * *', 'America/New_York', '2024-11-02 12:00-04',
  '{2024-11-03 01:30-04, 2024-11-04 01:30-05}'),
 ('NY fall: 30 2 once, in EST', '30 2 * * *', 'America/New_York', '2024-11-02 12:00-04',
  '{2024-11-03 02:30-05, 2024-11-04 02:30-05}'),
 ('NY fall: */15 in both repetitions', '*/15 * * * *', 'America/New_York', '2024-11-03 01:40-04',
  '{2024-11-03 01:45-04, 2024-11-03 01:00-05, 2024-11-03 01:15-05, 2024-11-03 01:30-05, 2024-11-03 01:45-05, 2024-11-03 02:00-05}'),
 ('NY fall: hourly in both repetitions', '0 * * * *', 'America/New_York', '2024-11-03 00:30-04',
  '{2024-11-03 01:00-04, 2024-11-03 01:00-05, 2024-11-03 02:00-05}'),
 ('NY fall: * 1 (wildcard) in both repetitions', '* 1 * * *', 'America/New_York', '2024-11-03 01:58-04',
  '{2024-11-03 01:59-04, 2024-11-03 01:00-05, 2024-11-03 01:01-05}'),
 ('NY fall: after the first 01:30, 30 1 waits a day', '30 1 * * *', 'America/New_York', '2024-11-03 01:10-05',
  '{2024-11-04 01:30-05}'),
 ('NY fall: 0,30 1 in the repeated hour: nothing new', '0,30 1 * * *', 'America/New_York', '2024-11-03 01:45-04',
  '{2024-11-04 01:00-05, 2024-11-04 01:30-05}'),
-- Europe/Berlin: 2024-03-31 02:00 CET -> 03:00 CEST; 2024-10-27 03:00
-- CEST -> 02:00 CET.
 ('Berlin spring: 30 2 right after the gap', '30 2 * * *', 'Europe/Berlin', '2024-03-30 12:00+01',
  '{2024-03-31 03:00+02, 2024-04-01 02:30+02}'),
 ('Berlin fall: 30 2 at the first occurrence', '30 2 * * *', 'Europe/Berlin', '2024-10-26 12:00+02',
  '{2024-10-27 02:30+02, 2024-10-28 02:30+01}'),
 ('Berlin fall: hourly in both repetitions', '0 * * * *', 'Europe/Berlin', '2024-10-27 01:30+02',
  '{2024-10-27 02:00+02, 2024-10-27 02:00+01, 2024-10-27 03:00+01}'),
 ('Berlin: @yearly at local midnight', '@yearly', 'Europe/Berlin', '2024-06-01 00:00+02',
  '{2025-01-01 00:00+01, 2026-01-01 00:00+01}'),
-- Australia/Lord_Howe: a 30-minute shift. 2024-04-07 02:00 +11 -> 01:30
-- +10:30; 2024-10-06 02:00 +10:30 -> 02:30 +11.
 ('Lord Howe fall: 45 1 at the first occurrence', '45 1 * * *', 'Australia/Lord_Howe', '2024-04-06 12:00+11',
  '{2024-04-07 01:45+11, 2024-04-08 01:45+10:30}'),
 ('Lord Howe fall: */15 in both repetitions', '*/15 * * * *', 'Australia/Lord_Howe', '2024-04-07 01:20+11',
  '{2024-04-07 01:30+11, 2024-04-07 01:45+11, 2024-04-07 01:30+10:30, 2024-04-07 01:45+10:30, 2024-04-07 02:00+10:30}'),
 ('Lord Howe spring: 15 2 at the end of the gap', '15 2 * * *', 'Australia/Lord_Howe', '2024-10-05 12:00+10:30',
  '{2024-10-06 02:30+11, 2024-10-07 02:15+11}'),
 ('Lord Howe spring: 0,30 * skips 02:00 only', '0,30 * * * *', 'Australia/Lord_Howe', '2024-10-06 01:10+10:30',
  '{2024-10-06 01:30+10:30, 2024-10-06 02:30+11, 2024-10-06 03:00+11}'),
-- Pacific/Chatham: +12:45, +13:45 in summer. 2024-04-07 03:45 +13:45 ->
-- 02:45 +12:45; 2024-09-29 02:45 +12:45 -> 03:45 +13:45.
 ('Chatham fall: 0 3 at the first occurrence', '0 3 * * *', 'Pacific/Chatham', '2024-04-06 12:00+13:45',
  '{2024-04-07 03:00+13:45, 2024-04-08 03:00+12:45}'),
 ('Chatham spring: 0 3 at the end of the gap', '0 3 * * *', 'Pacific/Chatham', '2024-09-28 12:00+12:45',
  '{2024-09-29 03:45+13:45, 2024-09-30 03:00+13:45}'),
 ('Chatham spring: 30 * skips 03:30', '30 * * * *', 'Pacific/Chatham', '2024-09-29 01:00+12:45',
  '{2024-09-29 01:30+12:45, 2024-09-29 02:30+12:45, 2024-09-29 04:30+13:45}'),
-- Asia/Kolkata: +05:30 all year; the local new year is 18:30 UTC.
 ('Kolkata: 0 9 daily', '0 9 * * *', 'Asia/Kolkata', '2024-03-10 00:00Z',
  '{2024-03-10 09:00+05:30, 2024-03-11 09:00+05:30}'),
 ('Kolkata: year rollover in local time', '45 23 31 12 *', 'Asia/Kolkata', '2024-12-31 12:00+05:30',
  '{2024-12-31 23:45+05:30, 2025-12-31 23:45+05:30}'),
 ('Kolkata: @yearly', '@yearly', 'Asia/Kolkata', '2024-12-31 18:29Z',
  '{2024-12-31 18:30Z, 2025-12-31 18:30Z}'),
-- Leap days: 2100 is no leap year.
 ('leap day', '0 0 29 2 *', 'UTC', '2024-01-01 00:00Z',
  '{2024-02-29 00:00Z, 2028-02-29 00:00Z, 2032-02-29 00:00Z}'),
 ('leap day across 2100', '0 0 29 2 *', 'UTC', '2096-03-01 00:00Z',
  '{2104-02-29 00:00Z, 2108-02-29 00:00Z}'),
 ('L in February of a leap year', '0 0 1,L 2 *', 'UTC', '2023-01-01 00:00Z',
  '{2023-02-01 00:00Z, 2023-02-28 00:00Z, 2024-02-01 00:00Z, 2024-02-29 00:00Z}'),
 ('L: the last day of each month', '0 12 L * *', 'UTC', '2024-01-15 00:00Z',
  '{2024-01-31 12:00Z, 2024-02-29 12:00Z, 2024-03-31 12:00Z, 2024-04-30 12:00Z}'),
 ('$ is L', '0 12 $ * *', 'UTC', '2024-01-15 00:00Z',
  '{2024-01-31 12:00Z, 2024-02-29 12:00Z}'),
 ('5L: the last Friday of the month', '0 0 * * 5L', 'UTC', '2024-01-01 00:00Z',
  '{2024-01-26 00:00Z, 2024-02-23 00:00Z, 2024-03-29 00:00Z}'),
 ('friL is 5L', '0 0 * * friL', 'UTC', '2024-01-01 00:00Z',
  '{2024-01-26 00:00Z, 2024-02-23 00:00Z}'),
-- Day of month OR day of week when both are restricted; AND when one
-- begins with *. September 2024 begins on a Sunday, October on a Tuesday.
 ('13th OR Friday', '0 0 13 * 5', 'UTC', '2024-09-01 00:00Z',
  '{2024-09-06 00:00Z, 2024-09-13 00:00Z, 2024-09-20 00:00Z, 2024-09-27 00:00Z, 2024-10-04 00:00Z, 2024-10-11 00:00Z, 2024-10-13 00:00Z, 2024-10-18 00:00Z}'),
 ('odd days AND Monday (*/2 begins with *)', '0 0 */2 * mon', 'UTC', '2024-09-01 00:00Z',
  '{2024-09-09 00:00Z, 2024-09-23 00:00Z, 2024-10-07 00:00Z, 2024-10-21 00:00Z}'),
 ('1-31 is restricted: OR', '0 0 1-31 * mon', 'UTC', '2024-08-31 12:00Z',
  '{2024-09-01 00:00Z, 2024-09-02 00:00Z}'),
-- Names, steps, lists, Sunday as 0 and 7
 ('names', '0 9 * jan,jul mon-fri', 'UTC', '2024-06-28 12:00Z',
  '{2024-07-01 09:00Z, 2024-07-02 09:00Z, 2024-07-03 09:00Z}'),
 ('names are case-insensitive', '0 9 * JAN,Jul MON-Fri', 'UTC', '2024-06-28 12:00Z',
  '{2024-07-01 09:00Z}'),
 ('a/n runs from a to the end', '5/20 * * * *', 'UTC', '2024-01-01 00:00Z',
  '{2024-01-01 00:05Z, 2024-01-01 00:25Z, 2024-01-01 00:45Z, 2024-01-01 01:05Z}'),
 ('ranges with steps', '10-30/10 8-18/5 * * *', 'UTC', '2024-01-01 00:00Z',
  '{2024-01-01 08:10Z, 2024-01-01 08:20Z, 2024-01-01 08:30Z, 2024-01-01 13:10Z}'),
 ('7 is Sunday', '0 0 * * 7', 'UTC', '2024-01-01 00:00Z',
  '{2024-01-07 00:00Z, 2024-01-14 00:00Z}'),
 ('5-7: Friday to Sunday', '0 0 * * 5-7', 'UTC', '2024-01-01 00:00Z',
  '{2024-01-05 00:00Z, 2024-01-06 00:00Z, 2024-01-07 00:00Z, 2024-01-12 00:00Z}'),
 ('tabs and extra spaces', E'\t0  0\t* * 1  ', 'UTC', '2024-01-01 00:00Z',
  '{2024-01-08 00:00Z}'),
-- Year rollover, strictly after, the aliases
 ('new year', '0 0 1 1 *', 'UTC', '2024-06-01 00:00Z',
  '{2025-01-01 00:00Z, 2026-01-01 00:00Z}'),
 ('strictly after: not the minute itself', '59 23 31 12 *', 'UTC', '2024-12-31 23:59Z',
  '{2025-12-31 23:59Z}'),
 ('strictly after, seconds into the minute', '* * * * *', 'UTC', '2024-12-31 23:59:30Z',
  '{2025-01-01 00:00Z, 2025-01-01 00:01Z}'),
 ('@hourly', '@hourly', 'UTC', '2024-01-01 00:00Z', '{2024-01-01 01:00Z, 2024-01-01 02:00Z}'),
 ('@daily', '@daily', 'UTC', '2024-01-01 00:00Z', '{2024-01-02 00:00Z}'),
 ('@midnight', '@MIDNIGHT', 'UTC', '2024-01-01 00:00Z', '{2024-01-02 00:00Z}'),
 ('@weekly: Sundays', '@weekly', 'UTC', '2024-01-01 00:00Z', '{2024-01-07 00:00Z, 2024-01-14 00:00Z}'),
 ('@monthly', '@monthly', 'UTC', '2024-01-31 00:00Z', '{2024-02-01 00:00Z, 2024-03-01 00:00Z}'),
 ('@annually', '@annually', 'UTC', '2024-01-01 00:00Z', '{2025-01-01 00:00Z}'),
-- @every: UTC intervals from the Unix epoch, or from an anchor
 ('@every 10s from the epoch', '@every 10s', 'UTC', '2024-01-01 00:00:03Z',
  '{2024-01-01 00:00:10Z, 2024-01-01 00:00:20Z, 2024-01-01 00:00:30Z}'),
 ('@every 7d from the epoch: Thursdays', '@every 7d', 'UTC', '2024-01-01 00:00Z',
  '{2024-01-04 00:00Z, 2024-01-11 00:00Z}'),
 ('@every ignores DST', '@every 1h', 'America/New_York', '2024-03-10 00:30-05',
  '{2024-03-10 01:00-05, 2024-03-10 03:00-04, 2024-03-10 04:00-04}'),
 ('@every 2 Hours 15 minutes', '@every 2 Hours 15 minutes', 'UTC', '2024-01-01 00:00Z',
  '{2024-01-01 00:45Z, 2024-01-01 03:00Z}');

SELECT * FROM regress_cron_check();

-- @every with an anchor: anchor + k * interval, k of either sign
SELECT array_agg(t ORDER BY t) = '{2024-01-01 00:00:07Z, 2024-01-01 00:00:17Z, 2024-01-01 00:00:27Z}' AS every_10s_at_07
FROM jobq_cron_next('@every 10s', 'UTC', '2024-01-01 00:00:03Z', 3, anchor => '2024-01-01 00:00:07Z') t;
SELECT array_agg(t ORDER BY t) = '{2024-01-01 12:15Z, 2024-01-01 13:45Z, 2024-01-01 15:15Z}' AS every_90min_at_0915
FROM jobq_cron_next('@every 1h30m', 'UTC', '2024-01-01 12:00Z', 3, anchor => '2024-01-01 09:15Z') t;
SELECT array_agg(t ORDER BY t) = '{2024-01-01 00:00:09Z, 2024-01-01 00:00:19Z}' AS anchor_ahead
FROM jobq_cron_next('@every 10s', 'UTC', '2024-01-01 00:00:00Z', 2, anchor => '2030-01-01 00:00:09Z') t;
-- the anchor changes nothing for a calendar expression
SELECT array_agg(t ORDER BY t) = '{2024-01-01 01:00Z}' AS calendar_ignores_anchor
FROM jobq_cron_next('@hourly', 'UTC', '2024-01-01 00:00Z', 1, anchor => '2024-01-01 00:30:07Z') t;

-- the defaults: UTC, now(), one fire time
SELECT count(*) = 1 AS one, min(t) > now() AND min(t) <= now() + interval '1 minute' AS next_minute
FROM jobq_cron_next('* * * * *') t;
-- zone names: case does not matter, NULL is UTC
SELECT (SELECT t FROM jobq_cron_next('0 9 * * *', 'america/NEW_YORK', '2024-07-01 00:00Z') t) = '2024-07-01 09:00-04' AS lowercase_zone,
       (SELECT t FROM jobq_cron_next('0 9 * * *', NULL, '2024-07-01 00:00Z') t) = '2024-07-01 09:00Z' AS null_zone,
       (SELECT t FROM jobq_cron_next('0 9 * * *', 'utc', '2024-07-01 00:00Z') t) = '2024-07-01 09:00Z' AS utc,
       (SELECT t FROM jobq_cron_next('0 9 * * *', 'Etc/GMT+3', '2024-07-01 00:00Z') t) = '2024-07-01 12:00Z' AS etc_gmt_plus_3;
-- the end of the timestamp range: fewer rows, no error
SELECT count(*) AS rows_before_the_end
FROM jobq_cron_next('0 0 1 1 *', 'UTC', '294274-06-01 00:00Z', 5) t;

-- Rejections: the SQLSTATE and the message. try_call(stmt): 'accepted'
-- or the error; try(expr, tz): a call of jobq_cron_next
CREATE FUNCTION regress_cron_try_call(stmt text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE stmt;
    RETURN 'accepted';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END
$$;
CREATE FUNCTION regress_cron_try(expr text, tz text DEFAULT 'UTC') RETURNS text LANGUAGE sql AS $$
SELECT regress_cron_try_call(format('SELECT jobq_cron_next(%L, %L)', expr, tz))
$$;
-- every malformed expression: the position (in characters) and what was
-- expected there
SELECT e AS expr, regress_cron_try(e) AS outcome FROM (VALUES
 (''), ('   '), ('0 0 *'), ('0 0 * * * *'), ('0 0 * * * 2024'),
 ('60 * * * *'), ('0 24 * * *'), ('0 0 0 * *'), ('0 0 32 * *'), ('0 0 * 0 *'), ('0 0 * 13 *'),
 ('0 0 * * 8'), ('-1 * * * *'), ('99999999999 * * * *'),
 ('0 0 * foo *'), ('0 0 * * funday'), ('0 0 * january *'), ('0 0 * * mon-'), ('0 0 * * -mon'),
 ('5-1 * * * *'), ('0 0 * * fri-mon'), ('*/0 * * * *'), ('*/61 * * * *'), ('0 0 * * */8'),
 ('*/ * * * *'), ('1,,2 * * * *'), ('1, * * * *'), ('0 0 ? * *'), ('0 0 * * 5#3'),
 ('0 0 LW * *'), ('0 0 L-3 * *'), ('0 0 15W * *'), ('0 0 L/2 * *'), ('0 0 * * 5L/2'),
 ('0 L * * *'), ('0 0 * * L'), ('0 é * * *'), ('0 0 * * 1 é'),
 ('@reboot'), ('@dayly'), ('@daily 5'), ('@every'), ('@every 0s'), ('@every 2678401s'),
 ('@every 32d'), ('@every 1 month'), ('@every 1.5h'), ('@every 10'), ('@every s'), ('@every 1h -5m')
) v(e);
-- never fires: no such day, or an AND of days that never meet
SELECT e AS expr, regress_cron_try(e) AS outcome FROM (VALUES
 ('0 0 30 2 *'), ('0 0 31 4,6,9,11 *'), ('0 0 30,31 2 */2'), ('0 0 31 2 *')
) v(e);
-- an expression of 513 bytes
SELECT regress_cron_try(repeat(' ', 504) || '0 * * * *') AS too_long;
-- zones: abbreviations, offsets, POSIX strings, legacy single words,
-- the system directory's copies, malformed and unknown names
SELECT z AS tz, regress_cron_try('0 0 * * *', z) AS outcome FROM (VALUES
 (''), ('EST'), ('cdt'), ('CET'), ('Z'), ('UTC+3'), ('EST5EDT'), ('<+03>-3'), ('+05:30'), ('Japan'),
 ('posix/Europe/Berlin'), ('right/UTC'), ('Europe//Berlin'), ('/Europe/Berlin'), ('Europe/'),
 ('Europe/Berlin '), ('Mars/Olympus'), ('Europe/Berlin/x')
) v(z);
SELECT regress_cron_try('0 0 * * *', 'Europe/Berlin') AS berlin_accepted;
-- the other arguments
SELECT c AS call, regress_cron_try_call('SELECT jobq_cron_next(' || c || ')') AS outcome FROM (VALUES
 ($$NULL$$), ($$'* * * * *', 'UTC', NULL$$), ($$'* * * * *', 'UTC', now(), NULL$$),
 ($$'* * * * *', n => 0$$), ($$'* * * * *', n => 1001$$), ($$'* * * * *', n => -1$$),
 ($$'* * * * *', 'UTC', 'infinity'$$), ($$'* * * * *', 'UTC', '-infinity'$$),
 ($$'@every 1s', anchor => 'infinity'$$)
) v(c);

-- Fuzz: random valid expressions in zones around their clock changes.
-- For each, the fire times jobq_cron_next gives (chained from the start
-- of a three-day window) must increase strictly and be exactly those of a
-- brute force that reads the zone's wall clock at every minute of the
-- window (through AT TIME ZONE, not through jobq's code): a wildcard entry
-- (minute or hour beginning with *) fires at every minute whose reading
-- matches; a fixed entry fires at a minute whose reading is past every
-- earlier reading, when a matching wall time lies between the latest
-- earlier reading and this one (the first occurrence, or right after a
-- gap). A random instant inside the window must give the brute force's
-- next fire time after it too.
SELECT setseed(0.17);
-- a random field: its text and the values it stands for
CREATE FUNCTION regress_cron_rand_field(lo int, hi int, star_odds float8,
                                        OUT txt text, OUT vals int[]) LANGUAGE plpgsql AS $$
DECLARE
    a int := lo + floor(random() * (hi - lo + 1))::int;
    b int := lo + floor(random() * (hi - lo + 1))::int;
    s int := 2 + floor(random() * ((hi - lo) / 2))::int;
    form float8 := random();
BEGIN
    IF a > b THEN SELECT b, a INTO a, b; END IF;
    IF form < star_odds THEN
        txt := '*'; vals := ARRAY(SELECT generate_series(lo, hi));
    ELSIF form < star_odds + (1 - star_odds) / 5 THEN
        txt := a::text; vals := ARRAY[a];
    ELSIF form < star_odds + 2 * (1 - star_odds) / 5 THEN
        txt := a || '-' || b; vals := ARRAY(SELECT generate_series(a, b));
    ELSIF form < star_odds + 3 * (1 - star_odds) / 5 THEN
        txt := '*/' || s; vals := ARRAY(SELECT generate_series(lo, hi, s));
    ELSIF form < star_odds + 4 * (1 - star_odds) / 5 THEN
        txt := a || '-' || b || '/' || s; vals := ARRAY(SELECT generate_series(a, b, s));
    ELSE
        txt := a || ',' || b; vals := ARRAY[a, b];
    END IF;
END
$$;
-- jobq_cron_next chained over [start, stop]: every fire time, in the
-- order returned
CREATE FUNCTION regress_cron_chain(expr text, tz text, start timestamptz, stop timestamptz)
RETURNS timestamptz[] LANGUAGE plpgsql AS $$
DECLARE
    got timestamptz[] := '{}';
    batch timestamptz[];
    cur timestamptz := start;
BEGIN
    LOOP
        batch := ARRAY(SELECT t FROM jobq_cron_next(expr, tz, cur, 1000) t);
        got := got || ARRAY(SELECT t FROM unnest(batch) t WHERE t <= stop);
        EXIT WHEN cardinality(batch) < 1000 OR batch[1000] > stop;
        cur := batch[1000];
    END LOOP;
    RETURN got;
END
$$;
-- hours around the clock changes, without * (which means 0-23): mostly
-- a range through 02:00, where the gaps and repeated hours are
CREATE FUNCTION regress_cron_rand_hours(OUT txt text, OUT vals int[]) LANGUAGE plpgsql AS $$
DECLARE
    a int := floor(random() * 3)::int;
    b int := 2 + floor(random() * 3)::int;
BEGIN
    IF random() < 0.7 THEN
        txt := a || '-' || b; vals := ARRAY(SELECT generate_series(a, b));
    ELSE
        txt := a || ',' || (b - 1); vals := ARRAY[a, b - 1];
        IF a = b - 1 THEN txt := a::text; vals := ARRAY[a]; END IF;
    END IF;
END
$$;
CREATE TABLE regress_cron_fuzz AS
SELECT i, z.tz, z.start, z.start + interval '3 days' AS stop,
       z.start + random() * interval '3 days' AS probe,
       mi.txt AS min_txt, mi.vals AS mins, h.txt AS hour_txt, h.vals AS hours,
       dm.txt AS dom_txt, dm.vals AS doms, mo.txt AS month_txt, mo.vals AS months,
       dw.txt AS dow_txt, dw.vals AS dows
FROM generate_series(1, 120) i,
     LATERAL (SELECT tz, (d::timestamp - interval '1 day') AT TIME ZONE tz AS start
              FROM (VALUES ('America/New_York', '2024-03-10'), ('America/New_York', '2024-11-03'),
                           ('Europe/Berlin', '2024-03-31'), ('Europe/Berlin', '2024-10-27'),
                           ('Australia/Lord_Howe', '2024-04-07'), ('Australia/Lord_Howe', '2024-10-06'),
                           ('Pacific/Chatham', '2024-04-07'), ('Pacific/Chatham', '2024-09-29'),
                           ('Asia/Kolkata', '2024-06-01'), ('UTC', '2024-02-28')) v(tz, d)
              ORDER BY random() + i * 0 LIMIT 1) z,
     LATERAL regress_cron_rand_field(0, 59, 0.15 + i * 0) mi,
     LATERAL (SELECT * FROM regress_cron_rand_hours() WHERE i % 2 = 0
              UNION ALL
              SELECT * FROM regress_cron_rand_field(0, 23, 0.4) WHERE i % 2 = 1) h,
     LATERAL regress_cron_rand_field(1, 31, 0.8 + i * 0) dm,
     LATERAL regress_cron_rand_field(1, 12, 0.9 + i * 0) mo,
     LATERAL regress_cron_rand_field(0, 6, 0.8 + i * 0) dw;
ALTER TABLE regress_cron_fuzz ADD COLUMN expr text, ADD COLUMN wildcard boolean;
UPDATE regress_cron_fuzz
SET expr = concat_ws(' ', min_txt, hour_txt, dom_txt, month_txt, dow_txt),
    wildcard = min_txt LIKE '*%' OR hour_txt LIKE '*%';
CREATE FUNCTION regress_cron_match(f regress_cron_fuzz, w timestamp) RETURNS boolean LANGUAGE sql AS $$
SELECT extract(minute FROM w)::int = ANY (f.mins) AND extract(hour FROM w)::int = ANY (f.hours)
   AND extract(month FROM w)::int = ANY (f.months)
   AND CASE WHEN f.dom_txt LIKE '*%' OR f.dow_txt LIKE '*%'
            THEN extract(day FROM w)::int = ANY (f.doms) AND extract(dow FROM w)::int = ANY (f.dows)
            ELSE extract(day FROM w)::int = ANY (f.doms) OR extract(dow FROM w)::int = ANY (f.dows) END
$$;
CREATE TABLE regress_cron_fuzz_result AS
SELECT f.i, f.expr, f.tz, f.start,
       regress_cron_chain(f.expr, f.tz, f.start, f.stop) AS got,
       ARRAY(SELECT m.t FROM (
                SELECT t, t AT TIME ZONE f.tz AS w,
                       max(t AT TIME ZONE f.tz) OVER (ORDER BY t ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS seen
                FROM generate_series(f.start - interval '6 hours', f.stop, interval '1 minute') t) m
             WHERE m.t > f.start
               AND CASE WHEN f.wildcard THEN regress_cron_match(f, m.w)
                        ELSE EXISTS (SELECT 1 FROM generate_series(m.seen + interval '1 minute', m.w, interval '1 minute') x
                                     WHERE regress_cron_match(f, x)) END
             ORDER BY m.t) AS brute,
       (SELECT t FROM jobq_cron_next(f.expr, f.tz, f.probe) t) AS probe_got,
       f.probe
FROM regress_cron_fuzz f;
SELECT count(*) AS expressions,
       count(*) FILTER (WHERE got = brute) AS agree,
       count(*) FILTER (WHERE cardinality(brute) > 0) AS firing_in_window,
       sum(cardinality(brute)) > 2000 AS many_fire_times,
       bool_and(NOT EXISTS (SELECT 1 FROM generate_series(2, cardinality(got)) k WHERE got[k] <= got[k - 1])) AS increasing,
       count(DISTINCT tz) AS zones
FROM regress_cron_fuzz_result;
-- the probes: the brute force's first fire time after the probe (or,
-- past the window, any later one)
SELECT count(*) FILTER (WHERE probe_got = (SELECT min(t) FROM unnest(brute) t WHERE t > probe)
                        OR (probe_got > (SELECT stop FROM regress_cron_fuzz z WHERE z.i = r.i)
                            AND NOT EXISTS (SELECT 1 FROM unnest(brute) t WHERE t > probe))) AS probes_agree
FROM regress_cron_fuzz_result r;
-- (expect no rows)
SELECT i, expr, tz, start, got, brute FROM regress_cron_fuzz_result WHERE got IS DISTINCT FROM brute;

DROP TABLE regress_cron_fuzz_result, regress_cron_cases;
DROP FUNCTION regress_cron_match(regress_cron_fuzz, timestamp), regress_cron_chain(text, text, timestamptz, timestamptz),
    regress_cron_rand_field(int, int, float8), regress_cron_rand_hours(), regress_cron_check(),
    regress_cron_try(text, text), regress_cron_try_call(text);
DROP TABLE regress_cron_fuzz;
