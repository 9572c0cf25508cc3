"""`references update --write` is one transaction: kill -9 anywhere, a full
disk, or a second writer leave every file old or new, and provenance that
matches its reference; `references check` names what is not, and `references
repair` repairs it."""

import json
import os
import re
import shutil
import stat
import subprocess

import fsfaults
import pytest
import yaml
from conftest import PROJECT
from rfm import tool

from clusterbench import cli
from clusterbench.references import provenance as refprov
from clusterbench.references import store as refstore

REFERENCES = os.path.join(PROJECT, 'reference_data')
SITE_OPTIONS = [
    '--site-configs',
    os.path.join(PROJECT, 'site_configs'),
    '--checks',
    os.path.join(PROJECT, 'reframe_checks'),
]
ALL = ('cgsolver', 'hpcc', 'netpipe')
#: The files an update of every file of ALL changes: each with its
#: provenance, and the session records (a new session).
CHANGED = 2 * len(ALL) + 1
LOADER = getattr(yaml, 'CSafeLoader', yaml.SafeLoader)


def _first_leaf(body):
    """(index, typed key, figures) of the first reference entry of a test."""
    index = body['$index']
    level, key = body, []
    for _ in index:
        name = next(k for k in level if k != '$index')
        key.append(name)
        level = level[name]
    return index, key, level


def run_report(path, files=ALL, factor=1.01, uuid='s-new'):
    """A ReFrame run report whose cases are the first entry of each reference
    file, measured *factor* times its reference: an update of every file."""
    cases = []
    for name in files:
        with open(os.path.join(REFERENCES, 'local', f'{name}.yaml')) as f:
            refs = yaml.safe_load(f)
        for test, body in refs.items():
            index, key, figures = _first_leaf(body)
            case = {
                'name': test,
                'display_name': test,
                'unique_name': test,
                'result': 'pass',
                'fixture': False,
                'reference_file': f'{name}.yaml',
                'reference_index': index,
                'processor_facts': {},
                'job_nodelist': ['vm'],
            }
            for what, value in zip(index, key):
                if what == '$partition':
                    case['system'], case['partition'] = value.split(':')
                elif what == '$environ':
                    case['environ'] = value
                elif what.startswith('$processor.'):
                    case['processor_facts'][what.split('.', 1)[1]] = value
                else:
                    case[what] = value
            part = f'{case["system"]}:{case["partition"]}'
            case['perfvalues'] = {
                f'{part}:{var}': [ref[0] * factor, *ref[:4], 'pass']
                for var, ref in figures.items()
            }
            cases.append(case)
    with open(path, 'w') as f:
        json.dump(
            {
                'session_info': {'uuid': uuid, 'num_cases': len(cases)},
                'runs': [{'testcases': cases}],
            },
            f,
        )
    return str(path)


def update(directory, report, hook=None, wait=True):
    """`clusterbench references update --write`; *hook* a fault of
    tests/fsfaults.py at the file operations in *directory*."""
    env = {**os.environ, 'SOURCE_DATE_EPOCH': '1795000000'}
    args = ['references', 'update', '--from', report]
    # One session: written only when forced (tests/references/test_rule_of_three.py).
    args += ['--references', str(directory), '--write', '--force']
    if hook:
        return fsfaults.run(directory, hook, *args, env=env, wait=wait)
    cmd = [tool('clusterbench'), *args]
    if not wait:
        return subprocess.Popen(
            cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)


def command(capsys, *args):
    rc = cli.main(['references', *args])
    out = capsys.readouterr()
    return rc, out.out + out.err


def contents(directory):
    """{relative path: (bytes, mode)} of every file of a reference directory
    but the lock (made by the first update of a system directory)."""
    found = {}
    for folder, _, names in os.walk(directory):
        for name in names:
            if name == refstore.LOCK:
                continue
            path = os.path.join(folder, name)
            with open(path, 'rb') as f:
                found[os.path.relpath(path, directory)] = (
                    f.read(),
                    stat.S_IMODE(os.stat(path).st_mode),
                )
    return found


def hpcc_entry(directory):
    """The key of the AMD-25-17 HPCC entry of the provenance in *directory*."""
    prov = yaml.safe_load(
        (directory / 'local' / 'provenance' / 'hpcc.yaml').read_text()
    )
    (key,) = [k for k in prov['HPCCCheck'] if '/AMD-25-17/' in k]
    return key


@pytest.fixture
def store(tmp_path):
    """A copy of reference_data/ with modes of its own (kept by every write)."""
    directory = tmp_path / 'refs'
    shutil.copytree(REFERENCES, directory)
    os.chmod(directory / 'local' / 'hpcc.yaml', 0o640)
    os.chmod(directory / 'local' / 'provenance' / 'npb.yaml', 0o604)
    return directory


