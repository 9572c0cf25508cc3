"""The clusterbench command as a user types it: errors are one line, no traceback."""

import json
import os

import pytest
import verdicttable
from rfm import clusterbench

from clusterbench.checks.plugins import energy
from clusterbench.parsers import hpcc


def one_line_error(result, *fragments):
    assert result.returncode == 2
    assert 'Traceback' not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith('clusterbench: error: ')
    for fragment in fragments:
        assert fragment in lines[0]


def test_compare_missing_report(tmp_path):
    path = tmp_path / 'nope.json'
    one_line_error(clusterbench('compare', str(path)), str(path), 'cannot read')


def test_compare_not_json(tmp_path):
    path = tmp_path / 'r.json'
    path.write_text('{"runs": [\n oops')
    one_line_error(clusterbench('compare', str(path)), f'{path}:2', 'not a JSON report')


def test_compare_foreign_json(tmp_path):
    path = tmp_path / 'r.json'
    path.write_text(json.dumps({'hello': 1}))
    one_line_error(clusterbench('compare', str(path)), 'not a ReFrame run report')


def test_references_check_names_the_bad_file(tmp_path):
    (tmp_path / 's').mkdir()
    (tmp_path / 's' / 'a.yaml').write_text(
        "T:\n  's:p':\n    bandwidth: [1, -0.1, 0.1, 'GB/s']\n"
    )
    (tmp_path / 's' / 'b.yaml').write_text(
        "T:\n  's:p':\n    bandwidth: [one, -0.1, 0.1, 'GB/s']\n"
    )
    result = clusterbench('references', 'check', str(tmp_path))
    one_line_error(
        result, f'{tmp_path}/s/b.yaml:3: T > s:p > bandwidth', "'one' is not a number"
    )


def test_references_check_on_project_data():
    result = clusterbench('references', 'check')
    assert result.returncode == 0, result.stderr
    assert 'reference_data/local/hpcc.yaml' in result.stdout


def test_run_with_unknown_system_is_one_line(tmp_path):
    result = clusterbench('run', '--system', 'atlantis', '--results', str(tmp_path))
    one_line_error(result, 'site_configs/atlantis.py', 'no such site config')


@pytest.mark.integration
def test_run_unknown_partition(tmp_path):
    result = clusterbench(
        'run', '--system', 'local:nowhere', '--results', str(tmp_path)
    )
    assert result.returncode == 2
    assert 'Traceback' not in result.stdout + result.stderr
    assert 'nowhere' in result.stdout + result.stderr


@pytest.mark.integration
def test_run_records_each_session_separately(tmp_path):
    args = (
        'run',
        '--results',
        str(tmp_path),
        '-v',  # every figure, also those that pass
        '--',
        '-n',
        '^HPCCCheck$',
        '-S',
        'hpl_n=960',
        '-S',
        'hpl_nb=96',
    )
    first = clusterbench(*args)
    shown = verdicttable.rows(first.stdout)
    assert any(r['variable'] == 'hpl' for r in shown), first.stderr
    rows = [
        r
        for r in shown
        if (r['test'], r['partition'], r['environment'])
        == ('HPCCCheck', 'local:default', 'gnu-openmpi')
        and r['variable']
        not in {f.name for f in energy.FIGURES}  # only where a node exposes it
    ]
    assert len(rows) == len(hpcc.FIGURES) + 1  # and the HPL/DGEMM efficiency
    second = clusterbench(*args)
    sessions = sorted(os.listdir(tmp_path / 'local'))
    assert len(sessions) == 2
    for session in sessions:
        assert (tmp_path / 'local' / session / 'report.json').is_file()
    # A tiny HPL is far below this machine's references: flagged, exit 1.
    assert first.returncode == second.returncode
    assert first.returncode in (0, 1)


def test_acceptance_and_testcluster_are_subcommands(tmp_path):
    listed = clusterbench('-h')
    assert 'acceptance' in listed.stdout and 'testcluster' in listed.stdout
    usage = clusterbench('acceptance', '-h')
    assert usage.returncode == 0
    assert usage.stdout.startswith('usage: clusterbench acceptance')
    # A bad input is one line from the subcommand, named as the user typed it.
    missing = tmp_path / 'missing.json'
    result = clusterbench('acceptance', 'nodes', str(missing))
    assert result.returncode == 2 and 'Traceback' not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert str(missing) in result.stderr
    status = clusterbench('testcluster', '--run-dir', str(tmp_path), 'status')
    assert status.returncode != 0 and 'Traceback' not in status.stderr
    assert f'no test cluster recorded in {tmp_path}' in status.stdout + status.stderr
