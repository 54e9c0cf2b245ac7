# t/012_durations.pl: the one duration syntax of jobq and jobq-worker
# (client/common/duration.c): plain seconds, numbers with units ("5min",
# "1h30m", "2 days", "500ms") and clocks ("01:30:00") give the same seconds
# in both tools; anything else, and a value out of an option's range, is a
# usage error (exit 2) that names the option and shows the syntax, before
# any database work.
use strict;
use warnings;
use IPC::Run;
use JSON::PP;
use PostgreSQL::Test::Utils;
use Test::More;
use JobqTest;

my $node = new_node('durations');
my ($rc, $out, $err);

sub cli { return run_cli($node, @_); }

# the worker with ARGS, run to its end: (exit code, stdout, stderr)
sub worker_run
{
	my @args = @_;
	my ($o, $e) = ('', '');
	IPC::Run::run([ worker_bin(), '-d', $node->connstr('postgres'), @args ],
		'<', \'', '>', \$o, '2>', \$e, IPC::Run::timeout(60));
	return ($? >> 8, $o, $e);
}

# --- the CLI: each form, read back from the server's settings
($rc, $out, $err) = cli([ 'queue', 'create', 'd1', '--lease', '5min',
	'--backoff-base', '1h30m', '--backoff-cap', '2 days',
	'--completed-retention', '01:30:00', '--dead-retention', '90' ]);
is($rc, 0, 'queue create with durations in every form: exit 0') or diag($err);
is($node->safe_psql('postgres',
	"SELECT concat_ws(',', extract(epoch FROM lease)::int, extract(epoch FROM backoff_base)::int, "
	  . "extract(epoch FROM backoff_cap)::int, extract(epoch FROM completed_retention)::int, "
	  . "extract(epoch FROM dead_retention)::int) FROM jobq_queues() WHERE queue = 'd1'"),
	'300,5400,172800,5400,90', 'CLI: 5min, 1h30m, "2 days", 01:30:00 and 90 read as seconds');
($rc) = cli([ 'queue', 'alter', 'd1', '--lease', '1 hour 30 minutes' ]);
is($rc, 0, 'queue alter --lease "1 hour 30 minutes": exit 0');
is($node->safe_psql('postgres',
	"SELECT extract(epoch FROM lease)::int FROM jobq_queues() WHERE queue = 'd1'"),
	'5400', 'CLI: long unit names');
($rc, $out) = cli([ 'enqueue', 'd1', '{}', '--delay', '2min' ]);
is($rc, 0, 'enqueue --delay 2min: exit 0');
is($node->safe_psql('postgres',
	"SELECT run_at - enqueued_at BETWEEN '119 s' AND '121 s' FROM jobq_job($out)"),
	't', 'enqueue --delay 2min: run_at two minutes after enqueued_at');

# bad durations: exit 2, the option and the syntax named, nothing changed
for my $bad ('5x', '-5', '1h30', '1e3', '', ' ', '1..5s', 'min', '5 mins 3 fortnights', '0x10')
{
	($rc, $out, $err) = cli([ 'queue', 'alter', 'd1', '--lease', $bad ]);
	is($rc, 2, "CLI --lease \"$bad\": exit 2");
	like($err, qr/^jobq: invalid duration "\Q$bad\E" for --lease\nDURATION is seconds/,
		"CLI --lease \"$bad\": names the option and shows the syntax");
}
($rc, $out, $err) = cli([ 'queue', 'alter', 'd1', '--lease', '1.5' ]);
is($rc, 2, 'CLI --lease 1.5: exit 2');
like($err, qr/--lease must be whole seconds/, 'CLI --lease 1.5: whole seconds only');
($rc, $out, $err) = cli([ 'purge', 'd1', '--older-than', '500ms' ]);
is($rc, 2, 'CLI --older-than 500ms: exit 2 (a fraction of a second)');
($rc, $out, $err) = cli([ 'stats', '--watch', '50ms' ]);
is($rc, 2, 'CLI --watch 50ms: exit 2 (below 100ms)');
is($node->safe_psql('postgres',
	"SELECT extract(epoch FROM lease)::int FROM jobq_queues() WHERE queue = 'd1'"),
	'5400', 'refused durations changed nothing');

# --- the worker: the same syntax
my $handler = write_handler('slow', 'sleep 30');
$node->safe_psql('postgres', "SELECT jobq_create_queue('w1')");
my $job = $node->safe_psql('postgres', "SELECT jobq_enqueue('w1', '{}')");
my $w = start_worker($node, '-q', 'w1', '--once', '--lease', '1h30m', '--heartbeat', '10min',
	'--poll-interval', '250ms', '--timeout', '2 hours', '--grace', '01:00', '--kill-after', '2s',
	'--sweep-interval', '0', '--', $handler);
ok(wait_for($node, "SELECT state = 'running' FROM jobq_job($job)"), 'worker with durations claims');
is($node->safe_psql('postgres',
	"SELECT locked_until - now() BETWEEN '5300 s' AND '5401 s' FROM jobq_job($job)"),
	't', 'worker --lease 1h30m: the claim holds a lease of 5400 s');
stop_worker($w, 'INT');

for my $bad ('5x', '-5', '1h30', '1e3', '', 'min')
{
	($rc, $out, $err) = worker_run('-q', 'w1', '--lease', $bad, '--', 'true');
	is($rc, 2, "worker --lease \"$bad\": exit 2");
	like($err, qr/^jobq-worker: invalid duration "\Q$bad\E" for --lease\nDURATION is seconds/,
		"worker --lease \"$bad\": names the option and shows the syntax");
}
($rc, $out, $err) = worker_run('-q', 'w1', '--lease', '2d', '--', 'true');
is($rc, 2, 'worker --lease 2d: exit 2 (above the maximum)');
like($err, qr/^jobq-worker: --lease must be between 1s and 1d, not "2d"/,
	'worker --lease 2d: says the range');
($rc, $out, $err) = worker_run('-q', 'w1', '--poll-interval', '5ms', '--', 'true');
is($rc, 2, 'worker --poll-interval 5ms: exit 2 (below 10ms)');
like($err, qr/--poll-interval must be between 10ms and 1d/, 'worker --poll-interval 5ms: says the range');
($rc, $out, $err) = worker_run('-q', 'w1', '--timeout', '1.5.5', '--', 'true');
is($rc, 2, 'worker --timeout 1.5.5: exit 2');

# both tools document the one syntax
($rc, $out) = cli([ '--help' ]);
my ($cli_help) = $out =~ /(DURATION is .*?\n.*?\n)/;
($rc, $out) = worker_run('--help');
my ($worker_help) = $out =~ /(DURATION is .*?\n.*?\n)/;
ok(defined $cli_help && $cli_help eq $worker_help, 'jobq --help and jobq-worker --help show the same DURATION text');

done_testing();
