"""What ``ab.json`` of an A/B session holds, checked whole when it is read.

``clusterbench ab --judge DIR`` reads a plan someone may have edited, copied
or truncated: each key it uses is checked here, and the first that is wrong
is one line naming the file and the key (``legs[2].block: Infinity is not a
block number (a whole number, 0 or more)``), before any report is read.
"""

import json
import math
import os

from clusterbench.core import inputfile
from clusterbench.core.errors import ClusterbenchError
from clusterbench.judging import paired, stats

ARMS = (paired.A, paired.B)


class _Wrong(Exception):
    """A key of the plan and what is wrong with its value."""


def _shown(value):
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + '...'


def _whole(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _fraction(value):
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and 0 < value < 1
    )


def _need(plan, key, test, what, where=None, optional=False):
    """*plan*[*key*] if *test* holds for it, else _Wrong naming it."""
    name = f'{where}.{key}' if where else key
    if key not in plan:
        if optional:
            return None
        raise _Wrong(f'{name}: missing')
    value = plan[key]
    if optional and value is None:
        return None
    if not test(value):
        raise _Wrong(f'{name}: {_shown(value)} is not {what}')
    return value


def _inside(path):
    """A report path of a leg: relative, below the session directory."""
    if not isinstance(path, str) or not path or os.path.isabs(path):
        return False
    return '..' not in path.replace('\\', '/').split('/')


def _strings(value):
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _arms(plan):
    arms = _need(plan, 'arms', lambda v: isinstance(v, dict), 'an object')
    for name in arms:
        if name not in ARMS:
            raise _Wrong(f'arms: {_shown(name)} is not an arm (A or B)')
    for name in ARMS:
        arm = _need(arms, name, lambda v: isinstance(v, dict), 'an object', 'arms')
        where = f'arms.{name}'
        _need(arm, 'system', lambda v: isinstance(v, str), 'a system name', where)
        _need(arm, 'args', _strings, 'a list of ReFrame options', where)


def _legs(plan, most):
    legs = _need(plan, 'legs', lambda v: isinstance(v, list), 'a list')
    for index, leg in enumerate(legs):
        where = f'legs[{index}]'
        if not isinstance(leg, dict):
            raise _Wrong(f'{where}: {_shown(leg)} is not an object')
        _need(leg, 'arm', lambda v: v in ARMS, 'an arm (A or B)', where)
        block = _need(
            leg,
            'block',
            lambda v: _whole(v) and v >= 0,
            'a block number (a whole number, 0 or more)',
            where,
        )
        if most is not None and block >= most:
            raise _Wrong(
                f'{where}.block: {block} is beyond the plan (max_blocks {most})'
            )
        _need(leg, 'report', _inside, 'a report path inside the session', where)
        _need(leg, 'status', _whole, 'an exit status', where, optional=True)


def check(plan):
    """None if *plan* (parsed ``ab.json``) holds what ``ab`` writes, else the
    key and what is wrong with it (one line)."""
    if not isinstance(plan, dict):
        return f'{_shown(plan)[:20]} is not an object'
    try:
        _arms(plan)
        positive = 'a whole number, 1 or more'
        repeats = _need(plan, 'repeats', lambda v: _whole(v) and v >= 1, positive)
        most = _need(
            plan,
            'max_blocks',
            lambda v: _whole(v) and v >= repeats,
            f'a whole number, at least repeats ({repeats})',
            optional=True,
        )
        _need(plan, 'resolve', _fraction, 'a fraction between 0 and 1', optional=True)
        _need(
            plan,
            'confidence',
            lambda v: v in stats.CONFIDENCES,
            f'one of {", ".join(map(str, stats.CONFIDENCES))}',
            optional=True,
        )
        _need(plan, 'extra', _strings, 'a list of ReFrame options', optional=True)
        _legs(plan, most)
    except _Wrong as wrong:
        return str(wrong)
    return None


def load(path):
    """The plan at *path* (``DIR/ab.json``), checked; one line if it cannot
    be read or holds what ``ab`` does not write."""
    try:
        plan = json.loads(inputfile.read_bytes(path))
    except FileNotFoundError:
        raise ClusterbenchError(f'{path}: no such file (not an A/B session)') from None
    except OSError as err:
        raise ClusterbenchError(f'{path}: cannot read: {err.strerror}') from None
    except (ValueError, RecursionError) as err:
        why = 'nested too deeply' if isinstance(err, RecursionError) else err
        raise ClusterbenchError(f'{path}: not an A/B plan ({why})') from None
    wrong = check(plan)
    if wrong:
        raise ClusterbenchError(f'{path}: not an A/B plan: {wrong}')
    return plan
