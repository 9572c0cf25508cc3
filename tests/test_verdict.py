"""Verdict logic: pass / FLAGGED / no reference, and the table's contents."""

import math

import pytest

from clusterbench import verdict
from clusterbench.runreport import Failure, Figure


def fig(value, ref=None, lower=None, upper=None, name='hpl'):
    return Figure(
        'HPCCCheck',
        'local',
        'default',
        'gnu-openmpi',
        name,
        value,
        'GFlop/s',
        ref,
        lower,
        upper,
        None,
    )


@pytest.mark.parametrize(
    'figure, expected',
    [
        (fig(95, 100, -0.1, 0.1), verdict.PASS),
        (fig(90, 100, -0.1, 0.1), verdict.PASS),
        (fig(89.9, 100, -0.1, 0.1), verdict.FLAGGED),
        (fig(111, 100, -0.1, 0.1), verdict.FLAGGED),
        (fig(1e9, 100, -0.1, None), verdict.PASS),
        (fig(-1e9, 100, None, 0.1), verdict.PASS),
        (fig(5), verdict.NO_REFERENCE),
        (fig(-9, -10, -0.2, 0.2), verdict.PASS),
        (fig(-13, -10, -0.2, 0.2), verdict.FLAGGED),
    ],
)
def test_judge(figure, expected):
    assert verdict.judge(figure) == expected


def test_bounds_open_ends():
    assert verdict.bounds(10, None, 0.5) == (-math.inf, 15)


def test_rows_and_exit_semantics():
    failure = Failure(
        'HPCCCheck',
        'local',
        'default',
        'gnu-openmpi',
        'sanity',
        'hpccoutf.txt: HPCC reports Success=0.0',
    )
    table = verdict.rows([fig(95, 100, -0.1, 0.1), fig(5, name='mpifft')], [failure])
    assert table[0][-3:] == ('100', '90 .. 110', 'pass')
    assert table[1][-3:] == ('-', '-', 'no reference')
    assert table[2][-1] == 'FAILED (sanity): hpccoutf.txt: HPCC reports Success=0.0'
    assert verdict.anything_wrong(table)
    assert not verdict.anything_wrong(table[:2])
    assert verdict.summary(table) == '1 pass, 0 FLAGGED, 1 no reference, 1 FAILED'
    text = verdict.format_table(table)
    assert text.splitlines()[0].split() == [
        'test',
        'partition',
        'environment',
        'variable',
        'value',
        'unit',
        'reference',
        'allowed',
        'range',
        'verdict',
    ]
    assert 'local:default' in text
    assert (
        verdict.format_csv(table)
        .splitlines()[1]
        .startswith(
            'HPCCCheck,local:default,gnu-openmpi,hpl,95,GFlop/s,100,90 .. 110,pass'
        )
    )
