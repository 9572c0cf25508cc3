#!/usr/bin/env python3
"""Overhead of the MPI profiler (src/mpiprof) on time to solution.

Runs a solver unprofiled and profiled (LD_PRELOAD) alternately, N times
each, and prints the median times and the overhead in percent. The solver is
our sparse CG solver (default: class B, 2 ranks), or NPB CG from an NPB 3.x
MPI source tree (``--app npb-cg --npb-dir DIR``). Every profiled run's
profile is checked too: for cgsolver its Isend/Irecv/Allreduce counts and
bytes must equal the solver's own counters.

On a shared machine the run-to-run noise can exceed the overhead by far, so
the script also measures the profiler's cost per MPI call (a tight loop of
MPI_Test on a null request, 1 rank, with and without the profiler) and
prints the overhead that cost implies: calls per rank x cost per call over
the unprofiled time.

    .venv/bin/python evaluation/mpiprof_overhead.py [--mpi openmpi|mpich]
        [--app cgsolver|npb-cg] [--npb-dir DIR] [--class B] [--ranks 2]
        [--repeats 5] [--max-overhead PCT]

Exit status: 0, or 1 if a run failed, a profile disagreed, or the overhead
exceeded --max-overhead (when given).
"""

import argparse
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

from clusterbench.bench import npb_makedef, profile
from clusterbench.core.errors import ClusterbenchError
from clusterbench.parsers import cgsolver

PROJECT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MPIS = {
    'openmpi': ('mpicc.openmpi', 'mpif90.openmpi', ['mpirun.openmpi', '-np']),
    'mpich': ('mpicc.mpich', 'mpif90.mpich', ['mpiexec.hydra', '-n']),
}
_NPB_TIME = re.compile(r'^\s*Time in seconds\s*=\s*(\S+)', re.M)
_NPB_VERIFIED = re.compile(r'^\s*Verification\s*=\s*SUCCESSFUL', re.M)


def overhead_percent(plain, profiled):
    """Overhead of the median profiled time over the median unprofiled one."""
    return 100.0 * (statistics.median(profiled) / statistics.median(plain) - 1.0)


def run_order(repeats):
    """(repeat, profiled?) pairs, alternating which mode goes first."""
    order = []
    for i in range(repeats):
        pair = [False, True] if i % 2 == 0 else [True, False]
        order += [(i, mode) for mode in pair]
    return order


def call_cost_ns(mpi, callcost, lib, workdir, tries=3):
    """The profiler's cost per MPI call in ns, and the unprofiled call's."""
    best = {False: float('inf'), True: float('inf')}
    for _, profiled in run_order(tries):
        env = {
            **os.environ,
            'OMPI_ALLOW_RUN_AS_ROOT': '1',
            'OMPI_ALLOW_RUN_AS_ROOT_CONFIRM': '1',
        }
        env.pop('LD_PRELOAD', None)
        if profiled:
            env.update(
                LD_PRELOAD=lib,
                MPIPROF_QUIET='1',
                MPIPROF_OUTPUT=os.path.join(workdir, 'callcost.json'),
            )
        out = subprocess.run(
            [*MPIS[mpi][2], '1', callcost],
            capture_output=True,
            text=True,
            env=env,
            stdin=subprocess.DEVNULL,
        ).stdout
        found = re.search(r'CALLCOST_NS (\S+)', out)
        if not found:
            raise ClusterbenchError(f'{callcost} printed no CALLCOST_NS')
        best[profiled] = min(best[profiled], float(found.group(1)))
    return best[True] - best[False], best[False]


def _make(args, what):
    proc = subprocess.run(args, capture_output=True, text=True)
    if proc.returncode != 0:
        lines = (proc.stderr or proc.stdout).strip().splitlines()
        raise ClusterbenchError(f'{what} did not build: {lines[-1] if lines else "?"}')


def build(mpi, app, workdir, npb_dir, npb_class, ranks):
    cc, fc, _ = MPIS[mpi]
    lib_dir = os.path.join(workdir, 'mpiprof')
    _make(
        [
            'make',
            '-s',
            '-C',
            os.path.join(PROJECT, 'src', 'mpiprof'),
            f'BUILD={lib_dir}',
            f'CC={cc}',
            'all',
            'callcost',
        ],
        'libmpiprof',
    )
    if app == 'cgsolver':
        exe_dir = os.path.join(workdir, 'cgsolver')
        _make(
            [
                'make',
                '-s',
                '-C',
                os.path.join(PROJECT, 'src', 'cgsolver'),
                f'BUILD={exe_dir}',
                f'CC={cc}',
            ],
            'cgsolver',
        )
        exe = os.path.join(exe_dir, 'cgsolver')
    else:
        tree = npb_makedef.inspect_tree(npb_dir)
        copy = os.path.join(workdir, 'npb')
        subprocess.run(['cp', '-r', tree.path, copy], check=True)
        tree = npb_makedef.inspect_tree(copy)
        flags = npb_makedef.fortran_flags(
            gfortran=npb_makedef.gfortran_major(fc), legacy_boz=tree.legacy_boz
        )
        makedef = os.path.join(workdir, 'make.def')
        with open(makedef, 'w') as f:
            f.write(npb_makedef.makedef(tree, fc, cc, fflags=flags))
        script = ' && '.join(
            npb_makedef.build_commands(tree, 'cg', npb_class, ranks, makedef)
        )
        _make(['sh', '-c', f'cd {shlex.quote(copy)} && {script}'], 'NPB CG')
        exe = os.path.join(copy, 'bin', tree.executable('cg', npb_class, ranks))
    return exe, lib_dir


