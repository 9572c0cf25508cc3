"""`clusterbench trend`: each figure against the date of its session.

The sessions come from ReFrame's results database (``--history QUERY``)
and/or run reports, read by clusterbench.results.history. Per session and
figure the point is the median of its verified samples, judged against that
session's reference as ``compare`` judges it (pass, SLOWER, FASTER,
DISTURBED, ...); the reference band is drawn behind the points, so a slow
drift shows before it leaves the band.

A series is one figure of one identity: a test at 1 and at 2 nodes, or on
two CPU kinds of one partition, is two series, never one that steps.

DISTURBED samples (judging.disturbed) are shown as points of their own and
never pooled: they take no part in a change point or a drift, and how many
were left out is said, one line per kind of disturbance.

A figure moves in one of two ways. A **step**: found by a CUSUM of the
session medians (the split where the cumulative deviation from the mean is
largest, with at least :data:`MIN_SIDE` undisturbed sessions on each side)
and kept only when it is real: the bootstrap interval of median(after) /
median(before), over the samples of the sessions on each side
(:func:`clusterbench.judging.stats.median_ratio_ci`), excludes 1 and the
shift is at least ``min_shift``. It names the first session after the move.
A **drift**: a monotone trend (Mann-Kendall, 95 %) whose Theil-Sen slope
moves the figure by at least ``min_shift`` over the sessions; it is
reported as a slope per session. When both are found, the one that fits
the session medians better (smaller squared residuals) is reported: a steady
2 %/session decline is a drift, not a step.
"""

import datetime
import io
import re
import statistics
from dataclasses import dataclass, field
from typing import Optional

from clusterbench.core import csvfile
from clusterbench.core.errors import ClusterbenchError
from clusterbench.core.reference import Reference
from clusterbench.judging import stats, verdict

#: A smaller shift between the sessions before and after is no change point.
DEFAULT_MIN_SHIFT = 0.05
#: Undisturbed sessions needed on each side of a change point.
MIN_SIDE = 3
#: |Mann-Kendall z| of a drift (95 %, two-sided).
DRIFT_Z = 1.96


@dataclass
class Point:
    session: str
    when: float  # unix time of the session's start
    values: list
    verdict: str
    ref: Optional[Reference] = None
    #: What this session's samples broke (judging.disturbed), or None.
    disturbed: Optional[str] = None

    @property
    def value(self):
        return statistics.median(self.values)

    @property
    def band(self):
        return None if self.ref is None else self.ref.band()

    @property
    def date(self):
        return datetime.datetime.fromtimestamp(self.when, datetime.UTC)


@dataclass
class Change:
    index: int  # of the first point after the move
    session: str
    before: float
    after: float
    ci: tuple  # bootstrap interval of after / before

    @property
    def shift(self):
        return self.after / self.before - 1


@dataclass
class Drift:
    slope: float  # relative change per session, of the series' centre
    first: float  # fitted value at the first undisturbed session
    last: float  # ... and at the last
    sessions: int
    z: float  # Mann-Kendall


@dataclass
class Series:
    test: str
    system: str
    partition: str
    environ: str
    variable: str
    unit: str
    points: list = field(default_factory=list)
    change: Optional[Change] = None
    drift: Optional[Drift] = None
    #: Nodes of the test case (0: the report does not say); a test at 1 and
    #: at 2 nodes is two series, never one that steps.
    nodes: int = 0
    #: The nodes' CPU kind ('' where the reports do not say): a Zen 3 and a
    #: Zen 4 session of one partition are two series, never one that steps.
    cpu_kind: str = ''
    #: Set where another series differs from this one by its kind alone:
    #: the title then names the kind.
    kinds_differ: bool = False

    @property
    def title(self):
        where = f'{self.system}:{self.partition}, {self.environ}'
        if self.nodes > 1:
            where += f', {self.nodes} nodes'
        if self.kinds_differ:
            where += f', {self.cpu_kind or "CPU ?"}'
        return f'{self.test} {self.variable} ({where})'


def collect(sessions, pattern='.', min_shift=DEFAULT_MIN_SHIFT, left_out=None):
    """The series of every figure matching *pattern* (a regular expression
    searched in ``TEST:FIGURE``) over *sessions*, a list of (uuid, start,
    figures) oldest first (see clusterbench.results.history.distinct_sessions).
    The DISTURBED samples of those figures are counted in *left_out*
    (a :class:`~clusterbench.judging.disturbed.LeftOut`), when given."""
    try:
        regex = re.compile(pattern)
    except re.error as err:
        raise ClusterbenchError(f'figure pattern {pattern!r}: {err}') from None
    found = {}
    for uuid, when, figures in sessions:
        for judged in verdict.group(figures):
            if not regex.search(f'{judged.test}:{judged.variable}'):
                continue
            nodes = max((o.num_nodes for o in judged.origins), default=0)
            kind = '+'.join(sorted({o.cpu_kind for o in judged.origins} - {''}))
            key = (
                judged.test,
                judged.system,
                judged.partition,
                judged.environ,
                judged.variable,
            )
            series = found.get((*key, nodes, kind))
            if series is None:
                series = found[(*key, nodes, kind)] = Series(
                    *key, judged.unit, nodes=nodes, cpu_kind=kind
                )
            if judged.disturbed and left_out is not None:
                left_out.add(judged.disturbed, uuid, len(judged.values))
            series.points.append(
                Point(
                    uuid,
                    when,
                    list(judged.values),
                    judged.verdict,
                    judged.ref,
                    judged.disturbed,
                )
            )
    kinds = {}
    for *key, kind in found:
        kinds.setdefault(tuple(key), set()).add(kind)
    for (*key, _), series in found.items():
        series.kinds_differ = len(kinds[tuple(key)]) > 1
        series.change, series.drift = movement(series.points, min_shift)
    return list(found.values())


