"""Issue 41, the report's first screen and `references show`: the report
agrees with `compare` about a DISTURBED session, a row's badge is what its
judged figures say, the sessions are counted in words that cannot be read
two ways, the references' age comes from their provenance, the headline chart
is drawn only where there is something to compare, and `references show`
prints paths under its directory and one number format per column.

Stored reports of a real Zen 3 session (../shared/fixtures) through the real
commands; the browser test (1400 x 900) is the last one.
"""

import csv
import datetime
import json
import os
import re
import shutil
import sys
from collections import Counter

import pytest
from conftest import PROJECT
from rfm import captured, clusterbench, tool
from test_report_e2e import browser  # noqa: F401  (the fixture)
from test_report_executive import SESSION, session_copy

HEALTHY = SESSION


def report(tmp_path, *inputs, extra=()):
    """(the HTML text, its data directory) of `clusterbench report` on *inputs*."""
    out = tmp_path / 'report' / 'report.html'
    proc = captured(
        [sys.executable, '-m', 'clusterbench.cli.report', *map(str, inputs)]
        + ['-o', out, *extra],
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    return out.read_text(encoding='utf-8'), out.parent / 'report-data'


def executive_row(html):
    """The text of the executive table's one body row, tags left out."""
    table = html[html.index('<table class="exec">') :]
    body = table[table.index('<tbody>') : table.index('</tbody>')]
    return re.sub(r'\s+', ' ', re.sub(r'<[^>]+>', ' ', body)).strip()


def banner(html):
    start = html.index('id="state"')
    text = html[start : html.index('</p>', start)]
    return re.sub(r'\s+', ' ', re.sub(r'<[^>]+>', ' ', text))


def test_the_report_judges_a_disturbed_session_as_compare_does(tmp_path):
    # References at 4x the measured figures, "steal 3 %": no disturbance
    # explains a figure at a quarter of its reference, so `compare` (and
    # `run`) judge those figures SLOWER despite the DISTURBED run.
    judged = session_copy(
        tmp_path / 'judged.json', 'dddddddd-0000-4000-8000-000000000041', 1,
        disturbed='steal 3 %', references=(4.0, 0.1),
    )  # fmt: skip
    compare = clusterbench('compare', judged, '--format', 'json')
    said = Counter(
        r['verdict']['kind'] for r in json.loads(compare.stdout) if r['variable']
    )
    assert said['SLOWER'] > 10 and said['DISTURBED'] > 10, said
    html, data_dir = report(tmp_path, judged)
    with open(data_dir / 'summary.csv') as f:
        cells = [r for r in csv.DictReader(f) if r['verdict'] != 'missing']
    assert Counter(r['verdict'] for r in cells) == said
    # The row's badge is its worst judged figure, never the DISTURBED word.
    row = executive_row(html)
    assert row.split()[1] == 'SLOWER', row


def test_a_row_whose_judged_figures_pass_is_badged_pass(tmp_path):
    # One session within its references and a DISTURBED copy of it.
    passing = session_copy(
        tmp_path / 'pass.json', 'aaaaaaaa-0000-4000-8000-000000000041', 1,
        references=(1.0, 0.1),
    )  # fmt: skip
    disturbed = session_copy(
        tmp_path / 'dist.json', 'dddddddd-0000-4000-8000-000000000042', 2,
        disturbed='steal 18 %', references=(1.0, 0.1),
    )  # fmt: skip
    html, data_dir = report(tmp_path, passing, disturbed)
    row = executive_row(html)
    assert row.split()[1] == 'pass', row
    # The DISTURBED session is context, in words read one way.
    assert '2 sessions: 1 undisturbed, 1 DISTURBED and left out' in row, row
    assert '2 sessions: 1 undisturbed, 1 DISTURBED and left out' in banner(html)
    assert 'session(s)' not in row and 'session(s)' not in banner(html)
    with open(data_dir / 'executive.csv') as f:
        (line,) = csv.DictReader(f)
    assert line['verdict'] == 'pass'


def test_every_session_disturbed_is_said_so_and_no_empty_chart(tmp_path):
    copies = [
        session_copy(
            tmp_path / f'd{i}.json',
            f'dddddddd-0000-4000-8000-00000000005{i}',
            i,
            disturbed='steal 18 %',
        )  # fmt: skip
        for i in range(3)
    ]
    # A second partition, DISTURBED too: two rows with no figure in common.
    other = tmp_path / 'other.json'
    session_copy(other, 'dddddddd-0000-4000-8000-000000000059', 4, 'steal 18 %')
    data = json.loads(other.read_text())
    for case in data['runs'][0]['testcases']:
        case['partition'] = 'other'
    other.write_text(json.dumps(data))
    html, data_dir = report(tmp_path, *copies, other)
    row = executive_row(html)
    assert row.split()[1] == 'DISTURBED', row
    assert '3 sessions, all 3 DISTURBED and left out' in row, row
    assert '1 session, DISTURBED and left out' in row, row
    assert '4 sessions, all 4 DISTURBED and left out' in banner(html)
    # Nothing measured undisturbed: no roofline of ceilings alone, no chart
    # of rows without a figure in common; the first screen is the table.
    section = html[html.index('id="executive"') : html.index('id="contents"')]
    assert 'class="plot"' not in section
    made = os.listdir(data_dir)
    assert not [n for n in made if n.startswith(('roofline', 'executive-headline'))]


def test_the_reference_age_comes_from_the_provenance(tmp_path):
    # References of the Zen 3 node made as a centre makes them (three
    # sessions, `references update --write`), then dated five days back.
    sessions = [
        session_copy(tmp_path / f's{i}.json', f'bbbbbbbb-0000-4000-8000-0000000{i}', i)
        for i in range(3)
    ]
    refs = tmp_path / 'refs'
    made = clusterbench('references', 'update', '--from', *sessions,
                        '--references', refs, '--write')  # fmt: skip
    assert made.returncode == 0, made.stderr
    when = datetime.datetime.now(datetime.UTC) - datetime.timedelta(days=5)
    dated = 0
    for path in (refs / 'local' / 'provenance').glob('*.yaml'):
        text, n = re.subn(r"made: '[^']+'", f"made: '{when.isoformat()}'",
                          path.read_text())  # fmt: skip
        path.write_text(text)
        dated += n
    assert dated > 3
    html, data_dir = report(tmp_path, sessions[0], extra=('--references', refs))
    with open(data_dir / 'executive.csv') as f:
        (line,) = csv.DictReader(f)
    assert line['reference_age'] == '5 days', line['reference_age']
    assert 'references: 5 days' in executive_row(html)


def show_text(*args, cwd=None):
    result = captured([tool('clusterbench'), 'references', 'show', *args], cwd=cwd)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_references_show_paths_and_numbers(tmp_path):
    refs = tmp_path / 'refs'
    shutil.copytree(os.path.join(PROJECT, 'reference_data'), refs)
    lines = show_text('--references', str(refs), cwd=tmp_path)
    assert lines[0].startswith(f'references: {refs}')
    tests = [line for line in lines if line.startswith('  ') and ': ' in line
             and not line.startswith('    ')]  # fmt: skip
    # Provenance named under the directory said on the first line.
    assert any('(local/provenance/hpcc.yaml)' in line for line in tests), tests[:3]
    assert not [line for line in lines if str(refs) + '/' in line]
    assert not [line for line in lines if '/site-packages/' in line]
    # A band's two ends in one format, its unit once.
    # (A context-only figure's note quotes its provenance's own words.)
    figure_lines = '\n'.join(
        line.split(' context only: ')[0] for line in lines if line.startswith('    ')
    )
    ranges = re.findall(r'(-?[\d.]+)( %|)\.\.([+-]?[\d.]+) ?(\S*)', figure_lines)
    assert ranges
    for low, unit_low, high, _ in ranges:
        assert not unit_low, (low, high)
        for end in (low, high):
            digits = len(end.lstrip('+-').replace('.', '').lstrip('0'))
            assert digits <= 3, (low, high)
    # A share's band and a reference written by hand with more digits.
    (refs / 'mysys' / 'provenance').mkdir(parents=True)
    (refs / 'mysys' / 'cgsolver.yaml').write_text(
        'CGSolverCheck:\n  $index: [$partition, $environ]\n  mysys:cpu:\n'
        "    gnu:\n      mpi_share: [3.0, -0.11347, 0.72, '%']\n"
        '      gflops: [123.456, -0.05, 0.05, GFlop/s]\n'
    )
    mine = show_text('--references', str(refs), '--system', 'mysys', cwd=tmp_path)
    assert '  CGSolverCheck: no provenance (mysys/provenance/cgsolver.yaml)' in mine
    (share,) = [line.split() for line in mine if line.startswith('    mpi_share')]
    assert share[1:5] == ['3', '%', '2.66..5.16', '%'], share
    (gflops,) = [line.split() for line in mine if line.startswith('    gflops')]
    assert gflops[1:4] == ['123.5', 'GFlop/s', '±5'], gflops
    # The reference column: at most 4 significant digits.
    cells = [line.split() for line in lines if line.startswith('    ')]
    figures = [c[1] for c in cells if len(c) > 2 and re.match(r'^[\d.]+$', c[1])]
    assert figures
    for value in figures:
        assert len(value.replace('.', '').strip('0')) <= 4, value


_EXEC_JS = """
(() => {
  const table = document.querySelector('#executive table');
  const verdicts = table.querySelector('th.verdicts');
  const banner = document.querySelector('#state');
  return JSON.stringify({
    verdicts_right: verdicts.getBoundingClientRect().right,
    table_bottom: table.getBoundingClientRect().bottom,
    scroll: table.parentElement.scrollWidth,
    shown: table.parentElement.clientWidth,
    banner_bottom: banner.getBoundingClientRect().bottom,
  });
})()
"""


@pytest.mark.integration
def test_the_first_screen_at_1400_by_900(browser, tmp_path):  # noqa: F811
    disturbed = session_copy(
        tmp_path / 'disturbed.json', 'dddddddd-0000-4000-8000-000000000043', 1,
        disturbed="steal 18 %, ranks' CPU share 30 %", hpl=16.0,
    )  # fmt: skip
    out = tmp_path / 'report' / 'report.html'
    report(tmp_path, HEALTHY, disturbed)
    browser.open(out, 1400, 900)
    page = browser.evaluate(_EXEC_JS)
    browser.screenshot(tmp_path, 'report-first-screen-1400.png')
    assert browser.errors() == []
    # The verdicts column is seen, and nothing of the table is clipped.
    assert page['verdicts_right'] <= 1400, page
    assert page['scroll'] <= page['shown'], page
    # The state and the whole table on the first screen.
    assert page['banner_bottom'] < page['table_bottom'] <= 900, page
