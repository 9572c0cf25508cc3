"""The NPB check run for real through ReFrame on ``local``.

CI has no NPB (its source cannot be downloaded here), so the source-tree mode
is exercised with tests/data/fake_npb: a STAND-IN tree of our own with NPB's
build interface (make <bench> CLASS=<class>, config/make.def) whose tiny
program prints NPB-format output; it is not NPB. The installed-binaries and
Spack modes reuse binaries built from it, Spack through a stand-in ``spack``
script. With ``CLUSTERBENCH_NPB_SOURCE`` pointing at a real NPB 3.4 (or 3.3)
MPI tree, the real benchmarks are built and run at class S as well.
"""

import os
import re
import shlex
import shutil
import socket
import subprocess

import pytest
from conftest import PROJECT
from rfm import reframe
from test_npb_makedef import copy_tree

from clusterbench.bench import npb_makedef
from clusterbench.checks import npb as checks_npb
from clusterbench.checks import npbinstalled
from clusterbench.parsers import npb
from clusterbench.results import runreport

pytestmark = pytest.mark.integration

CHECKS = 'reframe_checks/npb.py'
FAKE_TREE = os.path.join(PROJECT, 'tests', 'data', 'fake_npb')
REAL_TREE = os.environ.get('CLUSTERBENCH_NPB_SOURCE')
needs_openmpi = pytest.mark.skipif(
    not shutil.which('mpicc.openmpi'), reason='Open MPI compilers not installed'
)


def npb_run(prefix, *args, env=None):
    # No release tarball here (a loopback port nothing listens on), whatever
    # the network: these tests are about the other providers.
    args = ('-S', f'npb_url=http://127.0.0.1:{_closed_port()}/NPB3.4.3.tar.gz', *args)
    env = {'CLUSTERBENCH_CACHE': os.path.join(prefix, 'cache'), **(env or {})}
    env.setdefault('CLUSTERBENCH_MIRROR', '')
    rc, out, report = reframe(prefix, *args, checks=CHECKS, env=env)
    assert report is not None, out
    assert 'Traceback' not in out, out
    return rc, out, report


def _closed_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def _testcases(report):
    """The test cases but the release fixture's (tested in test_release_sources)."""
    return [
        c
        for c in report['runs'][0]['testcases']
        if not c['display_name'].startswith('NPBRelease')
    ]


def cases(report, fixtures=False):
    return {
        (c['display_name'].split()[0], _bench(c['display_name']), c['environ']): c
        for c in _testcases(report)
        if c['fixture'] == fixtures
    }


def _bench(name):
    return re.search(r'benchmark=(\w+)', name).group(1)


def figures(case):
    """The recorded figures of a test case (ReFrame lists unset ones as None)."""
    return {
        k.rsplit(':', 1)[1]: v[0]
        for k, v in (case['perfvalues'] or {}).items()
        if v[0] is not None
    }


def skip_lines(out):
    return [line for line in out.splitlines() if 'SKIP' in line]


def test_without_npb_everything_is_skipped_with_one_line(tmp_path):
    rc, out, report = npb_run(tmp_path)
    assert rc == 0, out
    runs = cases(report)
    assert len(runs) == 16  # 8 benchmarks x 2 environments
    assert all(c['result'] == 'skip' for c in _testcases(report))
    reasons = [line for line in skip_lines(out) if 'NPB not provided' in line]
    assert len(reasons) == 16
    assert '-S npb_source=<unpacked NPB3.4-MPI tree>' in reasons[0]
    assert 'FAIL' not in out
    # The skip happens in the NPBProvided fixture; each NPB row names why.
    rows = failure_rows(tmp_path)
    assert len(rows) == 16
    for row in rows:
        assert row.phase == runreport.SKIPPED
        assert row.reason.startswith('NPB not provided: give -S npb_source=<'), row


def failure_rows(prefix):
    """The rows of tests that recorded no figure, as the verdict table has them."""
    return runreport.figures_and_failures(os.path.join(prefix, 'report.json'))[1]


@pytest.fixture(scope='module')
def fake_session(tmp_path_factory):
    prefix = tmp_path_factory.mktemp('fake')
    return npb_run(
        prefix,
        '-S', f'npb_source={FAKE_TREE}', '-S', 'npb_class=S',
        '-n', 'benchmark=(bt|cg|is)',
    )  # fmt: skip


