"""`clusterbench trend` on real stored sessions in which a figure steps down.

The CG solver (class S, one test) runs three times through ReFrame into one
results database. The solver's iteration count is deterministic: 59 at the
default tolerance 1e-8, 50 at 5e-7. Sessions 2 and 3 run with the looser
tolerance, so the figure really steps down by 15 % at session 2; the
iteration reference (59 ± 3 %) makes sessions 2 and 3 flagged points.

A change point needs three undisturbed sessions on each side: the three
sessions alone have none, and six (each real report once more, as another
session a second later) have it at the first of the looser ones.
"""

import csv
import io
import json
import os
import sqlite3
import subprocess
import uuid as uuidlib

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
    for i, tolerance in enumerate(('1e-8', '5e-7', '5e-7')):
        rc, out, report = reframe(
            tmp / f's{i}',
            *SELECT,
            '-S',
            f'tolerance={tolerance}',
            env=env,
            checks=rfm.CG_CHECKS,
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


def again(tmp, source, name, seconds=1, **case):
    """Another session from the real report of *source*: a new uuid, a start
    *seconds* later, and *case* set in every test case."""
    data = json.loads((tmp / source / 'report.json').read_text())
    info = data['session_info']
    info['uuid'] = str(uuidlib.uuid4())
    info['time_start_unix'] += seconds
    for run in data['runs']:
        for one in run['testcases']:
            one.update(case)
    path = tmp / name / 'report.json'
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(data))
    return info['uuid']


@pytest.fixture(scope='module')
def six(history):
    """s0, two more like it, s1, s2 and one more like s2: 3 + 3 sessions."""
    tmp, uuids = history
    made = [again(tmp, 's0', 's0a', 1), again(tmp, 's0', 's0b', 2)]
    made.append(again(tmp, 's2', 's2a', 1))
    order = [uuids[0], *made[:2], uuids[1], uuids[2], made[2]]
    return tmp, ['s0', 's0a', 's0b', 's1', 's2', 's2a'], order


