#!/usr/bin/env python3
"""Roofline check: cgsolver's effective bandwidth against a STREAM-style triad.

Builds src/cgsolver and evaluation/stream_triad with the same compiler and
flags, then, on one node and in this one invocation, runs for every class
(default B C) and variant (default classic pipelined) --repeats times:
the triad, immediately followed by the solver, both with ranks = cores.

Both figures count bytes the same way (STREAM's convention, also the one of
src/cgsolver/README.md "Flop and byte model"): every array read or written
once per kernel, 8-byte values, no write-allocate traffic.  So triad =
24 bytes/element / best-of-N time; solver = model bytes of the solve /
solve time (its `bandwidth_gbs`).

Prints one row per case: median solver bandwidth, median triad bandwidth of
the triads run next to it, their ratio (target >= 0.90, issue 3), the range
of the per-pair ratios, the triad's average over its repetitions (and the
solver's ratio to it: on a loaded machine a long solve sees the average, the
best-of-N triad the luckiest moment), the solver's best single iteration
against the triad (only if cgsolver's JSON has `bandwidth_best_gbs`), and
the 1-minute load average.

    .venv/bin/python evaluation/cg_roofline.py [--classes B C]
        [--variants classic pipelined] [--ranks N] [--repeats 3]
        [--triad-ntimes 20] [--triad-elements N] [--mpi openmpi|mpich]
        [--cflags ...] [--max-load L [--max-wait S]] [--json FILE]

Exit status: 0 (also when a prerequisite is missing: one `SKIP:` line), 1 if
a build or run failed.  The target is reported, not enforced.
"""

import argparse
import sys

import cgbench_common as cb

TARGET = 0.90


def body(bench):
    args = bench.args
    bench.check_prereqs()
    ranks = args.ranks or bench.cores
    solver = bench.build_cgsolver()
    triad = bench.build_triad()
    triad_args = ['--ntimes', str(args.triad_ntimes)]
    if args.triad_elements:
        triad_args += ['--elements', str(args.triad_elements)]
    print('cg_roofline: cgsolver effective bandwidth vs STREAM-style triad, one node')
    print(
        f'  {ranks} ranks ({bench.cores} cores), {bench.cc}, '
        f'{args.repeats} repeats (medians)'
    )
    print(
        '  bytes: STREAM convention for both (triad 24 B/element; solver model of '
        'src/cgsolver/README.md), no write-allocate'
    )
    print(f'  start: {cb.uptime()}')
    if bench.oversubscribed(ranks):
        print(f'  NOTE: {ranks} ranks on {bench.cores} cores: oversubscribed')
    sys.stdout.flush()

    rows = []
    for cls in args.classes:
        for variant in args.variants:
            sol, tri, tri_avg, ratios, loads, its = [], [], [], [], [], []
            best = []
            for _ in range(args.repeats):
                t, lb, la = bench.run_triad(triad, ranks, triad_args)
                loads += [lb, la]
                triad_cpu = bench.cpu_share
                r, lb, la = bench.run_cgsolver(
                    solver,
                    ranks,
                    ['--class', cls, '--variant', variant],
                    variant=variant,
                )
                loads += [lb, la]
                sol.append(r['bandwidth_gbs'])
                tri.append(t['triad_gbs'])
                tri_avg.append(t['triad_avg_gbs'])
                ratios.append(r['bandwidth_gbs'] / t['triad_gbs'])
                its.append(r['iterations'])
                # Best single iteration, if this cgsolver reports it (the
                # best-of-N counterpart of the triad's figure).
                if isinstance(r.get('bandwidth_best_gbs'), (int, float)):
                    best.append(r['bandwidth_best_gbs'])
                print(
                    f'    {cls} {variant:9s} triad {t["triad_gbs"]:7.3f} GB/s  '
                    f'solver {r["bandwidth_gbs"]:7.3f} GB/s  '
                    f'({r["time_s"]:.3g} s, {r["iterations"]} it)  '
                    f'ratio {ratios[-1]:.3f}  load1 {lb:.2f}->{la:.2f}  '
                    f'cpu triad {triad_cpu:.0%} solver {bench.cpu_share:.0%}',
                    flush=True,
                )
            ms, mt = cb.median(sol), cb.median(tri)
            ratio = ms / mt
            rows.append(
                [
                    f'{cls} {variant}',
                    f'{cb.median(its):.0f}',
                    f'{ms:.3f}',
                    f'{mt:.3f}',
                    f'{ratio:.3f}',
                    f'{min(ratios):.3f}-{max(ratios):.3f}',
                    'yes' if ratio >= TARGET else 'NO',
                    f'{cb.median(tri_avg):.3f}',
                    f'{ms / cb.median(tri_avg):.3f}',
                    f'{cb.median(best) / mt:.3f}' if len(best) == len(sol) else 'n/a',
                    cb.load_range(loads),
                ]
            )
    print()
    print(
        cb.table(
            [
                'case',
                'iters',
                'solver GB/s',
                'triad GB/s',
                'ratio',
                'pair ratios',
                f'>= {TARGET:.2f}',
                'triad avg',
                'ratio/avg',
                'best-it/triad',
                'load1',
            ],
            rows,
        )
    )
    print(
        '  triad GB/s: best of N repetitions (STREAM); ratio = median solver / '
        'median triad (the issue 3 target);\n  triad avg: mean over the N '
        'repetitions (what a long run sees on a loaded machine), ratio/avg: '
        "solver / that, for information;\n  best-it/triad: the solver's best "
        'single iteration (JSON bandwidth_best_gbs, if the solver reports it) / '
        'triad best'
    )
    print(f'  end: {cb.uptime()}')
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--classes', nargs='+', default=['B', 'C'])
    parser.add_argument(
        '--variants',
        nargs='+',
        default=['classic', 'pipelined'],
        choices=['classic', 'pipelined'],
    )
    parser.add_argument('--ranks', type=int, help='MPI ranks (default: the cores)')
    parser.add_argument(
        '--triad-ntimes', type=int, default=20, help='triad repetitions (best of)'
    )
    parser.add_argument(
        '--triad-elements',
        type=int,
        help='triad elements per array per rank (default: >= 4x LLC, >= 512 MiB/node)',
    )
    cb.add_common_args(parser)
    args = parser.parse_args()
    return cb.main_wrapper(body, args)


if __name__ == '__main__':
    sys.exit(main())
