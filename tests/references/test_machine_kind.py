"""References apply only to the kind of machine they were made on, and to
HPCC's problem size: real ReFrame runs against the project's own references."""

import csv
import io
import os
import shutil

import pytest
from conftest import PROJECT
from rfm import clusterbench, only_case, reframe

from clusterbench.machine import hwinfo
from clusterbench.references import lookup as reflookup

pytestmark = pytest.mark.integration

REFERENCES = os.path.join(PROJECT, 'reference_data')
ZEN5 = os.path.join(PROJECT, 'tests', 'data', 'cpuinfo', 'amd-epyc-zen5')
# Conditions are tested elsewhere: on a busy machine a disturbed run drops its
# references, which is not what these tests are about.
NETPIPE = (
    '-n',
    'NetPIPECheck%placement=intra%mode=pingpong',
    '-S',
    'netpipe_upper=1024',
    '-S',
    'netpipe_repeats=20',
    '-p',
    'gnu-openmpi',
    '-S',
    'measure_conditions=false',
)


def run(prefix, *args, cpuinfo=None, checks):
    env = {'RFM_REFERENCE_PREFIX': REFERENCES}
    if cpuinfo:
        env['CLUSTERBENCH_CPUINFO'] = cpuinfo
    rc, out, report = reframe(prefix, *args, checks=checks, env=env)
    assert report is not None, out
    return rc, out, report


def cli(*args, env=None):
    return clusterbench(*args, env=env, timeout=300)


def references(case):
    """{figure: reference} as ReFrame resolved them (0 and no bounds: none)."""
    return {
        k.rsplit(':', 1)[1]: v[1]
        for k, v in case['perfvalues'].items()
        if not (v[1] == 0 and v[2] is None and v[3] is None)
    }


def verdicts(report_path):
    out = cli('compare', '--format', 'csv', report_path)
    return {
        row['variable']: row['verdict']
        for row in csv.DictReader(io.StringIO(out.stdout))
    }


@pytest.fixture(scope='module')
def netpipe_runs(tmp_path_factory):
    here = tmp_path_factory.mktemp('here')
    other = tmp_path_factory.mktemp('zen5')
    checks = 'reframe_checks/netpipe.py'
    return (
        (here, run(here, *NETPIPE, checks=checks)),
        (other, run(other, *NETPIPE, cpuinfo=ZEN5, checks=checks)),
    )


def test_this_machine_finds_its_references_in_reframe_and_in_reflookup(netpipe_runs):
    (_, (_, out, report)), _ = netpipe_runs
    case = only_case(report)
    assert case['cpu_kind'] == hwinfo.cpu_kind_of_file()
    assert case['processor_facts']['cpu_kind'] == case['cpu_kind']
    found = references(case)
    if not reflookup.references_for(case, REFERENCES):
        pytest.skip(
            f'reference_data/local/ has no NetPIPE references for {case["cpu_kind"]}'
        )
    # ReFrame and clusterbench's own look-up resolve the same references.
    expected = {k: v[0] for k, v in reflookup.references_for(case, REFERENCES).items()}
    assert found == {k: v for k, v in expected.items() if k in found}
    assert found, out


def test_another_cpu_family_gets_no_reference_everywhere(netpipe_runs):
    _, (prefix, (rc, out, report)) = netpipe_runs
    case = only_case(report)
    # Same ReFrame processor facts (model string, arch, CPUs); another family.
    assert case['cpu_kind'] == 'AMD-26-2'
    assert case['result'] == 'pass', case['fail_reason']
    assert references(case) == {}
    assert reflookup.references_for(case, REFERENCES) == {}
    rows = verdicts(os.path.join(prefix, 'report.json'))
    assert rows and set(rows.values()) == {'no reference'}, rows
    assert rc == 0, out


def test_references_check_names_references_of_another_machine():
    here = cli('references', 'check')
    assert here.returncode == 0, here.stdout + here.stderr
    kind = hwinfo.cpu_kind_of_file()
    assert f"cpu_kind '{kind}'" not in here.stdout
    other = cli('references', 'check', env={'CLUSTERBENCH_CPUINFO': ZEN5})
    assert other.returncode == 0, other.stdout + other.stderr
    lines = [x for x in other.stdout.splitlines() if x.startswith('other machine:')]
    assert lines, other.stdout
    # (NetPIPE's bands of AMD-25-17 are context only:
    # tests/references/test_rule_of_three.py.)
    assert any(
        'HPCCCheck > local:default > gnu-openmpi' in x
        and "cpu_kind 'AMD-25-17' is no machine of the site configs (here: AMD-26-2)"
        in x
        for x in lines
    ), lines


