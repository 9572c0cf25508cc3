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
import stat
import sys

from clusterbench.core.errors import ClusterbenchError
from clusterbench.references import yamlfile

JOURNAL = '.update.journal'
LOCK = '.update.lock'
#: Temporary files of an update: ours (``.<name>.txn-<id>``, the journal's),
#: and the ``.tmp-*`` of the per-file writer that came before.
_TEMPORARY = re.compile(r'^\.(tmp-.+|.+\.txn-[0-9a-f]+|update\.journal\.tmp)$')
#: The only files an update writes (relative to its system directory): a
#: reference file, its provenance, the session records. A journal naming
#: any other path is refused: it would write where it names.
STORED = re.compile(r'^(provenance/)?[A-Za-z0-9_][A-Za-z0-9_.+-]*\.yaml$')
_TRANSACTION = re.compile(r'^[0-9a-f]{1,64}$')
_SHA256 = re.compile(r'^[0-9a-f]{64}$')
#: A journal names a handful of files: anything larger is no journal of ours.
_JOURNAL_LIMIT = 1 << 20


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def _hash_of(path):
    try:
        with open(path, 'rb') as f:
            return sha256(f.read())
    except FileNotFoundError:
        return None


def _not_writable(directory, err):
    why = {
        errno.EROFS: 'read-only file system',
        errno.EACCES: 'permission denied',
        errno.EPERM: 'permission denied',
    }.get(err.errno)
    if why is None:
        return ClusterbenchError(f'{directory}: cannot write: {err.strerror or err}')
    return ClusterbenchError(f'{directory}: not writable ({why})')


@contextlib.contextmanager
def locked(directory):
    """Serialize updates and repairs of *directory* (an flock, released on
    any exit of the process, kill -9 included)."""
    path = os.path.join(directory, LOCK)
    try:
        os.makedirs(directory, exist_ok=True)
        lock = open(path, 'a')
    except OSError as err:
        raise _not_writable(directory, err) from None
    with lock:
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
        # Not through a link: repair removes what this finds.
        if sub and (os.path.islink(folder) or not os.path.isdir(folder)):
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
    refused = ''
    if committed:
        try:
            journal_files(directory)
        except ClusterbenchError as err:
            refused = str(err)
    lines = []
    for rel in found:
        path = os.path.join(directory, rel)
        if rel == JOURNAL:
            what = 'committed, not yet applied to every file: repair rolls it forward'
            if refused:
                lines.append(refused)
                continue
        elif refused:
            what = 'beside a journal that repair refuses'
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
        if os.path.lexists(journal):
            # One that repair would refuse is named as repair names it.
            journal_files(directory)
            raise ClusterbenchError(
                f'{directory}: an interrupted reference update left some files '
                f'new and some old ({journal}): run `clusterbench references '
                f'repair --references {_root(directory)}`'
            )


def _root(directory):
    return os.path.dirname(os.path.normpath(directory)) or '.'


def _refused(directory, why):
    return ClusterbenchError(
        f'{os.path.join(directory, JOURNAL)}: refused: {why}; nothing was '
        f'changed: check the journal by hand, delete it, and run `clusterbench '
        f'references repair --references {_root(directory)}` to remove the '
        f'temporary files'
    )


