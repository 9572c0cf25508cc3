"""Two install paths: setup.sh's profiles, and a wheel installed without root.

The wheel test builds clusterbench's wheel from a copy of the checkout,
installs it into a fresh venv (no source tree on its path) and runs the
installed command and ReFrame on the packaged site config and checks from a
directory outside the source tree. ReFrame and the other dependencies come
from the project's venv through a .pth file, so the test needs no network.
"""

import os
import shutil
import subprocess
import sys
import sysconfig

import pytest
from conftest import PROJECT
from rfm import captured

SETUP = os.path.join(PROJECT, 'scripts', 'setup.sh')
#: Only the tests need these; `make run` must not install them.
TEST_ONLY = {
    'slurm-wlm',
    'slurmdbd',
    'munge',
    'mariadb-server',
    'chromium',
    'valgrind',
    'nftables',
}


def profile(name):
    proc = captured(['bash', SETUP, name, '--list'], timeout=30)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def test_run_profile_installs_only_what_the_suite_needs():
    run = profile('run')
    print('run profile:', ' '.join(run))
    assert set(run) == {
        'make',
        'gcc',
        'gfortran',
        'openmpi-bin',
        'libopenmpi-dev',
        'mpich',
        'libmpich-dev',
        'libopenblas-dev',
        'hpcc',
        'netpipe-openmpi',
    }
    assert not TEST_ONLY & set(run)


def test_test_profile_adds_the_test_only_packages():
    run, test = profile('run'), profile('test')
    print('test profile:', ' '.join(test))
    assert set(run) < set(test)
    assert TEST_ONLY <= set(test)


def test_setup_refuses_an_unknown_profile():
    proc = captured(['bash', SETUP, 'everything'], timeout=30)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f'usage: {SETUP} run|test [--list]'


def test_make_run_and_make_test_use_their_profiles():
    with open(os.path.join(PROJECT, 'Makefile')) as f:
        text = f.read()
    assert 'run: setup-run\n' in text
    assert '\t@scripts/setup.sh run\n' in text
    assert '\t@scripts/setup.sh test\n' in text
    assert 'test: setup ' in text


def test_requires_python_is_what_reframe_needs():
    import tomllib

    with open(os.path.join(PROJECT, 'pyproject.toml'), 'rb') as f:
        meta = tomllib.load(f)
    assert meta['project']['requires-python'] == '>=3.10'
    assert meta['tool']['ruff']['target-version'] == 'py310'


def _copy_checkout(dest):
    anywhere = shutil.ignore_patterns(
        '.git', '.venv', 'build', 'dist', '*.egg-info', '__pycache__'
    )

    def ignore(directory, names):
        # The checkout's results/, not the package clusterbench/results/.
        top = {'results'} & set(names) if directory == PROJECT else set()
        return anywhere(directory, names) | top

    shutil.copytree(PROJECT, dest, ignore=ignore)


@pytest.fixture(scope='module')
def installed(tmp_path_factory):
    """A fresh venv with only the wheel installed: (venv dir, environment)."""
    tmp = tmp_path_factory.mktemp('wheel')
    source = tmp / 'checkout'
    _copy_checkout(source)
    env = {k: v for k, v in os.environ.items() if k != 'PYTHONPATH'}
    no_path = {'PYTHONPATH': None}
    build = captured(
        [sys.executable, '-m', 'pip', 'wheel', '--no-deps', '--no-build-isolation']
        + ['-q', '-w', tmp / 'dist', source],
        env=no_path,
        cwd=tmp,
        timeout=300,
    )
    assert build.returncode == 0, build.stderr
    (wheel,) = (tmp / 'dist').glob('clusterbench-*.whl')
    venv = tmp / 'venv'
    subprocess.run(
        [sys.executable, '-m', 'venv', '--without-pip', str(venv)],
        check=True,
        timeout=120,
    )
    python = venv / 'bin' / 'python'
    install = captured(
        [sys.executable, '-m', 'pip', '--python', python, 'install', '-q']
        + ['--no-deps', '--no-index', wheel],
        env=no_path,
        timeout=300,
    )
    assert install.returncode == 0, install.stderr
    # The dependencies (ReFrame, PyYAML, ...) from the project's venv: a path
    # entry after the fresh venv's own site-packages, so the wheel's
    # clusterbench comes first (the project's editable install is not seen:
    # .pth files of an appended path are not read).
    site = captured(
        [python, '-c', 'import sysconfig; print(sysconfig.get_path("purelib"))'],
        timeout=60,
    ).stdout.strip()
    assert site
    with open(os.path.join(site, 'project-venv-deps.pth'), 'w') as f:
        f.write(sysconfig.get_path('purelib') + '\n')
    # What pip writes for reframe's console script, for the fresh venv.
    reframe = venv / 'bin' / 'reframe'
    reframe.write_text(
        f'#!{python}\nimport sys\nfrom reframe.frontend.cli import main\n'
        'sys.exit(main())\n'
    )
    reframe.chmod(0o755)
    shutil.rmtree(source)  # nothing may need the checkout the wheel came from
    outside = tmp / 'elsewhere'
    outside.mkdir()
    return venv, env, outside


