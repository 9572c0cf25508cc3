"""Node acceptance and multi-node scaling checks.

Node acceptance: a short battery on one node (``nodeprobe``: STREAM and DGEMM
on one core; the sparse CG solver on one rank), run on every node of a
partition at once with ReFrame's ``--distribute``; then
``clusterbench acceptance nodes REPORT`` ranks the nodes and names
any outside its peers (robust z-score) or its reference.

Scaling: the existing checks (CG solver strong and weak, HPCC, NPB) with the
node count as a parameter ``node_count``: 1, 2, 4 ... up to the largest
partition (``-P node_count=1,2,4`` to choose); a count a partition cannot
hold is not run there (given with -P and held by none: skipped, with the
reason), and
``clusterbench acceptance scaling REPORT`` reports speedup and
parallel efficiency against the smallest count that ran.
"""

import reframe as rfm
from reframe.core.builtins import (
    parameter,
    run_after,
    variable,
)

from clusterbench.acceptance import outputs
from clusterbench.checks.cgsolver import CGSolverBase
from clusterbench.checks.fabric import AcceptanceSpec
from clusterbench.checks.hpcc import HPCCBase
from clusterbench.checks.npb import NPBBase
from clusterbench.checks.plugins.judged import JudgedCheck
from clusterbench.checks.plugins.references import BASE_INDEX
from clusterbench.checks.resources import partition_nodes
from clusterbench.checks.shell import quote

# -- node battery --------------------------------------------------------------


class NodeProbeBase(
    AcceptanceSpec,
    JudgedCheck,
    rfm.RunOnlyRegressionTest,
):
    """STREAM (copy, scale, add, triad) and DGEMM on one core of one node.

    Meant to run on every node at once (``reframe --distribute``). Each figure
    is the median of ``samples`` samples, each long enough that a CPU-quota
    period cannot hide a throttled node. Subclasses provide the build as a
    fixture named ``fabric_build`` (:class:`clusterbench.checks.fabric.FabricBuild`).
    """

    descr = 'Node battery: STREAM and DGEMM on one core'
    valid_systems = ['+multinode']
    valid_prog_environs = ['+mpi']
    reference_file = 'nodeprobe.yaml'
    reference_index = list(BASE_INDEX)
    stream_reps = variable(int, value=5)
    samples = variable(int, value=5)
    dgemm_n = variable(int, value=1024)
    acceptance_figures = ['stream_triad', 'dgemm']
    time_limit = '10m'
    output_program = 'nodeprobe'
    exit_reasons = {2: 'verification failed'}

    @run_after('setup')
    def _size_job(self):
        self.num_tasks = 1
        self.num_tasks_per_node = 1
        self.num_cpus_per_task = 1
        self.env_vars['OPENBLAS_NUM_THREADS'] = '1'
        self.env_vars['OMP_NUM_THREADS'] = '1'
        self.executable = quote(self.fabric_build.nodeprobe_path)
        self.executable_opts = [
            '--stream-reps',
            str(self.stream_reps),
            '--samples',
            str(self.samples),
            '--dgemm-n',
            str(self.dgemm_n),
        ]

    def parse_output(self, text, source):
        return outputs.nodeprobe(text, source)

    def output_figures(self, result):
        return {
            figure.name: (result[key] * scale, figure.unit)
            for key, (figure, scale) in outputs.PROBE_FIGURES.items()
        }


class NodeCGBase(AcceptanceSpec, CGSolverBase):
    """The sparse CG solver on one rank of one node (class A by default)."""

    descr = 'Node battery: sparse CG solver on one core'
    valid_systems = ['+multinode']
    stencil = parameter([7])
    variant = parameter(['classic'])
    ranks_per_node = parameter(['1'])
    problem_class = 'A'
    acceptance_figures = ['gflops']


# -- scaling -------------------------------------------------------------------


#: The node counts of a scaling series where the system's size is unknown.
NODE_COUNTS = (1, 2, 4, 8)


