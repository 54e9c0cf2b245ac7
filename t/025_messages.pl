# t/025_messages.pl: bad command lines of jobq-worker and jobq get a
# message that names the option and the value, and exit 2 before
# connecting (every case runs against a server that does not exist, where
# connecting would give 3 for the worker and 1 for the CLI).
use strict;
use warnings;
use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;
use JobqTest;

my $nowhere = 'host=/nonexistent connect_timeout=2';

# run_tool(BIN, ARGS): (exit code, stderr)
sub run_tool
{
	my ($bin, @args) = @_;
	my ($out, $err) = ('', '');
	IPC::Run::run([ $bin, '-d', $nowhere, @args ], '<', \'', '>', \$out, '2>', \$err,
		IPC::Run::timeout(30));
	return ($? >> 8, $err);
}

my $wtry = "Try \"jobq-worker --help\" for more information.\n";
my @worker = (
	[ [ '-q', 'q', '-c', '-1', '--', 'true' ],
		"jobq-worker: --concurrency must be a whole number between 1 and 1000, not \"-1\"\n$wtry" ],
	[ [ '-q', 'q', '--concurrency=2.5', '--', 'true' ],
		"jobq-worker: --concurrency must be a whole number between 1 and 1000, not \"2.5\"\n$wtry" ],
	[ [ '-q', 'q', '-b', '1001', '--', 'true' ],
		"jobq-worker: --batch must be a whole number between 1 and 1000, not \"1001\"\n$wtry" ],
	[ [ '-q', 'q', '--max', '0', '--', 'true' ],
		"jobq-worker: --max must be a whole number between 1 and 1000000000000000, not \"0\"\n$wtry" ],
	[ [ '-q', 'Bad Q', '--', 'true' ],
		"jobq-worker: invalid queue name \"Bad Q\" for --queue: at most 48 bytes of lowercase letters and digits, with single '_' or '-' between them\n$wtry" ],
	[ [ '-q', 'a' x 49, '--', 'true' ],
		"jobq-worker: invalid queue name \"" . ('a' x 49) . "\" for --queue: at most 48 bytes of lowercase letters and digits, with single '_' or '-' between them\n$wtry" ],
	[ [ (map { ('-q', "q$_") } 1 .. 101), '--', 'true' ],
		"jobq-worker: 101 queues given; a claim names at most 100\n$wtry" ],
	[ [ '-q', 'q', '--wait-mode', 'sometimes', '--', 'true' ],
		"jobq-worker: invalid value \"sometimes\" for --wait-mode\n$wtry" ],
	[ [ '-q', 'q', '--log-format=xml', '--', 'true' ],
		"jobq-worker: invalid value \"xml\" for --log-format\n$wtry" ],
	[ [ '-q', 'q', '--db-timeout', '0', '--', 'true' ],
		"jobq-worker: --db-timeout must be between 1s and 1h, not \"0\"\n$wtry" ]);
for my $c (@worker)
{
	my ($args, $msg) = @$c;
	my $shown = join(' ', @$args) =~ s/^(.{60}).*/$1.../r;
	my ($rc, $err) = run_tool(worker_bin(), @$args);
	is($rc, 2, "jobq-worker $shown: exit 2");
	is($err, $msg, "jobq-worker $shown: message");
}

my $ctry = "Try \"jobq --help\" for more information.\n";
my @cli = (
	[ [ 'list', 'q', '--limit', '100000' ], "jobq: --limit must be between 1 and 10000, not \"100000\"\n$ctry" ],
	[ [ 'enqueue', 'q', '{}', '--priority' ], "jobq: option --priority needs a value\n$ctry" ],
	[ [ 'enqueue', 'q', '--priority' ], "jobq: option --priority needs a value\n$ctry" ],
	[ [ 'stats', '-d' ], "jobq: option -d needs a value\n$ctry" ],
	[ [ 'stats', '--json=yes' ], "jobq: option --json takes no value\n$ctry" ],
	[ [ 'stats', '--frobnicate' ], "jobq: unknown option \"--frobnicate\"\n$ctry" ],
	[ [ 'stats', '--frobnicate=3' ], "jobq: unknown option \"--frobnicate\"\n$ctry" ],
	[ [ 'stats', '-x' ], "jobq: unknown option \"-x\"\n$ctry" ]);
for my $c (@cli)
{
	my ($args, $msg) = @$c;
	my ($rc, $err) = run_tool(cli_bin(), @$args);
	is($rc, 2, "jobq @$args: exit 2");
	is($err, $msg, "jobq @$args: message");
}
done_testing();
