"""Reading ReFrame 4.10 JSON run reports into figures and failures."""

import json
import math
import re
from dataclasses import dataclass
from typing import Optional

from clusterbench.core import controlchars, disturbance, inputfile
from clusterbench.core.errors import ClusterbenchError
from clusterbench.core.reference import Reference
from clusterbench.judging import verdict
from clusterbench.results import retries
from clusterbench.results.reportschema import (  # noqa: F401 - its readers' names
    _TOO_DEEP,
    MAX_DEPTH,
    SCHEMA,
    _short,
    validate,
)

#: The phase recorded for a test case that was skipped with a reason.
SKIPPED = str(verdict.SKIPPED)


@dataclass(frozen=True)
class Origin:
    """Where and when a figure was measured: its ReFrame session (uuid, start
    time, the host ReFrame ran on), its job's nodes and their CPU identity
    (``cpu_kind``, vendor-family-model, and the model name). Empty strings
    where a report does not say."""

    session: str = ''
    timestamp: str = ''
    host: str = ''
    nodes: tuple = ()
    cpu_kind: str = ''
    cpu_model: str = ''
    #: The test case's run (--repeat, --reruns) and ReFrame's time_total of it.
    run_index: int = 0
    seconds: Optional[float] = None
    #: The nodes the test case asked for (ReFrame's num_nodes), else as many
    #: as it ran on: the same test at 1 and 2 nodes measures two things.
    num_nodes: int = 0
    #: What the first attempt of a test case that passed in a retry
    #: (--max-retries) ended as: ``TIMEOUT``, ``FAILED (sanity)``.
    retried_after: str = ''
    #: ReFrame's time_elapsed of the whole session (its fixtures too): the
    #: JUnit durations add up to it (judging.machineview).
    session_seconds: Optional[float] = None


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
    #: What ReFrame judged the figure against; None where it had no reference.
    ref: Optional[Reference]
    result: Optional[str]
    run_index: int = 0
    #: What a disturbed run broke ("steal 18 %"), None for an undisturbed one.
    disturbed: Optional[str] = None
    origin: Optional[Origin] = None


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
    origin: Optional[Origin] = None


def load(path):
    """Parse a ReFrame JSON report; one-line errors name the file."""
    try:
        # A regular file of a bounded size: a FIFO or /dev/zero is one line.
        text = inputfile.read_text(path)
        data = json.loads(text, object_pairs_hook=_unique_keys)
    except _DuplicateKey as err:
        raise ClusterbenchError(
            f'{path}: not a JSON report: duplicate key {_short(str(err))}'
        ) from None
    except OSError as err:
        raise ClusterbenchError(f'{path}: cannot read report: {err.strerror}') from None
    except json.JSONDecodeError as err:
        raise ClusterbenchError(
            f'{path}:{err.lineno}: not a JSON report: {err.msg}'
        ) from None
    except UnicodeDecodeError:
        raise ClusterbenchError(f'{path}: not a JSON report: not UTF-8 text') from None
    except RecursionError:
        # json's parser recurses once per level; validate() says the same of
        # any nesting deeper than MAX_DEPTH.
        raise ClusterbenchError(f'{path}: {_TOO_DEEP}') from None
    validate(data, path)
    _one_session(data, path)
    return data


class _DuplicateKey(ValueError):
    pass


