#!/usr/bin/env bash
# t/run.sh: run jobq's TAP tests (t/NNN_*.pl) against throwaway clusters.
#
#   t/run.sh [PROVE_ARGS...]      e.g. t/run.sh t/002_worker_crash.pl
#
# PostgreSQL refuses to run as root, so when called as root (CI) this
# copies the tests to a scratch directory owned by "postgres" and runs
# prove as that user.  The binaries come from $JOBQ_BIN_DIR, else
# client/, brought up to date with "make -C client" (the one build of
# them; a failed build stops here).  The extension must be installed
# ("make NO_CLIENT=1 install").  Tests that need valgrind skip without it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
pgbin=$(pg_config --bindir)
pgxs=$(cd "$(dirname "$(pg_config --pgxs)")/../.." && pwd)	# .../lib/pgxs
work=$(mktemp -d /tmp/jobq-tap.XXXXXX)
trap 'rm -rf "$work"' EXIT

bin=${JOBQ_BIN_DIR:-$root/client}
if [ -z "${JOBQ_BIN_DIR:-}" ]; then
	make -s -C "$root/client" >/dev/null || { echo "t/run.sh: the client does not build (make -C client)" >&2; exit 1; }
fi
# the tests run as postgres: give them their own copy of the binaries
mkdir -p "$work/bin/examples"
cp "$bin/jobq-worker" "$bin/jobq" "$bin/jobq-http" "$bin/jobq-web" "$work/bin/"
[ ! -x "$bin/examples/callback_worker" ] || cp "$bin/examples/callback_worker" "$work/bin/examples/"
[ ! -x "$bin/examples/web_embed" ] || cp "$bin/examples/web_embed" "$work/bin/examples/"
cp -r "$root/t" "$work/t"
# the handler libraries of --persistent (client/handlers), for t/026
cp -r "$root/client/handlers" "$work/handlers"
# the browser test of jobq-web (client/web/test, with its node_modules), for t/089
cp -r "$root/client/web/test" "$work/webtest"

as_pg() { if [ "$(id -u)" = 0 ]; then chown -R postgres: "$work"; runuser -u postgres -- "$@"; else "$@"; fi; }
cd "$work"
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(t/*.pl)
as_pg env PATH="$pgbin:$PATH" JOBQ_BIN_DIR="$work/bin" JOBQ_HANDLERS_DIR="$work/handlers" JOBQ_WEB_TEST_DIR="$work/webtest" \
	PG_REGRESS="$pgxs/src/test/regress/pg_regress" TESTDIR="$work" \
	prove -I "$pgxs/src/test/perl" -I "$work/t" "${args[@]}"
