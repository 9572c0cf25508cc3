"""The bad-input matrix, round 4 (issue 39), class 70: ReFrame's retries.

`--max-retries` runs a failed test case again, as another run of the same
report. A retry that passes replaces its failed attempt: the test counts
once, as its passing attempt, and the table says what the first attempt
ended as (`retried after TIMEOUT`, `retried after FAILED (sanity)`); a test
that fails every attempt stays FAILED and says how many there were. A
`--reruns` run is a sample, never a retry: its failure stays. `site init`
validates a new configuration with one retry.

Real `clusterbench run` sessions of a flaky check of the test's own
(tests/data/retried_check/), whose attempts are counted in a file; real
`compare` of what they stored; a real `site init` on a fake Slurm.
"""

import csv
import io
import json
import os
import re
import shutil
import subprocess

import pytest
from badinput import Store, hashes
from conftest import PROJECT
from rfm import tool
from test_bad_inputs_site import fake_cluster

from clusterbench.results import retries

pytestmark = pytest.mark.integration

CHECKS = 'tests/data/retried_check'
ROW = re.compile(r'RetriedCheck  .*  (?P<verdict>\S.*)$')
#: A sanity failure of the check, as the Failures list says it.
NO_RATE = "pattern '^rate: \\\\S+' not found in 'rfm_job.out'"


def flaky(store, *options, how='exit', failing=1):
    """`clusterbench run` of the flaky check into *store*: (exit, output)."""
    return store.run(
        '-p', 'gnu-openmpi', '-S', f'marker={store.tmp / "attempts"}',
        '-S', f'how={how}', '-S', f'failing={failing}', *options,
        checks=CHECKS,
    )  # fmt: skip


def attempts(store):
    return int((store.tmp / 'attempts').read_text())


def the_report(store):
    (path,) = [
        p for p in store.results.rglob('report.json') if p.parent != store.earlier
    ]
    return path


def rows(output):
    """The verdict cells of the check's figure rows."""
    return [m['verdict'].rstrip() for m in map(ROW.match, output.splitlines()) if m]


def compare(*args):
    return subprocess.run(
        [tool('clusterbench'), 'compare', *map(str, args)],
        capture_output=True, text=True, cwd=PROJECT, timeout=300,
    )  # fmt: skip


@pytest.mark.parametrize(
    'how, first',
    [('exit', 'FAILED (sanity)'), ('sleep', 'TIMEOUT')],
    ids=['sanity', 'timeout'],
)
def test_70_a_passing_retry_replaces_its_failed_attempt(tmp_path, how, first):
    store = Store(tmp_path)
    code, output = flaky(store, '--max-retries', '1', how=how)
    assert 'Traceback' not in output
    assert attempts(store) == 2, output
    assert code == 0, output
    assert 'RetriedCheck: 1 test case: 1 pass' in output.splitlines()
    assert rows(output) == [f'pass (retried after {first})'], output
    assert 'Failures:' not in output
    assert '\n1 pass, 0 no reference, 0 FAILED\n' in output + '\n'
    store.assert_kept(new_session=True)

    # The stored report, compared again: the same verdict, the report as it was.
    report = the_report(store)
    stored = hashes(store.refs, store.results)
    shown = compare(report)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert rows(shown.stdout) == [f'pass (retried after {first})']
    assert 'Failures:' not in shown.stdout and shown.stderr == ''
    machine = compare('--format', 'json', report)
    assert machine.returncode == 0, machine.stderr
    (record,) = json.loads(machine.stdout)
    assert (record['verdict']['kind'], record['n']) == ('pass', 1)
    assert record['retried_after'] == first
    junit = compare('--format', 'junit', report)
    assert junit.returncode == 0 and '<failure' not in junit.stdout
    assert hashes(store.refs, store.results) == stored


def test_70_a_test_failing_every_attempt_stays_failed(tmp_path):
    store = Store(tmp_path)
    code, output = flaky(store, '--max-retries', '1', failing=2)
    assert 'Traceback' not in output
    assert attempts(store) == 2, output
    assert code == 1, output
    failures = output.split('\nFailures:\n')[1].split('\n\n')[0].splitlines()
    assert failures == [
        '  RetriedCheck on local:default with gnu-openmpi: FAILED (sanity): '
        f'{NO_RATE} (2 attempts, each failed)'
    ], output
    assert '\n0 pass, 0 no reference, 1 FAILED\n' in output + '\n'
    store.assert_kept(new_session=True)


def test_70_a_rerun_is_a_sample_not_a_retry(tmp_path):
    """--reruns runs every test again: its first, failed run is a result."""
    store = Store(tmp_path)
    code, output = flaky(store, '--reruns', '1')
    assert 'Traceback' not in output
    assert attempts(store) == 2, output
    assert code == 1, output
    assert rows(output) == ['FAILED (sanity)'], output
    assert (
        f'  RetriedCheck on local:default with gnu-openmpi: FAILED (sanity): {NO_RATE}'
        in output.splitlines()
    )
    assert '\n1 pass, 0 no reference, 1 FAILED\n' in output + '\n'
    store.assert_kept(new_session=True)


def test_70_reruns_after_a_retry_are_samples(tmp_path):
    """ReFrame retries first, then reruns every test: the failed attempt is
    replaced, the retry and the rerun are two samples."""
    store = Store(tmp_path)
    code, output = flaky(store, '--max-retries', '1', '--reruns', '1')
    assert 'Traceback' not in output
    assert attempts(store) == 3, output
    assert code == 0, output
    assert rows(output) == ['pass (retried after FAILED (sanity))'], output
    (report,) = json.loads(
        compare('--format', 'json', the_report(store)).stdout
    )  # fmt: skip
    assert report['n'] == 2
    assert 'Failures:' not in output
    store.assert_kept(new_session=True)


