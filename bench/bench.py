#!/usr/bin/env python3
"""jobq benchmark harness: jobq side by side with the plain SKIP LOCKED queue.

Run it through bench/run.sh (see bench/README.md).  Python 3 standard library
only.  It starts a throwaway cluster under /tmp/jobq-bench-*, runs every
benchmark (best of --reps, reference and jobq interleaved in the same run),
and writes a markdown report (bench/RESULTS.md by default).
"""
import argparse
import datetime
import os
import platform
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import scale
import groups as group_rows  # the opt-in rows of issue 19 (bench/groups.py)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PGB = os.path.join(HERE, 'pgbench')
DRIVER = os.path.join(HERE, 'driver')
WORKER = os.path.join(ROOT, 'client', 'jobq-worker')
HANDLER = os.path.join(HERE, 'handler')
PERSISTENT_HANDLER = os.path.join(HERE, 'persistent_handler')
HANDLERS_DIR = os.path.join(ROOT, 'client', 'handlers')
# no-op handlers of jobq-worker --persistent, taking {jobs} jobs at a time
PERSISTENT_NOOPS = {
    'c': lambda jobs: [PERSISTENT_HANDLER, str(jobs)],
    # (sys.executable: the interpreter itself, not a version manager's shim script,
    # which took 0.5 s to start here)
    'python': lambda jobs: [sys.executable, '-c', f'import sys; sys.path.insert(0, {HANDLERS_DIR!r}); '
                            f'import jobq_handler; jobq_handler.run(lambda job: None, jobs={jobs})'],
    'node': lambda jobs: ['node', '-e', f'require({os.path.join(HANDLERS_DIR, "jobq-handler")!r})'
                          f'.run(async () => null, {{ jobs: {jobs} }})'],
}
# jobq-worker --persistent: jobs in flight (-c and the processes' capacity), one process
PERSISTENT_SLOTS = 32
NCPU = os.cpu_count() or 1
# bench_drains (--only drains): the client counts of the timed drains
DRAINS_CLIENTS = [1, 4, 16]
# The hand-written queues jobq is measured against, by their impl name: the
# richer reference (queue, priority, payload returned: what jobq does) and
# the minimal one of the articles (bench/pgbench/min_schema.sql)
REF_TABLES = {'ref': 'bench_ref.jobs', 'min': 'bench_min.jobs'}
ALL_TABLES = 'jobq.jobs, jobq.history, bench_ref.jobs, bench_min.jobs'


def table(impl):
    return REF_TABLES.get(impl, 'jobq.jobs')


