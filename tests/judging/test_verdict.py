"""Verdicts: pass / SLOWER / FLAGGED / FASTER / no reference, pooled samples,
baselines, strictness, the table and JUnit XML."""

import dataclasses
import math
import xml.etree.ElementTree as ET

import pytest

from clusterbench.core.reference import Reference
from clusterbench.judging import machineview, stats, verdict
from clusterbench.judging import view as verdictview
from clusterbench.judging.verdict import Kind, Verdict
from clusterbench.results.runreport import Failure, Figure


def fig(
    value,
    ref=None,
    lower=None,
    upper=None,
    name='hpl',
    env='gnu-openmpi',
    unit='GFlop/s',
    test='HPCCCheck',
):
    return Figure(
        test,
        'local',
        'default',
        env,
        name,
        value,
        unit,
        None if ref is None else Reference(ref, lower, upper, unit),
        None,
    )


@pytest.mark.parametrize(
    'figure, expected',
    [
        (fig(95, 100, -0.1, 0.1), verdict.PASS),
        (fig(90, 100, -0.1, 0.1), verdict.PASS),
        (fig(89.9, 100, -0.1, 0.1), verdict.SLOWER),
        (fig(111, 100, -0.1, 0.1), verdict.FASTER),
        # Lower is better for a time: the same band, the other direction.
        (fig(111, 100, -0.1, 0.1, name='time', unit='s'), verdict.SLOWER),
        (fig(89.9, 100, -0.1, 0.1, name='time', unit='s'), verdict.FASTER),
        # Figures of merit that are not speeds are FLAGGED (WORSE before:
        # the same to a user, see Kind).
        (fig(80, 90, -0.1, 0.1, name='hpl_dgemm_efficiency', unit='%'), Kind.FLAGGED),
        (fig(30, 20, -0.1, 0.1, name='mpi_time_share', unit='%'), Kind.FLAGGED),
        (fig(10, 20, -0.1, 0.1, name='mpi_time_share', unit='%'), verdict.FASTER),
        (fig(9e3, 8e3, -0.1, 0.1, name='bidir_n_half', unit='B'), Kind.FLAGGED),
        # No better direction (an iteration count): either side is FLAGGED.
        (fig(130, 100, -0.1, 0.1, name='iterations', unit=''), verdict.FLAGGED),
        (fig(70, 100, -0.1, 0.1, name='iterations', unit=''), verdict.FLAGGED),
        (fig(1e9, 100, -0.1, None), verdict.PASS),
        (fig(-1e9, 100, None, 0.1), verdict.PASS),
        (fig(5), verdict.NO_REFERENCE),
        (fig(-9, -10, -0.2, 0.2), verdict.PASS),
        # Negative reference: -13 is below ReFrame's range -12 .. -8.
        (fig(-13, -10, -0.2, 0.2), verdict.SLOWER),
        (fig(-7, -10, -0.2, 0.2), verdict.FASTER),
        (fig(0.5, 0, -0.1, 0.1), verdict.FASTER),
        (fig(0.05, 0, -0.1, 0.1), verdict.PASS),
    ],
)
def test_single_sample_verdicts_are_reframes(figure, expected):
    assert verdict.judge(figure) == expected
    # Without a detection threshold: no INCONCLUSIVE, exactly ReFrame's band.
    (judged,) = verdict.group([figure], threshold=None)
    assert judged.verdict == Verdict(expected) and judged.kind is expected


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
    assert judged.verdict == verdict.SLOWER
    assert judged.ci[2] < 0.95


def test_a_real_change_beyond_tolerance_is_flagged_even_if_close_to_it():
    # 10 % slower than a reference with an 8 % tolerance: the median is beyond
    # the tolerance and the interval excludes "no change", though not the band.
    slower = [fig(v, 100, -0.08, 0.08) for v in (87, 93, 90, 91, 89)]
    (judged,) = verdict.group(slower)
    assert judged.ci[2] > 0.92 and judged.ci[2] < 1
    assert judged.verdict == verdict.SLOWER
    # The same rule in the good direction: significant, so FASTER.
    faster = [fig(v, 100, -0.08, 0.08) for v in (113, 107, 110, 109, 111)]
    (judged,) = verdict.group(faster)
    assert judged.verdict == verdict.FASTER
    # Beyond tolerance on the good side, but not significant: pass.
    noisy = [fig(v, 100, -0.08, 0.08) for v in (130, 99, 110, 80, 115)]
    (judged,) = verdict.group(noisy)
    assert judged.value > 108 and judged.verdict == verdict.PASS
    # Beyond tolerance but not significant: the samples straddle the reference.
    noisy = [fig(v, 100, -0.08, 0.08) for v in (70, 101, 90, 120, 85)]
    (judged,) = verdict.group(noisy)
    assert judged.value < 92 and judged.ci[2] > 1
    # A median 10 % worse never passes silently: the noise hides it, and the
    # verdict says so (it fails only --strict).
    assert judged.verdict == Verdict(
        Kind.INCONCLUSIVE, '-10 % beyond the band, not significant'
    )
    assert judged.kind.fails_strict and not judged.kind.fails_run
    # Below the detection threshold it stays a pass.
    (judged,) = verdict.group(noisy, threshold=0.15)
    assert judged.verdict == verdict.PASS


