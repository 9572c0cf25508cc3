#!/usr/bin/env python3
"""Time to solution: cgsolver against PETSc's unpreconditioned KSPCG.

Builds src/cgsolver and evaluation/petsc_cg (Debian's petsc-dev, PETSc 3.18
with Open MPI) and runs them side by side, alternating (ours, PETSc, PETSc,
ours, ...) so that drifting load hits both alike, on the same problem:

* default: the generated 3-D Poisson 7-point and 27-point matrices
  (--stencils 7 27) on an n^3 grid (--n 128 [192 ...]); the PETSc driver
  assembles the identical matrix and computes b = A x* with cgsolver's x*
  in cgsolver's summation order, so b is bit-identical;
* --matrix FILE.mtx: both read the same Matrix Market file, b = A*ones.

Same stopping test in both: x0 = 0, recurrence residual ||r_k||_2 <=
tol ||b||_2 (PETSc: KSP_NORM_UNPRECONDITIONED, rtol = tol, abstol = 0,
PCNONE).  The script checks that both converge in the same number of
iterations (+-2) to the same ||x|| (1e-6 relative) and a true residual
<= 2 tol.  Times: cgsolver's `time_s` (the whole solve, including its final
true-residual check) and PETSc's KSPSolve alone.

Prints per problem and rank count: median times, iterations, the ratio
ours / PETSc (target <= 0.70, issue 43), the per-iteration times, and the
ratio of the two algorithms' model bytes per iteration (the ratio expected if
both ran at the same memory bandwidth), with the 1-minute load average.
Then, for context, NPB CG class A/B figures recorded on a machine of this
kind (../shared/fixtures/npb/runs.csv, --npb-csv) next to cgsolver's class
A/B at the same rank count (--no-npb skips it).

    .venv/bin/python evaluation/cg_vs_petsc.py [--n 128 192] [--stencils 7 27]
        [--ranks 1 2]
        [--matrix FILE.mtx] [--variant classic|pipelined] [--tol 1e-8]
        [--repeats 3] [--npb-csv FILE | --no-npb] [--json FILE]

Exit status: 0 (also when PETSc or MPI is missing: one `SKIP:` line), 1 if a
build or run failed or the two solvers disagree.  The 0.70 target is reported,
not enforced.
"""

import argparse
import csv
import os
import sys

import cgbench_common as cb

TARGET = 0.70
NPB_CSV = os.path.join(cb.PROJECT, '..', 'shared', 'fixtures', 'npb', 'runs.csv')


def npb_context(bench, exe, path):
    """NPB CG class A/B rows of a runs.csv next to our class A/B runs."""
    if not path or not os.path.isfile(path):
        print(f'\nNPB CG context: no runs.csv at {path} (skipped)')
        return
    with open(path, newline='') as f:
        rows = [
            r
            for r in csv.DictReader(f)
            if r.get('bench') == 'cg' and r.get('class') in ('A', 'B')
        ]
    if not rows:
        print(f'\nNPB CG context: no CG class A/B rows in {path}')
        return
    print(f'\nNPB CG context ({os.path.normpath(path)}; recorded earlier on a machine')
    print('of this kind; NPB CG is a different matrix: random sparse, na 14000/75000,')
    print("15/75 outer iterations x 25 CG steps; Mop/s by NPB's own operation count)")
    table = []
    for r in rows:
        ranks = int(r['nprocs'])
        cls = r['class']
        gf, ts, loads = [], [], []
        for _ in range(bench.args.repeats):
            res, lb, la = bench.run_cgsolver(exe, ranks, ['--class', cls])
            gf.append(res['gflops'])
            ts.append(res['time_s'])
            loads += [lb, la]
        table.append(
            [
                f'class {cls}, {ranks} ranks',
                r['npb_time_s'],
                f'{float(r["mops_total"]) / 1e3:.3f}',
                f'{r["load1_before"]}-{r["load1_after"]}',
                f'{cb.median(ts):.4g}',
                f'{cb.median(gf):.3f}',
                cb.load_range(loads),
            ]
        )
    print(
        cb.table(
            [
                'case',
                'NPB CG s',
                'NPB GFlop/s',
                'NPB load1',
                'ours s',
                'ours GFlop/s',
                'our load1',
            ],
            table,
        )
    )
    print(
        '  ours: cgsolver --class A/B (3-D Poisson 64^3 / 128^3, tol 1e-8), '
        'GFlop/s of its flop model, median'
    )


