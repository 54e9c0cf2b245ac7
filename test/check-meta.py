#!/usr/bin/env python3
"""test/check-meta.py: META.json against the PGXN Meta Spec 1.0.0.

    test/check-meta.py [META.json]

Checks the keys the spec requires (name, abstract, maintainer, license,
provides, meta-spec) and the form of every optional key jobq uses
(version, prereqs, resources, tags, release_status, ...), and that the
versions agree with jobq.control.  The spec: https://pgxn.org/spec/.
Prints one line per problem; exits 1 if there is any.
"""
import json
import os
import re
import sys

here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, 'META.json')
problems = []


def bad(msg):
    problems.append(msg)


SEMVER = re.compile(r'^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)'
                    r'(-[0-9A-Za-z-]+)?$')
NAME = re.compile(r'^[A-Za-z0-9_][A-Za-z0-9_.-]*$')       # no "/", "\", spaces
LICENSES = {'agpl_3', 'apache_1_1', 'apache_2_0', 'artistic_1', 'artistic_2',
            'bsd', 'freebsd', 'gfdl_1_2', 'gfdl_1_3', 'gpl_1', 'gpl_2',
            'gpl_3', 'lgpl_2_1', 'lgpl_3_0', 'mit', 'mozilla_1_0',
            'mozilla_1_1', 'openssl', 'perl_5', 'postgresql', 'qpl_1_0',
            'ssleay', 'sun', 'zlib', 'open_source', 'restricted',
            'unrestricted', 'unknown'}
PHASES = {'configure', 'build', 'test', 'runtime', 'develop'}
RELATIONS = {'requires', 'recommends', 'suggests', 'conflicts'}


def version_range(v):
    """A prereq's version: 0, a version, or a comparison list."""
    if v == 0 or (isinstance(v, str) and SEMVER.match(v)):
        return True
    if isinstance(v, str):
        return all(re.match(r'^(==|!=|>=|<=|>|<)?\s*' + SEMVER.pattern[1:-1] + r'$', part.strip())
                   for part in v.split(','))
    return False


try:
    with open(path, encoding='utf-8') as f:
        meta = json.load(f)
except (OSError, ValueError) as e:
    print(f'{path}: {e}')
    sys.exit(1)

for key in ('name', 'abstract', 'maintainer', 'license', 'provides', 'meta-spec', 'version'):
    if key not in meta:
        bad(f'required key "{key}" is missing')

if not NAME.match(str(meta.get('name', ''))):
    bad(f'name "{meta.get("name")}" is not a valid distribution name')
if not isinstance(meta.get('abstract'), str) or not meta.get('abstract'):
    bad('abstract must be a non-empty string')
if not SEMVER.match(str(meta.get('version', ''))):
    bad(f'version "{meta.get("version")}" is not a semantic version')
maint = meta.get('maintainer')
if not (isinstance(maint, str) or (isinstance(maint, list) and maint
                                   and all(isinstance(x, str) for x in maint))):
    bad('maintainer must be a string or a non-empty list of strings')
lic = meta.get('license')
lics = [lic] if isinstance(lic, str) else (list(lic) if isinstance(lic, list) else [])
if not lics or any(x not in LICENSES for x in lics if isinstance(x, str)):
    bad(f'license {lic!r} is not one of the spec\'s license strings')
spec = meta.get('meta-spec', {})
if not isinstance(spec, dict) or spec.get('version') != '1.0.0':
    bad('meta-spec.version must be "1.0.0"')

provides = meta.get('provides', {})
if not isinstance(provides, dict) or not provides:
    bad('provides must name at least one extension')
else:
    for ext, p in provides.items():
        if not isinstance(p, dict):
            bad(f'provides.{ext} must be an object')
            continue
        for key in ('file', 'version'):
            if key not in p:
                bad(f'provides.{ext}.{key} is required')
        if 'version' in p and not SEMVER.match(str(p['version'])):
            bad(f'provides.{ext}.version is not a semantic version')
        for key in ('file', 'docfile'):
            if key in p and not os.path.isfile(os.path.join(here, p[key])):
                bad(f'provides.{ext}.{key}: no file {p[key]}')

for phase, rels in meta.get('prereqs', {}).items():
    if phase not in PHASES:
        bad(f'prereqs: unknown phase "{phase}"')
        continue
    for rel, reqs in rels.items():
        if rel not in RELATIONS:
            bad(f'prereqs.{phase}: unknown relationship "{rel}"')
            continue
        for name, v in reqs.items():
            if not version_range(v):
                bad(f'prereqs.{phase}.{rel}.{name}: bad version {v!r}')

res = meta.get('resources', {})
for key, val in res.items():
    if key == 'homepage':
        if not isinstance(val, str):
            bad('resources.homepage must be a URL')
    elif key == 'bugtracker':
        if not set(val) <= {'web', 'mailto'} or not val:
            bad('resources.bugtracker takes "web" and/or "mailto"')
    elif key == 'repository':
        if not set(val) <= {'url', 'web', 'type'} or not val:
            bad('resources.repository takes "url", "web" and "type"')
    elif not key.startswith('x_'):
        bad(f'resources: unknown key "{key}"')

tags = meta.get('tags', [])
if not isinstance(tags, list) or not all(isinstance(t, str) and 0 < len(t) < 256 for t in tags):
    bad('tags must be a list of strings shorter than 256 characters')
if meta.get('release_status', 'stable') not in ('stable', 'testing', 'unstable'):
    bad('release_status must be stable, testing or unstable')
# in step with the control file
with open(os.path.join(here, 'jobq.control'), encoding='utf-8') as f:
    ctl = re.search(r"^default_version = '([^']*)'", f.read(), re.M).group(1)
if meta.get('version') != ctl:
    bad(f'version {meta.get("version")} differs from jobq.control\'s {ctl}')
if provides.get('jobq', {}).get('version') != ctl:
    bad(f'provides.jobq.version differs from jobq.control\'s {ctl}')

for p in problems:
    print(f'{os.path.relpath(path)}: {p}')
if problems:
    sys.exit(1)
print(f'{os.path.relpath(path)}: valid PGXN metadata for {meta["name"]} {meta["version"]}')
