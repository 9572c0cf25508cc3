"""The statistics of `clusterbench ab` on crafted paired samples: a 10 %
slowdown inside 3 % noise is found, no change is not, and the verdict
follows the figure's direction."""

import math
import random

import pytest

from clusterbench.judging import paired, stats, verdict


def blocks(n, ratio, noise, seed, drift=0.0, value=100.0, position=()):
    """Samples of *n* blocks (ABBA, BAAB in turn) of a time figure (s): B = A x
    *ratio*, each leg with relative *noise*, the machine drifting by *drift*
    per leg, and the leg at each position of a block slowed by *position*."""
    rng = random.Random(seed)
    samples, leg = [], 0
    for block in range(n):
        for where, arm in enumerate(paired.block_order(block)):
            true = value * (1 + drift * leg) * (ratio if arm == paired.B else 1)
            true *= 1 + (position[where] if position else 0.0)
            true *= math.exp(rng.gauss(0, noise))
            samples.append(paired.Sample(arm, block, 'T', 'time', 's', true))
            leg += 1
    return samples


def test_a_ten_percent_slowdown_is_found_in_nearly_every_run():
    found = [paired.judge(blocks(8, 1.10, 0.03, seed))[0][-1] for seed in range(100)]
    assert found.count(verdict.SLOWER) >= 95


@pytest.mark.parametrize('confidence, most', [(0.99, 6), (0.95, 16)])
def test_no_change_is_rarely_a_finding(confidence, most):
    rows = [
        paired.judge(blocks(8, 1.0, 0.03, seed), confidence)[0] for seed in range(200)
    ]
    false = [row for row in rows if row[-1] != paired.NO_DIFFERENCE]
    # 1 or 5 in 100 expected (2 or 10 of 200); a few more by chance, no more.
    assert len(false) <= most
    assert all(row[8] < 0.10 for row in rows)  # each run could resolve 10 %
    assert {row[11] for row in rows} == {confidence}


def test_99_percent_is_the_default_and_the_table_says_which():
    rows = paired.judge(blocks(8, 1.0, 0.03, 7))
    assert rows[0][11] == paired.CONFIDENCE == 0.99
    assert 'B/A [99 % CI]' in paired.render(rows)
    wide, narrow = rows[0][8], paired.judge(blocks(8, 1.0, 0.03, 7), 0.95)[0][8]
    # The same pairs: only Student's quantile differs (7 degrees of freedom).
    assert wide / narrow == pytest.approx(3.499 / 2.365, rel=0.01)
    assert 'B/A [95 % CI]' in paired.render(paired.judge(blocks(8, 1.0, 0.03, 7), 0.95))


def test_a_drift_of_the_machine_cancels_in_the_blocks():
    # 2 % slower every leg: 48 % over the run, and no change between A and B.
    rows = [
        paired.judge(blocks(6, 1.0, 0.005, seed, drift=0.02))[0] for seed in range(20)
    ]
    assert [row[-1] for row in rows].count(paired.NO_DIFFERENCE) >= 19


def test_the_direction_comes_from_the_vocabulary():
    faster = blocks(5, 1 / 1.2, 0.01, 1)  # less time: B faster
    assert paired.judge(faster)[0][-1] == verdict.FASTER
    rate = [
        paired.Sample(s.arm, s.block, 'T', 'gflops', 'GFlop/s', 1000 / s.value)
        for s in faster
    ]
    assert paired.judge(rate)[0][-1] == verdict.FASTER  # a higher rate
    odd = [paired.Sample(s.arm, s.block, 'T', 'n', '', s.value) for s in faster]
    assert paired.judge(odd)[0][-1] == verdict.FLAGGED  # no better direction


def test_disturbed_samples_are_left_out_and_counted():
    samples = blocks(4, 1.0, 0.01, 2)
    samples[0].disturbed = 'steal 20 %'  # the first A of block 0
    samples[1].disturbed = 'steal 20 %'
    row = paired.judge(samples)[0]
    assert row[10] == 2
    assert row[9] == 4  # block 0 still has an A and a B
    assert '2 disturbed left out' in paired.render([row])


