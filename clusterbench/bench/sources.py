"""Benchmark sources from their release tarballs: cache, mirror, checksum.

Every benchmark the checks build from source has a default release here: its
official URL and the sha256 published for it. The values are taken from the
``package.py`` of the benchmark in spack/spack-packages (cited beside each;
STREAM's Spack package pins no checksum, so its value comes from EasyBuild's
easyconfig). A site overrides them with ReFrame variables ``<bench>_url`` and
``<bench>_sha256``.

Where a source is looked for, first found first used:

1. the cache, ``$CLUSTERBENCH_CACHE`` (default ``~/.cache/clusterbench``):
   ``<cache>/<sha256>/<file name>``, so a changed checksum never hits a stale
   file;
2. the mirror, ``$CLUSTERBENCH_MIRROR``: a directory of files named as
   upstream names them (``clusterbench mirror DIR`` fills one);
3. the URL itself (``file://``, ``http://``, ``https://``), downloaded once
   into the cache.

Whatever the origin, the file's sha256 must be the expected one: otherwise
:class:`ChecksumMismatch` (one line with the URL and both hashes) and nothing
is cached or built. A source that cannot be had at all (no network, no
mirror) is :class:`Unavailable`, which checks turn into a skip or a fallback.
"""

import contextlib
import hashlib
import http.client
import lzma
import os
import re
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import zlib
from dataclasses import dataclass

from clusterbench.core.errors import ClusterbenchError

CACHE_ENV = 'CLUSTERBENCH_CACHE'
MIRROR_ENV = 'CLUSTERBENCH_MIRROR'
DOWNLOAD_TIMEOUT = 60
PROBE_TIMEOUT = 5


@dataclass(frozen=True)
class Release:
    """One benchmark release: where upstream publishes it and its checksum."""

    name: str
    version: str
    url: str
    sha256: str

    @property
    def filename(self):
        return filename_of(self.url)


#: The default release of each benchmark built from source.
DEFAULTS = {
    r.name: r
    for r in (
        # spack/spack-packages repos/spack_repo/builtin/packages/npb/package.py:
        # version("3.4.3"), url pattern .../assets/npb/NPB<version>.tar.gz.
        # Spack has never listed 3.4.2 (no published checksum to take), so
        # the default is 3.4.3, the nearest release that has one.
        Release(
            'npb',
            '3.4.3',
            'https://www.nas.nasa.gov/assets/npb/NPB3.4.3.tar.gz',
            'a97c03d7e87ab826fba79c754415a13632c5273877abad270c85201db0f86aeb',
        ),
        # spack/spack-packages repos/spack_repo/builtin/packages/stream/
        # package.py: version("5.10") from git, no checksum. URL and sha256
        # from easybuilders/easybuild-easyconfigs
        # easybuild/easyconfigs/s/STREAM/STREAM-5.10-GCC-13.3.0.eb.
        Release(
            'stream',
            '5.10',
            'https://www.cs.virginia.edu/stream/FTP/Code/stream.c',
            'a52bae5e175bea3f7832112af9c085adab47117f7d2ce219165379849231692b',
        ),
        # spack/spack-packages repos/spack_repo/builtin/packages/hpl/package.py:
        # version("2.3"), url pattern .../hpl/hpl-<version>.tar.gz.
        Release(
            'hpl',
            '2.3',
            'https://www.netlib.org/benchmark/hpl/hpl-2.3.tar.gz',
            '32c5c17d22330e6f2337b681aded51637fb6008d3f0eb7c277b163fadd612830',
        ),
        # spack/spack-packages repos/spack_repo/builtin/packages/
        # osu_micro_benchmarks/package.py: version("7.4").
        Release(
            'osu',
            '7.4',
            'https://mvapich.cse.ohio-state.edu/download/mvapich/'
            'osu-micro-benchmarks-7.4.tar.gz',
            '1edd0c2efa61999409bfb28740a7f39689a5b42b1a1b4c66d1656e5637f7cefc',
        ),
        # spack/spack-packages repos/spack_repo/builtin/packages/
        # intel_mpi_benchmarks/package.py: version("2021.7"), url_for_version
        # .../archive/refs/tags/IMB-v<version>.tar.gz.
        Release(
            'imb',
            '2021.7',
            'https://github.com/intel/mpi-benchmarks/archive/refs/tags/'
            'IMB-v2021.7.tar.gz',
            'acee02cc719a74e6853194576cb7e6bf1fdc74f8971578e1b2141306c3c19477',
        ),
    )
}


