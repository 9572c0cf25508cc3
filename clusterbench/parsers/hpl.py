"""Output of HPL (``xhpl`` 2.x, or the HPL section of HPC Challenge).

HPL prints one result line per problem (``WR11C2R4  N  NB  P  Q  Time  Gflops``)
followed by its scaled-residual check (``... PASSED``/``FAILED``), and a final
count of tests that passed and failed. A figure is trusted only when every
test passed its residual check.
"""

import re

from clusterbench.core.errors import ClusterbenchError
from clusterbench.core.figures import HIGHER, LOWER, Band, Figure

_RESULT = re.compile(
    r'^(W[RC]\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+([\d.eE+-]+)\s+([\d.eE+-]+)\s*$',
    re.M,
)
_RESIDUAL = re.compile(r'^\|\|Ax-b\|\|.*=\s*([\d.eE+-]+)\s+\.+\s+(PASSED|FAILED)', re.M)
_PASSED = re.compile(r'^\s*(\d+) tests completed and passed residual checks', re.M)
_FAILED = re.compile(r'^\s*(\d+) tests completed and failed residual checks', re.M)
_SECTION = re.compile(
    r'^Begin of HPL section\.$(.*?)^End of HPL section\.$', re.M | re.S
)


class HPLParseError(ClusterbenchError):
    """Not a complete HPL output whose every test passed its residual check."""


def verify(text, source='HPL output', n=None, nprocs=None):
    """Return the tests of a run whose residual checks all passed.

    Each test is ``{'variant', 'n', 'nb', 'p', 'q', 'time', 'gflops',
    'residual'}``. *n* and *nprocs* (P x Q), when given, must be what ran.
    """
    section = _SECTION.search(text)
    if section:
        text = section.group(1)
    results = _RESULT.findall(text)
    residuals = _RESIDUAL.findall(text)
    passed, failed = _PASSED.search(text), _FAILED.search(text)
    if not results:
        raise HPLParseError(f'{source}: no HPL result line (T/V N NB P Q Time Gflops)')
    if failed and int(failed.group(1)) or any(v == 'FAILED' for _, v in residuals):
        raise HPLParseError(f'{source}: residual check FAILED')
    if not passed or len(residuals) != len(results):
        raise HPLParseError(f'{source}: residual check missing (run cut short?)')
    if int(passed.group(1)) != len(results):
        raise HPLParseError(
            f'{source}: {passed.group(1)} tests passed, {len(results)} ran'
        )
    tests = [
        {
            'variant': variant,
            'n': int(nn),
            'nb': int(nb),
            'p': int(p),
            'q': int(q),
            'time': float(time),
            'gflops': float(gflops),
            'residual': float(residual),
        }
        for (variant, nn, nb, p, q, time, gflops), (residual, _) in zip(
            results, residuals
        )
    ]
    for test in tests:
        if n is not None and test['n'] != n:
            raise HPLParseError(f'{source}: N={test["n"]}, {n} requested')
        if nprocs is not None and test['p'] * test['q'] != nprocs:
            raise HPLParseError(
                f'{source}: P x Q = {test["p"]} x {test["q"]}, {nprocs} ranks requested'
            )
    return tests


#: HPL's figures, declared once (HPCC's HPL section records the same rate).
HPL = Figure('hpl', 'GFlop/s', HIGHER, headline='HPL')
HPL_TIME = Figure('hpl_time', 's', LOWER)
# Figures the harness records: test key -> (declaration, scale).
FIGURES = {'gflops': (HPL, 1.0), 'time': (HPL_TIME, 1.0)}
#: Portable: judged in every run against the peak of the node it ran on.
HPL_PEAK_EFFICIENCY = Figure(
    'hpl_peak_efficiency',
    '%',
    HIGHER,
    of="the nodes' double-precision peak (computed or declared)",
    band=Band(
        50.0,
        150.0,
        'HPL on CPUs reaches 60-90 % of Rpeak at the base clock (TOP500 '
        'lists); a guest reads its nominal clock and turbo goes above it: '
        '80 % AMD-25-1 at 2445 MHz, 100-113 % AMD-25-17 at 2600 MHz (14 '
        'sessions), 59-73 % Intel-6-207 at 2100 MHz (3 sessions); the '
        'generic Prescott BLAS kernel: 42.7-43.8 % AMD-25-17, 11 % '
        'Intel-6-207',
        healthy=(('AMD-25-1', 79.7), ('AMD-25-17', 100.2), ('Intel-6-207', 59.3)),
        faulty=(
            ('generic BLAS', 'AMD-25-17', 43.8),
            ('generic BLAS', 'Intel-6-207', 10.7),
        ),
    ),
)
DECLARED = (HPL, HPL_TIME, HPL_PEAK_EFFICIENCY)


def figures(tests, source='HPL output'):
    """The best test's rate and time (*source*: the signature of every parser)."""
    best = max(tests, key=lambda t: t['gflops'])
    return {
        figure.name: (best[key] * scale, figure.unit)
        for key, (figure, scale) in FIGURES.items()
    }
