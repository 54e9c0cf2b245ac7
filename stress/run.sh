#!/usr/bin/env bash
# stress/run.sh: jobq's fault-injection and stress suite (see README.md).
#
#   stress/run.sh                 short configuration (CI, a few minutes)
#   stress/run.sh --long          long configuration (SCALE=10 unless set)
#   stress/run.sh --scale N       multiply durations and job counts by N
#   stress/run.sh --only S1,F3    run some scenarios only
#   stress/run.sh --keep          keep the work directory and the cluster
#
# It builds the extension and the client, starts its own PostgreSQL
# cluster (test/devdb.sh, name "stress", port 5600; PgBouncer on 5601),
# runs each scenario against a recorded history, checks the history with
# bin/stress-check, prints the figures and, last, "N passed, N failed".
# Exit status: 0 when every scenario passed.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
S=$ROOT/stress
BIN=$S/bin
JW=$ROOT/client/jobq-worker
PORT=${STRESS_PORT:-5600}
PGB_PORT=$((PORT + 1))
CLUSTER=${STRESS_CLUSTER:-stress}   # two runs at once: another STRESS_CLUSTER and STRESS_PORT
CDIR=/tmp/jobq-$CLUSTER
SCALE=1
ONLY=""
KEEP=0
LONG=0

while [ $# -gt 0 ]; do
	case $1 in
	--long) LONG=1; SCALE=${STRESS_SCALE:-10} ;;
	--scale) SCALE=$2; shift ;;
	--only) ONLY=$2; shift ;;
	--keep) KEEP=1 ;;
	-h|--help) sed -n '2,16p' "$0"; exit 0 ;;
	*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done

WORK=$(mktemp -d /tmp/stress-run.XXXXXX)
chmod 755 "$WORK"
FIG=$WORK/figures.txt
: >"$FIG"
PASSED=0
FAILED=0
FAILED_NAMES=""
PIDS=()          # every background process we started (killed at exit)
PGROUPS=()       # process groups we started (jobq-worker and its handlers)
PGB_PIDFILE=""
T_START=$(date +%s)

log() { printf '%s [%4ss] %s\n' "$(date +%H:%M:%S)" "$(( $(date +%s) - T_START ))" "$*"; }
fig() { echo "$*" | tee -a "$FIG"; }
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
sc() { echo $(( $1 * SCALE )); }          # scaled count
rand() { echo $(( RANDOM % ($2 - $1 + 1) + $1 )); }

cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	for p in "${PGROUPS[@]}"; do kill -9 -- "-$p" 2>/dev/null; done
	if [ -n "$PGB_PIDFILE" ] && [ -f "$PGB_PIDFILE" ]; then
		kill "$(cat "$PGB_PIDFILE")" 2>/dev/null
	fi
	if [ $KEEP = 0 ]; then
		"$ROOT/test/devdb.sh" destroy "$CLUSTER" >/dev/null 2>&1
		if [ $FAILED = 0 ]; then rm -rf "$WORK"; else echo "work directory kept: $WORK"; fi
	else
		echo "kept: $WORK and the cluster $CDIR"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------------------
# build and cluster
# ---------------------------------------------------------------------------
retry() {	# retry N CMD...: others may be mid-edit; try again a few times
	local n=$1 i; shift
	for i in $(seq 1 "$n"); do
		"$@" && return 0
		log "failed ($*), retrying in 15 s ($i/$n)"; sleep 15
	done
	return 1
}
build() {
	retry 6 make -s -C "$ROOT" NO_CLIENT=1 install >"$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; return 1; }
	retry 6 make -s -C "$ROOT/client" >>"$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; return 1; }
	make -s -C "$S" >>"$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; return 1; }
}

start_cluster() {
	"$ROOT/test/devdb.sh" destroy "$CLUSTER" >/dev/null 2>&1
	DSN=$(JOBQ_DEVDB_EXTRA_CONF="shared_preload_libraries = 'jobq'
jobq.sweeper_databases = 'postgres'
jobq.sweep_interval = 1000
synchronous_commit = on
max_connections = 300
log_min_messages = warning
log_line_prefix = '%m [%p] %a '" "$ROOT/test/devdb.sh" start "$CLUSTER" "$PORT") || return 1
	psqlc -c "CREATE EXTENSION jobq" >/dev/null || return 1
	log "cluster up: $DSN"
}
pg_restart_wait() {	# start the cluster again after a crash
	local i
	for i in $(seq 1 60); do
		if as_pg "$(pg_config --bindir)/pg_ctl" -D "$CDIR/data" -l "$CDIR/server.log" -w -t 60 start >/dev/null 2>&1; then
			return 0
		fi
		sleep 1
	done
	return 1
}

crash_immediate() {	# DIR: pg_ctl -m immediate stop and start again, recorded in DIR/crashes
	echo "pg_ctl -m immediate stop" >>"$1/crashes"
	as_pg "$(pg_config --bindir)/pg_ctl" -D "$CDIR/data" -m immediate -w stop >/dev/null 2>&1
	sleep 2
	pg_restart_wait || echo "restart failed" >>"$1/crashes"
}

psqlc() { psql "$DSN" -XAtq -v ON_ERROR_STOP=1 "$@"; }

mkqueue() {	# mkqueue NAME LEASE MAX_ATTEMPTS [NOTIFY]
	psqlc -c "SELECT jobq_create_queue('$1', lease => '$2 s', max_attempts => $3,
	            backoff_base => '0', backoff_cap => '0', completed_retention => '30 days',
	            dead_retention => '30 days', notify => ${4:-true})" >/dev/null
}

