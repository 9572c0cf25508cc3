"""The typed site contract: every ``extras`` key the code reads is declared
once (clusterbench/site/contract.py), and a config that names another key,
or gives one a value of the wrong type, is one line naming the file, the
partition and the key, for `clusterbench run` and for plain ReFrame alike."""

import dataclasses
import os
import re
import runpy
import sys

import pytest
from conftest import PROJECT
from rfm import captured, clusterbench, tool

from clusterbench.core.errors import ClusterbenchError
from clusterbench.site import contract

LOCAL = os.path.join(PROJECT, 'site_configs', 'local.py')

TYPO = """\
import runpy

site_configuration = runpy.run_path({local!r})['site_configuration']
partition = site_configuration['systems'][0]['partitions'][0]
partition['extras'] = {{**partition['extras'], {entry}}}
"""


def typo_config(tmp_path, entry):
    path = tmp_path / 'mycluster.py'
    path.write_text(TYPO.format(local=LOCAL, entry=entry))
    return path


CASES = [
    (
        "'exclusiv': False",
        "partition default: unknown extras key 'exclusiv' (did you mean 'exclusive'?)",
    ),
    (
        "'num_nodes': '2'",
        "partition default: extras.num_nodes: '2' is not an integer",
    ),
]


#: Every command that starts sessions (`site init` validates through `run`).
COMMANDS = {
    'run': ['run', '--', '-n', 'NoSuch'],
    'baseline': ['baseline'],
    'ab': ['ab', '--environs', 'gnu-openmpi', 'gnu-mpich'],
}


@pytest.mark.parametrize('command', COMMANDS)
@pytest.mark.parametrize('entry, line', CASES, ids=['typo', 'type'])
def test_sessions_refuse_a_bad_extras_key_in_one_line(tmp_path, entry, line, command):
    config = typo_config(tmp_path, entry)
    results = tmp_path / 'results'
    name, *rest = COMMANDS[command]
    result = clusterbench(name, '--config', config, '--results', results, *rest)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr == f'clusterbench: error: {config}: {line}\n'
    assert not results.exists()  # nothing ran, no session was made


def reframe_list(tmp_path, config):
    return captured(
        [
            tool('reframe'),
            '-C',
            config,
            '-c',
            os.path.join(PROJECT, 'reframe_checks', 'cgsolver.py'),
            '--prefix',
            tmp_path / 'prefix',
            '-l',
        ],
        timeout=600,
        env={'RFM_SQLITE_DB_FILE': str(tmp_path / 'results.db')},
    )


def test_plain_reframe_names_the_same_line(tmp_path):
    entry, line = CASES[0]
    config = typo_config(tmp_path, entry)
    result = reframe_list(tmp_path, config)
    assert f'{config}: {line}' in result.stdout + result.stderr, result.stdout


def test_plain_reframe_loads_the_shipped_config(tmp_path):
    # ReFrame's own additions to a partition's extras (scheduler, launcher)
    # are part of the contract.
    result = reframe_list(tmp_path, LOCAL)
    out = result.stdout + result.stderr
    assert result.returncode == 0 and 'extras' not in out, out
    assert re.search(r'Found [1-9]\d* check', out), out


@pytest.mark.parametrize('name', ['local.py', 'box.py', 'example-site.py'])
def test_shipped_configs_keep_the_contract(name):
    path = os.path.join(PROJECT, 'site_configs', name)
    contract.check_site(runpy.run_path(path)['site_configuration'], path)


#: How code reads an extras key: ``extras.get('k')``, ``extras['k']``,
#: ``'k' in extras`` (a helper's parameter named extras included).
READS = [
    re.compile(r"extras(?:\.get|\.setdefault)?\(\s*['\"](\w+)['\"]"),
    re.compile(r"extras\[\s*['\"](\w+)['\"]\s*\]"),
    re.compile(r"['\"](\w+)['\"]\s+in\s+extras\b"),
]
#: The helpers that read keys through a variable name them in constants.
INDIRECT = {
    'clusterbench/noisyhost/switch.py': ['noisy_host'],
}


def keys_read_in_code():
    found = {}
    for top in ('clusterbench', 'site_configs', 'reframe_checks'):
        for root, _, files in os.walk(os.path.join(PROJECT, top)):
            for name in files:
                if not name.endswith('.py'):
                    continue
                path = os.path.join(root, name)
                rel = os.path.relpath(path, PROJECT)
                if rel == 'clusterbench/site/contract.py':
                    continue
                with open(path, encoding='utf-8') as f:
                    text = f.read()
                for pattern in READS:
                    for key in pattern.findall(text):
                        found.setdefault(key, rel)
    return found


