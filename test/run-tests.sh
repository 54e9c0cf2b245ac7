#!/usr/bin/env bash
# test/run-tests.sh: build, install and run jobq's test suites.
#
#   test/run-tests.sh [SUITE...]   SUITE: regress isolation client tap docs examples stress bench
#                                  packages
#                                  (default: all of them; bench proves the benchmark
#                                  harness runs, it asserts no speed; docs checks
#                                  the documentation against the code; examples
#                                  runs examples/ in every language; packages
#                                  builds, installs, uses and purges the
#                                  Debian packages: root only)
#
# Run as root (CI) or as a user that can `make install` into pg_config's
# directories.  PostgreSQL refuses to run as root, so the suites run as the
# "postgres" OS user, in a scratch copy of the tree that user owns; every
# suite starts its own throwaway server (pg_regress --temp-instance,
# PostgreSQL::Test::Cluster, test/devdb.sh), on unix sockets only.
#
# Prints each suite's output, the diffs of a failed suite, and last a line
# "N passed, N failed" counting individual tests.  Exits non-zero if any
# suite fails.
set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
suites=("$@")
[ ${#suites[@]} -eq 0 ] && suites=(regress isolation client tap docs examples stress bench packages)

as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

make -C "$here" -s checkver || exit 1
echo "== build and install (warnings are errors)"
make -C "$here" -s WERROR=1 >/dev/null || { make -C "$here" WERROR=1; echo "build failed"; exit 1; }
make -C "$here" -s WERROR=1 install >/dev/null || { echo "install failed"; exit 1; }
make -C "$here/client" -s WERROR=1 test/test-libjobq check-exports || { echo "client test build failed"; exit 1; }

work=$(mktemp -d /tmp/jobq-tests.XXXXXX)
cleanup() {
	"$work/test/devdb.sh" destroy "citest-$$" >/dev/null 2>&1
	rm -rf "$work"
}
trap cleanup EXIT
cp -a "$here/." "$work/"
[ "$(id -u)" = 0 ] && chown -R postgres:postgres "$work"
chmod 755 "$work"

passed=0
failed=0
failed_suites=()

# count_tests LOG: add the log's test counts to passed/failed
count_tests() {
	local log=$1 p=0 f=0 n
	# pg_regress / pg_isolation_regress: "ok" and "FAILED" lines per test
	n=$(grep -cE '^(test| ) *[a-z][a-z0-9_]* +\.\.\. ok' "$log"); p=$((p + n))
	n=$(grep -cE '^(test| ) *[a-z][a-z0-9_]* +\.\.\. FAILED' "$log"); f=$((f + n))
	# prove: "Files=N, Tests=M" and "Failed N/M subtests"
	n=$(sed -n 's/^Files=[0-9]*, Tests=\([0-9]*\).*/\1/p' "$log" | tail -1); [ -n "$n" ] && p=$((p + n))
	n=$(sed -n 's/.*Failed \([0-9]*\)\/[0-9]* subtests.*/\1/p' "$log" | awk '{s+=$1} END {print s+0}'); p=$((p - n)); f=$((f + n))
	# the client tests: "N passed, N failed"
	n=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$log" | tail -1)
	if [ -n "$n" ]; then p=$((p + ${n% *})); f=$((f + ${n#* })); fi
	passed=$((passed + p)); failed=$((failed + f))
}

# run_suite NAME CMD...: run CMD as the postgres OS user (as_pg), or as the
# caller when NAME starts with "root:" (suites that start their own servers
# through test/devdb.sh and install what they build)
run_suite() {
	local name=$1; shift
	local runner=as_pg
	case $name in root:*) name=${name#root:}; runner= ;; esac
	local log="$work/suite-$name.log"
	echo "== $name"
	if $runner "$@" 2>&1 | tee "$log"; [ "${PIPESTATUS[0]}" -eq 0 ]; then
		echo "-- $name: ok"
	else
		echo "-- $name: FAILED"
		failed_suites+=("$name")
		for f in "$work"/regression.diffs "$work"/output_iso/regression.diffs \
			"$work"/output_upgrade/regression.diffs "$work"/output_iso_preload/regression.diffs; do
			[ -s "$f" ] && { echo "---- $f"; cat "$f"; }
		done
		rm -f "$work"/regression.diffs "$work"/output_iso/regression.diffs \
			"$work"/output_upgrade/regression.diffs "$work"/output_iso_preload/regression.diffs
		grep -q 'FAILED\|Failed' "$log" || failed=$((failed + 1))
	fi
	count_tests "$log"
}

for s in "${suites[@]}"; do
	case $s in
	regress)
		run_suite regress make -C "$work" -s installcheck NO_CLIENT=1 ISOLATION= TAP_TESTS=
		# the same suite on a catalog created at 0.1.0 and updated
		run_suite regress-upgrade make -C "$work" -s installcheck-upgrade NO_CLIENT=1 ;;
	isolation)
		run_suite isolation make -C "$work" -s installcheck NO_CLIENT=1 REGRESS= TAP_TESTS=
		# the specs that need jobq preloaded, on a preloaded server
		run_suite isolation-preload make -C "$work" -s installcheck-iso-preload NO_CLIENT=1 ;;
	client)
		if [ -x "$work/client/test/run.sh" ]; then
			dsn=$("$work/test/devdb.sh" start "citest-$$" 55$((RANDOM % 90 + 10)))
			as_pg psql "$dsn" -qc 'CREATE EXTENSION jobq' >/dev/null
			run_suite client env JOBQ_TEST_DSN="$dsn" RUN_VALGRIND="${RUN_VALGRIND:-1}" \
				"$work/client/test/run.sh"
			"$work/test/devdb.sh" destroy "citest-$$" >/dev/null
		fi ;;
	tap)
		if [ -x "$work/t/run.sh" ]; then
			run_suite tap "$work/t/run.sh"
		fi ;;
	docs)
		dsn=$("$work/test/devdb.sh" start "citest-$$" 55$((RANDOM % 90 + 10)))
		as_pg psql "$dsn" -qc 'CREATE EXTENSION jobq' >/dev/null
		run_suite docs env JOBQ_TEST_DSN="$dsn" "$work/test/check-docs.sh"
		"$work/test/devdb.sh" destroy "citest-$$" >/dev/null ;;
	examples)
		dsn=$("$work/test/devdb.sh" start "citest-$$" 55$((RANDOM % 90 + 10)))
		as_pg psql "$dsn" -qc 'CREATE EXTENSION jobq' >/dev/null
		run_suite examples env JOBQ_TEST_DSN="$dsn" "$work/examples/run.sh"
		"$work/test/devdb.sh" destroy "citest-$$" >/dev/null ;;
	stress)
		# the short configuration; stress/run.sh --long for the real thing
		run_suite root:stress "$here/stress/run.sh" ;;
	bench)
		run_suite root:bench "$here/bench/ci-smoke.sh" --quick ;;
	packages)
		run_suite root:packages "$here/test/package-test.sh" ;;
	*)
		echo "unknown suite $s" >&2; exit 2 ;;
	esac
done

[ ${#failed_suites[@]} -gt 0 ] && echo "FAILED suites: ${failed_suites[*]}"
echo "$passed passed, $failed failed"
[ ${#failed_suites[@]} -eq 0 ]
