"""NAS Parallel Benchmarks 3.x, MPI version: BT CG EP FT IS LU MG SP, class C.

NPB is not shipped with the harness. The check builds it from its release
tarball (``npb_url``, ``npb_sha256``: NPB 3.4.3 from NAS, verified, fetched
once per session into the cache or taken from ``$CLUSTERBENCH_MIRROR``, see
:mod:`clusterbench.checks.release`), unless a site provides it in one of
these ways, which win (ReFrame variables, set for the whole session with
``-S``):

* ``npb_source``: an unpacked NPB3.4-MPI (or NPB3.3-MPI) release. The build
  fixture copies it, writes ``config/make.def`` from the programming
  environment and runs ``make <bench> CLASS=<class>`` (3.3: ``NPROCS=``), once
  per benchmark, class and environment;
* ``npb_prefix`` (a directory, or its ``bin/``) or ``npb_module`` (a module
  that puts them on PATH): installed ``<bench>.<class>.x`` (3.4 naming) or
  ``<bench>.<class>.<nprocs>`` (3.3 naming);
* Spack (``-S build_mode=spack``, with ``spack`` on PATH or
  ``$CLUSTERBENCH_SPACK``): ReFrame's Spack build system installs the npb
  root of the partition's committed environment
  (``spack_envs/<system>/<partition>/``, or ``<partition>-<environ>/``), exactly as its
  ``spack.lock`` pins it, like every other Spack-built check
  (:class:`clusterbench.checks.plugins.spack.SpackBuild`); ``npb_spack_env`` names
  another environment, where ``npb implementation=mpi names=<bench>
  classes=<class>`` is added and concretized in the stage. The lock is kept
  with the results either way.

The MPI flavour and compiler are test parameters (``mpi``, ``compiler``): a
test runs in the programming environments that declare that stack.

Without any of them, and with no release to be had, every test is skipped
with one line that says so. A process count NPB would refuse, or a run too
big for the partition's memory, is skipped with why (bench/npb_rules.py).
"""

import glob
import math
import os

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import (
    fixture,
    parameter,
    run_after,
    run_before,
    sanity_function,
    variable,
)
from reframe.core.exceptions import ReframeError

from clusterbench.bench import npb_makedef, npb_rules, sources
from clusterbench.checks.npbinstalled import (
    add_and_install,
    binary_in_module,
    environment_module,
    installed_binary,
    lock_has_npb,
    mpi_mismatch,
    provider,
    release_tree,
    resolve_on_path,
    time_limit,
)
from clusterbench.checks.npbvariables import NPBVariables
from clusterbench.checks.plugins.judged import JudgedCheck
from clusterbench.checks.plugins.references import BASE_INDEX
from clusterbench.checks.plugins.spack import (
    MPI_FLAVOURS,
    PROVENANCE,
    BuildProvenance,
    SpackBuild,
    StackParameters,
    find_spack,
)
from clusterbench.checks.release import SourceRelease
from clusterbench.checks.resources import node_memory_bytes
from clusterbench.checks.shell import (
    module_name,
    prepend_path,
    quote,
    quote_all,
    words,
)
from clusterbench.core.errors import ClusterbenchError
from clusterbench.parsers import npb

MAKEDEF_FILE = 'make.def.clusterbench'


class NPBRelease(NPBVariables, SourceRelease):
    """NPB's release tarball, when no source, prefix, module or Spack wins."""

    release = 'npb'

    def provided_otherwise(self):
        for name in ('npb_source', 'npb_prefix', 'npb_module'):
            if getattr(self, name):
                return f'{name}={getattr(self, name)} given'
        return super().provided_otherwise()


