#!/usr/bin/env python3
"""test/check-doc-links.py: every relative link of the docs resolves.

   test/check-doc-links.py            checks README.md, doc/*.md, examples/**/*.md

A link [text](path) must name a file or folder of the checkout; a link
[text](path#anchor) or [text](#anchor) must also name a heading of that
Markdown file, spelled as GitHub spells heading anchors.  Links in code
blocks and code spans are not links.  Prints each broken link as
FILE:LINE: and exits 1 when there is one.
"""
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Files another change is writing right now: reported, not failed.  Empty
# this set once they exist.
PENDING = set()

LINK = re.compile(r'\[[^\]]*\]\(([^)\s]+)\)')
FENCE = re.compile(r'^\s*(```|~~~)')


def slug(heading):
    """The anchor GitHub gives a heading."""
    s = heading.strip().lower()
    s = s.replace('`', '')
    s = re.sub(r'[^\w\- ]', '', s)
    return s.replace(' ', '-')


def text_lines(path):
    """(line number, text) outside code blocks, code spans removed."""
    out = []
    fenced = False
    with open(path, encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            if FENCE.match(line):
                fenced = not fenced
                continue
            if not fenced:
                out.append((n, re.sub(r'`[^`]*`', '', line)))
    return out


def anchors(path):
    found = set()
    seen = {}
    for _, line in text_lines(path):
        m = re.match(r'^#{1,6}\s+(.*?)\s*#*\s*$', line)
        if m:
            s = slug(m.group(1))
            k = seen.get(s, 0)
            seen[s] = k + 1
            found.add(s if k == 0 else '%s-%d' % (s, k))
    return found


def docs():
    yield os.path.join(TOP, 'README.md')
    for d in ('doc', 'examples'):
        for root, _, files in os.walk(os.path.join(TOP, d)):
            if 'node_modules' in root:
                continue
            for f in sorted(files):
                if f.endswith('.md'):
                    yield os.path.join(root, f)


def main():
    bad = 0
    cache = {}
    for md in docs():
        rel_md = os.path.relpath(md, TOP)
        for n, line in text_lines(md):
            for target in LINK.findall(line):
                if re.match(r'^[a-z]+:', target):
                    continue
                path, _, anchor = target.partition('#')
                dest = os.path.normpath(os.path.join(os.path.dirname(md), path)) if path else md
                rel = os.path.relpath(dest, TOP)
                if not os.path.exists(dest):
                    if rel in PENDING:
                        print('%s:%d: %s (pending: another change writes it)' % (rel_md, n, target))
                        continue
                    print('%s:%d: %s: no such file' % (rel_md, n, target))
                    bad += 1
                    continue
                if anchor:
                    if not dest.endswith('.md'):
                        continue
                    if dest not in cache:
                        cache[dest] = anchors(dest)
                    if anchor not in cache[dest]:
                        print('%s:%d: %s: no heading "#%s" in %s' % (rel_md, n, target, anchor, rel))
                        bad += 1
    if bad:
        print('%d broken link(s)' % bad)
        return 1
    print('doc links resolve')
    return 0


if __name__ == '__main__':
    sys.exit(main())
