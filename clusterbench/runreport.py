"""Reading ReFrame 4.10 JSON run reports into figures and failures."""

import json
from dataclasses import dataclass
from typing import Optional

from clusterbench.errors import ClusterbenchError

#: The phase recorded for a test case that was skipped with a reason.
SKIPPED = 'skipped'


@dataclass(frozen=True)
class Figure:
    """One performance figure of one test case, with ReFrame's reference."""

    test: str
    system: str
    partition: str
    environ: str
    variable: str
    value: float
    unit: str
    reference: Optional[float]
    lower: Optional[float]
    upper: Optional[float]
    result: Optional[str]
    run_index: int = 0
    #: What a disturbed run broke ("steal 18 %"), None for an undisturbed one.
    disturbed: Optional[str] = None

    @property
    def has_reference(self):
        return self.reference is not None


@dataclass(frozen=True)
class Failure:
    """A test case that produced no trustworthy figures, and why."""

    test: str
    system: str
    partition: str
    environ: str
    phase: str
    reason: str
    run_index: int = 0


def load(path):
    """Parse a ReFrame JSON report; one-line errors name the file."""
    try:
        with open(path) as report:
            data = json.load(report)
    except OSError as err:
        raise ClusterbenchError(f'{path}: cannot read report: {err.strerror}') from None
    except json.JSONDecodeError as err:
        raise ClusterbenchError(
            f'{path}:{err.lineno}: not a JSON report: {err.msg}'
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get('runs'), list):
        raise ClusterbenchError(f'{path}: not a ReFrame run report (no "runs" list)')
    return data


def cases(data, path='report'):
    """Every test case of every run (reruns and repeats are samples)."""
    found = []
    for run in data['runs']:
        for case in run.get('testcases', []):
            if not isinstance(case, dict) or not all(
                k in case for k in ('name', 'system', 'partition', 'environ')
            ):
                raise ClusterbenchError(
                    f'{path}: test case without name/system/partition/environ'
                )
            found.append(case)
    return found


def figures_and_failures(path):
    """All figures and all failed test cases recorded in the report at *path*."""
    return extract(load(path), path)


def extract(data, path):
    """Figures and failures of one parsed report (*path* names it in errors)."""
    figures, failures = [], []
    for case in cases(data, path):
        if case.get('fixture'):
            continue
        # "name" is the test with its parameters, without a --repeat suffix.
        ident = (case['name'], case['system'], case['partition'], case['environ'])
        run_index = case.get('run_index') or 0
        phase = case.get('fail_phase')
        # A failed sanity check (or anything before it) leaves no figure.
        if case.get('result') == 'skip':
            # A skip is a stated reason (no NPB tree, no Spack), not a failure.
            # ReFrame's report drops the skip message; our checks keep it.
            reason = _one_line(case.get('skip_reason') or case.get('fail_reason'))
            failures.append(Failure(*ident, SKIPPED, reason, run_index))
            continue
        if case.get('result') not in ('pass', 'xfail') and phase != 'performance':
            reason = _one_line(case.get('fail_reason'))
            # ReFrame prefixes the phase ("sanity error: ..."); the row names it.
            reason = reason.removeprefix(f'{phase} error: ')
            failures.append(Failure(*ident, phase or 'unknown', reason, run_index))
            continue
        disturbed = case.get('disturbed') or None
        for key, values in (case.get('perfvalues') or {}).items():
            figures.append(_figure(ident, key, values, run_index, path, disturbed))
    return figures, failures


def _figure(ident, key, values, run_index, path, disturbed=None):
    try:
        value, ref, lower, upper, unit, result = values
    except (TypeError, ValueError):
        raise ClusterbenchError(f'{path}: malformed perfvalue {key!r}') from None
    # ReFrame stores (0, None, None) when it found no reference.
    if ref == 0 and lower is None and upper is None:
        ref = None
    return Figure(
        *ident,
        key.rsplit(':', 1)[-1],
        value,
        unit or '',
        ref,
        lower,
        upper,
        result,
        run_index,
        disturbed,
    )


def _one_line(text):
    return ' '.join(str(text or 'no reason given').split())