def test_source_tree_builds_once_per_benchmark_and_runs(fake_session):
    rc, out, report = fake_session
    assert rc == 0, out
    builds, runs = cases(report, fixtures=True), cases(report)
    assert set(builds) == {
        ('NPBProvided', b, e) for b in ('bt', 'cg', 'is')
        for e in ('gnu-openmpi', 'gnu-mpich')
    }  # fmt: skip
    assert len(runs) == 6
    for (_, bench, _), case in runs.items():
        assert case['result'] == 'pass', case['fail_reason']
        assert case['num_tasks'] == (1 if bench == 'bt' else 2)
        assert case['benchmark'] == bench and case['npb_class'] == 'S'
        values = figures(case)
        assert set(values) == {'mops_total', 'mops_per_process', 'time'}
        assert values['mops_total'] == pytest.approx(
            values['mops_per_process'] * case['num_tasks'], rel=1e-3
        )


def test_makedef_comes_from_the_programming_environment(fake_session):
    _, _, report = fake_session
    for (_, _, environ), case in cases(report, fixtures=True).items():
        # config/make.def as the build used it, kept with the results.
        path = os.path.join(case['outputdir'], 'make.def')
        with open(path) as f:
            makedef = f.read()
        mpi = environ.split('-')[1]
        assert f'MPIFC = mpif90.{mpi}\n' in makedef
        assert f'MPICC = mpicc.{mpi}\n' in makedef
        # gfortran 12 behind the wrappers: NPB's MPI calls need the flag.
        assert 'FFLAGS = -O3 -fallow-argument-mismatch\n' in makedef
    for case in cases(report).values():
        with open(os.path.join(case['outputdir'], 'rfm_job.out')) as f:
            text = f.read()
        assert 'FFLAGS       = -O3 -fallow-argument-mismatch' in text
        assert npb.verify(text, 'out', case['benchmark'], 'S', case['num_tasks'])


@pytest.mark.parametrize(
    'env, reason',
    [
        # NPB says SUCCESSFUL, but zeta is not the official one of class S.
        ({'FAKE_NPB_ZETA': '0.8597177517865E+01'}, 'is not the official value'),
    ],
)
def test_an_unverified_run_fails_and_records_nothing(tmp_path, env, reason):
    rc, out, report = npb_run(
        tmp_path, '-S', f'npb_source={FAKE_TREE}', '-S', 'npb_class=S',
        '-n', 'benchmark=cg', '-p', 'gnu-openmpi', env=env,
    )  # fmt: skip
    assert rc != 0
    (case,) = cases(report).values()
    assert case['fail_phase'] == 'sanity'
    assert reason in case['fail_reason'] and 'rfm_job.out: ' in case['fail_reason']
    assert not figures(case)


def test_an_invalid_process_count_given_explicitly_fails_naming_it(tmp_path):
    rc, out, report = npb_run(
        tmp_path, '-S', f'npb_source={FAKE_TREE}', '-S', 'npb_class=S',
        '-S', 'npb_ranks=3', '-n', 'benchmark=(bt|lu|ep)', '-p', 'gnu-openmpi',
    )  # fmt: skip
    assert rc != 0, out
    runs = cases(report)
    assert runs[('NPBCheck', 'ep', 'gnu-openmpi')]['result'] == 'pass'
    assert runs[('NPBCheck', 'ep', 'gnu-openmpi')]['num_tasks'] == 3
    for bench in ('bt', 'lu'):
        case = runs[('NPBCheck', bench, 'gnu-openmpi')]
        assert case['result'] == 'fail' and case['fail_phase'] == 'setup'
    rows = {r.test.split('=')[-1]: r for r in failure_rows(tmp_path)}
    assert set(rows) == {'bt', 'lu'}
    assert rows['bt'].phase == 'setup'
    assert rows['bt'].reason == (
        'npb_ranks=3: BT needs a square number of processes (1, 4, 9, 16, ...), not 3'
    )
    assert rows['lu'].reason.startswith(
        'npb_ranks=3: LU needs a process count x*y with y <= x <= 2y'
    )