def test_kill_9_before_each_kind_of_operation_leaves_old_or_new_and_repair_completes(
    store, tmp_path, capsys
):
    report = run_report(tmp_path / 'report.json')
    old = contents(store)
    # The new version, and every file operation of the update that writes it.
    done = tmp_path / 'done'
    shutil.copytree(store, done)
    trace = tmp_path / 'trace'
    result = update(done, report, hook=f'trace:{trace}')
    assert result.returncode == 0, result.stderr
    new = contents(done)
    changed = {rel for rel in old if old[rel][0] != new[rel][0]}
    assert len(changed) == CHANGED
    assert all(old[rel][1] == new[rel][1] for rel in old)  # modes kept
    events = fsfaults.read_trace(trace)
    commit = fsfaults.commit_point(events, f'local/{refstore.JOURNAL}')
    first, last = fsfaults.transaction(events)
    # A new reference file beside its old provenance, at each rename of one.
    reference_renames = [
        fsfaults.renamed_to(events, f'local/{name}.yaml') for name in ALL
    ]
    # Before the first temporary file, at each kind of operation of the
    # transaction on each side of its commit, at each rename of a reference
    # file, on both sides of the commit, and once all is done.
    every = [first - 1, *range(first, last + 1), last + 1]
    assert len(every) >= 30 and first < commit < last
    points = sorted(
        {
            *fsfaults.one_of_each_kind(events, every, commit),
            *reference_renames,
            first - 1,
            commit - 1,
            commit,
            last + 1,
        }
    )

    outcomes = {'old': 0, 'new': 0}
    mismatches = 0
    for k in points:
        work = tmp_path / f'k{k}'
        shutil.copytree(store, work)
        killed = update(work, report, hook=f'kill:{k}')
        assert killed.returncode == -9, (k, killed.stderr)
        rc, out = command(capsys, 'check', str(work), *SITE_OPTIONS)
        if rc == 0:
            assert 'every reference entry matches its provenance: ok' in out
            assert k in (first - 1, last + 1), f'{k} ({events[k - 1]}) left no trace'
        else:
            assert first <= k <= last, (k, events[k - 1], out)
            assert 'interrupted update: ' in out, (k, out)
            assert 'Traceback' not in out
            if k in reference_renames:
                # A new reference beside its old provenance: named as such.
                name = events[k - 2][1][-1].split('/')[-1]
                assert f'inconsistent: {work}/local/provenance/{name}: ' in out, out
                mismatches += 1
            rc, out = command(capsys, 'repair', '--references', str(work))
            assert rc == 0, (k, out)
            forward = k >= commit
            assert ('rolled forward' if forward else 'rolled back') in out, (k, out)
            # What check verifies, without its site-config part (time).
            assert refprov.inconsistencies(str(work / 'local')) == [], k
            assert refstore.leftovers(str(work / 'local')) == [], k
        after = contents(work)
        assert set(after) == set(old), (k, set(after) ^ set(old))
        version = 'new' if k >= commit else 'old'
        expected = new if version == 'new' else old
        for rel, (data, mode) in after.items():
            assert (data, mode) == expected[rel], (k, events[k - 1], rel)
            if rel.endswith('.yaml'):
                yaml.load(data, Loader=LOADER)
        outcomes[version] += 1
        shutil.rmtree(work)
    # Both sides of the commit are exercised.
    assert outcomes['old'] >= 5 and outcomes['new'] >= 5, outcomes
    assert mismatches == len(reference_renames) == len(ALL)


def test_the_next_update_repairs_an_interrupted_one(store, tmp_path):
    report = run_report(tmp_path / 'report.json', files=('hpcc',))
    trace = tmp_path / 'trace'
    shutil.copytree(store, tmp_path / 'x')
    assert update(tmp_path / 'x', report, hook=f'trace:{trace}').returncode == 0
    events = fsfaults.read_trace(trace)
    commit = fsfaults.commit_point(events, f'local/{refstore.JOURNAL}')
    assert update(store, report, hook=f'kill:{commit}').returncode == -9
    result = update(store, report)
    assert result.returncode == 0, result.stderr
    assert 'rolled forward the interrupted update' in result.stdout
    assert refprov.inconsistencies(str(store / 'local')) == []
    assert refstore.leftovers(str(store / 'local')) == []


def test_check_names_a_reference_changed_without_its_provenance(store, capsys):
    path = store / 'local' / 'hpcc.yaml'
    path.write_text(re.sub(r'hpl: \[[^,]+,', 'hpl: [99.0,', path.read_text(), count=1))
    rc, out = command(capsys, 'check', str(store), *SITE_OPTIONS)
    assert rc == 1
    assert (
        f'inconsistent: {store}/local/provenance/hpcc.yaml: HPCCCheck > '
        f'{hpcc_entry(store)}: does not match the reference entry in '
        f'{store}/local/hpcc.yaml'
    ) in out
    rc, out = command(capsys, 'repair', '--references', str(store))
    assert rc == 1
    assert 'nothing to repair' in out and 'not repairable here' in out


def test_a_new_file_gets_the_umask_mode(tmp_path):
    report = run_report(tmp_path / 'r.json', files=('netpipe',))
    refs = tmp_path / 'empty'
    old = os.umask(0o027)
    try:
        result = update(refs, report)
    finally:
        os.umask(old)
    assert result.returncode == 0, result.stderr
    assert stat.S_IMODE(os.stat(refs / 'local' / 'netpipe.yaml').st_mode) == 0o640
    assert (
        stat.S_IMODE(os.stat(refs / 'local' / 'provenance' / 'netpipe.yaml').st_mode)
        == 0o640
    )
