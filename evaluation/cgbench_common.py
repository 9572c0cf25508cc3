"""Shared helpers of the cgsolver benchmarks (cg_roofline, cg_vs_petsc, cg_scaling).

Builds the solver, the STREAM-style triad and the PETSc driver out of tree,
launches them under MPI, parses their JSON lines and records the load
average next to every run (the development machines are shared).
"""

import json
import os
import re
import resource
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from clusterbench.parsers import cgsolver

PROJECT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CGSOLVER_SRC = os.path.join(PROJECT, 'src', 'cgsolver')
TRIAD_SRC = os.path.join(PROJECT, 'evaluation', 'stream_triad')
PETSC_SRC = os.path.join(PROJECT, 'evaluation', 'petsc_cg')

# MPI flavour -> (C compiler wrapper, launcher template).  {n} is the rank
# count, {nodes} the node count.
MPIS = {
    'openmpi': ('mpicc.openmpi', 'mpirun.openmpi -np {n}'),
    'mpich': ('mpicc.mpich', 'mpiexec.hydra -n {n}'),
}

_TRIAD = re.compile(r'^TRIAD_JSON: (\{.*\})\s*$', re.M)
_PETSC = re.compile(r'^PETSC_CG_JSON: (\{.*\})\s*$', re.M)


class BenchError(Exception):
    """A build or run failed; the message is one line."""


def skip(reason):
    """Print the one-line skip message and exit 0 (nothing was measured)."""
    print(f'SKIP: {reason}')
    sys.exit(0)


def cores():
    return (
        len(os.sched_getaffinity(0))
        if hasattr(os, 'sched_getaffinity')
        else (os.cpu_count() or 1)
    )


def load1():
    """1-minute load average, as `uptime` shows it."""
    return os.getloadavg()[0]


def uptime():
    try:
        return subprocess.run(
            ['uptime'], capture_output=True, text=True, check=False
        ).stdout.strip()
    except OSError:
        la = os.getloadavg()
        return f'load average: {la[0]:.2f}, {la[1]:.2f}, {la[2]:.2f}'


def load_range(values):
    lo, hi = min(values), max(values)
    return f'{lo:.2f}' if abs(hi - lo) < 0.005 else f'{lo:.2f}-{hi:.2f}'


def median(values):
    return statistics.median(values)


def add_common_args(parser, ranks_help=True):
    parser.add_argument(
        '--mpi',
        choices=sorted(MPIS),
        default='openmpi',
        help='MPI library to build and run with (default openmpi)',
    )
    parser.add_argument('--cc', help='MPI C compiler wrapper (default: that of --mpi)')
    parser.add_argument(
        '--cflags',
        help="CFLAGS for the solver and the triad (default: the solver Makefile's)",
    )
    parser.add_argument(
        '--launcher',
        help='launcher template with {n} (ranks) and {nodes}, e.g. '
        '"srun -N {nodes} -n {n}" (default: mpirun of --mpi, with '
        '--oversubscribe when ranks exceed the cores)',
    )
    parser.add_argument(
        '--repeats', type=int, default=3, help='runs per case; medians are reported'
    )
    parser.add_argument(
        '--workdir',
        help='build and scratch directory (default: a temporary one, removed at '
        'the end); never inside src/',
    )
    parser.add_argument(
        '--json', metavar='FILE', help='also write every run as JSON to FILE'
    )
    parser.add_argument(
        '--max-load',
        type=float,
        help='quiet gate: before each run wait until the 1-minute load average '
        'is below this (e.g. 0.5 on an otherwise idle node)',
    )
    parser.add_argument(
        '--max-wait',
        type=float,
        default=600.0,
        help='longest wait of the quiet gate per run, in s (then run anyway; '
        'default 600)',
    )


