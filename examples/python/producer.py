#!/usr/bin/env python3
"""examples/python/producer.py: enqueue N jobs, each {"n": i}, with psycopg2.

   python3 producer.py QUEUE N       (the connection from PGHOST, PGPORT, PGUSER, ...)

psycopg2 opens a transaction at the first statement: the N jobs exist once
the `with conn` block commits, all or none.  That is what an application
wants for an enqueue (put it in the transaction that writes the data the
job belongs to), and what a consumer must avoid for its claims.
"""
import json
import sys

import psycopg2


def main():
    queue, n = sys.argv[1], int(sys.argv[2])
    conn = psycopg2.connect('')
    with conn:                      # commits at the end of the block
        with conn.cursor() as cur:
            for i in range(1, n + 1):
                # the payload as JSON text; psycopg2.extras.Json does the same
                cur.execute('SELECT jobq_enqueue(%s, %s)', (queue, json.dumps({'n': i})))
    conn.close()
    print('enqueued %d' % n)


if __name__ == '__main__':
    main()
