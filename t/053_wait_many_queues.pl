# t/053_wait_many_queues.pl: a waiting claim on many queues sleeps on its
# latch like any other (issue 13, bug 11).
#
# A claim may name up to JOBQ_CLAIM_QUEUES_MAX (100) queues, and each of
# them waits in a waiter slot: it is counted in jobq_wait_stats and woken
# by the commit of an enqueue into any of its queues, the 100th as well as
# the first.  Before, a claim naming more than 16 queues took no slot and
# polled.  jobq-worker uses blocking claims for as many queues.  Asserted
# through the counters of jobq_wait_stats (waiting, wakeups), not through
# timings: with jobq.claim_recheck_interval at 60 s, a waiter that took a
# slot claims only when a commit wakes it.
use strict;
use warnings;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);
use JobqTest;

my $node = PostgreSQL::Test::Cluster->new('manyq');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'jobq'
jobq.sweeper_databases = ''
jobq.claim_recheck_interval = '60s'
});
$node->start;
$node->safe_psql('postgres', qq{
	CREATE EXTENSION jobq;
	SELECT jobq_create_queue('q' || g) FROM generate_series(1, 101) g;
});

# start_claim(N): a psql waiting up to 60 s in a claim on queues q1..qN
sub start_claim
{
	my $n = shift;
	my ($out, $err) = ('', '');
	my $sql = "SELECT coalesce(string_agg(id::text, ','), 'none') FROM jobq_claim("
	  . "(SELECT array_agg('q' || g ORDER BY g) FROM generate_series(1, $n) g), wait => '60 s')";
	my $h = IPC::Run::start(
		[ $node->installed_command('psql'), '-XAtq', '-d', $node->connstr('postgres'), '-c', $sql ],
		'<', \undef, '>', \$out, '2>', \$err, IPC::Run::timeout(90));
	return { h => $h, out => \$out, err => \$err };
}

sub finish_claim
{
	my $c = shift;
	$c->{h}->finish;
	my $o = ${ $c->{out} };
	chomp $o;
	return ($o, ${ $c->{err} });
}

my $stats = 'SELECT waiting || \':\' || wakeups FROM jobq_wait_stats()';

for my $n (1, 16, 17, 100)
{
	my ($waiting0, $wakeups0) = split /:/, $node->safe_psql('postgres', $stats);
	is($waiting0, '0', "$n queues: nobody waits yet");
	my $c = start_claim($n);
	ok(wait_for($node, 'SELECT waiting FROM jobq_wait_stats()', '1'),
		"$n queues: the claim is counted as waiting");

	# not one of its queues: no wakeup
	$node->safe_psql('postgres', "SELECT jobq_enqueue('q101', '{}')");
	usleep(200_000);
	is($node->safe_psql('postgres', $stats), "1:$wakeups0",
		"$n queues: an enqueue into another queue wakes nobody");

	my $id = $node->safe_psql('postgres', "SELECT jobq_enqueue('q$n', '{}')");
	my ($got, $err) = finish_claim($c);
	is($got, $id, "$n queues: the claim got the job enqueued into its last queue, q$n");
	is($err, '', "$n queues: no error");
	is($node->safe_psql('postgres', $stats), '0:' . ($wakeups0 + 1),
		"$n queues: woken by that commit (one wakeup), then left its slot");
	$node->safe_psql('postgres', "DELETE FROM jobq.jobs WHERE queue = 'q101'");
}

# jobq-worker on 20 queues waits with blocking claims
my $h = write_handler('h', "echo '{}'");
my @q = map { ('-q', "q$_") } 1 .. 20;
my $w = start_worker($node, @q, '--poll-interval', '60', '--', $h);
ok(wait_for($node, 'SELECT waiting FROM jobq_wait_stats()', '1'), 'a worker on 20 queues waits in a slot');
my $wakeups0 = $node->safe_psql('postgres', 'SELECT wakeups FROM jobq_wait_stats()');
my $id = $node->safe_psql('postgres', "SELECT jobq_enqueue('q20', '{}')");
ok(wait_for($node, "SELECT state FROM jobq_job($id)", 'completed'), 'and runs a job enqueued into the 20th');
cmp_ok($node->safe_psql('postgres', 'SELECT wakeups FROM jobq_wait_stats()'), '>', $wakeups0,
	'woken by the commit');
is(stop_worker($w, 'TERM'), 0, 'worker stops with exit 0');
like(worker_log($w), qr/waiting for work with blocking claims/, 'the worker chose blocking claims');

$node->stop('fast');
done_testing();
