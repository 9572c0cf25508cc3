"""HPC Challenge (hpcc 1.5) output: the summary block and HPL's own verdict."""

import math
import re

from clusterbench.core.errors import ClusterbenchError
from clusterbench.core.figures import HIGHER, LOWER, Band, Figure
from clusterbench.parsers import hpl

SUMMARY_BEGIN = 'Begin of Summary section.'
SUMMARY_END = 'End of Summary section.'

_HPL_PASSED = re.compile(r'^\|\|Ax-b\|\|_oo/.*\.\.\.\.\.\. PASSED\s*$', re.M)
_HPL_FAILED = re.compile(r'^\|\|Ax-b\|\|_oo/.*\.\.\.\.\.\. FAILED\s*$', re.M)
_HPL_TALLY = re.compile(
    r'^\s*(\d+) tests completed and passed residual checks,\s*$\s*'
    r'^\s*(\d+) tests completed and failed residual checks,',
    re.M,
)


class HPCCParseError(ClusterbenchError):
    """The output is not a complete HPCC output."""


def parse_summary(text, source='hpccoutf.txt'):
    """Return the ``key=value`` summary of an HPCC output as a dict.

    Values that read as numbers become floats; the rest stay strings. A
    missing or unterminated summary (a crashed or killed run) raises
    :class:`HPCCParseError` naming *source*.
    """
    start = text.find(SUMMARY_BEGIN)
    if start < 0:
        raise HPCCParseError(f'{source}: no HPCC summary section (run incomplete?)')
    end = text.find(SUMMARY_END, start)
    if end < 0:
        raise HPCCParseError(f'{source}: HPCC summary section is truncated')
    summary = {}
    body = text[start + len(SUMMARY_BEGIN) : end]
    for lineno, line in enumerate(body.splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        key, sep, value = line.partition('=')
        if not sep or not key:
            raise HPCCParseError(
                f'{source}: summary line {lineno} is not key=value: {line!r}'
            )
        summary[key] = _number_or_text(value)
    return summary


def _number_or_text(value):
    try:
        return float(value)
    except ValueError:
        return value


def hpl_residual_checks(text):
    """Count HPL's residual verdicts: ``(passed, failed)`` test counts.

    HPL's own tally is authoritative when present; otherwise the per-test
    ``...... PASSED``/``FAILED`` lines are counted.
    """
    tally = _HPL_TALLY.search(text)
    if tally:
        return int(tally.group(1)), int(tally.group(2))
    return len(_HPL_PASSED.findall(text)), len(_HPL_FAILED.findall(text))


def verify(text, source='hpccoutf.txt', nprocs=None, n=None):
    """Check that an HPCC run verified its results; return the summary.

    Raises :class:`HPCCParseError` with the first reason the run cannot be
    trusted: HPCC's own ``Success`` flag, HPL's residual check, the process
    count and the HPL problem size that were asked for.
    """
    summary = parse_summary(text, source)
    if summary.get('Success') != 1.0:
        raise HPCCParseError(f'{source}: HPCC reports Success={summary.get("Success")}')
    passed, failed = hpl_residual_checks(text)
    if failed or not passed:
        raise HPCCParseError(
            f'{source}: HPL residual check: {passed} passed, {failed} failed'
        )
    procs = summary.get('CommWorldProcs')
    if nprocs is not None and procs != nprocs:
        raise HPCCParseError(f'{source}: ran on {procs} processes, {nprocs} requested')
    hpl_n = summary.get('HPL_N')
    if n is not None and hpl_n != n:
        raise HPCCParseError(f'{source}: HPL N={hpl_n}, {n} requested')
    return summary


# Each figure of HPCC, declared once: its unit and which way is better.
HPL = hpl.HPL
DGEMM_STAR = Figure('dgemm_star', 'GFlop/s', HIGHER)
DGEMM_SINGLE = Figure('dgemm_single', 'GFlop/s', HIGHER)
PINGPONG_BANDWIDTH_MIN = Figure('pingpong_bandwidth_min', 'GB/s', HIGHER)
PINGPONG_BANDWIDTH_MAX = Figure('pingpong_bandwidth_max', 'GB/s', HIGHER)
HPL_DGEMM_EFFICIENCY = Figure(
    'hpl_dgemm_efficiency',
    '%',
    HIGHER,
    of='StarDGEMM x processes: the DGEMM rate every process reached at once',
    band=Band(
        60.0,
        105.0,
        'HPL spends its time in DGEMM: 80-95 % of the DGEMM rate of all ranks '
        'at a memory-filling N (Dongarra et al., HPL FAQ); 65 % Intel-6-207, '
        '78-85 % AMD-25-17 (14 sessions), 88 % AMD-25-1 at N about 10k; above '
        '100 % DGEMM itself was measured low; no fault measured yet',
        healthy=(('AMD-25-1', 88.1), ('AMD-25-17', 77.6), ('Intel-6-207', 65.2)),
    ),
)
#: Portable: judged in every run against the peak of a core of the same node.
DGEMM_PEAK_EFFICIENCY = Figure(
    'dgemm_peak_efficiency',
    '%',
    HIGHER,
    of="one core's double-precision peak (SingleDGEMM)",
    band=Band(
        55.0,
        150.0,
        "an optimised BLAS reaches 85-100 % of a core's peak at its clock "
        '(OpenBLAS, BLIS papers); a guest reads its nominal clock and turbo '
        'goes above it: 99 % AMD-25-1 at 2445 MHz, 124-134 % AMD-25-17 at '
        '2600 MHz (14 sessions), 62-99 % Intel-6-207 at 2100 MHz (3 '
        'sessions, OPENBLAS_CORETYPE=SkylakeX); the generic Prescott kernel: '
        '45.8-46.9 % AMD-25-17, 18 % Intel-6-207. The nominal clock scales '
        'healthy and generic alike (their ratio, 2.6 on AMD-25-17, is the '
        'same at any clock): the floor sits between them, not at a fraction '
        'of a true peak',
        healthy=(('AMD-25-1', 98.8), ('AMD-25-17', 124.1), ('Intel-6-207', 62.3)),
        faulty=(
            ('generic BLAS', 'AMD-25-17', 46.9),
            ('generic BLAS', 'Intel-6-207', 17.9),
        ),
    ),
)
#: Portable: a shared-memory PingPong against a copy in memory, one node.
PINGPONG_COPY_EFFICIENCY = Figure(
    'pingpong_copy_efficiency',
    '%',
    HIGHER,
    of="SingleSTREAM copy of the same run (PingPong's best pair, one node)",
    band=Band(
        25.0,
        150.0,
        'a shared-memory message is copied in and out of a shared buffer: '
        'about half to all of one copy stream (52 % AMD-25-1, 51-80 % '
        'AMD-25-17 in 14 sessions, 77 % Intel-6-207); a transport through '
        'the network stack stays far below: 9.8 % AMD-25-17 with Open MPI '
        'forced through TCP (OMPI_MCA_btl=tcp,self)',
        healthy=(('AMD-25-1', 52.3), ('AMD-25-17', 51.3), ('Intel-6-207', 76.8)),
        faulty=(('TCP transport', 'AMD-25-17', 9.8),),
    ),
)

# Figures the harness records: summary key -> (declaration, scale).
FIGURES = {
    'HPL_Tflops': (HPL, 1000.0),
    'StarDGEMM_Gflops': (DGEMM_STAR, 1.0),
    'SingleDGEMM_Gflops': (DGEMM_SINGLE, 1.0),
    'StarSTREAM_Copy': (Figure('stream_star_copy', 'GB/s', HIGHER), 1.0),
    'StarSTREAM_Scale': (Figure('stream_star_scale', 'GB/s', HIGHER), 1.0),
    'StarSTREAM_Add': (Figure('stream_star_add', 'GB/s', HIGHER), 1.0),
    'StarSTREAM_Triad': (
        Figure('stream_star_triad', 'GB/s', HIGHER, headline='STREAM'),
        1.0,
    ),
    'SingleSTREAM_Copy': (Figure('stream_single_copy', 'GB/s', HIGHER), 1.0),
    'SingleSTREAM_Scale': (Figure('stream_single_scale', 'GB/s', HIGHER), 1.0),
    'SingleSTREAM_Add': (Figure('stream_single_add', 'GB/s', HIGHER), 1.0),
    'SingleSTREAM_Triad': (Figure('stream_single_triad', 'GB/s', HIGHER), 1.0),
    'MinPingPongLatency_usec': (Figure('pingpong_latency_min', 'us', LOWER), 1.0),
    'AvgPingPongLatency_usec': (Figure('pingpong_latency_avg', 'us', LOWER), 1.0),
    'MaxPingPongLatency_usec': (Figure('pingpong_latency_max', 'us', LOWER), 1.0),
    'MinPingPongBandwidth_GBytes': (PINGPONG_BANDWIDTH_MIN, 1.0),
    'AvgPingPongBandwidth_GBytes': (
        Figure('pingpong_bandwidth_avg', 'GB/s', HIGHER),
        1.0,
    ),
    'MaxPingPongBandwidth_GBytes': (PINGPONG_BANDWIDTH_MAX, 1.0),
    'NaturallyOrderedRingLatency_usec': (
        Figure('ring_natural_latency', 'us', LOWER),
        1.0,
    ),
    'RandomlyOrderedRingLatency_usec': (
        Figure('ring_random_latency', 'us', LOWER),
        1.0,
    ),
    'NaturallyOrderedRingBandwidth_GBytes': (
        Figure('ring_natural_bandwidth', 'GB/s', HIGHER),
        1.0,
    ),
    'RandomlyOrderedRingBandwidth_GBytes': (
        Figure('ring_random_bandwidth', 'GB/s', HIGHER),
        1.0,
    ),
    'MPIFFT_Gflops': (Figure('mpifft', 'GFlop/s', HIGHER), 1.0),
    'MPIRandomAccess_GUPs': (Figure('mpi_random_access', 'GUP/s', HIGHER), 1.0),
}

DECLARED = (
    *(figure for figure, _ in FIGURES.values()),
    HPL_DGEMM_EFFICIENCY,
    DGEMM_PEAK_EFFICIENCY,
    PINGPONG_COPY_EFFICIENCY,
)


def figures(summary, source='hpccoutf.txt'):
    """The recorded figures of a verified summary: name -> (value, unit).

    Also derives ``hpl_dgemm_efficiency``: HPL's rate as a percentage of the
    DGEMM rate that every process reached at once (StarDGEMM x processes), the
    figure that tells a well-sized HPL from a toy one.
    """
    result = {}
    for key, (figure, scale) in FIGURES.items():
        value = summary.get(key)
        if not isinstance(value, float):
            raise HPCCParseError(f'{source}: summary has no numeric {key}')
        if not math.isfinite(value * scale):
            # float() reads "nan" and "inf" (and 1e308 TFlop/s overflows in
            # GFlop/s): a number type, never a figure.
            raise HPCCParseError(f'{source}: {key} is {value}: not a figure')
        result[figure.name] = (value * scale, figure.unit)
    procs = summary.get('CommWorldProcs')
    dgemm_total = result['dgemm_star'][0] * (procs or 0)
    if dgemm_total > 0:
        result[HPL_DGEMM_EFFICIENCY.name] = (
            100.0 * result['hpl'][0] / dgemm_total,
            HPL_DGEMM_EFFICIENCY.unit,
        )
    return result


def replay_file(case):
    """The file of a stored run that :func:`replay` reads."""
    return 'hpccoutf.txt'


def replay(text, case, path):
    """Figures of a stored run's output *text* (read from *path*), verified
    again (``clusterbench replay``)."""
    problem = case.get('hpl_problem') or {}
    summary = verify(
        text,
        path,
        nprocs=float(case['num_tasks']),
        n=float(problem['n']) if 'n' in problem else None,
    )
    return figures(summary, path)
