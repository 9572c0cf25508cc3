"""The bad-input matrix, round 3 (issue 29): `clusterbench run` and its
results root.

As in tests/references/test_bad_inputs.py, each case drives the real `clusterbench run`
(and its real ReFrame) as a user would, and asserts the exact one-line
message, the exit code, and that no stored file changed.
"""

import contextlib
import fcntl
import glob
import json
import os
import signal
import sqlite3
import subprocess

import pytest
import rfm
from badinput import Store, assert_line, fake_tree, npb, programs_under
from test_run_session import ONE_CG, start, wait_for

from clusterbench.sessions import nodelock, reaper

pytestmark = pytest.mark.integration

#: The run's conditions are measured, not judged: a machine shared with
#: other work must not turn the figures these cases need DISTURBED.
QUIET = ('-S', 'judge_conditions=false', '-S', 'probe_host=false')


def running_below(pid, program):
    """The pid of *program* (its file name: reaper.py, reframe) among the
    descendants of *pid*, or None."""
    for child, _ in reaper.children(pid):
        try:
            with open(f'/proc/{child}/cmdline', 'rb') as f:
                argv = f.read().decode(errors='replace').split('\0')
        except OSError:
            continue
        if program in [os.path.basename(arg) for arg in argv[:3]]:
            return child
        below = running_below(child, program)
        if below:
            return below
    return None


def session_reframe(pid):
    """(keeper, ReFrame) of the `clusterbench run` process *pid*, once it
    runs ReFrame's session (its keeper: clusterbench.sessions.reaper). A
    ReFrame before the keeper is the listing of the session's selection
    (clusterbench.sessions.setvars), not the session."""
    found = []

    def running():
        keeper = running_below(pid, 'reaper.py')
        found.append((keeper, running_below(pid, 'reframe') if keeper else None))
        return found[-1][1]

    wait_for(running, f'the ReFrame of pid {pid}')
    return found[-1]


def npb_env(tmp_path):
    """The environment of a fake-tree NPB run (as badinput.Store.run's)."""
    return {
        'CLUSTERBENCH_CACHE': str(tmp_path / 'cache'),
        'CLUSTERBENCH_MIRROR': '',
        'CLUSTERBENCH_PERFLOGDIR': str(tmp_path / 'perflogs'),
    }


# --- 24. kill -9 of `clusterbench run` while its ReFrame measures -----------


@pytest.mark.parametrize(
    'sig, code', [(signal.SIGKILL, -signal.SIGKILL), (signal.SIGINT, 130)]
)
def test_24_kill_9_of_run_leaves_no_reframe_measuring_without_the_lock(
    tmp_path, sig, code
):
    """kill -9 of `clusterbench run`, or Ctrl-C (SIGINT) of it alone: its
    ReFrame ends, and holds the node until it has."""
    store = Store(tmp_path)
    first_dir = tmp_path / 'first'
    lock_file = tmp_path / 'locks' / f'clusterbench-run-{os.uname().nodename}.lock'
    # A benchmark that sleeps an hour: measuring until ReFrame ends it.
    tree = fake_tree(tmp_path, 'sleep(3600);')
    keeper = reframe = None
    with open(tmp_path / 'first.out', 'w') as log:
        first = start(
            tmp_path, '--checks', 'reframe_checks/npb.py',
            '--results', str(first_dir), '--references', str(store.refs),
            '--', *npb(tree=tree), stdout=log, stderr=subprocess.STDOUT,
            env=npb_env(tmp_path),
        )  # fmt: skip
    try:
        wait_for(lambda: programs_under(first_dir), 'the benchmark to run')
        keeper, reframe = session_reframe(first.pid)
        # Held still, ReFrame cannot end before the second session tries (the
        # SIGTERM its keeper passes on when the session dies waits for SIGCONT).
        os.kill(reframe, signal.SIGSTOP)
        os.kill(first.pid, sig)
        # Generous: a loaded machine (xdist, other jobs) slows the unwinding.
        assert first.wait(timeout=600) == code
        rc, out = store.run(*ONE_CG, options=('--no-wait',), checks='reframe_checks')
        assert rc == 2, out
        assert_line(
            out,
            f'clusterbench: error: {os.uname().nodename} is measuring for another '
            f'session (ReFrame pid {keeper} of session '
            f'{os.path.realpath(first_dir)}/local/{{STAMP}}, whose clusterbench pid '
            f'{first.pid} is gone; lock {lock_file}): run again when it ends, or '
            'without --no-wait to wait for it',
        )
        os.kill(reframe, signal.SIGCONT)
        # Its session gone, ReFrame ends (SIGTERM: it cancels its job), long
        # before the benchmark's hour, and its keeper ends the ranks that
        # outlive mpirun: nothing of the session goes on measuring.
        wait_for(lambda: not nodelock.running(keeper), 'the keeper to end')
        assert not nodelock.running(reframe)
        assert programs_under(first_dir) == []
        with open(lock_file) as f:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free again
    finally:
        for pid in (*programs_under(tmp_path), reframe, keeper):
            if pid:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
    store.assert_kept()


def test_24_processes_a_job_leaves_running_are_ended(tmp_path):
    store = Store(tmp_path)
    # Each rank leaves a process of its own session behind, as a rank that
    # outlives mpirun's kill is left: neither mpirun nor ReFrame ends it.
    tree = fake_tree(
        tmp_path,
        'if (fork() == 0) { setsid(); close(0); close(1); close(2); sleep(600); '
        '_exit(0); }',
    )
    try:
        rc, out = store.run(*npb(*QUIET, tree=tree))
        # Ended by ReFrame's keeper before the session went on.
        left = programs_under(tmp_path)
    finally:
        for pid in programs_under(tmp_path):
            os.kill(pid, signal.SIGKILL)
    assert rc == 0, out
    assert_line(
        out,
        'clusterbench: ended {NUM} process(es) that ReFrame left running: '
        'cg.S.x (pid {NUM}){ANY}',
    )
    assert left == []
    store.assert_kept(new_session=True)


