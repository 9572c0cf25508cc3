#!/usr/bin/env python3
"""Strong and weak scaling tables of cgsolver, with parallel efficiency.

Strong scaling: the same global problem (default class B, 128^3) on
1, 2, 4 ranks; speedup S_p = T_1 / T_p, efficiency E_p = S_p / p.

Weak scaling: n^3 rows per rank (default n = 96, cgsolver --scaling weak:
the global grid grows with p).  CG needs more iterations on the larger
global grid, so two efficiencies are printed: E_p = T_1 / T_p (time to
solution) and E_p/it = (T_1 / it_1) / (T_p / it_p) (time per iteration, the
usual figure for weak scaling of a fixed-iteration kernel).

T is cgsolver's `time_s` (median of --repeats runs).  Every row carries the
1-minute load average during its runs.  Rank counts above the cores of this
machine are oversubscribed (Open MPI --oversubscribe --bind-to none) and
marked so: their efficiency says nothing about the solver.

On a Slurm cluster: --launcher 'srun -N {nodes} -n {n}' --nodes 1 2 4
--ranks-per-node 2 scales over nodes (ranks = nodes x ranks-per-node);
build with the cluster's MPI (--cc, --mpi).

    .venv/bin/python evaluation/cg_scaling.py [--ranks 1 2 4]
        [--strong-class B] [--weak-n 96] [--variant classic|pipelined]
        [--repeats 3] [--launcher TEMPLATE --nodes ... --ranks-per-node N]
        [--only strong|weak] [--json FILE]

Exit status: 0 (also when MPI is missing: one `SKIP:` line), 1 if a build
or run failed.
"""

import argparse
import sys

import cgbench_common as cb


def measure(bench, exe, configs, argv_for, expected):
    """Median time / iterations per (ranks, nodes) config."""
    out = []
    for ranks, nodes in configs:
        times, its, loads, grid, bw = [], [], [], None, []
        for _ in range(bench.args.repeats):
            r, lb, la = bench.run_cgsolver(
                exe, ranks, argv_for(ranks), nodes=nodes, **expected
            )
            times.append(r['time_s'])
            its.append(r['iterations'])
            bw.append(r['bandwidth_gbs'])
            loads += [lb, la]
            grid = r['grid']
            print(
                f'    {ranks} ranks on {nodes} node(s): {r["time_s"]:.3f} s, '
                f'{r["iterations"]} it, grid {"x".join(map(str, grid))}, '
                f'MPI share {100 * r["mpi_share"]:.0f}%  load1 {lb:.2f}->{la:.2f}  '
                f'cpu {bench.cpu_share:.0%}',
                flush=True,
            )
        out.append(
            {
                'ranks': ranks,
                'nodes': nodes,
                'time': cb.median(times),
                'its': cb.median(its),
                'bw': cb.median(bw),
                'grid': grid,
                'loads': loads,
                'over': bench.oversubscribed(ranks, nodes),
            }
        )
    return out


def strong_table(res):
    base = res[0]
    rows = []
    for r in res:
        p = r['ranks'] / base['ranks']
        s = base['time'] / r['time']
        rows.append(
            [
                f'{r["ranks"]}{" (oversubscribed)" if r["over"] else ""}',
                r['nodes'],
                f'{r["time"]:.4g}',
                f'{r["its"]:.0f}',
                f'{r["bw"]:.2f}',
                f'{s:.2f}',
                f'{100 * s / p:.0f}%',
                cb.load_range(r['loads']),
            ]
        )
    return cb.table(
        ['ranks', 'nodes', 'time s', 'iters', 'GB/s', 'speedup', 'efficiency', 'load1'],
        rows,
    )


def weak_table(res):
    base = res[0]
    rows = []
    for r in res:
        e = base['time'] / r['time']
        e_it = (base['time'] / base['its']) / (r['time'] / r['its'])
        rows.append(
            [
                f'{r["ranks"]}{" (oversubscribed)" if r["over"] else ""}',
                r['nodes'],
                'x'.join(map(str, r['grid'])),
                f'{r["time"]:.4g}',
                f'{r["its"]:.0f}',
                f'{1e3 * r["time"] / r["its"]:.2f}',
                f'{r["bw"]:.2f}',
                f'{100 * e:.0f}%',
                f'{100 * e_it:.0f}%',
                cb.load_range(r['loads']),
            ]
        )
    return cb.table(
        [
            'ranks',
            'nodes',
            'grid',
            'time s',
            'iters',
            'ms/it',
            'GB/s',
            'E (time)',
            'E (per it)',
            'load1',
        ],
        rows,
    )


def body(bench):
    args = bench.args
    bench.check_prereqs()
    if args.nodes:
        configs = [(n * args.ranks_per_node, n) for n in args.nodes]
    else:
        configs = [(r, 1) for r in args.ranks]
    exe = bench.build_cgsolver()
    print('cg_scaling: cgsolver strong and weak scaling')
    print(
        f'  {bench.cores} cores here; {bench.cc}; variant {args.variant}; '
        f'{args.repeats} repeats (medians); launcher "{bench.launcher}"'
    )
    over = [r for r, n in configs if bench.oversubscribed(r, n)]
    if over:
        print(
            f'  NOTE: {", ".join(map(str, over))} ranks exceed the {bench.cores} '
            'cores: oversubscribed, their efficiency is not meaningful'
        )
    print(f'  start: {cb.uptime()}')
    sys.stdout.flush()
    var = ['--variant', args.variant]
    if args.only in (None, 'strong'):
        print(f'\nStrong scaling: class {args.strong_class} (global grid fixed)')
        res = measure(
            bench,
            exe,
            configs,
            lambda p: ['--class', args.strong_class, *var],
            {'scaling': 'strong'},
        )
        print(strong_table(res))
    if args.only in (None, 'weak'):
        print(f'\nWeak scaling: {args.weak_n}^3 rows per rank (global grid grows)')
        res = measure(
            bench,
            exe,
            configs,
            lambda p: ['--n', str(args.weak_n), '--scaling', 'weak', *var],
            {'scaling': 'weak'},
        )
        print(weak_table(res))
        print(
            '  E (time) = T_1/T_p; E (per it) = (T_1/it_1)/(T_p/it_p): CG needs '
            'more iterations on the larger grid'
        )
    print(f'  end: {cb.uptime()}')
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument(
        '--ranks', type=int, nargs='+', default=[1, 2, 4], help='default 1 2 4'
    )
    parser.add_argument(
        '--nodes',
        type=int,
        nargs='+',
        help='node counts (with --launcher): ranks = nodes x --ranks-per-node',
    )
    parser.add_argument('--ranks-per-node', type=int, default=1)
    parser.add_argument('--strong-class', default='B')
    parser.add_argument('--weak-n', type=int, default=96)
    parser.add_argument(
        '--variant', choices=['classic', 'pipelined'], default='classic'
    )
    parser.add_argument('--only', choices=['strong', 'weak'])
    cb.add_common_args(parser)
    args = parser.parse_args()
    if args.nodes and not args.launcher:
        parser.error('--nodes needs --launcher (e.g. "srun -N {nodes} -n {n}")')
    return cb.main_wrapper(body, args)


if __name__ == '__main__':
    sys.exit(main())
