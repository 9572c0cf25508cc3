"""With a real Spack: the environment `clusterbench site init` writes for this
host concretizes offline as it is (issue 30, finding 5).

Runs only where ``$CLUSTERBENCH_SPACK`` names a ``spack`` executable (or one
is on PATH), configured as spack_envs/README.md says (Spack 1.1.0, the
builtin packages of v2025.11.0, clingo, offline); skipped otherwise, as
tests/site/test_spack_real.py is.
"""

import json
import os
import shutil
import subprocess

import pytest
from reframe.utility.cpuinfo import cpuinfo

from clusterbench.cli import spackenvs
from clusterbench.site import sitefacts, spackenv, spackskeleton

SPACK = os.environ.get('CLUSTERBENCH_SPACK') or shutil.which('spack')

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        not SPACK,
        reason='no spack: set CLUSTERBENCH_SPACK=/path/to/spack or put spack on '
        "PATH (Spack is not installable from this machine's package sources)",
    ),
]


def test_the_generated_environment_concretizes(tmp_path, capsys):
    environs = sitefacts.environs_from_path()
    if not environs:
        pytest.skip('no MPI wrappers on PATH to generate an environment for')
    target = spackskeleton.portable_target(cpuinfo().get('arch'))
    envs = tmp_path / 'spack_envs'
    env_dir = envs / 'gen' / 'compute'
    env_dir.mkdir(parents=True)
    (env_dir / 'spack.yaml').write_text(
        spackskeleton.text('gen', 'compute', environs, target)
    )
    spackskeleton.shared_files(str(envs))
    env = spackenv.load(str(env_dir))
    assert spackenv.convention_problems(env) == []
    proc = subprocess.run(
        [SPACK, '-e', str(env_dir), 'concretize', '-f', '--fresh'],
        capture_output=True,
        text=True,
        timeout=3600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert spackenv.lock_problems(env) == []
    # The node's own OpenBLAS, not one Spack would build.
    lock = json.loads((env_dir / 'spack.lock').read_text())
    blas = [s for s in lock['concrete_specs'].values() if s['name'] == 'openblas']
    external = next(e.blas_external for e in environs if e.blas_external)
    assert blas and all(s.get('external') for s in blas), blas
    assert {s['version'] for s in blas} == {external.split('@')[1].split()[0]}
    # And `clusterbench spack-envs` accepts the tree, lock included.
    assert spackenvs.check(str(envs)) == 0, capsys.readouterr().err