class NPBBinaries(SpackBuild, NPBVariables, rfm.CompileOnlyRegressionTest):
    """Provides one NPB benchmark for one class in one environment.

    Used as a fixture of scope ``environment`` by :class:`NPBBase`, which it
    parameterizes by ``benchmark``. Builds from ``npb_source`` or with Spack;
    for installed binaries it only checks that the class is there. A
    concrete check declares a subclass in its ``reframe_checks/`` file, so
    that the default Spack environments are found beside it.
    """

    spack_package = 'npb'

    benchmark = parameter(list(npb_rules.BENCHMARKS))
    #: The release tarball (fetched only when nothing else provides NPB).
    npb_release = fixture(NPBRelease, scope='session')
    #: How NPB is provided here: source, prefix, module or spack.
    provided_by = variable(str, value='')
    #: The source tree's NPB version (source builds).
    npb_version = variable(str, value='')
    #: Process count compiled in (3.3 source builds), else 0.
    built_ranks = variable(int, value=0)
    #: The one class built ('' when the binaries have every class: installed
    #: ones, or a Spack environment's own npb root).
    class_built = variable(str, value='')
    #: The built executable (source builds).
    binary = variable(str, value='')
    #: The staged Spack environment (Spack builds).
    spack_env_dir = variable(str, value='')
    #: The module that provides NPB in this environment (module builds).
    npb_module_used = variable(str, value='')

    def spack_stack(self):
        # The fixture has no stack parameters: the run's environment has them.
        extras = self.current_environ.extras
        return {'mpi': extras.get('mpi'), 'compiler': extras.get('compiler')}

    def spack_environment(self):
        if self.npb_spack_env:
            path = os.path.abspath(self.npb_spack_env)
            return path if os.path.isfile(os.path.join(path, 'spack.yaml')) else None
        return super().spack_environment()

    @run_after('setup')
    def _choose_provider(self):
        problem = npb_rules.class_problem(self.benchmark, self.npb_class)
        if self.npb_class not in npb_rules.CLASSES:
            # Given explicitly and wrong: a failure naming it, not a skip.
            raise ReframeError(f'npb_class={self.npb_class}: {problem}')
        self.skip_if(problem, problem)
        self.check_build_mode()
        provided_by = provider(
            self.npb_source,
            self.npb_prefix,
            environment_module(self.npb_module, self.current_environ),
            self.build_mode,
        )
        fallback = provided_by == 'spack' and find_spack() is None
        if (provided_by is None or fallback) and self.npb_release.available:
            # A Spack session without spack builds the release, as the
            # Spack-built checks fall back to their offline providers.
            provided_by = 'release'
        self.skip_if(
            provided_by is None,
            f'{self._npb_not_provided(sources.mirror_hint(self.npb_release.url))}; '
            f'the release: {self.npb_release.reason}',
        )
        self.provided_by = provided_by
        self.build_provider = provided_by
        if provided_by == 'release':
            self.build_provider = (
                f'release {self.npb_release.url} ({self.npb_release.origin})'
                + (' (spack not on PATH)' if fallback else '')
            )
        counts = npb_rules.valid_counts(self.benchmark, self.npb_class, 1024)
        if counts:
            reason = npb_rules.memory_problem(
                self.benchmark,
                self.npb_class,
                counts[0],
                node_memory_bytes(self.current_partition),
                self.num_nodes,
            )
            self.skip_if(reason, reason)
        getattr(self, f'_setup_{provided_by}')()

    def _builds_tree(self):
        return self.provided_by in ('source', 'release')

    def _setup_release(self):
        self._setup_source(release_tree(self.npb_release.tree))

    def _setup_source(self, path=None):
        try:
            tree = npb_makedef.inspect_tree(path or self.npb_source)
        except ClusterbenchError as err:
            raise ReframeError(str(err)) from None
        self.npb_version = tree.version
        self.class_built = self.npb_class
        ranks = self._npb_ranks(self.benchmark) or 1
        if tree.nprocs_at_compile_time:
            self._explicit_ranks_valid(self.benchmark)
            self.built_ranks = ranks
        self.sourcesdir = tree.path
        self.build_system = 'CustomBuild'
        self.build_system.commands = npb_makedef.build_commands(
            tree, self.benchmark, self.npb_class, ranks, MAKEDEF_FILE
        )
        exe = tree.executable(self.benchmark, self.npb_class, ranks)
        self.binary = os.path.join(self.stagedir, 'bin', exe)
        self._tree = tree
        self.keep_files = [npb_makedef.MAKEDEF]

    def _setup_prefix(self):
        # A prefix without this class's binaries is skipped; one that is not
        # there at all is a typo that must not pass as a skip.
        if not os.path.isdir(self.npb_prefix):
            raise ReframeError(f'npb_prefix={self.npb_prefix}: no such directory')
        pattern = f'{self.benchmark}.{self.npb_class}.*'
        prefix = glob.escape(self.npb_prefix)
        found = sorted(
            glob.glob(os.path.join(prefix, pattern))
            + glob.glob(os.path.join(prefix, 'bin', pattern))
        )
        self.skip_if(
            not found,
            f'npb_prefix {self.npb_prefix} has no {pattern} (nor in its bin/)',
        )
        reason = mpi_mismatch(found[0], self.current_environ)
        self.skip_if(reason, reason)
        self.sourcesdir = None
        self.build_system = 'CustomBuild'
        self.build_system.commands = ['ls -l ' + ' '.join(quote_all(found))]

    def _setup_module(self):
        module = environment_module(self.npb_module, self.current_environ)
        self.npb_module_used = module_name(module, 'npb_module')
        self.sourcesdir = None
        self.modules = [self.npb_module_used]
        self.build_system = 'CustomBuild'
        self.build_system.commands = ['true']
        name = npb_makedef.executable_name(self.benchmark, self.npb_class)
        reason = mpi_mismatch(binary_in_module(module, name), self.current_environ)
        self.skip_if(reason, f'{reason} (module {module})')

    def _setup_spack(self):
        spack = find_spack()
        self.skip_if(
            spack is None,
            'spack not on PATH (nor $CLUSTERBENCH_SPACK): npb is built only through '
            'Spack in a build_mode=spack session (or give -S npb_source=...)',
        )
        env_dir = self.spack_environment()
        root = self.spack_envs_dir()
        if env_dir is None:
            raise ReframeError(
                self.npb_spack_env
                and f'npb_spack_env={self.npb_spack_env}: no spack.yaml there'
                or self._npb_not_provided()
            )
        if os.path.commonpath([env_dir, root]) == root and lock_has_npb(env_dir):
            # One of the project's environments: the lock decides, as for
            # every Spack-built check; its npb root has every benchmark and class.
            rel = self.spack_build(spack)
        else:
            rel = add_and_install(self, env_dir, spack)
        self.spack_env_dir = os.path.normpath(os.path.join(self.stagedir, rel))

    @run_before('compile')
    def _write_makedef(self):
        if not self._builds_tree():
            return
        env = self.current_environ
        tree = self._tree
        if not env.ftn or not env.cc:
            raise ReframeError(
                f'environment {env.name}: no MPI Fortran (ftn) or C (cc) compiler '
                f'declared; NPB needs both'
            )
        try:
            gfortran = npb_makedef.gfortran_major(env.ftn)
        except ClusterbenchError:
            # Not on PATH here (loaded by a module in the build job): plain flags.
            gfortran = None
        large = tree.nprocs_at_compile_time and self.npb_class in 'CDEF'
        text = npb_makedef.makedef(
            tree,
            fc=env.ftn,
            cc=env.cc,
            fflags=npb_makedef.fortran_flags(
                self.npb_fflags, gfortran, tree.legacy_boz, large
            ),
            cflags=self.npb_cflags,
            origin=f'clusterbench for {env.name}',
        )
        os.makedirs(self.stagedir, exist_ok=True)
        with open(os.path.join(self.stagedir, MAKEDEF_FILE), 'w') as f:
            f.write(text)

    @sanity_function
    def provided(self):
        if self._builds_tree():
            return sn.assert_true(
                os.path.isfile(self.binary),
                msg=f'make did not produce {os.path.basename(self.binary)}',
            )
        return sn.assert_true(True)

    def run_commands(self, benchmark, npb_class, nprocs):
        """(prerun_cmds, executable) for a run of these binaries."""
        names = [
            npb_makedef.executable_name(benchmark, npb_class),
            npb_makedef.executable_name(benchmark, npb_class, nprocs),
        ]
        if self._builds_tree():
            return [], quote(self.binary)
        if self.provided_by == 'prefix':
            found = installed_binary(self.npb_prefix, benchmark, npb_class, nprocs)
            return [], found and quote(found)
        if self.provided_by == 'module':
            return resolve_on_path(
                names, f'module {self.npb_module_used}'
            ), '"$npb_exe"'
        pre = []
        if os.environ.get('CLUSTERBENCH_SPACK'):
            pre.append(f'export PATH={prepend_path(os.path.dirname(find_spack()))}')
        pre.append(
            f'eval "$(spack -e {quote(self.spack_env_dir)} load --sh '
            f'{words(self.spack_spec)})"'
        )
        where = f'Spack environment {self.spack_env_dir}'
        return [*pre, *resolve_on_path(names, where)], '"$npb_exe"'


