# t/005_worker_concurrency.pl: F7: concurrency far above the connections
# the worker may open is no self-deadlock: the worker uses one connection
# for everything; handlers run in parallel.  Also runs as a role that has
# only jobq_worker, with --log-format json.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use JobqTest;

my $node = new_node('conc');
$node->safe_psql('postgres', qq{
	SELECT jobq_create_queue('p', lease => '5 s');
	CREATE ROLE w LOGIN CONNECTION LIMIT 1 IN ROLE jobq_worker;
	SELECT jobq_enqueue('p', '{}') FROM generate_series(1, 10);
});
my $h = write_handler('h', 'sleep 2; echo "{\"slot\": $JOBQ_JOB_ID}"');
my $t0 = time;
my $w = start_worker($node, '-q', 'p', '-c', '10', '--burst', '--log-format', 'json',
	'-d', $node->connstr('postgres') . ' user=w', '--', $h);
my $max = 0;
while ($w->{h}->pumpable && time - $t0 < 30)
{
	my $n = $node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_activity WHERE usename = 'w'");
	$max = $n if $n > $max;
	last if $node->safe_psql('postgres', "SELECT completed FROM jobq_stats('p')") == 10;
}
is(stop_worker($w), 0, 'F7: worker (connection limit 1, concurrency 10) exits 0');
is($node->safe_psql('postgres', "SELECT completed FROM jobq_stats('p')"), '10', 'F7: all jobs completed');
ok($max <= 1, "F7: never more than one connection ($max)");
ok(time - $t0 < 15, 'F7: handlers ran in parallel');
my @lines = grep { /"event":"job"/ } split /\n/, worker_log($w);
is(scalar @lines, 10, 'json log: one line per job');
like($lines[0], qr/^\{"ts":"[^"]+","pid":\d+,"level":"info","event":"job","id":\d+,"queue":"p","attempt":1,"max_attempts":25,"outcome":"completed","state":"completed","duration":[\d.]+/,
	'json log line has id, queue, attempt, outcome, duration');

done_testing();
