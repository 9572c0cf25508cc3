"""Declarations of the figures that no parser of this package records.

Our acceptance programs' figures (``fabric`` and ``nodeprobe``, whose outputs
``clusterbench.acceptance.outputs`` reads), and those that checks and their
plugins derive for any benchmark: energy, the MPI time share, a link's
efficiency against the partition's declared peak.
"""

from clusterbench.core.figures import HIGHER, LOWER, Band, Figure
from clusterbench.parsers import stream

# -- derived by plugins and checks -------------------------------------------

ENERGY = Figure('energy_j', 'J', LOWER, of='the same work')
MEAN_POWER = Figure('mean_power_w', 'W', LOWER, of='the same work')
MPI_TIME_SHARE = Figure(
    'mpi_time_share', '%', LOWER, of='the run time (PMPI profile)', share=True
)
#: A shared-memory or network transfer against the partition's declared link
#: peak (x2 both ways); a benchmark names its own (``pingpong_``).
_LINK_BAND = Band(
    40.0,
    105.0,
    'point-to-point benchmarks reach 80-97 % of the data rate of an '
    'InfiniBand or RoCE link (OSU, IMB results of the vendors); 40 % '
    'leaves room for TCP on Ethernet; no session of this project declares '
    'a link yet',
)
LINK_EFFICIENCY = Figure(
    '<prefix>link_efficiency',
    '%',
    HIGHER,
    of="the partition's declared link peak",
    band=_LINK_BAND,
)
LINK_EFFICIENCY_BIDIR = Figure(
    '<prefix>link_efficiency_bidir',
    '%',
    HIGHER,
    of="twice the partition's declared link peak (both directions)",
    band=_LINK_BAND,
)

# -- fabric: all pairs of nodes ----------------------------------------------

FABRIC = (
    Figure('latency', 'us', LOWER),
    Figure('latency_worst', 'us', LOWER),
    Figure('bandwidth', 'MB/s', HIGHER),
    Figure('bandwidth_worst', 'MB/s', HIGHER),
    Figure('msgrate', 'Mmsg/s', HIGHER),
    Figure('msgrate_worst', 'Mmsg/s', HIGHER),
    Figure('stalls_worst', '%', LOWER, of='round trips of the worst link', share=True),
    Figure('wall', 's', LOWER),
)

# -- nodeprobe: STREAM and DGEMM on one core ---------------------------------

#: nodeprobe's JSON key -> (declaration, scale).
NODEPROBE = {
    **{
        f'stream_{kernel}_gbs': (figure, 1.0)
        for kernel, (figure, _) in stream.FIGURES.items()
    },
    'dgemm_gflops': (Figure('dgemm', 'GFlop/s', HIGHER), 1.0),
}

DECLARED = (
    ENERGY,
    MEAN_POWER,
    MPI_TIME_SHARE,
    LINK_EFFICIENCY,
    LINK_EFFICIENCY_BIDIR,
    *FABRIC,
    *(figure for figure, _ in NODEPROBE.values()),
)
