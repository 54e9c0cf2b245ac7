# t/027_cli_metrics.pl: jobq metrics against a server: --prometheus prints
# exactly the text exposition format doc/jobq.md documents (every family's
# HELP and TYPE once, before its samples; labels, values, the quantiles
# that have samples and only those), for every queue and for one; the
# table and --json read jobq_metrics; bad usage is exit 2, an unknown
# queue exit 1, a period the server refuses exit 1 with its SQLSTATE.
# The stored minute is written directly (no preload, so no live ring).
use strict;
use warnings;
use JSON::PP;
use PostgreSQL::Test::Utils;
use Test::More;
use JobqTest;

my $node = new_node('metrics');
my ($rc, $out, $err);

sub cli { return run_cli($node, @_); }

$node->safe_psql('postgres', q{
	SELECT jobq_create_queue('mails');
	SELECT jobq_create_queue('slow');
	SELECT jobq_pause('slow');
	SELECT jobq_enqueue('mails', '{}') FROM generate_series(1, 3);
	SELECT jobq_enqueue('mails', '{}', delay => '1 hour');
});

# the stored minute must stay the last finished one while the CLI runs:
# start early in a minute
my $sec = $node->safe_psql('postgres', q{SELECT extract(second FROM clock_timestamp())::int});
sleep(61 - $sec) if $sec > 45;
$node->safe_psql('postgres', q{
	INSERT INTO jobq.metrics_state
	SELECT true, m - interval '1 hour', m, date_trunc('hour', m - interval '1 hour'),
	       date_trunc('day', m - interval '1 hour')
	FROM (SELECT date_trunc('minute', clock_timestamp()) AS m) x;
	INSERT INTO jobq.metrics_minute
	SELECT 'mails', date_trunc('minute', clock_timestamp()) - interval '1 minute',
	       '{5,4,3,1,1,0,2,1}', '{0,10,0,0,0,0,0,0,0,0,0,0,0,0,0,0}',
	       '{0,0,0,4,0,0,0,0,0,0,0,0,0,0,0,0}', NULL, true;
});