# --- 25. a symlinked --results ----------------------------------------------


def _session_uuids(db):
    if not os.path.exists(db):
        return set()
    with sqlite3.connect(db) as conn:
        return {row[0] for row in conn.execute('SELECT uuid FROM sessions')}


def _lines(pattern):
    return {line for path in glob.glob(pattern) for line in open(path)}


def test_25_a_symlinked_results_root_keeps_every_figure_there(tmp_path):
    store = Store(tmp_path, results=tmp_path / 'real')
    link = tmp_path / 'link'
    link.symlink_to(store.results)
    empty = tmp_path / 'no-refs'
    empty.mkdir()
    (tmp_path / 'locks').mkdir()
    # Nothing moves ReFrame's database or perflogs but --results.
    ran = rfm.clusterbench(
        'run', '--results', str(link), '--references', str(empty),
        '--', *ONE_CG, *QUIET,
        env={'CLUSTERBENCH_LOCK_DIR': str(tmp_path / 'locks'),
             'RFM_SQLITE_DB_FILE': None, 'CLUSTERBENCH_PERFLOGDIR': None,
             'RFM_PERFLOG_DIR': None, 'CLUSTERBENCH_RESULTS': None},
    )  # fmt: skip
    out = ran.stdout + ran.stderr
    assert ran.returncode == 0, out[-3000:]
    assert 'Traceback' not in out
    (session,) = [p for p in (store.results / 'local').iterdir() if p != store.earlier]
    with open(session / 'report.json') as f:
        report = json.load(f)
    (case,) = [c for c in report['runs'][0]['testcases'] if not c['fixture']]
    assert case['result'] == 'pass', case['fail_reason']
    assert [v for v in case['perfvalues'].values() if v[0] is not None]
    uuid = report['session_info']['uuid']
    # The database and the perflogs are under the results root, not the
    # checkout's results/.
    assert uuid in _session_uuids(store.results / 'results.db')
    checkout = os.path.join(rfm.PROJECT, 'results')
    assert uuid not in _session_uuids(os.path.join(checkout, 'results.db'))
    perflog = '{}/perflogs/local/default/CGSolverCheck*.log'
    # (Less the header line, which names the fields.)
    ours = {
        line for line in _lines(perflog.format(store.results)) if '_value' not in line
    }
    assert ours, 'no perflog line under the results root'
    assert not ours & _lines(perflog.format(checkout))
    store.assert_kept(new_session=True)


# --- 28. --results on a read-only mount --------------------------------------


@pytest.mark.parametrize('where', ['results', 'new/results'])
def test_28_results_on_a_read_only_mount(small_disk, tmp_path, where):
    store = Store(tmp_path, results=small_disk / 'results')
    results = small_disk / where
    remount = ['mount', '-o', 'remount,ro', str(small_disk)]
    done = subprocess.run(remount, capture_output=True, text=True)
    if done.returncode:
        pytest.skip(f'cannot remount a tmpfs read-only: {done.stderr.strip()}')
    try:
        proc = start(
            tmp_path, '--results', str(results), '--references', str(store.refs),
            '--', *ONE_CG,
        )  # fmt: skip
        out, err = proc.communicate(timeout=600)
    finally:
        subprocess.run(['mount', '-o', 'remount,rw', str(small_disk)], check=True)
    assert proc.returncode == 2, out + err
    assert err.splitlines() == [
        f'clusterbench: error: {results}: not writable (read-only file system)'
    ]
    assert '$ reframe' not in out  # nothing ran
    assert not (small_disk / 'new').exists()
    store.assert_kept()


# --- 30. --confirm: more runs than it can make, runs that did not happen -----


def test_30_confirm_more_than_twenty_is_refused(tmp_path):
    store = Store(tmp_path)
    rc, out = store.run(
        *ONE_CG, options=('--confirm', '999999999999'), checks='reframe_checks'
    )
    assert rc == 2, out
    assert out.splitlines() == [
        'clusterbench: error: --confirm 999999999999: at most 20'
    ]
    store.assert_kept()


def test_30_a_confirmation_session_without_report_is_said(tmp_path):
    """A confirmation session that ends without a report (its ReFrame killed)
    ran nothing: the summary says so, not that the runs were made."""
    refs = tmp_path / 'outgrown'
    # References of a time no run makes: the first run is SLOWER.
    rfm.classic_cg_references(refs, time=[1e-9, -0.5, 0.5, 's'])
    store = Store(tmp_path, refs=refs)
    proc = start(
        tmp_path, '--results', str(store.results), '--references', str(refs),
        '--', *ONE_CG, *QUIET, stderr=subprocess.STDOUT,
    )  # fmt: skip
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if line.startswith('$ ') and '/confirm/' in line:
            os.kill(session_reframe(proc.pid)[1], signal.SIGKILL)
    rc = proc.wait(timeout=600)
    out = ''.join(lines)
    assert rc == 1, out[-3000:]
    session = f'{os.path.realpath(store.results)}/local/{{STAMP}}'
    assert_line(
        out,
        f'confirmation runs: {session}/confirm/local-default-gnu-openmpi/'
        'report.json: cannot read report: No such file or directory',
    )
    assert_line(
        out,
        'Confirmation: 1 figure(s) outside their references were run 0 more '
        'time(s) (2 asked; a confirmation session wrote no report, see above) '
        'and judged on the first run: 1 still fail, 0 did not hold',
    )
    store.assert_kept(new_session=True)
