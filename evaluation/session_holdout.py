#!/usr/bin/env python3
"""Would the next session be green? Each stored session judged against
references made of the others.

evaluation/flag_detection.py draws new sessions from the recorded samples,
so a simulated session can never fall outside what was recorded; the real
question for `make run` is what a session of another hour does. Here every
session of the reports given is held out in turn: references are made of
the other sessions exactly as `clusterbench references update` makes them
(per-session medians, reach, floor, k, the share floor), and the held-out
session's samples are judged as `clusterbench compare` judges them. Then the
same held-out samples are made 10 % (and 5 %) worse in each figure's bad
direction (a rate x 0.9, a time x 1/0.9) and judged again.

Prints, for each rule (--rule FLOOR:K, default the one `references update`
uses), per session whether it would have failed (SLOWER/WORSE: red) and which
figures did it, then over all held-out figures: the share red, INCONCLUSIVE
and passed on the unchanged samples, and for the 10 % and 5 % slowdowns the
share red, named (INCONCLUSIVE) and passed. A 10 % slowdown that passes is a
figure whose held-out session was that much better than its reference.

Only figures backed by at least --min-sessions other sessions are judged, and
only sessions of the same machine identity count (the reference index holds
it). Reads stored reports; measures nothing.

Usage: evaluation/session_holdout.py [--rule 0.03:3] [--min-sessions 3]
    results/local/*/report.json
"""

import argparse
import os
import sys
from collections import Counter, defaultdict

from clusterbench.core.errors import ClusterbenchError
from clusterbench.judging import verdict, vocabulary
from clusterbench.references import update
from clusterbench.results import samples

RED = (verdict.SLOWER, verdict.WORSE, verdict.FLAGGED)
PASSED = (verdict.PASS, verdict.FASTER)
#: The issue's class of figures that must catch a 10 % slowdown: a robust
#: spread between sessions below 3 %.
STEADY = 0.03


def worse_by(values, fraction, variable, unit):
    """*values* made *fraction* worse in the figure's bad direction; None for
    a figure without one (nothing to slow down)."""
    better = vocabulary.direction(variable, unit)
    if better == vocabulary.HIGHER:
        return [v * (1 - fraction) for v in values]
    if better == vocabulary.LOWER:
        return [v / (1 - fraction) for v in values]
    return None


def judge(group, values, others, floor, k, margin=None):
    """The verdict kind of *values* against a reference made of *others*
    (session -> samples) by the rule (floor, k)."""
    share = vocabulary.is_share(group.variable, group.unit)
    centre, tolerance, spread = update.tolerance_of(
        [],
        floor,
        k,
        sessions=list(others.values()),
        absolute_floor=vocabulary.SHARE_FLOOR if share else None,
        margin=margin,
    )
    # The entry `references update` would write: its rounding and band.
    entry = update.Proposal(group, centre, tolerance, spread).entry
    judged = verdict.Judged(
        group.test, group.system, '', '', group.variable, group.unit,
        values, verdict.Reference.from_reframe(entry),
    ).judge()  # fmt: skip
    return verdict.kind(judged.verdict), tolerance, spread


def name_of(group):
    key = '/'.join(str(k) for k in group.key[1:] if k not in ('$partition',))
    return f'{group.test} {key} {group.variable}'