dump() {	# dump QUEUE FILE: the final state as B lines for the checker
	psqlc -c "COPY (SELECT 'B', id, coalesce(payload->>'uid', '-'), state, attempt,
	   coalesce(token::text, '-'),
	   coalesce((extract(epoch FROM claimed_at) * 1e6)::bigint, 0),
	   coalesce((extract(epoch FROM finished_at) * 1e6)::bigint, 0),
	   (extract(epoch FROM run_at) * 1e6)::bigint, priority,
	   coalesce((payload->>'hang')::int, 0)
	 FROM (SELECT id, state::text, attempt, token, claimed_at, NULL::timestamptz AS finished_at,
	              run_at, priority, payload FROM jobq.jobs WHERE queue = '$1'
	       UNION ALL
	       SELECT id, state::text, attempt, token, claimed_at, finished_at,
	              run_at, priority, payload FROM jobq.history WHERE queue = '$1') x)
	 TO STDOUT WITH (DELIMITER ' ')" >"$2"
}

live_jobs() { psqlc -c "SELECT coalesce(sum(ready + delayed + running), 0) FROM jobq_stats('$1')"; }

wait_drained() {	# wait_drained QUEUE TIMEOUT_S
	local end=$(( $(date +%s) + $2 )) n
	while :; do
		n=$(live_jobs "$1" 2>/dev/null) || n=x
		[ "$n" = 0 ] && return 0
		[ "$(date +%s)" -ge "$end" ] && { log "queue $1 not drained: $n live jobs"; return 1; }
		sleep 1
	done
}

client_backends() {
	psqlc -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()"
}

