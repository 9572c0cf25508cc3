"""Intel MPI Benchmarks (IMB-MPI1 2019-2021) output: one table per benchmark.

An output opens with ``#    Intel(R) MPI Benchmarks <version>, MPI-1 part``,
then has one section per benchmark and process count::

    # Benchmarking PingPong
    # #processes = 2
           #bytes #repetitions      t[usec]   Mbytes/sec
                0         1000         0.43         0.00

and ends with ``# All processes entering MPI_Finalize``: an output without
that line is truncated. Barrier's table has no ``#bytes`` column; its single
row is read as size 0.

The suite's statistic: each time is the mean over the repetitions
(``#repetitions``, chosen by IMB per size unless ``-iter`` fixes it);
PingPong and PingPing report half the round trip; for the other benchmarks
``t_min``/``t_max``/``t_avg`` are the minimum/maximum/mean over ranks of each
rank's mean, and ``Mbytes/sec`` (10**6 B/s) is computed from ``t_max``
(Sendrecv counts both directions, Exchange all four transfers).
"""

import re

from clusterbench.bench import curves
from clusterbench.bench.curves import Curve
from clusterbench.core.errors import ClusterbenchError

#: The figures the checks read from these curves (declared with the curves).
DECLARED = curves.DECLARED

_VERSION = re.compile(r'^#\s+Intel\(R\) MPI Benchmarks (\S+), MPI-1 part\s*$', re.M)
_SECTION = re.compile(r'^# Benchmarking (\S+)\s*$')
_PROCS = re.compile(r'^# #processes = (\d+)\s*$')
FINALIZE = '# All processes entering MPI_Finalize'

#: Column header -> (column name, unit).
COLUMNS = {
    '#bytes': ('size', 'B'),
    '#repetitions': ('repetitions', ''),
    't[usec]': ('latency', 'us'),
    't_min[usec]': ('t_min', 'us'),
    't_max[usec]': ('t_max', 'us'),
    't_avg[usec]': ('t_avg', 'us'),
    'Mbytes/sec': ('bandwidth', 'MB/s'),
    'Msg/sec': ('message_rate', 'msg/s'),
    'defects': ('defects', ''),
}


class IMBParseError(ClusterbenchError):
    """Not a complete IMB-MPI1 output."""


def parse(text, source='IMB-MPI1 output'):
    """Every table of an IMB-MPI1 output: ``{(benchmark, processes): Curve}``.

    Raises :class:`IMBParseError` naming *source* when the output is not one
    complete IMB-MPI1 run: no banner or several (every rank ran alone:
    launcher and MPI library mismatched), no final ``MPI_Finalize`` line
    (truncated), a row that does not fit its header, a reported defect.
    """
    banners = _VERSION.findall(text)
    if not banners:
        raise IMBParseError(f'{source}: no "Intel(R) MPI Benchmarks" banner (not IMB)')
    if len(banners) > 1:
        raise IMBParseError(
            f'{source}: {len(banners)} IMB banners, expected one (each rank ran '
            f'alone: launcher and MPI library mismatched?)'
        )
    if FINALIZE not in text:
        raise IMBParseError(
            f'{source}: no "{FINALIZE[2:]}" line: output truncated (run killed?)'
        )
    tables = {}
    name = procs = header = None
    rows = []

    def close():
        if name is None:
            return
        if header is None or not rows:
            raise IMBParseError(f'{source}: {name} on {procs} processes has no results')
        key = (name, procs)
        if key in tables:
            raise IMBParseError(f'{source}: {name} on {procs} processes twice')
        tables[key] = _curve(name, procs, header, rows, source)

    for lineno, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        section = _SECTION.match(stripped)
        if section:
            close()
            name, procs, header, rows = section.group(1), None, None, []
            continue
        if name is None:
            continue
        if stripped.startswith(FINALIZE):
            close()
            name = None
            continue
        found = _PROCS.match(stripped)
        if found:
            procs = int(found.group(1))
            continue
        if stripped.startswith('#bytes') or stripped.startswith('#repetitions'):
            header = _header(stripped, source, lineno)
            continue
        if not stripped or stripped.startswith('#'):
            continue
        cells = curves.table_row(stripped, header, f'{source}:{lineno}', IMBParseError)
        rows.append((lineno, cells))
    if not tables:
        raise IMBParseError(f'{source}: no benchmark results')
    return tables


