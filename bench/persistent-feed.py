#!/usr/bin/env python3
"""bench/persistent-feed.py: the CPU a persistent handler spends per job, fed
as jobq-worker feeds it (doc/jobq-worker.md, "Persistent handlers"): a batch
of job lines in one write, wait for all their answers, a pause as long as a
round trip to the server, again.  No database.  Prints jobs/s and the
handler's CPU (user + system, its threads and children) per job; the start
of the handler's runtime is in it.

    bench/persistent-feed.py [-b 32] [-n 1000] [-p 0.5] -- HANDLER [ARG]...
    bench/persistent-feed.py -- python3 -c 'import sys; sys.path.insert(0, "client/handlers"); \
        import jobq_handler; jobq_handler.run(lambda job: None, jobs=32)'
"""
import argparse
import os
import resource
import subprocess
import time


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('-b', type=int, default=32, help='job lines per batch (default 32)')
    p.add_argument('-n', type=int, default=1000, help='batches (default 1000)')
    p.add_argument('-p', type=float, default=0.5, help='pause after each batch, ms (default 0.5)')
    p.add_argument('handler', nargs='+')
    a = p.parse_args()
    h = subprocess.Popen(a.handler, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    fd, buf = h.stdout.fileno(), b''

    def answers(n):
        nonlocal buf
        while buf.count(b'\n') < n:
            chunk = os.read(fd, 65536)
            if not chunk:
                raise SystemExit('the handler closed its stdout')
            buf += chunk
        for _ in range(n):
            buf = buf[buf.index(b'\n') + 1:]

    answers(1)                          # the ready line
    t0, jid = time.monotonic(), 0
    for _ in range(a.n):
        lines = []
        for _ in range(a.b):
            jid += 1
            lines.append('{"id":%d,"queue":"bench","attempt":1,"max_attempts":25,'
                         '"payload":{"n":%d,"to":"user@example.com"}}\n' % (jid, jid))
        os.write(h.stdin.fileno(), ''.join(lines).encode())
        answers(a.b)
        time.sleep(a.p / 1000)
    secs = time.monotonic() - t0
    h.stdin.close()
    h.wait()
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f'jobs={jid} rate={jid / secs:.0f}/s handler_cpu_us_per_job='
          f'{1e6 * (ru.ru_utime + ru.ru_stime) / jid:.1f}')


if __name__ == '__main__':
    main()
