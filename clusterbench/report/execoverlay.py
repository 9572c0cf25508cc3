"""The point-to-point curves of every system on one plot of the executive
page: PingPong latency and bandwidth over message size, with the declared
link peaks and the reference bands of the scalar figures."""

from matplotlib.patches import Rectangle

from clusterbench.report import curves as curvelib
from clusterbench.report import plotkit
from clusterbench.report.plotkit import BAND_COLOUR, REFERENCE_COLOUR


def _size(variable):
    """The message size of a scalar figure (``latency_8B``: 8.0), or None."""
    try:
        return float(variable.split('_')[-1].rstrip('B'))
    except ValueError:
        return None


def pingpong_lines(data):
    """{metric: [line]}: one PingPong line per system:partition, placement and
    metric, from its configuration with the most runs and message sizes (the
    communication section below has every configuration's)."""
    comm = data.communication
    found = {}
    for metric in (curvelib.LATENCY, curvelib.BANDWIDTH):
        best = {}
        for line in comm.lines.get(('PingPong', metric)) or []:
            where = (line.config.system, line.config.partition, line.placement)
            rank = (line.runs, len(line.curve.points))
            if where not in best or rank > best[where][0]:
                best[where] = (rank, line)
        if best:
            found[metric] = [line for _, line in best.values()]
    return found


def _scalar_bands(data, variables):
    """(system:partition, placement, lower, upper, reference) of the judged
    scalar figures named *variables* (the curves' reference bands)."""
    found = []
    for bench in data.benchmarks:
        if bench.variable not in variables:
            continue
        if bench.params.get('mode', 'pingpong') != 'pingpong':
            continue  # a bidirectional figure is no band of a ping-pong curve
        for cell in data.row(bench):
            allowed = cell.allowed
            if allowed is None:
                continue
            scale = 1000.0 if bench.unit == 'GB/s' else 1.0
            found.append(
                (
                    f'{cell.config.system}:{cell.config.partition}',
                    bench.params.get('placement', ''),
                    _size(bench.variable),
                    *(plotkit.finite(v) and v * scale for v in allowed),
                    cell.ref.value * scale,
                )
            )
    return found


def overlay_chart(plots, data, lines):
    """PingPong latency and bandwidth over message size, every system on one
    plot, with the declared link peak and the reference bands."""
    fig = plotkit.new_figure(7.6, 3.6)
    axes = {
        curvelib.LATENCY: fig.add_axes([0.08, 0.28, 0.38, 0.6]),
        curvelib.BANDWIDTH: fig.add_axes([0.58, 0.28, 0.38, 0.6]),
    }
    systems = sorted(
        {
            f'{ln.config.system}:{ln.config.partition}'
            for group in lines.values()
            for ln in group
        }
    )
    colour = {
        s: plotkit.LINE_COLOURS[i % len(plotkit.LINE_COLOURS)]
        for i, s in enumerate(systems)
    }
    rows = []
    for metric, ax in axes.items():
        for line in lines.get(metric, []):
            where = f'{line.config.system}:{line.config.partition}'
            pts = [(s, v) for s, v in line.curve.points if s > 0 and v > 0]
            if not pts:
                continue
            xs, ys = zip(*pts)
            ax.plot(
                xs,
                ys,
                lw=1.1,
                color=colour[where],
                ls='-' if line.placement != 'inter' else '--',
            )
            rows += [
                (metric, where, line.placement, line.curve.tool, s, v, line.curve.unit)
                for s, v in pts
            ]
        plotkit.log_axes(ax, 2)
        ax.set_xlabel('message size [bytes]')
    lat, bw = axes[curvelib.LATENCY], axes[curvelib.BANDWIDTH]
    lat.set_ylabel('one-way latency [us]')
    bw.set_ylabel('bandwidth [MB/s]')
    for where, placement, size, low, high, ref in _scalar_bands(
        data, ('latency_1B', 'latency_8B', 'pingpong_latency_min')
    ):
        size = size or 8.0
        lat.add_patch(
            Rectangle(
                (size / 1.4, low or ref * 0.5),
                size * 0.7,
                (high or ref * 2) - (low or ref * 0.5),
                color=BAND_COLOUR,
                alpha=0.8,
                zorder=0,
            )
        )
        rows.append(('latency band', where, placement, '', size, ref, 'us'))
    for where, placement, _, low, high, ref in _scalar_bands(
        data, ('bandwidth_peak', 'pingpong_bandwidth_max')
    ):
        bw.axhspan(low or 0, high or ref * 2, color=BAND_COLOUR, alpha=0.6, zorder=0)
        bw.axhline(ref, color=REFERENCE_COLOUR, lw=0.8, ls=':')
        rows.append(('bandwidth band', where, placement, '', None, ref, 'MB/s'))
    for where, peak in _link_peaks(data):
        bw.axhline(peak * 1000.0, color=colour.get(where, 'black'), lw=1.2, ls='-.')
        rows.append(
            ('link peak', where, 'inter', 'declared', None, peak * 1000, 'MB/s')
        )
    handles = [
        lat.plot(
            [], [], color=colour[s], lw=1.2, label=plotkit.literal(plotkit.clip(s, 30))
        )[0]
        for s in systems[:10]
    ]
    handles.append(lat.plot([], [], color='grey', ls='--', label='between nodes')[0])
    handles.append(Rectangle((0, 0), 1, 1, color=BAND_COLOUR, label='reference band'))
    handles.append(lat.plot([], [], color='black', ls='-.', label='link peak')[0])
    plotkit.legend_along_bottom(fig, handles, ncol=4, left=0.06)
    plotkit.set_title(fig, 'Point-to-point latency and bandwidth, every system')
    return plots.add(
        'executive',
        'point-to-point curves of every system',
        fig,
        ('what', 'system', 'placement', 'tool', 'bytes', 'value', 'unit'),
        rows,
        caption='solid: inside a node, dashed: between nodes; grey: the '
        'reference band of the scalar figures (latency at its message size, '
        'peak bandwidth); dash-dot: the declared link peak',
    )


def _link_peaks(data):
    seen = {}
    for row in data.communication.table:
        if row.declared_gbs:
            where = f'{row.config.system}:{row.config.partition}'
            seen.setdefault(where, row.declared_gbs)
    return sorted(seen.items())
