"""The reference and provenance files an update reads and writes: read as
`clusterbench run` validates them, written without YAML anchors, and a
figure's leaf set or removed by its path of keys."""

import os

import yaml

from clusterbench.core.errors import ClusterbenchError
from clusterbench.references import validate as refdata
from clusterbench.references import yamlfile

_Dumper = getattr(yaml, 'CSafeDumper', yaml.SafeDumper)


def nested_set(tree, keys, value):
    for key in keys[:-1]:
        tree = tree.setdefault(key, {})
    tree[keys[-1]] = value


def nested_pop(tree, keys):
    """Remove the leaf at *keys* and the levels it leaves empty (a test
    keeps its ``$index``: the provenance of its context figures reads it)."""
    path = [tree]  # path[i + 1] is path[i][keys[i]]
    for key in keys[:-1]:
        if not isinstance(path[-1], dict) or key not in path[-1]:
            return
        path.append(path[-1][key])
    if not isinstance(path[-1], dict):
        return
    path[-1].pop(keys[-1], None)
    # Up to the levels below the test's (path[1]), each one left empty.
    for i in range(len(path) - 1, 1, -1):
        if path[i]:
            return
        del path[i - 1][keys[i - 1]]


def load_references(path):
    """The references of a file ({} when there is none yet), validated as
    `clusterbench run` validates them: an update never merges into a file
    that ReFrame would misread."""
    if not os.path.exists(path):
        return {}
    refdata.check_file(path)
    return yamlfile.load(path)


def load_provenance(path):
    data = (yamlfile.load_any(path) or {}) if os.path.exists(path) else {}
    if not isinstance(data, dict):
        # An update merges into it: what is not a mapping is not merged into.
        raise ClusterbenchError(
            f'{path}: not a mapping of provenance records; nothing was changed'
        )
    return data


class _NoAliasDumper(_Dumper):
    """Repeated facts are written out again: a reader needs no anchors."""

    def ignore_aliases(self, data):
        return True


def dump(data, header=''):
    return (
        header
        + yaml.dump(
            data,
            Dumper=_NoAliasDumper,
            sort_keys=False,
            default_flow_style=None,
            width=100,
        )
    ).encode()


HEADER = (
    '# ReFrame 4.10 external references (see docs/references.md).\n'
    '# Written by `clusterbench references update`; provenance of every entry\n'
    '# is in provenance/<this file>.\n'
)
