"""A ``-S name=value`` that no selected check has, refused before a session.

ReFrame sets ``-S`` variables on the tests that have them and only warns,
per test, of those it did not set: ``-S problem_class=S`` (the CG solver's
class) on an NPB run runs NPB's default class C, under a warning. Before a
session, ReFrame lists the session's selection (``-l``, the same options):
a name that every selected test and fixture left unset is refused in one
line, with the nearest variable of the checks. A name some of them have is
theirs (``-S problem_class=S`` on a CG and NPB run), and ``-S Class.name=``
is left to ReFrame.
"""

import difflib
import glob
import os
import re
import subprocess

from clusterbench.core import paths
from clusterbench.core.errors import ClusterbenchError
from clusterbench.sessions.runner import REFRAME

_UNSET = re.compile(
    r"WARNING: test '(\w+)': the following variables were not set: (.*)"
)
_LISTED = re.compile(r'^\s*([-^])\s*(\w+)')
_DECLARED = re.compile(r'^\s+(\w+) = variable\(', re.M)
#: The listing loads every check file once more: a bound, not a wait.
TIMEOUT = 600


def set_names(extra):
    """The plain names given to ``-S``/``--setvar`` in *extra*, in order."""
    names, args = [], list(extra)
    for i, arg in enumerate(args):
        if arg in ('-S', '--setvar') and i + 1 < len(args):
            given = args[i + 1]
        elif arg.startswith('--setvar='):
            given = arg[len('--setvar=') :]
        elif arg.startswith('-S') and len(arg) > 2:
            given = arg[2:]
        else:
            continue
        name = given.partition('=')[0]
        if name and '.' not in name and name not in names:
            names.append(name)
    return names


def check(config, checks, system, extra, env=None):
    """Refuse (ClusterbenchError) the first ``-S`` name in *extra* that no
    test of the selection has. Silent when ReFrame cannot list the selection
    (the session says why)."""
    names = set_names(extra)
    if not names:
        return
    listed = _listing(config, checks, system, extra, env)
    if listed is None:
        return
    tests, classes, unset = listed
    for name in names:
        if classes and all(name in unset.get(c, ()) for c in classes):
            have = 'has' if len(tests) == 1 else 'have'
            hint = _nearest(name, checks)
            raise ClusterbenchError(
                f'-S {name}: {", ".join(tests)} {have} no such variable'
                + (f' (did you mean -S {hint}?)' if hint else '')
            )


def _listing(config, checks, system, extra, env):
    """(tests, every class listed, {class: unset names}) of the selection,
    or None."""
    cmd = [REFRAME, '-C', config, '-c', checks, '--system', system, '--nocolor']
    cmd += [a for a in extra if a not in ('-r', '--run')] + ['-l']
    try:
        proc = subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            env=env,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    tests, classes, unset = [], set(), {}
    listing = False
    for line in (proc.stdout + proc.stderr).splitlines():
        found = _UNSET.search(line)
        if found:
            unset[found[1]] = set(re.findall(r"'(\w+)'", found[2]))
            continue
        listing = listing or line.startswith('[List of matched checks]')
        found = listing and _LISTED.match(line)
        if found:
            classes.add(found[2])
            if found[1] == '-' and found[2] not in tests:
                tests.append(found[2])
    return tests, classes, unset


def _nearest(name, checks):
    """The variable of the checks (their library and *checks*) nearest to
    *name*, or ''."""
    library = os.path.join(paths.PACKAGE, 'checks')
    files = glob.glob(os.path.join(library, '**', '*.py'), recursive=True)
    if os.path.isdir(checks):
        files += glob.glob(os.path.join(checks, '*.py'))
    declared = set()
    for path in files:
        try:
            with open(path) as f:
                declared.update(_DECLARED.findall(f.read()))
        except OSError:
            continue
    declared.discard(name)
    close = difflib.get_close_matches(name, sorted(declared), n=1)
    return close[0] if close else ''
