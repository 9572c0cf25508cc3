"""``clusterbench mirror DIR``: the default releases, for an air-gapped site.

Downloads every default benchmark release (:data:`clusterbench.bench.sources.
DEFAULTS`) into DIR under the name upstream gives it, verifies each against
its sha256 and writes ``SHA256SUMS`` (``sha256sum -c`` reads it; with
``--only``, the lines of the other files still in DIR are kept). A file of
the wrong checksum already in DIR is named and left alone. Every file is
written under a temporary name and renamed: a full or read-only disk is one
line naming the file, exit 2, and leaves no torn file. Copy DIR
to the site and set ``CLUSTERBENCH_MIRROR=DIR``. ``--check DIR`` verifies a
mirror without the network. ``--url NAME=URL`` and ``--sha256 NAME=HEX``
override a release (as the checks' ``-S <name>_url=`` and ``_sha256=`` do).
"""

import contextlib
import os
import re
import shutil
import sys
import tempfile

from clusterbench.bench import sources
from clusterbench.core.errors import ClusterbenchError

SUMS = 'SHA256SUMS'
#: A line of ``sha256sum``: the hash, a space, a space or ``*`` (binary), a name.
_SUMS_LINE = re.compile(r'([0-9a-fA-F]{64}) [ *](.+)')


def _overrides(pairs, what):
    found = {}
    for pair in pairs or ():
        name, sep, value = pair.partition('=')
        if not sep or name not in sources.DEFAULTS:
            raise ClusterbenchError(
                f'--{what} {pair}: expected NAME={what.upper()} with NAME one of '
                f'{", ".join(sources.DEFAULTS)}'
            )
        if what == 'sha256' and not re.fullmatch(r'[0-9a-fA-F]{64}', value):
            raise ClusterbenchError(f'--sha256 {pair}: not 64 hex digits')
        found[name] = value
    return found


def releases(args):
    """``[(name, url, sha256)]`` of the releases asked for."""
    urls = _overrides(args.url, 'url')
    hashes = _overrides(args.sha256, 'sha256')
    names = args.only or list(sources.DEFAULTS)
    unknown = [n for n in names if n not in sources.DEFAULTS]
    if unknown:
        raise ClusterbenchError(
            f'--only {unknown[0]}: not a release (one of {", ".join(sources.DEFAULTS)})'
        )
    return [
        (
            n,
            urls.get(n, sources.DEFAULTS[n].url),
            hashes.get(n, sources.DEFAULTS[n].sha256).lower(),
        )
        for n in names
    ]


def read_sums(directory):
    """``{file name: sha256}`` of DIR's SHA256SUMS, in its order ({} if none).

    Only ``sha256sum``'s own lines (``HEX  NAME``, ``HEX *NAME``) are read: a
    file with any other line is refused, naming the line, before anything
    is fetched or written.
    """
    path = os.path.join(directory, SUMS)
    try:
        with open(path, encoding='utf-8') as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeError) as err:
        raise ClusterbenchError(
            f'{path}: cannot read: {sources.os_cause(err)}'
        ) from None
    sums, where = {}, {}
    for number, line in enumerate(lines, 1):
        match = _SUMS_LINE.fullmatch(line)
        if not line.strip():
            continue
        if not match:
            raise ClusterbenchError(
                f'{path}:{number}: not a sha256sum line (HEX  NAME): {line[:60]!r}'
            )
        name = match.group(2)
        if name in sums:
            raise ClusterbenchError(
                f'{path}:{number}: {name} is listed twice (also line {where[name]})'
            )
        sums[name], where[name] = match.group(1).lower(), number
    return sums


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _replace(directory, name, write):
    """Write DIR/*name* with *write(file)* through a temporary file renamed
    into place: a full or read-only disk leaves the old file (or none), never
    a torn one, and is one line naming the file."""
    target = os.path.join(directory, name)
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix='.partial-')
        with os.fdopen(fd, 'wb') as out:
            write(out)
        # mkstemp's 0600 would keep the mirror from the site's other users.
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
        tmp = None
    except OSError as err:
        raise ClusterbenchError(
            f'{target}: cannot write: {sources.os_cause(err)}'
        ) from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _copy_into(path, directory, name):
    def write(out):
        with open(path, 'rb') as f:
            shutil.copyfileobj(f, out)

    _replace(directory, name, write)


def _write_sums(directory, sums):
    text = ''.join(f'{sha256}  {name}\n' for name, sha256 in sums.items())
    _replace(directory, SUMS, lambda out: out.write(text.encode()))


def _make_dir(directory):
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as err:
        raise ClusterbenchError(
            f'{directory}: cannot create: {sources.os_cause(err)}'
        ) from None


def check(directory, wanted, out=sys.stdout):
    """Verify *directory* against *wanted*; the number of problems."""
    if not os.path.isdir(directory):
        raise ClusterbenchError(f'{directory}: no such mirror directory')
    problems = 0
    for name, url, sha256 in wanted:
        filename = sources.filename_of(url)
        path = os.path.join(directory, filename)
        if not os.path.isfile(path):
            print(f'{name:7} {filename}: missing', file=out)
            problems += 1
            continue
        got = sources.sha256_of(path)
        if got == sha256.lower():
            print(f'{name:7} {filename}: ok (sha256 {got})', file=out)
        else:
            print(f'{name:7} {path}: sha256 {got}, expected {sha256} ({url})', file=out)
            problems += 1
    return problems


def _mirror_one(directory, name, url, sha256, out):
    """Put release *name* into *directory*: its file name once verified,
    ``None`` (a problem, said in one line) otherwise."""
    filename = sources.filename_of(url)
    if filename == SUMS:
        raise ClusterbenchError(f'{url}: {SUMS} is the name of the checksum file')
    target = os.path.join(directory, filename)
    if os.path.isfile(target):
        got = sources.sha256_of(target)
        if got != sha256:
            # Not ours to replace: it may be a release the site chose.
            print(
                f'{name:7} {target}: sha256 mismatch (expected {sha256}, got {got})',
                file=out,
            )
            return None
        status = 'present'
    else:
        try:
            # Through the cache (and not this mirror): a second run or a
            # checked-out cache downloads nothing.
            path, origin = sources.fetch(url, sha256, mirror='')
        except sources.CannotWrite:
            raise  # the cache's disk: one line, exit 2
        except sources.SourceError as err:
            print(f'{name:7} {err}', file=out)
            return None
        _make_dir(directory)
        _copy_into(path, directory, filename)
        status = 'from the cache' if origin == 'cache' else f'downloaded ({url})'
    print(f'{name:7} {filename}: {status}, sha256 verified', file=out)
    return filename


def fill(directory, wanted, out=sys.stdout):
    """Download into *directory* what it lacks; the number of problems.

    SHA256SUMS keeps the lines of the files still there that were not asked
    for (``--only``), and is written only when it changes. Nothing mirrored
    at all is an error: no empty SHA256SUMS is written.
    """
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise ClusterbenchError(f'{directory}: not a directory')
    before = read_sums(directory)
    sums = {
        name: sha256
        for name, sha256 in before.items()
        if os.path.isfile(os.path.join(directory, name))
    }
    problems = 0
    mirrored = 0
    for name, url, sha256 in wanted:
        filename = _mirror_one(directory, name, url, sha256, out)
        if filename is None:
            problems += 1
            continue
        sums[filename] = sha256
        mirrored += 1
    if not mirrored:
        raise ClusterbenchError(
            f'{directory}: no release could be mirrored; nothing written'
        )
    if sums != before or not os.path.isfile(os.path.join(directory, SUMS)):
        _write_sums(directory, sums)
    return problems
