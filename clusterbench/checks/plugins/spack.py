"""Build a check's benchmark through ReFrame's Spack build system.

:class:`SpackBuild` builds any ``rfm.RegressionTest`` whose benchmark is a
Spack package; a check reaches it through
:class:`clusterbench.checks.provisioning.Provisioned`, which decides whether
Spack builds (its ``source`` names the package). With ``-S build_mode=spack``
the benchmark is built from the committed environment of the partition's
programming environment (``spack_envs/``, see :mod:`clusterbench.site.spackenv`):

- which ``spack_envs/``: ``-S spack_envs_root=DIR``, else the one
  `clusterbench spack-envs` checks (``./spack_envs`` if there is one, else
  the project's);
- which environment: the partition's ``extras['spack_env']`` (a path relative
  to the project, or a mapping from programming environment to path), else
  ``spack_envs/<system>/<partition>-<environ>/``, else
  ``spack_envs/<system>/<partition>/`` (what `clusterbench site init` writes);
- which spec: the root of that environment's ``spack.lock`` that builds the
  check's ``spack_package`` with the test's ``mpi``, ``compiler`` and ``blas``
  parameters; the build runs ``spack -e <env> install <spec>``, which installs
  exactly what the lock pins for that root (a lock that disagrees with its
  spack.yaml is refused before building), and the run loads it with
  ``spack -e <env> load --sh <spec>``;
- the whole ``spack_envs/`` tree is copied into the stage (includes are
  relative), the environment's ``spack.lock`` and ``spack.yaml`` are kept
  with the outputs, and after the build the staged lock must still pin the
  same root hash as the committed one;
- loggable variables: ``spack_env``, ``spack_spec``, ``spack_root_hash``,
  ``spack_lock_sha256``, ``build_provider``.

Without ``spack`` on ``PATH`` (or ``$CLUSTERBENCH_SPACK``, the path of a
``spack`` executable), a check that has an offline provider falls back to it
and says so in one line; one that has none is skipped with one line. With the
default ``build_mode=offline`` a check without an offline provider is not
generated at all: it belongs to Spack sessions only.

:class:`SpackBuild` is the build itself (:meth:`SpackBuild.spack_build`)
with its lock check and loggable variables (:class:`BuildProvenance`);
:func:`select_stack` runs a test with ``compiler`` (and ``mpi``/``blas``
where declared) parameters in the programming environments whose extras
declare them (NPB's run check, which builds in a fixture of its own
providers, takes it as :class:`StackParameters`).
"""

import os
import shutil

import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.builtins import parameter, run_after, run_before, variable
from reframe.core.exceptions import ReframeError

from clusterbench.checks.plugins.writablestage import stage_sources_writable
from clusterbench.checks.shell import plain_path, prepend_path, quote_all, words
from clusterbench.core import paths
from clusterbench.site import spackenv, stacknames

BUILD_MODES = ('offline', 'spack')
MPI_FLAVOURS = stacknames.BUILT_MPIS
COMPILERS = stacknames.BUILT_COMPILERS
BLAS_PROVIDERS = stacknames.BUILT_BLAS


def find_spack():
    """The ``spack`` executable: ``$CLUSTERBENCH_SPACK``, else ``PATH``; or None.

    ReFrame's build scripts call ``spack`` by name, so ``$CLUSTERBENCH_SPACK``
    must name an executable called ``spack`` (its directory goes first on the
    test's ``PATH``).
    """
    declared = os.environ.get('CLUSTERBENCH_SPACK')
    if declared:
        if os.path.basename(declared) != 'spack' or not os.access(declared, os.X_OK):
            raise ReframeError(
                f'CLUSTERBENCH_SPACK={declared}: not an executable named spack'
            )
        return declared
    return shutil.which('spack')


#: The loggable variables that say how a check's benchmark was built.
PROVENANCE = (
    'build_provider',
    'spack_env',
    'spack_spec',
    'spack_root_hash',
    'spack_lock_sha256',
)


class BuildProvenance(rfm.RegressionTestPlugin):
    """How the benchmark was built: loggable, and kept in the run report."""

    build_provider = variable(str, value='')
    spack_env = variable(str, value='')
    spack_spec = variable(str, value='')
    spack_root_hash = variable(str, value='')
    spack_lock_sha256 = variable(str, value='')


