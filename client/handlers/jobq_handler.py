"""jobq_handler: run a Python function as a persistent jobq-worker handler.

    # handler.py
    import jobq_handler

    def send_mail(job):
        # job: {"id", "queue", "attempt", "max_attempts", "payload"}
        deliver(job["payload"])
        return {"sent": True}                 # completed, with this result

    jobq_handler.run(send_mail)               # or run(fn, jobs=8): 8 at a time

    $ jobq-worker -q mails -c 8 --persistent=2 -- python3 handler.py

The function's return value (anything json.dumps takes) is the job's
result.  raise jobq_handler.Retry("why", delay=30) to try again later (after
delay seconds, or the queue's backoff without one), jobq_handler.Permanent
("why") to fail for good (the job goes to dead); any other exception fails
the attempt (retried while attempts are left) with its traceback as the
error.  The function runs in `jobs` threads (one by default).  Standard
library only.  The line protocol: doc/jobq-worker.md, "Persistent handlers".
"""
import collections
import json
import os
import queue
import sys
import threading
import traceback

__all__ = ["run", "Retry", "Permanent"]


class Retry(Exception):
    """Fail this attempt; run the job again after delay seconds (or the queue's backoff)."""

    def __init__(self, error="", delay=None):
        super().__init__(error)
        self.delay = delay


class Permanent(Exception):
    """Fail the job for good: it goes to dead, whatever attempts are left."""


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


def run(fn, jobs=1):
    """Serve jobs from jobq-worker on stdin until it closes it; returns then.

    How it goes fast (a no-op function: about 5 us a job, where a thread
    pool with one write per answer took 30): each of the `jobs` threads
    takes the next line itself (from lines read 64 kB at a time), runs fn
    and hands its answer to one writer thread, which writes every answer
    waiting at that moment in one write.  Under load the answers of many
    jobs go out together; an answer that is alone goes out at once.
    """
    if not isinstance(jobs, int) or not 1 <= jobs <= 1000:
        raise ValueError("jobs must be an integer from 1 to 1000")
    sys.stdout.flush()
    answers = queue.SimpleQueue()
    lines = collections.deque()
    take = threading.Lock()             # taking a line, and reading more
    state = {"eof": False, "rest": b""}

    def next_line():
        with take:
            while not lines:
                if state["eof"]:
                    return None
                chunk = os.read(0, 65536)
                if not chunk:
                    state["eof"] = True
                    return None
                parts = (state["rest"] + chunk).split(b"\n")
                state["rest"] = parts.pop()
                lines.extend(p for p in parts if p)
            return lines.popleft()

    def serve():
        try:
            while True:
                line = next_line()
                if line is None:
                    return
                job = json.loads(line)
                answers.put(_dumps(_answer(job["id"], fn, job)))
        except BaseException:           # noqa: BLE001 - a bad line, SystemExit in fn
            # as an uncaught exception would end a one-thread loop: the
            # worker fails this process's jobs and starts it again
            traceback.print_exc()
            sys.stderr.flush()
            os._exit(1)

    def writer():
        while True:
            a = answers.get()
            if a is None:
                return
            batch = [a]
            while True:
                try:
                    a = answers.get_nowait()
                except queue.Empty:
                    break
                if a is None:
                    _write_all(1, ("\n".join(batch) + "\n").encode())
                    return
                batch.append(a)
            _write_all(1, ("\n".join(batch) + "\n").encode())

    _write_all(1, (_dumps({"ready": True, "jobs": jobs}) + "\n").encode())
    out = threading.Thread(target=writer, name="jobq-writer", daemon=True)
    out.start()
    servers = [threading.Thread(target=serve, name="jobq-%d" % i, daemon=True)
               for i in range(jobs)]
    for t in servers:
        t.start()
    for t in servers:
        t.join()
    answers.put(None)
    out.join()
