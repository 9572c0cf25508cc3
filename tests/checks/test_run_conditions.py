"""The run's conditions: measured around the launch, disturbed runs named
(DISTURBED), never judged and never used for references; a CPU hog beside a
real benchmark on ``local`` is caught, a quiet run is not."""

import json
import os
import re
import subprocess
import sys
import time

import pytest
from conftest import PROJECT
from rfm import clusterbench, only_case, reframe, tool

from clusterbench.core.errors import ClusterbenchError
from clusterbench.core.reference import Reference
from clusterbench.judging import verdict
from clusterbench.judging import view as verdictview
from clusterbench.machine import hwinfo
from clusterbench.noisyhost import conditions, quiet
from clusterbench.results import runreport, samples

# Not `alone`: a hog's run is DISTURBED however busy the machine is besides.
# The run that must find the machine quiet is in test_quiet_run.py, alone.
PYTHON = sys.executable


class Snap:
    def __init__(self, t, steal, busy, idle, cpus=2, load=0.1, mhz=2600.0):
        self.time = t
        self.stat = dict.fromkeys(conditions.STAT_FIELDS, 0.0)
        self.stat.update(steal=steal, user=busy, idle=idle)
        self.cpus, self.load, self.mhz = cpus, load, mhz


def test_shares_from_proc_stat_deltas_and_the_ranks_cpu_time():
    # 10 s on 2 CPUs = 20 CPU-s: 3.6 stolen, 15 busy (ranks 14.2), 1.4 idle.
    before, after = Snap(0.0, 0.0, 0.0, 0.0), Snap(10.0, 3.6, 15.0, 1.4)
    found = conditions.measure(before, after, ranks=2, ranks_cpu=14.2)
    assert found['steal_share'] == pytest.approx(0.18)
    assert found['other_cpu_share'] == pytest.approx(0.04)
    assert found['ranks_cpu_share'] == pytest.approx(0.71)
    assert found['load_before'] == 0.1 and found['mhz_after'] == 2600.0
    assert conditions.disturbed(found) == "steal 18 %, ranks' CPU share 71 %"
    assert _judged(found) == verdict.Verdict(
        verdict.DISTURBED, "steal 18 %, ranks' CPU share 71 %"
    )


@pytest.mark.parametrize(
    'key, value, said',
    [
        ('ranks_cpu_share', 0.898, "ranks' CPU share 89.8 %"),
        ('ranks_cpu_share', 0.89999, "ranks' CPU share 89.999 %"),
        ('steal_share', 0.0201, 'steal 2.01 %'),
        ('other_cpu_share', 0.1004, 'other processes 10.04 % of the CPUs'),
    ],
)
def test_a_label_never_rounds_onto_the_threshold_it_broke(key, value, said):
    """Issue 40: a share of 0.898 under the 90 % floor was said as "90 %"."""
    assert conditions.disturbed({key: value, 'wall_s': 60.0}) == said


def test_without_the_ranks_cpu_time_the_share_is_absent_with_the_reason():
    found = conditions.measure(Snap(0, 0, 0, 0), Snap(10, 0, 1, 19), ranks=2)
    assert found['ranks_cpu_share'] == hwinfo.ABSENT
    assert 'batch launcher' in found['absent']['ranks_cpu_share']
    assert found['other_cpu_share'] == hwinfo.ABSENT
    assert conditions.disturbed(found) == ''


def test_a_short_run_is_not_judged_on_its_share_and_thresholds_come_from_extras():
    short = conditions.measure(Snap(0, 0, 0, 0), Snap(0.4, 0, 0.2, 0.6), 2, 0.2)
    assert short['ranks_cpu_share'] == pytest.approx(0.25)
    assert conditions.disturbed(short) == ''
    limits = conditions.thresholds({'conditions': {'share_min_wall_s': 0.1}})
    assert conditions.disturbed(short, limits) == "ranks' CPU share 25 %"
    assert conditions.thresholds({})['max_steal'] == 0.02