def children_cpu():
    """User + system CPU seconds of this process's reaped children (and theirs)."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime

# ---------------------------------------------------------------------------
# Sizes per mode.  quick: < 3 minutes; smoke: the smallest configuration
# (ci-smoke.sh); full: the numbers in the issue.
MODES = {
    'smoke': dict(reps=1, clients=[1], drain_clients=[1], enq_seconds=1, enq_batches=3,
                  enq_impls=['ref', 'min', 'jobq', 'driver'],
                  drain_single=100, drain_batch=400, ret_single=['0'], ret_batch=['0'],
                  lat_jobs=20, lat_modes=['driver-notify', 'driver-blocking', 'worker-notify', 'worker-blocking', 'persistent-blocking', 'os-spawn'],
                  waiters=10, waiter_seconds=1, horizon_seconds=2, horizon_wait=10,
                  backlogs=[10000], scale_drain=200, history_rows=0,
                  soak_seconds=0, worker_jobs=30, worker_conc=[16], worker_reps=1, persistent_jobs=200,
                  instr=dict(enqueue=(20, 120), cycle1=(5, 25), cycle100=(1, 3)),
                  counts_history=10000, flows_jobs=500),
    'quick': dict(reps=3, clients=[1, 16], drain_clients=[4], enq_seconds=1,
                  enq_impls=['ref', 'min', 'jobq', 'jobq-nonotify'],
                  enq_batches=10, drain_single=1500, drain_batch=12000,
                  ret_single=['0'], ret_batch=['0', '1 day'],
                  lat_jobs=100, lat_modes=['driver-notify', 'driver-blocking', 'driver-poll50ms', 'worker-notify', 'worker-blocking', 'persistent-blocking', 'os-spawn'],
                  waiters=100, waiter_seconds=3, horizon_seconds=5, horizon_wait=15,
                  backlogs=[10000, 100000], scale_drain=800, history_rows=0,
                  soak_seconds=0, worker_jobs=100, worker_conc=[16], worker_reps=1, persistent_jobs=10000,
                  instr=dict(enqueue=(100, 1000), cycle1=(10, 110), cycle100=(1, 11), batch1000=(1, 4)),
                  counts_history=200000, flows_jobs=2000),
    'full': dict(reps=3, clients=[1, 4, 16], drain_clients=[1, 4, 16], enq_seconds=10,
                 enq_impls=['ref', 'min', 'jobq', 'driver', 'jobq-nonotify'],
                 enq_batches=100, drain_single=100000, drain_batch=100000,
                 ret_single=['0', '1 day'], ret_batch=['0', '1 day'],
                 lat_jobs=1000, lat_modes=['driver-notify', 'driver-blocking', 'driver-poll50ms', 'worker-notify', 'worker-blocking', 'persistent-blocking', 'os-spawn'],
                 waiters=100, waiter_seconds=10, horizon_seconds=30, horizon_wait=40,
                 backlogs=[10000, 100000, 1000000], scale_drain=5000,
                 history_rows=1000000, soak_seconds=300, worker_jobs=5000,
                 worker_conc=[4, 16], worker_reps=3, persistent_jobs=50000,
                 instr=dict(enqueue=(200, 2000), cycle1=(20, 220), cycle100=(2, 22), batch1000=(2, 8)),
                 counts_history=10000000, flows_jobs=10000),
}

PAYLOAD_SQL = "jsonb_build_object('to', 'user@example.com', 'n', g)"

# jobq_stats('bench') as 0.1.0 (and 0.2.0 before issue 14) ran it, inline:
# exact count(*) FILTER over the live table and the whole history of the
# queue (extension/inspect.c at 4bd9b45), for the counts figures.
OLD_STATS_SQL = (
    "SELECT q.name, q.paused,"
    "  COALESCE(l.ready, 0), COALESCE(l.delayed, 0), COALESCE(l.running, 0),"
    "  COALESCE(l.expired, 0), COALESCE(h.dead, 0), COALESCE(h.completed, 0),"
    "  COALESCE(h.cancelled, 0), clock_timestamp() - l.oldest,"
    "  COALESCE((SELECT sum(s.count) FROM jobq.stale_acks s"
    "            WHERE s.queue = q.name), 0)::bigint"
    " FROM jobq.queues q"
    " LEFT JOIN LATERAL ("
    "   SELECT count(*) FILTER (WHERE state = 'ready' AND run_at <= clock_timestamp()) AS ready,"
    "     count(*) FILTER (WHERE state = 'ready' AND run_at > clock_timestamp()) AS delayed,"
    "     count(*) FILTER (WHERE state = 'running') AS running,"
    "     count(*) FILTER (WHERE state = 'running' AND locked_until < clock_timestamp()) AS expired,"
    "     min(run_at) FILTER (WHERE state = 'ready' AND run_at <= clock_timestamp()) AS oldest"
    "   FROM jobq.jobs j WHERE j.queue = q.name) l ON true"
    " LEFT JOIN LATERAL ("
    "   SELECT count(*) FILTER (WHERE state = 'dead') AS dead,"
    "     count(*) FILTER (WHERE state = 'completed') AS completed,"
    "     count(*) FILTER (WHERE state = 'cancelled') AS cancelled"
    "   FROM jobq.history h WHERE h.queue = q.name) h ON true"
    " WHERE q.name = 'bench'")

# The calls the counts figures time (bench_counts), by name
COUNTS_CALLS = [('jobq_counts', "SELECT * FROM jobq_counts('bench')"),
                ('jobq_stats', "SELECT * FROM jobq_stats('bench')"),
                ('jobq_stats 0.1.0', OLD_STATS_SQL)]

# Instructions per operation (bench_instructions).  Each operation is a
# PL/pgSQL procedure per side looping over the statements of the pgbench
# scripts (bench/pgbench/{jobq,ref}_{enqueue,drain_1,drain_100}.sql), with
# their commits, so that plans are cached as with pgbench -M prepared.
# Results go INTO variables through SELECT, never `:=`, which PL/pgSQL would
# evaluate as a simple expression without the executor a client's SELECT
# goes through.  The checks make a loop that ran out of jobs fail loudly.
# MODES[...]['instr'] holds the two loop counts (small, large) per operation.
INSTR_OPS = [   # (key, what one iteration does)
    ('enqueue', 'enqueue 1 job, one transaction'),
    ('cycle1', 'claim 1, commit; complete it, commit'),
    ('cycle100', 'claim 100, commit; complete the 100, commit'),
    ('batch1000', 'enqueue 1,000 jobs in one statement, one transaction'),
]
INSTR_BODY = {
    ('enqueue', 'jobq'): """
        SELECT jobq_enqueue('bench', '{"to":"user@example.com","n":1}') INTO k;
        COMMIT;""",
    ('enqueue', 'ref'): """
        INSERT INTO bench_ref.jobs (queue, payload)
            VALUES ('bench', '{"to":"user@example.com","n":1}') RETURNING id INTO k;
        COMMIT;""",
    ('batch1000', 'jobq'): """
        SELECT count(*) INTO k FROM jobq_enqueue_batch('bench', ARRAY(SELECT jsonb_build_object('to', 'user@example.com', 'n', g) FROM generate_series(1, 1000) g));
        COMMIT;""",
    ('batch1000', 'ref'): """
        INSERT INTO bench_ref.jobs (queue, payload) SELECT 'bench', jsonb_build_object('to', 'user@example.com', 'n', g) FROM generate_series(1, 1000) g;
        COMMIT;""",
    ('batch1000', 'min'): """
        INSERT INTO bench_min.jobs (payload) SELECT jsonb_build_object('to', 'user@example.com', 'n', g) FROM generate_series(1, 1000) g;
        COMMIT;""",
    ('enqueue', 'min'): """
        INSERT INTO bench_min.jobs (payload)
            VALUES ('{"to":"user@example.com","n":1}') RETURNING id INTO k;
        COMMIT;""",
    ('cycle1', 'min'): """
        UPDATE bench_min.jobs SET status = 'running', attempts = attempts + 1,
                locked_until = now() + interval '5 minutes'
            WHERE id IN (SELECT id FROM bench_min.jobs WHERE status = 'pending'
                         AND run_after <= now() ORDER BY run_after FOR UPDATE SKIP LOCKED LIMIT 1)
            RETURNING id INTO k;
        IF NOT FOUND THEN RAISE EXCEPTION 'no ready job'; END IF;
        COMMIT;
        DELETE FROM bench_min.jobs WHERE id = k;
        IF NOT FOUND THEN RAISE EXCEPTION 'job % not completed', k; END IF;
        COMMIT;""",
    ('cycle100', 'min'): """
        WITH c AS (UPDATE bench_min.jobs SET status = 'running', attempts = attempts + 1,
                           locked_until = now() + interval '5 minutes'
                       WHERE id IN (SELECT id FROM bench_min.jobs WHERE status = 'pending'
                                    AND run_after <= now() ORDER BY run_after
                                    FOR UPDATE SKIP LOCKED LIMIT 100)
                       RETURNING id)
            SELECT array_agg(id) INTO ids FROM c;
        IF cardinality(ids) IS DISTINCT FROM 100 THEN RAISE EXCEPTION 'short batch'; END IF;
        COMMIT;
        DELETE FROM bench_min.jobs WHERE id = ANY (ids);
        GET DIAGNOSTICS k = ROW_COUNT;
        IF k <> 100 THEN RAISE EXCEPTION '% of 100 jobs completed', k; END IF;
        COMMIT;""",
    ('cycle1', 'jobq'): """
        SELECT id, token, payload INTO r FROM jobq_claim('bench', 'w', 1);
        IF NOT FOUND THEN RAISE EXCEPTION 'no ready job'; END IF;
        COMMIT;
        SELECT jobq_complete(r.id, r.token) INTO ok;
        IF NOT ok THEN RAISE EXCEPTION 'job % not completed', r.id; END IF;
        COMMIT;""",
    ('cycle1', 'ref'): """
        UPDATE bench_ref.jobs SET status = 'running', attempts = attempts + 1,
                locked_until = now() + interval '5 minutes'
            WHERE id IN (SELECT id FROM bench_ref.jobs WHERE queue = 'bench'
                         AND status = 'pending' AND run_at <= now()
                         ORDER BY priority, run_at, id FOR UPDATE SKIP LOCKED LIMIT 1)
            RETURNING id, payload INTO r;
        IF NOT FOUND THEN RAISE EXCEPTION 'no ready job'; END IF;
        COMMIT;
        DELETE FROM bench_ref.jobs WHERE id = r.id;
        IF NOT FOUND THEN RAISE EXCEPTION 'job % not completed', r.id; END IF;
        COMMIT;""",
    ('cycle100', 'jobq'): """
        SELECT array_agg(id), array_agg(token), array_agg(payload) INTO ids, tokens, payloads
            FROM jobq_claim('bench', 'w', 100);
        IF cardinality(ids) IS DISTINCT FROM 100 THEN RAISE EXCEPTION 'short batch'; END IF;
        COMMIT;
        SELECT count(*) INTO k FROM jobq_complete_batch(ids, tokens);
        IF k <> 100 THEN RAISE EXCEPTION '% of 100 jobs completed', k; END IF;
        COMMIT;""",
    ('cycle100', 'ref'): """
        WITH c AS (UPDATE bench_ref.jobs SET status = 'running', attempts = attempts + 1,
                           locked_until = now() + interval '5 minutes'
                       WHERE id IN (SELECT id FROM bench_ref.jobs WHERE queue = 'bench'
                                    AND status = 'pending' AND run_at <= now()
                                    ORDER BY priority, run_at, id
                                    FOR UPDATE SKIP LOCKED LIMIT 100)
                       RETURNING id, payload)
            SELECT array_agg(id), array_agg(payload) INTO ids, payloads FROM c;
        IF cardinality(ids) IS DISTINCT FROM 100 THEN RAISE EXCEPTION 'short batch'; END IF;
        COMMIT;
        DELETE FROM bench_ref.jobs WHERE id = ANY (ids);
        GET DIAGNOSTICS k = ROW_COUNT;
        IF k <> 100 THEN RAISE EXCEPTION '% of 100 jobs completed', k; END IF;
        COMMIT;""",
}
# Ready jobs before every run: more than the warm-up and the largest loop
# take, and enough that the reference's batched claim finds its 100 rows by
# primary key as on large backlogs (at 10,000 the planner switches it to a
# hash join over a sequential scan of the table: 2.4 times the instructions)
INSTR_BACKLOG = 20000
# Iterations of the warm-up call before the measured one, in both runs: past
# the five custom plans after which the plan cache settles on a plan
INSTR_WARMUP = 6


def instr_proc(op, impl):
    return f'bench_instr_{op}_{impl}'


def instr_proc_sql(op, impl):
    return (f'CREATE OR REPLACE PROCEDURE {instr_proc(op, impl)}(n integer) '
            'LANGUAGE plpgsql AS $$\n'
            'DECLARE r record; ids bigint[]; tokens uuid[]; payloads jsonb[]; k bigint; ok boolean;\n'
            'BEGIN\n    FOR i IN 1..n LOOP' + INSTR_BODY[op, impl] + '\n    END LOOP;\nEND $$')


def log(msg):
    print(msg, flush=True)


class BenchError(Exception):
    pass


# ---------------------------------------------------------------------------
class Cluster:
    """A throwaway cluster run as the postgres OS user when we are root."""

    def __init__(self, port, settings):
        self.bindir = subprocess.check_output(['pg_config', '--bindir'], text=True).strip()
        self.dir = tempfile.mkdtemp(prefix='jobq-bench-', dir='/tmp')
        self.port = port
        self.settings = settings
        self.sock = os.path.join(self.dir, 'sock')
        self.data = os.path.join(self.dir, 'data')
        self.conninfo = f'host={self.sock} port={port} user=postgres dbname=postgres'
        self.root = os.geteuid() == 0

    def as_pg(self, cmd, **kw):
        if self.root:
            cmd = ['runuser', '-u', 'postgres', '--'] + cmd
        return subprocess.run(cmd, check=True, **kw)

    def init(self):
        os.makedirs(self.sock)
        os.chmod(self.dir, 0o755)
        if self.root:
            shutil.chown(self.dir, 'postgres', 'postgres')
            shutil.chown(self.sock, 'postgres', 'postgres')
        self.as_pg([f'{self.bindir}/initdb', '-D', self.data, '-U', 'postgres', '-A', 'trust'],
                   stdout=subprocess.DEVNULL)
        conf = [f"listen_addresses = ''", f'port = {self.port}',
                f"unix_socket_directories = '{self.sock}'"]
        conf += [f'{k} = {v}' for k, v in self.settings.items()]
        with open(os.path.join(self.data, 'postgresql.conf'), 'a') as f:
            f.write('\n'.join(conf) + '\n')

    def start(self):
        """Start the server; initdb first unless this is a restart."""
        if not os.path.exists(self.data):
            self.init()
        self.as_pg([f'{self.bindir}/pg_ctl', '-D', self.data, '-l',
                    os.path.join(self.dir, 'server.log'), '-w', 'start'],
                   stdout=subprocess.DEVNULL)
        with open(os.path.join(self.data, 'postmaster.pid')) as f:
            self.pm_pid = int(f.readline())

    def stop(self):
        try:
            self.as_pg([f'{self.bindir}/pg_ctl', '-D', self.data, '-m', 'fast', '-w', 'stop'],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except subprocess.CalledProcessError:
            pass

    def destroy(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def callgrind(self, script, dbname='postgres', label=None, settings=None):
        """Instructions (callgrind's Ir) that a single-user backend executes
        to run script, one statement a line; the server must be stopped.
        jobq is not preloaded: a single-user backend starts no sweeper.
        With BENCH_CALLGRIND_DIR set, the profile is kept there as
        LABEL.callgrind (for callgrind_annotate: where the instructions go).
        settings: more -c name=value for the backend."""
        out = os.path.join(self.dir, 'callgrind.out')     # the postgres user writes it
        if os.path.exists(out):
            os.unlink(out)
        cmd = ['valgrind', '--tool=callgrind', f'--callgrind-out-file={out}',
               f'{self.bindir}/postgres', '--single', '-D', self.data,
               '-c', 'shared_preload_libraries=', '-c', 'lc_messages=C']
        for k, v in (settings or {}).items():
            cmd += ['-c', f'{k}={v}']
        cmd.append(dbname)
        try:
            r = self.as_pg(cmd, input=script, capture_output=True, text=True, timeout=3600)
        except subprocess.CalledProcessError as e:
            raise BenchError(f'callgrind failed (rc {e.returncode}): {e.stderr.strip()[-400:]}')
        # a failed statement does not end a single-user backend: look for its message
        failed = re.findall(r'^.*\b(?:ERROR|FATAL|PANIC):.*$', r.stdout + r.stderr, re.M)
        if failed:
            raise BenchError(f'single-user backend: {" / ".join(failed[:3])}')
        keep = os.environ.get('BENCH_CALLGRIND_DIR')
        if keep and label:
            os.makedirs(keep, exist_ok=True)
            shutil.copyfile(out, os.path.join(keep, f'{label}.callgrind'))
        with open(out) as f:
            for line in f:
                if line.startswith(('summary:', 'totals:')):
                    return int(line.split()[1])
        raise BenchError(f'no summary or totals line in {out}')

    def sql(self, sql, timeout=3600):
        r = subprocess.run(['psql', '-X', '-qAt', '-v', 'ON_ERROR_STOP=1', '-d', self.conninfo,
                            '-c', sql], capture_output=True, text=True, timeout=timeout)
        if r.returncode != 0:
            raise BenchError(f'psql failed: {sql[:200]}: {r.stderr.strip()}')
        return r.stdout.strip()

    def sqls(self, *stmts):
        """Several statements, each in its own transaction (VACUUM, CHECKPOINT)."""
        cmd = ['psql', '-X', '-qAt', '-v', 'ON_ERROR_STOP=1', '-d', self.conninfo]
        for s in stmts:
            cmd += ['-c', s]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise BenchError(f'psql failed: {stmts}: {r.stderr.strip()}')
        return r.stdout.strip()

    def sql_file(self, path):
        r = subprocess.run(['psql', '-X', '-qAt', '-v', 'ON_ERROR_STOP=1', '-d', self.conninfo,
                            '-f', path], capture_output=True, text=True)
        if r.returncode != 0:
            raise BenchError(f'psql -f {path} failed: {r.stderr.strip()}')

    def cpu_ticks(self):
        """CPU ticks of the whole server: the postmaster (with its reaped
        children, cutime/cstime) plus every live child."""
        total = 0
        for pid in os.listdir('/proc'):
            if not pid.isdigit():
                continue
            try:
                with open(f'/proc/{pid}/stat') as f:
                    st = f.read()
            except OSError:
                continue
            fields = st[st.rindex(')') + 2:].split()
            ppid = int(fields[1])
            utime, stime, cutime, cstime = (int(x) for x in fields[11:15])
            if int(pid) == self.pm_pid:
                total += utime + stime + cutime + cstime
            elif ppid == self.pm_pid:
                total += utime + stime
        return total


# ---------------------------------------------------------------------------
class Bench:
    # what bench/scale.py uses of this module
    Error = BenchError
    log = staticmethod(log)
    worker, persistent_handler, pgb = WORKER, PERSISTENT_HANDLER, PGB

    def __init__(self, args, cluster, out):
        self.a = args
        self.m = dict(MODES[args.mode])
        self.sm = dict(scale.SCALE_MODES[args.mode])    # sizes of the scale rows
        for k in ('backlog_max', 'soak_jobs', 'hold_seconds'):
            if getattr(args, k, None):
                self.sm[k] = getattr(args, k)
        self.scale_series = {}  # name -> what bench/scale.py plots
        if args.reps:
            self.m['reps'] = args.reps
        if getattr(args, 'counts_history', 0):
            self.m['counts_history'] = args.counts_history
        if args.soak_seconds is not None:
            self.m['soak_seconds'] = args.soak_seconds
        self.c = cluster
        self.out = out
        self.results = {}       # key -> dict(values=[...], unit, extra=[...])
        self.errors = []
        self.series = {}        # name -> list of (x, y) for plots
        self.latencies = {}     # mode -> sorted list of ms (best rep)
        self.notes = []
        self.ticks = os.sysconf('SC_CLK_TCK')
        self.has_driver = os.access(DRIVER, os.X_OK)
        self.has_worker = os.access(WORKER, os.X_OK) and os.access(HANDLER, os.X_OK)

    # -- bookkeeping ------------------------------------------------------
    def record(self, key, value, unit, **extra):
        r = self.results.setdefault(key, dict(values=[], unit=unit, extra=[]))
        r['values'].append(value)
        r['extra'].append(extra)
        ex = ' '.join(f'{k}={v:.4g}' if isinstance(v, float) else f'{k}={v}'
                      for k, v in extra.items())
        log(f'  {key}: {value:.4g} {unit} {ex}')

    def guard(self, what, fn, *a, **kw):
        try:
            return fn(*a, **kw)
        except (BenchError, subprocess.SubprocessError, OSError, ValueError) as e:
            msg = f'{what}: {e}'
            self.errors.append(msg)
            log(f'  ERROR {msg}')
            return None

    # -- database helpers ---------------------------------------------------
    def setup(self):
        self.c.sql('CREATE EXTENSION jobq')
        self.c.sql("SELECT jobq_create_queue('bench', completed_retention => '0')")
        self.c.sql_file(os.path.join(PGB, 'ref_schema.sql'))
        self.c.sql_file(os.path.join(PGB, 'min_schema.sql'))

    def reset(self, retention='0'):
        self.c.sql('TRUNCATE jobq.jobs, jobq.history, jobq.stale_acks, bench_ref.jobs, bench_min.jobs; '
                   f"SELECT jobq_alter_queue('bench', completed_retention => '{retention}')")

    def reset_sql(self, retention='0'):
        return ['TRUNCATE jobq.jobs, jobq.history, jobq.stale_acks, bench_ref.jobs, bench_min.jobs',
                f"SELECT FROM jobq_alter_queue('bench', completed_retention => '{retention}')"]

    def fill_jobq_sql(self, n):
        out, done = [], 0
        while done < n:
            k = min(10000, n - done)
            out.append("SELECT FROM jobq_enqueue_batch('bench', ARRAY("
                       f'SELECT {PAYLOAD_SQL} FROM generate_series(1, {k}) g))')
            done += k
        return out

    def fill_ref_sql(self, n, impl='ref'):
        if impl == 'min':
            return [f'INSERT INTO bench_min.jobs (payload) SELECT {PAYLOAD_SQL} '
                    f'FROM generate_series(1, {n}) g']
        return [f"INSERT INTO bench_ref.jobs (queue, payload) SELECT 'bench', {PAYLOAD_SQL} "
                f'FROM generate_series(1, {n}) g']

    def prep(self, stmts, impl):
        """Run stmts, VACUUM ANALYZE, CHECKPOINT; return the live row count."""
        return self.c.sqls(*stmts, f'VACUUM ANALYZE {ALL_TABLES}',
                           'CHECKPOINT', f'SELECT count(*) FROM {table(impl)}')

    def fill_jobq(self, n):
        done = 0
        while done < n:
            k = min(10000, n - done)
            self.c.sql("SELECT count(*) FROM jobq_enqueue_batch('bench', ARRAY("
                       f'SELECT {PAYLOAD_SQL} FROM generate_series(1, {k}) g))')
            done += k

    def fill_ref(self, n):
        self.c.sql(f"INSERT INTO bench_ref.jobs (queue, payload) SELECT 'bench', {PAYLOAD_SQL} "
                   f'FROM generate_series(1, {n}) g')

    def settle(self):
        self.c.sqls(f'VACUUM ANALYZE {ALL_TABLES}', 'CHECKPOINT')

    def has_valgrind(self):
        return shutil.which('valgrind') is not None

    def count(self, impl):
        return int(self.c.sql(f'SELECT count(*) FROM {table(impl)}'))

    def measure(self, fn):
        """Run fn, return (its result, server CPU seconds, WAL bytes)."""
        lsn = self.c.sql('SELECT pg_current_wal_lsn()')
        t0 = self.c.cpu_ticks()
        res = fn()
        t1 = self.c.cpu_ticks()
        wal = int(float(self.c.sql(f"SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '{lsn}')")))
        return res, (t1 - t0) / self.ticks, wal

    # -- runners ----------------------------------------------------------
    def pgbench(self, script, clients, t=None, T=None, progress=None, extra=()):
        cmd = ['pgbench', '-n', '-M', 'prepared', '-c', str(clients),
               '-j', str(min(clients, NCPU)), '-f', os.path.join(PGB, script)] + list(extra)
        if t is not None:
            cmd += ['-t', str(t)]
        if T is not None:
            cmd += ['-T', str(T)]
        if progress:
            cmd += ['-P', str(progress)]
        cmd.append(self.c.conninfo)
        r = subprocess.run(cmd, capture_output=True, text=True)
        out = r.stdout + r.stderr
        if T is not None and r.returncode == 0 and \
                re.search(r'number of transactions actually processed: 0\b', out):
            # the clients spent the whole -T connecting (a stalled, shared machine): once more
            self.notes.append(f'pgbench {script} -c {clients} -T {T} processed nothing '
                              'and was run again')
            r = subprocess.run(cmd, capture_output=True, text=True)
            out = r.stdout + r.stderr
        m = re.search(r'tps = ([0-9.]+) \(without initial connection time\)', out)
        failed = re.search(r'number of failed transactions: (\d+)', out)
        if r.returncode != 0 or m is None or (failed and int(failed.group(1)) > 0):
            tail = '\n'.join(out.strip().splitlines()[-5:])
            raise BenchError(f'pgbench {script} -c {clients} failed (rc {r.returncode}): {tail}')
        return float(m.group(1)), out

    def driver(self, *args):
        if not self.has_driver:
            raise BenchError('bench/driver is not built')
        r = subprocess.run([DRIVER] + list(args) + ['-d', self.c.conninfo],
                           capture_output=True, text=True)
        m = re.search(r'jobs=(\d+) seconds=([0-9.]+) rate=([0-9.]+) errors=(\d+)', r.stdout)
        if r.returncode != 0 or m is None:
            raise BenchError(f'driver {" ".join(args)} failed (rc {r.returncode}): '
                             f'{r.stderr.strip()[-400:]}')
        if int(m.group(4)):
            raise BenchError(f'driver {" ".join(args)}: {m.group(4)} errors')
        return int(m.group(1)), float(m.group(2)), float(m.group(3))

    # -- (1) enqueue --------------------------------------------------------
    def bench_enqueue(self):
        log('== enqueue')
        T = self.m['enq_seconds']
        for rep in range(self.m['reps']):
            for c in self.m['clients']:
                for impl in self.m['enq_impls']:
                    if impl == 'driver' and not self.has_driver:
                        continue
                    self.guard(f'enqueue {impl} c={c}', self._enqueue1, impl, c, T)
            for impl in ('ref', 'min', 'jobq', 'driver'):
                if impl == 'driver' and not self.has_driver:
                    continue
                self.guard(f'enqueue batch {impl}', self._enqueue_batch, impl)

    def _enqueue1(self, impl, c, T):
        notify = 'false' if impl == 'jobq-nonotify' else 'true'
        self.c.sqls(*self.reset_sql(), f"SELECT FROM jobq_alter_queue('bench', notify => {notify})",
                    'CHECKPOINT')
        if impl == 'driver':
            (jobs, secs, rate), cpu, wal = self.measure(
                lambda: self.driver('enqueue', '-c', str(c), '-T', str(T)))
        else:
            script = 'jobq' if impl.startswith('jobq') else impl
            (tps, _), cpu, wal = self.measure(
                lambda: self.pgbench(f'{script}_enqueue.sql', c, T=T))
            rate = tps
            jobs = self.count(impl)
            if impl == 'jobq-nonotify':
                self.c.sql("SELECT FROM jobq_alter_queue('bench', notify => true)")
        self.record(f'enqueue/{impl}/c{c}', rate, 'jobs/s',
                    cpu_ms_per_1k=1e6 * cpu / max(jobs, 1), wal_bytes_per_job=wal / max(jobs, 1))

    def _enqueue_batch(self, impl):
        self.c.sqls(*self.reset_sql(), 'CHECKPOINT')
        n = self.m['enq_batches']
        if impl == 'driver':
            (jobs, secs, rate), cpu, wal = self.measure(
                lambda: self.driver('enqueue-batch', '-c', '1', '-n', str(n), '-s', '1000'))
        else:
            (tps, _), cpu, wal = self.measure(
                lambda: self.pgbench(f'{impl}_enqueue_batch.sql', 1, t=n))
            rate = tps * 1000
            jobs = self.count(impl)
        self.record(f'enqueue_batch/{impl}', rate, 'jobs/s',
                    cpu_ms_per_1k=1e6 * cpu / max(jobs, 1), wal_bytes_per_job=wal / max(jobs, 1))

    # -- (2) drain ----------------------------------------------------------
    def bench_drain(self):
        log('== drain')
        for rep in range(self.m['reps']):
            for c in self.m['drain_clients']:
                for b in (1, 100):
                    self.guard(f'drain ref c={c} b={b}', self._drain, 'ref', c, b, '0')
                    self.guard(f'drain min c={c} b={b}', self._drain, 'min', c, b, '0')
                    for ret in self.m['ret_single' if b == 1 else 'ret_batch']:
                        self.guard(f'drain jobq c={c} b={b} ret={ret}', self._drain,
                                   'jobq', c, b, ret)
                        if self.has_driver:
                            self.guard(f'drain driver c={c} b={b} ret={ret}', self._drain,
                                       'driver', c, b, ret)
                    if b == 100:
                        # the opt-in, at-most-once jobq_pop: one write per job;
                        # and the same written by hand, to compare like with like
                        self.guard(f'drain pop c={c} b={b}', self._drain, 'jobq', c, b, '0',
                                   key=f'drain/pop/c{c}/b{b}/ret0', script='jobq_pop_100.sql')
                        self.guard(f'drain ref pop c={c} b={b}', self._drain, 'ref', c, b, '0',
                                   key=f'drain/refpop/c{c}/b{b}', script='ref_pop_100.sql')
                        # and with completed history kept: a history row per popped job
                        self.guard(f'drain pop c={c} b={b} ret=1 day', self._drain, 'jobq', c,
                                   b, '1 day', key=f'drain/pop/c{c}/b{b}/ret1',
                                   script='jobq_pop_100.sql')

    def _drain(self, impl, c, b, ret, backlog=None, history=0, key=None, script=None):
        n = self.m['drain_single'] if b == 1 else self.m['drain_batch']
        if backlog is not None:
            n = self.m['scale_drain']
        per_client = max(1, n // (c * b))
        n = per_client * c * b
        slack = 0 if impl == 'driver' else 2 * c * b + 100
        total = n + slack if backlog is None else max(backlog, n + slack)
        stmts = self.reset_sql(ret) + (self.fill_ref_sql(total, impl) if impl in REF_TABLES
                                       else self.fill_jobq_sql(total))
        if history:
            self.fill_history(history)
        before = int(self.prep(stmts, impl))
        if impl == 'driver':
            if backlog is not None:
                raise BenchError('driver drains to empty; use pgbench for backlogs')
            (jobs, secs, rate), cpu, wal = self.measure(
                lambda: self.driver('drain', '-c', str(c), '-b', str(b)))
        else:
            (tps, _), cpu, wal = self.measure(
                lambda: self.pgbench(script or f'{impl}_drain_{b}.sql', c, t=per_client))
            rate = tps * b
        jobs = before - self.count(impl)
        if jobs <= 0:
            raise BenchError('nothing was drained')
        if key is None:
            key = f'drain/{impl}/c{c}/b{b}' + ('' if impl in REF_TABLES else f'/ret{ret != "0":d}')
        self.record(key, rate, 'jobs/s', jobs=jobs,
                    cpu_ms_per_1k=1e6 * cpu / jobs, wal_bytes_per_job=wal / jobs)

    # -- timed drains at 1, 4 and 16 clients (--only drains; issue 20 part 2) --
    # The drain rows of bench_drain, history off, at DRAINS_CLIENTS in every
    # mode (quick and smoke drain at one client count only): the two
    # hand-written queues, jobq through plain SQL calls (pgbench) and through
    # libjobq, single-job and batched, alternating within each rep, under the
    # drain rows' keys.  Opt-in: the full mode's drain rows are the same.
    # Also the WAL fsyncs per job (pg_stat_wal.wal_sync of the run).
    def bench_drains(self):
        log('== drains')
        impls = ['ref', 'min', 'jobq', 'driver']
        for rep in range(self.m['reps']):
            for c in DRAINS_CLIENTS:
                for b in (1, 100):
                    # each rep starts the group with the next one: the first
                    # single-job drain at 1 client of a rep, fsync-bound right
                    # behind the batched drains at 16 clients, was the slowest
                    # of its group in every rep (whichever queue it drained)
                    for impl in impls[rep % 4:] + impls[:rep % 4]:
                        if impl == 'driver' and not self.has_driver:
                            continue
                        self.guard(f'drains {impl} c={c} b={b}', self._drains, impl, c, b)

    def _drains(self, impl, c, b):
        key = f'drain/{impl}/c{c}/b{b}' + ('' if impl in REF_TABLES else '/ret0')
        before = self.wal_syncs()
        self._drain(impl, c, b, '0')
        r = self.results[key]
        r['extra'][-1]['fsyncs_per_job'] = (self.wal_syncs() - before) / r['extra'][-1]['jobs']

    def wal_syncs(self):
        """WAL fsyncs of the cluster so far, once the clients' backends are gone
        (a backend's WAL statistics reach pg_stat_wal when it exits)."""
        for _ in range(50):
            if int(self.c.sql("SELECT count(*) FROM pg_stat_activity WHERE backend_type = "
                              "'client backend' AND pid <> pg_backend_pid()")) == 0:
                break
            time.sleep(0.05)
        return int(self.c.sql('SELECT wal_sync FROM pg_stat_wal'))

    def fill_history(self, rows):
        self.c.sql(self.history_sql(rows))

    def history_sql(self, rows):
        """Retained history, written directly (what completing that many jobs
        would leave behind), so that the full run need not drain 1M jobs."""
        return (
            'INSERT INTO jobq.history (id, queue, state, priority, run_at, attempt, max_attempts,'
            ' token, worker, enqueued_at, claimed_at, finished_at, payload)'
            " SELECT -g, 'bench', 'completed', 0, now(), 1, 25, gen_random_uuid(), 'bench',"
            f' now(), now(), now(), {PAYLOAD_SQL} FROM generate_series(1, {rows}) g')

    # -- (3) latency --------------------------------------------------------
    def bench_latency(self):
        log('== latency')
        allm = {'driver-notify': [], 'driver-poll50ms': ['--no-listen', '-p', '50'],
                'driver-blocking': ['--blocking'], 'worker-notify': ['--wait-mode=listen'],
                'worker-blocking': ['--wait-mode=blocking'],
                'persistent-blocking': ['--wait-mode=blocking', '--persistent=1'], 'os-spawn': []}
        modes = [(m, allm[m]) for m in self.m['lat_modes']
                 if self.has_driver and (m.startswith('driver') or self.has_worker)]
        if not self.has_driver:
            self.notes.append('latency not measured: bench/driver is not built')
        for rep in range(self.m['reps']):
            for name, opts in modes:
                self.guard(f'latency {name}', self._latency, name, opts)

    # -- (3b) idle waiters: what blocking claims cost producers ---------------
    def bench_waiters(self):
        log('== waiters')
        if not self.has_driver:
            self.notes.append('waiters not measured: bench/driver is not built')
            return
        for rep in range(self.m['reps']):
            for n in (0, self.m['waiters']):
                self.guard(f'waiters {n}', self._waiters, n)

    def _waiters(self, n):
        c = max(self.m['clients'])
        T = self.m['waiter_seconds']
        self.c.sqls(*self.reset_sql(), "SELECT FROM jobq_alter_queue('bench', notify => false)",
                    "SELECT jobq_create_queue('idle') WHERE NOT EXISTS "
                    "(SELECT FROM jobq_queues() WHERE queue = 'idle')", 'CHECKPOINT')
        waiters = None
        try:
            if n:
                waiters = subprocess.Popen([DRIVER, 'wait', '-q', 'idle', '-c', str(n),
                                            '-d', self.c.conninfo],
                                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                           start_new_session=True)
                deadline = time.time() + 60
                while int(self.c.sql('SELECT waiting FROM jobq_wait_stats()') or 0) < n:
                    if time.time() > deadline:
                        raise BenchError(f'{n} waiters did not all start waiting')
                    time.sleep(0.2)
            (tps, _), cpu, wal = self.measure(lambda: self.pgbench('jobq_enqueue.sql', c, T=T))
        finally:
            if waiters is not None:
                waiters.send_signal(signal.SIGTERM)
                try:
                    waiters.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(waiters.pid, signal.SIGKILL)   # the driver and its children
                    waiters.wait()
                # the waiters' backends end with their claims; wait for the
                # slots before the next benchmark connects
                deadline = time.time() + 30
                while int(self.c.sql('SELECT waiting FROM jobq_wait_stats()') or 0) > 0 \
                        and time.time() < deadline:
                    time.sleep(0.2)
            self.c.sql("SELECT FROM jobq_alter_queue('bench', notify => true)")
        self.record(f'waiters/{n}', tps, 'jobs/s', clients=c)

    # -- (3b') awaiters: what jobq_await costs producers and completes --------
    def bench_awaiters(self):
        log('== awaiters')
        for rep in range(self.m['reps']):
            for n in (0, self.m['waiters']):
                self.guard(f'awaiters {n}', self._awaiters, n)

    def _awaiting(self):
        return int(self.c.sql('SELECT awaiting FROM jobq_await_status()') or 0)

    def _awaiters(self, n):
        """pgbench jobq_enqueue, then jobq_soak (enqueue, claim, complete), with n
        sessions sitting in CALL jobq_await on jobs of another queue that never
        finish: the cost of jobq_await_note on every complete and of the check
        at every commit."""
        c = max(self.m['clients'])
        T = self.m['waiter_seconds']
        self.c.sqls(*self.reset_sql(), "SELECT FROM jobq_alter_queue('bench', notify => false)",
                    "SELECT jobq_create_queue('idle') WHERE NOT EXISTS "
                    "(SELECT FROM jobq_queues() WHERE queue = 'idle')", 'CHECKPOINT')
        procs = []
        try:
            if n:
                ids = self.c.sql("SELECT string_agg(jobq_enqueue('idle', '{}')::text, ',') "
                                 f'FROM generate_series(1, {n})').split(',')
                for i in ids:
                    procs.append(subprocess.Popen(
                        ['psql', '-X', '-qAt', '-d', self.c.conninfo,
                         '-c', f"CALL jobq_await({i}, '1 hour')"],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                        start_new_session=True))
                deadline = time.time() + 60
                while self._awaiting() < n:
                    if time.time() > deadline:
                        raise BenchError(f'{n} awaiters did not all start waiting')
                    time.sleep(0.2)
            (enq, _), _, _ = self.measure(lambda: self.pgbench('jobq_enqueue.sql', c, T=T))
            (cycle, _), _, _ = self.measure(lambda: self.pgbench('jobq_soak.sql', c, T=T))
        finally:
            if procs:
                # a cancel ends each wait at once (a client that just went
                # away is noticed only at the await's next recheck)
                self.c.sql("SELECT count(pg_cancel_backend(pid)) FROM pg_stat_activity "
                           "WHERE query LIKE 'CALL jobq_await(%'")
                for p in procs:
                    try:
                        p.wait(timeout=30)
                    except subprocess.TimeoutExpired:
                        os.killpg(p.pid, signal.SIGKILL)
                        p.wait()
                deadline = time.time() + 30
                while self._awaiting() > 0 and time.time() < deadline:
                    time.sleep(0.2)
            self.c.sql("SELECT FROM jobq_alter_queue('bench', notify => true)")
        self.record(f'awaiters/enqueue/{n}', enq, 'jobs/s', clients=c)
        self.record(f'awaiters/cycle/{n}', cycle, 'jobs/s', clients=c)

    # -- (3c) what a waiting claim holds back from vacuum ---------------------
    def bench_horizon(self):
        """Churn on 'bench' (retention 0: every job leaves dead rows in
        jobq.jobs), then VACUUM; without and with one claim waiting on an idle
        queue through the churn.  One run each: informational, no target."""
        log('== horizon (what a waiting claim holds back from vacuum)')
        for n in (0, 1):
            self.guard(f'horizon waiter={n}', self._horizon, n)

    def _horizon(self, n):
        T = self.m['horizon_seconds']
        W = self.m['horizon_wait']
        c = 4
        app = 'jobq-bench-horizon'
        self.c.sqls(*self.reset_sql(), *self.fill_jobq_sql(1000),
                    "SELECT jobq_create_queue('idle') WHERE NOT EXISTS "
                    "(SELECT FROM jobq_queues() WHERE queue = 'idle')",
                    'VACUUM ANALYZE jobq.jobs', 'CHECKPOINT')
        waiter = None
        try:
            if n:
                # a psql of its own, named, so that its backend can be found and cancelled
                waiter = subprocess.Popen(
                    ['psql', '-X', '-qAt', '-d', f'{self.c.conninfo} application_name={app}',
                     '-c', f"SELECT * FROM jobq_claim('idle', 'bench-horizon', 1, NULL, "
                           f"wait => '{W} seconds')"],
                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                deadline = time.time() + 30
                while not self.c.sql('SELECT pid FROM pg_stat_activity WHERE application_name = '
                                     f"'{app}' AND wait_event_type = 'Extension'"):
                    if waiter.poll() is not None:
                        raise BenchError(f'the waiting claim ended: {waiter.stderr.read()[-300:]}')
                    if time.time() > deadline:
                        raise BenchError('the waiting claim did not start waiting')
                    time.sleep(0.1)
            tps, out = self.pgbench('jobq_soak.sql', c, T=T)
            jobs = int(re.search(r'number of transactions actually processed: (\d+)', out).group(1))
            # how far back the horizon is held: the waiter's xmin, or without
            # one the oldest xmin of any other backend (sweeper, autovacuum)
            who = f"application_name = '{app}'" if n else 'pid <> pg_backend_pid()'
            xmin_age = int(self.c.sql('SELECT coalesce(max(age(backend_xmin)), 0) '
                                      f'FROM pg_stat_activity WHERE {who}'))
            size = int(self.c.sql("SELECT pg_total_relation_size('jobq.jobs')"))
            removed, remain, kept, cutoff_age = self.vacuum_verbose()
            if n and waiter.poll() is not None:
                raise BenchError('the waiting claim ended before VACUUM did (wait too short)')
        finally:
            if waiter is not None:
                if waiter.poll() is None:
                    self.c.sql(f"SELECT pg_cancel_backend(pid) FROM pg_stat_activity "
                               f"WHERE application_name = '{app}'")
                try:
                    waiter.communicate(timeout=30)
                except subprocess.TimeoutExpired:
                    waiter.kill()
                    waiter.communicate()
                # the backend releases its snapshot as it aborts the statement,
                # maybe after psql has its error: wait for the backend to end
                deadline = time.time() + 30
                while int(self.c.sql('SELECT count(*) FROM pg_stat_activity WHERE '
                                     f"application_name = '{app}'")) > 0 \
                        or int(self.c.sql('SELECT waiting FROM jobq_wait_stats()') or 0) > 0:
                    if time.time() > deadline:
                        raise BenchError('the waiting claim did not end after its cancel')
                    time.sleep(0.1)
        after = {}
        if n:
            # once the wait is over, the next VACUUM removes what it held back
            a_removed, _, a_kept, _ = self.vacuum_verbose()
            after = dict(removed_after=a_removed, kept_after=a_kept)
        self.record(f'horizon/waiter{n}', kept, 'rows', jobs_per_s=tps, jobs=jobs, removed=removed,
                    remain=remain, xmin_age=xmin_age, cutoff_age=cutoff_age, size_bytes=size,
                    seconds=T, wait=W if n else 0, clients=c, **after)

    def vacuum_verbose(self, rel='jobq.jobs'):
        """VACUUM (VERBOSE) rel; return its tuples removed, remaining, dead but
        not yet removable, and the age of its removable cutoff in XIDs."""
        # VACUUM VERBOSE reports as INFO, which psql prints on stderr
        r = subprocess.run(['psql', '-X', '-qAt', '-v', 'ON_ERROR_STOP=1', '-d', self.c.conninfo,
                            '-c', "SET lc_messages = 'C'", '-c', f'VACUUM (VERBOSE) {rel}'],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise BenchError(f'VACUUM failed: {r.stderr.strip()[-300:]}')
        m = re.search(r'finished vacuuming "[^"]*\.' + re.escape(rel) + r'".*?'
                      r'tuples: (\d+) removed, (\d+) remain, (\d+) are dead but not yet removable'
                      r'.*?removable cutoff: \d+, which was (-?\d+) XIDs old', r.stderr, re.S)
        if m is None:
            raise BenchError(f'no tuples line in VACUUM VERBOSE: {r.stderr.strip()[-300:]}')
        return tuple(int(x) for x in m.groups())

    def _latency(self, name, opts):
        self.reset('0')
        n = self.m['lat_jobs']
        d = self.out
        plog, clog = os.path.join(d, 'produce.log'), os.path.join(d, 'consume.log')
        for f in (plog, clog):
            if os.path.exists(f):
                os.unlink(f)
        if name == 'os-spawn':
            # the baseline of the worker rows: vfork + exec of the handler alone
            r = subprocess.run([DRIVER, 'spawn', '-n', str(n), '-i', '5', '-o', plog, '-x', HANDLER],
                               env=dict(os.environ, JOBQ_BENCH_LOG=clog),
                               capture_output=True, text=True)
            if r.returncode != 0:
                raise BenchError(f'spawn failed: {r.stderr[-300:]}')
            cons = None
        elif name.startswith(('worker', 'persistent')):
            env = dict(os.environ, JOBQ_BENCH_LOG=clog)
            # persistent: one process taking the 4 jobs; it logs when it reads a job's line
            handler = ([PERSISTENT_HANDLER, '4'] if name.startswith('persistent') else [HANDLER])
            cons = subprocess.Popen([WORKER, '-d', self.c.conninfo, '-q', 'bench', '-c', '4',
                                     '--sweep-interval=0', '--log-file', os.path.join(d, 'worker.log')]
                                    + opts + ['--'] + handler, env=env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        else:
            cons = subprocess.Popen([DRIVER, 'consume', '-c', '4', '-o', clog, '-d',
                                     self.c.conninfo] + opts,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if cons is not None:
            self._produce_and_wait(cons, n, plog, clog)
        prod = dict(tuple(map(int, l.split())) for l in open(plog))
        cons_t = {}
        if os.path.exists(clog):
            for l in open(clog):
                i, t = map(int, l.split())
                cons_t.setdefault(i, t)
        lat = sorted((cons_t[i] - t) / 1e6 for i, t in prod.items() if i in cons_t)
        if len(lat) < n:
            raise BenchError(f'{n - len(lat)} of {n} jobs were not started')
        p50, p99, mx = pct(lat, 50), pct(lat, 99), lat[-1]
        self.record(f'latency/{name}/p50', p50, 'ms')
        self.record(f'latency/{name}/p95', pct(lat, 95), 'ms')
        self.record(f'latency/{name}/p99', p99, 'ms')
        self.record(f'latency/{name}/max', mx, 'ms')
        best = self.latencies.get(name)
        if best is None or p99 < pct(best, 99):
            self.latencies[name] = lat

    def _produce_and_wait(self, cons, n, plog, clog):
        """Enqueue n jobs 5 ms apart while the consumers cons run, until
        every job has started (or 30 s), then stop the consumers."""
        try:
            time.sleep(1.0)     # all idle and listening
            if cons.poll() is not None:
                raise BenchError(f'consumers exited: {cons.stderr.read().decode()[-300:]}')
            r = subprocess.run([DRIVER, 'produce', '-n', str(n), '-i', '5', '-o', plog,
                                '-d', self.c.conninfo], capture_output=True, text=True)
            if r.returncode != 0:
                raise BenchError(f'producer failed: {r.stderr[-300:]}')
            deadline = time.time() + 30
            while time.time() < deadline:
                if os.path.exists(clog) and sum(1 for _ in open(clog)) >= n:
                    break
                time.sleep(0.1)
        finally:
            cons.send_signal(signal.SIGTERM)
            try:
                cons.wait(timeout=30)
            except subprocess.TimeoutExpired:
                cons.kill()
                cons.wait()

    # -- (4) scale ----------------------------------------------------------
    def bench_scale(self):
        log('== scale (backlog)')
        for bl in self.m['backlogs']:
            for impl in ('ref', 'jobq'):
                self.guard(f'scale {impl} {bl}', self._scale, impl, bl, '0', 0,
                           f'scale/{impl}/backlog{bl}')
        if self.m['history_rows']:
            self.guard('scale jobq history off', self._scale, 'jobq', 10000, '1 day', 0,
                       'scale/jobq/ret1/history0')
            self.guard('scale jobq history', self._scale, 'jobq', 10000, '1 day',
                       self.m['history_rows'], f'scale/jobq/ret1/history{self.m["history_rows"]}')

    def _scale(self, impl, backlog, ret, history, key):
        """Fill the backlog once, then --reps times: drain scale_drain jobs
        (single-job, 4 pgbench clients) and top the backlog up again."""
        c = 4
        per_client = max(1, self.m['scale_drain'] // c)
        n = per_client * c
        fill = self.fill_ref_sql if impl == 'ref' else self.fill_jobq_sql
        stmts = self.reset_sql(ret) + fill(backlog)
        if history:
            stmts.append(self.history_sql(history))
        before = int(self.prep(stmts, impl))
        for rep in range(self.m['reps']):
            (tps, _), cpu, wal = self.measure(
                lambda: self.pgbench(f'{impl}_drain_1.sql', c, t=per_client))
            after = self.count(impl)
            jobs = before - after
            if jobs <= 0:
                raise BenchError('nothing was drained')
            self.record(key, tps, 'jobs/s', jobs=jobs, backlog=before,
                        cpu_ms_per_1k=1e6 * cpu / jobs, wal_bytes_per_job=wal / jobs)
            before = int(self.c.sqls(*fill(backlog - after), f'SELECT count(*) FROM '
                                     f'{"bench_ref.jobs" if impl == "ref" else "jobq.jobs"}'))

    # -- counts -------------------------------------------------------------
    def bench_counts(self):
        """Milliseconds per call of jobq_counts, jobq_stats and the 0.1.0
        jobq_stats statement for queue 'bench' with 10,000 ready jobs and no
        history, then with counts_history rows of history (vacuumed, and
        the counters rebuilt).  Each figure: calls in a PL/pgSQL loop for
        about a second, at least 3."""
        n = self.m['counts_history']
        log(f'== counts (history {n:,} rows)')
        self.guard('counts', self._counts, n)

    def _counts(self, n):
        self.reset('1 day')
        self.fill_jobq(10000)
        self.c.sql('CREATE OR REPLACE FUNCTION public.bench_ms(stmt text, n int) RETURNS float8'
                   ' LANGUAGE plpgsql AS $$DECLARE t0 timestamptz := clock_timestamp(); BEGIN'
                   ' FOR i IN 1..n LOOP EXECUTE stmt; END LOOP;'
                   ' RETURN extract(epoch FROM clock_timestamp() - t0) * 1000 / n; END$$;'
                   ' SELECT 1')  # a session of its own per call: not pg_temp
        for rows in (0, n):
            if rows:
                self.c.sql(self.history_sql(rows))
            self.c.sqls('VACUUM ANALYZE jobq.jobs', 'VACUUM ANALYZE jobq.history',
                        "SELECT count(*) FROM jobq_counts_reconcile('bench')")
            exact = self.c.sql("SELECT exact FROM jobq_counts('bench')")
            for name, stmt in COUNTS_CALLS:
                q = stmt.replace("'", "''")
                for rep in range(self.m['reps']):
                    one = float(self.c.sql(f"SELECT public.bench_ms('{q}', 1)"))
                    calls = max(3, min(1000, int(1000 / max(one, 0.001))))
                    ms = float(self.c.sql(f"SELECT public.bench_ms('{q}', {calls})"))
                    self.record(f'counts/{name}/history{rows}', ms, 'ms/call', calls=calls,
                                exact=exact)

    # -- flows (issue 18) -----------------------------------------------------
    def bench_flows(self):
        """Completes per second, each complete its own transaction (a
        PL/pgSQL procedure committing after each), of N claimed jobs: with
        no dependents (the complete of before flows plus one test), with one
        waiting dependent each (the flow path: the child readied), and of
        10,000 parents of one child (a fan-in: each complete decrements the
        same child), completed by another session than the one that claimed
        them (the statements); and the first two completed by the claiming
        session (_claimer: the direct complete, as jobq-worker's).  Retention
        0.  doc/flows.md quotes these figures."""
        log('== flows (completes/s: no dependents, one dependent, a 10,000-into-1 fan-in)')
        self.guard('flows', self._flows)

    def _flows(self):
        n = self.m['flows_jobs']
        self.c.sql('CREATE OR REPLACE PROCEDURE public.bench_complete_claimed(INOUT ms float8 DEFAULT NULL)'
                   ' LANGUAGE plpgsql AS $$DECLARE r record; t0 timestamptz := clock_timestamp();'
                   ' BEGIN FOR r IN SELECT id, token FROM public.bench_claimed ORDER BY id LOOP'
                   '   IF NOT jobq_complete(r.id, r.token) THEN RAISE EXCEPTION \'complete %\', r.id; END IF;'
                   '   COMMIT; END LOOP;'
                   ' ms := extract(epoch FROM clock_timestamp() - t0) * 1000; END$$')
        one_dependent = "SELECT count(jobq_enqueue('bench', '{}', depends_on => ARRAY[id])) FROM jobq.jobs"
        # claimer: the session that claimed the jobs completes them (jobq-worker's
        # case: the direct complete, direct_complete.c); else another session does
        cases = [('none', n, "SELECT 1", False),
                 ('one_dependent', n, one_dependent, False),
                 ('fan_in_10000', 10000,
                  "SELECT jobq_enqueue('bench', '{}', depends_on => ARRAY(SELECT id FROM jobq.jobs))",
                  False),
                 ('none_claimer', n, "SELECT 1", True),
                 ('one_dependent_claimer', n, one_dependent, True)]
        for name, jobs, deps, claimer in cases:
            for rep in range(self.m['reps']):
                self.reset()
                self.c.sql('DROP TABLE IF EXISTS public.bench_claimed')
                self.fill_jobq(jobs)
                self.c.sql(deps)
                self.c.sql('CREATE TABLE public.bench_claimed (id bigint, token uuid)')
                claims = ["INSERT INTO public.bench_claimed"
                          " SELECT id, token FROM jobq_claim('bench', 'bench', 1000)"] * ((jobs + 999) // 1000)
                vacuum = ['VACUUM ANALYZE jobq.jobs', 'VACUUM ANALYZE jobq.deps']
                if claimer:
                    ms = float(self.c.sqls(*claims, *vacuum, 'CALL public.bench_complete_claimed()'))
                else:
                    for c in claims:
                        self.c.sql(c)
                    self.c.sqls(*vacuum)
                    ms = float(self.c.sql('CALL public.bench_complete_claimed()'))
                left = self.c.sql("SELECT count(*) FILTER (WHERE state = 'ready')"
                                  " || '/' || count(*) FROM jobq.jobs")
                self.record(f'flows/{name}', jobs * 1000.0 / ms, 'completes/s', jobs=jobs,
                            ready_after=left)

    # -- (5) soak -----------------------------------------------------------
    def bench_soak(self):
        S = self.m['soak_seconds']
        if not S:
            return
        log(f'== soak ({S} s each)')
        for impl in ('jobq', 'ref'):
            self.guard(f'soak {impl}', self._soak, impl, S)

    def _soak(self, impl, S):
        self.reset('1 day')
        if impl == 'ref':
            self.fill_ref(10000)
        else:
            self.fill_jobq(10000)
        self.settle()
        rel = 'jobq.jobs' if impl == 'jobq' else 'bench_ref.jobs'
        size0 = int(self.c.sql(f"SELECT pg_total_relation_size('{rel}')"))
        step = max(1, S // 60)
        # the size half-way through: a table that levels off is no bigger at the end
        mid = {}
        timer = threading.Timer(S / 2, lambda: mid.setdefault(
            'size', int(self.c.sql(f"SELECT pg_total_relation_size('{rel}')"))))
        timer.start()
        try:
            (tps, out), cpu, wal = self.measure(
                lambda: self.pgbench(f'{impl}_soak.sql', 4, T=S, progress=step))
        finally:
            timer.cancel()
            timer.join()
        size1 = int(self.c.sql(f"SELECT pg_total_relation_size('{rel}')"))
        hist = int(self.c.sql("SELECT pg_total_relation_size('jobq.history')")) if impl == 'jobq' else 0
        pts = [(float(a), float(b)) for a, b in
               re.findall(r'progress: ([0-9.]+) s, ([0-9.]+) tps', out)]
        if len(pts) < 10:
            raise BenchError('too few progress lines')
        self.series[f'soak-{impl}'] = pts
        tenth = max(1, len(pts) // 10)
        first = sum(y for _, y in pts[:tenth]) / tenth
        last = sum(y for _, y in pts[-tenth:]) / tenth
        self.record(f'soak/{impl}', tps, 'jobs/s', first_tenth=first, last_tenth=last,
                    ratio=last / first if first else 0.0, size_start=size0,
                    size_mid=mid.get('size', 0), size_end=size1, history_end=hist)

    # -- (6) worker and cost ----------------------------------------------
    def bench_worker(self):
        if not (self.has_worker and self.has_driver):
            self.notes.append('jobq-worker not measured: client/jobq-worker or bench/driver missing')
            return
        log('== jobq-worker (real handler: a process per job)')
        for rep in range(self.m['worker_reps']):
            for c in self.m['worker_conc']:
                self.guard(f'worker c={c}', self._worker, c)

    def bench_persistent(self):
        """jobq-worker --persistent with a no-op handler in C, Python and Node,
        against the libjobq driver's batched drain on one connection with the
        same batch (measured here, in the same run) and the process-per-job
        worker rows."""
        if not (self.has_worker and self.has_driver):
            self.notes.append('jobq-worker --persistent not measured: client/jobq-worker or '
                              'bench/driver missing')
            return
        log('== jobq-worker --persistent (no-op handlers in C, Python, Node)')
        # every rep: the driver, then each handler, so that the best of each comes
        # from the same stretch of a shared machine's load
        for rep in range(self.m['reps']):
            self.guard('persistent baseline: driver c=1', self._persistent_driver)
            for lang in PERSISTENT_NOOPS:
                self.guard(f'persistent {lang}', self._persistent, lang)

    def _persistent_driver(self):
        n = self.m['persistent_jobs']
        self.reset('0')
        self.fill_jobq(n)
        self.settle()
        ru0 = children_cpu()
        (jobs, secs, rate), cpu, wal = self.measure(
            lambda: self.driver('drain', '-c', '1', '-b', str(PERSISTENT_SLOTS)))
        client = children_cpu() - ru0 - self.measure_overhead
        self.record('persistent/driver', rate, 'jobs/s', cpu_ms_per_1k=1e6 * cpu / max(jobs, 1),
                    wal_bytes_per_job=wal / max(jobs, 1),
                    client_us_per_job=1e6 * client / max(jobs, 1))

    def _persistent(self, lang):
        n = self.m['persistent_jobs']
        self.reset('0')
        self.fill_jobq(n)
        self.settle()
        ru0 = children_cpu()
        (secs, rss), cpu, wal = self.measure(lambda: self.run_worker(
            ['-c', str(PERSISTENT_SLOTS), '--persistent=1', '--burst', '--sweep-interval=0',
             '--log-file', os.path.join(self.out, f'persistent-{lang}.log'), '--']
            + PERSISTENT_NOOPS[lang](PERSISTENT_SLOTS)))
        left = self.count('jobq')
        if left:
            raise BenchError(f'jobq-worker --persistent --burst left {left} jobs')
        # NB: the time includes starting the handler process (for Node and
        # Python, their runtime): the figure is what a user of --burst sees
        # the worker's CPU with its handler's (a child it reaps)
        client = children_cpu() - ru0 - self.measure_overhead
        self.record(f'persistent/{lang}', n / secs, 'jobs/s', rss_kb=rss[0],
                    cpu_ms_per_1k=1e6 * cpu / n, wal_bytes_per_job=wal / n,
                    client_us_per_job=1e6 * client / n)
        self.record(f'persistent_rss/{lang}', rss[0] / 1024, 'MB')

    @property
    def measure_overhead(self):
        """CPU seconds of the psql calls measure() makes around a run (its
        children too), measured once: subtracted from the client CPU."""
        if not hasattr(self, '_measure_overhead'):
            ru0 = children_cpu()
            self.measure(lambda: None)
            self._measure_overhead = children_cpu() - ru0
        return self._measure_overhead

    def run_worker(self, args):
        """Run jobq-worker with args against the bench queue until it exits;
        return (seconds, [peak VmRSS, peak VmHWM] in kB), sampled from /proc."""
        rss = [0, 0]
        t0 = time.monotonic()
        p = subprocess.Popen([WORKER, '-d', self.c.conninfo, '-q', 'bench'] + args,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        while p.poll() is None:
            try:
                with open(f'/proc/{p.pid}/status') as f:
                    for line in f:
                        if line.startswith('VmRSS:'):
                            rss[0] = max(rss[0], int(line.split()[1]))
                        elif line.startswith('VmHWM:'):
                            rss[1] = max(rss[1], int(line.split()[1]))
            except OSError:
                pass
            time.sleep(0.02)
        secs = time.monotonic() - t0
        if p.returncode != 0:
            raise BenchError(f'jobq-worker {" ".join(args[:4])} exited {p.returncode}: '
                             f'{p.stderr.read().decode()[-300:]}')
        return secs, rss

    def _worker(self, c):
        n = self.m['worker_jobs']
        self.reset('0')
        self.fill_jobq(n)
        self.settle()
        ru0 = children_cpu()
        (secs, rss), cpu, wal = self.measure(lambda: self.run_worker(
            ['-c', str(c), '--burst', '--sweep-interval=0', '--log-file',
             os.path.join(self.out, 'worker.log'), '--', HANDLER]))
        left = self.count('jobq')
        jobs = n - left
        if left:
            raise BenchError(f'jobq-worker --burst left {left} jobs')
        self.record(f'worker/c{c}', jobs / secs, 'jobs/s', rss_kb=rss[0], hwm_kb=rss[1],
                    cpu_ms_per_1k=1e6 * cpu / jobs, wal_bytes_per_job=wal / jobs)
        self.record(f'worker_rss/c{c}', max(rss) / 1024, 'MB')

    # -- profile --------------------------------------------------------------
    def profile(self):
        """auto_explain (ANALYZE, BUFFERS) of the statements jobq runs inside
        its C functions, and WAL bytes per call."""
        log('== profile')
        self.reset('0')
        self.fill_jobq(1000)
        self.settle()
        calls = [
            ('jobq_enqueue', "SELECT jobq_enqueue('bench', '{\"to\":\"user@example.com\",\"n\":1}')"),
            ('jobq_enqueue_batch (10)', "SELECT count(*) FROM jobq_enqueue_batch('bench', "
             "ARRAY(SELECT '{\"n\":1}'::jsonb FROM generate_series(1,10)))"),
            ('jobq_claim (1) + jobq_complete, retention 0',
             "SELECT jobq_complete(id, token) FROM jobq_claim('bench', 'p', 1)"),
            ('jobq_claim (100) + jobq_complete_batch',
             "WITH c AS (SELECT array_agg(id) i, array_agg(token) t FROM jobq_claim('bench', 'p', 100))"
             " SELECT count(*) FROM c, jobq_complete_batch(c.i, c.t)"),
        ]
        prelude = ("LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0; "
                   "SET auto_explain.log_analyze = on; SET auto_explain.log_buffers = on; "
                   "SET auto_explain.log_nested_statements = on; SET auto_explain.log_timing = on; "
                   "SET client_min_messages = log;")
        text = []
        for title, sql in calls:
            # the first call prepares the SPI plans; the profile is of the second
            lsn = self.c.sql('SELECT pg_current_wal_lsn()')
            r = subprocess.run(['psql', '-X', '-qAt', '-d', self.c.conninfo, '-c', prelude,
                                '-c', sql, '-c', sql], capture_output=True, text=True)
            wal = int(self.c.sql(f"SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '{lsn}')"))
            plans = r.stderr.split('LOG:  duration:')
            plans = [p for p in plans if p.strip()]
            half = plans[len(plans) // 2:] if len(plans) > 1 else plans
            text.append(f'### {title}\n\nWAL for two calls: {wal} bytes\n\n```\n' +
                        '\n'.join('duration:' + p.rstrip() for p in half) + '\n```\n')
        # the reference's statements, for comparison (EXPLAIN ANALYZE, BUFFERS)
        self.c.sqls('TRUNCATE bench_ref.jobs', *self.fill_ref_sql(1000),
                    'VACUUM ANALYZE bench_ref.jobs')
        claim = open(os.path.join(PGB, 'ref_drain_100.sql')).read().split('\n')[0]
        ref = [('reference claim (100)', 'EXPLAIN (ANALYZE, BUFFERS) ' + claim),
               ('reference complete (100)', 'EXPLAIN (ANALYZE, BUFFERS) DELETE FROM bench_ref.jobs'
                ' WHERE id = ANY ((SELECT array_agg(id) FROM bench_ref.jobs'
                " WHERE status = 'running')::bigint[])")]
        for title, sql in ref:
            lsn = self.c.sql('SELECT pg_current_wal_lsn()')
            plan = self.c.sql(sql)
            wal = int(float(self.c.sql(f"SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '{lsn}')")))
            text.append(f'### {title}\n\nWAL: {wal} bytes\n\n```\n{plan}\n```\n')
        self.profile_text = '\n'.join(text)

    # -- instructions per operation ---------------------------------------
    def bench_instructions(self):
        """Instructions per operation, counted by callgrind in a single-user
        backend: deterministic where the timed ratios are noise on a shared
        machine.  The cluster is stopped for each count and started again."""
        log('== instructions per operation (callgrind)')
        if shutil.which('valgrind') is None:
            raise BenchError('valgrind is not installed (apt-get install valgrind): '
                             'no instruction counts')
        ops = [op for op, _ in INSTR_OPS if op in self.m['instr']]   # smoke: no batch1000
        self.c.sqls(*(instr_proc_sql(op, impl) for op in ops for impl in ('jobq', 'ref', 'min')))
        for op in ops:
            for impl in ('jobq', 'ref', 'min'):
                self.guard(f'instr {op} {impl}', self._instructions, op, impl)

    def _instructions(self, op, impl):
        """The difference of two loop counts: start-up, warm-up and shutdown cancel."""
        small, large = self.m['instr'][op]
        ir_small = self._callgrind_loop(op, impl, small)
        ir_large = self._callgrind_loop(op, impl, large)
        self.record(f'instr/{op}/{impl}', (ir_large - ir_small) / (large - small),
                    'instructions', small=small, large=large, ir_small=ir_small,
                    ir_large=ir_large)

    def _callgrind_loop(self, op, impl, n):
        """Ir of a single-user backend that calls the loop of op INSTR_WARMUP
        times, then n times, over INSTR_BACKLOG freshly filled ready jobs."""
        fill = (self.fill_ref_sql(INSTR_BACKLOG, impl) if impl in REF_TABLES
                else self.fill_jobq_sql(INSTR_BACKLOG))
        self.prep(self.reset_sql('0') + fill, impl)
        proc = instr_proc(op, impl)
        # one CALL a line: single-user mode runs a line as one statement
        script = f'CALL {proc}({INSTR_WARMUP});\nCALL {proc}({n});\n'
        self.c.stop()
        try:
            return self.c.callgrind(script, label=f'{op}-{impl}-{n}')
        finally:
            self.c.start()

    # -- machine ------------------------------------------------------------
    def machine(self):
        info = {}
        info['cores'] = NCPU
        try:
            for line in open('/proc/cpuinfo'):
                if line.startswith('model name'):
                    info['cpu'] = line.split(':', 1)[1].strip()
                    break
            for line in open('/proc/meminfo'):
                if line.startswith('MemTotal'):
                    info['memory'] = f'{int(line.split()[1]) / 1048576:.1f} GiB'
        except OSError:
            pass
        info['kernel'] = platform.release()
        info['load'] = 'load average at start %.2f %.2f %.2f' % os.getloadavg()
        info['postgres'] = self.c.sql('SHOW server_version')
        info['fsync'] = self.fsync_figure()
        try:
            head = subprocess.run(['git', '-C', ROOT, 'rev-parse', '--short', 'HEAD'],
                                  capture_output=True, text=True).stdout.strip()
            dirty = subprocess.run(['git', '-C', ROOT, 'status', '--porcelain', 'extension', 'client'],
                                   capture_output=True, text=True).stdout.strip()
            libdir = subprocess.check_output(['pg_config', '--pkglibdir'], text=True).strip()
            so = os.path.join(libdir, 'jobq.so')
            mt = datetime.datetime.utcfromtimestamp(os.path.getmtime(so)).strftime('%Y-%m-%d %H:%M:%S')
            info['jobq'] = (f'repository at {head}' + (' with uncommitted changes in extension/ or client/'
                                                       if dirty else '') + f'; jobq.so installed {mt} UTC')
        except (OSError, subprocess.SubprocessError):
            pass
        return info

    def fsync_figure(self):
        path = os.path.join(self.c.dir, 'fsync.test')
        if self.a.mode == 'full':
            try:
                r = subprocess.run([f'{self.c.bindir}/pg_test_fsync', '-s', '2', '-f', path],
                                   capture_output=True, text=True, timeout=120)
                m = re.search(r'fdatasync\s+([0-9.,]+) ops/sec', r.stdout)
                if m:
                    return f'{m.group(1)} ops/sec (pg_test_fsync, one 8kB write + fdatasync)'
            except (subprocess.SubprocessError, OSError):
                pass
        # quick: the same figure, measured for 1 s here
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
        buf = b'\0' * 8192
        n, t0 = 0, time.monotonic()
        while time.monotonic() - t0 < 1.0:
            os.pwrite(fd, buf, 0)
            os.fdatasync(fd)
            n += 1
        os.close(fd)
        os.unlink(path)
        return f'{n / (time.monotonic() - t0):.0f} ops/sec (8kB write + fdatasync for 1 s)'


def pct(xs, p):
    if not xs:
        return float('nan')
    k = min(len(xs) - 1, max(0, int(round(p / 100 * len(xs) + 0.5)) - 1))
    return xs[k]


# ---------------------------------------------------------------------------
# Report

def best(results, key, higher=True):
    r = results.get(key)
    if not r or not r['values']:
        return None
    v = r['values']
    i = v.index(max(v) if higher else min(v))
    return dict(best=v[i], lo=min(v), hi=max(v), n=len(v), extra=r['extra'][i], unit=r['unit'])


def fmt(x):
    if x is None:
        return 'n/a'
    if abs(x) >= 100:
        return f'{x:,.0f}'
    if abs(x) >= 10:
        return f'{x:.1f}'
    return f'{x:.2f}'


def cell(b):
    if b is None:
        return 'n/a'
    if b['n'] > 1:
        return f"{fmt(b['best'])} ({fmt(b['lo'])}–{fmt(b['hi'])})"
    return fmt(b['best'])


Bench.best, Bench.cell, Bench.fmt = staticmethod(best), staticmethod(cell), staticmethod(fmt)


def instructions_section(w, R, settings):
    w('## Instructions per operation (callgrind)\n')
    w("Instructions that valgrind's callgrind counts in a single-user backend (`postgres "
      '--single`, the cluster stopped: no other backend, no sweeper, no autovacuum; jobq not '
      'preloaded, so a producer sends its own NOTIFY) running a PL/pgSQL procedure that loops '
      'over the statements of the pgbench scripts, with their commits (plans cached as with '
      f'`-M prepared`), over {INSTR_BACKLOG:,} freshly filled, vacuumed and checkpointed ready '
      f'jobs, retention 0, the settings above (`fsync = {settings.get("fsync", "?")}`, '
      f'`synchronous_commit = {settings.get("synchronous_commit", "?")}`). Each figure is the '
      'difference between a run of the large and one of the small loop count, divided by the '
      'difference of the counts, so start-up, warm-up and shutdown cancel out. User-space '
      'instructions only: the kernel (WAL fsync, I/O) and waits are not counted, and an '
      'instruction is not a unit of time; but the counts repeat from run to run (to within a '
      'few percent at the small loop counts of --smoke), where the timed ratios above can '
      'swing by tens of percent on a shared machine. One run each.\n')
    w('"reference" is the richer hand-written queue (`ref_*.sql`), "minimal" the queue of the '
      'articles (`min_*.sql`: no queue column, no priority, the claim returns ids only).\n')
    w('| operation (one iteration) | iterations | jobq | reference | jobq / reference '
      '(instructions) | reference / jobq (as a throughput ratio) | minimal | jobq / minimal |')
    w('|---|---|---:|---:|---:|---:|---:|---:|')
    for op, label in INSTR_OPS:
        j, r = best(R, f'instr/{op}/jobq', False), best(R, f'instr/{op}/ref', False)
        m = best(R, f'instr/{op}/min', False)
        its = f"{j['extra']['small']} → {j['extra']['large']}" if j else ''
        ratio = f"{j['best'] / r['best']:.2f}×" if j and r else 'n/a'
        inverse = f"{r['best'] / j['best']:.2f}×" if j and r else 'n/a'
        mratio = f"{j['best'] / m['best']:.2f}×" if j and m else 'n/a'
        w(f'| {label} | {its} | {cell(j)} | {cell(r)} | {ratio} | {inverse} | {cell(m)} | {mratio} |')
    w('')


def drains_section(w, R):
    """The timed drains of bench_drains (--only drains), when there are
    figures at more than one of their client counts."""
    cs = [c for c in DRAINS_CLIENTS if best(R, f'drain/ref/c{c}/b1')]
    if len(cs) < 2:
        return
    w('## Timed drains at 1, 4 and 16 clients\n')
    w('History off, best of the runs (`--only drains`): jobs per second of jobq through plain '
      'SQL calls (pgbench: `jobq_claim` + `jobq_complete` / `jobq_complete_batch`, claim and '
      'complete in two transactions, as the hand-written queues do) and through libjobq '
      '(`bench/driver`: each `jobq_complete_and_claim` completes the previous job or batch and '
      'claims the next in one transaction, as jobq-worker does), each against the richer '
      'hand-written queue (ref) and the minimal one (min) of the same run. Targets of issue '
      '20: ≥ 1.0× single-job, ≥ 1.5× batched, against both.\n')
    w('| drain | clients | jobq | ref | min | jobq / ref | jobq / min | target | |')
    w('|---|---:|---:|---:|---:|---:|---:|---|---|')
    for b in (1, 100):
        tgt = 1.0 if b == 1 else 1.5
        for impl, nm in (('jobq', 'plain SQL calls'), ('driver', 'libjobq, chained')):
            for c in cs:
                j = best(R, f'drain/{impl}/c{c}/b{b}/ret0')
                r, m = best(R, f'drain/ref/c{c}/b{b}'), best(R, f'drain/min/c{c}/b{b}')
                ratios = [j['best'] / x['best'] if j and x and x['best'] else None for x in (r, m)]
                met = 'no figure' if None in ratios else \
                    ('met' if min(ratios) >= tgt else 'MISSED')
                w(f"| {'single-job' if b == 1 else 'batched (100)'}, {nm} | {c} | {cell(j)} | "
                  f"{cell(r)} | {cell(m)} | "
                  + ' | '.join(f'{x:.2f}×' if x else 'n/a' for x in ratios)
                  + f' | ≥ {tgt}× | {met} |')
    w('')
    per_job = [(k, c, best(R, k)) for b in (1, 100) for impl in ('ref', 'min', 'jobq', 'driver')
               for c in cs
               for k in [f'drain/{impl}/c{c}/b{b}' + ('' if impl in REF_TABLES else '/ret0')]]
    per_job = [(k, c, x) for k, c, x in per_job if x and 'fsyncs_per_job' in x['extra']]
    if not per_job:     # the full mode's drain rows: no fsync counts
        return
    w('Per job, best run of each (server CPU: the postmaster and its children; WAL fsyncs: '
      '`pg_stat_wal.wal_sync` over the run):\n')
    w('| run | clients | server CPU µs / job | WAL bytes / job | WAL fsyncs / job |')
    w('|---|---:|---:|---:|---:|')
    for k, c, x in per_job:
        e = x['extra']
        w(f"| {k} | {c} | {fmt(e['cpu_ms_per_1k'])} | {fmt(e['wal_bytes_per_job'])} | "
          f"{e['fsyncs_per_job']:.3f} |")
    w('')


def write_report(bench, args, machine, settings, path, started, elapsed):
    R = bench.results
    L = []
    w = L.append
    w('# jobq benchmark results\n')
    w(f'Generated by `{" ".join(args.argv)}` on {started:%Y-%m-%d %H:%M} UTC, '
      f'{elapsed / 60:.1f} minutes, mode **{args.mode}**, best of {bench.m["reps"]} '
      '(the range of all runs in parentheses). Regenerate it with the same command; '
      'see bench/README.md for what each figure means.\n')
    w('## Machine\n')
    for k in ('cpu', 'cores', 'memory', 'kernel', 'postgres', 'fsync', 'jobq', 'load'):
        w(f'- {k}: {machine.get(k, "?")}')
    w('\n## Settings (the throwaway cluster)\n')
    for k, v in settings.items():
        w(f'- `{k} = {v}`')
    w('- everything else: initdb defaults (autovacuum on, wal_level replica)\n')
    w('Each timed run starts from a freshly truncated table, filled, `VACUUM ANALYZE`d '
      'and checkpointed. pgbench runs use `-M prepared` and report tps without connection '
      'time; the driver also starts its clock after every client is connected.\n')

    # main table
    rows = []

    def cmp(label, jkey, rkey, target=None, higher=True, jlabel=None):
        j, r = best(R, jkey, higher), best(R, rkey, higher)
        ratio = (j['best'] / r['best']) if j and r and r['best'] else None
        met = ''
        if target is not None and ratio is not None:
            met = 'met' if ratio >= target else 'MISSED'
        elif target is not None:
            met = 'no figure'
        rows.append((label, cell(j), cell(r), f'{ratio:.2f}×' if ratio else 'n/a',
                     f'≥ {target}×' if target is not None else '', met))
        return ratio

    w('## Throughput: jobq / reference\n')
    w('Jobs per second. "reference" is the hand-written SKIP LOCKED queue '
      '(bench/pgbench/ref_*.sql) driven by pgbench; the **minimal** queue is the one of the '
      'articles (bench/pgbench/min_*.sql: `jobs(id, payload, status, run_after, attempts, '
      'locked_until)`, one partial index on `run_after` of pending jobs, no queue column, no '
      'priority, the claim returning ids only); "jobq (pgbench)" calls the SQL API '
      'from pgbench scripts (bench/pgbench/jobq_*.sql); "jobq (libjobq)" is bench/driver.c '
      'through the static libjobq. Ratios are best / best.\n')
    for c in bench.m['clients']:
        cmp(f'enqueue, 1 job/txn, {c} clients — jobq (pgbench)', f'enqueue/jobq/c{c}',
            f'enqueue/ref/c{c}', 0.95)
        if 'driver' in bench.m['enq_impls']:
            cmp(f'enqueue, 1 job/txn, {c} clients — jobq (libjobq)', f'enqueue/driver/c{c}',
                f'enqueue/ref/c{c}', 0.95)
        if 'jobq-nonotify' in bench.m['enq_impls']:
            cmp(f'enqueue, 1 job/txn, {c} clients — jobq (pgbench), queue with notify off '
            '(diagnostic)', f'enqueue/jobq-nonotify/c{c}', f'enqueue/ref/c{c}')
    cmp('enqueue, batches of 1,000 — jobq_enqueue_batch (pgbench) vs INSERT ... SELECT',
        'enqueue_batch/jobq', 'enqueue_batch/ref', 0.8)
    cmp('enqueue, batches of 1,000 — libjobq (payloads sent by the client)',
        'enqueue_batch/driver', 'enqueue_batch/ref', 0.8)
    # against the minimal queue of the articles (min_*.sql) as the reference
    for c in bench.m['clients']:
        cmp(f'enqueue, 1 job/txn, {c} clients — jobq (pgbench) vs the **minimal** queue',
            f'enqueue/jobq/c{c}', f'enqueue/min/c{c}', 0.95)
    cmp('enqueue, batches of 1,000 — jobq_enqueue_batch (pgbench) vs INSERT ... SELECT into the '
        '**minimal** queue', 'enqueue_batch/jobq', 'enqueue_batch/min', 0.9)
    for b in (1, 100):
        for c in bench.m['drain_clients']:
            what = 'single-job' if b == 1 else 'batched (100)'
            tgt = 1.0 if b == 1 else 1.5
            for impl, nm in (('jobq', 'pgbench'), ('driver', 'libjobq, chained')):
                cmp(f'drain {what}, {c} workers, history off — jobq ({nm}) vs the **minimal** queue',
                    f'drain/{impl}/c{c}/b{b}/ret0', f'drain/min/c{c}/b{b}', tgt)
    for b in (1, 100):
        for ret in (0, 1):
            if ('0', '1 day')[ret] not in bench.m['ret_single' if b == 1 else 'ret_batch']:
                continue
            for c in bench.m['drain_clients']:
                what = 'single-job' if b == 1 else 'batched (100)'
                hist = 'history off' if ret == 0 else 'history kept'
                tgt = 1.0 if b == 1 else (1.5 if ret == 0 else 1.0)
                for impl, nm in (('jobq', 'pgbench'), ('driver', 'libjobq, chained')):
                    cmp(f'drain {what}, {c} workers, {hist} — jobq ({nm})',
                        f'drain/{impl}/c{c}/b{b}/ret{ret}', f'drain/ref/c{c}/b{b}', tgt)
                if b == 100 and ret == 0:
                    cmp(f'drain {what}, {c} workers, {hist} — jobq_pop (pgbench), '
                        '**at-most-once, opt-in**: a job is deleted when taken, one write and '
                        'one commit per batch',
                        f'drain/pop/c{c}/b{b}/ret0', f'drain/ref/c{c}/b{b}', tgt)
                    cmp(f'drain {what}, {c} workers — jobq_pop against the same delete-on-take '
                        'written by hand (`ref_pop_100.sql`; info)',
                        f'drain/pop/c{c}/b{b}/ret0', f'drain/refpop/c{c}/b{b}')
                if b == 100 and ret == 1:
                    cmp(f'drain {what}, {c} workers, {hist} — jobq_pop (pgbench), '
                        '**at-most-once, opt-in**, a completed history row per popped job',
                        f'drain/pop/c{c}/b{b}/ret1', f'drain/ref/c{c}/b{b}', tgt)
    for c in bench.m['worker_conc']:
        rc = max(x for x in bench.m['drain_clients'] if x <= c) if min(bench.m['drain_clients']) <= c \
            else bench.m['drain_clients'][0]
        cmp(f'drain with jobq-worker -c {c}, a process per job (info: vs the single-job '
            f'reference at {rc} clients)', f'worker/c{c}', f'drain/ref/c{rc}/b1')
    for lang, tgt in (('c', 0.8), ('python', 0.5), ('node', 0.5)):
        cmp(f'drain with jobq-worker -c {PERSISTENT_SLOTS} --persistent=1, a no-op {lang} handler '
            f'taking {PERSISTENT_SLOTS} jobs at a time, one connection — against the libjobq '
            f'driver\'s batched drain on one connection (-b {PERSISTENT_SLOTS})',
            f'persistent/{lang}', 'persistent/driver', tgt)
        wc = max(bench.m['worker_conc'])
        cmp(f'the same — against jobq-worker -c {wc}, a process per job',
            f'persistent/{lang}', f'worker/c{wc}', 10)
    w('| benchmark | jobq | reference | ratio | target | |')
    w('|---|---:|---:|---:|---|---|')
    for row in rows:
        w('| ' + ' | '.join(row) + ' |')
    w('')

    drains_section(w, R)
    instructions_section(w, R, settings)
    scale.report(w, bench)
    group_rows.report(w, bench)

    # scale
    w('## Scale: drain rate against the backlog\n')
    w('Single-job drain, 4 pgbench clients, '
      f'{bench.m["scale_drain"]} jobs taken from a backlog of the given size (filled, vacuumed '
      'and checkpointed once, then topped up between runs without vacuum).\n')
    w('| backlog | jobq | reference | jobq / ref | jobq vs its 10k | ref vs its 10k | target (jobq) | |')
    w('|---|---:|---:|---:|---:|---:|---|---|')
    j10, r10 = best(R, 'scale/jobq/backlog10000'), best(R, 'scale/ref/backlog10000')
    for bl in bench.m['backlogs']:
        j, r = best(R, f'scale/jobq/backlog{bl}'), best(R, f'scale/ref/backlog{bl}')
        rj = j['best'] / j10['best'] if j and j10 else None
        rr = r['best'] / r10['best'] if r and r10 else None
        ratio = j['best'] / r['best'] if j and r else None
        tgt = '≥ 0.8× of 10k' if bl > 10000 else ''
        met = ('met' if rj >= 0.8 else 'MISSED') if (bl > 10000 and rj) else ''
        w(f'| {bl:,} | {cell(j)} | {cell(r)} | {fmt(ratio)}× | {fmt(rj)}× | {fmt(rr)}× | {tgt} | {met} |')
    hk = f'scale/jobq/ret1/history{bench.m["history_rows"]}'
    if bench.m['history_rows']:
        h0, h1 = best(R, 'scale/jobq/ret1/history0'), best(R, hk)
        ratio = h1['best'] / h0['best'] if h0 and h1 else None
        w(f'\nWith history kept (retention 1 day), backlog 10k: no history {cell(h0)}, '
          f'{bench.m["history_rows"]:,} rows of history {cell(h1)} jobs/s: {fmt(ratio)}×.\n')
    w('')

    # counts
    n = bench.m.get('counts_history', 0)
    if any(k.startswith('counts/') for k in R):
        w('## Counts: cost per call against the size of history\n')
        w(f'Queue `bench` with 10,000 ready jobs, then with {n:,} rows of completed history '
          '(vacuumed, counters rebuilt). Milliseconds per call, in a PL/pgSQL loop of about a '
          'second; "jobq_stats 0.1.0" is the statement jobq_stats ran before issue 14 (exact '
          'counts over the live table and the whole history), inline. Regenerate alone with '
          '`bench/run.sh --only counts` (`--counts-history N` for another size).\n')
        w(f'| call | no history | {n:,} rows of history | ratio | target | |')
        w('|---|---:|---:|---:|---|---|')
        for name, _ in COUNTS_CALLS:
            h0 = best(R, f'counts/{name}/history0', False)
            h1 = best(R, f'counts/{name}/history{n}', False)
            ratio = h1['best'] / h0['best'] if h0 and h1 and h0['best'] else None
            tgt = '≤ 2×' if name == 'jobq_counts' else ''
            met = ('met' if ratio <= 2 else 'MISSED') if (tgt and ratio is not None) else ''
            w(f'| {name} | {cell(h0)} | {cell(h1)} | {fmt(ratio)}× | {tgt} | {met} |')
        w('')

    # flows
    if any(k.startswith('flows/') for k in R):
        w('## Flows: completes per second with dependents\n')
        w(f'Claimed jobs of queue `bench` (retention 0) completed one per transaction by a '
          'PL/pgSQL procedure: without dependents; each with one waiting dependent (the flow '
          'path, which readies it); 10,000 parents of one waiting child (a fan-in: every '
          'complete updates the same child), completed by another session than the claim\'s '
          '(the statements); and the first two completed by the session that claimed them '
          '("claimer": the direct complete, as jobq-worker\'s; compared with "none claimer"). '
          'Regenerate alone with `bench/run.sh --only flows --port 5520` (doc/flows.md).\n')
        w('| case | jobs | completes/s | vs none |')
        w('|---|---:|---:|---:|')
        for name in ('none', 'one_dependent', 'fan_in_10000', 'none_claimer',
                     'one_dependent_claimer'):
            r = best(R, f'flows/{name}')
            base = best(R, 'flows/none_claimer' if name.endswith('_claimer') else 'flows/none')
            if r:
                ratio = r['best'] / base['best'] if base and base['best'] else None
                w(f'| {name.replace("_", " ")} | {r["extra"].get("jobs", "")} | {cell(r)} | {fmt(ratio)}× |')
        w('')

    # latency
    w('## Latency: enqueue commit → handler start\n')
    w(f'Idle workers (4), {bench.m["lat_jobs"]} jobs enqueued one per transaction about 5 ms apart. '
      '"notify": the worker LISTENs on "jobq.bench" (jobq_wait_for_work); "poll50ms": '
      'no LISTEN, claim every 50 ms when idle. driver = libjobq in-process handler; worker = '
      'jobq-worker -c 4 starting a handler process (start = when the handler process runs; '
      'bench/handler is linked statically when possible), `--wait-mode=listen` or `blocking`; '
      'os-spawn = no database at all: bench/driver starts the handler with vfork + exec as '
      'jobq-worker does, 5 ms apart, from just before vfork to the handler\'s start, the '
      'operating system\'s share of the worker rows; persistent = jobq-worker -c 4 '
      '--persistent=1 with bench/persistent_handler taking 4 jobs at a time, already running '
      '(start = when it reads the job\'s line). '
      'Milliseconds, best of the runs (range).\n')
    w('| mode | p50 | p95 | p99 | max | target | |')
    w('|---|---:|---:|---:|---:|---|---|')
    for name in bench.m['lat_modes']:
        p50 = best(R, f'latency/{name}/p50', False)
        p95 = best(R, f'latency/{name}/p95', False)
        p99 = best(R, f'latency/{name}/p99', False)
        mx = best(R, f'latency/{name}/max', False)
        tgt, met = '', ''
        if name.endswith('notify') or name == 'worker-blocking':
            tgt = 'p50 ≤ 2 ms, p99 ≤ 10 ms'
            if p50 and p99:
                met = 'met' if p50['best'] <= 2 and p99['best'] <= 10 else 'MISSED'
        if name == 'driver-blocking':
            tgt = 'p50 ≤ 1 ms, p99 ≤ 5 ms, p50 ≤ ½ notify'
            notify50 = best(R, 'latency/driver-notify/p50', False)
            if p50 and p99:
                ok = p50['best'] <= 1 and p99['best'] <= 5
                if notify50:
                    ok = ok and p50['best'] * 2 <= notify50['best']
                met = 'met' if ok else 'MISSED'
        if name == 'persistent-blocking':
            tgt = 'p50 ≤ 1 ms'
            if p50:
                met = 'met' if p50['best'] <= 1 else 'MISSED'
        w(f'| {name} | {cell(p50)} | {cell(p95)} | {cell(p99)} | {cell(mx)} | {tgt} | {met} |')
    w('')
    w('"blocking": no LISTEN; the worker sits in `jobq_claim(..., wait => 5 s)` and the server '
      'wakes it from the commit of the enqueue (jobq preloaded).\n')

    # waiters
    w('## Producers with idle waiting claims\n')
    w(f'pgbench `jobq_enqueue` at {max(bench.m["clients"])} clients (queue with notify off), '
      f'without and with {bench.m["waiters"]} connections sitting in blocking claims on another '
      'queue: the cost of the wakeup check at every commit.\n')
    w0, wn = best(R, 'waiters/0'), best(R, f'waiters/{bench.m["waiters"]}')
    ratio = wn['best'] / w0['best'] if w0 and wn else None
    met = ('met' if ratio >= 0.95 else 'MISSED') if ratio else ''
    w('| without waiters | with waiters | ratio | target | |')
    w('|---:|---:|---:|---|---|')
    w(f'| {cell(w0)} | {cell(wn)} | {fmt(ratio) + "×" if ratio else "n/a"} | ≥ 0.95× | {met} |')
    w('')

    # awaiters
    n_aw = bench.m['waiters']
    w('## Enqueue and complete with awaiters\n')
    w(f'pgbench `jobq_enqueue` and `jobq_soak` (enqueue, claim, complete) at '
      f'{max(bench.m["clients"])} clients on queue `bench` (notify off, retention 0), without '
      f'and with {n_aw} sessions sitting in `CALL jobq_await` on jobs of another queue that '
      'never finish: what registered awaiters cost producers and completes (a bucket check '
      'per finished job, a flag at commit).\n')
    w('| operation | without awaiters | with awaiters | ratio | target | |')
    w('|---|---:|---:|---:|---|---|')
    for op, label in (('enqueue', 'enqueue'), ('cycle', 'enqueue + claim + complete')):
        a0, an = best(R, f'awaiters/{op}/0'), best(R, f'awaiters/{op}/{n_aw}')
        ratio = an['best'] / a0['best'] if a0 and an else None
        met = ('met' if ratio >= 0.95 else 'MISSED') if ratio else ''
        w(f'| {label} | {cell(a0)} | {cell(an)} | {fmt(ratio) + "×" if ratio else "n/a"} '
          f'| ≥ 0.95× | {met} |')
    w('')

    # horizon
    hs, hw = bench.m.get('horizon_seconds'), bench.m.get('horizon_wait')
    w('## What a waiting claim holds back\n')
    w(f'4 pgbench clients loop enqueue + claim + complete (`jobq_soak.sql`) on queue `bench` '
      f'for {hs} s, retention 0, so every job leaves dead row versions in `jobq.jobs`; then '
      '`VACUUM (VERBOSE) jobq.jobs` runs at once. Without a waiter, and with one connection '
      f"sitting in `jobq_claim('idle', ..., wait => '{hw} seconds')` on a queue that gets no "
      'job, started before the churn and still waiting during the VACUUM. "xmin age": '
      '`age(backend_xmin)` of the waiter (without one: the oldest of the other backends) just '
      "before the VACUUM; \"cutoff age\": how old VACUUM's removable cutoff was, in XIDs "
      '(enqueue, claim and complete take one each; other transactions, such as the '
      "sweeper's, take more). One run each; informational, no target.\n")
    w('| | jobs/s | jobs | dead rows VACUUM removed | dead rows it could not remove | '
      'xmin age (XIDs) | cutoff age (XIDs) | jobq.jobs + indexes | VACUUM after the wait: removed |')
    w('|---|---:|---:|---:|---:|---:|---:|---:|---:|')
    for n, label in ((0, 'without waiter'), (1, f'with a waiter of {hw} s')):
        h = best(R, f'horizon/waiter{n}')
        if not h:
            w(f'| {label} | n/a | | | | | | | |')
            continue
        e = h['extra']
        ra = f"{e['removed_after']:,}" if 'removed_after' in e else ''
        w(f"| {label} | {fmt(e['jobs_per_s'])} | {e['jobs']:,} | {e['removed']:,} | "
          f"{int(h['best']):,} | {e['xmin_age']:,} | {e['cutoff_age']:,} | "
          f"{e['size_bytes'] / 1048576:.1f} MB | {ra} |")
    w('')
    w("A waiting claim is one statement: its snapshot holds the database's xmin horizon where "
      'it was when the wait began, so no row version that dies meanwhile, in any table of the '
      'database, can be removed (by VACUUM, autovacuum or page pruning) until the wait ends. '
      'It is held for at most the wait (5 minutes at most), and the rows go at the next vacuum '
      'after it (last column: the same VACUUM once the wait was cancelled and its backend '
      'gone). Hence short waits, repeated: jobq-worker waits at most `--poll-interval` '
      '(5 s by default), so the horizon moves on every few seconds.\n')

    # soak
    w('## Soak\n')
    if bench.m['soak_seconds']:
        w(f'{bench.m["soak_seconds"]} s each, 4 pgbench clients, each transaction script = enqueue 1 + '
          'claim 1 + complete 1 (three transactions), backlog 10k, jobq with history kept '
          '(retention 1 day).\n')
        w('| | jobs/s | first tenth | last tenth | last/first | target | | live table+indexes start → half-way → end |')
        w('|---|---:|---:|---:|---:|---|---|---|')
        for impl in ('jobq', 'ref'):
            s = best(R, f'soak/{impl}')
            if not s:
                w(f'| {impl} | n/a | | | | | | |')
                continue
            e = s['extra']
            met = ('met' if e['ratio'] >= 0.8 else 'MISSED') if impl == 'jobq' else ''
            tgt = '≥ 0.8' if impl == 'jobq' else ''
            hist = f"; history {e['history_end'] / 1048576:.1f} MB" if impl == 'jobq' else ''
            w(f"| {impl} | {fmt(s['best'])} | {fmt(e['first_tenth'])} | {fmt(e['last_tenth'])} | "
              f"{e['ratio']:.2f} | {tgt} | {met} | {e['size_start'] / 1048576:.1f} MB → "
              f"{e.get('size_mid', 0) / 1048576:.1f} MB → {e['size_end'] / 1048576:.1f} MB{hist} |")
        w('\n![soak throughput](soak.svg)\n' if os.path.exists(os.path.join(os.path.dirname(path), 'soak.svg')) else '')
    else:
        w('Not run in this mode (full mode only; `--soak-seconds N` to set its length).\n')

    # cost
    w('## Cost\n')
    w('Server CPU is the postmaster and all its children (backends, walwriter, autovacuum...) '
      'from /proc/<pid>/stat, including reaped backends (cutime/cstime); WAL from '
      'pg_current_wal_lsn() around the run. Figures of the best run.\n')
    w('| run | jobs/s | server CPU ms / 1,000 jobs | WAL bytes / job |')
    w('|---|---:|---:|---:|')
    keys = [k for k in R if k.startswith(('enqueue', 'drain', 'worker/', 'persistent/', 'scale'))]
    for k in sorted(keys):
        b = best(R, k)
        e = b['extra']
        if 'cpu_ms_per_1k' in e:
            w(f"| {k} | {fmt(b['best'])} | {fmt(e['cpu_ms_per_1k'])} | {fmt(e['wal_bytes_per_job'])} |")
    w('')
    for c in bench.m['worker_conc']:
        b = best(R, f'worker_rss/c{c}', False)
        if b:
            met = 'met' if (c == 16 and b['best'] <= 10) else ('MISSED' if c == 16 else '')
            w(f'- jobq-worker peak RSS at concurrency {c}: {cell(b)} MB'
              + (f' (target ≤ 10 MB: {met})' if c == 16 else ''))
    w('')

    rows = [(k, best(R, f'persistent/{k}')) for k in ['driver'] + list(PERSISTENT_NOOPS)]
    if any(b and 'client_us_per_job' in b['extra'] for _, b in rows):
        w('Where the time of a drained job goes (best run of each; the driver is the libjobq '
          'drain the persistent rows are measured against; client = the driver process, or '
          'jobq-worker with its handler process, from getrusage of reaped children; server = '
          'as above; wall = 1 / rate; with 2 cores the CPU of client and server overlap in '
          'part). Microseconds per job:\n')
        w('| run | wall | server CPU | client CPU | client CPU over the driver\'s |')
        w('|---|---:|---:|---:|---:|')
        base = rows[0][1]['extra'].get('client_us_per_job') if rows[0][1] else None
        for k, b in rows:
            if not b or 'client_us_per_job' not in b['extra']:
                continue
            e = b['extra']
            more = fmt(e['client_us_per_job'] - base) if base is not None else 'n/a'
            w(f"| persistent/{k} | {fmt(1e6 / b['best'])} | {fmt(e['cpu_ms_per_1k'])} | "
              f"{fmt(e['client_us_per_job'])} | {more} |")
        w('')
    for lang in PERSISTENT_NOOPS:
        b = best(R, f'persistent_rss/{lang}', False)
        if b:
            met = 'met' if b['best'] <= 10 else 'MISSED'
            w(f'- jobq-worker --persistent peak RSS (the worker alone, not its {lang} handler): '
              f'{cell(b)} MB (target ≤ 10 MB: {met})')
    w('')
    if os.path.exists(os.path.join(os.path.dirname(path), 'latency.svg')):
        w('![latency distribution](latency.svg)\n')

    if bench.errors or bench.notes:
        w('## Errors and notes\n')
        for e in bench.errors:
            w(f'- ERROR: {e}')
        for n in bench.notes:
            w(f'- {n}')
        w('')

    findings = os.path.join(HERE, 'findings.md')
    if os.path.exists(findings) and args.mode != 'smoke':
        w(open(findings).read())

    if getattr(bench, 'profile_text', None):
        w('## Appendix: plans of the statements inside the C functions\n')
        w('auto_explain (log_analyze, log_buffers, log_nested_statements) of the second call '
          'in a session, 1,000 ready jobs, retention 0.\n')
        w(bench.profile_text)

    with open(path, 'w') as f:
        f.write('\n'.join(L) + '\n')


def plots(bench, outdir):
    if shutil.which('gnuplot') is None:
        bench.notes.append('no plots: gnuplot not installed (apt-get install gnuplot-nox)')
        return
    made = []
    if bench.series:
        for name, pts in bench.series.items():
            with open(os.path.join(outdir, f'{name}.dat'), 'w') as f:
                f.writelines(f'{x} {y}\n' for x, y in pts)
        plot = ', '.join(f"'{outdir}/{n}.dat' using 1:2 with lines lw 2 title '{n}'"
                         for n in bench.series)
        script = (f"set terminal svg size 800,400 dynamic; set output '{outdir}/soak.svg';"
                  "set title 'Soak: throughput over time'; set xlabel 'seconds';"
                  f"set ylabel 'jobs/s'; set yrange [0:*]; set key bottom right; plot {plot}")
        subprocess.run(['gnuplot', '-e', script], check=False)
        made.append('soak.svg')
    if bench.latencies:
        for name, lat in bench.latencies.items():
            with open(os.path.join(outdir, f'lat-{name}.dat'), 'w') as f:
                n = len(lat)
                f.writelines(f'{v} {(i + 1) / n}\n' for i, v in enumerate(lat))
        plot = ', '.join(f"'{outdir}/lat-{n}.dat' using 1:2 with steps lw 2 title '{n}'"
                         for n in bench.latencies)
        script = (f"set terminal svg size 800,400 dynamic; set output '{outdir}/latency.svg';"
                  "set title 'Enqueue commit to handler start (CDF, best run)';"
                  "set xlabel 'milliseconds (log scale)'; set logscale x; set ylabel 'fraction';"
                  f"set key bottom right; set yrange [0:1]; plot {plot}")
        subprocess.run(['gnuplot', '-e', script], check=False)
        made.append('latency.svg')
    for f in os.listdir(outdir):
        if f.endswith('.dat'):
            os.unlink(os.path.join(outdir, f))
    return made


# ---------------------------------------------------------------------------
def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument('--quick', dest='mode', action='store_const', const='quick', default='full')
    p.add_argument('--smoke', dest='mode', action='store_const', const='smoke')
    p.add_argument('--synchronous-commit', choices=['on', 'off'], default='on')
    p.add_argument('--shared-buffers', default='256MB')
    p.add_argument('--reps', type=int, default=0, help='runs per figure (default 3)')
    p.add_argument('--soak-seconds', type=int, default=None)
    p.add_argument('--port', type=int, default=5496)
    p.add_argument('--only', default='', help='comma list: enqueue,drain,drains (opt-in),latency,waiters,awaiters,horizon,scale,soak,worker,persistent,profile,counts,flows,instr; and the opt-in rows of bench/scale.py: ' + ','.join(scale.STEPS) + ' and bench/groups.py: ' + ','.join(group_rows.STEPS))
    p.add_argument('--counts-history', type=int, default=0,
                   help='rows of history for the counts figures (default: the mode\'s, 10M in full)')
    p.add_argument('--set', action='append', default=[], metavar='NAME=VALUE',
                   help='a server setting of the cluster, over the fixed ones (repeatable; '
                        'printed with the settings of the report)')
    p.add_argument('--backlog-max', type=int, default=0,
                   help='largest backlog of --only backlog (default 10,000,000; quick 1,000,000)')
    p.add_argument('--soak-jobs', type=int, default=0,
                   help='jobs through the soak of --only backlog (default 2,000,000; quick 400,000)')
    p.add_argument('--hold-seconds', type=int, default=0,
                   help='how long --only holdback holds a transaction open (default 300; quick 60)')
    p.add_argument('--output', default=None, help='report path (default bench/RESULTS.md)')
    p.add_argument('--keep', action='store_true', help='keep the cluster directory')
    p.add_argument('--report-only', metavar='JSON', default=None,
                   help='rewrite the report from the figures a previous run saved '
                        '(bench/out/results.json) without running anything')
    args = p.parse_args()
    args.argv = ['bench/run.sh'] + sys.argv[1:]
    out = args.output or os.path.join(HERE, 'RESULTS.md')
    outdir = os.path.dirname(os.path.abspath(out))
    workdir = os.path.join(HERE, 'out')
    os.makedirs(workdir, exist_ok=True)
    if os.geteuid() == 0:
        os.chmod(workdir, 0o777)

    settings = {
        'shared_buffers': args.shared_buffers,
        'synchronous_commit': args.synchronous_commit,
        'fsync': 'on',
        'max_connections': 200,
        'shared_preload_libraries': "'jobq'",
        # the sweeper of the bench database relays NOTIFY (README "NOTIFY relay")
        'jobq.sweeper_databases': "'postgres'",
        'max_wal_size': "'4GB'",
        'min_wal_size': "'1GB'",
        'checkpoint_timeout': "'30min'",
        'jit': 'off',
    }
    for kv in args.set:
        k, sep, v = kv.partition('=')
        if not sep or not k.strip():
            p.error(f'--set {kv}: expected NAME=VALUE')
        settings[k.strip()] = v.strip()
    if args.report_only:
        import json
        saved = json.load(open(args.report_only))
        args.mode = saved['mode']
        args.argv = saved['argv']
        bench = Bench(args, None, workdir)
        bench.outdir = outdir
        bench.m = saved['m']
        bench.sm.update(saved.get('sm', {}))
        bench.scale_series = saved.get('scale_series', {})
        bench.results, bench.errors, bench.notes = saved['results'], saved['errors'], saved['notes']
        bench.profile_text = saved.get('profile_text')
        write_report(bench, args, saved['machine'], saved['settings'], out,
                     datetime.datetime.fromisoformat(saved['started']), saved['elapsed'])
        log(f'wrote {out}')
        return
    started = datetime.datetime.utcnow()
    t0 = time.monotonic()
    cluster = Cluster(args.port, settings)
    log(f'cluster: {cluster.dir}, port {args.port}, mode {args.mode}')
    for k, v in settings.items():
        log(f'  {k} = {v}')
    bench = Bench(args, cluster, workdir)
    bench.outdir = outdir
    machine = {}
    try:
        cluster.start()
        bench.setup()
        machine = bench.machine()
        log(f'machine: {machine}')
        only = set(args.only.split(',')) if args.only else None
        steps = [('enqueue', bench.bench_enqueue), ('drain', bench.bench_drain),
                 ('latency', bench.bench_latency), ('waiters', bench.bench_waiters),
                 ('awaiters', bench.bench_awaiters),
                 ('horizon', bench.bench_horizon),
                 ('scale', bench.bench_scale),
                 ('soak', bench.bench_soak), ('worker', bench.bench_worker),
                 ('persistent', bench.bench_persistent),
                 ('profile', bench.profile),
                 ('counts', bench.bench_counts),
                 ('flows', bench.bench_flows),
                 # last: it stops and restarts the cluster
                 ('instr', bench.bench_instructions)]
        # the timed drains at 1, 4 and 16 clients run only when --only names them
        if only is not None and 'drains' in only:
            steps.insert(2, ('drains', bench.bench_drains))
        unknown = (only or set()) - {name for name, _ in steps} - set(scale.STEPS) \
            - set(group_rows.STEPS)
        if unknown:
            raise BenchError(f'--only: no benchmark named {", ".join(sorted(unknown))}')
        # the scale rows (bench/scale.py) run only when --only names them
        steps[-1:-1] = [(name, lambda fn=fn: fn(bench)) for name, fn in scale.STEPS.items()
                        if only is not None and name in only]
        # and the group rows (bench/groups.py)
        steps[-1:-1] = [(name, lambda fn=fn: fn(bench)) for name, fn in group_rows.STEPS.items()
                        if only is not None and name in only]
        for name, fn in steps:
            if only is None or name in only:
                ts = time.monotonic()
                bench.guard(name, fn)
                log(f'   ({name}: {time.monotonic() - ts:.0f} s)')
        if not bench.has_driver:
            bench.errors.append('bench/driver is not built (make -C bench)')
        if not bench.has_worker:
            bench.notes.append('client/jobq-worker not built: worker figures missing')
        plots(bench, outdir)
        scale.plot(bench)
    finally:
        if args.keep:
            cluster.stop()
            log(f'kept {cluster.dir}')
        else:
            cluster.destroy()
    elapsed = time.monotonic() - t0
    write_report(bench, args, machine, settings, out, started, elapsed)
    import json
    with open(os.path.join(workdir, 'results.json'), 'w') as f:
        json.dump(dict(mode=args.mode, argv=args.argv, m=bench.m, results=bench.results,
                       errors=bench.errors, notes=bench.notes, machine=machine,
                       settings=settings, started=started.isoformat(), elapsed=elapsed,
                       sm=bench.sm, scale_series=bench.scale_series,
                       profile_text=getattr(bench, 'profile_text', None)), f, indent=1)
    empty = [k for k, r in bench.results.items() if not r['values']]
    log(f'wrote {out} in {(time.monotonic() - t0):.0f} s; {len(bench.results)} figures, '
        f'{len(bench.errors)} errors')
    if bench.errors or empty or not bench.results:
        sys.exit(1)


if __name__ == '__main__':
    main()