class SpackBuild(BuildProvenance):
    """Building the check's ``spack_package`` from the partition's environment.

    The variables, the build and the after-build lock check; no hooks that
    decide *whether* to build with Spack (that is the check's
    :class:`clusterbench.checks.provisioning.Provisioned`, or NPB's fixture,
    which chooses among its own providers).
    """

    #: ``offline`` (the default: the offline providers) or ``spack``.
    build_mode = variable(str, value='offline')
    #: Extra options of ``spack install`` (e.g. ``--fake``).
    spack_install_opts = variable(typ.List[str], value=[])
    #: The Spack package that provides the benchmark (set by the check).
    spack_package = variable(str)
    #: The spack_envs/ tree. '': the one `clusterbench spack-envs` checks,
    #: ``spack_envs/`` of the launch directory (where `clusterbench site
    #: init` writes the centre's) if there is one, else the project's (the
    #: checkout's, or the copy packaged with the wheel).
    spack_envs_root = variable(str, value='')

    @run_before('compile', always_last=True)
    def _stage_sources_writable(self):
        stage_sources_writable(self)

    @run_after('init')
    def _resolve_spack_envs_root(self):
        # While the test is made ReFrame is still in the launch directory.
        given = self.spack_envs_root or paths.default('spack_envs')
        self.spack_envs_root = os.path.abspath(given)
        # As messages name it: relative when it is the launch directory's.
        self._spack_envs_shown = given

    def check_build_mode(self):
        if self.build_mode not in BUILD_MODES:
            raise ReframeError(
                f'{self.name}: build_mode={self.build_mode!r}: use one of '
                f'{", ".join(BUILD_MODES)}'
            )

    def spack_stack(self):
        """The MPI, compiler and BLAS the root must have (``None``: any)."""
        return {
            'mpi': getattr(self, 'mpi', None),
            'compiler': getattr(self, 'compiler', None),
            'blas': getattr(self, 'blas', None),
        }

    def spack_envs_dir(self):
        return self.spack_envs_root

    def expected_spack_env(self):
        """Where the partition's environment was looked for, in the layout
        `clusterbench site init` writes: ``<root>/<system>/<partition>/``
        (relative to the launch directory when it is there)."""
        part = self.current_partition
        system = part.fullname.split(':')[0]
        return os.path.join(self._spack_envs_shown, system, part.name) + os.sep

    def spack_environment(self):
        """The partition's environment directory, or ``None``."""
        part, environ = self.current_partition, self.current_environ
        root = self.spack_envs_dir()
        return spackenv.environment_for(
            part.fullname.split(':')[0],
            part.name,
            environ.name,
            part.extras,
            root,
            os.path.dirname(root),
        )

    def spack_build(self, spack):
        """Build the lock's root of ``spack_package`` with ReFrame's Spack build.

        Returns the staged environment's path relative to the stage (for
        ``spack -e <it> load``).
        """
        part, environ = self.current_partition, self.current_environ
        root = self.spack_envs_dir()
        project = os.path.dirname(root)
        env_dir = self.spack_environment()
        if env_dir is None:
            alone = f'{part.name}-{environ.name}'
            raise ReframeError(
                f'{part.fullname} {environ.name}: no Spack environment: expected '
                f'{self.expected_spack_env()}{spackenv.MANIFEST} (or {alone}/'
                f'{spackenv.MANIFEST} for {environ.name} alone, or extras.spack_env)'
            )
        if os.path.commonpath([env_dir, root]) != root:
            raise ReframeError(f'{env_dir}: a Spack environment must be under {root}')
        try:
            # A lock that no longer matches its spack.yaml would make Spack
            # concretize anew in the stage: refuse it before building.
            problems = spackenv.lock_problems(spackenv.load(env_dir))
            if problems:
                more = f' (and {len(problems) - 1} more)' if len(problems) > 1 else ''
                raise spackenv.SpackEnvError(problems[0] + more)
            lock = spackenv.load_lock(env_dir)
            spec, root_hash = spackenv.find_root(
                lock, self.spack_package, **self.spack_stack()
            )
        except spackenv.SpackEnvError as err:
            raise ReframeError(str(err)) from None
        rel = os.path.relpath(env_dir, root)
        self.sourcesdir = root
        self.build_system = 'Spack'
        self.build_system.environment = plain_path(rel, 'Spack environment')
        # No `spack add`: it would append the spec to the staged spack.yaml
        # although the matrix already has it. `spack install <spec>` installs
        # that root of the lock (and nothing else); it is loaded at run time.
        self.build_system.specs = []
        self.build_system.emit_load_cmds = False
        self.build_system.install_opts = [
            *quote_all(self.spack_install_opts),
            words(spec),
        ]
        if os.environ.get('CLUSTERBENCH_SPACK'):
            bindir = os.path.dirname(os.path.abspath(spack))
            self.env_vars['PATH'] = prepend_path(bindir)
        self.keep_files = [
            *self.keep_files,
            os.path.join(rel, spackenv.LOCKFILE),
            os.path.join(rel, spackenv.MANIFEST),
        ]
        self.build_provider = 'spack'
        self.spack_env = os.path.relpath(env_dir, project)
        self.spack_spec = spec
        self.spack_root_hash = root_hash
        self.spack_lock_sha256 = lock.sha256
        return rel

    @run_before('run')
    def _same_lock_after_build(self):
        if self.build_provider != 'spack':
            return
        staged = os.path.join(self.stagedir, self.build_system.environment)
        try:
            lock = spackenv.load_lock(staged)
        except spackenv.SpackEnvError as err:
            raise ReframeError(f'after the Spack build: {err}') from None
        hashes = [r['hash'] for r in lock.roots if r['spec'] == self.spack_spec]
        if not self.spack_root_hash:
            # Concretized in the stage (an environment without a committed
            # lock): record what the build pinned.
            if len(hashes) != 1:
                raise ReframeError(
                    f'after the Spack build: {self.spack_spec!r} is not one root '
                    f'of the staged spack.lock'
                )
            self.spack_root_hash = hashes[0]
        elif hashes != [self.spack_root_hash]:
            raise ReframeError(
                f'{self.spack_env}/spack.lock: the build concretized '
                f'{self.spack_spec!r} to {hashes}, the committed lock pins '
                f'{self.spack_root_hash}: re-concretize and commit the lock'
            )
        self.spack_lock_sha256 = lock.sha256


def select_stack(test):
    """Run *test* only in the programming environments whose extras declare
    its ``compiler`` (and ``mpi``/``blas`` where it declares them)."""
    wanted = [f'%compiler={test.compiler}']
    if getattr(test, 'mpi', None):
        wanted = ['+mpi', f'%mpi={test.mpi}', *wanted]
    if getattr(test, 'blas', None):
        wanted.append(f'%blas={test.blas}')
    test.valid_prog_environs = [' '.join(wanted)]


class StackParameters(rfm.RegressionTestPlugin):
    """The software stack as test parameters: ``compiler``, and ``mpi`` /
    ``blas`` where the check declares them (:func:`select_stack`)."""

    #: The compiler (the programming environment's ``extras.compiler``).
    compiler = parameter(COMPILERS)

    @run_after('init')
    def _select_stack(self):
        select_stack(self)
