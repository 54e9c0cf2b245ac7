#!/usr/bin/env bash
# examples/run.sh: run the producer and the consumer of each language against
# a real server and check that every job was completed (suite "examples" of
# test/run-tests.sh).
#
#   examples/run.sh [N]     N jobs per language (default 100)
#
# The database comes from JOBQ_TEST_DSN ("host=... port=... user=...
# dbname=...", as test/devdb.sh prints it) or from the PG* environment; it
# needs CREATE EXTENSION jobq and a role that may create queues.  Each
# language gets its own queue, ex-LANG.  Prints "ok - LANG" or "not ok -
# LANG" with what went wrong, then "N passed, N failed"; exits 1 when one
# failed.  Needs: make -C client (for C), python3-psycopg2, and
# npm ci --ignore-scripts in examples/node (test/install-deps.sh does both).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
n=${1:-100}
python=${JOBQ_PYTHON:-/usr/bin/python3}

# the conninfo as PG* variables, which every driver here reads
for kv in ${JOBQ_TEST_DSN:-}; do
	case $kv in
	host=*) export PGHOST=${kv#host=} ;;
	port=*) export PGPORT=${kv#port=} ;;
	user=*) export PGUSER=${kv#user=} ;;
	dbname=*) export PGDATABASE=${kv#dbname=} ;;
	*) echo "examples/run.sh: cannot pass \"$kv\" to every driver" >&2; exit 2 ;;
	esac
done

sql() { psql -XAtq -v ON_ERROR_STOP=1 "$@"; }
passed=0
failed=0

# example LANG PRODUCER... -- CONSUMER...: run both on queue ex-LANG, check
example() {
	local lang=$1 queue=ex-$1 producer=() consumer=() out got
	shift
	while [ "$1" != -- ]; do producer+=("$1"); shift; done
	shift
	consumer=("$@")
	if ! out=$(sql -c "SELECT jobq_drop_queue(queue, force => true) FROM jobq_queues() WHERE queue = '$queue'" \
			-c "SELECT jobq_create_queue('$queue')" 2>&1) ||
		! out=$("${producer[@]}" 2>&1) ||
		! out=$out$'\n'$("${consumer[@]}" 2>&1); then
		echo "not ok - $lang"
		sed 's/^/    /' <<<"$out"
		failed=$((failed + 1))
		return
	fi
	got=$(sql -c "SELECT format('ready=%s running=%s completed=%s', ready + delayed, running, completed)
	              FROM jobq_stats('$queue')")
	if [ "$got" = "ready=0 running=0 completed=$n" ] && grep -qx "completed $n" <<<"$out"; then
		echo "ok - $lang: $n jobs enqueued, claimed and completed"
		passed=$((passed + 1))
	else
		echo "not ok - $lang: $got, expected ready=0 running=0 completed=$n"
		sed 's/^/    /' <<<"$out"
		failed=$((failed + 1))
	fi
}

example psql psql -XAtq -v queue=ex-psql -v n="$n" -f "$here/psql/producer.sql" -- \
	sh -c 'psql -XAtq -v queue=ex-psql -f "$1" | awk "/^completed / {s += \$2} END {print \"completed \" s+0}"' \
	sh "$here/psql/consumer.sql"

if make -s -C "$here/c" WERROR=1 >/dev/null 2>"$here/c/build.log"; then
	example c "$here/c/producer" ex-c "$n" -- "$here/c/consumer" ex-c
else
	echo "not ok - c: make -C examples/c failed (make -C client first)"
	sed 's/^/    /' "$here/c/build.log"
	failed=$((failed + 1))
fi
rm -f "$here/c/build.log"

example python "$python" "$here/python/producer.py" ex-python "$n" -- \
	"$python" "$here/python/consumer.py" ex-python

if [ -d "$here/node/node_modules/pg" ]; then
	example node node "$here/node/producer.js" ex-node "$n" -- node "$here/node/consumer.js" ex-node
else
	echo "not ok - node: examples/node/node_modules missing (npm ci --ignore-scripts there)"
	failed=$((failed + 1))
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