def test_the_step_is_drawn_and_its_session_named(six):
    tmp, dirs, uuids = six
    stem = tmp / 'out' / 'trend'
    result = trend_command(
        tmp, 'CGSolverCheck.*:iterations$', *[str(tmp / d) for d in dirs],
        '-o', str(stem),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    (line,) = [x for x in result.stdout.splitlines() if 'iterations' in x]
    assert 'moved -15.3% (59 -> 50 iterations)' in line
    assert f'at session {uuids[3]}' in line

    rows = list(csv.DictReader(io.StringIO((tmp / 'out' / 'trend.csv').read_text())))
    assert [r['session'] for r in rows] == uuids
    assert [float(r['value']) for r in rows] == [59] * 3 + [50] * 3
    assert [r['verdict'] for r in rows] == ['pass'] * 3 + ['FLAGGED'] * 3
    assert [r['change point'] for r in rows] == ['', '', '', '-15.3%', '', '']
    assert float(rows[0]['allowed low']) == pytest.approx(59 * 0.97)

    svg = (tmp / 'out' / 'trend.svg').read_text()
    assert f'moved -15.3% at session {uuids[3][:8]}' in svg
    assert 'reference band' in svg and 'SLOWER / FLAGGED' in svg
    assert (tmp / 'out' / 'trend.png').read_bytes()[:4] == b'\x89PNG'


def test_three_sessions_have_no_change_point(history):
    tmp, _ = history
    result = trend_command(
        tmp, 'CGSolverCheck.*:iterations$', '--history', 'now-1d:now', '-o',
        str(tmp / 'three'),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert (
        '3 sessions, no change point (a change point needs 3 undisturbed '
        'sessions on each side)' in result.stdout
    )


def test_disturbed_samples_are_left_out_and_said(six):
    tmp, dirs, uuids = six
    # A disturbed session with the old figure, after the step: left out, it
    # moves nothing.
    late = again(tmp, 's2', 'late', 60, disturbed='steal 18 %')
    data = json.loads((tmp / 'late' / 'report.json').read_text())
    for run in data['runs']:
        for one in run['testcases']:
            for values in one['perfvalues'].values():
                if values[4] == 'iterations':
                    values[0] = 59.0
    (tmp / 'late' / 'report.json').write_text(json.dumps(data))
    result = trend_command(
        tmp, 'CGSolverCheck.*:iterations$', *[str(tmp / d) for d in dirs],
        str(tmp / 'late'), '-o', str(tmp / 'late-trend'),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert (
        'left out 1 DISTURBED sample of 1 session: steal (e.g. steal 18 %)'
        in result.stdout
    )
    (line,) = [x for x in result.stdout.splitlines() if 'iterations (' in x]
    assert '6 sessions (1 DISTURBED sample left out), moved -15.3%' in line
    rows = list(csv.DictReader(io.StringIO((tmp / 'late-trend.csv').read_text())))
    assert rows[-1]['session'] == late and rows[-1]['disturbed'] == 'steal 18 %'
    assert rows[-1]['verdict'].startswith('DISTURBED')


def test_the_references_in_use_judge_the_points(six, tmp_path):
    tmp, dirs, _ = six
    refs = tmp_path / 'refs'
    classic_cg_references(refs, iterations=[50.0, -0.03, 0.03, 'iterations'])
    result = subprocess.run(
        [tool('clusterbench'), 'trend', 'CGSolverCheck.*:iterations$',
         *[str(tmp / d) for d in dirs], '-o', str(tmp_path / 't')],
        capture_output=True, text=True, cwd=PROJECT, timeout=600,
        env={**os.environ, 'RFM_REFERENCE_PREFIX': str(refs)},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert f'references: {refs} ($RFM_REFERENCE_PREFIX)' in result.stdout
    rows = list(csv.DictReader(io.StringIO((tmp_path / 't.csv').read_text())))
    assert [r['verdict'] for r in rows] == ['FLAGGED'] * 3 + ['pass'] * 3
    assert {float(r['reference']) for r in rows} == {50.0}


def test_a_test_at_two_nodes_is_a_series_of_its_own(history):
    tmp, _ = history
    # Three sessions at one node (59 iterations), three at two (50): one
    # series would step by -15 %; they are two, each level.
    dirs = ['s0']
    for i in (1, 2):
        dirs.append(f'n1-{i}')
        again(tmp, 's0', dirs[-1], i)
    for i, source in enumerate(('s1', 's2', 's2')):
        dirs.append(f'n2-{i}')
        again(tmp, source, dirs[-1], 10 + i, num_nodes=2, job_nodelist=['a', 'b'])
    result = trend_command(
        tmp, 'CGSolverCheck.*:iterations$', *[str(tmp / d) for d in dirs],
        '-o', str(tmp / 'nodes'),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = [x for x in result.stdout.splitlines() if 'iterations (' in x]
    assert len(lines) == 2, result.stdout
    two = [x for x in lines if ', 2 nodes):' in x]
    assert len(two) == 1, lines
    for line in lines:
        assert '3 sessions, no change point' in line, line
    rows = list(csv.DictReader(io.StringIO((tmp / 'nodes.csv').read_text())))
    assert sorted(r['nodes'] for r in rows) == ['1'] * 3 + ['2'] * 3


def test_sessions_at_one_level_have_no_change_point(history):
    tmp, _ = history
    # Sessions 2 and 3 (same tolerance), as stored session directories.
    result = trend_command(
        tmp,
        'CGSolverCheck.*:iterations$',
        str(tmp / 's1'),
        str(tmp / 's2'),
        '-o',
        str(tmp / 'level'),
    )
    assert result.returncode == 0, result.stderr
    assert '2 sessions, no change point' in result.stdout


def test_bad_input_is_one_line(history):
    tmp, _ = history
    result = trend_command(tmp, 'nosuchfigure', '--history', 'now-1d:now')
    assert result.returncode == 2
    assert "no figure matches 'nosuchfigure' in 3 session(s)" in result.stderr
    result = trend_command(tmp, '(', '--history', 'now-1d:now')
    assert result.returncode == 2 and 'Traceback' not in result.stderr


def _points(*medians, spread=0.0):
    return [
        trend.Point(
            f's{i}', 1000.0 * i, [m * (1 - spread), m, m * (1 + spread)], 'pass'
        )
        for i, m in enumerate(medians)
    ]


def test_no_change_point_at_a_disturbed_session_nor_from_two_sides_of_two():
    points = _points(100, 100, 100, 85, 85, 85, 85)
    points[3].disturbed = 'steal 18 %'
    change = trend.change_point(points)
    assert change.index == 4 and change.session == 's4'
    assert trend.change_point(_points(100, 100, 85, 85)) is None
    assert trend.change_point(_points(100, 100, 100, 85, 85)) is None


def test_a_steady_drift_is_a_drift_not_a_step():
    points = _points(*[100 * (1 - 0.02 * i) for i in range(10)])
    change, drift = trend.movement(points)
    assert change is None
    assert drift.slope == pytest.approx(-0.02 / 0.91, rel=0.01)
    assert drift.sessions == 10
    series = trend.Series('T', 'local', 'default', 'gnu', 'gflops', 'GFlop/s')
    series.points, series.drift = points, drift
    assert 'drifts -2.2% per session over 10 sessions (100 -> 82 GFlop/s)' in (
        trend.describe(series)
    )
    # A step stays a step.
    change, drift = trend.movement(_points(100, 101, 99, 100, 85, 86, 84, 85))
    assert drift is None and change.session == 's4'


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


def test_report_data_orders_moved_figures_first(six):
    from clusterbench.report import assemble

    tmp, dirs, uuids = six
    runs = []
    for name in dirs:
        path = tmp / name / 'report.json'
        runs += assemble.load_reports([str(path)])
    data = assemble.assemble(runs)
    assert not data.trends.empty
    series = data.trends.series
    moved = [s.change is not None for s in series]
    assert moved == sorted(moved, reverse=True)  # moved figures first
    (its,) = [s for s in series if s.variable == 'iterations']
    assert its.change.session == uuids[3]
    assert verdict.kind(its.points[3].verdict) == verdict.FLAGGED
