"""One reference resolver, and it is ReFrame's: for the shipped reference
files and crafted ones (regex keys, missing keys, ``*`` scopes, ``$xfail``),
`references.lookup` gives every test case exactly the references that
ReFrame 4.10's own code reads from the file (``_ReferenceDict``, the
``$ref`` reader) and resolves for a test (``RegressionTest._resolve_reference``)."""

import glob
import itertools
import os
import re
import shutil

import pytest
import yaml
from conftest import PROJECT

from clusterbench.core.errors import ClusterbenchError
from clusterbench.references import lookup as reflookup

SHIPPED = os.path.join(PROJECT, 'reference_data', 'local')


@pytest.fixture(scope='module', autouse=True)
def reframe_runtime():
    """ReFrame's runtime, which its reader of ``$ref`` files asks for the
    reference prefix (a ``$ref`` here is absolute: the prefix is not used)."""
    import reframe.core.config as config
    from reframe.core.runtime import init_runtime

    site = config.load_config(os.path.join(PROJECT, 'site_configs', 'local.py'))
    site.select_subconfig('local')
    init_runtime(site)


def reframe_resolves(path, case):
    """{figure: reference} that ReFrame resolves for *case* from *path*."""
    from reframe.core.pipeline import RegressionTest, _ReferenceDict

    name = case['name'].split()[0]
    base = reflookup.stand_in(case).__class__

    # ReFrame reads a file's entry by the class name of the test.
    class Named(base):
        pass

    Named.__name__ = name
    test = Named({**case, 'prefix': '/'})
    test._values['reference'] = _ReferenceDict({'$ref': path}, test=test)
    scoped = RegressionTest._resolve_reference(test)
    found = {}
    for var in _figures(path, name):
        try:
            ref = scoped[f'{test.current_partition.fullname}:{var}']
        except KeyError:
            continue
        ref = tuple(getattr(ref, 'data', ref))  # an xfail's reference
        found[var] = ref + ((None,) if len(ref) == 3 else ())
    return found


def _figures(path, name):
    with open(path) as f:
        entry = yaml.safe_load(f).get(name) or {}

    def walk(level):
        for key, value in level.items():
            if isinstance(value, dict):
                yield from walk(value)
            elif key != '$index':
                yield key

    return set(walk(entry))


def resolved_alike(root, path, case, cache):
    """Both resolutions of *case*: equal, or both refusing the file."""
    try:
        expected = reframe_resolves(str(path), case)
    except re.error:
        with pytest.raises(ClusterbenchError, match='regular expression'):
            reflookup.references_for(case, str(root), cache)
        return None
    assert reflookup.references_for(case, str(root), cache) == expected, case
    return expected


def cases_of(path):
    """A test case for every entry of a reference file, and for each entry a
    case that differs from it in one index value: every level for the first
    entry, then one level per entry in turn (every level for every entry made
    the cgsolver file's check take a minute)."""
    with open(path) as f:
        refs = yaml.safe_load(f)
    for test, body in refs.items():
        index = body.get('$index') or ['$partition']
        levels = [((), {k: v for k, v in body.items() if k != '$index'})]
        for _ in index:
            levels = [
                ((*key, k), v)
                for key, level in levels
                if isinstance(level, dict)
                for k, v in level.items()
            ]
        for number, (key, _) in enumerate(levels):
            yield case(test, os.path.basename(path), index, key)
            for at in range(len(index)) if number == 0 else [number % len(index)]:
                other = list(key)
                other[at] = 'other' if isinstance(key[at], str) else 99
                yield case(test, os.path.basename(path), index, other)


def case(test, file_name, index, key):
    found = {
        'name': f'{test} %p=1',
        'reference_file': file_name,
        'system': 'local',
        'partition': 'default',
        'environ': 'gnu-openmpi',
        'processor_facts': {},
    }
    for name, value in zip(index, key):
        if name == '$partition':
            found['system'], _, found['partition'] = str(value).partition(':')
        elif name == '$system':
            found['system'] = value
        elif name == '$environ':
            found['environ'] = value
        elif name.startswith('$processor.'):
            found['processor_facts'][name.split('.', 1)[1]] = value
        else:
            found[name] = value
    return found


@pytest.mark.parametrize(
    'name', sorted(os.path.basename(p) for p in glob.glob(f'{SHIPPED}/*.yaml'))
)
def test_the_shipped_references_resolve_as_reframe_resolves_them(tmp_path, name):
    root = tmp_path / 'refs'
    shutil.copytree(SHIPPED, root / 'local')
    path = root / 'local' / name
    cache = {}
    found = [resolved_alike(root, path, c, cache) for c in cases_of(path)]
    # Entries found, and cases that miss: both sides are exercised.
    assert any(found) and not all(found)