class SourceError(ClusterbenchError):
    """A benchmark source that cannot be used."""


class Unavailable(SourceError):
    """Not in the cache or the mirror, and the URL cannot be reached."""


class ChecksumMismatch(SourceError):
    """The file is not the one whose checksum was given: never used."""


class CorruptArchive(SourceError):
    """A tarball that ends early or is damaged: it cannot be unpacked."""


class CannotWrite(SourceError):
    """A local file (the cache, a mirror) cannot be written: a full disk, a
    read-only one. Not :class:`Unavailable`: the source may well be there."""


#: What reading a URL or a file may raise (http.client's IncompleteRead, a
#: connection closed before the announced length, is not an OSError).
READ_ERRORS = (urllib.error.URLError, OSError, ValueError, http.client.HTTPException)

#: Names of the files unpacked as tarballs (others only if tarfile says so).
TARBALL_NAME = re.compile(r'\.(tar|tar\.gz|tgz|tar\.bz2|tbz2?|tar\.xz|txz)$')


def filename_of(url):
    """The file name upstream gives *url* (its last path component).

    Only plain names are accepted: the name becomes a path in the cache and
    the mirror, and a source file on a build's command line.
    """
    name = os.path.basename(urllib.parse.urlsplit(url).path)
    if not name:
        raise SourceError(f'{url}: no file name in the URL')
    if not re.fullmatch(r'[A-Za-z0-9][A-Za-z0-9._+-]*', name):
        raise SourceError(f'{url}: file name {name!r} has unusual characters')
    return name


def cache_dir():
    return os.path.expanduser(
        os.environ.get(CACHE_ENV) or os.path.join('~', '.cache', 'clusterbench')
    )


def mirror_dir():
    return os.environ.get(MIRROR_ENV) or None


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, 'rb') as f:
        for block in iter(lambda: f.read(1 << 20), b''):
            digest.update(block)
    return digest.hexdigest()


def _check_sha256(sha256, where):
    if len(sha256) != 64 or any(c not in '0123456789abcdef' for c in sha256.lower()):
        raise SourceError(f'{where}: sha256 {sha256!r} is not 64 hex digits')
    return sha256.lower()


def cached_path(url, sha256, cache=None):
    """Where the cache keeps the file of *url* with checksum *sha256*."""
    return os.path.join(cache or cache_dir(), sha256.lower(), filename_of(url))


def _mismatch(url, got, expected, where=''):
    origin = f' ({where})' if where else ''
    return ChecksumMismatch(
        f'{url}{origin}: sha256 {got}, expected {expected}: refused, nothing built'
    )


def os_cause(err):
    """The system's words for *err* ('no space left on device')."""
    strerror = getattr(err, 'strerror', None)
    return strerror.lower() if strerror else str(err)


def cannot_write(path, err, what='cannot write'):
    """:class:`CannotWrite` of *path*: ``PATH: cannot write: CAUSE``."""
    return CannotWrite(f'{path}: {what}: {os_cause(err)}')


def mirror_hint(url, mirror=None):
    """How a release that cannot be had here can be: through a mirror."""
    mirror = mirror if mirror is not None else mirror_dir()
    if not mirror:
        return f'set {MIRROR_ENV} to a mirror made with clusterbench mirror'
    try:
        name = filename_of(url)
    except SourceError:
        name = 'the release'
    return f'add {name} to {MIRROR_ENV}={mirror} (clusterbench mirror fills it)'


def _unfetchable(url):
    def error(err):
        reason = getattr(err, 'reason', None) or err
        return Unavailable(f'{url}: cannot be fetched ({reason})')

    return error


def _blocks(reader, unreadable):
    """The blocks of the file object *reader*; a reading error is unreadable(err)."""
    while True:
        try:
            block = reader.read(1 << 20)
        except READ_ERRORS as err:
            raise unreadable(err) from None
        if not block:
            return
        yield block


def _copy_into(reader, dest, name, unreadable):
    """Copy *reader* into *dest*: reading errors are the source's
    (unreadable(err)), writing errors :class:`CannotWrite` naming *name*.
    Returns the number of bytes copied."""
    size = 0
    try:
        with open(dest, 'wb') as out:
            for block in _blocks(reader, unreadable):
                size += out.write(block)
    except OSError as err:
        raise cannot_write(name, err) from None
    return size


