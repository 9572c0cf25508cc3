"""Message-size curves of the communication checks, as the report draws them.

The checks keep every verified curve in the run report (``curves``: name ->
``{'columns', 'units', 'rows', 'meta'}``, see :mod:`clusterbench.bench.curves`) and
as ``curve_<name>.csv`` beside their outputs (``curve_files``). This module
reads them back, from the report first and from the files when the report
has none, and maps each to the operation, metric and tool the report plots:
one-way latency or time per operation in µs, bandwidth in MB/s (10^6 B/s),
messages per second.
"""

import math
import os
from dataclasses import dataclass, field

from clusterbench.bench import curves as curvelib
from clusterbench.core.errors import ClusterbenchError

LATENCY = 'latency'
BANDWIDTH = 'bandwidth'
RATE = 'rate'

UNITS = {LATENCY: 'us', BANDWIDTH: 'MB/s', RATE: 'msg/s'}

#: Operations in the order the report shows them.
OPERATIONS = (
    'PingPong',
    'PingPing',
    'Sendrecv',
    'Exchange',
    'Bcast',
    'Reduce',
    'Allreduce',
    'Alltoall',
    'Allgather',
    'Barrier',
    'MessageRate',
)

#: OSU benchmark -> operation.
_OSU = {
    'osu_latency': 'PingPong',
    'osu_bw': 'PingPong',
    'osu_bibw': 'Sendrecv',
    'osu_mbw_mr': 'MessageRate',
    'osu_allreduce': 'Allreduce',
    'osu_bcast': 'Bcast',
    'osu_reduce': 'Reduce',
    'osu_barrier': 'Barrier',
    'osu_alltoall': 'Alltoall',
    'osu_allgather': 'Allgather',
}

#: The time column each IMB benchmark's time is read from (as the checks do).
_IMB_TIME = {'PingPong': 'latency', 'PingPing': 'latency'}
_IMB_TIME.update(dict.fromkeys(('Sendrecv', 'Exchange'), 't_max'))


@dataclass
class Curve:
    """One measured curve: *metric* against message size in bytes."""

    operation: str
    metric: str
    tool: str
    source: str
    ranks: int = 0
    points: list = field(default_factory=list)  # [(bytes, value)]

    @property
    def unit(self):
        return UNITS[self.metric]


