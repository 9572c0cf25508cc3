"""The terminal table of a disturbed run (issue 41): a verdict's reason is
never cut, and a check whose figures are all DISTURBED for one reason is one
line, not a row per figure; ``-v`` lists every figure; JSON keeps them all.

A real stored session (16 CG solver test cases, 96 figures with their
efficiencies, and HPCC) is
marked as a loaded host marks it, and read by the real `clusterbench compare`.
"""

import json
import re

import rfm
from conftest import FIXTURES

SESSION = f'{FIXTURES}/sessions/AMD-25-1/report.json'
#: Long, as a loaded host's reasons are: no table column holds it.
REASON = (
    "ranks' CPU share 61 % (at least 90 %), steal 18 % (at most 2 %), other "
    'processes 23 % of the CPUs (at most 10 %), host probe gather -31 %, copy -12 %'
)
OTHER = 'steal 40 % (at most 2 %)'


def _disturbed_session(tmp_path):
    data = json.loads(open(SESSION).read())
    cases = data['runs'][0]['testcases']
    cg = [c for c in cases if c['name'].startswith('CGSolverCheck')]
    assert len(cg) == 16
    for case in cg:
        case['disturbed'] = REASON
    # HPCC: disturbed for another reason.
    (hpcc,) = [c for c in cases if c['name'].startswith('HPCCCheck')]
    hpcc['disturbed'] = OTHER
    path = tmp_path / 'report.json'
    path.write_text(json.dumps(data))
    return path


def _compare(path, *args):
    ran = rfm.clusterbench('compare', *args, path)
    assert 'Traceback' not in ran.stderr, ran.stderr
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return ran.stdout


def _words(text):
    return ' '.join(text.split())


def test_a_disturbed_check_is_one_line_with_its_reason_in_full(tmp_path):
    out = _compare(_disturbed_session(tmp_path))
    lines = out.splitlines()
    assert not [x for x in lines if x.startswith('CGSolverCheck ')], out
    assert not [x for x in lines if x.startswith('HPCCCheck ')], out
    said = _words(out)
    assert f'CGSolverCheck: 16 test cases, 96 figures DISTURBED: {REASON}' in said
    assert 'HPCCCheck: 1 test case, 27 figures DISTURBED: ' + OTHER in said, out
    assert '…' not in out
    # The summary still counts every figure.
    assert '123 DISTURBED' in lines[-2] or '123 DISTURBED' in lines[-1], out


def test_verbose_lists_every_figure_and_never_cuts_a_reason(tmp_path):
    path = _disturbed_session(tmp_path)
    out = _compare(path, '-v')
    rows = [x for x in out.splitlines() if re.match(r'(CGSolverCheck|HPCCCheck) ', x)]
    assert len(rows) == 96 + 27, out
    assert all('DISTURBED' in row for row in rows)
    # Cut nowhere: each reason in full, in its cell or once below the table
    # (a long variable name may be shortened: the verdict never is).
    assert not [row for row in rows if '…' in row.split('DISTURBED')[-1]], out
    said = _words(out)
    assert REASON in said and OTHER in said
    assert said.count(REASON) == 1, out
    # The one verdict: JSON has every figure, DISTURBED with its reason whole.
    shown = rfm.clusterbench('compare', '--format', 'json', path)
    records = [
        r
        for r in json.loads(shown.stdout)
        if r['test'].startswith(('CGSolverCheck', 'HPCCCheck'))
    ]
    kinds = {(r['verdict']['kind'], r['verdict']['detail']) for r in records}
    assert kinds == {('DISTURBED', REASON), ('DISTURBED', OTHER)}
    assert len(records) == 123
