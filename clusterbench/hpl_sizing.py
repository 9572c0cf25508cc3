"""HPL problem sizing: N from memory, NB and the P x Q process grid from ranks."""

import math

from clusterbench.errors import ClusterbenchError

BYTES_PER_DOUBLE = 8


def process_grid(nprocs):
    """The most nearly square grid P x Q = nprocs with P <= Q (HPL prefers flat)."""
    if nprocs < 1:
        raise ClusterbenchError(f'HPL needs at least one process, got {nprocs}')
    p = math.isqrt(nprocs)
    while nprocs % p:
        p -= 1
    return p, nprocs // p


def problem_size(total_memory_bytes, fraction, nb, nprocs=1):
    """The HPL order N whose matrix fills *fraction* of *total_memory_bytes*.

    N is rounded down to a multiple of NB (and of the grid's columns, so every
    process owns whole blocks), and never smaller than one block per process.
    """
    if not 0 < fraction < 1:
        raise ClusterbenchError(
            f'HPL memory fraction must be in (0, 1), got {fraction}'
        )
    if nb < 1:
        raise ClusterbenchError(f'HPL block size NB must be positive, got {nb}')
    if total_memory_bytes <= 0:
        raise ClusterbenchError('HPL sizing needs the node memory (none was known)')
    _, q = process_grid(nprocs)
    n = math.isqrt(int(fraction * total_memory_bytes / BYTES_PER_DOUBLE))
    step = nb * q
    return max(step, n - n % step)
