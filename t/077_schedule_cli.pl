# t/077_schedule_cli.pl: the schedule commands of the jobq CLI (issue 17).
#
# schedule apply FILE: every entry upserted (add), the same file again
# changes nothing (unchanged, the next tick kept), an edited entry is a
# change, --dry-run reports and rolls back, --prune removes only what this
# file made (a schedule made from SQL stays); syntax errors name their
# lines and exit 2 before anything is sent, a value the server refuses
# rolls the whole apply back (exit 1); schedules (table and --json);
# schedule trigger, pause, resume, rm and their errors.
use strict;
use warnings;
use IPC::Run;
use JSON::PP;
use PostgreSQL::Test::Utils;
use Test::More;
use JobqTest;

my $node = new_node('schedule_cli');
my ($rc, $out, $err);

sub cli { return run_cli($node, @_); }

$node->safe_psql('postgres', qq{
	SELECT jobq_create_queue('reports');
	SELECT jobq_create_queue('ops');
	SELECT jobq_schedule('from-sql', 'ops', '\@hourly');
});
my $file = write_file('schedules.cron', <<'EOF');
# m h dom mon dow      name            queue    settings      payload
TZ=Europe/Berlin
0 3 * * *              nightly-report  reports  overlap=skip  {"kind": "daily", "note": "a b"}
@every 30s             heartbeat       ops      tz=UTC
queue=ops
*/15 9-17 * * mon-fri  poll-crm        catchup=none grace=1min priority=5
EOF