def test_every_local_reference_has_a_measured_identity():
    # Issue 16: the provenance of every reference in use names the CPU it was
    # measured on; references whose kind was assigned at migration were
    # retired, kept whole beside the reason.
    import yaml

    from clusterbench.references import provenance as refprov

    folder = os.path.join(REFERENCES, 'local', 'provenance')
    with open(refprov.sessions_path(os.path.dirname(folder))) as f:
        sessions = yaml.safe_load(f)
    retired = 0
    for name in sorted(os.listdir(folder)):
        if name == refprov.SESSIONS_FILE:
            continue
        with open(os.path.join(folder, name)) as f:
            prov = yaml.safe_load(f)
        for entries in refprov.records(prov).values():
            for where, entry in entries.items():
                *history, current = refprov.versions(entry)
                ident = refprov.facts(current, sessions)['identity']
                assert ident['source'] == 'recorded', where
                assert ident['cpu_kind'] in where.split('/'), where
                for fact in ('family', 'model', 'stepping', 'microcode'):
                    assert ident.get(fact) not in (None, '', 'absent'), (where, fact)
                for version in history:
                    old = refprov.facts(version, sessions).get('identity') or {}
                    if old.get('source') == 'migrated':
                        assert old['family'] == old['cpu_kind'].split('-')[1]
        for record in prov.get('$retired', []):
            assert record['reason'] and record['references'] and record['provenance']
            for entries in record['provenance'].values():
                for entry in entries.values():
                    assert entry['identity']['source'] == 'migrated'
                    retired += 1
    assert retired == 13  # the NPB references of local


# -- HPCC: references keyed by HPL's N (issue 22, item 9) ----------------------

TINY_HPCC = (
    '-n',
    '^HPCCCheck$',
    '-S',
    'hpl_n=1152',
    '-S',
    'hpl_nb=96',
    '-S',
    'measure_conditions=false',
)


@pytest.fixture(scope='module')
def small_hpcc(tmp_path_factory):
    prefix = tmp_path_factory.mktemp('hpcc-small')
    _, out, report = run(prefix, *TINY_HPCC, checks='reframe_checks/hpcc.py')
    return prefix, out, report


def test_hpcc_of_another_size_gets_no_reference(small_hpcc):
    prefix, out, report = small_hpcc
    case = only_case(report)
    assert case['hpl_order'] == 1152
    assert case['result'] == 'pass', case['fail_reason']
    assert references(case) == {}
    # The default size on this machine does have them (same key otherwise).
    default = {**case, 'hpl_order': 10368}
    if reflookup.references_for(default, REFERENCES):
        assert reflookup.references_for(case, REFERENCES) == {}
    rows = verdicts(os.path.join(prefix, 'report.json'))
    assert rows['hpl'] == 'no reference'
    assert 'FLAGGED' not in rows.values()


def test_update_from_another_size_never_replaces_the_default_size(small_hpcc, tmp_path):
    prefix, _, _ = small_hpcc
    refs = tmp_path / 'refs'
    shutil.copytree(REFERENCES, refs)
    before = (refs / 'local' / 'hpcc.yaml').read_text()

    def update(*more):
        report = prefix / 'report.json'
        return cli('references', 'update', '--from', report, '--directory', refs, *more)

    dry = update()
    assert dry.returncode == 0, dry.stderr
    lines = [x for x in dry.stdout.splitlines() if x[:4] in ('  + ', '  ~ ', '  = ')]
    assert lines
    # Only new entries under N=1152: nothing of the default size changes.
    assert all(x.startswith('  + HPCCCheck hpl_order=1152 / ') for x in lines), lines
    # One session: written only when forced (tests/references/test_rule_of_three.py).
    wrote = update('--write', '--force')
    assert wrote.returncode == 0, wrote.stderr
    import yaml

    old = yaml.safe_load(before)['HPCCCheck']
    new = yaml.safe_load((refs / 'local' / 'hpcc.yaml').read_text())['HPCCCheck']
    assert new['$index'] == old['$index']

    kind = hwinfo.cpu_kind_of_file()
    path = ['local:default', 'gnu-openmpi']
    old_level, new_level = old, new
    for key in path:
        old_level, new_level = old_level[key], new_level[key]
    # Walk arch > model > kind > num_cpus of this run's own key.
    case = only_case(small_hpcc[2])
    for key in (
        case['processor_facts']['arch'],
        case['processor_facts']['model'],
        kind,
        case['processor_facts']['num_cpus'],
    ):
        new_level = new_level[key]
        old_level = old_level.get(key, {}) if isinstance(old_level, dict) else {}
    assert 1152 in new_level
    if 10368 in old_level:
        assert new_level[10368] == old_level[10368]
    from clusterbench.references import provenance as refprov

    prov = yaml.safe_load((refs / 'local' / 'provenance' / 'hpcc.yaml').read_text())
    records = refs / 'local' / refprov.PROVENANCE_DIR / refprov.SESSIONS_FILE
    sessions = yaml.safe_load(records.read_text())
    (entry,) = next(v for k, v in prov['HPCCCheck'].items() if k.endswith('/1152'))
    identity = refprov.facts(entry, sessions)['identity']
    # HPCC records node facts: the new entry's identity is recorded, not assumed.
    assert identity['source'] == 'recorded'
    assert identity['cpu_kind'] == kind
    assert identity['microcode'] != ''
