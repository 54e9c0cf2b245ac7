"""jobq_handler: run a Python function as a persistent jobq-worker handler.

    # handler.py
    import jobq_handler

    def send_mail(job):
        # job: {"id", "queue", "attempt", "max_attempts", "payload"},
        # and "checkpoint" when an earlier attempt stored one
        deliver(job["payload"])
        return {"sent": True}                 # completed, with this result

    jobq_handler.run(send_mail)               # or run(fn, jobs=8): 8 at a time

    $ jobq-worker -q mails -c 8 --persistent=2 -- python3 handler.py

The function's return value (anything json.dumps takes) is the job's
result.  raise jobq_handler.Retry("why", delay=30) to try again later (after
delay seconds, or the queue's backoff without one), jobq_handler.Permanent
("why") to fail for good (the job goes to dead),
jobq_handler.RateLimited("429", retry_after=30) when the upstream asks to
slow down (back after 30 s, the attempt not counted); any other exception fails
the attempt (retried while attempts are left) with its traceback as the
error.  The function runs in `jobs` threads (one by default).  Standard
library only.  The line protocol: doc/jobq-worker.md, "Persistent handlers".
"""
import collections
import json
import os
import sys
import threading
import time
import traceback

__all__ = ["run", "Retry", "Permanent", "RateLimited", "checkpoint"]

# one write at a time on stdout: answers, and checkpoints from any thread
_STDOUT_LOCK = threading.Lock()


def checkpoint(job, state):
    """Store how far `job` got (anything json.dumps takes, at most 256 kB):
    its next attempt, after a crash or a retry, finds it in
    job["checkpoint"] and resumes there (doc/flows.md, "Checkpoints").
    Written at once; checkpoint per step, not per item."""
    line = (json.dumps({"id": job["id"], "checkpoint": state}, ensure_ascii=False,
                       separators=(",", ":")) + "\n").encode()
    with _STDOUT_LOCK:
        _write_all(1, line)


class Retry(Exception):
    """Fail this attempt; run the job again after delay seconds (or the queue's backoff)."""

    def __init__(self, error="", delay=None):
        super().__init__(error)
        self.delay = delay


class Permanent(Exception):
    """Fail the job for good: it goes to dead, whatever attempts are left."""


class RateLimited(Exception):
    """The upstream said "too many requests": run the job again after
    retry_after seconds (or 60) without counting the attempt, and hold the
    queue's (or the job's group's) rate that long."""

    def __init__(self, error="", retry_after=None):
        super().__init__(error)
        self.retry_after = retry_after


def _answer(job_id, fn, job):
    try:
        result = fn(job)
        return {"id": job_id, "status": "completed", "result": result}
    except Retry as e:
        a = {"id": job_id, "status": "retry", "error": str(e) or "retry"}
        if e.delay is not None:
            a["delay"] = e.delay
        return a
    except Permanent as e:
        return {"id": job_id, "status": "failed", "error": str(e) or "failed"}
    except RateLimited as e:
        a = {"id": job_id, "status": "rate_limited", "error": str(e) or "rate limited"}
        if e.retry_after is not None:
            a["retry_after"] = e.retry_after
        return a
    except Exception:                       # noqa: BLE001 - any failure is the job's
        return {"id": job_id, "status": "retry", "error": traceback.format_exc()}


def _dumps(obj):
    try:
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError) as e:
        return json.dumps({"id": obj["id"], "status": "failed",
                           "error": "result is not JSON: %s" % e})


def _write_all(fd, data):
    while data:
        data = data[os.write(fd, data):]


# A job is "fast" below this (seconds, a moving average); it is also how long
# a line or an answer waits at most behind a job that turned out slow.
FAST = 0.001


