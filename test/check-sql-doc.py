#!/usr/bin/env python3
"""test/check-sql-doc.py: doc/sql.md documents exactly the functions the extension has.

   test/check-sql-doc.py CONNINFO     (a database with CREATE EXTENSION jobq)

Lists every function of the installed extension from pg_proc (through its
pg_depend membership): name, pg_get_function_identity_arguments, which
arguments have defaults, and pg_get_function_result.  Compares them with the
signature blocks of doc/sql.md: the lines of its ```sql blocks that start
with a function name (continuation lines indented), written as

    name(arg type [DEFAULT value], ...) RETURNS type | SETOF type | TABLE (col type, ...)

Types are compared as PostgreSQL spells them (each type of the doc is read
through ::regtype, so timestamptz and timestamp with time zone are the same).
Functions outside the API (in schema jobq) are listed by name under
"## Internal functions" instead.  Prints, per function, what is missing or
different and the signature the extension has; exits 1 on any difference.
"""
import os
import re
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(TOP, 'doc', 'sql.md')
INTERNAL_SCHEMA = 'jobq'


def psql(dsn, sql):
    p = subprocess.run(['psql', dsn, '-XAtq', '-v', 'ON_ERROR_STOP=1', '-F', '\t', '-c', sql],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode != 0:
        sys.exit('check-sql-doc: psql failed: ' + p.stderr.strip())
    return [line.split('\t') for line in p.stdout.split('\n') if line]


def quote(s):
    return "'" + s.replace("'", "''") + "'"


def split_top(s):
    """Split at commas outside parentheses and quotes."""
    parts, depth, cur, q = [], 0, [], False
    for ch in s:
        if ch == "'":
            q = not q
        elif not q and ch == '(':
            depth += 1
        elif not q and ch == ')':
            depth -= 1
        elif not q and ch == ',' and depth == 0:
            parts.append(''.join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if ''.join(cur).strip():
        parts.append(''.join(cur).strip())
    return parts


def doc_signatures():
    """[(line, name, [(argname, type, has_default)], result)] from doc/sql.md,
    and the names listed under "## Internal functions"."""
    sigs = []
    internal = set()
    with open(DOC, encoding='utf-8') as f:
        lines = f.read().split('\n')
    in_sql = False
    section = None
    cur = None
    for n, line in enumerate(lines, 1):
        if line.startswith('```'):
            if cur:
                sigs.append(cur)
                cur = None
            in_sql = (not in_sql) and line.strip() == '```sql'
            continue
        if not in_sql:
            if line.startswith('## '):
                section = line[3:].strip()
            m = re.match(r'^- `([a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*)\(\)`', line)
            if section == 'Internal functions' and m:
                internal.add(m.group(1))
            continue
        code = re.sub(r'--.*$', '', line).rstrip()
        if re.match(r'^[a-z_][a-z0-9_]*\(', code):
            if cur:
                sigs.append(cur)
            cur = (n, code)
        elif cur and code.startswith((' ', '\t', 'RETURNS')):
            cur = (cur[0], cur[1] + ' ' + code.strip())
        elif cur:
            sigs.append(cur)
            cur = None
    out = []
    for n, text in sigs:
        # a procedure has no RETURNS (its INOUT arguments are its result)
        m = (re.match(r'^([a-z_][a-z0-9_]*)\((.*)\)\s+RETURNS\s+(.*)$', text, re.S)
             or re.match(r'^([a-z_][a-z0-9_]*)\((.*)\)()$', text, re.S))
        if not m:
            sys.exit('doc/sql.md:%d: not a signature "name(args) RETURNS type": %s' % (n, text))
        name, args, result = m.group(1), m.group(2), (m.group(3) or '').strip()
        if args.count('(') != args.count(')'):
            sys.exit('doc/sql.md:%d: unbalanced parentheses: %s' % (n, text))
        parsed = []
        for a in split_top(args):
            am = re.match(r'^(?:(IN|OUT|INOUT|VARIADIC)\s+)?([a-z_][a-z0-9_]*)\s+(.+?)(\s+DEFAULT\s+.+)?$', a, re.S | re.I)
            if not am:
                sys.exit('doc/sql.md:%d: cannot read argument "%s"' % (n, a))
            mode = (am.group(1) or '').upper()
            prefix = mode + ' ' if mode in ('INOUT', 'OUT', 'VARIADIC') else ''
            parsed.append((prefix + am.group(2), am.group(3).strip(), am.group(4) is not None))
        out.append((n, name, parsed, result))
    return out, internal


def main():
    if len(sys.argv) != 2:
        sys.exit('usage: test/check-sql-doc.py CONNINFO')
    dsn = sys.argv[1]
    rows = psql(dsn, """
        SELECT n.nspname, p.proname, pg_get_function_identity_arguments(p.oid),
               pg_get_function_result(p.oid), p.pronargdefaults, p.pronargs,
               pg_get_function_arguments(p.oid)
        FROM pg_catalog.pg_proc p
        JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
        JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_proc'::regclass
             AND d.objid = p.oid AND d.deptype = 'e'
        JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid AND e.extname = 'jobq'
        ORDER BY 1, 2, 3""")
    sigs, internal_doc = doc_signatures()

    # canonical type names, as PostgreSQL spells them
    types = set()
    for _, _, args, result in sigs:
        types.update(t for _, t, _ in args)
        m = re.match(r'^TABLE\s*\((.*)\)$', result, re.S)
        if m:
            types.update(c.split(None, 1)[1] for c in split_top(m.group(1)))
        elif result:
            types.add(re.sub(r'^SETOF\s+', '', result))
    canon = {}
    if types:
        for t, c in psql(dsn, 'SELECT t, t::regtype::text FROM unnest(ARRAY[%s]) AS t'
                         % ', '.join(quote(t) for t in sorted(types))):
            canon[t] = c

    def doc_form(args, result):
        ident = ', '.join('%s %s' % (a, canon[t]) for a, t, _ in args)
        defaults = [re.sub(r'^(INOUT|OUT|VARIADIC) ', '', a) for a, _, d in args if d]
        m = re.match(r'^TABLE\s*\((.*)\)$', result, re.S)
        if m:
            cols = [c.split(None, 1) for c in split_top(m.group(1))]
            res = 'TABLE(' + ', '.join('%s %s' % (c, canon[t]) for c, t in cols) + ')'
        elif result.startswith('SETOF '):
            res = 'SETOF ' + canon[result[6:].strip()]
        elif not result:
            res = ''
        else:
            res = canon[result]
        return ident, defaults, res

    documented = {}
    for n, name, args, result in sigs:
        ident, defaults, res = doc_form(args, result)
        key = (name, ident)
        if key in documented:
            print('doc/sql.md:%d: %s(%s) is documented twice' % (n, name, ident))
        documented[key] = (n, defaults, res)

    bad = 0
    api = 0
    internal_db = set()
    for schema, name, ident, res, ndefaults, nargs, fullargs in rows:
        if schema == INTERNAL_SCHEMA or name.startswith('_'):
            internal_db.add('%s.%s' % (schema, name))
            continue
        api += 1
        # a procedure's arguments say IN; the doc leaves it out, as for functions
        ident = ', '.join(re.sub(r'^IN ', '', a) for a in split_top(ident))
        argnames = [re.sub(r'^(INOUT|OUT|VARIADIC)\s+', '', a).split(None, 1)[0]
                    for a in split_top(ident)]
        defaults = argnames[len(argnames) - int(ndefaults):] if int(ndefaults) else []
        sig = '%s(%s) RETURNS %s' % (name, fullargs, res)
        doc = documented.pop((name, ident), None)
        if doc is None:
            same_name = [k[1] for k in documented if k[0] == name]
            print('missing in doc/sql.md: %s' % sig)
            for other in same_name:
                print('    doc/sql.md has %s(%s) instead' % (name, other))
            bad += 1
            continue
        n, ddefaults, dres = doc
        if dres != res:
            print('doc/sql.md:%d: %s(%s) RETURNS %s; the extension returns %s' % (n, name, ident, dres, res))
            bad += 1
        if ddefaults != defaults:
            print('doc/sql.md:%d: %s(%s): DEFAULT on %s; the extension has defaults on %s'
                  % (n, name, ident, ddefaults or 'none', defaults or 'none'))
            bad += 1
    for (name, ident), (n, _, _) in sorted(documented.items(), key=lambda kv: kv[1][0]):
        print('doc/sql.md:%d: %s(%s) is documented, the extension has no such function' % (n, name, ident))
        bad += 1
    for f in sorted(internal_db - internal_doc):
        print('missing in doc/sql.md "## Internal functions": - `%s()`' % f)
        bad += 1
    for f in sorted(internal_doc - internal_db):
        print('doc/sql.md "## Internal functions" lists %s(), the extension has no such function' % f)
        bad += 1
    if bad:
        print('%d difference(s) between doc/sql.md and the installed extension' % bad)
        return 1
    print('doc/sql.md documents the %d API and %d internal functions of the extension'
          % (api, len(internal_db)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
