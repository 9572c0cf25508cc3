"""The bad-input matrix, benchmark sources (issue 29): `clusterbench mirror`
and the checks built from release tarballs.

Each case drives the real program (`clusterbench mirror`, `clusterbench
run`, plain `reframe`) with releases served by a loopback HTTP server
(tests/loopback.py, 127.0.0.1 only) or given as file:// URLs, and asserts
the exact line, the exit code and that no file was changed or torn.
"""

import contextlib
import os
import pathlib
import shutil
import socket
import subprocess
import tempfile
import threading

import pytest
from badinput import Store, assert_line, hashes
from conftest import PROJECT, fill
from loopback import serving, tarball_of
from rfm import reframe, tool
from test_release_sources import (  # noqa: F401 (fixtures)
    NPB_NAME,
    closed_url,
    list_offline,
    no_proxy_for_loopback,
    npb_tarball,
    stream_file,
)

from clusterbench.bench import sources

pytestmark = pytest.mark.integration

SUMS = 'SHA256SUMS'
HINT = 'set CLUSTERBENCH_MIRROR to a mirror made with clusterbench mirror'
REFUSED = '[Errno 111] Connection refused'


@pytest.fixture
def server(tmp_path):
    with serving(tmp_path / 'served') as srv:
        yield srv


def mirror(directory, *args, cache):
    """`clusterbench mirror DIR ARGS...`: (exit code, stdout and stderr)."""
    proc = subprocess.run(
        [tool('clusterbench'), 'mirror', str(directory), *args],
        capture_output=True, text=True, timeout=300, cwd=PROJECT,
        env={**os.environ, 'CLUSTERBENCH_CACHE': str(cache), 'CLUSTERBENCH_MIRROR': ''},
    )  # fmt: skip
    return proc.returncode, proc.stdout + proc.stderr


def release_args(name, url, sha256):
    return ('--url', f'{name}={url}', '--sha256', f'{name}={sha256}')


def listing(directory):
    """The files of *directory*, temporary ones (``.partial-*``) included."""
    return sorted(os.listdir(directory))


# --- 26. mirror --only and SHA256SUMS ----------------------------------------


