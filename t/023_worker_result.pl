# t/023_worker_result.pl: what becomes of a handler's stdout
# (doc/jobq-worker.md, "Handler protocol"): stored as the result when it
# fits; over 1 MiB of stdout, or over the server's jobq.max_payload_size,
# the job still completes (its work is done) with a NULL result, and the
# worker logs a warning that says why.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use Test::More;
use JobqTest;

my $node = new_node('result');
$node->safe_psql('postgres', "SELECT jobq_create_queue('o')");
# prints a JSON string of exactly N bytes (quotes included), N from the payload {"n": N}
my $h = write_handler('h',
	'n=$(sed "s/[^0-9]//g"); printf \'"\'; head -c $((n - 2)) /dev/zero | tr "\\\\0" a; printf \'"\'');

sub run_one
{
	my ($n) = @_;
	my $id = $node->safe_psql('postgres', "SELECT jobq_enqueue('o', '{\"n\": $n}')");
	my $w = start_worker($node, '-q', 'o', '--once', '--', $h);
	is(stop_worker($w), 0, "$n bytes: exit 0");
	return ($id, $w);
}

my ($id, $w) = run_one(1000);
is($node->safe_psql('postgres', "SELECT state || ':' || length(result #>> '{}') FROM jobq_job($id)"),
	'completed:998', '1000 bytes: stored as the result');

($id, $w) = run_one(1024 * 1024 + 1);
is($node->safe_psql('postgres', "SELECT state || ':' || (result IS NULL) FROM jobq_job($id)"),
	'completed:true', '1 MiB + 1 byte of stdout: completed with a NULL result');
like(worker_log($w), qr/warning: job $id: result over 1048576 bytes, stored as null\n/,
	'1 MiB + 1 byte of stdout: the warning says why');

# under 1 MiB of stdout, but over the server's limit
$node->safe_psql('postgres', "ALTER DATABASE postgres SET jobq.max_payload_size = 256");
($id, $w) = run_one(300 * 1024);
is($node->safe_psql('postgres', "SELECT state || ':' || (result IS NULL) FROM jobq_job($id)"),
	'completed:true', 'over jobq.max_payload_size: completed with a NULL result');
like(worker_log($w),
	qr/warning: job $id: result not stored \(result is \d+ bytes, over the limit of 262144 bytes .*\), storing null\n/,
	'over jobq.max_payload_size: the warning names the limit');
done_testing();
