"""Values that reach a generated job or build script, made inert for the shell.

ReFrame writes ``executable``, ``executable_opts``, ``prerun_cmds``, build
commands and ``env_vars`` (``export NAME=value``) into scripts as they are:
a prefix, a module name or an option that a user gives with ``-S`` must be
quoted there, or a directory named ``a;b`` runs ``b``. Every check builds
such lines through these helpers.
"""

import shlex

from reframe.core.exceptions import ReframeError

from clusterbench.core import scriptnames


def quote(value):
    """One shell word holding *value* exactly."""
    return shlex.quote(str(value))


def quote_all(values):
    """Each of *values* as one shell word (for ``executable_opts``)."""
    return [quote(v) for v in values]


def words(text):
    """*text* split at whitespace, each word quoted (a Spack spec, options)."""
    return ' '.join(quote(w) for w in str(text).split())


def prepend_path(directory, variable='PATH'):
    """An ``env_vars`` value putting *directory* first on ``$variable``."""
    return f'{quote(directory)}:${variable}'


def module_name(name, what):
    """*name* if it is a plain module name; ReframeError naming *what* if not.

    ReFrame emits ``module load <name>`` itself, unquoted: the one validator
    of such names (:mod:`clusterbench.core.scriptnames`) decides.
    """
    why = scriptnames.problem('module', name)
    if why:
        raise ReframeError(f'{what}={name!r}: {why}')
    return name


def plain_path(path, what):
    """*path* if the shell reads it as itself; ReframeError naming *what* if not.

    For paths that ReFrame places in a script unquoted and that the check also
    uses as a path (a Spack environment directory of ReFrame's build system).
    """
    if quote(path) != str(path):
        raise ReframeError(
            f'{what}={path!r}: contains characters the shell would interpret; '
            f'use a path of letters, digits and _@%+=:,./-'
        )
    return path
