# t/020_worker_stall.pl: the worker's TCP connection goes through a proxy
# on loopback that, on command, stops forwarding without closing anything,
# as a dead peer or a partitioned network does (no FIN, no RST).  During a
# 40 s stall the worker logs the loss (a call with no answer within
# --db-timeout), keeps trying to reconnect with backoff, reconnects once
# the stall ends, heartbeats the job it still runs (the lease outlives the
# stall), and the job runs once and completes with its first attempt.
# A second stall outlasts the lease: the late completion is refused as
# stale and logged.  (doc/reliability.md F5: the worker's connection, its
# LISTEN session, black-holed.)
use strict;
use warnings;
use IO::Select;
use IO::Socket::INET;
use POSIX ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);
use JobqTest;

my $node = new_node('stall', "listen_addresses = '127.0.0.1'\n");
my $dir = PostgreSQL::Test::Utils::tempdir();

sub touch_file { open my $fh, '>', $_[0] or die "$_[0]: $!"; close $fh; }

# start_proxy(TARGET_PORT): a forwarding proxy 127.0.0.1:port -> the
# server in a child process; SIGUSR1 stalls it (it neither reads, writes,
# accepts nor closes), SIGUSR2 resumes it.  Returns (pid, port).
sub start_proxy
{
	my ($target) = @_;
	my $port = PostgreSQL::Test::Cluster::get_free_port();
	my $lsock = IO::Socket::INET->new(
		LocalAddr => '127.0.0.1',
		LocalPort => $port,
		Listen => 64,
		ReuseAddr => 1) or die "proxy listen: $!";
	my $pid = fork() // die "fork: $!";
	if ($pid)
	{
		close $lsock;
		return ($pid, $port);
	}
	my $stalled = 0;
	$SIG{USR1} = sub { $stalled = 1 };
	$SIG{USR2} = sub { $stalled = 0 };
	$SIG{TERM} = sub { POSIX::_exit(0) };
	my %other;    # socket => the socket it forwards to
	for (;;)
	{
		if ($stalled)
		{
			usleep(50_000);
			next;
		}
		my @ready = IO::Select->new($lsock, keys %other ? map { $_->[0] } values %other : ())
		  ->can_read(0.1);
		for my $s (@ready)
		{
			last if $stalled;
			if ($s == $lsock)
			{
				my $c = $lsock->accept or next;
				my $u = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $target);
				if (!$u) { close $c; next; }
				$other{"$c"} = [ $c, $u ];
				$other{"$u"} = [ $u, $c ];
				next;
			}
			my $pair = $other{"$s"} or next;
			my $n = sysread($s, my $buf, 65536);
			if (!$n)
			{
				my $o = $pair->[1];
				delete $other{"$s"};
				delete $other{"$o"};
				close $s;
				close $o;
				next;
			}
			my $off = 0;
			while ($off < $n)
			{
				my $w = syswrite($pair->[1], $buf, $n - $off, $off);
				last unless defined $w;
				$off += $w;
			}
		}
	}
}

my ($proxy, $pport) = start_proxy($node->port);
my $conninfo = "host=127.0.0.1 port=$pport dbname=postgres connect_timeout=5";

$node->safe_psql('postgres',
	"SELECT jobq_create_queue('s', lease => '90 s', backoff_base => '0', backoff_cap => '0')");
my $h = write_handler('h',
	"echo \$JOBQ_JOB_ID >> $dir/runs; touch $dir/started.\$JOBQ_JOB_ID;"
	  . " while [ ! -e $dir/go.\$JOBQ_JOB_ID ]; do sleep 0.1; done; echo '{\"ok\": true}'");

my $w = start_worker($node, '-d', $conninfo, '-q', 's', '--heartbeat', '2',
	'--db-timeout', '5', '--sweep-interval', '0', '--', $h);
ok(wait_for($node, "SELECT count(*) = 1 FROM pg_stat_activity"
	  . " WHERE application_name = 'jobq-worker' AND client_addr IS NOT NULL"),
	'worker connected over TCP, through the proxy');

my $id = $node->safe_psql('postgres', "SELECT jobq_enqueue('s', '{}')");
my $deadline = time + 30;
usleep(100_000) until -e "$dir/started.$id" || time > $deadline;
ok(-e "$dir/started.$id", 'the handler started');
my $before = $node->safe_psql('postgres', "SELECT locked_until FROM jobq_job($id)");

