"""Verdicts: pass / FLAGGED / no reference, pooled samples, baselines, the table."""

import math

import pytest

from clusterbench import stats, verdict
from clusterbench.runreport import Failure, Figure


def fig(value, ref=None, lower=None, upper=None, name='hpl', env='gnu-openmpi'):
    return Figure(
        'HPCCCheck',
        'local',
        'default',
        env,
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
        (fig(0.05, 0, -0.1, 0.1), verdict.PASS),
    ],
)
def test_single_sample_verdicts_are_reframes(figure, expected):
    assert verdict.judge(figure) == expected
    (judged,) = verdict.group([figure])
    assert judged.verdict == expected


def test_bounds_mirror_reframe():
    assert verdict.bounds(10, None, 0.5) == (-math.inf, 15)
    assert verdict.bounds(-10, -0.2, 0.1) == (-12, -9)
    assert verdict.bounds(0, -0.1, 0.1) == (-0.1, 0.1)


def test_one_noisy_sample_is_not_a_flag_when_the_rest_pass():
    samples = [fig(v, 100, -0.05, 0.05) for v in (99, 101, 100, 80, 102)]
    (judged,) = verdict.group(samples)
    assert judged.value == 100 and judged.verdict == verdict.PASS
    slow = [fig(v, 100, -0.05, 0.05) for v in (89, 90, 91, 90, 88)]
    (judged,) = verdict.group(slow)
    assert judged.verdict == verdict.FLAGGED
    assert judged.ci[2] < 0.95


def test_a_real_change_beyond_tolerance_is_flagged_even_if_close_to_it():
    # 10 % slower than a reference with an 8 % tolerance: the median is beyond
    # the tolerance and the interval excludes "no change", though not the band.
    slower = [fig(v, 100, -0.08, 0.08) for v in (87, 93, 90, 91, 89)]
    (judged,) = verdict.group(slower)
    assert judged.ci[2] > 0.92 and judged.ci[2] < 1
    assert judged.verdict == verdict.FLAGGED
    # Beyond tolerance but not significant: the samples straddle the reference.
    noisy = [fig(v, 100, -0.08, 0.08) for v in (70, 101, 90, 120, 85)]
    (judged,) = verdict.group(noisy)
    assert judged.value < 92 and judged.ci[2] > 1
    assert judged.verdict == verdict.PASS


def test_against_a_baseline_run():
    base = [fig(v) for v in (100, 101, 99)]
    same = [fig(v) for v in (100, 99, 101)]
    slower = [fig(v) for v in (80, 81, 79)]
    assert verdict.group(same, base, tolerance=0.05)[0].verdict == verdict.PASS
    assert verdict.group(slower, base, tolerance=0.05)[0].verdict == verdict.FLAGGED
    other_env = [fig(100, env='gnu-mpich')]
    assert verdict.group(other_env, base)[0].verdict == verdict.NO_REFERENCE


def test_bootstrap_interval_is_reproducible_and_contains_the_point():
    samples = [1.0, 1.1, 0.9, 1.05, 0.95]
    first = stats.median_ratio_ci(samples, 1.0)
    assert first == stats.median_ratio_ci(samples, 1.0)
    assert first[0] <= first[1] == 1.0 <= first[2]
    assert stats.median_ratio_ci([2.0], 1.0) == (2.0, 2.0, 2.0)


def test_rows_and_exit_semantics():
    failure = Failure(
        'HPCCCheck',
        'local',
        'default',
        'gnu-openmpi',
        'sanity',
        'hpccoutf.txt: HPCC reports Success=0.0',
    )
    judged = verdict.group([fig(95, 100, -0.1, 0.1), fig(5, name='mpifft')])
    table = verdict.rows(judged, [failure])
    assert table[0][-5:] == ('1', 'GFlop/s', '100', '90 .. 110', 'pass')
    assert table[1][-3:] == ('-', '-', 'no reference')
    assert table[2][-1] == 'FAILED (sanity): hpccoutf.txt: HPCC reports Success=0.0'
    assert verdict.anything_wrong(table)
    assert not verdict.anything_wrong(table[:2])
    assert verdict.summary(table) == '1 pass, 0 FLAGGED, 1 no reference, 1 FAILED'
    header = verdict.format_table(table).splitlines()[0]
    assert header.split() == [
        'test',
        'partition',
        'environment',
        'variable',
        'value',
        'n',
        'unit',
        'reference',
        'allowed',
        'range',
        'verdict',
    ]
    assert verdict.format_csv(table).splitlines()[1] == (
        'HPCCCheck,local:default,gnu-openmpi,hpl,95,1,GFlop/s,100,90 .. 110,pass'
    )
