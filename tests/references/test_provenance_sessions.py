"""Provenance per session: what a session ran on is recorded once, in
provenance/sessions.yaml; each version of a reference entry names its
sessions and holds its own samples; an update appends a version. Files of
the format before are read, and an update converts them without loss."""

import copy
import difflib
import glob
import json
import os
import shutil

import pytest
import yaml
from conftest import PROJECT
from test_refupdate import case, report

from clusterbench.core.errors import ClusterbenchError
from clusterbench.references import provenance as refprov
from clusterbench.references import update as refupdate
from clusterbench.results import samples

REFERENCES = os.path.join(PROJECT, 'reference_data')
KEY = 'local:default/gnu-openmpi/AMD EPYC'


def _facts(mpi, source='recorded', stepping='1'):
    return {
        'nodes': ['vm'],
        'hardware': {
            'model': 'AMD EPYC',
            'node_facts': {'vm': {'host': 'vm', 'mpi': mpi, 'threads': 2}},
        },
        'identity': {'source': source, 'family': '25', 'stepping': stepping},
        'stack': {},
    }


def _old_version(sessions, made, facts, value):
    return {
        'made': made,
        'entry_sha256': f'hash-{value}',
        'reports': [f'local/{made}/report.json'],
        'sessions': sessions,
        **facts,
        'clusterbench': '0.1.0',
        'reframe': '4.10.4',
        'figures': {
            'bandwidth': {'reference': [value, -0.1, 0.1, 'GB/s'], 'values': [value]}
        },
    }


def old_format():
    """Provenance as written before: facts inline in every version, earlier
    versions under ``history`` (newest first); two environments of the same
    sessions recorded other MPIs; an identity assigned at a migration."""
    first = _old_version(['s1'], '1', _facts('openmpi', 'migrated', 'absent'), 1.0)
    second = _old_version(['s1', 's2'], '2', _facts('openmpi'), 2.0)
    mpich = _old_version(['s1', 's2'], '2', _facts('mpich'), 3.0)
    return {
        'T': {
            'local:default/gnu-openmpi/AMD EPYC': {**second, 'history': [first]},
            'local:default/gnu-mpich/AMD EPYC': {**mpich, 'history': []},
        },
        '$retired': [{'reason': 'kept whole', 'provenance': {'T': {'k': first}}}],
    }


def test_migration_keeps_every_fact_of_every_version_and_records_each_session_once():
    old = old_format()
    sessions = {}
    new = refprov.migrate(copy.deepcopy(old), sessions)
    assert sorted(sessions) == ['s1', 's2']
    for key, entry in old['T'].items():
        before, after = refprov.versions(entry), new['T'][key]
        assert [v['made'] for v in after] == [v['made'] for v in before]
        for was, now in zip(before, after):
            assert refprov.facts(now, sessions) == refprov.facts(was, {})
            assert not set(refprov.FACTS) & set(now)  # none inline any more
            assert now['figures'] == was['figures']
    # What differs from a session's record is kept with the version, alone.
    mpich = new['T']['local:default/gnu-mpich/AMD EPYC'][-1]
    assert mpich[refprov.DIFFERS] == {
        'hardware': {'node_facts': {'vm': {'mpi': 'mpich'}}}
    }
    assert new['$retired'] == old['$retired']
    # Converting again changes nothing.
    assert refprov.migrate(copy.deepcopy(new), dict(sessions)) == new


def _write(tmp_path, refs, name, value, uuid):
    path = report(tmp_path, name, [case('T', {'bandwidth': value})], uuid=uuid)
    props = refupdate.propose(samples.collect([path]))
    return refupdate.write(props, str(refs), [path], results=str(tmp_path))


def test_an_update_appends_a_version_and_changes_no_line_it_wrote(tmp_path):
    refs = tmp_path / 'refs'
    prov = refs / 'local' / 'provenance' / 'x.yaml'
    records = refs / 'local' / 'provenance' / refprov.SESSIONS_FILE
    _write(tmp_path, refs, 'a.json', 10.0, 's1')
    before = {p: p.read_text().splitlines() for p in (prov, records)}
    _write(tmp_path, refs, 'b.json', 11.0, 's2')
    for path, lines in before.items():
        diff = difflib.ndiff(lines, path.read_text().splitlines())
        assert not [line for line in diff if line.startswith('- ')], path
    versions = yaml.safe_load(prov.read_text())['T'][KEY]
    assert [v['sessions'] for v in versions] == [['s1'], ['s2']]
    sessions = yaml.safe_load(records.read_text())
    assert sorted(sessions) == ['s1', 's2']
    assert sessions['s2']['nodes'] == ['n1']
    assert sessions['s2']['hardware']['model'] == 'AMD EPYC'
    assert refprov.inconsistencies(str(refs / 'local')) == []


