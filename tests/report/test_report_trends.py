"""The rules of a trend a reader can believe (clusterbench.judging.trend, as
the report's Trends section and `clusterbench trend` use it): no change point
from fewer than three undisturbed sessions on each side or at a DISTURBED
session, and a steady move reported as a drift per session, not as a step.
Fast: session medians, no ReFrame run (test_trend.py has the real runs)."""

import pytest

from clusterbench.judging import trend, verdict
from clusterbench.results import runreport


def _points(*medians, disturbed=()):
    return [
        trend.Point(
            f's{i}',
            1000.0 * i,
            [m * 0.99, m, m * 1.01],
            f'{verdict.DISTURBED} (steal 18 %)' if i in disturbed else 'pass',
            disturbed='steal 18 %' if i in disturbed else None,
        )
        for i, m in enumerate(medians)
    ]


def test_no_change_point_from_fewer_than_three_sessions_on_a_side():
    # The case: two sessions, one sample each.
    assert trend.change_point(_points(62.4, 16.0)) is None
    # Two before, three after: still too few before.
    assert trend.change_point(_points(100, 100, 85, 85, 85)) is None
    # Three on each side: found, at the first session after the move.
    change = trend.change_point(_points(100, 100, 100, 85, 85, 85))
    assert change.session == 's3' and change.shift == pytest.approx(-0.15)


def test_no_change_point_at_a_disturbed_session():
    # One DISTURBED session low in a steady history: no change point at all.
    points = _points(100, 101, 99, 60, 100, 101, 99, disturbed=(3,))
    assert trend.change_point(points) is None
    # A real step with a DISTURBED session on its edge: the step is named at
    # the first undisturbed session after it, and there are enough sessions
    # only because the DISTURBED one is not counted as one of them.
    points = _points(100, 100, 100, 40, 85, 85, 85, disturbed=(3,))
    change = trend.change_point(points)
    assert change.session == 's4' and change.index == 4
    assert trend.change_point(_points(100, 100, 40, 85, 85, 85, disturbed=(2,))) is None


def _sessions(*medians):
    """(uuid, start, figures) of one HPL figure per session, as read from
    stored reports (clusterbench.results.history.distinct_sessions)."""
    return [
        (
            f's{i}',
            1000.0 * i,
            [
                runreport.Figure(
                    'HPCCCheck', 'local', 'default', 'gnu', 'hpl', m, 'GFlop/s',
                    None, 'pass',
                )
            ],
        )
        for i, m in enumerate(medians)
    ]  # fmt: skip


def test_a_steady_drift_is_a_slope_per_session_not_a_step():
    # 2 % per session down over six sessions: the "-10 % step".
    medians = [100 * (1 - 0.02 * i) for i in range(6)]
    # The step test alone would call it a step...
    assert trend.change_point(_points(*medians)) is not None
    # ... the series calls it what it is.
    (series,) = trend.collect(_sessions(*medians))
    assert series.change is None
    assert series.drift.slope == pytest.approx(-0.02 / 0.95)
    assert series.drift.sessions == 6
    line = trend.describe(series)
    assert 'drifts -2.1% per session' in line and 'moved' not in line
    # A real step stays a step.
    (series,) = trend.collect(_sessions(100, 100, 100, 85, 85, 85))
    assert series.drift is None and series.change.session == 's3'


def test_a_step_is_no_drift_and_noise_is_neither():
    assert trend.drift_of(_points(100, 100, 100, 85, 85, 85)) is None
    assert trend.drift_of(_points(100, 103, 98, 101, 99, 102)) is None
    # Too small a move in all (under 5 %): no drift.
    assert trend.drift_of(_points(100, 99.8, 99.6, 99.4, 99.2, 99.0)) is None
