"""Intel MPI Benchmarks (IMB-MPI1): installed, built by Spack, or from the release.

Two runs of IMB-MPI1: the point-to-point set PingPong, PingPing, Sendrecv,
Exchange on two ranks (``placement`` inter/intra), and the collectives Bcast,
Reduce, Allreduce, Alltoall, Barrier over the whole allocation (``num_nodes``
nodes, one rank per core; ``-npmin`` keeps IMB to that one process count).
``imb_benchmarks`` narrows either set (``-S IMBCollectiveCheck.imb_benchmarks=
Allreduce,Barrier``).
Sizes: 0, then 2**``imb_min_log2`` .. 2**``imb_max_log2`` bytes (``-msglog``;
4 MiB point-to-point, 1 MiB collectives).

Statistic (IMB's own): per size, the mean over ``#repetitions`` (IMB's
choice unless ``imb_iterations`` sets ``-iter``); PingPong and PingPing time
half the round trip; Sendrecv and Exchange use ``t_max`` (the slowest rank),
from which IMB computes their bandwidth; collectives use ``t_avg`` (the mean
over ranks of each rank's mean, comparable with OSU's average latency).

Figures, named ``<benchmark>_<figure>``: ``pingpong_latency_0B``,
``pingpong_latency_8B``, ``pingpong_bandwidth_1MiB``,
``pingpong_bandwidth_peak``, ``pingpong_n_half`` (the same for pingping,
sendrecv, exchange), ``allreduce_latency_8B`` / ``_1KiB`` / ``_1MiB`` (bcast,
reduce, alltoall), ``barrier_latency``. Inter-node runs on a partition that
declares its link's peak also get ``pingpong_link_efficiency`` and
``sendrecv_link_efficiency_bidir``.
"""

import shlex

import reframe.utility.typecheck as typ
from reframe.core.builtins import (
    parameter,
    run_after,
    variable,
)
from reframe.core.exceptions import ReframeError

from clusterbench.bench import curves, sources
from clusterbench.bench.source import Source
from clusterbench.checks.comm import PLACEMENTS, CommBase
from clusterbench.checks.plugins.references import BASE_INDEX
from clusterbench.checks.plugins.spack import MPI_FLAVOURS
from clusterbench.checks.provisioning import Provisioned, build_fixture
from clusterbench.parsers import imb

EXECUTABLE = 'IMB-MPI1'
POINT_TO_POINT = ('PingPong', 'PingPing', 'Sendrecv', 'Exchange')
COLLECTIVES = ('Bcast', 'Reduce', 'Allreduce', 'Alltoall', 'Barrier')

#: Benchmark -> the time column its latency figures read.
_TIME = {'PingPong': 'latency', 'PingPing': 'latency'}
_TIME.update(dict.fromkeys(('Sendrecv', 'Exchange'), 't_max'))

STATISTIC = (
    'IMB: per size, the mean over #repetitions ({iterations}); PingPong/PingPing '
    'time half the round trip; Sendrecv/Exchange t_max (slowest rank, the time '
    'IMB derives their bandwidth from); collectives t_avg (mean over ranks)'
)


def figures_of(found):
    """``{name: (value, unit)}`` of IMB's verified curves (``{benchmark: curve}``)."""
    figures = {}
    for name, curve in found.items():
        prefix = f'{name.lower()}_'
        if name in POINT_TO_POINT:
            figures.update(curves.latency_figures(curve, _TIME[name], prefix))
            figures.update(curves.bandwidth_figures(curve, 'bandwidth', prefix))
        elif curve.sizes == (0,):
            figures[f'{prefix}latency'] = (curve.values('t_avg')[0], 'us')
        else:
            figures.update(
                curves.latency_figures(curve, 't_avg', prefix, curves.COLLECTIVE_SIZES)
            )
    return figures


