# t/070_failover.pl: failover to a streaming standby under load.
#
# A primary with a synchronous streaming standby, jobq preloaded on both
# (the background sweeper starts on the standby when it is promoted).
# Producers (a loop of `jobq enqueue`) and two jobq-workers reach the
# database through one multi-host conninfo with
# target_session_attrs=read-write, so that libpq picks whichever node takes
# writes.  Under load the standby is promoted and the old primary stopped
# in immediate mode; worker B, which ran on the primary's host, dies with
# it (SIGKILL).  Then:
#
#   - worker A reconnects to the new primary by itself and goes on;
#   - the jobs B held come back after their lease (a sweep) and run again,
#     with a later attempt; those A held complete, under the same claim when
#     their lease outlived the reconnect;
#   - no acknowledged enqueue is lost: every id a producer got back is a
#     completed job on the new primary, and no job exists that nobody
#     enqueued (an enqueue whose answer was lost may or may not exist);
#   - no acknowledged completion is lost: every job a worker logged with
#     state=completed (the server accepted its complete) is completed on
#     the new primary.
#
# The figures of the run are printed (note) at the end.
use strict;
use warnings;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);
use JobqTest;

my $dir = PostgreSQL::Test::Utils::tempdir();
my $lease = 3;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'jobq'
jobq.sweeper_databases = 'postgres'
jobq.sweep_interval = '500ms'
max_connections = 100
});
$primary->start;
$primary->safe_psql('postgres', qq{
	CREATE EXTENSION jobq;
	SELECT jobq_create_queue('f', lease => '$lease s', max_attempts => 10,
							 backoff_base => '0', backoff_cap => '0');
});

# The standby is made from a backup taken before synchronous_standby_names
# is set, so that the promoted standby does not wait for a standby of its own.
$primary->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
$standby->start;
$primary->append_conf('postgresql.conf', "synchronous_standby_names = '*'\n");
$primary->reload;

ok(wait_for($primary, "SELECT string_agg(sync_state, ',') FROM pg_stat_replication", 'sync'),
	'the standby streams synchronously');
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 't', 'standby in recovery');

# One conninfo for everybody: both nodes, libpq keeps the one that takes writes.
my $conninfo = sprintf('host=%s,%s port=%d,%d dbname=postgres target_session_attrs=read-write',
	$primary->host, $standby->host, $primary->port, $standby->port);
note("conninfo: $conninfo");

# The handler: every twentieth job is slow, so that jobs are running when the
# primary goes.
my $h = write_handler('h', <<"SH");
p=\$(cat)
case "\$p" in *slow*true*) sleep 2 ;; esac
echo '{"ok": true}'
SH

# A producer: enqueues {"uid": "P.N"} until told to stop; "uid id" per
# acknowledged enqueue, "uid" alone when the answer did not come (the job
# may or may not exist).
my $cli = cli_bin();
my $prod = write_handler('producer', <<"SH");
i=0
while [ ! -e $dir/stop ]; do
	i=\$((i + 1))
	slow=false
	[ \$((i % 20)) -eq 0 ] && slow=true
	if id=\$($cli -d "$conninfo" enqueue f "{\\"uid\\": \\"\$1.\$i\\", \\"slow\\": \$slow}" 2>>$dir/producer.err); then
		echo "\$1.\$i \$id" >> $dir/acked.\$1
	else
		echo "\$1.\$i" >> $dir/unknown.\$1
		sleep 0.1
	fi
done
SH
my @producers = map {
	IPC::Run::start([ $prod, $_ ], '<', '/dev/null', '>', '/dev/null', '2>', "$dir/producer.$_.log")
} 1 .. 4;

my @wargs = ('-q', 'f', '-c', '4', '--sweep-interval', '1', '--poll-interval', '1', '--', $h);
my $wa = start_worker("$conninfo application_name=worker_a", @wargs);
my $wb = start_worker("$conninfo application_name=worker_b", @wargs);

ok(wait_for($primary, "SELECT count(*) >= 40 FROM jobq.history WHERE state = 'completed'", 't', 30),
	'load runs on the primary');
ok(wait_for($primary, "SELECT count(DISTINCT worker) FROM jobq.jobs WHERE state = 'running'"
	  . " AND payload ->> 'slow' = 'true' AND claimed_at < now() - interval '0.2 s'", '2', 30),
	'both workers are running slow jobs');

# The failover.  The primary's host goes down with worker B on it.  What
# each worker held is read once B and its backend are gone (no complete of
# B's can commit after that): those jobs of B's must come back after their
# lease.
kill 'KILL', $wb->{pid};
is(stop_worker($wb), 128 + 9, 'worker B killed');
ok(wait_for($primary, "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'worker_b'", '0', 10),
	"worker B's backend ended");
