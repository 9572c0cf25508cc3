"""NAS Parallel Benchmarks 3.x (MPI): classes, problem sizes, rank rules, memory.

Facts about NPB, not NPB code. The problem sizes per class are those NPB's
``sys/setparams.c`` and ``IS/is.c`` define (the "Problem sizes" of
verification-values.md); the official verification values are those of the
NPB 3.4.2 release. The rank rules are the checks the MPI codes make, at build
time in 3.3 (``setparams``) and at run time in 3.4:

* BT, SP: a square number of processes p*p (3.4 runs a non-square count but
  leaves the excess processes idle), each cell at least 3 points wide
  (grid // p >= 3);
* LU: a p = x*y grid with y <= x <= 2y (1, 2, 4, 6, 8, 9, 12, 15, 16, ...),
  the grid NPB's ``isqrt2`` finds, and subdomains at least 3 points wide:
  not only powers of two;
* CG, IS: a power of two (anything else aborts); IS also needs at least 4
  processes for class D and 64 for class E, and at most 128 for class S and
  1024 otherwise; IS has no class F;
* FT: a power of two (3.4 runs other counts but does not verify them);
* MG: a power of two (3.4 leaves the excess processes idle);
* EP: any count up to the number of batches of 2^16 random pairs.

A count NPB would refuse, or run with idle processes, or run unverified, is
reported with the reason and never run.

The memory estimate: bytes per unit of problem size (grid point, matrix
entry, key) for the arrays each benchmark allocates, checked against the peak
resident memory of NPB 3.4 class A runs with Open MPI on a 2-core node (BT
64^3 on 1 rank: 113 MB, on 4 ranks: 178 MB; SP 96/158 MB; LU on 2 ranks:
73 MB; MG 256^3: 477 MB; FT 256x256x128: 484 MB; CG na=14000: 82 MB; IS 2^23
keys: 120 MB), rounded up, plus 64 MiB per process for the MPI runtime.
"""

import importlib.resources
import json
import math

from clusterbench.core.errors import ClusterbenchError

BENCHMARKS = ('bt', 'cg', 'ep', 'ft', 'is', 'lu', 'mg', 'sp')
CLASSES = ('S', 'W', 'A', 'B', 'C', 'D', 'E', 'F')
DEFAULT_CLASS = 'C'

#: BT, SP, LU: edge of the cubic grid, and time steps (LU: itmax).
GRID = {
    'bt': {'S': (12, 60), 'W': (24, 200), 'A': (64, 200), 'B': (102, 200),
           'C': (162, 200), 'D': (408, 250), 'E': (1020, 250), 'F': (2560, 250)},
    'sp': {'S': (12, 100), 'W': (36, 400), 'A': (64, 400), 'B': (102, 400),
           'C': (162, 400), 'D': (408, 500), 'E': (1020, 500), 'F': (2560, 500)},
    'lu': {'S': (12, 50), 'W': (33, 300), 'A': (64, 250), 'B': (102, 250),
           'C': (162, 250), 'D': (408, 300), 'E': (1020, 300), 'F': (2560, 300)},
}  # fmt: skip
#: MG: edge of the cubic grid, iterations.
MG = {'S': (32, 4), 'W': (128, 4), 'A': (256, 4), 'B': (256, 20), 'C': (512, 20),
      'D': (1024, 50), 'E': (2048, 50), 'F': (4096, 50)}  # fmt: skip
#: FT: nx, ny, nz, iterations.
FT = {'S': (64, 64, 64, 6), 'W': (128, 128, 32, 6), 'A': (256, 256, 128, 6),
      'B': (512, 256, 256, 20), 'C': (512, 512, 512, 20),
      'D': (2048, 1024, 1024, 25), 'E': (4096, 2048, 2048, 25),
      'F': (8192, 4096, 4096, 25)}  # fmt: skip
#: CG: na (matrix order), nonzer, niter.
CG = {'S': (1400, 7, 15), 'W': (7000, 8, 15), 'A': (14000, 11, 15),
      'B': (75000, 13, 75), 'C': (150000, 15, 75), 'D': (1500000, 21, 100),
      'E': (9000000, 26, 100), 'F': (54000000, 31, 100)}  # fmt: skip
