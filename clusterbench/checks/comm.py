"""What every MPI communication check shares: placement, pinning, curves, peaks.

- Placement: point-to-point checks run two ranks (osu_mbw_mr: two groups of
  ``pairs`` ranks) either on two different nodes (``placement=inter``, skipped
  with one line on a one-node partition) or on one node (``placement=intra``,
  the shared-memory case); collectives run one rank per core on
  ``num_nodes`` nodes, the whole allocation.
- Pinning: each rank is bound to one core with the launcher's own options
  (Open MPI's mpirun, MPICH/Hydra's mpiexec, Slurm's srun), which also make
  the launcher report the binding; the options and the reported bindings are
  kept in the run report (``pinning``, ``rank_bindings``) and logged.
  ``-S pin_ranks=none`` leaves placement to the launcher's defaults.
- Curves: the whole size -> value table of every verified run is written as
  ``curve_<name>.csv`` beside the test's outputs and kept in the run report
  (``curves``), so reports can draw them later.
- Efficiency: where the partition declares its link's peak (see
  :mod:`clusterbench.machine.linkpeak`), inter-node runs report measured peak ÷
  theoretical peak; otherwise ``efficiency_note`` says why there is none.
- Installed suites (IMB, OSU): where their programs come from is their
  ``Source`` (:mod:`clusterbench.checks.provisioning`).
"""

import os
import re
import subprocess

import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.builtins import run_before, variable
from reframe.core.exceptions import ReframeError

from clusterbench.bench import curves
from clusterbench.checks.plugins.judged import JudgedCheck
from clusterbench.checks.resources import node_cores, partition_nodes
from clusterbench.parsers import declarations
from clusterbench.site import stacknames

CURVE_FILE = 'curve_{}.csv'

#: A point-to-point check's ``placement`` parameter: inter, two different
#: nodes (skipped on a one-node partition); intra, one node (shared memory).
PLACEMENTS = ['inter', 'intra']

#: What launchers print about bindings (Open MPI, srun, Hydra).
_BINDING = re.compile(r'(MCW rank \d+ (?:bound|is not bound)|cpu[-_]bind|binding:)')


def pinning_options(launcher, mpi, per_node):
    """Launcher options binding each rank to a core, ``per_node`` ranks a node.

    Returns ``(options, env_vars, note)``; no options and a note for a
    launcher whose pinning syntax is not known here.
    """
    if launcher == 'srun':
        return ['--distribution=block:block', '--cpu-bind=verbose,cores'], {}, ''
    if launcher in ('mpirun', 'mpiexec'):
        if stacknames.mpi_launcher(mpi) == 'openmpi':
            opts = [
                '--map-by',
                f'ppr:{per_node}:node',
                '--bind-to',
                'core',
                '--report-bindings',
            ]
            return opts, {}, ''
        if stacknames.mpi_launcher(mpi) == 'hydra':
            opts = ['-ppn', str(per_node), '-bind-to', 'core']
            return opts, {'HYDRA_TOPO_DEBUG': '1'}, ''
        return [], {}, f'{launcher} of MPI {mpi or "unknown"}: pinning left to defaults'
    return [], {}, f'launcher {launcher}: pinning left to its defaults'