def _judged(found):
    fig = runreport.Figure(
        'T', 'local', 'default', 'gnu', 'bw', 1.0, 'GB/s',
        Reference(2.0, -0.1, 0.1, 'GB/s'), 'fail',
        disturbed=conditions.disturbed(found),
    )  # fmt: skip
    (judged,) = verdict.group([fig])
    return judged.verdict


def test_disturbed_samples_are_shown_but_never_decide_a_verdict():
    def fig(value, disturbed=None):
        return runreport.Figure(
            'T', 'local', 'default', 'gnu', 'bw', value, 'GB/s',
            Reference(10.0, -0.05, 0.05, 'GB/s'), 'pass', disturbed=disturbed,
        )  # fmt: skip

    judged = verdict.group([fig(10.0), fig(10.1), fig(3.0, 'steal 40 %')])
    by_verdict = {j.verdict: j for j in judged}
    assert by_verdict['pass'].values == [10.0, 10.1]
    assert by_verdict[verdict.Verdict('DISTURBED', 'steal 40 %')].values == [3.0]
    table = verdict.rows(judged, [])
    assert not verdict.anything_wrong(table)
    assert ', 1 DISTURBED, ' in verdictview.summary(table)
    # Nor as a baseline for --against: a disturbed baseline is no baseline.
    (only,) = verdict.group([fig(10.0)], baseline=[fig(3.0, 'steal 40 %')])
    assert only.verdict == 'no reference' and only.baseline is None


def test_references_update_never_takes_a_disturbed_run(tmp_path):
    case = {
        'name': 'T', 'display_name': 'T', 'system': 'local', 'partition': 'default',
        'environ': 'gnu', 'result': 'pass', 'reference_file': 't.yaml',
        'reference_index': ['$partition'], 'perfvalues': {
            'local:default:bw': [3.0, 0, None, None, 'GB/s', 'pass']},
        'disturbed': "ranks' CPU share 40 %",
    }  # fmt: skip
    path = tmp_path / 'report.json'
    path.write_text(json.dumps({'session_info': {}, 'runs': [{'testcases': [case]}]}))
    with pytest.raises(ClusterbenchError, match='no verified figure'):
        samples.collect([str(path)])


def test_provenance_identity_is_the_one_recorded_around_the_run():
    measured = {'cpu_kind': 'AMD-26-2', 'microcode': '0xb002116'}
    facts = {'n1': {'identity': {'cpu_kind': 'AMD-25-17'}}}
    case = {'machine_identity': measured, 'node_facts': facts}
    assert samples.identity_of(case) == {'source': 'recorded', **measured}
    del case['machine_identity']
    assert samples.identity_of(case)['cpu_kind'] == 'AMD-25-17'
    assert samples.identity_of({}) == {}


