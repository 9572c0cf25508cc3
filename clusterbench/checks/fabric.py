"""Fabric acceptance: our all-pairs program (src/fabric) across a partition's nodes.

``fabric`` measures latency, bandwidth and multi-pair message rate between
every pair of nodes in O(N) rounds (see src/fabric/fabric.c); the check keeps
its N x N matrices in the run report (``fabric_result``), where
``clusterbench acceptance links`` finds them and names the links
that fall outside the population or the partition's link specification.

The specification is the partition's ``extras.acceptance`` (site config):
``link_bandwidth_min_mbs``, ``link_latency_max_us``, ``link_stall_max``
(fraction of round trips slower than the stall threshold) and
``link_msgrate_min_mmps``. Unless ``reference_data/<system>/fabric.yaml`` gives the
check references of its own, they become ReFrame references of the worst
link's figures, so ReFrame (and ``clusterbench compare``) judge them too.
"""

import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.builtins import run_after, variable

from clusterbench.acceptance import outputs
from clusterbench.checks.ownbuild import OwnProgramBuild
from clusterbench.checks.plugins.judged import JudgedCheck
from clusterbench.checks.resources import partition_nodes
from clusterbench.checks.shell import quote, quote_all
from clusterbench.judging import stats
from clusterbench.parsers import declarations
from clusterbench.site.contract import PartitionSpec

#: The keys of a partition's ``extras.acceptance`` that specify its links.
LINK_SPEC = (
    'link_bandwidth_min_mbs',
    'link_latency_max_us',
    'link_stall_max',
    'link_msgrate_min_mmps',
)


class FabricBuild(OwnProgramBuild):
    """Builds ``fabric`` and ``nodeprobe`` (``src/fabric``); one per environment."""

    programs = ('fabric', 'nodeprobe')

    @property
    def fabric_path(self):
        return self.program_path('fabric')

    @property
    def nodeprobe_path(self):
        return self.program_path('nodeprobe')


class AcceptanceSpec(rfm.RegressionTestPlugin):
    """Keeps in the run report what acceptance judges this check's runs by.

    ``acceptance_spec``: the partition's ``extras.acceptance`` (site config):
    ``min_spread`` and ``z_max`` of the population test, and the link
    specification (see :data:`LINK_SPEC`). ``acceptance_figures``: the figures
    of this check that acceptance ranks (empty: every rate and time).
    """

    acceptance_spec = variable(typ.Dict[str, object], value={})
    acceptance_figures = variable(typ.List[str], value=[])

    @run_after('setup')
    def _record_acceptance_spec(self):
        self.acceptance_spec = dict(PartitionSpec.of(self.current_partition).acceptance)


def _values(result, key, directed=True):
    matrix = result[key]
    n = len(matrix)
    return [
        matrix[i][j]
        for i in range(n)
        for j in range(n)
        if i != j and (directed or i < j) and matrix[i][j] is not None
    ]


def _aggregate(result, name):
    """One figure of the whole fabric from the link matrices."""
    lat = _values(result, 'latency_p50_us', directed=False)
    bw = _values(result, 'bandwidth_mbs')
    mr = _values(result, 'msgrate_mmps')
    stalls = [
        link['stall_fraction'] * 100
        for link in outputs.links(result)
        if link['stall_fraction'] is not None
    ]
    return {
        'latency': lambda: stats.median(lat),
        'latency_worst': lambda: max(lat),
        'bandwidth': lambda: stats.median(bw),
        'bandwidth_worst': lambda: min(bw),
        'msgrate': lambda: stats.median(mr),
        'msgrate_worst': lambda: min(mr),
        'stalls_worst': lambda: max(stalls),
        'wall': lambda: result['wall_s'],
    }[name]()


#: Figures of a fabric run (declared in clusterbench.parsers.declarations).
FIGURES = declarations.FABRIC


class FabricBase(
    AcceptanceSpec,
    JudgedCheck,
    rfm.RunOnlyRegressionTest,
):
    """All-pairs latency, bandwidth and message rate between the nodes.

    ``fabric_nodes`` nodes (0: every node of the partition), ``ranks_per_node``
    ranks on each (the message rate uses them all at once). Subclasses provide
    the build as a fixture named ``fabric_build`` (:class:`FabricBuild`).
    Sanity: the program ran on distinct nodes, as many as requested, met every
    pair exactly once in the expected number of rounds, and measured each.
    """

    descr = 'Fabric: all-pairs latency, bandwidth, message rate (O(N) rounds)'
    valid_systems = ['+multinode']
    valid_prog_environs = ['+mpi']
    reference_file = 'fabric.yaml'
    reference_index = ['$partition', '$environ']
    #: Nodes to measure (0: all the partition's nodes).
    fabric_nodes = variable(int, value=0)
    ranks_per_node = variable(int, value=1)
    #: More options of the program (see ``fabric --help``).
    fabric_options = variable(typ.List[str], value=[])
    #: The link specification in force (from the partition's extras).
    link_spec = variable(typ.Dict[str, float], value={})
    #: The program's result: node names and N x N matrices (kept in reports).
    fabric_result = variable(typ.Dict[str, object], value={})
    num_nodes = variable(int, value=0)
    time_limit = '10m'
    output_program = 'fabric'
    exit_reasons = {2: 'a pair was not measured'}

    @run_after('setup')
    def _size_job(self):
        available = partition_nodes(self.current_partition)
        nodes = self.fabric_nodes or available
        self.skip_if(
            nodes is None,
            f'{self.current_partition.fullname}: node count unknown; set '
            f'-S fabric_nodes or extras.num_nodes',
        )
        self.skip_if(nodes < 2, f'the fabric needs 2 nodes or more, not {nodes}')
        self.skip_if(
            available is not None and nodes > available,
            f'{nodes} nodes requested, {self.current_partition.fullname} has '
            f'{available}',
        )
        self.num_nodes = nodes
        self.num_tasks_per_node = self.ranks_per_node
        self.num_tasks = nodes * self.ranks_per_node
        self.num_cpus_per_task = 1
        self.executable = quote(self.fabric_build.fabric_path)
        self.executable_opts = quote_all(self.fabric_options)
        spec = PartitionSpec.of(self.current_partition).acceptance
        self.link_spec = {k: float(spec[k]) for k in LINK_SPEC if k in spec}
        if not self.reference:
            self._reference_from_spec()

    def _reference_from_spec(self):
        spec, refs = self.link_spec, {}
        if 'link_bandwidth_min_mbs' in spec:
            refs['bandwidth_worst'] = (spec['link_bandwidth_min_mbs'], 0, None, 'MB/s')
        if 'link_latency_max_us' in spec:
            refs['latency_worst'] = (spec['link_latency_max_us'], None, 0, 'us')
        if 'link_stall_max' in spec:
            refs['stalls_worst'] = (100 * spec['link_stall_max'], None, 0, '%')
        if 'link_msgrate_min_mmps' in spec:
            refs['msgrate_worst'] = (spec['link_msgrate_min_mmps'], 0, None, 'Mmsg/s')
        if refs:
            self.reference = {self.current_partition.fullname: refs}

    def parse_output(self, text, source):
        return outputs.fabric(text, source, nodes=self.num_nodes, ranks=self.num_tasks)

    def output_figures(self, result):
        self.fabric_result = {
            k: result[k]
            for k in ('nodes', 'rounds', 'pairs', 'wall_s', 'round_s', 'options')
        }
        self.fabric_result.update({k: result[k] for k in outputs.MATRICES})
        return {
            figure.name: (_aggregate(result, figure.name), figure.unit)
            for figure in FIGURES
        }
