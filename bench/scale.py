"""Scale benchmarks of bench/bench.py (issue 20, section 3): opt-in rows that
run only when --only names them, as they take minutes and disk.

  queues    1,000 queues with jobs in each against one queue: instructions
            per enqueue, single-job and batched cycle (callgrind, as the
            instr rows), claims across a set of 10 queues; timed pgbench
            loops; jobq-worker processes each on a set of 100 queues.
  backlog   drain rate out of a backlog of 10 M ready jobs (--backlog-max)
            against 10 k, with what changes with the size (buffers, index
            pages, plans); a soak over 2 M jobs with the live table's size
            over time.
  holdback  a session idle in transaction for 5 minutes under about 1,000
            jobs/s: dead rows, table size and claim p99 over time, and what
            jobq_health says meanwhile.

Each function takes the Bench of bench.py and records figures with it;
report() writes their sections.  Python 3 standard library only.
"""
import os
import re
import subprocess
import threading
import time

# Queue names of the queue rows: q0 .. q<n-1>; one queue is q0 alone
QUEUES_PAYLOAD = '{"to":"user@example.com","n":1}'

# Sizes per mode of bench.py
SCALE_MODES = {
    'smoke': dict(queues=50, queue_jobs=120, queue_set=10, queue_seconds=1, queue_reps=1,
                  queue_workers=2, queue_worker_jobs=20,
                  queue_instr=dict(enqueue=(20, 120), cycle1=(5, 25), cycle100=(1, 3)),
                  backlog_max=100000, backlog_drain=400, backlog_long=2000, backlog_reps=1, soak_jobs=20000,
                  soak_sample=1, hold_before=3, hold_seconds=10, hold_after=5, hold_rate=200,
                  hold_backlog=5000, hold_sample=1, hold_window=2),
    'quick': dict(queues=1000, queue_jobs=120, queue_set=10, queue_seconds=3, queue_reps=3,
                  queue_workers=10, queue_worker_jobs=10,
                  queue_instr=dict(enqueue=(100, 1000), cycle1=(10, 110), cycle100=(1, 11)),
                  backlog_max=1000000, backlog_drain=2000, backlog_long=20000, backlog_reps=3, soak_jobs=400000,
                  soak_sample=2, hold_before=10, hold_seconds=60, hold_after=20, hold_rate=1000,
                  hold_backlog=20000, hold_sample=2, hold_window=5),
    'full': dict(queues=1000, queue_jobs=120, queue_set=10, queue_seconds=10, queue_reps=3,
                 queue_workers=10, queue_worker_jobs=20,
                 queue_instr=dict(enqueue=(200, 2000), cycle1=(20, 220), cycle100=(2, 22)),
                 backlog_max=10000000, backlog_drain=5000, backlog_long=50000, backlog_reps=3, soak_jobs=2000000,
                 soak_sample=5, hold_before=30, hold_seconds=300, hold_after=60, hold_rate=1000,
                 hold_backlog=20000, hold_sample=5, hold_window=10),
}

# The instruction rows: (op, queues per claim, what one iteration does).
# One iteration of the enqueue row enqueues into queue i mod n; a cycle
# claims from the queue (or the k queues) after the last one's.
QUEUE_INSTR_OPS = [
    ('enqueue', 1, 'enqueue 1 job, one transaction'),
    ('enqueue_ref', 1, 'the same INSERT into the hand-written queue (bench_ref.jobs, its '
     'index also by queue first), for comparison'),
    ('cycle1', 1, 'claim 1 from one queue, commit; complete it, commit'),
    ('cycle100', 1, 'claim 100 from one queue, commit; complete the 100, commit'),
    ('cycle1', 10, 'claim 1 across 10 queues, commit; complete it, commit'),
    ('cycle100', 10, 'claim 100 across 10 queues, commit; complete the 100, commit'),
]
QUEUE_INSTR_BODY = {
    'enqueue': """
        SELECT jobq_enqueue(qs[1 + i % nq], '""" + QUEUES_PAYLOAD + """') INTO c;
        COMMIT;""",
    'enqueue_ref': """
        INSERT INTO bench_ref.jobs (queue, payload)
            VALUES (qs[1 + i % nq], '""" + QUEUES_PAYLOAD + """') RETURNING id INTO c;
        COMMIT;""",
    'cycle1': """
        SELECT id, token INTO r FROM jobq_claim(qs[1 + (i * k) % nq : (i * k) % nq + k], 'w', 1);
        IF NOT FOUND THEN RAISE EXCEPTION 'no ready job'; END IF;
        COMMIT;
        SELECT jobq_complete(r.id, r.token) INTO ok;
        IF NOT ok THEN RAISE EXCEPTION 'job % not completed', r.id; END IF;
        COMMIT;""",
    'cycle100': """
        SELECT array_agg(id), array_agg(token) INTO ids, tokens
            FROM jobq_claim(qs[1 + (i * k) % nq : (i * k) % nq + k], 'w', 100);
        IF cardinality(ids) IS DISTINCT FROM 100 THEN RAISE EXCEPTION 'short batch'; END IF;
        COMMIT;
        SELECT count(*) INTO c FROM jobq_complete_batch(ids, tokens);
        IF c <> 100 THEN RAISE EXCEPTION '% of 100 jobs completed', c; END IF;
        COMMIT;""",
}


def queue_instr_sql(op):
    """The procedure of an instruction row: n iterations over nq queues, k
    per claim.  qs repeats the names so that a set of k may wrap around.
    Before the loop, warm (the warm-up call only) enqueues one job into
    every queue: a long-running worker has every queue's settings cached."""
    return (f'CREATE OR REPLACE PROCEDURE bench_queues_{op}(first integer, n integer, nq integer, '
            'k integer, warm boolean) LANGUAGE plpgsql AS $$\n'
            'DECLARE r record; ids bigint[]; tokens uuid[]; c bigint; ok boolean;\n'
            "    qs text[] := ARRAY(SELECT 'q' || (g % nq) FROM generate_series(0, nq + k - 1) g);\n"
            'BEGIN\n'
            '    IF warm THEN\n'
            '        FOR i IN 1..nq LOOP\n'
            f"            SELECT jobq_enqueue(qs[i], '{QUEUES_PAYLOAD}') INTO c;\n"
            '        END LOOP;\n'
            '        COMMIT;\n'
            '    END IF;\n'
            '    FOR i IN first..first + n - 1 LOOP' + QUEUE_INSTR_BODY[op] + '\n    END LOOP;\nEND $$')


