"""Message-size curves of communication benchmarks: their figures and their table.

A :class:`Curve` is what one benchmark measured over a sweep of message sizes:
the sizes in bytes and one or more columns of values (latency in us,
bandwidth in MB/s = 10**6 bytes/s, messages/s). The functions here read the
figures the harness records from a curve, and write the whole table as CSV so
that reports can draw the curve later:

- latency at a size (0 or 1 byte, 8 bytes; collectives at 8 B, 1 KiB, 1 MiB);
- bandwidth at a size (1 MiB) and the peak bandwidth over the sweep;
- n½, the half-bandwidth message size: the smallest size at which the
  bandwidth first reaches half of the sweep's peak, interpolated between the
  two measured sizes around that crossing (linearly in log2(size), as sweeps
  are geometric);
- message rate at a size, reported by the benchmark or derived from bandwidth.

Values are read at sizes that were measured, never extrapolated: a figure
whose size the sweep did not cover is absent, not guessed.
"""

import csv
import math
from dataclasses import dataclass, field

from clusterbench.core import csvfile
from clusterbench.core.errors import ClusterbenchError
from clusterbench.core.figures import HIGHER, LOWER, Figure

MiB = 1 << 20
KiB = 1 << 10

#: The figures read from a curve (OSU, IMB, NetPIPE), declared once. A
#: benchmark names its own with a prefix (``pingpong_latency_8B``).
LATENCY_AT = Figure('<prefix>latency_<size>', 'us', LOWER)
#: A sweep of one size (barriers).
LATENCY = Figure('<prefix>latency', 'us', LOWER)
BANDWIDTH_AT = Figure('<prefix>bandwidth_<size>', 'MB/s', HIGHER)
BANDWIDTH_PEAK = Figure('<prefix>bandwidth_peak', 'MB/s', HIGHER)
#: The message size that reaches half the peak bandwidth.
N_HALF = Figure('<prefix>n_half', 'B', LOWER)
MESSAGE_RATE_AT = Figure('<prefix>message_rate_<size>', 'msg/s', HIGHER)
DECLARED = (LATENCY_AT, LATENCY, BANDWIDTH_AT, BANDWIDTH_PEAK, N_HALF, MESSAGE_RATE_AT)

#: Sizes at which collectives' latency is recorded.
COLLECTIVE_SIZES = (8, KiB, MiB)


class CurveError(ClusterbenchError):
    """A curve that cannot give the figure asked of it."""


@dataclass(frozen=True)
class Curve:
    """One benchmark's values over a sweep of message sizes.

    ``columns`` maps a column name to ``(unit, values)``; every column has
    one value per size. ``sizes`` are bytes, strictly increasing.
    """

    name: str
    sizes: tuple
    columns: dict
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        sizes = tuple(self.sizes)
        object.__setattr__(self, 'sizes', sizes)
        if not sizes:
            raise CurveError(f'curve {self.name}: no message sizes')
        if any(b <= a for a, b in zip(sizes, sizes[1:])):
            raise CurveError(f'curve {self.name}: message sizes not increasing')
        cols = {}
        for col, (unit, values) in self.columns.items():
            values = tuple(float(v) for v in values)
            if len(values) != len(sizes):
                raise CurveError(
                    f'curve {self.name}: column {col} has {len(values)} values '
                    f'for {len(sizes)} sizes'
                )
            cols[col] = (unit, values)
        object.__setattr__(self, 'columns', cols)

    def values(self, column):
        try:
            return self.columns[column][1]
        except KeyError:
            raise CurveError(f'curve {self.name}: no column {column!r}') from None

    def unit(self, column):
        return self.columns[column][0]

    def at(self, column, size):
        """The value measured at exactly *size* bytes, or None if not measured."""
        return value_at(self.sizes, self.values(column), size)

    def rows(self):
        """``[size, value, ...]`` rows in column order."""
        cols = [values for _, values in self.columns.values()]
        return [[size, *(c[i] for c in cols)] for i, size in enumerate(self.sizes)]

    def headers(self):
        """CSV header: ``bytes`` then ``<column>_<unit>`` (``latency_us``)."""
        return ['bytes', *(_header(c, u) for c, (u, _) in self.columns.items())]

    def as_dict(self):
        """A JSON-able form (kept in ReFrame's run report)."""
        return {
            'columns': self.headers(),
            'units': {c: u for c, (u, _) in self.columns.items()},
            'rows': self.rows(),
            **({'meta': dict(self.meta)} if self.meta else {}),
        }


#: Units as they appear in CSV column names, and back.
_UNIT_SLUGS = {'us': 'us', 'MB/s': 'mbs', 'msg/s': 'msgs', 'B': 'bytes', '': ''}
_SLUG_UNITS = {slug: unit for unit, slug in _UNIT_SLUGS.items() if slug}


def table_row(line, header, where, error):
    """The cells of one table *line*, as many as *header* has, or *error*.

    *where* is ``source:lineno`` of the line, named in the error.
    """
    cells = line.split()
    if header is None:
        raise error(f'{where}: data before the column header')
    if len(cells) != len(header):
        raise error(
            f'{where}: {len(cells)} fields, the header has {len(header)}: {line!r}'
        )
    return cells


def _header(column, unit):
    slug = _UNIT_SLUGS.get(unit)
    if slug is None:
        raise CurveError(f'column {column}: unit {unit!r} has no CSV name')
    return f'{column}_{slug}' if slug else column


def value_at(sizes, values, size):
    """The value at exactly *size* bytes, or None when the sweep skipped it."""
    for s, v in zip(sizes, values):
        if s == size:
            return v
    return None


def smallest_of(sizes, candidates=(0, 1)):
    """The first of *candidates* that the sweep measured, or None."""
    for size in candidates:
        if size in sizes:
            return size
    return None


