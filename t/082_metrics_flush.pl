# t/082_metrics_flush.pl: the stored metrics on a preloaded server (issue 14):
# the sweeper writes the finished minute of the live ring once, exactly
# (the counters and the histograms of what the minute did, complete,
# oldest_ready_age of the backlog), jobq_metrics reads the same numbers
# back, merged with the ring before the flush and from the table after it,
# a second flush by hand writes nothing, and the minute in which the
# server started is written incomplete, with a gap before it.  Costs up to
# about 70 s: it waits for a minute to end.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);

my $node = PostgreSQL::Test::Cluster->new('metrics_flush');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'jobq'
jobq.sweeper_databases = 'postgres'
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION jobq');

sub sql { return $node->safe_psql('postgres', $_[0]); }

sub poll
{
	my ($query, $want, $secs) = @_;
	my $deadline = time + ($secs // 30);
	my $got = '';
	while (time < $deadline)
	{
		$got = sql($query);
		return 1 if $got eq $want;
		usleep(200_000);
	}
	diag("poll: $query: got '$got', want '$want'");
	return 0;
}

sql(q{SELECT jobq_create_queue('mf', backoff_base => '0')});

# the work of one minute, whole: start it early in a minute
my $sec = sql(q{SELECT extract(second FROM clock_timestamp())::int});
sleep(61 - $sec) if $sec > 50;
my $minute = sql(q{SELECT date_trunc('minute', clock_timestamp())});
sql(q{SELECT count(jobq_enqueue('mf', '{}')) FROM generate_series(1, 12)});
sql(q{SELECT count(jobq_complete(id, token)) FROM jobq_claim('mf', 'w', 6)});
sql(q{SELECT count(jobq_fail(id, token, 'again')) FROM jobq_claim('mf', 'w', 2)});
sql(q{SELECT count(jobq_fail(id, token, 'never', permanent => true)) FROM jobq_claim('mf', 'w', 1)});
sql(q{SELECT jobq_complete(id, gen_random_uuid()) FROM jobq.jobs WHERE queue = 'mf' AND state = 'running' LIMIT 1});

# before the flush: the ring, through jobq_metrics
my $want = '{12,9,6,2,1,0,0,0,0,0}';	# limit_held and rate_held last
is(sql(qq{SELECT counters FROM jobq_metrics('mf', '$minute', '$minute'::timestamptz + interval '1 minute')}),
	$want, 'jobq_metrics: the minute from the live ring');

# the sweeper flushes it a few seconds after it ends
ok(poll(qq{SELECT count(*) FROM jobq.metrics_minute WHERE queue = 'mf' AND start = '$minute'}, '1', 75),
	'the sweeper wrote the minute');
is(sql(qq{SELECT counters || ARRAY[(SELECT sum(x) FROM unnest(wait_hist) x), (SELECT sum(x) FROM unnest(run_hist) x)]
          FROM jobq.metrics_minute WHERE queue = 'mf' AND start = '$minute'}),
	'{12,9,6,2,1,0,0,0,0,0,9,9}', 'stored: the counters; a wait sample per first claim, a run sample per finished attempt');
# (the server started inside an earlier minute, or this one: complete unless this is the first)
my $started = sql(qq{SELECT date_trunc('minute', pg_postmaster_start_time()) < '$minute'});
is(sql(qq{SELECT complete FROM jobq.metrics_minute WHERE queue = 'mf' AND start = '$minute'}),
	$started eq 't' ? 't' : 'f', 'stored: complete when the ring saw the whole minute');
is(sql(qq{SELECT oldest_ready_age IS NOT NULL FROM jobq.metrics_minute WHERE queue = 'mf' AND start = '$minute'}),
	't', 'stored: the age of the backlog (three jobs still ready)');
is(sql(qq{SELECT counters FROM jobq_metrics('mf', '$minute', '$minute'::timestamptz + interval '1 minute')}),
	$want, 'jobq_metrics: the same numbers from the table');
is(sql(qq{SELECT counters FROM jobq_metrics('mf', date_trunc('hour', '$minute'::timestamptz),
          date_trunc('hour', '$minute'::timestamptz) + interval '1 hour', '1 hour')}),
	$want, 'jobq_metrics: and in its hour, merged with the ring');

# a second flush writes nothing more; the minute before the server started is a gap
is(sql(q{SELECT minutes FROM jobq_metrics_flush()}), '0', 'a second flush: nothing to write');
is(sql(qq{SELECT count(*) FROM jobq.metrics_minute WHERE queue = 'mf' AND start = '$minute'}), '1',
	'the minute once');
is(sql(q{SELECT count(*) > 0 FROM jobq.metrics_gaps
         WHERE until >= date_trunc('minute', pg_postmaster_start_time()) AND reason LIKE 'not seen%'}),
	't', 'the hour before the first flush, before the server started: a gap');

$node->stop;
done_testing();
