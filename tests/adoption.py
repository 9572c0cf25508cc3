"""A centre's first week, as an unprivileged user: the helpers of
tests/cli/test_adoption_e2e.py (docs/adoption.md is the walkthrough it follows).

The test runs as root (the test cluster needs it); each step of the centre
runs as the user ``nobody`` through ``runuser``, with a clean environment:
its own HOME, and a PATH of the shared venv and the system's directories.
The shared venv is made by root with Debian's own Python (the project's
Python may live where only root can read it) and holds only the wheel;
clusterbench's dependencies (ReFrame, PyYAML, ...) come from the project's
venv through a .pth file, so that the test needs no network.
"""

import os
import pwd
import shutil
import subprocess
import sysconfig

from conftest import PROJECT

USER = 'nobody'
#: Debian's Python: every user can run it (python3-venv gives it venv).
SYSTEM_PYTHON = '/usr/bin/python3'
SYSTEM_PATH = '/usr/local/bin:/usr/bin:/bin'


def unavailable():
    """Why the walkthrough cannot run here, or None."""
    if os.geteuid() != 0:
        return 'needs root: the test cluster, and runuser to become another user'
    if not shutil.which('runuser'):
        return 'runuser not found'
    try:
        pwd.getpwnam(USER)
    except KeyError:
        return f'no user {USER!r}'
    if not os.access(SYSTEM_PYTHON, os.X_OK):
        return f'{SYSTEM_PYTHON} not found'
    deps = sysconfig.get_path('purelib')
    probe = subprocess.run(
        ['runuser', '-u', USER, '--', 'test', '-r', os.path.join(deps, 'reframe')],
        check=False,
    )
    if probe.returncode != 0:
        return f'{deps} (ReFrame and the other dependencies) is not readable by {USER}'
    return None


def world_readable_dir(path):
    os.makedirs(path, exist_ok=True)
    os.chmod(path, 0o755)
    return path


def owned_by_user(path):
    """*path* (a directory, made if needed), the user's."""
    os.makedirs(path, exist_ok=True)
    entry = pwd.getpwnam(USER)
    for root, dirs, files in os.walk(path):
        for name in [root, *(os.path.join(root, n) for n in dirs + files)]:
            os.lchown(name, entry.pw_uid, entry.pw_gid)
    return path


def copy_checkout(dest):
    """The checkout as a centre would get it: sources, no build outputs,
    no venv, no results."""
    anywhere = shutil.ignore_patterns(
        '.git', '.venv', 'build', 'dist', '*.egg-info', '__pycache__', '.*_cache'
    )

    def ignore(directory, names):
        top = {'results'} & set(names) if directory == PROJECT else set()
        return anywhere(directory, names) | top

    shutil.copytree(PROJECT, dest, ignore=ignore)
    return dest


def shared_venv(path, wheel):
    """A venv (root's, so read-only to the user) with only *wheel* in it."""
    subprocess.run(
        [SYSTEM_PYTHON, '-m', 'venv', '--without-pip', path], check=True, timeout=120
    )
    python = os.path.join(path, 'bin', 'python')
    install = subprocess.run(
        [SYSTEM_PYTHON, '-m', 'pip', '--python', python, 'install', '-q']
        + ['--no-deps', '--no-index', wheel],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert install.returncode == 0, install.stderr
    site = subprocess.run(
        [python, '-c', 'import sysconfig; print(sysconfig.get_path("purelib"))'],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.strip()
    with open(os.path.join(site, 'project-venv-deps.pth'), 'w') as f:
        f.write(sysconfig.get_path('purelib') + '\n')
    # What pip writes for ReFrame's console script.
    reframe = os.path.join(path, 'bin', 'reframe')
    with open(reframe, 'w') as f:
        f.write(
            f'#!{python}\nimport sys\nfrom reframe.frontend.cli import main\n'
            'sys.exit(main())\n'
        )
    os.chmod(reframe, 0o755)
    return path


def as_user(cmd, cwd, home, path=SYSTEM_PATH, env=None, timeout=1800):
    """*cmd* run as the user from *cwd*, in a clean environment (HOME, PATH
    and *env* only): the completed process, output as text."""
    # PWD as the user's shell sets it (where plain ReFrame keeps history).
    clean = {'HOME': home, 'PATH': path, 'LANG': 'C.UTF-8', 'PWD': str(cwd)}
    clean.update(env or {})
    return subprocess.run(
        ['runuser', '-u', USER, '--', 'env', '-i']
        + [f'{k}={v}' for k, v in clean.items()]
        + [str(c) for c in cmd],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        check=False,
    )


def tree(path):
    """Every file under *path*, relative."""
    return sorted(
        os.path.relpath(os.path.join(root, name), path)
        for root, _, files in os.walk(path)
        for name in files
    )
