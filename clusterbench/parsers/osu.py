"""OSU Micro-Benchmarks (5.x-7.x) MPI output: one table per run, on stdout.

An output is a title line ``# OSU MPI <Title> Test vX.Y``, optional
``# key: value`` lines (datatype; ``[ pairs: N ] [ window size: W ]`` of
osu_mbw_mr), a column header (``# Size  Avg Latency(us)``, ``# Size
Bandwidth (MB/s)``, ``# Size  MB/s  Messages/s``; ``-f`` adds min/max/
iterations, ``-z`` percentiles, ``-c`` a Validation column) and one row per
message size. osu_barrier has no size column: its single row is read as size 0.

The suite's statistic: every latency is the mean over the timed iterations
(one-way, half the round trip, for osu_latency; for collectives, ``Avg`` is
the mean over ranks of each rank's mean); bandwidths and message rates are
measured over windows of back-to-back messages.
"""

import re

from clusterbench.bench import curves
from clusterbench.bench.curves import Curve
from clusterbench.core.errors import ClusterbenchError

#: The figures the checks read from these curves (declared with the curves).
DECLARED = curves.DECLARED

_TITLE = re.compile(r'^# OSU MPI(?:-\w+)? (.+?) Test v(\d+(?:\.\d+)*)\s*$')
_PAIRS = re.compile(r'\[\s*pairs:\s*(\d+)\s*\]')
_WINDOW = re.compile(r'\[\s*window size:\s*(\d+)\s*\]')
_DATATYPE = re.compile(r'^# Datatype:\s*(\S+?)\.?\s*$')

#: Title -> benchmark (the executable that prints it).
BENCHMARKS = {
    'Latency': 'osu_latency',
    'Bandwidth': 'osu_bw',
    'Bi-Directional Bandwidth': 'osu_bibw',
    'Multiple Bandwidth / Message Rate': 'osu_mbw_mr',
    'Allreduce Latency': 'osu_allreduce',
    'Broadcast Latency': 'osu_bcast',
    'Barrier Latency': 'osu_barrier',
    'Reduce Latency': 'osu_reduce',
    'All-to-All Personalized Exchange Latency': 'osu_alltoall',
    'Allgather Latency': 'osu_allgather',
}

#: Column header -> (column name, unit).
COLUMNS = {
    'Avg Latency(us)': ('latency', 'us'),
    'Latency (us)': ('latency', 'us'),
    'Min Latency(us)': ('latency_min', 'us'),
    'Max Latency(us)': ('latency_max', 'us'),
    'Iterations': ('iterations', ''),
    'Bandwidth (MB/s)': ('bandwidth', 'MB/s'),
    'MB/s': ('bandwidth', 'MB/s'),
    'Messages/s': ('message_rate', 'msg/s'),
}
_TAIL = re.compile(r'^P(\d+) Tail Lat\(us\)$')


class OSUParseError(ClusterbenchError):
    """Not a complete OSU Micro-Benchmarks output."""


def _columns(line, source, lineno):
    cells = re.split(r'\s{2,}', line.lstrip('#').strip())
    names = []
    for cell in cells:
        if cell == 'Size':
            names.append(('size', 'B'))
        elif cell == 'Validation':
            names.append(('validation', ''))
        elif cell in COLUMNS:
            names.append(COLUMNS[cell])
        elif _TAIL.match(cell):
            names.append((f'latency_p{_TAIL.match(cell).group(1)}', 'us'))
        else:
            raise OSUParseError(f'{source}:{lineno}: unknown column {cell!r}')
    if names[0] != ('size', 'B') and ('latency', 'us') not in names:
        raise OSUParseError(f'{source}:{lineno}: column header without Size')
    return names


