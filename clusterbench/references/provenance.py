"""Provenance that matches its reference: every provenance entry records a hash
of the reference entry it describes, and ``references check`` compares them.

A reference entry is one leaf of a reference file: the figures of one test at
one full ``$index`` key, e.g. ``HPCCCheck > local:default > gnu-openmpi > ...``.
Its provenance is ``provenance/<file>`` > test > the key joined by ``/``.
"""

import glob
import json
import os

from clusterbench.references import yamlfile
from clusterbench.references.store import sha256

PROVENANCE_DIR = 'provenance'
HASH_KEY = 'entry_sha256'


def entry_hash(leaf):
    """Hash of one reference entry ({figure: [ref, lower, upper, unit]})."""
    text = json.dumps(leaf, sort_keys=True, separators=(',', ':'), default=str)
    return sha256(text.encode())


def where(key):
    return '/'.join(map(str, key))


def leaves(refs):
    """{(test, joined key): leaf} of a parsed reference file."""
    found = {}
    for test, body in (refs or {}).items():
        if not isinstance(body, dict):
            continue
        depth = len(body.get('$index') or ['$partition'])
        levels = [((), {k: v for k, v in body.items() if k != '$index'})]
        for _ in range(depth):
            levels = [
                ((*key, k), v)
                for key, level in levels
                if isinstance(level, dict)
                for k, v in level.items()
            ]
        for key, leaf in levels:
            found[(test, where(key))] = leaf
    return found


def load(path):
    """A parsed YAML file: None when it is missing, {} when it is empty; a
    malformed one is a one-line ReferenceFileError naming its line."""
    if not os.path.exists(path):
        return None
    return yamlfile.load_any(path) or {}


def records(prov):
    """The entries of a parsed provenance file: {test: {key: entry}}, without
    its retired records (``$retired``: references taken out of use, kept whole
    with their provenance and the reason)."""
    return {
        test: entries
        for test, entries in (prov or {}).items()
        if not str(test).startswith('$')
    }


def inconsistencies(directory):
    """Lines naming every reference entry whose provenance is missing or
    does not match it, and every provenance entry that describes nothing."""
    problems = []
    names = {
        os.path.basename(p)
        for pattern in ('*.yaml', os.path.join(PROVENANCE_DIR, '*.yaml'))
        for p in glob.glob(os.path.join(directory, pattern))
    }
    for file_name in sorted(names):
        path = os.path.join(directory, file_name)
        prov_path = os.path.join(directory, PROVENANCE_DIR, file_name)
        found = leaves(load(path))
        prov = load(prov_path)
        if prov is None:
            if found:
                problems.append(f'{path}: {len(found)} entries, no {prov_path}')
            continue
        recorded = {
            (test, key): entry
            for test, entries in records(prov).items()
            if isinstance(entries, dict)
            for key, entry in entries.items()
        }
        for (test, key), leaf in found.items():
            entry = recorded.get((test, key))
            name = f'{test} > {key}'
            if entry is None:
                problems.append(f'{path}: {name}: no provenance in {prov_path}')
            elif not isinstance(entry, dict) or HASH_KEY not in entry:
                problems.append(f'{prov_path}: {name}: no {HASH_KEY} of its reference')
            elif entry[HASH_KEY] != entry_hash(leaf):
                problems.append(
                    f'{prov_path}: {name}: does not match the reference entry in '
                    f'{path} (the reference changed without its provenance)'
                )
        for test, key in sorted(set(recorded) - set(found), key=str):
            problems.append(
                f'{prov_path}: {test} > {key}: describes no reference entry in {path}'
            )
    return problems
