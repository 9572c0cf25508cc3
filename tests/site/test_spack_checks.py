"""The Spack build path of the checks, through the real ReFrame.

CI has no Spack, so a stand-in ``spack`` (a shell script named by
``$CLUSTERBENCH_SPACK``) records what ReFrame's Spack build system asks of it
and, on ``load``, puts a fake ``stream_c.exe`` first on PATH that prints a
real recorded STREAM output: the whole pipeline (environment lookup, staged
environment, add/install/load, the lock kept with the outputs, sanity and
figures) runs without Spack. ``tests/site/test_spack_real.py`` does the same with
a real Spack when there is one.
"""

import hashlib
import json
import os
import shutil
import stat

import pytest
from conftest import PROJECT
from rfm import reframe

from clusterbench.parsers import stream
from clusterbench.site import spackenv

pytestmark = pytest.mark.integration

CHECKS = 'reframe_checks'
# Release URLs on a loopback port nothing listens on: no release to be had.
NO_RELEASES = (
    '-S', 'hpl_url=http://127.0.0.1:9/hpl-2.3.tar.gz',
    '-S', 'stream_url=http://127.0.0.1:9/stream.c',
)  # fmt: skip
SPACK_CHECKS = r'^(HPLCheck|StreamCheck|HPCGCheck)\b'

STUB = """\
#!/bin/sh
# A stand-in for spack (tests/site/test_spack_checks.py).
printf '%s\\n' "$*" >> {log}
case "$*" in
  *" load --sh "*) echo "export PATH={bin}:\\$PATH" ;;
  *" install"*)
    [ -f "$2/spack.lock" ] || {{ echo "stub spack: no $2/spack.lock" >&2; exit 3; }}
    if [ -n "$STUB_SPOIL_LOCK" ]; then
      # Concretize STREAM differently: give its root another root's hash.
      python3 - "$2/spack.lock" <<'PY'
import json, sys
lock = json.load(open(sys.argv[1]))
other = next(r['hash'] for r in lock['roots'] if not r['spec'].startswith('stream'))
for root in lock['roots']:
    if root['spec'].startswith('stream'):
        root['hash'] = other
json.dump(lock, open(sys.argv[1], 'w'))
PY
    fi ;;
esac
exit 0
"""


def _executable(path, text):
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture(scope='module')
def stub_spack(tmp_path_factory, fixtures_dir):
    where = tmp_path_factory.mktemp('stub')
    bindir = where / 'bin'
    bindir.mkdir()
    log = where / 'calls.log'
    _executable(where / 'spack', STUB.format(log=log, bin=bindir))
    fixture = os.path.join(fixtures_dir, 'stream', 'stream.omp2.out')
    _executable(
        bindir / 'stream_c.exe',
        '#!/bin/sh\nsed "s/^Number of Threads counted = .*/Number of Threads '
        f'counted = $OMP_NUM_THREADS/" {fixture}\n',
    )
    return where / 'spack', log, fixture


def _cases(report):
    # Not the release fixtures (StreamRelease, HPLRelease): test_release_sources.
    return {
        (c['name'].split()[0], c['environ']): c
        for c in report['runs'][0]['testcases']
        if not c['fixture']
    }


@pytest.fixture(scope='module')
def stub_run(stub_spack, tmp_path_factory):
    spack, log, fixture = stub_spack
    prefix = tmp_path_factory.mktemp('spackrun')
    rc, out, report = reframe(
        prefix,
        '-n',
        SPACK_CHECKS,
        '-S',
        'build_mode=spack',
        '-S',
        'spack_install_opts=--fake',
        '-S',
        'hpl_n=500',
        '-S',
        'hpl_nb=50',
        '-S',
        'local_size=16',
        '-S',
        'run_seconds=1',
        checks=CHECKS,
        env={'CLUSTERBENCH_SPACK': str(spack)},
    )
    assert report is not None, out
    return rc, out, _cases(report), log.read_text().splitlines(), fixture


def test_every_spack_check_runs_per_stack_of_the_partition(stub_run):
    _, out, cases, _, _ = stub_run
    assert set(cases) == {
        (check, env)
        for check in ('HPLCheck', 'StreamCheck', 'HPCGCheck')
        for env in ('gnu-openmpi', 'gnu-mpich')
    }
    for (check, environ), case in cases.items():
        assert case['build_provider'] == 'spack'
        assert case['spack_env'] == f'spack_envs/local/default-{environ}'
        assert case['compiler'] == 'gcc'
        if check != 'StreamCheck':
            assert case['mpi'] == environ.split('-')[1]


