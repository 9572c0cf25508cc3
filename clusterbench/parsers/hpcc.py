"""HPC Challenge (hpcc 1.5) output: the summary block and HPL's own verdict."""

import math
import os
import re

from clusterbench.core.errors import ClusterbenchError

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


# Figures the harness records: summary key -> (figure name, unit, scale).
FIGURES = {
    'HPL_Tflops': ('hpl', 'GFlop/s', 1000.0),
    'StarDGEMM_Gflops': ('dgemm_star', 'GFlop/s', 1.0),
    'SingleDGEMM_Gflops': ('dgemm_single', 'GFlop/s', 1.0),
    'StarSTREAM_Copy': ('stream_star_copy', 'GB/s', 1.0),
    'StarSTREAM_Scale': ('stream_star_scale', 'GB/s', 1.0),
    'StarSTREAM_Add': ('stream_star_add', 'GB/s', 1.0),
    'StarSTREAM_Triad': ('stream_star_triad', 'GB/s', 1.0),
    'SingleSTREAM_Copy': ('stream_single_copy', 'GB/s', 1.0),
    'SingleSTREAM_Scale': ('stream_single_scale', 'GB/s', 1.0),
    'SingleSTREAM_Add': ('stream_single_add', 'GB/s', 1.0),
    'SingleSTREAM_Triad': ('stream_single_triad', 'GB/s', 1.0),
    'MinPingPongLatency_usec': ('pingpong_latency_min', 'us', 1.0),
    'AvgPingPongLatency_usec': ('pingpong_latency_avg', 'us', 1.0),
    'MaxPingPongLatency_usec': ('pingpong_latency_max', 'us', 1.0),
    'MinPingPongBandwidth_GBytes': ('pingpong_bandwidth_min', 'GB/s', 1.0),
    'AvgPingPongBandwidth_GBytes': ('pingpong_bandwidth_avg', 'GB/s', 1.0),
    'MaxPingPongBandwidth_GBytes': ('pingpong_bandwidth_max', 'GB/s', 1.0),
    'NaturallyOrderedRingLatency_usec': ('ring_natural_latency', 'us', 1.0),
    'RandomlyOrderedRingLatency_usec': ('ring_random_latency', 'us', 1.0),
    'NaturallyOrderedRingBandwidth_GBytes': ('ring_natural_bandwidth', 'GB/s', 1.0),
    'RandomlyOrderedRingBandwidth_GBytes': ('ring_random_bandwidth', 'GB/s', 1.0),
    'MPIFFT_Gflops': ('mpifft', 'GFlop/s', 1.0),
    'MPIRandomAccess_GUPs': ('mpi_random_access', 'GUP/s', 1.0),
}


def figures(summary, source='hpccoutf.txt'):
    """The recorded figures of a verified summary: name -> (value, unit).

    Also derives ``hpl_dgemm_efficiency``: HPL's rate as a percentage of the
    DGEMM rate that every process reached at once (StarDGEMM x processes), the
    figure that tells a well-sized HPL from a toy one.
    """
    result = {}
    for key, (name, unit, scale) in FIGURES.items():
        value = summary.get(key)
        if not isinstance(value, float):
            raise HPCCParseError(f'{source}: summary has no numeric {key}')
        if not math.isfinite(value * scale):
            # float() reads "nan" and "inf" (and 1e308 TFlop/s overflows in
            # GFlop/s): a number type, never a figure.
            raise HPCCParseError(f'{source}: {key} is {value}: not a figure')
        result[name] = (value * scale, unit)
    procs = summary.get('CommWorldProcs')
    dgemm_total = result['dgemm_star'][0] * (procs or 0)
    if dgemm_total > 0:
        result['hpl_dgemm_efficiency'] = (
            100.0 * result['hpl'][0] / dgemm_total,
            '%',
        )
    return result


def replay_file(case):
    """The file of a stored run that :func:`replay` reads."""
    return 'hpccoutf.txt'


def replay(directory, case):
    """Figures of a stored run, verified again (``clusterbench replay``)."""
    path = os.path.join(directory, replay_file(case))
    try:
        with open(path) as f:
            text = f.read()
    except OSError as err:
        raise HPCCParseError(f'{path}: {err.strerror}') from None
    problem = case.get('hpl_problem') or {}
    summary = verify(
        text,
        path,
        nprocs=float(case['num_tasks']),
        n=float(problem['n']) if 'n' in problem else None,
    )
    return figures(summary, path)
