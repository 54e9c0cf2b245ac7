# t/089_web_browser.pl: jobq-web in a real browser (Debian's chromium,
# driven by playwright-core from client/web/test, installed by
# test/install-deps.sh): the overview shows the database's numbers and a
# sparkline per queue; a payload and an error of <img src=x onerror=alert(1)> and </script><script>
# show as text, with no dialog; Retry on a dead job says so and the
# database agrees; the read-only user sees no action; a phone's width has
# no horizontal scroll; the enqueue form checks its JSON, and its job is
# in the database; the job page has its jobq commands; the queue page draws its charts; the schedules and workers pages
# render; a setting edited on the queue page (only it sent; the database
# agrees); Run now on a schedule and Quiet on a worker (the database agrees);
# filter -> select all matching -> retry with the typed confirmation above
# 1,000 jobs and progress in two batches, select the jobs shown -> cancel
# (the database agrees); the audit page names the dashboard user; the
# viewer has no selection, no action on workers or schedules, no audit;
# keyset pages stay consistent (ascending, no overlap) while a worker
# drains the queue; a count past jobq_counts' cap shows as "100,000+";
# where the server has groups, the queue page's blocked-group count and Skip
# head on a blocked group; where it has
# flows, a flow's graph and Cancel flow.  Every page fails on a request leaving 127.0.0.1, a
# CSP violation or a console error (client/web/test/browser.mjs).  The
# screenshots go to tmp_check/web-screenshots.  Skipped without chromium
# or playwright-core.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use JobqTest;
use JSON::PP;

my $pw = $ENV{JOBQ_WEB_TEST_DIR} // '';
plan skip_all => 'no /usr/bin/chromium' unless -x '/usr/bin/chromium';
plan skip_all => 'no playwright-core (npm ci in client/web/test)'
  unless -d "$pw/node_modules/playwright-core";

my $web = JobqTest::worker_bin() =~ s/jobq-worker$/jobq-web/r;
my $tmp = PostgreSQL::Test::Utils::tempdir();
# JOBQ_WEB_SCREENSHOTS: a directory (writable by the test's user) to keep them in
my $shots = $ENV{JOBQ_WEB_SCREENSHOTS} // "$PostgreSQL::Test::Utils::tmp_check/web-screenshots";
mkdir $shots;
my $node = new_node('webui');
$node->safe_psql('postgres', q{
	CREATE ROLE jobq_web LOGIN NOINHERIT;
	GRANT jobq_admin, jobq_monitor TO jobq_web;
	SELECT jobq_create_queue('mails', max_attempts => 1);
});
my $xss = '<img src=x onerror=alert(1)>';
my ($xss_id, $dead_id) = split /,/, $node->safe_psql('postgres', qq{
	SELECT string_agg(id::text, ',' ORDER BY id) FROM jobq_enqueue_batch('mails',
	  ARRAY['{"html": "$xss", "end": "</script><script>alert(2)</script>"}', '{"n": 2}']::jsonb[])
});
# both claimed and failed for good (max_attempts 1), the XSS as the error;
# then seven ready jobs
$node->safe_psql('postgres', qq{
	SELECT jobq_fail(c.id, c.token, '$xss') FROM jobq_claim('mails', 'ui-test', 2) c;
	SELECT count(*) FROM jobq_enqueue_batch('mails', (SELECT array_agg('{}'::jsonb) FROM generate_series(1, 7)));
	SELECT jobq_schedule('nightly', 'mails', '0 3 * * *');
});
# queue bulkq: 1,100 dead jobs whose error says timeout and 60 others (the
# bulk scenarios), and a registered worker
$node->safe_psql('postgres', q{
	SELECT jobq_create_queue('bulkq', max_attempts => 1);
	SELECT count(*) FROM jobq_enqueue_batch('bulkq', (SELECT array_agg(jsonb_build_object('i', i)) FROM generate_series(1, 1160) i));
	SELECT count(jobq_fail(c.id, c.token, CASE WHEN c.id % 20 = 0 THEN 'refused' ELSE 'connect timeout' END))
	  FROM jobq_claim('bulkq', 'w', 1000) c;
	SELECT count(jobq_fail(c.id, c.token, CASE WHEN c.id % 20 = 0 THEN 'refused' ELSE 'connect timeout' END))
	  FROM jobq_claim('bulkq', 'w', 1000) c;
	SELECT count(*) FROM jobq_worker_register('ui-worker', queues => ARRAY['mails'], timeout => '1 hour');
});
# queue archive: 100,001 rows of completed history (written directly), past
# the cap of jobq_counts without preload: the overview says "100,000+"
$node->safe_psql('postgres', q{
	SELECT jobq_create_queue('archive');
	INSERT INTO jobq.history (id, queue, state, priority, run_at, attempt, max_attempts, enqueued_at,
	    finished_at, payload)
	  SELECT -g, 'archive', 'completed', 0, now(), 1, 1, now(), now(), '{}' FROM generate_series(1, 100001) g;
	SELECT jobq_create_queue('drain');
	SELECT count(*) FROM jobq_enqueue_batch('drain', (SELECT array_agg(jsonb_build_object('i', i)) FROM generate_series(1, 600) i));
});
is($node->safe_psql('postgres', "SELECT completed || ' ' || exact FROM jobq_counts('archive')"), '100001 false',
	'jobq_counts caps the history of archive');