#: EP: M (2^M random pairs, 2^(M+1) numbers).
EP = {'S': 24, 'W': 25, 'A': 28, 'B': 30, 'C': 32, 'D': 36, 'E': 40, 'F': 44}
#: IS: log2 of the keys, MIN_PROCS (the keys are TOTAL_KEYS * MIN_PROCS).
IS = {'S': (16, 1), 'W': (20, 1), 'A': (23, 1), 'B': (25, 1), 'C': (27, 1),
      'D': (29, 4), 'E': (29, 64)}  # fmt: skip
IS_ITERATIONS = 10
EP_BATCH_LOG2 = 16

#: Bytes per unit of problem size (see the module docstring for the basis).
_BYTES_PER_UNIT = {
    'bt': 450,  # per grid point
    'sp': 380,
    'lu': 200,
    'mg': 30,
    'ft': 60,
    'cg': 30,  # per na * (nonzer + 1)^2
    'is': 12,  # per key
    'ep': 0,
}
RANK_OVERHEAD_BYTES = 64 * 2**20
#: Share of a node's memory an NPB run may take.
MEMORY_HEADROOM = 0.9


def class_problem(benchmark, npb_class):
    """Why *npb_class* is not a class of *benchmark*, or ``None``."""
    if benchmark not in BENCHMARKS:
        return f'unknown NPB benchmark {benchmark!r} (one of {" ".join(BENCHMARKS)})'
    if npb_class not in CLASSES:
        return f'unknown NPB class {npb_class!r} (one of {" ".join(CLASSES)})'
    if benchmark == 'is' and npb_class not in IS:
        return f'IS has no class {npb_class}'
    return None


def problem(benchmark, npb_class):
    """The documented problem: what NPB prints as ``Size`` and ``Iterations``.

    ``size`` is a tuple of integers (grid edges, matrix order, keys or
    random numbers); ``iterations`` is the number NPB prints.
    """
    if benchmark in GRID:
        n, steps = GRID[benchmark][npb_class]
        return {'size': (n, n, n), 'iterations': steps}
    if benchmark == 'mg':
        n, nit = MG[npb_class]
        return {'size': (n, n, n), 'iterations': nit}
    if benchmark == 'ft':
        *size, niter = FT[npb_class]
        return {'size': tuple(size), 'iterations': niter}
    if benchmark == 'cg':
        na, _, niter = CG[npb_class]
        return {'size': (na,), 'iterations': niter}
    if benchmark == 'ep':
        return {'size': (2 ** (EP[npb_class] + 1),), 'iterations': 0}
    log2, min_procs = IS[npb_class]
    return {'size': (2**log2 * min_procs,), 'iterations': IS_ITERATIONS}


def _is_power_of_two(n):
    return n > 0 and n & (n - 1) == 0


def lu_grid(nprocs):
    """LU's process grid (x, y), x*y = nprocs, y <= x <= 2y; ``None`` if none."""
    for y in range(math.isqrt(nprocs), 0, -1):
        if nprocs % y == 0:
            x = nprocs // y
            return (x, y) if x <= 2 * y else None
    return None


def rank_problem(benchmark, npb_class, nprocs):
    """Why NPB's MPI *benchmark* cannot run class *npb_class* on *nprocs*.

    ``None`` when the combination is valid.
    """
    reason = class_problem(benchmark, npb_class)
    if reason:
        return reason
    if nprocs < 1:
        return f'{nprocs} processes: at least 1 needed'
    name = benchmark.upper()
    if benchmark in ('bt', 'sp'):
        side = math.isqrt(nprocs)
        if side * side != nprocs:
            return (
                f'{name} needs a square number of processes (1, 4, 9, 16, ...), '
                f'not {nprocs}'
            )
        edge = GRID[benchmark][npb_class][0]
        if edge // side < 3:
            return (
                f'{name} class {npb_class} on {nprocs} processes: cells of '
                f'{edge // side} points, NPB needs at least 3'
            )
        return None
    if benchmark == 'lu':
        grid = lu_grid(nprocs)
        if grid is None:
            return (
                f'LU needs a process count x*y with y <= x <= 2y '
                f'(1, 2, 4, 6, 8, 9, 12, ...), not {nprocs}'
            )
        edge = GRID['lu'][npb_class][0]
        if edge // grid[0] < 3:
            return (
                f'LU class {npb_class} on {nprocs} processes: subdomains of '
                f'{edge // grid[0]} points, NPB needs at least 3'
            )
        return None
    if benchmark == 'ep':
        batches = 2 ** (EP[npb_class] - EP_BATCH_LOG2)
        if nprocs > batches:
            return (
                f'EP class {npb_class} has {batches} batches of random numbers: '
                f'at most {batches} processes'
            )
        return None
    if not _is_power_of_two(nprocs):
        return f'{name} needs a power-of-two number of processes, not {nprocs}'
    if benchmark == 'is':
        min_procs = IS[npb_class][1]
        max_procs = 128 if npb_class == 'S' else 1024
        if not min_procs <= nprocs <= max_procs:
            return (
                f'IS class {npb_class} runs on {min_procs} to {max_procs} '
                f'processes, not {nprocs}'
            )
    return None