my $expected = <<'PROM';
# HELP jobq_jobs Jobs of the queue by state, now (ready excludes delayed).
# TYPE jobq_jobs gauge
jobq_jobs{queue="mails",state="ready"} 3
jobq_jobs{queue="mails",state="delayed"} 1
jobq_jobs{queue="mails",state="running"} 0
jobq_jobs{queue="mails",state="completed"} 0
jobq_jobs{queue="mails",state="dead"} 0
jobq_jobs{queue="mails",state="cancelled"} 0
jobq_jobs{queue="slow",state="ready"} 0
jobq_jobs{queue="slow",state="delayed"} 0
jobq_jobs{queue="slow",state="running"} 0
jobq_jobs{queue="slow",state="completed"} 0
jobq_jobs{queue="slow",state="dead"} 0
jobq_jobs{queue="slow",state="cancelled"} 0
# HELP jobq_jobs_expired Running jobs whose lease has passed and that no sweep has returned yet.
# TYPE jobq_jobs_expired gauge
jobq_jobs_expired{queue="mails"} 0
jobq_jobs_expired{queue="slow"} 0
# HELP jobq_queue_paused Whether the queue is paused (1) or not (0).
# TYPE jobq_queue_paused gauge
jobq_queue_paused{queue="mails"} 0
jobq_queue_paused{queue="slow"} 1
# HELP jobq_oldest_ready_age_seconds Age of the oldest ready job, 0 when none is ready.
# TYPE jobq_oldest_ready_age_seconds gauge
jobq_oldest_ready_age_seconds{queue="mails"} AGE
jobq_oldest_ready_age_seconds{queue="slow"} 0
# HELP jobq_last_minute_events Events of the last finished minute, by kind.
# TYPE jobq_last_minute_events gauge
jobq_last_minute_events{queue="mails",event="enqueued"} 5
jobq_last_minute_events{queue="mails",event="claimed"} 4
jobq_last_minute_events{queue="mails",event="completed"} 3
jobq_last_minute_events{queue="mails",event="retried"} 1
jobq_last_minute_events{queue="mails",event="dead"} 1
jobq_last_minute_events{queue="mails",event="cancelled"} 0
jobq_last_minute_events{queue="mails",event="lease_expired"} 2
jobq_last_minute_events{queue="mails",event="stale_acks"} 1
jobq_last_minute_events{queue="mails",event="limit_held"} 0
jobq_last_minute_events{queue="mails",event="rate_held"} 0
jobq_last_minute_events{queue="slow",event="enqueued"} 0
jobq_last_minute_events{queue="slow",event="claimed"} 0
jobq_last_minute_events{queue="slow",event="completed"} 0
jobq_last_minute_events{queue="slow",event="retried"} 0
jobq_last_minute_events{queue="slow",event="dead"} 0
jobq_last_minute_events{queue="slow",event="cancelled"} 0
jobq_last_minute_events{queue="slow",event="lease_expired"} 0
jobq_last_minute_events{queue="slow",event="stale_acks"} 0
jobq_last_minute_events{queue="slow",event="limit_held"} 0
jobq_last_minute_events{queue="slow",event="rate_held"} 0
# HELP jobq_last_minute_wait_seconds Wait from ready to first claim in the last finished minute, by quantile; none without samples.
# TYPE jobq_last_minute_wait_seconds gauge
jobq_last_minute_wait_seconds{queue="mails",quantile="0.5"} 0.002
jobq_last_minute_wait_seconds{queue="mails",quantile="0.95"} 0.0029
jobq_last_minute_wait_seconds{queue="mails",quantile="0.99"} 0.00298
# HELP jobq_last_minute_run_seconds Run time from claim to finish in the last finished minute, by quantile; none without samples.
# TYPE jobq_last_minute_run_seconds gauge
jobq_last_minute_run_seconds{queue="mails",quantile="0.5"} 0.02
jobq_last_minute_run_seconds{queue="mails",quantile="0.95"} 0.029
jobq_last_minute_run_seconds{queue="mails",quantile="0.99"} 0.0298
# HELP jobq_last_minute_complete Whether the last finished minute's figures are complete (1) or not (0).
# TYPE jobq_last_minute_complete gauge
jobq_last_minute_complete{queue="mails"} 1
jobq_last_minute_complete{queue="slow"} 1
PROM

($rc, $out, $err) = cli([ 'metrics', '--prometheus' ]);
is($rc, 0, '--prometheus: exit 0');
is($err, '', '--prometheus: nothing on stderr');
# the one value that moves: the age of the oldest ready job
my $age;
(my $got = $out) =~ s/^(jobq_oldest_ready_age_seconds\{queue="mails"\}) ([0-9.e+-]+)$/$1 AGE/m
  and $age = $2;
is($got, $expected, '--prometheus: the exact exposition text');
ok(defined $age && $age > 0 && $age < 600, "--prometheus: oldest ready age in seconds ($age)");