# start_worker DIR NAME ARGS...: a stress-worker in the background
FAKELIB=$(ls /usr/lib/*/faketime/libfaketime.so.1 2>/dev/null | head -1)
fake() {	# fake OFFSET CMD...: run CMD with its clock shifted (libfaketime)
	local off=$1; shift
	LD_PRELOAD=$FAKELIB FAKETIME="$off" "$@"
}
start_worker() {
	local dir=$1 name=$2; shift 2
	${FAKE_A:+env LD_PRELOAD=$FAKELIB FAKETIME=$FAKE_A} "$BIN/stress-worker" -w "$name" -o "$dir/w-$name.hist" "$@" 2>>"$dir/workers.log" &
	PIDS+=($!)
	LAST_PID=$!
}
# start_jw DIR NAME ARGS...: a jobq-worker (own process group) with the recording handler
start_jw() {
	local dir=$1 name=$2; shift 2
	STRESS_HIST=$dir/jw-$name.hist setsid ${FAKE_B:+env LD_PRELOAD=$FAKELIB FAKETIME=$FAKE_B} "$JW" "$@" --log-file="$dir/jw-$name.log" -- "$S/handler.sh" \
		</dev/null >/dev/null 2>>"$dir/workers.log" &
	PIDS+=($!)
	PGROUPS+=($!)
	LAST_PID=$!
}
stop_pids() {	# stop_pids SIGNAL PID...: signal and wait
	local sig=$1 p; shift
	for p in "$@"; do kill "-$sig" "$p" 2>/dev/null; done
	for p in "$@"; do wait "$p" 2>/dev/null; done
	return 0
}

# check LABEL DIR QUEUE [checker options]: dump, run the checker, keep its line
check() {
	local label=$1 dir=$2 q=$3; shift 3
	dump "$q" "$dir/db.dump" || return 1
	"$BIN/stress-check" --label "$label" "$@" "$dir"/*.hist* "$dir/db.dump" >"$dir/check.out" 2>"$dir/check.err"
	local rc=$?
	head -25 "$dir/check.err"
	fig "$(cat "$dir/check.out")"
	return $rc
}

# ---------------------------------------------------------------------------
# the S1 load: producers and workers at full speed, random SIGKILLs
# load DIR QUEUE DURATION KILLS(0/1) [extra env for workers via WRAP]
#   WRAP: command prefix for workers (faketime for T1)
#   CONN: conninfo for workers and producers (PgBouncer for O4)
#   WFLAGS / JWFLAGS: extra flags (O4: --pooler / --no-listen)
#   LOAD_PRODUCERS: the function that starts the producers (s1_producers)
# ---------------------------------------------------------------------------
KILLED=0
s1_producers() {	# DIR QUEUE DURATION CONN: load's producers (into its pp), LOAD_PRODUCERS
	local dir=$1 q=$2 dur=$3 conn=$4
	"$BIN/stress-producer" -d "$conn" -q "$q" -o "$dir/p1.hist" -p "$q-a" -t "$dur" --ms-max 10 --pause-ms 8 ${PFLAGS:-} >>"$dir/producers.log" 2>&1 &
	pp+=($!); PIDS+=($!)
	"$BIN/stress-producer" -d "$conn" -q "$q" -o "$dir/p2.hist" -p "$q-b" -t "$dur" -b 10 --ms-max 6 --pause-ms 100 ${PFLAGS:-} >>"$dir/producers.log" 2>&1 &
	pp+=($!); PIDS+=($!)
}
load() {
	local dir=$1 q=$2 dur=$3 kills=$4
	local conn=${CONN:-$DSN} lease=${LEASE:-3}
	local -a wp=() pp=()
	local i n=0
	LOAD_KILLS=0
	mkdir -p "$dir"
	"${LOAD_PRODUCERS:-s1_producers}" "$dir" "$q" "$dur" "$conn"
	spawn_s1_worker() {	# one of four kinds, by number
		local kind=$1 name=$q-w$n; n=$((n + 1))
		case $kind in
		0) start_worker "$dir" "$name" -d "$conn" -q "$q" -l "$lease" -b 1 --sweep-ms 1000 ${WFLAGS:-} ;;
		1) start_worker "$dir" "$name" -d "$conn" -q "$q" -l "$lease" -b 5 --pipeline ${WFLAGS:-} ;;
		2) start_worker "$dir" "$name" -d "$conn" -q "$q" -l "$lease" -b 2 --fail-pct 2 ${CWFLAGS:-${WFLAGS:-}} ;;
		3) start_jw "$dir" "$name" -d "$conn" -q "$q" -c 3 -l "$lease" --sweep-interval=2 --poll-interval=1 ${JWFLAGS:-} ;;
		esac
		wp[$kind]=$LAST_PID
	}
	for i in 0 1 2 3; do spawn_s1_worker $i; done
	local end=$(( $(date +%s) + dur ))
	while [ "$(date +%s)" -lt "$end" ]; do
		sleep "0.$(rand 5 9)"
		[ -n "${LOAD_HOOK:-}" ] && "$LOAD_HOOK" "$dir" "$(( dur - (end - $(date +%s)) ))" "$dur"
		if [ "$kills" = 1 ]; then
			i=$(rand 0 3)
			if [ "$i" = 3 ]; then kill -9 -- "-${wp[3]}" 2>/dev/null; else kill -9 "${wp[$i]}" 2>/dev/null; fi
			wait "${wp[$i]}" 2>/dev/null
			KILLED=$((KILLED + 1)); LOAD_KILLS=$((LOAD_KILLS + 1))
			spawn_s1_worker "$i"
		fi
	done
	wait "${pp[@]}"
	LOAD_WORKERS=("${wp[@]}")
}
drain_and_stop() {	# drain_and_stop QUEUE TIMEOUT
	local rc=0
	wait_drained "$1" "$2" || rc=1
	stop_pids TERM "${LOAD_WORKERS[@]}"
	return $rc
}

# ---------------------------------------------------------------------------
# scenarios (each returns 0 on pass)
# ---------------------------------------------------------------------------
scn_S1() {
	local d=$WORK/s1; mkdir -p "$d"
	mkqueue s1 3 1000
	LOAD_KILLS=0
	load "$d" s1 "$(sc 25)" 1
	drain_and_stop s1 90 || return 1
	fig "S1: workers killed (SIGKILL) $LOAD_KILLS"
	check S1 "$d" s1
}

scn_S3() {	# N jobs, 1% hang forever: all reach a terminal state
	local d=$WORK/s3 n; mkdir -p "$d"
	n=$(sc 5000)
	mkqueue s3 2 3
	"$BIN/stress-producer" -d "$DSN" -q s3 -o "$d/p.hist" -p s3 -n "$n" -b 50 --ms-max 2 --hang-pct 1 >>"$d/producers.log" 2>&1 || return 1
	local -a w=()
	start_worker "$d" s3-w0 -d "$DSN" -q s3 -l 2 -b 10 --pipeline; w+=($LAST_PID)
	start_worker "$d" s3-w1 -d "$DSN" -q s3 -l 2 -b 5 --sweep-ms 1000; w+=($LAST_PID)
	start_worker "$d" s3-w2 -d "$DSN" -q s3 -l 2 -b 1 --hang-sleep; w+=($LAST_PID)
	start_jw "$d" s3-jw -d "$DSN" -q s3 -c 4 -b 2 -l 2 --timeout=3 --kill-after=1 --poll-interval=1; w+=($LAST_PID)
	local rc=0 t0=$(date +%s)
	while :; do
		[ "$(live_jobs s3)" = 0 ] && break
		# a worker stuck in a hanging job is replaced (its process really hangs)
		if ! grep -q '^H' "$d/w-s3-w2.hist" 2>/dev/null; then :; else
			kill -9 "${w[2]}" 2>/dev/null; wait "${w[2]}" 2>/dev/null
			mv "$d/w-s3-w2.hist" "$d/w-s3-w2.$(date +%s%N).hist"
			start_worker "$d" s3-w2 -d "$DSN" -q s3 -l 2 -b 1 --hang-sleep; w[2]=$LAST_PID
			KILLED=$((KILLED + 1))
		fi
		[ $(( $(date +%s) - t0 )) -gt $(( 120 + n / 50 )) ] && { log "S3: not drained"; rc=1; break; }
		sleep 1
	done
	fig "S3: $n jobs drained in $(( $(date +%s) - t0 )) s ($(psqlc -c "SELECT dead FROM jobq_stats('s3')") dead, all of them hanging jobs)"
	stop_pids TERM "${w[@]}"
	check S3 "$d" s3 || rc=1
	return $rc
}

scn_S4() {	# pools started and stopped in a tight loop while producers insert
	local d=$WORK/s4 base cycles=0 i p now mine; mkdir -p "$d"
	local DSN="$DSN application_name=stress-s4"
	mkqueue s4 2 1000
	sleep 1
	base=$(client_backends)
	"$BIN/stress-producer" -d "$DSN" -q s4 -o "$d/p.hist" -p s4 -t "$(sc 20)" --ms-max 5 --pause-ms 5 >>"$d/producers.log" 2>&1 &
	p=$!; PIDS+=($p)
	local end=$(( $(date +%s) + $(sc 20) ))
	while [ "$(date +%s)" -lt "$end" ]; do
		local -a w=()
		start_worker "$d" "s4-a$cycles" -d "$DSN" -q s4 -l 2 -b 3; w+=($LAST_PID)
		start_worker "$d" "s4-b$cycles" -d "$DSN" -q s4 -l 2 -b 1 --claim-wait 2000; w+=($LAST_PID)
		start_jw "$d" "s4-j$cycles" -d "$DSN" -q s4 -c 2 -l 2 --grace=1 --poll-interval=1; w+=($LAST_PID)
		sleep "0.$(rand 2 9)"
		for i in "${w[@]}"; do
			if [ $((RANDOM % 2)) = 0 ]; then kill -TERM "$i" 2>/dev/null; else kill -9 "$i" 2>/dev/null; KILLED=$((KILLED + 1)); fi
		done
		for i in "${w[@]}"; do wait "$i" 2>/dev/null; done
		cycles=$((cycles + 1))
	done
	wait "$p"
	local -a w=()
	start_worker "$d" s4-drain1 -d "$DSN" -q s4 -l 2 -b 10 --pipeline --sweep-ms 1000; w+=($LAST_PID)
	start_worker "$d" s4-drain2 -d "$DSN" -q s4 -l 2 -b 10; w+=($LAST_PID)
	local rc=0
	wait_drained s4 120 || rc=1
	stop_pids TERM "${w[@]}"
	# no leaked backends: the count returns to the baseline
	for i in $(seq 1 30); do
		now=$(client_backends)
		mine=$(psqlc -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'stress-s4' AND pid <> pg_backend_pid()")
		[ "$now" -le "$base" ] && [ "$mine" = 0 ] && break; sleep 1
	done
	fig "S4: $cycles start/stop cycles (3 workers each, SIGTERM or SIGKILL), client backends baseline $base, after $now, backends of S4 left $mine (settled in ${i}s)"
	[ "$now" -le "$base" ] && [ "$mine" = 0 ] || { log "S4: leaked backends"; psqlc -c "SELECT pid, application_name, state, query FROM pg_stat_activity WHERE backend_type = 'client backend'"; rc=1; }
	check S4 "$d" s4 || rc=1
	return $rc
}

scn_S5() {	# priority and run_at order for one consumer
	local d rc=0 q b
	for q in s5a s5b; do
		d=$WORK/$q; mkdir -p "$d"
		mkqueue "$q" 60 5
		b=1; [ "$q" = s5b ] && b=4
		"$BIN/stress-producer" -d "$DSN" -q "$q" -o "$d/p.hist" -p "$q" -n "$(sc 300)" --prio-range 3 --delay-max 3 --ms-max 0 >>"$d/producers.log" 2>&1 || return 1
		start_worker "$d" "$q-w" -d "$DSN" -q "$q" -l 60 -b "$b" --idle-exit 5 --ms-cap 0
		wait "$LAST_PID"
		wait_drained "$q" 30 || rc=1
		check "S5/batch$b" "$d" "$q" --order || rc=1
	done
	return $rc
}

# P1 (partitioned workers): the S1 load without kills; at a quarter of the
# run a stress-worker (single or pipelined completes) that holds a claimed
# job, and the jobq-worker (its process group, handlers too), are stopped
# with SIGSTOP for three leases, then continued.  Their jobs come back
# after the lease and run again elsewhere; their late completes must be
# refused (stale), nothing lost.  The
# jobq-worker registers with a 2 s timeout: the registry prunes it while it
# is stopped, and it registers again after SIGCONT (its log says so).
P1_STOPPED=0
P1_HELD=()
p1_stop_holding() {	# p1_stop_holding DIR: SIGSTOP the stress-workers 0 and 1 while they hold a job
	local dir=$1 k try last
	P1_HELD=()
	for try in $(seq 1 100); do
		for k in 0 1; do
			kill -STOP "${wp[$k]}" 2>/dev/null
			# (the history is line-buffered: with the worker stopped its last line is final)
			last=$(tail -n 1 "$dir/w-$q-w$k.hist" 2>/dev/null | cut -c1)
			if [ "$last" = C ]; then P1_HELD+=("${wp[$k]}"); else kill -CONT "${wp[$k]}" 2>/dev/null; fi
		done
		[ ${#P1_HELD[@]} -gt 0 ] && return 0
		sleep 0.02
	done
	return 1
}
p1_hook() {	# LOAD_HOOK: DIR ELAPSED DURATION
	local dir=$1 t=$2 dur=$3
	if [ "$P1_STOPPED" = 0 ] && [ "$t" -ge $(( dur / 4 )) ] && p1_stop_holding "$dir"; then
		kill -STOP -- "-${wp[3]}" 2>/dev/null
		P1_STOPPED=$(date +%s)
		echo "SIGSTOP at ${t}s: ${P1_HELD[*]} (holding a claimed job) and group ${wp[3]}" >>"$dir/partition"
	elif [ "$P1_STOPPED" -gt 1 ] && [ $(( $(date +%s) - P1_STOPPED )) -ge $(( 3 * ${LEASE:-3} )) ]; then
		kill -CONT "${P1_HELD[@]}" 2>/dev/null; kill -CONT -- "-${wp[3]}" 2>/dev/null
		echo "SIGCONT after $(( $(date +%s) - P1_STOPPED ))s" >>"$dir/partition"
		P1_STOPPED=1
	fi
}
scn_P1() {
	local d=$WORK/p1 rc=0 pruned; mkdir -p "$d"
	mkqueue p1 3 1000
	P1_STOPPED=0
	LOAD_HOOK=p1_hook JWFLAGS="--worker-timeout=2" load "$d" p1 "$(sc 25)" 0
	[ "$P1_STOPPED" = 1 ] || { log "P1: the workers were not stopped and continued"; rc=1; }
	drain_and_stop p1 90 || rc=1
	pruned=$(grep -c 'registering again' "$d"/jw-*.log 2>/dev/null | awk -F: '{s += $NF} END {print s + 0}')
	fig "P1: SIGSTOP of a stress-worker and a jobq-worker for $(( 3 * ${LEASE:-3} )) s, then SIGCONT; jobq-worker pruned from the registry and registered again: $pruned"
	[ "$pruned" -ge 1 ] || { log "P1: the jobq-worker did not register again after its prune"; rc=1; }
	check P1 "$d" p1 --expect-stale || rc=1
	return $rc
}

scn_F3() {	# immediate shutdown and postmaster SIGKILL under S1 load
	local d=$WORK/f3; mkdir -p "$d"
	mkqueue f3 3 1000
	local dur=$(sc 30)
	(
		sleep $((dur / 4))
		crash_immediate "$d"
		sleep $((dur / 3))
		pm=$(head -1 "$CDIR/data/postmaster.pid")
		echo "kill -9 postmaster $pm" >>"$d/crashes"
		kill -9 "$pm"
		sleep 2
		pg_restart_wait || echo "restart failed" >>"$d/crashes"
	) &
	local crasher=$!; PIDS+=($crasher)
	LOAD_KILLS=0
	load "$d" f3 "$dur" 1
	wait "$crasher"
	local n; n=$(grep -c '^pg_ctl\|^kill' "$d/crashes")
	RESTARTS=$(( ${RESTARTS:-0} + n ))
	grep -q "restart failed" "$d/crashes" && { log "F3: restart failed"; return 1; }
	drain_and_stop f3 120 || return 1
	fig "F3: server crashes $n (pg_ctl -m immediate, SIGKILL of the postmaster), workers killed $LOAD_KILLS; synchronous_commit=$(psqlc -c 'SHOW synchronous_commit')"
	check F3 "$d" f3
}

scn_F8() {	# statement_timeout, pg_cancel_backend, idle_in_transaction_session_timeout
	local d=$WORK/f8 rc=0; mkdir -p "$d"
	mkqueue f8 3 1000
	mkqueue f8i 60 5
	# 1. a client claims in an open transaction and stalls: cut, claim rolled back
	local id st
	id=$(psqlc -c "SELECT jobq_enqueue('f8i', '{\"uid\":\"f8i-1\"}')")
	psql "$DSN" -XAtq >"$d/iit.out" 2>&1 <<SQL
SET idle_in_transaction_session_timeout = '1s';
BEGIN;
SELECT id, attempt FROM jobq_claim('f8i', lease => '60 s');
SELECT pg_sleep(0);
\! sleep 3
SELECT 'still alive';
SQL
	st=$(psqlc -c "SELECT state || ' attempt=' || attempt FROM jobq_job($id)")
	local again; again=$(psqlc -c "SELECT count(*) FROM jobq_claim('f8i', lease => '5 s')")
	if grep -q "still alive" "$d/iit.out" || [ "${st%% *}" != ready ] || [ "$again" != 1 ]; then
		log "F8: idle-in-transaction claim not rolled back: after the cut: $st, re-claim got $again job(s)"; cat "$d/iit.out"; rc=1
	fi
	fig "F8: claim in a stalled transaction cut by idle_in_transaction_session_timeout: job $st afterwards, claimable again at once ($again)"
	# 2. S1 load with statement_timeout on every worker and a canceller
	local cdsn="$DSN application_name=stress-f8 options='-c statement_timeout=25'"
	local dur=$(sc 20)
	psql "$DSN" -XAtq -c "DO \$\$ DECLARE n int := 0; k int; t timestamptz := clock_timestamp() + interval '$dur s';
	  BEGIN WHILE clock_timestamp() < t LOOP
	    PERFORM pg_stat_clear_snapshot();
	    SELECT count(*) INTO k FROM (SELECT pg_cancel_backend(pid) FROM pg_stat_activity
	      WHERE pid <> pg_backend_pid() AND state = 'active'
	        AND (application_name IN ('stress-f8', 'stress-f8-sweep') OR backend_type ILIKE '%jobq%')) x;
	    n := n + k; PERFORM pg_sleep(0.01 + random() * 0.04); END LOOP;
	    RAISE NOTICE 'cancelled %', n; END \$\$" >"$d/cancel.out" 2>&1 &
	local canceller=$!; PIDS+=($canceller)
	# sweeps with a 1-20 ms statement_timeout, back to back, while workers run
	{ for i in $(seq 1 $((dur * 40))); do echo "SET statement_timeout = $((RANDOM % 20 + 1)); SELECT * FROM jobq_sweep('f8', 10);"; done; } |
		psql "$DSN application_name=stress-f8-sweep" -XAtq >"$d/sweep.out" 2>&1 &
	local sweeper=$!; PIDS+=($sweeper)
	CONN=$cdsn load "$d" f8 "$dur" 0
	wait "$canceller" "$sweeper"
	drain_and_stop f8 90 || rc=1
	fig "F8: $(grep -o 'cancelled [0-9]*' "$d/cancel.out") backends, statement_timeout=25ms on every worker ($(cat "$d"/*.hist | grep -c 57014) recorded calls answered 57014), $((dur * 40)) sweeps with statement_timeout=1-20ms of which $(grep -c 'canceling statement' "$d/sweep.out") were cut"
	check F8 "$d" f8 || rc=1
	return $rc
}

scn_T1() {	# worker clocks skewed by an hour: same behaviour
	local d=$WORK/t1 rc=0 skew; mkdir -p "$d"
	[ -n "$FAKELIB" ] || { log "T1: libfaketime not installed (apt-get install faketime)"; return 1; }
	skew=$(( $(fake +1h date +%s) - $(date +%s) ))
	mkqueue t1 20 1000
	LEASE=20 FAKE_A=+1h FAKE_B=-1h load "$d" t1 "$(sc 15)" 0
	drain_and_stop t1 90 || rc=1
	check T1 "$d" t1 || rc=1
	local stale dup
	stale=$(psqlc -c "SELECT stale_acks FROM jobq_stats('t1')")
	dup=$(sed -n 's/.*duplicates=\([0-9]*\).*/\1/p' "$d/check.out")
	fig "T1: stress-workers at +1h, jobq-workers at -1h (libfaketime, measured skew ${skew}s): duplicates $dup, stale acks $stale (both must be 0)"
	[ "$skew" -ge 3500 ] || { log "T1: faketime had no effect"; rc=1; }
	[ "$stale" = 0 ] && [ "$dup" = 0 ] || rc=1
	return $rc
}

