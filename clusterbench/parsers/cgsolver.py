"""Output of our sparse CG solver (src/cgsolver): its JSON line and verdict."""

import json
import math
import os
import re

from clusterbench.core.errors import ClusterbenchError

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


# Figures the harness records: JSON key -> (figure name, unit, scale).
FIGURES = {
    'time_s': ('time', 's', 1.0),
    'gflops': ('gflops', 'GFlop/s', 1.0),
    'bandwidth_gbs': ('bandwidth', 'GB/s', 1.0),
    'iterations': ('iterations', 'iterations', 1.0),
    'mpi_share': ('mpi_share', '%', 100.0),
}


def figures(result, source='cgsolver output'):
    out = {}
    for key, (name, unit, scale) in FIGURES.items():
        value = result.get(key)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise CGSolverParseError(f'{source}: no numeric {key}')
        if not math.isfinite(value * scale):
            # JSON's NaN and Infinity read as numbers: never a figure.
            raise CGSolverParseError(f'{source}: {key} is {value}: not a figure')
        out[name] = (value * scale, unit)
    return out


def replay_file(case):
    """The file of a stored run that :func:`replay` reads: the job's stdout."""
    return case.get('job_stdout') or 'rfm_job.out'


def replay(directory, case):
    """Figures of a stored run, verified again (``clusterbench replay``)."""
    path = os.path.join(directory, replay_file(case))
    try:
        with open(path) as f:
            text = f.read()
    except OSError as err:
        raise CGSolverParseError(f'{path}: {err.strerror}') from None
    expected = {'ranks': case['num_tasks']}
    for key, field in (
        ('problem_class', 'class'),
        ('stencil', 'stencil'),
        ('variant', 'variant'),
    ):
        if key in case:
            expected[field] = case[key]
    return figures(verify(text, source=path, **expected), path)
