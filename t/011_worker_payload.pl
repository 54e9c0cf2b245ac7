# t/011_worker_payload.pl: a handler never reads a payload cut short.
#
# jobq-worker puts the whole payload into the handler's stdin pipe before
# the handler starts (growing the pipe when the payload is larger than its
# default 64 KiB), so a worker killed right after starting a handler leaves
# it a complete payload, not a partial or empty one that it might act on.
# Checked with a payload of 200 kB, three times the default pipe: the
# handler hands its stdin (as fd 3: a background job's stdin is /dev/null)
# to a background reader (which, unlike the handler, is not killed with the
# worker) that waits until the worker is dead before
# reading.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);
use JobqTest;

my $node = new_node('payload');
my $dir = PostgreSQL::Test::Utils::tempdir();
$node->safe_psql('postgres', "SELECT jobq_create_queue('p', lease => '60 s')");

my $h = write_handler('reader', qq{
exec 3<&0
( while [ ! -e $dir/worker.dead ]; do sleep 0.05; done; wc -c <&3 > $dir/len.tmp; mv $dir/len.tmp $dir/len ) &
echo started > $dir/started
sleep 60
});

my $filler = 'x' x 200_000;
my $id = $node->safe_psql('postgres', "SELECT jobq_enqueue('p', jsonb_build_object('f', '$filler'))");
my $expected = $node->safe_psql('postgres',
	"SELECT octet_length(payload::text) FROM jobq.jobs WHERE id = $id");
ok($expected > 3 * 65536, "a payload of $expected bytes, more than the default pipe holds");

my $w = start_worker($node, '-q', 'p', '--', $h);
my $deadline = time + 30;
usleep(20_000) until -e "$dir/started" || time > $deadline;
ok(-e "$dir/started", 'the handler started');
kill 'KILL', $w->{pid};
is(stop_worker($w), 128 + 9, 'the worker was killed with SIGKILL');
open my $fh, '>', "$dir/worker.dead" or die;
close $fh;

$deadline = time + 30;
usleep(50_000) until -e "$dir/len" || time > $deadline;
my $len = -e "$dir/len" ? slurp_file("$dir/len") : 'none';
$len =~ s/\s+//g;
# the worker writes the payload as JSON text; the byte count must match
is($len, $expected, 'the handler\'s stdin held the whole payload although its worker died');

done_testing();
