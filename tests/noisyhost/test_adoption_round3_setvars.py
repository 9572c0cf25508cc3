"""`-S judge_conditions=false -S probe_host=false` without ReFrame's warning
(issue 41). ReFrame warns, on every session, that a test did not have a
variable set with ``-S`` (the CG solver's sources fixture has neither);
`clusterbench run` hands these run-conditions switches to the checks another
way, and they still do what they say.

Real sessions of the CG solver (class S, one rank) on a site config whose
noisy-host profile finds every run disturbed (other processes above -100 %
of the CPUs): judged, the run is DISTURBED and probed; with the two switches
off, neither, and ReFrame warns about neither.
"""

import json

import pytest
from conftest import PROJECT
from rfm import CG_CHECKS, TINY_CG, clusterbench

SITE = """\
import runpy
local = runpy.run_path({local!r})
site_configuration = local['site_configuration']
for system in site_configuration['systems']:
    for partition in system['partitions']:
        partition.setdefault('extras', {{}})['noisy_host'] = {{'max_other_cpu': -1.0}}
"""
OFF = ('-S', 'judge_conditions=false', '-S', 'probe_host=false')


def _run(tmp, *switches):
    site = tmp / 'site.py'
    site.write_text(SITE.format(local=f'{PROJECT}/site_configs/local.py'))
    env = {
        'RFM_SQLITE_DB_FILE': tmp / 'results.db',
        'CLUSTERBENCH_PERFLOGDIR': tmp / 'perflogs',
    }
    ran = clusterbench(
        'run', '--config', site, '--results', tmp / 'results', '--confirm', '0',
        '--checks', CG_CHECKS, '--', *TINY_CG, *switches, env=env,
    )  # fmt: skip
    out = ran.stdout + ran.stderr
    assert 'Traceback' not in out and ran.returncode == 0, out[-3000:]
    (path,) = (tmp / 'results' / 'local').glob('*/report.json')
    cases = json.loads(path.read_text())['runs'][0]['testcases']
    (case,) = [c for c in cases if not c['fixture']]
    return out, case


def _warned(out, name):
    return [x for x in out.splitlines() if 'were not set' in x and repr(name) in x]


@pytest.mark.integration
def test_the_switches_off_work_without_a_warning(tmp_path):
    out, case = _run(tmp_path, *OFF)
    assert not _warned(out, 'judge_conditions'), out
    assert not _warned(out, 'probe_host'), out
    assert case['disturbed'] == ''
    assert 'host_probe' not in case['run_conditions']


@pytest.mark.integration
def test_without_them_the_same_run_is_judged_and_probed(tmp_path):
    out, case = _run(tmp_path)
    assert case['disturbed'].startswith('other processes '), case['disturbed']
    assert 'host_probe' in case['run_conditions']


def test_only_assignments_reframe_would_accept_are_handed_over():
    from clusterbench.noisyhost import sessionvars

    args = [
        '-n', 'X', '-S', 'probe_host=false', '-Sjudge_conditions=no',
        '--setvar=wait_quiet=30', '-S', 'probe_host=maybe',
        '-S', 'CGSolverCheck.judge_conditions=false', '-S', 'problem_class=S',
    ]  # fmt: skip
    kept, env = sessionvars.translate(args)
    assert kept == [
        '-n', 'X', '-S', 'probe_host=maybe',
        '-S', 'CGSolverCheck.judge_conditions=false', '-S', 'problem_class=S',
    ]  # fmt: skip
    assert {k: sessionvars.default(n, env) for n, (k, _) in
            sessionvars.VARIABLES.items()} == {
        'CLUSTERBENCH_JUDGE_CONDITIONS': False,
        'CLUSTERBENCH_PROBE_HOST': False,
        'CLUSTERBENCH_WAIT_QUIET': 30.0,
    }  # fmt: skip
    assert sessionvars.default('probe_host', {}) is True
