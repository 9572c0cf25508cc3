"""Central data travels as value types, not loose strings: a figure's better
direction, kind and bound are enums, a verdict's colour is keyed by its kind,
and the executive page's application columns come from the figures'
``headline`` declarations (a new figure declared with a headline and a
portable band reaches the page with that one declaration)."""

import json
import os
import re
import shutil
import subprocess
import sys

import pytest
from conftest import PROJECT
from test_report_executive import SESSION, session_copy

from clusterbench.core import figures
from clusterbench.core.figures import Better, Bound, DeclarationError, Figure
from clusterbench.judging.verdict import Kind
from clusterbench.parsers.catalog import CATALOG


def test_better_kind_and_bound_are_enums_everywhere_in_the_catalog():
    for figure in CATALOG.figures:
        assert figure.better is None or type(figure.better) is Better, figure
        assert figure.kind is None or type(figure.kind) is figures.FigureKind
        assert figure.bound is None or type(figure.bound) is Bound
    hpcg = CATALOG.declared('hpcg', 'GFlop/s')
    assert hpcg.kind is figures.FigureKind.SOLVER and hpcg.bound is Bound.MEMORY
    # A word from a file becomes the enum; StrEnum still writes the word.
    assert Figure('t', 's', 'lower').better is Better.LOWER
    assert json.dumps(Better.LOWER) == '"lower"'


@pytest.mark.parametrize(
    'field, value', [('better', 'sideways'), ('kind', 'kernel'), ('bound', 'disk')]
)
def test_a_word_outside_an_enum_is_refused_when_declared(field, value):
    args = {'better': Better.HIGHER, field: value}
    with pytest.raises(DeclarationError, match=f'figure x: {field} {value!r}'):
        Figure('x', 's', **args)


def test_verdict_colours_are_keyed_by_verdict_kind(tmp_path):
    from clusterbench.report import verdictcolours

    assert all(type(kind) is Kind for kind in verdictcolours.COLOURS)
    for kind in (Kind.PASS, Kind.SLOWER, Kind.FASTER, Kind.DISTURBED, Kind.FAILED):
        assert verdictcolours.colour(kind) == verdictcolours.colour(str(kind))
    assert verdictcolours.colour('no such verdict') == verdictcolours.colour(
        Kind.MISSING
    )
    # The page's badges read the same table as its plots.
    out = tmp_path / 'r.html'
    proc = subprocess.run(
        [sys.executable, '-m', 'clusterbench.cli.report', SESSION, '-o', out],
        capture_output=True, text=True, cwd=PROJECT, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    css = f'--disturbed: {verdictcolours.colour(Kind.DISTURBED)};'
    assert css in out.read_text()


#: The one declaration a new figure needs: a portable band and a headline.
NEW_FIGURE = """from clusterbench.core.figures import HIGHER, Band, Figure

DECLARED = (
    Figure('widget_efficiency', '%', HIGHER, band=Band(50.0, 110.0, 'a test'),
           headline='Widget'),
)
"""


def executive_table(html):
    table = html[html.index('<table class="exec">') :]
    return table[: table.index('</table>')]


def test_a_new_figure_declared_once_appears_in_the_executive_page(tmp_path):
    """A copy of the package plus one new file in parsers/ holding one
    declaration; the report code is the same: the page gets a Widget column
    with the figure's value, judged against its band."""
    copy = tmp_path / 'tree'
    shutil.copytree(
        os.path.join(PROJECT, 'clusterbench'),
        copy / 'clusterbench',
        ignore=shutil.ignore_patterns('__pycache__'),
    )
    # The rest of the checkout as it is (the package finds its tree by it).
    for name in os.listdir(PROJECT):
        if name not in ('clusterbench', '.git', '.venv'):
            (copy / name).symlink_to(os.path.join(PROJECT, name))
    (copy / 'clusterbench' / 'parsers' / 'widget.py').write_text(NEW_FIGURE)
    session = session_copy(
        tmp_path / 's.json', 'wwwwwwww-0000-4000-8000-000000000001', 1
    )
    with open(session) as f:
        data = json.load(f)
    case = next(c for c in data['runs'][0]['testcases'] if c['perfvalues'])
    case['perfvalues']['local:default:widget_efficiency'] = [
        80.0, 0, None, None, '%', 'pass'
    ]  # fmt: skip
    with open(session, 'w') as f:
        json.dump(data, f)

    def report(tree, name):
        out = tmp_path / name
        proc = subprocess.run(
            [sys.executable, '-m', 'clusterbench.cli.report', session, '-o', out],
            capture_output=True,
            text=True,
            cwd=tree,
            env={**os.environ, 'PYTHONPATH': str(tree)},
            timeout=600,
        )
        assert proc.returncode == 0, proc.stderr
        return executive_table(out.read_text())

    table = report(copy, 'with.html')
    header = re.findall(r'<th[^>]*>([^<]*)</th>', table[: table.index('</thead>')])
    assert 'Widget' in header
    row = re.sub(r'\s+', ' ', re.sub(r'<[^>]+>', ' ', table[table.index('<tbody>') :]))
    assert '80 %' in row
    with open(tmp_path / 'with-data' / 'executive.csv') as f:
        assert 'headline_widget' in f.readline()
    # The project as it is declares no Widget: no such column.
    assert 'Widget' not in report(PROJECT, 'without.html')
