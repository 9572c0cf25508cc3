"""Without ../shared/fixtures the tests that need them skip, except under CI,
where the run is an error: a checkout without its data must not pass."""

import os
import shutil
import sys

from conftest import PROJECT, fixtures_required
from rfm import captured


def _checkout_without_fixtures(tmp_path):
    tests = tmp_path / 'project' / 'tests'
    tests.mkdir(parents=True)
    shutil.copy(os.path.join(PROJECT, 'tests', 'conftest.py'), tests)
    (tests / 'test_needs_data.py').write_text(
        'def test_reads_a_recorded_output(fixtures_dir):\n'
        '    assert fixtures_dir\n'
        '\n'
        'def test_needs_nothing():\n'
        '    assert True\n'
    )
    return tests


def _pytest(tests, ci):
    return captured(
        [sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', tests],
        cwd=tests,
        env={'CI': ci},  # None: not set
        timeout=120,
    )


def test_without_ci_a_missing_fixtures_directory_skips(tmp_path):
    run = _pytest(_checkout_without_fixtures(tmp_path), None)
    assert run.returncode == 0, run.stdout + run.stderr
    assert '1 passed, 1 skipped' in run.stdout


def test_under_ci_a_missing_fixtures_directory_is_an_error(tmp_path):
    tests = _checkout_without_fixtures(tmp_path)
    run = _pytest(tests, 'true')
    assert run.returncode != 0
    shared = os.path.join(str(tmp_path / 'project' / '..'), 'shared')
    assert 'recorded benchmark outputs not found at' in run.stderr
    assert 'CI=true' in run.stderr
    assert os.path.normpath(shared) in run.stderr
    assert 'passed' not in run.stdout


def test_ci_values():
    assert fixtures_required({'CI': 'true'})
    assert fixtures_required({'CI': 'True'})
    assert fixtures_required({'CI': '1'})
    assert not fixtures_required({})
    assert not fixtures_required({'CI': 'false'})
