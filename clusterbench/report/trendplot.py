"""Trend plots: a figure against the date of its sessions.

See clusterbench.judging.trend.

Each point is a session's median, coloured by its verdict: regressions
(SLOWER, FLAGGED) as red crosses, FASTER as blue triangles, DISTURBED
as orange diamonds; the reference band is the grey area behind them, and the
change point a dashed line naming its session.
"""

import io

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.dates import AutoDateLocator, ConciseDateFormatter

from clusterbench.judging import trend, verdict
from clusterbench.report import plotkit, verdictcolours

#: How each verdict is marked: (colour, marker, legend label).
_MARKS = {
    kind: (verdictcolours.colour(kind), marker, label)
    for kind, marker, label in (
        (verdict.PASS, 'o', 'pass'),
        (verdict.SLOWER, 'X', 'SLOWER / FLAGGED'),
        (verdict.FLAGGED, 'X', 'SLOWER / FLAGGED'),
        (verdict.FASTER, '^', 'FASTER'),
        (verdict.DISTURBED, 'D', 'DISTURBED'),
        (verdict.INCONCLUSIVE, 's', 'INCONCLUSIVE'),
        (verdict.NO_REFERENCE, 'o', 'no reference'),
    )
}

#: Series drawn in one `clusterbench trend` figure; the CSV has them all.
MAX_PANELS = 24


def draw(ax, series):
    """The series on *ax*."""
    dates = [p.date for p in series.points]
    values = [p.value for p in series.points]
    ax.plot(dates, values, '-', color='#9e9e9e', lw=1, zorder=1)
    banded = [(p.date, *p.band) for p in series.points if p.band]
    if banded:
        finite = [v for v in values if v is not None]
        span = (max(finite) - min(finite)) or abs(max(finite)) or 1.0
        low = [max(b[1], min(finite) - span) for b in banded]
        high = [min(b[2], max(finite) + span) for b in banded]
        ax.fill_between(
            [b[0] for b in banded],
            low,
            high,
            step='mid',
            color='#cfd8dc',
            alpha=0.6,
            lw=0,
            label='reference band',
            zorder=0,
        )
        ax.plot(
            [b[0] for b in banded],
            [p.ref.value for p in series.points if p.band],
            '--',
            color='#546e7a',
            lw=0.8,
            label='reference',
            zorder=0,
        )
    marked = {}  # one artist per kind of mark, not one per session
    for p in series.points:
        mark = _MARKS.get(verdict.kind(p.verdict), _MARKS[verdict.NO_REFERENCE])
        marked.setdefault(mark, []).append(p)
    for (colour, marker, label), points in marked.items():
        ax.plot(
            [p.date for p in points],
            [p.value for p in points],
            marker,
            ls='none',
            color=colour,
            markersize=7,
            label=label,
            zorder=3,
        )
    if series.change is not None:
        c = series.change
        when = series.points[c.index].date
        ax.axvline(when, color='#c62828', ls=':', lw=1.2, zorder=2)
        _label(
            ax,
            when,
            c.index / max(len(series.points) - 1, 1),
            f'moved {c.shift:+.1%} at session {c.session[:8]}',
        )
    if series.drift is not None:
        kept = [
            p for p in series.points if verdict.kind(p.verdict) != verdict.DISTURBED
        ]
        ax.plot(
            [kept[0].date, kept[-1].date],
            [series.drift.first, series.drift.last],
            ':',
            color='#c62828',
            lw=1.2,
            zorder=2,
        )
        _label(
            ax,
            kept[-1].date,
            1.0,
            f'drift {series.drift.slope:+.1%} per session',
        )
    locator = AutoDateLocator()
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(ConciseDateFormatter(locator))
    ax.set_ylabel(plotkit.literal(series.unit))
    ax.legend(loc='lower left', fontsize=7)


def _label(ax, when, where, text):
    """A label at the top of the axes beside *when*, on the side with room:
    one near the right edge is written leftwards, so that it is never cut."""
    right = where > 0.5
    ax.annotate(
        plotkit.literal(text),
        (when, 1.0),
        xycoords=('data', 'axes fraction'),
        xytext=(-3 if right else 3, -3),
        textcoords='offset points',
        ha='right' if right else 'left',
        va='top',
        fontsize=7,
        color='#c62828',
        bbox={'boxstyle': 'square,pad=0.1', 'fc': 'white', 'ec': 'none', 'alpha': 0.8},
        zorder=4,
    )


def trend_chart(plots, series):
    """One series as a plot of the HTML report (*plots*: a PlotSet)."""
    fig = plotkit.new_figure(7.6, 3.0)
    ax = fig.add_axes([0.1, 0.14, 0.86, 0.7])
    draw(ax, series)
    plotkit.set_title(fig, series.title)
    rows = [
        (p.session, p.date.isoformat(timespec='seconds'), p.value, len(p.values))
        + (p.ref and p.ref.value, *(p.band or (None, None)), p.verdict)
        for p in series.points
    ]
    caption = trend.describe(series)
    return plots.add(
        'trend',
        series.title,
        fig,
        ('session', 'date', 'value', 'n', 'reference', 'low', 'high', 'verdict'),
        rows,
        caption,
    )


def figure(series_list):
    """All series (up to MAX_PANELS) one above the other, for `clusterbench trend`."""
    shown = series_list[:MAX_PANELS]
    fig = plotkit.new_figure(8.5, 0.4 + 2.6 * len(shown))
    axes = fig.subplots(len(shown), 1, squeeze=False)[:, 0]
    for ax, series in zip(axes, shown):
        draw(ax, series)
        ax.set_title(plotkit.literal(plotkit.clip(series.title, 100)), loc='left')
    fig.tight_layout()
    return fig


def write(series_list, stem):
    """``<stem>.svg``, ``<stem>.png`` and ``<stem>.csv``; return their paths."""
    with matplotlib.rc_context(plotkit.RC):
        fig = figure(series_list)
        FigureCanvasAgg(fig)
        paths = []
        for ext in ('svg', 'png'):
            out = io.BytesIO()
            fig.savefig(
                out, format=ext, metadata={'Date': None} if ext == 'svg' else {}
            )
            path = f'{stem}.{ext}'
            with open(path, 'wb') as f:
                f.write(out.getvalue())
            paths.append(path)
    path = f'{stem}.csv'
    with open(path, 'w') as f:
        f.write(trend.csv_text(series_list))
    return [*paths, path]
