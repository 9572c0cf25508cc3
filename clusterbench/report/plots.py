"""The report's plots: matplotlib SVG (vector) and the data of each as CSV.

Every plot is drawn from the data model of :mod:`clusterbench.report.assemble`
and comes with the rows it was drawn from. A missing figure is drawn as the
word "missing" (or the failure) where its bar would be, never as a zero bar.
Text from the data is never parsed as mathtext, and matplotlib escapes it in
the SVG it writes.
"""

import base64
import csv
import io
import math
import multiprocessing
import os
import re
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import matplotlib
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.colors import LinearSegmentedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.ticker import FuncFormatter, NullLocator

from clusterbench.report import assemble as model
from clusterbench.report import curves as curvelib

RC = {
    'svg.fonttype': 'none',  # text stays text: small, searchable, fast
    'svg.hashsalt': 'clusterbench',  # reproducible ids
    'font.family': 'DejaVu Sans',
    'font.size': 9,
    'axes.titlesize': 10,
    'axes.spines.top': False,
    'axes.spines.right': False,
    'axes.grid': True,
    'grid.alpha': 0.3,
    'legend.fontsize': 8,
    'legend.frameon': False,
}

STATE_COLOURS = {
    'pass': '#2e7d32',
    'SLOWER': '#c62828',
    'WORSE': '#c62828',
    'FLAGGED': '#c62828',
    'FASTER': '#1565c0',
    'INCONCLUSIVE': '#f9a825',
    'no reference': '#546e7a',
}
MISSING_COLOUR = '#9e9e9e'
FAILED_COLOUR = '#b71c1c'
LINE_COLOURS = (
    '#1f77b4',
    '#d62728',
    '#2ca02c',
    '#9467bd',
    '#ff7f0e',
    '#17becf',
    '#8c564b',
    '#e377c2',
    '#7f7f7f',
    '#bcbd22',
)
MARKERS = 'osD^v<>ph*'
#: More lines than this and a legend is no help: the CSV names them.
MAX_LEGEND = 14
#: More bars than this and only the best one is labelled with its value.
MAX_VALUE_LABELS = 40


@dataclass
class Plot:
    """One embedded plot and the CSV of the data it shows."""

    id: str
    title: str
    svg: bytes
    csv_name: str
    csv_text: str
    caption: str = ''

    @property
    def data_uri(self):
        return 'data:image/svg+xml;base64,' + base64.b64encode(self.svg).decode()


class PlotSet:
    """Allocates unique ids and file names; keeps every plot made."""

    def __init__(self):
        self.plots = []
        self._ids = set()

    def add(self, kind, title, fig, header, rows, caption=''):
        stem = re.sub(r'[^A-Za-z0-9]+', '-', f'{kind}-{title}').strip('-').lower()
        stem = stem[:80].strip('-') or kind
        ident, n = stem, 1
        while ident in self._ids:
            n += 1
            ident = f'{stem}-{n}'
        self._ids.add(ident)
        plot = Plot(
            ident, title, _svg(fig), f'{ident}.csv', _csv(header, rows), caption
        )
        self.plots.append(plot)
        return plot


def _svg(fig):
    out = io.BytesIO()
    FigureCanvasSVG(fig)
    fig.savefig(out, format='svg', metadata={'Date': None})
    return out.getvalue()


def _csv(header, rows):
    out = io.StringIO()
    writer = csv.writer(out, lineterminator='\n')
    writer.writerow(header)
    for row in rows:
        writer.writerow(['' if v is None else _cell(v) for v in row])
    return out.getvalue()


def _cell(value):
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)
    return value


def _figure(width, height):
    fig = Figure(figsize=(width, height))
    return fig


# ----------------------------------------------------------- applications


