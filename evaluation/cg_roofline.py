#!/usr/bin/env python3
"""Roofline check: cgsolver's effective bandwidth against the triad measured in
the same job.

Builds src/cgsolver, then, on one node, runs for every stencil (default 7
27), variant (default classic pipelined) and rank count (default 1 and the
cores) --repeats times the solver on --class (default B), and reads from its
JSON the in-job triad: triad passes that the solver interleaves with its
iterations, over the footprint one iteration moves, with the same ranks
(src/cgsolver/README.md).  Its `bandwidth_triad_share` = the solve's model
bytes / solve time over that triad's rate, so the neighbours' memory traffic
weighs on both sides of the ratio alike; a separate triad run minutes away
from the solve (this script's earlier method) swung with them (a best triad of
65 GB/s next to a solve at 37).

Both figures count bytes STREAM's way (src/cgsolver/README.md "Flop and byte
model"): every array read or written once per kernel, 8-byte values, no
write-allocate traffic, the matrix as the SpMV stores it.

Prints each run, then the per-stencil table that evaluation/README.md keeps:

    stencil variant ranks iters GFlop/s solver-GB/s triad-GB/s share shares load1

(medians over the repeats; `shares` is their range).

    .venv/bin/python evaluation/cg_roofline.py [--class B] [--stencils 7 27]
        [--variants classic pipelined] [--rank-counts 1 2] [--repeats 3]
        [--mpi openmpi|mpich] [--cflags ...] [--max-load L [--max-wait S]]
        [--json FILE]

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
    counts = args.rank_counts or sorted({1, bench.cores})
    solver = bench.build_cgsolver()
    print('cg_roofline: cgsolver against the triad measured in the same job, one node')
    print(f'  class {args.cls}, {bench.cc}, {args.repeats} repeats (medians)')
    print(f'  start: {cb.uptime()}')
    sys.stdout.flush()

    rows = []
    for stencil in args.stencils:
        for variant in args.variants:
            for ranks in counts:
                if bench.oversubscribed(ranks):
                    print(
                        f'  NOTE: {ranks} ranks on {bench.cores} cores: oversubscribed'
                    )
                runs, loads = [], []
                for _ in range(args.repeats):
                    r, lb, la = bench.run_cgsolver(
                        solver,
                        ranks,
                        ['--class', args.cls, '--stencil', str(stencil)]
                        + ['--variant', variant],
                        variant=variant,
                    )
                    loads += [lb, la]
                    if 'bandwidth_triad_share' not in r:
                        # A problem that fits in the caches runs no triad.
                        raise cb.BenchError(
                            f'class {args.cls}: the solver ran no in-job triad '
                            '(the problem fits in the caches); use class B or larger'
                        )
                    runs.append(r)
                    print(
                        f'    {stencil:>2}-point {variant:9s} {ranks} rank(s): '
                        f'share {r["bandwidth_triad_share"]:.3f}  '
                        f'solver {r["bandwidth_gbs"]:.2f} GB/s  '
                        f'triad {r["triad_gbs"]:.2f} GB/s  '
                        f'{r["gflops"]:.2f} GFlop/s  ({r["time_s"]:.3g} s, '
                        f'{r["iterations"]} it)  load1 {lb:.2f}->{la:.2f}',
                        flush=True,
                    )
                shares = [r['bandwidth_triad_share'] for r in runs]
                share = cb.median(shares)
                rows.append(
                    [
                        f'{stencil}-point',
                        variant,
                        str(ranks),
                        f'{cb.median([r["iterations"] for r in runs]):.0f}',
                        f'{cb.median([r["gflops"] for r in runs]):.2f}',
                        f'{cb.median([r["bandwidth_gbs"] for r in runs]):.2f}',
                        f'{cb.median([r["triad_gbs"] for r in runs]):.2f}',
                        f'{share:.3f}',
                        f'{min(shares):.3f}-{max(shares):.3f}',
                        'yes' if share >= TARGET else 'NO',
                        cb.load_range(loads),
                    ]
                )
    print()
    print(
        cb.table(
            [
                'stencil',
                'variant',
                'ranks',
                'iters',
                'GFlop/s',
                'solver GB/s',
                'triad GB/s',
                'share',
                'shares',
                f'>= {TARGET:.2f}',
                'load1',
            ],
            rows,
        )
    )
    print(
        "  share: the solve's model bytes / time over the in-job triad "
        '(JSON bandwidth_triad_share), median over the repeats'
    )
    print(f'  end: {cb.uptime()}')
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('--class', dest='cls', default='B')
    parser.add_argument(
        '--stencils', nargs='+', type=int, default=[7, 27], choices=[7, 27]
    )
    parser.add_argument(
        '--variants',
        nargs='+',
        default=['classic', 'pipelined'],
        choices=['classic', 'pipelined'],
    )
    parser.add_argument(
        '--rank-counts', nargs='+', type=int, help='default: 1 and the cores'
    )
    cb.add_common_args(parser)
    args = parser.parse_args()
    return cb.main_wrapper(body, args)


if __name__ == '__main__':
    sys.exit(main())
