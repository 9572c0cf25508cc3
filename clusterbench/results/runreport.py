"""Reading ReFrame 4.10 JSON run reports into figures and failures."""

import json
import math
import re
from dataclasses import dataclass
from typing import Optional

import jsonschema

from clusterbench.core.errors import ClusterbenchError

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
            data = json.load(report, object_pairs_hook=_unique_keys)
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


def require_cases(data, path):
    """Refuse a report without a test case (fixtures aside): its verdict would
    be a pass that judged nothing."""
    if all(case.get('fixture') for case in cases(data, path)):
        raise ClusterbenchError(f'{path}: no test case in the report: nothing to judge')


def _nullable(kind):
    return {'type': [kind, 'null']}


_NUMBER = _nullable('number')
_TEXT = _nullable('string')
_NAME = {'type': 'string', 'pattern': r'^\S', 'description': 'a test name'}
_TEXTS = {'type': ['array', 'null'], 'items': {'type': 'string'}}

#: The parts of a ReFrame 4.10 run report that clusterbench reads, and their
#: types. Checked before any of it is used, so a foreign file (a SARIF log also
#: has a "runs" list) or a hand-edited one is one line, never a traceback or an
#: empty, passing table.
SCHEMA = {
    'type': 'object',
    'required': ['session_info', 'runs'],
    'properties': {
        'session_info': {
            'type': 'object',
            'properties': {
                'uuid': _TEXT,
                'num_cases': _nullable('integer'),
                'time_start_unix': _NUMBER,
                'time_end_unix': _NUMBER,
            },
        },
        'runs': {
            'type': 'array',
            'items': {
                'type': 'object',
                'required': ['testcases'],
                'properties': {
                    'testcases': {'type': 'array', 'items': {'$ref': '#/$defs/case'}}
                },
            },
        },
    },
    '$defs': {
        'case': {
            'type': 'object',
            'required': ['display_name', 'system', 'partition', 'environ'],
            'properties': {
                'name': _NAME,
                'display_name': _NAME,
                'unique_name': _TEXT,
                'system': {'type': 'string'},
                'partition': {'type': 'string'},
                'environ': {'type': 'string'},
                'result': _TEXT,
                'fail_phase': _TEXT,
                'fail_reason': _TEXT,
                'skip_reason': _TEXT,
                # [[unique_name, "system:partition", environ], ...]
                'dependencies_actual': {
                    'type': ['array', 'null'],
                    'items': {'type': 'array', 'items': {'type': 'string'}},
                },
                'fixture': {'type': 'boolean'},
                'run_index': _nullable('integer'),
                'num_tasks': _nullable('integer'),
                'num_nodes': _nullable('integer'),
                'scheduler': _TEXT,
                'job_completion_time_unix': _NUMBER,
                'outputdir': _TEXT,
                'stagedir': _TEXT,
                'job_stdout': _TEXT,
                'job_nodelist': _TEXTS,
                'reference_file': _TEXT,
                'reference_index': _TEXTS,
                # Its values are index keys only where they are scalars
                # (reflookup.index_value): other facts may be added freely.
                'processor_facts': _nullable('object'),
                'node_facts': {
                    'type': ['object', 'null'],
                    'additionalProperties': {'type': 'object'},
                },
                'energy_summary': _nullable('object'),
                'run_conditions': _nullable('object'),
                'disturbed': _TEXT,
                'mpi_profile_summary': _nullable('object'),
                'uuid': _TEXT,
                'hpl_problem': {
                    'type': ['object', 'null'],
                    'properties': {'n': {'type': 'integer'}},
                },
                'perfvalues': {
                    'type': ['object', 'null'],
                    'propertyNames': {
                        'pattern': '^[^:]*:[^:]*:.',
                        'description': '<system>:<partition>:<figure>',
                    },
                    # (value, reference, lower, upper, unit, result)
                    'additionalProperties': {
                        'type': 'array',
                        'minItems': 6,
                        'prefixItems': [
                            _NUMBER,
                            _NUMBER,
                            _NUMBER,
                            _NUMBER,
                            _TEXT,
                            _TEXT,
                        ],
                    },
                },
            },
        }
    },
}
_VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
_JSON_TYPES = {
    dict: 'an object',
    list: 'an array',
    str: 'a string',
    bool: 'a boolean',
    int: 'an integer',
    float: 'a number',
    type(None): 'null',
}


