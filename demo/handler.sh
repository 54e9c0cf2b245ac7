#!/bin/sh
# demo/handler.sh: the demo's job handler, run by jobq-worker once per job.
# Reads the payload on stdin; JOBQ_JOB_ID, JOBQ_QUEUE, JOBQ_ATTEMPT and
# JOBQ_MAX_ATTEMPTS are in the environment.
#   {"kind": "ok"}      succeed, print a JSON result
#   {"kind": "flaky"}   fail with exit 75 (retry later) on the first attempt
#   {"kind": "bad"}     exit 65: permanent failure, the job goes dead at once
#   {"kind": "poison"}  crash (SIGSEGV) on every attempt: dead after max attempts
payload=$(cat)
case $payload in
*'"flaky"'*)
	if [ "$JOBQ_ATTEMPT" -lt 2 ]; then echo "flaky: try again" >&2; exit 75; fi ;;
*'"bad"'*)
	echo "bad input, giving up" >&2; exit 65 ;;
*'"poison"'*)
	echo "poison job crashing on attempt $JOBQ_ATTEMPT" >&2; kill -SEGV $$ ;;
esac
printf '{"job": %s, "attempt": %s}\n' "$JOBQ_JOB_ID" "$JOBQ_ATTEMPT"