def test_one_pair_resolves_nothing_and_a_figure_of_one_arm_is_not_paired():
    one = blocks(1, 2.0, 0.01, 3)
    assert paired.judge(one)[0][-1] == paired.NOT_PAIRED
    only_a = [s for s in blocks(3, 1.0, 0.01, 3) if s.arm == paired.A]
    rows = paired.judge(only_a)
    assert rows[0][-1] == paired.NOT_PAIRED
    assert paired.exit_code(rows) == verdict.EXIT_OK
    assert paired.exit_code(rows, strict=True) == verdict.EXIT_STRICT


def test_exit_codes():
    slower = paired.judge(blocks(6, 1.10, 0.01, 4))
    same = paired.judge(blocks(6, 1.0, 0.01, 4))
    faster = paired.judge(blocks(6, 0.9, 0.01, 4))
    assert paired.exit_code(slower) == verdict.EXIT_REGRESSION
    assert paired.exit_code(same) == verdict.EXIT_OK
    assert paired.exit_code(same, strict=True) == verdict.EXIT_OK  # resolves 10 %
    assert paired.exit_code(faster, strict=True) == verdict.EXIT_OK
    noisy = paired.judge(blocks(3, 1.0, 0.2, 4))
    assert paired.exit_code(noisy, strict=True) == verdict.EXIT_STRICT


def test_the_interval_is_the_t_interval_of_the_log_ratios():
    pairs = [(1.0, 1.1), (1.0, 1.2), (1.0, 1.0)]
    logs = [math.log(1.1), math.log(1.2), 0.0]
    mean = sum(logs) / 3
    sd = math.sqrt(sum((v - mean) ** 2 for v in logs) / 2)
    for confidence, t in ((0.95, 4.303), (0.99, 9.925)):
        low, point, high = stats.paired_ratio_ci(pairs, confidence)
        assert point == pytest.approx(math.exp(mean))
        assert high == pytest.approx(math.exp(mean + t * sd / math.sqrt(3)))
        assert low == pytest.approx(math.exp(mean - t * sd / math.sqrt(3)))
    with pytest.raises(ValueError):
        stats.paired_ratio_ci([(0.0, 1.0), (1.0, 1.0)])
    with pytest.raises(ValueError, match='confidence 0.9'):
        stats.paired_ratio_ci(pairs, 0.9)


@pytest.mark.parametrize(
    'df, t95, t99', [(1, 12.706, 63.657), (15, 2.131, 2.947), (40, 2.021, 2.704),
                     (120, 1.980, 2.617), (10**6, 1.960, 2.576)],
)  # fmt: skip
def test_students_quantiles_beyond_the_table_stay_close(df, t95, t99):
    assert stats.t_quantile(df, 0.95) == pytest.approx(t95, rel=0.002)
    assert stats.t_quantile(df, 0.99) == pytest.approx(t99, rel=0.002)


def test_csv_and_json_carry_every_column():
    rows = paired.judge(blocks(3, 1.0, 0.01, 5))
    csv_text = paired.render(rows, 'csv')
    assert csv_text.splitlines()[0].split(',') == list(paired.COLUMNS)
    assert '"verdict": "no difference resolved"' in paired.render(rows, 'json')


def test_a_test_that_failed_in_a_leg_fails_the_ab_run():
    from clusterbench.results.runreport import Failure

    broken = Failure('T', 'local', 'default', 'gnu-mpich', 'compile', 'no mpicc')
    rows = paired.judge(blocks(4, 1.0, 0.01, 6)) + paired.failure_rows(
        [(paired.B, broken)]
    )
    assert paired.exit_code(rows) == verdict.EXIT_REGRESSION
    assert 'FAILED (arm B, compile: no mpicc)' in paired.render(rows)


def test_each_arm_holds_every_position_of_a_block_equally_often():
    assert paired.block_order(0) == ('A', 'B', 'B', 'A')
    assert paired.block_order(1) == ('B', 'A', 'A', 'B')
    for where in range(4):
        arms = [paired.block_order(block)[where] for block in range(4)]
        assert arms.count(paired.A) == arms.count(paired.B) == 2


def test_an_effect_of_the_position_in_a_block_cancels():
    # The first and last legs of a block run 3 % fast (after and before a
    # pause): over ABBA and BAAB blocks that falls on A and B alike.
    first_last = (-0.03, 0.0, 0.0, -0.03)
    ratios = [
        paired.judge(blocks(6, 1.0, 0.0, seed, position=first_last))[0][5]
        for seed in range(3)
    ]
    assert all(r == pytest.approx(1.0, abs=1e-9) for r in ratios), ratios