def test_spack_is_asked_for_the_locks_root_with_the_install_options(stub_run):
    _, _, cases, calls, _ = stub_run
    for environ, mpi in (('gnu-openmpi', 'openmpi'), ('gnu-mpich', 'mpich')):
        env = f'local/default-{environ}'
        lock = spackenv.load_lock(os.path.join(spackenv.ENVS_ROOT, env))
        for check, spec in (
            ('HPLCheck', f'hpl ^{mpi}'),
            ('HPCGCheck', f'hpcg ^{mpi}'),
            ('StreamCheck', 'stream+openmp stream_array_size=80000000'),
        ):
            assert f'-e {env} install --fake {spec}' in calls
            case = cases[(check, environ)]
            assert case['spack_spec'] == spec
            root = [r['hash'] for r in lock.roots if r['spec'] == spec]
            assert case['spack_root_hash'] == root[0]
            assert case['spack_lock_sha256'] == lock.sha256
        assert not [c for c in calls if ' add ' in c], 'spack add edits spack.yaml'
    # At run time the spec is loaded; the build phase passed everywhere.
    assert '-e local/default-gnu-mpich load --sh hpl ^mpich' in calls
    assert all(c['fail_phase'] not in ('setup', 'compile') for c in cases.values())


def test_stream_through_the_spack_path_verifies_and_keeps_the_lock(stub_run):
    _, _, cases, _, fixture = stub_run
    case = cases[('StreamCheck', 'gnu-openmpi')]
    assert case['result'] == 'pass', case['fail_reason']
    with open(fixture) as f:
        expected = stream.verify(f.read())
    # GB/s, as every STREAM figure of the suite (STREAM prints MB/s).
    values = {k.rsplit(':', 1)[1]: v[0] for k, v in case['perfvalues'].items()}
    assert values == pytest.approx(
        {f'stream_{k}': expected[k] / 1000 for k in stream.KERNELS}
    )
    assert {v[4] for v in case['perfvalues'].values()} == {'GB/s'}
    # ReFrame keeps the files beside the outputs (by their base names).
    kept = case['outputdir']
    committed = os.path.join(spackenv.ENVS_ROOT, 'local', 'default-gnu-openmpi')
    for name in ('spack.lock', 'spack.yaml'):
        with (
            open(os.path.join(kept, name), 'rb') as a,
            open(os.path.join(committed, name), 'rb') as b,
        ):
            assert a.read() == b.read()


def test_a_benchmark_that_did_not_run_records_no_figure(stub_run):
    # The stand-in installs nothing: xhpl and xhpcg are not there to run.
    _, _, cases, _, _ = stub_run
    for check, reason in (
        ('HPLCheck', 'xhpl exited with code'),
        ('HPCGCheck', 'xhpcg exited with code'),
    ):
        case = cases[(check, 'gnu-openmpi')]
        assert case['fail_phase'] == 'sanity'
        assert reason in case['fail_reason']
        assert all(v[0] is None for v in case['perfvalues'].values())


def test_a_build_that_changes_the_lock_fails(stub_spack, tmp_path):
    spack, _, _ = stub_spack
    rc, out, report = reframe(
        tmp_path,
        '-n',
        r'^StreamCheck\b',
        '-p',
        'gnu-openmpi',
        '-S',
        'build_mode=spack',
        checks=CHECKS,
        env={'CLUSTERBENCH_SPACK': str(spack), 'STUB_SPOIL_LOCK': '1'},
    )
    assert rc != 0
    (case,) = _cases(report).values()
    assert case['fail_phase'] == 'run'
    lock = spackenv.load_lock(
        os.path.join(spackenv.ENVS_ROOT, 'local', 'default-gnu-openmpi')
    )
    other = next(r['hash'] for r in lock.roots if not r['spec'].startswith('stream'))
    assert (
        "the build concretized 'stream+openmp stream_array_size=80000000' to "
        f"['{other}']" in case['fail_reason']
    )
    assert 're-concretize and commit the lock' in case['fail_reason']


def test_without_spack_the_spack_only_checks_say_so_and_skip(tmp_path):
    path = os.pathsep.join(
        d
        for d in os.environ['PATH'].split(os.pathsep)
        if not os.access(os.path.join(d, 'spack'), os.X_OK)
    )
    env = {'PATH': path, 'CLUSTERBENCH_SPACK': '', 'CLUSTERBENCH_MIRROR': ''}
    rc, out, report = reframe(
        tmp_path, '-n', SPACK_CHECKS, '-S', 'build_mode=spack',
        *NO_RELEASES, checks=CHECKS, env=env,
    )  # fmt: skip
    assert rc == 0, out
    cases = _cases(report)
    assert len(cases) == 6
    assert {case['result'] for case in cases.values()} == {'skip'}
    assert (
        out.count(
            'spack not on PATH (nor $CLUSTERBENCH_SPACK): hpcg is built '
            'only through Spack'
        )
        == 2
    )
    # HPL and STREAM fall back to their releases, which cannot be had here.
    assert out.count('falling back to the offline provider') == 4
    assert out.count('HPL not built: http://127.0.0.1:') == 2