def valid_counts(benchmark, npb_class, upto):
    """Every valid process count from 1 to *upto*."""
    return [n for n in range(1, upto + 1) if not rank_problem(benchmark, npb_class, n)]


def default_ranks(benchmark, npb_class, cores):
    """The largest valid process count not above *cores*; ``None`` if none.

    One process per core: on 2 cores BT and SP get 1, the others 2.
    """
    counts = valid_counts(benchmark, npb_class, cores)
    return counts[-1] if counts else None


def _problem_units(benchmark, npb_class):
    if benchmark in GRID:
        return GRID[benchmark][npb_class][0] ** 3
    if benchmark == 'mg':
        return MG[npb_class][0] ** 3
    if benchmark == 'ft':
        nx, ny, nz, _ = FT[npb_class]
        return nx * ny * nz
    if benchmark == 'cg':
        na, nonzer, _ = CG[npb_class]
        return na * (nonzer + 1) ** 2
    if benchmark == 'is':
        return problem('is', npb_class)['size'][0]
    return 0


def memory_bytes(benchmark, npb_class, nprocs):
    """Estimated memory of a whole run (all processes), in bytes."""
    data = _BYTES_PER_UNIT[benchmark] * _problem_units(benchmark, npb_class)
    return data + nprocs * RANK_OVERHEAD_BYTES


def memory_problem(benchmark, npb_class, nprocs, mem_per_node, num_nodes=1):
    """Why the run cannot fit in *num_nodes* nodes of *mem_per_node* bytes."""
    need = memory_bytes(benchmark, npb_class, nprocs)
    have = MEMORY_HEADROOM * mem_per_node * num_nodes
    if need <= have:
        return None
    return (
        f'{benchmark.upper()} class {npb_class} on {nprocs} processes needs about '
        f'{_gib(need)} GiB, more than {MEMORY_HEADROOM:.0%} of the '
        f'{_gib(mem_per_node * num_nodes)} GiB of {num_nodes} node(s)'
    )


def _gib(nbytes):
    return f'{nbytes / 2**30:.1f}'


#: The file of the official values (below), shipped in the package's ``data/``.
OFFICIAL_VALUES_FILE = 'npb_official_values.json'


def _tuples(tree):
    if isinstance(tree, dict):
        return {key: _tuples(value) for key, value in tree.items()}
    if isinstance(tree, list):
        return tuple(_tuples(value) for value in tree)
    return tree


def _official_values(name=OFFICIAL_VALUES_FILE):
    """The verification values, read from the package's data file; a missing or
    broken file is one line naming it."""
    source = importlib.resources.files('clusterbench').joinpath('data').joinpath(name)
    try:
        return _tuples(json.loads(source.read_text()))
    except OSError as err:
        raise ClusterbenchError(f'{source}: cannot read: {err.strerror}') from None
    except json.JSONDecodeError as err:
        raise ClusterbenchError(f'{source}:{err.lineno}: not JSON: {err.msg}') from None


#: Official verification values of NPB 3.4.2 per benchmark and class: CG's
#: zeta, MG's L2 norm, EP's sums and Gaussian pairs, FT's checksum after the
#: last iteration, and BT/SP/LU's RMS norms of the residual and of the
#: solution error (LU also the surface integral) with the time step. IS
#: prints none. EP's sums are those of 3.4.2 (earlier releases define them
#: otherwise and are not held to them).
OFFICIAL_VALUES = _official_values()
