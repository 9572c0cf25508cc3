#!/usr/bin/env python3
"""How wide are the bands of the compute-bound and 1-rank figures, and what
would a narrower rule cost on the healthy sessions? The memory-bound ones
are listed apart, each with its measured spread.

Reads the provenance of a reference directory (per figure, the median of
each session its reference in use was made from) and the references in
use. A figure is compute-bound or 1-rank as `clusterbench references show`
names it (references.bandtable.figure_class: its kind of figure, DGEMM or
HPL, from references.floors; or its test's ``ranks_per_node``/``num_tasks``
parameter of 1), never by a list of names.

For each rule it prints how many of those figures get a band wider than
±10 % on their bad side, and a leave-one-out holdout: every session in turn
is left out, the band is made from the others by the rule, and the
held-out session's median is judged inside or outside on its bad side (a
false alarm on a healthy session); a session is red when any of its
figures is. Rules:

- shipped: the reference files as they are (made from all sessions: no
  holdout, their sessions are inside by construction);
- baseline: `clusterbench baseline` and `references update --floor kind`
  (stats.session_band: the floor of the kind, k x spread, and the reach to
  the farthest session median + 3 %);
- spread: max(floor of the kind, k x spread), without the reach;
- fixed: ±10 % around the median of the other sessions, the band the target
  of issue 26 asks for.

Then it lists the figures that stay wide under the baseline rule, with
their measured spread between sessions. Reads files; measures nothing.

Usage: evaluation/band_widths.py [reference_data/local] [--k 3]
"""

import argparse
import os

from clusterbench.judging import stats, verdict, vocabulary
from clusterbench.references import (
    bandtable,
    floors,
    proposalview,
    provenance,
)
from clusterbench.references import update as refupdate
from clusterbench.references import validate as refdata

WIDE = bandtable.WIDE


def figures_of(directory):
    """(name, class, test, variable, unit, params, reference tuple, {session:
    median}) of every figure of the references in use in *directory*."""
    found = []
    for name, test, where, entry in provenance.in_use(directory):
        refs = provenance.load(os.path.join(directory, name)) or {}
        body = refs.get(test) or {}
        index = body.get('$index') or ['$partition']
        leaf = provenance.leaves({test: body}).get((test, where)) or {}
        params = dict(zip(index, where.split('/')))
        ids = (provenance.current(entry) or {}).get('sessions') or []
        short = proposalview.short_test(test, index, where.split('/'))
        for var, fig in provenance.figures(entry).items():
            medians = fig.get('session_medians') or []
            ref = leaf.get(var)
            if not isinstance(ref, list) or len(medians) < 3:
                continue
            unit = refdata.unit_of(ref)
            siblings = [(v, refdata.unit_of(r)) for v, r in leaf.items()]
            kind = bandtable.figure_class(test, var, unit, params, siblings)
            place = f'{params.get("$environ", "")} {short} / {var}'
            # The medians are in the order of the sessions the update read.
            by_session = dict(zip(ids, medians)) if len(ids) == len(medians) else None
            by_session = by_session or dict(enumerate(medians))
            found.append((place, kind, test, var, unit, params, ref, by_session))
    return found


def band_of(rule, medians, test, var, unit, params, k):
    """(centre, tolerance) of a band made from *medians* by *rule*."""
    floor = max(floors.MINIMUM, floors.floor_of(test, var, unit, params)[0])
    share = vocabulary.is_share(var, unit)
    centre = stats.median(medians)
    if rule == 'baseline':
        centre, tol, _ = stats.session_band(
            [[m] for m in medians], floor, k,
            vocabulary.SHARE_FLOOR if share else None, margin=floors.MINIMUM,
        )  # fmt: skip
    elif rule == 'spread':
        tol = stats.tolerance_band(medians, floor, k)
    else:
        tol = WIDE
    if share and centre:  # judged in points of the whole, any rule
        tol = max(tol, vocabulary.SHARE_FLOOR / abs(centre))
    return centre, round(tol, 2)


def wider(band_width):
    return refdata.wider(band_width, WIDE)


def width(var, unit, centre, tol):
    lower, upper = refupdate.band(tol)
    return verdict.bad_side_width(var, unit, centre, lower, upper) if centre else 0


def bad_outside(var, unit, value, centre, tol):
    """Outside the band on the figure's bad side (a false alarm)."""
    lower, upper = refupdate.band(tol)
    low, high = verdict.bounds(centre, lower, upper)
    better = vocabulary.direction(var, unit)
    if better == vocabulary.HIGHER:
        return value < low
    if better == vocabulary.LOWER:
        return value > high
    return not low <= value <= high


