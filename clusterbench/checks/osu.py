"""OSU Micro-Benchmarks 7.x: installed, built by Spack, or from the release.

Point-to-point (``benchmark`` x ``placement``): osu_latency, osu_bw,
osu_bibw and osu_mbw_mr (``pairs`` pairs of ranks, one side on each node;
``-P pairs:1,2,4`` sweeps it). Collectives over the whole allocation
(``num_nodes`` nodes, one rank per core): osu_allreduce, osu_bcast,
osu_barrier. Sizes are OSU's doubling sweep from ``osu_min_size`` to
``osu_max_size`` (4 MiB point-to-point, 1 MiB collectives, OSU's defaults).

Statistic (OSU's own): every latency is the mean over the timed iterations
after the warm-up (osu_latency: half the round trip; collectives: the mean
over ranks of each rank's mean); bandwidth and message rate are measured over
windows of back-to-back messages. ``osu_iterations``/``osu_warmup`` set
``-i``/``-x`` (0: OSU's defaults); ``osu_validate`` adds OSU's data
validation (``-c``), which must pass on every size.

Figures: osu_latency ``latency_1B``, ``latency_8B``; osu_bw, osu_bibw,
osu_mbw_mr ``bandwidth_1MiB``, ``bandwidth_peak``, ``n_half`` (and
osu_mbw_mr ``message_rate_1B``, ``message_rate_8B``); collectives
``latency_8B``, ``latency_1KiB``, ``latency_1MiB`` (osu_barrier ``latency``).
Inter-node runs on a partition that declares its link's peak also get
``link_efficiency`` (osu_bw, osu_mbw_mr) or ``link_efficiency_bidir``
(osu_bibw).
"""

from reframe.core.builtins import (
    parameter,
    run_after,
    variable,
)

from clusterbench.bench import curves, sources
from clusterbench.bench.source import Source
from clusterbench.checks.comm import PLACEMENTS, CommBase
from clusterbench.checks.plugins.references import BASE_INDEX
from clusterbench.checks.plugins.spack import MPI_FLAVOURS
from clusterbench.checks.provisioning import Provisioned, build_fixture
from clusterbench.parsers import osu

_MPI = 'libexec/osu-micro-benchmarks/mpi'
SUBDIRS = (
    f'{_MPI}/pt2pt',
    f'{_MPI}/pt2pt/standard',
    f'{_MPI}/collective',
    f'{_MPI}/collective/blocking',
    'c/mpi/pt2pt/standard',
    'c/mpi/collective/blocking',
    'mpi/pt2pt',
    'mpi/collective',
)

STATISTIC = (
    'OSU: per size, the mean over the timed iterations after warm-up '
    '({iterations}); latency is half the round trip (osu_latency) or the mean '
    "over ranks of each rank's mean (collectives); bandwidth over windows of "
    'back-to-back messages'
)


COLLECTIVES = ('osu_allreduce', 'osu_bcast', 'osu_barrier')


def figures_of(benchmark, curve):
    """``{name: (value, unit)}`` of one OSU benchmark's verified curve."""
    if benchmark in COLLECTIVES:
        if curve.sizes == (0,):
            return {'latency': (curve.values('latency')[0], 'us')}
        return curves.latency_figures(curve, 'latency', sizes=curves.COLLECTIVE_SIZES)
    if benchmark == 'osu_latency':
        return curves.latency_figures(curve, 'latency')
    figures = curves.bandwidth_figures(curve, 'bandwidth')
    if benchmark == 'osu_mbw_mr':
        figures.update(curves.rate_figures(curve, 'message_rate'))
    return figures


#: Where OSU comes from (clusterbench/bench/source.py says in which order).
OSU = Source(
    'osu',
    'OSU Micro-Benchmarks',
    release=sources.DEFAULTS['osu'],
    prefix=True,
    feature='osu',
    spack='osu-micro-benchmarks',
    subdirs=SUBDIRS,
    build=('./configure CC={cc} CXX={cxx}', 'make'),
    label='OSU',
)


