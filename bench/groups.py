"""Group benchmarks of bench/bench.py (issue 19, FEATURES-0.2.md 6.5): opt-in
rows that run only when --only names them (groups), as they take a few
minutes.  doc/groups.md quotes their figures.

  throughput  the drain rate of 100,000 jobs (20,000 with 10 groups in quick
              mode: they run 10 at a time) (bench/driver drain, 4 clients
              of batches of 25, each completing its batch and claiming the
              next in one transaction) from an ungrouped queue, and from a
              FIFO queue with the jobs spread over 10, 1,000 and 100,000
              groups.  A FIFO group runs one job at a time: with 10 groups
              at most 10 jobs run at once, whatever the batch.
  max_running 4 clients x 10 slots of 5 ms jobs (driver drain -b 10 -w
              5000: each batch of 10 sleeps 5 ms, then is completed) from a
              queue with max_running = 40 against the same queue without a
              limit, alternately, in the same run: the target is >= 0.9x.
  fairness    a tenant with 10,000 ready jobs enqueued first, then 100
              tenants with 10 jobs each, group_mode limit with group_limit
              1,000 (no tenant is held by its own limit), drained by 4
              clients of batches of 10: the p99 and p50 wait of the small
              tenants' jobs (claimed_at minus the drain's first claim) under
              group_order oldest and round_robin.

Each function takes the Bench of bench.py and records figures with it;
report() writes their section.  Python 3 standard library only.
"""

GROUP_MODES = {
    'smoke': dict(jobs=2000, few_jobs=2000, group_counts=[10, 1000], limit_jobs=800, fair_big=1000,
                  fair_small=10, fair_small_jobs=10, reps=1),
    'quick': dict(jobs=100000, few_jobs=20000, group_counts=[10, 1000, 100000], limit_jobs=20000,
                  fair_big=10000, fair_small=100, fair_small_jobs=10, reps=1),
    'full': dict(jobs=100000, few_jobs=100000, group_counts=[10, 1000, 100000], limit_jobs=50000,
                 fair_big=10000, fair_small=100, fair_small_jobs=10, reps=3),
}

PAYLOAD = """'{"to":"user@example.com","n":1}'::jsonb"""


def _fill(b, queue, n, key_sql=None):
    """Enqueue n jobs into queue in batches of 10,000; key_sql: the group key
    of job g (an SQL expression of g, the job's number from 0)."""
    done = 0
    while done < n:
        k = min(10000, n - done)
        keys = '' if key_sql is None else \
            f', group_keys => ARRAY(SELECT {key_sql} FROM generate_series({done}, {done + k - 1}) g)'
        b.c.sql(f"SELECT count(*) FROM jobq_enqueue_batch('{queue}', "
                f'array_fill({PAYLOAD}, ARRAY[{k}]){keys})')
        done += k


def _queue(b, name, **settings):
    b.c.sql(f"SELECT jobq_drop_queue('{name}', force => true) "
            f"FROM jobq.queues WHERE name = '{name}'")
    args = ''.join(f', {k} => {v}' for k, v in settings.items())
    b.c.sql(f"SELECT jobq_create_queue('{name}'{args})")
    b.c.sql('TRUNCATE jobq.history')


def _drain(b, queue, clients, batch, work_us):
    jobs, secs, rate = b.driver('drain', '-q', queue, '-c', str(clients), '-b', str(batch),
                                '-w', str(work_us))
    left = int(b.c.sql(f"SELECT count(*) FROM jobq.jobs WHERE queue = '{queue}'"))
    if left:
        raise b.Error(f'drain of {queue} left {left} jobs')
    return jobs, secs, rate


def bench_groups(b):
    m = GROUP_MODES[b.a.mode]
    b.log('== groups (drain rate by number of FIFO groups; max_running = 40; '
          'fairness of round robin)')
    for rep in range(m['reps']):
        b.guard('groups throughput', _throughput, b, m)
        b.guard('groups max_running', _max_running, b, m)
        b.guard('groups fairness', _fairness, b, m)
    b.c.sql("SELECT jobq_drop_queue(name, force => true) FROM jobq.queues WHERE name = 'bgroups'")


def _throughput(b, m):
    cases = [('none', None, {})] + \
        [(f'fifo_{g}', f"'t' || (g % {g})", dict(group_mode="'fifo'")) for g in m['group_counts']]
    for name, key_sql, settings in cases:
        # NB: 10 groups run 10 jobs at a time: fewer jobs (quick), or it takes minutes
        n = m['few_jobs'] if name == 'fifo_10' else m['jobs']
        _queue(b, 'bgroups', completed_retention="'0'", **settings)
        _fill(b, 'bgroups', n, key_sql)
        b.settle()
        groups = int(b.c.sql("SELECT count(*) FROM jobq.groups WHERE queue = 'bgroups'"))
        (jobs, secs, rate), cpu, wal = b.measure(lambda: _drain(b, 'bgroups', 4, 25, 0))
        rows_left = int(b.c.sql("SELECT count(*) FROM jobq.groups WHERE queue = 'bgroups'"))
        b.record(f'groups/{name}', rate, 'jobs/s', jobs=jobs, groups=groups,
                 group_rows_after=rows_left, cpu_ms_per_1k=1e6 * cpu / max(jobs, 1),
                 wal_bytes_per_job=wal / max(jobs, 1))


