"""Friction of issue 41 in the commands: `clusterbench mirror`'s options in
either order, and `make dist` / `make clean` leaving no debris."""

import os
import subprocess
import sys

import adoption
import pytest
from rfm import captured, tool

from clusterbench.bench import sources


def mirror(*args, cwd):
    return captured(
        [tool('clusterbench'), 'mirror', *args],
        timeout=300,
        cwd=cwd,
        env={'CLUSTERBENCH_MIRROR': None},
    )


@pytest.mark.parametrize(
    'args',
    [
        ('--check', '--only', 'imb', 'DIR'),
        ('--check', 'DIR', '--only', 'imb'),
        ('--only', 'imb', 'DIR', '--check'),
    ],
)
def test_mirror_takes_dir_before_or_after_only(tmp_path, args):
    (tmp_path / 'DIR').mkdir()
    proc = mirror(*args, cwd=tmp_path)
    # An empty mirror: IMB's tarball is missing, nothing else is checked.
    assert proc.returncode == 1, proc.stderr
    assert 'required' not in proc.stderr
    assert sources.DEFAULTS['imb'].filename in proc.stdout + proc.stderr
    for other in set(sources.DEFAULTS) - {'imb'}:
        assert sources.DEFAULTS[other].filename not in proc.stdout + proc.stderr


def test_mirror_without_dir_still_says_so(tmp_path):
    proc = mirror('--check', '--only', 'imb', 'npb', cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1].endswith(
        'the following arguments are required: DIR'
    ), proc.stderr


DEBRIS = ('build', 'clusterbench.egg-info', 'dist')


def test_make_dist_leaves_only_the_wheel_and_make_clean_removes_it(tmp_path):
    checkout = adoption.copy_checkout(str(tmp_path / 'checkout'))
    dist = subprocess.run(
        ['make', 'dist', f'PYTHON={sys.executable}'],
        cwd=checkout,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert dist.returncode == 0, dist.stdout + dist.stderr
    (wheel,) = os.listdir(os.path.join(checkout, 'dist'))
    assert wheel.startswith('clusterbench-') and wheel.endswith('.whl')
    left = [d for d in DEBRIS[:2] if os.path.exists(os.path.join(checkout, d))]
    assert left == []
    # What a developer's checkout has after an editable install and a build.
    for name in DEBRIS:
        os.makedirs(os.path.join(checkout, name, 'x'), exist_ok=True)
    clean = subprocess.run(
        ['make', 'clean'], cwd=checkout, capture_output=True, text=True, timeout=600
    )
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert [d for d in DEBRIS if os.path.exists(os.path.join(checkout, d))] == []


def test_plain_reframe_keeps_stage_and_output_under_results(tmp_path):
    """docs/adoption.md: plain `reframe` keeps everything under results/."""
    from rfm import CG_CHECKS, CONFIG, TINY_CG

    launch, results = tmp_path / 'launch', tmp_path / 'launch' / 'results'
    launch.mkdir()
    proc = captured(
        [tool('reframe'), '-C', CONFIG, '-c', CG_CHECKS, *TINY_CG, '--dry-run'],
        timeout=600,
        cwd=launch,
        env={'CLUSTERBENCH_RESULTS': str(results), 'RFM_PREFIX': None},
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert f"stage directory:   '{results}/stage'" in out
    assert f"output directory:  '{results}/output'" in out
    assert sorted(os.listdir(launch)) == ['results']
    assert os.path.isdir(results / 'stage' / 'local')


def test_a_session_of_one_partition_goes_where_adoption_md_says(tmp_path):
    from conftest import PROJECT
    from rfm import TINY_CG

    with open(os.path.join(PROJECT, 'docs', 'adoption.md')) as f:
        doc = ' '.join(f.read().split())
    assert 'in `results/mycluster-<partition>/<timestamp>/`' in doc
    results = tmp_path / 'results'
    proc = captured(
        [tool('clusterbench'), 'run', '--system', 'local:default', '--results',
         results, '--', *TINY_CG, '-S', 'judge_conditions=false',
         '-S', 'probe_host=false'],
        timeout=900,
        env={'RFM_SQLITE_DB_FILE': str(tmp_path / 'results.db')},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert 'local-default' in os.listdir(results)
    assert 'local' not in os.listdir(results)
    (session,) = (results / 'local-default').iterdir()
    assert (session / 'report.json').is_file()