class OSUMixin(Provisioned):
    """Where OSU is and how it is run."""

    source = OSU
    #: Built from the release when nothing else provides the suite.
    osu_build = build_fixture(OSU)
    #: The MPI flavour (a partition's environments offer some of them).
    mpi = parameter(MPI_FLAVOURS)
    output_parser = osu

    @run_after('init')
    def _executable_is_the_benchmark(self):
        self.spack_executable = self.benchmark
        self.output_program = self.benchmark

    osu_min_size = variable(int, value=1)
    osu_iterations = variable(int, value=0)
    osu_warmup = variable(int, value=0)
    osu_validate = variable(bool, value=False)

    def osu_options(self, max_size):
        opts = ['-m', f'{self.osu_min_size}:{max_size}']
        if self.osu_iterations:
            opts += ['-i', str(self.osu_iterations)]
        if self.osu_warmup:
            opts += ['-x', str(self.osu_warmup)]
        if self.osu_validate:
            opts += ['-c']
        return opts

    def osu_statistic(self):
        its = (
            f'-i {self.osu_iterations}'
            if self.osu_iterations
            else "OSU's default count"
        )
        return STATISTIC.format(iterations=its)

    def output_expected(self):
        return {
            'benchmark': self.benchmark,
            'min_size': self.osu_min_size,
            'max_size': self.osu_max_size,
            'pairs': self.pairs if self.benchmark == 'osu_mbw_mr' else None,
        }


class OSUPointToPointBase(OSUMixin, CommBase):
    """osu_latency, osu_bw, osu_bibw, osu_mbw_mr between nodes or within one."""

    descr = 'OSU point-to-point: latency, bandwidth, bidirectional, message rate'
    valid_prog_environs = ['+mpi']
    reference_file = 'osu.yaml'
    reference_index = [*BASE_INDEX, 'benchmark', 'placement', 'pairs']
    #: inter: two different nodes (skipped on a one-node partition); intra: one
    #: node (shared memory).
    placement = parameter(PLACEMENTS)
    benchmark = parameter(['osu_latency', 'osu_bw', 'osu_bibw', 'osu_mbw_mr'])
    #: Pairs of ranks for osu_mbw_mr (the others always run one pair).
    pairs = variable(int, value=1)
    osu_max_size = variable(int, value=4 << 20)

    @run_after('setup')
    def _configure(self):
        if self.benchmark != 'osu_mbw_mr':
            self.pairs = 1
        self.place_pairs(self.pairs)
        self.executable_opts = self.osu_options(self.osu_max_size)
        self.statistic = self.osu_statistic()

    def output_figures(self, curve):
        figures = figures_of(self.benchmark, curve)
        if self.benchmark == 'osu_latency':
            self.efficiency_note = 'osu_latency: no bandwidth, no efficiency'
        else:
            bidir = self.benchmark == 'osu_bibw'
            name = 'link_efficiency_bidir' if bidir else 'link_efficiency'
            self.efficiency(figures, name, figures['bandwidth_peak'][0], bidir)
        return self.record(figures, [curve])


class OSUCollectiveBase(OSUMixin, CommBase):
    """osu_allreduce, osu_bcast, osu_barrier on every core of the allocation."""

    descr = 'OSU collectives: allreduce, broadcast, barrier latency'
    valid_prog_environs = ['+mpi']
    reference_file = 'osu.yaml'
    reference_index = [*BASE_INDEX, 'benchmark', 'num_nodes']
    #: Nodes of the allocation, one rank per core on each.
    num_nodes = variable(int, value=1)
    benchmark = parameter(list(COLLECTIVES))
    osu_max_size = variable(int, value=1 << 20)

    @run_after('setup')
    def _configure(self):
        self.place_all()
        if self.benchmark == 'osu_barrier':
            self.executable_opts = self.osu_options(self.osu_max_size)[2:]
        else:
            self.executable_opts = self.osu_options(self.osu_max_size)
        self.statistic = self.osu_statistic()
        self.efficiency_note = 'collective: no link efficiency'

    def output_figures(self, curve):
        return self.record(figures_of(self.benchmark, curve), [curve])
