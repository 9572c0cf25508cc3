"""One reference directory per system (issue 21, item 5): ``reference_data/X/``
holds system X's references and provenance; updates write only there, check
and repair work per directory, and plain ReFrame finds them there."""

import csv
import io
import json
import os
import shutil
import subprocess

import fsfaults
import pytest
import rfm
import yaml
from conftest import PROJECT
from rfm import CONFIG, tool

from clusterbench.references import store as refstore
from clusterbench.testcluster.testing import run_reframe

SITE_OPTIONS = [
    '--site-configs',
    os.path.join(PROJECT, 'site_configs'),
    '--checks',
    os.path.join(PROJECT, 'reframe_checks'),
]


def case(system, partition, value):
    return {
        'name': 'HPCCCheck',
        'display_name': 'HPCCCheck',
        'system': system,
        'partition': partition,
        'environ': 'gnu-openmpi',
        'result': 'pass',
        'reference_file': 'hpcc.yaml',
        'reference_index': ['$partition', '$environ'],
        'perfvalues': {
            f'{system}:{partition}:hpl': [value, 0, None, None, 'GFlop/s', 'pass']
        },
    }


def report(path, *cases, uuid='s1'):
    path.write_text(
        json.dumps({'session_info': {'uuid': uuid}, 'runs': [{'testcases': cases}]})
    )
    return str(path)


def references(*args, hook=None, directory=None):
    """`clusterbench references *args*`; *hook* a fault of tests/fsfaults.py
    at the file operations in *directory*."""
    env = dict(os.environ)
    env['SOURCE_DATE_EPOCH'] = '1795000000'  # two writes give the same bytes
    if hook:
        return fsfaults.run(directory, hook, 'references', *args, env=env, cwd=PROJECT)
    return subprocess.run(
        [tool('clusterbench'), 'references', *args],
        capture_output=True,
        text=True,
        cwd=PROJECT,
        env=env,
        timeout=300,
    )


def files(directory):
    """{relative path: bytes} of every file under *directory* but locks."""
    found = {}
    for folder, _, names in os.walk(directory):
        for name in names:
            if name != refstore.LOCK:
                path = os.path.join(folder, name)
                with open(path, 'rb') as f:
                    found[os.path.relpath(path, directory)] = f.read()
    return found


def test_check_and_repair_work_per_system_directory(tmp_path):
    root = tmp_path / 'refs'
    both = report(
        tmp_path / 'both.json',
        case('local', 'default', 10.0),
        case('box', 'compute', 20.0),
    )
    # One session each: written only when forced
    # (tests/references/test_rule_of_three.py).
    made = references(
        'update', '--from', both, '--references', str(root), '--write', '--force'
    )
    assert made.returncode == 0, made.stderr
    checked = references('check', str(root), *SITE_OPTIONS)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f'{root}/box/hpcc.yaml: 1 test(s), 1 reference figure(s): ok' in (
        checked.stdout
    )
    assert f'{root}/local/hpcc.yaml: 1 test(s), 1 reference figure(s): ok' in (
        checked.stdout
    )
    local_before = files(root / 'local')

    # An update of box alone, killed just after its commit.
    box_only = report(tmp_path / 'box.json', case('box', 'compute', 30.0), uuid='s2')
    trace = tmp_path / 'trace'
    shutil.copytree(root, tmp_path / 'dry')
    traced = references(
        'update', '--from', box_only, '--references', str(tmp_path / 'dry'),
        '--write', '--force', hook=f'trace:{trace}', directory=tmp_path / 'dry',
    )  # fmt: skip
    assert traced.returncode == 0, traced.stderr
    events = fsfaults.read_trace(trace)
    commit = fsfaults.commit_point(events, f'box/{refstore.JOURNAL}')
    killed = references(
        'update', '--from', box_only, '--references', str(root), '--write',
        '--force', hook=f'kill:{commit}', directory=root,
    )  # fmt: skip
    assert killed.returncode == -9, killed.stderr
    # The journal is in box's directory, and check names it there only.
    assert os.path.exists(root / 'box' / refstore.JOURNAL)
    assert not os.path.exists(root / refstore.JOURNAL)
    assert files(root / 'local') == local_before
    checked = references('check', str(root), *SITE_OPTIONS)
    assert checked.returncode == 1
    interrupted = [
        line
        for line in checked.stdout.splitlines()
        if line.startswith('interrupted update: ')
    ]
    assert interrupted and all(f'{root}/box/' in line for line in interrupted)
    assert f'interrupted update: {root}/box/{refstore.JOURNAL}: committed' in (
        checked.stdout
    )
    repaired = references('repair', '--references', str(root))
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    assert 'rolled forward the interrupted update' in repaired.stdout
    assert f'{root}/box/hpcc.yaml' in repaired.stdout
    assert f'{root}/local/' not in repaired.stdout
    # The roll forward gives exactly what the uninterrupted update wrote.
    assert files(root / 'box') == files(tmp_path / 'dry' / 'box')
    assert files(root / 'local') == local_before
    box = yaml.safe_load((root / 'box' / 'hpcc.yaml').read_text())
    assert box['HPCCCheck']['box:compute']['gnu-openmpi']['hpl'][0] == 30.0
    assert references('check', str(root), *SITE_OPTIONS).returncode == 0


