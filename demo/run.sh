#!/usr/bin/env bash
# demo/run.sh: jobq's main job, end to end, on a throwaway local PostgreSQL.
#
# Builds and installs jobq, starts a private server (as the postgres OS
# user, unix socket only), creates a queue, enqueues a mixed workload (most
# jobs succeed, some fail once and are retried, one fails for good, one is
# poison), drains it with jobq-worker running demo/handler.sh, shows the
# stats as it drains, and removes the server.  The dashboard, jobq-web,
# runs next to the worker on 127.0.0.1:${JOBQ_DEMO_WEB_PORT:-8411} while the
# demo runs (JOBQ_DEMO_WAIT=1 keeps it up at the end until Enter).  Run as
# root or as a user who can `make install`.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
name=demo-$$
port=${JOBQ_DEMO_PORT:-5488}
jobs=${JOBQ_DEMO_JOBS:-2000}

echo "== building and installing jobq"
make -C "$top" -s ${JOBQ_MAKE_FLAGS:-} >/dev/null
make -C "$top" -s ${JOBQ_MAKE_FLAGS:-} install >/dev/null

dsn=$("$top/test/devdb.sh" start "$name" "$port")
webpid=
trap '[ -z "$webpid" ] || kill "$webpid" 2>/dev/null; rm -f "/tmp/jobq-$name-web.log"; "$top/test/devdb.sh" destroy "$name" >/dev/null 2>&1' EXIT
echo "== throwaway server: $dsn"
export PGOPTIONS="-c client_min_messages=warning"
sql() { psql "$dsn" -X -q -v ON_ERROR_STOP=1 "$@"; }

sql <<SQL
CREATE EXTENSION jobq;
SELECT jobq_create_queue('demo', lease => '30 seconds', max_attempts => 3,
                         backoff_base => '100 milliseconds', backoff_cap => '1 second');
-- the workload: $jobs ordinary jobs, 1 in 50 flaky, 1 bad, 1 poison, 20 delayed
SELECT count(*) AS enqueued FROM jobq_enqueue_batch('demo',
  (SELECT array_agg(CASE WHEN i % 50 = 0 THEN '{"kind": "flaky"}' ELSE '{"kind": "ok"}' END::jsonb)
   FROM generate_series(1, $jobs) i));
SELECT jobq_enqueue('demo', '{"kind": "bad"}') AS bad_job,
       jobq_enqueue('demo', '{"kind": "poison"}') AS poison_job;
SELECT count(*) AS delayed FROM jobq_enqueue_batch('demo',
  (SELECT array_agg('{"kind": "ok"}'::jsonb) FROM generate_series(1, 20)), delay => '2 seconds');
SQL

# the dashboard (loopback only, no authentication: see doc/jobq-web.md)
web="$top/client/jobq-web"
webport=${JOBQ_DEMO_WEB_PORT:-8411}
if [ -x "$web" ]; then
	"$web" --dbname "$dsn" --listen "127.0.0.1:$webport" >"/tmp/jobq-$name-web.log" 2>&1 &
	webpid=$!
	echo "== dashboard: http://127.0.0.1:$webport/ (jobq-web, while the demo runs)"
fi

stats() {
	sql -c "SELECT queue, ready, delayed, running, expired, dead, completed, stale_acks FROM jobq_stats('demo')"
}
echo "== before"
stats

worker="$top/client/jobq-worker"
if [ -x "$worker" ]; then
	echo "== draining with jobq-worker --concurrency 4 --burst"
	# --burst exits when nothing is claimable; a retry waiting out its
	# backoff is not claimable yet, so run it again until nothing is left
	log="/tmp/jobq-$name-worker.log"
	for round in 1 2 3 4 5 6 7 8 9 10; do
		"$worker" --dbname "$dsn" --queue demo --concurrency 4 --batch 20 \
			--sweep-interval 1 --poll-interval 0.2 --burst --log-format text \
			-- "$top/demo/handler.sh" >>"$log" 2>&1 &
		wpid=$!
		while kill -0 "$wpid" 2>/dev/null; do
			sleep 1
			sql -At -c "SELECT format('   ready %s  delayed %s  running %s  dead %s  completed %s',
			                ready, delayed, running, dead, completed) FROM jobq_stats('demo')"
		done
		wait "$wpid" || echo "jobq-worker exited with status $?"
		left=$(sql -At -c "SELECT ready + delayed + running FROM jobq_stats('demo')")
		[ "$left" = 0 ] && break
		echo "   $left jobs waiting out a retry backoff: another burst (round $((round + 1)))"
		sleep 1
	done
	echo "== last lines of the worker's log"
	tail -n 5 "$log"
	rm -f "$log"
else
	echo "== client/jobq-worker not built; draining with SQL calls instead"
	sql <<'SQL'
DO $$
DECLARE j record; n int;
BEGIN
  LOOP
    PERFORM jobq_sweep();
    n := 0;
    FOR j IN SELECT * FROM jobq_claim('demo', 'psql-demo', 100) LOOP
      n := n + 1;
      IF j.payload->>'kind' = 'flaky' AND j.attempt < 2 THEN
        PERFORM jobq_fail(j.id, j.token, 'flaky: try again', retry_in => '0');
      ELSIF j.payload->>'kind' IN ('bad') THEN
        PERFORM jobq_fail(j.id, j.token, 'bad input, giving up', permanent => true);
      ELSIF j.payload->>'kind' = 'poison' THEN
        PERFORM jobq_fail(j.id, j.token, 'poison', retry_in => '0');
      ELSE
        PERFORM jobq_complete(j.id, j.token, jsonb_build_object('attempt', j.attempt));
      END IF;
    END LOOP;
    EXIT WHEN n = 0 AND NOT EXISTS (SELECT 1 FROM jobq_stats('demo') s WHERE s.delayed > 0);
    IF n = 0 THEN PERFORM pg_sleep(0.2); END IF;
  END LOOP;
END $$;
SQL
fi

echo "== after"
stats
echo "== dead jobs"
sql -c "SELECT id, attempt, last_error FROM jobq_list('demo', 'dead')"

if [ -n "$webpid" ] && [ -n "${JOBQ_DEMO_WAIT:-}" ]; then
	echo "== the dashboard stays at http://127.0.0.1:$webport/ until you press Enter"
	read -r _
fi
