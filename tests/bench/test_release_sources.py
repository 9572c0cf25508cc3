"""Benchmarks from their release tarballs: fetched, verified, cached, mirrored.

The tarballs are served by a loopback HTTP server that each test starts
(127.0.0.1 only): an NPB-like release made here from tests/data/fake_npb (a
stand-in tree of our own, not NPB) and tests/data/fake_stream/stream.c (a
STREAM-like program of our own, not STREAM). The checks run for real through
ReFrame on ``local``. With ``CLUSTERBENCH_MIRROR`` pointing at a directory of
the official tarballs, they are verified against the defaults.
"""

import os
import shutil
import socket
import subprocess
import tarfile

import pytest
from conftest import PROJECT
from loopback import serving, tarball_of
from reframe.utility.cpuinfo import cpuinfo
from rfm import CONFIG, reframe, tool

from clusterbench.bench import sources
from clusterbench.checks import stream as stream_check
from clusterbench.machine import lastlevelcache

FAKE_NPB = os.path.join(PROJECT, 'tests', 'data', 'fake_npb')
FAKE_STREAM = os.path.join(PROJECT, 'tests', 'data', 'fake_stream', 'stream.c')
NPB_NAME = 'NPB3.4.3.tar.gz'


@pytest.fixture(autouse=True)
def no_proxy_for_loopback(monkeypatch):
    # A proxy from the environment must not carry the loopback requests.
    for name in ('no_proxy', 'NO_PROXY'):
        monkeypatch.setenv(name, '127.0.0.1,localhost')


@pytest.fixture
def server(tmp_path):
    with serving(tmp_path / 'served') as srv:
        yield srv


def closed_url(name):
    """A loopback URL nothing listens on (no server at all)."""
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
    return f'http://127.0.0.1:{port}/{name}'


def npb_tarball(directory):
    """An NPB-shaped release of the stand-in tree; returns (path, sha256)."""
    path = tarball_of(
        FAKE_NPB, os.path.join(directory, NPB_NAME), 'NPB3.4.3/NPB3.4-MPI'
    )
    return path, sources.sha256_of(path)


def npb_mirror(tmp_path):
    """A mirror directory holding the NPB-shaped release: (directory, sha256)."""
    mirror = tmp_path / 'mirror'
    mirror.mkdir()
    return mirror, npb_tarball(str(mirror))[1]


def stream_file(directory):
    path = os.path.join(directory, 'stream.c')
    with open(FAKE_STREAM) as src, open(path, 'w') as dst:
        dst.write(src.read())
    return path, sources.sha256_of(path)


# ------------------------------------------------------------ sources module


def test_download_is_verified_and_cached_once(server, tmp_path):
    _, sha = npb_tarball(server.root)
    cache = str(tmp_path / 'cache')
    path, origin = sources.fetch(server.url(NPB_NAME), sha, cache=cache, mirror='')
    assert origin == 'download' and sources.sha256_of(path) == sha
    assert path == os.path.join(cache, sha, NPB_NAME)
    again, origin = sources.fetch(server.url(NPB_NAME), sha, cache=cache, mirror='')
    assert (again, origin) == (path, 'cache')
    assert server.gets(NPB_NAME) == 1


def test_a_tampered_tarball_is_refused_in_one_line_and_not_kept(server, tmp_path):
    path, sha = npb_tarball(server.root)
    with open(path, 'ab') as f:
        f.write(b'tampered')
    got = sources.sha256_of(path)
    cache = tmp_path / 'cache'
    url = server.url(NPB_NAME)
    with pytest.raises(sources.ChecksumMismatch) as err:
        sources.fetch(url, sha, cache=str(cache), mirror='')
    message = str(err.value)
    assert '\n' not in message
    assert url in message and got in message and sha in message
    assert not [f for _, _, files in os.walk(cache) for f in files]


def test_the_mirror_works_with_no_server(tmp_path):
    mirror, sha = npb_mirror(tmp_path)
    url = closed_url(NPB_NAME)
    assert (
        sources.reachable(url, sha, cache=str(tmp_path / 'c'), mirror=str(mirror)) == ''
    )
    path, origin = sources.fetch(
        url, sha, cache=str(tmp_path / 'c'), mirror=str(mirror)
    )
    assert origin == 'mirror' and sources.sha256_of(path) == sha


