"""The run-conditions switches of a whole session, handed to the checks
without ``-S``: ``judge_conditions``, ``probe_host`` and ``wait_quiet``.

ReFrame's ``-S NAME=VALUE`` sets a variable on every test that has it, and
warns on every session about each selected test that has not (a fixture
that fetches or builds sources: ``the following variables were not set``).
These three belong to the checks' run-conditions plugin alone, so
`clusterbench run` and `ab` pass them as environment variables instead
(:func:`translate`), which the plugin reads as its variables' defaults
(:func:`default`); ``-S`` on a plain ``reframe`` command line still works.
"""

import os

#: Variable -> (its environment variable, its default).
VARIABLES = {
    'judge_conditions': ('CLUSTERBENCH_JUDGE_CONDITIONS', True),
    'probe_host': ('CLUSTERBENCH_PROBE_HOST', True),
    'wait_quiet': ('CLUSTERBENCH_WAIT_QUIET', 0.0),
}
#: What ReFrame's typ.Bool reads, either case.
_BOOLS = {'yes': True, 'y': True, 'true': True, '1': True}
_BOOLS.update({'no': False, 'n': False, 'false': False, '0': False})
_SETVAR = ('-S', '--setvar')


def _value(name, text):
    """*text* as the value of *name*, or None where ReFrame should say why not."""
    if isinstance(VARIABLES[name][1], bool):
        return _BOOLS.get(text.strip().lower())
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value == value else None  # not NaN


def _assignment(arg, following):
    """(NAME, VALUE text, tokens used) of ``-S NAME=VALUE`` at *arg*, or None."""
    if arg in _SETVAR and following is not None:
        text, used = following, 2
    elif arg.startswith('--setvar='):
        text, used = arg[len('--setvar=') :], 1
    elif arg.startswith('-S') and len(arg) > 2 and not arg.startswith('--'):
        text, used = arg[2:], 1
    else:
        return None
    name, eq, value = text.partition('=')
    return (name, value, used) if eq else None


def translate(args):
    """(*args* without the ``-S`` of these variables, {environment: value}).
    An assignment ReFrame would refuse (``-S probe_host=maybe``) or one for a
    named test (``-S CGSolverCheck.probe_host=false``) stays, for ReFrame."""
    kept, env, i = [], {}, 0
    while i < len(args):
        found = _assignment(args[i], args[i + 1] if i + 1 < len(args) else None)
        if found and found[0] in VARIABLES and _value(*found[:2]) is not None:
            name, value, used = found
            env[VARIABLES[name][0]] = str(_value(name, value))
            i += used
            continue
        kept.append(args[i])
        i += 1
    return kept, env


def default(name, environ=os.environ):
    """The value of *name* this session was given by :func:`translate`, else
    its default."""
    env, fallback = VARIABLES[name]
    given = environ.get(env)
    value = None if given is None else _value(name, given)
    return fallback if value is None else value
