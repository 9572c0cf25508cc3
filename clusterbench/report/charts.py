"""The report's charts of benchmark figures: one bar chart per application
benchmark, the communication curves and barrier, the scaling series and the
sensitivity to resources. Each draws into a :class:`PlotSet` with the rows
it was drawn from.
"""

import math

from matplotlib.collections import PolyCollection
from matplotlib.ticker import FuncFormatter, NullLocator

from clusterbench.judging import vocabulary
from clusterbench.report import assemble as model
from clusterbench.report import curves as curvelib
from clusterbench.report import verdictcolours
from clusterbench.report.plotkit import (
    FAILED_COLOUR,
    LINE_COLOURS,
    MARKERS,
    MAX_LABEL,
    MAX_LEGEND,
    MAX_VALUE_LABELS,
    MISSING_COLOUR,
    VERDICT_COLUMNS,
    axes_box,
    clip,
    config_tick,
    direction_note,
    draw_lines,
    hbars,
    legend_below,
    legend_below_figure,
    literal,
    log_axes,
    new_figure,
    row_labels,
    set_title,
    size_label,
    state_caption,
    verdict_values,
)

# ----------------------------------------------------------- applications


def bar_chart(plots, bench, cells):
    """Horizontal bars, one per configuration, coloured by verdict."""
    n = len(cells)
    fig = new_figure(7.6, 0.9 + 0.24 * max(n, 2))
    ax = fig.add_axes(axes_box(fig, cells))
    ys = list(range(n))[::-1]
    measured = [v for c in cells for v in c.values]
    measured += [c.ref.value for c in cells if c.ref is not None]
    top = max(measured) if measured else 1.0
    bars = [(y, c) for y, c in zip(ys, cells) if c.value is not None]
    hbars(ax, [(y, c.value, verdictcolours.colour(c.state)) for y, c in bars])
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
    bands = []
    for y, c in zip(ys, cells):
        low, high = c.allowed or (None, None)
        if low is not None and high is not None:
            low, high = max(low, 0.0), min(high, top * 1.3)
            bands.append([(low, y - 0.45), (low, y + 0.45), (high, y + 0.45),
                          (high, y - 0.45)])  # fmt: skip
    if bands:
        # The allowed band of each bar, drawn behind it (not only on hover).
        ax.add_collection(
            PolyCollection(bands, facecolors='#cfd8dc', edgecolors='none', zorder=0)
        )
    refs = [(y, c.ref.value) for y, c in zip(ys, cells) if c.ref is not None]
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
            if cell.disturbed:
                word = f'DISTURBED only ({len(cell.disturbed)} left out)'
            ax.text(
                0,
                y,
                literal(f' {word}'),
                va='center',
                fontsize=7,
                style='italic',
                color=FAILED_COLOUR if failed else MISSING_COLOUR,
            )
        rows.append(
            (
                cell.config.id,
                cell.config.label,
                value,
                len(cell.values),
                min(cell.values) if cell.values else None,
                max(cell.values) if cell.values else None,
                *verdict_values(cell),
            )
        )
    if n <= MAX_VALUE_LABELS:
        row_labels(ax, ys, [config_tick(c.config, c.best) for c in cells])
    else:
        # So many bars: every few an id (the configurations table names
        # them; the CSV has every bar), the best one in full. Text is most of
        # a plot's drawing time.
        every = math.ceil(n / 20)
        marked = [
            (y, config_tick(c.config, True) if c.best else c.config.id)
            for i, (y, c) in enumerate(zip(ys, cells))
            if c.best or i % every == 0
        ]
        row_labels(ax, [y for y, _ in marked], [t for _, t in marked])
    ax.set_xlim(0, top * 1.35 if top > 0 else 1.0)
    ax.set_ylim(-0.7, n - 0.3)
    ax.set_xlabel(
        literal(f'{bench.variable} [{bench.unit}]' + direction_note(bench.better))
    )
    set_title(fig, bench.title)
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
            *VERDICT_COLUMNS,
        ),
        rows,
        caption=state_caption(cells)
        + ('' if n <= MAX_VALUE_LABELS else '; values in the CSV and the summary'),
    )


# ---------------------------------------------------------- communication


def comm_chart(plots, operation, metric, lines):
    fig, ax = legend_below_figure(len(lines) if len(lines) <= MAX_LEGEND else 0)
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
    log_axes(ax, 2)
    draw_lines(ax, drawn, markersize=3)
    sizes = [x for xs, _, _, _ in drawn for x in xs]
    if sizes:
        low = int(math.floor(math.log2(min(sizes))))
        high = int(math.ceil(math.log2(max(sizes))))
        step = max(1, math.ceil((high - low) / 10))
        ticks = [2.0**k for k in range(low, high + 1, step)]
        ax.set_xticks(ticks)
        ax.set_xticklabels([size_label(t) for t in ticks])
        ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlabel('message size [bytes]')
    unit = curvelib.UNITS[metric]
    what = {'latency': 'time per operation', 'bandwidth': 'bandwidth', 'rate': 'rate'}
    ax.set_ylabel(f'{what[metric]} [{unit}]')
    title = f'{operation}: {metric}'
    ax.set_title(title, loc='left')
    if len(lines) <= MAX_LEGEND:
        legend_below(fig, ax)
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
    fig = new_figure(7.6, 0.9 + 0.24 * max(n, 2))
    height = fig.get_size_inches()[1]
    left = (0.25 + 0.068 * (MAX_LABEL + 2)) / 7.6
    ax = fig.add_axes([left, 0.5 / height, 0.88 - left, 1 - 0.85 / height])
    ys = list(range(n))[::-1]
    rows = []
    values = [v for _, _, v in barrier if v is not None]
    hbars(
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
    row_labels(ax, ys, [clip(f'{c.id} {c.short} ({t})') for c, t, _ in barrier])
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
    fig = new_figure(7.6, 3.4)
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
    draw_lines(speed, speedups)
    draw_lines(eff, effs)
    first = series_list[0]
    base = min(p.ranks for s in series_list for p in s.points)
    xs = sorted({p.ranks for s in series_list for p in s.points})
    ideal = (
        [1.0] * len(xs)
        if first.weak and vocabulary.is_time(first.unit)
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
    set_title(fig, title)
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


# ------------------------------------------------------------ sensitivity


def sensitivity_chart(plots, resource, elasticities):
    """Every application figure against one resource, both on log scales.

    Figures are divided by their median over the configurations, so that
    benchmarks of different units share one plot; the slope of each fitted
    line is its elasticity.
    """
    shown = len(elasticities) if len(elasticities) <= MAX_LEGEND else 0
    fig, ax = legend_below_figure(shown)
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
            label=literal(f'{e.benchmark.title} (e={e.slope:.2f})'),
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
    ax.set_xlabel(literal(f'{resource} [{elasticities[0].resource_unit}]'))
    ax.set_ylabel('figure ÷ its median')
    plain = FuncFormatter(lambda v, _: f'{v:g}')
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(plain)
        axis.set_minor_formatter(plain)
    ax.set_title(f'Sensitivity to {resource}', loc='left')
    if len(elasticities) <= MAX_LEGEND:
        legend_below(fig, ax)
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