def test_every_extras_key_read_in_code_is_declared():
    found = keys_read_in_code()
    # The grep sees what it must (else it would pass on nothing).
    assert {'conditions', 'link_peak_mbs', 'pcie', 'mpi', 'blas_libs'} <= set(found)
    declared = {*contract.PARTITION, *contract.ENVIRONMENT}
    undeclared = {k: where for k, where in found.items() if k not in declared}
    assert not undeclared, f'read, not in clusterbench/site/contract.py: {undeclared}'
    with open(os.path.join(PROJECT, 'clusterbench/noisyhost/switch.py')) as f:
        assert "KEY = 'noisy_host'" in f.read()


def test_docs_table_is_the_registry():
    with open(os.path.join(PROJECT, 'docs', 'systems.md'), encoding='utf-8') as f:
        assert contract.markdown_table() in f.read()


def test_runs_here_is_the_one_local_test():
    config = runpy.run_path(LOCAL)['site_configuration']
    (part,) = config['systems'][0]['partitions']
    assert contract.runs_here(part)
    assert not contract.runs_here({**part, 'scheduler': 'slurm'})
    # No other place compares a scheduler's name with 'local'.
    found = []
    for root, _, files in os.walk(os.path.join(PROJECT, 'clusterbench')):
        for name in files:
            path = os.path.join(root, name)
            rel = os.path.relpath(path, PROJECT)
            if not name.endswith('.py'):
                continue
            with open(path, encoding='utf-8') as f:
                for n, line in enumerate(f, 1):
                    if re.search(r"[!=]= 'local'", line) and rel != (
                        'clusterbench/site/contract.py'
                    ):
                        found.append(f'{rel}:{n}')
    assert not found, found


def test_partition_spec_types_every_key_with_its_default():
    config = runpy.run_path(LOCAL)['site_configuration']
    (part,) = config['systems'][0]['partitions']
    spec = contract.PartitionSpec.of(part, LOCAL)
    # Each declared partition key is a typed field of the spec.
    fields = {f.name for f in dataclasses.fields(contract.PartitionSpec)}
    assert set(contract.PARTITION) <= fields
    assert spec.runs_here and spec.scheduler == 'local'
    assert (spec.exclusive, spec.omp_proc_bind, spec.omp_places) == (
        True,
        'spread',
        'cores',
    )
    assert spec.num_nodes is None and spec.acceptance == {}
    bad = {**part, 'extras': {**part['extras'], 'exclusive': False, 'num_nodes': 3}}
    spec = contract.PartitionSpec.of({**bad, 'scheduler': 'slurm'}, LOCAL)
    assert (spec.exclusive, spec.num_nodes, spec.runs_here) == (False, 3, False)
    with pytest.raises(ClusterbenchError) as err:
        contract.PartitionSpec.of({**part, 'extras': {'exclusiv': False}}, 'x.py')
    assert str(err.value) == f'x.py: {CASES[0][1]}'


#: Builds the spec of the real partition ReFrame makes of local.py.
OF_REFRAME = """\
import sys
from reframe.core import config, runtime
from clusterbench.site import contract
site = config.load_config(sys.argv[1])
site.select_subconfig('local')
runtime.init_runtime(site)
(part,) = runtime.runtime().system.partitions
spec = contract.PartitionSpec.of(part)
print(spec.name, spec.scheduler, spec.runs_here, spec.exclusive, spec.cpu_kind)
print(contract.PartitionSpec.of(part) is spec)
"""


def test_partition_spec_of_a_reframe_partition_is_built_once(tmp_path):
    result = captured(
        [sys.executable, '-c', OF_REFRAME, LOCAL],
        timeout=600,
        env={'RFM_SQLITE_DB_FILE': str(tmp_path / 'results.db')},
    )
    assert result.returncode == 0, result.stderr
    first, second = result.stdout.splitlines()[-2:]
    name, scheduler, here, exclusive, kind = first.split()
    assert (name, scheduler, here, exclusive) == (
        'local:default',
        'local',
        'True',
        'True',
    )
    assert kind and second == 'True'


def test_no_partition_extras_read_outside_the_contract():
    # Code reads a partition's keys from its PartitionSpec, not its extras.
    pattern = re.compile(
        r"(?:partition|part)\.extras\.get\(|\bpart(?:ition)?\.get\('extras'"
    )
    found = []
    for top in ('clusterbench', 'site_configs'):
        for root, _, files in os.walk(os.path.join(PROJECT, top)):
            for name in files:
                path = os.path.join(root, name)
                rel = os.path.relpath(path, PROJECT)
                if not name.endswith('.py') or rel == 'clusterbench/site/contract.py':
                    continue
                with open(path, encoding='utf-8') as f:
                    for n, line in enumerate(f, 1):
                        if pattern.search(line):
                            found.append(f'{rel}:{n}')
    assert not found, found