def test_defaults_npb_excludes_are_skipped_with_the_reason_on_the_row(tmp_path):
    # Class E does not fit this machine's memory: the fixture is skipped (FT's
    # smallest valid count already needs too much), and so is the run.
    rc, out, report = npb_run(
        tmp_path, '-S', f'npb_source={FAKE_TREE}', '-S', 'npb_class=E',
        '-n', 'benchmark=(ft|is)', '-p', 'gnu-openmpi',
    )  # fmt: skip
    assert rc == 0, out
    skipped = '\n'.join(skip_lines(out))
    assert re.search(r'FT class E on 1 processes needs about \d+\.\d GiB', skipped)
    assert 'IS class E: no valid process count up to' in skipped or (
        'IS class E on 64 processes needs about' in skipped
    )
    (ft_build,) = [
        c for (_, b, _), c in cases(report, fixtures=True).items() if b == 'ft'
    ]
    assert ft_build['result'] == 'skip'
    assert ft_build['skip_reason'].startswith('FT class E on 1 processes needs about')
    rows = {r.test.split('=')[-1]: r for r in failure_rows(tmp_path)}
    assert set(rows) == {'ft', 'is'}
    assert rows['ft'].phase == runreport.SKIPPED
    assert rows['ft'].reason == ft_build['skip_reason']
    assert all('no reason given' not in r.reason for r in rows.values())


def test_33_tree_builds_for_the_session_process_count(tmp_path):
    tree = copy_tree(tmp_path, npb33=True)
    rc, out, report = npb_run(
        tmp_path / 'run', '-S', f'npb_source={tree}', '-S', 'npb_class=S',
        '-n', 'benchmark=cg', '-p', 'gnu-openmpi', '-P', 'npb_ranks=1,2',
        '--keep-stage-files',
    )  # fmt: skip
    assert rc == 0, out
    runs = [c for c in _testcases(report) if not c['fixture']]
    assert sorted(c['result'] for c in runs) == ['pass', 'skip']
    assert [c['num_tasks'] for c in runs if c['result'] == 'pass'] == [2]
    assert 'compiles the process count in and was built for 2' in out
    (build,) = [c for c in _testcases(report) if c['fixture']]
    with open(os.path.join(build['stagedir'], npb_makedef.MAKEDEF)) as f:
        assert 'MPIF77 = mpif90.openmpi\n' in f.read()


def test_a_class_the_build_did_not_make_is_skipped_with_reason(tmp_path):
    rc, out, report = npb_run(
        tmp_path, '-S', f'npb_source={FAKE_TREE}', '-P', 'npb_class=S',
        '-n', 'benchmark=is', '-p', 'gnu-openmpi',
    )  # fmt: skip
    assert rc == 0, out
    assert (
        'the source build made class C: set the class of the session with '
        '-S npb_class=S' in out
    )


@pytest.fixture(scope='module')
def fake_binaries(tmp_path_factory):
    """cg.S.x and is.S.x of the stand-in tree, built with Open MPI."""
    tree = tmp_path_factory.mktemp('binaries') / 'tree'
    shutil.copytree(FAKE_TREE, tree)
    info = npb_makedef.inspect_tree(str(tree))
    flags = npb_makedef.fortran_flags(
        '-O3', npb_makedef.gfortran_major('mpif90.openmpi')
    )
    (tree / 'make.def.t').write_text(
        npb_makedef.makedef(info, 'mpif90.openmpi', 'mpicc.openmpi', fflags=flags)
    )
    prefix = tree.parent / 'prefix' / 'bin'
    prefix.mkdir(parents=True)
    for bench in ('cg', 'is'):
        script = ' && '.join(
            npb_makedef.build_commands(info, bench, 'S', 2, 'make.def.t')
        )
        subprocess.run(['sh', '-c', script], cwd=tree, check=True, capture_output=True)
        shutil.copy(tree / 'bin' / f'{bench}.S.x', prefix)
    return prefix


@needs_openmpi
def test_installed_binaries_in_a_prefix(tmp_path, fake_binaries):
    rc, out, report = npb_run(
        tmp_path, '-S', f'npb_prefix={fake_binaries.parent}', '-S', 'npb_class=S',
        '-n', 'benchmark=(cg|mg)', '-p', 'gnu-openmpi',
    )  # fmt: skip
    assert rc == 0, out
    runs = cases(report)
    cg = runs[('NPBCheck', 'cg', 'gnu-openmpi')]
    assert cg['result'] == 'pass' and figures(cg)['mops_total'] > 0
    assert cg['executable'] == str(fake_binaries / 'cg.S.x')
    assert f'npb_prefix {fake_binaries.parent} has no mg.S.*' in out


@needs_openmpi
def test_a_prefix_relative_to_the_launch_directory_runs(tmp_path, fake_binaries):
    # ReFrame runs from PROJECT (tests/rfm.py) and each job in its stage.
    relative = os.path.relpath(fake_binaries.parent, PROJECT)
    rc, out, report = npb_run(
        tmp_path, '-S', f'npb_prefix={relative}', '-S', 'npb_class=S',
        '-n', 'benchmark=cg', '-p', 'gnu-openmpi',
    )  # fmt: skip
    assert rc == 0, out
    cg = cases(report)[('NPBCheck', 'cg', 'gnu-openmpi')]
    assert (cg['result'], cg['executable']) == ('pass', str(fake_binaries / 'cg.S.x'))