def version(text):
    found = _VERSION.search(text)
    return found.group(1) if found else None


def _header(line, source, lineno):
    names = []
    for cell in line.split():
        if cell not in COLUMNS:
            raise IMBParseError(f'{source}:{lineno}: unknown column {cell!r}')
        names.append(COLUMNS[cell])
    return names


def _curve(name, procs, header, rows, source):
    if procs is None:
        raise IMBParseError(f'{source}: {name} without a "#processes" line')
    has_size = header[0] == ('size', 'B')
    sizes = []
    values = {col: [] for col, _ in header if col != 'size'}
    for lineno, cells in rows:
        for (col, _), cell in zip(header, cells):
            try:
                number = int(cell) if col in ('size', 'repetitions') else float(cell)
            except ValueError:
                raise IMBParseError(
                    f'{source}:{lineno}: {name} {col} is not a number: {cell!r}'
                ) from None
            if col == 'size':
                sizes.append(number)
            else:
                values[col].append(number)
    if not has_size:
        if len(rows) != 1:
            raise IMBParseError(f'{source}: {name}: {len(rows)} rows without sizes')
        sizes = [0]
    if any(b <= a for a, b in zip(sizes, sizes[1:])):
        raise IMBParseError(f'{source}: {name}: message sizes do not increase')
    if any(values.get('defects', [])):
        raise IMBParseError(f'{source}: {name}: IMB -check reports defects')
    _check_bandwidth(name, sizes, values, source)
    units = dict(header)
    columns = {col: (units[col], vals) for col, vals in values.items()}
    return Curve(name, sizes, columns, {'processes': procs})


#: Bytes IMB counts per message and the time its bandwidth is computed from.
_TRAFFIC = {
    'PingPong': (1, 'latency'),
    'PingPing': (1, 'latency'),
    'Sendrecv': (2, 't_max'),
    'Exchange': (4, 't_max'),
}


def _check_bandwidth(name, sizes, values, source):
    """Bandwidth and time are printed to 0.01: they must describe the same run."""
    if name not in _TRAFFIC or 'bandwidth' not in values:
        return
    factor, time_col = _TRAFFIC[name]
    for size, t, bw in zip(sizes, values[time_col], values['bandwidth']):
        if t <= 0:
            raise IMBParseError(f'{source}: {name}: non-positive time at {size} bytes')
        # The printed time stands for any time within 0.005 usec of it: the
        # bandwidth must fall between the two it implies (itself +-0.005).
        low = factor * size / (t + 0.005)
        high = factor * size / (t - 0.005) if t > 0.005 else float('inf')
        slack = 0.0051 + 1e-9 * high
        if not low - slack <= bw <= high + slack:
            raise IMBParseError(
                f'{source}: {name}: {bw} Mbytes/sec at {size} bytes does not match '
                f'its time {t} usec'
            )


def verify(text, source='IMB-MPI1 output', *, benchmarks, processes, max_size=None):
    """The curves of a complete run: ``{benchmark: Curve}``, or an error.

    Every one of *benchmarks* must have run on *processes* ranks and (when
    it has sizes) reached *max_size* bytes.
    """
    tables = parse(text, source)
    found = {}
    for bench in benchmarks:
        curve = tables.get((bench, processes))
        if curve is None:
            ran = sorted({f'{n} ({p})' for n, p in tables})
            raise IMBParseError(
                f'{source}: no {bench} on {processes} processes (ran: {", ".join(ran)})'
            )
        if max_size is not None and curve.sizes != (0,) and curve.sizes[-1] != max_size:
            raise IMBParseError(
                f'{source}: {bench} ends at {curve.sizes[-1]} bytes, '
                f'{max_size} requested'
            )
        found[bench] = curve
    return found
