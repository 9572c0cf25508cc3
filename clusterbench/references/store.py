"""One reference update is one transaction: all its files change, or none.

An update rewrites several files (references and their provenance). Each new
version is written to a temporary file beside its target and fsynced. A
journal naming every target with the hashes of its old and new content is
then renamed into place: that rename is the commit. Only then are the
temporary files renamed over their targets, and the journal removed.

A crash before the commit leaves temporary files only: rolled back (they are
removed, every file is still its old version). A crash after it leaves the
journal: rolled forward (the remaining temporary files are renamed; every
file is its new version). ``references check`` names both states, and the
next update or ``references repair`` repairs them.

Nothing here is for tests: they kill a real update before each of its file
operations, which they see through Python's audit hooks (tests/fsfaults.py).
"""

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import re
import secrets
import sys

from clusterbench.core.errors import ClusterbenchError

JOURNAL = '.update.journal'
LOCK = '.update.lock'
#: Temporary files of an update: ours (``.<name>.txn-<id>``, the journal's),
#: and the ``.tmp-*`` of the per-file writer that came before.
_TEMPORARY = re.compile(r'^\.(tmp-.+|.+\.txn-[0-9a-f]+|update\.journal\.tmp)$')


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def _hash_of(path):
    try:
        with open(path, 'rb') as f:
            return sha256(f.read())
    except FileNotFoundError:
        return None


@contextlib.contextmanager
def locked(directory):
    """Serialize updates and repairs of *directory* (an flock, released on
    any exit of the process, kill -9 included)."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, LOCK)
    with open(path, 'a') as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            # Say why nothing happens, or a wait looks like a hang.
            print(
                f'clusterbench: waiting for another update of {directory} '
                f'(lock {path})',
                file=sys.stderr,
                flush=True,
            )
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield


@contextlib.contextmanager
def shared_lock(directory):
    """Wait for a running update, so that a reader does not take its
    temporary files for leftovers of a crash (no lock file: nothing to wait for)."""
    try:
        lock = open(os.path.join(directory, LOCK))
    except OSError:
        yield
        return
    with lock:
        fcntl.flock(lock, fcntl.LOCK_SH)
        yield


def _fsync_dir(directory):
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _mode_for(path):
    """A replaced file keeps its permission bits; a new one gets the umask's."""
    try:
        return os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        return None


def _write_temp(path, data, mode):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_error(err, path):
    if err.errno in (errno.ENOSPC, errno.EDQUOT):
        return ClusterbenchError(
            f'{path}: no space left on device; nothing was changed'
        )
    return ClusterbenchError(
        f'{path}: cannot write: {err.strerror or err}; nothing was changed'
    )


def leftovers(directory):
    """The journal and temporary files of an interrupted update (relative paths)."""
    found = []
    for sub in ['', *sorted(os.listdir(directory))]:
        folder = os.path.join(directory, sub)
        if sub and not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if name == JOURNAL or _TEMPORARY.match(name):
                found.append(os.path.join(sub, name))
    return found


def interrupted(directory):
    """Lines naming the leftovers of an interrupted update and what repair
    will do with them."""
    found = leftovers(directory)
    committed = JOURNAL in found
    lines = []
    for rel in found:
        path = os.path.join(directory, rel)
        if rel == JOURNAL:
            what = 'committed, not yet applied to every file: repair rolls it forward'
        elif committed:
            what = 'a new version not yet renamed into place: repair rolls it forward'
        else:
            what = 'an update that did not commit: repair removes it'
        lines.append(f'{path}: {what}')
    return lines


def refuse_half_applied(directory):
    """What every reader of *directory* does first: one line when an update
    committed and was interrupted before all its files were renamed (its
    journal is left), so that some files are new and some old.

    A reader refuses rather than rolling forward: it may have no write access,
    and a store changes only by a deliberate command (``references repair``,
    or the next update) under the exclusive lock. A running update is waited
    for: its journal exists for a moment on every commit."""
    with shared_lock(directory):
        journal = os.path.join(directory, JOURNAL)
        if os.path.exists(journal):
            root = os.path.dirname(os.path.normpath(directory)) or '.'
            raise ClusterbenchError(
                f'{directory}: an interrupted reference update left some files '
                f'new and some old ({journal}): run `clusterbench references '
                f'repair --references {root}`'
            )


def commit(directory, contents):
    """Replace the files of *directory* named in *contents* (relative path ->
    new bytes) in one transaction. The caller holds :func:`locked`."""
    txid = secrets.token_hex(4)
    files, made = [], []
    target = directory
    try:
        for rel, data in contents.items():
            target = os.path.join(directory, rel)
            folder, name = os.path.split(rel)
            os.makedirs(os.path.join(directory, folder), exist_ok=True)
            temp = os.path.join(folder, f'.{name}.txn-{txid}')
            old = _hash_of(target)
            files.append({'path': rel, 'temp': temp, 'old': old, 'new': sha256(data)})
            made.append(os.path.join(directory, temp))
            _write_temp(made[-1], data, _mode_for(target))
        for folder in sorted({os.path.dirname(p) for p in made}):
            _fsync_dir(folder)
        target = os.path.join(directory, JOURNAL)
        journal = json.dumps({'transaction': txid, 'files': files}, indent=1).encode()
        made.append(target + '.tmp')
        _write_temp(made[-1], journal, None)
        os.replace(made[-1], target)
    except OSError as err:
        _remove(made)
        raise _write_error(err, target) from None
    except BaseException:
        _remove(made)
        raise
    _fsync_dir(directory)
    _roll_forward(directory, files)


def _remove(paths):
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def _roll_forward(directory, files):
    for entry in files:
        path = os.path.join(directory, entry['path'])
        temp = os.path.join(directory, entry['temp'])
        try:
            os.replace(temp, path)
        except FileNotFoundError:
            if _hash_of(path) != entry['new']:
                raise ClusterbenchError(
                    f'{path}: neither it nor {temp} holds the new version that '
                    f'{os.path.join(directory, JOURNAL)} names: restore it from '
                    f'version control'
                ) from None
            continue
        except OSError as err:
            raise ClusterbenchError(
                f'{path}: cannot rename the new version into place: '
                f'{err.strerror}; run `clusterbench references repair`'
            ) from None
    for folder in sorted({os.path.dirname(e['path']) for e in files}):
        _fsync_dir(os.path.join(directory, folder))
    os.unlink(os.path.join(directory, JOURNAL))
    _fsync_dir(directory)


def repair(directory):
    """Complete or undo an interrupted update; lines saying what was done.
    The caller holds :func:`locked`."""
    done = []
    journal_path = os.path.join(directory, JOURNAL)
    if os.path.exists(journal_path):
        try:
            with open(journal_path) as f:
                journal = json.load(f)
            files = journal['files']
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise ClusterbenchError(
                f'{journal_path}: unreadable journal: {err}'
            ) from None
        _roll_forward(directory, files)
        done.append(
            f'rolled forward the interrupted update {journal.get("transaction")}: '
            + ', '.join(os.path.join(directory, e['path']) for e in files)
            + ' hold its new version'
        )
    stray = leftovers(directory)
    _remove(os.path.join(directory, rel) for rel in stray)
    if stray:
        done.append(
            'rolled back an update that had not committed: removed '
            + ', '.join(os.path.join(directory, rel) for rel in stray)
        )
    return done
