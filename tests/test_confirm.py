"""Confirmation runs: a figure outside its reference in one run is run again
before it fails the session; a burst does not hold, a slowdown does.

The burst is real: the session runs in a cgroup whose CPU quota (20 ms per
100 ms) is shorter than one solve (~28 ms), so every capped solve waits out
a period (its time x3 or more, against a band of -50 %/+100 %: room for
this machine's noise between one run and the next), and the cap is
lifted when the confirmation session starts. The persistent slowdown is a
machine four times slower than its references (the same runs, references
of a quarter of their time), so that it costs no capped minutes.
"""

import glob
import json
import os
import subprocess
import time

import pytest
import rfm
import verdicttable

from clusterbench.noisyhost import confirm

pytestmark = [pytest.mark.integration, pytest.mark.alone]

#: A ~28 ms solve (class W): longer than the cap's quota, short enough for a
#: test.
SELECT = (
    '-n', 'CGSolverCheck%stencil=7%variant=classic%ranks_per_node=1',
    '-p', 'gnu-openmpi',
    '-S', 'problem_class=W',
    '-S', 'judge_conditions=false',
    '-S', 'probe_host=false',
)  # fmt: skip
#: The one check file the sessions need: loaded under the CPU cap too.
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
    """(directory, the solve's time in one unloaded run)."""
    tmp = tmp_path_factory.mktemp('confirm')
    empty = tmp / 'no-refs'
    empty.mkdir()
    ran = rfm.clusterbench(
        'run', '--results', str(tmp / 'results'), '--references', str(empty),
        '--checks', CHECKS,
        '--', *SELECT, env=_env(tmp),
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr
    (report,) = glob.glob(str(tmp / 'results' / 'local' / '*' / 'report.json'))
    (case,) = _no_fixtures(json.load(open(report)))['testcases']
    (time,) = [v[0] for k, v in case['perfvalues'].items() if k.endswith(':time')]
    return tmp, time


@pytest.fixture(scope='module')
def references(measured):
    """References of the solve's time, -50 %/+100 % around the unloaded run."""
    tmp, time = measured
    rfm.classic_cg_references(tmp / 'refs', time=[time, -0.5, 1.0, 's'])
    return tmp / 'refs'


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
    """This test's cgroup: a CPU quota shorter than one solve, so that every
    solve waits out a period (cgroup v2 ``cpu.max`` or v1 ``cfs_quota_us``)."""

    PERIOD_US, QUOTA_US = 100_000, 20_000

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
            self._set(self.limit)
        except OSError as err:
            pytest.skip(f'{self.path}: cannot cap the CPU: {err.strerror}')

    def _set(self, values):
        for name, value in values.items():
            _put(os.path.join(self.path, name), value)

    def enter(self):
        """For Popen(preexec_fn=...): the child joins the capped cgroup."""
        _put(os.path.join(self.path, 'cgroup.procs'), str(os.getpid()))

    def lift(self):
        self._set(self.unlimited)

    def remove(self):
        self.lift()
        for _ in range(50):  # the session's processes leave as they exit
            try:
                os.rmdir(self.path)
                return
            except OSError:
                time.sleep(0.1)


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


def _capped_session(tmp, references, cap, until_confirmation, *options):
    """`clusterbench run` in the capped cgroup: (exit code, output). With
    *until_confirmation*, the cap is lifted when the confirmation starts."""
    where = ['--results', str(tmp / 'results'), '--references', str(references)]
    where += ['--checks', CHECKS]
    cmd = [rfm.tool('clusterbench'), 'run', *options, *where, '--', *SELECT]
    lines = []
    with subprocess.Popen(
        cmd,
        cwd=rfm.PROJECT,
        env={**os.environ, **_env(tmp)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=cap.enter,
    ) as proc:
        for line in proc.stdout:
            lines.append(line)
            if until_confirmation and line.startswith('$ ') and '/confirm/' in line:
                cap.lift()
        code = proc.wait(timeout=600)
    return code, ''.join(lines)


def _confirmation_report(tmp):
    (path,) = glob.glob(
        str(tmp / 'results' / 'local' / '*' / 'confirm' / '*' / 'report.json')
    )
    return _no_fixtures(json.load(open(path)))['testcases']


def test_a_burst_in_the_first_run_does_not_hold(references, tmp_path, cap):
    code, out = _capped_session(tmp_path, references, cap, until_confirmation=True)
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
