"""Confirmation runs: a test case outside its reference is run again before
its figures are called a regression.

On a machine shared with neighbours (a VM, a node beside other jobs) a
figure can leave its band for a few minutes: on 2026-11-24 HPCC's single
DGEMM read 54.9 GF/s at 22:05 and 51.6 at 22:07 (-6 %, against 53.4-55.9 in
eleven sessions), MPIFFT 5.62 and 3.85 GFlop/s, with the run's steal, load
and host probe all quiet. A machine that changed stays changed. So every
test case with a figure SLOWER or FLAGGED is run *count* more times
in a ReFrame session of its own (``-n /<hash>`` on its partition and
environment, ``--repeat``), and each figure is then judged on all its runs
together: the median of the samples against the band, and the bootstrap
interval for significance (clusterbench.judging.verdict), so one burst no
longer decides, while a real slowdown, present in every run, still does.

The confirmation runs are spaced from the first: they start after every
other test of the session, once the machine has been quiet for a few
seconds (at most ``--confirm-wait`` seconds of waiting, said on one line),
so that they do not meet the same bad minutes. A portable figure (judged
against its band, results.portable) that fails is confirmed like the
others.
"""

import os
import re
import time

from clusterbench.judging import verdict
from clusterbench.noisyhost import quiet

#: More runs of each test case outside its reference; `clusterbench run
#: --confirm N` changes it, 0 turns confirmation off.
DEFAULT_RUNS = 2

#: The most `--confirm` accepts: ReFrame makes every repetition a test case
#: up front (--confirm 999999999999 ended in its memory error), and twenty
#: more runs already judge a figure on its median.
MAX_RUNS = 20

#: Seconds the confirmation runs wait, at most, for a quiet machine (see
#: quiet.wait_quiet); `clusterbench run --confirm-wait S` changes it.
DEFAULT_WAIT = 60.0

#: What can go wrong in a confirmation session besides its figures.
NO_REPORT = 'a confirmation session wrote no report, see above'
SESSION_FAILED = 'a confirmation session failed, see above'

#: Options of the first session that would select, or multiply, other test
#: cases in a confirmation session (``-n`` patterns are OR-ed by ReFrame).
_DROPPED_WITH_VALUE = ('-n', '--name', '--repeat', '--reruns')

#: The verdicts a confirmation reruns: a figure's regression (a FAILED test
#: left no figure to confirm).
RED = tuple(v for v in verdict.REGRESSIONS if v != verdict.FAILED)


def red_cases(judged, cases):
    """{(system, partition, environ): [hashcode, ...]} of the test cases with a
    figure that fails the run (SLOWER, FLAGGED)."""
    red = {
        (j.test, j.system, j.partition, j.environ)
        for j in judged
        if verdict.kind(j.verdict) in RED
    }
    found = {}
    for case in cases:
        if case.get('fixture') or not case.get('hashcode'):
            continue
        ident = (case['name'], case['system'], case['partition'], case['environ'])
        if ident in red:
            red.discard(ident)
            where = (case['system'], case['partition'], case['environ'])
            found.setdefault(where, []).append(case['hashcode'])
    return found


def without_selection(extra):
    """*extra* (ReFrame options) without test-name selection and repetition."""
    kept, skip = [], False
    for arg in extra:
        if skip:
            skip = False
            continue
        if arg in _DROPPED_WITH_VALUE:
            skip = True
            continue
        if any(arg.startswith(opt + '=') for opt in _DROPPED_WITH_VALUE[1:]):
            continue
        if arg.startswith('-n') and not arg.startswith('--'):
            continue  # -nPATTERN
        kept.append(arg)
    return kept


def unsupported(extra):
    """Why confirmation cannot run with these options, or ''."""
    if any(arg == '--distribute' or arg.startswith('--distribute=') for arg in extra):
        # ReFrame filters before it distributes: a distributed variant's hash
        # selects nothing in a new session.
        return 'not with --distribute (rerun the node by name)'
    return ''


def session_args(extra, hashes, environ, runs):
    """ReFrame options of the confirmation session of *hashes* in *environ*."""
    names = [arg for h in hashes for arg in ('-n', f'/{h}')]
    return [
        *without_selection(extra),
        *names,
        '-p',
        f'^{re.escape(environ)}$',
        '--repeat',
        str(runs),
    ]


def wait_until_quiet(seconds, out, wait=quiet.wait_quiet):
    """Before the confirmation runs: wait at most *seconds* for a quiet
    machine, and say on *out* how long it took or that it never was."""
    if not seconds:
        print('\nConfirmation runs: not waiting for a quiet machine', file=out)
        return True
    print(
        f'\nConfirmation runs: after the other tests; waiting up to '
        f'{seconds:g} s for a quiet machine',
        file=out,
        flush=True,
    )
    start = time.monotonic()
    said = []
    if wait(seconds, say=said.append):
        waited = time.monotonic() - start
        print(f'Confirmation runs: quiet after {waited:.0f} s', file=out)
        return True
    for line in said:
        print(line.replace('running anyway', 'confirming anyway'), file=out)
    return False


def directory(prefix, system, partition, environ):
    """Where the confirmation session of one partition and environment goes."""
    name = re.sub(r'[^A-Za-z0-9_.-]', '-', f'{system}-{partition}-{environ}')
    return os.path.join(prefix, 'confirm', name)


def summary(before, after, runs, confirming, trouble=()):
    """The line printed under the table: what the confirmation runs changed.

    *runs* were asked for; *confirming* are the figures the confirmation
    sessions recorded, and only those runs are said to have happened;
    *trouble* says why some are missing (NO_REPORT, SESSION_FAILED).
    """
    was = {_key(j) for j in before if verdict.kind(j.verdict) in RED}
    still = {_key(j) for j in after if verdict.kind(j.verdict) in RED} & was
    back = len(was - still)
    found = {}
    for figure in confirming:
        found[_key(figure)] = found.get(_key(figure), 0) + 1
    done = sorted({found.get(key, 0) for key in was}) or [0]
    ran = str(done[0]) if len(done) == 1 else f'{done[0]} to {done[-1]}'
    if done != [runs]:
        why = '; '.join(sorted(trouble)) or 'the others recorded no figure'
        ran = f'{ran} more time(s) ({runs} asked; {why})'
    else:
        ran = f'{ran} more time(s)'
    judged = 'all runs' if done[-1] else 'the first run'
    return (
        f'Confirmation: {len(was)} figure(s) outside their references were run '
        f'{ran} and judged on {judged}: {len(still)} still fail, {back} did not '
        f'hold'
    )


def _key(judged):
    return (judged.test, judged.system, judged.partition, judged.environ,
            judged.variable)  # fmt: skip
