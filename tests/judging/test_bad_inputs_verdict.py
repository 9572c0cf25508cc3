"""The bad-input matrix, round 3 (issue 29), the verdict's part: reports that
judge nothing, a reader that goes away, reports that gave tracebacks, and
output files that hurt whoever opens them.

As in tests/references/test_bad_inputs.py, each case drives the real `clusterbench` on
crafted run reports kept in a results root beside a copy of reference_data/,
and asserts the exact line, the exit code, and that no stored file changed.
"""

import csv
import io
import json
import os
import subprocess
import xml.etree.ElementTree as ET

import pytest
from badinput import Store, assert_line, hashes
from conftest import PROJECT
from rfm import tool
from test_reftransaction import run_report

from clusterbench.core import csvfile

PACKAGE = os.path.join(PROJECT, 'clusterbench')
RECORDED = (
    'references: as recorded in the report by ReFrame (no --references or '
    '$RFM_REFERENCE_PREFIX)'
)


def cb(*args, stdout=subprocess.PIPE):
    return subprocess.run(
        [tool('clusterbench'), *map(str, args)],
        stdout=stdout, stderr=subprocess.PIPE, text=True, cwd=PROJECT, timeout=300,
    )  # fmt: skip


def one_error(result, line):
    """Exit 2 and *line* as the only line on stderr."""
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.splitlines() == [line], result.stderr
    assert 'Traceback' not in result.stdout


def session(store, data=None, stamp='20260102T000000', **report):
    """A session of *store* holding *data*, or else run_report(**report), as
    its report.json; the store's hashes then include it."""
    directory = store.results / 'local' / stamp
    directory.mkdir(parents=True)
    path = directory / 'report.json'
    if data is None:
        run_report(path, **{'files': ('hpcc',), **report})
    else:
        path.write_text(data if isinstance(data, str) else json.dumps(data))
    store.before = hashes(store.refs, store.results)
    return path


def edited(path, edit):
    """Apply *edit* to the first test case of the report at *path*."""
    data = json.loads(path.read_text())
    edit(data['runs'][0]['testcases'][0])
    path.write_text(json.dumps(data))
    return path


# --- 21. a report that judges nothing ----------------------------------------

SKIPPED = {
    'display_name': 'HPCCCheck',
    'system': 'local',
    'partition': 'default',
    'environ': 'gnu-openmpi',
    'fixture': False,
    'result': 'skip',
    'skip_reason': 'no HPCC here',
}


@pytest.mark.parametrize(
    'cases',
    [[], [{**SKIPPED, 'name': 'HPCCCheck', 'fixture': True, 'result': 'pass'}]],
    ids=['no-case', 'only-fixtures'],
)
@pytest.mark.parametrize('command', ['compare', 'replay'])
def test_21_a_report_without_a_test_case_is_bad_input(tmp_path, command, cases):
    store = Store(tmp_path)
    path = session(store, {'session_info': {}, 'runs': [{'testcases': cases}]})
    one_error(
        cb(command, '--strict', path, '--references', store.refs),
        f'clusterbench: error: {path}: no test case in the report: nothing to judge',
    )
    store.assert_kept()


@pytest.mark.parametrize('command', ['compare', 'replay'])
def test_21_a_report_whose_tests_were_all_skipped(tmp_path, command):
    # Legitimate (the skip reasons say why), but a CI gate that passes when
    # nothing was measured is blind: --strict fails it.
    store = Store(tmp_path)
    cases = [{**SKIPPED, 'name': f'HPCCCheck %n={n}'} for n in (1, 2)]
    path = session(store, {'session_info': {}, 'runs': [{'testcases': cases}]})
    for strict, rc, effect in (
        ((), 0, 'would fail with --strict'),
        (('--strict',), 3, 'fail this run'),
    ):
        result = cb(command, path, '--references', store.refs, *strict)
        assert result.returncode == rc, result.stdout + result.stderr
        assert_line(result.stdout, '0 pass, 0 no reference, 0 FAILED, 2 skipped')
        assert_line(result.stdout, f'nothing measured (2 skipped): {effect} (exit 3)')
        assert result.stderr == ''
    junit = cb(
        command, path, '--references', store.refs, '--strict', '--format', 'junit'
    )
    assert junit.returncode == 3, junit.stdout + junit.stderr
    (failure,) = ET.fromstring(junit.stdout).iter('failure')
    assert failure.get('message') == 'nothing measured (2 skipped)'
    store.assert_kept()


# --- 22. a reader that goes away keeps the verdict's exit code ---------------


def closed_reader(*args):
    """Run clusterbench with stdout a pipe whose reader closed before it
    started: its first write fails, wherever that is. (exit code, stderr)"""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        result = cb(*args, stdout=writer)
    finally:
        os.close(writer)
    return result.returncode, result.stderr