scn_T3() {	# claim and sweep agree on a lease at its exact boundary
	mkqueue t3 1 1000
	local out
	out=$("$BIN/stress-t3" "$DSN" t3 "$(sc 25)" 2>&1)
	local rc=$?
	fig "$(echo "$out" | tail -1)"
	[ $rc = 0 ] || echo "$out" | head -20
	return $rc
}

scn_O3() {	# 100+ concurrent producers, NOTIFY on and off
	local d=$WORK/o3 rc=0 q procs=${O3_PROCS:-120} per; mkdir -p "$d"
	per=$(sc 15)
	for q in o3on o3off; do
		local notify=true; [ $q = o3off ] && notify=false
		mkqueue $q 60 5 $notify
		"$BIN/stress-listen" "$DSN" "jobq.$q" >"$d/$q.listen" 2>&1 &
		local l=$!; PIDS+=($l)
		sleep 0.5
		local t0 t1
		t0=$(date +%s%N)
		"$BIN/stress-producer" -d "$DSN" -q $q -o "$d/$q.hist" -p $q -n "$per" --procs "$procs" >>"$d/producers.log" 2>&1 || rc=1
		t1=$(date +%s%N)
		# plus 10 transactions of 50 jobs each: one notification per transaction
		"$BIN/stress-producer" -d "$DSN" -q $q -o "$d/$q-b.hist" -p "$q-b" -n 500 -b 50 >>"$d/producers.log" 2>&1 || rc=1
		sleep 1
		kill -TERM $l; wait $l
		local notes ok ms
		notes=$(sed -n 's/notifications //p' "$d/$q.listen")
		ok=$(cat "$d/$q.hist".* | grep -c ' ok ')
		ms=$(( (t1 - t0) / 1000000 ))
		fig "O3: notify=$notify: $procs producers, $ok single-job commits in $ms ms ($(( ok * 1000 / (ms > 0 ? ms : 1) )) commits/s) + 10 commits of 50 jobs; notifications received $notes ($(awk -v n="$notes" -v t=$((ok + 10)) 'BEGIN {printf "%.2f", n / t}') per transaction)"
		if [ $notify = false ] && [ "$notes" != 0 ]; then log "O3: notifications with notify off"; rc=1; fi
		if [ $notify = true ] && [ "${notes:-0}" -gt $((ok + 10)) ]; then log "O3: more notifications than transactions"; rc=1; fi
		psqlc -c "SELECT jobq_drop_queue('$q', true)" >/dev/null
	done
	return $rc
}

