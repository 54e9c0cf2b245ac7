#!/usr/bin/env bash
# test/check-docs.sh: the docs suite of test/run-tests.sh.
#
#   test/check-docs.sh [CONNINFO]   or JOBQ_TEST_DSN=CONNINFO test/check-docs.sh
#
# Runs each check of the docs and prints "ok - NAME" or "not ok - NAME"
# with the check's output, then "N passed, N failed"; exits 1 when one
# failed.  Checks that need a database (one with CREATE EXTENSION jobq)
# take it from CONNINFO.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
[ $# -gt 0 ] && export JOBQ_TEST_DSN=$1
passed=0
failed=0

# check NAME CMD...: run CMD, count it
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		echo "ok - $name"
		passed=$((passed + 1))
	else
		echo "not ok - $name"
		failed=$((failed + 1))
	fi
	[ -n "$out" ] && sed 's/^/    /' <<<"$out"
}

check "relative links of README.md and doc/ resolve" python3 "$here/test/check-doc-links.py"
check "man pages install, render without warnings, list every --help option" \
	python3 "$here/test/check-man.py"
check "doc/reliability.md 2.7 lists every test id the tests cite" \
	python3 "$here/test/check-reliability-ids.py"
if [ -n "${JOBQ_TEST_DSN:-}" ]; then
	check "doc/sql.md has the signature of every function of the extension" \
		python3 "$here/test/check-sql-doc.py" "$JOBQ_TEST_DSN"
else
	echo "not ok - doc/sql.md signatures: no database (give CONNINFO or JOBQ_TEST_DSN)"
	failed=$((failed + 1))
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