SBATCH = """#!/bin/sh
echo "sbatch: error: this fake cluster runs nothing" >&2
exit 1
"""


def test_70_site_init_validates_with_a_retry(tmp_path):
    """The validating run retries twice; here (no `module` command on this
    fake cluster) every attempt fails, and the one failure says so."""
    env = fake_cluster(tmp_path)
    sbatch = tmp_path / 'fake' / 'bin' / 'sbatch'
    sbatch.write_text(SBATCH)
    sbatch.chmod(0o755)
    (tmp_path / 'locks').mkdir()
    before = hashes(PROJECT + '/reference_data')
    proc = subprocess.run(
        [tool('clusterbench'), 'site', 'init', '--system', 'newsite',
         '--out', str(tmp_path / 'out')],
        capture_output=True, text=True, cwd=tmp_path, timeout=900,
        env={
            **os.environ, **env,
            'RFM_SQLITE_DB_FILE': str(tmp_path / 'results.db'),
            'CLUSTERBENCH_LOCK_DIR': str(tmp_path / 'locks'),
        },
    )  # fmt: skip
    output = proc.stdout + proc.stderr
    assert 'Traceback' not in output
    assert proc.returncode == 1, output
    (command,) = [line for line in output.splitlines() if line.startswith('$ ')]
    assert ' --max-retries 2 ' in command
    # The CG solver's build fixture, and the check that waited for it.
    assert 'Retrying 2 failed check(s) (retry 1/2)' in output
    failures = output.split('\nFailures:\n')[1].split('\n\n')[0]
    assert re.fullmatch(
        r'  CGSolverCheck on newsite:compute with gnu-openmpi: FAILED '
        r'\(compile_wait\): CGSolverSources failed: build error: .+ '
        r'\(3 attempts, each failed\)',
        ' '.join(failures.split('\n      ')),
    ), failures
    assert '\n0 pass, 0 no reference, 1 FAILED\n' in output + '\n'
    assert hashes(PROJECT + '/reference_data') == before


def test_70_replay_takes_the_retry_that_passed(tmp_path, fixtures_dir):
    """A stored session whose HPCC run timed out, then passed in its retry:
    replay judges the retry's output, and the timeout is no failure."""
    directory = tmp_path / 'session'
    (directory / 'out').mkdir(parents=True)
    shutil.copy(
        os.path.join(fixtures_dir, 'hpcc', 'hpccoutf.N2000.1x2.txt'),
        directory / 'out' / 'hpccoutf.txt',
    )
    case = {
        'name': 'HPCCCheck', 'display_name': 'HPCCCheck',
        'unique_name': 'HPCCCheck', 'system': 'local', 'partition': 'default',
        'environ': 'gnu-openmpi', 'fixture': False, 'num_tasks': 2,
        'reference_file': 'hpcc.yaml',
    }  # fmt: skip
    timed_out = {
        **case, 'result': 'fail', 'fail_phase': 'run', 'run_index': 0,
        'fail_reason': 'job error: [jobid=7] job timed out (301.2s > 300.0s)',
    }  # fmt: skip
    passed = {**case, 'result': 'pass', 'run_index': 1, 'outputdir': 'out'}
    report = directory / 'report.json'
    report.write_text(
        json.dumps({
            'session_info': {
                'uuid': 'u1', 'num_cases': 1,
                'cmdline': 'reframe -c reframe_checks --max-retries=1 -r',
            },
            'runs': [
                {'run_index': 0, 'testcases': [timed_out]},
                {'run_index': 1, 'testcases': [passed]},
            ],
        })
    )  # fmt: skip
    refs = tmp_path / 'refs'
    refs.mkdir()
    before = hashes(directory, refs)
    result = subprocess.run(
        [tool('clusterbench'), 'replay', '--format', 'csv', str(directory),
         '--references', str(refs)],
        capture_output=True, text=True, cwd=PROJECT, timeout=300,
    )  # fmt: skip
    assert 'Traceback' not in result.stdout + result.stderr
    assert result.returncode == 0, result.stdout + result.stderr
    verdicts = {
        row['variable']: row['verdict']
        for row in csv.DictReader(io.StringIO(result.stdout))
    }
    assert verdicts['hpl'] == 'no reference (retried after TIMEOUT)'
    assert not [v for v in verdicts.values() if v.startswith('FAILED')], verdicts
    assert hashes(directory, refs) == before


@pytest.mark.parametrize(
    'cmdline, expected',
    [
        ('reframe -c x --max-retries 2 -r', 2),
        ('reframe -c x --max-retries=1 -r', 1),
        ('reframe -c x --max-r 3 -r', 3),  # argparse takes a unique prefix
        ('reframe -c x --max-retries 1 --max-retries 0 -r', 0),
        ('reframe -c x --reruns 2 -r', 0),
        ('reframe -c x --maxfail 2 -r', 0),
        ('reframe -c x -- --max-retries 2', 0),
        ('reframe -c x --max-retries', 0),
        ('reframe -c x --max-retries 99999999999 -r', 1000),
        ("reframe -c 'x --max-retries 2", 0),  # not a shell line
        (None, 0),
        (['--max-retries', '1'], 0),
    ],
)
def test_70_the_retries_are_read_from_the_command_line(cmdline, expected):
    assert retries.max_retries({'cmdline': cmdline}) == expected
