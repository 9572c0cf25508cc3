"""JSON for machines that is JSON: no ``NaN``, ``Infinity`` or ``-Infinity``.

Python's json writes those tokens for non-finite floats, and every strict
parser (jq, JavaScript's JSON.parse, Go, Rust) then refuses the whole
document. A figure can be finite and still give an infinite one (an
efficiency of 1e308 GB/s overflows), so the writers of what clusterbench
prints for machines go through :func:`dumps`: such a number is ``null``, and
the object that held it names it in ``not_finite`` (``{"value": "inf",
"samples[0]": "inf"}``) so that a reader can tell an overflow from a value
that is absent.
"""

import json
import math

NOT_FINITE = 'not_finite'


def _finite(value, path, found):
    if isinstance(value, float) and not math.isfinite(value):
        found[path] = str(value)
        return None
    if isinstance(value, dict):
        return _object(value)
    if isinstance(value, (list, tuple)):
        return [_finite(v, f'{path}[{i}]', found) for i, v in enumerate(value)]
    return value


def _object(obj):
    found = {}
    out = {key: _finite(value, str(key), found) for key, value in obj.items()}
    if found:
        out[NOT_FINITE] = found
    return out


def finite(value):
    """*value* with each non-finite float ``None``, named in the
    ``not_finite`` of the object that held it (a list outside any object
    just holds ``None``)."""
    return _finite(value, '', {})


def dumps(value, **options):
    """``json.dumps`` of :func:`finite` (*value*): always valid JSON."""
    return json.dumps(finite(value), allow_nan=False, **options)
