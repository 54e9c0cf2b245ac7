# t/033_flow_cli.pl: jobq flow create|show|cancel|retry (doc/jobq.md) against
# a real server, with the exact output of each, JSON too, and the exit
# codes of bad input: a file that is not there, JSON the server refuses (a
# cycle, named), a flow that does not exist, a job that is not dead,
# unknown and missing subcommands and arguments.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use Test::More;
use JobqTest;

my $node = new_node('flowcli');
my $tmp = PostgreSQL::Test::Utils::tempdir();
$node->safe_psql('postgres', "SELECT jobq_create_queue('render'); SELECT jobq_create_queue('mails')");

# -- create, from a file and from stdin
my $file = write_file('flow.json', <<'JSON');
[{"ref": "pdf", "queue": "render", "payload": {"order": 7}},
 {"ref": "charge", "queue": "render", "payload": {"order": 7}, "dedupe_key": "charge-7"},
 {"ref": "invoice", "queue": "mails", "payload": {"order": 7}, "depends_on": ["pdf", "charge"]}]
JSON
my ($code, $out, $err) = run_cli($node, [ 'flow', 'create', $file ]);
is($code, 0, 'create FILE: exit 0');
is($out, <<'OUT', 'create FILE: ref, id, created of each job, in the file\'s order');
ref      id  created
-------  --  -------
pdf       1  yes
charge    2  yes
invoice   3  yes
OUT
# the same again from stdin: the dedupe key holds, "charge" is not created
($code, $out, $err) = run_cli($node, [ '--json', 'flow', 'create' ],
	'[{"ref": "c", "queue": "render", "dedupe_key": "charge-7"}, {"ref": "m", "queue": "mails", "depends_on": ["c"]}]');
is($code, 0, 'create from stdin: exit 0');
# (the id the dedupe key's attempt took is skipped)
my $m = $node->safe_psql('postgres', "SELECT max(id) FROM jobq.jobs WHERE queue = 'mails'");
is($out, qq([{"ref":"c","id":2,"created":false}, \n {"ref":"m","id":$m,"created":true}]\n),
	'create --json from stdin: a live job holding the dedupe key is returned, not created');

# -- show
($code, $out, $err) = run_cli($node, [ 'flow', 'show', '1' ]);
is($code, 0, 'show: exit 0');
# times as the table prints them, to the second, masked
sub masked { return $_[0] =~ s/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\+\d\d/YYYY-MM-DD HH:MM:SS+00/gr; }
my $out_masked = masked($out);
is($out_masked, <<"OUT", 'show: the jobs, their states, what each waits for');
id  queue   state    pending  depends_on  waits_for  enqueued_at             finished_at
--  ------  -------  -------  ----------  ---------  ----------------------  -----------
 1  render  ready          0                         YYYY-MM-DD HH:MM:SS+00  
 2  render  ready          0                         YYYY-MM-DD HH:MM:SS+00  
 3  mails   waiting        2  1,2         1,2        YYYY-MM-DD HH:MM:SS+00  
 $m  mails   waiting        1  2           2          YYYY-MM-DD HH:MM:SS+00  
OUT

# the parent pdf completes; charge fails for good: invoice and m are cancelled
$node->safe_psql('postgres', q{
	CREATE TEMP TABLE c AS SELECT id, token FROM jobq_claim('render', max_jobs => 2);
	SELECT jobq_complete(id, token, '{"pdf": "s3://7"}') FROM c WHERE id = 1;
	SELECT jobq_fail(id, token, 'card declined', permanent => true) FROM c WHERE id = 2});
($code, $out) = run_cli($node, [ 'flow', 'show', '1' ]);
$out_masked = masked($out);
is($out_masked, <<"OUT", 'show: the finished jobs and the cascade');
id  queue   state      pending  depends_on  waits_for  enqueued_at             finished_at           
--  ------  ---------  -------  ----------  ---------  ----------------------  ----------------------
 1  render  completed                                  YYYY-MM-DD HH:MM:SS+00  YYYY-MM-DD HH:MM:SS+00
 2  render  dead                                       YYYY-MM-DD HH:MM:SS+00  YYYY-MM-DD HH:MM:SS+00
 3  mails   cancelled           1,2                    YYYY-MM-DD HH:MM:SS+00  YYYY-MM-DD HH:MM:SS+00
 $m  mails   cancelled           2                      YYYY-MM-DD HH:MM:SS+00  YYYY-MM-DD HH:MM:SS+00