def bar_chart(plots, bench, cells):
    """Horizontal bars, one per configuration, coloured by verdict."""
    n = len(cells)
    fig = _figure(7.6, 0.9 + 0.24 * max(n, 2))
    ax = fig.add_axes(_axes_box(fig, cells))
    ys = list(range(n))[::-1]
    measured = [v for c in cells for v in c.values]
    measured += [c.reference for c in cells if c.reference is not None]
    top = max(measured) if measured else 1.0
    bars = [(y, c) for y, c in zip(ys, cells) if c.value is not None]
    _hbars(
        ax, [(y, c.value, STATE_COLOURS.get(c.state, MISSING_COLOUR)) for y, c in bars]
    )
    spread = [(y, c) for y, c in bars if len(c.values) > 1]
    if spread:
        ax.errorbar(
            [c.value for _, c in spread],
            [y for y, _ in spread],
            xerr=[
                [c.value - min(c.values) for _, c in spread],
                [max(c.values) - c.value for _, c in spread],
            ],
            fmt='none',
            ecolor='black',
            capsize=2,
            lw=0.8,
        )
    refs = [(y, c.reference) for y, c in zip(ys, cells) if c.reference is not None]
    if refs:
        ax.plot(
            [r for _, r in refs],
            [y for y, _ in refs],
            '|',
            color='black',
            markersize=max(4.0, min(12.0, 200 / max(n, 1))),
            mew=1.5,
            label='reference',
        )
    rows = []
    for y, cell in zip(ys, cells):
        value = cell.value
        if value is not None:
            if n <= MAX_VALUE_LABELS or cell.best:
                text = f' {value:.4g}' + ('  ★ best' if cell.best else '')
                if len(cell.values) > 1:
                    text += f' (n={len(cell.values)})'
                ax.text(max(cell.values), y, text, va='center', fontsize=7)
        else:
            failed = cell.state == model.FAILED
            word = f'FAILED ({cell.reason.split(":")[0]})' if failed else 'missing'
            ax.text(
                0,
                y,
                _t(f' {word}'),
                va='center',
                fontsize=7,
                style='italic',
                color=FAILED_COLOUR if failed else MISSING_COLOUR,
            )
        low_high = cell.allowed or (None, None)
        rows.append(
            (
                cell.config.id,
                cell.config.label,
                value,
                len(cell.values),
                min(cell.values) if cell.values else None,
                max(cell.values) if cell.values else None,
                bench.unit,
                cell.state,
                cell.reference,
                _finite(low_high[0]),
                _finite(low_high[1]),
                'yes' if cell.best else '',
            )
        )
    _row_labels(ax, ys, [_config_tick(c.config, c.best) for c in cells])
    ax.set_xlim(0, top * 1.35 if top > 0 else 1.0)
    ax.set_ylim(-0.7, n - 0.3)
    ax.set_xlabel(_t(f'{bench.variable} [{bench.unit}]' + _direction(bench.better)))
    _title(fig, bench.title)
    return plots.add(
        'bars',
        bench.title,
        fig,
        (
            'config',
            'label',
            'value',
            'samples',
            'min',
            'max',
            'unit',
            'verdict',
            'reference',
            'allowed_low',
            'allowed_high',
            'best',
        ),
        rows,
        caption=_state_caption(cells)
        + ('' if n <= MAX_VALUE_LABELS else '; values in the CSV and the summary'),
    )


def _hbars(ax, bars, height=0.7):
    """Horizontal bars [(y, value, colour)] as one collection (one artist)."""
    if not bars:
        return
    half = height / 2
    boxes = [
        [(0, y - half), (0, y + half), (v, y + half), (v, y - half)] for y, v, _ in bars
    ]
    ax.add_collection(
        PolyCollection(boxes, facecolors=[c for _, _, c in bars], edgecolors='none')
    )


