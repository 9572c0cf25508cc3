"""Reference look-up outside ReFrame, with ReFrame 4.10's ``$index`` semantics."""

import os
import re

from clusterbench.core.errors import ClusterbenchError
from clusterbench.references import directory as refdir
from clusterbench.references import store as refstore
from clusterbench.references import validate as refdata
from clusterbench.references import yamlfile


class OutsideDirectory(ClusterbenchError):
    """A reference file named by a report that lies outside the directory."""


def index_value(case, name):
    value = _index_value(case, name)
    # A report is data from elsewhere: only a scalar can be an index key.
    return value if isinstance(value, (str, int, float)) else None


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


def _lookup(level, key):
    if key in level:
        return level[key]
    # Like ReFrame: a missing string key matches keys read as anchored regexes.
    if isinstance(key, str):
        for candidate, value in level.items():
            if isinstance(candidate, str):
                try:
                    if re.match(f'^{candidate}$', key):
                        return value
                except re.error:
                    continue
    raise KeyError(key)


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
    entry = cache[path].get(case['name'].split()[0])
    if not isinstance(entry, dict):
        return {}
    index = entry.get('$index')
    level = {k: v for k, v in entry.items() if k != '$index'}
    try:
        if index:
            for subkey in index:
                level = _lookup(level, index_value(case, subkey))
        else:
            level = _lookup(level, f'{case["system"]}:{case["partition"]}')
    except (KeyError, TypeError):
        return {}
    if not isinstance(level, dict):
        return {}
    found = {}
    for var, ref in level.items():
        if isinstance(ref, list) and ref and ref[0] == '$xfail':
            ref = ref[2]
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
