"""Confirmation runs: a figure outside its reference in one run is run again
before it fails the session; a burst does not hold, a slowdown does.

The burst is real: the first run's job (its `mpirun` and the ranks) runs in
a cgroup with 2 % of a CPU (2 ms per 100 ms), so that its solve (~20-30 ms
of CPU) waits out ten periods or more, a second or longer; the cap is
lifted when the confirmation session starts. Nothing here asks for a quiet
machine: the references are a solve measured just before, in the
conditions the confirmation runs meet (a machine loaded by other work slows
both), with a band up to five times that solve, and only the capped job is
slowed by the cap (ReFrame, the build and clusterbench run at full speed,
so the cap can be strong). The persistent slowdown is a machine four times slower than
its references (the same runs, references of a quarter of their time), so
that it costs no capped minutes.
"""

import glob
import json
import os
import subprocess
import threading
import time

import pytest
import rfm
import verdicttable

from clusterbench.noisyhost import confirm
from clusterbench.sessions import reaper

pytestmark = [pytest.mark.integration, pytest.mark.alone]

#: A ~20-30 ms solve (class W): far longer than the cap's quota, short enough
#: for a test.
SELECT = (
    '-n', 'CGSolverCheck%stencil=7%variant=classic%ranks_per_node=1',
    '-p', 'gnu-openmpi',
    '-S', 'problem_class=W',
    '-S', 'judge_conditions=false',
    '-S', 'probe_host=false',
)  # fmt: skip
#: The one check file the sessions need.
CHECKS = 'reframe_checks/cgsolver.py'
SUMMARY = (
    'Confirmation: 1 figure(s) outside their references were run 2 more '
    'time(s) and judged on all runs: '
)


def test_selection_options_are_replaced_and_the_rest_kept():
    extra = ['--exec-policy=serial', '-n', 'CG', '--name=HPCC', '-nX', '-S', 'a=1',
             '--repeat', '3', '--reruns=2', '-p', 'gnu']  # fmt: skip
    assert confirm.without_selection(extra) == [
        '--exec-policy=serial', '-S', 'a=1', '-p', 'gnu'
    ]  # fmt: skip
    assert confirm.session_args(extra, ['ab12', 'cd34'], 'gnu-mpich', 2) == [
        '--exec-policy=serial', '-S', 'a=1', '-p', 'gnu',
        '-n', '/ab12', '-n', '/cd34', '-p', '^gnu\\-mpich$', '--repeat', '2',
    ]  # fmt: skip
    assert confirm.unsupported(['--distribute=idle'])
    assert not confirm.unsupported(extra)


def test_a_negative_number_of_runs_is_refused_in_one_line():
    ran = rfm.clusterbench('run', '--confirm', '-1', '--', *SELECT)
    assert ran.returncode == 2
    assert "--confirm: a number of runs, 0 or more, not '-1'" in ran.stderr
    assert 'Traceback' not in ran.stderr


def _env(tmp):
    return {
        'RFM_SQLITE_DB_FILE': str(tmp / 'results.db'),
        'CLUSTERBENCH_PERFLOGDIR': str(tmp / 'perflogs'),
    }


@pytest.fixture(scope='module')
def measured(tmp_path_factory):
    """(directory, the solve's time in one uncapped run)."""
    tmp = tmp_path_factory.mktemp('confirm')
    return tmp, _solve_time(tmp)


