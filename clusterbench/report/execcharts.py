"""The charts of the executive page: the headline figures against a baseline
system, a roofline per system, the point-to-point curves of every system
overlaid with the link's peak and the reference band (drawn by
:mod:`clusterbench.report.execoverlay`), and every judged figure against its
reference, worst first. Each draws into a
:class:`~clusterbench.report.plotkit.PlotSet` with the rows it was drawn from.
"""

from clusterbench.core.figures import Better
from clusterbench.judging import vocabulary
from clusterbench.report import (
    execcolumns,
    execoverlay,
    headline,
    plotkit,
    verdictcolours,
)


def tasks(data):
    """(section, key, chart function, arguments) of the executive charts."""
    page = data.executive
    if page is None or page.empty:
        return []
    # A row against itself says nothing (every bar 1.0), nor do rows without
    # a figure in common: no empty plot above the fold, the table is enough.
    out = [('executive', None, baseline_chart, (page,))] if compared(page) else []
    roofs = [(row, roofline_points(data, row)) for row in page.rows]
    # Ceilings without one measured kernel under them are the table's peak.
    roofs = [(row, points) for row, points in roofs if points]
    if roofs:
        out.append(('executive', None, roofline_chart, (roofs,)))
    lines = execoverlay.pingpong_lines(data)
    if lines:
        out.append(('executive', None, execoverlay.overlay_chart, (data, lines)))
    judged = judged_cells(data)
    if judged:
        out.append(('executive', None, reference_chart, (judged,)))
    return out


# ----------------------------------------------------- against a baseline


def speedup(value, base, better):
    """How many times better than the baseline (>1 better, <1 worse)."""
    if value is None or base is None or value <= 0 or base <= 0:
        return None
    return base / value if better == Better.LOWER else value / base


def compared(page):
    """(baseline row, the other rows, the headline figures (key, label,
    better) that the baseline and another row both measured); no figure
    where there is one row."""
    base = next((r for r in page.rows if r.key == page.baseline), None)
    others = [r for r in page.rows if r is not base]
    shown = [
        (line.key, line.compared, base.get(line.key).better)
        for column in execcolumns.columns()
        for line in column.lines
        if line.compared
        and base is not None
        and _value(base, line.key) is not None
        and any(_value(r, line.key) is not None for r in others)
    ]
    return (base, others, shown) if shown else None


def baseline_chart(plots, page):
    """Grouped bars: each headline figure of each other system against the
    baseline's (the baseline is the dashed line at 1, never a row of its own)."""
    base, others, shown = compared(page)
    rows_n = len(others)
    fig, ax = plotkit.legend_below_figure(min(rows_n, 14), plot_height=3.6)
    width = 0.8 / max(rows_n, 1)
    table = []
    for i, row in enumerate(others):
        xs, ys = [], []
        for g, (key, label, better) in enumerate(shown):
            ratio = speedup(_value(row, key), _value(base, key), better)
            stat = row.get(key)
            table.append(
                (
                    label,
                    row.key,
                    _value(row, key),
                    stat.unit if stat else None,
                    _value(base, key),
                    base.key,
                    ratio,
                    better,
                )
            )
            if ratio is not None:
                xs.append(g - 0.4 + width * (i + 0.5))
                ys.append(ratio)
        ax.bar(
            xs,
            ys,
            width * 0.92,
            color=plotkit.LINE_COLOURS[i % len(plotkit.LINE_COLOURS)],
            label=plotkit.literal(row.key),
        )
    ax.axhline(1.0, color='black', lw=0.8, ls='--')
    ax.set_xticks(range(len(shown)))
    ax.set_xticklabels([plotkit.literal(label) for _, label, _ in shown], fontsize=7)
    ax.set_xlim(-0.6, len(shown) - 0.4)
    ax.set_ylabel(f'× {base.key} (higher is better)')
    ax.set_title(plotkit.literal(f'Headline figures against {base.key}'), loc='left')
    if rows_n <= 14:
        plotkit.legend_below(fig, ax)
    return plots.add(
        'executive',
        f'headline figures against {base.key}',
        fig,
        (
            'figure',
            'system',
            'value',
            'unit',
            'baseline',
            'baseline_system',
            'times_better',
            'better',
        ),
        table,
        caption='latency: baseline ÷ value, so that higher is better everywhere',
    )


def _value(row, key):
    stat = row.get(key)
    return stat.value if stat is not None else None


# --------------------------------------------------------------- roofline