def test_26_mirror_only_keeps_the_other_tarballs_sums(server, tmp_path):
    _, npb_sha = npb_tarball(server.root)
    _, stream_sha = stream_file(server.root)
    npb = release_args('npb', server.url(NPB_NAME), npb_sha)
    stream = release_args('stream', server.url('stream.c'), stream_sha)
    directory, cache = tmp_path / 'mirror', tmp_path / 'cache'
    rc, out = mirror(directory, '--only', 'npb', *npb, cache=cache)
    assert rc == 0, out
    tarball = hashes(directory)[f'{directory}/{NPB_NAME}']
    rc, out = mirror(directory, '--only', 'stream', *npb, *stream, cache=cache)
    assert rc == 0, out
    url = server.url('stream.c')
    assert_line(out, f'stream  stream.c: downloaded ({url}), sha256 verified')
    assert (directory / SUMS).read_text() == (
        f'{npb_sha}  {NPB_NAME}\n{stream_sha}  stream.c\n'
    )
    assert hashes(directory)[f'{directory}/{NPB_NAME}'] == tarball
    checked = subprocess.run(
        ['sha256sum', '-c', SUMS], cwd=directory, capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout == f'{NPB_NAME}: OK\nstream.c: OK\n'
    # A file gone from the mirror loses its line; the others keep theirs.
    (directory / 'stream.c').unlink()
    rc, out = mirror(directory, '--only', 'npb', *npb, cache=cache)
    assert rc == 0, out
    assert_line(out, f'npb     {NPB_NAME}: present, sha256 verified')
    assert (directory / SUMS).read_text() == f'{npb_sha}  {NPB_NAME}\n'


def test_26_a_sha256sums_that_is_not_sha256sums_is_refused(server, tmp_path):
    _, npb_sha = npb_tarball(server.root)
    directory = tmp_path / 'mirror'
    directory.mkdir()
    _, stream_sha = stream_file(str(directory))
    (directory / SUMS).write_text(f'{stream_sha}  stream.c\ngarbage\n')
    before = hashes(directory)
    rc, out = mirror(
        directory, '--only', 'npb', *release_args('npb', server.url(NPB_NAME), npb_sha),
        cache=tmp_path / 'cache',
    )  # fmt: skip
    assert rc == 2, out
    assert_line(
        out,
        f'clusterbench mirror: error: {directory}/{SUMS}:2: not a sha256sum line '
        "(HEX  NAME): 'garbage'",
    )
    assert hashes(directory) == before
    assert listing(directory) == [SUMS, 'stream.c']
    assert server.gets(NPB_NAME) == 0


# --- 28. a full or read-only mirror; a truncated tarball whose sha256 matches -


def big_release(directory):
    """An NPB-named release of 256 KiB that does not compress: (path, sha256)."""
    tree = os.path.join(directory, 'big')
    os.makedirs(tree)
    with open(os.path.join(tree, 'data'), 'wb') as f:
        f.write(os.urandom(256 * 1024))
    path = tarball_of(tree, os.path.join(directory, NPB_NAME), 'NPB3.4.3')
    return path, sources.sha256_of(path)


def old_mirror(directory):
    """A mirror holding one earlier file and its SHA256SUMS line."""
    directory.mkdir()
    _, sha256 = stream_file(str(directory))
    (directory / SUMS).write_text(f'{sha256}  stream.c\n')


def pages(size, page=4096):
    return -(-size // page) * page


MIRROR_DISKS = {
    # case: (what to do to the disk, the file named)
    'full': ('fill', NPB_NAME),
    'full-for-the-sums': ('fill-but-the-tarball', SUMS),
    'read-only': ('read-only', NPB_NAME),
    'read-only-new-directory': ('read-only', None),
}


@pytest.mark.parametrize('case', sorted(MIRROR_DISKS))
def test_28_mirror_into_a_full_or_read_only_directory(
    server, small_disk, tmp_path, case
):
    disk, named = MIRROR_DISKS[case]
    path, sha256 = big_release(server.root)
    directory = small_disk / 'mirror'
    if named is None:
        directory = small_disk / 'new'
    else:
        old_mirror(directory)
    before = hashes(small_disk)
    if disk == 'fill':
        fill(small_disk, leave=64 * 1024)
    elif disk == 'fill-but-the-tarball':
        fill(small_disk, leave=pages(os.path.getsize(path)))
    else:
        subprocess.run(['mount', '-o', 'remount,ro', str(small_disk)], check=True)
    rc, out = mirror(
        directory, '--only', 'npb', *release_args('npb', server.url(NPB_NAME), sha256),
        cache=tmp_path / 'cache',
    )  # fmt: skip
    assert rc == 2, out
    cause = (
        'read-only file system' if disk == 'read-only' else 'no space left on device'
    )
    if named is None:
        line = f'{directory}: cannot create: {cause}'
    else:
        line = f'{directory}/{named}: cannot write: {cause}'
    assert_line(out, f'clusterbench mirror: error: {line}')
    after = hashes(small_disk)
    after.pop(f'{small_disk}/filler', None)
    if named == SUMS:
        # The tarball is there, whole and verified; SHA256SUMS is the old one.
        assert after.pop(f'{directory}/{NPB_NAME}') == sha256
    assert after == before
    if named is not None:
        # No temporary file left behind.
        new = [NPB_NAME] if named == SUMS else []
        assert listing(directory) == sorted([SUMS, 'stream.c', *new])


@pytest.fixture
def cut_server():
    """A loopback server that announces 100000 bytes and sends 1000."""
    listener = socket.create_server(('127.0.0.1', 0))

    def serve():
        with contextlib.suppress(OSError):
            conn, _ = listener.accept()
            with conn:
                conn.recv(65536)
                conn.sendall(
                    b'HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n' + b'x' * 1000
                )

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f'http://127.0.0.1:{listener.getsockname()[1]}/{NPB_NAME}'
    listener.close()
    thread.join(timeout=10)


def test_28_a_download_cut_short_is_named(cut_server, tmp_path):
    directory, cache = tmp_path / 'mirror', tmp_path / 'cache'
    rc, out = mirror(
        directory, '--only', 'npb', *release_args('npb', cut_server, '0' * 64),
        cache=cache,
    )  # fmt: skip
    assert rc == 2, out
    assert_line(
        out,
        f'npb     {cut_server}: cannot be fetched (the transfer ended at 1000 of '
        '100000 bytes)',
    )
    assert not directory.exists()
    assert listing(cache) == []


def truncated_release(directory):
    """A file:// NPB release cut in the middle, and the sha256 of the cut file."""
    path, _ = npb_tarball(str(directory))
    with open(path, 'rb') as f:
        data = f.read()
    with open(path, 'wb') as f:
        f.write(data[: len(data) // 2])
    return path, sources.sha256_of(path)


@pytest.fixture
def unhyphenated_cache():
    """A cache whose path has no '-': the verdict view wraps a long line at
    hyphens, and the unwrapped line would not be the line printed."""
    cache = tempfile.mkdtemp(prefix='cbcache', dir='/tmp')
    try:
        yield pathlib.Path(cache)
    finally:
        shutil.rmtree(cache)


def test_28_a_truncated_tarball_whose_sha256_matches(tmp_path, unhyphenated_cache):
    store = Store(tmp_path)
    path, sha256 = truncated_release(tmp_path)
    rc, out = store.run(
        '-S', f'npb_url=file://{path}', '-S', f'npb_sha256={sha256}',
        '-S', 'npb_class=S', '-n', 'benchmark=cg$', '-p', 'gnu-openmpi',
        env={'CLUSTERBENCH_CACHE': str(unhyphenated_cache)},
    )  # fmt: skip
    assert rc == 1, out
    cached = f'{unhyphenated_cache}/{sha256}/{NPB_NAME}'
    assert_line(
        out,
        'NPBCheck on local:default with gnu-openmpi: FAILED (setup): NPBRelease '
        f'failed: {cached}: truncated or corrupt archive (unexpected end of data); '
        'its sha256 is the one given, so the checksum is of a damaged file',
    )
    assert 'eoferror' not in out.lower()
    store.assert_kept(new_session=True)
    # Nothing half-unpacked is left to be taken for the release.
    assert listing(unhyphenated_cache / sha256) == [NPB_NAME]


def gzip_header(data):
    """The length of a gzip header (with the file name tarfile writes)."""
    return data.index(b'\0', 10) + 1 if data[3] & 8 else 10


#: Damage done to the NPB-shaped release, and what the line then says.
DAMAGE = {
    'empty': (lambda data: b'', 'empty file'),
    'cut-at-10-bytes': (lambda data: data[:10], 'unexpected end of data'),
    'not-gzip': (lambda data: b'hello\n' * 100, 'not a gzip file'),
    # Its first deflate block zeroed: a stored block of length 0 and NLEN 0.
    'zeroed-data': (
        lambda data: (
            data[: gzip_header(data)] + bytes(60) + data[gzip_header(data) + 60 :]
        ),
        'zlib error: Error -3 while decompressing data: invalid stored block lengths',
    ),
}


@pytest.mark.parametrize('damage', sorted(DAMAGE))
def test_28_a_damaged_tarball_is_one_line_naming_it(tmp_path, damage):
    cut, words = DAMAGE[damage]
    path, _ = npb_tarball(str(tmp_path))
    with open(path, 'rb') as f:
        data = f.read()
    with open(path, 'wb') as f:
        f.write(cut(data))
    with pytest.raises(sources.CorruptArchive) as err:
        sources.unpacked(path, sources.sha256_of(path))
    assert str(err.value) == (
        f'{path}: truncated or corrupt archive ({words}); its sha256 is the one '
        'given, so the checksum is of a damaged file'
    )
    assert listing(tmp_path) == [NPB_NAME]


# --- friction: what the offline lines say, what a failed fetch leaves ------


@pytest.mark.parametrize('mirror_set', [False, True])
def test_friction_the_npb_skip_line_names_the_mirror(tmp_path, mirror_set):
    store = Store(tmp_path)
    url = closed_url(NPB_NAME)
    env, hint = {}, HINT
    if mirror_set:
        empty = tmp_path / 'empty-mirror'
        empty.mkdir()
        env = {'CLUSTERBENCH_MIRROR': str(empty)}
        hint = (
            f'add {NPB_NAME} to CLUSTERBENCH_MIRROR={empty} (clusterbench mirror '
            'fills it)'
        )
    rc, out = store.run(
        '-S', f'npb_url={url}', '-S', 'npb_class=S', '-n', 'benchmark=cg$',
        '-p', 'gnu-openmpi', env=env,
    )  # fmt: skip
    assert rc == 0, out
    assert_line(
        out,
        '1 NPBCheck test: NPB not provided: give -S npb_source=<unpacked '
        'NPB3.4-MPI tree>, -S npb_prefix=<directory with the <bench>.S.x '
        'binaries>, -S npb_module=<module>, build it with -S build_mode=spack '
        '(spack on PATH) from spack_envs/local/default/, or '
        f'{hint}; the release: {url}: cannot be fetched ({REFUSED})',
    )
    store.assert_kept(new_session=True)


def test_friction_the_stream_and_hpl_lines_name_the_mirror(tmp_path):
    urls = {'stream': closed_url('stream.c'), 'hpl': closed_url('hpl-2.3.tar.gz')}
    proc = list_offline(
        tmp_path, 'StreamCheck|HPLCheck|HPCCCheck',
        '-S', f'stream_url={urls["stream"]}', '-S', f'hpl_url={urls["hpl"]}',
    )  # fmt: skip
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    for bench, check in (('STREAM', 'StreamCheck'), ('HPL', 'HPLCheck')):
        url = urls[bench.lower()]
        assert_line(
            out,
            f'{bench} from HPCC only ({check} not run): {url}: not in the cache, '
            f'and unreachable ({REFUSED}); to build it, {HINT}',
        )
    # Probed, not fetched: nothing was put in the cache.
    assert not [name for name in listing(tmp_path) if len(name) == 64]


def test_friction_the_osu_skip_line_names_the_mirror(tmp_path):
    url = closed_url('osu-micro-benchmarks-7.4.tar.gz')
    rc, out, report = reframe(
        tmp_path, '-p', 'gnu-openmpi',
        '-n', 'OSUPointToPointCheck%.*placement=intra%benchmark=osu_bw',
        '-S', f'osu_url={url}', checks='reframe_checks',
        env={'CLUSTERBENCH_MIRROR': '', 'CLUSTERBENCH_OSU_PREFIX': '',
             'CLUSTERBENCH_CACHE': str(tmp_path / 'cache')},
    )  # fmt: skip
    assert rc == 0, out
    (case,) = [c for c in report['runs'][0]['testcases'] if not c['fixture']]
    assert case['result'] == 'skip'
    assert case['skip_reason'] == (
        'OSU Micro-Benchmarks not installed: give its prefix with -S '
        'osu_prefix=DIR (or CLUSTERBENCH_OSU_PREFIX=DIR), use an environment with '
        "feature 'osu', "
        f'or {HINT}; its release: {url}: cannot be fetched ({REFUSED})'
    )
    assert 'Traceback' not in out


def test_friction_a_failed_fetch_leaves_nothing_and_writes_no_sha256sums(
    server, tmp_path
):
    _, sha256 = npb_tarball(server.root)
    directory, cache = tmp_path / 'mirror', tmp_path / 'cache'
    url = closed_url(NPB_NAME)
    rc, out = mirror(
        directory, '--only', 'npb', *release_args('npb', url, sha256), cache=cache
    )
    assert rc == 2, out
    assert_line(out, f'npb     {url}: cannot be fetched ({REFUSED})')
    assert_line(
        out,
        f'clusterbench mirror: error: {directory}: no release could be mirrored; '
        'nothing written',
    )
    assert not directory.exists()
    assert not (cache / sha256).exists()
    # The cache still works: a later fetch fills it.
    rc, out = mirror(
        directory, '--only', 'npb', *release_args('npb', server.url(NPB_NAME), sha256),
        cache=cache,
    )  # fmt: skip
    assert rc == 0, out
    assert listing(cache / sha256) == [NPB_NAME]
    assert (directory / SUMS).read_text() == f'{sha256}  {NPB_NAME}\n'


def test_friction_a_wrong_file_in_the_mirror_is_named_as_such(server, tmp_path):
    _, npb_sha = npb_tarball(server.root)
    _, stream_sha = stream_file(server.root)
    directory = tmp_path / 'mirror'
    directory.mkdir()
    (directory / 'stream.c').write_text('int main(void) { return 0; }\n')
    wrong = sources.sha256_of(directory / 'stream.c')
    rc, out = mirror(
        directory, '--only', 'npb', 'stream',
        *release_args('npb', server.url(NPB_NAME), npb_sha),
        *release_args('stream', server.url('stream.c'), stream_sha),
        cache=tmp_path / 'cache',
    )  # fmt: skip
    assert rc == 1, out
    assert_line(
        out,
        f'stream  {directory}/stream.c: sha256 mismatch (expected {stream_sha}, '
        f'got {wrong})',
    )
    # Left as it is, not fetched; the verified release is listed alone.
    assert sources.sha256_of(directory / 'stream.c') == wrong
    assert server.gets('stream.c') == 0
    assert (directory / SUMS).read_text() == f'{npb_sha}  {NPB_NAME}\n'