# a worker draining queue drain (one job at a time, 50 ms each) while the
# browser pages through its ready jobs
my $slow = write_handler('slow', 'cat >/dev/null; sleep 0.05');
my $drainer = start_worker($node, '-q', 'drain', '--poll-interval', '0.2', '--', $slow);
my $drained = 0;
for (1 .. 200)
{
	last if ($drained = $node->safe_psql('postgres', "SELECT completed FROM jobq_counts('drain')")) > 0;
	usleep(50_000);
}
ok($drained > 0, 'the worker drains queue drain');
my $matching = $node->safe_psql('postgres', "SELECT count(*) FROM jobq_list('bulkq', 'dead', 10000, filters => '{\"error\": \"timeout\"}')");
my $others = $node->safe_psql('postgres', "SELECT count(*) FROM jobq_list('bulkq', 'dead', 10000)") - $matching;
cmp_ok($matching, '>', 1000, "bulkq: $matching dead jobs match the filter, $others do not");
# queue fifob, where the server has groups (issue 19): group acct-9 blocked
# by its dead head, which the browser skips
my $groups = $node->safe_psql('postgres', "SELECT count(*) FROM pg_proc WHERE proname = 'jobq_skip_head'");
my $blocker = '';
if ($groups)
{
	$blocker = (split /\n/, $node->safe_psql('postgres', q{
		SELECT jobq_create_queue('fifob', max_attempts => 1, group_mode => 'fifo');
		SELECT count(*) FROM (SELECT jobq_enqueue('fifob', '{}', group_key => 'acct-9') FROM generate_series(1, 2)) e;
		SELECT c.id FROM jobq_claim('fifob', 'w', 1) c, LATERAL jobq_fail(c.id, c.token, 'card declined') f;
	}))[-1];
}
# a flow of three jobs, where the server has flows (issue 18)
my $flows = $node->safe_psql('postgres', "SELECT count(*) FROM pg_proc WHERE proname = 'jobq_flow_jobs'");
my $flow = '';
if ($flows)
{
	$flow = (split /\n/, $node->safe_psql('postgres', q{
		SELECT jobq_create_queue('flowq');
		SELECT min(id) FROM jobq_flow('[{"ref": "a", "queue": "flowq"}, {"ref": "b", "queue": "flowq", "depends_on": ["a"]},
		  {"ref": "c", "queue": "flowq", "depends_on": ["a", "b"]}]')
	}))[-1];
}
my $ready = $node->safe_psql('postgres', "SELECT ready FROM jobq_stats('mails')");
is($node->safe_psql('postgres', "SELECT string_agg(state, ',' ORDER BY id) FROM jobq_list('mails', 'dead')"),
	'dead,dead', 'the two jobs are dead');

