# t/013_client_limits.pl: jobq and jobq-worker take their bounds from the
# contract (client/include/jobq-contract.h): a value at a limit is sent
# and accepted by the server, one past it is refused by the tool itself
# with exit 2, before it connects (the refusals below also give exit 2
# against a server that does not exist, where connecting would give 3).
use strict;
use warnings;
use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;
use JobqTest;

my $node = new_node('limits');
my ($rc, $out, $err);

sub cli { return run_cli($node, @_); }

# the CLI against no server: only a refusal before connecting gives 2
sub cli_offline
{
	my @args = @_;
	my ($o, $e) = ('', '');
	IPC::Run::run([ cli_bin(), '-d', 'host=/nonexistent', @args ], '>', \$o, '2>', \$e);
	return ($? >> 8, $e);
}

my %limit = map { split /\|/ } split /\n/,
  $node->safe_psql('postgres', "SELECT name || '|' || value FROM jobq_limits()");

($rc) = cli([ 'queue', 'create', 'lim', '--lease', $limit{lease_max}, '--max-attempts',
	$limit{max_attempts_max}, '--backoff-base', $limit{backoff_base_max},
	'--backoff-cap', $limit{backoff_cap_max}, '--completed-retention', $limit{retention_max} ]);
is($rc, 0, 'queue create with every setting at its maximum: exit 0');
($rc) = cli([ 'list', 'lim', '--limit', $limit{list_max_rows} ]);
is($rc, 0, "list --limit $limit{list_max_rows}: exit 0");
($rc) = cli([ 'enqueue', 'lim', '{}', '--priority', $limit{priority_min}, '--max-attempts',
	$limit{max_attempts_max}, '--delay', $limit{delay_max} ]);
is($rc, 0, 'enqueue at the priority, attempts and delay limits: exit 0');

for my $case (
	[ [ 'list', 'lim', '--limit', $limit{list_max_rows} + 1 ], qr/--limit must be between 1 and $limit{list_max_rows}/ ],
	[ [ 'list', 'lim', '--limit', '100000' ], qr/--limit must be between 1 and $limit{list_max_rows}, not "100000"/ ],
	[ [ 'list', 'lim', '--limit', '0' ], qr/--limit must be between/ ],
	[ [ 'enqueue', 'lim', '{}', '--priority', $limit{priority_max} + 1 ], qr/--priority must be between -1000 and 1000/ ],
	[ [ 'enqueue', 'lim', '{}', '--priority', $limit{priority_min} - 1 ], qr/--priority must be between/ ],
	[ [ 'enqueue', 'lim', '{}', '--max-attempts', '0' ], qr/--max-attempts must be between 1 and/ ],
	[ [ 'enqueue', 'lim', '{}', '--delay', $limit{delay_max} + 1 ], qr/--delay must be between 0s and 365d/ ],
	[ [ 'queue', 'alter', 'lim', '--lease', $limit{lease_max} + 1 ], qr/--lease must be between 1s and 1d/ ],
	[ [ 'queue', 'alter', 'lim', '--lease', '0' ], qr/--lease must be between 1s and 1d/ ],
	[ [ 'queue', 'alter', 'lim', '--max-attempts', $limit{max_attempts_max} + 1 ], qr/--max-attempts must be between 1 and 1000/ ],
	[ [ 'queue', 'alter', 'lim', '--backoff-base', '1d1s' ], qr/--backoff-base must be between 0s and 1d/ ],
	[ [ 'queue', 'alter', 'lim', '--dead-retention', '3651d' ], qr/--dead-retention must be between 0s and 3650d/ ],
	[ [ 'purge', 'lim', '--older-than', '3651 days' ], qr/--older-than must be between 0s and 3650d/ ])
{
	my ($args, $msg) = @$case;
	($rc, $out, $err) = cli($args);
	is($rc, 2, "@$args: exit 2");
	like($err, $msg, "@$args: says the bound");
	($rc) = cli_offline(@$args);
	is($rc, 2, "@$args: refused before connecting");
}
is($node->safe_psql('postgres',
	"SELECT extract(epoch FROM lease)::int || ',' || max_attempts FROM jobq_queues() WHERE queue = 'lim'"),
	"$limit{lease_max},$limit{max_attempts_max}", 'the refused values changed nothing');

# the worker: queues per claim and jobs per claim
$node->safe_psql('postgres',
	"SELECT jobq_create_queue('w' || i) FROM generate_series(1, $limit{claim_queues_max}) i");
my @queues = map { ('-q', "w$_") } 1 .. $limit{claim_queues_max};
my ($o, $e) = ('', '');
IPC::Run::run([ worker_bin(), '-d', $node->connstr('postgres'), @queues, '--burst',
	'--batch', $limit{claim_max}, '--sweep-interval', '0', '--', 'true' ],
	'<', \'', '>&', \$e, IPC::Run::timeout(60));
is($? >> 8, 0, "worker with $limit{claim_queues_max} queues and --batch $limit{claim_max}: runs, exit 0")
  or diag($e);
IPC::Run::run([ worker_bin(), '-d', 'host=/nonexistent', @queues, '-q', 'one-more', '--', 'true' ],
	'<', \'', '>', \$o, '2>', \$e);
is($? >> 8, 2, 'worker with one queue more than a claim takes: exit 2 before connecting');
like($e, qr/^jobq-worker: 101 queues given; a claim names at most 100\n/, 'worker: says the limit');
IPC::Run::run([ worker_bin(), '-d', 'host=/nonexistent', '-q', 'w1', '--batch', $limit{claim_max} + 1,
	'--', 'true' ], '<', \'', '>', \$o, '2>', \$e);
is($? >> 8, 2, 'worker --batch one past the claim limit: exit 2 before connecting');
IPC::Run::run([ worker_bin(), '-d', 'host=/nonexistent', '-q', 'w1', '--lease', $limit{lease_max} + 1,
	'--', 'true' ], '<', \'', '>', \$o, '2>', \$e);
is($? >> 8, 2, 'worker --lease one past the lease limit: exit 2 before connecting');

done_testing();
