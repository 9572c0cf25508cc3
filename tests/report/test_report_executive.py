"""The executive page of the report, on a real whole session of a Zen 3 host
(../shared/fixtures/sessions/AMD-25-1/report.json: HPL 62.4 GF/s, no stored
references) and a DISTURBED copy of it (HPL 16.0, "steal 18 %").

Fast: stored reports, no ReFrame run. The browser test (the first screen in
headless Chromium, kept as a test artefact) is in test_report_first_screen.py.
"""

import copy
import csv
import io
import json
import os
import subprocess
import sys

import pytest
from conftest import FIXTURES, PROJECT

from clusterbench.judging import verdict
from clusterbench.report import assemble, render

SESSION = os.path.join(FIXTURES, 'sessions', 'AMD-25-1', 'report.json')
HEALTHY_HPL = 62.394800000000004


def session_copy(
    path, uuid, days, disturbed=None, hpl=None, references=None, peak=None
):
    """The Zen 3 session as another session: its own uuid, a start *days*
    later; optionally DISTURBED (every case that measured), with another HPL,
    with references (value ratio, tolerance) on every figure, or with the
    node peak its partition declares (``extras.peak_gflops_per_node``, which
    JudgedCheck records in every case; 0.0 where none is declared)."""
    with open(SESSION) as f:
        data = json.load(f)
    out = copy.deepcopy(data)
    old = out['session_info']['uuid']
    out['session_info'].update(
        uuid=uuid,
        time_start_unix=data['session_info']['time_start_unix'] + days * 86400,
        time_end_unix=data['session_info']['time_end_unix'] + days * 86400,
    )
    for case in out['runs'][0]['testcases']:
        case['uuid'] = case['uuid'].replace(old, uuid)
        case['session_uuid'] = uuid
        if case.get('job_completion_time_unix'):
            case['job_completion_time_unix'] += days * 86400
        if peak is not None:
            case['peak_gflops_per_node'] = peak
        if disturbed and case['result'] == 'pass' and case['perfvalues']:
            case['disturbed'] = disturbed
        for key, values in case['perfvalues'].items():
            if hpl is not None and key.endswith(':hpl'):
                values[0] = hpl
            if references is not None:
                ratio, tolerance = references
                values[1:4] = [values[0] * ratio, -tolerance, tolerance]
    with open(path, 'w') as f:
        json.dump(out, f)
    return str(path)


@pytest.fixture
def two_sessions(tmp_path):
    """The healthy session and a DISTURBED copy of it (HPL 16.0)."""
    disturbed = session_copy(
        tmp_path / 'disturbed.json',
        'dddddddd-0000-4000-8000-000000000001',
        1,
        # Enough to explain HPL at a quarter (judging/disturbed.py): a
        # disturbance that could not would have its figure judged.
        disturbed="steal 18 %, ranks' CPU share 30 %",
        hpl=16.0,
    )
    return [SESSION, disturbed]


def test_a_disturbed_session_is_shown_never_pooled(two_sessions, tmp_path):
    data = assemble.assemble(assemble.load_reports(two_sessions))
    (hpl,) = [b for b in data.benchmarks if b.variable == 'hpl']
    (cell,) = [c for c in data.row(hpl) if c.values or c.disturbed]
    # Not "39.2 (n=2)": the healthy 62.4, n=1, and the 16.0 left out.
    assert cell.values == [HEALTHY_HPL] and cell.value == HEALTHY_HPL
    assert cell.disturbed == [16.0] and 'steal 18 %' in cell.disturbed_why
    html_path, data_dir, _, _ = render.write(data, tmp_path / 'r' / 'report.html')
    html = open(html_path, encoding='utf-8').read()
    assert 'DISTURBED left out' in html
    assert '2 sessions: 1 undisturbed, 1 DISTURBED and left out' in html
    with open(os.path.join(data_dir, 'summary.csv')) as f:
        rows = [r for r in csv.DictReader(f) if r['variable'] == 'hpl' and r['value']]
    (row,) = rows
    assert float(row['value']) == HEALTHY_HPL and row['samples'] == '1'
    assert row['disturbed_left_out'] == '1' and row['disturbed_values'] == '16.0'


