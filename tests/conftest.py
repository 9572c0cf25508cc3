"""Shared test helpers: the recorded upstream outputs in ../shared/fixtures/.

A quarter of the tests read those outputs. Without them a test skips on a
developer's machine, but under CI (``CI=true``) the run stops with an error
at start: a checkout without its data must not pass with those tests gone.
"""

import contextlib
import fcntl
import os
import shutil
import subprocess
import tempfile

import pytest

PROJECT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(os.path.dirname(PROJECT), 'shared', 'fixtures')


def fixtures_required(environ=os.environ):
    """True under CI (``CI`` set to true, 1 or yes): missing data is an error."""
    return environ.get('CI', '').strip().lower() in ('true', '1', 'yes')


def missing_fixtures_message(path=FIXTURES):
    return f'recorded benchmark outputs not found at {path}'


def pytest_configure(config):
    """The test session's own node-lock directory: a `clusterbench run` a
    test starts never waits for another clusterbench session on this machine
    (a real run, another checkout's tests), nor one of them for it. Each
    xdist worker has its own. Tests of the lock itself set theirs."""
    locks = tempfile.mkdtemp(prefix='clusterbench-test-locks-')
    os.environ['CLUSTERBENCH_LOCK_DIR'] = locks
    config.add_cleanup(lambda: shutil.rmtree(locks, ignore_errors=True))


@pytest.fixture(scope='module', autouse=True)
def _alone_if_marked(request, tmp_path_factory):
    """Under xdist, a file marked ``alone`` (its claim needs a quiet machine)
    runs while no other file does; every other file shares the machine with
    the other workers' files."""
    if 'PYTEST_XDIST_WORKER' not in os.environ:
        yield
        return
    alone = request.node.get_closest_marker('alone') is not None
    # The run's base directory, above each worker's own.
    shared = tmp_path_factory.getbasetemp().parent
    with _turns(shared / 'alone.lock', exclusive=alone):
        yield


@pytest.fixture(autouse=True)
def _slurm_conf_as_it_was():
    """Loading site_configs/box.py in a test's own process while the test
    cluster is up sets ``SLURM_CONF`` there (for ReFrame's Slurm commands).
    It must not outlive the test: once the cluster is down, every srun that a
    later test's ReFrame starts waits a minute for that missing slurm.conf
    (a dry run of two Slurm partitions took 595 s instead of 8)."""
    before = os.environ.get('SLURM_CONF')
    yield
    if before is None:
        os.environ.pop('SLURM_CONF', None)
    else:
        os.environ['SLURM_CONF'] = before


@contextlib.contextmanager
def _turns(path, exclusive):
    """A shared or exclusive flock of *path*; a waiting exclusive one goes
    before any shared one asked for after it (a turnstile beside it)."""
    with open(f'{path}.turn', 'a') as turn, open(path, 'a') as lock:
        fcntl.flock(turn, fcntl.LOCK_EX)
        fcntl.flock(lock, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        if not exclusive:
            fcntl.flock(turn, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
            fcntl.flock(turn, fcntl.LOCK_UN)


def pytest_sessionstart(session):
    if fixtures_required() and not os.path.isdir(FIXTURES):
        raise pytest.UsageError(
            f'{missing_fixtures_message()} (CI=true: the tests need them; '
            f'check out the shared fixtures beside the project)'
        )


def require_fixtures(path=FIXTURES):
    """*path* if it exists; else skip the test, or fail it under CI."""
    if not os.path.isdir(path):
        if fixtures_required():
            pytest.fail(f'{missing_fixtures_message(path)} (CI=true)', pytrace=False)
        pytest.skip(missing_fixtures_message(path))
    return path


@pytest.fixture(scope='session')
def fixtures_dir():
    return require_fixtures()


def read(path):
    with open(path) as f:
        return f.read()


@pytest.fixture
def small_disk(tmp_path):
    """A 1 MiB tmpfs of our own, unmounted afterwards."""
    if os.geteuid() != 0:
        pytest.skip('mounting a tmpfs needs root')
    mount = tmp_path / 'small'
    mount.mkdir()
    done = subprocess.run(
        ['mount', '-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', str(mount)],
        capture_output=True,
        text=True,
    )
    if done.returncode:
        pytest.skip(f'cannot mount a tmpfs here: {done.stderr.strip()}')
    try:
        yield mount
    finally:
        subprocess.run(['umount', str(mount)], check=True)


def fill(mount, leave):
    """Fill *mount* until *leave* bytes are free."""
    with open(mount / 'filler', 'wb') as f:
        while True:
            free = os.statvfs(mount).f_bavail * os.statvfs(mount).f_frsize
            if free <= leave:
                break
            try:
                f.write(b'\0' * min(65536, free - leave))
                f.flush()
            except OSError:
                break
