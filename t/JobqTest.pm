# t/JobqTest.pm: helpers shared by jobq's TAP tests.
#
# A test gets a fresh cluster with the extension created, starts real
# jobq-worker processes (IPC::Run, output to a log file), and waits for
# conditions by polling SQL.  Binaries come from $JOBQ_BIN_DIR (default
# client/ of the source tree).
package JobqTest;

use strict;
use warnings;
use Exporter 'import';
use File::Basename;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);

our @EXPORT = qw(new_node worker_bin cli_bin example_bin start_worker start_worker_cmd stop_worker
  wait_for wait_log worker_log worker_alive write_file write_handler backend_pid run_cli job_state);

# The worker is found in pg_stat_activity by its fallback application
# name; PostgreSQL::Test::Utils sets PGAPPNAME, which would override it.
delete $ENV{PGAPPNAME};

my $bindir = $ENV{JOBQ_BIN_DIR} // dirname(__FILE__) . '/../client';

sub worker_bin { return "$bindir/jobq-worker"; }
sub cli_bin    { return "$bindir/jobq"; }
sub example_bin { return "$bindir/examples/$_[0]"; }

# new_node(NAME, [EXTRA_CONF]): a started cluster with CREATE EXTENSION jobq
sub new_node
{
	my ($name, $conf) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf('postgresql.conf', "shared_preload_libraries = ''\n" . ($conf // ''));
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION jobq');
	return $node;
}

# write_file(NAME, TEXT): a file in a temp dir of the test (or at NAME when
# it is an absolute path, written anew); returns its path
sub write_file
{
	my ($name, $text) = @_;
	my $path = $name =~ m{^/} ? $name : PostgreSQL::Test::Utils::tempdir() . "/$name";
	open my $fh, '>', $path or die "$path: $!";
	print $fh $text;
	close $fh;
	return $path;
}

# write_handler(NAME, SHELL_BODY): an executable /bin/sh script in a temp
# dir of the test; returns its path
sub write_handler
{
	my ($name, $body) = @_;
	my $path = write_file("$name.sh", "#!/bin/sh\n$body\n");
	chmod 0755, $path;
	return $path;
}

my $nworkers = 0;

# start_worker(NODE, [WORKER ARGS...]): a running jobq-worker; returns a
# hash with {h} (IPC::Run harness), {pid} and {log} (its output file)
sub start_worker
{
	my ($node, @args) = @_;
	return start_worker_cmd($node, [ worker_bin() ], @args);
}

# start_worker_cmd(NODE, [COMMAND...], [WORKER ARGS...]): as start_worker,
# with another command line in front of the arguments (a program built on
# libjobq-worker.a, or valgrind and its options before the worker).  NODE
# may also be a conninfo string (several hosts, say).
sub start_worker_cmd
{
	my ($node, $cmd, @args) = @_;
	my $log = $PostgreSQL::Test::Utils::tmp_check . "/worker_" . (++$nworkers) . ".log";
	my $timer = IPC::Run::timeout(180);
	my $conninfo = ref $node ? $node->connstr('postgres') : $node;
	my $h = IPC::Run::start([ @$cmd, '-d', $conninfo, @args ],
		'<', '/dev/null', '>&', $log, $timer);
	my $w = { h => $h, pid => $h->{KIDS}[0]{PID}, log => $log, timer => $timer };
	return $w;
}

# stop_worker(W, [SIGNAL]): send SIGNAL (if any), wait for the exit;
# returns the exit code (or 128 + signal number when killed)
sub stop_worker
{
	my ($w, $sig) = @_;
	kill $sig, $w->{pid} if $sig;
	eval { $w->{h}->finish; };
	diag("worker did not exit: $@") if $@;
	my $raw = $w->{h}->full_result(0);
	return ($raw & 127) ? 128 + ($raw & 127) : $raw >> 8;
}

# is the worker process still there?
sub worker_alive { my $w = shift; return kill(0, $w->{pid}) && !-e "/proc/$w->{pid}/stat" ? 1 : (-e "/proc/$w->{pid}/stat" && slurp_file("/proc/$w->{pid}/stat") !~ /^\d+ \S+ Z/); }

sub worker_log { my $w = shift; return -e $w->{log} ? slurp_file($w->{log}) : ''; }

# wait_log(W, REGEX, [TIMEOUT_S]): poll until the worker's log matches;
# returns the time it first did, or undef (with the log as a diag)
sub wait_log
{
	my ($w, $re, $timeout) = @_;
	my $deadline = time + ($timeout // 30);
	while (time < $deadline)
	{
		return time if worker_log($w) =~ $re;
		usleep(100_000);
	}
	diag("log did not match $re:\n" . worker_log($w));
	return undef;
}

# wait_for(NODE, SQL, [EXPECTED], [TIMEOUT_S]): poll until SQL returns EXPECTED
sub wait_for
{
	my ($node, $sql, $expected, $timeout) = @_;
	$expected //= 't';
	my $deadline = time + ($timeout // 30);
	my $got;
	while (time < $deadline)
	{
		$got = $node->safe_psql('postgres', $sql);
		return 1 if $got eq $expected;
		usleep(100_000);
	}
	diag("wait_for timed out: $sql => '$got', wanted '$expected'");
	return 0;
}

# the backend pid of the (only) worker connection, or '' when none
sub backend_pid
{
	my $node = shift;
	return $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE application_name = 'jobq-worker'");
}

sub job_state
{
	my ($node, $id) = @_;
	return $node->safe_psql('postgres', "SELECT state || ':' || attempt FROM jobq_job($id)");
}

# run_cli(NODE, [ARGS...], [STDIN]): (exit code, stdout, stderr) of jobq
sub run_cli
{
	my ($node, $args, $in) = @_;
	my ($out, $err) = ('', '');
	IPC::Run::run([ cli_bin(), '-d', $node->connstr('postgres'), @$args ],
		'<', \($in // ''), '>', \$out, '2>', \$err);
	return ($? >> 8, $out, $err);
}

1;
