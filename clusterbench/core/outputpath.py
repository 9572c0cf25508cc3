"""An output path a user names (``--results``, ``-o``, ``--junit``,
``--references``, ``--out``), checked before anything runs: a path the
system cannot make, too long or under a regular file, is one line naming it
rather than a traceback when the first file is written, minutes later."""

import os

from clusterbench.core.errors import ClusterbenchError

#: Linux's limits, where the file system does not say its own.
NAME_MAX = 255
PATH_MAX = 4096


def check(path):
    """Refuse *path* (a file or directory to be written, existing or not) in
    one line when it is too long or lies under something that is not a
    directory; return it unchanged otherwise."""
    full = os.path.abspath(path)
    existing = full
    while not os.path.lexists(existing):
        existing = os.path.dirname(existing)
    shown = _shown(path)
    name_max = _limit(existing, 'PC_NAME_MAX', NAME_MAX)
    longest = max(len(os.fsencode(part)) for part in full.split(os.sep))
    if longest > name_max:
        raise ClusterbenchError(
            f'{shown}: file name too long ({longest} bytes in one name, '
            f'at most {name_max})'
        )
    path_max = _limit(existing, 'PC_PATH_MAX', PATH_MAX)
    size = len(os.fsencode(full))
    if size >= path_max:  # with its terminating NUL
        raise ClusterbenchError(
            f'{shown}: path too long ({size} bytes, at most {path_max - 1})'
        )
    if existing != full and not os.path.isdir(existing):
        what = 'a file' if os.path.isfile(existing) else 'not a directory'
        raise ClusterbenchError(f'{shown}: not a directory ({existing} is {what})')
    return path


def _limit(directory, name, default):
    try:
        return os.pathconf(directory, name)
    except (OSError, ValueError):
        return default


def _shown(path):
    """*path* as the line names it: whole up to 200 characters, else its
    start and its end (a path of 4 KiB is no line to read)."""
    path = str(path)
    return path if len(path) <= 200 else f'{path[:100]}...{path[-60:]}'