def node_counts(partitions=None):
    """1, 2, 4 ... up to the most nodes of a ``multinode`` partition among
    *partitions* (default: those of the system ReFrame runs on), that count
    itself included: a 2-node partition gets no 4- and 8-node tests. A
    partition of unknown size (a batch partition without ``extras.num_nodes``),
    or no system (the checks imported outside ReFrame): NODE_COUNTS."""
    if partitions is None:
        partitions = _session_partitions()
        if partitions is None:
            return list(NODE_COUNTS)
    sizes = [partition_nodes(p) for p in partitions if 'multinode' in p.features]
    if not sizes or None in sizes:
        return list(NODE_COUNTS)
    most = max(sizes)
    counts = [1 << i for i in range(most.bit_length()) if 1 << i <= most]
    return counts if counts[-1] == most else [*counts, most]


def _session_partitions():
    """The partitions of the system ReFrame runs on; None outside a session
    (the checks imported by a test or a tool)."""
    from reframe.core.exceptions import ReframeFatalError
    from reframe.core.runtime import runtime

    try:
        return runtime().system.partitions
    except (ReframeFatalError, AttributeError):
        return None


#: The ``node_count`` parameter of every scaling base (``-P node_count=...``).
SCALING_NODE_COUNTS = node_counts()

# A scaling base declares ``node_count = parameter(SCALING_NODE_COUNTS)`` and
# ``scaling_figure``, the figure speedup is computed from (``time``, lower is
# better, or a rate); ``scaling`` is ``strong`` (the same problem on more
# nodes) or ``weak`` (the same problem per node). Its init hook calls
# over_nodes, its setup hook skip_if_too_few_nodes.


def over_nodes(check):
    """Run *check* on ``node_count`` nodes, only on the multinode partitions
    that hold that many (if none can, as a count given with -P, the setup
    hook skips it with the reason)."""
    check.num_nodes = check.node_count
    partitions = _session_partitions() or []
    fits = [
        p.fullname
        for p in partitions
        if 'multinode' in p.features
        and (partition_nodes(p) or check.node_count) >= check.node_count
    ]
    if fits:
        check.valid_systems = fits


def skip_if_too_few_nodes(check):
    """Skip *check* where its partition has fewer than ``node_count`` nodes."""
    available = partition_nodes(check.current_partition)
    check.skip_if(
        available is not None and check.node_count > available,
        f'{check.node_count} nodes requested, {check.current_partition.fullname} '
        f'has {available}',
    )


class CGScalingBase(CGSolverBase):
    """The CG solver on 1, 2, 4 ... nodes, all cores of each: strong and weak."""

    descr = 'Sparse CG solver: strong and weak scaling over nodes'
    valid_systems = ['+multinode']
    node_count = parameter(SCALING_NODE_COUNTS)
    scaling_figure = variable(str, value='time')
    stencil = parameter([7])
    variant = parameter(['classic'])
    ranks_per_node = parameter(['all'])
    mode = parameter(['strong', 'weak'])
    problem_class = 'A'

    @run_after('init')
    def _scale_over_nodes(self):
        over_nodes(self)

    @run_after('setup')
    def _skip_if_too_few_nodes(self):
        skip_if_too_few_nodes(self)

    @run_after('init')
    def _scaling_from_mode(self):
        self.scaling = self.mode


class HPCCScalingBase(HPCCBase):
    """HPCC on 1, 2, 4 ... nodes; speedup from HPL's rate."""

    descr = 'HPC Challenge: scaling over nodes'
    valid_systems = ['+multinode']
    node_count = parameter(SCALING_NODE_COUNTS)
    scaling_figure = variable(str, value='hpl')

    one_core_advice = 'its 2-node case runs it'

    @run_after('init')
    def _scale_over_nodes(self):
        over_nodes(self)

    @run_after('setup')
    def _skip_if_too_few_nodes(self):
        skip_if_too_few_nodes(self)


class NPBScalingBase(NPBBase):
    """NPB on 1, 2, 4 ... nodes where NPB is provided (else skipped, one line)."""

    descr = 'NAS Parallel Benchmarks: scaling over nodes'
    valid_systems = ['+multinode']
    node_count = parameter(SCALING_NODE_COUNTS)
    scaling_figure = variable(str, value='time')

    @run_after('init')
    def _scale_over_nodes(self):
        over_nodes(self)

    @run_after('setup')
    def _skip_if_too_few_nodes(self):
        skip_if_too_few_nodes(self)
