# t/024_worker_handler_missing.pl: a handler that cannot be executed.  At
# start the worker refuses to run (exit 2, before connecting) instead of
# failing every job until it is dead.  When the handler stops being
# executable later, the job that finds out is released with its attempt
# given back (not failed), the worker stops claiming, logs why and exits 4
# after its running jobs; the other jobs are untouched.
use strict;
use warnings;
use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);
use JobqTest;

my $node = new_node('missing');
my $dir = PostgreSQL::Test::Utils::tempdir();
$node->safe_psql('postgres', "SELECT jobq_create_queue('m', max_attempts => 3)");
$node->safe_psql('postgres', "SELECT jobq_enqueue('m', '{}') FROM generate_series(1, 3)");

# worker(ARGS...): (exit code, stderr) of a worker run to its end
sub worker
{
	my ($out, $err) = ('', '');
	IPC::Run::run([ worker_bin(), '-d', $node->connstr('postgres'), @_ ],
		'<', \'', '>', \$out, '2>', \$err, IPC::Run::timeout(60));
	return ($? >> 8, $err);
}

my $plain = "$dir/plain";
open my $fh, '>', $plain or die;
print $fh "#!/bin/sh\nexit 0\n";
close $fh;
chmod 0644, $plain;

my @cases = (
	[ '/no/such/handler', 'No such file or directory' ],
	[ $plain,             'Permission denied' ],
	[ $dir,               'Is a directory' ],
	[ 'no-such-handler-cmd', 'not found in PATH' ]);
for my $c (@cases)
{
	my ($cmd, $why) = @$c;
	my ($rc, $err) = worker('-q', 'm', '--burst', '--', $cmd);
	is($rc, 2, "start with $cmd: exit 2");
	is($err, "jobq-worker: handler \"$cmd\" cannot be executed: $why\n", "start with $cmd: says why");
}
is($node->safe_psql('postgres', "SELECT count(*) FROM jobq.jobs WHERE queue = 'm' AND state = 'ready' AND attempt = 0"),
	'3', 'refused at start: no job was claimed');
my ($rc) = worker('-q', 'm', '--burst', '--', 'true');
is($rc, 0, 'a handler found in PATH is fine (true)');
is($node->safe_psql('postgres', "SELECT completed FROM jobq_stats('m')"), '3', 'and ran the jobs');

# the handler goes away while the worker runs
my $h = write_handler('h', "touch $dir/ran.\$JOBQ_JOB_ID; echo '{}'");
my $w = start_worker($node, '-q', 'm', '--poll-interval', '0.2', '--', $h);
my $id = $node->safe_psql('postgres', "SELECT jobq_enqueue('m', '{}')");
ok(wait_for($node, "SELECT state FROM jobq_job($id)", 'completed', 20), 'first job completed');
chmod 0644, $h;
my $id2 = $node->safe_psql('postgres', "SELECT jobq_enqueue('m', '{}')");
is(stop_worker($w), 4, 'handler no longer executable: the worker exits 4');
is(job_state($node, $id2), 'ready:0', 'its job is ready again with its attempt given back');
ok(!-e "$dir/ran.$id2", 'the handler never ran for it');
like(worker_log($w),
	qr/error: handler "\Q$h\E" cannot be executed: Permission denied; releasing job $id2 and stopping\n/,
	'the log says why');
like(worker_log($w), qr/info: job id=$id2 queue=m attempt=1\/3 outcome=not-executable state=released /,
	'the release is logged');

# removed altogether: the same
chmod 0755, $h;
$w = start_worker($node, '-q', 'm', '--poll-interval', '0.2', '--', $h);
ok(wait_for($node, "SELECT state FROM jobq_job($id2)", 'completed', 20), 'executable again: the job ran');
unlink $h;
my $id3 = $node->safe_psql('postgres', "SELECT jobq_enqueue('m', '{}')");
is(stop_worker($w), 4, 'handler removed: exit 4');
is(job_state($node, $id3), 'ready:0', 'handler removed: the job is ready, no attempt spent');
like(worker_log($w),
	qr/error: handler "\Q$h\E" cannot be executed: No such file or directory; releasing job $id3 and stopping\n/,
	'handler removed: the log says why');
done_testing();