def test_an_update_converts_a_file_of_the_old_format_and_check_reads_both(tmp_path):
    refs = tmp_path / 'refs'
    _write(tmp_path, refs, 'a.json', 10.0, 's1')
    folder = refs / 'local'
    # The file as the format before wrote it, beside one of the new format.
    prov = folder / 'provenance' / 'x.yaml'
    data = yaml.safe_load(prov.read_text())
    (version,) = data['T'][KEY]
    sessions = yaml.safe_load(
        (folder / 'provenance' / refprov.SESSIONS_FILE).read_text()
    )
    old = {**version, **refprov.facts(version, sessions), 'history': []}
    (folder / 'provenance' / refprov.SESSIONS_FILE).unlink()
    prov.write_text(yaml.safe_dump({'T': {KEY: old}}))
    assert refprov.inconsistencies(str(folder)) == []
    _write(tmp_path, refs, 'b.json', 11.0, 's2')
    assert refprov.inconsistencies(str(folder)) == []
    first, second = yaml.safe_load(prov.read_text())['T'][KEY]
    sessions = yaml.safe_load(
        (folder / 'provenance' / refprov.SESSIONS_FILE).read_text()
    )
    assert refprov.facts(first, sessions) == {k: old[k] for k in refprov.FACTS}
    assert second['sessions'] == ['s2'] and 'hardware' not in second


def test_check_names_a_session_without_its_record(tmp_path):
    refs = tmp_path / 'refs'
    shutil.copytree(REFERENCES, refs)
    records = refs / 'local' / 'provenance' / refprov.SESSIONS_FILE
    sessions = yaml.safe_load(records.read_text())
    gone = next(iter(sessions))
    del sessions[gone]
    records.write_text(yaml.safe_dump(sessions, sort_keys=False))
    problems = refprov.inconsistencies(str(refs / 'local'))
    assert problems and all(
        f'session {gone} has no record in {records}' in p for p in problems
    ), problems


def test_the_shipped_provenance_records_each_session_once():
    folder = os.path.join(REFERENCES, 'local')
    assert refprov.inconsistencies(folder) == []
    with open(refprov.sessions_path(folder)) as f:
        sessions = yaml.safe_load(f)
    seen = set()
    for path in glob.glob(os.path.join(folder, refprov.PROVENANCE_DIR, '*.yaml')):
        if os.path.basename(path) == refprov.SESSIONS_FILE:
            continue
        with open(path) as f:
            prov = yaml.safe_load(f)
        for entries in refprov.records(prov).values():
            for entry in entries.values():
                assert isinstance(entry, list)  # versions, oldest first
                for version in entry:
                    assert not set(refprov.FACTS) & set(version)
                    seen.update(version['sessions'])
    assert seen == set(sessions)
    # The node facts of a session are in one record, not in every entry.
    text = json.dumps(sessions)
    assert text.count('node_facts') == len(sessions)


def test_an_update_does_not_merge_into_session_records_that_are_no_mapping(tmp_path):
    refs = tmp_path / 'refs'
    _write(tmp_path, refs, 'a.json', 10.0, 's1')
    records = refs / 'local' / 'provenance' / refprov.SESSIONS_FILE
    records.write_text('- s1\n')
    before = {p: p.read_bytes() for p in (refs / 'local').rglob('*.yaml')}
    with pytest.raises(ClusterbenchError, match=f'{records}: not a mapping'):
        _write(tmp_path, refs, 'b.json', 11.0, 's2')
    assert {p: p.read_bytes() for p in (refs / 'local').rglob('*.yaml')} == before


def test_the_figures_in_use_are_read_from_either_format(tmp_path):
    # Through JSON: objects shared in memory would be YAML anchors, refused.
    old = json.loads(json.dumps(old_format()))
    sessions = {}
    new = refprov.migrate(copy.deepcopy(old), sessions)
    folder = tmp_path / 'local' / refprov.PROVENANCE_DIR
    folder.mkdir(parents=True)
    (folder / 'old.yaml').write_text(yaml.safe_dump(old))
    (folder / 'new.yaml').write_text(yaml.safe_dump(new))
    (folder / refprov.SESSIONS_FILE).write_text(yaml.safe_dump(sessions))
    found = {
        (name, key): refprov.figures(entry)['bandwidth']['reference'][0]
        for name, test, key, entry in refprov.in_use(str(tmp_path / 'local'))
    }
    # The current version of each entry (not its history, not the retired
    # records nor the sessions' records).
    openmpi, mpich = KEY, 'local:default/gnu-mpich/AMD EPYC'
    assert found == {
        ('new.yaml', mpich): 3.0,
        ('new.yaml', openmpi): 2.0,
        ('old.yaml', mpich): 3.0,
        ('old.yaml', openmpi): 2.0,
    }
    assert refprov.figures(None) == {} and refprov.figures([]) == {}