class NPBBase(
    StackParameters,
    BuildProvenance,
    JudgedCheck,
    NPBVariables,
    rfm.RunOnlyRegressionTest,
):
    """Runs one NPB benchmark (MPI) on ``npb_ranks`` processes.

    Subclasses provide the binaries as a fixture named ``npb_binaries`` (a
    subclass of :class:`NPBBinaries`, scope ``environment``); the test is
    forked per benchmark of that fixture. A figure is only recorded when NPB
    verified the run and it is the run that was asked for (see
    :func:`clusterbench.parsers.npb.verify`).
    """

    descr = 'NAS Parallel Benchmarks 3.x (MPI)'
    valid_systems = ['*']
    valid_prog_environs = ['+mpi']
    reference_file = 'npb.yaml'
    reference_index = [*BASE_INDEX, 'benchmark', 'npb_class', 'num_tasks']
    sourcesdir = None
    #: The benchmark, from the fixture (kept in reports and reference keys).
    benchmark = variable(str, value='')
    #: The MPI flavour (with ``compiler``, the programming environment's extras).
    mpi = parameter(MPI_FLAVOURS)
    output_program = 'NPB'
    output_parser = npb

    @run_after('init')
    def _benchmark_from_fixture(self):
        self.benchmark = self.npb_binaries.benchmark
        self.descr = f'NAS Parallel Benchmarks 3.x (MPI): {self.benchmark.upper()}'

    @run_after('setup')
    def _size_job(self):
        bench, cls = self.benchmark, self.npb_class
        binaries = self.npb_binaries
        built = binaries.npb_class
        self.skip_if(
            binaries.class_built and binaries.class_built != cls,
            f'the {binaries.provided_by} build made class {built}: set the class '
            f'of the session with -S npb_class={cls} (-P and TEST.-scoped -S do '
            f'not reach the build)',
        )
        ranks = self._npb_ranks(bench)
        self.skip_if(
            ranks is None,
            f'{bench.upper()} class {cls}: no valid process count up to '
            f'{self._npb_cores()} cores; set -S npb_ranks',
        )
        self._explicit_ranks_valid(bench)
        reason = npb_rules.rank_problem(bench, cls, ranks)
        self.skip_if(reason, reason)
        self.skip_if(
            binaries.built_ranks and binaries.built_ranks != ranks,
            f'NPB {binaries.npb_version} compiles the process count in and was '
            f'built for {binaries.built_ranks}: set -S npb_ranks={ranks} for '
            f'the session',
        )
        reason = npb_rules.memory_problem(
            bench, cls, ranks, node_memory_bytes(self.current_partition), self.num_nodes
        )
        self.skip_if(reason, reason)
        prerun, executable = binaries.run_commands(bench, cls, ranks)
        self.skip_if(
            executable is None,
            f'npb_prefix {self.npb_prefix} has neither '
            f'{npb_makedef.executable_name(bench, cls)} nor '
            f'{npb_makedef.executable_name(bench, cls, ranks)}',
        )
        if binaries.provided_by == 'module':
            self.modules = [binaries.npb_module_used]
        # The run carries how its binaries were built.
        for name in PROVENANCE:
            setattr(self, name, getattr(binaries, name))
        self.prerun_cmds = prerun
        self.executable = executable
        self.num_tasks = ranks
        self.num_tasks_per_node = math.ceil(ranks / self.num_nodes)
        self.num_cpus_per_task = 1
        self.env_vars['OMP_NUM_THREADS'] = '1'
        if self.time_limit is None:  # a user's -S time_limit=... is kept
            self.time_limit = time_limit(cls)

    def output_expected(self):
        return {
            'benchmark': self.benchmark,
            'npb_class': self.npb_class,
            'nprocs': self.num_tasks,
        }