def queues_fill_sql(nq, per_queue):
    """per_queue ready jobs in each of q0 .. q<nq-1>, enqueued in rounds of
    batches of 10 per queue, so that the queues' jobs interleave in the heap
    as they would from producers writing to every queue at once (one queue:
    batches of 10,000)."""
    out = []
    step = 10 if nq > 1 else 10000
    rounds, rest = divmod(per_queue, step)
    for size in [step] * rounds + ([rest] if rest else []):
        out.append(f"SELECT count(*) FROM generate_series(0, {nq - 1}) k, "
                   f"LATERAL jobq_enqueue_batch('q' || k, ARRAY(SELECT "
                   f"'{QUEUES_PAYLOAD}'::jsonb FROM generate_series(1, {size})))")
    return out


def queues_reset_sql():
    """Empty tables and a checkpoint before the fill, none after it: a page
    is then logged whole (a full-page write) by the fill, not again by the
    first claim that touches it, as in a running system where a page is
    logged whole once per checkpoint cycle, whoever touches it first.  A
    checkpoint after the fill, as the other rows take, would charge one
    full-page write to nearly every claim from 1,000 queues (their jobs are
    spread over the heap and the claim index) and to few from one."""
    return ['TRUNCATE jobq.jobs, jobq.history, jobq.stale_acks, bench_ref.jobs', 'CHECKPOINT']


def queues_setup(b, nq):
    """Queues q0 .. q<nq-1>, retention 0, once."""
    have = int(b.c.sql("SELECT count(*) FROM jobq_queues() WHERE queue ~ '^q[0-9]+$'"))
    if have < nq:
        b.c.sql(f"SELECT count(jobq_create_queue('q' || g, completed_retention => '0')) "
                f"FROM generate_series(0, {nq - 1}) g "
                f"WHERE NOT EXISTS (SELECT FROM jobq_queues() WHERE queue = 'q' || g)")


def bench_queues(b):
    """1,000 queues against one: instructions per operation, timed pgbench
    loops, jobq-worker processes on sets of 100 queues."""
    m = b.sm
    nq = m['queues']
    b.log(f'== queues ({nq:,} queues with jobs in each, against one queue)')
    queues_setup(b, nq)
    b.guard('queues instructions', queues_instructions, b, nq)
    for rep in range(m['queue_reps']):
        for n, k in ((1, 1), (nq, 1), (nq, m['queue_set'])):
            b.guard(f'queues enqueue nq={n} k={k}', queues_timed, b, 'enqueue', n, k)
            b.guard(f'queues soak nq={n} k={k}', queues_timed, b, 'soak', n, k)
    if b.has_worker and os.access(b.persistent_handler, os.X_OK):
        for rep in range(m['queue_reps']):
            for n in (1, nq):
                b.guard(f'queues workers nq={n}', queues_workers, b, n)
    else:
        b.notes.append('queues: jobq-worker rows not measured (client/jobq-worker or '
                       'bench/persistent_handler missing)')


def queues_instructions(b, nq):
    if not b.has_valgrind():
        raise b.Error('valgrind is not installed: no instruction counts of the queue rows')
    m = b.sm
    b.c.sqls(*(queue_instr_sql(op) for op in QUEUE_INSTR_BODY))
    for op, k, _ in QUEUE_INSTR_OPS:
        for n in ((1, nq) if k == 1 else (nq,)):
            small, large = m['queue_instr'][op.split('_')[0]]
            irs = [queues_callgrind(b, op, n, k, loops) for loops in (small, large)]
            b.record(f'queues/instr/{op}/k{k}/q{n}', (irs[1] - irs[0]) / (large - small),
                     'instructions', small=small, large=large, ir_small=irs[0], ir_large=irs[1])


