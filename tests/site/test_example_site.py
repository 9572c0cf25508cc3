"""The worked example site: site_configs/example-site.py against
spack_envs/example-site/, module-based environments, and the cross-check of
`clusterbench spack-envs` finding where a site config and its Spack
environment disagree."""

import os
import runpy
import shutil

import pytest
from conftest import PROJECT
from reframe.core import config as rfm_config

from clusterbench.cli import spackenvs
from clusterbench.machine import linkpeak
from clusterbench.site import spackenv

EXAMPLE = os.path.join(PROJECT, 'site_configs', 'example-site.py')


@pytest.fixture(scope='module')
def site():
    """The example as ReFrame loads and validates it (schema included)."""
    loaded = rfm_config.load_config(EXAMPLE)
    loaded.select_subconfig('example-site')
    loaded.validate()
    return loaded


def test_example_site_partitions(site):
    parts = {p['name']: p for p in site.get('systems/0/partitions')}
    assert set(parts) == {'ib', 'bigmem'}
    assert site.get('systems/0/modules_system') == 'lmod'
    for part in parts.values():
        assert part['scheduler'] == 'slurm' and part['launcher'] == 'srun'
        assert {'multinode', 'ib'} <= set(part['features'])
        assert part['environs'] == ['gnu-openmpi', 'gnu-mvapich']
        # The declared link gives the communication checks their peak:
        # 4x HDR (200 Gb/s, 64b66b) under a PCIe gen 4 x16 slot.
        peak, reason = linkpeak.from_extras(part['extras'], part['name'])
        assert reason == ''
        assert peak.limited_by == 'link'
        assert peak.peak_mbs == pytest.approx(200e9 * 64 / 66 / 8 / 1e6)
    assert (
        parts['bigmem']['extras']['mem_per_node']
        == 8 * parts['ib']['extras']['mem_per_node']
    )


def test_environments_load_the_spack_built_stack_as_modules():
    config = runpy.run_path(EXAMPLE)['site_configuration']
    envs = {e['name']: e for e in config['environments']}
    assert envs['gnu-openmpi']['modules'] == [
        'gcc/13.3.0',
        'openmpi/5.0.8',
        'openblas/0.3.30',
    ]
    assert envs['gnu-mvapich']['modules'] == [
        'gcc/13.3.0',
        'mvapich/4.1',
        'openblas/0.3.30',
    ]
    for env in envs.values():
        # The MPI's own wrappers from the module, not Debian's suffixed ones.
        assert (env['cc'], env['cxx'], env['ftn']) == ('mpicc', 'mpicxx', 'mpif90')
        assert not any(var == 'PATH' for var, _ in env['env_vars'])
    assert envs['gnu-openmpi']['extras'] == {
        'mpi': 'openmpi',
        'compiler': 'gcc',
        'blas': 'openblas',
    }
    assert envs['gnu-mvapich']['extras']['mpi'] == 'mvapich'
    assert {'mpi', 'mvapich', 'gnu', 'openblas'} <= set(envs['gnu-mvapich']['features'])


def test_debian_builders_are_unchanged_without_modules():
    common = runpy.run_path(os.path.join(PROJECT, 'site_configs', 'common.py'))
    env = common['gnu_openmpi'](env_vars=[['X', '1']])
    assert env['cc'] == 'mpicc.openmpi' and 'modules' not in env
    assert env['env_vars'][-1] == ['X', '1']
    assert common['gnu_mpich']()['cc'] == 'mpicc.mpich'


def test_example_site_and_its_spack_environment_agree():
    configs = {
        'site_configs/example-site.py': runpy.run_path(EXAMPLE)['site_configuration']
    }
    problems, unconfigured = spackenv.site_config_problems(configs)
    assert problems == []
    assert 'example-site' not in unconfigured
    assert spackenv.stack_problems(configs) == []
    # bigmem names the ib environment explicitly; ib follows the convention.
    for part in ('ib', 'bigmem'):
        extras = next(
            p.get('extras')
            for p in configs['site_configs/example-site.py']['systems'][0]['partitions']
            if p['name'] == part
        )
        path = spackenv.environment_for('example-site', part, 'gnu-mvapich', extras)
        assert path == os.path.join(spackenv.ENVS_ROOT, 'example-site', 'ib')


@pytest.fixture
def tree(tmp_path):
    """A copy of the site configs and Spack environments to break."""
    for name in ('site_configs', 'spack_envs'):
        shutil.copytree(
            os.path.join(PROJECT, name),
            tmp_path / name,
            ignore=shutil.ignore_patterns('__pycache__'),
        )
    return tmp_path


def test_spack_envs_command_names_each_disagreement(tree, capsys):
    assert spackenvs.check(str(tree / 'spack_envs')) == 0
    count = len([n for n in os.listdir(tree / 'site_configs') if n.endswith('.py')])
    assert f'{count - 1} site configs and their Spack environments agree' in (
        capsys.readouterr().out
    )
    example = tree / 'site_configs' / 'example-site.py'
    text = example.read_text()
    text = text.replace("'openmpi/5.0.8'", "'openmpi/4.1.6'")
    text = text.replace(
        "'gnu-mvapich',\n            'mvapich',", "'gnu-mvapich',\n            'mpich',"
    )
    example.write_text(text)
    assert spackenvs.check(str(tree / 'spack_envs')) == 1
    err = capsys.readouterr().err.splitlines()
    manifest = f'{tree}/spack_envs/example-site/ib/spack.yaml'
    assert err == [
        f'{example}: environments:gnu-mvapich:extras:mpi: '
        f"'mpich', but {manifest} pins ['openmpi', 'mvapich']",
        f'{example}: environments:gnu-openmpi:modules: '
        f'openmpi/4.1.6 is not openmpi@5.0.8 that {manifest} pins',
    ]