def body(bench):
    args = bench.args
    bench.check_prereqs(petsc=True)
    ours_exe = bench.build_cgsolver()
    petsc_exe = bench.build_petsc()
    problems = (
        [('file', args.matrix, None)]
        if args.matrix
        else [('n', n, st) for st in args.stencils for n in args.n]
    )
    print('cg_vs_petsc: cgsolver vs PETSc KSPCG (PCNONE), same matrix, b, x0 and tol')
    print(
        f'  tol {args.tol:g} on ||r_k||/||b|| (recurrence residual, both); '
        f'cgsolver --variant {args.variant}; {args.repeats} repeats (medians)'
    )
    print(f'  start: {cb.uptime()}')
    sys.stdout.flush()
    rows = []
    for kind, what, stencil in problems:
        if kind == 'file':
            what = os.path.abspath(what)
            ours_argv = ['--matrix', what]
            petsc_argv = ['-matrix', what]
            label = what
        else:
            ours_argv = ['--n', str(what), '--stencil', str(stencil)]
            petsc_argv = ['-n', str(what), '-stencil', str(stencil)]
            label = f'Poisson{stencil} n={what}'
        ours_argv += ['--tol', repr(args.tol), '--variant', args.variant]
        petsc_argv += ['-tol', repr(args.tol)]
        for ranks in args.ranks:
            note = ' (oversubscribed)' if bench.oversubscribed(ranks) else ''
            t_ours, t_petsc, loads = [], [], []
            its_ours, its_petsc, bw_ours, bw_petsc = [], [], [], []
            ref = None
            for rep in range(args.repeats):
                order = ['ours', 'petsc'] if rep % 2 == 0 else ['petsc', 'ours']
                for who in order:
                    if who == 'ours':
                        r, lb, la = bench.run_cgsolver(ours_exe, ranks, ours_argv)
                        t_ours.append(r['time_s'])
                        its_ours.append(r['iterations'])
                        bw_ours.append(r['bandwidth_gbs'])
                        b_ours = r['bytes_per_iter']
                    else:
                        r, lb, la = bench.run_petsc(petsc_exe, ranks, petsc_argv)
                        t_petsc.append(r['time_s'])
                        its_petsc.append(r['iterations'])
                        bw_petsc.append(r['bandwidth_gbs'])
                        b_petsc = r['bytes_per_iter']
                    loads += [lb, la]
                    norm = r['solution_norm']
                    if ref is None:
                        ref = norm
                    elif abs(norm - ref) > 1e-6 * abs(ref):
                        raise cb.BenchError(
                            f'{label}, {ranks} ranks: ||x|| differs: {norm} vs {ref}'
                        )
                    if r['true_residual'] > 2 * args.tol:
                        raise cb.BenchError(
                            f'{label}: {who} true residual {r["true_residual"]:.3e}'
                        )
                    print(
                        f'    {label} {ranks} ranks {who:5s} {r["time_s"]:9.3f} s  '
                        f'{r["iterations"]} it  ||x|| {norm:.10g}  '
                        f'load1 {lb:.2f}->{la:.2f}  cpu {bench.cpu_share:.0%}',
                        flush=True,
                    )
            if abs(cb.median(its_ours) - cb.median(its_petsc)) > 2:
                raise cb.BenchError(
                    f'{label}, {ranks} ranks: iterations differ: '
                    f'{its_ours} (cgsolver) vs {its_petsc} (PETSc)'
                )
            mo, mp = cb.median(t_ours), cb.median(t_petsc)
            io, ip = cb.median(its_ours), cb.median(its_petsc)
            rows.append(
                [
                    f'{label}, {ranks} rank{"s" if ranks > 1 else ""}{note}',
                    f'{mo:.4g}',
                    f'{mp:.4g}',
                    f'{io:.0f}/{ip:.0f}',
                    f'{1e3 * mo / io:.2f}/{1e3 * mp / ip:.2f}',
                    f'{cb.median(bw_ours):.2f}/{cb.median(bw_petsc):.2f}',
                    f'{b_ours / b_petsc:.3f}',
                    f'{mo / mp:.3f}',
                    'yes' if mo / mp <= TARGET else 'NO',
                    cb.load_range(loads),
                ]
            )
    print()
    print(
        cb.table(
            [
                'problem',
                'ours s',
                'PETSc s',
                'iters o/P',
                'ms/it o/P',
                'GB/s o/P',
                'bytes o/P',
                'ratio o/P',
                f'<= {TARGET}',
                'load1',
            ],
            rows,
        )
    )
    print(
        '  ratio o/P = median time ours / median time PETSc; bytes o/P = model '
        "bytes per iteration ours / PETSc's KSPCG loop (same convention); "
        'GB/s = model bytes / time'
    )
    if not args.matrix and not args.no_npb:
        npb_context(bench, ours_exe, args.npb_csv)
    print(f'  end: {cb.uptime()}')
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument(
        '--n', type=int, nargs='+', default=[128], help='grid sizes (default 128)'
    )
    parser.add_argument(
        '--stencils',
        type=int,
        nargs='+',
        choices=[7, 27],
        default=[7, 27],
        help='generated stencils (default 7 27)',
    )
    parser.add_argument('--matrix', help='a Matrix Market file both solvers read')
    parser.add_argument(
        '--ranks', type=int, nargs='+', default=[1, 2], help='rank counts (default 1 2)'
    )
    parser.add_argument(
        '--variant', choices=['classic', 'pipelined'], default='classic'
    )
    parser.add_argument('--tol', type=float, default=1e-8)
    parser.add_argument(
        '--npb-csv',
        default=NPB_CSV,
        help='NPB runs.csv for the context table (default ../shared/fixtures/npb)',
    )
    parser.add_argument(
        '--no-npb', action='store_true', help='skip the NPB CG context table'
    )
    cb.add_common_args(parser)
    args = parser.parse_args()
    return cb.main_wrapper(body, args)


if __name__ == '__main__':
    sys.exit(main())
