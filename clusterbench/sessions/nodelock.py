"""One measuring session at a time on a node that runs its own jobs.

Two ``clusterbench run`` sessions on a ``local`` partition would share the
node's cores and both record figures as if alone. A session there takes an
exclusive lock per node (``flock`` on ``clusterbench-run-<host>.lock`` in
``$CLUSTERBENCH_LOCK_DIR``, else ``/run/lock``, else the temporary directory);
a second session waits for it, saying who holds it, or with ``--no-wait`` is
refused with one line. The kernel drops the lock when its holder exits, so a
killed session leaves nothing to clean up.

What measures is ReFrame, a child of the session: it inherits the locked
file (see :meth:`NodeLock.inheritable`), so the lock stays taken while it
runs, even if the session itself was killed (``kill -9``) and its ReFrame
outlived it. The lock file says who holds it: the session's pid and
directory, and the pid of the ReFrame it runs.
"""

import contextlib
import fcntl
import os
import re
import socket
import sys
import tempfile
import time

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
        self._about = ''
        self._reframe = None

    def holder(self):
        """What the session holding the lock wrote about itself; if that
        session is gone and its ReFrame is not, the ReFrame's pid."""
        try:
            with open(self.path) as f:
                lines = [' '.join(line.split()) for line in f.read().splitlines()]
        except OSError:
            lines = []
        lines = [line for line in lines if line]
        if not lines:
            return 'a session that did not say'
        about, measuring = lines[0], _reframe_pid(lines[1:])
        session = re.fullmatch(r'pid (\d+), (.*)', about)
        if (
            session
            and measuring
            and not running(int(session[1]))
            and running(measuring)
        ):
            return (
                f'ReFrame pid {measuring} of {session[2]}, whose clusterbench '
                f'pid {session[1]} is gone'
            )
        return about

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
        queue = WaitQueue(f'{self.path[: -len(".lock")]}.queue')
        if not queue.waiting() and _try_lock(fd):
            self._fd = fd
            self.record(f'pid {os.getpid()}')
            return
        if not wait:
            os.close(fd)
            raise ClusterbenchError(
                f'{self.host} is measuring for another session ({self.holder()}; '
                f'lock {self.path}): run again when it ends, or without '
                f'--no-wait to wait for it'
            )
        with queue.ticket() as mine:
            told = None
            while not (queue.first() in (mine, None) and _try_lock(fd)):
                holder = self._current_holder()
                if holder and holder != told:
                    # Said again whenever the lock changes hands.
                    print(
                        f'clusterbench: waiting for the session measuring on '
                        f'{self.host} ({holder}; lock {self.path})',
                        file=out,
                        flush=True,
                    )
                    told = holder
                time.sleep(WAIT_POLL)
        self._fd = fd
        self.record(f'pid {os.getpid()}')

    def _current_holder(self):
        """Who holds the lock now, or '' between two holders."""
        try:
            with open(self.path) as f:
                if not f.read().strip():
                    return ''
        except OSError:
            return ''
        return self.holder()

    def _open_read_only(self):
        try:
            return os.open(self.path, os.O_RDONLY)
        except OSError as err:
            raise ClusterbenchError(
                f'{self.path}: cannot open the node lock: {err.strerror}'
            ) from None

    def record(self, about, reframe=None):
        """Say who holds the lock (pid, session; the pid of the *reframe* it
        runs), for a session that waits."""
        self._about = about
        text = f'{about}\n' + (f'{REFRAME_PID} {reframe}\n' if reframe else '')
        try:
            os.ftruncate(self._fd, 0)
            os.pwrite(self._fd, text.encode(), 0)
        except OSError:
            pass  # opened read-only (another user's file): the lock still holds

    def measuring(self, pid):
        """Record *pid*, the ReFrame that this session just started."""
        self._reframe = pid
        self.record(self._about, pid)

    def inheritable(self):
        """The descriptors a child must keep (``Popen(pass_fds=...)``) to hold
        the lock with this session: a ``flock`` belongs to the open file, and
        the kernel keeps it while any process has that file open."""
        return () if self._fd is None else (self._fd,)

    def release(self):
        """Let the lock go: at once, or, if this session's ReFrame still runs
        (the session interrupted), when that ends (an unlock would free it
        for every holder of the file)."""
        if self._fd is None:
            return
        if not (self._reframe and running(self._reframe)):
            try:
                os.ftruncate(self._fd, 0)
            except OSError:
                pass
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None


#: Seconds between two looks of a waiting session at the lock and its queue.
WAIT_POLL = 0.2


def _try_lock(fd):
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


class WaitQueue:
    """The sessions waiting for a node, first come first served (``flock``
    alone wakes waiters in no order): a directory of tickets named by the
    time they were taken, each locked by its waiter while it waits, so that
    the ticket of a waiter that died counts no more."""

    def __init__(self, path):
        self.path = path

    def _live(self):
        try:
            names = sorted(n for n in os.listdir(self.path) if n[:1] != '.')
        except OSError:
            return []
        live = []
        for name in names:
            path = os.path.join(self.path, name)
            try:
                fd = os.open(path, os.O_RDONLY)
            except OSError:
                continue
            try:
                if _try_lock(fd):
                    _remove(path)  # its waiter is gone (or just took the node)
                else:
                    live.append(name)
            finally:
                os.close(fd)
        return live

    def waiting(self):
        return bool(self._live())

    def first(self):
        live = self._live()
        return live[0] if live else None

    @contextlib.contextmanager
    def ticket(self):
        """A ticket at the end of the queue, held for the body."""
        try:
            os.makedirs(self.path, exist_ok=True)
            os.chmod(self.path, 0o1777)  # every user of the node queues here
        except PermissionError:
            pass  # made by another user, who opened it to all
        except OSError as err:
            raise ClusterbenchError(
                f'{self.path}: cannot queue for the node: {err.strerror}'
            ) from None
        name = f'{time.time_ns():020d}-{os.getpid()}'
        path = os.path.join(self.path, name)
        # Locked before it is in the queue: an unlocked ticket counts as gone.
        hidden = os.path.join(self.path, f'.{name}')
        fd = os.open(hidden, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.rename(hidden, path)
        try:
            yield name
        finally:
            _remove(path)
            os.close(fd)


def _remove(path):
    try:
        os.unlink(path)
    except OSError:
        pass


#: How the lock file names the ReFrame of the session holding it.
REFRAME_PID = 'ReFrame pid'


def _reframe_pid(lines):
    for line in lines:
        found = re.fullmatch(rf'{REFRAME_PID} (\d+)', line)
        if found:
            return int(found[1])
    return None


def running(pid):
    """Whether process *pid* is running (not gone, nor a zombie)."""
    try:
        with open(f'/proc/{pid}/stat') as f:
            # "pid (comm) state ...": comm may hold spaces and parentheses.
            return f.read().rpartition(')')[2].split()[0] not in ('Z', 'X')
    except FileNotFoundError:
        return False
    except OSError:
        pass  # no /proc here: ask the kernel
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process: it exists
    return True
