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

import math

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


#: Official verification values of NPB 3.4.2 per benchmark and class: CG's
#: zeta, MG's L2 norm, EP's sums and Gaussian pairs, FT's checksum after the
#: last iteration, and BT/SP/LU's RMS norms of the residual and of the
#: solution error (LU also the surface integral) with the time step. IS
#: prints none. EP's sums are those of 3.4.2 (earlier releases define them
#: otherwise and are not held to them).
OFFICIAL_VALUES = {
    'bt': {
        'S': {
            'dt': 0.01,
            'error': (
                0.0004997691334581158,
                4.519566678296193e-05,
                7.397376517292135e-05,
                7.382123863243973e-05,
                0.0008926963098749145,
            ),
            'residual': (
                0.17034283709541312,
                0.012975252070034096,
                0.032527926989486054,
                0.0264364212751668,
                0.1921178413174443,
            ),
        },
        'W': {
            'dt': 0.0008,
            'error': (
                4.419655736008,
                0.4638531260002,
                1.011551749967,
                0.9235878729944,
                10.18045837718,
            ),
            'residual': (
                112.5590409344,
                11.80007595731,
                27.10329767846,
                24.69174937669,
                263.8427874317,
            ),
        },
        'A': {
            'dt': 0.0008,
            'error': (
                4.2348416040525025,
                0.443902824969957,
                0.9669248013634565,
                0.8830206303976548,
                9.737990177082928,
            ),
            'residual': (
                108.06346714637264,
                11.319730901220813,
                25.974354511582465,
                23.66562254467891,
                252.78963211748345,
            ),
        },
        'B': {
            'dt': 0.0003,
            'error': (
                52.96984714093686,
                4.463289611567067,
                13.122573342210174,
                12.006925323559145,
                124.59576151035986,
            ),
            'residual': (
                1423.3597229287254,
                99.33052259015024,
                356.46025644535285,
                324.8544795908409,
                3270.7541254659363,
            ),
        },
        'C': {
            'dt': 0.0001,
            'error': (
                164.62008369091265,
                11.497107903824313,
                41.20744620746151,
                37.08765105969417,
                362.11053051841265,
            ),
            'residual': (
                6239.8116551764615,
                507.93239190423964,
                1542.3530093013596,
                1330.238792929119,
                11604.087428436455,
            ),
        },
        'D': {
            'dt': 2e-05,
            'error': (
                310.0009377557,
                24.24086324913,
                77.82212022645,
                68.35623860116,
                606.5737200368,
            ),
            'residual': (
                25331.88551738,
                2346.39371698,
                6294.554366904,
                5352.56537603,
                39058.64038618,
            ),
        },
        'E': {
            'dt': 4e-06,
            'error': (
                432.7562208414,
                36.99051964887,
                108.9845040954,
                94.62517622043,
                776.5512765309,
            ),
            'residual': (
                97953.72484517,
                9739.814511521,
                24676.06342965,
                20924.1957286,
                139213.8856939,
            ),
        },
        'F': {
            'dt': 6e-07,
            'error': (
                509.5577042351,
                45.57065541652,
                128.6632140581,
                111.1419378722,
                872.0011709356,
            ),
            'residual': (
                424073.5175585,
                43487.01133212,
                107811.4688845,
                91421.60938556,
                587984.2143431,
            ),
        },
    },
    'cg': {
        'S': {'zeta': 8.5971775078648},
        'W': {'zeta': 10.362595087124},
        'A': {'zeta': 17.130235054029},
        'B': {'zeta': 22.712745482631},
        'C': {'zeta': 28.973605592845},
        'D': {'zeta': 52.514532105794},
        'E': {'zeta': 77.522164599383},
        'F': {'zeta': 107.3070826433},
    },
    'ep': {
        'S': {'gc': 13176389.0, 'sx': 10512994.20395306, 'sy': 10515171.31857535},
        'W': {'gc': 26354769.0, 'sx': 21025055.25182392, 'sy': 21031622.09578822},
        'A': {'gc': 210832767.0, 'sx': 168223563.2304711, 'sy': 168219512.3368299},
        'B': {'gc': 843345606.0, 'sx': 672892754.3423024, 'sy': 672895182.2504275},
        'C': {'gc': 3373275903.0, 'sx': 2691444083.862931, 'sy': 2691519118.724585},
        'D': {'gc': 53972171957.0, 'sx': 43063502808.12112, 'sy': 43063475718.59157},
        'E': {'gc': 863554308186.0, 'sx': 689016966316.7274, 'sy': 689016467068.8535},
        'F': {'gc': 13816870608324.0, 'sx': 11024267737881.75, 'sy': 11024267737879.93},
    },
    'ft': {
        'S': {'checksum': (554.2683411902, 493.2597244941), 'iteration': 6},
        'W': {'checksum': (550.4159734538, 523.9212247086), 'iteration': 6},
        'A': {'checksum': (509.1487099959, 510.7917842803), 'iteration': 6},
        'B': {'checksum': (512.4146770029, 511.5744692211), 'iteration': 20},
        'C': {'checksum': (512.9714421109, 512.3465164008), 'iteration': 20},
        'D': {'checksum': (511.8822370068, 511.979433806), 'iteration': 25},
        'E': {'checksum': (511.9876028049, 512.0550079284), 'iteration': 25},
        'F': {'checksum': (511.976857928, 511.9961575929), 'iteration': 25},
    },
    'lu': {
        'S': {
            'dt': 0.5,
            'error': (
                0.0006422331995796092,
                8.414434204734792e-05,
                5.8588269616485187e-05,
                5.847422259515735e-05,
                0.0013103347914111294,
            ),
            'residual': (
                0.016196343210976703,
                0.002197674516482132,
                0.0015179927653399185,
                0.0015029584435994323,
                0.03426407315589646,
            ),
            'surface': 7.841892886593708,
        },
        'W': {
            'dt': 0.0015,
            'error': (
                0.4867877144216,
                0.05064652880982,
                0.0928181810196,
                0.08570126542733,
                1.084277417792,
            ),
            'residual': (
                12.36511638192,
                1.317228477799,
                2.550120713095,
                2.326187750252,
                28.26799444189,
            ),
            'surface': 11.61399311023,
        },
        'A': {
            'dt': 2.0,
            'error': (
                29.964085685471943,
                2.819457636500335,
                7.347341269877474,
                6.713922568777705,
                70.71531568839258,
            ),
            'residual': (
                779.0210760668937,
                63.40276525969287,
                194.9924972729248,
                178.45301160418538,
                1838.4760349464248,
            ),
            'surface': 26.030925604886278,
        },
        'B': {
            'dt': 2.0,
            'error': (
                114.01176380212709,
                8.109896365542157,
                28.480597317698308,
                25.90539456783294,
                260.54907504857414,
            ),
            'residual': (
                3553.2672969982737,
                262.1475079531069,
                883.3372185095219,
                778.1277473942527,
                7308.796959254531,
            ),
            'surface': 47.88716270330823,
        },
        'C': {
            'dt': 2.0,
            'error': (
                215.98639971694928,
                15.57895592398636,
                54.13188630772078,
                48.22626431540454,
                455.90291004325036,
            ),
            'residual': (
                10376.698032353785,
                892.2124588010086,
                2562.3881458266087,
                2191.9434385783143,
                17807.80572610612,
            ),
            'surface': 66.64045535721813,
        },
        'D': {
            'dt': 1.0,
            'error': (
                375.2393004482,
                30.84128893659,
                94.34276905469,
                82.30686681928,
                700.262063621,
            ),
            'residual': (
                48684.17937025,
                4696.371050071,
                12181.14549776,
                10338.01493461,
                71423.98413817,
            ),
            'surface': 83.34101392503,
        },
        'E': {
            'dt': 0.5,
            'error': (
                480.0572578333,
                42.21993400184,
                121.0851906824,
                104.788898677,
                836.3028257389,
            ),
            'residual': (
                209964.1687874,
                21304.03143165,
                53192.28789371,
                45097.61639833,
                293236.000659,
            ),
            'surface': 95.12163272273,
        },
        'F': {
            'dt': 0.2,
            'error': (
                529.3914132486,
                47.84861621068,
                133.7701281659,
                115.4215049655,
                895.6266851467,
            ),
            'residual': (
                850512.5358152,
                87746.55318044,
                216725.8198851,
                183824.5257371,
                1175556.512415,
            ),
            'surface': 100.2509436546,
        },
    },
    'mg': {
        'S': {'rnm2': 5.307707005734e-05},
        'W': {'rnm2': 6.467329375339e-06},
        'A': {'rnm2': 2.433365309069e-06},
        'B': {'rnm2': 1.800564401355e-06},
        'C': {'rnm2': 5.70673228574e-07},
        'D': {'rnm2': 1.58327506044e-10},
        'E': {'rnm2': 5.630442584711e-11},
        'F': {'rnm2': 1.889225697989e-11},
    },
    'sp': {
        'S': {
            'dt': 0.015,
            'error': (
                2.7289258557377225e-05,
                1.0364446640837285e-05,
                1.615479828716647e-05,
                1.57507049944801e-05,
                3.417766618339053e-05,
            ),
            'residual': (
                0.02747031545133948,
                0.010360746705285417,
                0.016235745065095532,
                0.015840557224455615,
                0.03484904060936246,
            ),
        },
        'W': {
            'dt': 0.0015,
            'error': (
                7.542088599534e-05,
                6.512852253086e-06,
                1.049092285688e-05,
                1.128838671535e-05,
                0.0001212845639773,
            ),
            'residual': (
                0.001893253733584,
                0.0001717075447775,
                0.0002778153350936,
                0.0002887475409984,
                0.003143611161242,
            ),
        },
        'A': {
            'dt': 0.0015,
            'error': (
                0.0001090014029782055,
                3.734395176928209e-05,
                5.009278540654163e-05,
                4.767109393952825e-05,
                0.00013621613399213,
            ),
            'residual': (
                2.4799822399300195,
                1.1276337964368832,
                1.5028977888770492,
                1.421781621169518,
                2.129211303513828,
            ),
        },
        'B': {
            'dt': 0.001,
            'error': (
                0.009810006190188,
                0.00102282790567,
                0.001720597911692,
                0.001694479428231,
                0.01847456263981,
            ),
            'residual': (
                69.03293579998,
                30.95134488084,
                41.03336647017,
                38.64769009604,
                56.43482272596,
            ),
        },
        'C': {
            'dt': 0.00067,
            'error': (
                0.2598120500183,
                0.02590888922315,
                0.0513288641632,
                0.04806073419454,
                0.5483377491301,
            ),
            'residual': (
                588.1691581829,
                245.4417603569,
                329.3829191851,
                308.1924971891,
                459.7223799176,
            ),
        },
        'D': {
            'dt': 0.0003,
            'error': (
                5.089471423669,
                0.5323514855894,
                1.187051008971,
                1.083734951938,
                11.64108338568,
            ),
            'residual': (
                10446.96216887,
                3204.427762578,
                4648.680733032,
                4238.923283697,
                7588.412036136,
            ),
        },
        'E': {
            'dt': 0.0001,
            'error': (
                67.42735164909,
                5.390656036938,
                16.80647196477,
                15.36963126457,
                157.5330146156,
            ),
            'residual': (
                62553.87422609,
                14953.17020012,
                23475.95750586,
                20910.99783534,
                47704.12841218,
            ),
        },
        'F': {
            'dt': 1.5e-05,
            'error': (
                268.3717702444,
                20.30647554028,
                67.34864248234,
                59.4745130164,
                541.7636652565,
            ),
            'residual': (
                92816.28449462,
                22301.52287675,
                34931.02358632,
                31140.96186689,
                74244.26448298,
            ),
        },
    },
}