pgb_start() {	# pgb_start MODE
	local dir=$WORK/pgb
	mkdir -p "$dir"
	cat >"$dir/pgbouncer.ini" <<INI
[databases]
postgres = host=$CDIR/sock port=$PORT dbname=postgres user=postgres
[pgbouncer]
listen_addr =
listen_port = $PGB_PORT
unix_socket_dir = $dir
auth_type = trust
auth_file = $dir/userlist.txt
pool_mode = $1
max_client_conn = 400
default_pool_size = $([ "$1" = session ] && echo 60 || echo 6)
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
ignore_startup_parameters = extra_float_digits
INI
	echo '"postgres" ""' >"$dir/userlist.txt"
	[ "$(id -u)" = 0 ] && chown -R postgres "$dir"
	PGB_PIDFILE=$dir/pgbouncer.pid
	as_pg pgbouncer -d -q "$dir/pgbouncer.ini" || return 1
	local i; for i in $(seq 1 50); do [ -S "$dir/.s.PGSQL.$PGB_PORT" ] && return 0; sleep 0.1; done
	return 1
}
pgb_stop() {
	[ -f "$PGB_PIDFILE" ] && kill "$(cat "$PGB_PIDFILE")" 2>/dev/null
	local i; for i in $(seq 1 50); do [ -f "$PGB_PIDFILE" ] || break; sleep 0.1; done
	return 0
}