# the stall: 40 s in which the peer says nothing
kill 'USR1', $proxy;
my $t_stall = time;
my $t_lost = wait_log($w, qr/warning: lost the database connection: no answer from the server within the call timeout \(5000 ms\); the connection was closed\n/, 38);
ok(defined $t_lost, 'the loss is logged during the stall');
ok(defined $t_lost && $t_lost - $t_stall < 2 + 5 + 3,
	'within the heartbeat interval plus --db-timeout (and a margin)');
like(worker_log($w), qr/info: reconnecting in 0\.5 s\n/, 'a reconnect is scheduled');
ok(wait_log($w, qr/could not connect to the database: .*timeout expired/, 30),
	'connect attempts during the stall time out (connect_timeout)');
usleep(100_000) while time < $t_stall + 40;
is(job_state($node, $id), 'running:1', 'after the stall: the job is still running, first attempt');
unlike(worker_log($w), qr/reconnected to the database/, 'no reconnect while the peer is silent');

# the stall ends
kill 'USR2', $proxy;
ok(wait_log($w, qr/info: reconnected to the database\n/, 40), 'reconnected after the stall');
ok(wait_for($node, "SELECT locked_until > '$before' FROM jobq_job($id)", 't', 20),
	'the heartbeat extends the running job\'s lease again');
is(job_state($node, $id), 'running:1', 'still the first attempt');

touch_file("$dir/go.$id");
ok(wait_for($node, "SELECT state FROM jobq_job($id)", 'completed', 30), 'the job completed');
is(job_state($node, $id), 'completed:1', 'with its first attempt');
is(slurp_file("$dir/runs"), "$id\n", 'the handler ran exactly once');
like(worker_log($w), qr/info: job id=$id queue=s attempt=1\/25 outcome=completed state=completed /,
	'the completion is logged');
unlike(worker_log($w), qr/stale|lease lost/, 'no lease was lost');
is($node->safe_psql('postgres', "SELECT count(*) FROM jobq.stale_acks"), '0',
	'no stale acknowledgement');

is(stop_worker($w, 'TERM'), 0, 'worker stops with exit 0');

# A stall longer than the lease: the job is swept while the worker cannot
# report; its late completion is refused as stale and logged as such, and
# the job runs again (the lease is the only guarantee).
$node->safe_psql('postgres',
	"SELECT jobq_create_queue('s2', lease => '6 s', backoff_base => '0', backoff_cap => '0')");
$w = start_worker($node, '-d', $conninfo, '-q', 's2', '--heartbeat', '2',
	'--db-timeout', '5', '--sweep-interval', '0', '--', $h);
$id = $node->safe_psql('postgres', "SELECT jobq_enqueue('s2', '{}')");
$deadline = time + 30;
usleep(100_000) until -e "$dir/started.$id" || time > $deadline;
ok(-e "$dir/started.$id", 'lease passes: the handler started');
kill 'USR1', $proxy;
ok(wait_log($w, qr/warning: lost the database connection: no answer from the server/, 20),
	'lease passes: the loss is logged');
touch_file("$dir/go.$id");    # the handler finishes while the worker is cut off
ok(wait_for($node, "SELECT locked_until < now() FROM jobq_job($id)", 't', 20),
	'lease passes: the lease ran out during the stall');
is($node->safe_psql('postgres', "SELECT requeued FROM jobq_sweep('s2')"), '1',
	'lease passes: the sweep requeues the job');
kill 'USR2', $proxy;
ok(wait_log($w, qr/info: job id=$id queue=s2 attempt=1\/25 outcome=completed state=stale /, 60),
	'lease passes: the late completion is refused as stale and logged');
like(worker_log($w),
	qr/warning: job $id: the server refused its completion: the lease had passed \(stale token\); the job runs again or ran elsewhere\n/,
	'lease passes: with a warning that says why');
ok(wait_for($node, "SELECT state FROM jobq_job($id)", 'completed', 30),
	'lease passes: the job ran again and completed');
is(job_state($node, $id), 'completed:2', 'lease passes: with its second attempt');
is($node->safe_psql('postgres', "SELECT sum(count) FROM jobq.stale_acks WHERE queue = 's2'"), '1',
	'lease passes: one stale acknowledgement counted');
is(stop_worker($w, 'TERM'), 0, 'lease passes: worker stops with exit 0');

kill 'TERM', $proxy;
waitpid($proxy, 0);
done_testing();