def test_against_a_baseline_run():
    base = [fig(v) for v in (100, 101, 99)]
    same = [fig(v) for v in (100, 99, 101)]
    slower = [fig(v) for v in (80, 81, 79)]
    assert verdict.group(same, base, tolerance=0.05)[0].verdict == verdict.PASS
    assert verdict.group(slower, base, tolerance=0.05)[0].verdict == verdict.SLOWER
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
    first = table[0]
    assert (first.n, first.unit, first.reference) == (1, 'GFlop/s', 100)
    assert (first.low, first.high) == pytest.approx((90, 110))
    assert first.kind is Kind.PASS
    assert table[1].reference is None and table[1].kind is Kind.NO_REFERENCE
    assert table[2].verdict == Verdict(
        Kind.FAILED, 'hpccoutf.txt: HPCC reports Success=0.0'
    )
    assert verdictview.text(table[2]) == (
        'FAILED (sanity): hpccoutf.txt: HPCC reports Success=0.0'
    )
    assert verdict.anything_wrong(table)
    assert not verdict.anything_wrong(table[:2])
    assert verdictview.summary(table) == '1 pass, 1 no reference, 1 FAILED'
    lines = verdictview.format_table(table).splitlines()
    # Partition, environment, n and unit are the same on every row: said once.
    assert lines[0] == (
        'every row: partition local:default, environment gnu-openmpi, n 1, unit GFlop/s'
    )
    assert lines[1].split() == [
        'test',
        'variable',
        'value',
        'reference',
        'vs',
        'ref',
        'allowed',
        'range',
        'verdict',
    ]
    assert machineview.format_csv(table).splitlines()[1] == (
        'HPCCCheck,local:default,gnu-openmpi,hpl,95,1,GFlop/s,100,90 .. 110,pass'
    )


def _table(*figures, failures=()):
    return verdict.rows(verdict.group(list(figures)), list(failures))


@pytest.mark.parametrize(
    'figures, normal, strict',
    [
        ([fig(95, 100, -0.1, 0.1)], 0, 0),
        ([fig(95, 100, -0.1, 0.1), fig(5, name='mpifft')], 0, 3),
        ([fig(5, name='mpifft')], 0, 3),  # nothing judged: a CI gate must see it
        ([fig(120, 100, -0.1, 0.1)], 0, 3),  # FASTER
        ([fig(80, 100, -0.1, 0.1)], 1, 1),  # SLOWER
        ([fig(80, 100, -0.1, 0.1), fig(5, name='mpifft')], 1, 1),
        ([fig(130, 100, -0.1, 0.1, name='iterations', unit='')], 1, 1),
    ],
)
def test_exit_codes(figures, normal, strict):
    table = _table(*figures)
    assert verdict.exit_code(table) == normal
    assert verdict.exit_code(table, strict=True) == strict


def test_disturbed_and_failed_rows():
    (row,) = _table(fig(95, 100, -0.1, 0.1))
    disturbed = dataclasses.replace(
        row, verdict=Verdict(Kind.DISTURBED, 'another job shared the node')
    )
    assert verdict.exit_code([disturbed]) == verdict.EXIT_OK
    assert verdict.exit_code([disturbed], strict=True) == verdict.EXIT_STRICT
    failed = _table(failures=[Failure('X', 'local', 'default', 'e', 'run', 'boom')])
    assert verdict.exit_code(failed) == verdict.EXIT_REGRESSION


def test_faster_carries_its_hint_and_the_strict_note():
    table = _table(fig(120, 100, -0.1, 0.1), fig(5, name='mpifft'))
    assert verdictview.cells(table[0])['verdict'] == 'FASTER'  # machines: the word
    text = verdictview.render(table)
    assert 'FASTER (reference stale?)' in text
    assert '1 FASTER, 1 no reference: would fail with --strict (exit 3)' in text
    assert 'fail this run (exit 3)' in verdictview.render(table, strict=True)