def study(figs, rule, k):
    """(wide figure count, held-out figures outside, held-out figures,
    red sessions, sessions) of *rule* over *figs*."""
    wide = outside = total = 0
    red, sessions = set(), set()
    for _, _, test, var, unit, params, ref, by_session in figs:
        if rule == 'shipped':
            wide += wider(verdict.bad_side_width(var, unit, *ref[:3]))
            continue
        centre, tol = band_of(rule, list(by_session.values()), test, var, unit,
                              params, k)  # fmt: skip
        wide += wider(width(var, unit, centre, tol))
        for session, value in by_session.items():
            others = [v for s, v in by_session.items() if s != session]
            c, t = band_of(rule, others, test, var, unit, params, k)
            total += 1
            sessions.add(session)
            if bad_outside(var, unit, value, c, t):
                outside += 1
                red.add(session)
    return wide, outside, total, len(red), len(sessions)


def spread_text(medians, centre):
    """'spread 4.0%, sessions -20%..+6%': the robust spread of the session
    medians and how far the farthest lay from *centre*."""
    low, high = min(medians) / centre - 1, max(medians) / centre - 1
    spread = stats.relative_spread(medians)
    return f'spread {spread:.1%}, sessions {low:+.0%}..{high:+.0%}'


def report(kind_name, figs, k):
    """The table and the list of wide figures of one CPU kind."""
    sessions = max((len(f[-1]) for f in figs), default=0)
    print(f'CPU kind {kind_name}: {len(figs)} compute-bound and 1-rank '
          f'figures, up to {sessions} sessions each')  # fmt: skip
    print(f'{"rule":9} {"wide":>11} {"held-out figures outside":>25} '
          f'{"sessions red":>13}')  # fmt: skip
    for rule in ('shipped', 'baseline', 'spread', 'fixed'):
        wide, outside, total, red, seen = study(figs, rule, k)
        held = f'{outside} of {total} ({outside / total:.0%})' if total else '-'
        reds = f'{red} of {seen}' if seen else '-'
        print(f'{rule:9} {wide:3d} ({wide / len(figs):4.0%}) {held:>25} {reds:>13}')
    print(f'\nwide (> ±{WIDE:.0%} on the bad side) under the baseline rule, with '
          'the spread between sessions (1.4826 x MAD / median):')  # fmt: skip
    for place, kind, test, var, unit, params, _, by_session in sorted(figs):
        medians = list(by_session.values())
        centre, tol = band_of('baseline', medians, test, var, unit, params, k)
        if wider(width(var, unit, centre, tol)):
            print(f'  {place} [{kind}]: ±{tol:.0%}, {spread_text(medians, centre)}')


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('directory', nargs='?', default='reference_data/local')
    parser.add_argument('--k', type=float, default=3.0)
    args = parser.parse_args(argv)
    # The target is per kind of machine: each CPU kind is counted alone.
    by_kind, memory = {}, {}
    for fig in figures_of(args.directory):
        cpu = str(fig[5].get('cpu_kind', '-'))
        if fig[1] in bandtable.STEADY_CLASSES:
            by_kind.setdefault(cpu, []).append(fig)
        elif fig[1] == 'memory-bound':
            memory.setdefault(cpu, []).append(fig)
    print(f'source: {args.directory}')
    for kind_name, figs in sorted(by_kind.items()):
        print()
        report(kind_name, figs, args.k)
        named(kind_name, memory.get(kind_name, []))


def named(kind_name, figs):
    """The memory-bound absolute figures of one CPU kind, each with its
    shipped band and its measured spread between sessions."""
    if not figs:
        return
    wide = sum(wider(verdict.bad_side_width(f[3], f[4], *f[6][:3])) for f in figs)
    print(f'\nCPU kind {kind_name}: {len(figs)} memory-bound figures, {wide} with '
          f'a shipped band wider than ±{WIDE:.0%}, named with their spread (the '
          "CG solver's steady judge is its share of the in-job triad, "
          'job_triad_efficiency, counted above where recorded):')  # fmt: skip
    for place, _, _, var, unit, _, ref, by_session in sorted(figs):
        medians = list(by_session.values())
        band = verdict.bad_side_width(var, unit, *ref[:3])
        text = spread_text(medians, stats.median(medians))
        print(f'  {place}: shipped ±{band:.0%}, {text}')


if __name__ == '__main__':
    main()