my $hash_a = crypt('s3cret', '$6$saltsaltsalt$');
my $hash_v = crypt('look', '$6$othersalt$');
open my $fh, '>', "$tmp/users" or die;
print $fh "admin:$hash_a:jobq_admin\nviewer:$hash_v:jobq_monitor\n";
close $fh;
my $log = "$tmp/web.log";
my $h = IPC::Run::start([ $web, '-d', $node->connstr('postgres') . ' user=jobq_web', '--listen', '127.0.0.1:0',
	'--auth', "basic:$tmp/users", '--min-refresh', '0' ], '>&', $log);
my $port;
for (1 .. 200)
{
	last if -e $log && (($port) = slurp_file($log) =~ m{listening on http://[0-9.]+:(\d+)});
	usleep(50_000);
}
ok($port, 'jobq-web started');

my ($out, $err) = ('', '');
IPC::Run::run([ 'node', "$pw/browser.mjs" ], '>', \$out, '2>', \$err, init => sub {
	$ENV{WEB_URL} = "http://127.0.0.1:$port/";
	$ENV{SHOTS} = $shots;
	$ENV{XSS_ID} = $xss_id;
	$ENV{DEAD_ID} = $dead_id;
	$ENV{MAILS_READY} = $ready;
	$ENV{BULK_MATCHING} = $matching;
	$ENV{GROUPS} = $groups ? 1 : 0;
	$ENV{FLOW_ID} = $flow;
});
diag($err) if $err ne '';
my $n = 0;
for my $line (split /\n/, $out)
{
	my $r = eval { decode_json($line) } or next;
	ok($r->{ok}, $r->{name}) or diag($r->{detail} // '');
	$n++;
}
my $left = $node->safe_psql('postgres', "SELECT ready FROM jobq_counts('drain')");
stop_worker($drainer, 'TERM');
cmp_ok($node->safe_psql('postgres', "SELECT completed FROM jobq_counts('drain')"), '>', $drained,
	"the worker drained while the browser paged ($left jobs still ready at the end)");
is($n, 44 + ($groups ? 2 : 0) + ($flows ? 1 : 0), 'the browser ran every check');
SKIP:
{
	skip 'the server has no flows (issue 18)', 1 unless $flows;
	is($node->safe_psql('postgres', "SELECT string_agg(DISTINCT state, ',') FROM jobq_flow_jobs($flow)"), 'cancelled',
		'the flow cancelled in the browser is cancelled');
}
SKIP:
{
	skip 'the server has no groups (issue 19)', 1 unless $groups;
	is($node->safe_psql('postgres', "SELECT state FROM jobq_job($blocker)"), 'cancelled',
		'the dead head skipped in the browser is cancelled');
}
is($node->safe_psql('postgres', "SELECT count(*) FROM jobq_list('mails', 'ready', filters => '{\"payload\": {\"from\": \"the form\"}}')"),
	'1', 'the job of the enqueue form is in the database');
is($node->safe_psql('postgres', "SELECT state FROM jobq_job($dead_id)"), 'ready',
	'the job retried in the browser is ready in the database');
is($node->safe_psql('postgres', "SELECT string_agg(state || ':' || n, ' ' ORDER BY state) FROM (SELECT state, count(*) n FROM jobq_list('bulkq', NULL, 10000) GROUP BY state) s"),
	"cancelled:50 dead:" . ($others - 50) . " ready:$matching",
	'bulkq in the database: the matching jobs retried, 50 others cancelled');
is($node->safe_psql('postgres', "SELECT max_attempts FROM jobq_queues() WHERE queue = 'mails'"), '4',
	'the setting edited in the browser is in the database');
is($node->safe_psql('postgres', "SELECT state FROM jobq_workers() WHERE name = 'ui-worker'"), 'quiet',
	'the worker quieted in the browser is quiet');
is($node->safe_psql('postgres', "SELECT count(*) FROM jobq_list('mails', filters => '{\"key_prefix\": \"schedule:nightly:manual:\"}')"), '1',
	'the schedule run in the browser enqueued one manual job');
ok(-s "$shots/$_.png", "screenshot $_.png") for qw(overview job jobs queue bulk phone);

$h->signal('TERM');
$h->finish;
done_testing();
