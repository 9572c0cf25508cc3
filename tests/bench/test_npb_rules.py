"""NPB's rank rules, class table and memory estimates (clusterbench.bench.npb_rules)."""

import fnmatch
import os
import tomllib

import pytest
from conftest import PROJECT, read

from clusterbench.bench import npb_rules as rules
from clusterbench.core.errors import ClusterbenchError
from clusterbench.parsers import npb

GiB = 2**30


@pytest.mark.parametrize(
    'bench, valid',
    [
        ('bt', [1, 4, 9, 16, 25, 36, 49, 64]),
        ('sp', [1, 4, 9, 16, 25, 36, 49, 64]),
        ('cg', [1, 2, 4, 8, 16, 32, 64]),
        ('ft', [1, 2, 4, 8, 16, 32, 64]),
        ('mg', [1, 2, 4, 8, 16, 32, 64]),
        ('is', [1, 2, 4, 8, 16, 32, 64]),
        ('ep', list(range(1, 65))),
    ],
)  # fmt: skip
def test_valid_counts_class_c(bench, valid):
    assert rules.valid_counts(bench, 'C', 64) == valid


def _isqrt2(n):
    """NPB's search for LU's grid, step by step: x from just above sqrt(n)."""
    x, square = 1, 0
    while square <= n:
        square = x * x
        if square == n:
            return x
        x += 1
    x -= 1
    y = n // x
    while x * y != n and 2 * y >= x:
        x += 1
        y = n // x
    return x if x * y == n and 2 * y >= x else None


def test_lu_counts_are_those_npb_accepts():
    # NPB 3.4: x*y with y <= x <= 2y (6, 9, 12, ...), not only powers of two.
    accepted = [n for n in range(1, 257) if _isqrt2(n)]
    assert rules.valid_counts('lu', 'E', 256) == accepted
    assert accepted[:12] == [1, 2, 4, 6, 8, 9, 12, 15, 16, 18, 20, 24]
    for n in accepted:
        x, y = rules.lu_grid(n)
        assert x == _isqrt2(n) and x * y == n


def test_lu_grid_is_npbs():
    assert rules.lu_grid(8) == (4, 2)
    assert rules.lu_grid(9) == (3, 3)
    assert rules.lu_grid(12) == (4, 3)
    assert rules.lu_grid(3) is None
    assert rules.lu_grid(10) is None  # 5x2: x > 2y
    assert rules.lu_grid(14) is None


@pytest.mark.parametrize(
    'args, message',
    [
        (('bt', 'C', 2), 'BT needs a square number of processes (1, 4, 9, 16, ...), '
                         'not 2'),
        (('sp', 'A', 8), 'SP needs a square number'),
        (('bt', 'S', 25), 'BT class S on 25 processes: cells of 2 points'),
        (('cg', 'C', 6), 'CG needs a power-of-two number of processes, not 6'),
        (('ft', 'B', 3), 'FT needs a power-of-two'),
        (('mg', 'C', 12), 'MG needs a power-of-two'),
        (('is', 'D', 2), 'IS class D runs on 4 to 1024 processes, not 2'),
        (('is', 'E', 32), 'IS class E runs on 64 to 1024 processes'),
        (('is', 'S', 256), 'IS class S runs on 1 to 128 processes'),
        (('is', 'F', 4), 'IS has no class F'),
        (('lu', 'C', 10), 'LU needs a process count x*y with y <= x <= 2y'),
        (('lu', 'S', 32), 'LU class S on 32 processes: subdomains of 1 points'),
        (('ep', 'S', 512), 'EP class S has 256 batches'),
        (('cg', 'G', 2), "unknown NPB class 'G'"),
        (('xx', 'C', 2), "unknown NPB benchmark 'xx'"),
        (('ep', 'C', 0), '0 processes: at least 1 needed'),
    ],
)  # fmt: skip
def test_invalid_combinations_name_the_reason(args, message):
    assert message in rules.rank_problem(*args)


def test_default_ranks_one_per_core():
    # This machine: 2 cores; BT and SP take the square below.
    assert {b: rules.default_ranks(b, 'C', 2) for b in rules.BENCHMARKS} == {
        'bt': 1, 'cg': 2, 'ep': 2, 'ft': 2, 'is': 2, 'lu': 2, 'mg': 2, 'sp': 1,
    }  # fmt: skip
    assert rules.default_ranks('bt', 'C', 24) == 16
    assert rules.default_ranks('lu', 'C', 24) == 24
    assert rules.default_ranks('cg', 'C', 24) == 16
    assert rules.default_ranks('is', 'E', 2) is None  # needs 64


def test_recorded_runs_are_valid_combinations(fixtures_dir):
    for name in os.listdir(os.path.join(fixtures_dir, 'npb')):
        if name.endswith('.out'):
            bench, cls, nprocs = name.split('.')[:3]
            assert rules.rank_problem(bench, cls, int(nprocs)) is None, name


def test_recorded_sizes_are_the_documented_problems(fixtures_dir):
    for name in os.listdir(os.path.join(fixtures_dir, 'npb')):
        if name.endswith('.out'):
            bench, cls = name.split('.')[:2]
            result = npb.parse(read(os.path.join(fixtures_dir, 'npb', name)))
            documented = rules.problem(bench, cls)
            assert result['size'] == documented['size'], name
            assert result['iterations'] == documented['iterations'], name


def test_memory_grows_with_class_and_covers_the_measured_class_a():
    # Peak resident memory of NPB 3.4 class A runs on this kind of machine.
    measured = {('bt', 4): 178e6, ('sp', 4): 158e6, ('lu', 2): 73e6,
                ('mg', 2): 477e6, ('ft', 2): 484e6, ('cg', 2): 82e6,
                ('is', 2): 120e6}  # fmt: skip
    for (bench, nprocs), peak in measured.items():
        estimate = rules.memory_bytes(bench, 'A', nprocs)
        assert peak <= estimate <= 4 * peak, bench
    for bench in rules.BENCHMARKS:
        sizes = [rules.memory_bytes(bench, c, 4) for c in 'SWABCDE' if c != 'F']
        assert sizes == sorted(sizes), bench


def test_class_c_fits_a_24_gib_node_and_class_d_mostly_not():
    for bench in rules.BENCHMARKS:
        ranks = rules.default_ranks(bench, 'C', 2)
        assert rules.memory_problem(bench, 'C', ranks, 24 * GiB) is None, bench
    reason = rules.memory_problem('ft', 'D', 2, 24 * GiB)
    assert reason == (
        'FT class D on 2 processes needs about 120.1 GiB, more than 90% of the '
        '24.0 GiB of 1 node(s)'
    )
    assert rules.memory_problem('ft', 'D', 2, 24 * GiB, num_nodes=8) is None
    assert rules.memory_problem('ep', 'F', 2, 24 * GiB) is None


def test_official_values_are_a_data_file_shipped_in_the_package():
    with open(os.path.join(PROJECT, 'pyproject.toml'), 'rb') as f:
        shipped = tomllib.load(f)['tool']['setuptools']['package-data']['clusterbench']
    name = f'data/{rules.OFFICIAL_VALUES_FILE}'
    assert any(fnmatch.fnmatch(name, pattern) for pattern in shipped)
    assert rules.OFFICIAL_VALUES['cg']['A'] == {'zeta': 17.130235054029}
    assert rules.OFFICIAL_VALUES['bt']['S']['error'][0] == 0.0004997691334581158
    with pytest.raises(ClusterbenchError, match=r'no_such\.json: cannot read'):
        rules._official_values('no_such.json')