def test_a_tampered_mirror_file_is_named(tmp_path):
    mirror, sha = npb_mirror(tmp_path)
    (mirror / NPB_NAME).write_bytes(b'not the release')
    with pytest.raises(sources.ChecksumMismatch, match=f'mirror {mirror}'):
        sources.fetch(
            closed_url(NPB_NAME), sha, cache=str(tmp_path), mirror=str(mirror)
        )


def test_a_file_url_works_offline(tmp_path):
    path, sha = stream_file(str(tmp_path))
    got, origin = sources.fetch(
        f'file://{path}', sha, cache=str(tmp_path / 'cache'), mirror=''
    )
    assert origin == 'download' and open(got).read() == open(FAKE_STREAM).read()


def test_a_missing_file_on_the_server_is_not_reachable(server, tmp_path):
    url = server.url(NPB_NAME)
    reason = sources.reachable(url, '0' * 64, cache=str(tmp_path), mirror='')
    assert reason == f'{url}: not in the cache, and the server says 404 File not found'
    _, sha = npb_tarball(server.root)
    assert sources.reachable(url, sha, cache=str(tmp_path), mirror='') == ''
    assert server.gets(NPB_NAME) == 0  # a HEAD request, no download


def test_an_unreachable_source_is_unavailable_and_says_why(tmp_path):
    url = closed_url(NPB_NAME)
    sha = '0' * 64
    reason = sources.reachable(url, sha, cache=str(tmp_path), mirror='')
    assert reason.startswith(f'{url}: not in the cache') and 'unreachable' in reason
    with pytest.raises(sources.Unavailable, match='cannot be fetched'):
        sources.fetch(url, sha, cache=str(tmp_path), mirror='')
    with pytest.raises(sources.SourceError, match='not 64 hex digits'):
        sources.fetch(url, 'abc', cache=str(tmp_path), mirror='')


def test_a_url_without_a_plain_file_name_is_refused():
    assert sources.filename_of('https://x.org/a/NPB3.4.3.tar.gz?x=1') == NPB_NAME
    for url in ('https://x.org/', 'https://x.org/a;rm -rf b.c', 'https://x.org/-x'):
        reason = 'no file name' if url.endswith('/') else 'unusual characters'
        with pytest.raises(sources.SourceError, match=reason):
            sources.filename_of(url)


def test_a_tarball_that_escapes_its_directory_is_refused(tmp_path):
    evil = tmp_path / 'evil.tar.gz'
    inside = tmp_path / 'x'
    inside.write_text('x')
    with tarfile.open(evil, 'w:gz') as tar:
        tar.add(inside, arcname='../outside')
    with pytest.raises(sources.SourceError, match='cannot be unpacked'):
        sources.unpack(str(evil), str(tmp_path / 'dest'))
    assert not (tmp_path / 'outside').exists()


# --------------------------------------------------------- last-level caches


def _cache_index(root, cpu, index, level, kind, size, shared):
    d = root / f'sys/devices/system/cpu/cpu{cpu}/cache/index{index}'
    d.mkdir(parents=True)
    for name, value in (
        ('level', level),
        ('type', kind),
        ('size', size),
        ('shared_cpu_list', shared),
    ):
        (d / name).write_text(f'{value}\n')


def test_last_level_caches_from_sysfs_count_each_shared_cache_once(tmp_path):
    # Two sockets of two CPUs, each socket with one 32 MiB L3.
    for cpu in range(4):
        socket_cpus = '0-1' if cpu < 2 else '2-3'
        _cache_index(tmp_path, cpu, 0, 1, 'Data', '32K', str(cpu))
        _cache_index(tmp_path, cpu, 1, 1, 'Instruction', '32K', str(cpu))
        _cache_index(tmp_path, cpu, 2, 2, 'Unified', '1024K', str(cpu))
        _cache_index(tmp_path, cpu, 3, 3, 'Unified', '32768K', socket_cpus)
    assert lastlevelcache.sysfs_llc_bytes(str(tmp_path)) == 2 * 32 * 1024**2
    assert lastlevelcache.sysfs_llc_bytes(str(tmp_path / 'none')) is None


