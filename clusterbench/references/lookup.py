"""Reference look-up outside ReFrame, by ReFrame 4.10's own resolution.

A test case of a run report stands in for the test (:func:`stand_in`), and
ReFrame's code resolves it: ``RegressionTestDict`` follows the ``$index``
(exact keys, then keys read as anchored regular expressions) and, in a file
without one, ``ScopedDict`` the scopes (``system:partition``, ``system``,
``*``). :func:`matched_key` is the one resolver: the checks use it with
themselves for their provenance, and :func:`references_for` with a report's
test case. ReFrame is imported on first use (reading reports needs none of it).
"""

import functools
import os
import re
import types

from clusterbench.core.errors import ClusterbenchError
from clusterbench.references import directory as refdir
from clusterbench.references import store as refstore
from clusterbench.references import validate as refdata
from clusterbench.references import yamlfile


class OutsideDirectory(ClusterbenchError):
    """A reference file named by a report that lies outside the directory."""


def index_value(case, name):
    """The value of index entry *name* for a report's test case (None when the
    case has none): the key under which an update writes its references."""
    value = _index_value(case, name)
    # A report is data from elsewhere: only a scalar can be an index key.
    return value if _scalar(value) else None


def _scalar(value):
    return isinstance(value, (str, int, float))


def _index_value(case, name):
    if name == '$partition':
        return f'{case["system"]}:{case["partition"]}'
    if name == '$system':
        return case['system']
    if name == '$environ':
        return case['environ']
    if name.startswith('$processor.'):
        return (case.get('processor_facts') or {}).get(name.split('.', 1)[1])
    return case.get(name)


@functools.cache
def _stand_in_class():
    import reframe as rfm

    class Case(rfm.RegressionTestPlugin):
        """A test case of a run report, as ReFrame's look-up sees a test."""

        def __init__(self, case):
            facts = case.get('processor_facts') or {}
            system, partition = case.get('system'), case.get('partition')
            self._values = {
                k: v for k, v in case.items() if isinstance(k, str) and _scalar(v)
            }
            self.current_system = types.SimpleNamespace(name=system)
            self.current_partition = types.SimpleNamespace(
                fullname=f'{system}:{partition}',
                processor=types.SimpleNamespace(
                    **{k: v for k, v in facts.items() if isinstance(k, str)}
                ),
            )
            self.current_environ = types.SimpleNamespace(name=case.get('environ'))

        def __getattr__(self, name):
            # Only a test's own attributes: the index names a parameter.
            try:
                return self.__dict__['_values'][name]
            except KeyError:
                raise AttributeError(name) from None

    return Case


def stand_in(case):
    """A report's test case in the place of the test in ReFrame's look-up."""
    return _stand_in_class()(case)


def matched_key(index, body, test):
    """The keys of *body* (a test's entry of a reference file, without its
    ``$index``) that ReFrame resolves for *test* along *index*, or None when
    it resolves none. Without an index: the most specific scope of the
    test's partition that *body* has. A key that is no regular expression
    raises re.error, as in ReFrame."""
    from reframe.core.pipeline import RegressionTestDict

    if not index:
        system = test.current_partition.fullname.split(':')[0]
        for scope in (test.current_partition.fullname, system, '*'):
            if isinstance(body.get(scope), dict):
                return (scope,)
        return None
    # ReFrame resolves a tree whose leaves are their own keys.
    tree = RegressionTestDict({'$index': tuple(index), **_paths(body, len(index))})
    try:
        return tree[test]
    except KeyError:
        return None


def _paths(level, depth, path=()):
    if depth == 0:
        return path
    return {
        key: _paths(value, depth - 1, (*path, key))
        for key, value in level.items()
        if depth == 1 or isinstance(value, dict)
    }


def figures_of(index, body, test):
    """{figure: reference} that ReFrame uses for *test* ({} if none)."""
    key = matched_key(index, body, test)
    if key is None:
        return {}
    if index:
        level = body
        for part in key:
            level = level[part]
        return level if isinstance(level, dict) else {}
    from reframe.utility import ScopedDict

    scopes = {k: v for k, v in body.items() if isinstance(v, dict)}
    try:
        return ScopedDict(scopes).scope(test.current_partition.fullname)
    except TypeError:  # a key that is no string: ReFrame refuses the file
        return {}


def load_file(path):
    """The references of a file, validated as `clusterbench run` validates
    them ({} when there is none: "no reference")."""
    if not os.path.exists(path):
        return {}
    refdata.check_file(path)
    return yamlfile.load(path)


def references_for(case, directory, cache=None):
    """{figure: (ref, lower, upper, unit)} that ReFrame would use for *case*."""
    cache = {} if cache is None else cache
    name = case.get('reference_file')
    if not name:
        return {}
    # One directory per system: the case's system names it.
    try:
        folder = refdir.system_directory(directory, case.get('system'))
    except ClusterbenchError as err:
        raise OutsideDirectory(f'{err}: no directory in {directory}') from None
    path = os.path.join(folder, name)
    # The name comes from a run report: it may not lead out of the directory.
    root = os.path.realpath(folder)
    if os.path.commonpath([os.path.realpath(path), root]) != root:
        raise OutsideDirectory(
            f'reference file {str(name)[:80]!r} is outside {folder}: not read'
        )
    if path not in cache:
        if folder not in cache:
            refstore.refuse_half_applied(folder)
            cache[folder] = True
        cache[path] = load_file(path)
    test = case['name'].split()[0]
    entry = cache[path].get(test)
    if not isinstance(entry, dict):
        return {}
    body = {k: v for k, v in entry.items() if k != '$index'}
    try:
        level = figures_of(entry.get('$index'), body, stand_in(case))
    except re.error as err:
        raise ClusterbenchError(
            f'{path}: {test}: a key ReFrame reads as a regular expression is '
            f'none ({err})'
        ) from None
    found = {}
    for var, ref in level.items():
        if isinstance(ref, list) and ref and ref[0] == '$xfail':
            ref = ref[-1]  # ReFrame's xfail(message, reference)
        found[var] = tuple(ref) + ((None,) if len(ref) == 3 else ())
    return found


def rejudge(data, directory):
    """Replace the references ReFrame recorded in a parsed run report with
    those *directory* holds for each test case (a figure it has none for
    becomes "no reference", as ReFrame records it)."""
    cache = {}
    for run in data.get('runs') or []:
        for case in run.get('testcases') or []:
            if not isinstance(case, dict) or case.get('fixture'):
                continue
            if not case.get('reference_file') or 'name' not in case:
                continue
            refs = references_for(case, directory, cache)
            for key, values in (case.get('perfvalues') or {}).items():
                if not isinstance(values, list) or len(values) != 6:
                    continue  # runreport names a malformed perfvalue
                ref = refs.get(key.rsplit(':', 1)[-1])
                values[1:4] = ref[:3] if ref else (0, None, None)
                values[5] = None  # ReFrame's own verdict was against others
    return data
