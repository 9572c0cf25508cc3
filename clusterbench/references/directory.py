"""Which reference directory a command reads: one rule for every command.

The references in use are those of ``--references DIR``, else of
``RFM_REFERENCE_PREFIX`` (the variable with which ReFrame itself is pointed
at a reference directory), else ``reference_data/`` of the current directory
when it holds a reference file of some system (``reference_data/X/*.yaml``:
a centre's own, written there by `baseline`), else clusterbench's own (the
checkout's, or the wheel's packaged copy). An empty or referenceless
``reference_data/`` here (a refused baseline, a copy under way) hides
nothing. A command that writes references never writes into the packaged
copy: from a wheel it writes ``reference_data/`` here, which the rule then
reads. ``clusterbench paths references`` prints the directory, and every
command says it and why in one line, ``references: DIR (WHY)``: a header
line of text output, on stderr beside CSV or JSON (which stay clean on
stdout).

That directory is a root: the references of system X are in its
subdirectory ``X/`` (``reference_data/local/hpcc.yaml``, provenance in
``reference_data/local/provenance/``), so that a system is
``site_configs/X.py`` + ``spack_envs/X/`` + ``reference_data/X/``.
"""

import glob
import os
import re
import sys

from clusterbench.core import outputpath, paths
from clusterbench.core.controlchars import escaped
from clusterbench.core.errors import ClusterbenchError

DEFAULT = 'reference_data'
ENV = 'RFM_REFERENCE_PREFIX'

#: ReFrame's system names (a letter or digit first, no '/').
_NAME = re.compile(r'[A-Za-z0-9][A-Za-z0-9_.-]*')


class InUse(str):
    """A reference directory (the path, as a str) and why it is the one in
    use: what :func:`announce` says beside it."""

    def __new__(cls, path, why=''):
        made = super().__new__(cls, path)
        made.why = why
        return made


#: What `compare`, `report` and `trend` say when no directory is chosen:
#: they judge as ReFrame did, against the references it recorded in each
#: report.
RECORDED = InUse('as recorded in the report by ReFrame', f'no --references or ${ENV}')


def resolve(option=None):
    """The references in use (an :class:`InUse`): see the module's rule."""
    return chosen(option) or _here() or _ours()


def written(option=None):
    """The reference directory a command writes into: as :func:`resolve`,
    but never clusterbench's packaged copy (read-only in a shared venv, lost
    at the next install): from a wheel, ``reference_data/`` here, made when
    first written. From a checkout, one here that holds nothing yet too."""
    found = chosen(option) or _here()
    if found is None and (paths.installed() or os.path.isdir(DEFAULT)):
        here = os.path.isdir(DEFAULT)
        state = 'no reference file yet' if here else 'made when written'
        found = InUse(DEFAULT, f"the current directory's, {state}")
    # A path it cannot make (too long, under a file) is one line before
    # anything is read or run, not a traceback at the first file written.
    return outputpath.check(found or _ours())


def chosen(option=None):
    """The directory named by *option* or $RFM_REFERENCE_PREFIX, or None:
    what `compare` and `report` re-judge stored reports against (without,
    the references ReFrame recorded in them)."""
    if option:
        # Named as the rule names it anyway ("$(clusterbench paths
        # references)"): said with the rule's reason.
        rule = chosen() or _here() or _ours()
        same = os.path.realpath(option) == os.path.realpath(rule)
        return InUse(option, f'--references, {rule.why}' if same else '--references')
    if os.environ.get(ENV):
        return InUse(os.environ[ENV], f'${ENV}')
    return None


def _here():
    """``reference_data/`` here when it holds a reference file, else None."""
    found = with_references(DEFAULT)
    if not found:
        return None
    more = f' and {len(found) - 4} more' if len(found) > 4 else ''
    names = ', '.join(found[:4]) + more
    return InUse(DEFAULT, f"the current directory's: references of {names}")


def _ours():
    where = 'packaged copy' if paths.installed() else 'source checkout'
    if os.path.isdir(DEFAULT):
        here = f'{DEFAULT}/ here holds no reference file'
    else:
        here = f'no {DEFAULT}/ here'
    return InUse(paths.get('references'), f"clusterbench's own, {where}: {here}")


def line(directory):
    """``references: DIR (WHY)``, the one line that names the references."""
    why = getattr(directory, 'why', '')
    # A path from the environment or a command line reaches the terminal.
    shown = f'references: {escaped(str(directory))}'
    return f'{shown} ({escaped(why)})' if why else shown


def announce(directory, out=None):
    print(line(directory), file=out or sys.stdout, flush=True)


def with_references(root):
    """The systems under *root* with at least one reference file (sorted;
    none when *root* is no directory)."""
    if not os.path.isdir(root):
        return []
    return [
        name
        for name in systems(root)
        if glob.glob(os.path.join(glob.escape(os.path.join(root, name)), '*.yaml'))
    ]


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
