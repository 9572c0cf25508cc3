"""The bad-input matrix, round 4 (issue 39): A/B sessions and machine outputs.

Classes 59-63: `ab --judge` on extreme figures and on a malformed ab.json,
`ab` with an environment that does not exist, an interrupted A/B session,
JSON that stays JSON when a figure overflows, and the report's CSV headers.
Each drives the real `clusterbench` on stored sessions (the A/B legs are run
reports as ReFrame writes them; tests/sessions/test_ab_run.py runs real ones) and
asserts the exact line, the exit code and that no stored file changed.
"""

import csv
import json
import os
import subprocess

import pytest
from badinput import hashes
from conftest import FIXTURES, PROJECT
from rfm import tool
from test_reftransaction import run_report

from clusterbench.judging import paired

SESSION = os.path.join(FIXTURES, 'sessions', 'AMD-25-1', 'report.json')


def cb(*args, cwd=PROJECT):
    return subprocess.run(
        [tool('clusterbench'), *map(str, args)],
        capture_output=True, text=True, cwd=cwd, timeout=600,
    )  # fmt: skip


def one_error(done, line):
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.splitlines() == [line], done.stderr
    assert 'Traceback' not in done.stdout


def strict_json(text):
    """*text* parsed as a strict parser would: no NaN, no Infinity."""

    def refuse(token):
        raise ValueError(f'{token} is not JSON')

    return json.loads(text, parse_constant=refuse)


def ab_session(prefix, blocks=3, planned=None, a=1.0, b=1.1, values=None, legs=None):
    """A stored A/B session of *blocks* ABBA/BAAB blocks (*planned* of them
    asked for), each leg a CG solver report *a* or *b* times its reference
    (or exactly *values*[arm]); the first *legs* legs only when given."""
    prefix.mkdir(parents=True)
    stored, number = [], 0
    for block in range(blocks):
        for arm in paired.block_order(block):
            number += 1
            sub = prefix / f'{number:02d}-{arm}'
            sub.mkdir()
            report = sub / 'report.json'
            factor = (a if arm == paired.A else b) * (1 + 0.002 * (number % 3))
            run_report(report, files=('cgsolver',), factor=factor)
            if values:
                data = json.loads(report.read_text())
                for case in data['runs'][0]['testcases']:
                    for figure in case['perfvalues'].values():
                        figure[0] = values[arm]
                report.write_text(json.dumps(data))
            leg = {'arm': arm, 'block': block, 'report': f'{sub.name}/report.json'}
            stored.append({**leg, 'status': 0})
    planned = planned or blocks
    plan = {
        'config': 'site_configs/local.py',
        'checks': 'reframe_checks',
        'repeats': planned,
        'max_blocks': 2 * planned,
        'resolve': None,
        'extra': [],
        'arms': {
            'A': {'system': 'local', 'args': ['-p', 'gnu-openmpi']},
            'B': {'system': 'local', 'args': ['-p', 'gnu-mpich']},
        },
        'legs': stored[:legs] if legs else stored,
    }
    (prefix / 'ab.json').write_text(json.dumps(plan, indent=1))
    return prefix


# --- 59. ab --judge on extreme figures, on a malformed ab.json ---------------


def test_59_extreme_figures_are_a_clear_result(tmp_path):
    prefix = ab_session(tmp_path / 'ab', values={'A': 1e-300, 'B': 1e300})
    before = hashes(tmp_path)
    done = cb('ab', '--judge', prefix)
    assert done.returncode == 1, done.stdout + done.stderr
    assert 'Traceback' not in done.stdout + done.stderr
    (time,) = [line for line in done.stdout.splitlines() if ' time ' in line]
    assert 'inf [-]' in time and time.endswith('SLOWER'), time
    rows = strict_json(cb('ab', '--judge', prefix, '--format', 'json').stdout)
    (row,) = [r for r in rows if r['variable'] == 'time']
    assert row['B/A'] is None and row['not_finite']['B/A'] == 'inf'
    assert row['verdict'] == 'SLOWER'
    assert hashes(tmp_path) == before


def _del(key):
    return lambda plan: plan.pop(key)


def _set(where, value):
    def edit(plan):
        *path, last = where
        target = plan
        for key in path:
            target = target[key]
        target[last] = value

    return edit


MALFORMED = {
    'missing-arms': (_del('arms'), 'arms: missing'),
    'block-infinity': (
        _set(('legs', 0, 'block'), float('inf')),
        'legs[0].block: Infinity is not a block number (a whole number, 0 or more)',
    ),
    'report-5': (
        _set(('legs', 1, 'report'), 5),
        'legs[1].report: 5 is not a report path inside the session',
    ),
    'report-outside': (
        _set(('legs', 1, 'report'), '../../etc/passwd'),
        'legs[1].report: "../../etc/passwd" is not a report path inside the session',
    ),
    'arm-c': (
        _set(('legs', 2, 'arm'), 'C'),
        'legs[2].arm: "C" is not an arm (A or B)',
    ),
    'resolve-x': (
        _set(('resolve',), 'x'),
        'resolve: "x" is not a fraction between 0 and 1',
    ),
    'legs-5': (_set(('legs',), 5), 'legs: 5 is not a list'),
    'arm-without-system': (
        _set(('arms', 'A'), {'args': []}),
        'arms.A.system: missing',
    ),
    'repeats-text': (
        _set(('repeats',), '8'),
        'repeats: "8" is not a whole number, 1 or more',
    ),
    'block-beyond-the-plan': (
        _set(('legs', 0, 'block'), 99),
        'legs[0].block: 99 is beyond the plan (max_blocks 6)',
    ),
}


