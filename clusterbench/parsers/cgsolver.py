"""Output of our sparse CG solver (src/cgsolver): its JSON line and verdict."""

import json
import math
import re

from clusterbench.core.errors import ClusterbenchError
from clusterbench.core.figures import HIGHER, LOWER, MEMORY, SOLVER, Band, Figure

_JSON_LINE = re.compile(r'^CGSOLVER_JSON: (\{.*\})\s*$', re.M)
_VERDICT = re.compile(r'^VERIFICATION (SUCCESSFUL|FAILED)\s*$', re.M)


class CGSolverParseError(ClusterbenchError):
    """Not a complete, verified cgsolver output."""


def parse(text, source='cgsolver output'):
    """The solver's machine-readable result as a dict."""
    found = _JSON_LINE.findall(text)
    if len(found) != 1:
        what = 'no' if not found else f'{len(found)}'
        raise CGSolverParseError(
            f'{source}: {what} CGSOLVER_JSON line(s), expected one'
        )
    try:
        return json.loads(found[0])
    except json.JSONDecodeError as err:
        raise CGSolverParseError(
            f'{source}: malformed CGSOLVER_JSON: {err.msg}'
        ) from None


def verify(text, source='cgsolver output', **expected):
    """Return the result of a verified run that matches *expected* fields.

    The solver's own verdict line and its ``verified`` flag must agree, and
    every ``expected`` field (ranks, class, stencil, variant, ...) must be the
    one that was asked for.
    """
    verdicts = _VERDICT.findall(text)
    if len(verdicts) > 1:
        # Several solvers each thought they were alone: launcher and MPI disagree.
        raise CGSolverParseError(
            f'{source}: {len(verdicts)} verification lines, expected one '
            f'(launcher and MPI library mismatched?)'
        )
    if verdicts != ['SUCCESSFUL']:
        state = verdicts[-1] if verdicts else 'line missing'
        raise CGSolverParseError(f'{source}: verification {state}')
    result = parse(text, source)
    if result.get('verified') is not True:
        raise CGSolverParseError(
            f'{source}: JSON says verified={result.get("verified")}'
        )
    for key, want in expected.items():
        if result.get(key) != want:
            raise CGSolverParseError(
                f'{source}: {key}={result.get(key)!r}, {want!r} requested'
            )
    return result


