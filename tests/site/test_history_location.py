"""Where the history goes (issue 30, finding 2): ReFrame's results database
and the perflogs go under the results root, the directory the command was
started in when no checkout holds the config; never beside the config (ReFrame
imports a config from inside its directory); and a session whose history
could not be stored fails, where ReFrame only warns and exits 0.

Real ReFrame runs of the tiny CG configuration on `local`. (As an
unprivileged user from an installed wheel, with a read-only location:
tests/cli/test_adoption_e2e.py.)
"""

import shutil

from conftest import PROJECT
from rfm import TINY_CG, captured, tool

QUIET = ('-S', 'judge_conditions=false', '-S', 'probe_host=false')


def test_plain_reframe_keeps_the_history_in_the_launch_directory(tmp_path):
    # The site configs outside any checkout, as a wheel or a centre has them.
    configs = tmp_path / 'installed' / 'site_configs'
    shutil.copytree(f'{PROJECT}/site_configs', configs)
    launch = tmp_path / 'launch'
    launch.mkdir()
    proc = captured(
        [tool('reframe'), '-C', configs / 'local.py', '-c']
        + [f'{PROJECT}/reframe_checks/cgsolver.py', *TINY_CG, *QUIET]
        + ['--prefix', tmp_path / 'stage', '--nocolor', '-r'],
        cwd=launch,
        env={
            'RFM_SQLITE_DB_FILE': None,
            'CLUSTERBENCH_PERFLOGDIR': None,
            'CLUSTERBENCH_RESULTS': None,
            'RFM_REFERENCE_PREFIX': str(tmp_path / 'no-references'),
        },
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert 'Current session stored with UUID' in proc.stdout
    assert (launch / 'results' / 'results.db').is_file()
    assert list((launch / 'results' / 'perflogs' / 'local' / 'default').glob('*.log'))
    # Nothing beside the config.
    assert sorted(p.name for p in configs.parent.iterdir()) == ['site_configs']
    assert not (configs / 'results').exists()


def test_a_session_whose_history_is_not_stored_fails(tmp_path):
    # A database where none can be made (under a file), whoever runs it.
    blocker = tmp_path / 'a-file'
    blocker.write_text('')
    (tmp_path / 'no-references').mkdir()
    proc = captured(
        [tool('clusterbench'), 'run', '--results', tmp_path / 'results', '--']
        + [*TINY_CG, *QUIET],
        env={
            'RFM_SQLITE_DB_FILE': str(blocker / 'results.db'),
            'CLUSTERBENCH_PERFLOGDIR': str(tmp_path / 'perflogs'),
            'CLUSTERBENCH_LOCK_DIR': str(tmp_path),
            'RFM_REFERENCE_PREFIX': str(tmp_path / 'no-references'),
        },
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (line,) = [
        line
        for line in proc.stdout.splitlines()
        if line.startswith('not stored in the results database: ')
    ]
    assert str(blocker) in line, line


def test_plain_reframe_refuses_to_run_where_its_history_cannot_go(tmp_path):
    """ReFrame would only warn and lose the session: each judged test fails
    at setup with the one line naming the place; listing still works."""
    blocker = tmp_path / 'a-file'
    blocker.write_text('')
    cmd = [tool('reframe'), '-C', f'{PROJECT}/site_configs/local.py', '-c']
    cmd += [f'{PROJECT}/reframe_checks/cgsolver.py', *TINY_CG, *QUIET]
    cmd += ['--prefix', tmp_path / 'stage', '--nocolor']
    env = {
        'RFM_SQLITE_DB_FILE': str(blocker / 'results.db'),
        'CLUSTERBENCH_PERFLOGDIR': str(tmp_path / 'perflogs'),
        'RFM_REFERENCE_PREFIX': str(tmp_path / 'no-references'),
    }
    listed = captured([*cmd, '-l'], env=env)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert 'CGSolverCheck' in listed.stdout
    ran = captured([*cmd, '-r'], env=env)
    assert ran.returncode != 0, ran.stdout + ran.stderr
    why = f'{blocker}: not a directory: the results database and perflogs go'
    assert why in ran.stdout, ran.stdout