# the text format's grammar, line by line, and one HELP and TYPE per family
my (%help, %type, $bad);
for my $line (split /\n/, $out)
{
	if ($line =~ /^# HELP (jobq_[a-z_]+) \S/) { $help{$1}++; next; }
	if ($line =~ /^# TYPE (jobq_[a-z_]+) gauge$/) { $type{$1}++; next; }
	next if $line =~ /^(jobq_[a-z_]+)\{[a-z]+="[^"\\\n]*"(,[a-z]+="[^"\\\n]*")*\} -?[0-9]+(\.[0-9]+)?(e[+-]?[0-9]+)?$/
	  && $type{$1};
	$bad = $line;
	last;
}
is($bad, undef, '--prometheus: every line is a HELP, a TYPE or a sample of a declared family');
is_deeply([ grep { $help{$_} != 1 || ($type{$_} // 0) != 1 } keys %help ], [],
	'--prometheus: one HELP and one TYPE per family');

# one queue: the same families, only its samples
($rc, $out) = cli([ 'metrics', 'slow', '--prometheus' ]);
is($rc, 0, '--prometheus QUEUE: exit 0');
(my $slow = $expected) =~ s/^jobq_[a-z_]+\{queue="mails".*\n//mg;
is($out, $slow, '--prometheus QUEUE: that queue only');
($rc, $out, $err) = cli([ 'metrics', 'nosuch', '--prometheus' ]);
is($rc, 1, '--prometheus unknown queue: exit 1');
like($err, qr/no queue "nosuch"/, '--prometheus unknown queue: says so');

# bad usage
for my $args ([ '--prometheus', '--json' ], [ '--prometheus', '--bucket', '1h' ],
	[ '--prometheus', '--from', 'today' ], [ '--bucket', '30s' ], [ '--bucket', '90s' ],
	[ '--bucket', 'soon' ], [ 'a', 'b' ], [ '--state', 'ready' ])
{
	($rc, $out, $err) = cli([ 'metrics', @$args ]);
	is($rc, 2, "metrics @$args: exit 2");
	like($err, qr/Try "jobq --help"/, "metrics @$args: usage hint");
}

# the table and --json: jobq_metrics per bucket
($rc, $out) = cli([ 'metrics', 'mails', '--bucket', '1h' ]);
is($rc, 0, 'metrics table: exit 0');
like($out, qr/^queue\s+bucket\s+enqueued\s+claimed\s+completed\s+retried\s+dead\s+cancelled\s+lease_expired\s+stale_acks\s+limit_held\s+rate_held\s+wait_p50\s+wait_p95\s+wait_p99\s+run_p50\s+run_p95\s+run_p99\s+complete\n-+/,
	'metrics table: the columns');
like($out, qr/^mails\s+\d{4}-\d\d-\d\d \d\d:00\s+5\s+4\s+3\s+1\s+1\s+0\s+2\s+1\s+0\s+0\s+2\.0ms\s+2\.9ms\s+3\.0ms\s+20\.0ms\s+29\.0ms\s+29\.8ms\s+no$/m,
	'metrics table: the hour holding the minute (not over yet: incomplete)');
my $minute = $node->safe_psql('postgres',
	q{SELECT date_trunc('minute', clock_timestamp()) - interval '1 minute'});
($rc, $out) = cli([ '--json', 'metrics', 'mails', '--from', $minute, '--to', "$minute" ]);
is_deeply(decode_json($out), [], 'metrics --json: from = to is no bucket');
($rc, $out) = cli([ 'metrics', 'mails', '--json', '--from', $minute, '--bucket', '1min',
	'--to', $node->safe_psql('postgres', q{SELECT date_trunc('minute', clock_timestamp())}) ]);
my $m = decode_json($out);
is(scalar @$m, 1, 'metrics --json: one bucket');
is_deeply([ @{ $m->[0] }{qw(queue enqueued claimed completed lease_expired stale_acks complete)} ],
	[ 'mails', 5, 4, 3, 2, 1, JSON::PP::true ], 'metrics --json: counters by name, complete');
is($m->[0]{wait_p50_s}, 0.002, 'metrics --json: percentiles in seconds');
is_deeply($m->[0]{run_hist}, [ 0, 0, 0, 4, (0) x 12 ], 'metrics --json: the histogram');
($rc, $out, $err) = cli([ 'metrics', 'nosuch' ]);
is($rc, 1, 'metrics unknown queue: exit 1');
like($err, qr/no queue "nosuch"/, 'metrics unknown queue: says so');
($rc, $out, $err) = cli([ 'metrics', '--from', 'tomorrow', '--to', 'today' ]);
is($rc, 1, 'metrics from after to: exit 1');
like($err, qr/since must not be after until \(SQLSTATE 22023\)/, 'metrics from after to: the server says why');

$node->stop;
done_testing();