def test_last_level_caches_from_reframe_topology():
    topology = {
        'caches': [
            {'type': 'L2', 'size': 1048576, 'cpusets': ['0x1', '0x2']},
            {'type': 'L3', 'size': 33554432, 'cpusets': ['0x3']},
        ]
    }
    assert lastlevelcache.topology_llc_bytes(topology) == 33554432
    assert lastlevelcache.topology_llc_bytes({}) is None


def test_stream_arrays_are_four_times_the_last_level_caches():
    llc = 64 * 1024**2
    size = stream_check.array_size(llc)
    assert size * 8 >= 4 * llc and size % 1_000_000 == 0
    assert stream_check.array_size(1024) == stream_check.MIN_ARRAY_SIZE
    assert stream_check.array_size(None) == stream_check.MIN_ARRAY_SIZE


# --------------------------------------------------------- through ReFrame


def _run(prefix, checks, *args, cache, env=None):
    env = {'CLUSTERBENCH_CACHE': str(cache), 'CLUSTERBENCH_MIRROR': '', **(env or {})}
    rc, out, report = reframe(prefix, *args, checks=checks, env=env)
    assert report is not None, out
    assert 'Traceback' not in out, out
    return rc, out, {c['display_name'].split()[0]: c for c in _cases(report)}


def _cases(report):
    return report['runs'][0]['testcases']


NPB_ARGS = ('-S', 'npb_class=S', '-n', 'benchmark=cg', '-p', 'gnu-openmpi')


@pytest.mark.integration
def test_npb_builds_from_its_release_and_a_second_session_hits_the_cache(
    server, tmp_path
):
    _, sha = npb_tarball(server.root)
    url_args = ('-S', f'npb_url={server.url(NPB_NAME)}', '-S', f'npb_sha256={sha}')
    cache = tmp_path / 'cache'
    rc, out, cases = _run(
        tmp_path / 's1', 'reframe_checks/npb.py', *url_args, *NPB_ARGS, cache=cache
    )
    assert rc == 0, out
    assert cases['NPBRelease']['origin'] == 'download'
    assert cases['NPBProvided']['build_provider'].startswith('release http://127.0.0.1')
    check = cases['NPBCheck']
    assert check['result'] == 'pass' and check['perfvalues'], check['fail_reason']
    assert server.gets(NPB_NAME) == 1
    # A second session: the cache serves, nothing is downloaded again.
    rc, out, cases = _run(
        tmp_path / 's2', 'reframe_checks/npb.py', *url_args, *NPB_ARGS, cache=cache
    )
    assert rc == 0, out
    assert cases['NPBRelease']['origin'] == 'cache'
    assert cases['NPBCheck']['result'] == 'pass'
    assert server.gets(NPB_NAME) == 1


@pytest.mark.integration
def test_npb_from_a_tampered_release_is_refused_and_nothing_built(server, tmp_path):
    path, sha = npb_tarball(server.root)
    with open(path, 'ab') as f:
        f.write(b'tampered')
    url = server.url(NPB_NAME)
    rc, out, cases = _run(
        tmp_path / 's',
        'reframe_checks/npb.py',
        '-S', f'npb_url={url}', '-S', f'npb_sha256={sha}', *NPB_ARGS,
        cache=tmp_path / 'cache',
    )  # fmt: skip
    assert rc != 0
    release = cases['NPBRelease']
    assert release['result'] == 'fail' and release['fail_phase'] == 'setup'
    reason = release['fail_reason']
    assert '\n' not in reason
    assert url in reason and sha in reason and sources.sha256_of(path) in reason
    # The build never ran: its dependency failed, and nothing was staged.
    assert cases['NPBProvided']['result'] == 'fail_deps'
    assert cases['NPBCheck']['result'] in ('fail_deps', 'skip')
    assert not os.path.exists(cases['NPBProvided']['stagedir'] or '/nonexistent')
    built = [d for d, _, files in os.walk(tmp_path / 's') if 'rfm_build.sh' in files]
    assert not built


