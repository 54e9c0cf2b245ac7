#!/usr/bin/env python3
"""bench/plot-metrics.py: draw what jobq_metrics recorded of a run as an SVG.

    bench/plot-metrics.py -d CONNINFO [--queue Q] [--since TS] [--until TS]
                          [--bucket 1min] [--flush] [--output bench/metrics.svg]
                          [--title TEXT] [--markdown]

Reads jobq_metrics(queue, since, until, bucket) through psql (all queues
when --queue is not given: their counters and histograms are added, and the
percentiles computed from the sums, as the server does), and writes one SVG
of two panels sharing the time axis:

  - throughput: enqueued, completed, and retried + dead + lease_expired
    per second of each bucket;
  - latency: p50 and p95 of wait (ready to first claim) and run (claim to
    finish), in ms, on a log scale.

Buckets the server reports incomplete (a restart, no live ring, the bucket
not over yet) are shaded, so a gap in the data never reads as a quiet
period. --since defaults to the first stored minute, --until to now, the
bucket to the smallest whole number of minutes giving at most 240 points.
--flush calls jobq_metrics_flush() first, so that the last finished minutes
are stored. --markdown prints, after writing the SVG, a Markdown block for
bench/RESULTS.md: the image link and a table of totals and percentiles.

After a stress run kept with `stress/run.sh --keep` (see stress/README.md,
"Plotting a run"), or any bench run against a preloaded server:

    bench/plot-metrics.py -d "host=/tmp/jobq-stress/sock port=5600 dbname=postgres" \\
        --flush --output bench/stress-metrics.svg --markdown >> bench/RESULTS.md

No third-party module: the SVG is written here. The histogram layout is
read from client/include/jobq-contract.h (JOBQ_HIST_EDGES_MS), the one
place it is defined.
"""
import argparse
import math
import os
import re
import subprocess
import sys
import xml.sax.saxutils

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONTRACT = os.path.join(TOP, 'client', 'include', 'jobq-contract.h')
MAX_POINTS = 240


def contract():
    """(counter names, histogram edges in ms) from jobq-contract.h."""
    with open(CONTRACT, encoding='utf-8') as f:
        text = f.read()
    counters = re.search(r'#define JOBQ_METRIC_COUNTERS\(X\)((?:.*\\\n)*.*)', text).group(1)
    edges = re.search(r'#define JOBQ_HIST_EDGES_MS\(X\)((?:.*\\\n)*.*)', text).group(1)
    return (re.findall(r'X\((\w+)\)', counters),
            [int(v) for v in re.findall(r'X\((\d+)\)', edges)])