def test_a_session_with_only_disturbed_figures_is_disturbed_not_a_value(tmp_path):
    only = session_copy(
        tmp_path / 'd.json', 'dddddddd-0000-4000-8000-000000000002', 1, 'steal 18 %'
    )
    data = assemble.assemble(assemble.load_reports([only]))
    (hpl,) = [b for b in data.benchmarks if b.variable == 'hpl']
    (cell,) = [c for c in data.row(hpl) if c.disturbed]
    assert cell.state == verdict.DISTURBED and cell.value is None
    (row,) = data.executive.rows
    assert row.sessions == 0 and row.disturbed_sessions == 1
    assert row.get('hpl').value is None and row.get('hpl').left_out == 1


def test_the_executive_row_of_the_zen3_session(two_sessions):
    data = assemble.assemble(assemble.load_reports(two_sessions))
    page = data.executive
    (row,) = page.rows
    assert row.key == 'local:default' and page.baseline == 'local:default'
    assert (row.nodes, row.cores) == (1, 2)
    assert (row.cpu_kind, row.microarchitecture) == ('AMD-25-1', 'zen3')
    assert row.memory_gib == pytest.approx(23.5)
    # No declared peak: computed from Zen 3's 16 FLOP/cycle and the clock
    # read during the run (2445.4 MHz, no cpufreq in this VM), and marked so.
    assert row.peak.how == 'computed'
    assert row.peak.per_node == pytest.approx(16 * 2.4454 * 2)
    fig = {k: s.value for k, s in row.figures.items()}
    assert fig['hpl'] == HEALTHY_HPL and row.get('hpl').n == 1
    assert fig['hpl_pct_peak'] == pytest.approx(HEALTHY_HPL / (16 * 2.4454 * 2))
    # HPL against its ranks' DGEMM is HPCC's own hpl_dgemm_efficiency.
    assert fig['hpl_dgemm'] == pytest.approx(0.8812775069067408)
    assert fig['dgemm_core'] == pytest.approx(35.4002)
    # STREAM from one stated definition: HPCC's star triad is per process,
    # the node moves 2 ranks x 19.35 GB/s.
    assert fig['stream_node'] == pytest.approx(2 * 19.3505)
    assert 'per node = per process x ranks' in row.get('stream_node').note
    assert fig['stream_core'] == pytest.approx(19.3505)
    assert fig['bytes_per_flop'] == pytest.approx(2 * 19.3505 / (16 * 2.4454 * 2))
    assert fig['lat_intra'] == pytest.approx(0.18)  # NetPIPE, 1 byte
    assert fig['bw_intra'] == pytest.approx(4.600114019565568)
    assert fig['nhalf_intra'] == pytest.approx(35632.09901953452)
    assert 'lat_inter' not in fig  # one node: nothing between nodes
    assert fig['cg'] > 0
    # Run quality: one healthy session, the DISTURBED one left out.
    assert (row.sessions, row.disturbed_sessions) == (1, 1)
    assert row.verdict == verdict.NO_REFERENCE and row.judged == 0
    assert page.next_commands == ['clusterbench baseline --system local']


def test_a_declared_peak_reaches_the_executive_table_marked_declared(tmp_path):
    # An older session from before the site declared its peak (0.0), read
    # after the one that declares 150 GF/s per node: the declared peak wins.
    declared = session_copy(
        tmp_path / 'p.json', 'pppppppp-0000-4000-8000-000000000001', 2, peak=150.0
    )
    before = session_copy(
        tmp_path / 'b.json', 'pppppppp-0000-4000-8000-000000000002', 1, peak=0.0
    )
    data = assemble.assemble(assemble.load_reports([declared, before]))
    (row,) = data.executive.rows
    assert (row.peak.how, row.peak_note) == ('declared', 'declared')
    assert row.peak.per_node == 150.0 and row.peak.per_core == 75.0
    hpl_pct = row.get('hpl_pct_peak')
    assert hpl_pct.value == pytest.approx(HEALTHY_HPL / 150.0)
    html_path, data_dir, _, _ = render.write(data, tmp_path / 'r' / 'report.html')
    with open(os.path.join(data_dir, 'executive.csv')) as f:
        (line,) = list(csv.DictReader(f))
    assert line['peak_how'] == 'declared'
    assert float(line['peak_gflops_per_node']) == 150.0
    html = open(html_path, encoding='utf-8').read()
    table = html[html.index('<table class="exec">') : html.index('</table>')]
    assert '150 GF/s<br><small>75 / core, declared</small>' in table


