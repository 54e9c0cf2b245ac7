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
error.  With jobs > 1 the function runs in that many threads.  Standard
library only.  The line protocol: doc/jobq-worker.md, "Persistent handlers".
"""
import json
import sys
import threading
import traceback
from concurrent.futures import ThreadPoolExecutor

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


def run(fn, jobs=1):
    """Serve jobs from jobq-worker on stdin until it closes it; returns then."""
    if not isinstance(jobs, int) or not 1 <= jobs <= 1000:
        raise ValueError("jobs must be an integer from 1 to 1000")
    out = sys.stdout
    lock = threading.Lock()

    def write(obj):
        try:
            line = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
        except (TypeError, ValueError) as e:
            line = json.dumps({"id": obj["id"], "status": "failed",
                               "error": "result is not JSON: %s" % e})
        with lock:
            out.write(line + "\n")
            out.flush()

    write({"ready": True, "jobs": jobs})
    pool = ThreadPoolExecutor(max_workers=jobs) if jobs > 1 else None
    for line in sys.stdin:
        job = json.loads(line)
        if pool is None:
            write(_answer(job["id"], fn, job))
        else:
            pool.submit(lambda j=job: write(_answer(j["id"], fn, j)))
    if pool is not None:
        pool.shutdown(wait=True)
