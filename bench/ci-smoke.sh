#!/usr/bin/env bash
# bench/ci-smoke.sh [--smoke|--quick]: run the benchmark harness to prove it
# works: --smoke (default) is the smallest configuration (one run of each
# benchmark at one client, tiny sizes; about a minute), --quick the quick
# mode (what the test command runs).  Fails when any benchmark errors or
# produces no figure.  It never asserts a speed: figures on CI machines
# mean nothing.  The report goes to a temporary file, not RESULTS.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp /tmp/jobq-bench-smoke-XXXXXX.md)
trap 'rm -f "$out"' EXIT
"$here/run.sh" "${1:---smoke}" --output "$out"
# every table the report promises must hold a figure
if grep -q '| n/a |' "$out"; then
	echo "ci-smoke: a benchmark produced no figure:" >&2
	grep '| n/a |' "$out" >&2
	exit 1
fi
echo "ci-smoke: ok"
