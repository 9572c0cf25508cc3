"""Helpers for tests that run on the test cluster (used by tests/test_*.py).

:func:`unavailable` says why the cluster cannot run here (the tests skip with
that reason); :func:`cluster` brings one up and *always* tears it down, then
checks that nothing is left; :func:`reframe` runs ReFrame on ``box`` through
:func:`run_reframe`, which the tests on ``local`` use too.
"""

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import time

from clusterbench.testcluster import cluster, teardown

PROJECT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BOX_CONFIG = os.path.join(PROJECT, 'site_configs', 'box.py')
#: ReFrame's slurm backend polls sacct: at least once a second, at most 5 times.
POLL_ENV = {'RFM_POLL_RATE_MIN': '1', 'RFM_POLL_RATE_MAX': '5'}
#: One test cluster per machine at a time, whatever the checkout. Not
#: the lock of the run directory (``<run_dir>.lock``) of cluster.py and
#: teardown.py, which up() and down() take while this one is held: one file
#: for both deadlocked.
MACHINE_LOCK = '/run/clusterbench-box-tests.lock'


def unavailable(run_dir=cluster.DEFAULT_RUN_DIR):
    """Why the test cluster cannot be brought up here, or ``None``."""
    if os.geteuid() != 0:
        return 'the test cluster needs root (network namespaces, daemons)'
    missing = sorted(
        {pkg for prog, pkg in cluster.PROGRAMS.items() if not shutil.which(prog)}
    )
    if missing:
        return (
            f'the test cluster needs Debian packages {" ".join(missing)} '
            f'(apt-get install {cluster.DEBIAN_PACKAGES})'
        )
    if not os.path.isdir('/proc/self/ns') or not os.path.exists('/proc/self/ns/net'):
        return 'no network namespaces on this kernel'
    if _held_by_another_test_session():
        return None  # cluster_up waits for it
    state = cluster.State.load(run_dir)
    if state is not None and _anything_alive(state):
        return (
            f'a test cluster is already up in {run_dir} (not started by the '
            f'tests): the tests leave it alone'
        )
    return None


def _held_by_another_test_session(path=MACHINE_LOCK):
    with open(path, 'a') as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(lock, fcntl.LOCK_UN)
    return False


def _anything_alive(state):
    procs = list(state.get('daemons', {}).values())
    procs += [n['slurmd'] for n in state.nodes() if n.get('slurmd')]
    return any(cluster.alive(p) for p in procs)


@contextlib.contextmanager
def cluster_up(nodes=2, run_dir=cluster.DEFAULT_RUN_DIR):
    """A running cluster of *nodes* nodes for the body; torn down after it,
    whatever happens, and checked to leave nothing behind (AssertionError).

    Test sessions on one machine (two checkouts, CI beside a developer) take
    turns: the cluster's run directory, bridge and namespaces are per machine.
    """
    with _machine_lock():
        yield from _cluster_up(nodes, run_dir)


@contextlib.contextmanager
def _machine_lock(path=MACHINE_LOCK):
    with open(path, 'a') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _cluster_up(nodes, run_dir):
    stale = cluster.State.load(run_dir)
    if stale is not None:
        # Recorded but dead: an earlier run was killed before its teardown.
        teardown.down(run_dir)
    t0 = time.monotonic()
    try:
        state = cluster.up(nodes, run_dir)
        state['test_up_seconds'] = round(time.monotonic() - t0, 2)
        yield state
    finally:
        recorded = cluster.State.load(run_dir)
        pids = []
        if recorded is not None:
            pids = [p for p in recorded.get('daemons', {}).values()]
            pids += [n['slurmd'] for n in recorded.nodes() if n.get('slurmd')]
        seconds, leftovers = teardown.down(run_dir)
        still = [p['pid'] for p in pids if cluster.alive(p)]
        assert not leftovers, f'teardown left: {leftovers}'
        assert not still, f'teardown left processes {still}'
        down_seconds.append(seconds)


#: Teardown times of this test session (seconds), for the record.
down_seconds = []


def run_reframe(config, prefix, *args, checks=(), env=None, timeout=900):
    """``reframe -C config -c CHECK... -r`` into *prefix*, from the project root.

    *env* is added to this process's environment. Returns (exit code, output,
    report or None). The one ReFrame runner of the project's tests.
    """
    os.makedirs(prefix, exist_ok=True)
    report = os.path.join(prefix, 'report.json')
    cmd = [
        os.path.join(os.path.dirname(sys.executable), 'reframe'),
        '-C',
        config,
        *[a for c in checks for a in ('-c', os.path.join(PROJECT, c))],
        '--prefix',
        str(prefix),
        '--report-file',
        report,
        '--nocolor',
        *args,
        '-r',
    ]
    proc = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        cwd=PROJECT,
        env={**os.environ, **(env or {})},
        timeout=timeout,
        check=False,
    )
    data = None
    if os.path.exists(report):
        with open(report) as f:
            data = json.load(f)
    return proc.returncode, proc.stdout + proc.stderr, data


def reframe(prefix, *args, checks=(), env=None, timeout=900, state=None):
    """Run ReFrame on ``box`` into *prefix*: (exit code, output, report or None)."""
    env = {
        **POLL_ENV,
        'RFM_SQLITE_DB_FILE': os.path.join(prefix, 'results.db'),
        **({'SLURM_CONF': state.slurm_conf} if state is not None else {}),
        **(env or {}),
    }
    return run_reframe(
        BOX_CONFIG, prefix, *args, checks=checks, env=env, timeout=timeout
    )


def acceptance(*args, state=None, db=None, timeout=900):
    """``python -m clusterbench.cli.acceptance ARGS``: the completed process.

    *db*: ReFrame's results database for sessions it runs (not the project's).
    """
    env = {**os.environ, **POLL_ENV}
    if db:
        env['RFM_SQLITE_DB_FILE'] = db
    if state is not None:
        env['SLURM_CONF'] = state.slurm_conf
    return subprocess.run(
        [sys.executable, '-m', 'clusterbench.cli.acceptance', *args],
        capture_output=True,
        text=True,
        cwd=PROJECT,
        env=env,
        timeout=timeout,
        check=False,
    )