#: The 27-point stencil reuses more of its vector from cache than the
#: 7-point: the bytes model credits each entry once, while the kernel spends
#: more of its time on the 27 reads of it from cache (and its multiply-adds),
#: so it streams below the triad rate, on Zen 4 more so than on Intel. The
#: figures below are the CSR kernel's; the chunked SpMV (src/cgsolver/
#: chunks.h) reads 81-106 % on AMD-25-17 (evaluation/README.md, issue 43),
#: inside the band, whose floor stays where the stored sessions put it.
_STENCIL27_TRIAD_BAND = Band(
    40.0,
    140.0,
    'the 27-point stencil reads each vector entry 27 times, mostly from '
    'cache, and the bytes model credits it once: healthy 47.9-97 % '
    'AMD-25-17 (51.9-81 % in the stored issue-40 session, 47.9 % the lowest '
    'on the Slurm box, 52-97 % on a host loaded 3.6-4.9), 69-82 % '
    'Intel-6-207 (3 baseline sessions and 16 runs by hand); built -O0: 35 % '
    'Intel-6-207, 39-46.4 % AMD-25-17 (46.4 with 2 ranks on a host loaded '
    '4.8 on its 2 cores), which this floor cannot tell from a healthy 47.9 % '
    'without failing healthy runs: there the 7-point stencil of the same '
    'build (at most 44 % against its floor of 60) names it',
    healthy=(('AMD-25-17', 47.9), ('Intel-6-207', 69.0)),
    faulty=(('-O0', 'AMD-25-17', 46.4), ('-O0', 'Intel-6-207', 35.0)),
    where=(('stencil', '27'),),
)
#: The solver's memory bandwidth (bytes its kernels must move / time).
BANDWIDTH = Figure('bandwidth', 'GB/s', HIGHER, kind=SOLVER, bound=MEMORY)
# Figures the harness records: JSON key -> (declaration, scale).
FIGURES = {
    'time_s': (Figure('time', 's', LOWER, kind=SOLVER), 1.0),
    'gflops': (
        Figure(
            'gflops',
            'GFlop/s',
            HIGHER,
            headline='CG solver',
            kind=SOLVER,
            bound=MEMORY,
        ),
        1.0,
    ),
    'bandwidth_gbs': (BANDWIDTH, 1.0),
    # A count, not a figure of merit: a change either way is FLAGGED. The
    # same on a loaded host: `ab` pairs it from DISTURBED legs too.
    'iterations': (
        Figure('iterations', 'iterations', None, deterministic=True),
        1.0,
    ),
    'mpi_share': (
        Figure('mpi_share', '%', LOWER, of='the run time', share=True),
        100.0,
    ),
    # Portable, and steadier than the absolute rates: neighbours that take
    # memory bandwidth during the job slow the solve and the triad alike.
    'bandwidth_triad_share': (
        Figure(
            'job_triad_efficiency',
            '%',
            HIGHER,
            of='a triad over the same footprint, run in the same job before, '
            'between the iterations of, and after the solve',
            band=Band(
                60.0,
                140.0,
                'roofline (Williams et al. 2009): a memory-bound sparse CG '
                'moves its bytes at about the triad rate, and its kernels, '
                'mostly reads, may pass a triad that pays a write-allocate '
                'it is not credited for. The 7-point stencil, healthy: '
                '88-110 % AMD-25-17 (the stored session: 16 runs; 69-86 % on '
                'a host loaded 3.6-4.9 on its 2 cores), 84-107 % '
                'Intel-6-207 (3 baseline sessions, both MPIs, 1 and 2 ranks), '
                '69-99 % there in 16 runs of class B by hand; built -O0: '
                '36-44 % AMD-25-17 (1 rank; 26-40 % with 2 ranks on a '
                'loaded host), 51 % Intel-6-207. Built -O1 it reads 81 % '
                'AMD-25-17 (1 rank): no fault this ratio sees (a memory-bound '
                'solve needs no -O3)',
                healthy=(('AMD-25-17', 69.1), ('Intel-6-207', 69.0)),
                faulty=(('-O0', 'AMD-25-17', 44.1), ('-O0', 'Intel-6-207', 51.0)),
            ),
            variants=(_STENCIL27_TRIAD_BAND,),
        ),
        100.0,
    ),
}
#: Recorded when the output prints them: the solver prints its share of the
#: triad only for a solve that streams from memory (``memory_bound``), and
#: outputs of the solver before the triad have none.
OPTIONAL = frozenset({'bandwidth_triad_share'})
#: Portable: the solver's bandwidth against STREAM triad of the same session.
BANDWIDTH_TRIAD_EFFICIENCY = Figure(
    'bandwidth_triad_efficiency',
    '%',
    HIGHER,
    of="STREAM triad of the same session and node (HPCC's SingleSTREAM for "
    'one rank, StarSTREAM x ranks for more)',
    band=Band(
        30.0,
        180.0,
        'a memory-bound sparse CG moves its bytes at about the triad rate '
        '(roofline: Williams et al. 2009): 50-106 % AMD-25-1, 58-96 % '
        'Intel-6-207, 39-158 % AMD-25-17 whose StarSTREAM varies 2x between '
        'sessions; the 27-point stencil reuses more from cache (39-96 % '
        'AMD-25-17, 50-65 % AMD-25-1) and needs no band of its own here; '
        'built -O0 the solver moves 4.2-6.1 GB/s on AMD-25-17: at most 24 % '
        "of the stored sessions' triads",
        healthy=(('AMD-25-1', 50.0), ('AMD-25-17', 39.2), ('Intel-6-207', 58.1)),
        faulty=(('-O0', 'AMD-25-17', 24.1),),
    ),
)
DECLARED = (
    *(figure for figure, _ in FIGURES.values()),
    BANDWIDTH_TRIAD_EFFICIENCY,
)


def figures(result, source='cgsolver output'):
    out = {}
    for key, (figure, scale) in FIGURES.items():
        if key in OPTIONAL and key not in result:
            continue
        value = result.get(key)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise CGSolverParseError(f'{source}: no numeric {key}')
        if not math.isfinite(value * scale):
            # JSON's NaN and Infinity read as numbers: never a figure.
            raise CGSolverParseError(f'{source}: {key} is {value}: not a figure')
        out[figure.name] = (value * scale, figure.unit)
    return out


def replay_file(case):
    """The file of a stored run that :func:`replay` reads: the job's stdout."""
    return case.get('job_stdout') or 'rfm_job.out'


def replay(text, case, path):
    """Figures of a stored run's output *text* (read from *path*), verified
    again (``clusterbench replay``)."""
    expected = {'ranks': case['num_tasks']}
    for key, field in (
        ('problem_class', 'class'),
        ('stencil', 'stencil'),
        ('variant', 'variant'),
    ):
        if key in case:
            expected[field] = case[key]
    return figures(verify(text, source=path, **expected), path)
