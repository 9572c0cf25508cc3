"""`clusterbench run` sessions: what they are asked for, and one at a time a node.

Real `clusterbench run` processes on ``local``: a name that is not a system
is refused before anything is created, a selection that matches nothing is
named, and two concurrent sessions on this node do not measure at once.
"""

import contextlib
import json
import os
import signal
import subprocess
import time

import pytest
from conftest import PROJECT
from rfm import tool

from clusterbench.core.errors import ClusterbenchError
from clusterbench.judging import selection

#: One quick test: the CG solver, class S, one rank.
ONE_CG = [
    '-n', 'CGSolverCheck%stencil=7%variant=classic%ranks_per_node=1$',
    '-p', 'gnu-openmpi', '-S', 'problem_class=S',
]  # fmt: skip


def start(tmp_path, *args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=None):
    """A `clusterbench run` process with its own results, database and lock dir."""
    env = {
        **os.environ,
        'RFM_SQLITE_DB_FILE': str(tmp_path / 'results.db'),
        'CLUSTERBENCH_LOCK_DIR': str(tmp_path / 'locks'),
        **(env or {}),
    }
    (tmp_path / 'locks').mkdir(exist_ok=True)
    return subprocess.Popen(
        [tool('clusterbench'), 'run', *args],
        cwd=PROJECT,
        env=env,
        stdout=stdout,
        stderr=stderr,
        text=True,
        preexec_fn=_ctrl_c_as_in_a_terminal,
    )


def _ctrl_c_as_in_a_terminal():
    # A test suite started in the background (`make test &`, nohup) inherits
    # SIGINT ignored, and so would the run: a Ctrl-C test would wait forever.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run(tmp_path, *args):
    proc = start(tmp_path, *args)
    out, err = proc.communicate(timeout=600)
    return proc.returncode, out, err


@pytest.mark.parametrize(
    'name', ['a;touch X', 'a/b', 'a b', '../up', 'local:de fault', '$(id)', '']
)
def test_a_system_name_that_is_not_one_is_refused_before_anything_is_made(
    tmp_path, name
):
    results = tmp_path / 'results'
    rc, out, err = run(tmp_path, '--system', name, '--results', str(results))
    assert rc == 2
    assert 'Traceback' not in out + err
    assert err.strip().splitlines() == [
        f'clusterbench: error: --system {name!r}: not a system name (name or '
        f'name:partition; letters, digits, _ and - only)'
    ]
    assert not results.exists()
    assert not os.path.exists(os.path.join(PROJECT, 'X'))


def test_system_names_ok():
    for name in ('local', 'local:default', 'box', 'my-site_2:gpu-a100'):
        assert selection.check_system_name(name) == name
    with pytest.raises(ClusterbenchError):
        selection.check_system_name('local:default:more')


def test_selection_options_are_read_as_reframe_reads_them():
    assert selection.selecting_options(
        ['-p', 'gnu', '--name=HPCC', '-S', 'x=1', '-tfoo', '--exec-policy=serial']
    ) == [('-p', 'gnu'), ('-n', 'HPCC'), ('-t', 'foo')]


@pytest.mark.integration
@pytest.mark.parametrize(
    'option, line',
    [
        (['-n', 'NoSuchCheck'], '-n NoSuchCheck: selected no test on local'),
    ],
)
def test_a_selection_that_matches_nothing_is_named(tmp_path, option, line):
    rc, out, err = run(
        tmp_path, '--results', str(tmp_path / 'results'),
        '--checks', 'reframe_checks/cgsolver.py', '--', *option,
    )  # fmt: skip
    assert rc == 2, out + err
    (last,) = err.strip().splitlines()[-1:]
    assert last.startswith(f'clusterbench: error: {line}'), err
    assert 'see its error above' not in err


def wait_for(predicate, what, timeout=300):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f'timed out waiting for {what}'
        time.sleep(0.1)


def report_of(results):
    (path,) = [
        os.path.join(root, 'report.json')
        for root, _, files in os.walk(results)
        if 'report.json' in files
    ]
    with open(path) as f:
        return json.load(f)


@contextlib.contextmanager
def stopped_session(tmp_path, results, **streams):
    """A first `clusterbench run` session, stopped (SIGSTOP) once it holds the
    node lock: (process, lock file); continued on leaving."""
    lock_file = tmp_path / 'locks' / f'clusterbench-run-{os.uname().nodename}.lock'
    first = start(tmp_path, '--results', str(results), '--', *ONE_CG, **streams)
    try:
        wait_for(
            lambda: lock_file.exists() and 'session' in lock_file.read_text(),
            'the first session to take the lock',
        )
        # Hold the first session (its ReFrame finishes, it keeps the lock)
        # while the others try.
        os.kill(first.pid, signal.SIGSTOP)
        yield first, lock_file
    finally:
        os.kill(first.pid, signal.SIGCONT)


@pytest.mark.integration
def test_two_sessions_on_one_node_take_turns(tmp_path):
    first_dir, second_dir = tmp_path / 'first', tmp_path / 'second'
    # (--no-wait, refused: tests/references/test_bad_inputs.py, class 13.)
    with (
        open(tmp_path / 'first.out', 'w') as out_file,
        stopped_session(
            tmp_path, first_dir, stdout=out_file, stderr=subprocess.STDOUT
        ) as (first, lock_file),
    ):
        # (Its first line; the second names the ReFrame the session runs.)
        holder = lock_file.read_text().splitlines()[0]
        assert holder.startswith(f'pid {first.pid}, session {first_dir}')
        log = tmp_path / 'second.err'
        with open(log, 'w') as err_file:
            second = start(
                tmp_path, '--results', str(second_dir), '--', *ONE_CG,
                stderr=err_file,
            )  # fmt: skip
        wait_for(lambda: 'waiting for the session' in log.read_text(), 'waiting')
        assert f'({holder}; lock {lock_file})' in log.read_text()
        time.sleep(2)
        assert second.poll() is None  # still waiting: nothing measured
        assert not second_dir.exists()
    first.wait(timeout=600)
    assert first.returncode == 0, (tmp_path / 'first.out').read_text()
    out, _ = second.communicate(timeout=600)
    assert second.returncode == 0, out + log.read_text()
    # The second session's ReFrame started after the first one's had ended.
    one, two = report_of(first_dir), report_of(second_dir)
    for report in (one, two):
        (case,) = [c for c in report['runs'][0]['testcases'] if not c['fixture']]
        assert case['result'] == 'pass', case['fail_reason']
    assert (
        two['session_info']['time_start_unix'] >= one['session_info']['time_end_unix']
    )
    assert lock_file.read_text() == ''  # released, nobody holds it