@pytest.mark.parametrize('case', MALFORMED)
def test_59_a_malformed_ab_json_is_one_line(tmp_path, case):
    edit, said = MALFORMED[case]
    prefix = ab_session(tmp_path / 'ab')
    plan = json.loads((prefix / 'ab.json').read_text())
    edit(plan)
    (prefix / 'ab.json').write_text(json.dumps(plan))
    before = hashes(tmp_path)
    done = cb('ab', '--judge', prefix)
    one_error(done, f'clusterbench: error: {prefix}/ab.json: not an A/B plan: {said}')
    assert hashes(tmp_path) == before


@pytest.mark.parametrize(
    'option, value, said',
    [
        ('--resolve', '5', 'a resolution (0.06 asks for ±6 %), between 0 and 1, '
         'both excluded'),
        ('--repeats', '1001', 'a number of blocks, from 0 to 1000'),
        ('--detection-threshold', 'nan', 'a fraction (0.1 is 10 %), from 0 to 1'),
    ],
)  # fmt: skip
def test_58_ab_refuses_an_absurd_number(tmp_path, option, value, said):
    prefix = ab_session(tmp_path / 'ab')
    before = hashes(tmp_path)
    done = cb('ab', '--judge', prefix, option, value, '--strict')
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.splitlines()[-1] == (
        f"clusterbench ab: error: argument {option}: {said}, not '{value}'"
    )
    assert hashes(tmp_path) == before


# --- 60. ab with an environment that does not exist ---------------------------


def test_60_ab_with_no_such_environment_is_refused_before_any_leg(tmp_path):
    results = tmp_path / 'results'
    before = hashes(PROJECT + '/reference_data')
    done = cb(
        'ab', '--environs', 'gnu-openmpi', 'nosuch', '--results', results,
        '--', '-n', 'CGSolverCheck',
    )  # fmt: skip
    one_error(
        done,
        'clusterbench: error: -p nosuch (arm B): no programming environment of '
        'local matches (it has gnu-mpich, gnu-openmpi); no leg ran',
    )
    assert not results.exists()
    assert hashes(PROJECT + '/reference_data') == before


# --- 61. an interrupted A/B session -------------------------------------------


def test_61_an_interrupted_session_says_so(tmp_path):
    prefix = ab_session(tmp_path / 'ab', blocks=3, planned=8, b=1.1)
    before = hashes(tmp_path)
    done = cb('ab', '--judge', prefix)
    assert done.returncode == 1, done.stdout + done.stderr  # SLOWER still
    lines = done.stdout.splitlines()
    assert '  3 of 8 planned blocks ran (interrupted); 12 legs run' in lines
    assert lines[-1] == (
        'interrupted: 3 of 8 planned blocks ran; the verdicts are of those blocks alone'
    )
    assert hashes(tmp_path) == before


def test_61_an_interrupted_session_without_a_finding_fails_strict(tmp_path):
    # Killed in the second leg of block 3: 2 blocks and 1 leg of 8 planned.
    prefix = ab_session(tmp_path / 'ab', blocks=3, planned=8, b=1.0, legs=9)
    before = hashes(tmp_path)
    done = cb('ab', '--judge', prefix)
    ran = '2 of 8 planned blocks ran, and 1 of the 4 legs of block 3'
    assert done.returncode == 0, done.stdout + done.stderr
    assert f'  {ran} (interrupted); 9 legs run' in done.stdout.splitlines()
    strict = cb('ab', '--judge', prefix, '--strict', '--format', 'csv')
    assert strict.returncode == 3, strict.stdout + strict.stderr
    assert strict.stderr.splitlines() == [
        f'interrupted: {ran}; the verdicts are of those blocks alone '
        '(exit 3 under --strict)'
    ]
    assert list(csv.reader(strict.stdout.splitlines()))[0][0] == 'test'
    assert hashes(tmp_path) == before


def test_61_a_complete_session_says_nothing_of_an_interruption(tmp_path):
    prefix = ab_session(tmp_path / 'ab', blocks=3, planned=3, b=1.0)
    done = cb('ab', '--judge', prefix)
    assert 'interrupted' not in done.stdout + done.stderr
    assert '  3 blocks (ABBA, BAAB in turn); 12 legs run' in done.stdout


# --- 62. JSON stays JSON when a figure overflows ------------------------------


def test_62_compare_json_of_an_overflowing_efficiency_is_valid(tmp_path):
    data = json.loads(open(SESSION).read())
    for case in data['runs'][0]['testcases']:
        for name, figure in (case.get('perfvalues') or {}).items():
            if name.endswith(':pingpong_bandwidth_max'):
                figure[0] = 1e308
    report = tmp_path / 'report.json'
    report.write_text(json.dumps(data))
    before = hashes(tmp_path)
    done = cb('compare', report, '--format', 'json')
    assert done.returncode in (0, 1), done.stderr
    rows = strict_json(done.stdout)
    (row,) = [r for r in rows if r['variable'] == 'pingpong_copy_efficiency']
    assert row['value'] is None and row['samples'] == [None]
    assert row['not_finite'] == {'value': 'inf', 'samples[0]': 'inf'}
    assert hashes(tmp_path) == before


# --- 63. every CSV the report writes has each column once ---------------------


def test_63_every_csv_header_of_the_report_is_unique(tmp_path):
    out = tmp_path / 'r.html'
    done = cb('report', SESSION, '-o', out)
    assert done.returncode == 0, done.stdout + done.stderr
    written = sorted((tmp_path / 'r-data').rglob('*.csv'))
    assert any(path.name == 'executive.csv' for path in written)
    for path in written:
        with open(path, newline='') as f:
            header = next(csv.reader(f))
        twice = sorted({c for c in header if header.count(c) > 1})
        assert not twice, (path.name, twice)
