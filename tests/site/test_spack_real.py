"""With a real Spack: the committed locks concretize again, --fake builds pass.

Spack cannot be installed from this machine's package sources, so these tests
run only where ``$CLUSTERBENCH_SPACK`` names a ``spack`` executable or one is
on PATH, configured as spack_envs/README.md says (Spack 1.1.0, the builtin
packages of release v2025.11.0, clingo, offline). Re-concretizing takes
minutes per environment.
"""

import json
import os
import shutil
import stat
import subprocess

import pytest
from rfm import reframe

from clusterbench.site import spackenv

SPACK = os.environ.get('CLUSTERBENCH_SPACK') or shutil.which('spack')
ENVS = spackenv.find_environments()

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        not SPACK,
        reason='no spack: set CLUSTERBENCH_SPACK=/path/to/spack or put spack on '
        "PATH (Spack is not installable from this machine's package sources)",
    ),
]


def _roots(lock_path):
    with open(lock_path) as f:
        data = json.load(f)
    return {spackenv.canonical_spec(r['spec']): r['hash'] for r in data['roots']}


@pytest.mark.parametrize('name', ENVS)
def test_the_lock_concretizes_again_to_the_same_roots(name, tmp_path):
    copy = tmp_path / 'spack_envs'
    shutil.copytree(spackenv.ENVS_ROOT, copy)
    env = copy / name
    proc = subprocess.run(
        [SPACK, '-e', str(env), 'concretize', '-f', '--fresh'],
        capture_output=True,
        text=True,
        timeout=3600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    committed = _roots(os.path.join(spackenv.ENVS_ROOT, name, 'spack.lock'))
    assert _roots(env / 'spack.lock') == committed


def test_fake_installs_complete_the_build_phase_of_every_spack_check(tmp_path):
    # A wrapper keeps the fake installs in a store of their own.
    wrapper = tmp_path / 'bin' / 'spack'
    wrapper.parent.mkdir()
    wrapper.write_text(
        '#!/bin/sh\n'
        f'exec {os.path.abspath(SPACK)} -c config:install_tree:root:{tmp_path}/store '
        '"$@"\n'
    )
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    rc, out, report = reframe(
        tmp_path / 'run',
        '-n',
        r'^(HPLCheck|StreamCheck|HPCGCheck|IMBCollectiveCheck)\b',
        '-n',
        'OSUPointToPointCheck%.*placement=intra%benchmark=osu_latency',
        '-n',
        'NPBCheck%.*npb_binaries.benchmark=cg',
        '-p',
        'gnu-openmpi',
        '-S',
        'build_mode=spack',
        '-S',
        'spack_install_opts=--fake',
        env={
            'CLUSTERBENCH_SPACK': str(wrapper),
            'CLUSTERBENCH_IMB_PREFIX': '',
            'CLUSTERBENCH_OSU_PREFIX': '',
        },
        timeout=3600,
    )
    assert report is not None, out
    # Not the release fixtures (and OSU/IMB release builds), which a Spack
    # session does not need.
    release = ('NPBRelease', 'StreamRelease', 'HPLRelease', 'OSURelease')
    release += ('IMBRelease', 'OSUBuild', 'IMBBuild')
    cases = [
        c for c in report['runs'][0]['testcases'] if not c['name'].startswith(release)
    ]
    # HPL, STREAM, HPCG, IMB, OSU, and NPB's build fixture and run.
    assert len(cases) == 7
    for case in cases:
        # The build passed; the empty fake installs have nothing to run.
        assert case['fail_phase'] in (None, 'run', 'sanity'), case['fail_reason']
        assert case['build_provider'] == 'spack'
        if not case['fixture'] and case['name'].startswith('NPBCheck'):
            continue  # NPB's run: its build is the fixture's
        staged = os.path.join(case['stagedir'], 'local', 'default-gnu-openmpi')
        assert _roots(os.path.join(staged, 'spack.lock')) == _roots(
            os.path.join(
                spackenv.ENVS_ROOT, 'local', 'default-gnu-openmpi', 'spack.lock'
            )
        )
        with open(os.path.join(case['stagedir'], 'rfm_build.out')) as f:
            assert case['spack_root_hash'][:7] in f.read()