#: Where IMB comes from (clusterbench/bench/source.py says in which order).
IMB = Source(
    'imb',
    'Intel MPI Benchmarks (IMB-MPI1)',
    release=sources.DEFAULTS['imb'],
    prefix=True,
    feature='imb',
    spack='intel-mpi-benchmarks',
    subdirs=('src_cpp',),
    # IMB uses MPI's C API only; the C++ bindings' headers trip IMB's
    # -Werror with recent GCC, so leave them out.
    build=(
        f'make {EXECUTABLE} CC={{cc}} CXX={{cxx}} '
        f'CPPFLAGS={shlex.quote("-DOMPI_SKIP_MPICXX -DMPICH_SKIP_MPICXX")}',
    ),
    label='IMB',
)


class IMBMixin(Provisioned):
    """Where IMB-MPI1 is and how it is run."""

    source = IMB
    #: Built from the release when nothing else provides the suite.
    imb_build = build_fixture(IMB)
    #: The MPI flavour (a partition's environments offer some of them).
    mpi = parameter(MPI_FLAVOURS)
    output_program = EXECUTABLE
    output_parser = imb
    spack_executable = EXECUTABLE
    imb_min_log2 = variable(int, value=0)
    #: Fixed repetitions per size (-iter); 0: IMB's own choice.
    imb_iterations = variable(int, value=0)

    def imb_configure(self, benchmarks, max_log2, known):
        unknown = [b for b in benchmarks if b not in known]
        if unknown or not benchmarks:
            raise ReframeError(
                f'imb_benchmarks: {", ".join(unknown) or "none given"}; '
                f'choose from {", ".join(known)}'
            )
        opts = [*benchmarks, '-msglog', f'{self.imb_min_log2}:{max_log2}']
        opts += ['-npmin', str(self.num_tasks)]
        if self.imb_iterations:
            opts += ['-iter', str(self.imb_iterations)]
        self.executable_opts = opts
        its = f'-iter {self.imb_iterations}' if self.imb_iterations else "IMB's choice"
        self.statistic = STATISTIC.format(iterations=its)

    def output_expected(self):
        return {
            'benchmarks': self.imb_benchmarks,
            'processes': self.num_tasks,
            'max_size': 1 << self.imb_max_log2,
        }


class IMBPointToPointBase(IMBMixin, CommBase):
    """PingPong, PingPing, Sendrecv, Exchange between nodes or within one."""

    descr = 'IMB-MPI1 point-to-point: PingPong, PingPing, Sendrecv, Exchange'
    valid_prog_environs = ['+mpi']
    reference_file = 'imb.yaml'
    reference_index = [*BASE_INDEX, 'placement']
    #: inter: two different nodes (skipped on a one-node partition); intra: one
    #: node (shared memory).
    placement = parameter(PLACEMENTS)
    imb_benchmarks = variable(typ.List[str], value=list(POINT_TO_POINT))
    imb_max_log2 = variable(int, value=22)

    @run_after('setup')
    def _configure(self):
        self.place_pairs(1)
        self.imb_configure(self.imb_benchmarks, self.imb_max_log2, POINT_TO_POINT)

    def output_figures(self, found):
        figures = figures_of(found)
        for name, bidir in (('pingpong', False), ('sendrecv', True)):
            measured = figures.get(f'{name}_bandwidth_peak', (None,))[0]
            suffix = '_bidir' if bidir else ''
            self.efficiency(figures, f'{name}_link_efficiency{suffix}', measured, bidir)
        return self.record(figures, list(found.values()))


class IMBCollectiveBase(IMBMixin, CommBase):
    """Bcast, Reduce, Allreduce, Alltoall, Barrier on every core of the allocation."""

    descr = 'IMB-MPI1 collectives: Bcast, Reduce, Allreduce, Alltoall, Barrier'
    valid_prog_environs = ['+mpi']
    reference_file = 'imb.yaml'
    reference_index = [*BASE_INDEX, 'num_nodes']
    #: Nodes of the allocation, one rank per core on each.
    num_nodes = variable(int, value=1)
    imb_benchmarks = variable(typ.List[str], value=list(COLLECTIVES))
    imb_max_log2 = variable(int, value=20)

    @run_after('setup')
    def _configure(self):
        self.place_all()
        self.imb_configure(self.imb_benchmarks, self.imb_max_log2, COLLECTIVES)
        self.efficiency_note = 'collectives: no link efficiency'

    def output_figures(self, found):
        return self.record(figures_of(found), list(found.values()))