def test_executive_csv_and_the_banner(two_sessions, tmp_path):
    out = tmp_path / 'r' / 'report.html'
    proc = subprocess.run(
        [sys.executable, '-m', 'clusterbench.cli.report', *two_sessions, '-o', out],
        capture_output=True,
        text=True,
        cwd=PROJECT,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    text = (out.parent / 'report-data' / 'executive.csv').read_text()
    (row,) = list(csv.DictReader(io.StringIO(text)))
    assert row['system'] == 'local' and row['partition'] == 'default'
    assert float(row['hpl_gflops']) == HEALTHY_HPL and row['hpl_gflops_n'] == '1'
    assert float(row['stream_triad_per_node_gbs']) == pytest.approx(38.701)
    assert row['stream_definition'].startswith('HPCC StarSTREAM triad (per process)')
    assert row['peak_how'].startswith('computed')
    assert row['disturbed_sessions_left_out'] == '1' and row['sessions'] == '1'
    html = out.read_text()
    assert 'clusterbench baseline --system local' in html
    # The executive table is the first table of the page.
    assert html.index('<table') > html.index('id="executive"')
    assert html.index('<table') == html.index('<table class="exec">')
    for section in ('executive', 'configurations', 'summary', 'trends', 'provenance'):
        assert f'href="#{section}"' in html


def test_judged_figures_are_dots_against_their_band_worst_first(tmp_path):
    judged = session_copy(
        tmp_path / 'j.json', 'eeeeeeee-0000-4000-8000-000000000001', 2,
        references=(1.0, 0.1),
    )  # fmt: skip
    # HPL 30 % below its reference: the worst, first.
    with open(judged) as f:
        data = json.load(f)
    for case in data['runs'][0]['testcases']:
        for key, values in case['perfvalues'].items():
            if key.endswith(':hpl'):
                values[1] = values[0] / 0.7
    with open(judged, 'w') as f:
        json.dump(data, f)
    report = assemble.assemble(assemble.load_reports([judged]))
    (row,) = report.executive.rows
    assert row.verdict == verdict.SLOWER and row.judged > 50
    _, _, made, _ = render.write(report, tmp_path / 'r' / 'report.html')
    (dots,) = [p for p in made if p.id.startswith('executive-against-reference')]
    rows = list(csv.DictReader(io.StringIO(dots.csv_text)))
    assert rows[0]['variable'] == 'hpl' and rows[0]['verdict'] == verdict.SLOWER
    assert float(rows[0]['change_pct']) == pytest.approx(-30.0)
    assert float(rows[0]['band_low_pct']) == pytest.approx(-10.0)
    # The band is drawn (a grey stroke per row), not only in a tooltip, and
    # so is each bar's allowed band in the application charts.
    assert dots.svg.decode().count('#cfd8dc') >= len(rows[:60])
    (bars,) = [p for p in made if p.id == 'bars-hpcccheck-hpl-order-10368-hpl']
    assert '#cfd8dc' in bars.svg.decode()


def test_a_baseline_that_names_no_system_is_one_line(two_sessions, tmp_path):
    proc = subprocess.run(
        [sys.executable, '-m', 'clusterbench.cli.report', *two_sessions]
        + ['--baseline', 'nosuch', '-o', tmp_path / 'r.html'],
        capture_output=True,
        text=True,
        cwd=PROJECT,
        timeout=600,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        'clusterbench: error: --baseline nosuch: no such system in the inputs '
        '(they hold local:default)'
    ]
