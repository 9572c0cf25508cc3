"""The schema of what clusterbench reads in a ReFrame 4.10 run report, and
its validation: one line naming the report, the path and what is wrong.

A report that conforms is checked by a compiled fast path (:func:`_conforms`);
only a report that does not goes through jsonschema, which words the error.
"""

import json
import math
import re
from itertools import repeat

import jsonschema

from clusterbench.core.errors import ClusterbenchError


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
    test cases is read in a fraction of the time). Leaves are checked with
    their container, and a container's texts in one search."""
    if type(data) is not dict and type(data) is not list:
        return type(data) is not str or not _SURROGATE.search(data)
    stack = [(data, 0, False)]
    pop, push, search = stack.pop, stack.append, _SURROGATE.search
    while stack:
        value, depth, figures = pop()
        if depth > MAX_DEPTH:
            return False
        if type(value) is dict:
            try:
                if search(''.join(value)):
                    return False
            except TypeError:  # a key that is not text
                return False
            pairs = value.items()
        else:
            pairs = zip(repeat(None), value)
        texts = []
        deep = depth + 1 > MAX_DEPTH
        for key, item in pairs:
            kind = type(item)
            if kind is str:
                texts.append(item)
            elif kind is dict or kind is list:
                push((item, depth + 1, figures or key == 'perfvalues'))
            elif deep:
                return False
            elif (kind is int or kind is float) and (figures or key == 'perfvalues'):
                try:
                    if not math.isfinite(item):
                        return False
                except OverflowError:
                    return False
        if texts and (deep or search(''.join(texts))):
            return False
    return True


#: The JSON Schema keywords :func:`_conforms` knows; any other makes it
#: leave the decision to jsonschema.
_KEYWORDS = {
    '$ref', '$defs', 'type', 'required', 'properties', 'items', 'prefixItems',
    'minItems', 'additionalProperties', 'propertyNames', 'pattern', 'description',
}  # fmt: skip
#: The Python types of each JSON type, exactly (a bool is no integer).
_TYPES = {
    'object': (dict,),
    'array': (list,),
    'string': (str,),
    'integer': (int,),
    'number': (int, float),
    'boolean': (bool,),
    'null': (type(None),),
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
        allowed = frozenset(
            t for k in ([kinds] if isinstance(kinds, str) else kinds) for t in _TYPES[k]
        )
        checks.append(lambda v: type(v) in allowed)
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
    return _all_of(checks)


def _all_of(checks):
    # A report is millions of values: one call per check, not a generator.
    if not checks:
        return _always
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda v: first(v) and second(v)
    return lambda v: all(check(v) for check in checks)


def _always(value):
    return True


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
