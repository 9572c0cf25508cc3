#!/usr/bin/env python3
"""How well do verdicts catch a real slowdown, and how often do they cry wolf?

Takes the samples recorded with the references (reference_data/provenance/)
and the references made of them (or, with --floor/--k, the references
`clusterbench references update` would make of them with that floor and k),
then simulates new sessions of N samples drawn (with replacement) from the
recorded samples, slowed down by 0 %, 5 % and 10 %, and judges them as
`clusterbench compare` does (median ratio outside the tolerance and its
bootstrap interval excluding 1).

A session counts as flagged when its verdict fails the run: SLOWER or WORSE,
beyond tolerance in the figure's bad direction (clusterbench.vocabulary).
Prints, per slowdown, the share of simulated sessions flagged: over all
figures, over the figures whose tolerance is below the slowdown, and over
those whose tolerance is below it by more than half the recorded samples'
range (where the measured spread lets the slowdown clear the tolerance),
with the number of figures in each group.

With --synthetic SPREAD ..., the same for figures of a known spread (normal
noise, references from 9 samples, new sessions drawn from the same
distribution): what the verdicts do on a machine steadier than this one.

Usage: benchmarks/flag_detection.py [--samples 5] [--trials 200]
    [--floor F --k K] [--synthetic 0.01 0.02 0.04] [reference_data]
"""

import argparse
import glob
import os
import random
import sys

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..'))

from clusterbench import refupdate, stats, vocabulary  # noqa: E402


def _lower_is_better(name, unit):
    """A slowdown makes these figures larger (clusterbench.vocabulary)."""
    return vocabulary.direction(name.rsplit('/', 1)[-1], unit) == vocabulary.LOWER


def recorded(directory):
    for path in sorted(glob.glob(os.path.join(directory, 'provenance', '*.yaml'))):
        with open(path) as f:
            data = yaml.safe_load(f) or {}
        for test, entries in data.items():
            for where, entry in entries.items():
                for name, fig in entry.get('figures', {}).items():
                    values = fig.get('values') or []
                    ref, lower, upper, unit = fig['reference']
                    if len(values) >= 3 and name != 'iterations':
                        yield f'{test}/{where}/{name}', values, ref, lower, upper, unit


def rebuilt(figures, floor, k):
    """The figures with the references `references update` would make."""
    out = []
    for name, values, _, _, _, unit, draw in figures:
        median, tol, _ = refupdate.tolerance_of(values, floor, k)
        out.append((name, values, median, *refupdate.band(tol), unit, draw))
    return out


def synthetic(spread, count, recorded_samples, rng):
    """*count* figures of known relative spread: *recorded_samples* samples
    for the reference, and new sessions drawn from the same distribution."""

    def draw(rng, k):
        return [rng.gauss(100.0, spread * 100.0) for _ in range(k)]

    for i in range(count):
        values = draw(rng, recorded_samples)
        yield f'synthetic/{spread:g}/{i}', values, None, None, None, 'GB/s', draw


def simulate(figures, args, rng):
    print(
        f'{"slowdown":>9}  {"flagged (all)":>14}  {"tolerance < slowdown":>21}  '
        f'{"n":>3}  {"clear of the spread":>20}  {"n":>3}'
    )
    for slowdown in (0.0, 0.05, 0.10):
        flagged = total = 0
        within = {'allows': [0, 0], 'clear': [0, 0]}
        for name, values, ref, lower, upper, unit, draw in figures:
            lower_better = _lower_is_better(name, unit)
            factor = 1 + slowdown if lower_better else 1 - slowdown
            # Only a change in the bad direction (SLOWER/WORSE) fails a run.
            bad_side = 1 if lower_better else -1
            # "allows": the tolerance is below the slowdown; "clear": it is so
            # even after half the recorded samples' range, i.e. the slowed
            # samples lie beyond the tolerance, not just their median.
            half_range = (max(values) - min(values)) / (2 * ref)
            kinds = []
            if slowdown > 0 and upper < slowdown:
                kinds.append('allows')
                if upper + half_range < slowdown:
                    kinds.append('clear')
            for _ in range(args.trials):
                new = [v * factor for v in draw(rng, args.samples)]
                ci = stats.median_ratio_ci(
                    new, ref, n_boot=400, seed=rng.randrange(1 << 30)
                )
                hit = stats.departure(ci, lower, upper) == bad_side
                flagged += hit
                total += 1
                for kind in kinds:
                    within[kind][0] += hit
                    within[kind][1] += 1
        cells = []
        for hits, n in within.values():
            cells.append((f'{hits / n:.1%}' if n else 'n/a', n // args.trials))
        (allow, n_allow), (clear, n_clear) = cells
        print(
            f'{slowdown:>9.0%}  {flagged / total:>14.1%}  {allow:>21}  '
            f'{n_allow:>3}  {clear:>20}  {n_clear:>3}'
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('directory', nargs='?', default='reference_data')
    parser.add_argument('--samples', type=int, default=5)
    parser.add_argument('--trials', type=int, default=200)
    parser.add_argument('--floor', type=float, help='rebuild tolerances: floor')
    parser.add_argument('--k', type=float, help='rebuild tolerances: k x spread')
    parser.add_argument(
        '--synthetic',
        type=float,
        nargs='*',
        metavar='SPREAD',
        help='also figures of these known relative spreads (e.g. 0.01 0.02)',
    )
    args = parser.parse_args()
    floor = 0.03 if args.floor is None else args.floor
    k = 3.0 if args.k is None else args.k
    rng = random.Random(1)
    figures = [
        (*fig, lambda rng, n, values=fig[1]: rng.choices(values, k=n))
        for fig in recorded(args.directory)
    ]
    if not figures:
        sys.exit(f'{args.directory}: no recorded samples (need >= 3 per figure)')
    if args.floor is not None or args.k is not None:
        print(f'tolerances rebuilt: max({floor:g}, {k:g} x 1.4826 x MAD / median)')
        figures = rebuilt(figures, floor, k)
    print(
        f'{len(figures)} figures with recorded samples; {args.samples} samples '
        f'per simulated session (drawn from the recorded ones), {args.trials} '
        'sessions per figure and slowdown'
    )
    simulate(figures, args, rng)
    for spread in args.synthetic or ():
        print(
            f'\nsynthetic: 50 figures of relative spread {spread:.1%} (normal), '
            f'references from 9 samples, tolerance max({floor:g}, {k:g} x robust '
            f'spread); {args.samples} new samples per session'
        )
        simulate(rebuilt(list(synthetic(spread, 50, 9, rng)), floor, k), args, rng)


if __name__ == '__main__':
    main()