@pytest.mark.integration
def test_npb_from_the_mirror_with_no_server(tmp_path):
    mirror, sha = npb_mirror(tmp_path)
    rc, out, cases = _run(
        tmp_path / 's',
        'reframe_checks/npb.py',
        '-S', f'npb_url={closed_url(NPB_NAME)}', '-S', f'npb_sha256={sha}', *NPB_ARGS,
        cache=tmp_path / 'cache',
        env={'CLUSTERBENCH_MIRROR': str(mirror)},
    )  # fmt: skip
    assert rc == 0, out
    assert cases['NPBRelease']['origin'] == 'mirror'
    assert cases['NPBCheck']['result'] == 'pass'


@pytest.mark.integration
def test_stream_is_built_by_the_check_and_validated(server, tmp_path):
    _, sha = stream_file(server.root)
    url_args = (
        '-S',
        f'stream_url={server.url("stream.c")}',
        '-S',
        f'stream_sha256={sha}',
    )
    rc, out, cases = _run(
        tmp_path / 's',
        'reframe_checks/stream.py',
        *url_args, '-p', 'gnu-openmpi',
        cache=tmp_path / 'cache',
    )  # fmt: skip
    assert rc == 0, out
    case = cases['StreamCheck']
    assert case['result'] == 'pass', case['fail_reason']
    # The partition is this host: ReFrame's topology or sysfs gives its caches.
    assert case['llc_bytes'] in (
        lastlevelcache.sysfs_llc_bytes() or 0,
        lastlevelcache.topology_llc_bytes(cpuinfo().get('topology')) or 0,
    )
    assert case['llc_bytes'] > 0
    assert case['array_size'] * 8 >= 4 * case['llc_bytes']
    assert case['array_size'] >= stream_check.MIN_ARRAY_SIZE
    values = {k.rsplit(':', 1)[1]: v for k, v in case['perfvalues'].items()}
    assert set(values) == {f'stream_{k}' for k in ('copy', 'scale', 'add', 'triad')}
    assert all(v[0] > 0 and v[4] == 'GB/s' for v in values.values())
    with open(os.path.join(case['outputdir'], 'rfm_job.out')) as f:
        text = f.read()
    assert f'Array size = {case["array_size"]} (elements)' in text
    with open(os.path.join(case['outputdir'], 'rfm_build.sh')) as f:
        build = f.read()
    assert 'mpicc.openmpi -O3 -fopenmp' in build


@pytest.mark.integration
def test_stream_that_fails_its_validation_records_nothing(server, tmp_path):
    _, sha = stream_file(server.root)
    rc, out, cases = _run(
        tmp_path / 's',
        'reframe_checks/stream.py',
        '-S', f'stream_url={server.url("stream.c")}', '-S', f'stream_sha256={sha}',
        '-S', 'stream_array_size=1000000', '-p', 'gnu-openmpi',
        cache=tmp_path / 'cache', env={'FAKE_STREAM_CORRUPT': '1'},
    )  # fmt: skip
    assert rc != 0
    case = cases['StreamCheck']
    assert case['fail_phase'] == 'sanity'
    assert 'Failed Validation' in case['fail_reason']


def list_offline(tmp_path, names, *options):
    """`reframe -l` of the checks *names* with no release to be had: an empty
    cache under *tmp_path* and no mirror."""
    return subprocess.run(
        [tool('reframe'), '-C', CONFIG, '-c', os.path.join(PROJECT, 'reframe_checks'),
         *options, '-n', names, '-l'],
        capture_output=True, text=True, timeout=600, cwd=PROJECT,
        env={**os.environ, 'CLUSTERBENCH_CACHE': str(tmp_path),
             'CLUSTERBENCH_MIRROR': '',
             'RFM_SQLITE_DB_FILE': str(tmp_path / 'results.db')},
    )  # fmt: skip


@pytest.mark.integration
def test_without_the_stream_release_the_suite_keeps_hpcc_and_says_why_once(tmp_path):
    url = closed_url('stream.c')
    # Listing is enough: the choice is made when the checks are loaded.
    proc = list_offline(tmp_path, 'StreamCheck|HPCCCheck', '-S', f'stream_url={url}')
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert '- StreamCheck' not in out and '- HPCCCheck' in out, out
    lines = [line for line in out.splitlines() if 'STREAM from HPCC only' in line]
    assert len(lines) == 1 and url in lines[0], out