def test_an_entry_in_another_systems_directory_is_stale(tmp_path):
    root = tmp_path / 'refs'
    made = references(
        'update', '--from', report(tmp_path / 'r.json', case('local', 'default', 1.0)),
        '--references', str(root), '--write', '--force',
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    # A reference copied by hand into another system's directory, with its
    # provenance: consistent, but ReFrame on box never reads local's entry.
    shutil.copytree(root / 'local', root / 'box', ignore=shutil.ignore_patterns('.*'))
    checked = references('check', str(root), *SITE_OPTIONS)
    assert checked.returncode == 1
    assert (
        f'stale: {root}/box/hpcc.yaml:6: HPCCCheck > local:default: partition '
        f"'local:default' is not of system 'box': ReFrame never reads it here; "
        f'its references belong in {root}/local/'
    ) in checked.stdout


# A class S solve of this host, judged against references made here: a band
# nothing can miss for gflops, one nothing can meet for the iterations
# (the solver's own count at class S is fixed, far from 1e6).
REFS = """\
CGSolverCheck:
  $index: [$partition, $environ, variant]
  'local:default':
    gnu-openmpi:
      classic:
        gflops: [1.0, -1.0, 1.0e+6, GFlop/s]
        iterations: [1.0e+6, -0.01, 0.01, iterations]
"""

SELECT = (
    *rfm.TINY_CG,
    '-S',
    'judge_conditions=false',
)


def plain_reframe(tree, prefix):
    """``reframe -C site_configs/local.py -c reframe_checks -r`` on a copy of
    the checks beside *tree*/reference_data/, as a user runs it."""
    rc, out, data = run_reframe(
        CONFIG,
        prefix,
        *SELECT,
        checks=[str(tree / 'reframe_checks')],
        env={
            'RFM_SQLITE_DB_FILE': str(prefix / 'results.db'),
            'CLUSTERBENCH_PERFLOGDIR': str(prefix / 'perflogs'),
        },
    )
    assert data is not None, out
    (run,) = data['runs']
    (found,) = [c for c in run['testcases'] if not c['fixture']]
    perf = {k.rsplit(':', 1)[1]: v for k, v in found['perfvalues'].items()}
    return rc, out, found, perf


@pytest.mark.integration
def test_plain_reframe_finds_the_references_in_the_systems_directory(
    tmp_path, monkeypatch
):
    # No RFM_REFERENCE_PREFIX: the checks read reference_data/ beside
    # reframe_checks/, in the directory of the system ReFrame runs on.
    monkeypatch.delenv('RFM_REFERENCE_PREFIX', raising=False)
    tree = tmp_path / 'tree'
    shutil.copytree(os.path.join(PROJECT, 'reframe_checks'), tree / 'reframe_checks')
    (tree / 'src').symlink_to(os.path.join(PROJECT, 'src'))  # the solver's sources
    (tree / 'reference_data' / 'local').mkdir(parents=True)
    (tree / 'reference_data' / 'local' / 'cgsolver.yaml').write_text(REFS)
    rc, out, found, perf = plain_reframe(tree, tmp_path / 'found')
    assert found['fail_phase'] == 'performance', (perf, out)
    assert perf['gflops'][1:4] == [1.0, -1.0, 1.0e6], out
    assert perf['gflops'][5] == 'pass'
    assert perf['iterations'][1] == 1.0e6 and perf['iterations'][5] == 'fail'
    assert perf['time'][1:4] == [0, None, None]  # none made: no reference
    assert rc != 0

    # The same references in another system's directory (or at the root, the
    # layout before): local has none, every figure is visibly unjudged and the
    # test passes instead of vanishing.
    (tree / 'reference_data' / 'local').rename(tree / 'reference_data' / 'box')
    shutil.copy(
        tree / 'reference_data' / 'box' / 'cgsolver.yaml',
        tree / 'reference_data' / 'cgsolver.yaml',
    )
    rc, out, found, perf = plain_reframe(tree, tmp_path / 'none')
    assert found['result'] == 'pass', found['fail_reason']
    assert perf and all(v[1:4] == [0, None, None] for v in perf.values()), perf
    assert rc == 0, out
    compared = subprocess.run(
        [
            tool('clusterbench'), 'compare', '--format', 'csv',
            str(tmp_path / 'none' / 'report.json'),
        ],
        capture_output=True, text=True, cwd=PROJECT, timeout=300,
    )  # fmt: skip
    rows = list(csv.DictReader(io.StringIO(compared.stdout)))
    assert rows and {row['verdict'] for row in rows} == {'no reference'}, rows


def test_retired_references_stay_whole_and_out_of_use(tmp_path):
    # The project's retired NPB references of local: out of the reference
    # file, kept whole in the provenance, ignored by check, kept by updates.
    root = tmp_path / 'refs'
    shutil.copytree(os.path.join(PROJECT, 'reference_data'), root)
    prov_path = root / 'local' / 'provenance' / 'npb.yaml'
    before = yaml.safe_load(prov_path.read_text())
    (record,) = before['$retired']
    assert not (root / 'local' / 'npb.yaml').exists()
    assert 'NPBCheck' in record['references'] and 'NPBCheck' in record['provenance']
    assert 'no NPB tree' in record['reason']
    checked = references('check', str(root), *SITE_OPTIONS)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert 'npb' not in checked.stdout
    # NPB recorded by a site with a real tree: the retired record stays.
    npb = case('local', 'default', 1000.0)
    npb.update(name='NPBCheck', display_name='NPBCheck', reference_file='npb.yaml')
    npb['perfvalues'] = {
        'local:default:mops_total': [1000.0, 0, None, None, 'Mop/s', 'pass']
    }
    made = references(
        'update', '--from', report(tmp_path / 'npb.json', npb),
        '--references', str(root), '--write', '--force',
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    after = yaml.safe_load(prov_path.read_text())
    assert after['$retired'] == before['$retired']
    assert list(after['NPBCheck']) == ['local:default/gnu-openmpi']
    assert references('check', str(root), *SITE_OPTIONS).returncode == 0
    # A provenance entry in use whose reference file is gone is named.
    (root / 'local' / 'npb.yaml').unlink()
    checked = references('check', str(root), *SITE_OPTIONS)
    assert checked.returncode == 1
    assert (
        f'inconsistent: {prov_path}: NPBCheck > local:default/gnu-openmpi: '
        f'describes no reference entry in {root}/local/npb.yaml'
    ) in checked.stdout