#: Deeper than any ReFrame report (10 levels) by far, and shallow enough for
#: every reader after this one (the schema, YAML and HTML writers) to recurse.
MAX_DEPTH = 64
_TOO_DEEP = (
    f'not a ReFrame run report: nested too deeply (more than {MAX_DEPTH} levels)'
)
#: Half of a UTF-16 pair: JSON's "\\ud800" escape gives one, which no output
#: (UTF-8 stdout, the HTML page, a CSV) can encode.
_SURROGATE = re.compile(r'[\ud800-\udfff]')


def validate(data, source):
    """Raise one line naming *source*, the place and the problem, unless *data*
    has the shape of a ReFrame run report where clusterbench reads it."""
    if not _plain(data):
        _check_nesting_and_text(data, source)
    if _conforms(data, SCHEMA):
        return
    errors = list(_VALIDATOR.iter_errors(data))
    if not errors:
        return
    # The outermost problem, and of those the first in the file.
    error = min(errors, key=lambda e: len(e.absolute_path))
    where = _where(error.absolute_path)
    if error.validator == 'required':
        missing = next(k for k in error.validator_value if k not in error.instance)
        problem = f'no "{missing}"'
    elif error.validator == 'type':
        expected = error.validator_value
        expected = expected if isinstance(expected, str) else expected[0]
        problem = (
            f'{_short(error.instance)} is {_JSON_TYPES.get(type(error.instance), "?")}'
            f', expected {"an" if expected[0] in "aeio" else "a"} {expected}'
        )
    elif error.validator == 'pattern':
        problem = f'{_short(error.instance)} is not {error.schema["description"]}'
    elif error.validator == 'minItems':
        problem = f'{len(error.instance)} item(s), expected {error.validator_value}'
    else:
        problem = error.message
    raise ClusterbenchError(
        f'{source}: not a ReFrame run report: {where + ": " if where else ""}{problem}'
    )


def _where(path):
    """``runs[0].testcases[1].perfvalues['local:default:hpl']`` of a key path."""
    return ''.join(
        f'[{p}]' if isinstance(p, int) else f'.{p}' if p.isidentifier() else f'[{p!r}]'
        for p in path
    ).lstrip('.')


def _plain(data):
    """True when *data* surely passes :func:`_check_nesting_and_text` (no
    depth beyond MAX_DEPTH, no lone surrogate, finite figures): the same walk
    without the paths, which only a problem needs (a report of thousands of
    test cases is read in a fraction of the time)."""
    stack = [(data, 0, False)]
    pop, push, search = stack.pop, stack.append, _SURROGATE.search
    while stack:
        value, depth, figures = pop()
        if depth > MAX_DEPTH:
            return False
        kind = type(value)
        if kind is str:
            if search(value):
                return False
        elif kind is dict:
            for key, item in value.items():
                if type(key) is not str or search(key):
                    return False
                push((item, depth + 1, figures or key == 'perfvalues'))
        elif kind is list:
            for item in value:
                push((item, depth + 1, figures))
        elif figures and kind in (int, float):
            try:
                if not math.isfinite(float(value)):
                    return False
            except OverflowError:
                return False
    return True


#: The JSON Schema keywords :func:`_conforms` knows; any other makes it
#: leave the decision to jsonschema.
_KEYWORDS = {
    '$ref', '$defs', 'type', 'required', 'properties', 'items', 'prefixItems',
    'minItems', 'additionalProperties', 'propertyNames', 'pattern', 'description',
}  # fmt: skip
_TYPES = {
    'object': lambda v: type(v) is dict,
    'array': lambda v: type(v) is list,
    'string': lambda v: type(v) is str,
    'integer': lambda v: type(v) is int,
    'number': lambda v: type(v) in (int, float),
    'boolean': lambda v: type(v) is bool,
    'null': lambda v: v is None,
}


def _conforms(value, schema, root=None):
    """True when *value* surely satisfies *schema*, the subset of JSON Schema
    that SCHEMA is written in; False when it may not (jsonschema then finds
    and names the problem). Stricter than jsonschema, never more lenient: an
    integer written as 1.0 or an unknown keyword is left to it."""
    if schema is SCHEMA and root is None:
        return _SCHEMA_CHECK(value)
    return _compile(schema, root or schema, {})(value)


def _never(value):
    return False


