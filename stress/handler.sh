#!/bin/bash
# handler.sh: the jobq-worker handler of the stress suite.  Records its
# execution in $STRESS_HIST (one line at start, one at the end, appended
# with single writes), sleeps the payload's "ms", hangs forever when
# "hang" is 1, exits 65 (permanent failure) when "die" is 1 (unless
# STRESS_NO_DIE is set), and prints a JSON result.
#   S <uid> <job id> <attempt> <start_us>
#   J <uid> <job id> <attempt> <start_us> <end_us>
# Times are the worker host's clock (informational only: jobq-worker
# passes no token, so the checker fences these runs by attempt number).
IFS= read -r -d '' payload
uid=-; ms=0; hang=0
[[ $payload =~ \"uid\":\ *\"([^\"]+)\" ]] && uid=${BASH_REMATCH[1]}
[[ $payload =~ \"ms\":\ *([0-9]+) ]] && ms=${BASH_REMATCH[1]}
[[ $payload =~ \"hang\":\ *([0-9]+) ]] && hang=${BASH_REMATCH[1]}
start=${EPOCHREALTIME/./}
echo "S $uid $JOBQ_JOB_ID $JOBQ_ATTEMPT $start" >>"$STRESS_HIST"
if [ "$hang" = 1 ]; then
	exec sleep 100000
fi
if [ "$ms" -gt 0 ]; then
	sleep "$(printf '0.%03d' "$((ms > 999 ? 999 : ms))")"
fi
echo "J $uid $JOBQ_JOB_ID $JOBQ_ATTEMPT $start ${EPOCHREALTIME/./}" >>"$STRESS_HIST"
# payload die=1 (scenario FL): a permanent failure, the job is dead at once
# (not with STRESS_NO_DIE set: FL's retry phase)
[ -z "${STRESS_NO_DIE:-}" ] && [[ $payload =~ \"die\":\ *1 ]] && exit 65
printf '{"ok":1}'
