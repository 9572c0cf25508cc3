"""Reading a file a user names (a run report, an A/B leg, a benchmark
output a report points at): a regular file of a bounded size.

A FIFO would block the reader until someone writes to it (a command that
never ends, holding whatever it holds), and ``/dev/zero`` or a file of
gigabytes would be read until the memory runs out. Both are refused in one
line naming the path, before anything is read.
"""

import os
import stat

from clusterbench.core.errors import ClusterbenchError

#: The most a command reads of one file, in MiB. A ReFrame report of
#: thousands of test cases is tens of MiB; a centre whose reports are bigger
#: raises the limit with LIMIT_ENV.
DEFAULT_MIB = 256
LIMIT_ENV = 'CLUSTERBENCH_MAX_INPUT_MIB'

_KINDS = (
    (stat.S_ISDIR, 'a directory'),
    (stat.S_ISFIFO, 'a FIFO'),
    (stat.S_ISCHR, 'a character device'),
    (stat.S_ISBLK, 'a block device'),
    (stat.S_ISSOCK, 'a socket'),
)


def limit_mib():
    """The limit in MiB: LIMIT_ENV if set, else DEFAULT_MIB."""
    text = os.environ.get(LIMIT_ENV, '').strip()
    if not text:
        return DEFAULT_MIB
    if not text.isdigit() or int(text) < 1:
        raise ClusterbenchError(
            f'{LIMIT_ENV}={text}: not a whole number of MiB above 0'
        )
    return int(text)


def read_bytes(path):
    """The bytes of the regular file at *path*; one line naming it when it is
    anything else or larger than the limit. OSError (no such file, no
    permission) is the caller's to word."""
    mib = limit_mib()
    limit = mib * 2**20
    # Checked before opening: opening a device may do something.
    _check(path, os.stat(path), mib, limit)
    # O_NONBLOCK: should the path have become a FIFO since, opening it does
    # not wait for a writer; fstat then says what was opened.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        _check(path, os.fstat(fd), mib, limit)
        chunks, size = [], 0
        while True:
            chunk = os.read(fd, min(2**20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:  # it grew while being read
                raise ClusterbenchError(_too_big(path, mib))
    finally:
        os.close(fd)
    return b''.join(chunks)


def read_text(path):
    """read_bytes(*path*) as UTF-8 text (UnicodeDecodeError if it is not)."""
    return read_bytes(path).decode('utf-8')


def _check(path, info, mib, limit):
    if not stat.S_ISREG(info.st_mode):
        kind = next((k for test, k in _KINDS if test(info.st_mode)), 'something else')
        raise ClusterbenchError(f'{path}: not a regular file ({kind})')
    if info.st_size > limit:
        raise ClusterbenchError(_too_big(path, mib))


def _too_big(path, mib):
    return f'{path}: larger than {mib} MiB (set {LIMIT_ENV} to read more)'