class _Server:
    """The state the `jobs` threads share; every field under `cv`.

    Slow jobs (the usual case: a function that waits on I/O) run in parallel,
    each thread taking the next line as soon as there is one, each answer
    written at once.  Fast jobs (under FAST on average) would pay more for
    waking threads than for running: one thread runs the lines read together
    one after the other and writes their answers in one write when it runs
    out of lines, while one idle thread watches: if FAST passes with no job
    started or finished, it writes the answers waiting and takes the next
    line itself, so nothing waits behind a job that turned out slow.
    """

    def __init__(self, fn, jobs):
        self.fn = fn
        self.jobs = jobs
        self.cv = threading.Condition()
        self.wlock = _STDOUT_LOCK           # one write at a time on stdout
        self.lines = collections.deque()
        self.rest = b""
        self.eof = False
        self.reading = False
        self.pending = []                   # answers not written yet
        self.events = 0                     # jobs started and finished
        self.avg = None                     # the jobs' time, moving average
        self.watching = False
        self.running = 0                    # threads inside fn

    def fast(self):
        return self.avg is not None and self.avg < FAST

    def flush(self):
        """Write the answers waiting (cv held)."""
        if self.pending:
            data = ("\n".join(self.pending) + "\n").encode()
            self.pending = []
            with self.wlock:
                _write_all(1, data)

    def read(self):
        """Read more lines (cv held, released while reading)."""
        self.reading = True
        self.cv.release()
        try:
            chunk = os.read(0, 65536)
        finally:
            self.cv.acquire()
            self.reading = False
        if not chunk:
            self.eof = True
            self.cv.notify_all()
            return
        parts = (self.rest + chunk).split(b"\n")
        self.rest = parts.pop()
        self.lines.extend(p for p in parts if p)
        # slow jobs: a thread per line; fast ones: one watcher
        self.cv.notify(len(self.lines) if not self.fast() else 1)

    def next_line(self, active):
        """The next line, or None at the end; active: this thread just ran
        a job or read (cv held)."""
        while True:
            if self.lines and (active or not self.fast()):
                if self.running + 1 >= self.jobs:
                    # no thread left idle to watch this job: what is
                    # answered goes now, not after it (jobs=1 always)
                    self.flush()
                self.events += 1
                return self.lines.popleft()
            if self.lines or (self.pending and self.running > 0):
                if self.watching:
                    self.cv.wait()
                    continue
                # fast jobs: watch the running one
                seen = self.events
                self.watching = True
                self.cv.wait(FAST)
                self.watching = False
                if self.events == seen:
                    self.flush()
                    active = True       # no progress: take a line ourselves
                continue
            self.flush()                # nothing to run: the answers go now
            if self.eof:
                return None
            if not self.reading:
                self.read()
                active = True
                continue
            self.cv.wait()

    def serve(self):
        try:
            active = False
            while True:
                with self.cv:
                    line = self.next_line(active)
                    if line is None:
                        return
                    self.running += 1
                job = json.loads(line)
                t = time.monotonic()
                answer = _dumps(_answer(job["id"], self.fn, job))
                t = time.monotonic() - t
                with self.cv:
                    self.running -= 1
                    self.events += 1
                    self.avg = t if self.avg is None else 0.9 * self.avg + 0.1 * t
                    self.pending.append(answer)
                    if not self.fast():
                        self.flush()
                active = True
        except BaseException:           # noqa: BLE001 - a bad line, SystemExit in fn
            # as an uncaught exception would end a one-thread loop: the
            # worker fails this process's jobs and starts it again
            traceback.print_exc()
            sys.stderr.flush()
            os._exit(1)


def run(fn, jobs=1):
    """Serve jobs from jobq-worker on stdin until it closes it; returns then.

    The function runs in `jobs` threads; see _Server for how lines and
    answers are shared out among them (a no-op function costs about 10 us
    of CPU a job: a thread per line and a write per answer cost 30 to 40).
    """
    if not isinstance(jobs, int) or not 1 <= jobs <= 1000:
        raise ValueError("jobs must be an integer from 1 to 1000")
    sys.stdout.flush()
    server = _Server(fn, jobs)
    _write_all(1, (_dumps({"ready": True, "jobs": jobs}) + "\n").encode())
    threads = [threading.Thread(target=server.serve, name="jobq-%d" % i, daemon=True)
               for i in range(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with server.cv:
        server.flush()
