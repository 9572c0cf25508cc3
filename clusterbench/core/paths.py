"""Where the checks, site configs, references and Spack environments are.

From a source checkout (or an editable install of one) they are the
checkout's own directories. A wheel (``make dist``) carries a copy of them as
package data under ``clusterbench/share/``, laid out as in the checkout, so
that the relative paths between them (a check's ``../src``, a site config's
``common.py``) hold in both. ``clusterbench paths`` prints them.
"""

import os

# This file is clusterbench/core/paths.py: the package is two levels up.
PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARE = os.path.join(PACKAGE, 'share')
CHECKOUT = os.path.dirname(PACKAGE)
#: name printed by ``clusterbench paths`` -> directory of the project tree.
DIRECTORIES = {
    'checks': 'reframe_checks',
    'site_configs': 'site_configs',
    'references': 'reference_data',
    'spack_envs': 'spack_envs',
    'sources': 'src',
}


def _is_checkout(path):
    return os.path.isfile(os.path.join(path, 'pyproject.toml')) and os.path.isdir(
        os.path.join(path, 'reframe_checks')
    )


def root():
    """The project tree in use: the source checkout, else the packaged copy."""
    if _is_checkout(CHECKOUT):
        return CHECKOUT
    if os.path.isdir(os.path.join(SHARE, 'reframe_checks')):
        return SHARE
    # Imported here: setup.py reads this module before clusterbench is installed.
    from clusterbench.core.errors import ClusterbenchError

    raise ClusterbenchError(
        f'{PACKAGE}: neither a source checkout nor a wheel with its package data '
        f'(share/): reinstall clusterbench'
    )


def installed():
    """True when running from a wheel's packaged copy."""
    return root() == SHARE


def get(name):
    """The directory *name* (a key of DIRECTORIES) of the project tree."""
    return os.path.join(root(), DIRECTORIES[name])


def default(name):
    """The directory *name* (a key of DIRECTORIES) a command reads by default.

    The one in the current directory if it is there (a checkout's root, or
    the directory where a centre keeps its ``site_configs/``, ``spack_envs/``
    and ``reference_data/``); else the project tree's, the checkout's or the
    one packaged with the wheel. Relative, as the user would write it, when
    it is the current directory's. (The references have a rule of their own,
    clusterbench.references.directory: one here counts only when it holds a
    reference file.)
    """
    here = DIRECTORIES[name]
    return here if os.path.isdir(here) else get(name)


def in_use(name):
    """The directory *name* the commands read by default, as `clusterbench
    paths` prints it: the current directory's (said so) or the project
    tree's. Our C sources are always the project tree's: the checks find
    them beside themselves."""
    if name == 'sources':
        return get(name)
    found = default(name)
    return (
        f"{found}  (the current directory's)" if found == DIRECTORIES[name] else found
    )


def system_config(system):
    """The site config of *system* (``name`` or ``name:partition``) a command
    reads by default: ``site_configs/<name>.py`` of the current directory if
    there, else the project tree's (``local.py`` and ``box.py`` come with the
    wheel); the relative path if neither has it, to be named as missing."""
    name = f'{system.split(":")[0]}.py'
    here = os.path.join(DIRECTORIES['site_configs'], name)
    packaged = os.path.join(get('site_configs'), name)
    if os.path.isfile(here) or not os.path.isfile(packaged):
        return here
    return packaged


def site_config(name, beside=None):
    """``<name>`` of the site configs: beside *beside* (a file) if there, else ours.

    A generated site config lives wherever its centre keeps it; it composes
    ``common.py`` from beside it if the centre has its own copy, else from
    clusterbench's.
    """
    if beside is not None:
        local = os.path.join(os.path.dirname(os.path.abspath(beside)), name)
        if os.path.isfile(local):
            return local
    return os.path.join(get('site_configs'), name)


def lines(shown=None):
    """What ``clusterbench paths`` prints: one ``name  path`` line each;
    *shown* ({name: text}) replaces a directory's (the references in use,
    with why, which this layer cannot know)."""
    where = 'packaged copy' if installed() else 'source checkout'
    rows = [('project', f'{root()}  ({where})')]
    rows += [(name, (shown or {}).get(name) or in_use(name)) for name in DIRECTORIES]
    width = max(len(name) for name, _ in rows)
    return [f'{name:<{width}}  {path}' for name, path in rows]
