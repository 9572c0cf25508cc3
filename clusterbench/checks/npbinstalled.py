"""NPB installed by the site: in a prefix (``-S npb_prefix``) or by a module;
the spec Spack builds, the MPI tree of a release, the job's time limit.

A module is one per programming environment: the environment's
``extras['npb_module']`` in the site config (each MPI has its own NPB
build), or ``-S npb_module`` for every environment of the session. Binaries
linked with another MPI than the environment provides are skipped with one
line, as the installed OSU and IMB suites are: run with the wrong
``mpirun`` they would fail (or run N one-rank jobs), not measure.
"""

import glob
import os
import re

from reframe.core.exceptions import ReframeError

from clusterbench.bench import npb_makedef
from clusterbench.checks.comm import linked_mpi, mpi_family
from clusterbench.checks.shell import plain_path, prepend_path, quote, quote_all, words
from clusterbench.machine.factreader import last_line_of
from clusterbench.site import spackenv


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


def default_spack_spec(benchmark, npb_class):
    """The npb spec that builds one benchmark and class."""
    return f'npb implementation=mpi names={benchmark} classes={npb_class}'


def spack_npb_spec(env_dir, mpi=None, compiler=None, benchmark='', npb_class=''):
    """The spec of npb to build in the Spack environment *env_dir*.

    The environment's own npb root when it has one (from its ``spack.lock``
    when concretized, so that ``spack add`` is a no-op and the lock decides),
    else :func:`default_spack_spec`.
    """
    if os.path.isfile(os.path.join(env_dir, spackenv.LOCKFILE)):
        lock = spackenv.load_lock(env_dir)
        if any(lock.node(r['hash'])['name'] == 'npb' for r in lock.roots):
            return spackenv.find_root(lock, 'npb', mpi=mpi, compiler=compiler)[0]
    for spec in spackenv.load(env_dir).specs:
        if re.match(r'npb(?:[@\s]|$)', spec):
            return spec
    return default_spack_spec(benchmark, npb_class)


def release_tree(tree):
    """The MPI tree of an unpacked NPB release (``NPB3.4.3/NPB3.4-MPI``)."""
    top = os.path.join(tree, '*', 'NPB3.*-MPI')
    found = sorted(glob.glob(top)) or sorted(
        glob.glob(os.path.join(tree, 'NPB3.*-MPI'))
    )
    if not found:
        raise ReframeError(f'{tree}: the NPB release has no NPB3.x-MPI directory')
    return found[-1]


def time_limit(npb_class):
    """The job's time limit for an NPB class."""
    return {'S': '10m', 'W': '10m', 'A': '20m', 'B': '1h', 'C': '3h'}.get(
        npb_class, '12h'
    )


def lock_has_npb(env_dir):
    """Whether *env_dir*'s lock has an npb root."""
    if not os.path.isfile(os.path.join(env_dir, spackenv.LOCKFILE)):
        return False
    try:
        lock = spackenv.load_lock(env_dir)
    except spackenv.SpackEnvError as err:
        raise ReframeError(str(err)) from None
    return any(lock.node(r['hash'])['name'] == 'npb' for r in lock.roots)


def add_and_install(self, env_dir, spack):
    """Build npb in *env_dir*, an environment without a concretized npb, for
    the fixture *self*: add it and install; the staged path."""
    try:
        self.spack_spec = spack_npb_spec(
            env_dir,
            benchmark=self.benchmark,
            npb_class=self.npb_class,
            **self.spack_stack(),
        )
    except spackenv.SpackEnvError as err:
        raise ReframeError(str(err)) from None
    root = self.spack_envs_dir()
    # Includes are relative: stage the whole tree when the environment is
    # one of the project's.
    if os.path.commonpath([env_dir, root]) == root:
        self.sourcesdir, rel = root, os.path.relpath(env_dir, root)
    else:
        self.sourcesdir, rel = env_dir, '.'
    if self.spack_spec == default_spack_spec(self.benchmark, self.npb_class):
        self.class_built = self.npb_class
    self.build_system = 'Spack'
    self.build_system.environment = plain_path(rel, 'npb_spack_env')
    self.build_system.specs = [words(self.spack_spec)]
    self.build_system.emit_load_cmds = False
    self.build_system.install_opts = quote_all(self.spack_install_opts)
    self.keep_files = [
        os.path.normpath(os.path.join(rel, spackenv.LOCKFILE)),
        os.path.normpath(os.path.join(rel, spackenv.MANIFEST)),
    ]
    self.spack_env = env_dir
    if os.environ.get('CLUSTERBENCH_SPACK'):
        self.env_vars['PATH'] = prepend_path(os.path.dirname(spack))
    return rel