CRAFTED = {
    'regex keys': """
T:
  $index: [$partition, $environ, $processor.model, cpu_kind, ranks]
  local:default:
    gnu-.*:
      AMD EPYC:
        AMD-25-17: {4: {bandwidth: [1.0, -0.1, 0.1, GB/s]}}
        AMD-25-.*: {4: {bandwidth: [2.0, -0.1, 0.1, GB/s]}}
        .*:
          4: {bandwidth: [3.0, -0.1, 0.1, GB/s]}
          '8': {bandwidth: [4.0, -0.1, 0.1, GB/s]}
    gnu-openmpi:
      AMD.*:
        AMD-26-.*: {4: {bandwidth: [5.0, null, 0.2, GB/s], latency: [9.0, -0.1, 0.1]}}
""",
    'missing keys': """
T:
  $index: [$partition, $environ, variant]
  local:default:
    gnu-openmpi:
      classic: {bandwidth: [1.0, -0.1, 0.1, GB/s]}
  box:compute:
    gnu-openmpi:
      classic: {bandwidth: [2.0, -0.1, 0.1, GB/s]}
""",
    'wildcard scopes': """
T:
  local:default: {bandwidth: [1.0, -0.1, 0.1, GB/s]}
  local: {bandwidth: [2.0, -0.1, 0.1, GB/s], latency: [3.0, -0.1, 0.1, us]}
  '*': {bandwidth: [4.0, -0.1, 0.1, GB/s], msgrate: [5.0, -0.1, 0.1, Mmsg/s]}
""",
    'a wildcard key under an index': """
T:
  $index: [$partition, $environ]
  local:default:
    gnu-openmpi: {bandwidth: [1.0, -0.1, 0.1, GB/s]}
    '*': {bandwidth: [2.0, -0.1, 0.1, GB/s]}
""",
    'xfail': """
T:
  $index: [$partition, $environ]
  local:default:
    gnu-openmpi:
      bandwidth: [$xfail, 'known slow', [1.0, -0.1, 0.1, GB/s]]
      latency: [2.0, -0.1, 0.1, us]
""",
}

SYSTEMS = [('local', 'default'), ('local', 'other'), ('box', 'compute')]
CASES = [
    {'environ': env, 'model': model, 'cpu_kind': kind, 'ranks': ranks}
    for env, model, kind, ranks in itertools.product(
        ['gnu-openmpi', 'gnu-mpich', 'intel'],
        ['AMD EPYC', 'Intel'],
        ['AMD-25-17', 'AMD-25-1', 'AMD-26-2'],
        [4, 8, '8', None],
    )
]


@pytest.mark.parametrize('name', sorted(CRAFTED))
def test_crafted_references_resolve_as_reframe_resolves_them(tmp_path, name):
    root = tmp_path / 'refs'
    # The file in each system's directory, where the look-up reads it.
    for system in {system for system, _ in SYSTEMS}:
        (root / system).mkdir(parents=True)
        (root / system / 'x.yaml').write_text(CRAFTED[name])
    found, cache = [], {}
    for values in CASES:
        for system, partition in SYSTEMS:
            one = {
                'name': 'T',
                'reference_file': 'x.yaml',
                'system': system,
                'partition': partition,
                'environ': values['environ'],
                'processor_facts': {'model': values['model']},
                'cpu_kind': values['cpu_kind'],
                'variant': 'classic' if values['ranks'] == 4 else 'other',
            }
            if values['ranks'] is not None:
                one['ranks'] = values['ranks']
            path = root / system / 'x.yaml'
            found.append(resolved_alike(root, path, one, cache))
    # Cases that find references, and (but under '*') cases that find none.
    assert any(found) and (name == 'wildcard scopes' or not all(found))
    if name == 'regex keys':
        # The first key that matches, exact before regex, typed keys.
        assert {f['bandwidth'][0] for f in found if f} == {1.0, 2.0, 3.0, 4.0, 5.0}
    if name == 'wildcard scopes':
        # Each figure from the most specific scope that has it.
        assert {f['bandwidth'][0] for f in found if f} == {1.0, 2.0, 4.0}
        assert all(f['msgrate'][0] == 5.0 for f in found if f)
    if name == 'a wildcard key under an index':
        assert None in found  # ReFrame fails on '*' as a regex: so do we
