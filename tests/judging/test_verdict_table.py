"""The terminal table (issue 27): what tells rows apart is never cut, what is
the same on every row is said once, each figure against its reference in %,
and the summary last."""

import dataclasses

from test_verdict import _table, fig

from clusterbench.judging import view as verdictview
from clusterbench.results.runreport import Failure


def _cg(variant, ranks, value, ref=1.0, lower=-0.3, upper=0.3, partition='default'):
    name = (
        f'CGSolverCheck %stencil=27 %variant={variant} %ranks_per_node={ranks} '
        f'%problem_class=C %matrix_ordering=natural'
    )
    figure = fig(value, ref, lower, upper, name='gflops', test=name)
    return dataclasses.replace(figure, partition=partition)


def test_the_parameters_that_tell_rows_apart_are_never_cut():
    # Three test cases that differ only in their last parameters, each with
    # a long INCONCLUSIVE detail: at 160 (and 100) columns the verdict is
    # shortened, never the names. (Listed with -v: without, the INCONCLUSIVE
    # figures of a check are one line, tests/judging/test_inconclusive_once.py.)
    table = _table(
        _cg('pipelined', 'all', 0.8),
        _cg('pipelined', '1', 0.8),
        _cg('classic', 'all', 0.8),
    )
    for width in (160, 100):
        lines = verdictview.format_table(table, True, width=width).splitlines()
        rows = [line for line in lines if line.startswith('CGSolverCheck ')]
        names = [row.split('  ')[0] for row in rows]
        assert names == [
            'CGSolverCheck variant=pipelined ranks_per_node=all',
            'CGSolverCheck variant=pipelined ranks_per_node=1',
            'CGSolverCheck variant=classic ranks_per_node=all',
        ]
        # (At 100 the names alone leave no room: the line is longer, whole,
        # its verdict the kind and a note's number, the reason below.)
        assert max(map(len, lines)) <= max(width, 105)
        if width == 100:
            assert 'INCONCLUSIVE [1]' in rows[0]
            assert '  [1] INCONCLUSIVE (-20 % inside ±30 %)' in lines


def test_columns_the_same_on_every_row_are_said_once_above_it():
    table = _table(fig(95, 100, -0.1, 0.1), fig(5, name='mpifft'))
    lines = verdictview.format_table(table, verbose=True, width=160).splitlines()
    assert lines[0] == (
        'every row: partition local:default, environment gnu-openmpi, n 1, unit GFlop/s'
    )
    assert 'partition' not in lines[1] and 'environment' not in lines[1]
    assert 'local:default' not in '\n'.join(lines[2:])
    # Two partitions: the column is back, on every row, and said nowhere else.
    two = _table(_cg('classic', '1', 1.0), _cg('classic', '1', 1.0, partition='big'))
    lines = verdictview.format_table(two, verbose=True, width=160).splitlines()
    assert lines[0].startswith('every row: environment gnu-openmpi, n 1, ')
    assert lines[1].split()[:2] == ['test', 'partition']
    assert sum('local:big' in line for line in lines) == 1


def test_each_figure_against_its_reference_in_percent():
    table = _table(
        fig(88, 100, -0.25, 0.25),
        fig(32, 20, -0.75, 0.75, name='mpi_time_share', unit='%'),
        fig(5, name='mpifft'),
    )
    rows = {r.variable: verdictview.cells(r)['vs ref'] for r in table}
    # A share is compared in points of the whole, not relative to itself.
    assert rows == {'hpl': '-12.0 %', 'mpi_time_share': '+12.0 pp', 'mpifft': '-'}
    header = verdictview.format_table(table, width=160).splitlines()[1]
    assert 'vs ref' in header


def test_the_summary_is_last_after_the_session_details():
    failure = Failure('X', 'local', 'default', 'gnu-openmpi', 'run', 'boom')
    table = _table(fig(120, 100, -0.1, 0.1), failures=[failure])
    details = 'Session details: facts of 1 node (-v shows them)'
    lines = verdictview.render(table, details=details).splitlines()
    assert lines[-4:] == [
        details,
        '',
        '0 pass, 1 FASTER, 0 no reference, 1 FAILED',
        '1 FASTER: would fail with --strict (exit 3)',
    ]


def test_one_band_text_for_every_command_that_shows_a_band():
    """references show, update, check and acceptance all print a band so."""
    assert verdictview.band(-0.11, 0.11) == '±11 %'
    assert verdictview.band(-0.04, 0.19) == '-4 %/+19 %'
    assert verdictview.band(-0.05, None) == '-5 %/+∞'
    assert verdictview.band(None, 0.2) == '-∞/+20 %'
