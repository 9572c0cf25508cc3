"""One reference directory per command: --references, else RFM_REFERENCE_PREFIX,
else reference_data/; said on every run; and provenance that means the same
on another machine."""

import json
import os
import re
import shutil

import pytest
import rfm
import yaml
from conftest import PROJECT

from clusterbench.references import update as refupdate

REFERENCES = os.path.join(PROJECT, 'reference_data')
#: The reference value of HPCC's hpl entry, whatever it is today.
HPL_VALUE = re.compile(r'(hpl: \[)[^,\]]+,')


def clusterbench(*args, env=None):
    # Each test names its reference directory itself: none inherited.
    environ = {'RFM_REFERENCE_PREFIX': None, **(env or {})}
    return rfm.clusterbench(*args, env=environ)


def altered_copy(path, hpl):
    shutil.copytree(REFERENCES, path)
    hpcc = path / 'local' / 'hpcc.yaml'
    text = hpcc.read_text()
    altered, count = HPL_VALUE.subn(rf'\g<1>{hpl},', text, count=1)
    assert count == 1, 'no hpl entry in reference_data/local/hpcc.yaml'
    hpcc.write_text(altered)
    return path


def test_no_file_under_reference_data_holds_an_absolute_path():
    # A path of the recording machine: "/" after a space, bracket, quote or
    # comma, then a name ("GFlop/s" and "local:default/gnu-openmpi" are not).
    # The kernel's interfaces named in the reasons of absent facts
    # ("no cpufreq in sysfs (/sys/devices/...)") are the same on every machine.
    absolute = re.compile(r"""(?:^|[\s\[{,'"])/(?!sys/|proc/|dev/)[\w.~-]""", re.M)
    found = []
    for folder, _, names in os.walk(REFERENCES):
        for name in names:
            path = os.path.join(folder, name)
            with open(path) as f:
                for number, line in enumerate(f, 1):
                    if absolute.search(line):
                        found.append(f'{path}:{number}: {line.strip()[:80]}')
    assert not found, '\n'.join(found)


def test_report_paths_are_stored_relative_to_the_results_root(tmp_path):
    results = tmp_path / 'results'
    inside = results / 'box' / 'x' / 'report.json'
    assert refupdate.portable_report_path(str(inside), str(results)) == (
        'box/x/report.json'
    )
    elsewhere = tmp_path / 'old' / 'local' / '20261122T015521-2' / 'report.json'
    assert refupdate.portable_report_path(str(elsewhere), str(results)) == (
        'local/20261122T015521-2/report.json'
    )
    assert refupdate.portable_report_path('/srv/a/r.json', str(results)) == 'r.json'

    # Through the command: a session of a results root given by --results.
    session = results / 'local' / '20261124T101010'
    session.mkdir(parents=True)
    case = {
        'name': 'T',
        'display_name': 'T',
        'system': 'local',
        'partition': 'default',
        'environ': 'e',
        'result': 'pass',
        'reference_file': 'x.yaml',
        'reference_index': ['$partition', '$environ'],
        'perfvalues': {'local:default:bandwidth': [1.0, 0, None, None, 'GB/s', 'pass']},
    }
    report = session / 'report.json'
    report.write_text(
        json.dumps({'session_info': {'uuid': 'u'}, 'runs': [{'testcases': [case]}]})
    )
    refs = tmp_path / 'refs'
    done = clusterbench(
        'references',
        'update',
        '--from',
        str(report),
        '--references',
        str(refs),
        '--results',
        str(results),
        '--write',
        '--force',  # one session (tests/references/test_rule_of_three.py)
    )
    assert done.returncode == 0, done.stderr
    prov = yaml.safe_load((refs / 'local' / 'provenance' / 'x.yaml').read_text())
    assert prov['T']['local:default/e'][-1]['reports'] == [
        'local/20261124T101010/report.json'
    ]


