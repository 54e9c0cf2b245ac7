#!/usr/bin/env bash
# bench/ci-smoke.sh: the smallest configuration of the benchmark harness
# (bench/run.sh --smoke: one run of each benchmark at one client, tiny
# sizes; about a minute).  Fails when any benchmark errors or produces no
# figure.  It never asserts a speed: figures on CI machines mean nothing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp /tmp/jobq-bench-smoke-XXXXXX.md)
trap 'rm -f "$out"' EXIT
"$here/run.sh" --smoke --output "$out"
# every table the report promises must hold a figure
if grep -q '| n/a |' "$out"; then
	echo "ci-smoke: a benchmark produced no figure:" >&2
	grep '| n/a |' "$out" >&2
	exit 1
fi
echo "ci-smoke: ok"
