"""What every plot of the report shares: the matplotlib style and colours,
:class:`Plot` and :class:`PlotSet` (an SVG and the CSV of its data), and the
drawing helpers: bars, lines, legends, labels and titles. Text from the data
is never parsed as mathtext (:func:`literal`).
"""

import base64
import io
import math
import re
from dataclasses import dataclass

from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.figure import Figure

from clusterbench.core import csvfile
from clusterbench.core.figures import Better
from clusterbench.judging.kinds import Kind
from clusterbench.report import verdictcolours

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

MISSING_COLOUR = verdictcolours.colour(Kind.MISSING)
#: A reference band drawn behind the figures, and the reference itself.
BAND_COLOUR = '#cfd8dc'
REFERENCE_COLOUR = '#546e7a'
FAILED_COLOUR = verdictcolours.colour(Kind.FAILED)
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
            ident, title, svg_of(fig), f'{ident}.csv', csv_of(header, rows), caption
        )
        self.plots.append(plot)
        return plot


def svg_of(fig):
    out = io.BytesIO()
    FigureCanvasSVG(fig)
    fig.savefig(out, format='svg', metadata={'Date': None})
    return out.getvalue()


def csv_of(header, rows):
    out = io.StringIO()
    writer = csvfile.writer(out, lineterminator='\n')
    writer.writerow(header)
    for row in rows:
        writer.writerow(['' if v is None else csv_cell(v) for v in row])
    return out.getvalue()


def csv_cell(value):
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)
    return value


def log_axes(ax, x_base=10):
    """Both axes logarithmic, with major ticks only: minor ticks of a log
    axis are dozens of artists each, most of a small plot's drawing time."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

    ax.set_xscale('log', base=x_base)
    ax.set_yscale('log')
    ax.xaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_locator(LogLocator(numticks=6))
    # Plain numbers, not 10^k in mathtext (whose parser costs more than the plot).
    plain = FuncFormatter(lambda v, _: f'{v:g}')
    ax.xaxis.set_major_formatter(plain)
    ax.yaxis.set_major_formatter(plain)


def new_figure(width, height):
    fig = Figure(figsize=(width, height))
    return fig


def hbars(ax, bars, height=0.7):
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


def draw_lines(ax, lines, markersize=4):
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
                label=literal(label),
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


def legend_below_figure(entries, plot_height=3.4):
    """A figure whose axes leave room for a legend of *entries* below them."""
    legend = LEGEND_ROW * entries + (0.2 if entries else 0)
    height = plot_height + legend
    fig = new_figure(7.6, height)
    bottom = (0.55 + legend) / height
    ax = fig.add_axes([0.12, bottom, 0.84, 1 - bottom - 0.35 / height])
    return fig, ax


def legend_below(fig, ax):
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


def legend_along_bottom(fig, handles, ncol, left):
    """A small legend of *handles* in rows along the bottom of *fig*, under
    every panel (a figure of several axes has no one axes to put it in)."""
    fig.legend(
        handles=handles,
        loc='lower left',
        ncol=ncol,
        fontsize=7,
        bbox_to_anchor=(left, 0.0),
    )


def row_labels(ax, ys, labels):
    """Category labels left of the axes: plain text, far cheaper than ticks."""
    ax.set_yticks([])
    ax.grid(axis='y', visible=False)
    where = ax.get_yaxis_transform()
    for y, label in zip(ys, labels):
        ax.text(
            -0.01,
            y,
            literal(label),
            transform=where,
            ha='right',
            va='center',
            fontsize=8,
        )


def finite(value):
    return value if value is not None and math.isfinite(value) else None


#: The CSV columns of a cell's verdict, in every CSV that has cells.
VERDICT_COLUMNS = ('unit', 'verdict', 'reference', 'allowed_low', 'allowed_high',
                   'best')  # fmt: skip


def verdict_values(cell):
    """The :data:`VERDICT_COLUMNS` of *cell* (an unbounded side is empty)."""
    low, high = cell.allowed or (None, None)
    return (
        cell.benchmark.unit,
        cell.state,
        cell.ref and cell.ref.value,
        finite(low),
        finite(high),
        'yes' if cell.best else None,
    )


def direction_note(better):
    return {Better.HIGHER: ', higher is better', Better.LOWER: ', lower is better'}.get(
        better, ''
    )


#: Longest category label drawn; the full label is in the CSV and the tables.
MAX_LABEL = 44


def size_label(size):
    for unit, scale in (('Mi', 2**20), ('Ki', 2**10)):
        if size >= scale:
            return f'{size / scale:g} {unit}B'
    return f'{size:g} B'


#: Characters of a title that fit the figure's width; the caption has it whole.
MAX_TITLE = 92


def set_title(fig, text):
    """The plot's title at the figure's top left, on one line."""
    height = fig.get_size_inches()[1]
    fig.text(
        0.015, 1 - 0.08 / height, literal(clip(text, MAX_TITLE)), va='top', fontsize=10
    )


def literal(text):
    """Text from the data, shown as it is: a '$' must not start mathtext."""
    return str(text).replace('$', r'\$')


def clip(text, width=MAX_LABEL):
    return text if len(text) <= width else text[: width - 1] + '…'


def config_tick(config, best=False):
    text = clip(f'{config.id} {config.short}')
    return f'★ {text}' if best else text


def axes_box(fig, cells):
    width, height = fig.get_size_inches()
    longest = max((len(config_tick(c.config, True)) for c in cells), default=10)
    left = (0.25 + 0.068 * longest) / width
    bottom = 0.5 / height
    top = 0.35 / height
    return [left, bottom, 0.97 - left - 0.08, 1 - bottom - top]


def state_caption(cells):
    counts = {}
    for cell in cells:
        counts[cell.state] = counts.get(cell.state, 0) + 1
    return ', '.join(f'{n} {state}' for state, n in counts.items())
