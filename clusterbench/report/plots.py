"""The report's plots: matplotlib SVG (vector) and the data of each as CSV.

Every plot is drawn from the data model of :mod:`clusterbench.report.assemble`
and comes with the rows it was drawn from. A missing figure is drawn as the
word "missing" (or the failure) where its bar would be, never as a zero bar.
Text from the data is never parsed as mathtext, and matplotlib escapes it in
the SVG it writes.

This module lists and draws every plot of a report (:func:`make_all`, in
forked workers when there are many); the charts are in :mod:`charts`,
:mod:`acceptcharts` and :mod:`trendplot`, what they share in :mod:`plotkit`.
"""

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor

import matplotlib

from clusterbench.report import curves as curvelib
from clusterbench.report import execcharts, heap
from clusterbench.report.acceptcharts import node_chart, pair_chart
from clusterbench.report.charts import (
    bar_chart,
    barrier_chart,
    comm_chart,
    scaling_chart,
    sensitivity_chart,
)
from clusterbench.report.plotkit import RC, PlotSet, new_figure, svg_of
from clusterbench.report.trendplot import trend_chart

_TASKS = []  # read by forked workers


def tasks(data):
    """(section, key, chart function, arguments) of every plot of the report."""
    out = execcharts.tasks(data)
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
        # The report's objects out of the collector's sight, here and in the
        # workers: the figures' cycles are the only garbage (see heap).
        with heap.frozen():
            drawn = _draw_all(todo, workers)
    finally:
        _TASKS = []
    ids = set()
    out = {'executive': [], 'applications': [], 'communication': [], 'scaling': [],
           'nodes': [], 'pairs': [], 'sensitivity': [], 'trends': []}  # fmt: skip
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


def _draw_all(todo, workers):
    if workers > 1 and len(todo) >= PARALLEL_FROM and _can_fork():
        _warm()
        context = multiprocessing.get_context('fork')
        with ProcessPoolExecutor(min(workers, len(todo)), mp_context=context) as pool:
            return list(pool.map(_draw, range(len(todo))))
    return [_draw(i) for i in range(len(todo))]


def _warm():
    """Draw one small figure here before forking, so that the font cache
    and text layout are set up once, not once in every worker."""
    with matplotlib.rc_context(RC):
        fig = new_figure(1, 1)
        ax = fig.add_axes([0.2, 0.2, 0.7, 0.7])
        ax.set_xscale('log')
        ax.set_title('warm')
        svg_of(fig)


#: Fewer plots than this are drawn in this process (forking costs more).
PARALLEL_FROM = 6


def _can_fork():
    return 'fork' in multiprocessing.get_all_start_methods()