def _number(value):
    """A finite number (a JSON integer may be too large for a float)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _plain_row(row, width):
    """True when *row* is surely *width* finite numbers (the common case,
    checked without a call per value: a report holds thousands of rows)."""
    if type(row) is not list or len(row) != width:
        return False
    if not all(type(v) in (int, float) for v in row):
        return False
    try:
        return math.isfinite(sum(row))  # NaN or inf anywhere makes it so
    except OverflowError:
        return False


def _checked(name, table):
    """(headers, rows, units, meta) of a curve kept in a report; one that has
    not the shape the checks write (it comes from a file, maybe edited) is a
    ClusterbenchError naming what is wrong."""
    if not isinstance(table, dict):
        raise ClusterbenchError(f'curve {name}: not an object')
    headers, rows = table.get('columns') or [], table.get('rows') or []
    if not isinstance(headers, list) or not isinstance(rows, list):
        raise ClusterbenchError(f'curve {name}: "columns" and "rows" are not lists')
    if not headers or headers[0] != 'bytes' or not rows:
        raise ClusterbenchError(f'curve {name}: no "bytes" column or no rows')
    if not all(isinstance(h, str) for h in headers):
        raise ClusterbenchError(f'curve {name}: a column name is not text')
    width = len(headers)
    for i, row in enumerate(rows, 1):
        if _plain_row(row, width):
            continue
        if not isinstance(row, list) or len(row) != width:
            row = None
        if row is None or not all(_number(v) for v in row):
            raise ClusterbenchError(
                f'curve {name}: row {i} is not {len(headers)} finite numbers'
            )
    units, meta = table.get('units') or {}, table.get('meta') or {}
    if not isinstance(units, dict) or not all(
        isinstance(u, str) for u in units.values()
    ):
        raise ClusterbenchError(f'curve {name}: "units" is not an object of text')
    if not isinstance(meta, dict):
        raise ClusterbenchError(f'curve {name}: "meta" is not an object')
    for key in ('processes', 'ranks', 'pairs'):
        count = meta.get(key)
        if count is not None and not (_number(count) and count == int(count) >= 0):
            raise ClusterbenchError(f'curve {name}: meta {key} is not a count')
    return headers, rows, units, meta


def _table_curve(name, table):
    """A :class:`clusterbench.bench.curves.Curve` from its form kept in a report."""
    headers, rows, units, meta = _checked(name, table)
    columns = {}
    for i, header in enumerate(headers[1:], 1):
        column = next(
            (c for c in units if header in (c, f'{c}_' + _slug(units[c]))), None
        )
        if column is None:
            column, _, _ = header.rpartition('_')
            column = column or header
        columns[column] = (units.get(column, ''), [row[i] for row in rows])
    return curvelib.Curve(name, [row[0] for row in rows], columns, meta)


def _slug(unit):
    return {'us': 'us', 'MB/s': 'mbs', 'msg/s': 'msgs', 'B': 'bytes'}.get(unit, '')


def kept_curves(case):
    """The curves a test case kept: (list of clusterbench Curves, reason)."""
    found, problems = [], []
    tables = case.get('curves')
    if isinstance(tables, dict) and tables:
        for name, table in tables.items():
            try:
                found.append(_table_curve(str(name), table))
            except ClusterbenchError as err:
                problems.append(f'{name}: {err}')
        return found, '; '.join(problems)
    files = case.get('curve_files')
    if isinstance(files, list) and files:
        for path in files:
            if not isinstance(path, str):
                continue
            if not os.path.isfile(path):
                problems.append(f'{path} not found')
                continue
            name = os.path.basename(path)[len('curve_') : -len('.csv')]
            try:
                found.append(curvelib.read_csv(path, name))
            except ClusterbenchError as err:
                problems.append(str(err))
        return found, '; '.join(problems)
    return [], ''


def _column(curve, *names):
    for name in names:
        if name in curve.columns:
            return [(s, v) for s, v in zip(curve.sizes, curve.values(name))]
    return None


def normalise(curve, tool_hint=''):
    """The report's curves of one kept curve (latency, bandwidth, rate)."""
    name = curve.name
    meta = curve.meta or {}
    ranks = meta.get('processes') or meta.get('ranks') or 0
    if name in _OSU:
        op, tool = _OSU[name], f'OSU {name}'
        ranks = ranks or (2 * (meta.get('pairs') or 1) if op != 'Allreduce' else 0)
    elif name.lower() == 'netpipe':
        bidir = meta.get('mode') == 'bidirectional'
        op, tool = ('Sendrecv' if bidir else 'PingPong'), 'NetPIPE'
        ranks = 2
    elif name in OPERATIONS:
        op, tool = name, 'IMB'
    else:
        name_ops = {o.lower(): o for o in OPERATIONS}
        op = name_ops.get(name.lower())
        if op is None:
            return []
        tool = tool_hint or 'curve'
    out = []
    time_names = (_IMB_TIME.get(name, 't_avg'), 'latency', 'time', 't_avg', 't_max')
    latency = _column(curve, *(time_names if tool == 'IMB' else ('latency', 'time')))
    if latency:
        out.append(Curve(op, LATENCY, tool, name, int(ranks or 0), latency))
    bandwidth = _column(curve, 'bandwidth')
    if bandwidth:
        # A bandwidth at 0 bytes is no measurement (IMB prints 0.00).
        points = [(s, v) for s, v in bandwidth if s > 0]
        if points:
            out.append(Curve(op, BANDWIDTH, tool, name, int(ranks or 0), points))
    rate = _column(curve, 'message_rate')
    if rate:
        points = [(s, v) for s, v in rate if s > 0]
        if points:
            out.append(Curve('MessageRate', RATE, tool, name, int(ranks or 0), points))
    return out


def from_case(case):
    """(report curves, reason when none) of one test case."""
    kept, reason = kept_curves(case)
    out = []
    for curve in kept:
        out += normalise(curve)
    return out, reason