OUT
($code, $out) = run_cli($node, [ '--json', 'flow', 'show', '1' ]);
like($out, qr/^\[\{"id":1,"queue":"render","state":"completed","depends_on":\[\],"dep_states":\[\],/,
	'show --json: the rows of jobq_flow_jobs');

# -- retry with dependents
($code, $out, $err) = run_cli($node, [ 'flow', 'retry', '2' ]);
is($code, 0, 'retry: exit 0');
is($out, "job 2 retried, with the dependents its failure cancelled\n", 'retry: says so');
is($node->safe_psql('postgres',
		"SELECT string_agg(id || ':' || state, ' ' ORDER BY id) FROM jobq_flow_jobs(1)"),
	"1:completed 2:ready 3:waiting $m:waiting", 'retry: the job is ready, its dependents wait again');
($code, $out, $err) = run_cli($node, [ 'flow', 'retry', '2' ]);
is($code, 1, 'retry of a job that is not dead: exit 1');
like($err, qr/job 2 was not retried: only dead jobs can be retried/, 'saying why');

# -- cancel
($code, $out, $err) = run_cli($node, [ 'flow', 'cancel', '1' ]);
is($code, 0, 'cancel: exit 0');
is($out, "cancelled 3 job(s) of flow 1\n", 'cancel: the ready and waiting jobs');
($code, $out) = run_cli($node, [ '--json', 'flow', 'cancel', '1' ]);
is($out, qq({"flow_id":1,"cancelled":0}\n), 'cancel --json: nothing left to cancel is not an error');

# -- bad input
($code, $out, $err) = run_cli($node, [ 'flow', 'show', '999' ]);
is($code, 1, 'show of a flow that does not exist: exit 1');
like($err, qr/flow 999 not found/, 'saying so');
($code, $out, $err) = run_cli($node, [ 'flow', 'create', "$tmp/nope.json" ]);
is($code, 1, 'create of a file that is not there: exit 1');
like($err, qr/could not open ".*nope.json": No such file or directory/, 'saying why');
($code, $out, $err) = run_cli($node, [ 'flow', 'create' ],
	'[{"ref": "a", "queue": "render", "depends_on": ["b"]}, {"ref": "b", "queue": "render", "depends_on": ["a"]}]');
is($code, 1, 'create of a cycle: exit 1');
like($err, qr/jobs form a cycle: a -> b -> a \(SQLSTATE 22023\)/, 'the cycle named');
is($node->safe_psql('postgres', 'SELECT count(*) FROM jobq.jobs WHERE id > 4'), '0', 'and nothing created');
($code, $out, $err) = run_cli($node, [ 'flow', 'create' ], 'not json');
is($code, 1, 'create of text that is not JSON: exit 1');
like($err, qr/SQLSTATE 22P02/, 'the server says why');
for my $bad ([ [ 'flow' ], 'missing subcommand for "flow"' ],
	[ [ 'flow', 'list' ], 'unknown flow subcommand "list"' ],
	[ [ 'flow', 'show' ], 'missing argument for "flow show"' ],
	[ [ 'flow', 'show', '1', '2' ], 'too many arguments for "flow show"' ],
	[ [ 'flow', 'show', 'x' ], 'invalid job id' ],
	[ [ 'flow', 'cancel', 'x1' ], 'invalid job id' ],
	[ [ 'flow', 'create', '--limit', '3' ], 'option --limit does not apply to "flow"' ])
{
	my ($args, $why) = @$bad;
	($code, $out, $err) = run_cli($node, $args);
	is($code, 2, "@$args: bad usage, exit 2");
	like($err, qr/\Q$why\E/, "@$args: saying why");
}

done_testing();