def slower(store, copies=1):
    """A session whose HPCC figures are half their references: SLOWER."""
    path = session(store, factor=0.5)
    data = json.loads(path.read_text())
    (case,) = data['runs'][0]['testcases']
    # Each copy its own test case (a ReFrame session runs one once).
    names = ('name', 'display_name', 'unique_name')
    data['runs'][0]['testcases'] = [
        {**case, **{key: f'{case[key]} %copy={n}' for key in names}}
        for n in range(copies)
    ]
    path.write_text(json.dumps(data))
    store.before = hashes(store.refs, store.results)
    return path


@pytest.mark.parametrize(
    'options, stderr',
    [((), ''), (('--format', 'csv'), f'{RECORDED}\n')],
    ids=['table', 'csv'],
)
def test_22_compare_into_a_closed_pipe_still_fails(tmp_path, options, stderr):
    store = Store(tmp_path)
    path = slower(store)
    assert cb('compare', path, *options).returncode == 1
    assert closed_reader('compare', path, *options) == (1, stderr)
    store.assert_kept()


def test_22_replay_into_a_closed_pipe_still_fails(tmp_path):
    # No stored output to replay: each test case is FAILED (replay).
    store = Store(tmp_path)
    path = slower(store)
    assert closed_reader('replay', path, '--references', store.refs) == (1, '')
    store.assert_kept()


