"""HPCG 3.1's summary file (``HPCG-Benchmark_3.1_<date>.txt``): key=value lines."""

import re

from clusterbench.core.errors import ClusterbenchError
from clusterbench.core.figures import HIGHER, LOWER, MEMORY, SOLVER, Figure

_FINAL = re.compile(
    r'^Final Summary::HPCG result is (VALID|INVALID) '
    r'with a GFLOP/s rating of=\s*(\S+)\s*$',
    re.M,
)
_CHECKS = (
    'Spectral Convergence Tests::Result',
    "Departure from Symmetry |x'Ay-y'Ax|/(2*||x||*||A||*||y||)/epsilon::Result",
    'Iteration Count Information::Result',
    'Reproducibility Information::Result',
)


class HPCGParseError(ClusterbenchError):
    """Not a complete HPCG summary of a VALID run."""


def parse(text):
    """The summary's ``key=value`` lines as a dict (the last of a repeated key)."""
    values = {}
    for line in text.splitlines():
        key, sep, value = line.partition('=')
        if sep:
            values[key.strip()] = value.strip()
    return values


def verify(text, source='HPCG summary', nprocs=None):
    """Return the summary of a run HPCG itself rated VALID.

    Every verification and validation test must have PASSED and the final
    line must say VALID; *nprocs*, when given, must be the process count.
    """
    final = _FINAL.search(text)
    if not final:
        raise HPCGParseError(f'{source}: no final rating line (run cut short?)')
    if final.group(1) != 'VALID':
        raise HPCGParseError(f'{source}: HPCG result is {final.group(1)}')
    values = parse(text)
    for key in _CHECKS:
        if values.get(key) != 'PASSED':
            raise HPCGParseError(f'{source}: {key}={values.get(key, "missing")}')
    procs = values.get('Machine Summary::Distributed Processes')
    if nprocs is not None and procs != str(nprocs):
        raise HPCGParseError(f'{source}: {procs} processes ran, {nprocs} requested')
    return values


# Figures the harness records: summary key -> (declaration, scale).
FIGURES = {
    'Final Summary::HPCG result is VALID with a GFLOP/s rating of': (
        Figure('hpcg', 'GFlop/s', HIGHER, headline='HPCG', kind=SOLVER, bound=MEMORY),
        1.0,
    ),
    'GB/s Summary::Raw Total B/W': (
        Figure('hpcg_bandwidth', 'GB/s', HIGHER, kind=SOLVER, bound=MEMORY),
        1.0,
    ),
    'Benchmark Time Summary::Total': (
        Figure('hpcg_time', 's', LOWER, kind=SOLVER, bound=MEMORY),
        1.0,
    ),
}
DECLARED = tuple(figure for figure, _ in FIGURES.values())


def figures(values, source='HPCG summary'):
    out = {}
    for key, (figure, scale) in FIGURES.items():
        try:
            out[figure.name] = (float(values[key]) * scale, figure.unit)
        except (KeyError, ValueError):
            raise HPCGParseError(f'{source}: no numeric {key!r}') from None
    return out
