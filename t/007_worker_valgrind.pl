# t/007_worker_valgrind.pl: the C callback example (examples/callback_worker,
# jobq-worker.h) runs jobs through jobq_worker_main; and jobq-worker runs a
# mixed workload under valgrind --leak-check=full (handler exits 0, 75, 65,
# a timeout, a terminated backend, SIGHUP, the blocking claim, a flow whose
# child reads its dependency results, SIGTERM):
# no leak and no memory error may be reported.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);
use JobqTest;

my $node = new_node('valgrind',
	"shared_preload_libraries = 'jobq'\njobq.sweeper_databases = ''\n");
$node->safe_psql('postgres',
	"SELECT jobq_create_queue('cb', backoff_base => '0', backoff_cap => '0');"
	  . "SELECT jobq_create_queue('vg', lease => '10 s', max_attempts => 2,"
	  . " backoff_base => '0', backoff_cap => '0')");

# --- the callback example
SKIP:
{
	skip 'examples/callback_worker not built', 6 unless -x example_bin('callback_worker');
	my ($ok, $poison, $flaky) = split /\n/, $node->safe_psql('postgres',
		"SELECT jobq_enqueue('cb', '{\"n\": 1}');"
		  . "SELECT jobq_enqueue('cb', '\"poison\"');"
		  . "SELECT jobq_enqueue('cb', '\"flaky\"')");
	my $w = start_worker_cmd($node, [ example_bin('callback_worker') ], '-q', 'cb',
		'--burst', '--poll-interval', '0.2');
	is(stop_worker($w), 0, 'callback worker: --burst drains and exits 0');
	is($node->safe_psql('postgres', "SELECT result::text FROM jobq_job($ok)"),
		'{"length": 8, "attempt": 1}', 'callback: its stdout is the result');
	is(job_state($node, $poison), 'dead:1', 'callback: return 65 is dead at once');
	like($node->safe_psql('postgres', "SELECT errors::text FROM jobq_job($poison)"),
		qr/is poison/, 'callback: its stderr is the error');
	is(job_state($node, $flaky), 'completed:2', 'callback: return 75 is retried');
	like(worker_log($w), qr/outcome=retry state=ready/, 'callback: logged like a handler');
}

# --- jobq-worker under valgrind
SKIP:
{
	my $vg = `command -v valgrind 2>/dev/null`;
	chomp $vg;
	skip 'valgrind not installed', 11 unless $vg;
	my $dir = PostgreSQL::Test::Utils::tempdir();
	my $h = write_handler('h',
		"p=\$(cat); case \"\$p\" in *sleep*) sleep 30;; *retry*) [ \$JOBQ_ATTEMPT = 1 ] && exit 75;; "
		  . "*dead*) echo bad >&2; exit 65;; *text*) echo 'not json'; exit 0;; "
		  . "*child*) cat \"\$JOBQ_DEP_RESULTS\"; exit 0;; esac; echo '{\"ok\": 1}'");
	my $w = start_worker_cmd($node,
		[ $vg, '--quiet', '--leak-check=full', '--show-leak-kinds=definite,indirect',
		  '--errors-for-leak-kinds=definite,indirect', '--error-exitcode=99',
		  '--child-silent-after-fork=yes', worker_bin() ],
		'-q', 'vg', '-c', '2', '--timeout', '2', '--kill-after', '1', '--poll-interval', '2',
		'--sweep-interval', '1', '--', $h);
	ok(wait_for($node, "SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name = 'jobq-worker'",
		't', 60), 'valgrind: worker connected');
	my @ids = split /\n/, $node->safe_psql('postgres',
		"SELECT jobq_enqueue('vg', x) FROM unnest(ARRAY['{}', '\"retry\"', '\"dead\"',"
		  . " '\"sleep\"', '\"text\"']::jsonb[]) x");
	ok(wait_for($node, "SELECT count(*) = 5 FROM jobq_list('vg') WHERE state IN ('completed', 'dead')",
		't', 90), 'valgrind: all jobs finished');
	is($node->safe_psql('postgres', "SELECT result::text FROM jobq_job($ids[4])"), '"not json"',
		'valgrind: a result that is not JSON is stored as a string');

	# a terminated backend, SIGHUP, and a job after each
	ok(wait_for($node, "SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name = 'jobq-worker'"
		  . " AND wait_event_type = 'Extension'", 't', 60), 'valgrind: idle in a blocking claim');
	$node->safe_psql('postgres', "SELECT pg_terminate_backend(" . backend_pid($node) . ")");
	kill 'HUP', $w->{pid};
	my $id = $node->safe_psql('postgres', "SELECT jobq_enqueue('vg', '{}')");
	ok(wait_for($node, "SELECT state = 'completed' FROM jobq_job($id)", 't', 60),
		'valgrind: job after reconnect and SIGHUP');
	ok(wait_for($node, "SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name = 'jobq-worker'"
		  . " AND wait_event_type = 'Extension'", 't', 60), 'valgrind: waiting again');

	# a flow: the child's dependency results read with its claim and handed over
	my $child = $node->safe_psql('postgres', q{SELECT id FROM jobq_flow('[{"ref": "p", "queue": "vg"},
		{"ref": "c", "queue": "vg", "payload": "child", "depends_on": ["p"]}]') WHERE ref = 'c'});
	ok(wait_for($node, "SELECT state = 'completed' FROM jobq_job($child)", 't', 60),
		'valgrind: a flow ran');
	is($node->safe_psql('postgres', "SELECT string_agg(value::text, ' ') FROM jobq_job($child), jsonb_each(result)"),
		'{"state": "completed", "result": {"ok": 1}}', 'valgrind: the child read its parent\'s result');

	is(stop_worker($w, 'TERM'), 0, 'valgrind: SIGTERM, exit 0 (99 = valgrind found errors)');
	my $log = worker_log($w);
	unlike($log, qr/definitely lost|indirectly lost|Invalid (read|write)|uninitialised/,
		'valgrind: no leak, no memory error');
	like($log, qr/outcome=timeout/, 'valgrind: the timeout path ran');
}

done_testing();