def _compile(schema, root, done):
    """A function of a value: True when it surely satisfies *schema*.
    Compiled once, so that a report of thousands of cases is a walk of
    closures, not of the schema's dictionaries."""
    if not _KEYWORDS.issuperset(schema):
        return _never
    checks = []
    if '$ref' in schema:
        name = schema['$ref'].rpartition('/')[2]
        if name not in done:
            done[name] = None  # a recursive reference is found when called
            done[name] = _compile(root['$defs'][name], root, done)
        checks.append(lambda v, name=name: done[name](v))
    kinds = schema.get('type')
    if kinds is not None:
        tests = [_TYPES[k] for k in ([kinds] if isinstance(kinds, str) else kinds)]
        checks.append(lambda v: any(t(v) for t in tests))
    required = tuple(schema.get('required', ()))
    properties = {
        k: _compile(v, root, done) for k, v in schema.get('properties', {}).items()
    }
    names = schema.get('propertyNames')
    names = _compile(names, root, done) if names is not None else None
    rest = schema.get('additionalProperties')
    rest = _compile(rest, root, done) if rest is not None else None
    if required or properties or names or rest:

        def an_object(v):
            if type(v) is not dict:
                return True
            if any(k not in v for k in required):
                return False
            for key, item in v.items():
                if names is not None and not names(key):
                    return False
                check = properties.get(key, rest)
                if check is not None and not check(item):
                    return False
            return True

        checks.append(an_object)
    first = [_compile(x, root, done) for x in schema.get('prefixItems', ())]
    items = schema.get('items')
    items = _compile(items, root, done) if items is not None else None
    least = schema.get('minItems', 0)
    if first and items is not None:
        return _never
    if first or items is not None or least:

        def an_array(v):
            if type(v) is not list:
                return True
            if len(v) < least:
                return False
            if not all(check(x) for check, x in zip(first, v)):
                return False
            return items is None or all(items(x) for x in v)

        checks.append(an_array)
    if 'pattern' in schema:
        pattern = re.compile(schema['pattern'])
        checks.append(lambda v: type(v) is not str or bool(pattern.search(v)))
    return lambda v: all(check(v) for check in checks)


_SCHEMA_CHECK = _compile(SCHEMA, SCHEMA, {})


def _check_nesting_and_text(data, source):
    """Refuse nesting deeper than MAX_DEPTH and text with a lone surrogate,
    naming the first place in the file (a loop, not recursion: the point is
    a depth that recursion cannot take)."""
    stack = [(data, ())]
    while stack:
        value, path = stack.pop()
        if len(path) > MAX_DEPTH:
            raise ClusterbenchError(f'{source}: {_TOO_DEEP}')
        if path and isinstance(path[-1], str):
            _check_text(path[-1], path, source)  # the key
        if isinstance(value, str):
            _check_text(value, path, source)
        elif isinstance(value, (int, float)) and 'perfvalues' in path:
            _check_number(value, path, source)
        elif isinstance(value, dict):
            stack += [(value[k], (*path, k)) for k in reversed(list(value))]
        elif isinstance(value, list):
            stack += [(v, (*path, i)) for i, v in reversed(list(enumerate(value)))]


def _check_text(text, path, source):
    found = _SURROGATE.search(text)
    if found:
        raise ClusterbenchError(
            f'{source}: not a ReFrame run report: {_where(path)}: not valid text '
            f'(a lone surrogate {found.group()!a})'
        )


def _check_number(value, path, source):
    """A figure, reference or bound must be a finite number: NaN or infinity
    (JSON's NaN, Infinity, 1e999 or a 400-digit integer) is never a sample."""
    try:
        finite = math.isfinite(float(value))
    except OverflowError:
        finite = False
    if not finite:
        raise ClusterbenchError(
            f'{source}: not a ReFrame run report: {_where(path)}: '
            f'{_short(value)} is not a finite number'
        )


def _short(value, width=40):
    text = json.dumps(value)
    return text if len(text) <= width else text[: width - 3] + '...'


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
    for case in found:
        if case.get('fixture'):
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
            failures.append(Failure(*ident, *not_run(case, index), run_index))
            continue
        if case.get('result') not in ('pass', 'xfail') and phase != 'performance':
            reason = _failure_reason(case)
            failures.append(Failure(*ident, phase or 'unknown', reason, run_index))
            continue
        disturbed = case.get('disturbed') or None
        for key, values in (case.get('perfvalues') or {}).items():
            # A figure without a value is missing, never zero.
            if values[0] is not None:
                figures.append(_figure(ident, key, values, run_index, path, disturbed))
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
