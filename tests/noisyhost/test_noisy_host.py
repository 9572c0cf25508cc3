"""The noisy-host profile (extras.noisy_host): on for ``local``, off for a
cluster; off, a run under load is neither probed nor DISTURBED, and
confirmation and --wait-quiet say in one line that they do nothing.

(With it on, tests/checks/test_run_conditions.py, test_confirm.py and
test_session_references_e2e.py show today's behaviour on ``local``.)"""

import glob
import json
import os
import subprocess

import pytest
import rfm
from conftest import PROJECT
from test_run_conditions import start_hog

from clusterbench.core.errors import ClusterbenchError
from clusterbench.noisyhost import conditions, switch
from clusterbench.sessions import runner

# Not `alone`: its hogs load the machine, but nothing here needs it quiet
# (with the profile off, load decides nothing), and the files that do need
# it quiet run alone.
OFF_LINE = "the noisy-host profile is off for local (extras: {'noisy_host': True})"


def test_the_switch_and_its_thresholds():
    assert switch.thresholds({}) is None
    assert switch.thresholds({'noisy_host': False}) is None
    assert switch.thresholds({'noisy_host': True}) == conditions.DEFAULTS
    changed = switch.thresholds({'noisy_host': {'max_other_cpu': 0.3}})
    assert changed == {**conditions.DEFAULTS, 'max_other_cpu': 0.3}
    # Off a host that measures itself, the host probe is not judged by default.
    batch = switch.thresholds({'noisy_host': True}, local=False)
    assert batch['max_host_drift'] is None
    # The older place of the thresholds is read, but does not turn it on.
    legacy = {'conditions': {'max_steal': 0.5}}
    assert switch.thresholds(legacy) is None
    assert switch.thresholds({**legacy, 'noisy_host': True})['max_steal'] == 0.5


@pytest.mark.parametrize(
    'value, message',
    [
        ('yes', "extras.noisy_host: 'yes': True, False or a dict of thresholds"),
        ({'max_stael': 0.1}, "extras.noisy_host: unknown threshold 'max_stael'"),
    ],
)
def test_a_bad_switch_is_one_line(value, message):
    with pytest.raises(ClusterbenchError) as err:
        switch.thresholds({'noisy_host': value})
    assert str(err.value).startswith(message)


def test_on_for_local_off_for_the_clusters():
    configs = os.path.join(PROJECT, 'site_configs')
    local = os.path.join(configs, 'local.py')
    assert runner.noisy_host_partitions(local, 'local') == ['default']
    example = os.path.join(configs, 'example-site.py')
    assert runner.noisy_host_partitions(example, 'example-site') == []


def test_a_bad_switch_in_a_config_names_the_file(tmp_path):
    config = _local_config(tmp_path, "'on'")
    with pytest.raises(ClusterbenchError) as err:
        runner.noisy_host_partitions(str(config), 'local')
    assert str(err.value).startswith(
        f"{config}: partition default: extras.noisy_host: 'on' is not True/False or "
        'a dict'
    )


def _local_config(tmp_path, value):
    """site_configs/local.py with extras.noisy_host set to *value* (source)."""
    config = tmp_path / 'local-noisy.py'
    config.write_text(
        'import runpy\n'
        f"site_configuration = runpy.run_path({rfm.CONFIG!r})['site_configuration']\n"
        "for part in site_configuration['systems'][0]['partitions']:\n"
        f"    part['extras']['noisy_host'] = {value}\n"
    )
    return config


@pytest.mark.integration
def test_off_a_loaded_run_is_neither_probed_nor_disturbed_nor_confirmed(tmp_path):
    config = _local_config(tmp_path, 'False')
    refs = tmp_path / 'refs'
    # A time no run makes: the run is SLOWER, which would be confirmed.
    rfm.classic_cg_references(refs, time=[1e-9, -0.5, 0.5, 's'])
    (tmp_path / 'locks').mkdir()
    env = {
        **os.environ,
        'RFM_SQLITE_DB_FILE': str(tmp_path / 'results.db'),
        'CLUSTERBENCH_LOCK_DIR': str(tmp_path / 'locks'),
    }
    hogs = start_hog()
    try:
        ran = subprocess.run(
            [rfm.tool('clusterbench'), 'run', '--config', str(config),
             '--results', str(tmp_path / 'results'), '--references', str(refs),
             '--wait-quiet=2', '--checks', rfm.CG_CHECKS, '--', *rfm.TINY_CG],
            cwd=PROJECT, env=env, capture_output=True, text=True, timeout=900,
        )  # fmt: skip
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    out = ran.stdout + ran.stderr
    assert ran.returncode == 1, out[-3000:]
    lines = out.splitlines()
    assert f'--wait-quiet: not waiting, {OFF_LINE}' in lines, out[-3000:]
    assert f'Confirmation runs: none, {OFF_LINE}' in lines, out[-3000:]
    assert 'wait_quiet=' not in out and '/confirm/' not in out
    assert 'DISTURBED' not in out and 'SLOWER' in out
    (report,) = glob.glob(str(tmp_path / 'results' / 'local' / '*' / 'report.json'))
    with open(report) as f:
        (run,) = json.load(f)['runs']
    (case,) = [c for c in run['testcases'] if not c['fixture']]
    cond = case['run_conditions']
    assert 'host_probe' not in cond and cond['thresholds'] is None, cond
    assert case['disturbed'] == ''
    # The conditions are still measured, as facts: the hog's CPU time is there,
    # and would have made the run DISTURBED with the profile on.
    assert conditions.disturbed(cond, conditions.DEFAULTS), cond