def roofline_points(data, row):
    """(label, flop per byte, GFlop/s per node, how placed) of the row."""
    points = []
    nodes_of = {}
    hpl = row.cells.get('hpl')
    if hpl is not None and hpl.value is not None:
        order = _number(hpl.benchmark.params.get('hpl_order'))
        ai = headline.dgemm_intensity(order)
        per_node = headline.per_node(hpl.value, hpl.config.nodes or 1)
        if ai and per_node:
            points.append(('HPL', ai, per_node, f'N/12 with N={order:.0f}'))
            nodes_of['order'] = order
    dgemm = row.get('dgemm_core')
    if dgemm is not None and dgemm.value is not None and row.cores:
        order = nodes_of.get('order')
        ai = headline.dgemm_intensity(order) if order else None
        if ai:
            points.append(
                ('DGEMM × cores', ai, dgemm.value * row.cores, 'placed as HPL (N/12)')
            )
    cg = row.cells.get('cg')
    if cg is not None and cg.value is not None:
        bandwidth = _sibling(data, cg, 'bandwidth')
        ai = headline.share(cg.value, bandwidth)
        per_node = headline.per_node(cg.value, cg.config.nodes or 1)
        if ai and per_node:
            points.append(('CG solver', ai, per_node, 'measured: GFlop/s ÷ GB/s'))
    for name, cell in sorted(row.npb.items()):
        ai = headline.NPB_NOMINAL_INTENSITY.get(name)
        per_node = headline.per_node(cell.value / 1000.0, cell.config.nodes or 1)
        if ai and per_node:
            points.append((f'NPB {name.upper()}', ai, per_node, 'nominal intensity'))
    return points


def _sibling(data, cell, variable):
    for bench in data.benchmarks:
        if bench.test == cell.benchmark.test and bench.variable == variable:
            other = data.cell(cell.config, bench)
            return other.value if other is not None else None
    return None


