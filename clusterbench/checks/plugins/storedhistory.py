"""Whether ReFrame can store this session's history where the site config
puts it: its results database and the perflogs.

ReFrame only warns when it cannot store a session in its database, and
exits 0 with the history lost. A judged check refuses to set up instead, in
one line naming the directory, read through ReFrame's public options (so
listing the checks, ``reframe -l``, never asks for a writable place).
"""

import os

from reframe.core.runtime import runtime

from clusterbench.core.errors import ClusterbenchError
from clusterbench.sessions.runner import results_root

#: Where the history goes, checked once per set of places in a session.
_CHECKED = {}


def places():
    """The directories ReFrame writes the session's history to."""
    options = runtime()
    found = []
    if options.get_option('storage/0/enable'):
        db = options.get_option('storage/0/sqlite_db_file')
        if db:
            found.append(os.path.dirname(os.path.abspath(db)))
    for handler in options.get_option('logging/0/handlers_perflog') or []:
        if handler.get('type') == 'filelog' and handler.get('basedir'):
            found.append(os.path.abspath(handler['basedir']))
    return tuple(dict.fromkeys(found))


def problem():
    """One line saying where the history cannot be written, or ''."""
    key = places()
    if key not in _CHECKED:
        _CHECKED[key] = ''
        for directory in key:
            try:
                results_root(directory)
            except ClusterbenchError as err:
                _CHECKED[key] = (
                    f'{err}: the results database and perflogs go there (run '
                    f'from a writable directory, or set CLUSTERBENCH_RESULTS)'
                )
                break
    return _CHECKED[key]
