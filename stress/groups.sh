# stress/groups.sh: the groups and limits scenario G1 (issue 19), sourced
# by run.sh (it uses run.sh's helpers: psqlc, start_worker, start_jw, dump,
# check, fig, ...).  README.md "G1" says what it does and proves.

G1_LEASE=3
# STRESS_G1_SLOW=1: a lease of 1 s and handlers of up to 0.6 s (g1f) and
# 1.4 s (g1u), so that leases end under running jobs: re-executions, stale
# completes, late starts (not in CI: about 2 minutes)
G1_MS_F=8 G1_MS_U=5
if [ "${STRESS_G1_SLOW:-0}" = 1 ]; then G1_LEASE=1 G1_MS_F=600 G1_MS_U=1400; fi
# the FIFO queue g1f (oldest group first) with the queue-wide limits, whose
# claims take the queue's lock one after the other: max_running 4, 120
# claims a second (burst 5); the limited queue g1l (group_limit 2, round
# robin between groups) with a group rate, 10 a second per group
# (burst 2), and max_running 6 without a queue rate: its claims run at
# once, each group kept by its row's lock, the queue by its slot rows
# (claim_slots.c)
G1_RATE=120/1/5
G1_GROUP_RATE=10/1/2
G1_MAX_RUNNING=4
G1_MAX_RUNNING_L=6

g1_queue() {	# g1_queue NAME SETTINGS...
	psqlc -c "SELECT jobq_create_queue('$1', lease => '$G1_LEASE s', max_attempts => 1000,
	            backoff_base => '0', backoff_cap => '0', completed_retention => '30 days',
	            dead_retention => '30 days', $2)" >/dev/null
}

# g1_group_dump QUEUE FILE: K <id> <uid> <group_key> <group_seq> for the checker
g1_group_dump() {
	psqlc -c "COPY (SELECT 'K', id, coalesce(payload->>'uid', '-'), coalesce(group_key, '-'),
	   coalesce(group_seq, -1)
	 FROM (SELECT id, payload, group_key, group_seq FROM jobq.jobs WHERE queue = '$1'
	       UNION ALL
	       SELECT id, payload, group_key, group_seq FROM jobq.history WHERE queue = '$1') x)
	 TO STDOUT WITH (DELIMITER ' ')" >"$2"
}

# g1_spawn DIR QUEUE KIND: one worker of five kinds (the S1 four and a
# blocking claim, which waits for a slot or the rate's next token); sets
# G1_PID.  The failing worker also answers G1_RL_PCT % of its jobs "rate
# limited" for 1 s (jobq_fail_rate_limited: the queue's or group's rate is
# held that long).  The
# stress-workers read the server clock once each claim answered
# (--claim-clock): a run starts then, not at the claim's own clock
G1_N=0
g1_spawn() {
	local dir=$1 q=$2 kind=$3 name=$2-w$G1_N
	G1_N=$((G1_N + 1))
	case $kind in
	0) start_worker "$dir" "$name" -d "$DSN" -q "$q" -l $G1_LEASE -b 1 --sweep-ms 1000 --claim-clock ;;
	1) start_worker "$dir" "$name" -d "$DSN" -q "$q" -l $G1_LEASE -b 3 --pipeline --claim-clock ;;
	2) start_worker "$dir" "$name" -d "$DSN" -q "$q" -l $G1_LEASE -b 2 --fail-pct 3 --claim-clock \
		--rate-limit-pct "${G1_RL_PCT:-0}" --rate-limit-s 1 ;;
	3) start_jw "$dir" "$name" -d "$DSN" -q "$q" -c 3 -l $G1_LEASE --sweep-interval=2 --poll-interval=1 ;;
	4) start_worker "$dir" "$name" -d "$DSN" -q "$q" -l $G1_LEASE -b 2 --claim-wait 1500 --claim-clock ;;
	esac
	G1_PID=$LAST_PID
}

# g1_reconciler DIR END: jobq_groups_reconcile of the queues every 0.1-0.4 s
# until END (epoch s), a new session each time (the server restarts
# meanwhile); every fix it reports is drift, which must never happen
g1_reconciler() {
	local q
	while [ "$(date +%s)" -lt "$2" ]; do
		for q in $G1_QUEUES; do
			psql "$DSN" -XAtq -c "SELECT 'FIX', * FROM jobq_groups_reconcile('$q', 1000)" >>"$1/reconcile.out" 2>>"$1/reconcile.err" &&
				echo ok >>"$1/reconcile.calls"
		done
		sleep "0.$(rand 1 4)"
	done
}