def peak(sizes, values):
    """``(size, value)`` of the highest value over the sweep (first if tied)."""
    best = max(range(len(values)), key=lambda i: (values[i], -i))
    return sizes[best], values[best]


def half_peak_size(sizes, values):
    """n½: the size at which the curve first reaches half of its peak.

    Interpolated between the last size below half the peak and the first at
    or above it, linearly in log2(size) (linearly in size when the lower
    size is 0). None when the very first size already reaches half the peak:
    n½ lies below the sweep and is not resolved.
    """
    _, top = peak(sizes, values)
    if top <= 0:
        return None
    half = top / 2.0
    for i, (size, value) in enumerate(zip(sizes, values)):
        if value < half:
            continue
        if i == 0:
            return None
        s0, v0 = sizes[i - 1], values[i - 1]
        frac = (half - v0) / (value - v0)
        if s0 <= 0:
            return s0 + frac * (size - s0)
        lo, hi = math.log2(s0), math.log2(size)
        return 2.0 ** (lo + frac * (hi - lo))
    return None  # unreachable: the peak itself reaches half of the peak


def message_rate(size, bandwidth_mbs):
    """Messages per second of *size* bytes at *bandwidth_mbs* (10**6 B/s)."""
    if size <= 0:
        raise CurveError('message rate needs a positive message size')
    return bandwidth_mbs * 1e6 / size


def size_label(size):
    """0B, 8B, 1KiB, 1MiB: the suffix of a figure's name."""
    for unit, scale in (('MiB', MiB), ('KiB', KiB)):
        if size >= scale and size % scale == 0:
            return f'{size // scale}{unit}'
    return f'{size}B'


def latency_figures(curve, column, prefix='', sizes=None):
    """Small-message latency: at 0 B (or 1 B when 0 was not measured) and 8 B.

    *sizes* replaces that choice (collectives: 8 B, 1 KiB, 1 MiB). Returns
    ``{name: (value, unit)}`` for the sizes the sweep measured.
    """
    unit = curve.unit(column)
    if sizes is None:
        sizes = [s for s in (smallest_of(curve.sizes), 8) if s is not None]
    out = {}
    for size in dict.fromkeys(sizes):
        value = curve.at(column, size)
        if value is not None:
            out[f'{prefix}latency_{size_label(size)}'] = (value, unit)
    return out


def bandwidth_figures(curve, column, prefix='', at=(MiB,)):
    """Bandwidth at 1 MiB, the peak over the sweep, and n½ (bytes)."""
    unit = curve.unit(column)
    values = curve.values(column)
    out = {}
    for size in at:
        value = curve.at(column, size)
        if value is not None:
            out[f'{prefix}bandwidth_{size_label(size)}'] = (value, unit)
    _, top = peak(curve.sizes, values)
    out[f'{prefix}bandwidth_peak'] = (top, unit)
    n_half = half_peak_size(curve.sizes, values)
    if n_half is not None:
        out[f'{prefix}n_half'] = (n_half, N_HALF.unit)
    return out


def rate_figures(curve, column=None, bandwidth=None, prefix='', sizes=(1, 8)):
    """Message rate at small sizes: from a rate *column*, else from *bandwidth*."""
    out = {}
    for size in sizes:
        if column is not None:
            value = curve.at(column, size)
        else:
            bw = curve.at(bandwidth, size)
            value = None if bw is None else message_rate(size, bw)
        if value is not None:
            out[f'{prefix}message_rate_{size_label(size)}'] = (
                value,
                MESSAGE_RATE_AT.unit,
            )
    return out


def summary(curve, column):
    """Where the peak is, for the log: ``'peak 12467.9 MB/s at 1MiB'``."""
    size, value = peak(curve.sizes, curve.values(column))
    return f'peak {value:.6g} {curve.unit(column)} at {size_label(size)}'


def write_csv(path, curve):
    """Write the size -> value table of *curve* as CSV.

    Header: ``bytes`` then one ``<column>_<unit>`` per column, the unit as
    ``us``, ``mbs`` (MB/s), ``msgs`` (messages/s): ``bytes,latency_us,
    bandwidth_mbs``. One row per measured size.
    """
    with open(path, 'w', newline='') as out:
        writer = csvfile.writer(out)
        writer.writerow(curve.headers())
        for row in curve.rows():
            writer.writerow([row[0], *(f'{v:.10g}' for v in row[1:])])
    return path


def read_csv(path, name=None):
    """A curve written by :func:`write_csv` (reports redraw curves from these)."""
    try:
        with open(path, newline='') as inp:
            rows = list(csv.reader(inp))
    except OSError as err:
        raise CurveError(f'{path}: cannot read curve: {err.strerror}') from None
    if not rows or not rows[0] or rows[0][0] != 'bytes':
        raise CurveError(f'{path}: not a curve table (header "bytes,...")')
    header, body = rows[0], rows[1:]
    names = []
    for cell in header[1:]:
        col, sep, slug = cell.rpartition('_')
        if sep and slug in _SLUG_UNITS:
            names.append((col, _SLUG_UNITS[slug]))
        else:
            names.append((cell, ''))
    sizes, cols = [], [[] for _ in names]
    for lineno, row in enumerate(body, 2):
        if len(row) != len(header):
            raise CurveError(
                f'{path}:{lineno}: {len(row)} cells, expected {len(header)}'
            )
        try:
            sizes.append(int(row[0]))
            for col, cell in zip(cols, row[1:]):
                col.append(float(cell))
        except ValueError:
            raise CurveError(f'{path}:{lineno}: not a number in {row!r}') from None
    columns = {col: (unit, values) for (col, unit), values in zip(names, cols)}
    return Curve(name or path, sizes, columns)