def _cg(stencil, variant, value, ref=None):
    name = f'CGSolverCheck %stencil={stencil} %variant={variant} %ranks_per_node=1'
    band = (ref, -0.1, 0.1) if ref else (None, None, None)
    return fig(value, *band, name='gflops', test=name)


def _npb_skip(bench, env):
    name = f'NPBCheck %benchmark={bench} %mpi=openmpi %compiler=gcc'
    reason = 'NPB not provided: give -S npb_source=DIR, -S npb_prefix=DIR'
    return Failure(name, 'local', 'default', env, verdict.SKIPPED, reason)


def test_a_table_a_person_reads():
    figures = [_cg(s, v, 1.0, 1.0) for s in (7, 27) for v in ('classic', 'pipelined')]
    figures[1] = _cg(7, 'pipelined', 1.5, 1.0)
    skips = [_npb_skip(b, e) for b in 'BT CG EP FT IS LU MG SP'.split() for e in 'ab']
    table = _table(*figures, fig(95, 100, -0.1, 0.1), failures=skips)
    lines = verdictview.format_table(table, width=160).splitlines()
    # One summary line per check; only what is not pass below it.
    assert 'CGSolverCheck: 4 test cases: 3 pass, 1 FASTER' in lines
    assert 'HPCCCheck: 1 test case: 1 pass' in lines
    rows = [line for line in lines if line.startswith('CGSolverCheck ')]
    # Names keep only the parameters that vary.
    assert len(rows) == 1 and rows[0].startswith('CGSolverCheck stencil=7 variant=')
    assert ' %' not in rows[0].split('  ')[0] and 'ranks_per_node' not in rows[0]
    # 16 skips, one line.
    assert (
        lines.count(
            '  16 NPBCheck tests: NPB not provided: give -S npb_source=DIR, '
            '-S npb_prefix=DIR'
        )
        == 1
    )
    verbose = verdictview.format_table(table, verbose=True, width=160)
    assert sum(line.startswith('CGSolverCheck ') for line in verbose.splitlines()) == 4
    every = verdictview.format_table(table, show_all=True, width=160).splitlines()
    assert sum('NPB not provided' in line for line in every) == 16
    assert any(line.startswith('  NPBCheck benchmark=BT on') for line in every)
    # The full names stay in csv.
    assert 'CGSolverCheck %stencil=7 %variant=pipelined %ranks_per_node=1' in (
        machineview.format_csv(table)
    )


def test_the_table_fits_the_terminal():
    long = 'OSUPointToPointCheck ' + ' '.join(f'%p{i}=value{i}' for i in range(12))
    figures = [
        fig(1.0, 2.0, -0.1, 0.1, name='bandwidth_peak_with_a_long_name', test=long),
        fig(1.0, 2.0, -0.1, 0.1, test=long.replace('value3', 'other3')),
    ]
    crash = 'the benchmark crashed: ' + 'a long reason ' * 30
    table = _table(*figures, failures=[Failure(long, 'local', 'p', 'e', 'run', crash)])
    for width in (160, 100):
        text = verdictview.format_table(table, verbose=True, width=width)
        assert max(map(len, text.splitlines())) <= width, text
        assert 'a long reason a long reason' in text  # wrapped, not cut


def test_junit_one_testcase_per_figure():
    table = _table(
        fig(95, 100, -0.1, 0.1),
        fig(80, 100, -0.1, 0.1, name='dgemm_star'),
        fig(120, 100, -0.1, 0.1, name='mpifft'),
        fig(5, name='ring_natural_latency', unit='us'),
        failures=[_npb_skip('CG', 'a')],
    )
    for strict, failed in ((False, {'dgemm_star'}), (True, {'dgemm_star', 'mpifft'})):
        root = ET.fromstring(machineview.format_junit(table, strict))
        cases = root.findall('./testsuite/testcase')
        assert len(cases) == 5
        names = {c.get('name') for c in cases if c.find('failure') is not None}
        assert names == failed | ({'ring_natural_latency'} if strict else set())
        assert root.get('failures') == str(len(names))
        assert root.get('skipped') == '1'
        (slow,) = [c for c in cases if c.get('name') == 'dgemm_star']
        assert slow.find('failure').get('type') == verdict.SLOWER


