#!/usr/bin/env bash
# bench/web-load.sh: jobq-web's read endpoints under load (bench/RESULTS.md,
# "jobq-web: read endpoints").
#
#   bench/web-load.sh [--history N] [--live N] [--seconds S] [--conns C] [--port P]
#
# A throwaway cluster with jobq preloaded (port 55493 by default, unix
# socket only), queue "mails" with --live ready jobs (default 100,000) and
# --history completed and dead ones written directly (default 1,000,000;
# the issue's size is 10,000,000, about 4 minutes more to load), jobq-web
# on a free loopback port with the rate limits off, and bench/web-load
# against each main read endpoint: C keep-alive connections (default 16,
# "tabs") for S seconds (default 10) each, once through the cache
# (--min-refresh 2s, the default) and once without it (--min-refresh 0).
# The database side is counted with track_functions = all: the calls of the
# endpoint's SQL function during the run, per second, is the dashboard's
# query rate, which the cache keeps at one per --min-refresh whatever the
# number of connections.  Prints one Markdown table.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
history=1000000 live=100000 seconds=10 conns=16 port=55493
while [ $# -gt 0 ]; do
	case $1 in
	--history) history=$2; shift 2 ;;
	--live) live=$2; shift 2 ;;
	--seconds) seconds=$2; shift 2 ;;
	--conns) conns=$2; shift 2 ;;
	--port) port=$2; shift 2 ;;
	*) echo "usage: bench/web-load.sh [--history N] [--live N] [--seconds S] [--conns C] [--port P]" >&2; exit 2 ;;
	esac
done
make -s -C "$top/bench" web-load
name=webload-$$
webpid=
cleanup() {
	[ -z "$webpid" ] || kill "$webpid" 2>/dev/null || true
	"$top/test/devdb.sh" destroy "$name" >/dev/null 2>&1
}
trap cleanup EXIT
export JOBQ_DEVDB_EXTRA_CONF="shared_preload_libraries = 'jobq'
track_functions = 'all'
shared_buffers = '256MB'"
dsn=$("$top/test/devdb.sh" start "$name" "$port")
sql() { psql "$dsn" -X -q -At -v ON_ERROR_STOP=1 "$@"; }
echo "== loading: $live live jobs, $history history rows" >&2
(sql <<SQL
CREATE EXTENSION jobq;
SELECT jobq_create_queue('mails');
SELECT count(*) FROM generate_series(0, ($live - 1) / 10000) b,
  LATERAL jobq_enqueue_batch('mails', (SELECT array_agg(jsonb_build_object('to', 'user' || i || '@example.com'))
    FROM generate_series(b * 10000 + 1, least(b * 10000 + 10000, $live)) i));
INSERT INTO jobq.history (id, queue, state, priority, run_at, attempt, max_attempts, token, worker,
    enqueued_at, claimed_at, finished_at, payload, errors)
  SELECT -g, 'mails', (CASE WHEN g % 100 = 0 THEN 'dead' ELSE 'completed' END)::jobq.job_state, 0, now(), 1, 25,
    gen_random_uuid(), 'w1', now() - interval '1 hour', now() - interval '1 hour',
    now() - (g % 3600) * interval '1 second', jsonb_build_object('n', g),
    CASE WHEN g % 100 = 0 THEN '[{"error": "smtp timeout"}]'::jsonb END
  FROM generate_series(1, $history) g;
VACUUM ANALYZE jobq.history;
SELECT count(*) FROM jobq_counts_reconcile('mails');
SQL
) >/dev/null
one_id=$(sql -c "SELECT min(id) FROM jobq.jobs")

# ENDPOINT PATH FUNCTION: the table rows
endpoints=(
	"overview|/api/overview|jobq_counts"
	"queues|/api/queues|jobq_queues"
	"jobs, ready, first page|/api/jobs?queue=mails&state=ready|jobq_list"
	"jobs, completed, first page|/api/jobs?queue=mails&state=completed|jobq_list"
	"jobs, dead, error filter|/api/jobs?queue=mails&state=dead&filters=%7B%22error%22%3A%22timeout%22%7D|jobq_list"
	"one job|/api/jobs/$one_id|jobq_job"
	"metrics, last hour|/api/metrics?queue=mails|jobq_metrics"
)
calls() { sql -c "SELECT coalesce(sum(calls), 0) FROM pg_stat_user_functions WHERE funcname = '$1'"; }
echo "| endpoint | cache | requests/s | p50 ms | p95 ms | p99 ms | not 200 | SQL calls/s |"
echo "|---|---|---|---|---|---|---|---|"
for refresh in 2s 0; do
	log=$(mktemp)
	"$top/client/jobq-web" --dbname "$dsn" --listen 127.0.0.1:0 --rate-limits 0,0,0 \
		--min-refresh "$refresh" --threads 4 >"$log" 2>&1 &
	webpid=$!
	webport=
	for _ in $(seq 1 100); do
		webport=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$log")
		[ -n "$webport" ] && break
		sleep 0.1
	done
	for e in "${endpoints[@]}"; do
		IFS='|' read -r label path fn <<<"$e"
		sql -c "SELECT pg_stat_clear_snapshot()" >/dev/null
		before=$(calls "$fn")
		if ! out=$("$top/bench/web-load" 127.0.0.1 "$webport" "$path" "$conns" "$seconds"); then
			echo "bench/web-load failed on $path; jobq-web's log:" >&2
			cat "$log" >&2
			exit 1
		fi
		sleep 0.6	# the backends report their function counts when idle
		after=$(calls "$fn")
		python3 - "$label" "$refresh" "$out" "$before" "$after" "$seconds" <<'PY'
import json, sys
label, refresh, out, before, after, secs = sys.argv[1:]
r = json.loads(out)
print(f"| {label} | {'min-refresh ' + refresh if refresh != '0' else 'none'} | {r['per_s']:,.0f} | {r['p50_ms']:.2f} | "
      f"{r['p95_ms']:.2f} | {r['p99_ms']:.2f} | {r['non200']} | {(int(after) - int(before)) / float(secs):,.1f} |")
PY
	done
	kill "$webpid"
	wait "$webpid" 2>/dev/null || true
	webpid=
	rm -f "$log"
done