# g1_idle QUEUE: the groups of a drained queue hold nothing (no slot leaked by
# a killed worker or the crash): prints the groups that do, and their line rows
g1_idle() {
	psqlc -c "SELECT key || ': running ' || running || ' head ' || coalesce(head_id::text, '-') ||
	              ' blocked_by ' || coalesce(blocked_by::text, '-') || ' eligible ' || eligible
	          FROM jobq.groups WHERE queue = '$1'
	           AND (running <> 0 OR head_id IS NOT NULL OR blocked_by IS NOT NULL OR eligible)
	          UNION ALL
	          SELECT 'line row ' || key || ' ' || seq || ' ' || id FROM jobq.group_jobs WHERE queue = '$1'"
}

# g1_check LABEL DIR QUEUE GROUP-CHECK-OPTIONS...: stress-check, then the group rules
g1_check() {
	local label=$1 dir=$2 q=$3 rc=0; shift 3
	check "$label" "$dir" "$q" || rc=1
	g1_group_dump "$q" "$dir/db.groups" || return 1
	"$BIN/stress-group-check" --label "$label/groups" --lease $G1_LEASE "$@" \
		"$dir"/*.hist* "$dir"/*.ord* "$dir/db.dump" "$dir/db.groups" >"$dir/gcheck.out" 2>"$dir/gcheck.err" || rc=1
	head -25 "$dir/gcheck.err"
	fig "$(cat "$dir/gcheck.out")"
	return $rc
}

# g1_caught DIR RULE OPTIONS... FILES...: the checker must fail on a mutated
# history, by the rule named (its violation counter in the summary above 0)
g1_caught() {
	local dir=$1 rule=$2 out n; shift 2
	out=$("$BIN/stress-group-check" --label mutant --lease $G1_LEASE "$@" 2>/dev/null)
	n=$(echo "$out" | sed -n "s/.* $rule=\([0-9]*\).*/\1/p")
	echo "$rule=${n:-?}"
	[ "${n:-0}" -gt 0 ] && [[ $out == *FAIL ]]
}

