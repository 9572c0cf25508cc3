"""`clusterbench run` fails when ReFrame did not load a check, where plain
ReFrame warns and exits 0 (issue 20, item 2)."""

import os
import re
import shutil
import subprocess

import pytest
from conftest import PROJECT
from rfm import tool

pytestmark = pytest.mark.integration

TINY = ('-n', '^HPCCCheck$', '-S', 'hpl_n=960', '-S', 'hpl_nb=96')

NO_IMPORT = 'import reframe as rfm\nimport nosuchmodule_xyz\n'
RAISES_AT_INIT = """\
import reframe as rfm
from reframe.core.builtins import run_after


@rfm.simple_test
class BrokenAtInit(rfm.RunOnlyRegressionTest):
    valid_systems = ['*']
    valid_prog_environs = ['*']
    executable = 'true'

    @run_after('init')
    def _fail(self):
        raise ValueError('cannot be built')
"""


def checks(tmp_path, **files):
    directory = tmp_path / 'checks'
    directory.mkdir()
    shutil.copy(os.path.join(PROJECT, 'reframe_checks', 'hpcc.py'), directory)
    for name, text in files.items():
        (directory / f'{name}.py').write_text(text)
    return directory


def run(tmp_path, directory, program='clusterbench'):
    if program == 'clusterbench':
        cmd = [
            tool('clusterbench'),
            'run',
            '--checks',
            str(directory),
            '--results',
            str(tmp_path / 'results'),
            '--',
            *TINY,
        ]
    else:
        cmd = [
            tool('reframe'),
            '-C',
            'site_configs/local.py',
            '-c',
            str(directory),
            '--prefix',
            str(tmp_path / 'plain'),
            '--nocolor',
            *TINY,
            '-r',
        ]
    (tmp_path / 'locks').mkdir(exist_ok=True)
    env = {
        **os.environ,
        'RFM_SQLITE_DB_FILE': str(tmp_path / 'results.db'),
        # A lock of the test's own: another session on this host is not this test's.
        'CLUSTERBENCH_LOCK_DIR': str(tmp_path / 'locks'),
    }
    return subprocess.run(
        cmd, capture_output=True, text=True, cwd=PROJECT, timeout=600, env=env
    )


def test_checks_that_did_not_load_are_counted_and_fail_the_session(tmp_path):
    directory = checks(tmp_path, noimport=NO_IMPORT, brokeninit=RAISES_AT_INIT)
    plain = run(tmp_path, directory, 'reframe')
    # What plain ReFrame does (docs/running.md says so): it warns, runs the rest and
    # exits 0.
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert plain.stdout.count('WARNING: skipping test') == 2

    result = run(tmp_path, directory)
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    # The test that loaded still ran and was judged (on a loaded machine its
    # figures may all be DISTURBED: one line for the check, no figure rows).
    assert re.search(r'^HPCCCheck: 1 test case[:,] ', result.stdout, re.M), (
        result.stdout
    )
    assert 'every row: partition local:default' in result.stdout, result.stdout
    # The session's summary (per-check lines start with the check's name).
    summary = next(line for line in lines if re.match(r'\d+ pass, ', line))
    assert summary.endswith(', 2 not loaded')
    not_loaded = [line for line in lines if line.startswith('not loaded: ')]
    assert not_loaded == [
        f"not loaded: '{directory}/noimport.py': module not found error: "
        f"No module named 'nosuchmodule_xyz' ({directory}/noimport.py:2)",
        "not loaded: 'BrokenAtInit': value error: cannot be built "
        f'({directory}/brokeninit.py:13)',
    ]


def test_a_check_file_with_a_syntax_error_is_one_line(tmp_path):
    directory = checks(tmp_path, broken='import reframe as rfm\nclass X(:\n    pass\n')
    result = run(tmp_path, directory)
    assert result.returncode == 2
    err = result.stderr.strip().splitlines()
    assert err == [
        'clusterbench: error: ReFrame stopped (exit 1): syntax error: invalid '
        'syntax (broken.py, line 2)'
    ]
