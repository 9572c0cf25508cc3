"""What a centre's Spack environments meet in their first week (issue 30,
finding 5): the environment `clusterbench site init` writes passes `clusterbench
spack-envs` as it is, a lock stale against an included external is named, a
site may size STREAM's array, and a system of modules without any Spack
environment passes. No Spack needed (real Spack: tests/site/test_spack_real.py).
"""

import os
import shutil
import subprocess

from conftest import PROJECT
from rfm import tool

from clusterbench.cli import spackenvs
from clusterbench.site import sitefacts, spackenv, spackskeleton

ENVS = os.path.join(PROJECT, 'spack_envs')
SITE_CONFIG = """
import runpy

from clusterbench.core import paths

common = runpy.run_path(paths.site_config('common.py'))

site_configuration = {
    'systems': [
        {
            'name': 'gen',
            'hostnames': ['.*'],
            'partitions': [
                {
                    'name': 'compute',
                    'scheduler': 'slurm',
                    'launcher': 'srun',
                    'environs': ['gnu-openmpi', 'gnu-mpich'],
                }
            ],
        }
    ],
    'environments': [
        common['%s'](target_systems=['gen']),
        common['%s'](target_systems=['gen']),
    ],
}
"""


def spack_envs(cwd):
    return subprocess.run(
        [tool('clusterbench'), 'spack-envs'],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        check=False,
    )


def debian_environs():
    return [
        sitefacts.Environ(
            'gnu-openmpi', 'openmpi', 'debian', mpi_version='4.1.4',
            compiler_version='12.2.0',
        ),
        sitefacts.Environ(
            'gnu-mpich', 'mpich', 'debian', mpi_version='4.0.2',
            compiler_version='12.2.0',
        ),
    ]  # fmt: skip


def test_the_generated_environment_passes_spack_envs(tmp_path):
    envs = tmp_path / 'spack_envs'
    path = envs / 'gen' / 'compute' / 'spack.yaml'
    path.parent.mkdir(parents=True)
    target = spackskeleton.portable_target('zen3')
    assert target == 'x86_64_v3'
    path.write_text(spackskeleton.text('gen', 'compute', debian_environs(), target))
    written = spackskeleton.shared_files(str(envs))
    assert sorted(os.path.basename(p) for p in written) == [
        'benchmarks.yaml',
        'reproducible.yaml',
    ]
    assert spackskeleton.shared_files(str(envs)) == []  # never overwritten
    text = path.read_text()
    assert '  - ../../common/benchmarks.yaml' in text and str(PROJECT) not in text
    env = spackenv.load(str(path.parent))
    assert spackenv.convention_problems(env) == []
    assert env.packages['openmpi']['require'] == ['@4.1.4']
    assert env.packages['mpich']['externals'][0]['spec'] == 'mpich@4.0.2'
    (tmp_path / 'site_configs').mkdir()
    (tmp_path / 'site_configs' / 'gen.py').write_text(
        SITE_CONFIG % ('gnu_openmpi', 'gnu_mpich')
    )
    proc = spack_envs(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stderr == ''
    # What is left to the centre, with Spack: concretize it.
    assert (
        f'{envs}/gen/compute: not concretized yet (no spack.lock): spack -e '
        f'{envs}/gen/compute concretize, then commit the lock'
    ) in proc.stdout
    assert '1 site configs and their Spack environments agree' in proc.stdout


def test_what_site_init_could_not_find_is_a_todo(tmp_path):
    environs = [
        sitefacts.Environ(
            'gnu-openmpi', 'openmpi', 'modules', modules=['openmpi/5.0.8'],
            mpi_version='5.0.8', compiler_version=sitefacts.Todo('no gcc module'),
        )
    ]  # fmt: skip
    text = spackskeleton.text(
        'gen', 'compute', environs, spackskeleton.portable_target('nosuch')
    )
    assert '    # TODO: c: no gcc module' in text
    assert "    # TODO: all: 'nosuch': not a micro-architecture archspec knows" in text
    assert '# TODO: the compiler and MPI as externals' in text


def copied_envs(tmp_path):
    root = tmp_path / 'spack_envs'
    shutil.copytree(ENVS, root)
    return root


def test_a_lock_stale_against_an_included_external_is_named(tmp_path):
    root = copied_envs(tmp_path)
    debian = root / 'common' / 'debian12.yaml'
    debian.write_text(
        debian.read_text().replace('spec: openmpi@4.1.4', 'spec: openmpi@4.1.5')
    )
    env = spackenv.load(str(root / 'box' / 'compute-gnu-openmpi'))
    problems = spackenv.lock_problems(env)
    assert problems == [
        f'{root}/box/compute-gnu-openmpi/spack.lock: openmpi@4.1.4: spack.yaml '
        'and its includes now ask for openmpi@4.1.5: the lock is stale, re-concretize'
    ]
    # The MPICH environment includes the same file; its lock has no Open MPI.
    mpich = spackenv.load(str(root / 'box' / 'compute-gnu-mpich'))
    assert spackenv.lock_problems(mpich) == []
    assert spackenvs.check(str(root)) == 1


def test_a_site_may_size_streams_array(tmp_path):
    root = copied_envs(tmp_path)
    benchmarks = root / 'common' / 'benchmarks.yaml'
    benchmarks.write_text(
        benchmarks.read_text().replace(
            'stream_array_size=80000000', 'stream_array_size=400000000'
        )
    )
    env = spackenv.load(str(root / 'local' / 'default-gnu-openmpi'))
    assert spackenv.convention_problems(env) == []
    # The committed lock was concretized with the old size: re-concretize.
    (problem,) = spackenv.lock_problems(env)
    assert 'stream_array_size=400000000' in problem and 're-concretize' in problem


def test_a_system_of_modules_without_spack_environments_passes(tmp_path):
    (tmp_path / 'site_configs').mkdir()
    (tmp_path / 'site_configs' / 'gen.py').write_text(
        SITE_CONFIG.replace(
            "common['%s'](target_systems=['gen'])",
            "common['module_environment']('%s', 'openmpi', ['openmpi/5.0.8'], "
            "target_systems=['gen'])",
        )
        % ('gnu-openmpi', 'gnu-mpich')
    )
    proc = spack_envs(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stderr == ''
    assert f'gen: no Spack environments ({tmp_path}/spack_envs/gen/ absent)' in (
        proc.stdout
    )