def _solve_time(tmp):
    """The solve's time in one uncapped session run now."""
    empty = tmp / 'no-refs'
    empty.mkdir(parents=True)
    ran = rfm.clusterbench(
        'run', '--results', str(tmp / 'results'), '--references', str(empty),
        '--checks', CHECKS,
        '--', *SELECT, env=_env(tmp),
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr
    (report,) = glob.glob(str(tmp / 'results' / 'local' / '*' / 'report.json'))
    (case,) = _no_fixtures(json.load(open(report)))['testcases']
    (time,) = [v[0] for k, v in case['perfvalues'].items() if k.endswith(':time')]
    return time


@pytest.fixture(scope='module')
def outgrown(measured):
    """References this machine is always slower than: a quarter of its time."""
    tmp, time = measured
    rfm.classic_cg_references(tmp / 'outgrown', time=[time / 4, -0.5, 1.0, 's'])
    return tmp / 'outgrown'


def _session(tmp, references, *options):
    where = ['--results', str(tmp / 'results'), '--references', str(references)]
    where += ['--checks', CHECKS]
    ran = rfm.clusterbench('run', *options, *where, '--', *SELECT, env=_env(tmp))
    return ran.returncode, ran.stdout + ran.stderr


def _no_fixtures(report):
    (run,) = report['runs']
    return {'testcases': [c for c in run['testcases'] if not c['fixture']]}


class CpuCap:
    """This test's cgroup: a CPU quota far shorter than one solve, so that a
    solve waits out many periods (cgroup v2 ``cpu.max`` or v1
    ``cfs_quota_us``). Made without a limit; :meth:`capture` sets it and
    puts the MPI jobs below a pid in it, until :meth:`lift`."""

    PERIOD_US, QUOTA_US = 100_000, 2_000

    def __init__(self, name):
        v2, v1 = '/sys/fs/cgroup', '/sys/fs/cgroup/cpu'
        if 'cpu' in _text(os.path.join(v2, 'cgroup.controllers')).split():
            _put(os.path.join(v2, 'cgroup.subtree_control'), '+cpu')
            self.path = os.path.join(v2, name)
            self.limit = {'cpu.max': f'{self.QUOTA_US} {self.PERIOD_US}'}
            self.unlimited = {'cpu.max': f'max {self.PERIOD_US}'}
        elif os.path.isdir(v1):
            self.path = os.path.join(v1, name)
            self.limit = {'cpu.cfs_period_us': str(self.PERIOD_US),
                          'cpu.cfs_quota_us': str(self.QUOTA_US)}  # fmt: skip
            self.unlimited = {'cpu.cfs_quota_us': '-1'}
        else:
            pytest.skip('no cgroup cpu controller to slow the solver down')
        try:
            os.makedirs(self.path, exist_ok=True)
            self._set(self.unlimited)
        except OSError as err:
            pytest.skip(f'{self.path}: cannot cap the CPU: {err.strerror}')
        self._lifted = threading.Event()

    def _set(self, values):
        for name, value in values.items():
            _put(os.path.join(self.path, name), value)

    def capture(self, pid):
        """Cap each MPI job (an `mpirun` and what it starts) below *pid* from
        now until :meth:`lift`."""
        self._set(self.limit)

        def keep_in():
            # mpirun's ranks join its cgroup; one it started before it was
            # moved is moved on the next round, long before its solve.
            while not self._lifted.wait(0.01):
                for child in _jobs_below(pid):
                    try:
                        _put(os.path.join(self.path, 'cgroup.procs'), str(child))
                    except OSError:
                        pass  # it exited

        threading.Thread(target=keep_in, daemon=True).start()

    def lift(self):
        self._lifted.set()
        self._set(self.unlimited)

    def remove(self):
        self.lift()
        for _ in range(50):  # the session's processes leave as they exit
            try:
                os.rmdir(self.path)
                return
            except OSError:
                time.sleep(0.1)


def _jobs_below(pid, in_job=False):
    """The pids below *pid* that are an `mpirun`/`mpiexec` or below one."""
    found = []
    for child, name in reaper.children(pid):
        job = in_job or name.startswith(('mpirun', 'mpiexec'))
        found += [child] * job + _jobs_below(child, job)
    return found


def _text(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ''


def _put(path, text):
    with open(path, 'w') as f:
        f.write(text)


@pytest.fixture
def cap(tmp_path):
    cap = CpuCap(f'clusterbench-test-confirm-{os.getpid()}')
    yield cap
    cap.remove()


def _capped_session(tmp, references, cap):
    """`clusterbench run` whose first run of the test is capped (see
    CpuCap.capture), the cap lifted when the confirmation session starts:
    (exit code, output)."""
    where = ['--results', str(tmp / 'results'), '--references', str(references)]
    where += ['--checks', CHECKS]
    cmd = [rfm.tool('clusterbench'), 'run', *where, '--', *SELECT]
    lines, capped = [], False
    with subprocess.Popen(
        cmd,
        cwd=rfm.PROJECT,
        env={**os.environ, **_env(tmp)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    ) as proc:
        for line in proc.stdout:
            lines.append(line)
            # ReFrame starts the test: its job is capped, not ReFrame's own
            # probes before.
            if not capped and 'RUN' in line and 'CGSolverCheck' in line:
                cap.capture(proc.pid)
                capped = True
            if line.startswith('$ ') and '/confirm/' in line:
                cap.lift()
        code = proc.wait(timeout=600)
    return code, ''.join(lines)


def _confirmation_report(tmp):
    (path,) = glob.glob(
        str(tmp / 'results' / 'local' / '*' / 'confirm' / '*' / 'report.json')
    )
    return _no_fixtures(json.load(open(path)))['testcases']


def test_a_burst_in_the_first_run_does_not_hold(tmp_path, cap):
    # References from a solve just before, in this machine's conditions now:
    # the confirmation runs must not fall outside -80 %/+400 % of it.
    solve = _solve_time(tmp_path / 'now')
    rfm.classic_cg_references(tmp_path / 'refs', time=[solve, -0.8, 4.0, 's'])
    code, out = _capped_session(tmp_path, tmp_path / 'refs', cap)
    assert 'P: time:' in out and 'SLOWER' not in out.split('Confirmation:')[-1], out
    assert SUMMARY + '0 still fail, 1 did not hold' in out, out[-3000:]
    assert len(_confirmation_report(tmp_path)) == 2
    assert code == 0, out[-3000:]


def test_a_slowdown_in_every_run_fails(outgrown, tmp_path):
    code, out = _session(tmp_path, outgrown)
    assert SUMMARY + '1 still fail, 0 did not hold' in out, out[-3000:]
    table = out.split('Confirmation:')[-1]
    (row,) = [r for r in verdicttable.rows(table) if r['variable'] == 'time']
    # Judged on all three runs.
    assert row['verdict'] == 'SLOWER' and row['n'] == '3', row
    assert len(_confirmation_report(tmp_path)) == 2
    assert code == 1, out[-3000:]


def test_no_confirmation_when_asked_for_none(outgrown, tmp_path):
    code, out = _session(tmp_path, outgrown, '--confirm', '0')
    assert code == 1, out[-3000:]
    assert 'SLOWER' in out and 'Confirmation' not in out
    assert not glob.glob(str(tmp_path / 'results' / 'local' / '*' / 'confirm'))
