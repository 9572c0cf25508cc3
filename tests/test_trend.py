"""`clusterbench trend` on six real stored sessions in which a figure steps down.

The CG solver (class S, one test) runs six times through ReFrame into one
results database. The solver's iteration count is deterministic: 59 at the
default tolerance 1e-8, 50 at 5e-7. Sessions 4 to 6 run with the looser
tolerance, so the figure really steps down by 15 % at session 4 (a change
point needs three sessions on each side); the iteration reference
(59 ± 3 %) makes sessions 4 to 6 flagged points.
"""

import csv
import io
import json
import os
import sqlite3
import subprocess

import pytest
import rfm
from conftest import PROJECT
from rfm import classic_cg_references, reframe, tool

from clusterbench.judging import trend, verdict

pytestmark = pytest.mark.integration

SELECT = rfm.TINY_CG


@pytest.fixture(scope='module')
def history(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('trend')
    classic_cg_references(tmp / 'refs', iterations=[59.0, -0.03, 0.03, 'iterations'])
    db = tmp / 'results.db'
    env = {'RFM_SQLITE_DB_FILE': str(db), 'RFM_REFERENCE_PREFIX': str(tmp / 'refs')}
    uuids = []
    for i, tolerance in enumerate(('1e-8',) * 3 + ('5e-7',) * 3):
        rc, out, report = reframe(
            tmp / f's{i}', *SELECT, '-S', f'tolerance={tolerance}', env=env
        )
        assert report is not None, out
        uuids.append(report['session_info']['uuid'])
    with sqlite3.connect(db) as conn:
        stored = [row[0] for row in conn.execute('SELECT uuid FROM sessions')]
    assert sorted(stored) == sorted(uuids)
    return tmp, uuids


def trend_command(tmp, *args):
    return subprocess.run(
        [tool('clusterbench'), 'trend', *args],
        capture_output=True,
        text=True,
        cwd=PROJECT,
        env={**os.environ, 'RFM_SQLITE_DB_FILE': str(tmp / 'results.db')},
        timeout=600,
    )


def test_the_step_is_drawn_and_its_session_named(history):
    tmp, uuids = history
    stem = tmp / 'out' / 'trend'
    result = trend_command(
        tmp, 'CGSolverCheck.*:iterations$', '--history', 'now-1d:now', '-o', str(stem)
    )
    assert result.returncode == 0, result.stderr
    (line,) = [x for x in result.stdout.splitlines() if 'iterations' in x]
    assert 'moved -15.3% (59 -> 50 iterations)' in line
    assert f'at session {uuids[3]}' in line

    rows = list(csv.DictReader(io.StringIO((tmp / 'out' / 'trend.csv').read_text())))
    assert [r['session'] for r in rows] == uuids
    assert [float(r['value']) for r in rows] == [59, 59, 59, 50, 50, 50]
    assert [r['verdict'] for r in rows] == ['pass'] * 3 + ['FLAGGED'] * 3
    assert [r['change point'] for r in rows] == ['', '', '', '-15.3%', '', '']
    assert float(rows[0]['allowed low']) == pytest.approx(59 * 0.97)

    svg = (tmp / 'out' / 'trend.svg').read_text()
    assert f'moved -15.3% at session {uuids[3][:8]}' in svg
    assert 'reference band' in svg and 'SLOWER / WORSE / FLAGGED' in svg
    assert (tmp / 'out' / 'trend.png').read_bytes()[:4] == b'\x89PNG'


def test_sessions_at_one_level_have_no_change_point(history):
    tmp, _ = history
    # Sessions 5 and 6 (same tolerance), as stored session directories.
    result = trend_command(
        tmp,
        'CGSolverCheck.*:iterations$',
        str(tmp / 's4'),
        str(tmp / 's5'),
        '-o',
        str(tmp / 'level'),
    )
    assert result.returncode == 0, result.stderr
    assert '2 sessions, no change point' in result.stdout


def test_bad_input_is_one_line(history):
    tmp, _ = history
    result = trend_command(tmp, 'nosuchfigure', '--history', 'now-1d:now')
    assert result.returncode == 2
    assert "no figure matches 'nosuchfigure' in 6 session(s)" in result.stderr
    result = trend_command(tmp, '(', '--history', 'now-1d:now')
    assert result.returncode == 2 and 'Traceback' not in result.stderr


def _points(*medians, spread=0.0):
    return [
        trend.Point(
            f's{i}', 1000.0 * i, [m * (1 - spread), m, m * (1 + spread)], 'pass'
        )
        for i, m in enumerate(medians)
    ]


def test_change_point_rule():
    # A step in the middle of a longer history is placed at its session.
    change = trend.change_point(_points(100, 101, 99, 100, 85, 86, 84, 85))
    assert change.session == 's4' and change.shift == pytest.approx(-0.15, abs=0.01)
    # Noise around one level: none.
    assert trend.change_point(_points(100, 103, 98, 101, 99, 102)) is None
    # A real but small move (2 %) is below min_shift.
    assert trend.change_point(_points(100, 100, 102, 102)) is None
    # Samples that overlap across the split: not significant.
    assert trend.change_point(_points(100, 92, 100, 92, spread=0.2)) is None
    assert trend.change_point(_points(100)) is None


def test_report_data_orders_moved_figures_first(history):
    from clusterbench.report import assemble

    tmp, _ = history
    runs = []
    for i in range(6):
        path = tmp / f's{i}' / 'report.json'
        runs += assemble.load_reports([str(path)])
    data = assemble.assemble(runs)
    assert not data.trends.empty
    series = data.trends.series
    moved = [s.change is not None for s in series]
    assert moved == sorted(moved, reverse=True)  # moved figures first
    (its,) = [s for s in series if s.variable == 'iterations']
    uuid = json.loads((tmp / 's3' / 'report.json').read_text())['session_info']
    assert its.change.session == uuid['uuid']
    assert verdict.kind(its.points[3].verdict) == verdict.FLAGGED