scn_O4() {	# the S1 run through PgBouncer: transaction mode (no LISTEN), session mode (LISTEN)
	local rc=0 mode q
	command -v pgbouncer >/dev/null || { log "O4: pgbouncer not installed"; return 1; }
	for mode in transaction session; do
		q=o4${mode:0:1}
		pgb_start $mode || { log "O4: pgbouncer did not start"; cat "$WORK/pgb/pgbouncer.log"; return 1; }
		mkqueue $q 3 1000
		local cdsn="host=$WORK/pgb port=$PGB_PORT user=postgres dbname=postgres"
		if [ $mode = transaction ]; then
			CONN=$cdsn PFLAGS=--pooler WFLAGS=--pooler JWFLAGS=--no-listen load "$WORK/$q" $q "$(sc 15)" 1
		else
			CONN=$cdsn load "$WORK/$q" $q "$(sc 15)" 1
		fi
		drain_and_stop $q 90 || rc=1
		fig "O4: PgBouncer $mode mode: workers killed $LOAD_KILLS"
		pgb_stop
		check "O4/$mode" "$WORK/$q" $q || rc=1
	done
	return $rc
}

scn_FUZZ() {	# every libjobq argument fuzzed under ASan/UBSan; the database unchanged
	local d=$WORK/fuzz rc=0 a b F; mkdir -p "$d"
	psqlc -c "CREATE DATABASE fuzz" >/dev/null
	F="${DSN/dbname=postgres/dbname=fuzz}"
	psql "$F" -XAtq -v ON_ERROR_STOP=1 -c "CREATE EXTENSION jobq" -c "SELECT jobq_create_queue('fz')" \
		-c "SELECT jobq_enqueue('fz', '{\"a\": 1}') FROM generate_series(1, 5)" >/dev/null || return 1
	snap() { psql "$F" -XAtc "SELECT md5(string_agg(t, '|' ORDER BY t)) FROM (SELECT q::text t FROM jobq.queues q
	         UNION ALL SELECT j::text FROM jobq.jobs j UNION ALL SELECT h::text FROM jobq.history h) x"; }
	a=$(snap)
	local seed=$RANDOM
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		"$BIN/stress-fuzz" "$F" "$(sc 6000)" "$seed" >"$d/fuzz.out" 2>&1 || { rc=1; tail -40 "$d/fuzz.out"; }
	b=$(snap)
	[ "$a" = "$b" ] || { log "FUZZ: the database changed"; rc=1; }
	fig "$(grep '^FUZZ' "$d/fuzz.out" || echo "FUZZ: crashed (seed $seed)") seed $seed; database checksum before $a after $b"
	return $rc
}

