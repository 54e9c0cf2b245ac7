# t/031_bulk_cli.pl: jobq retry|cancel --where (issue 14): the jobs a filter
# selects, batch by batch, each batch its own transaction, progress on
# stderr, the total on stdout (or JSON), usage and server errors.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JobqTest;

my $node = new_node('bulk_cli');
$node->safe_psql('postgres', q{
	SELECT jobq_create_queue('b', max_attempts => 1);
	SELECT count(*) FROM jobq_enqueue_batch('b',
		ARRAY(SELECT jsonb_build_object('n', g) FROM generate_series(1, 20) g));
	SELECT count(*) FROM (SELECT jobq_fail(id, token,
		CASE WHEN (payload ->> 'n')::int <= 12 THEN 'timeout' ELSE 'refused' END)
		FROM jobq_claim('b', max_jobs => 20)) x;
});

my ($code, $out, $err) = run_cli($node,
	[ 'retry', '--queue', 'b', '--where', '{"error": "timeout"}', '--batch', '5' ]);
is($code, 0, 'retry --where exits 0');
is($out, "retried 12 job(s)\n", 'and prints the total');
is($err, "retry: 5 job(s) so far, batch 1\nretry: 10 job(s) so far, batch 2\n",
	'with progress after every batch but the last');
is($node->safe_psql('postgres', q{
	SELECT count(*) FILTER (WHERE state = 'ready') || '/' || count(*) FILTER (WHERE state = 'dead')
	FROM jobq_list('b', max_rows => 100)}), '12/8', 'exactly the jobs that timed out were retried');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM jobq_audit('b') WHERE action = 'retry_where'}), '3',
	'one audit row per batch');

($code, $out) = run_cli($node, [ '--json', 'cancel', '--queue', 'b', '--where', '{}', '--state', 'dead' ]);
is($code, 0, 'cancel --where exits 0');
is($out, qq({"queue":"b","affected":8,"batches":1,"stopped":false}\n), 'JSON total');

($code, $out, $err) = run_cli($node, [ 'cancel', '--where', '{}' ]);
is($code, 2, '--where without --queue is bad usage');
($code, $out, $err) = run_cli($node, [ 'retry', '--queue', 'b', '--where', '{"colour": 1}' ]);
is($code, 1, 'a filter the server refuses exits 1');
like($err, qr/unknown filter "colour" \(SQLSTATE 22023\)/, 'saying why');
($code, $out, $err) = run_cli($node, [ 'retry', '--queue', 'b', '--where', '{}', '--batch', '0' ]);
is($code, 2, 'a batch out of range is bad usage');

$node->stop;
done_testing();