def psql(dsn, sql, *args):
    cmd = ['psql', dsn, '-XAtq', '-v', 'ON_ERROR_STOP=1', '-F', '\t']
    for i, a in enumerate(args):
        cmd += ['-v', 'a%d=%s' % (i + 1, a)]
    p = subprocess.run(cmd, input=sql, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if p.returncode != 0:
        sys.exit('plot-metrics: psql failed: ' + p.stderr.strip())
    return [line.split('\t') for line in p.stdout.split('\n') if line]


def quantile(hist, edges, q):
    """The q-quantile in ms, interpolated in its bucket as jobq_metrics does."""
    total = sum(hist)
    if total == 0:
        return None
    rank, below = q * total, 0
    for i, n in enumerate(hist):
        lower = 0 if i == 0 else edges[i - 1]
        if n > 0 and below + n >= rank:
            if i == len(hist) - 1:
                return float(lower)
            return lower + (edges[i] - lower) * (rank - below) / n
        below += n
    return float(edges[-1])


def ints(array_text):
    return [int(v) for v in array_text.strip('{}').split(',') if v]


def fetch(args, names, edges):
    if args.flush:
        psql(args.dsn, 'SELECT jobq_metrics_flush();')
    if args.since is None:
        row = psql(args.dsn, "SELECT coalesce(min(start), now() - interval '1 hour') FROM jobq.metrics_minute;")
        args.since = row[0][0]
    if args.until is None:
        args.until = psql(args.dsn, 'SELECT now();')[0][0]
    span = float(psql(args.dsn, "SELECT extract(epoch FROM :'a2'::timestamptz - :'a1'::timestamptz);",
                      args.since, args.until)[0][0])
    if args.bucket is None:
        minutes = max(1, math.ceil(span / 60 / MAX_POINTS))
        args.bucket = '%d minute%s' % (minutes, '' if minutes == 1 else 's')
    rows = psql(args.dsn, """
        SELECT extract(epoch FROM bucket), extract(epoch FROM :'a4'::interval), queue,
               counters, wait_hist, run_hist, complete
        FROM jobq_metrics(NULLIF(:'a1', ''), :'a2'::timestamptz, :'a3'::timestamptz, :'a4'::interval)
        ORDER BY bucket, queue;""", args.queue or '', args.since, args.until, args.bucket)
    points = {}
    for t, width, _queue, counters, wait, run, complete in rows:
        p = points.setdefault(float(t), {'width': float(width), 'c': [0] * len(names),
                                         'wait': [0] * (len(edges) + 1),
                                         'run': [0] * (len(edges) + 1), 'complete': True})
        for i, v in enumerate(ints(counters)[:len(names)]):
            p['c'][i] += v
        for key, text in (('wait', wait), ('run', run)):
            for i, v in enumerate(ints(text)[:len(edges) + 1]):
                p[key][i] += v
        p['complete'] = p['complete'] and complete == 't'
    return [dict(t=t, **points[t]) for t in sorted(points)]


# ----------------------------------------------------------------------
# SVG
# ----------------------------------------------------------------------

W, H = 900, 560
LEFT, RIGHT, TOP_M, GAP, BOTTOM = 70, 150, 40, 50, 40
PANEL_H = (H - TOP_M - GAP - BOTTOM) // 2
COLORS = ['#1f77b4', '#2ca02c', '#d62728', '#ff7f0e', '#9467bd', '#8c564b']


def esc(s):
    return xml.sax.saxutils.escape(str(s))


def nice_max(v):
    if v <= 0:
        return 1
    p = 10 ** math.floor(math.log10(v))
    for m in (1, 2, 2.5, 5, 10):
        if m * p >= v:
            return m * p
    return 10 * p


def clock(t):
    import time
    return time.strftime('%H:%M', time.gmtime(t))


def panel(out, y0, points, series, log, ylabel, t0, t1):
    """One panel: series is [(label, [value or None per point])]."""
    x = lambda t: LEFT + (t - t0) / max(t1 - t0, 1) * (W - LEFT - RIGHT)
    values = [v for _, vs in series for v in vs if v is not None and (v > 0 or not log)]
    if log:
        lo = 10 ** math.floor(math.log10(min(values))) if values else 1
        hi = 10 ** math.ceil(math.log10(max(values))) if values else 10
        hi = max(hi, lo * 10)
        y = lambda v: y0 + PANEL_H - (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)) * PANEL_H
        ticks = [10 ** e for e in range(int(math.log10(lo)), int(math.log10(hi)) + 1)]
    else:
        hi = nice_max(max(values) if values else 1)
        y = lambda v: y0 + PANEL_H - v / hi * PANEL_H
        ticks = [hi * i / 4 for i in range(5)]
    # incomplete buckets, shaded
    for p in points:
        if not p['complete']:
            out.append('<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="#eeeeee"/>'
                       % (x(p['t']), y0, max(x(p['t'] + p['width']) - x(p['t']), 1), PANEL_H))
    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#888"/>'
               % (LEFT, y0, W - LEFT - RIGHT, PANEL_H))
    for v in ticks:
        label = ('%g' % v) if v < 1e6 else '%.0e' % v
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>'
                   % (LEFT, W - RIGHT, y(v), y(v)))
        out.append('<text x="%d" y="%.1f" text-anchor="end" font-size="11">%s</text>'
                   % (LEFT - 5, y(v) + 4, esc(label)))
    out.append('<text x="15" y="%d" font-size="12" transform="rotate(-90 15 %d)" '
               'text-anchor="middle">%s</text>' % (y0 + PANEL_H // 2, y0 + PANEL_H // 2, esc(ylabel)))
    for k, (label, vs) in enumerate(series):
        color = COLORS[k % len(COLORS)]
        segs, cur = [], []
        for p, v in zip(points, vs):
            if v is None or (log and v <= 0):
                if cur:
                    segs.append(cur)
                cur = []
                continue
            cur.append('%.1f,%.1f' % (x(p['t'] + p['width'] / 2), y(v)))
        if cur:
            segs.append(cur)
        for s in segs:
            if len(s) == 1:
                cx, cy = s[0].split(',')
                out.append('<circle cx="%s" cy="%s" r="2" fill="%s"/>' % (cx, cy, color))
            else:
                out.append('<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>'
                           % (color, ' '.join(s)))
        ly = y0 + 15 + 16 * k
        out.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2"/>'
                   % (W - RIGHT + 10, W - RIGHT + 30, ly - 4, ly - 4, color))
        out.append('<text x="%d" y="%d" font-size="11">%s</text>' % (W - RIGHT + 35, ly, esc(label)))
    return x


def svg(points, names, edges, title):
    idx = {n: i for i, n in enumerate(names)}
    t0 = points[0]['t'] if points else 0
    t1 = points[-1]['t'] + points[-1]['width'] if points else 60
    rate = lambda p, *ks: sum(p['c'][idx[k]] for k in ks) / p['width']
    thr = [('enqueued/s', [rate(p, 'enqueued') for p in points]),
           ('completed/s', [rate(p, 'completed') for p in points]),
           ('failed/s', [rate(p, 'retried', 'dead', 'lease_expired') for p in points])]
    lat = [('wait p50', [quantile(p['wait'], edges, 0.5) for p in points]),
           ('wait p95', [quantile(p['wait'], edges, 0.95) for p in points]),
           ('run p50', [quantile(p['run'], edges, 0.5) for p in points]),
           ('run p95', [quantile(p['run'], edges, 0.95) for p in points])]
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" viewBox="0 0 %d %d">' % (W, H, W, H),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="22" font-size="14" font-weight="bold">%s</text>' % (LEFT, esc(title))]
    x = panel(out, TOP_M, points, thr, False, 'jobs per second', t0, t1)
    panel(out, TOP_M + PANEL_H + GAP, points, lat, True, 'latency (ms, log)', t0, t1)
    ybase = TOP_M + 2 * PANEL_H + GAP
    n = 6
    for i in range(n + 1):
        t = t0 + (t1 - t0) * i / n
        out.append('<text x="%.1f" y="%d" text-anchor="middle" font-size="11">%s</text>'
                   % (x(t), ybase + 16, esc(clock(t))))
    out.append('<text x="%d" y="%d" font-size="11" fill="#666">UTC; shaded: incomplete buckets'
               '</text>' % (W - RIGHT - 200, ybase + 32))
    out.append('</svg>')
    return '\n'.join(out) + '\n'


def markdown(points, names, edges, args, image):
    total = [sum(p['c'][i] for p in points) for i in range(len(names))]
    wait = [sum(p['wait'][i] for p in points) for i in range(len(edges) + 1)]
    run = [sum(p['run'][i] for p in points) for i in range(len(edges) + 1)]
    fmt = lambda v: '-' if v is None else '%.1f' % v
    incomplete = sum(1 for p in points if not p['complete'])
    lines = ['', '![jobq_metrics of the run](%s)' % image, '',
             'From %s to %s, buckets of %s%s; %d of %d buckets incomplete.'
             % (args.since, args.until, args.bucket,
                ', queue %s' % args.queue if args.queue else ', all queues', incomplete, len(points)),
             '', '| ' + ' | '.join(names) + ' |', '|' + '---:|' * len(names),
             '| ' + ' | '.join(str(v) for v in total) + ' |', '',
             '| | p50 ms | p95 ms | p99 ms |', '|---|---:|---:|---:|',
             '| wait | %s | %s | %s |' % tuple(fmt(quantile(wait, edges, q)) for q in (0.5, 0.95, 0.99)),
             '| run | %s | %s | %s |' % tuple(fmt(quantile(run, edges, q)) for q in (0.5, 0.95, 0.99)), '']
    return '\n'.join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('-d', '--dsn', required=True, help='libpq connection string')
    ap.add_argument('--queue', help='one queue (default: all, added up)')
    ap.add_argument('--since', help='start (timestamptz; default: the first stored minute)')
    ap.add_argument('--until', help='end (timestamptz; default: now)')
    ap.add_argument('--bucket', help='bucket (interval, whole minutes; default: <= 240 points)')
    ap.add_argument('--flush', action='store_true', help='call jobq_metrics_flush() first')
    ap.add_argument('--output', default=os.path.join(TOP, 'bench', 'metrics.svg'))
    ap.add_argument('--title', default='jobq_metrics')
    ap.add_argument('--markdown', action='store_true', help='print a block for bench/RESULTS.md')
    args = ap.parse_args()
    names, edges = contract()
    points = fetch(args, names, edges)
    with open(args.output, 'w', encoding='utf-8') as f:
        f.write(svg(points, names, edges, args.title))
    print('plot-metrics: %d buckets of %s to %s' % (len(points), args.bucket, args.output),
          file=sys.stderr)
    if args.markdown:
        print(markdown(points, names, edges, args, os.path.basename(args.output)))


if __name__ == '__main__':
    main()
