#!/usr/bin/env python3
"""test/check-reliability-ids.py: doc/reliability.md §2.7 lists where each test id is tested.

   test/check-reliability-ids.py

Finds the ids of the reliability bar (C1, X3, F2, ...) that the tests cite
(specs/*.spec, sql/*.sql, t/*.pl, stress/run.sh, stress/src/*.c,
client/test/*.c) and checks them against the table "2.7 Where each id is
tested": every file that cites an id is on that id's row, every file of the
table exists, and no id the text calls "not cited by any test yet" is cited.
Prints each difference and exits 1 when there is one.
"""
import glob
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(TOP, 'doc', 'reliability.md')
TESTS = ('specs/*.spec', 'sql/*.sql', 't/*.pl', 'stress/run.sh', 'stress/src/*.c',
         'client/test/*.c')
# an id, not part of a word or of a compiler flag such as -O2
ID = re.compile(r'(?<![-\w])([CXFSTO][1-9])\b')


def main():
    cited = {}
    for pattern in TESTS:
        for path in sorted(glob.glob(os.path.join(TOP, pattern))):
            rel = os.path.relpath(path, TOP)
            with open(path, encoding='utf-8', errors='replace') as f:
                for i in set(ID.findall(f.read())):
                    cited.setdefault(i, set()).add(rel)
    with open(DOC, encoding='utf-8') as f:
        text = f.read()
    m = re.search(r'^### 2\.7 .*?\n(.*?)^## ', text, re.S | re.M)
    if not m:
        print('doc/reliability.md has no section "2.7 Where each id is tested"')
        return 1
    section = m.group(1)
    listed = {}
    for row in re.findall(r'^\| ([CXFSTO][1-9](?:, [CXFSTO][1-9])*) \| (.*) \|$', section, re.M):
        files = set(re.findall(r'`([^`]+\.[a-z]+)`', row[1]))
        for i in row[0].split(', '):
            listed.setdefault(i, set()).update(files)
    uncited = set()
    m = re.search(r'^([^|\n].*?) are not cited by any test yet', section, re.S | re.M)
    if m:
        uncited = set(ID.findall(re.sub(r'\([^)]*\)', '', m.group(1))))
    bad = []
    for i in sorted(cited):
        for f in sorted(cited[i] - listed.get(i, set())):
            bad.append('%s cites %s; doc/reliability.md 2.7 does not list it on the row of %s' % (f, i, i))
        if i in uncited:
            bad.append('doc/reliability.md 2.7 says %s is not cited by any test; %s cites it'
                       % (i, ', '.join(sorted(cited[i]))))
    for i in sorted(listed):
        for f in sorted(listed[i]):
            if not os.path.exists(os.path.join(TOP, f)):
                bad.append('doc/reliability.md 2.7 lists %s for %s: no such file' % (f, i))
    for b in bad:
        print(b)
    if bad:
        return 1
    print('doc/reliability.md 2.7 lists the %d ids the tests cite' % len(cited))
    return 0


if __name__ == '__main__':
    sys.exit(main())
