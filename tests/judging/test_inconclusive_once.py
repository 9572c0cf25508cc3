"""INCONCLUSIVE said once: the person's table says in one line per check how
many figures cannot resolve a change here, why and what to do; ``-v`` lists
them; CSV, JSON and JUnit keep every figure (docs/verdicts.md)."""

import json
import os
import re

import rfm
from conftest import FIXTURES

ZEN4 = os.path.join(FIXTURES, 'sessions', 'AMD-25-17', 'report.json')


def _compare(*args):
    ran = rfm.clusterbench('compare', *args, ZEN4)
    out = ran.stdout + ran.stderr
    assert 'Traceback' not in out
    assert ran.returncode == 1, out  # (StarSTREAM's SLOWER: the session)
    return ran.stdout


def _inconclusive_rows(out):
    return [
        line
        for line in out.splitlines()
        # (The verdict cell may be shortened to fit: INCONCLUSIV…)
        if re.search(r'  INCONCLUSIV', line) and not line.startswith(' ')
    ]


def test_the_table_says_inconclusive_once_per_check():
    out = _compare()
    # The stored session had 38 INCONCLUSIVE rows; none is a row now.
    assert _inconclusive_rows(out) == [], out
    lines = out.splitlines()
    said = [line for line in lines if 'cannot resolve' in line]
    # One per check that has any: HPCC, the CG solver, NetPIPE.
    assert len(said) == 3, out
    cg = lines.index(next(line for line in lines if line.startswith('CGSolverCheck: ')))
    text = ' '.join(' '.join(lines[cg + 1 : cg + 4]).split())
    # (Judged with the session's confirmation runs beside its report.)
    assert text.startswith('34 INCONCLUSIVE: worse by 10-24 %, inside bands '), text
    assert 'they cannot resolve such a change here' in text, text
    # Why: the bands' width, what moves them; and what to do.
    assert 'memory-bound' in text and 'neighbours' in text, text
    assert '`clusterbench ab`' in text and 'baseline sessions' in text, text
    assert '-v lists them' in text, text
    # The rest of the table is unchanged: the SLOWER rows (StarSTREAM's four,
    # confirmed by the session's confirmation runs) stay.
    assert len([x for x in lines if re.search(r'  SLOWER( \(|$)', x)]) == 4
    # The summary still counts every figure.
    assert '38 INCONCLUSIVE' in lines[-2] or '38 INCONCLUSIVE' in lines[-1], out


def test_verbose_lists_every_inconclusive_figure():
    out = _compare('-v')
    assert len(_inconclusive_rows(out)) == 38, out
    assert 'cannot resolve' not in out


def test_machines_read_every_figure():
    rows = json.loads(_compare('--format', 'json'))
    assert len([r for r in rows if r['verdict']['kind'] == 'INCONCLUSIVE']) == 38
    csv = _compare('--format', 'csv')
    assert len([x for x in csv.splitlines() if ',INCONCLUSIVE (' in x]) == 38


PORTABLE = (
    'dgemm_peak_efficiency',
    'hpl_peak_efficiency',
    'pingpong_copy_efficiency',
    'job_triad_efficiency',
    'bandwidth_triad_efficiency',
)


def test_a_portable_band_reads_as_a_band_never_its_middle():
    # Machines read the band's ends, and no reference.
    found = json.loads(_compare('--format', 'json'))
    banded = [r for r in found if r['variable'] in PORTABLE]
    assert len(banded) >= 3 + 2 * 16
    for row in banded:
        assert row['reference'] is None, row
        assert row['allowed_low'] < row['value'] < row['allowed_high'], row
    # A person reads `band 40..140 %` and no change against its middle.
    out = _compare('-v')
    rows = [line.split() for line in out.splitlines() if ' band ' in line]
    assert len(rows) == len(banded), out
    for cells in rows:
        at = cells.index('band')
        assert re.fullmatch(r'\d+(\.\d+)?\.\.\d+(\.\d+)?', cells[at + 1]), cells
        assert cells[at + 2 : at + 4] == ['%', '-'], cells