#: A directory name that runs two commands if a script uses it unquoted.
HOSTILE = 'a b;touch pwned1;$(touch pwned2)'
MARKERS = ('pwned1', 'pwned2')


def markers_under(*roots):
    return [
        os.path.join(root, name)
        for top in roots
        for root, _, files in os.walk(top)
        for name in files
        if name in MARKERS
    ]


@needs_openmpi
def test_a_prefix_with_shell_syntax_runs_nothing_and_the_benchmark_works(
    tmp_path, fake_binaries
):
    prefix = tmp_path / HOSTILE
    shutil.copytree(fake_binaries, prefix / 'bin')
    rc, out, report = npb_run(
        tmp_path / 'run', '-S', f'npb_prefix={prefix}', '-S', 'npb_class=S',
        '-n', 'benchmark=cg', '-p', 'gnu-openmpi', '--keep-stage-files',
    )  # fmt: skip
    assert rc == 0, out
    (cg,) = cases(report).values()
    assert cg['result'] == 'pass', cg['fail_reason']
    assert figures(cg)['mops_total'] > 0
    assert shlex.split(cg['executable']) == [str(prefix / 'bin' / 'cg.S.x')]
    # The build's `ls` and the job script were run (kept), and ran nothing else.
    (build,) = cases(report, fixtures=True).values()
    for case in (build, cg):
        assert os.path.isdir(case['stagedir'])
    assert markers_under(tmp_path, PROJECT) == []


def test_a_module_name_with_shell_syntax_fails_naming_it(tmp_path):
    rc, out, report = npb_run(
        tmp_path, '-S', f'npb_module={HOSTILE}', '-S', 'npb_class=S',
        '-n', 'benchmark=cg', '-p', 'gnu-openmpi',
    )  # fmt: skip
    assert rc != 0
    (build,) = cases(report, fixtures=True).values()
    assert build['result'] == 'fail' and build['fail_phase'] == 'setup'
    assert f'npb_module={HOSTILE!r}: not a module name' in build['fail_reason']
    assert markers_under(tmp_path, PROJECT) == []


SPACK_STUB = """\
#!/bin/sh
# A stand-in for spack (tests/checks/test_npb_check.py): records its calls.
printf '%s\\n' "$*" >> {log}
case "$*" in
  *" load --sh "*) echo "export PATH={bindir}:\\$PATH" ;;
  *" install"*) cat > "$2/spack.lock" <<'LOCK'
{{"_meta": {{"file-type": "spack-lockfile"}},
 "roots": [{{"hash": "abc123", "spec": "npb implementation=mpi names=cg classes=S"}}],
 "concrete_specs": {{"abc123": {{"name": "npb", "version": "3.4.3"}}}}}}
LOCK
  ;;
esac
exit 0
"""


@needs_openmpi
@pytest.mark.parametrize('where', ['plain', HOSTILE])
def test_spack_builds_npb_in_the_partition_environment(tmp_path, fake_binaries, where):
    # Spack and the environment in a directory named `where`: a hostile name
    # reaches the build and job scripts (PATH, spack -e) and must run nothing.
    stub = tmp_path / where / 'stub' / 'spack'
    stub.parent.mkdir(parents=True)
    log = tmp_path / 'calls.log'
    stub.write_text(SPACK_STUB.format(log=log, bindir=fake_binaries))
    stub.chmod(0o755)
    env_dir = tmp_path / where / 'env'
    env_dir.mkdir()
    (env_dir / 'spack.yaml').write_text('spack:\n  specs: []\n  view: false\n')
    rc, out, report = npb_run(
        tmp_path / 'run', '-S', f'npb_spack_env={env_dir}', '-S', 'npb_class=S',
        '-S', 'build_mode=spack', '-n', 'benchmark=cg', '-p', 'gnu-openmpi',
        env={'CLUSTERBENCH_SPACK': str(stub)},
    )  # fmt: skip
    assert rc == 0, out
    (run,) = cases(report).values()
    (build,) = cases(report, fixtures=True).values()
    assert run['result'] == 'pass' and figures(run)['mops_total'] > 0
    spec = 'npb implementation=mpi names=cg classes=S'
    calls = log.read_text().splitlines()
    assert f'-e . add {spec}' in calls
    assert '-e . install' in calls
    assert any(c.endswith(f'load --sh {spec}') for c in calls)
    # The concretized lock is kept with the results, its root hash logged
    # with the build and the run.
    assert os.path.isfile(os.path.join(build['outputdir'], 'spack.lock'))
    for case in (build, run):
        assert case['build_provider'] == 'spack'
        assert case['spack_spec'] == spec
        assert case['spack_root_hash'] == 'abc123'
    assert run['mpi'] == 'openmpi' and run['compiler'] == 'gcc'
    assert markers_under(tmp_path, PROJECT) == []


