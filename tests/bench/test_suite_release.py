"""OSU and IMB built by their checks from release tarballs (loopback server).

OSU: a release-shaped tarball made here, whose ``configure`` records its
arguments and whose ``make`` installs stand-ins that play back the recorded
OSU outputs of ../shared/fixtures/osu (they are not OSU): the check's whole
path (release fixture, build per environment with the environment's MPI
wrappers, binaries found in the built tree, figures) runs on any machine.
IMB: with ``CLUSTERBENCH_IMB_SOURCE`` pointing at an IMB tree (e.g.
github.com/intel/mpi-benchmarks), a tarball of it is built and run for real.
"""

import os

import pytest
from conftest import read
from loopback import serving, tarball_of
from rfm import reframe

from clusterbench.bench import sources
from clusterbench.parsers import imb

pytestmark = pytest.mark.integration

OSU_NAME = 'osu-micro-benchmarks-7.4.tar.gz'
CONFIGURE = """\
#!/bin/sh
# Stands in for OSU's configure (clusterbench tests): records its arguments.
printf '%s\\n' "$@" > configure.args
"""
MAKEFILE = """\
# Stands in for OSU's build (clusterbench tests): installs the stand-ins.
all: configure.args
\tmkdir -p c/mpi/pt2pt/standard c/mpi/collective/blocking
\tcp stand-ins/osu_bw c/mpi/pt2pt/standard/
\tcp stand-ins/osu_allreduce c/mpi/collective/blocking/
\tchmod +x c/mpi/pt2pt/standard/osu_bw c/mpi/collective/blocking/osu_allreduce
"""
PLAY_BACK = """\
#!/bin/sh
# Stands in for {name}: rank 0 prints a recorded output.
[ "${{OMPI_COMM_WORLD_RANK:-0}}" = 0 ] || exit 0
cat '{source}'
"""
OSU_NAMES = [
    '-n', 'OSUPointToPointCheck%.*placement=intra%benchmark=osu_bw',
    '-n', 'OSUCollectiveCheck%.*benchmark=osu_allreduce',
]  # fmt: skip
NO_PREFIX = {
    'CLUSTERBENCH_OSU_PREFIX': '',
    'CLUSTERBENCH_IMB_PREFIX': '',
    'CLUSTERBENCH_MIRROR': '',
}


def osu_release(directory, fixtures_dir):
    top = os.path.join(directory, 'osu-micro-benchmarks-7.4')
    os.makedirs(os.path.join(top, 'stand-ins'))
    for name, text in (('configure', CONFIGURE), ('Makefile', MAKEFILE)):
        with open(os.path.join(top, name), 'w') as f:
            f.write(text)
    os.chmod(os.path.join(top, 'configure'), 0o755)
    for bench in ('osu_bw', 'osu_allreduce'):
        source = os.path.join(fixtures_dir, 'osu', f'{bench}.out')
        with open(os.path.join(top, 'stand-ins', bench), 'w') as f:
            f.write(PLAY_BACK.format(name=bench, source=source))
    path = tarball_of(
        top, os.path.join(directory, OSU_NAME), 'osu-micro-benchmarks-7.4'
    )
    return path, sources.sha256_of(path)


def _cases(report):
    return report['runs'][0]['testcases']


def test_osu_is_built_from_its_release_per_environment(tmp_path, fixtures_dir):
    served = tmp_path / 'served'
    with serving(served) as server:
        _, sha = osu_release(str(served), fixtures_dir)
        rc, out, report = reframe(
            tmp_path / 's', *OSU_NAMES,
            '-S', f'osu_url={server.url(OSU_NAME)}', '-S', f'osu_sha256={sha}',
            '-p', 'gnu-openmpi', '--keep-stage-files',
            checks='reframe_checks',
            env={**NO_PREFIX, 'CLUSTERBENCH_CACHE': str(tmp_path / 'cache'),
                 'no_proxy': '127.0.0.1'},
        )  # fmt: skip
    assert report is not None and rc == 0, out
    assert server.gets(OSU_NAME) == 1
    (build,) = [c for c in _cases(report) if c['name'].startswith('OSUBuild')]
    assert build['built'] and build['build_provider'].startswith('release http://')
    args = read(os.path.join(build['stagedir'], 'configure.args')).split()
    assert args == ['CC=mpicc.openmpi', 'CXX=mpicxx.openmpi']
    checks = {c['benchmark']: c for c in _cases(report) if not c['fixture']}
    assert set(checks) == {'osu_bw', 'osu_allreduce'}
    for case in checks.values():
        assert case['result'] == 'pass', case['fail_reason']
        assert case['executable'].startswith(build['stagedir'] + '/c/mpi/')
        assert case['build_provider'] == build['build_provider']
        assert case['perfvalues']
    latency = {k.rsplit(':', 1)[1]: v[0] for k, v in checks['osu_allreduce'][
        'perfvalues'].items()}  # fmt: skip
    assert latency['latency_8B'] == 0.28


def test_a_prefix_wins_over_the_release(tmp_path):
    empty = tmp_path / 'empty'
    empty.mkdir()
    rc, out, report = reframe(
        tmp_path / 's', *OSU_NAMES, '-S', f'osu_prefix={empty}',
        '-S', 'osu_url=http://127.0.0.1:9/' + OSU_NAME, '-p', 'gnu-openmpi',
        checks='reframe_checks', env=NO_PREFIX,
    )  # fmt: skip
    assert report is not None and rc == 0, out
    (release,) = [c for c in _cases(report) if c['name'].startswith('OSURelease')]
    assert release['reason'] == f'not needed: osu_prefix={empty} given'
    (build,) = [c for c in _cases(report) if c['name'].startswith('OSUBuild')]
    assert not build['built'] and build['reason'] == f'osu_prefix={empty} given'


IMB_SOURCE = os.environ.get('CLUSTERBENCH_IMB_SOURCE')


@pytest.mark.skipif(
    not IMB_SOURCE, reason='set CLUSTERBENCH_IMB_SOURCE to an IMB 2021 source tree'
)
def test_real_imb_is_built_from_a_release_and_runs(tmp_path):
    served = tmp_path / 'served'
    with serving(served) as server:
        tarball = served / 'IMB-v2021.7.tar.gz'
        tarball_of(IMB_SOURCE, tarball, 'mpi-benchmarks-IMB-v2021.7')
        rc, out, report = reframe(
            tmp_path / 's', '-n', 'IMBCollectiveCheck',
            '-S', f'imb_url={server.url(tarball.name)}',
            '-S', f'imb_sha256={sources.sha256_of(tarball)}',
            '-S', 'imb_iterations=20', '-S', 'imb_max_log2=12',
            '-p', 'gnu-openmpi',
            checks='reframe_checks',
            env={**NO_PREFIX, 'CLUSTERBENCH_CACHE': str(tmp_path / 'cache'),
                 'no_proxy': '127.0.0.1'},
            timeout=1800,
        )  # fmt: skip
    assert report is not None and rc == 0, out
    (case,) = [c for c in _cases(report) if not c['fixture']]
    assert case['result'] == 'pass', case['fail_reason']
    assert case['build_provider'].startswith('release http://127.0.0.1')
    text = read(os.path.join(case['outputdir'], 'rfm_job.out'))
    names = ('Bcast', 'Reduce', 'Allreduce', 'Alltoall', 'Barrier')
    assert set(
        imb.verify(
            text, benchmarks=names, processes=case['num_tasks'], max_size=1 << 12
        )
    ) == set(names)
