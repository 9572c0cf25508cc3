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
from conftest import FIXTURES, PROJECT
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


def _run(installed, *cmd, more=None, cwd=None):
    venv, env, outside = installed
    env = {**env, 'PATH': f'{venv / "bin"}:{env["PATH"]}', **(more or {})}
    # Only the fresh venv's environment (env is complete: none of this one's).
    env.update({k: None for k in os.environ if k not in env})
    return captured(list(cmd), env=env, cwd=cwd or outside, timeout=300)


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
    # --history reads that database through the wheel's site config.
    (report,) = (outside / 'results' / 'local').glob('*/report.json')
    since = ('--history', 'now-1d:now')
    compare = _run(installed, 'clusterbench', 'compare', str(report), *since)
    assert compare.returncode in (0, 3), compare.stdout[-3000:] + compare.stderr
    assert 'CGSolverCheck' in compare.stdout
    trend = _run(installed, 'clusterbench', 'trend', 'iterations$', *since)
    assert trend.returncode == 0, trend.stdout + trend.stderr
    assert 'CGSolverCheck' in trend.stdout and '1 session' in trend.stdout
    html = _run(installed, 'clusterbench', 'report', *since)
    assert html.returncode == 0, html.stdout + html.stderr
    assert (outside / 'results' / 'report.html').is_file()
    check = _run(installed, 'clusterbench', 'references', 'check')
    assert check.returncode == 0, check.stdout + check.stderr
    envs = _run(installed, 'clusterbench', 'spack-envs')
    assert envs.returncode == 0, envs.stdout + envs.stderr
    assert 'Spack environments and their locks follow the conventions' in envs.stdout


#: A whole stored session of an AMD Zen 3 host, for the commands that need
#: no run.
SESSION = os.path.join(FIXTURES, 'sessions', 'AMD-25-1', 'report.json')


def _files(directory):
    """The files under *directory*, compiled bytecode aside."""
    return {
        os.path.join(root, name)
        for root, dirs, names in os.walk(directory)
        for name in names
        if not name.endswith('.pyc')
    }


def test_every_command_reads_the_wheels_defaults(installed, fixtures_dir, tmp_path):
    # No --config, --checks or --references, from a directory that has none
    # of them (issue 30): what a command reads is the wheel's; what it writes
    # goes where it was started, never into the venv.
    venv = installed[0]
    before = _files(venv)
    tree = _run(installed, 'clusterbench', 'paths', 'references').stdout.strip()
    tree = os.path.dirname(tree)
    here = tmp_path / 'anywhere'
    here.mkdir()

    def clusterbench(*args):
        ran = _run(
            installed,
            'clusterbench',
            *args,
            cwd=here,
            more={'RFM_REFERENCE_PREFIX': None, 'CLUSTERBENCH_LOCK_DIR': str(here)},
        )
        assert 'Traceback' not in ran.stderr, ran.stderr
        return ran

    compare = clusterbench('compare', SESSION)
    assert compare.returncode in (0, 1, 3), compare.stderr
    assert 'HPCCCheck' in compare.stdout
    trend = clusterbench('trend', 'hpl$', SESSION)
    assert trend.returncode == 0, trend.stderr
    assert (here / 'results' / 'trend.csv').is_file()
    report = clusterbench('report', SESSION)
    assert report.returncode == 0, report.stderr
    assert (here / 'results' / 'report.html').is_file()
    # Judged against the wheel's references (no stored outputs: FAILED rows).
    replay = clusterbench('replay', SESSION)
    assert replay.returncode == 1, replay.stderr
    assert (
        f"references: {tree}/reference_data (clusterbench's own, packaged copy: "
        'no reference_data/ here)\n'
    ) in replay.stdout
    # The wheel's site config and checks: the config named in the one line.
    ab = clusterbench('ab', '--partitions', 'default', 'nosuch')
    assert ab.returncode == 2
    assert ab.stderr.strip() == (
        'clusterbench: error: --system local:nosuch: local has no partition '
        f'nosuch in {tree}/site_configs/local.py (it has default)'
    )
    # The battery: the wheel's config and checks, its directory here (no
    # test selected: ReFrame loads both, runs nothing and writes no report).
    battery = clusterbench(
        'acceptance', 'battery', '--system', 'local', '--only', 'fabric',
        '--', '-n', '^NoSuchCheck$',
    )  # fmt: skip
    assert battery.returncode == 2, battery.stdout + battery.stderr
    (log,) = (here / 'results' / 'acceptance' / 'local').glob('*/fabric/reframe.out')
    assert str(log) in battery.stderr
    setup = log.read_text()
    assert f'{tree}/site_configs/local.py' in setup, setup
    assert f'{tree}/reframe_checks/fabric.py' in setup, setup
    # References are written here, never into the wheel's copy.
    proposal = clusterbench('references', 'update', '--from', SESSION)
    assert proposal.returncode == 0, proposal.stderr
    assert proposal.stdout.startswith(
        "references: reference_data (the current directory's, made when written)\n"
    )
    assert not (here / 'reference_data').exists()
    # One session: written only when forced (tests/references/test_rule_of_three.py).
    written = clusterbench(
        'references', 'update', '--from', SESSION, '--write', '--force'
    )
    assert written.returncode == 0, written.stderr
    assert (here / 'reference_data' / 'local' / 'hpcc.yaml').is_file()
    check = clusterbench('references', 'check')
    assert check.returncode == 0, check.stdout + check.stderr
    here_now = (
        "references: reference_data (the current directory's: references of local)"
    )
    assert check.stdout.startswith(f'{here_now}\n')
    baseline = clusterbench('baseline', '--dry-run', '--from', SESSION)
    assert baseline.returncode == 0, baseline.stderr
    assert f'\n{here_now}\n' in baseline.stdout
    envs = clusterbench('spack-envs')
    assert envs.returncode == 0, envs.stdout + envs.stderr
    assert _files(venv) == before
