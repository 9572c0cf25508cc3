"""The host probe measures what the test uses, at the test's parallelism.

Issue 40: HPCC's StarSTREAM (both cores streaming) read -35 to -42 % and was
judged SLOWER while the one-core probe read a normal host. The probe now
measures the memory bandwidth (DGEMM, a shared-memory copy) on the test's
cores at once, and a drop there makes the test DISTURBED with the number.
"""

import glob
import json
import re

import pytest
import rfm

from clusterbench.judging import verdict
from clusterbench.noisyhost import conditions, hostprobe

FIXTURE = '../shared/fixtures/sessions/AMD-25-17/report.json'

#: Real probes of this machine (AMD-25-17, 2 vCPUs), `python -m
#: clusterbench.noisyhost.hostprobe --cores 2 --resources memory`: three
#: quiet ones (their median is the references' sessions' probe), and one
#: while other work shared the host's memory.
QUIET = [
    {'dgemm_gflops': 52.08, 'gather_mups': 131.3, 'copy_gbs': 37.53,
     'mem_gbs': 68.21, 'cores': 2},
    {'dgemm_gflops': 51.14, 'gather_mups': 111.6, 'copy_gbs': 31.4,
     'mem_gbs': 74.55, 'cores': 2},
    {'dgemm_gflops': 45.56, 'gather_mups': 96.7, 'copy_gbs': 27.59,
     'mem_gbs': 72.19, 'cores': 2},
]  # fmt: skip
BUSY = {'dgemm_gflops': 52.02, 'gather_mups': 137.0, 'copy_gbs': 39.99,
        'mem_gbs': 45.11, 'cores': 2}  # fmt: skip


def _stream_star_triad():
    """The StarSTREAM triad of the stored Zen 4 session judged SLOWER."""
    cases = json.load(open(FIXTURE))['runs'][0]['testcases']
    for case in cases:
        for key, values in (case.get('perfvalues') or {}).items():
            if key.endswith(':stream_star_triad'):
                return case, {key: values}
    raise AssertionError('no stream_star_triad in the fixture')


def test_a_bandwidth_drop_at_the_tests_parallelism_is_disturbed_not_slower():
    case, perfvalues = _stream_star_triad()
    # As stored: the one-core probe read a normal host, the figure SLOWER.
    assert verdict.of_test_case(perfvalues, case['disturbed']).kind == verdict.SLOWER
    reference = {'mem_gbs': 72.19, 'cores': 2, 'dgemm_gflops': 51.14,
                 'gather_mups': 111.6, 'copy_gbs': 31.4, 'sessions': 3}  # fmt: skip
    found = {'host_probe': hostprobe.best([BUSY, BUSY])}
    limits = conditions.thresholds({})
    broke = conditions.judge_run(found, limits, lambda: reference)
    assert broke == (
        "host memory bandwidth -38 % against its references' sessions "
        '(2 cores streaming)'
    )
    judged = verdict.of_test_case(perfvalues, broke)
    assert judged.kind == verdict.DISTURBED, judged
    assert 'host memory bandwidth -38 %' in str(judged)


def test_a_reference_probe_at_other_cores_judges_nothing():
    reference = {'mem_gbs': 72.19, 'cores': 1}
    assert hostprobe.drift_at_parallelism(BUSY, reference, 0.20) == ()
    same_cores = {**reference, 'cores': 2}
    assert hostprobe.drift_at_parallelism(QUIET[0], same_cores, 0.20) == ()


@pytest.mark.integration
def test_a_real_run_under_the_profile_probes_its_two_cores(tmp_path):
    ran = rfm.clusterbench(
        'run', '--results', str(tmp_path / 'results'), '--checks', rfm.CG_CHECKS,
        '--', '-n', 'CGSolverCheck%stencil=7%variant=classic%ranks_per_node=all',
        '-p', 'gnu-openmpi', '-S', 'problem_class=S',
        env={'RFM_SQLITE_DB_FILE': str(tmp_path / 'results.db'),
             'CLUSTERBENCH_PERFLOGDIR': str(tmp_path / 'perflogs')},
    )  # fmt: skip
    out = ran.stdout + ran.stderr
    (report,) = glob.glob(str(tmp_path / 'results' / 'local' / '*' / 'report.json'))
    cases = json.load(open(report))['runs'][0]['testcases']
    (case,) = [c for c in cases if not c['fixture']]
    cond = case['run_conditions']
    for probe in (cond['host_probe'], *cond['host_probe_each']):
        assert probe['cores'] == 2, (probe, out[-2000:])
        # A memory-bound solver: its bandwidth, not the DGEMM or a copy.
        assert isinstance(probe['mem_gbs'], float), probe
        assert 'dgemm_all_gflops' not in probe and 'shm_copy_gbs' not in probe
    assert re.search(r'GB/s on 2 cores', conditions.format_line(cond)), cond
