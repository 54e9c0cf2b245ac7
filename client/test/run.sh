#!/bin/sh
# client/test/run.sh: run the libjobq tests against a real server.
#
#   test/run.sh [CONNINFO]              or JOBQ_TEST_DSN=CONNINFO test/run.sh
#   RUN_VALGRIND=1 test/run.sh ...      under valgrind (leaks are errors)
#
# The database needs the jobq extension (CREATE EXTENSION jobq) and a role
# that may administer it.  With no conninfo at all, libpq's PG* environment
# variables apply.  Exits with the test binary's status.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
bin="$here/test-libjobq"
if [ $# -gt 0 ]; then
	JOBQ_TEST_DSN=$1
fi
export JOBQ_TEST_DSN="${JOBQ_TEST_DSN:-}"
if [ ! -x "$bin" ]; then
	echo "run.sh: $bin not built; run 'make -C $(dirname "$here") test'" >&2
	exit 2
fi
# programs linked against libjobq 0.1.0 keep working (test_abi.c)
if [ "${RUN_VALGRIND:-0}" = 1 ]; then
	valgrind --leak-check=full --show-leak-kinds=definite,indirect,possible \
		--errors-for-leak-kinds=definite,indirect,possible \
		--error-exitcode=1 --quiet "$here/test-abi"
else
	"$here/test-abi"
fi
if [ "${RUN_VALGRIND:-0}" = 1 ]; then
	exec valgrind --leak-check=full --show-leak-kinds=definite,indirect,possible \
		--errors-for-leak-kinds=definite,indirect,possible \
		--error-exitcode=1 --quiet "$bin"
fi
exec "$bin"
