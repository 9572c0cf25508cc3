"""Foreign, malformed and unwritable inputs: one line naming the file and the
problem, nothing left half-written (issue 22, item 5)."""

import json
import subprocess

import pytest
from rfm import clusterbench, tool


def one_line_error(result, *fragments):
    assert result.returncode == 2, result.stdout + result.stderr
    assert 'Traceback' not in result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith('clusterbench: error: ')
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


@pytest.fixture
def sarif(tmp_path):
    """A real SARIF log (ruff's, of a file with an unused import): it has a
    ``runs`` list too."""
    source = tmp_path / 'lintme.py'
    source.write_text('import os\n')
    found = subprocess.run(
        [
            tool('ruff'),
            'check',
            '--no-cache',
            '--isolated',
            '--output-format',
            'sarif',
            str(source),
        ],
        capture_output=True,
        text=True,
    )
    path = tmp_path / 'lint.sarif'
    path.write_text(found.stdout)
    assert isinstance(json.loads(found.stdout)['runs'], list)
    return path


def report(tmp_path, value=56.2, name='r.json'):
    """A ReFrame 4.10 run report of one HPCC case (what our commands read)."""
    case = {
        'name': 'HPCCCheck',
        'display_name': 'HPCCCheck',
        'system': 'local',
        'partition': 'default',
        'environ': 'gnu-openmpi',
        'fixture': False,
        'result': 'pass',
        'fail_phase': None,
        'fail_reason': None,
        'num_tasks': 2,
        'job_nodelist': ['vm'],
        'reference_file': 'hpcc.yaml',
        'reference_index': ['$partition', '$environ'],
        'perfvalues': {
            'local:default:hpl': [value, 50.0, -0.5, 0.5, 'GFlop/s', 'pass'],
            'local:default:mpifft': [7.7, 0, None, None, 'GFlop/s', 'pass'],
        },
    }
    path = tmp_path / name
    path.write_text(
        json.dumps(
            {
                'session_info': {'uuid': 'u1', 'num_cases': 1},
                'runs': [{'testcases': [case]}],
            }
        )
    )
    return path


def test_a_sarif_log_is_not_a_run_report(tmp_path, sarif):
    for command in (('compare',), ('report', '-o', str(tmp_path / 'r.html'))):
        one_line_error(
            clusterbench(*command, str(sarif)),
            f'{sarif}: not a ReFrame run report: no "session_info"',
        )
    assert not (tmp_path / 'r.html').exists()


def test_references_update_from_a_sarif_log(tmp_path, sarif):
    one_line_error(
        clusterbench(
            'references',
            'update',
            '--from',
            str(sarif),
            '--directory',
            str(tmp_path / 'refs'),
            '--write',
        ),
        f'{sarif}: not a ReFrame run report',
    )
    assert not (tmp_path / 'refs').exists()


@pytest.mark.parametrize(
    'data, problem',
    [
        ({'runs': ['a', 1]}, 'no "session_info"'),
        ({'session_info': {}, 'runs': ['a', 1]}, 'is a string, expected an object'),
        (
            {'session_info': {}, 'runs': [{'testcases': [7]}]},
            'runs[0].testcases[0]: 7 is an integer, expected an object',
        ),
        ({'session_info': {}, 'runs': {}}, 'runs: {} is an object, expected an array'),
    ],
)
def test_a_malformed_report_is_one_line(tmp_path, data, problem):
    path = tmp_path / 'r.json'
    path.write_text(json.dumps(data))
    one_line_error(clusterbench('compare', str(path)), f'{path}: ', problem)


def test_a_perfvalue_given_as_a_string(tmp_path):
    good = report(tmp_path, name='good.json')
    assert clusterbench('compare', str(good)).returncode == 0
    path = report(tmp_path, value='56.2')
    where = "runs[0].testcases[0].perfvalues['local:default:hpl'][0]"
    for command in (('compare',), ('report', '-o', str(tmp_path / 'r.html'))):
        one_line_error(
            clusterbench(*command, str(path)),
            f'{path}: not a ReFrame run report: {where}: "56.2" is a string, '
            'expected a number',
        )
    assert not (tmp_path / 'r.html').exists()
