"""The trends section: figures measured in two or more sessions."""

from clusterbench.core.errors import ClusterbenchError
from clusterbench.judging import verdict
from clusterbench.report.model import Trends
from clusterbench.results import history

#: Trend plots in one report; the ones that moved, drifted or left their
#: band first (`clusterbench trend PATTERN` draws any of the others).
MAX_TRENDS = 12


def build(runs, limit=MAX_TRENDS):
    from clusterbench.judging import trend

    try:
        sessions = history.distinct_sessions([(run.source, run.data) for run in runs])
        series = trend.collect(sessions)
    except ClusterbenchError as err:
        return Trends(reason=f'no trend: {err}')
    drawn = [s for s in series if len(s.points) >= 2]
    if not drawn:
        return Trends(
            reason='every figure comes from one session (of its CPU kind and '
            'node count: two kinds are never one trend): a trend needs two or '
            'more (--history QUERY, or several reports)'
        )

    def judged_out(s):
        return any(verdict.kind(p.verdict) != verdict.PASS for p in s.points)

    drawn.sort(
        key=lambda s: (s.change is None and s.drift is None, not judged_out(s), s.title)
    )
    return Trends(series=drawn[:limit], omitted=max(len(drawn) - limit, 0))