@pytest.mark.parametrize(
    'figure, expected',
    [
        # 12 % slower inside ±25 %: the band cannot tell, the verdict says so.
        (fig(88, 100, -0.25, 0.25), Verdict(Kind.INCONCLUSIVE, '-12 % inside ±25 %')),
        # The same change inside a band the threshold fits: a plain pass
        # (ReFrame's answer) is right, since 10 % would be flagged.
        (fig(92, 100, -0.1, 0.1), verdict.PASS),
        # Better than the reference, however wide the band: pass.
        (fig(120, 100, -0.25, 0.25), verdict.PASS),
        # Worse by less than the threshold: pass.
        (fig(95, 100, -0.25, 0.25), verdict.PASS),
        # A time: worse is higher, the bad side is the upper one.
        (
            fig(115, 100, -0.05, 0.3, name='time', unit='s'),
            Verdict(Kind.INCONCLUSIVE, '+15 % inside -5/+30 %'),
        ),
        (fig(85, 100, -0.3, 0.05, name='time', unit='s'), verdict.PASS),
        # No better direction: either side is bad.
        (
            fig(80, 100, -0.3, 0.3, name='iterations', unit=''),
            Verdict(Kind.INCONCLUSIVE, '-20 % inside ±30 %'),
        ),
        # A one-sided band open on the bad side judges nothing there.
        (fig(50, 100, None, 0.1), Verdict(Kind.INCONCLUSIVE, '-50 % inside -∞/+10 %')),
        # A share near zero: changes in points of the whole. 0.049 % against
        # 0.038 % is 0.01 points, nothing to say...
        (fig(0.049, 0.038, -1.0, 26.3, name='mpi_share', unit='%'), verdict.PASS),
        # ... a band of ±15 points cannot catch 12 points.
        (
            fig(32, 20, -0.75, 0.75, name='mpi_time_share', unit='%'),
            Verdict(Kind.INCONCLUSIVE, '+12 pp inside ±15 pp'),
        ),
    ],
)
def test_inconclusive_names_what_the_band_cannot_judge(figure, expected):
    (judged,) = verdict.group([figure])
    assert judged.verdict == expected
    # ReFrame's own verdict is unchanged: inside the band is a pass.
    if verdict.kind(expected) is Kind.INCONCLUSIVE:
        assert verdict.judge(figure) == verdict.PASS


def test_inconclusive_fails_only_strict_and_is_counted():
    table = verdict.rows(verdict.group([fig(88, 100, -0.25, 0.25)]), [])
    assert verdict.exit_code(table) == verdict.EXIT_OK
    assert verdict.exit_code(table, strict=True) == verdict.EXIT_STRICT
    assert verdictview.summary(table) == (
        '0 pass, 1 INCONCLUSIVE, 0 no reference, 0 FAILED'
    )
    assert 'INCONCLUSIVE (-12 % inside ±25 %)' in machineview.format_csv(table)


def test_inconclusive_against_a_baseline_run():
    base = [fig(v) for v in (100, 101, 99)]
    slower = [fig(v) for v in (88, 87, 89)]
    (judged,) = verdict.group(slower, base, tolerance=0.25)
    assert judged.verdict == Verdict(Kind.INCONCLUSIVE, '-12 % inside ±25 %')


def test_a_bare_kind_set_on_a_judged_figure_still_makes_a_row():
    # Rows added by other code (portable figures) may set a Kind alone.
    (judged,) = verdict.group([fig(95, 100, -0.1, 0.1)])
    judged.verdict = Kind.FASTER
    (row,) = verdict.rows([judged], [])
    assert judged.kind is Kind.FASTER and row.verdict == Verdict(Kind.FASTER)
    assert verdict.exit_code([row], strict=True) == verdict.EXIT_STRICT


@pytest.mark.parametrize(
    'shown',
    [
        Verdict(Kind.INCONCLUSIVE, '+27 % inside -31/+31 %'),
        Verdict(Kind.NO_REFERENCE),
        Verdict(Kind.FLAGGED, 'OpenBLAS chose its generic Prescott kernel (x)'),
        Verdict(Kind.UNRESOLVED, 'smallest resolved 3 %'),
    ],
)
def test_a_csv_cell_reads_back_as_its_verdict(shown):
    # A CI reading --format csv gets the kind back from the verdict column.
    assert verdict.parse(str(shown)) == shown
    assert verdict.kind(str(shown)) is shown.kind


def test_an_unknown_verdict_word_is_refused():
    with pytest.raises(ValueError):
        verdict.kind('GREAT (+3 %)')
