#!/usr/bin/env python3
"""examples/python/consumer.py: claim jobs in batches of 10 and complete them
with psycopg2, until a claim finds nothing.

   python3 consumer.py QUEUE         (the connection from PGHOST, PGPORT, PGUSER, ...)

The connection is in autocommit mode.  psycopg2 otherwise opens a
transaction at the first statement and keeps it open: the claim would not
commit, other sessions would see the jobs as still ready once it rolled
back, and the open transaction would hold back vacuum for as long as the
work takes.  (Without autocommit, call conn.commit() right after the claim.)
Each job is completed with the token of its claim, passed back as it came.
"""
import sys

import psycopg2


def main():
    queue = sys.argv[1]
    conn = psycopg2.connect('')
    conn.autocommit = True
    completed = 0
    with conn.cursor() as cur:
        while True:
            cur.execute('SELECT id, token, payload FROM jobq_claim(%s, worker => %s, max_jobs => 10)',
                        (queue, 'python-consumer'))
            jobs = cur.fetchall()
            if not jobs:
                break
            for job_id, token, payload in jobs:
                # payload is a dict (psycopg2 reads jsonb as JSON); the work goes here
                cur.execute('SELECT jobq_complete(%s, %s)', (job_id, token))
                if cur.fetchone()[0]:
                    completed += 1
                # False: the token is stale (the lease ran out); nothing changed
    conn.close()
    print('completed %d' % completed)


if __name__ == '__main__':
    main()