# g1_mutate DIR OUT AWK: the group places (order files, group dump) of DIR rewritten
g1_mutate() {
	local x
	mkdir -p "$2"
	for x in "$1"/*.ord* "$1/db.groups"; do awk "$3" "$x" >"$2/$(basename "$x")"; done
}

# g1_fast DIR OUT: DIR's claim times (C lines, the dump's claimed_at) four
# times closer to the first
g1_fast() {
	local t0 x
	mkdir -p "$2"
	t0=$(cat "$1"/*.hist* | awk '$1 == "C" && (m == "" || $6 < m) { m = $6 } END { print m }')
	for x in "$1"/*.hist*; do
		awk -v t0="$t0" '$1 == "C" { $6 = t0 + int(($6 - t0) / 4) } { print }' "$x" >"$2/$(basename "$x")"
	done
	awk -v t0="$t0" '$1 == "B" && $7 > 0 { $7 = t0 + int(($7 - t0) / 4) } { print }' "$1/db.dump" >"$2/db.dump"
}

# g1_held DIR OUT RATE-OPTIONS: DIR's rate-limited fails held 30 s; must be
# caught by rate-hold (prints "none" when the run had no rate-limited fail)
g1_held() {
	local dir=$1 out=$2 x; shift 2
	if ! cat "$dir"/*.hist* | awk '$1 == "R" && NF == 9 && $6 == "ok" { n++ } END { exit n == 0 }'; then
		echo none
		return 0
	fi
	mkdir -p "$out"
	for x in "$dir"/*.hist*; do
		awk '$1 == "R" && NF == 9 { $9 = 30 } { print }' "$x" >"$out/$(basename "$x")"
	done
	g1_caught "$out" rate-hold "$@" "$out"/*.hist* "$dir/db.dump" "$dir"/*.ord* "$dir/db.groups"
}

# g1_mutations: the checker's rules can fail; each mutates the real history
g1_mutations() {
	local f=$1 l=$2 m=$WORK/g1/mut rc=0 r
	mkdir -p "$m"
	# 1. every job of the FIFO queue in one group: runs of different groups overlapped
	g1_mutate "$f" "$m/onegroup" '$1 == "Q" || ($1 == "K" && $4 != "-") { $4 = "k0" } { print }'
	r=$(g1_caught "$m" group-limit --fifo "$f"/*.hist* "$m/onegroup"/* "$f/db.dump") || rc=1
	G1_MUT="one group: $r"
	# 2. each FIFO group's line reversed: runs now start against group_seq
	g1_mutate "$f" "$m/reversed" '$1 == "Q" || ($1 == "K" && $4 != "-") { $5 = 1000000 - $5 } { print }'
	r=$(g1_caught "$m" fifo-order --fifo "$f"/*.hist* "$m/reversed"/* "$f/db.dump") || rc=1
	G1_MUT="$G1_MUT; reversed lines: $r"
	r=$(g1_caught "$m" commit-order --fifo --commit-order "$f"/*.hist* "$m/reversed"/* "$f/db.dump") || rc=1
	G1_MUT="$G1_MUT, $r"
	# 3. the claims four times closer together in time: the FIFO queue's rate, the groups' rates
	r=$(g1_fast "$f" "$m/f-fast" && g1_caught "$m" rate --rate $G1_RATE "$m/f-fast"/*.hist* "$m/f-fast/db.dump" "$f"/*.ord* "$f/db.groups") || rc=1
	G1_MUT="$G1_MUT; claims 4x faster: queue $r"
	r=$(g1_fast "$l" "$m/l-fast" && g1_caught "$m" rate --group-rate $G1_GROUP_RATE "$m/l-fast"/*.hist* "$m/l-fast/db.dump" "$l"/*.ord* "$l/db.groups") || rc=1
	G1_MUT="$G1_MUT, groups $r"
	# 4. each rate-limited fail holding for 30 s instead of 1 s (where one happened)
	r=$(g1_held "$f" "$m/f-held" --rate $G1_RATE) || rc=1
	G1_MUT="$G1_MUT; holds of 30 s: queue $r"
	r=$(g1_held "$l" "$m/l-held" --group-rate $G1_GROUP_RATE) || rc=1
	G1_MUT="$G1_MUT, groups $r"
	# 5. every claim of the FIFO queue recorded twice (two workers in each run)
	r=$(g1_caught "$m" max-running --max-running $G1_MAX_RUNNING "$f"/*.hist* "$f"/*.hist* "$f/db.dump" "$f"/*.ord* "$f/db.groups") || rc=1
	G1_MUT="$G1_MUT; every run twice: $r"
	return $rc
}

# the workers of each queue (kinds of g1_spawn), its directory and the
# share of its failing worker's jobs answered rate limited
declare -A G1_KINDS=([g1f]="0 1 2 3 4" [g1l]="0 1 2 3 4" [g1u]="0 1 3")
declare -A G1_RL=([g1f]=2 [g1l]=5 [g1u]=0)
declare -A G1_DIR G1_W
G1_QUEUES="g1f g1l g1u"

g1_respawn() {	# g1_respawn QUEUE KIND: (re)start that worker
	G1_RL_PCT=${G1_RL[$1]} g1_spawn "${G1_DIR[$1]}" "$1" "$2"
	G1_W[$1:$2]=$G1_PID
}

scn_G1() {	# groups and limits under kill -9 and pg_ctl -m immediate
	local d=$WORK/g1 f=$WORK/g1/fifo l=$WORK/g1/limit u=$WORK/g1/fifo-unlimited rc=0 dur i q k
	local -a kinds
	mkdir -p "$f" "$l" "$u"
	G1_DIR=([g1f]=$f [g1l]=$l [g1u]=$u)
	dur=$(sc 16)
	g1_queue g1f "group_mode => 'fifo', max_running => $G1_MAX_RUNNING,
	    rate => ${G1_RATE%%/*}, rate_per => '1 s', rate_burst => ${G1_RATE##*/}"
	g1_queue g1l "group_mode => 'limit', group_limit => 2, group_order => 'round_robin',
	    max_running => $G1_MAX_RUNNING_L,
	    group_rate => ${G1_GROUP_RATE%%/*}, group_rate_per => '1 s', group_rate_burst => ${G1_GROUP_RATE##*/}"
	g1_queue g1u "group_mode => 'fifo'"
	local -a pp=()
	"$BIN/stress-gproducer" -d "$DSN" -q g1f -o "$f/gp.hist" --order-out "$f/gp.ord" -p g1f -t "$dur" \
		--procs 3 --groups 8 --max-batch 4 --ms-max $G1_MS_F --hold-ms 20 --pause-ms 200 >>"$d/producers.log" 2>&1 &
	pp+=($!); PIDS+=($!)
	"$BIN/stress-gproducer" -d "$DSN" -q g1l -o "$l/gp.hist" --order-out "$l/gp.ord" -p g1l -t "$dur" \
		--procs 2 --groups 6 --max-batch 5 --ms-max 20 --hold-ms 20 --pause-ms 300 >>"$d/producers.log" 2>&1 &
	pp+=($!); PIDS+=($!)
	"$BIN/stress-gproducer" -d "$DSN" -q g1u -o "$u/gp.hist" --order-out "$u/gp.ord" -p g1u -t "$dur" \
		--procs 2 --groups 4 --max-batch 3 --ms-max $G1_MS_U --hold-ms 10 --pause-ms 300 >>"$d/producers.log" 2>&1 &
	pp+=($!); PIDS+=($!)
	for q in $G1_QUEUES; do
		for k in ${G1_KINDS[$q]}; do g1_respawn $q $k; done
	done
	# one immediate shutdown a third of the way in
	(
		sleep $((dur / 3))
		echo "pg_ctl -m immediate stop" >>"$d/crashes"
		as_pg "$(pg_config --bindir)/pg_ctl" -D "$CDIR/data" -m immediate -w stop >/dev/null 2>&1
		sleep 2
		pg_restart_wait || echo "restart failed" >>"$d/crashes"
	) &
	local crasher=$!; PIDS+=($crasher)
	local kills=0 end=$(( $(date +%s) + dur ))
	g1_reconciler "$d" "$end" &
	local reconciler=$!; PIDS+=($reconciler)
	while [ "$(date +%s)" -lt "$end" ]; do
		sleep "0.$(rand 5 9)"
		set -- $G1_QUEUES; shift $((RANDOM % $#)); q=$1
		kinds=(${G1_KINDS[$q]}); k=${kinds[$((RANDOM % ${#kinds[@]}))]}
		i=${G1_W[$q:$k]}
		if [ "$k" = 3 ]; then kill -9 -- "-$i" 2>/dev/null; else kill -9 "$i" 2>/dev/null; fi
		wait "$i" 2>/dev/null
		kills=$((kills + 1))
		g1_respawn $q $k
	done
	wait "${pp[@]}" "$crasher" "$reconciler"
	KILLED=$((KILLED + kills))
	RESTARTS=$(( ${RESTARTS:-0} + 1 ))
	grep -q "restart failed" "$d/crashes" && { log "G1: restart failed"; return 1; }
	for q in $G1_QUEUES; do wait_drained $q 90 || rc=1; done
	stop_pids TERM "${G1_W[@]}"
	# drained: every group idle, and a last reconcile finds nothing either
	local busy
	busy=$(for q in $G1_QUEUES; do g1_idle $q; done)
	[ -z "$busy" ] || { log "G1: groups not idle after the drain:"; echo "$busy" | head -20; rc=1; }
	for q in $G1_QUEUES; do psqlc -c "SELECT 'FIX', * FROM jobq_groups_reconcile('$q', 1000)" >>"$d/reconcile.out"; done
	local fixes calls
	fixes=$(grep -c '^FIX' "$d/reconcile.out" 2>/dev/null)
	calls=$(grep -c ok "$d/reconcile.calls" 2>/dev/null)
	[ "${fixes:-0}" = 0 ] || { log "G1: jobq_groups_reconcile fixed drift:"; head -20 "$d/reconcile.out"; rc=1; }
	fig "G1: jobq_groups_reconcile during the run and after it: $((${calls:-0} + 3)) calls, ${fixes:-0} fixes (must be 0); groups not idle after the drain: $(echo -n "$busy" | grep -c .)"
	fig "G1: $dur s, workers killed (SIGKILL) $kills, pg_ctl -m immediate 1; deadlocked enqueue transactions $(cat "$f"/gp.hist.* "$l"/gp.hist.* "$u"/gp.hist.* | grep -c ' fail - 40P01')"
	g1_check G1/fifo "$f" g1f --fifo --max-running $G1_MAX_RUNNING --rate $G1_RATE --commit-order || rc=1
	g1_check G1/limit "$l" g1l --group-limit 2 --group-rate $G1_GROUP_RATE --max-running $G1_MAX_RUNNING_L || rc=1
	g1_check G1/fifo-unlimited "$u" g1u --fifo --commit-order || rc=1
	G1_MUT=""
	g1_mutations "$f" "$l" || { log "G1: a mutated history was not caught"; rc=1; }
	fig "G1: mutated histories caught: $G1_MUT"
	return $rc
}