# the groups and limits scenario (G1)
. "$S/groups.sh"

# ---------------------------------------------------------------------------
# FL: random flow graphs under kill -9 (issue 18; stress-flows, checker-flows.c)
# ---------------------------------------------------------------------------
fl_producers() {	# LOAD_PRODUCERS of FL: two producers of random flow graphs
	local dir=$1 q=$2 dur=$3 conn=$4 k
	for k in a b; do
		"$BIN/stress-flows" -d "$conn" -q "$q" -o "$dir/f$k.hist" -p "$q-$k" -t "$dur" \
			--pause-ms 15 --ms-max 10 --die-pct 4 --cancel-pct 8 --old-pct 10 >>"$dir/producers.log" 2>&1 &
		pp+=($!); PIDS+=($!)
	done
}
# fl_mutant DIR NAME EXPECTED AWK: the checker, run on the real history with
# the dump rewritten by AWK (which reads the W lines first, then the dump, and
# may add history lines), must fail naming EXPECTED
fl_mutant() {
	local d=$1 name=$2 expected=$3 prog=$4 m=$1/mutant-$2
	mkdir -p "$m"
	awk -v dump="$d/db.dump" "$prog" "$d"/f*.hist "$d/db.dump" >"$m/db.dump"
	cmp -s "$d/db.dump" "$m/db.dump" && { echo "FL self-test $name: nothing to mutate"; return 1; }
	"$BIN/stress-check" --label "FL-mutant-$name" "$d"/*.hist* "$d/deps.dump" "$m/db.dump" >"$m/check.out" 2>"$m/check.err"
	if [ $? = 1 ] && grep -q "VIOLATION $expected " "$m/check.err"; then
		echo "$name: caught ($(grep -c "VIOLATION $expected " "$m/check.err") $expected)"
		return 0
	fi
	echo "FL self-test $name: NOT caught"; cat "$m/check.out" "$m/check.err"
	return 1
}
fl_selftest() {	# DIR: the flow rules fail on mutated real histories
	local d=$1 out rc=0 o
	# W child parent; B id uid state attempt token claimed finished ...
	local head='FILENAME != dump { if ($1 == "W") par[$2] = par[$2] " " $3; next }
		{ st[$3] = $4; fin[$3] = $8; line[FNR] = $0; n = FNR }'
	# a completed child's run (a jobq-worker handler start) 1 ms before a dependency finished
	o=$(fl_mutant "$d" early-start started-before-dependency "$head"'
		END { for (i = 1; i <= n; i++) { split(line[i], f, " ")
		        if (!done && f[4] == "completed" && par[f[3]] != "") {
		          split(par[f[3]], p, " ")
		          if (st[p[1]] == "completed") { print "S", f[3], f[2], 1, fin[p[1]] - 1000; done = 1 } }
		        print line[i] } }') || rc=1
	out="$o"
	# a job left waiting although all its dependencies completed
	o=$(fl_mutant "$d" left-waiting flow-not-ended "$head"'
		END { for (i = 1; i <= n; i++) { split(line[i], f, " ")
		        if (!done && f[4] == "completed" && par[f[3]] != "") { f[4] = "waiting"; done = 1
		          s = f[1]; for (k = 2; k <= 11; k++) s = s " " f[k]; line[i] = s }
		        print line[i] } }') || rc=1
	out="$out; $o"
	# a dependency that ended dead reported completed: its cancel/wait children are wrong
	o=$(fl_mutant "$d" dead-as-completed flow-wrong-state "$head"'
		END { for (i = 1; i <= n; i++) { split(line[i], f, " ")
		        if (!done && (f[4] == "dead" || f[4] == "cancelled")) { f[4] = "completed"; done = 1
		          s = f[1]; for (k = 2; k <= 11; k++) s = s " " f[k]; line[i] = s }
		        print line[i] } }') || rc=1
	out="$out; $o"
	# every satisfied edge listed pending in jobq.deps
	mkdir -p "$d/mutant-edges"
	sed 's/ satisfied$/ pending/' "$d/deps.dump" >"$d/mutant-edges/deps.dump"
	"$BIN/stress-check" --label FL-mutant-edges "$d"/*.hist* "$d/db.dump" "$d/mutant-edges/deps.dump" \
		>"$d/mutant-edges/check.out" 2>"$d/mutant-edges/check.err"
	if [ $? = 1 ] && grep -q "VIOLATION edge-state " "$d/mutant-edges/check.err"; then
		out="$out; pending-edges: caught ($(sed -n 's/.*edge-state=\([0-9]*\).*/\1/p' "$d/mutant-edges/check.out") edge-state)"
	else
		out="$out; pending-edges: NOT caught"; rc=1
	fi
	fig "FL self-test (mutated real histories): $out"
	return $rc
}
fl_sleeper() {	# LOAD_PRODUCERS of FL's retry phase: no producer, DURATION of kills
	sleep "$3" & pp+=($!); PIDS+=($!)
}
fl_deps_dump() {	# DIR: jobq.deps as Q lines
	psqlc -c "COPY (SELECT 'Q', child, parent, on_failure, state FROM jobq.deps) TO STDOUT WITH (DELIMITER ' ')" >"$1/deps.dump"
}
# FL's retry phase (by default; STRESS_FL_RETRY=0 skips it, about 10 s of
# the short configuration): every dead job retried with its
# dependents (Y lines), then run again under kills by workers that no longer
# fail die=1 jobs; the checker again
fl_retry_phase() {	# DIR
	local d=$1 rc=0
	psqlc -c "COPY (SELECT 'Y', payload->>'uid', CASE WHEN jobq_retry(id, true) THEN 'ok' ELSE 'no' END,
	             (extract(epoch FROM clock_timestamp()) * 1e6)::bigint
	           FROM (SELECT id, payload FROM jobq.history WHERE queue = 'fl' AND state = 'dead' ORDER BY id) x)
	         TO STDOUT WITH (DELIMITER ' ')" >"$d/retry.hist" || return 1
	export STRESS_NO_DIE=1
	LOAD_PRODUCERS=fl_sleeper WFLAGS=--claim-clock load "$d" fl "$(sc 10)" 1
	drain_and_stop fl 90 || rc=1
	unset STRESS_NO_DIE
	fl_deps_dump "$d" || return 1
	fig "FL retry phase: $(grep -c ' ok ' "$d/retry.hist") dead jobs retried with dependents, workers killed (SIGKILL) $LOAD_KILLS"
	check FL/retry "$d" fl "$d/deps.dump" || rc=1
	return $rc
}
scn_FL() {
	local d=$WORK/fl rc=0; mkdir -p "$d"
	mkqueue fl 3 1000
	LOAD_KILLS=0
	local dur=$(sc 15) crasher=""
	# the long configuration (or STRESS_FL_CRASH=1): a server crash halfway
	if [ $LONG = 1 ] || [ -n "${STRESS_FL_CRASH:-}" ]; then
		( sleep $((dur / 2)); crash_immediate "$d" ) &
		crasher=$!; PIDS+=($crasher)
	fi
	LOAD_PRODUCERS=fl_producers WFLAGS=--claim-clock load "$d" fl "$dur" 1
	if [ -n "$crasher" ]; then
		wait "$crasher"
		RESTARTS=$(( ${RESTARTS:-0} + 1 ))
		grep -q "restart failed" "$d/crashes" && { log "FL: restart failed"; return 1; }
		fig "FL: server crash (pg_ctl -m immediate) at $((dur / 2)) s"
	fi
	drain_and_stop fl 90 || rc=1
	fl_deps_dump "$d" || return 1
	fig "FL: workers killed (SIGKILL) $LOAD_KILLS; $(sed -n 's/^stress-flows //p' "$d/producers.log" | tr '\n' ';')"
	check FL "$d" fl "$d/deps.dump" || rc=1
	fl_selftest "$d" || rc=1
	if [ "${STRESS_FL_RETRY:-1}" != 0 ]; then fl_retry_phase "$d" || rc=1; fi
	return $rc
}

