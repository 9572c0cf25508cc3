"""The Python the package promises is the Python its code needs (issue 42):
vermin reads every module of the package, its checks, site configs, tests
and evaluation scripts, and finds nothing newer than `requires-python`."""

import os
import re
import subprocess
import tomllib

from conftest import PROJECT
from rfm import tool

TREES = ('clusterbench', 'reframe_checks', 'site_configs', 'tests', 'evaluation')


def promised():
    with open(os.path.join(PROJECT, 'pyproject.toml'), 'rb') as f:
        spec = tomllib.load(f)['project']['requires-python']
    (version,) = re.fullmatch(r'>=(3\.\d+)', spec).groups()
    return version


def vermin(target, *trees):
    return subprocess.run(
        [tool('vermin'), '--no-tips', '--eval-annotations', '--violations']
        + [f'-t={target}-', *trees],
        capture_output=True,
        text=True,
        cwd=PROJECT,
        timeout=600,
        check=False,
    )


def test_nothing_needs_a_newer_python_than_promised():
    found = vermin(promised(), *TREES)
    assert found.returncode == 0, found.stdout[-3000:] + found.stderr


def test_the_promise_is_no_lower_than_the_code_needs():
    # One minor version lower fails: the promise is the minimum, not a guess.
    major, minor = promised().split('.')
    lower = vermin(f'{major}.{int(minor) - 1}', 'clusterbench')
    assert lower.returncode != 0, lower.stdout[-2000:]
    assert 'Target versions not met' in lower.stdout


def test_ruff_lints_for_the_promised_python():
    with open(os.path.join(PROJECT, 'pyproject.toml'), 'rb') as f:
        ruff = tomllib.load(f)['tool']['ruff']
    assert ruff['target-version'] == 'py' + promised().replace('.', '')
