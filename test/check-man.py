#!/usr/bin/env python3
"""test/check-man.py: the man pages install, render cleanly and list every option.

   test/check-man.py        (after make; run by test/check-docs.sh)

For jobq-worker, jobq, jobq-http and jobq-web:
  1. `make -C client install` into a scratch DESTDIR with PREFIX=/usr puts
     PAGE.1 under usr/share/man/man1, and `man` finds it through MANPATH;
  2. `groff -ww -z -man` (and `mandoc -T lint` where mandoc is installed)
     print no warning, and `man` renders the page without one;
  3. every option and command that `PROGRAM --help` prints appears in the
     OPTIONS section (or the Commands subsection) of doc/PROGRAM.md and of
     the rendered man page ("-d, --dbname" as a pair where the help shows
     the pair).
Prints what is missing or wrong, and exits 1 if anything is.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAMS = ('jobq-worker', 'jobq', 'jobq-http', 'jobq-web')


def run(cmd, env=None):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                       universal_newlines=True)
    return p.returncode, p.stdout, p.stderr


def help_items(text):
    """The options and commands a --help text names."""
    items = set()
    for m in re.finditer(r'(?<![\w-])(-[A-Za-z]), (--[a-z][a-z-]*)', text):
        items.add('%s, %s' % (m.group(1), m.group(2)))
    for m in re.finditer(r'(?<![\w-])--[a-z][a-z-]*', text):
        items.add(m.group(0))
    section = None
    for line in text.split('\n'):
        if re.match(r'^\S.*:$', line):
            section = line[:-1]
            continue
        m = re.match(r'^  ([a-z]+(?: [a-z]+)?)\b', line)
        if section == 'Commands' and m:
            words = m.group(1).split()
            items.add(' '.join(words if words[0] == 'queue' else words[:1]))
    return items


# The sections that must list the options and commands
SECTIONS = ('OPTIONS', 'Commands')


def md_sections(text):
    """The first cells of the table rows of the OPTIONS and Commands
    sections of a doc/*.md page: the options and commands they describe."""
    keep = []
    on = False
    for line in text.split('\n'):
        m = re.match(r'^#{2,3} (.*)', line)
        if m:
            on = m.group(1).strip() in SECTIONS
        elif on and line.startswith('|'):
            keep.append(re.split(r'(?<!\\)\|', line)[1].replace('\\|', '|'))
    return '\n'.join(keep)


def man_sections(text):
    """The tags (.TP, indented 7 columns) of the same sections of a page as
    man renders it (.SH at column 0, .SS at 3)."""
    keep = []
    on = False
    for line in text.split('\n'):
        m = re.match(r'^(?:   )?(\S.*)$', line)
        if m and not line.startswith('    '):
            on = m.group(1).strip() in SECTIONS
        elif on and re.match(r'^ {7}\S', line):
            keep.append(line)
    return '\n'.join(keep)


def missing(items, text):
    text = text.replace('\u2010', '-').replace('\u2212', '-')
    text = re.sub(r'\s+', ' ', text)
    out = []
    for it in sorted(items):
        if not re.search(r'(?<![\w-])' + re.escape(it) + r'(?![\w-])', text):
            out.append(it)
    return out


def main():
    bad = []
    stage = tempfile.mkdtemp(prefix='jobq-man.')
    try:
        rc, out, err = run(['make', '-C', os.path.join(TOP, 'client'), '-s', 'install',
                            'DESTDIR=' + stage, 'PREFIX=/usr'])
        if rc != 0:
            print(out + err)
            print('make install into a scratch DESTDIR failed')
            return 1
        mandir = os.path.join(stage, 'usr', 'share', 'man')
        env = dict(os.environ, MANPATH=mandir, MANWIDTH='80', MAN_KEEP_FORMATTING='',
                   LC_ALL='C.UTF-8')
        env.pop('PAGER', None)
        for prog in PROGRAMS:
            page = os.path.join(mandir, 'man1', prog + '.1')
            if not os.path.isfile(page):
                bad.append('%s: make install did not install %s' % (prog, page))
                continue
            rc, out, err = run(['man', '-w', prog], env)
            if rc != 0 or out.strip() != page:
                bad.append('%s: man -w with MANPATH gives %r, not %s' % (prog, out.strip() or err.strip(), page))
            rc, out, err = run(['groff', '-ww', '-z', '-man', page])
            if rc != 0 or err:
                bad.append('%s: groff -ww warns:\n%s' % (prog, err))
            if shutil.which('mandoc'):
                rc, out, err = run(['mandoc', '-T', 'lint', '-W', 'warning', page])
                if rc != 0 or out or err:
                    bad.append('%s: mandoc -T lint:\n%s%s' % (prog, out, err))
            rc, rendered, err = run(['man', '-P', 'cat', prog], env)
            if rc != 0 or err or len(rendered) < 1000:
                bad.append('%s: man renders %d bytes, exit %d: %s' % (prog, len(rendered), rc, err))
            rendered = re.sub(r'.\x08', '', rendered)
            rc, helptext, err = run([os.path.join(TOP, 'client', prog), '--help'])
            if rc != 0:
                bad.append('%s --help exits %d' % (prog, rc))
                continue
            items = help_items(helptext)
            if len(items) < 5:
                bad.append('%s --help: found only %s' % (prog, sorted(items)))
            md = os.path.join(TOP, 'doc', prog + '.md')
            with open(md, encoding='utf-8') as f:
                mdtext = md_sections(f.read())
            for it in missing(items, mdtext):
                bad.append('%s --help names "%s"; doc/%s.md does not' % (prog, it, prog))
            for it in missing(items, man_sections(rendered)):
                bad.append('%s --help names "%s"; the man page does not' % (prog, it))
            print('%s: %d options and commands of --help in doc/%s.md and %s.1' % (prog, len(items), prog, prog))
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