# ---------------------------------------------------------------------------
ALL="S1 S3 S4 S5 P1 F3 F8 T1 T3 O3 O4 FUZZ"
ALL="$ALL FL"
ALL="$ALL G1"
want() { [ -z "$ONLY" ] || [[ ",$ONLY," == *",$1,"* ]]; }
run_scn() {
	local name=$1 t0 rc
	want "$name" || return 0
	log "=== $name"
	t0=$(date +%s)
	"scn_$name"
	rc=$?
	if [ $rc = 0 ]; then
		PASSED=$((PASSED + 1)); log "--- $name passed ($(( $(date +%s) - t0 )) s)"
	else
		FAILED=$((FAILED + 1)); FAILED_NAMES="$FAILED_NAMES $name"
		log "--- $name FAILED ($(( $(date +%s) - t0 )) s)"
	fi
}

log "stress suite: scale $SCALE (long=$LONG), work directory $WORK"
if ! build; then echo "build failed"; echo "0 passed, 1 failed"; exit 1; fi
if ! start_cluster; then echo "cluster failed to start"; echo "0 passed, 1 failed"; exit 1; fi
BASELINE_BACKENDS=$(client_backends)
for s in $ALL; do
	declare -F "scn_$s" >/dev/null && run_scn "$s"
done

echo
echo "=== figures (scale $SCALE, $(( $(date +%s) - T_START )) s)"
cat "$FIG"
awk -v k="$KILLED" -v r="${RESTARTS:-0}" '
	function get(name,   m) { return match($0, name "=[0-9]+") ? substr($0, RSTART + length(name) + 1, RLENGTH - length(name) - 1) + 0 : 0 }
	/ enqueued=/ { e += get("enqueued"); l += get("lost"); u += get("unexpected"); d += get("duplicates");
	               dl += get("after-lease-expiry"); dj += get("jobq-worker-new-attempt"); dx += get("unexplained") }
	END { printf "total: jobs enqueued %d, workers killed %d, server restarts %d, lost %d, unexpected %d, duplicates %d (after lease expiry %d, jobq-worker re-runs with a new attempt %d, unexplained %d)\n", e, k, r, l, u, d, dl, dj, dx }' "$FIG"
[ -n "$FAILED_NAMES" ] && echo "failed:$FAILED_NAMES"
echo "$PASSED passed, $FAILED failed"
[ $FAILED = 0 ]
