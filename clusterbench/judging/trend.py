"""`clusterbench trend`: each figure against the date of its session.

The sessions come from ReFrame's results database (``--history QUERY``)
and/or run reports, read by clusterbench.results.history. Per session and
figure the point is the median of its verified samples, judged against that
session's reference as ``compare`` judges it (pass, SLOWER, FASTER,
DISTURBED, ...); the reference band is drawn behind the points, so a slow
drift shows before it leaves the band.

The change point is found by a CUSUM of the session medians (the split where
the cumulative deviation from the mean is largest) and kept only when it is
real: the bootstrap interval of median(after) / median(before), over the
samples of the sessions on each side
(:func:`clusterbench.judging.stats.median_ratio_ci`),
excludes 1 and the shift is at least ``min_shift``. It names the first
session after the move. DISTURBED sessions are drawn but take no part: a
change point needs ``MIN_SIDE`` undisturbed sessions on each side, and a
figure that moves steadily (a straight line fits the sessions better than a
step) is a drift, reported as its slope per session, not as a step.
"""

import datetime
import io
import re
import statistics
from dataclasses import dataclass, field
from typing import Optional

from clusterbench.core import csvfile
from clusterbench.core.errors import ClusterbenchError
from clusterbench.judging import stats, verdict

#: A smaller shift between the sessions before and after is no change point.
DEFAULT_MIN_SHIFT = 0.05
#: Undisturbed sessions a change point needs on each side.
MIN_SIDE = 3
#: How many standard errors a drift's slope must be away from zero.
DRIFT_T = 3.0


@dataclass
class Point:
    session: str
    when: float  # unix time of the session's start
    values: list
    verdict: str
    reference: Optional[float] = None
    lower: Optional[float] = None
    upper: Optional[float] = None

    @property
    def value(self):
        return statistics.median(self.values)

    @property
    def band(self):
        if self.reference is None:
            return None
        return verdict.bounds(self.reference, self.lower, self.upper)

    @property
    def date(self):
        return datetime.datetime.fromtimestamp(self.when, datetime.timezone.utc)


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
    """A steady move: the least-squares slope of the session medians."""

    per_session: float  # relative to the mean of the medians
    sessions: int

    @property
    def total(self):
        return self.per_session * (self.sessions - 1)


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

    @property
    def title(self):
        where = f'{self.system}:{self.partition}, {self.environ}'
        return f'{self.test} {self.variable} ({where})'


def collect(sessions, pattern='.', min_shift=DEFAULT_MIN_SHIFT):
    """The series of every figure matching *pattern* (a regular expression
    searched in ``TEST:FIGURE``) over *sessions*, a list of (uuid, start,
    figures) oldest first (see clusterbench.results.history.distinct_sessions)."""
    try:
        regex = re.compile(pattern)
    except re.error as err:
        raise ClusterbenchError(f'figure pattern {pattern!r}: {err}') from None
    found = {}
    for uuid, when, figures in sessions:
        for judged in verdict.group(figures):
            if not regex.search(f'{judged.test}:{judged.variable}'):
                continue
            key = (
                judged.test,
                judged.system,
                judged.partition,
                judged.environ,
                judged.variable,
            )
            series = found.get(key)
            if series is None:
                series = found[key] = Series(*key, judged.unit)
            series.points.append(
                Point(
                    uuid,
                    when,
                    list(judged.values),
                    judged.verdict,
                    judged.reference,
                    judged.lower,
                    judged.upper,
                )
            )
    for series in found.values():
        series.drift = drift(series.points, min_shift)
        if series.drift is None:
            series.change = change_point(series.points, min_shift)
    return list(found.values())


def _undisturbed(points):
    """(index in *points*, point) of the sessions that were not DISTURBED."""
    return [
        (i, p)
        for i, p in enumerate(points)
        if verdict.kind(p.verdict) != verdict.DISTURBED
    ]


def _sse(values):
    """The sum of squared deviations from the mean."""
    mean = statistics.fmean(values)
    return sum((v - mean) ** 2 for v in values)


def drift(points, min_shift=DEFAULT_MIN_SHIFT):
    """The steady move of the undisturbed sessions (a :class:`Drift`) when a
    straight line fits their medians better than any step, its slope is
    DRIFT_T standard errors from zero and the whole move reaches *min_shift*;
    else None."""
    kept = [p.value for _, p in _undisturbed(points)]
    n = len(kept)
    if n < 3:
        return None
    mean = statistics.fmean(kept)
    if not mean:
        return None
    xbar = (n - 1) / 2
    sxx = sum((x - xbar) ** 2 for x in range(n))
    slope = sum((x - xbar) * (y - mean) for x, y in enumerate(kept)) / sxx
    line = sum((y - mean - slope * (x - xbar)) ** 2 for x, y in enumerate(kept))
    step = min(_sse(kept[:k]) + _sse(kept[k:]) for k in range(1, n))
    if line > step or abs(slope * (n - 1) / mean) < min_shift:
        return None
    error = (line / (n - 2) / sxx) ** 0.5 if n > 2 else 0.0
    if error and abs(slope) / error < DRIFT_T:
        return None
    return Drift(slope / mean, n)


def change_point(points, min_shift=DEFAULT_MIN_SHIFT):
    """The session where the figure moved (a :class:`Change`), or None.

    Only undisturbed sessions count, and MIN_SIDE of them on each side."""
    kept = _undisturbed(points)
    if len(kept) < 2 * MIN_SIDE:
        return None
    medians = [p.value for _, p in kept]
    mean = statistics.fmean(medians)
    cusum, best, split = 0.0, -1.0, None
    for k, value in enumerate(medians[:-1], start=1):
        cusum += value - mean
        if MIN_SIDE <= k <= len(kept) - MIN_SIDE and abs(cusum) > best:
            best, split = abs(cusum), k
    before = [v for _, p in kept[:split] for v in p.values]
    after = [v for _, p in kept[split:] for v in p.values]
    base = statistics.median(before)
    if not base:
        return None
    ci = stats.median_ratio_ci(after, before)
    low, point, high = ci
    if (low > 1 or high < 1) and abs(point - 1) >= min_shift:
        index, first = kept[split]
        return Change(index, first.session, base, statistics.median(after), ci)
    return None


CSV_HEADER = (
    'test',
    'system',
    'partition',
    'environment',
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
                    s.variable,
                    s.unit,
                    p.session,
                    p.date.isoformat(timespec='seconds'),
                    repr(p.value),
                    len(p.values),
                    '' if p.reference is None else repr(p.reference),
                    '' if low is None else repr(low),
                    '' if high is None else repr(high),
                    p.verdict,
                    f'{s.change.shift:+.1%}' if moved else '',
                ]
            )
    return out.getvalue()


def describe(series):
    """One line: the sessions, and where the figure moved (or that it did not)."""
    n = len(series.points)
    head = f'{series.title}: {n} session{"s" * (n != 1)}'
    if series.drift is not None:
        d = series.drift
        return (
            f'{head}, drifting {d.per_session:+.1%} per session '
            f'({d.total:+.1%} over {d.sessions} undisturbed sessions)'
        )
    if series.change is None:
        return f'{head}, no change point'
    c = series.change
    when = series.points[c.index].date.strftime('%Y-%m-%d %H:%M UTC')
    return (
        f'{head}, moved {c.shift:+.1%} ({c.before:.4g} -> {c.after:.4g} '
        f'{series.unit}) at session {c.session} ({when})'
    )
