"""Output of the official STREAM (stream.c 5.10): rates and its own validation."""

import re

from clusterbench.core.errors import ClusterbenchError
from clusterbench.core.figures import HIGHER, Figure

KERNELS = ('copy', 'scale', 'add', 'triad')
_RATE = re.compile(
    r'^(Copy|Scale|Add|Triad):\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$', re.M
)
_VALIDATES = re.compile(r'^Solution Validates', re.M)
_ARRAY = re.compile(r'^Array size = (\d+) \(elements\)', re.M)
_THREADS = re.compile(r'^Number of Threads counted = (\d+)', re.M)


class StreamParseError(ClusterbenchError):
    """Not a complete, validated STREAM output."""


def verify(text, source='STREAM output', threads=None):
    """Return ``{'array_size', 'threads', 'copy', ...}`` (MB/s) of a validated run.

    STREAM checks its own arrays after the timed loops and prints
    ``Solution Validates``; without that line (or with a failure message) no
    rate is trusted. *threads*, when given, must be the count STREAM saw.
    """
    if not _VALIDATES.search(text):
        failed = re.search(r'^Failed Validation.*$', text, re.M)
        raise StreamParseError(
            f'{source}: '
            + (failed.group(0).strip() if failed else "no 'Solution Validates' line")
        )
    rates = {name.lower(): float(best) for name, best, *_ in _RATE.findall(text)}
    missing = [k for k in KERNELS if k not in rates]
    if missing:
        raise StreamParseError(f'{source}: no rate for {", ".join(missing)}')
    array = _ARRAY.search(text)
    counted = _THREADS.search(text)
    result = {
        'array_size': int(array.group(1)) if array else None,
        'threads': int(counted.group(1)) if counted else 1,
        **rates,
    }
    if threads is not None and result['threads'] != threads:
        raise StreamParseError(
            f'{source}: {result["threads"]} threads counted, {threads} requested'
        )
    return result


# Figures the harness records: result key -> (declaration, scale). STREAM
# prints MB/s (10^6 bytes per second); figures are in GB/s, as HPCC's and
# the node probe's are.
FIGURES = {
    kernel: (
        Figure(
            f'stream_{kernel}',
            'GB/s',
            HIGHER,
            headline='STREAM' if kernel == 'triad' else '',
        ),
        1e-3,
    )
    for kernel in KERNELS
}
DECLARED = tuple(figure for figure, _ in FIGURES.values())


def figures(result, source='STREAM output'):
    """The figures of a verified result, in GB/s.

    (*source*: the signature of every parser; a verified result has them all.)
    """
    return {
        figure.name: (result[key] * scale, figure.unit)
        for key, (figure, scale) in FIGURES.items()
    }