# (a worker's claims carry its id in the worker registry as their label)
sub label { my ($id) = worker_log($_[0]) =~ /registered as worker ([0-9a-f-]{36})/; return $id // 'none'; }
my $held = "SELECT id || ' ' || attempt FROM jobq.jobs WHERE state = 'running' AND worker = '%s'";
my @b_running = split /\n/, $primary->safe_psql('postgres', sprintf($held, label($wb)));
my @a_running = split /\n/, $primary->safe_psql('postgres', sprintf($held, label($wa)));
my $t_fail = time;
$primary->stop('immediate');
$standby->promote;
my $t_promoted = time;
note(sprintf('standby promoted %.2f s after the primary stopped', $t_promoted - $t_fail));

ok(wait_for($standby, "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'worker_a'",
		'1', 30), 'worker A reconnected to the new primary by itself');
my $t_reconnected = time;
ok(worker_alive($wa), 'worker A is the same process');
ok(wait_for($standby, "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'jobq sweeper'",
		'1', 30), 'the background sweeper started on the new primary');
my $a_done = "SELECT count(*) FROM jobq.history WHERE state = 'completed' AND worker = '" . label($wa) . "'";
my $a_before = $standby->safe_psql('postgres', $a_done);
ok(wait_for($standby, "SELECT ($a_done) >= $a_before + 20", 't', 30),
	'worker A claims and completes jobs on the new primary');

# Stop the producers, let the backlog drain.
open my $fh, '>', "$dir/stop" or die $!;
close $fh;
$_->finish for @producers;
ok(wait_for($standby, 'SELECT count(*) FROM jobq.jobs', '0', 60),
	'every job finished on the new primary (those of worker B after their lease)');
is(stop_worker($wa, 'TERM'), 0, 'worker A stops with exit 0');

my $alog = worker_log($wa);
like($alog, qr/lost the database connection.*reconnected to the database/s,
	'worker A logged the loss and the reconnect');

# --- compare what clients were told with the new primary's tables -------
my (%acked, %unknown);
for my $p (1 .. 4)
{
	for my $l (split /\n/, (-e "$dir/acked.$p" ? slurp_file("$dir/acked.$p") : ''))
	{
		my ($uid, $id) = split / /, $l;
		$acked{$uid} = $id;
	}
	$unknown{$_} = 1 for split /\n/, (-e "$dir/unknown.$p" ? slurp_file("$dir/unknown.$p") : '');
}
my %row;	# uid => [id, state, attempt]
my $dups = 0;
for my $l (split /\n/, $standby->safe_psql('postgres',
		"SELECT payload ->> 'uid', id, state::text, attempt FROM jobq.history"
	  . " UNION ALL SELECT payload ->> 'uid', id, state::text, attempt FROM jobq.jobs"))
{
	my ($uid, $id, $state, $attempt) = split /\|/, $l;
	$dups++ if $row{$uid};
	$row{$uid} = [ $id, $state, $attempt ];
}
my @lost = grep { !$row{$_} || $row{$_}[0] != $acked{$_} || $row{$_}[1] ne 'completed' }
  sort keys %acked;
my @unexpected = grep { !exists $acked{$_} && !$unknown{$_} } sort keys %row;
my $recovered = grep { $row{$_} } keys %unknown;
is($dups, 0, 'no job enqueued twice');
is(scalar(@lost), 0, 'no acknowledged enqueue lost: each is a completed job with its id')
  or diag("lost: @lost[0 .. ($#lost < 9 ? $#lost : 9)]");
is(scalar(@unexpected), 0, 'no job that nobody enqueued')
  or diag("unexpected: @unexpected[0 .. ($#unexpected < 9 ? $#unexpected : 9)]");

# acknowledged completions: the workers' job lines with state=completed
my %completed_by;	# id => number of accepted completes
for my $w ($wa, $wb)
{
	$completed_by{$_}++
	  for worker_log($w) =~ /job id=(\d+) queue=\S+ attempt=\S+ outcome=\S+ state=completed /g;
}
my %state_of = map { (split /\|/)[0, 1] } split /\n/,
  $standby->safe_psql('postgres', 'SELECT id, state FROM jobq.history');
my @ack_lost = grep { ($state_of{$_} // '') ne 'completed' } sort { $a <=> $b } keys %completed_by;
is(scalar(@ack_lost), 0, 'no acknowledged completion lost')
  or diag("completions acknowledged but not in the new primary: @ack_lost");
is(scalar(grep { $completed_by{$_} > 1 } keys %completed_by), 0,
	'no job had two completions accepted');

# The jobs B held ran again, with a later attempt, after their lease.  The
# jobs A held completed: under the same claim when their lease outlived the
# reconnect, else they too came back and ran again.
my %hist = map { my @f = split /\|/; ($f[0] => [ @f[1, 2] ]) } split /\n/,
  $standby->safe_psql('postgres', 'SELECT id, state, attempt FROM jobq.history');
my $ended = sub {
	my ($id, $attempt) = split / /, shift;
	return 'not completed' if ($hist{$id}[0] // '') ne 'completed';
	return $hist{$id}[1] == $attempt ? 'same claim' : 'run again';
};
ok(@b_running >= 1, 'worker B held jobs when it died');
my @b_wrong = grep { $ended->($_) ne 'run again' } @b_running;
is(scalar(@b_wrong), 0, 'each of them was run again with a later attempt and completed')
  or diag("jobs (id attempt) of worker B not run again: @b_wrong");
my $a_kept = grep { $ended->($_) eq 'same claim' } @a_running;
my @a_wrong = grep { $ended->($_) eq 'not completed' } @a_running;
is(scalar(@a_wrong), 0, 'the jobs worker A held at the failover completed')
  or diag("jobs (id attempt) of worker A not completed: @a_wrong");

my $rerun = grep { $_->[0] eq 'completed' && $_->[1] > 1 } values %hist;

note(sprintf('failover figures: enqueued (acknowledged) %d, enqueue answers lost %d'
	  . ' (of which in the database %d), completed %d (acknowledged to a worker %d),'
	  . ' claimed again after a lease %d (worker B held %d; worker A %d, of which completed'
	  . ' under the same claim after the reconnect %d), lost %d, unexpected %d;'
	  . ' worker A back %.1f s after the primary stopped',
	scalar(keys %acked), scalar(keys %unknown), $recovered,
	scalar(grep { $_ eq 'completed' } values %state_of), scalar(keys %completed_by),
	$rerun, scalar(@b_running), scalar(@a_running), $a_kept, scalar(@lost) + scalar(@ack_lost), scalar(@unexpected),
	$t_reconnected - $t_fail));

$standby->stop('fast');
done_testing();
