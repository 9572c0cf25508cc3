import pytest

from clusterbench.bench import hpl_sizing
from clusterbench.core.errors import ClusterbenchError


@pytest.mark.parametrize(
    'nprocs, grid',
    [
        (1, (1, 1)),
        (2, (1, 2)),
        (4, (2, 2)),
        (6, (2, 3)),
        (7, (1, 7)),
        (128, (8, 16)),
        (512 * 64, (128, 256)),
    ],
)
def test_grid_is_most_nearly_square_and_flat(nprocs, grid):
    assert hpl_sizing.process_grid(nprocs) == grid


def test_problem_size_fills_the_requested_fraction():
    gib24 = 24 * 2**30
    n = hpl_sizing.problem_size(gib24, 0.035, 192, nprocs=2)
    assert n % (192 * 2) == 0
    used = 8 * n * n / gib24
    assert 0.03 < used <= 0.035


def test_problem_size_never_below_one_block_per_column():
    assert hpl_sizing.problem_size(2**20, 0.01, 192, nprocs=4) == 384


def test_large_cluster_sizes_scale_with_memory():
    one = hpl_sizing.problem_size(512 * 2**30, 0.8, 256, nprocs=128)
    many = hpl_sizing.problem_size(512 * 512 * 2**30, 0.8, 256, nprocs=512 * 128)
    assert many / one == pytest.approx(512**0.5, rel=0.01)


@pytest.mark.parametrize(
    'args, message',
    [
        ((2**30, 0, 192), 'fraction'),
        ((2**30, 1.5, 192), 'fraction'),
        ((2**30, 0.1, 0), 'NB'),
        ((0, 0.1, 192), 'memory'),
    ],
)
def test_bad_sizing_input(args, message):
    with pytest.raises(ClusterbenchError, match=message):
        hpl_sizing.problem_size(*args)


def test_no_processes():
    with pytest.raises(ClusterbenchError, match='at least one process'):
        hpl_sizing.process_grid(0)
