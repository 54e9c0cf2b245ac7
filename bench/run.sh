#!/usr/bin/env bash
# bench/run.sh: the one command of the jobq benchmarks (see bench/README.md).
#
#   bench/run.sh [--quick | --smoke] [--synchronous-commit off] [--reps N]
#                [--soak-seconds N] [--only enqueue,drain,...] [--output FILE]
#
# Builds bench/driver (and client/libjobq.a when missing), checks that the
# extension is installed, starts a throwaway cluster under /tmp/jobq-bench-*
# (port 5496, unix socket only), runs every benchmark and writes
# bench/RESULTS.md (plus bench/soak.svg and bench/latency.svg with gnuplot).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sharedir=$(pg_config --sharedir)
if [ ! -f "$sharedir/extension/jobq.control" ]; then
	echo "run.sh: the jobq extension is not installed; run: make -C $(dirname "$here") NO_CLIENT=1 install" >&2
	exit 2
fi
if ! make -s -C "$here" driver handler persistent_handler >&2; then
	echo "run.sh: bench/driver could not be built; the libjobq figures will be missing" >&2
fi
exec python3 "$here/bench.py" "$@"