def find_executable(name, prefix, subdirs=()):
    """``name`` under an installed *prefix*, or None.

    Looks in ``prefix``, ``prefix/bin``, each of *subdirs*, then anywhere
    below ``prefix/libexec`` (how OSU installs) to a depth of five.
    """
    for where in (
        prefix,
        os.path.join(prefix, 'bin'),
        *(os.path.join(prefix, s) for s in subdirs),
    ):
        path = os.path.join(where, name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    libexec = os.path.join(prefix, 'libexec')
    for root, dirs, files in os.walk(libexec):
        if root[len(libexec) :].count(os.sep) >= 5:
            dirs[:] = []
        dirs.sort()
        if name in files and os.access(os.path.join(root, name), os.X_OK):
            return os.path.join(root, name)
    return None


def linked_mpi(path):
    """The MPI family a binary links: 'openmpi', 'mpich' (MPICH ABI) or None."""
    try:
        out = subprocess.run(
            ['ldd', path], capture_output=True, text=True, timeout=30
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    if re.search(r'libmpi\.so\.4\d', out) or 'libopen-pal' in out:
        return 'openmpi'
    if re.search(r'libmpich|libmpi\.so\.12', out):
        return 'mpich'
    return None


def mpi_family(mpi):
    """The MPI family (as :func:`linked_mpi` names it) of a stack's MPI."""
    return {'openmpi': 'openmpi', 'hydra': 'mpich'}.get(stacknames.mpi_launcher(mpi))


class CommBase(
    JudgedCheck,
    rfm.RegressionTest,
):
    """Base of the communication checks (not registered).

    A full test (build, then run) because some suites are built by Spack or
    from their release; one that has nothing to build gets an empty
    build, which runs locally and does nothing.
    """

    valid_systems = ['*']
    sourcesdir = None
    time_limit = '30m'
    #: 'core': bind each rank to a core with the launcher's options; 'none'.
    pin_ranks = variable(str, value='core')
    #: Launcher options that placed and pinned the ranks (kept in the report).
    pinning = variable(typ.List[str], value=[])
    #: What the launcher reported about the binding (kept in the report).
    rank_bindings = variable(typ.List[str], value=[])
    #: How each figure is computed from the suite's repetitions.
    statistic = variable(str, value='')
    #: The whole curves: name -> {'columns': [...], 'rows': [[size, ...]]}.
    curves = variable(typ.Dict[str, object], value={})
    #: The curve tables kept with the outputs.
    curve_files = variable(typ.List[str], value=[])
    # -- placement and pinning -------------------------------------------

    def place(self, num_tasks, per_node):
        """``num_tasks`` ranks, ``per_node`` on each node, pinned to cores."""
        if self.pin_ranks not in ('core', 'none'):
            raise ReframeError(f'pin_ranks={self.pin_ranks!r}: use core or none')
        cores = node_cores(self.current_partition)
        if per_node > cores and self.pin_ranks == 'core':
            self.skip(
                f'{per_node} ranks per node need {per_node} cores, '
                f'{self.current_partition.fullname} has {cores}'
            )
        self.num_tasks = num_tasks
        self.num_tasks_per_node = per_node
        self.num_cpus_per_task = 1
        self.env_vars['OMP_NUM_THREADS'] = '1'
        if self.pin_ranks == 'none':
            self.pinning = []
            return
        launcher = self.current_partition.launcher_type.registered_name
        mpi = self.current_environ.extras.get('mpi')
        opts, env, note = pinning_options(launcher, mpi, per_node)
        self.pinning = opts
        self.env_vars.update(env)
        if note:
            self.logger.info(f'{self.display_name}: {note}')

    def place_pairs(self, pairs=1):
        """Point to point: two ranks (or two groups of *pairs*) on two nodes
        (``placement=inter``, skipped on a one-node partition) or on one."""
        if self.placement == 'inter':
            nodes = partition_nodes(self.current_partition)
            if nodes is not None and nodes < 2:
                self.skip(
                    f'{self.current_partition.fullname} has one node: the '
                    f'inter-node variant needs two (placement=intra runs)'
                )
            self.place(2 * pairs, pairs)
        else:
            self.place(2 * pairs, 2 * pairs)
        self.read_link_peak(self.placement == 'inter')

    def place_all(self):
        """Collectives: one rank per core on ``num_nodes`` nodes, the whole
        allocation."""
        cores = node_cores(self.current_partition)
        per_node = max(cores, 2) if self.num_nodes == 1 else cores
        self.place(per_node * self.num_nodes, per_node)

    @run_before('compile')
    def _nothing_to_build(self):
        if not self.build_system:
            self.build_system = 'CustomBuild'
            self.build_system.commands = []

    @run_before('run')
    def _pin(self):
        self.job.launcher.options += self.pinning

    def _collect_bindings(self):
        lines = []
        for name in (self.job.stderr, self.job.stdout):
            try:
                with open(os.path.join(self.stagedir, name)) as out:
                    lines += [ln.strip() for ln in out if _BINDING.search(ln)]
            except OSError:
                pass
        self.rank_bindings = lines

    # -- link peak -------------------------------------------------------

    def efficiency(self, figures, name, measured, bidirectional=False):
        """Add ``name``: *measured* MB/s as % of the declared peak, if any."""
        if self.link_peak and measured is not None:
            theoretical = self.link_peak['peak_mbs'] * (2 if bidirectional else 1)
            figures[name] = (
                100.0 * measured / theoretical,
                declarations.LINK_EFFICIENCY.unit,
            )

    # -- recording -------------------------------------------------------

    def record(self, figures, kept):
        """Keep the curves of a verified run; return its *figures*.

        *figures*: ``{name: (value, unit)}``; *kept*: the curves to store.
        """
        self.keep_files = [*self.keep_files, CURVE_FILE.format('*')]
        files, tables = [], {}
        for curve in kept:
            fname = CURVE_FILE.format(curve.name.lower())
            curves.write_csv(os.path.join(self.stagedir, fname), curve)
            files.append(os.path.join(self.outputdir, fname))
            tables[curve.name] = curve.as_dict()
        self.curve_files = files
        self.curves = tables
        self._collect_bindings()
        where = ', '.join(self.rank_bindings) or 'not reported'
        parts = [
            f'{len(kept)} curve(s) kept as {CURVE_FILE.format("<name>")}',
            f'ranks: {self.num_tasks} ({self.num_tasks_per_node}/node), '
            f'pinning: {" ".join(self.pinning) or "none"}; bindings: {where}',
        ]
        parts.append(self.efficiency_note or f'link {self.link_peak.get("how")}')
        self.logger.info(f'{self.display_name}: ' + '; '.join(parts))
        return figures