($rc, $out) = cli([ 'schedule', 'apply', $file, '--dry-run' ]);
is($rc, 0, 'apply --dry-run: exit 0');
like($out, qr/^add +nightly-report \(next .*\nadd +heartbeat .*\nadd +poll-crm .*\n3 added, 0 changed, 0 unchanged, 0 removed \(dry run/s,
	'apply --dry-run: what it would do');
is($node->safe_psql('postgres', 'SELECT count(*) FROM jobq_schedules()'), '1', 'dry run: nothing changed');

($rc, $out) = cli([ 'schedule', 'apply', $file ]);
is($rc, 0, 'apply: exit 0');
like($out, qr/3 added, 0 changed, 0 unchanged, 0 removed\n$/, 'apply: three added');
is($node->safe_psql('postgres', qq{
	SELECT string_agg(name || ' ' || queue || ' ' || expr || ' ' || tz || ' ' || overlap || ' ' ||
	                  catchup || ' ' || grace || ' ' || priority || ' ' || payload::text || ' ' ||
	                  (source = 'sql' OR source LIKE 'file:/%schedules.cron'), E'\n' ORDER BY name)
	FROM jobq_schedules()}),
	join("\n",
		'from-sql ops @hourly UTC allow latest 00:05:00 0 {} true',
		'heartbeat ops @every 30s UTC allow latest 00:05:00 0 {} true',
		'nightly-report reports 0 3 * * * Europe/Berlin skip latest 00:05:00 0 {"kind": "daily", "note": "a b"} true',
		'poll-crm ops */15 9-17 * * mon-fri Europe/Berlin allow none 00:01:00 5 {} true'),
	'apply: the entries as written, defaults lines applied');
my $next = $node->safe_psql('postgres', "SELECT next_run_at FROM jobq_schedules() WHERE name = 'heartbeat'");

sleep 1;
($rc, $out) = cli([ 'schedule', 'apply', $file ]);
like($out, qr/0 added, 0 changed, 3 unchanged, 0 removed\n$/, 'the same file again: unchanged');
is($node->safe_psql('postgres', "SELECT next_run_at FROM jobq_schedules() WHERE name = 'heartbeat'"),
	$next, 'unchanged: the next tick kept');

# heartbeat gone from the file, poll-crm edited
write_file($file, <<'EOF');
TZ=Europe/Berlin
0 3 * * *              nightly-report  reports  overlap=skip  {"kind": "daily", "note": "a b"}
*/30 9-17 * * mon-fri  poll-crm        ops  catchup=none grace=1min priority=5
EOF
($rc, $out) = cli([ 'schedule', 'apply', $file ]);
like($out, qr/^unchanged nightly-report\nchange +poll-crm .*\n0 added, 1 changed, 1 unchanged, 0 removed\n$/s,
	'without --prune: a change, nothing removed');
($rc, $out) = cli([ '--json', 'schedule', 'apply', $file, '--prune' ]);
is_deeply([ map { [ $_->{name}, $_->{action} ] } @{ decode_json($out) } ],
	[ [ 'nightly-report', 'unchanged' ], [ 'poll-crm', 'unchanged' ], [ 'heartbeat', 'remove' ] ],
	'--prune --json: removes what the file no longer has');
is($node->safe_psql('postgres', 'SELECT string_agg(name, \' \' ORDER BY name) FROM jobq_schedules()'),
	'from-sql nightly-report poll-crm', '--prune left the schedule made from SQL');

# syntax errors: all reported with their lines, exit 2, nothing sent
my $bad = $node->basedir . '/bad.cron';
write_file($bad, "foo=bar\n0 3 * * *\n* * * * * lonely\n* * * * * x ops y\n* * * * * ok ops\n* * * * * ok ops\n");
($rc, $out, $err) = cli([ 'schedule', 'apply', $bad ]);
is($rc, 2, 'syntax errors: exit 2');
like($err, qr/bad\.cron:1: not a KEY=VALUE setting: "foo=bar"\n.*:2: no schedule name after the expression\n.*:3: no queue for schedule "lonely"\n.*:4: unexpected .*"y"\n.*:6: schedule "ok" is already defined on line 5\n/s,
	'syntax errors: each with its line');
# a value the server refuses: the whole apply rolls back
write_file($bad, "* * * * * fine ops\n0 3 * * * wrong-zone ops tz=CDT\n");
($rc, $out, $err) = cli([ 'schedule', 'apply', $bad ]);
is($rc, 1, 'server refusal: exit 1');
like($err, qr/bad\.cron:2: schedule wrong-zone: error: .*CDT.*\(SQLSTATE 22023\)/, 'server refusal: line, name, SQLSTATE');
is($node->safe_psql('postgres', "SELECT count(*) FROM jobq_schedules() WHERE name = 'fine'"), '0',
	'server refusal: nothing applied');
($rc, $out, $err) = cli([ 'schedule', 'apply', $node->basedir . '/missing.cron' ]);
is($rc, 2, 'a missing file: exit 2');

# schedules: table and --json
($rc, $out) = cli([ 'schedules' ]);
like($out, qr/^name +queue +expr +tz +paused +next_run_at .*\n-+.*\nfrom-sql +ops +\@hourly +UTC +no /s, 'schedules: table');
($rc, $out) = cli([ '--json', 'schedules' ]);
is_deeply([ map { $_->{name} } @{ decode_json($out) } ], [ 'from-sql', 'nightly-report', 'poll-crm' ],
	'schedules --json');

# trigger, pause, resume, rm
($rc, $out) = cli([ 'schedule', 'trigger', 'nightly-report' ]);
is($rc, 0, 'trigger: exit 0');
like($out, qr/^\d+\n$/, 'trigger: prints the job id');
is($node->safe_psql('postgres', "SELECT queue || ' ' || (payload -> '_cron' ->> 'manual') FROM jobq_job($out)"),
	'reports true', 'trigger: a manual run in the schedule\'s queue');
($rc, $out) = cli([ 'schedule', 'pause', 'poll-crm' ]);
is($out, "schedule poll-crm paused\n", 'pause');
($rc, $out) = cli([ '--json', 'schedule', 'resume', 'poll-crm' ]);
is(decode_json($out)->{done}, 'resumed', 'resume --json');
($rc, $out) = cli([ 'schedule', 'rm', 'poll-crm' ]);
is($out, "schedule poll-crm removed\n", 'rm');
($rc, $out, $err) = cli([ 'schedule', 'rm', 'poll-crm' ]);
is($rc, 1, 'rm of none: exit 1');
($rc, $out, $err) = cli([ 'schedule', 'pause', 'nope' ]);
is($rc, 1, 'pause of none: exit 1');
like($err, qr/schedule "nope" does not exist \(SQLSTATE 42704\)/, 'pause of none: the server says why');
($rc) = cli([ 'schedule', 'rm', 'x', '--prune' ]);
is($rc, 2, '--prune outside apply: exit 2');
($rc) = cli([ 'schedule', 'fly', 'x' ]);
is($rc, 2, 'unknown subcommand: exit 2');
($rc) = cli([ 'schedule' ]);
is($rc, 2, 'no subcommand: exit 2');

done_testing();