def test_the_wrapper_measures_the_ranks_keeps_the_exit_code_and_the_preload(tmp_path):
    out = tmp_path / 'c.json'
    busy = (
        'import os, time\n'
        't = time.process_time()\n'
        'while time.process_time() - t < 0.4: pass\n'
        'raise SystemExit(3 if os.environ.get("LD_PRELOAD") == "libx.so" else 4)\n'
    )
    env = {**os.environ, 'PYTHONPATH': PROJECT, '_CB_LD_PRELOAD': 'libx.so'}
    env.pop('LD_PRELOAD', None)
    proc = subprocess.run(
        [PYTHON, '-m', 'clusterbench.cli.conditions', 'wrap', '-o', str(out)]
        + ['--ranks', '1', '--local', '--', PYTHON, '-c', busy],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    # The profiler's LD_PRELOAD reached the benchmark (exit 3), not the wrapper.
    assert proc.returncode == 3, proc.stderr
    found = json.loads(out.read_text())
    assert found['ranks_cpu_s'] >= 0.4
    assert found['exit_code'] == 3
    assert found['identity']['cpu_kind'] == hwinfo.cpu_kind_of_file()


def test_wait_quiet_says_when_it_gives_up():
    said = []
    start = time.monotonic()
    assert not quiet.wait_quiet(1.5, quiet_for=3, max_busy=-1, say=said.append)
    assert time.monotonic() - start < 10
    (line,) = said
    assert re.match(
        r'clusterbench: the machine was not quiet for 3 s within 1.5 s', line
    )
    assert line.endswith('running anyway')


# -- real runs on local --------------------------------------------------------

NETPIPE = (
    '-n',
    'NetPIPECheck%placement=intra%mode=pingpong',
    '-S',
    'netpipe_upper=262144',
    '-S',
    'netpipe_repeats=50',
    '-p',
    'gnu-openmpi',
)
CHECKS = 'reframe_checks/netpipe.py'


def start_hog(niceness=0):
    """One busy process pinned to each CPU of this machine, at *niceness*."""
    hogs = []
    for cpu in sorted(os.sched_getaffinity(0)):
        hogs.append(
            subprocess.Popen(
                [PYTHON, '-c', f'import os; os.nice({niceness})\nwhile True: pass'],
                preexec_fn=lambda cpu=cpu: os.sched_setaffinity(0, {cpu}),
            )
        )
    return hogs


@pytest.mark.integration
def test_a_cpu_hog_beside_the_benchmark_makes_it_disturbed(tmp_path):
    hogs = start_hog()
    try:
        time.sleep(0.5)
        rc, out, report = reframe(tmp_path, *NETPIPE, checks=CHECKS, conditions=True)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    assert report is not None, out
    case = only_case(report)
    cond = case['run_conditions']
    # The hog's CPU time is other processes' and the ranks had less of theirs.
    assert cond['other_cpu_share'] > 0.10, cond
    assert case['disturbed'] == conditions.disturbed(cond, cond['thresholds'])
    assert (
        f'other processes {cond["other_cpu_share"]:.0%}'.replace('%', ' %')
        in (case['disturbed'])
    )
    if cond['wall_s'] >= cond['thresholds']['share_min_wall_s']:
        assert (
            f"ranks' CPU share {cond['ranks_cpu_share']:.0%}".replace('%', ' %')
            in case['disturbed']
        )
    assert f'DISTURBED ({case["disturbed"]})' in out
    assert case['machine_identity']['cpu_kind'] == hwinfo.cpu_kind_of_file()
    # clusterbench shows every figure as DISTURBED, with what was broken.
    compare = subprocess.run(
        [tool('clusterbench'), 'compare', '-v', str(tmp_path / 'report.json')],
        capture_output=True, text=True, cwd=PROJECT, timeout=300,
    )  # fmt: skip
    assert compare.returncode == 0, compare.stdout + compare.stderr
    # (The conditions lines, shown with -v, wrap to the terminal: compare
    # their words.)
    shown = ' '.join(compare.stdout.split('Run conditions')[1].split())
    assert 'DISTURBED (' in shown
    rows = [x for x in compare.stdout.splitlines() if x.startswith('NetPIPECheck  ')]
    # The reason in the cell where it fits, else once below the table.
    whole = f'DISTURBED ({case["disturbed"]})'
    noted = f'[1] {whole}' in ' '.join(compare.stdout.split())
    assert rows and all(
        x.endswith(whole) or (noted and x.endswith('DISTURBED [1]')) for x in rows
    )
    assert rc == 0, out


@pytest.mark.integration
def test_run_wait_quiet_waits_and_says_when_it_gives_up(tmp_path):
    # Niced: the wait counts them busy all the same (nice time is busy time),
    # and the session that runs anyway is not slowed down by them.
    hogs = start_hog(niceness=19)
    try:
        result = clusterbench(
            'run', '--results', str(tmp_path), '--checks', CHECKS,
            '--wait-quiet=2', '--', *NETPIPE[:2], '-S', 'netpipe_upper=1024',
            '-p', 'gnu-openmpi',
        )  # fmt: skip
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    out = result.stdout + result.stderr
    assert '-S wait_quiet=2' in out, out
    assert 'waiting up to 2 s for a quiet machine' in out, out
    assert re.search(
        r'the machine was not quiet for 3 s within 2 s \(last second: busy \d+%, '
        r'steal \d+%\); running anyway',
        out,
    ), out
    assert 'Traceback' not in out
