#!/usr/bin/env python3
"""How well do verdicts catch a real slowdown, and how often do they cry wolf?

Takes the samples recorded with the references (reference_data/provenance/),
rebuilds each reference exactly as `clusterbench references update` did, then
simulates new sessions of N samples drawn (with replacement) from the recorded
samples, slowed down by 0 %, 5 % and 10 %, and judges them as `clusterbench
compare` does (bootstrap interval of the median ratio outside the tolerance).

Prints, per slowdown, the share of simulated sessions flagged: over all
figures, over the figures whose tolerance is below the slowdown, and over
those whose tolerance is below it by more than half the recorded samples'
range (where the measured spread lets the slowdown clear the tolerance),
with the number of figures in each group.

Usage: benchmarks/flag_detection.py [--samples 5] [--trials 200] [reference_data]
"""

import argparse
import glob
import os
import random
import sys

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..'))

from clusterbench import stats  # noqa: E402

# Figures for which smaller is better: a slowdown makes them larger.
LOWER_IS_BETTER_UNITS = {'s', 'us', 'ms'}


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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('directory', nargs='?', default='reference_data')
    parser.add_argument('--samples', type=int, default=5)
    parser.add_argument('--trials', type=int, default=200)
    args = parser.parse_args()
    figures = list(recorded(args.directory))
    if not figures:
        sys.exit(f'{args.directory}: no recorded samples (need >= 3 per figure)')
    rng = random.Random(1)
    print(
        f'{len(figures)} figures with recorded samples; {args.samples} samples '
        f'per simulated session, {args.trials} sessions per figure and slowdown'
    )
    print(
        f'{"slowdown":>9}  {"flagged (all)":>14}  {"tolerance < slowdown":>21}  '
        f'{"n":>3}  {"clear of the spread":>20}  {"n":>3}'
    )
    for slowdown in (0.0, 0.05, 0.10):
        flagged = total = 0
        within = {'allows': [0, 0], 'clear': [0, 0]}
        for _, values, ref, lower, upper, unit in figures:
            factor = 1 + slowdown if unit in LOWER_IS_BETTER_UNITS else 1 - slowdown
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
                new = [v * factor for v in rng.choices(values, k=args.samples)]
                ci = stats.median_ratio_ci(
                    new, ref, n_boot=400, seed=rng.randrange(1 << 30)
                )
                hit = stats.beyond_tolerance(ci, lower, upper)
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


if __name__ == '__main__':
    main()
