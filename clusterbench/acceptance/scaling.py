"""Speedup and parallel efficiency of multi-node runs against the smallest run.

The scaling checks record ``node_count`` (the parameter), ``scaling``
(``strong`` or ``weak``) and ``scaling_figure`` (the figure to compare:
``time``, less is better, or a rate such as HPL's GFlop/s). Cases that differ
only in the node count form a series; the smallest node count that ran is the
base. With k = n / n_base:

* time, strong: speedup = t_base / t_n, efficiency = speedup / k;
* time, weak: efficiency = t_base / t_n, (scaled) speedup = efficiency x k;
* rate (either): speedup = r_n / r_base, efficiency = speedup / k.
"""

import re
from dataclasses import dataclass

from clusterbench.acceptance import robust, runcases
from clusterbench.judging import stats

_NODE_COUNT = re.compile(r'\s*%node_count=\d+')


@dataclass
class Point:
    series: str
    environ: str
    nodes: int
    figure: str
    unit: str
    value: float
    speedup: float = None
    efficiency: float = None
    note: str = ''
    mode: str = 'strong'


def series(cases):
    """``{(series, partition, environ): [Point]}`` of the scaling cases."""
    out = {}
    for case in cases:
        if 'node_count' not in case or not case.get('scaling_figure'):
            continue
        key = (
            _NODE_COUNT.sub('', case['name']),
            f'{case.get("system")}:{case.get("partition")}',
            case.get('environ', ''),
        )
        points = out.setdefault(key, [])
        name = case['scaling_figure']
        figs = runcases.figures(case)
        if case.get('result') == 'skip':
            continue
        point = Point(key[0], key[2], int(case['node_count']), name, '', None)
        if runcases.failed(case) or name not in figs:
            point.note = (
                runcases.failure(case) if runcases.failed(case) else 'no figure'
            )
        else:
            point.value, *_, point.unit, _ = figs[name]
            point.mode = case.get('scaling') or 'strong'
        points.append(point)
    return out


def compute(groups):
    """Fill in speedup and efficiency against the smallest node count that ran."""
    rows = []
    for (_, _, _), points in sorted(groups.items()):
        by_nodes = {}
        for p in points:
            by_nodes.setdefault(p.nodes, []).append(p)
        merged = []
        for _, same in sorted(by_nodes.items()):
            good = [p for p in same if p.value is not None]
            if good:
                p = good[0]
                p.value = stats.median([q.value for q in good])
                merged.append(p)
            else:
                merged.append(same[0])
        base = next((p for p in merged if p.value is not None), None)
        for p in merged:
            if p.value is None or base is None:
                rows.append(p)
                continue
            if not p.value or not base.value:
                p.note = 'a zero figure: no speedup'
                rows.append(p)
                continue
            k = p.nodes / base.nodes
            lower_better = robust.direction_of(p.unit) < 0
            if lower_better and p.mode == 'weak':
                p.efficiency = base.value / p.value
                p.speedup = p.efficiency * k
            elif lower_better:
                p.speedup = base.value / p.value
                p.efficiency = p.speedup / k
            else:
                p.speedup = p.value / base.value
                p.efficiency = p.speedup / k
            if p is base:
                p.note = 'base'
            rows.append(p)
    return rows


def table(rows):
    header = ['series', 'environ', 'nodes', 'figure', 'value', 'speedup', 'efficiency']
    lines = [header]
    for p in rows:
        lines.append(
            [
                p.series,
                p.environ,
                str(p.nodes),
                p.figure,
                '-' if p.value is None else f'{p.value:.4g} {p.unit}',
                '-' if p.speedup is None else f'{p.speedup:.2f}',
                '-' if p.efficiency is None else f'{p.efficiency:.0%}',
            ]
            + ([p.note] if p.note and p.note != 'base' else [])
        )
    widths = [max(len(r[i]) for r in lines if i < len(r)) for i in range(len(header))]
    return '\n'.join(
        '  '.join(c.ljust(w) for c, w in zip(r, widths + [0])).rstrip() for r in lines
    )


def as_json(rows):
    return [
        {
            'series': p.series,
            'environ': p.environ,
            'nodes': p.nodes,
            'figure': p.figure,
            'value': p.value,
            'unit': p.unit,
            'speedup': p.speedup,
            'efficiency': p.efficiency,
            'note': p.note,
        }
        for p in rows
    ]
