"""`make test`'s two phases (scripts/test.sh): the quiet files alone, then the
rest on workers; its exit code is the worse of the two, and a selection that
leaves both phases empty is not a pass."""

import os
import subprocess

import pytest
from conftest import PROJECT

SCRIPT = os.path.join(PROJECT, 'scripts', 'test.sh')
#: One quick test file with no `alone` mark.
QUICK = 'tests/site/test_jobstate.py'


def make_test(addopts, workers='0'):
    env = {k: v for k, v in os.environ.items() if not k.startswith(('PYTEST_', 'COV_'))}
    env['PYTEST_ADDOPTS'] = addopts
    return subprocess.run(
        [SCRIPT, workers], cwd=PROJECT, env=env, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip


def test_the_quiet_files_run_first_and_apart():
    done = make_test('-k "quiet_run or jobstate" --collect-only')
    assert done.returncode == 0, done.stdout + done.stderr
    first, second = done.stdout.split('tests collected', 1)
    assert (
        'tests/noisyhost/test_quiet_run.py::' in first and 'test_jobstate' not in first
    )
    assert 'tests/site/test_jobstate.py::' in second and 'quiet_run' not in second


@pytest.mark.parametrize('workers', ['0', '2'])
def test_a_selection_passes_where_only_one_phase_has_tests(workers):
    done = make_test(f'-k "jobstate and node_lost" {QUICK}', workers)
    assert done.returncode == 0, done.stdout + done.stderr
    assert '1 passed' in done.stdout


def test_a_selection_of_nothing_is_not_a_pass():
    done = make_test('-k no_test_is_called_this')
    assert done.returncode == 5, done.stdout + done.stderr


def test_a_failing_phase_fails_make_test():
    done = make_test('--no-such-pytest-option')
    assert done.returncode not in (0, 5), done.stdout + done.stderr
    assert 'no-such-pytest-option' in done.stderr