def test_option_wins_over_the_variable_which_wins_over_the_default(tmp_path):
    by_env = altered_copy(tmp_path / 'by-env', 11.0)
    by_option = altered_copy(tmp_path / 'by-option', 22.0)
    env = {'RFM_REFERENCE_PREFIX': str(by_env)}

    default = clusterbench('references', 'check')
    assert default.stdout.splitlines()[0] == (
        "references: reference_data (the current directory's: references of local)"
    )
    assert default.returncode == 0, default.stdout

    checked = clusterbench('references', 'check', env=env)
    assert checked.stdout.splitlines()[0] == (
        f'references: {by_env} ($RFM_REFERENCE_PREFIX)'
    )
    assert f'{by_env}/local/hpcc.yaml: 1 test(s)' in checked.stdout
    # The altered copy's hpl no longer matches its provenance: named.
    assert checked.returncode == 1
    assert f'inconsistent: {by_env}/local/provenance/hpcc.yaml: HPCCCheck >' in (
        checked.stdout
    )
    checked = clusterbench(
        'references', 'check', '--references', str(by_option), env=env
    )
    assert checked.stdout.splitlines()[0] == f'references: {by_option} (--references)'

    report = tmp_path / 'r.json'
    case = {
        'name': 'HPCCCheck',
        'display_name': 'HPCCCheck',
        'system': 'local',
        'partition': 'default',
        'environ': 'gnu-openmpi',
        'result': 'pass',
        'reference_file': 'hpcc.yaml',
        'reference_index': ['$partition', '$environ', '$processor.arch'],
        'processor_facts': {'arch': 'x86_64_v4'},
        'perfvalues': {'local:default:hpl': [30.0, 0, None, None, 'GFlop/s', 'pass']},
    }
    report.write_text(json.dumps({'session_info': {}, 'runs': [{'testcases': [case]}]}))
    for args, directory in (
        ((), f'{by_env} ($RFM_REFERENCE_PREFIX)'),
        (('--references', str(by_option)), f'{by_option} (--references)'),
    ):
        dry = clusterbench(
            'references', 'update', '--from', str(report), *args, env=env
        )
        assert dry.returncode == 0, dry.stderr
        assert dry.stdout.splitlines()[0] == f'references: {directory}'
        assert 'dry run' in dry.stdout
        repaired = clusterbench('references', 'repair', *args, env=env)
        assert repaired.stdout.splitlines()[0] == f'references: {directory}'
        assert f'{directory.split()[0]}: no interrupted update: nothing to repair' in (
            repaired.stdout
        )

    # compare and report re-judge against the chosen directory; by default
    # they keep what ReFrame recorded (here 50 GFlop/s).
    case['processor_facts'] = {'arch': 'x86_64_v4', 'model': 'AMD EPYC', 'num_cpus': 2}
    # The committed HPCC reference's own key: the machine kind and HPL order
    # it was made with (not this host's: compare reads the case, not the host).
    refs = yaml.safe_load((by_env / 'local' / 'hpcc.yaml').read_text())
    refs = refs['HPCCCheck']
    case['reference_index'] = refs['$index']
    level = refs['local:default']['gnu-openmpi']['x86_64_v4']['AMD EPYC']
    case['cpu_kind'] = next(iter(level))
    case['hpl_order'] = next(iter(level[case['cpu_kind']][2]))
    case['perfvalues']['local:default:hpl'] = [30.0, 50.0, -0.1, 0.1, 'GFlop/s', 'x']
    report.write_text(json.dumps({'session_info': {}, 'runs': [{'testcases': [case]}]}))
    for args, environ, said, reference in (
        (
            (),
            None,
            'as recorded in the report by ReFrame (no --references or '
            '$RFM_REFERENCE_PREFIX)',
            50.0,
        ),
        ((), env, f'{by_env} ($RFM_REFERENCE_PREFIX)', 11.0),
        (('--references', str(by_option)), env, f'{by_option} (--references)', 22.0),
    ):
        table = clusterbench('compare', str(report), *args, env=environ)
        assert table.stdout.splitlines()[0] == f'references: {said}', table.stderr
        machine = clusterbench(
            'compare', str(report), '--format', 'json', *args, env=environ
        )
        assert machine.stderr.splitlines() == [f'references: {said}']
        (row,) = json.loads(machine.stdout)
        assert row['reference'] == reference
        html = clusterbench(
            'report', str(report), '-o', str(tmp_path / 'r.html'), *args, env=environ
        )
        assert html.returncode == 0, html.stderr
        assert f'references: {said}' in html.stdout.splitlines()
        assert f'; reference {reference:g};' in (tmp_path / 'r.html').read_text()


@pytest.mark.integration
def test_run_judges_against_the_directory_it_validates(tmp_path):
    refs = tmp_path / 'refs'
    shutil.copytree(REFERENCES, refs)
    # An hpl reference this machine has whatever its processor, which no
    # reference_data/ holds.
    (refs / 'local' / 'hpcc.yaml').write_text(
        "HPCCCheck:\n  $index: [$partition, $environ]\n  'local:default':\n"
        "    gnu-openmpi:\n      hpl: [12.34, -1.0, 1000.0, 'GFlop/s']\n"
    )
    # A directory in the variable too, which the option must override.
    decoy = tmp_path / 'decoy'
    decoy.mkdir()
    result = clusterbench(
        'run',
        '--references',
        str(refs),
        '--results',
        str(tmp_path / 'results'),
        '--',
        '-n',
        '^HPCCCheck$',
        '-p',
        'gnu-openmpi',
        '-S',
        'hpl_n=1152',
        '-S',
        'hpl_nb=96',
        # Measured, not judged: on a busy machine a DISTURBED run drops its
        # references, and this test is about which directory judged.
        '-S',
        'judge_conditions=false',
        env={
            'RFM_REFERENCE_PREFIX': str(decoy),
            'RFM_SQLITE_DB_FILE': str(tmp_path / 'results.db'),
        },
    )
    assert f'references: {refs} (--references)' in result.stdout.splitlines(), (
        result.stdout
    )
    # What ReFrame itself judged against is in its report.
    reports = list((tmp_path / 'results').glob('*/*/report.json'))
    assert len(reports) == 1, result.stdout
    case = json.loads(reports[0].read_text())['runs'][0]['testcases'][0]
    perf = {k.rsplit(':', 1)[-1]: v for k, v in case['perfvalues'].items()}
    assert perf['hpl'][1] == 12.34, result.stdout
    assert perf['dgemm_star'][1:4] == [0, None, None], result.stdout  # none
