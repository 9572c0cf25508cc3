"""Which reference directory a command reads: one rule for every command.

``--references DIR`` wins, then ``RFM_REFERENCE_PREFIX`` (the variable with
which ReFrame itself is pointed at a reference directory), then
``reference_data/`` of the current directory, then the project's (the
checkout's, or the wheel's packaged copy; a command that writes references
never writes into that copy: it writes into the current directory's).
Every command says which directory it read: a header line of text output,
on stderr beside CSV or JSON (which stay clean on stdout).

That directory is a root: the references of system X are in its
subdirectory ``X/`` (``reference_data/local/hpcc.yaml``, provenance in
``reference_data/local/provenance/``), so that a system is
``site_configs/X.py`` + ``spack_envs/X/`` + ``reference_data/X/``.
"""

import os
import re
import sys

from clusterbench.core import outputpath, paths
from clusterbench.core.controlchars import escaped
from clusterbench.core.errors import ClusterbenchError

DEFAULT = 'reference_data'
ENV = 'RFM_REFERENCE_PREFIX'


#: What `compare` and `report` say when no directory is chosen: they judge
#: as ReFrame did, against the references it recorded in each report.
RECORDED = 'as recorded in the report by ReFrame'

#: ReFrame's system names (a letter or digit first, no '/').
_NAME = re.compile(r'[A-Za-z0-9][A-Za-z0-9_.-]*')


def resolve(option=None):
    """The reference directory: *option*, else $RFM_REFERENCE_PREFIX, else
    ``reference_data`` here if there, else the project tree's (the checkout's,
    or the one packaged with the wheel)."""
    return option or os.environ.get(ENV) or paths.default('references')


def written(option=None):
    """The reference directory a command writes into: as :func:`resolve`,
    but from a wheel the current directory's ``reference_data``, never the
    packaged copy."""
    # A path it cannot make (too long, under a file) is one line before
    # anything is read or run, not a traceback at the first file written.
    return outputpath.check(
        option or os.environ.get(ENV) or paths.written('references')
    )


def chosen(option=None):
    """The directory to re-judge stored reports against, or None: the
    references ReFrame recorded in them (it judged against the directory of
    its own RFM_REFERENCE_PREFIX, else reference_data/)."""
    return option or os.environ.get(ENV) or None


def announce(directory, out=None):
    # A path from the environment or a command line reaches the terminal.
    print(f'references: {escaped(str(directory))}', file=out or sys.stdout, flush=True)


def system_directory(root, system):
    """The directory of *system*'s references under *root*."""
    # A system name comes from a run report or a site config: it may not lead
    # out of the root or into a hidden file.
    if not system or not _NAME.fullmatch(str(system)):
        raise ClusterbenchError(f'{str(system)[:80]!r}: not a system name')
    return os.path.join(root, system)


def systems(root):
    """The names of the system directories under *root* (sorted)."""
    return sorted(
        name
        for name in os.listdir(root)
        if _NAME.fullmatch(name) and os.path.isdir(os.path.join(root, name))
    )


def stray_files(root):
    """Reference files directly under *root*, outside every system directory:
    ReFrame never reads them there (the layout before one directory per system)."""
    return sorted(
        os.path.join(root, name)
        for name in os.listdir(root)
        if name.endswith('.yaml') and os.path.isfile(os.path.join(root, name))
    )