class Bench:
    """Build/run context for one script invocation."""

    def __init__(self, args):
        self.args = args
        self.cc = args.cc or MPIS[args.mpi][0]
        self.custom_launcher = args.launcher is not None
        self.launcher = args.launcher or MPIS[args.mpi][1]
        self.cores = cores()
        self.records = []
        self.cpu_share = float('nan')
        self.gate_waited = 0.0
        self.gate_busy_runs = 0
        self._tmp = None
        if args.workdir:
            self.workdir = os.path.abspath(args.workdir)
            if self.workdir.startswith(os.path.join(PROJECT, 'src')):
                raise BenchError('--workdir must not be inside src/')
            os.makedirs(self.workdir, exist_ok=True)
        else:
            self._tmp = tempfile.mkdtemp(prefix='cgbench-')
            self.workdir = self._tmp
        self.env = {
            **os.environ,
            'OMPI_ALLOW_RUN_AS_ROOT': '1',
            'OMPI_ALLOW_RUN_AS_ROOT_CONFIRM': '1',
            'OMP_NUM_THREADS': os.environ.get('OMP_NUM_THREADS', '1'),
        }

    # -- prerequisites -------------------------------------------------------
    def check_prereqs(self, petsc=False):
        """Skip (one line, exit 0) when something needed is missing."""
        if shutil.which('make') is None:
            skip('make not found (apt-get install make)')
        if shutil.which(self.cc) is None:
            hint = {'mpicc.openmpi': 'libopenmpi-dev', 'mpicc.mpich': 'libmpich-dev'}
            pkg = hint.get(os.path.basename(self.cc))
            skip(
                f'MPI compiler {self.cc} not found'
                + (f' (apt-get install {pkg})' if pkg else '')
            )
        launcher = shlex.split(self.launcher)[0]
        if shutil.which(launcher) is None:
            skip(f'MPI launcher {launcher} not found')
        if petsc:
            if self.args.mpi != 'openmpi':
                skip("Debian's PETSc is built with Open MPI: use --mpi openmpi")
            pkgpath = os.path.join(
                os.environ.get('PETSC_DIR', '/usr/lib/petsc'), 'lib', 'pkgconfig'
            )
            env = {
                **os.environ,
                'PKG_CONFIG_PATH': pkgpath
                + ':'
                + os.environ.get('PKG_CONFIG_PATH', ''),
            }
            ok = shutil.which('pkg-config') is not None and (
                subprocess.run(
                    ['pkg-config', '--exists', 'PETSc'], env=env, check=False
                ).returncode
                == 0
            )
            if not ok:
                skip('PETSc not installed (apt-get install petsc-dev pkg-config)')

    # -- building ------------------------------------------------------------
    def _make(self, srcdir, build, what):
        cmd = ['make', '-s', '-C', srcdir, f'BUILD={build}', f'CC={self.cc}']
        if self.args.cflags:
            cmd.append(f'CFLAGS={self.args.cflags}')
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            lines = (proc.stderr or proc.stdout).strip().splitlines()
            raise BenchError(f'{what} did not build: {lines[-1] if lines else "?"}')

    def build_cgsolver(self):
        build = os.path.join(self.workdir, 'cgsolver')
        self._make(CGSOLVER_SRC, build, 'cgsolver')
        return os.path.join(build, 'cgsolver')

    def build_triad(self):
        build = os.path.join(self.workdir, 'triad')
        self._make(TRIAD_SRC, build, 'triad')
        return os.path.join(build, 'triad')

    def build_petsc(self):
        build = os.path.join(self.workdir, 'petsc_cg')
        cmd = ['make', '-s', '-C', PETSC_SRC, f'BUILD={build}', f'CC={self.cc}']
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            lines = (proc.stderr or proc.stdout).strip().splitlines()
            raise BenchError(f'petsc_cg did not build: {lines[-1] if lines else "?"}')
        return os.path.join(build, 'petsc_cg')

    # -- running -------------------------------------------------------------
    def oversubscribed(self, ranks, nodes=1):
        return not self.custom_launcher and ranks > self.cores * nodes

    def launch_prefix(self, ranks, nodes=1):
        cmd = shlex.split(self.launcher.format(n=ranks, nodes=nodes))
        if self.oversubscribed(ranks, nodes) and self.args.mpi == 'openmpi':
            cmd += ['--oversubscribe', '--bind-to', 'none']
        return cmd

    def quiet_gate(self):
        """Wait (at most --max-wait s) for load1 < --max-load, if given."""
        self.gate_waited = 0.0
        limit = self.args.max_load
        if limit is None:
            return
        t0 = time.monotonic()
        while load1() >= limit and time.monotonic() - t0 < self.args.max_wait:
            time.sleep(5.0)
        self.gate_waited = time.monotonic() - t0
        if load1() >= limit:
            self.gate_busy_runs += 1

    def run(self, ranks, argv, what, nodes=1, timeout=3600):
        """Run argv under MPI; returns (stdout, load1 before, load1 after)."""
        cmd = self.launch_prefix(ranks, nodes) + list(argv)
        self.quiet_gate()
        before = load1()
        ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        try:
            proc = subprocess.run(
                cmd,
                capture_output=True,
                text=True,
                env=self.env,
                stdin=subprocess.DEVNULL,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise BenchError(f'{what}: timed out after {timeout} s') from None
        after = load1()
        wall = time.monotonic() - t0
        ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (ru1.ru_utime + ru1.ru_stime) - (ru0.ru_utime + ru0.ru_stime)
        # CPU seconds of the launched processes over wall x local ranks: well
        # below 1 means the ranks were descheduled (shared machine).  Only
        # meaningful for local runs (not srun).
        self.cpu_share = cpu / (wall * ranks) if wall > 0 else float('nan')
        if proc.returncode != 0:
            lines = (proc.stderr or proc.stdout).strip().splitlines()
            tail = lines[-1] if lines else '?'
            raise BenchError(f'{what}: exit {proc.returncode}: {tail}')
        return proc.stdout, before, after

    def record(self, kind, **fields):
        self.records.append(
            {
                'kind': kind,
                'cpu_share': self.cpu_share,
                'gate_waited_s': self.gate_waited,
                **fields,
            }
        )

    def run_cgsolver(self, exe, ranks, argv, nodes=1, **expected):
        what = f'cgsolver {" ".join(argv)} ({ranks} ranks)'
        out, before, after = self.run(ranks, [exe, *argv], what, nodes)
        try:
            res = cgsolver.verify(out, what, ranks=ranks, **expected)
        except Exception as err:  # parse errors carry a one-line message
            raise BenchError(str(err)) from None
        self.record(
            'cgsolver',
            argv=argv,
            ranks=ranks,
            nodes=nodes,
            load1=before,
            load1_after=after,
            result=res,
        )
        return res, before, after

    def _run_json(self, kind, what, exe, ranks, argv, nodes, marker, success):
        """Run a program that prints one ``<marker>: {json}`` line and a
        success line; record and return its JSON (with the load averages)."""
        out, before, after = self.run(ranks, [exe, *argv], what, nodes)
        found = marker.findall(out)
        if len(found) != 1 or success not in out:
            raise BenchError(f'{what}: no {success.split()[0]} line and JSON')
        res = json.loads(found[0])
        fields = {'argv': argv} if argv else {}
        self.record(
            kind,
            **fields,
            ranks=ranks,
            nodes=nodes,
            load1=before,
            load1_after=after,
            result=res,
        )
        return res, before, after

    def run_triad(self, exe, ranks, argv=(), nodes=1):
        what = f'triad ({ranks} ranks)'
        return self._run_json(
            'triad',
            what,
            exe,
            ranks,
            argv,
            nodes,
            _TRIAD,
            'TRIAD VALIDATION SUCCESSFUL',
        )

    def run_petsc(self, exe, ranks, argv, nodes=1):
        what = f'petsc_cg {" ".join(argv)} ({ranks} ranks)'
        return self._run_json(
            'petsc', what, exe, ranks, argv, nodes, _PETSC,
            'PETSC_CG VERIFICATION SUCCESSFUL',
        )  # fmt: skip

    def finish(self):
        if self.args.max_load is not None:
            print(
                f'  quiet gate: load1 < {self.args.max_load:g}; '
                f'{self.gate_busy_runs} run(s) started above it after waiting '
                f'{self.args.max_wait:g} s'
            )
        if self.args.json:
            with open(self.args.json, 'w') as f:
                json.dump(
                    {'cores': self.cores, 'uptime_end': uptime(), 'runs': self.records},
                    f,
                    indent=1,
                )
        if self._tmp:
            shutil.rmtree(self._tmp, ignore_errors=True)


def _terminated(signum, frame):
    raise SystemExit(128 + signum)


def main_wrapper(body, args):
    """Run body(bench); one-line error and exit 1 on failure."""
    # SIGTERM unwinds like Ctrl-C, so the temporary directory is removed.
    signal.signal(signal.SIGTERM, _terminated)
    try:
        bench = Bench(args)
    except BenchError as err:
        print(f'error: {err}', file=sys.stderr)
        return 1
    try:
        return body(bench)
    except BenchError as err:
        print(f'error: {err}', file=sys.stderr)
        return 1
    finally:
        bench.finish()


def table(headers, rows):
    """Plain fixed-width table (right-aligned except the first column)."""
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(str(c))) for w, c in zip(widths, row)]
    lines = []
    for i, row in enumerate([headers, *rows]):
        cells = [
            str(c).ljust(w) if j == 0 else str(c).rjust(w)
            for j, (c, w) in enumerate(zip(row, widths))
        ]
        lines.append('  '.join(cells).rstrip())
        if i == 0:
            lines.append('  '.join('-' * w for w in widths))
    return '\n'.join(lines)