def _number(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


#: Marker and colour of each kind of point on the rooflines.
_KINDS = {
    'HPL': ('o', plotkit.LINE_COLOURS[1]),
    'DGEMM × cores': ('s', plotkit.LINE_COLOURS[0]),
    'CG solver': ('D', plotkit.LINE_COLOURS[2]),
    'NPB': ('^', plotkit.LINE_COLOURS[3]),
}
ROOF_COLUMNS = ('system', 'what', 'flop_per_byte', 'gflops_per_node', 'how')
#: Panels of one roofline figure; more systems are in its CSV.
MAX_ROOFS = 12


def roofline_chart(plots, roofs):
    """One roofline panel per system: the peak and STREAM triad per node as
    ceilings, the kernels placed by their arithmetic intensity."""
    shown = roofs[:MAX_ROOFS]
    cols = min(3, len(shown))
    lines = (len(shown) + cols - 1) // cols
    fig = plotkit.new_figure(7.6, 0.9 + 2.5 * lines)
    height = fig.get_size_inches()[1]
    axes = fig.subplots(lines, cols, squeeze=False).ravel()
    fig.subplots_adjust(
        left=0.09,
        right=0.98,
        wspace=0.3,
        hspace=0.55,
        top=1 - 0.45 / height,
        bottom=0.75 / height,
    )
    rows = []
    for ax, (row, points) in zip(axes, shown):
        rows += _roofline(ax, row, points)
    for ax in axes[len(shown) :]:
        ax.set_visible(False)
    for row, points in roofs[MAX_ROOFS:]:
        rows += _roof_rows(row, points)
    handles = [
        axes[0].plot([], [], marker, color=colour, ls='none', label=kind)[0]
        for kind, (marker, colour) in _KINDS.items()
    ]
    handles.append(axes[0].plot([], [], color='black', label='STREAM roof')[0])
    handles.append(axes[0].plot([], [], color='black', ls='--', label='peak')[0])
    plotkit.legend_along_bottom(fig, handles, ncol=6, left=0.02)
    plotkit.set_title(fig, 'Roofline per system: GFlop/s per node against flop/byte')
    caption = (
        'ceilings: the peak (computed or declared) and STREAM triad per node; '
        'HPL and DGEMM at N/12 flop/byte, the CG solver at its measured '
        'GFlop/s ÷ GB/s, NPB at nominal intensities'
    )
    if len(roofs) > MAX_ROOFS:
        caption += f'; {len(roofs) - MAX_ROOFS} more systems in the CSV'
    return plots.add('roofline', 'every system', fig, ROOF_COLUMNS, rows, caption)


def _roof_rows(row, points):
    out = []
    if row.peak:
        out.append((row.key, 'peak', None, row.peak.per_node, row.peak.source))
    stream = row.get('stream_node')
    if stream is not None and stream.value:
        out.append((row.key, 'STREAM triad', None, stream.value, stream.note))
    out += [(row.key, label, ai, gflops, how) for label, ai, gflops, how in points]
    return out


def _roofline(ax, row, points):
    peak = row.peak.per_node if row.peak else None
    stream = _value(row, 'stream_node')
    xs = [p[1] for p in points] or [1.0]
    low = min([0.05, *xs]) / 2
    high = max([100.0, *xs]) * 2
    if stream:
        knee = peak / stream if peak else high
        corner = [x for x in (low, min(max(knee, low), high), high)]
        roof = [min(peak, stream * x) if peak else stream * x for x in corner]
        ax.plot(corner, roof, color='black', lw=1.2)
    if peak:
        ax.axhline(peak, color='black', lw=1.2, ls='--')
    for label, ai, gflops, _ in points:
        marker, colour = _KINDS['NPB' if label.startswith('NPB') else label]
        ax.plot([ai], [gflops], marker, color=colour, markersize=5)
    plotkit.log_axes(ax)
    ax.set_xlim(low, high)
    ax.tick_params(labelsize=7)
    how = '' if not row.peak else f', peak {peak:.4g} ({row.peak.how})'
    mem = f', STREAM {stream:.3g} GB/s' if stream else ''
    ax.set_title(
        plotkit.literal(plotkit.clip(row.key, 28)) + how + mem, fontsize=7, loc='left'
    )
    return _roof_rows(row, points)


# ------------------------------------------------------ against reference


def judged_cells(data):
    """Every cell judged against a reference, worst first: the most beyond
    its band on its bad side (in % of the reference)."""
    found = []
    for bench in data.benchmarks:
        for cell in data.row(bench):
            if cell.ref and cell.ref.value and cell.value is not None:
                found.append(cell)
    return sorted(found, key=lambda c: -_badness(c))


def _badness(cell):
    change = cell.value / cell.ref.value - 1
    better = vocabulary.direction(cell.benchmark.variable, cell.benchmark.unit)
    return {Better.HIGHER: -change, Better.LOWER: change}.get(better, abs(change))


#: Rows drawn in the "% against reference" plot; the CSV has them all.
MAX_DOTS = 60


def reference_chart(plots, cells):
    shown = cells[:MAX_DOTS]
    n = len(shown)
    fig = plotkit.new_figure(7.6, 0.9 + 0.2 * max(n, 3))
    height = fig.get_size_inches()[1]
    ax = fig.add_axes([0.5, 0.5 / height, 0.46, 1 - 0.85 / height])
    ys = list(range(n))[::-1]
    span = 25.0
    rows = []
    for y, cell in zip(ys, shown):
        change = (cell.value / cell.ref.value - 1) * 100
        low, high = (
            (t * 100 if t is not None else None)
            for t in (cell.ref.lower, cell.ref.upper)
        )
        span = max(span, min(abs(change) * 1.2, 200))
        left = low if low is not None else -1e3
        right = high if high is not None else 1e3
        ax.plot(
            [max(left, -1e3), min(right, 1e3)],
            [y, y],
            lw=5,
            color=plotkit.BAND_COLOUR,
            solid_capstyle='butt',
            zorder=1,
        )
        ax.plot(
            [change],
            [y],
            'o',
            markersize=5,
            zorder=3,
            color=verdictcolours.colour(cell.state),
        )
    for cell in cells:
        rows.append(
            (
                cell.config.id,
                f'{cell.config.system}:{cell.config.partition}',
                cell.benchmark.test,
                cell.benchmark.variable,
                cell.value,
                cell.ref.value,
                (cell.value / cell.ref.value - 1) * 100,
                cell.ref.lower * 100 if cell.ref.lower is not None else None,
                cell.ref.upper * 100 if cell.ref.upper is not None else None,
                cell.state,
            )
        )
    ax.axvline(0, color='black', lw=0.8)
    ax.set_xlim(-span, span)
    ax.set_ylim(-0.7, n - 0.3)
    ax.set_xlabel('% against reference (grey: the allowed band)')
    labels = [plotkit.clip(f'{c.config.id} {c.benchmark.title}', 52) for c in shown]
    plotkit.row_labels(ax, ys, labels)
    more = len(cells) - n
    plotkit.set_title(fig, 'Every judged figure against its reference, worst first')
    return plots.add(
        'executive',
        'against reference',
        fig,
        (
            'config',
            'system',
            'test',
            'variable',
            'value',
            'reference',
            'change_pct',
            'band_low_pct',
            'band_high_pct',
            'verdict',
        ),
        rows,
        caption=f'{len(cells)} judged figure(s)'
        + (f'; the {n} worst drawn, all in the CSV' if more > 0 else ''),
    )