def one_run(mpi, app, exe, ranks, npb_class, lib=None, prof_path=None):
    """(time to solution in s, output); the time as the solver reports it."""
    launcher = MPIS[mpi][2]
    cmd = [*launcher, str(ranks), exe]
    if app == 'cgsolver':
        cmd += ['--class', npb_class]
    env = {
        **os.environ,
        'OMPI_ALLOW_RUN_AS_ROOT': '1',
        'OMPI_ALLOW_RUN_AS_ROOT_CONFIRM': '1',
        'OMPI_MCA_rmaps_base_oversubscribe': '1',
        'OMP_NUM_THREADS': '1',
    }
    env.pop('LD_PRELOAD', None)
    if lib:
        env.update(LD_PRELOAD=lib, MPIPROF_OUTPUT=prof_path, MPIPROF_QUIET='1')
    proc = subprocess.run(
        cmd, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL
    )
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:]
        raise ClusterbenchError(f'{" ".join(cmd)} exited {proc.returncode}: {tail}')
    if app == 'cgsolver':
        result = cgsolver.verify(proc.stdout, source=os.path.basename(exe))
        return result['time_s'], result
    if not _NPB_VERIFIED.search(proc.stdout):
        raise ClusterbenchError('NPB CG did not verify')
    return float(_NPB_TIME.search(proc.stdout).group(1)), None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--mpi', choices=sorted(MPIS), default='openmpi')
    ap.add_argument('--app', choices=('cgsolver', 'npb-cg'), default='cgsolver')
    ap.add_argument('--npb-dir', help='NPB 3.x MPI source tree (for --app npb-cg)')
    ap.add_argument('--class', dest='npb_class', default='B')
    ap.add_argument('--ranks', type=int, default=2)
    ap.add_argument('--repeats', type=int, default=5)
    ap.add_argument('--max-overhead', type=float, help='fail above this many %%')
    ap.add_argument('--workdir', help='build directory (default: a temporary one)')
    args = ap.parse_args(argv)
    if args.app == 'npb-cg' and not args.npb_dir:
        ap.error('--app npb-cg needs --npb-dir')
    if args.repeats < 1 or args.ranks < 1:
        ap.error('--repeats and --ranks must be positive')

    with tempfile.TemporaryDirectory(prefix='mpiprof-overhead-') as tmp:
        workdir = args.workdir or tmp
        os.makedirs(workdir, exist_ok=True)
        try:
            exe, lib_dir = build(
                args.mpi, args.app, workdir, args.npb_dir, args.npb_class, args.ranks
            )
            lib = os.path.join(lib_dir, 'libmpiprof.so')
            times = {False: [], True: []}
            calls = []
            mismatches = []
            what = 'cgsolver' if args.app == 'cgsolver' else 'NPB CG'
            print(
                f'mpiprof overhead: {what} class {args.npb_class}, {args.ranks} '
                f'ranks, {args.mpi}, {args.repeats} runs each, alternating '
                f'(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)'
            )
            started = time.time()
            for i, profiled in run_order(args.repeats):
                prof = os.path.join(workdir, f'run{i}.json')
                t, result = one_run(
                    args.mpi,
                    args.app,
                    exe,
                    args.ranks,
                    args.npb_class,
                    lib if profiled else None,
                    prof,
                )
                times[profiled].append(t)
                note = ''
                if profiled:
                    data = profile.load(prof)
                    funcs = data['functions'].values()
                    # (calls on the busiest rank, at most; that rank's wall time)
                    calls.append(
                        (
                            sum(f['calls']['max'] for f in funcs),
                            data['time']['wall']['max'],
                        )
                    )
                    note = f'  MPI {100 * profile.mpi_time_share(data):.1f}% of wall'
                    if result is not None:
                        bad = [r for r in profile.cross_check(data, result) if not r[3]]
                        mismatches += bad
                        note += '; counts agree' if not bad else f'; MISMATCH {bad}'
                print(
                    f'  run {i + 1} {"profiled  " if profiled else "unprofiled"} '
                    f'{t:9.4f} s{note}',
                    flush=True,
                )
            cost, bare = call_cost_ns(
                args.mpi, os.path.join(lib_dir, 'callcost'), lib, workdir
            )
        except ClusterbenchError as err:
            print(f'mpiprof_overhead: error: {err}', file=sys.stderr)
            return 1
    plain, prof = times[False], times[True]
    over = overhead_percent(plain, prof)
    median = statistics.median(plain)
    spread = 100 * (max(plain) - min(plain)) / median
    print(
        f'median unprofiled {median:.4f} s (min {min(plain):.4f}, spread '
        f'{spread:.1f} %), profiled {statistics.median(prof):.4f} s '
        f'(min {min(prof):.4f}) ({time.time() - started:.0f} s of runs)'
    )
    per_rank = statistics.median(n for n, _ in calls)
    implied = statistics.median(100 * n * cost * 1e-9 / wall for n, wall in calls)
    print(
        f'profiler cost per call {cost:.0f} ns (MPI_Test alone {bare:.0f} ns); '
        f'at most {per_rank:.0f} calls per rank: implied overhead '
        f'{implied:.4f} % of the run'
    )
    print(
        f'overhead: {over:+.2f} % of time to solution (median of {args.repeats} '
        f'vs {args.repeats})'
    )
    if mismatches:
        print("profile disagrees with the solver's own counters", file=sys.stderr)
        return 1
    if args.max_overhead is not None and over > args.max_overhead:
        print(f'overhead above {args.max_overhead} %', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