def test_offline_the_spack_only_checks_are_not_generated(tmp_path):
    # Nor HPL and STREAM, whose releases cannot be had.
    rc, out, _ = reframe(
        tmp_path, '-n', SPACK_CHECKS, *NO_RELEASES, checks=CHECKS,
        env={'CLUSTERBENCH_MIRROR': '', 'CLUSTERBENCH_CACHE': str(tmp_path)},
    )  # fmt: skip
    assert 'Found 0 check' in out or 'Ran 0/0 test case' in out, out


def test_an_unknown_build_mode_is_one_line(tmp_path):
    rc, out, _ = reframe(
        tmp_path, '-n', r'^HPLCheck\b', '-S', 'build_mode=sapck', checks=CHECKS
    )
    assert "build_mode='sapck': use one of offline, spack" in out


def test_the_kept_lock_hash_is_the_files(stub_run):
    _, _, cases, _, _ = stub_run
    case = cases[('HPCGCheck', 'gnu-mpich')]
    path = os.path.join(PROJECT, case['spack_env'], 'spack.lock')
    with open(path, 'rb') as f:
        assert case['spack_lock_sha256'] == hashlib.sha256(f.read()).hexdigest()
    assert json.loads(open(path).read())['_meta']['file-type'] == 'spack-lockfile'


def test_a_lock_stale_against_its_manifest_is_refused_before_building(
    stub_spack, tmp_path
):
    spack, log, _ = stub_spack
    envs = tmp_path / 'spack_envs'
    shutil.copytree(spackenv.ENVS_ROOT, envs)
    benchmarks = envs / 'common' / 'benchmarks.yaml'
    benchmarks.write_text(benchmarks.read_text().replace('  - hpcg\n', ''))
    before = log.read_text()
    rc, out, report = reframe(
        tmp_path / 'run',
        '-n',
        r'^StreamCheck\b',
        '-p',
        'gnu-openmpi',
        '-S',
        'build_mode=spack',
        '-S',
        f'spack_envs_root={envs}',
        checks=CHECKS,
        env={'CLUSTERBENCH_SPACK': str(spack)},
    )
    (case,) = _cases(report).values()
    assert case['fail_phase'] == 'setup'
    assert 'spack.lock: roots: differ from spack.yaml specs' in case['fail_reason']
    assert "not in spack.yaml ['hpcg ^openmpi']" in case['fail_reason']
    assert log.read_text() == before, 'spack was called for a stale lock'


FALLBACK_CHECK = """\
import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import sanity_function

from clusterbench.bench.source import Source
from clusterbench.checks.provisioning import Provisioned


@rfm.simple_test
class FallbackCheck(Provisioned, rfm.RegressionTest):
    valid_systems = ['*']
    source = Source('stream', 'STREAM', spack='stream')
    spack_executable = 'stream_c.exe'
    offline_provider = 'a shell one-liner'

    def offline_build(self):
        self.build_system = 'CustomBuild'
        self.build_system.commands = ['echo built offline > built.txt']
        self.executable = 'cat built.txt'

    @sanity_function
    def ran(self):
        return sn.assert_found('built offline', self.stdout)
"""


@pytest.mark.parametrize(
    'mode, provider',
    [('offline', 'offline'), ('spack', 'offline (spack not on PATH)')],
)
def test_a_check_with_an_offline_provider_falls_back_and_says_so(
    tmp_path, mode, provider
):
    checks = tmp_path / 'checks'
    checks.mkdir()
    (checks / 'fallback.py').write_text(FALLBACK_CHECK)
    path = os.pathsep.join(
        d
        for d in os.environ['PATH'].split(os.pathsep)
        if not os.access(os.path.join(d, 'spack'), os.X_OK)
    )
    rc, out, report = reframe(
        tmp_path / 'run',
        '-p',
        'gnu-openmpi',
        '-S',
        f'build_mode={mode}',
        checks=str(checks),
        env={'PATH': path, 'CLUSTERBENCH_SPACK': ''},
    )
    assert rc == 0, out
    (case,) = _cases(report).values()
    assert case['result'] == 'pass'
    assert case['build_provider'] == provider
    assert case['spack_spec'] == ''
    warning = (
        'spack not on PATH (nor $CLUSTERBENCH_SPACK): falling back to the offline '
        'provider, a shell one-liner'
    )
    assert (warning in out) == (mode == 'spack')


# -- NPB, IMB and OSU: the same Spack path, offline providers otherwise ----

