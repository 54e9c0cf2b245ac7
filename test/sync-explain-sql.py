#!/usr/bin/env python3
"""test/sync-explain-sql.py: keep sql/jobq_explain.sql's copies of the hot
statements equal to the SQL the C code prepares.

jobq_explain checks the plans of statements that live in C string literals
(built with macros from jobq.h), so the test holds a copy of each.  This
script compiles the literals with the C preprocessor, prints them, and
compares them with (--check, the default; exit 1 when they differ) or
rewrites (--write) the PREPARE blocks of the test.  test/run-tests.sh runs
the check, so a changed statement cannot go untested.
"""
import os, re, subprocess, sys, tempfile, textwrap

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXT = os.path.join(TOP, 'extension')
TEST = os.path.join(TOP, 'sql', 'jobq_explain.sql')

# PREPARE name -> (C file, plan variable)
STATEMENTS = {
    'regress_claim': ('claim.c', 'claim_plan'),
    'regress_claim_one': ('claim.c', 'claim_one_plan'),
    'regress_pop': ('pop.c', 'pop_plan'),
    'regress_pop_history': ('pop.c', 'pop_into_history_plan'),
    'regress_expire': ('sweep.c', 'expire_plan'),
    'regress_purge': ('sweep.c', 'purge_plan'),
    'regress_complete': ('ack.c', 'complete_plan'),
    'regress_complete_plain': ('ack.c', 'complete_plain_plan'),
    'regress_complete_batch': ('ack.c', 'complete_many_plan'),
    'regress_complete_batch_plain': ('ack.c', 'complete_many_plain_plan'),
    'regress_extend': ('ack.c', 'extend_plan'),
}


def c_literal(path, var):
    """The source text of the SQL argument of `var = jobq_prepare(...)`."""
    src = open(os.path.join(EXT, path)).read()
    start = src.index(var + ' = jobq_prepare(') + len(var + ' = jobq_prepare(')
    lines = []
    for line in src[start:].split('\n'):
        if re.match(r'^\s*\d+, (types|NULL)\);', line):
            break
        lines.append(line)
    return '\n'.join(lines).rstrip().rstrip(',')


def local_defines(path):
    """#define blocks of a C file (macros its statements use): function-like
    macros, and object-like ones named *_SQL."""
    src = open(os.path.join(EXT, path)).read()
    return ''.join(m.group(0) + '\n' for m in
                   re.finditer(r'^#define (?:[A-Z_]+\(|[A-Z_]+_SQL\b).*?(?:\\\n.*?)*$', src, re.M))


def statements():
    files = sorted({f for f, _ in STATEMENTS.values()})
    prog = '#include "postgres.h"\n#include "jobq.h"\n#include <stdio.h>\n'
    prog += ''.join(local_defines(f) for f in files)
    prog += 'int main(void) {\n'
    for name, (f, var) in STATEMENTS.items():
        prog += 'puts("%s"); puts(%s);\n' % (name, c_literal(f, var))
    prog += 'return 0; }\n'
    incdir = subprocess.check_output(['pg_config', '--includedir-server'], text=True).strip()
    with tempfile.TemporaryDirectory() as tmp:
        c = os.path.join(tmp, 'x.c')
        open(c, 'w').write(prog)
        subprocess.check_call(['cc', '-I', EXT, '-I', os.path.join(TOP, 'client', 'include'), '-I', incdir, '-o', os.path.join(tmp, 'x'), c])
        out = subprocess.check_output([os.path.join(tmp, 'x')], text=True).split('\n')
    result = {}
    for i in range(0, len(out) - 1, 2):
        result[out[i]] = ' '.join(out[i + 1].split())     # fold white space
    return result


def main():
    write = '--write' in sys.argv[1:]
    test = open(TEST).read()
    wanted = statements()
    stale = []
    for name, sql in wanted.items():
        m = re.search(r'(PREPARE %s\([^)]*\) AS\n)(.*?;)\n' % name, test, re.S)
        if m is None:
            sys.exit('%s: no PREPARE %s block' % (TEST, name))
        have = ' '.join(m.group(2).rstrip(';').split())
        if have != sql:
            stale.append(name)
            block = '\n'.join(textwrap.wrap(sql, 100, break_long_words=False,
                                            break_on_hyphens=False)) + ';'
            test = test[:m.start(2)] + block + test[m.end(2):]
    if write:
        open(TEST, 'w').write(test)
        print('rewrote: %s' % (', '.join(stale) or 'nothing'))
    elif stale:
        print('sql/jobq_explain.sql is out of date with the C for: %s' % ', '.join(stale))
        print('run test/sync-explain-sql.py --write, then check expected/jobq_explain.out')
        sys.exit(1)
    else:
        print('jobq_explain statements match the C')


main()
