"""The host probe: measured on one core before each launch, compared with
the probe of the sessions a reference was made from."""

import sys

from clusterbench.core.disturbance import Disturbance, Disturbed, Kind
from clusterbench.noisyhost import hostprobe
from clusterbench.references.update import Samples, host_probe_of


def test_the_probe_measures_its_figures_in_a_child_process():
    found = hostprobe.probe(cores=2)
    assert set(found) == {*hostprobe.FIGURES, 'cores'}, found
    assert found.pop('cores') == 2
    assert all(isinstance(v, float) and v > 0 for v in found.values()), found


def test_a_probe_that_cannot_run_is_absent_with_the_reason(tmp_path):
    found = hostprobe.probe(python=str(tmp_path / 'no-python'))
    assert list(found) == ['absent']
    assert 'no-python' in found['absent']
    failing = tmp_path / 'python'
    failing.write_text('#!/bin/sh\necho boom >&2\nexit 7\n')
    failing.chmod(0o755)
    assert hostprobe.probe(python=str(failing)) == {
        'absent': 'host probe exited 7: boom'
    }


def test_a_probe_without_its_all_core_figure_keeps_the_rest(tmp_path):
    partial = tmp_path / 'python'
    partial.write_text(
        '#!/bin/sh\necho \'{"dgemm_gflops": 50.1, "gather_mups": 110.0, '
        '"copy_gbs": 25.0}\'\n'
    )
    partial.chmod(0o755)
    assert hostprobe.probe(python=str(partial)) == {
        'dgemm_gflops': 50.1, 'gather_mups': 110.0, 'copy_gbs': 25.0
    }  # fmt: skip
    one_missing = tmp_path / 'one-missing'
    one_missing.write_text('#!/bin/sh\necho \'{"dgemm_gflops": 50.1}\'\n')
    one_missing.chmod(0o755)
    assert hostprobe.probe(python=str(one_missing)) == {
        'absent': 'host probe: figures missing from its output'
    }


def test_drift_names_the_judged_figures_worse_than_the_limit():
    reference = {'dgemm_gflops': 50.0, 'gather_mups': 110.0, 'copy_gbs': 30.0}
    same = {'dgemm_gflops': 48.0, 'gather_mups': 103.0, 'copy_gbs': 15.0}
    # The copy bandwidth halved: recorded, never judged (its own noise).
    assert hostprobe.drift(same, reference, 0.10) == ()
    slow = {'dgemm_gflops': 44.0, 'gather_mups': 88.0, 'copy_gbs': 30.0}
    found = hostprobe.drift(slow, reference, 0.10)
    assert found == (
        Disturbance(Kind.HOST_PROBE, 44.0 / 50.0, 0.10, figure='dgemm'),
        Disturbance(Kind.HOST_PROBE, 88.0 / 110.0, 0.10, figure='gather'),
    )
    assert Disturbed(found) == 'host probe dgemm -12 %, gather -20 %'
    # Faster is never a drift; no reference, no verdict.
    assert hostprobe.drift({'dgemm_gflops': 90.0}, reference, 0.10) == ()
    assert hostprobe.drift(slow, {}, 0.10) == ()


def test_the_reference_probe_is_the_median_of_session_medians():
    samples = Samples('local', 'T', 't.yaml', ('$partition',), ('local:default',),
                      'bw', 'GB/s')  # fmt: skip
    samples.probes = {
        's1': [{'dgemm_gflops': 50.0, 'gather_mups': 100.0, 'copy_gbs': 'absent'}],
        's2': [{'dgemm_gflops': 40.0, 'gather_mups': 90.0},
               {'dgemm_gflops': 60.0, 'gather_mups': 110.0}],
        's3': [{'dgemm_gflops': 52.0, 'gather_mups': 120.0}],
    }  # fmt: skip
    assert host_probe_of(samples) == {
        'dgemm_gflops': 50.0,
        'gather_mups': 100.0,
        'sessions': 3,
    }
    assert host_probe_of(Samples('l', 'T', 't', (), (), 'bw', '')) == {}


def test_the_module_prints_its_figures_as_json():
    import json
    import subprocess

    done = subprocess.run(
        [sys.executable, '-m', 'clusterbench.noisyhost.hostprobe', '--cores', '1',
         '--resources', 'memory'],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    # One core: the bandwidth of one, no DGEMM or copy between cores.
    assert json.loads(done.stdout).keys() == {*hostprobe.REQUIRED, 'mem_gbs', 'cores'}


def test_the_better_of_two_probes_counts_and_absent_only_when_both_are():
    before = {'dgemm_gflops': 44.8, 'gather_mups': 110.0, 'copy_gbs': 25.0}
    after = {'dgemm_gflops': 51.0, 'gather_mups': 99.0, 'copy_gbs': 31.0}
    assert hostprobe.best([before, after]) == {
        'dgemm_gflops': 51.0,
        'gather_mups': 110.0,
        'copy_gbs': 31.0,
    }
    assert hostprobe.best([{'absent': 'x'}, after]) == after
    assert hostprobe.best([{'absent': 'x'}, {'absent': 'y'}]) == {'absent': 'x'}