def test_without_build_mode_spack_a_spack_on_path_is_not_used(tmp_path):
    stub = tmp_path / 'stub' / 'spack'
    stub.parent.mkdir()
    log = tmp_path / 'calls.log'
    stub.write_text(SPACK_STUB.format(log=log, bindir=tmp_path))
    stub.chmod(0o755)
    rc, out, report = npb_run(
        tmp_path / 'run', '-n', 'benchmark=cg', '-p', 'gnu-openmpi',
        env={'CLUSTERBENCH_SPACK': str(stub), 'PATH': f'{stub.parent}:'
             + os.environ['PATH']},
    )  # fmt: skip
    assert rc == 0, out
    (run,) = cases(report).values()
    assert run['result'] == 'skip'
    assert 'build it with -S build_mode=spack' in out
    assert not log.exists()


def test_build_mode_spack_without_spack_is_one_line(tmp_path):
    path = os.pathsep.join(
        d
        for d in os.environ['PATH'].split(os.pathsep)
        if not os.access(os.path.join(d, 'spack'), os.X_OK)
    )
    rc, out, report = npb_run(
        tmp_path, '-S', 'build_mode=spack', '-n', 'benchmark=cg', '-p', 'gnu-openmpi',
        env={'CLUSTERBENCH_SPACK': '', 'PATH': path},
    )  # fmt: skip
    assert rc == 0, out
    (run,) = cases(report).values()
    assert run['result'] == 'skip'
    assert (
        'spack not on PATH (nor $CLUSTERBENCH_SPACK): npb is built only through '
        'Spack in a build_mode=spack session' in out
    )


@pytest.mark.skipif(not REAL_TREE, reason='CLUSTERBENCH_NPB_SOURCE not set')
def test_real_npb_class_s_every_benchmark(tmp_path):
    rc, out, report = npb_run(
        tmp_path, '-S', f'npb_source={REAL_TREE}', '-S', 'npb_class=S',
        '-p', 'gnu-openmpi',
    )  # fmt: skip
    assert rc == 0, out
    runs = cases(report)
    assert len(runs) == 8
    for case in runs.values():
        assert case['result'] == 'pass', case['fail_reason']
        assert figures(case)['mops_total'] > 0


def test_provider_precedence():
    assert checks_npb.provider('/src', '/pfx', 'mod', 'spack') == 'source'
    assert checks_npb.provider('', '/pfx', 'mod', 'spack') == 'prefix'
    assert checks_npb.provider('', '', 'mod', 'spack') == 'module'
    assert checks_npb.provider('', '', '', 'spack') == 'spack'
    assert checks_npb.provider('', '', '', 'offline') is None
    assert checks_npb.provider() is None


def test_installed_binary_prefers_34_naming(tmp_path):
    (tmp_path / 'bin').mkdir()
    for name in ('bin/cg.C.2', 'cg.C.x', 'bt.C.4'):
        (tmp_path / name).write_text('#!/bin/sh\n')
        (tmp_path / name).chmod(0o755)
    assert checks_npb.installed_binary(str(tmp_path), 'cg', 'C', 2) == str(
        tmp_path / 'cg.C.x'
    )
    assert checks_npb.installed_binary(str(tmp_path), 'bt', 'C', 4) == str(
        tmp_path / 'bt.C.4'
    )
    assert checks_npb.installed_binary(str(tmp_path), 'bt', 'C', 1) is None


def test_spack_spec_is_the_environments_own_npb(tmp_path):
    env = tmp_path / 'env'
    env.mkdir()
    (env / 'spack.yaml').write_text('spack:\n  specs: [hpl]\n')
    assert npbinstalled.spack_npb_spec(str(env), benchmark='cg', npb_class='C') == (
        'npb implementation=mpi names=cg classes=C'
    )
    (env / 'spack.yaml').write_text(
        'spack:\n  specs: [hpl, npb@3.4.1 implementation=mpi]\n'
    )
    assert npbinstalled.spack_npb_spec(str(env), benchmark='cg', npb_class='C') == (
        'npb@3.4.1 implementation=mpi'
    )