def _run(installed, *cmd, more=None):
    venv, env, outside = installed
    env = {**env, 'PATH': f'{venv / "bin"}:{env["PATH"]}', **(more or {})}
    # Only the fresh venv's environment (env is complete: none of this one's).
    env.update({k: None for k in os.environ if k not in env})
    return captured(list(cmd), env=env, cwd=outside, timeout=300)


def test_installed_wheel_runs_from_outside_the_source_tree(installed):
    venv = installed[0]
    help_ = _run(installed, 'clusterbench', '--help')
    assert help_.returncode == 0, help_.stderr
    assert 'paths' in help_.stdout and 'site' in help_.stdout
    where = _run(
        installed, 'python', '-c', 'import clusterbench; print(clusterbench.__file__)'
    )
    assert where.stdout.startswith(str(venv)), where.stdout
    paths = _run(installed, 'clusterbench', 'paths')
    assert paths.returncode == 0, paths.stderr
    assert '(packaged copy)' in paths.stdout
    checks = _run(installed, 'clusterbench', 'paths', 'checks').stdout.strip()
    configs = _run(installed, 'clusterbench', 'paths', 'site_configs').stdout.strip()
    assert checks.startswith(str(venv)) and checks.endswith('share/reframe_checks')
    for name in ('local.py', 'box.py', 'common.py', 'example-site.py'):
        assert os.path.isfile(os.path.join(configs, name)), name
    listing = _run(
        installed,
        'reframe',
        '-C',
        os.path.join(configs, 'local.py'),
        '-c',
        checks,
        '-l',
        '--nocolor',
    )
    assert listing.returncode == 0, listing.stdout + listing.stderr
    assert '- CGSolverCheck' in listing.stdout
    assert '- HPCCCheck' in listing.stdout
    assert 'Found ' in listing.stdout
    # The packaged references and our C sources travel with the checks.
    tree = os.path.dirname(checks)
    assert os.path.isfile(
        os.path.join(tree, 'reference_data', 'local', 'cgsolver.yaml')
    )
    assert os.path.isfile(os.path.join(tree, 'src', 'cgsolver', 'Makefile'))


def test_readme_adoption_section_in_order():
    with open(os.path.join(PROJECT, 'README.md')) as f:
        text = f.read()
    start = text.index('## Adopting clusterbench at your centre')
    section = text[start : text.index('\n## ', start + 1)]
    steps = ['**Install**', '**Generate the site config**', '**First run**']
    steps.append('**First references**')
    positions = [section.index(step) for step in steps]
    assert positions == sorted(positions)
    assert 'pip install' in section and 'clusterbench site init' in section
    assert 'make dist' in section and 'clusterbench paths' in section


def test_the_wheels_defaults_find_its_packaged_tree(installed):
    # No --config, --checks or --references: the packaged ones (issue 30).
    outside = installed[2]
    ran = _run(
        installed,
        'clusterbench',
        'run',
        '--system',
        'local',
        '--',
        '-n',
        'CGSolverCheck%stencil=7%variant=classic%ranks_per_node=1',
        '-p',
        'gnu-openmpi',
        '-S',
        'problem_class=S',
        '-S',
        'judge_conditions=false',
        more={'CLUSTERBENCH_LOCK_DIR': str(outside), 'RFM_REFERENCE_PREFIX': None},
    )
    assert ran.returncode in (0, 3), ran.stdout[-3000:] + ran.stderr
    assert f'references: {installed[0]}' in ran.stdout
    # The history where the docs say: results/ of the launch directory.
    assert (outside / 'results' / 'results.db').is_file()
    assert list((outside / 'results' / 'perflogs' / 'local').rglob('*.log'))
    check = _run(installed, 'clusterbench', 'references', 'check')
    assert check.returncode == 0, check.stdout + check.stderr
    envs = _run(installed, 'clusterbench', 'spack-envs')
    assert envs.returncode == 0, envs.stdout + envs.stderr
    assert 'Spack environments and their locks follow the conventions' in envs.stdout
