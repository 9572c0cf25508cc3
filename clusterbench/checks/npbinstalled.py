"""NPB installed by the site: in a prefix (``-S npb_prefix``) or by a module.

A module is one per programming environment: the environment's
``extras['npb_module']`` in the site config (each MPI has its own NPB
build), or ``-S npb_module`` for every environment of the session. Binaries
linked with another MPI than the environment provides are skipped with one
line, as the installed OSU and IMB suites are: run with the wrong
``mpirun`` they would fail (or run N one-rank jobs), not measure.
"""

import os

from clusterbench.bench import npb_makedef
from clusterbench.checks.comm import linked_mpi, mpi_family
from clusterbench.checks.shell import quote
from clusterbench.machine.factreader import last_line_of


def provider(source='', prefix='', module='', build_mode='offline'):
    """How NPB is provided: 'source', 'prefix', 'module', 'spack' or ``None``.

    An explicit source tree, prefix or module wins over Spack, which is used
    only in a Spack session (``build_mode=spack``).
    """
    if source:
        return 'source'
    if prefix:
        return 'prefix'
    if module:
        return 'module'
    if build_mode == 'spack':
        return 'spack'
    return None


def installed_binary(prefix, benchmark, npb_class, nprocs):
    """The installed executable for this run in *prefix* (or its ``bin/``).

    3.4 naming (``bt.C.x``) first, then 3.3 naming (``bt.C.4``); ``None`` if
    neither is there.
    """
    names = [
        npb_makedef.executable_name(benchmark, npb_class),
        npb_makedef.executable_name(benchmark, npb_class, nprocs),
    ]
    for directory in (prefix, os.path.join(prefix, 'bin')):
        for name in names:
            path = os.path.join(directory, name)
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return path
    return None


def resolve_on_path(names, where):
    """Shell lines that set ``npb_exe`` to the first of *names* on PATH."""
    lookups = ' || '.join(f'command -v {quote(n)}' for n in names)
    why = quote(f'{where} provides none of {" ".join(names)} on PATH')
    return [f'npb_exe=$({lookups}) || {{ echo {why} >&2; exit 3; }}']


def environment_module(session_module, environ):
    """The NPB module of *environ*: ``-S npb_module`` if given, else the
    environment's ``extras['npb_module']``; '' for none."""
    return session_module or str(environ.extras.get('npb_module') or '')


def binary_in_module(module, name, timeout=60):
    """Where *name* is once *module* is loaded (through ReFrame's modules
    system, as the job script will load it), or None."""
    from reframe.core.runtime import runtime

    load = runtime().modules_system.emit_load_commands(module)
    script = '\n'.join([*load, f'command -v {quote(name)}'])
    return last_line_of(['bash', '-c', script], timeout)


def mpi_mismatch(path, environ):
    """Why binary *path* cannot run in *environ* (linked with another MPI),
    or ''."""
    linked = linked_mpi(path) if path else None
    wanted = mpi_family(environ.extras.get('mpi'))
    if linked and wanted and linked != wanted:
        return (
            f'{path} is linked with {linked}, environment {environ.name} provides '
            f'{environ.extras.get("mpi")}'
        )
    return ''
