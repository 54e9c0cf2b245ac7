#!/usr/bin/env bash
# client/web/test/screenshots.sh: the README's pictures of jobq-web from a
# seeded dashboard (doc/img/jobq-web-overview.png, doc/img/jobq-web-queue.png).
#
#   client/web/test/screenshots.sh [MINUTES]     (default 3; after make)
#
# A throwaway cluster with jobq preloaded (so that metrics are kept), three
# queues fed for MINUTES minutes by an enqueue loop and drained by two
# jobq-workers running demo/handler.sh (1 in 50 jobs flaky, a few bad ones),
# a schedule and a registered worker; then jobq-web on a free port and
# screenshots.mjs in Debian's chromium.  Ports: JOBQ_SHOTS_PORT (55491).
set -euo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
minutes=${1:-3}
name=shots-$$
port=${JOBQ_SHOTS_PORT:-55491}
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	"$top/test/devdb.sh" destroy "$name" >/dev/null 2>&1
}
trap cleanup EXIT
export JOBQ_DEVDB_EXTRA_CONF="shared_preload_libraries = 'jobq'
jobq.sweeper_databases = 'postgres'"
dsn=$("$top/test/devdb.sh" start "$name" "$port")
sql() { psql "$dsn" -X -q -At -v ON_ERROR_STOP=1 "$@"; }
sql <<'SQL'
CREATE EXTENSION jobq;
SELECT jobq_create_queue('mails', max_attempts => 3, backoff_base => '1 second', backoff_cap => '5 seconds');
SELECT jobq_create_queue('reports', max_attempts => 2);
SELECT jobq_create_queue('webhooks', max_attempts => 5);
SELECT jobq_schedule('nightly-report', 'reports', '0 3 * * *', tz => 'Europe/Berlin');
SQL
for q in mails reports; do
	"$top/client/jobq-worker" --dbname "$dsn" --queue "$q" --concurrency 4 --batch 20 --name "$q-worker" \
		--sweep-interval 1 --poll-interval 0.2 --log-format text -- "$top/demo/handler.sh" >/dev/null 2>&1 &
	pids+=($!)
done
# the feed: a wave of mails, a trickle of reports, webhooks nobody serves
end=$(( $(date +%s) + minutes * 60 ))
while [ "$(date +%s)" -lt "$end" ]; do
	sql -c "SELECT count(*) FROM jobq_enqueue_batch('mails', (SELECT array_agg(CASE WHEN i % 50 = 0 THEN '{\"kind\": \"flaky\"}' WHEN i % 997 = 0 THEN '{\"kind\": \"bad\"}' ELSE '{\"kind\": \"ok\"}' END::jsonb) FROM generate_series(1, 40 + (extract(second FROM now())::int % 30) * 4) i))" >/dev/null
	sql -c "SELECT jobq_enqueue('reports', '{\"kind\": \"ok\"}')" >/dev/null
	sql -c "SELECT jobq_enqueue('webhooks', '{\"url\": \"https://example.com/hook\"}')" >/dev/null
	sleep 1
done
sql -c "SELECT jobq_metrics_flush()" >/dev/null 2>&1 || true
"$top/client/jobq-web" --dbname "$dsn" --listen 127.0.0.1:0 >"/tmp/jobq-$name-web.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do
	webport=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\)/.*|\1|p' "/tmp/jobq-$name-web.log")
	[ -n "$webport" ] && break
	sleep 0.1
done
mkdir -p "$top/doc/img"
WEB_URL="http://127.0.0.1:$webport/" OUT="$top/doc/img" QUEUE=mails \
	NODE_PATH="$top/client/web/test/node_modules" node "$top/client/web/test/screenshots.mjs"
rm -f "/tmp/jobq-$name-web.log"
ls -l "$top/doc/img"/jobq-web-*.png