def _max_running(b, m):
    n = m['limit_jobs']
    for name, settings in (('unlimited', {}), ('max_running_40', dict(max_running='40')),
                           ('unlimited', {}), ('max_running_40', dict(max_running='40'))):
        _queue(b, 'bgroups', completed_retention="'0'", **settings)
        _fill(b, 'bgroups', n)
        b.settle()
        jobs, secs, rate = _drain(b, 'bgroups', 4, 10, 5000)
        b.record(f'groups_limit/{name}', rate, 'jobs/s', jobs=jobs)


def _fairness(b, m):
    big, small, each = m['fair_big'], m['fair_small'], m['fair_small_jobs']
    for order in ('oldest', 'round_robin'):
        _queue(b, 'bgroups', completed_retention="'1 day'", group_mode="'limit'",
               group_limit='1000', group_order=f"'{order}'")
        _fill(b, 'bgroups', big, "'big'")
        # NB: history keeps no group_key of completed jobs: the small tenants' are the later ids
        last_big = int(b.c.sql("SELECT max(id) FROM jobq.jobs WHERE queue = 'bgroups'"))
        _fill(b, 'bgroups', small * each, f"'small-' || (g % {small})")
        b.settle()
        jobs, secs, rate = _drain(b, 'bgroups', 4, 10, 0)
        row = b.c.sql(
            f"WITH h AS (SELECT id > {last_big} AS small,"
            "  extract(epoch FROM claimed_at - min(claimed_at) OVER ()) * 1000 AS ms"
            "  FROM jobq.history WHERE queue = 'bgroups')"
            " SELECT percentile_cont(0.99) WITHIN GROUP (ORDER BY ms) FILTER (WHERE small),"
            "  percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE small),"
            "  percentile_cont(0.99) WITHIN GROUP (ORDER BY ms) FILTER (WHERE NOT small),"
            "  max(ms) FROM h")
        p99, p50, big99, total = (float(x) for x in row.split('|'))
        b.record(f'groups_fair/{order}', p99, 'ms', small_p50_ms=p50, big_p99_ms=big99,
                 drain_ms=total, jobs=jobs)


def _best(R, key, higher=True):
    r = R.get(key)
    if not r or not r['values']:
        return None
    return max(r['values']) if higher else min(r['values'])


def report(w, b):
    """The section of the group rows, if they ran."""
    R = b.results
    if not any(k.startswith(('groups/', 'groups_limit/', 'groups_fair/')) for k in R):
        return
    m = GROUP_MODES[b.a.mode]
    w('## Groups and limits (issue 19)\n')
    w(f'`bench/run.sh --only groups` (opt-in; {b.a.mode} sizes: {m["jobs"]:,} jobs per '
      'throughput row). Figures of one run, so the ratios compare rows measured on the same '
      'machine minutes apart. doc/groups.md quotes them.\n')
    base = _best(R, 'groups/none')
    if base:
        w('| drain, 4 clients x batches of 25 | jobs/s | vs no groups | group rows left |')
        w('|---|---:|---:|---:|')
        for name in ['none'] + [f'fifo_{g}' for g in m['group_counts']]:
            v = _best(R, f'groups/{name}')
            if v is None:
                continue
            ex = R[f'groups/{name}']['extra'][-1]
            label = 'no groups' if name == 'none' else \
                f'FIFO, {int(name.split("_")[1]):,} groups ({ex.get("groups", "?"):,} rows)'
            w(f'| {label} | {v:,.0f} | {v / base:.2f}x | {ex.get("group_rows_after", 0)} |')
        w('')
    un, lim = _best(R, 'groups_limit/unlimited'), _best(R, 'groups_limit/max_running_40')
    if un and lim:
        w('| 4 clients x 10 slots of 5 ms jobs | jobs/s (best of 2) |')
        w('|---|---:|')
        w(f'| no limit | {un:,.0f} |')
        w(f'| max_running = 40 | {lim:,.0f} ({lim / un:.2f}x; target >= 0.9x) |')
        w('')
    rows = [(o, R.get(f'groups_fair/{o}')) for o in ('oldest', 'round_robin')]
    if any(r for _, r in rows):
        w(f'Fairness: one tenant with {m["fair_big"]:,} ready jobs enqueued first, '
          f'{m["fair_small"]} tenants with {m["fair_small_jobs"]} each, limit mode with '
          'group_limit 1,000, 4 clients x batches of 10; waits from the first claim of the drain.\n')
        w('| group_order | small tenants p99 wait | small p50 | big tenant p99 | whole drain |')
        w('|---|---:|---:|---:|---:|')
        for o, r in rows:
            if not r:
                continue
            i = r['values'].index(min(r['values']))
            ex = r['extra'][i]
            w(f'| {o} | {r["values"][i]:,.0f} ms | {ex["small_p50_ms"]:,.0f} ms | '
              f'{ex["big_p99_ms"]:,.0f} ms | {ex["drain_ms"]:,.0f} ms |')
        w('')


STEPS = {'groups': bench_groups}