def holdout(groups, floor, k, margin, min_sessions):
    """(per-session red figure names, {(slowdown, steady): Counter of
    verdicts}, names of steady figures a 10 % slowdown passed)."""
    red_by_session = defaultdict(list)
    outcomes = defaultdict(Counter)
    missed = set()
    sessions = sorted({s for g in groups for s in g.per_session})
    for session in sessions:
        for group in groups:
            if session not in group.per_session:
                continue
            others = {s: v for s, v in group.per_session.items() if s != session}
            if len(others) < min_sessions:
                continue
            values = group.per_session[session]
            kind, _, spread = judge(group, values, others, floor, k, margin)
            steady = spread < STEADY
            outcomes[0.0, steady][kind] += 1
            if kind in RED:
                red_by_session[session].append(name_of(group))
            if vocabulary.is_share(group.variable, group.unit):
                continue  # 10 % of a share near zero is not a change (pp)
            for fraction in (0.10, 0.05):
                slowed = worse_by(values, fraction, group.variable, group.unit)
                if slowed is None:
                    continue
                kind = judge(group, slowed, others, floor, k, margin)[0]
                outcomes[fraction, steady][kind] += 1
                if fraction == 0.10 and steady and kind in PASSED:
                    missed.add(name_of(group))
        red_by_session.setdefault(session, [])
    return red_by_session, outcomes, missed


def _share(counter, kinds):
    total = sum(counter.values())
    return 100 * sum(counter[k] for k in kinds) / total if total else 0.0


def report(rule, red_by_session, outcomes, missed, names):
    floor, k, margin = rule
    green = sum(1 for reds in red_by_session.values() if not reds)
    beyond = f', margin {margin:g}' if margin is not None else ''
    print(f'rule floor {floor:g}, k {k:g}{beyond}: {green} of '
          f'{len(red_by_session)} held-out sessions green')  # fmt: skip
    for session, reds in sorted(red_by_session.items(), key=lambda i: names[i[0]]):
        more = f'; +{len(reds) - 4} more' if len(reds) > 4 else ''
        shown = '; '.join(reds[:4]) + more
        print(f'  {names[session]}: {len(reds)} red' + (f' ({shown})' if reds else ''))
    for steady in (True, False):
        what = f'spread {"<" if steady else ">="} {STEADY:.0%}'
        same = outcomes[0.0, steady]
        print(f'  {what}, unchanged: {sum(same.values())} figures, '
              f'red {_share(same, RED):.1f} %, '
              f'INCONCLUSIVE {_share(same, [verdict.INCONCLUSIVE]):.1f} %, '
              f'pass {_share(same, PASSED):.1f} %')  # fmt: skip
        for fraction in (0.10, 0.05):
            got = outcomes[fraction, steady]
            print(f'  {what}, {fraction:.0%} worse: {sum(got.values())} figures, '
                  f'red {_share(got, RED):.1f} %, '
                  f'INCONCLUSIVE {_share(got, [verdict.INCONCLUSIVE]):.1f} %, '
                  f'pass {_share(got, PASSED):.1f} %')  # fmt: skip
    if missed:
        print(f'  steady figures a 10 % slowdown passed: {"; ".join(sorted(missed))}')


def _rule(text):
    """FLOOR:K[:MARGIN] -> (floor, k, margin or None)."""
    parts = [float(x) for x in text.split(':')]
    if len(parts) not in (2, 3):
        raise ValueError(text)
    return (*parts, None) if len(parts) == 2 else tuple(parts)


def session_names(paths):
    """uuid -> the report's directory name (its start time)."""
    import json

    names = {}
    for path in paths:
        with open(path) as f:
            uuid = json.load(f)['session_info'].get('uuid') or path
        names[uuid] = os.path.basename(os.path.dirname(path)) or path
    return names


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('reports', nargs='+')
    parser.add_argument(
        '--rule', action='append', default=[],
        help='FLOOR:K[:MARGIN] of the tolerance rule (repeatable)',
    )  # fmt: skip
    parser.add_argument('--min-sessions', type=int, default=3)
    args = parser.parse_args(argv)
    try:
        rules = [_rule(r) for r in args.rule or ['0.03:3']]
    except ValueError:
        parser.error(f'--rule takes FLOOR:K, e.g. 0.03:3, not {args.rule}')
    try:
        groups = samples.collect(args.reports)
    except ClusterbenchError as err:
        sys.exit(f'session_holdout: {err}')
    names = session_names(args.reports)
    for rule in rules:
        found = holdout(groups, *rule, args.min_sessions)
        report(rule, *found, names)


if __name__ == '__main__':
    main()
