#!/usr/bin/env python3
"""The floor of each kind of figure, learnt from the spread between sessions.

Reads the provenance of stored references (per figure, the median of each
session it was made from), names each figure's kind as
clusterbench.references.floors.kind_of does, and prints per kind: its
figures, their sessions, the median over the figures of the robust relative
spread of their session medians (1.4826 x MAD / median), and the floor that
rule makes of it: twice that spread, rounded up to a whole percent, at least
floors.MINIMUM. The table in clusterbench/references/floors.py is this
output; `declared` shows what it holds now.

It also checks the floors against the data: for every figure and every
choice of 3 of its sessions, a reference is made from those 3 as
`clusterbench baseline` makes it (stats.session_band with the kind's floor),
and each other session's median is judged inside or outside that band. The
share outside is printed per kind (a false alarm of a healthy session), with
the old single floor of 3 % beside it.

Measures nothing. Usage:
    evaluation/baseline_floors.py [reference_data/local ...]
"""

import argparse
import itertools
import math
import os
from collections import defaultdict

from clusterbench.judging import stats, vocabulary
from clusterbench.references import floors, provenance


def figures_of(directory):
    """(test, variable, unit, params, session medians) of every figure whose
    provenance is in *directory*, as its reference in use was made (retired
    entries are not read)."""
    found = []
    indexes = {}
    for name, test, where, entry in provenance.in_use(directory):
        if name not in indexes:
            refs = provenance.load(os.path.join(directory, name)) or {}
            indexes[name] = {
                t: body.get('$index') or []
                for t, body in refs.items()
                if isinstance(body, dict)
            }
        params = dict(zip(indexes[name].get(test) or [], where.split('/')))
        for var, fig in provenance.figures(entry).items():
            medians = fig.get('session_medians') or []
            unit = (fig.get('reference') or [None] * 4)[3]
            if len(medians) >= 3:
                found.append((test, var, unit, params, medians))
    return found


def learnt_floor(spread):
    return max(floors.MINIMUM, math.ceil(200 * spread - 1e-9) / 100)


def outside_share(medians_list, floor):
    """Share of held-out session medians outside a band made from 3 others."""
    outside = total = 0
    for medians in medians_list:
        for three in itertools.combinations(range(len(medians)), 3):
            centre, tol, _ = stats.session_band(
                [[medians[i]] for i in three], floor, margin=floors.MINIMUM
            )
            for j, m in enumerate(medians):
                if j in three:
                    continue
                total += 1
                outside += abs(m / centre - 1) > tol if centre else 0
    return outside / total if total else 0.0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('directories', nargs='*', default=['reference_data/local'])
    args = parser.parse_args(argv)
    by_kind = defaultdict(list)
    for directory in args.directories:
        for test, var, unit, params, medians in figures_of(directory):
            by_kind[floors.kind_of(test, var, unit, params)].append(
                (f'{test} {var}', medians)
            )
    print(f'source: {", ".join(args.directories)}')
    head = (
        f'{"kind":27} {"figures":>7} {"sessions":>8} {"spread":>7} {"learnt":>7} '
        f'{"declared":>8} {"outside":>8} {"at 3 %":>7}'
    )
    print(head)
    for kind, figs in sorted(by_kind.items()):
        spreads = [stats.relative_spread(m) for _, m in figs]
        spread = stats.median(spreads)
        declared = floors.FLOORS.get(kind, floors.NO_DATA)
        medians = [m for _, m in figs]
        print(
            f'{kind:27} {len(figs):7d} {max(len(m) for m in medians):8d} '
            f'{spread:7.1%} {learnt_floor(spread):7.0%} {declared:8.0%} '
            f'{outside_share(medians, declared):8.1%} '
            f'{outside_share(medians, floors.MINIMUM):7.1%}'
        )
    print(
        '\nspread: median over the figures of 1.4826 x MAD / median of the '
        'session medians; learnt: 2 x spread, rounded up, at least '
        f'{floors.MINIMUM:.0%}; outside: held-out sessions outside a band made '
        'from 3 others with the declared floor (at 3 %: with the old floor); '
        'count and share are declared, not learnt (a count is deterministic; a '
        'share near zero has an absolute floor of '
        f'{vocabulary.SHARE_FLOOR:g} point)'
    )
    for kind, figs in sorted(by_kind.items()):
        names = sorted({name for name, _ in figs})
        shown = ', '.join(names[:6]) + (
            f', +{len(names) - 6} more' if len(names) > 6 else ''
        )
        print(f'  {kind}: {shown}')


if __name__ == '__main__':
    main()
