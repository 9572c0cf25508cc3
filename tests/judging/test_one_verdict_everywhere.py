"""One verdict per figure, everywhere (issue 40, item 5): for one stored
session, `run` (with its confirmation runs), `compare` (of its report or its
directory, as JSON or JUnit), `replay` and `report`'s summary.csv give each
figure the same verdict. The confirmation runs are part of the stored
session (``<session>/confirm/*/report.json``): every command finds them
without being told.
"""

import collections
import csv
import glob
import json
import re
import shutil
import xml.etree.ElementTree as ET

import pytest
import rfm
from conftest import FIXTURES

ZEN4 = f'{FIXTURES}/sessions/AMD-25-17'


def _key(test, environ, variable):
    # JUnit's class names have no dots (machineview._classname).
    return (test.replace('.', '_'), environ, variable)


def compare_json(*args):
    ran = rfm.clusterbench('compare', '--format', 'json', *args)
    assert ran.returncode in (0, 1), ran.stderr
    assert 'Traceback' not in ran.stderr
    return {
        _key(r['test'], r['environment'], r['variable']): r['verdict']['kind']
        for r in json.loads(ran.stdout)
        if r['variable'] is not None
    }


def compare_junit(*args):
    # --strict: every verdict but pass is a <failure> of its kind.
    ran = rfm.clusterbench('compare', '--format', 'junit', '--strict', *args)
    assert 'Traceback' not in ran.stderr
    found = {}
    for case in ET.fromstring(ran.stdout).iter('testcase'):
        if case.get('classname') == 'clusterbench':
            continue  # the session's time outside its test cases, no figure
        test, where, environ = re.fullmatch(
            r'(.*) \[(.*)\] \[(.*)\]', case.get('classname')
        ).groups()
        if case.get('name') in ('failed', 'skipped'):
            continue  # a test with no figure, not a figure
        failure = case.find('failure')
        kind = 'pass' if failure is None else failure.get('type')
        if failure is None and case.find('skipped') is not None:
            kind = 'DISTURBED'
        found[(test, environ, case.get('name'))] = kind
    return found


def report_summary(tmp_path, *args):
    """{(test, environ, variable): verdict} of report's summary.csv, its test
    names without the identity the report adds (``%problem_class=B``)."""
    out = tmp_path / 'report' / 'r.html'
    ran = rfm.clusterbench('report', *args, '-o', str(out))
    assert ran.returncode == 0, ran.stderr
    found = {}
    with open(tmp_path / 'report' / 'r-data' / 'summary.csv') as f:
        for row in csv.DictReader(f):
            if row['verdict'] == 'missing' or row['variable'] == '-':
                continue
            environ = row['label'].split(' · ')[1]
            found[(row['test'], environ, row['variable'])] = row['verdict']
    return found


def same_figures(judged, reported):
    """*reported* (report's keys) re-keyed by the figures of *judged*."""
    found = {}
    for test, environ, variable in reported:
        (key,) = [
            k
            for k in judged
            if k[1:] == (environ, variable)
            and (test == k[0] or test.startswith(k[0] + ' %'))
        ] or [(test, environ, variable)]
        found[key] = reported[(test, environ, variable)]
    return found


def counts(verdicts):
    return collections.Counter(verdicts.values())


@pytest.fixture
def zen4(tmp_path):
    """The stored Zen 4 session, with its confirmation runs."""
    shutil.copytree(ZEN4, tmp_path / 'session')
    return tmp_path / 'session'


def test_the_zen4_session_has_one_verdict_per_figure(zen4, tmp_path):
    report = str(zen4 / 'report.json')
    (confirmation,) = glob.glob(str(zen4 / 'confirm' / '*' / 'report.json'))
    judged = compare_json(report)
    # Its confirmation runs are found without being told, and pooled.
    assert judged == compare_json(str(zen4))
    assert judged == compare_json(report, confirmation)
    alone = tmp_path / 'alone'
    alone.mkdir()
    shutil.copy(report, alone / 'report.json')
    assert judged != compare_json(str(alone / 'report.json'))
    assert compare_junit(report) == judged
    reported = report_summary(tmp_path, report)
    assert same_figures(judged, reported) == judged, counts(reported)
    # StarSTREAM stayed slow in both confirmation runs: judged on three.
    ran = rfm.clusterbench('compare', '--format', 'json', report)
    star = [r for r in json.loads(ran.stdout) if r['variable'] == 'stream_star_triad']
    assert [(r['n'], r['verdict']['kind']) for r in star] == [(3, 'SLOWER')]


@pytest.mark.integration
def test_a_real_session_with_confirmation_runs_has_one_verdict(tmp_path):
    # References no run can meet: the time SLOWER in the first run and in
    # its confirmation run (a class W solve, real ReFrame).
    refs = tmp_path / 'refs'
    rfm.classic_cg_references(refs, time=[1e-6, -0.5, 1.0, 's'])
    env = {
        'RFM_SQLITE_DB_FILE': str(tmp_path / 'results.db'),
        'CLUSTERBENCH_PERFLOGDIR': str(tmp_path / 'perflogs'),
    }
    ran = rfm.clusterbench(
        'run', '--confirm', '1', '--confirm-wait', '0', '--format', 'json',
        '--results', str(tmp_path / 'results'), '--references', str(refs),
        '--checks', rfm.CG_CHECKS,
        '--', *rfm.TINY_CG[:-1], 'problem_class=W',
        '-S', 'judge_conditions=false', '-S', 'probe_host=false',
        env=env,
    )  # fmt: skip
    assert ran.returncode == 1, ran.stdout[-2000:] + ran.stderr[-3000:]
    run = {
        _key(r['test'], r['environment'], r['variable']): r['verdict']['kind']
        for r in json.loads(ran.stdout)
        if r['variable'] is not None
    }
    assert run[_key(_cg_name(run), 'gnu-openmpi', 'time')] == 'SLOWER', run
    (session,) = glob.glob(str(tmp_path / 'results' / 'local' / '*'))
    assert glob.glob(f'{session}/confirm/*/report.json')
    where = ('--references', str(refs))
    assert compare_json(*where, f'{session}/report.json') == run
    assert compare_json(*where, session) == run
    assert compare_junit(*where, f'{session}/report.json') == run
    replayed = rfm.clusterbench('replay', '--format', 'json', *where, session)
    assert replayed.returncode == 1, replayed.stderr
    assert {
        _key(r['test'], r['environment'], r['variable']): r['verdict']['kind']
        for r in json.loads(replayed.stdout)
        if r['variable'] is not None
    } == run
    reported = report_summary(tmp_path, *where, f'{session}/report.json')
    assert same_figures(run, reported) == run


def _cg_name(rows):
    return next(k[0] for k in rows if k[0].startswith('CGSolverCheck'))
