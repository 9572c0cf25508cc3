"""Sessions of different hardware are never pooled: the real `clusterbench
report` and `clusterbench trend` over the stored Zen 3 session
(../shared/fixtures/sessions/AMD-25-1: HPL 62.39 GF/s) and the stored Zen 4
session (AMD-25-17: HPL 83.90 GF/s), both `local:default` on one node.

Fast: stored reports, no ReFrame run.
"""

import csv
import os
import shutil
import subprocess

import pytest
from conftest import FIXTURES
from rfm import tool

KINDS = {'AMD-25-1': 62.394800000000004, 'AMD-25-17': 83.90450000000001}


@pytest.fixture
def two_kinds(tmp_path):
    paths = []
    for kind in KINDS:
        src = os.path.join(FIXTURES, 'sessions', kind, 'report.json')
        if not os.path.exists(src):
            pytest.skip(f'{src}: the shared fixtures are not checked out')
        os.makedirs(tmp_path / kind)
        shutil.copy(src, tmp_path / kind / 'report.json')
        paths.append(str(tmp_path / kind))
    return paths


def clusterbench(*args, cwd):
    return subprocess.run(
        [tool('clusterbench'), *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=600,
    )


def read_csv(path):
    with open(path, newline='', encoding='utf-8') as f:
        return list(csv.DictReader(f))


def test_report_gives_each_cpu_kind_its_own_row(two_kinds, tmp_path):
    out = tmp_path / 'out' / 'report.html'
    run = clusterbench('report', *two_kinds, '-o', out, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert 'Traceback' not in run.stderr
    data = tmp_path / 'out' / 'report-data'
    rows = read_csv(data / 'executive.csv')
    assert sorted(r['cpu_kind'] for r in rows) == sorted(KINDS)
    for row in rows:
        # Each HPL from its own session: one sample, never the two kinds pooled.
        assert row['hpl_gflops_n'] == '1', row
        assert float(row['hpl_gflops']) == pytest.approx(KINDS[row['cpu_kind']])
        assert row['sessions'] == '1'
    zen4 = next(r for r in rows if r['cpu_kind'] == 'AMD-25-17')
    assert zen4['microarchitecture'] == 'zen4'
    # The HTML labels each row with its own kind.
    html = out.read_text(encoding='utf-8')
    assert 'AMD-25-1 (' in html and 'AMD-25-17 (' in html
    # The headline chart compares distinct rows, never a row with itself.
    (headline,) = [p for p in os.listdir(data) if p.startswith('executive-headline')]
    bars = read_csv(data / headline)
    assert bars, headline
    for bar in bars:
        assert bar['system'] != bar['baseline_system'], bar
    # No cell of the summary pools the samples of two kinds.
    summary = read_csv(data / 'summary.csv')
    hpl = [r for r in summary if r['variable'] == 'hpl' and r['samples']]
    assert sorted(r['samples'] for r in hpl) == ['1', '1']
    assert sorted(r['label'].split(' · ')[1] for r in hpl) == sorted(KINDS)


def test_report_of_one_row_draws_no_self_comparison(two_kinds, tmp_path):
    out = tmp_path / 'one' / 'report.html'
    run = clusterbench('report', two_kinds[1], '-o', out, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    data = tmp_path / 'one' / 'report-data'
    assert not [p for p in os.listdir(data) if p.startswith('executive-headline')]


def test_trend_gives_each_cpu_kind_its_own_series(two_kinds, tmp_path):
    reports = [os.path.join(p, 'report.json') for p in two_kinds]
    stem = tmp_path / 'trend'
    run = clusterbench('trend', 'HPCCCheck:hpl$', *reports, '-o', stem, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert 'Traceback' not in run.stderr
    lines = [x for x in run.stdout.splitlines() if x.startswith('HPCCCheck hpl')]
    assert len(lines) == 2, run.stdout
    assert any('AMD-25-1)' in x and ': 1 session,' in x for x in lines), lines
    assert any('AMD-25-17)' in x and ': 1 session,' in x for x in lines), lines
    rows = read_csv(f'{stem}.csv')
    by_kind = {r['cpu kind']: float(r['value']) for r in rows}
    assert by_kind == pytest.approx(KINDS)