def _lines(ax, lines, markersize=4):
    """Lines [(xs, ys, index, label)]: one artist each with a marker, or, when
    there are too many to tell apart, one collection without markers."""
    if len(lines) <= MAX_LEGEND:
        for xs, ys, i, label in lines:
            ax.plot(
                xs,
                ys,
                marker=MARKERS[(i // len(LINE_COLOURS)) % len(MARKERS)],
                markersize=markersize,
                lw=1.2,
                color=LINE_COLOURS[i % len(LINE_COLOURS)],
                label=_t(label),
            )
        return
    ax.add_collection(
        LineCollection(
            [list(zip(xs, ys)) for xs, ys, _, _ in lines],
            colors=[LINE_COLOURS[i % len(LINE_COLOURS)] for _, _, i, _ in lines],
            linewidths=0.8,
            alpha=0.8,
        )
    )
    ax.autoscale_view()


LEGEND_ROW = 0.19  # inches per legend entry


def _legend_below_figure(entries, plot_height=3.4):
    """A figure whose axes leave room for a legend of *entries* below them."""
    legend = LEGEND_ROW * entries + (0.2 if entries else 0)
    height = plot_height + legend
    fig = _figure(7.6, height)
    bottom = (0.55 + legend) / height
    ax = fig.add_axes([0.12, bottom, 0.84, 1 - bottom - 0.35 / height])
    return fig, ax


def _legend_below(fig, ax):
    """The axes' legend in the space :func:`_legend_below_figure` left."""
    handles, labels = ax.get_legend_handles_labels()
    height = fig.get_size_inches()[1]
    fig.legend(
        handles,
        labels,
        loc='upper left',
        bbox_to_anchor=(0.08, (LEGEND_ROW * len(labels) + 0.1) / height),
        bbox_transform=fig.transFigure,
        borderaxespad=0.0,
        handlelength=2.5,
    )


def _row_labels(ax, ys, labels):
    """Category labels left of the axes: plain text, far cheaper than ticks."""
    ax.set_yticks([])
    ax.grid(axis='y', visible=False)
    where = ax.get_yaxis_transform()
    for y, label in zip(ys, labels):
        ax.text(
            -0.01, y, _t(label), transform=where, ha='right', va='center', fontsize=8
        )


def _finite(value):
    return value if value is not None and math.isfinite(value) else None


def _direction(better):
    return {'higher': ', higher is better', 'lower': ', lower is better'}.get(
        better, ''
    )


#: Longest category label drawn; the full label is in the CSV and the tables.
MAX_LABEL = 44


def _bytes(size):
    for unit, scale in (('Mi', 2**20), ('Ki', 2**10)):
        if size >= scale:
            return f'{size / scale:g} {unit}B'
    return f'{size:g} B'


#: Characters of a title that fit the figure's width; the caption has it whole.
MAX_TITLE = 92


def _title(fig, text):
    """The plot's title at the figure's top left, on one line."""
    height = fig.get_size_inches()[1]
    fig.text(
        0.015, 1 - 0.08 / height, _t(_clip(text, MAX_TITLE)), va='top', fontsize=10
    )


def _t(text):
    """Text from the data, shown as it is: a '$' must not start mathtext."""
    return str(text).replace('$', r'\$')


def _clip(text, width=MAX_LABEL):
    return text if len(text) <= width else text[: width - 1] + '…'


def _config_tick(config, best=False):
    text = _clip(f'{config.id} {config.short}')
    return f'★ {text}' if best else text


def _axes_box(fig, cells):
    width, height = fig.get_size_inches()
    longest = max((len(_config_tick(c.config, True)) for c in cells), default=10)
    left = (0.25 + 0.068 * longest) / width
    bottom = 0.5 / height
    top = 0.35 / height
    return [left, bottom, 0.97 - left - 0.08, 1 - bottom - top]


def _state_caption(cells):
    counts = {}
    for cell in cells:
        counts[cell.state] = counts.get(cell.state, 0) + 1
    return ', '.join(f'{n} {state}' for state, n in counts.items())


# ---------------------------------------------------------- communication


def comm_chart(plots, operation, metric, lines):
    fig, ax = _legend_below_figure(len(lines) if len(lines) <= MAX_LEGEND else 0)
    rows, drawn = [], []
    for i, line in enumerate(lines):
        pts = [(s, v) for s, v in line.curve.points if s > 0 and v > 0]
        if not pts:
            continue
        xs, ys = zip(*pts)
        drawn.append((xs, ys, i, line.label))
        for size, value in line.curve.points:
            rows.append(
                (
                    line.config.id,
                    line.config.label,
                    line.curve.tool,
                    line.test,
                    line.curve.ranks or None,
                    size,
                    value,
                    line.curve.unit,
                )
            )
    ax.set_xscale('log', base=2)
    ax.set_yscale('log')
    _lines(ax, drawn, markersize=3)
    sizes = [x for xs, _, _, _ in drawn for x in xs]
    if sizes:
        low = int(math.floor(math.log2(min(sizes))))
        high = int(math.ceil(math.log2(max(sizes))))
        step = max(1, math.ceil((high - low) / 10))
        ticks = [2.0**k for k in range(low, high + 1, step)]
        ax.set_xticks(ticks)
        ax.set_xticklabels([_bytes(t) for t in ticks])
        ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlabel('message size [bytes]')
    unit = curvelib.UNITS[metric]
    what = {'latency': 'time per operation', 'bandwidth': 'bandwidth', 'rate': 'rate'}
    ax.set_ylabel(f'{what[metric]} [{unit}]')
    title = f'{operation}: {metric}'
    ax.set_title(title, loc='left')
    if len(lines) <= MAX_LEGEND:
        _legend_below(fig, ax)
    caption = f'{len(lines)} line(s), one per configuration and tool'
    return plots.add(
        'comm',
        title,
        fig,
        ('config', 'label', 'tool', 'test', 'ranks', 'bytes', 'value', 'unit'),
        rows,
        caption,
    )


def barrier_chart(plots, barrier):
    n = len(barrier)
    fig = _figure(7.6, 0.9 + 0.24 * max(n, 2))
    height = fig.get_size_inches()[1]
    left = (0.25 + 0.068 * (MAX_LABEL + 2)) / 7.6
    ax = fig.add_axes([left, 0.5 / height, 0.88 - left, 1 - 0.85 / height])
    ys = list(range(n))[::-1]
    rows = []
    values = [v for _, _, v in barrier if v is not None]
    _hbars(
        ax,
        [(y, v, LINE_COLOURS[0]) for y, (_, _, v) in zip(ys, barrier) if v is not None],
    )
    for y, (config, tool, value) in zip(ys, barrier):
        if value is not None:
            if n <= MAX_VALUE_LABELS:
                ax.text(value, y, f' {value:.3g}', va='center', fontsize=7)
        else:
            ax.text(0, y, ' missing', va='center', style='italic', color=MISSING_COLOUR)
        rows.append((config.id, config.label, tool, value, 'us'))
    _row_labels(ax, ys, [_clip(f'{c.id} {c.short} ({t})') for c, t, _ in barrier])
    ax.set_xlim(0, (max(values) if values else 1) * 1.3)
    ax.set_ylim(-0.7, n - 0.3)
    ax.set_xlabel('time per barrier [us], lower is better')
    ax.set_title('Barrier', loc='left')
    return plots.add(
        'comm',
        'Barrier',
        fig,
        ('config', 'label', 'tool', 'latency', 'unit'),
        rows,
    )


# ---------------------------------------------------------------- scaling


def scaling_chart(plots, title, series_list):
    fig = _figure(7.6, 3.4)
    speed = fig.add_axes([0.08, 0.14, 0.38, 0.72])
    eff = fig.add_axes([0.58, 0.14, 0.38, 0.72])
    rows, speedups, effs = [], [], []
    top = 1
    for i, series in enumerate(series_list):
        ranks = [p.ranks for p in series.points]
        speedups.append((ranks, [p.speedup for p in series.points], i, series.series))
        effs.append((ranks, [p.efficiency * 100 for p in series.points], i, None))
        top = max(top, *ranks, *[p.ideal for p in series.points])
        for p in series.points:
            rows.append(
                (
                    series.series,
                    series.test,
                    p.ranks,
                    p.nodes,
                    p.value,
                    series.unit,
                    p.speedup,
                    p.ideal,
                    p.efficiency,
                    'weak' if series.weak else 'strong',
                )
            )
    _lines(speed, speedups)
    _lines(eff, effs)
    first = series_list[0]
    base = min(p.ranks for s in series_list for p in s.points)
    xs = sorted({p.ranks for s in series_list for p in s.points})
    ideal = (
        [1.0] * len(xs)
        if first.weak and first.unit in ('s', 'ms', 'us')
        else [x / base for x in xs]
    )
    speed.plot(xs, ideal, ls='--', color='black', lw=1, label='ideal')
    eff.axhline(100, ls='--', color='black', lw=1)
    speed.set_xlabel('MPI ranks')
    speed.set_ylabel('speedup')
    eff.set_xlabel('MPI ranks')
    eff.set_ylabel('parallel efficiency [%]')
    eff.set_ylim(
        0, max(110, *[p.efficiency * 105 for s in series_list for p in s.points])
    )
    for ax in (speed, eff):
        ax.set_xticks(xs)
        ax.set_xticklabels([str(x) for x in xs])
    if len(series_list) <= MAX_LEGEND:
        speed.legend(loc='upper left')
    _title(fig, title)
    return plots.add(
        'scaling',
        title,
        fig,
        (
            'series',
            'test',
            'ranks',
            'nodes',
            'value',
            'unit',
            'speedup',
            'ideal',
            'efficiency',
            'scaling',
        ),
        rows,
    )


# ------------------------------------------------------------- acceptance


def node_chart(plots, group):
    hosts = sorted(group.values)
    n = len(hosts)
    fig = _figure(7.6, 0.9 + 0.22 * max(n, 3))
    longest = min(MAX_LABEL, max(len(h) for h in hosts))
    height = fig.get_size_inches()[1]
    left = (0.25 + 0.068 * longest) / 7.6
    ax = fig.add_axes([left, 0.55 / height, 0.92 - left, 1 - 0.95 / height])
    ys = list(range(n))[::-1]
    rows = []
    for flagged, colour, size in ((False, LINE_COLOURS[0], 4), (True, '#c62828', 6)):
        pts = [
            (group.values[h], y)
            for y, h in zip(ys, hosts)
            if (h in group.flagged) == flagged
        ]
        if pts:
            ax.plot(*zip(*pts), 'o', color=colour, markersize=size, ls='none')
    for y, host in zip(ys, hosts):
        value = group.values[host]
        flagged = host in group.flagged
        if flagged:
            ax.annotate(
                _t(f'{host}: flagged'),
                (value, y),
                xytext=(7, 0),
                textcoords='offset points',
                va='center',
                fontsize=7,
                color='#c62828',
            )
        rows.append(
            (
                host,
                value,
                group.unit,
                group.verdicts.get(host, ''),
                'yes' if flagged else '',
                group.flagged.get(host, ''),
            )
        )
    ax.axvline(group.median, color='black', lw=1, ls='--')
    ax.text(group.median, 1.0, ' median', transform=ax.get_xaxis_transform(),
            va='bottom', fontsize=7)  # fmt: skip
    _row_labels(ax, ys, [_clip(h) for h in hosts])
    ax.set_ylim(-0.7, n - 0.3)
    ax.set_xlabel(_t(f'[{group.unit}]{_direction(group.better)}'))
    _title(fig, f'{group.title} on {group.system}, per node')
    return plots.add(
        'nodes',
        f'{group.system} {group.title}',
        fig,
        ('node', 'value', 'unit', 'verdict', 'flagged', 'reason'),
        rows,
        caption=f'{n} nodes, {len(group.flagged)} flagged',
    )


_HEAT = LinearSegmentedColormap.from_list('cb', ['#f7fbff', '#6baed6', '#08306b'])


def pair_chart(plots, matrix):
    nodes = matrix.nodes
    n = len(nodes)
    height = min(7.6, 2.6 + 0.32 * n)
    fig = _figure(7.6, height)
    ax = fig.add_axes([0.12, 0.9 / height, 0.62, 1 - 1.35 / height])
    grid = [[math.nan] * n for _ in range(n)]
    for (a, b), value in matrix.values.items():
        i, j = nodes.index(a), nodes.index(b)
        grid[i][j] = value
        if (b, a) not in matrix.values:
            grid[j][i] = value  # one value per pair: the same both ways
    image = ax.imshow(
        grid, cmap=_HEAT.reversed() if matrix.better == 'lower' else _HEAT
    )
    ax.set_facecolor('#eeeeee')
    norm = image.norm
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            value = grid[i][j]
            pair = (nodes[i], nodes[j])
            if math.isnan(value):
                ax.text(
                    j, i, '—', ha='center', va='center', fontsize=7, color='#777777'
                )
                continue
            if n <= 16:
                shade = norm(value)
                dark = shade > 0.55 if matrix.better != 'lower' else shade < 0.45
                text = f'{value:.0f}' if abs(value) >= 1000 else f'{value:.3g}'
                ax.text(j, i, text, ha='center', va='center', fontsize=6,
                        color='white' if dark else 'black')  # fmt: skip
            if pair in matrix.flagged or pair[::-1] in matrix.flagged:
                ax.add_patch(
                    Rectangle(
                        (j - 0.5, i - 0.5), 1, 1, fill=False, ec='#c62828', lw=2.2
                    )
                )
    ax.set_xticks(range(n))
    ax.set_yticks(range(n))
    ax.set_xticklabels([_t(_clip(n, 24)) for n in nodes], rotation=90)
    ax.set_yticklabels([_t(_clip(n, 24)) for n in nodes])
    ax.grid(False)
    cax = fig.add_axes([0.8, 0.9 / height, 0.025, 1 - 1.35 / height])
    fig.colorbar(
        image, cax=cax, label=_t(f'[{matrix.unit}]{_direction(matrix.better)}')
    )
    _title(fig, f'{matrix.title} on {matrix.system}, all pairs')
    rows = [
        (a, b, value, matrix.unit,
         'yes' if (a, b) in matrix.flagged or (b, a) in matrix.flagged else '',
         matrix.flagged.get((a, b)) or matrix.flagged.get((b, a)) or '')
        for (a, b), value in sorted(matrix.values.items())
    ]  # fmt: skip
    return plots.add(
        'pairs',
        f'{matrix.system} {matrix.title}',
        fig,
        ('node_a', 'node_b', 'value', 'unit', 'flagged', 'reason'),
        rows,
        caption=f'{len(matrix.values)} pairs of {n} nodes, '
        f'{len(matrix.flagged)} flagged',
    )


# ------------------------------------------------------------ sensitivity


def sensitivity_chart(plots, resource, elasticities):
    """Every application figure against one resource, both on log scales.

    Figures are divided by their median over the configurations, so that
    benchmarks of different units share one plot; the slope of each fitted
    line is its elasticity.
    """
    shown = len(elasticities) if len(elasticities) <= MAX_LEGEND else 0
    fig, ax = _legend_below_figure(shown)
    rows = []
    for i, e in enumerate(elasticities):
        colour = LINE_COLOURS[i % len(LINE_COLOURS)]
        xs = [p[1] for p in e.points]
        ys = [p[2] for p in e.points]
        mid = sorted(ys)[len(ys) // 2]
        ax.plot(
            xs,
            [y / mid for y in ys],
            MARKERS[(i // len(LINE_COLOURS)) % len(MARKERS)],
            color=colour,
            markersize=4,
            label=_t(f'{e.benchmark.title} (e={e.slope:.2f})'),
        )
        lo, hi = min(xs), max(xs)
        cx = math.exp(sum(math.log(x) for x in xs) / len(xs))
        cy = math.exp(sum(math.log(y / mid) for y in ys) / len(ys))
        ax.plot(
            [lo, hi],
            [cy * (lo / cx) ** e.slope, cy * (hi / cx) ** e.slope],
            color=colour,
            lw=1,
        )
        for config, x, y in e.points:
            rows.append(
                (
                    e.benchmark.title,
                    config.id,
                    config.label,
                    x,
                    e.resource_unit,
                    y,
                    e.benchmark.unit,
                    e.slope,
                    e.r2,
                )
            )
    ax.set_xscale('log')
    ax.set_yscale('log')
    ax.set_xlabel(_t(f'{resource} [{elasticities[0].resource_unit}]'))
    ax.set_ylabel('figure ÷ its median')
    plain = FuncFormatter(lambda v, _: f'{v:g}')
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(plain)
        axis.set_minor_formatter(plain)
    ax.set_title(f'Sensitivity to {resource}', loc='left')
    if len(elasticities) <= MAX_LEGEND:
        _legend_below(fig, ax)
    return plots.add(
        'sensitivity',
        resource,
        fig,
        (
            'benchmark',
            'config',
            'label',
            'resource',
            'resource_unit',
            'figure',
            'unit',
            'elasticity',
            'r2',
        ),
        rows,
    )


# ------------------------------------------------------------------ all

_TASKS = []  # read by forked workers


def tasks(data):
    """(section, key, chart function, arguments) of every plot of the report."""
    out = []
    for family, bench in data.applications:
        out.append(
            ('applications', (family, bench), bar_chart, (bench, data.row(bench)))
        )
    comm = data.communication
    for op in curvelib.OPERATIONS:
        for metric in (curvelib.LATENCY, curvelib.BANDWIDTH, curvelib.RATE):
            lines = comm.lines.get((op, metric))
            if lines:
                out.append(('communication', None, comm_chart, (op, metric, lines)))
    if comm.barrier:
        out.append(('communication', None, barrier_chart, (comm.barrier,)))
    by_title = {}
    for series in data.scaling_series:
        by_title.setdefault(series.benchmark_title, []).append(series)
    for title, series_list in by_title.items():
        out.append(('scaling', None, scaling_chart, (title, series_list)))
    for group in data.acceptance.nodes:
        out.append(('nodes', group, node_chart, (group,)))
    for matrix in data.acceptance.pairs:
        out.append(('pairs', matrix, pair_chart, (matrix,)))
    by_resource = {}
    for e in data.sensitivity.rows:
        if e.slope is not None:
            by_resource.setdefault(e.resource, []).append(e)
    for resource, rows in by_resource.items():
        out.append(('sensitivity', None, sensitivity_chart, (resource, rows)))
    if data.trends.series:
        from clusterbench.report.trendplot import trend_chart

        for series in data.trends.series:
            out.append(('trends', None, trend_chart, (series,)))
    return out


def _draw(index):
    _, _, func, args = _TASKS[index]
    one = PlotSet()
    with matplotlib.rc_context(RC):
        func(one, *args)
    return one.plots[0]


def jobs():
    """Worker processes for plotting: CLUSTERBENCH_REPORT_JOBS, else the CPUs."""
    try:
        wanted = int(os.environ.get('CLUSTERBENCH_REPORT_JOBS', '0'))
    except ValueError:
        wanted = 0
    if wanted > 0:
        return wanted
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return os.cpu_count() or 1


def make_all(data, workers=None):
    """Every plot of the report.

    Returns ({section: [Plot, or (key, Plot)]}, [Plot]). With several CPUs
    and enough plots, the plots are drawn by forked worker processes; the
    result is the same, in the same order.
    """
    global _TASKS
    todo = tasks(data)
    workers = jobs() if workers is None else workers
    _TASKS = todo
    try:
        if workers > 1 and len(todo) >= PARALLEL_FROM and _can_fork():
            context = multiprocessing.get_context('fork')
            with ProcessPoolExecutor(
                min(workers, len(todo)), mp_context=context
            ) as pool:
                drawn = list(pool.map(_draw, range(len(todo))))
        else:
            drawn = [_draw(i) for i in range(len(todo))]
    finally:
        _TASKS = []
    ids = set()
    out = {'applications': [], 'communication': [], 'scaling': [], 'nodes': [],
           'pairs': [], 'sensitivity': [], 'trends': []}  # fmt: skip
    for (section, key, _, _), plot in zip(todo, drawn):
        stem, n = plot.id, 1
        while plot.id in ids:
            n += 1
            plot.id = f'{stem}-{n}'
        plot.csv_name = f'{plot.id}.csv'
        ids.add(plot.id)
        if section == 'applications':
            out[section].append((*key, plot))
        elif key is not None:
            out[section].append((key, plot))
        else:
            out[section].append(plot)
    return out, drawn


#: Fewer plots than this are drawn in this process (forking costs more).
PARALLEL_FROM = 6


def _can_fork():
    return 'fork' in multiprocessing.get_all_start_methods()
