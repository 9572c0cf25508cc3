"""Trees, paths and values for the hostile inputs of tests/hostile.py.

A run report or a reference file is handled as a tree (dicts and lists);
a path is the tuple of keys and indexes down to one value. The strategies
here pick a path, a value of another type or an extreme, or bad characters
for a name, and write what a dict cannot hold (raw tokens, deep nesting)
as text.
"""

import copy
import json

import yaml
from hypothesis import strategies as st

#: Depth of the deep nesting: far beyond any recursion limit.
DEEP = 100_000


# ----------------------------------------------------------- trees and paths


class Raw:
    """Text written as it is where a value would be (JSON or YAML)."""

    def __init__(self, text):
        self.text = text


def paths(tree, here=()):
    """Every path (a tuple of keys and indexes) in *tree*, the root first."""
    found = [here]
    if isinstance(tree, dict):
        for key, value in tree.items():
            found += paths(value, (*here, key))
    elif isinstance(tree, list):
        for index, value in enumerate(tree):
            found += paths(value, (*here, index))
    return found


def at(tree, path):
    for step in path:
        tree = tree[step]
    return tree


def replaced(tree, path, value):
    """*tree* (a copy) with the value at *path* replaced by *value*."""
    if not path:
        return value
    tree = copy.deepcopy(tree)
    at(tree, path[:-1])[path[-1]] = value
    return tree


def show(path):
    return ''.join(f'[{step!r}]' for step in path) or 'the top'


def to_json(tree):
    """JSON text of *tree*: NaN and the infinities as Python writes them
    (``NaN``, ``Infinity``), lone surrogates as ``\\udXXX`` escapes, and each
    Raw in place as its text."""
    raws = []

    def marked(node):
        if isinstance(node, Raw):
            raws.append(node.text)
            return f'\0raw{len(raws) - 1}\0'
        if isinstance(node, dict):
            return {key: marked(value) for key, value in node.items()}
        if isinstance(node, list):
            return [marked(value) for value in node]
        return node

    text = json.dumps(marked(tree))
    for index, raw in enumerate(raws):
        text = text.replace(json.dumps(f'\0raw{index}\0'), raw)
    return text


def to_yaml(tree):
    # Flow style for lists of scalars, as the files are written.
    return yaml.safe_dump(tree, sort_keys=False, width=1000, default_flow_style=None)


def _group(path):
    """The field a path of a run report is under: a session fact, or a
    field of one test case (its figures are one field)."""
    if path[:1] == ('runs',) and len(path) >= 5:
        return path[:5]
    return path[:2]


@st.composite
def a_path(draw, tree, grouped=False):
    """A path of *tree*; *grouped*: each field as likely as any other, so
    that 24 figures of one test case do not drown its single facts."""
    found = paths(tree)
    if grouped:
        groups = {}
        for path in found:
            groups.setdefault(_group(path), []).append(path)
        found = groups[draw(st.sampled_from(list(groups)))]
    return draw(st.sampled_from(found))


# ------------------------------------------------------------------ values

#: Scalars of every JSON type, the extremes among them.
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from([0, -1, 2**63, 10**400, -(10**400), 1e308, -1e308, 5e-324]),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)

#: Any JSON value: lists and objects of those, a few levels deep.
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.text(max_size=6), inner, max_size=4),
    ),
    max_leaves=10,
)

NONFINITE = st.sampled_from([float('nan'), float('inf'), float('-inf')])

#: Characters that hurt a reader: control characters, lone surrogates,
#: and a few others that terminals, XML and spreadsheets treat specially.
BAD_CHARACTERS = st.one_of(
    st.characters(categories=['Cc']),
    st.characters(categories=['Cs']),
    st.sampled_from(['\u2028', '\ufeff', '\ufffe', '\u202e', '\x7f', '=', '<']),
)


def other_than(old):
    """A JSON value that is not *old*: another type or an extreme."""
    return VALUES.filter(lambda v: repr(v) != repr(old))


def deep_text(draw, kind):
    """Text of *DEEP* nested arrays or objects (cheap: no dict is built)."""
    if draw(st.booleans()):
        return '[' * DEEP + ']' * DEEP
    if kind == 'yaml':
        return '{a: ' * DEEP + '1' + '}' * DEEP
    return '{"a": ' * DEEP + '1' + '}' * DEEP


def _spoiled(draw, text):
    position = draw(st.integers(0, len(text)))
    bad = draw(st.text(BAD_CHARACTERS, min_size=1, max_size=3))
    return text[:position] + bad + text[position:]


def spoiled_name(draw, tree, names=()):
    """(*tree* with bad characters in one string or key, where); half the
    time in one of *names* (paths of the strings that name things)."""
    found = paths(tree)
    values = [p for p in found if p and isinstance(at(tree, p), str)]
    keys = [
        (*p, key)
        for p in found
        if isinstance(at(tree, p), dict)
        for key in at(tree, p)
        if isinstance(key, str)
    ]
    choices = [p for p in names if p in values or p in keys]
    if not choices or draw(st.booleans()):
        choices = values + keys
    path = draw(st.sampled_from(choices))
    if path in values:
        return replaced(tree, path, _spoiled(draw, at(tree, path))), show(path)
    parent, key = at(tree, path[:-1]), path[-1]
    new = _spoiled(draw, key)
    renamed = {new if k == key else k: v for k, v in parent.items()}
    return replaced(tree, path[:-1], renamed), f'the key {show(path)}'