def test_22_a_reader_that_stops_after_one_line_mid_table(tmp_path):
    # `clusterbench compare -v slower.json | head -1` with `set -o pipefail`.
    # The table is far larger than a pipe holds, so clusterbench is still
    # writing it when the reader goes away.
    store = Store(tmp_path)
    path = slower(store, copies=200)
    proc = subprocess.Popen(
        [tool('clusterbench'), 'compare', '-v', str(path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=PROJECT,
    )  # fmt: skip
    assert proc.stdout.readline() == f'{RECORDED}\n'
    proc.stdout.close()
    assert proc.wait(timeout=300) == 1
    assert proc.stderr.read() == ''
    store.assert_kept()


# --- 28. report fields that gave tracebacks ------------------------------------

DEEP = '{"session_info": {}, "runs": ' + '[' * 100000 + ']' * 100000 + '}'


def _unique_name_list(case):
    case['unique_name'] = ['HPCCCheck']


def _surrogate_in_name(case):
    case['name'] = case['display_name'] = 'HPCCCheck \ud800'


def _deep_facts(case):
    facts = {}
    for _ in range(200):
        facts = {'x': facts}
    case['processor_facts'] = facts


WHERE = 'runs[0].testcases[0]'
BROKEN = {
    'unique-name-list': (
        _unique_name_list,
        f'{WHERE}.unique_name: ["HPCCCheck"] is an array, expected a string',
    ),
    'deep-json': (DEEP, 'nested too deeply (more than 64 levels)'),
    'deep-facts': (_deep_facts, 'nested too deeply (more than 64 levels)'),
    'surrogate': (
        _surrogate_in_name,
        f"{WHERE}.name: not valid text (a lone surrogate '\\ud800')",
    ),
}
COMMANDS = {
    'compare': lambda store, out: ('compare',),
    'replay': lambda store, out: ('replay', '--references', store.refs),
    'report': lambda store, out: ('report', '-o', out, '--references', store.refs),
    'update': lambda store, out: (
        'references', 'update', '--directory', store.refs, '--write', '--from',
    ),
}  # fmt: skip


@pytest.mark.parametrize('broken', sorted(BROKEN))
@pytest.mark.parametrize('command', sorted(COMMANDS))
def test_28_a_report_that_gave_a_traceback_is_one_line(tmp_path, command, broken):
    store = Store(tmp_path)
    edit, problem = BROKEN[broken]
    if isinstance(edit, str):
        path = session(store, edit)
    else:
        path = edited(session(store), edit)
        store.before = hashes(store.refs, store.results)
    out = tmp_path / 'r.html'
    result = cb(*COMMANDS[command](store, out), path)
    one_error(
        result, f'clusterbench: error: {path}: not a ReFrame run report: {problem}'
    )
    assert not out.exists()
    store.assert_kept()


# --- 29. output files that hurt their reader -----------------------------------

FORMULA = '=HYPERLINK("http://evil.example/x","click")'


def evil_sessions(store):
    """Two sessions whose test, environment, figure and unit are formulas,
    and whose figure is negative (a number, to stay one)."""
    paths = []
    for n, value in enumerate((-0.12, -0.3)):
        case = {
            'name': FORMULA,
            'display_name': FORMULA,
            'system': 'local',
            'partition': 'default',
            'environ': '@SUM(1+1)*cmd',
            'fixture': False,
            'result': 'pass',
            'perfvalues': {
                'local:default:-2+3+cmd': [value, 0, None, None, '+s', 'pass']
            },
        }
        info = {'uuid': f'=s{n}', 'time_start_unix': 1795000000 + 86400 * n}
        data = {'session_info': info, 'runs': [{'testcases': [case]}]}
        paths.append(session(store, data, stamp=f'2026010{n + 2}T000000'))
    return paths


def assert_no_formula(text):
    """No cell of the CSV *text* starts a formula: each text cell that would
    is quoted, and what is left beginning with - or + is a number."""
    cells = [c for row in csv.reader(io.StringIO(text)) for c in row]
    assert f"'{FORMULA}" in cells and "'-2+3+cmd" in cells and "'+s" in cells, text
    for found in cells:
        if found.startswith(csvfile.FORMULA_START) and found != '-':
            float(found.rstrip('%'))
    return cells


def test_29_compare_csv_cells_are_no_formulas(tmp_path):
    store = Store(tmp_path)
    first, _ = evil_sessions(store)
    result = cb('compare', '--format', 'csv', first)
    assert result.returncode == 0, result.stderr
    assert result.stderr == f'{RECORDED}\n'
    assert '-0.12' in assert_no_formula(result.stdout)
    store.assert_kept()


def test_29_report_summary_csv_cells_are_no_formulas(tmp_path):
    store = Store(tmp_path)
    paths = evil_sessions(store)
    html = tmp_path / 'r.html'
    result = cb('report', *paths, '-o', html)
    assert result.returncode == 0, result.stdout + result.stderr
    assert_line(
        result.stdout,
        f'wrote {html} (1 configuration(s), 1 figure(s), 1 plot(s)) and the CSVs in '
        f'{tmp_path}/r-data/ in {{NUM}} s',
    )
    assert_no_formula((tmp_path / 'r-data' / 'summary.csv').read_text())
    executive = (tmp_path / 'r-data' / 'executive.csv').read_text()
    cells = [c for row in csv.reader(io.StringIO(executive)) for c in row]
    assert "'@SUM(1+1)*cmd" in cells  # the environment, written as text
    assert not [c for c in cells if c[:1] in ('=', '@', '+')]
    store.assert_kept()


def test_29_trend_csv_cells_are_no_formulas(tmp_path):
    store = Store(tmp_path)
    paths = evil_sessions(store)
    stem = tmp_path / 'trend'
    result = cb('trend', 'cmd', *paths, '-o', stem)
    assert result.returncode == 0, result.stdout + result.stderr
    assert_line(result.stdout, f'wrote {stem}.csv')
    header, *rows = list(csv.reader(open(f'{stem}.csv')))
    rows = [dict(zip(header, row)) for row in rows]
    assert [row['test'] for row in rows] == [f"'{FORMULA}"] * 2
    assert {row['environment'] for row in rows} == {"'@SUM(1+1)*cmd"}
    assert [row['session'] for row in rows] == ["'=s0", "'=s1"]
    assert [row['value'] for row in rows] == ['-0.12', '-0.3']
    store.assert_kept()


def test_29_every_csv_writer_is_the_one_that_quotes_formulas():
    writers = []
    for directory, _, files in os.walk(PACKAGE):
        for name in files:
            path = os.path.join(directory, name)
            if name.endswith('.py') and 'csv.writer(' in open(path).read():
                writers.append(os.path.relpath(path, PACKAGE))
    assert writers == ['core/csvfile.py']


@pytest.mark.parametrize(
    'text, written',
    [
        ('=1+2', "'=1+2"), ('@SUM(A1)', "'@SUM(A1)"), ('+cmd', "'+cmd"),
        ('-cmd', "'-cmd"), ('\t=1', "'\t=1"), ('\r=1', "'\r=1"),
        ('-0.12', '-0.12'), ('+15.3%', '+15.3%'), ('-1e-05', '-1e-05'),
        ('-inf', '-inf'), ('-', '-'), ('a=b', 'a=b'), (-0.12, -0.12),
    ],
)  # fmt: skip
def test_29_which_cells_are_quoted(text, written):
    assert csvfile.cell(text) == written


def test_29_control_characters_in_a_test_name_leave_junit_well_formed(tmp_path):
    store = Store(tmp_path)
    path = edited(
        session(store),
        lambda case: case.update(name=f'{case["name"]} \x01bell\x1b[31m\x7f'),
    )
    store.before = hashes(store.refs, store.results)
    result = cb('compare', '--format', 'junit', path)
    assert result.returncode == 0, result.stderr
    root = ET.fromstring(result.stdout)
    names = {case.get('classname') for case in root.iter('testcase')}
    assert names == {'HPCCCheck \\x01bell\\x1b[31m\x7f [local:default] [gnu-openmpi]'}
    store.assert_kept()
