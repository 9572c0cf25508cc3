"""ReFrame's retries (``--max-retries``) in a run report: the runs that are
another attempt at the test cases that failed, not more samples.

ReFrame writes each retry as one more run of the report (``runs[1]``, ...),
right after the first, holding only the test cases that failed (or whose
dependencies failed) in the run before it. Nothing in a run marks it a
retry; the command line says how many there may be. ``--reruns`` and
``--duration`` add runs too, after any retries, each holding every test
case again: those are samples, as are ``--repeat`` and ``--distribute``,
which name each copy apart within one run.

A test case that passed in a retry counts once, as that attempt; one that
failed every attempt is one failure. An attempt that failed only in its
performance stage measured its figures: they stay samples (dropping them
would let retries hide a regression).
"""

import dataclasses
import re
import shlex

#: The results ReFrame retries: a failure, and a test case its failed
#: dependency kept from running.
RETRIED = ('fail', 'fail_deps')
#: The largest --max-retries read from a command line: enough for any real
#: session, and never a huge number to loop to.
_MOST = 1000
#: How the job-state plugin (checks/plugins/jobstate.py) names a Slurm job
#: that ended before its program did.
_SLURM_END = re.compile(
    r'\bended (TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|PREEMPTED|BOOT_FAIL|DEADLINE'
    r'|CANCELLED)\b'
)


@dataclasses.dataclass(frozen=True)
class Attempts:
    """One attempt of a retried test case: of *count* attempts in all, the
    first ended as *first* (``TIMEOUT``, ``FAILED (sanity)``); *last*: this
    is the last one, the one that counts."""

    count: int
    first: str
    last: bool


def attempts(data):
    """{id(test case): Attempts} of every attempt of every test case that
    ReFrame retried in the report *data* (a test case tried once is not in
    it)."""
    runs = data['runs']
    tried = {}
    for case in runs[0]['testcases'] if runs else ():
        tried[_key(case)] = [(0, case)]
    for r in range(1, min(max_retries(data.get('session_info')), len(runs) - 1) + 1):
        cases = runs[r]['testcases']
        keys = [_key(case) for case in cases]
        if not cases or not all(_retries(tried.get(key), r) for key in keys):
            break  # every test case again (--reruns, --duration): samples
        for key, case in zip(keys, cases):
            tried[key].append((r, case))
    found = {}
    for each in tried.values():
        if len(each) > 1:
            first = ended(each[0][1])
            for n, (_, case) in enumerate(each, 1):
                found[id(case)] = Attempts(len(each), first, n == len(each))
    return found


def superseded(tries, case):
    """Whether *case* is a failed attempt a later retry replaces (*tries*:
    :func:`attempts` of its report); one that measured figures is kept."""
    tried = tries.get(id(case))
    return bool(tried) and not tried.last and case.get('fail_phase') != 'performance'


def of_attempts(reason, tries, case):
    """The failure *reason* of *case*, saying how many attempts failed where
    ReFrame retried it."""
    tried = tries.get(id(case))
    if tried is None or case.get('result') not in RETRIED:
        return reason
    return f'{reason} ({tried.count} attempts, each failed)'


def noted(origin, tries, case):
    """The *origin* (results.runreport.Origin) of *case*'s figures, with what
    its first attempt ended as where this is the retry that counts."""
    tried = tries.get(id(case))
    if tried is None or not tried.last:
        return origin
    return dataclasses.replace(origin, retried_after=tried.first)


def _key(case):
    return (
        case.get('unique_name') or case.get('display_name') or case.get('name'),
        case.get('system'),
        case.get('partition'),
        case.get('environ'),
    )


def _retries(earlier, r):
    """Whether a test case of run *r* is a retry: its attempt in the run
    before did not pass."""
    return (
        bool(earlier)
        and earlier[-1][0] == r - 1
        and earlier[-1][1].get('result') in RETRIED
    )


def max_retries(info):
    """ReFrame's --max-retries in the command line of *info* (the report's
    session_info), 0 without one."""
    cmdline = info.get('cmdline') if isinstance(info, dict) else None
    try:
        argv = shlex.split(cmdline) if isinstance(cmdline, str) else []
    except ValueError:
        return 0
    found = 0
    for n, arg in enumerate(argv):
        if arg == '--':
            break
        option, equals, value = arg.partition('=')
        # argparse takes a prefix of an option that no other one shares.
        if len(option) <= len('--max') or not '--max-retries'.startswith(option):
            continue
        if not equals:
            value = argv[n + 1] if n + 1 < len(argv) else ''
        if re.fullmatch(r'\d{1,18}', value):
            found = min(int(value), _MOST)  # the last one given wins
    return found


def ended(case):
    """What one failed attempt ended as: ``TIMEOUT`` (a job past its time
    limit, or another end of a Slurm job), ``FAILED (sanity)`` (the stage it
    failed in) or ``a failed dependency``."""
    reason = str(case.get('fail_reason') or '')
    state = _SLURM_END.search(reason)
    if state:
        return state[1]
    if 'job timed out' in reason:  # ReFrame's local scheduler
        return 'TIMEOUT'
    if case.get('result') == 'fail_deps':
        return 'a failed dependency'
    return f'FAILED ({case.get("fail_phase") or "unknown"})'