SUITE_CHECKS = (
    'IMBPointToPointCheck%.*placement=intra',
    'OSUPointToPointCheck%.*placement=intra%benchmark=osu_bw',
    'NPBCheck%.*npb_binaries.benchmark=cg',
)
SUITE_SPECS = {
    'IMBPointToPointCheck': 'intel-mpi-benchmarks ^{mpi}',
    'OSUPointToPointCheck': 'osu-micro-benchmarks ^{mpi}',
    'NPBProvided': 'npb implementation=mpi ^{mpi}',
}


RELEASE_FIXTURES = (
    'NPBRelease',
    'OSURelease',
    'IMBRelease',
    'OSUBuild',
    'IMBBuild',
)


@pytest.fixture(scope='module')
def stub_suites(stub_spack, tmp_path_factory):
    spack, log, _ = stub_spack
    prefix = tmp_path_factory.mktemp('suites')
    names = []
    for name in SUITE_CHECKS:
        names += ['-n', name]
    rc, out, report = reframe(
        prefix,
        *names,
        '-S',
        'build_mode=spack',
        '-S',
        'spack_install_opts=--fake',
        checks=CHECKS,
        env={
            'CLUSTERBENCH_SPACK': str(spack),
            'CLUSTERBENCH_IMB_PREFIX': '',
            'CLUSTERBENCH_OSU_PREFIX': '',
        },
    )
    assert report is not None, out
    cases = {
        (c['name'].split()[0], c['environ']): c
        for c in report['runs'][0]['testcases']
        # Not the release and release-build fixtures (not needed with Spack).
        if not c['name'].startswith(RELEASE_FIXTURES)
    }
    return out, cases, log.read_text().splitlines()


def test_npb_imb_osu_build_the_locks_root_through_spack(stub_suites):
    out, cases, calls = stub_suites
    assert set(cases) == {
        (check, env) for check in SUITE_SPECS for env in ('gnu-openmpi', 'gnu-mpich')
    } | {('NPBCheck', env) for env in ('gnu-openmpi', 'gnu-mpich')}
    for environ, mpi in (('gnu-openmpi', 'openmpi'), ('gnu-mpich', 'mpich')):
        env = f'local/default-{environ}'
        lock = spackenv.load_lock(os.path.join(spackenv.ENVS_ROOT, env))
        for check, spec in SUITE_SPECS.items():
            spec = spec.format(mpi=mpi)
            case = cases[(check, environ)]
            # The build phase passed; the stand-in installed nothing to run.
            assert case['fail_phase'] not in ('setup', 'compile'), case['fail_reason']
            assert f'-e {env} install --fake {spec}' in calls
            assert case['build_provider'] == 'spack'
            assert case['spack_env'] == f'spack_envs/{env}'
            assert case['spack_spec'] == spec
            (root,) = [r['hash'] for r in lock.roots if r['spec'] == spec]
            assert case['spack_root_hash'] == root
            assert case['spack_lock_sha256'] == lock.sha256
            # Kept with the outputs; where the run failed (here: always, for
            # want of binaries) ReFrame keeps the stage instead.
            assert any(
                os.path.isfile(os.path.join(kept, 'spack.lock'))
                for kept in (case['outputdir'], os.path.join(case['stagedir'], env))
            )
        # The run of NPB carries its build's provenance and its stack.
        run = cases[('NPBCheck', environ)]
        assert (
            run['spack_root_hash'] == cases[('NPBProvided', environ)]['spack_root_hash']
        )
        assert (run['mpi'], run['compiler']) == (mpi, 'gcc')
        assert cases[('OSUPointToPointCheck', environ)]['mpi'] == mpi
    assert 'Traceback' not in out


def test_offline_imb_and_osu_build_nothing_and_say_how_to_provide_them(tmp_path):
    rc, out, report = reframe(
        tmp_path,
        '-n',
        SUITE_CHECKS[1],
        '-p',
        'gnu-openmpi',
        # No release to be had either (a loopback port nothing listens on).
        '-S',
        'osu_url=http://127.0.0.1:9/osu-micro-benchmarks-7.4.tar.gz',
        checks=CHECKS,
        env={'CLUSTERBENCH_OSU_PREFIX': '', 'CLUSTERBENCH_MIRROR': ''},
    )
    assert rc == 0, out
    cases = report['runs'][0]['testcases']
    (build,) = [c for c in cases if c['name'].startswith('OSUBuild')]
    assert not build['built']
    (case,) = [c for c in report['runs'][0]['testcases'] if not c['fixture']]
    assert case['result'] == 'skip'
    assert case['build_provider'] == 'offline'
    assert 'OSU Micro-Benchmarks not installed' in case['skip_reason']