def _unique_keys(pairs):
    """A JSON object; json's default keeps the last of two equal keys, so a
    report could say one figure twice and be judged on either."""
    data = dict(pairs)
    if len(data) != len(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return data


def _one_session(data, path):
    """Refuse a test case given twice in one run of the report: ReFrame
    writes each once (a retry or --reruns is another run, of another
    run_index; --repeat gives each repetition its own display and unique
    name), and copies would be samples outvoting the real one."""
    seen = {}
    for r, run in enumerate(data['runs']):
        index = run.get('run_index')
        for c, case in enumerate(run['testcases']):
            run_index = case.get('run_index')
            if not isinstance(run_index, int):
                run_index = index if isinstance(index, int) else r
            key = (
                case['display_name'],
                case['system'],
                case['partition'],
                case['environ'],
                run_index,
                case.get('name'),
                case.get('unique_name'),
            )
            where = f'runs[{r}].testcases[{c}]'
            first = seen.setdefault(key, where)
            if first != where:
                name, system, partition, environ = map(
                    controlchars.escaped,
                    (case['display_name'], *key[1:4]),
                )
                raise ClusterbenchError(
                    f'{path}: {where}: {name} on {system}:{partition} with '
                    f'{environ} (run {run_index}) appears twice (also {first}); '
                    f'one ReFrame session runs a test case once'
                )


def require_cases(data, path):
    """Refuse a report without a test case (fixtures aside): its verdict would
    be a pass that judged nothing."""
    if all(case.get('fixture') for case in cases(data, path)):
        raise ClusterbenchError(f'{path}: no test case in the report: nothing to judge')


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
    found = cases(data, path)
    index = case_index(found)
    # A failed attempt that a retry (--max-retries) replaced is no result.
    tries = retries.attempts(data)
    for case in found:
        if case.get('fixture') or retries.superseded(tries, case):
            continue
        # "name" is the test with its parameters, without a --repeat suffix.
        ident = (case['name'], case['system'], case['partition'], case['environ'])
        run_index = case.get('run_index') or 0
        phase = case.get('fail_phase')
        # A failed sanity check (or anything before it) leaves no figure.
        if case.get('result') in ('skip', 'fail_deps'):
            # A skip is a stated reason (no NPB tree, no Spack), not a failure.
            # ReFrame's report drops the skip message; our checks keep it. A
            # test skipped for its fixture's sake takes the fixture's reason.
            phase, reason = not_run(case, index)
            reason = retries.of_attempts(reason, tries, case)
            failures.append(
                Failure(*ident, phase, reason, run_index, origin_of(data, case))
            )
            continue
        if case.get('result') not in ('pass', 'xfail') and phase != 'performance':
            reason = retries.of_attempts(_failure_reason(case), tries, case)
            failures.append(
                Failure(
                    *ident, phase or 'unknown', reason, run_index, origin_of(data, case)
                )
            )
            continue
        disturbed = disturbance.read(case) or None
        origin = retries.noted(origin_of(data, case), tries, case)
        for key, values in (case.get('perfvalues') or {}).items():
            # A figure without a value is missing, never zero.
            if values[0] is not None:
                figures.append(
                    _figure(ident, key, values, run_index, path, disturbed, origin)
                )
    return figures, failures


def case_index(found):
    """The test cases of a report by how their dependents name them."""
    return {_case_key(c): c for c in found}


def not_run(case, index):
    """(phase, reason) of a test case skipped, or not run for its dependencies.

    Its own skip reason; else that of the fixture or dependency it waited for
    (*index*: :func:`case_index` of its report).
    """
    phase, reason = SKIPPED, case.get('skip_reason') or case.get('fail_reason')
    if not reason:
        phase, reason = _dependency_reason(case, index)
    if case.get('result') == 'fail_deps' and phase == SKIPPED:
        phase = 'unknown'
    return phase, _one_line(reason)


def _case_key(case):
    """How ``dependencies_actual`` names a test case of the same run."""
    return (
        case.get('run_index') or 0,
        case.get('unique_name'),
        f'{case.get("system")}:{case.get("partition")}',
        case.get('environ'),
    )


def _dependency_reason(case, index, depth=0):
    """(phase, reason) of the first dependency that did not pass.

    A skipped dependency gives its own skip reason; a failed one the phase and
    reason of its failure, named, since the dependent never ran.
    """
    for dep in case.get('dependencies_actual') or []:
        if not isinstance(dep, (list, tuple)) or len(dep) != 3:
            continue
        found = index.get((case.get('run_index') or 0, *dep))
        if found is None or found.get('result') in ('pass', 'xfail') or depth > 8:
            continue
        name = str(found.get('display_name') or found.get('name')).split(' ~')[0]
        if found.get('result') in ('skip', 'fail_deps'):
            reason = found.get('skip_reason') or found.get('fail_reason')
            if reason:
                return SKIPPED, reason
            return _dependency_reason(found, index, depth + 1)
        return found.get('fail_phase') or 'unknown', f'{name} failed: ' + (
            _failure_reason(found)
        )
    return SKIPPED, None


def _failure_reason(case):
    # ReFrame prefixes the phase ("sanity error: ...") or the kind of error
    # ("reframe error: ..."); the row names the phase itself.
    reason = _one_line(case.get('fail_reason'))
    for prefix in (f'{case.get("fail_phase")} error: ', 'reframe error: '):
        reason = reason.removeprefix(prefix)
    return reason


def origin_of(data, case):
    """The :class:`Origin` of *case*'s figures in the report *data*."""

    def text(where, key):
        value = where.get(key) if isinstance(where, dict) else None
        return value if isinstance(value, str) else ''

    info = data.get('session_info') or {}
    identity = case.get('machine_identity')
    nodes = case.get('job_nodelist')
    return Origin(
        text(info, 'uuid') or text(case, 'session_uuid'),
        _iso(text(info, 'time_start')),
        text(info, 'hostname'),
        tuple(n for n in nodes if isinstance(n, str))
        if isinstance(nodes, list)
        else (),
        text(case, 'cpu_kind') or text(identity, 'cpu_kind'),
        text(identity, 'model_name'),
        case.get('run_index') if isinstance(case.get('run_index'), int) else 0,
        _seconds(case.get('time_total')),
        _num_nodes(case.get('num_nodes'), nodes),
        session_seconds=_seconds(info.get('time_elapsed')),
    )


def _num_nodes(asked, nodes):
    if isinstance(asked, int) and not isinstance(asked, bool) and asked > 0:
        return asked
    return len(nodes) if isinstance(nodes, list) else 0


def _seconds(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


def _iso(stamp):
    """ReFrame's ``20261126T150201+0000`` as ISO 8601 (kept as is if not)."""
    match = re.fullmatch(
        r'(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)([+-]\d\d)(\d\d)', stamp
    )
    if not match:
        return stamp
    y, mo, d, h, mi, se, tzh, tzm = match.groups()
    return f'{y}-{mo}-{d}T{h}:{mi}:{se}{tzh}:{tzm}'


def _figure(ident, key, values, run_index, path, disturbed=None, origin=None):
    try:
        value, ref, lower, upper, unit, result = values
    except (TypeError, ValueError):
        raise ClusterbenchError(f'{path}: malformed perfvalue {key!r}') from None
    # ReFrame stores (0, None, None) when it found no reference.
    has_ref = not (ref == 0 and lower is None and upper is None)
    return Figure(
        *ident,
        key.rsplit(':', 1)[-1],
        value,
        unit or '',
        Reference(ref, lower, upper, unit or '') if has_ref else None,
        result,
        run_index,
        disturbed,
        origin,
    )


def _one_line(text):
    return ' '.join(str(text or 'no reason given').split())
