"""Spack builds use the centre's spack_envs/ (issue 41, "Blocks adoption" 3).

`clusterbench site init` writes ``spack_envs/<system>/<partition>/`` in the
centre's directory and `clusterbench spack-envs` checks that copy; the checks
must build from it too (``./spack_envs`` of the launch directory, else the
project's; ``-S spack_envs_root=`` wins), and a missing environment is named
in that layout. Real ReFrame, with the stand-in ``spack`` of
tests/site/test_spack_checks.py.
"""

import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import PROJECT
from test_spack_checks import stub_spack  # noqa: F401 (fixture)

from clusterbench.site import spackenv

pytestmark = pytest.mark.integration

CONFIG = os.path.join(PROJECT, 'site_configs', 'local.py')
STREAM = os.path.join(PROJECT, 'reframe_checks', 'stream.py')
NPB = os.path.join(PROJECT, 'reframe_checks', 'npb.py')


def reframe_from(cwd, prefix, *args, env=None):
    """``reframe -r`` of the project's local config, started in *cwd*."""
    report = os.path.join(prefix, 'report.json')
    proc = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), 'reframe'), '-C', CONFIG,
         '--prefix', str(prefix), '--report-file', report, '--nocolor',
         '-S', 'judge_conditions=false', '-S', 'probe_host=false', *args, '-r'],
        capture_output=True, text=True, cwd=cwd, timeout=600, check=False,
        env={**os.environ,
             'RFM_SQLITE_DB_FILE': os.path.join(prefix, 'results.db'),
             'CLUSTERBENCH_PERFLOGDIR': os.path.join(prefix, 'perflogs'),
             **(env or {})},
    )  # fmt: skip
    out = proc.stdout + proc.stderr
    data = json.load(open(report)) if os.path.exists(report) else None
    return proc.returncode, out, data


def stream_case(report):
    (case,) = [
        c for c in report['runs'][0]['testcases'] if c['name'].startswith('StreamCheck')
    ]
    return case


SPACK_STREAM = (
    '-c', STREAM, '-n', r'^StreamCheck\b', '-p', 'gnu-openmpi',
    '-S', 'build_mode=spack', '-S', 'spack_install_opts=--fake',
    '-S', 'run_seconds=1',
)  # fmt: skip


def centre_with_partition_environment(centre):
    """A centre's directory whose spack_envs/ has what site init writes: one
    environment per partition, ``local/default/``."""
    envs = centre / 'spack_envs'
    shutil.copytree(os.path.join(spackenv.ENVS_ROOT, 'common'), envs / 'common')
    shutil.copytree(
        os.path.join(spackenv.ENVS_ROOT, 'local', 'default-gnu-openmpi'),
        envs / 'local' / 'default',
    )
    return envs


def test_the_checks_build_from_the_centres_spack_envs(stub_spack, tmp_path):  # noqa: F811
    spack, log, _ = stub_spack
    centre = tmp_path / 'centre'
    centre_with_partition_environment(centre)
    rc, out, report = reframe_from(
        centre, tmp_path / 'run', *SPACK_STREAM, env={'CLUSTERBENCH_SPACK': str(spack)}
    )
    assert report is not None, out
    case = stream_case(report)
    assert case['result'] == 'pass', (case['fail_reason'], out[-3000:])
    assert case['spack_env'] == os.path.join('spack_envs', 'local', 'default')
    assert 'local/default-gnu-openmpi' not in log.read_text().splitlines()[-1]


def test_spack_envs_root_still_wins(stub_spack, tmp_path):  # noqa: F811
    spack, _, _ = stub_spack
    centre = tmp_path / 'centre'
    centre_with_partition_environment(centre)
    rc, out, report = reframe_from(
        centre, tmp_path / 'run', *SPACK_STREAM,
        '-S', f'spack_envs_root={spackenv.ENVS_ROOT}',
        env={'CLUSTERBENCH_SPACK': str(spack)},
    )  # fmt: skip
    case = stream_case(report)
    assert case['result'] == 'pass', (case['fail_reason'], out[-3000:])
    assert case['spack_env'] == os.path.join(
        'spack_envs', 'local', 'default-gnu-openmpi'
    )


def test_a_missing_environment_is_named_as_site_init_writes_it(stub_spack, tmp_path):  # noqa: F811
    spack, _, _ = stub_spack
    centre = tmp_path / 'centre'
    shutil.copytree(
        os.path.join(spackenv.ENVS_ROOT, 'common'), centre / 'spack_envs' / 'common'
    )
    rc, out, report = reframe_from(
        centre, tmp_path / 'run', *SPACK_STREAM, env={'CLUSTERBENCH_SPACK': str(spack)}
    )
    case = stream_case(report)
    assert case['fail_phase'] == 'setup', out[-3000:]
    assert case['fail_reason'].endswith(
        'local:default gnu-openmpi: no Spack environment: expected '
        'spack_envs/local/default/spack.yaml (or default-gnu-openmpi/spack.yaml '
        'for gnu-openmpi alone, or extras.spack_env)'
    ), case['fail_reason']


def test_the_npb_skip_line_names_the_partitions_environment(tmp_path):
    rc, out, _ = reframe_from(
        tmp_path, tmp_path / 'run', '-c', NPB, '-n', 'benchmark=cg$',
        '-p', 'gnu-openmpi', '-S', 'npb_class=S',
        '-S', 'npb_url=http://127.0.0.1:9/NPB3.4.3.tar.gz',
        env={'CLUSTERBENCH_MIRROR': '', 'CLUSTERBENCH_CACHE': str(tmp_path)},
    )  # fmt: skip
    # No spack_envs/ here: the project's is the one the checks read.
    assert f'from {spackenv.ENVS_ROOT}/local/default/' in out, out[-3000:]
    assert 'default-gnu-openmpi' not in out


def test_spack_envs_names_the_partitions_environment(tmp_path):
    from test_spack_envs_adoption import SITE_CONFIG, spack_envs

    (tmp_path / 'site_configs').mkdir()
    (tmp_path / 'site_configs' / 'gen.py').write_text(
        SITE_CONFIG % ('gnu_openmpi', 'gnu_mpich')
    )
    envs = tmp_path / 'spack_envs'
    shutil.copytree(os.path.join(spackenv.ENVS_ROOT, 'common'), envs / 'common')
    shutil.copytree(
        os.path.join(spackenv.ENVS_ROOT, 'local', 'default-gnu-openmpi'),
        envs / 'gen' / 'other',
    )
    proc = spack_envs(tmp_path)
    assert proc.returncode == 1
    assert (
        'gen.py: systems:gen:partitions:compute:environs:gnu-openmpi: no Spack '
        f'environment (expected {envs}/gen/compute/spack.yaml, or '
        'compute-gnu-openmpi/spack.yaml for gnu-openmpi alone)'
    ) in proc.stderr, proc.stderr