def parse(text, source='osu output'):
    """The curve of one OSU benchmark's output (name: the benchmark).

    Raises :class:`OSUParseError` naming *source* for anything that is not
    one complete table: no title or several (every rank ran alone: launcher
    and MPI library mismatched), rows that do not fit the header, a failed
    validation, a line the suite does not print.
    """
    lines = text.splitlines()
    titles = [(i, _TITLE.match(line)) for i, line in enumerate(lines)]
    titles = [(i, m) for i, m in titles if m]
    if not titles:
        raise OSUParseError(
            f'{source}: no "# OSU MPI ... Test" title (not an OSU output)'
        )
    if len(titles) > 1:
        raise OSUParseError(
            f'{source}: {len(titles)} OSU titles, expected one (each rank ran '
            f'alone: launcher and MPI library mismatched?)'
        )
    start, title = titles[0]
    meta = {'title': title.group(1), 'version': title.group(2)}
    benchmark = BENCHMARKS.get(title.group(1), title.group(1))
    header = None
    rows = []
    for lineno, line in enumerate(lines[start + 1 :], start + 2):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith('#'):
            if rows:
                raise OSUParseError(f'{source}:{lineno}: comment after the table')
            if _PAIRS.search(stripped):
                meta['pairs'] = int(_PAIRS.search(stripped).group(1))
            if _WINDOW.search(stripped):
                meta['window'] = int(_WINDOW.search(stripped).group(1))
            if _DATATYPE.match(stripped):
                meta['datatype'] = _DATATYPE.match(stripped).group(1)
            if re.match(r'#\s*(Size|Avg Latency)', stripped):
                header = _columns(stripped, source, lineno)
            continue
        cells = curves.table_row(stripped, header, f'{source}:{lineno}', OSUParseError)
        rows.append((lineno, cells))
    if header is None:
        raise OSUParseError(f'{source}: no column header (run ended before measuring)')
    if not rows:
        raise OSUParseError(
            f'{source}: no measurement (run ended before the first size)'
        )
    if not text.endswith('\n'):
        raise OSUParseError(f'{source}: last line is cut off (output truncated)')
    return _curve(benchmark, header, rows, meta, source)


def _curve(benchmark, header, rows, meta, source):
    has_size = header[0] == ('size', 'B')
    sizes = []
    values = {name: [] for name, _ in header if name not in ('size', 'validation')}
    for lineno, cells in rows:
        for (name, _), cell in zip(header, cells):
            if name == 'validation':
                if cell != 'Pass':
                    size = cells[0] if has_size else 'the'
                    raise OSUParseError(
                        f'{source}:{lineno}: data validation {cell} at {size} bytes'
                    )
                continue
            try:
                number = int(cell) if name == 'size' else float(cell)
            except ValueError:
                raise OSUParseError(
                    f'{source}:{lineno}: {name} is not a number: {cell!r}'
                ) from None
            if name == 'size':
                sizes.append(number)
            else:
                values[name].append(number)
    if not has_size:
        if len(rows) != 1:
            raise OSUParseError(
                f'{source}: {len(rows)} rows without sizes, expected one'
            )
        sizes = [0]
    if any(b <= a for a, b in zip(sizes, sizes[1:])):
        raise OSUParseError(f'{source}: message sizes do not increase')
    if 'bandwidth' in values and 'message_rate' in values:
        # osu_mbw_mr prints both to 0.01: they must describe the same traffic.
        for size, bw, rate in zip(sizes, values['bandwidth'], values['message_rate']):
            if abs(bw - rate * size / 1e6) > 0.0051 + 0.0051 * size / 1e6:
                raise OSUParseError(
                    f'{source}: at {size} bytes {rate} messages/s are not {bw} MB/s'
                )
    units = dict(header)
    columns = {name: (units[name], vals) for name, vals in values.items()}
    return Curve(benchmark, sizes, columns, meta)


def sweep(min_size, max_size):
    """The sizes OSU measures for ``-m MIN:MAX``: MIN, then doubling up to MAX."""
    sizes = [min_size]
    size = min_size * 2 if min_size else 1
    while size <= max_size:
        sizes.append(size)
        size *= 2
    return sizes


def verify(text, source=None, *, benchmark, min_size=None, max_size=None, pairs=None):
    """The curve of a complete run of *benchmark*, or :class:`OSUParseError`.

    The output must be *benchmark*'s, cover OSU's whole doubling sweep from
    *min_size* to *max_size*, and (osu_mbw_mr) run the *pairs* requested.
    """
    source = source or f'{benchmark} output'
    curve = parse(text, source)
    if curve.name != benchmark:
        raise OSUParseError(f'{source}: output of {curve.name}, not {benchmark}')
    if min_size is not None and curve.sizes != (0,):
        expected = sweep(min_size, max_size)
        if list(curve.sizes) != expected:
            got = f'{curve.sizes[0]}..{curve.sizes[-1]} ({len(curve.sizes)} sizes)'
            raise OSUParseError(
                f'{source}: sizes {got}, expected {expected[0]}..{expected[-1]} '
                f'({len(expected)} sizes): output truncated?'
            )
    if pairs is not None and curve.meta.get('pairs') != pairs:
        raise OSUParseError(
            f'{source}: ran {curve.meta.get("pairs")} pair(s), {pairs} requested'
        )
    return curve