# ------------------------------------------------- the official tarballs


@pytest.mark.parametrize('name', sorted(sources.DEFAULTS))
def test_official_release_matches_its_default_checksum(name):
    mirror = os.environ.get('CLUSTERBENCH_MIRROR')
    release = sources.DEFAULTS[name]
    path = mirror and os.path.join(mirror, release.filename)
    if not path or not os.path.isfile(path):
        pytest.skip(f'{release.filename} not in $CLUSTERBENCH_MIRROR')
    assert sources.sha256_of(path) == release.sha256


# ------------------------------------------------- clusterbench mirror


def _mirror(*args, cache):
    return subprocess.run(
        [tool('clusterbench'), 'mirror', *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=PROJECT,
        env={**os.environ, 'CLUSTERBENCH_CACHE': str(cache), 'CLUSTERBENCH_MIRROR': ''},
    )


def test_mirror_downloads_the_releases_and_check_verifies_them(server, tmp_path):
    _, npb_sha = npb_tarball(server.root)
    _, stream_sha = stream_file(server.root)
    overrides = (
        '--only', 'npb', 'stream',
        '--url', f'npb={server.url(NPB_NAME)}', '--sha256', f'npb={npb_sha}',
        '--url', f'stream={server.url("stream.c")}',
        '--sha256', f'stream={stream_sha}',
    )  # fmt: skip
    mirror = tmp_path / 'mirror'
    proc = _mirror(str(mirror), *overrides, cache=tmp_path / 'cache')
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sources.sha256_of(mirror / NPB_NAME) == npb_sha
    assert sources.sha256_of(mirror / 'stream.c') == stream_sha
    assert (mirror / 'SHA256SUMS').read_text() == (
        f'{npb_sha}  {NPB_NAME}\n{stream_sha}  stream.c\n'
    )
    # Again: the files are there, nothing is downloaded.
    proc = _mirror(str(mirror), *overrides, cache=tmp_path / 'cache')
    assert proc.returncode == 0 and proc.stdout.count(': present,') == 2
    assert server.gets(NPB_NAME) == 1 and server.gets('stream.c') == 1
    server.stop()
    proc = _mirror('--check', str(mirror), *overrides, cache=tmp_path / 'none')
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout.count(': ok (sha256 ') == 2
    (mirror / 'stream.c').write_text('int main(void) { return 0; }\n')
    proc = _mirror('--check', str(mirror), *overrides, cache=tmp_path / 'none')
    assert proc.returncode == 1
    (bad,) = [line for line in proc.stdout.splitlines() if 'expected' in line]
    assert str(mirror / 'stream.c') in bad and stream_sha in bad


def test_mirror_check_names_what_is_missing_and_bad_options(tmp_path):
    proc = _mirror('--check', str(tmp_path), cache=tmp_path)
    assert proc.returncode == 1
    for release in sources.DEFAULTS.values():
        assert f'{release.filename}: missing' in proc.stdout
    proc = _mirror('--check', str(tmp_path / 'nowhere'), cache=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f'clusterbench mirror: error: {tmp_path / "nowhere"}: no such mirror directory'
    ]
    proc = _mirror(str(tmp_path), '--url', 'hpx=http://x/y.tgz', cache=tmp_path)
    assert proc.returncode == 2 and '--url hpx=http://x/y.tgz' in proc.stderr


@pytest.mark.integration
def test_a_spack_session_without_spack_builds_npb_from_its_release(tmp_path):
    if shutil.which('spack'):
        pytest.skip('spack is on PATH here')
    mirror, sha = npb_mirror(tmp_path)
    rc, out, cases = _run(
        tmp_path / 's',
        'reframe_checks/npb.py',
        '-S', 'build_mode=spack',
        '-S', f'npb_url={closed_url(NPB_NAME)}', '-S', f'npb_sha256={sha}', *NPB_ARGS,
        cache=tmp_path / 'cache',
        env={'CLUSTERBENCH_MIRROR': str(mirror), 'CLUSTERBENCH_SPACK': ''},
    )  # fmt: skip
    assert rc == 0, out
    assert cases['NPBProvided']['build_provider'].endswith('(spack not on PATH)')
    assert cases['NPBCheck']['result'] == 'pass'
