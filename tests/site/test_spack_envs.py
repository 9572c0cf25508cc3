"""spack_envs/: every environment follows the conventions, every lock matches.

None of this needs Spack: spack.yaml (with its includes) is read as YAML and
spack.lock as JSON.
"""

import json
import os
import runpy
import shutil

import pytest
from conftest import PROJECT

from clusterbench.cli import spackenvs
from clusterbench.site import spackenv

ENVS = spackenv.find_environments()
#: Systems with environments whose site configuration may not be written yet:
#: allowed only while site_configs/<system>.py does not exist.
PENDING_SYSTEMS = {'box'}


def test_the_expected_environments_exist():
    assert ENVS == [
        'box/compute-gnu-mpich',
        'box/compute-gnu-openmpi',
        'example-site/ib',
        'local/default-gnu-mpich',
        'local/default-gnu-openmpi',
    ]


@pytest.mark.parametrize('name', ENVS)
def test_environment_follows_the_conventions(name):
    env = spackenv.load(os.path.join(spackenv.ENVS_ROOT, name))
    assert spackenv.convention_problems(env) == []
    # Shared settings are included from common files, not copied.
    assert any(
        inc.endswith(os.path.join('common', 'benchmarks.yaml')) for inc in env.includes
    )


@pytest.mark.parametrize('name', ENVS)
def test_lock_matches_its_manifest(name):
    env = spackenv.load(os.path.join(spackenv.ENVS_ROOT, name))
    assert spackenv.lock_problems(env) == []
    lock = spackenv.load_lock(env.path)
    assert lock.data['spack']['version'] == '1.1.0'


@pytest.mark.parametrize('name', ENVS)
def test_every_benchmark_resolves_to_exactly_one_root(name):
    env = spackenv.load(os.path.join(spackenv.ENVS_ROOT, name))
    lock = spackenv.load_lock(env.path)
    for mpi in env.mpi_providers():
        for package in (
            'npb',
            'hpl',
            'hpcg',
            'osu-micro-benchmarks',
            'intel-mpi-benchmarks',
        ):
            spec, dag_hash = spackenv.find_root(
                lock, package, mpi=mpi, compiler='gcc', blas='openblas'
            )
            assert spec.startswith(package) and spec.endswith(f'^{mpi}')
            node = lock.node(dag_hash)
            assert [d['name'] for d in lock.dependencies(node, 'mpi')] == [mpi]
    spec, _ = spackenv.find_root(lock, 'stream', compiler='gcc')
    assert spec == 'stream+openmp stream_array_size=80000000'


def test_mpi_flavours_per_system():
    def mpis(name):
        return spackenv.load(os.path.join(spackenv.ENVS_ROOT, name)).mpi_providers()

    assert mpis('local/default-gnu-openmpi') == ['openmpi']
    assert mpis('local/default-gnu-mpich') == ['mpich']
    assert mpis('box/compute-gnu-mpich') == ['mpich']
    assert mpis('example-site/ib') == ['openmpi', 'mvapich']


def test_debian_stacks_are_externals_and_the_template_builds_its_mpis():
    def external(name, package):
        lock = spackenv.load_lock(os.path.join(spackenv.ENVS_ROOT, name))
        nodes = [
            n for n in lock.data['concrete_specs'].values() if n['name'] == package
        ]
        assert nodes, (name, package)
        return {bool(n.get('external')) for n in nodes}

    for package in ('openmpi', 'openblas', 'gcc'):
        assert external('local/default-gnu-openmpi', package) == {True}
    assert external('box/compute-gnu-mpich', 'mpich') == {True}
    for package in ('openmpi', 'mvapich', 'openblas'):
        assert external('example-site/ib', package) == {False}


def _site_configs():
    configs = {}
    for name in sorted(os.listdir(os.path.join(PROJECT, 'site_configs'))):
        if name.endswith('.py') and name != 'common.py':
            path = os.path.join(PROJECT, 'site_configs', name)
            configs[f'site_configs/{name}'] = runpy.run_path(path)['site_configuration']
    return configs


def test_site_configs_and_environments_name_each_other():
    configs = _site_configs()
    problems, unconfigured = spackenv.site_config_problems(configs)
    assert problems == []
    pending = {
        system
        for system in PENDING_SYSTEMS
        if not os.path.exists(os.path.join(PROJECT, 'site_configs', f'{system}.py'))
    }
    assert set(unconfigured) == pending | set(spackenv.TEMPLATE_SYSTEMS)
    assert 'local' in {s['name'] for c in configs.values() for s in c['systems']}


# -- the validator itself, on environments made here ---------------------------

GOOD = """\
spack:
  include: [../common.yaml]
  definitions:
  - mpis: [openmpi]
  specs:
  - matrix:
    - [$benchmarks]
    - [$^mpis]
  - stream +openmp stream_array_size=80000000
  packages:
    mpi:
      require: [openmpi]
  view: false
"""
COMMON = """\
definitions:
- benchmarks: [npb implementation=mpi, hpl, hpcg, osu-micro-benchmarks,
               intel-mpi-benchmarks]
concretizer:
  reuse: false
packages:
  c: {require: [gcc@12]}
  cxx: {require: [gcc@12]}
  fortran: {require: [gcc@12]}
  blas: {require: [openblas]}
  lapack: {require: [openblas]}
  all: {require: [target=x86_64]}
"""


