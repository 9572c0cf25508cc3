"""HPL inputs: N from memory, NB and the P x Q grid from ranks, and HPL.dat."""

import math

from clusterbench.core.errors import ClusterbenchError

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


# The HPL.dat layout (HPL 2.x; hpcc reads the same lines, then PTRANS's).
# One problem size, one NB, one grid; `device` 6 is stdout, 8 a file.
_HPL_DAT = """\
HPLinpack benchmark input file (written by clusterbench)
clusterbench
HPL.out      output file name (if any)
{device}            device out (6=stdout,7=stderr,file)
1            # of problems sizes (N)
{n}          Ns
1            # of NBs
{nb}         NBs
0            PMAP process mapping (0=Row-,1=Column-major)
1            # of process grids (P x Q)
{p}          Ps
{q}          Qs
16.0         threshold
1            # of panel fact
2            PFACTs (0=left, 1=Crout, 2=Right)
1            # of recursive stopping criterium
4            NBMINs (>= 1)
1            # of panels in recursion
2            NDIVs
1            # of recursive panel fact.
1            RFACTs (0=left, 1=Crout, 2=Right)
1            # of broadcast
1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)
1            # of lookahead depth
1            DEPTHs (>=0)
2            SWAP (0=bin-exch,1=long,2=mix)
64           swapping threshold
0            L1 in (0=transposed,1=no-transposed) form
0            U  in (0=transposed,1=no-transposed) form
1            Equilibration (0=no,1=yes)
8            memory alignment in double (> 0)
"""


def hpl_dat(problem, device=6):
    """The HPL.dat text of one problem ``{'n', 'nb', 'p', 'q'}``."""
    return _HPL_DAT.format(device=device, **problem)