def _download(url, dest, name, timeout):
    """Copy *url* to *dest* (a temporary name beside the final one, *name*)."""
    scheme = urllib.parse.urlparse(url).scheme
    if scheme not in ('http', 'https', 'file'):
        raise SourceError(f'{url}: only http, https and file URLs are fetched')
    unfetchable = _unfetchable(url)
    try:
        resp = urllib.request.urlopen(url, timeout=timeout)
    except READ_ERRORS as err:
        raise unfetchable(err) from None
    with resp:
        size = _copy_into(resp, dest, name, unfetchable)
        announced = resp.headers.get('Content-Length', '')
    if announced.isdigit() and size < int(announced):
        # http.client ends a cut transfer quietly: say so, not "sha256 X".
        cut = f'the transfer ended at {size} of {announced} bytes'
        raise unfetchable(cut)


def _copy_mirrored(mirrored, dest, name):
    def unreadable(err):
        return SourceError(f'{mirrored}: cannot read: {os_cause(err)}')

    try:
        reader = open(mirrored, 'rb')
    except OSError as err:
        raise unreadable(err) from None
    with reader:
        _copy_into(reader, dest, name, unreadable)


def fetch(url, sha256, cache=None, mirror=None, timeout=DOWNLOAD_TIMEOUT):
    """The verified local file of *url*: ``(path, origin)``.

    *origin* is ``'cache'``, ``'mirror'`` or ``'download'``; the file is
    always the cache's copy. *mirror* defaults to ``$CLUSTERBENCH_MIRROR``.
    """
    sha256 = _check_sha256(sha256, url)
    mirror = mirror if mirror is not None else mirror_dir()
    target = cached_path(url, sha256, cache)
    if os.path.isfile(target):
        got = sha256_of(target)
        if got == sha256:
            return target, 'cache'
        # Damaged in the cache: fetch it again rather than trust it.
        try:
            os.unlink(target)
        except OSError as err:
            what = 'damaged in the cache, cannot remove it'
            raise cannot_write(target, err, what) from None
    try:
        return target, _fetch_into(target, url, sha256, mirror, timeout)
    except BaseException:
        # Leave no empty <sha256>/ behind (one that holds another session's
        # partial file or unpacked tree is not empty, and stays).
        with contextlib.suppress(OSError):
            os.rmdir(os.path.dirname(target))
        raise


def _partial_beside(target):
    """A new empty temporary file in *target*'s directory (made if missing)."""
    directory = os.path.dirname(target)
    for attempt in (1, 2):
        try:
            os.makedirs(directory, exist_ok=True)
            fd, partial = tempfile.mkstemp(dir=directory, prefix='.partial-')
        except FileNotFoundError:
            # Another session's failed fetch removed the empty directory
            # between the two calls: make it again, once.
            if attempt == 2:
                raise
            continue
        except OSError as err:
            raise cannot_write(target, err) from None
        os.close(fd)
        return partial


def _fetch_into(target, url, sha256, mirror, timeout):
    """Fetch *url* into the cache's *target*, verified; its origin."""
    partial = _partial_beside(target)
    try:
        mirrored = mirror and os.path.join(mirror, filename_of(url))
        if mirrored and os.path.isfile(mirrored):
            _copy_mirrored(mirrored, partial, target)
            origin, where = 'mirror', f'mirror {mirrored}'
        else:
            _download(url, partial, target, timeout)
            origin, where = 'download', ''
        got = sha256_of(partial)
        if got != sha256:
            raise _mismatch(url, got, sha256, where)
        try:
            os.replace(partial, target)
        except OSError as err:
            raise cannot_write(target, err) from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(partial)
    return origin


def reachable(url, sha256, cache=None, mirror=None, timeout=PROBE_TIMEOUT):
    """``''`` if *url* can be had (cache, mirror or a live URL), else why not.

    Nothing is downloaded: a live URL is probed with a HEAD request.
    """
    mirror = mirror if mirror is not None else mirror_dir()
    try:
        sha256 = _check_sha256(sha256, url)
        if os.path.isfile(cached_path(url, sha256, cache)):
            return ''
        if mirror and os.path.isfile(os.path.join(mirror, filename_of(url))):
            return ''
    except SourceError as err:
        return str(err)
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme == 'file':
        path = urllib.request.url2pathname(parsed.path)
        return '' if os.path.isfile(path) else f'{url}: no such file'
    try:
        request = urllib.request.Request(url, method='HEAD')
        with urllib.request.urlopen(request, timeout=timeout):
            return ''
    except urllib.error.HTTPError as err:
        # The server answered; some refuse HEAD (405): the download decides.
        if err.code not in (404, 410):
            return ''
        return f'{url}: not in the cache, and the server says {err.code} {err.reason}'
    except (urllib.error.URLError, OSError, ValueError) as err:
        reason = getattr(err, 'reason', None) or err
        where = f' nor in {MIRROR_ENV}={mirror}' if mirror else ''
        return f'{url}: not in the cache{where}, and unreachable ({reason})'