def _regular(path):
    """An open descriptor of the regular file *path*, never through a
    symbolic link nor blocking on a FIFO; None when there is no such file;
    a problem (text) when it is something else."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as err:
        if err.errno == errno.ELOOP:
            return f'{path} is a symbolic link'
        return f'{path}: cannot read: {err.strerror}'
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return f'{path} is not a regular file'
    return fd


def _regular_hash(path):
    """(sha256 of the regular file *path* or None when there is none, a
    problem or '')."""
    fd = _regular(path)
    if not isinstance(fd, int):
        return None, fd or ''
    digest = hashlib.sha256()
    with os.fdopen(fd, 'rb') as f:
        for block in iter(lambda: f.read(1 << 20), b''):
            digest.update(block)
    return digest.hexdigest(), ''


def journal_files(directory):
    """(transaction, entries) of the journal of *directory* (None when it
    has none), each entry checked to be a file this store writes whose new
    version is there; else one line, before anything is changed. A journal
    comes with the directory (a copy, an archive, someone else's): its paths
    are renamed over, and one that names another file, or a link, would
    overwrite what it names."""
    path = os.path.join(directory, JOURNAL)
    fd = _regular(path)
    if fd is None:
        return None
    if not isinstance(fd, int):
        raise _refused(directory, fd)
    with os.fdopen(fd, 'rb') as f:
        text = f.read(_JOURNAL_LIMIT + 1)
    try:
        if len(text) > _JOURNAL_LIMIT:
            raise ValueError(f'larger than {_JOURNAL_LIMIT} bytes')
        journal = json.loads(text)
        txid, files = journal['transaction'], journal['files']
        if not isinstance(files, list) or not all(isinstance(e, dict) for e in files):
            raise ValueError('"files" is not a list of entries')
    except (ValueError, KeyError, TypeError) as err:
        raise _refused(directory, f'unreadable journal: {err}') from None
    if not isinstance(txid, str) or not _TRANSACTION.match(txid):
        raise _refused(directory, f"transaction {txid!r}: not an update's id")
    for number, entry in enumerate(files, 1):
        why = _entry_problem(directory, txid, entry)
        if why:
            path = entry.get('path')
            raise _refused(directory, f'entry {number} (path {path!r}): {why}')
    return txid, files


def _target_problem(directory, rel):
    """Why the file *rel* of *directory* is none an update may replace, or
    '': a new version is renamed over it, which must land in the directory
    (no link on the way, none replaced)."""
    folder = os.path.dirname(rel)
    if folder:
        where = os.path.join(directory, folder)
        if os.path.islink(where):
            return f'{where} is a symbolic link'
        if os.path.lexists(where) and not os.path.isdir(where):
            return f'{where} is not a directory'
    target = os.path.join(directory, rel)
    if os.path.islink(target):
        return f'{target} is a symbolic link'
    if os.path.lexists(target) and not os.path.isfile(target):
        return f'{target} is not a regular file'
    return ''


def _entry_problem(directory, txid, entry):
    """Why one entry of a journal is none that this store wrote, or ''."""
    rel, temp, new = entry.get('path'), entry.get('temp'), entry.get('new')
    if not isinstance(rel, str) or not STORED.match(rel):
        return (
            f'not a reference file of {directory} (NAME.yaml or provenance/NAME.yaml)'
        )
    folder, name = os.path.split(rel)
    expected = os.path.join(folder, f'.{name}.txn-{txid}')
    if temp != expected:
        return f'temp {temp!r} is not its temporary file ({expected!r})'
    if not isinstance(new, str) or not _SHA256.match(new):
        return (
            "no sha256 of its new version ('new'): not a journal this "
            'clusterbench writes'
        )
    why = _target_problem(directory, rel)
    if why:
        return why
    target = os.path.join(directory, rel)
    # The temporary file first: a running update may rename it meanwhile.
    found, why = _regular_hash(os.path.join(directory, temp))
    if why:
        return why
    if found is None:
        now, why = _regular_hash(target)
        if why:
            return why
        if now == new:
            return ''  # renamed into place before the interruption
        return (
            f'neither {target} nor {os.path.join(directory, temp)} holds the '
            f'new version the journal names (restore {target} from version '
            f'control)'
        )
    if found != new:
        return (
            f'{os.path.join(directory, temp)} does not hold the version the '
            f'journal names (sha256 {found[:12]}..., journal {new[:12]}...)'
        )
    return _content_problem(os.path.join(directory, temp))


def _content_problem(path):
    """'' for a YAML mapping, what every file an update writes is; else why
    not (a journal and its hash can be made for anything)."""
    try:
        data = yamlfile.load_any(path)
    except ClusterbenchError as err:
        return str(err)
    if not isinstance(data, dict):
        return f'{path}: not a YAML mapping, as every file an update writes'
    return ''


def commit(directory, contents):
    """Replace the files of *directory* named in *contents* (relative path ->
    new bytes) in one transaction. The caller holds :func:`locked`."""
    for rel in contents:
        why = '' if STORED.match(rel) else 'not a reference file name'
        why = why or _target_problem(directory, rel)
        if why:
            path = os.path.join(directory, rel)
            raise ClusterbenchError(f'{path}: {why}; nothing was changed')
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


def repair_if_interrupted(directory):
    """:func:`repair` under :func:`locked`. Where no update ever took the
    lock (no lock file), only if *directory* has leftovers of one, and once
    its journal is one that repair accepts: a command refused later leaves
    no lock file behind, nor does a refused journal."""
    if not os.path.lexists(os.path.join(directory, LOCK)):
        # No update runs here (each takes the lock first): this only reads.
        if not os.path.isdir(directory) or not leftovers(directory):
            return []
        journal_files(directory)
    with locked(directory):
        return repair(directory)


def repair(directory):
    """Complete or undo an interrupted update; lines saying what was done.
    The caller holds :func:`locked`."""
    done = []
    journal = journal_files(directory)
    if journal is not None:
        txid, files = journal
        _roll_forward(directory, files)
        done.append(
            f'rolled forward the interrupted update {txid}: '
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