@pytest.fixture
def made_env(tmp_path):
    def make(manifest=GOOD, common=COMMON):
        (tmp_path / 'common.yaml').write_text(common)
        env = tmp_path / 'env'
        env.mkdir(exist_ok=True)
        (env / 'spack.yaml').write_text(manifest)
        return spackenv.load(str(env))

    return make


def test_a_conforming_environment_has_no_problems(made_env):
    env = made_env()
    assert spackenv.convention_problems(env) == []
    assert env.specs[0] == 'npb implementation=mpi ^openmpi'
    assert env.specs[-1] == 'stream +openmp stream_array_size=80000000'


@pytest.mark.parametrize(
    'edit, problem',
    [
        (
            ('  fortran: {require: [gcc@12]}\n', ''),
            'packages:fortran:require: compiler not pinned',
        ),
        (
            ('  fortran: {require: [gcc@12]}', '  fortran: {require: [llvm@18]}'),
            'one compiler for every language',
        ),
        (
            ('  blas: {require: [openblas]}\n', ''),
            'packages:blas:require: pin one provider (e.g. openblas), got none',
        ),
        (('target=x86_64', 'target=zen4'), 'pin one portable target'),
        (('reuse: false', 'reuse: true'), 'concretizer:reuse: must be false'),
        ((' hpcg,', ''), "missing root 'hpcg ^openmpi'"),
    ],
)
def test_common_file_problems_are_named(made_env, edit, problem):
    env = made_env(common=COMMON.replace(*edit))
    problems = spackenv.convention_problems(env)
    assert len(problems) == 1 and problem in problems[0], problems
    assert problems[0].split(':')[0].endswith('spack.yaml')


def test_missing_mpi_pin_and_two_mpis_need_unify_false(made_env):
    env = made_env(
        GOOD.replace('      require: [openmpi]\n', '      buildable: false\n')
    )
    assert any(
        'packages:mpi:require: MPI provider not pinned' in p
        for p in spackenv.convention_problems(env)
    )
    two = GOOD.replace('mpis: [openmpi]', 'mpis: [openmpi, mvapich]').replace(
        'require: [openmpi]', 'require: [{one_of: [openmpi, mvapich]}]'
    )
    problems = spackenv.convention_problems(made_env(two))
    assert problems == [
        f'{made_env(two).manifest_path}: concretizer:unify: must be false with 2 '
        f'MPI providers'
    ]
    fixed = two.replace('  view: false', '  view: false\n  concretizer: {unify: false}')
    assert spackenv.convention_problems(made_env(fixed)) == []


def test_a_root_no_check_uses_is_named(made_env):
    env = made_env(GOOD.replace('  - stream', '  - gromacs ^openmpi\n  - stream'))
    assert spackenv.convention_problems(env) == [
        f"{env.manifest_path}: specs: 'gromacs ^openmpi' is not a benchmark of "
        f'the checks'
    ]


def test_broken_files_give_one_line_errors(made_env, tmp_path):
    with pytest.raises(
        spackenv.SpackEnvError, match=r'include\[0\]: \.\./nope.yaml: no such file'
    ):
        made_env(GOOD.replace('../common.yaml', '../nope.yaml'))
    with pytest.raises(
        spackenv.SpackEnvError, match=r'env/spack.yaml:4: YAML error: expected'
    ):
        made_env('spack:\n  specs:\n  - [unclosed\n')
    with pytest.raises(
        spackenv.SpackEnvError,
        match=r'spack.yaml: specs:matrix: \$nothing is not defined',
    ):
        made_env(GOOD.replace('$benchmarks', '$nothing'))


def test_spec_canonical_form_is_the_locks():
    assert spackenv.canonical_spec('stream +openmp stream_array_size=8') == (
        'stream+openmp stream_array_size=8'
    )
    assert spackenv.canonical_spec('x n=1 ~b +a ^mpich') == 'x+a~b n=1 ^mpich'
    assert spackenv.canonical_spec('npb implementation=mpi ^openmpi') == (
        'npb implementation=mpi ^openmpi'
    )


# -- locks that disagree with their manifest ---------------------------------


@pytest.fixture
def local_copy(tmp_path):
    """A copy of spack_envs/ whose local openmpi lock a test may spoil."""
    root = tmp_path / 'spack_envs'
    shutil.copytree(spackenv.ENVS_ROOT, root)
    env_dir = root / 'local' / 'default-gnu-openmpi'
    lock_path = env_dir / 'spack.lock'
    data = json.loads(lock_path.read_text())

    def spoil(change):
        change(data)
        lock_path.write_text(json.dumps(data))
        return spackenv.lock_problems(spackenv.load(str(env_dir)))

    return data, spoil