def _is_tarball(path):
    if TARBALL_NAME.search(os.path.basename(path)):
        return True
    try:
        return tarfile.is_tarfile(path)
    except (EOFError, zlib.error, lzma.LZMAError, OSError):
        # A compressed file that ends early or is damaged: unpacking says so.
        return True


#: tarfile's own words for an archive that ends early.
_ENDS_EARLY = ('unexpected end of data', 'truncated header')
#: The compression tarfile tries first for a tarball of each name.
_METHOD = (
    ('gz', ('.gz', '.tgz')),
    ('bz2', ('.bz2', '.tbz', '.tbz2')),
    ('xz', ('.xz', '.txz')),
)
#: One line of tarfile's "could not be opened successfully" list.
_TRIED = re.compile(r"^- method (\w+): \w+\(['\"]?(.*?)['\"]?\)$", re.M)


def _tarfile_words(path, detail):
    """tarfile's reason in one line: of its list of the compressions it
    tried, the one the file's name says (else plain tar)."""
    tried = dict(_TRIED.findall(detail))
    if not tried:
        return ' '.join(detail.split())
    name = os.path.basename(path)
    method = next((m for m, ends in _METHOD if name.endswith(ends)), 'tar')
    return tried.get(method) or next(iter(tried.values()))


def _corrupt(path, err):
    """The one line of a tarball that cannot be read to its end."""
    detail = _tarfile_words(path, str(err))
    if isinstance(err, EOFError) or detail in _ENDS_EARLY:
        detail = 'unexpected end of data'
    return CorruptArchive(f'{path}: truncated or corrupt archive ({detail})')


def unpack(path, dest, shown=None):
    """Unpack the tarball (or copy the single file) *path* into *dest*.

    Returns *dest*. A tarball whose members would leave *dest* (absolute
    paths, ``..``, links out) is refused by tarfile's ``data`` filter; one
    that ends early or is damaged is :class:`CorruptArchive`. Messages name
    *dest* as *shown* (the final name of a temporary *dest*).
    """
    shown = shown or dest
    try:
        os.makedirs(dest, exist_ok=True)
        if not _is_tarball(path):
            shutil.copy(path, dest)
            return dest
    except OSError as err:
        raise cannot_write(shown, err) from None
    try:
        with tarfile.open(path) as tar:
            tar.extractall(dest, filter='data')
    except tarfile.FilterError as err:
        raise SourceError(f'{path}: cannot be unpacked ({err})') from None
    except (EOFError, zlib.error, lzma.LZMAError, tarfile.TarError) as err:
        raise _corrupt(path, err) from None
    except OSError as err:
        if err.errno is None:
            # gzip's and bz2's "not a valid stream" errors carry no errno.
            raise _corrupt(path, err) from None
        raise cannot_write(shown, err, 'cannot unpack into it') from None
    return dest


def unpacked(path, sha256):
    """The tree of the verified file *path*, unpacked once beside it.

    The unpacked tree lives in the cache next to the file (``<file>.d``); it is
    made under a temporary name and renamed, so a half-unpacked tree is never
    used.
    """
    tree = f'{path}.d'
    if os.path.isdir(tree):
        return tree
    try:
        work = tempfile.mkdtemp(dir=os.path.dirname(path), prefix='.unpack-')
    except OSError as err:
        raise cannot_write(tree, err) from None
    try:
        unpack(path, work, shown=tree)
        try:
            os.rename(work, tree)
        except OSError as err:
            # Another session unpacked it first: use theirs.
            if not os.path.isdir(tree):
                raise cannot_write(tree, err) from None
    except CorruptArchive as err:
        # Verified, yet broken: the checksum given is of a damaged file.
        raise CorruptArchive(
            f'{err}; its sha256 is the one given, so the checksum is of a damaged file'
        ) from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return tree


def single_top(tree):
    """The one top-level directory of an unpacked tarball, else *tree*."""
    entries = [e for e in os.listdir(tree) if not e.startswith('.')]
    if len(entries) == 1 and os.path.isdir(os.path.join(tree, entries[0])):
        return os.path.join(tree, entries[0])
    return tree