def queues_callgrind(b, op, nq, k, loops):
    """Ir of a single-user backend running the warm-up call (one enqueue per
    queue, 6 iterations), then loops iterations, over queue_jobs ready jobs
    per queue of the queues' set: the same total for one queue.  The
    measured loop starts where the warm-up ended, so that no queue it takes
    from has given jobs to the warm-up (a batch of 100 needs 100)."""
    per_queue = b.sm['queue_jobs']
    total_nq = b.sm['queues']
    fill = queues_fill_sql(nq, per_queue * total_nq // nq)
    if op == 'enqueue_ref':
        # the same rows in the hand-written queue, interleaved as the fill does
        fill = [f"INSERT INTO bench_ref.jobs (queue, payload) SELECT 'q' || ((g / 10) % {nq}), "
                f"'{QUEUES_PAYLOAD}' FROM generate_series(0, {per_queue * total_nq - 1}) g"]
    b.c.sqls(*queues_reset_sql(), *fill, 'VACUUM ANALYZE jobq.jobs, bench_ref.jobs')
    # the measured loop goes on from the queues where the warm-up stopped
    script = (f'CALL bench_queues_{op}(0, 6, {nq}, {k}, true);\n'
              f'CALL bench_queues_{op}(6, {loops}, {nq}, {k}, false);\n')
    b.c.stop()
    try:
        # NB: the stop is a checkpoint; see queues_reset_sql
        return b.c.callgrind(script, label=f'queues-{op}-k{k}-q{nq}-{loops}',
                             settings={'full_page_writes': 'off'})
    finally:
        b.c.start()


def queues_timed(b, what, nq, k):
    """pgbench at 4 clients for queue_seconds: enqueue into a random queue
    of nq, or enqueue + claim + complete (jobq_soak_queues.sql: the claim
    names that queue and the k - 1 after it), over queue_jobs ready jobs per
    queue (one queue: the same total)."""
    m = b.sm
    per_queue = m['queue_jobs'] * m['queues'] // nq
    b.c.sqls(*queues_reset_sql(), *queues_fill_sql(nq, per_queue),
             'VACUUM ANALYZE jobq.jobs')
    script = 'jobq_enqueue_queues.sql' if what == 'enqueue' else 'jobq_soak_queues.sql'
    (tps, _), cpu, wal = b.measure(lambda: b.pgbench(
        script, 4, T=m['queue_seconds'], extra=['-D', f'nq={nq}', '-D', f'k={k}']))
    jobs = tps * m['queue_seconds']
    b.record(f'queues/{what}/k{k}/q{nq}', tps, 'jobs/s', cpu_ms_per_1k=1e6 * cpu / max(jobs, 1),
             wal_bytes_per_job=wal / max(jobs, 1))


def queues_workers(b, nq):
    """queue_workers jobq-worker processes, --persistent with the C no-op
    handler, --burst, each claiming across its own set of nq / workers
    queues (at most 100 a worker), until every queue is empty; one queue:
    every worker on q0.  queue_worker_jobs jobs per queue of the full set
    (one queue: the same total)."""
    m = b.sm
    nw = m['queue_workers']
    total = m['queue_worker_jobs'] * m['queues']
    b.c.sqls(*queues_reset_sql(), *queues_fill_sql(nq, total // nq),
             'VACUUM ANALYZE jobq.jobs')
    per = max(1, nq // nw)
    if per > 100:
        raise b.Error(f'{nq} queues need more than 100 per worker with {nw} workers')
    procs = []
    slots = 32

    def run():
        t0 = time.monotonic()
        for w in range(nw):
            qargs = []
            for i in range(per):
                qargs += ['-q', f'q{(w * per + i) % nq}']
            procs.append(subprocess.Popen(
                [b.worker, '-d', b.c.conninfo] + qargs +
                ['-c', str(slots), '--persistent=1', '--burst', '--sweep-interval=0',
                 '--log-file', os.path.join(b.out, f'queues-worker-{w}.log'), '--',
                 b.persistent_handler, str(slots)],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
        for p in procs:
            p.wait()
        return time.monotonic() - t0

    secs, cpu, wal = b.measure(run)
    bad = [p.stderr.read().decode()[-300:] for p in procs if p.returncode != 0]
    if bad:
        raise b.Error(f'jobq-worker failed: {bad[0]}')
    left = b.count('jobq')
    if left:
        raise b.Error(f'{nw} jobq-worker --burst left {left} jobs')
    b.record(f'queues/workers/q{nq}', total / secs, 'jobs/s', workers=nw, queues_per_worker=per,
             cpu_ms_per_1k=1e6 * cpu / total, wal_bytes_per_job=wal / total)


def queues_report(w, b):
    R = b.results
    m = b.sm
    nq, k = m['queues'], m['queue_set']
    if not any(key.startswith('queues/') for key in R):
        return
    best = b.best
    w(f'## {nq:,} queues against one\n')
    w(f'Queues q0 .. q{nq - 1} (retention 0) with {m["queue_jobs"]} ready jobs each, enqueued in '
      f'rounds of 10 per queue so that their jobs interleave in the heap; "one queue" holds the '
      f'same {m["queue_jobs"] * nq:,} jobs in q0 alone. `bench/run.sh --only queues` runs it.\n')
    w('**Instructions per operation** (callgrind, a single-user backend, as the instr rows; '
      'each run starts with one enqueue into every queue, so that the settings of every queue '
      'are cached as in a long-running worker, and the figure is the difference of two loop '
      'counts). One iteration enqueues into queue i mod n, or claims from the next queue (or '
      f'the next {k}) in turn and completes what it claimed.\n')
    w(f'| operation (one iteration) | one queue | {nq:,} queues | ratio | target | |')
    w('|---|---:|---:|---:|---|---|')
    for op, kk, label in QUEUE_INSTR_OPS:
        one = best(R, f'queues/instr/{op}/k1/q1', False)
        many = best(R, f'queues/instr/{op}/k{kk}/q{nq}', False)
        ratio = many['best'] / one['best'] if one and many else None
        tgt = '≤ 1.2×' if not op.endswith('_ref') else ''
        met = ('met' if ratio <= 1.2 else 'MISSED') if (ratio and tgt) else ''
        w(f'| {label} | {b.cell(one)} | {b.cell(many)} | {b.fmt(ratio)}× | {tgt} | {met} |')
    w('')
    w(f'**Timed** (pgbench, 4 clients, {m["queue_seconds"]} s, best of {m["queue_reps"]}, the '
      'variants alternating): enqueue into a random queue (`jobq_enqueue_queues.sql`); enqueue '
      'into a random queue, claim 1 from it (or across it and the next '
      f'{k - 1}), complete (`jobq_soak_queues.sql`, `-D nq=N -D k=K`). Jobs per second.\n')
    w(f'| loop | one queue | {nq:,} queues | ratio | target | |')
    w('|---|---:|---:|---:|---|---|')
    for what, kk, label in (('enqueue', 1, 'enqueue'), ('soak', 1, 'enqueue + claim + complete'),
                            ('soak', k, f'enqueue + claim across {k} queues + complete')):
        one = best(R, f'queues/{what}/k1/q1')
        many = best(R, f'queues/{what}/k{kk}/q{nq}')
        ratio = many['best'] / one['best'] if one and many else None
        met = ('met' if ratio >= 1 / 1.2 else 'MISSED') if ratio else ''
        w(f'| {label} | {b.cell(one)} | {b.cell(many)} | {b.fmt(ratio)}× | ≥ 0.83× | {met} |')
    one, many = best(R, 'queues/workers/q1'), best(R, f'queues/workers/q{nq}')
    if one or many:
        nw = m['queue_workers']
        ratio = many['best'] / one['best'] if one and many else None
        met = ('met' if ratio >= 1 / 1.2 else 'MISSED') if ratio else ''
        w(f'| {nw} jobq-worker --persistent=1 -c 32 --burst (C no-op handler), each on '
          f'{max(1, nq // nw)} queues (`-q` repeated); one queue: all on q0; '
          f'{m["queue_worker_jobs"] * nq:,} jobs | {b.cell(one)} | {b.cell(many)} | '
          f'{b.fmt(ratio)}× | ≥ 0.83× | {met} |')
    w('')


# -- backlog --------------------------------------------------------------
# What the drain reads, per job, from pg_statio: blocks of the heap and of
# each index of jobq.jobs (hit in shared_buffers or read from the OS)
BACKLOG_STATS_SQL = (
    "SELECT coalesce(sum(heap_blks_hit), 0), coalesce(sum(heap_blks_read), 0),"
    " (SELECT coalesce(sum(idx_blks_hit), 0) FROM pg_statio_user_indexes"
    "   WHERE indexrelname = 'jobs_claim_idx'),"
    " (SELECT coalesce(sum(idx_blks_read), 0) FROM pg_statio_user_indexes"
    "   WHERE indexrelname = 'jobs_claim_idx'),"
    " coalesce(sum(idx_blks_hit), 0), coalesce(sum(idx_blks_read), 0),"
    " (SELECT autovacuum_count FROM pg_stat_user_tables WHERE relid = 'jobq.jobs'::regclass),"
    " (SELECT n_dead_tup FROM pg_stat_user_tables WHERE relid = 'jobq.jobs'::regclass)"
    " FROM pg_statio_user_tables WHERE relid = 'jobq.jobs'::regclass")
BACKLOG_STATS = ('heap_hit', 'heap_read', 'claim_idx_hit', 'claim_idx_read', 'idx_hit',
                 'idx_read', 'autovacuums', 'dead')

# The claim's scan as jobq runs it (JOBQ_READY_JOBS_SQL), explained in a
# transaction that is rolled back: buffers it touches for one job
BACKLOG_EXPLAIN_SQL = (
    "EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, COSTS OFF) SELECT c.id FROM jobq.jobs c"
    " WHERE c.queue = 'bench' AND c.state = 'ready' AND c.run_at <= now()"
    " ORDER BY c.priority, c.run_at, c.id LIMIT 1 FOR NO KEY UPDATE SKIP LOCKED")


# jobq.jobs's autovacuum settings of 0.1.0, where 0.2.0 changed them
BACKLOG_010_RELOPTIONS = ('ALTER TABLE jobq.jobs SET (autovacuum_vacuum_scale_factor = 0.01, '
                          'vacuum_index_cleanup = auto)')


def backlog_stats(b):
    time.sleep(1)       # the pgbench backends report their counts as they exit
    return dict(zip(BACKLOG_STATS, (int(x) for x in b.c.sql(BACKLOG_STATS_SQL).split('|'))))


def backlog_explain(b):
    out = b.c.sqls('BEGIN', BACKLOG_EXPLAIN_SQL, 'ROLLBACK')
    m = re.search(r'Index Scan using jobs_claim_idx.*?Buffers: shared ([^\n]*)', out, re.S)
    plan = re.search(r'->\s+(\w[\w ]*?) (?:using|on) ', out)
    return (m.group(1).strip() if m else 'no index scan: ' + ' / '.join(out.splitlines()[:4]),
            plan.group(1) if plan else '?')


def backlog_fill_sql(total):
    """total ready jobs in 'bench', a transaction per million."""
    out, done = [], 0
    while done < total:
        k = min(1000000, total - done)
        out.append(f"SELECT count(*) FROM generate_series(1, {(k + 9999) // 10000}) s, "
                   f"LATERAL jobq_enqueue_batch('bench', ARRAY(SELECT "
                   f"'{QUEUES_PAYLOAD}'::jsonb FROM generate_series(1, least(10000, {k} - (s - 1) * 10000))))")
        done += k
    return out


def bench_backlog(b):
    """Single-job drain at 4 clients (jobq_drain_1.sql) out of a backlog of
    10 k and of --backlog-max (10 M in full mode), backlog_reps runs of
    backlog_drain jobs each, the backlog topped up between them; with what
    each run read per job and what autovacuum did.  Then the soak."""
    m = b.sm
    sizes = sorted({10000, m['backlog_max']})
    b.log(f'== backlog ({", ".join(f"{n:,}" for n in sizes)} ready jobs; soak of '
          f'{m["soak_jobs"]:,} jobs)')
    for n in sizes:
        b.guard(f'backlog {n}', backlog_drain, b, n, n == sizes[-1])
    b.guard('backlog soak', backlog_soak, b)
    b.c.sqls('TRUNCATE jobq.jobs, jobq.history, jobq.stale_acks', 'VACUUM jobq.jobs', 'CHECKPOINT')


def backlog_drain(b, n, long_drain):
    """backlog_reps drains of backlog_drain jobs (at most half the backlog)
    out of n; with long_drain, then one of backlog_long jobs more, as the
    dead entries of the jobs it took pile up at the head of the claim index
    until autovacuum removes them."""
    m = b.sm
    c = 4
    t0 = time.monotonic()
    b.c.sqls('TRUNCATE jobq.jobs, jobq.history, jobq.stale_acks',
             "SELECT FROM jobq_alter_queue('bench', completed_retention => '0')",
             *backlog_fill_sql(n))
    fill_s = time.monotonic() - t0
    b.c.sqls('VACUUM ANALYZE jobq.jobs', 'CHECKPOINT')
    prep_s = time.monotonic() - t0
    size = int(b.c.sql("SELECT pg_total_relation_size('jobq.jobs')"))
    idx = int(b.c.sql("SELECT pg_relation_size('jobq.jobs_claim_idx')"))
    b.log(f'  filled {n:,} in {fill_s:.0f} s, ready in {prep_s:.0f} s; jobq.jobs {size / 2**20:,.0f} MB, '
          f'claim index {idx / 2**20:,.0f} MB; {b.c.sql("SHOW shared_buffers")} shared_buffers')
    explain0 = backlog_explain(b)
    short = min(m['backlog_drain'], n // 2)
    # the runs pile up dead entries at the head of the claim index (no
    # autovacuum comes within them: its naptime is a minute); then one run
    # after a VACUUM that removes them, and, from the deepest backlog, one
    # long drain
    runs = [('', short)] * m['backlog_reps'] + [('/vacuumed', short)]
    if long_drain and m['backlog_long'] <= n // 2:
        # as installed, and with the autovacuum settings of 0.1.0 (upgrade
        # script, "Vacuum of jobq.jobs on a deep backlog"), each from a
        # vacuumed index
        runs += [('/long', m['backlog_long']), ('/long-0.1.0', m['backlog_long'])]
    installed = b.c.sql("SELECT array_to_string(reloptions, ', ') FROM pg_class "
                        "WHERE oid = 'jobq.jobs'::regclass")
    vacuum_s = None
    for suffix, drain in runs:
        if suffix in ('/vacuumed', '/long', '/long-0.1.0'):
            t1 = time.monotonic()
            b.c.sql('VACUUM (INDEX_CLEANUP ON) jobq.jobs')
            vacuum_s = time.monotonic() - t1
            explain0 = backlog_explain(b)
        if suffix == '/long-0.1.0':
            b.c.sql(BACKLOG_010_RELOPTIONS)
        per_client = drain // c
        before = int(b.c.sql("SELECT count(*) FROM jobq.jobs")) if n <= 100000 else n
        s0 = backlog_stats(b)
        (tps, out), cpu, wal = b.measure(lambda: b.pgbench('jobq_drain_1.sql', c, t=per_client,
                                                            progress=1))
        s1 = backlog_stats(b)
        jobs = per_client * c
        d = {k: s1[k] - s0[k] for k in BACKLOG_STATS if k != 'dead'}
        pts = [float(x) for x in re.findall(r'progress: [0-9.]+ s, ([0-9.]+) tps', out)]
        half = len(pts) // 2
        first = sum(pts[:half]) / half if half else 0.0
        last = sum(pts[half:]) / (len(pts) - half) if len(pts) > half else 0.0
        if suffix.startswith('/long'):
            b.scale_series[f'backlog{suffix}'] = pts
        explain1 = backlog_explain(b)
        b.record(f'backlog/{n}{suffix}', tps, 'jobs/s', jobs=jobs, backlog=before,
                 cpu_ms_per_1k=1e6 * cpu / jobs, wal_bytes_per_job=wal / jobs,
                 heap_blocks_per_job=(d['heap_hit'] + d['heap_read']) / jobs,
                 heap_read_per_job=d['heap_read'] / jobs,
                 claim_idx_blocks_per_job=(d['claim_idx_hit'] + d['claim_idx_read']) / jobs,
                 idx_blocks_per_job=(d['idx_hit'] + d['idx_read']) / jobs,
                 idx_read_per_job=d['idx_read'] / jobs, autovacuums=d['autovacuums'],
                 claim_idx_read_per_job=d['claim_idx_read'] / jobs,
                 vacuum_seconds=vacuum_s if suffix == '/vacuumed' else None,
                 reloptions=b.c.sql("SELECT array_to_string(reloptions, ', ') FROM pg_class "
                                    "WHERE oid = 'jobq.jobs'::regclass"),
                 dead_after=s1['dead'], first_half=first, second_half=last,
                 explain_before=explain0[0], explain_after=explain1[0], plan=explain0[1],
                 size_bytes=size, claim_idx_bytes=idx, fill_seconds=fill_s)
        explain0 = explain1
        if suffix == '/long-0.1.0':
            b.c.sql(f'ALTER TABLE jobq.jobs SET ({installed})')
        # top the backlog up again, at the tail, as producers would
        b.c.sqls(*backlog_fill_sql(jobs))


def backlog_soak(b):
    """soak_jobs jobs through 'bench' (retention 0), batched: each pgbench
    transaction enqueues 100, claims 100 and completes them
    (jobq_soak_100.sql), 4 clients, over a 10 k backlog; the live table's
    size, dead rows and autovacuums sampled every soak_sample seconds."""
    m = b.sm
    c = 4
    per_client = m['soak_jobs'] // (100 * c)
    b.c.sqls('TRUNCATE jobq.jobs, jobq.history, jobq.stale_acks',
             "SELECT FROM jobq_alter_queue('bench', completed_retention => '0')",
             *backlog_fill_sql(10000), 'VACUUM ANALYZE jobq.jobs', 'CHECKPOINT')
    samples = []
    stop = threading.Event()
    t0 = time.monotonic()

    def sample():
        while not stop.is_set():
            try:
                row = b.c.sql("SELECT pg_relation_size('jobq.jobs'), "
                              "pg_total_relation_size('jobq.jobs') - pg_relation_size('jobq.jobs'), "
                              "n_live_tup, n_dead_tup, autovacuum_count "
                              "FROM pg_stat_user_tables WHERE relid = 'jobq.jobs'::regclass")
                samples.append((time.monotonic() - t0,) + tuple(int(x) for x in row.split('|')))
            except b.Error:
                pass
            stop.wait(m['soak_sample'])

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    try:
        (tps, out), cpu, wal = b.measure(lambda: b.pgbench('jobq_soak_100.sql', c, t=per_client,
                                                            progress=m['soak_sample']))
    finally:
        stop.set()
        th.join()
    jobs = per_client * c * 100
    pts = [(float(a), 100 * float(x)) for a, x in
           re.findall(r'progress: ([0-9.]+) s, ([0-9.]+) tps', out)]
    b.scale_series['soak'] = dict(samples=samples, rate=pts)
    sizes = [s[1] + s[2] for s in samples]
    q = max(1, len(sizes) // 4)
    b.record('backlog/soak', 100 * tps, 'jobs/s', jobs=jobs, seconds=jobs / (100 * tps),
             size_start=sizes[0] if sizes else 0, size_max=max(sizes) if sizes else 0,
             size_end=sizes[-1] if sizes else 0,
             # levelling off: the largest size of the last quarter against the second's
             size_q2_max=max(sizes[q:2 * q]) if len(sizes) >= 4 else 0,
             size_q4_max=max(sizes[3 * q:]) if len(sizes) >= 4 else 0,
             autovacuums=samples[-1][5] - samples[0][5] if samples else 0,
             cpu_ms_per_1k=1e6 * cpu / jobs, wal_bytes_per_job=wal / jobs)


# -- holdback -------------------------------------------------------------
HOLDER_APP = 'jobq-bench-holder'
HEALTH_SQL = ("SELECT severity || ' | ' || \"check\" || ' | ' || subject || ' | ' || detail "
              "|| ' | ' || advice FROM jobq_health() WHERE severity <> 'ok'")


def bench_holdback(b):
    """Producers enqueue at hold_rate jobs/s (pgbench -R, jobq_enqueue.sql,
    2 clients) and 4 consumers claim and complete at 0.95 of it
    (jobq_drain_1.sql, -R, every transaction logged), over a backlog of
    hold_backlog jobs, retention 0: hold_before seconds, then a session
    idle in transaction (BEGIN; SELECT txid_current(), as an application
    that wrote and forgot to commit) for hold_seconds, then hold_after
    seconds.  Sampled every hold_sample s: dead and live rows, the table's
    size, autovacuums, the holder's xmin age; jobq_health every 30 s."""
    m = b.sm
    before, hold, after = m['hold_before'], m['hold_seconds'], m['hold_after']
    total = before + hold + after
    rate = m['hold_rate']
    b.log(f'== holdback ({hold} s idle in transaction at {rate} jobs/s; {total} s in all)')
    b.c.sqls('TRUNCATE jobq.jobs, jobq.history, jobq.stale_acks',
             "SELECT FROM jobq_alter_queue('bench', completed_retention => '0')",
             *backlog_fill_sql(m['hold_backlog']), 'VACUUM ANALYZE jobq.jobs', 'CHECKPOINT')
    prefix = os.path.join(b.out, 'holdback')
    for f in os.listdir(b.out):
        if f.startswith('holdback.'):
            os.unlink(os.path.join(b.out, f))
    samples, health = [], []
    stop = threading.Event()
    t0 = time.monotonic()

    def sample():
        next_health = 0.0
        while not stop.is_set():
            t = time.monotonic() - t0
            try:
                row = b.c.sql(
                    "SELECT n_dead_tup, n_live_tup, pg_relation_size('jobq.jobs'), "
                    "pg_total_relation_size('jobq.jobs'), autovacuum_count, "
                    "(SELECT coalesce(max(greatest(age(backend_xid), age(backend_xmin))), 0) "
                    "  FROM pg_stat_activity "
                    f"  WHERE application_name = '{HOLDER_APP}') "
                    "FROM pg_stat_user_tables WHERE relid = 'jobq.jobs'::regclass")
                samples.append((t,) + tuple(int(x) for x in row.split('|')))
                if t >= next_health:
                    health.append((t, b.c.sql(HEALTH_SQL).splitlines()))
                    next_health += 30
            except b.Error as e:
                b.log(f'  sample at {t:.0f} s: {e}')
            stop.wait(m['hold_sample'])

    env = dict(os.environ, PGAPPNAME='jobq-bench-load')
    common = ['pgbench', '-n', '-M', 'prepared', '-T', str(total)]
    prod = subprocess.Popen(common + ['-c', '2', '-j', '2', '-R', str(rate), '-f',
                                      os.path.join(b.pgb, 'jobq_enqueue.sql'), b.c.conninfo],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    cons = subprocess.Popen(common + ['-c', '4', '-j', '2', '-R', str(int(rate * 0.95)), '-l',
                                      f'--log-prefix={prefix}', '-f',
                                      os.path.join(b.pgb, 'jobq_drain_1.sql'), b.c.conninfo],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            cwd=b.out)
    th = threading.Thread(target=sample, daemon=True)
    th.start()
    holder = None
    epoch0 = time.time()
    try:
        time.sleep(before)
        holder = subprocess.Popen(['psql', '-X', '-qAt', '-d',
                                   f'{b.c.conninfo} application_name={HOLDER_APP}'],
                                  stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, text=True)
        holder.stdin.write('BEGIN;\nSELECT txid_current();\n')
        holder.stdin.flush()
        hold_start = time.monotonic() - t0
        time.sleep(hold)
        holder.stdin.write('ROLLBACK;\n')
        holder.stdin.close()
        holder.wait(timeout=30)
        hold_end = time.monotonic() - t0
        pout, _ = prod.communicate(timeout=total + 120)
        cout, _ = cons.communicate(timeout=total + 120)
    finally:
        stop.set()
        th.join()
        for p in (prod, cons, holder):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
    for name, p, out in (('producers', prod, pout), ('consumers', cons, cout)):
        if p.returncode != 0 or re.search(r'number of failed transactions: [1-9]', out):
            raise b.Error(f'holdback {name}: pgbench failed: {out.strip()[-300:]}')
    # consumer transactions (claim + complete): start time, latency without schedule lag
    lat = []
    for f in os.listdir(b.out):
        if f.startswith('holdback.'):
            for line in open(os.path.join(b.out, f)):
                x = line.split()
                if len(x) >= 7:
                    start = int(x[4]) + int(x[5]) / 1e6 - epoch0
                    lat.append((start, (int(x[2]) - int(x[6])) / 1000.0))
            os.unlink(os.path.join(b.out, f))
    win = m['hold_window']
    series = []
    for i in range(int(total // win)):
        xs = sorted(l for t, l in lat if i * win <= t < (i + 1) * win)
        if xs:
            series.append((i * win, len(xs) / win, pct(xs, 50), pct(xs, 99)))
    b.scale_series['holdback'] = dict(samples=samples, latency=series, hold=(hold_start, hold_end),
                                      health=health)
    phase = lambda lo, hi: [s for s in series if lo <= s[0] and s[0] + win <= hi]
    def p99(rows):
        return max(r[3] for r in rows) if rows else 0.0
    dead = [s for s in samples if hold_start <= s[0] <= hold_end]
    b.record('holdback/p99_before', p99(phase(0, hold_start)), 'ms')
    b.record('holdback/p99_held_max', p99(phase(hold_start, hold_end)), 'ms')
    b.record('holdback/p99_held_last', p99(phase(hold_end - 30, hold_end)), 'ms')
    b.record('holdback/p99_after', p99(phase(hold_end + 10, total)), 'ms')
    b.record('holdback/dead_max', max((s[1] for s in dead), default=0), 'rows',
             size_start=samples[0][4] if samples else 0,
             size_held_end=max((s[4] for s in dead), default=0),
             size_end=samples[-1][4] if samples else 0,
             xmin_age_max=max((s[6] for s in dead), default=0),
             rate=len(lat) / total, hold_seconds=hold_end - hold_start)


def pct(xs, p):
    k = min(len(xs) - 1, max(0, int(round(p / 100 * len(xs) + 0.5)) - 1))
    return xs[k]


def backlog_report(w, b):
    R = b.results
    m = b.sm
    sizes = sorted({10000, m['backlog_max']})
    if not any(key.startswith('backlog/') for key in R):
        return
    w('## Backlog: drain rate out of a deep backlog\n')
    w(f'Single-job drain, 4 pgbench clients (`jobq_drain_1.sql`), {m["backlog_drain"]:,} jobs a '
      f'run, {m["backlog_reps"]} runs, out of a backlog filled once (`jobq_enqueue_batch`, '
      'then `VACUUM ANALYZE` and `CHECKPOINT`) and topped up at its tail after each run. Per job: '
      'blocks the run touched (pg_statio: hit in shared_buffers + read from the OS) of the '
      'heap, of `jobs_claim_idx` and of all indexes of `jobq.jobs`; autovacuums of `jobq.jobs` '
      'during the run; "first / second half": jobs/s from `pgbench -P 1`. "claim scan": '
      "`EXPLAIN (ANALYZE, BUFFERS)` of the claim's index scan (one job, rolled back) before and "
      f'after the run. `bench/run.sh --only backlog [--backlog-max N]` runs it.\n')
    w('| backlog | jobs/s | vs 10k | target | | heap blocks / job (read) | claim index '
      'blocks / job | index blocks / job (read) | autovacuums | first / second half | claim '
      'scan before → after | jobq.jobs | filled in |')
    w('|---|---:|---:|---|---|---:|---:|---:|---:|---|---|---:|---:|')
    base = b.best(R, 'backlog/10000')
    rows = [(f'{n:,}', f'backlog/{n}', n) for n in sizes]
    for n in sizes:
        if f'backlog/{n}/vacuumed' in R:
            rows.append((f'{n:,}, after `VACUUM (INDEX_CLEANUP ON)` of the dead rows of those '
                         f'({R[f"backlog/{n}/vacuumed"]["extra"][0]["vacuum_seconds"]:.1f} s)',
                         f'backlog/{n}/vacuumed', n))
    for suffix, what in (('/long', 'as installed'),
                         ('/long-0.1.0', "with 0.1.0's autovacuum settings")):
        if f'backlog/{sizes[-1]}{suffix}' in R:
            rows.append((f'{sizes[-1]:,}, one drain of {m["backlog_long"]:,} from a vacuumed '
                         f'index, {what}', f'backlog/{sizes[-1]}{suffix}', sizes[-1]))
    for label, key, n in rows:
        r = b.best(R, key)
        if not r:
            w(f'| {label} | n/a | | | | | | | | | | | |')
            continue
        e = r['extra']
        # against 10k in the same state: vacuumed against vacuumed
        same = (b.best(R, 'backlog/10000' + key[len(f'backlog/{n}'):])
                or b.best(R, 'backlog/10000/vacuumed') or base)
        ratio = r['best'] / same['best'] if same else None
        main = n > 10000 and key == f'backlog/{n}'
        tgt = '≥ 0.8×' if main else ''
        met = ('met' if ratio >= 0.8 else 'MISSED') if (main and ratio) else ''
        w(f"| {label} | {b.cell(r)} | {b.fmt(ratio)}× | {tgt} | {met} | "
          f"{e['heap_blocks_per_job']:.1f} ({e['heap_read_per_job']:.2f}) | "
          f"{e['claim_idx_blocks_per_job']:.1f} | {e['idx_blocks_per_job']:.1f} "
          f"({e['idx_read_per_job']:.2f}) | {e['autovacuums']} | {b.fmt(e['first_half'])} / "
          f"{b.fmt(e['second_half'])} | {e['explain_before']} → {e['explain_after']} | "
          f"{e['size_bytes'] / 2**20:,.0f} MB | {e['fill_seconds']:.0f} s |")
    w('')
    s = b.best(R, 'backlog/soak')
    if s:
        e = s['extra']
        w(f'**Soak**: {e["jobs"]:,} jobs through queue `bench` (retention 0) in '
          f'{e["seconds"]:.0f} s, 4 pgbench clients each enqueueing 100, claiming 100 and '
          'completing them per transaction (`jobq_soak_100.sql`) over a 10k backlog: '
          f'{b.fmt(s["best"])} jobs/s; `jobq.jobs` with its indexes '
          f'{e["size_start"] / 2**20:.1f} MB at the start, at most {e["size_q2_max"] / 2**20:.1f} MB '
          f'in the second quarter of the run, at most {e["size_q4_max"] / 2**20:.1f} MB in the last, '
          f'{e["size_end"] / 2**20:.1f} MB at the end (largest {e["size_max"] / 2**20:.1f} MB); '
          f'{e["autovacuums"]} autovacuums of it.\n')
        if os.path.exists(os.path.join(b.outdir, 'backlog-long.svg')):
            w('![long drains: jobs/s over time, as installed and with 0.1.0\'s autovacuum '
              'settings](backlog-long.svg)\n')
        if os.path.exists(os.path.join(b.outdir, 'backlog-soak.svg')):
            w('![soak: size of jobq.jobs and jobs/s over time](backlog-soak.svg)\n')


def holdback_report(w, b):
    R = b.results
    m = b.sm
    d = b.best(R, 'holdback/dead_max')
    if not d:
        return
    e = d['extra']
    w('## A session idle in transaction under load\n')
    w(f'Producers enqueue at {m["hold_rate"]:,} jobs/s (`pgbench -R`, 2 clients, '
      f'`jobq_enqueue.sql`), 4 consumers claim and complete at 0.95 of that (`-R`, '
      f'`jobq_drain_1.sql`, every transaction logged), over a backlog of {m["hold_backlog"]:,}, '
      f'retention 0: {m["hold_before"]} s, then a session runs `BEGIN; SELECT txid_current();` '
      f'and sits idle in transaction for {e["hold_seconds"]:.0f} s, then {m["hold_after"]} s more. '
      f'Latency is that of a consumer transaction pair (claim, commit; complete, commit) '
      f'without pgbench\'s schedule lag, per {m["hold_window"]} s window. `bench/run.sh --only '
      f'holdback [--hold-seconds N]` runs it.\n')
    w('| | figure |')
    w('|---|---:|')
    for key, label in (('p99_before', 'claim + complete p99 before (worst window)'),
                       ('p99_held_max', 'p99 while held (worst window)'),
                       ('p99_held_last', 'p99 in the last 30 s held'),
                       ('p99_after', 'p99 after the rollback (from 10 s on)')):
        r = b.best(R, f'holdback/{key}', False)
        w(f'| {label} | {b.cell(r)} ms |')
    w(f'| dead rows of jobq.jobs while held (most) | {int(d["best"]):,} |')
    w(f'| jobq.jobs with indexes: start → end of the hold → end | '
      f'{e["size_start"] / 2**20:.1f} → {e["size_held_end"] / 2**20:.1f} → '
      f'{e["size_end"] / 2**20:.1f} MB |')
    w(f'| age of the holder\'s transaction at the end (XIDs) | {e["xmin_age_max"]:,} |')
    w(f'| jobs claimed per second (all of the run) | {b.fmt(e["rate"])} |')
    w('')
    if os.path.exists(os.path.join(b.outdir, 'holdback.svg')):
        w('![dead rows, size and claim latency over time](holdback.svg)\n')
    hs = b.scale_series.get('holdback', {})
    if hs.get('health'):
        w('What `jobq_health()` said (rows other than ok: severity | check | subject | detail | '
          'advice), '
          'every 30 s; the hold ran from '
          f'{hs["hold"][0]:.0f} s to {hs["hold"][1]:.0f} s:\n')
        w('```')
        last = None
        for t, rows in hs['health']:
            text = '\n'.join(rows) if rows else '(all ok)'
            if text == last:
                w(f'{t:5.0f} s: the same')
                continue
            last = text
            w(f'{t:5.0f} s:')
            for r in (rows or ['(all ok)']):
                w(f'    {r}')
        w('```\n')


def m_max(b):
    return b.sm['backlog_max']


def plot(b):
    """SVG plots of the soak and the holdback next to the report (gnuplot)."""
    import shutil
    if shutil.which('gnuplot') is None:
        return
    d = b.outdir
    soak = b.scale_series.get('soak')
    if soak and soak['samples']:
        with open(os.path.join(d, 'soak-size.dat'), 'w') as f:
            f.writelines(f'{s[0]:.1f} {(s[1] + s[2]) / 2**20:.2f} {s[1] / 2**20:.2f} {s[4]}\n'
                         for s in soak['samples'])
        with open(os.path.join(d, 'soak-rate.dat'), 'w') as f:
            f.writelines(f'{t} {r}\n' for t, r in soak['rate'])
        subprocess.run(['gnuplot', '-e',
                        f"set terminal svg size 900,450 dynamic; set output '{d}/backlog-soak.svg';"
                        "set title 'Soak: jobq.jobs size and throughput'; set xlabel 'seconds';"
                        "set ylabel 'MB'; set y2label 'jobs/s'; set y2tics; set ytics nomirror;"
                        "set yrange [0:*]; set y2range [0:*]; set key bottom right;"
                        f"plot '{d}/soak-size.dat' using 1:2 with lines lw 2 title 'table + indexes',"
                        f" '{d}/soak-size.dat' using 1:3 with lines lw 2 title 'heap',"
                        f" '{d}/soak-rate.dat' using 1:2 axes x1y2 with lines title 'jobs/s'"],
                       check=False)
    longs = [(k, v) for k, v in sorted(b.scale_series.items()) if k.startswith('backlog/long')]
    if longs:
        for k, pts in longs:
            with open(os.path.join(d, f'{k.replace("/", "-")}.dat'), 'w') as f:
                f.writelines(f'{i + 1} {y}\n' for i, y in enumerate(pts))
        names = {'backlog/long': 'as installed', 'backlog/long-0.1.0': "0.1.0's autovacuum settings"}
        plot_cmd = ', '.join(f"'{d}/{k.replace('/', '-')}.dat' using 1:2 with lines lw 2 "
                             f'title "{names.get(k, k)}"' for k, _ in longs)
        subprocess.run(['gnuplot', '-e',
                        f"set terminal svg size 900,400 dynamic; set output '{d}/backlog-long.svg';"
                        f"set title 'Single-job drain out of {m_max(b):,} ready jobs, 4 clients';"
                        "set xlabel 'seconds'; set ylabel 'jobs/s'; set yrange [0:*];"
                        f"set key bottom left; plot {plot_cmd}"], check=False)
        for k, _ in longs:
            os.unlink(os.path.join(d, f'{k.replace("/", "-")}.dat'))
    hb = b.scale_series.get('holdback')
    if hb and hb['samples']:
        h0, h1 = hb['hold']
        with open(os.path.join(d, 'hold-dead.dat'), 'w') as f:
            f.writelines(f'{s[0]:.1f} {s[1]} {s[4] / 2**20:.2f}\n' for s in hb['samples'])
        with open(os.path.join(d, 'hold-lat.dat'), 'w') as f:
            f.writelines(f'{t} {r:.1f} {p50:.3f} {p99:.3f}\n' for t, r, p50, p99 in hb['latency'])
        subprocess.run(['gnuplot', '-e',
                        f"set terminal svg size 900,600 dynamic; set output '{d}/holdback.svg';"
                        "set multiplot layout 2,1 title 'A session idle in transaction (shaded) "
                        "under load'; set lmargin 10; set rmargin 10;"
                        f"set xrange [0:{hb['latency'][-1][0] + 10 if hb['latency'] else 1}];"
                        f"set object 1 rect from {h0},graph 0 to {h1},graph 1 fc rgb '#eeeeee' behind;"
                        "set ylabel 'dead rows'; set y2label 'MB'; set y2tics; set ytics nomirror;"
                        "set yrange [0:*]; set y2range [0:*]; set key top left;"
                        f"plot '{d}/hold-dead.dat' using 1:2 with lines lw 2 title 'dead rows of jobq.jobs',"
                        f" '' using 1:3 axes x1y2 with lines lw 2 title 'jobq.jobs + indexes (MB)';"
                        "set xlabel 'seconds'; set ylabel 'ms'; unset y2label; unset y2tics;"
                        "set ytics mirror; set logscale y; set yrange [*:*];"
                        f"plot '{d}/hold-lat.dat' using 1:4 with lines lw 2 title 'claim + complete p99',"
                        f" '' using 1:3 with lines lw 2 title 'p50';"
                        "unset multiplot"], check=False)
    for f in ('soak-size.dat', 'soak-rate.dat', 'hold-dead.dat', 'hold-lat.dat'):
        if os.path.exists(os.path.join(d, f)):
            os.unlink(os.path.join(d, f))


def report(w, b):
    """The sections of the scale rows that ran."""
    queues_report(w, b)
    backlog_report(w, b)
    holdback_report(w, b)


# --only names of the opt-in rows, in the order they run
STEPS = {'queues': bench_queues, 'backlog': bench_backlog, 'holdback': bench_holdback}
