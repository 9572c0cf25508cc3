"""One measuring session at a time on a node that runs its own jobs.

Two ``clusterbench run`` sessions on a ``local`` partition would share the
node's cores and both record figures as if alone. A session there takes an
exclusive lock per node (``flock`` on ``clusterbench-run-<host>.lock`` in
``$CLUSTERBENCH_LOCK_DIR``, else ``/run/lock``, else the temporary directory);
a second session waits for it, saying who holds it, or with ``--no-wait`` is
refused with one line. The kernel drops the lock when its holder exits, so a
killed session leaves nothing to clean up.
"""

import fcntl
import os
import socket
import sys
import tempfile

from clusterbench.core.errors import ClusterbenchError


def lock_directory():
    """Where the node's lock file lives (one place for every user of the node)."""
    declared = os.environ.get('CLUSTERBENCH_LOCK_DIR')
    if declared:
        return declared
    if os.path.isdir('/run/lock') and os.access('/run/lock', os.W_OK):
        return '/run/lock'
    return tempfile.gettempdir()


class NodeLock:
    """The lock of this node's measuring sessions."""

    def __init__(self, directory=None, host=None):
        self.host = host or socket.gethostname()
        self.path = os.path.join(
            directory or lock_directory(), f'clusterbench-run-{self.host}.lock'
        )
        self._fd = None

    def holder(self):
        """What the session holding the lock wrote about itself."""
        try:
            with open(self.path) as f:
                return ' '.join(f.read().split()) or 'a session that did not say'
        except OSError:
            return 'a session that did not say'

    def acquire(self, wait=True, out=sys.stderr):
        """Take the lock; wait for its holder, or refuse if not *wait*."""
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        except PermissionError:
            # Created by another user: reading it is enough to lock it.
            fd = self._open_read_only()
        except OSError as err:
            raise ClusterbenchError(
                f'{self.path}: cannot open the node lock: {err.strerror}'
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = self.holder()
            if not wait:
                os.close(fd)
                raise ClusterbenchError(
                    f'{self.host} is measuring for another session ({holder}; '
                    f'lock {self.path}): run again when it ends, or without '
                    f'--no-wait to wait for it'
                ) from None
            print(
                f'clusterbench: waiting for the session measuring on {self.host} '
                f'({holder}; lock {self.path})',
                file=out,
                flush=True,
            )
            fcntl.flock(fd, fcntl.LOCK_EX)
        self._fd = fd
        self.record(f'pid {os.getpid()}')

    def _open_read_only(self):
        try:
            return os.open(self.path, os.O_RDONLY)
        except OSError as err:
            raise ClusterbenchError(
                f'{self.path}: cannot open the node lock: {err.strerror}'
            ) from None

    def record(self, about):
        """Say who holds the lock (pid, session), for a session that waits."""
        try:
            os.ftruncate(self._fd, 0)
            os.pwrite(self._fd, f'{about}\n'.encode(), 0)
        except OSError:
            pass  # opened read-only (another user's file): the lock still holds

    def release(self):
        if self._fd is None:
            return
        try:
            os.ftruncate(self._fd, 0)
        except OSError:
            pass
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None