def movement(points, min_shift=DEFAULT_MIN_SHIFT):
    """``(change, drift)`` of a series, at most one of them set: the step
    or the drift that fits its undisturbed session medians better."""
    change = change_point(points, min_shift)
    found = drift_of(points, min_shift)
    if change is None or found is None:
        return change, found
    steady = [p.value for p in points if not p.disturbed]
    split = sum(1 for p in points[: change.index] if not p.disturbed)
    before, after = steady[:split], steady[split:]
    step_sse = _sse(before, statistics.fmean(before)) + _sse(
        after, statistics.fmean(after)
    )
    slope, intercept = _least_squares(steady)
    line_sse = sum((v - intercept - slope * i) ** 2 for i, v in enumerate(steady))
    return (None, found) if line_sse <= step_sse else (change, None)


def _sse(values, centre):
    return sum((v - centre) ** 2 for v in values)


def _least_squares(values):
    n = len(values)
    xbar, ybar = (n - 1) / 2, statistics.fmean(values)
    sxx = sum((i - xbar) ** 2 for i in range(n))
    slope = sum((i - xbar) * (v - ybar) for i, v in enumerate(values)) / sxx
    return slope, ybar - slope * xbar


def change_point(points, min_shift=DEFAULT_MIN_SHIFT, min_side=MIN_SIDE):
    """The session where the figure stepped (a :class:`Change`), or None:
    never from fewer than *min_side* undisturbed sessions on each side, and
    never at a DISTURBED one (their samples take no part)."""
    steady = [i for i, p in enumerate(points) if not p.disturbed]
    if len(steady) < 2 * min_side:
        return None
    medians = [points[i].value for i in steady]
    mean = statistics.fmean(medians)
    cusum, best, split = 0.0, -1.0, None
    for k, value in enumerate(medians[:-1], start=1):
        cusum += value - mean
        if min_side <= k <= len(medians) - min_side and abs(cusum) > best:
            best, split = abs(cusum), k
    before = [v for i in steady[:split] for v in points[i].values]
    after = [v for i in steady[split:] for v in points[i].values]
    base = statistics.median(before)
    if not base:
        return None
    ci = stats.median_ratio_ci(after, before)
    low, point, high = ci
    if (low > 1 or high < 1) and abs(point - 1) >= min_shift:
        at = steady[split]
        return Change(at, points[at].session, base, statistics.median(after), ci)
    return None


def drift_of(points, min_shift=DEFAULT_MIN_SHIFT):
    """A steady monotone drift of the undisturbed session medians (a
    :class:`Drift`), or None: significant (Mann-Kendall) and moving the
    figure by at least *min_shift* over the sessions."""
    medians = [p.value for p in points if not p.disturbed]
    if len(medians) < 2 * MIN_SIDE - 1:
        return None
    z = stats.mann_kendall_z(medians)
    slope, intercept = stats.theil_sen(medians)
    first, last = intercept, intercept + slope * (len(medians) - 1)
    centre = stats.median(medians)
    if abs(z) < DRIFT_Z or not centre or not first:
        return None
    if abs(last / first - 1) < min_shift:
        return None
    return Drift(slope / abs(centre), first, last, len(medians), z)


CSV_HEADER = (
    'test',
    'system',
    'partition',
    'environment',
    'nodes',
    'cpu kind',
    'variable',
    'unit',
    'session',
    'date',
    'value',
    'n',
    'reference',
    'allowed low',
    'allowed high',
    'verdict',
    'change point',
    'drift per session',
    'disturbed',
)


def csv_text(series_list):
    out = io.StringIO()
    writer = csvfile.writer(out, lineterminator='\n')
    writer.writerow(CSV_HEADER)
    for s in series_list:
        for i, p in enumerate(s.points):
            low, high = p.band or (None, None)
            moved = s.change is not None and s.change.index == i
            writer.writerow(
                [
                    s.test,
                    s.system,
                    s.partition,
                    s.environ,
                    s.nodes or '',
                    s.cpu_kind,
                    s.variable,
                    s.unit,
                    p.session,
                    p.date.isoformat(timespec='seconds'),
                    repr(p.value),
                    len(p.values),
                    '' if p.ref is None else repr(p.ref.value),
                    '' if low is None else repr(low),
                    '' if high is None else repr(high),
                    p.verdict,
                    f'{s.change.shift:+.1%}' if moved else '',
                    f'{s.drift.slope:+.2%}' if s.drift else '',
                    p.disturbed or '',
                ]
            )
    return out.getvalue()


def describe(series):
    """One line: the sessions, and how the figure moved (a step or a drift)
    or that it did not."""
    steady = [p for p in series.points if not p.disturbed]
    n = len({p.session for p in steady})
    head = f'{series.title}: {n} session{"s" * (n != 1)}'
    left = sum(len(p.values) for p in series.points if p.disturbed)
    if left:
        head += f' ({left} DISTURBED sample{"s" * (left != 1)} left out)'
    if series.drift is not None:
        d = series.drift
        return (
            f'{head}, drifts {d.slope:+.1%} per session over {d.sessions} '
            f'sessions ({d.first:.4g} -> {d.last:.4g} {series.unit})'
        )
    if series.change is None:
        why = ''
        if n < 2 * MIN_SIDE:
            why = (
                f' (a change point needs {MIN_SIDE} undisturbed sessions on each side)'
            )
        return f'{head}, no change point{why}'
    c = series.change
    when = series.points[c.index].date.strftime('%Y-%m-%d %H:%M UTC')
    return (
        f'{head}, moved {c.shift:+.1%} ({c.before:.4g} -> {c.after:.4g} '
        f'{series.unit}) at session {c.session} ({when})'
    )