def _node(data, name):
    return next(n for n in data['concrete_specs'].values() if n['name'] == name)


def test_a_lock_missing_a_root_is_flagged(local_copy):
    data, spoil = local_copy
    problems = spoil(lambda d: d['roots'].pop())
    assert len(problems) == 1
    assert 'spack.lock: roots: differ from spack.yaml specs (missing' in problems[0]
    assert problems[0].endswith('re-concretize')


def test_a_lock_with_another_mpi_compiler_blas_or_target_is_flagged(local_copy):
    data, spoil = local_copy

    def change(d):
        _node(d, 'openmpi')['name'] = 'mpich'
        _node(d, 'gcc')['version'] = '13.1.0'
        _node(d, 'openblas')['name'] = 'netlib-lapack'
        _node(d, 'hpl')['arch']['target'] = 'zen4'

    problems = spoil(change)
    text = '\n'.join(problems)
    assert "mpi=mpich, pinned ['openmpi']" in text
    assert "c compiler gcc@13.1.0, pinned ['gcc@12.2.0']" in text
    assert "blas=netlib-lapack, pinned ['openblas']" in text
    assert 'hpl@2.3: target=zen4, x86_64 pinned' in text


def test_a_lock_that_is_not_a_lock_is_one_line(tmp_path):
    path = tmp_path / 'spack.lock'
    path.write_text('{"_meta": {}}')
    with pytest.raises(spackenv.SpackEnvError, match='file-type: not a spack-lockfile'):
        spackenv.load_lock(str(path))
    path.write_text('not json')
    with pytest.raises(spackenv.SpackEnvError, match='spack.lock: not JSON'):
        spackenv.load_lock(str(path))


def test_find_root_names_what_is_missing():
    lock = spackenv.load_lock(
        os.path.join(spackenv.ENVS_ROOT, 'local', 'default-gnu-openmpi')
    )
    with pytest.raises(
        spackenv.SpackEnvError,
        match='roots: none builds hpl with mpi=mvapich, compiler=gcc',
    ):
        spackenv.find_root(lock, 'hpl', mpi='mvapich', compiler='gcc')


# -- which environment a partition uses ----------------------------------------


def test_environment_lookup_by_extras_and_by_convention(tmp_path):
    root = tmp_path / 'spack_envs'
    for d in ('sys/part-gnu-openmpi', 'sys/part', 'other/shared'):
        (root / d).mkdir(parents=True)
        (root / d / 'spack.yaml').write_text('spack: {}\n')

    def lookup(environ, extras=None):
        path = spackenv.environment_for(
            'sys', 'part', environ, extras, str(root), project=str(tmp_path)
        )
        return os.path.relpath(path, root) if path else None

    assert lookup('gnu-openmpi') == 'sys/part-gnu-openmpi'
    assert lookup('gnu-mvapich') == 'sys/part'
    assert lookup('x', {'spack_env': 'spack_envs/other/shared'}) == 'other/shared'
    assert lookup('x', {'spack_env': {'x': 'spack_envs/other/shared'}}) == (
        'other/shared'
    )
    assert lookup('y', {'spack_env': {'x': 'spack_envs/other/shared'}}) == 'sys/part'
    assert lookup('x', {'spack_env': 'spack_envs/none'}) is None


def test_site_config_cross_check_names_both_directions(tmp_path):
    root = tmp_path / 'spack_envs'
    for d in ('sys/part-a', 'sys/part-stale', 'later/p-a'):
        (root / d).mkdir(parents=True)
        (root / d / 'spack.yaml').write_text('spack: {}\n')
    config = {
        'systems': [
            {'name': 'sys', 'partitions': [{'name': 'part', 'environs': ['a', 'b']}]}
        ]
    }
    problems, unconfigured = spackenv.site_config_problems(
        {'site_configs/sys.py': config}, str(root), str(tmp_path)
    )
    assert problems == [
        'site_configs/sys.py: systems:sys:partitions:part:environs:b: no Spack '
        f'environment (expected {root}/sys/part/spack.yaml, or part-b/spack.yaml '
        'for b alone)',
        f'{root}/sys/part-stale/spack.yaml: no partition of system '
        "'sys' uses this environment",
    ]
    assert unconfigured == ['later']


def test_readme_explains_reconcretizing():
    with open(os.path.join(spackenv.ENVS_ROOT, 'README.md')) as f:
        text = f.read()
    assert 'concretize -f --fresh' in text
    assert 'spack repo add' in text


def test_the_command_line_check(tmp_path, capsys):
    assert spackenvs.check() == 0
    assert 'Spack environments and their locks follow' in capsys.readouterr().out
    root = tmp_path / 'spack_envs'
    shutil.copytree(spackenv.ENVS_ROOT, root)
    yaml_path = root / 'box' / 'compute-gnu-mpich' / 'spack.yaml'
    yaml_path.write_text(
        yaml_path.read_text().replace('require: [mpich]', 'buildable: true')
    )
    assert spackenvs.check(str(root)) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == [f'{yaml_path}: packages:mpi:require: MPI provider not pinned']
