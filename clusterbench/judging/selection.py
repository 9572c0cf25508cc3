"""What a `clusterbench run` session is asked for: its system, its tests.

The system name becomes a directory of the results, so it is checked before
anything is created; when ReFrame selects no test at all it writes no report
and says nothing, so the options that selected nothing are named here.
"""

import re
import shlex

from clusterbench.core.errors import ClusterbenchError

#: A system or system:partition name as ReFrame's configuration allows it
#: (it also names the session's directory).
_SYSTEM_NAME = re.compile(r'[A-Za-z0-9_-]+(:[A-Za-z0-9_-]+)?\Z')

#: ReFrame's options that select tests and take a value.
_SELECTING = {
    '-n': '-n',
    '--name': '-n',
    '-x': '-x',
    '--exclude': '-x',
    '-t': '-t',
    '--tag': '-t',
    '-T': '-T',
    '--exclude-tag': '-T',
    '-p': '-p',
    '--prgenv': '-p',
    '-E': '-E',
    '--filter-expr': '-E',
    '-m': '-m',
    '--maintainer': '-m',
}


def check_system_name(system):
    """*system* if it is ``name`` or ``name:partition``; one-line error if not."""
    if not _SYSTEM_NAME.match(system):
        raise ClusterbenchError(
            f'--system {system!r}: not a system name (name or name:partition; '
            f'letters, digits, _ and - only)'
        )
    return system


def selecting_options(extra):
    """[(option, value)] of ReFrame's test-selecting options in *extra*."""
    found, args = [], iter(extra)
    for arg in args:
        name, eq, value = arg.partition('=')
        if name in _SELECTING:
            found.append((_SELECTING[name], value if eq else next(args, '')))
        elif arg[:2] in _SELECTING and len(arg) > 2 and not arg.startswith('--'):
            found.append((arg[:2], arg[2:]))  # -pgnu
    return found


def nothing_selected(system, environs, extra):
    """Why ReFrame ran no test on *system* (its partitions have *environs*),
    naming the options in *extra* that selected nothing."""
    chosen = selecting_options(extra)
    environs = sorted(environs)
    patterns = [value for option, value in chosen if option == '-p']
    try:
        matched = [e for e in environs if any(re.match(p, e) for p in patterns)]
    except re.error as err:
        return f'-p: not a regular expression: {err}'
    if patterns and environs and not matched:
        return (
            f'-p {" -p ".join(patterns)}: no programming environment of {system} '
            f'matches (it has {", ".join(environs)}); ReFrame ran no test'
        )
    if chosen:
        given = ' '.join(shlex.join([o, v]) for o, v in chosen)
        return f'{given}: selected no test on {system}; ReFrame ran none'
    return f'ReFrame found no test to run on {system}'
