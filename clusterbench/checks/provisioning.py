"""Provisioning as data: one plugin reads a check's ``source`` and picks how
its program is had (see :class:`clusterbench.bench.source.Source`).

A check names its :class:`~clusterbench.bench.source.Source` and, when the
source has a prefix or a release, one fixture::

    class OSUBase(Provisioned, CommBase):
        source = OSU
        osu_build = build_fixture(OSU)

:func:`build_fixture` makes the fixtures of the source once: ``<Label>Release``
(scope session: fetches and verifies the release, with the variables
``<name>_url``, ``<name>_sha256`` and ``<name>_prefix``) and ``<Label>Build``
(scope environment: builds the release with the environment's MPI wrappers
when nothing else provides the program). :class:`Provisioned` then chooses,
after setup: a prefix given, an environment with the source's feature,
Spack in a ``build_mode=spack`` session, the release built by the fixture;
or the check's own :meth:`Provisioned.offline_build` (STREAM and HPL compile
their release in the check itself).
"""

import functools
import os
import shlex

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
from reframe.core.logging import getlogger
from reframe.core.meta import make_test
from reframe.core.pipeline import CompileOnlyRegressionTest

from clusterbench.bench import sources
from clusterbench.checks.comm import find_executable, linked_mpi, mpi_family
from clusterbench.checks.plugins.launchdir import from_launch_dir
from clusterbench.checks.plugins.skipreason import RecordedSkip
from clusterbench.checks.plugins.spack import (
    COMPILERS,
    SpackBuild,
    find_spack,
    select_stack,
)
from clusterbench.checks.plugins.writablestage import stage_sources_writable
from clusterbench.checks.release import SourceRelease
from clusterbench.checks.shell import quote, words

#: What provides an installed program offline (a source with a prefix).
INSTALLED = 'an installed prefix or an environment providing it'

_SAID = set()


def say_once(message):
    """Print *message* once per process (a check says why it is not run)."""
    if message not in _SAID:
        _SAID.add(message)
        print(message, flush=True)


def explicit_prefix(test, source):
    """The prefix given by variable or environment variable, or ''."""
    return getattr(test, source.prefix_variable, '') or os.environ.get(
        source.prefix_env, ''
    )


def _source_variables(source):
    """The variables a session sets with ``-S`` for *source*."""
    body = {}
    if source.release:
        body[f'{source.name}_url'] = variable(str, value=source.release.url)
        body[f'{source.name}_sha256'] = variable(str, value=source.release.sha256)
    if source.prefix:
        #: Install prefix (also CLUSTERBENCH_<NAME>_PREFIX): wins over the release.
        body[source.prefix_variable] = variable(str, value='')
    if source.tree:
        body[f'{source.name}_source'] = variable(str, value='')
    return body


def provided_otherwise(self):
    prefix = explicit_prefix(self, self.source)
    if prefix:
        return f'{self.source.prefix_variable}={prefix} given'
    tree = getattr(self, f'{self.source.name}_source', '')
    if tree:
        return f'{self.source.name}_source={tree} given'
    return SourceRelease.provided_otherwise(self)


@functools.cache
def release_fixture(source):
    """``<Label>Release``: *source*'s release, fetched once per session."""
    body = {**_source_variables(source), 'release': source.name, 'source': source}
    return make_test(
        f'{source.label}Release',
        (SourceRelease,),
        body,
        methods=[provided_otherwise],
        module=__name__,
    )


class SuiteBuild(RecordedSkip, CompileOnlyRegressionTest):
    """Builds a source's release in one environment (scope environment).

    ``built`` says whether it did; ``reason`` why not (a prefix or an
    environment provides it, Spack builds it, or the release cannot be had).
    """

    valid_systems = ['*']
    valid_prog_environs = ['+mpi']
    sourcesdir = None
    build_mode = variable(str, value='offline')
    built = variable(bool, value=False)
    reason = variable(str, value='')
    build_provider = variable(str, value='')

    @run_before('compile', always_last=True)
    def _stage_sources_writable(self):
        stage_sources_writable(self)

    @run_after('setup')
    def _choose(self):
        source, env = self.source, self.current_environ
        release = getattr(self, f'{source.name}_release')
        self.build_system = 'CustomBuild'
        self.build_system.commands = []
        prefix = explicit_prefix(self, source)
        if prefix:
            self.reason = f'{source.prefix_variable}={prefix} given'
        elif source.feature and source.feature in env.features:
            self.reason = f'environment {env.name} provides {source.feature}'
        elif self.build_mode == 'spack' and find_spack():
            self.reason = 'built by Spack'
        elif not release.available:
            self.reason = release.reason
        else:
            self.sourcesdir = sources.single_top(release.tree)
            self.build_system.commands = source.build_commands(
                shlex.quote(env.cc), shlex.quote(env.cxx)
            )
            self.built = True
            self.build_provider = f'release {release.url} ({release.origin})'

    @sanity_function
    def finished(self):
        return sn.assert_true(True)


def build_fixture(source):
    """The fixture (scope environment) that builds *source*'s release."""
    return fixture(_build_class(source), scope='environment')


@functools.cache
def _build_class(source):
    body = {
        **_source_variables(source),
        'source': source,
        f'{source.name}_release': fixture(release_fixture(source), scope='session'),
    }
    return make_test(f'{source.label}Build', (SuiteBuild,), body, module=__name__)


def installed(check, source, name):
    """The path (or, from an environment's PATH, the name) of *source*'s
    binary *name* for *check*; the check is skipped with one line saying how
    to provide it where nothing does."""
    env = check.current_environ
    build = getattr(check, f'{source.name}_build', None)
    prefix = explicit_prefix(build, source) if build is not None else ''
    if not prefix and build is not None and build.built:
        check.build_provider = build.build_provider
        prefix = build.stagedir
    # The executable is run from the stage: relative to the launch dir.
    prefix = from_launch_dir(prefix)
    if not prefix:
        if source.feature and source.feature in env.features:
            return name
        ways = f'use an environment with feature {source.feature!r}'
        if build is not None and source.release:
            hint = sources.mirror_hint(getattr(build, f'{source.name}_url'))
            ways = f'{ways}, or {hint}; its release: {build.reason}'
        else:
            ways = f'or {ways}'
        check.skip(
            f'{source.title} not installed: give its prefix with '
            f'-S {source.prefix_variable}=DIR (or {source.prefix_env}=DIR), {ways}'
        )
    path = find_executable(name, prefix, source.subdirs)
    if path is None:
        check.skip(
            f'{name} not found under {source.prefix_variable}={prefix} '
            f'(looked in ., bin, libexec/...)'
        )
    linked = linked_mpi(path)
    wanted = mpi_family(env.extras.get('mpi'))
    if linked and wanted and linked != wanted:
        check.skip(
            f'{path} is linked with {linked}, environment {env.name} '
            f'provides {env.extras.get("mpi")}'
        )
    return path


class Provisioned(SpackBuild):
    """A check whose program its ``source`` provides (see the module).

    The software stack is a test parameter, ``compiler`` (and ``mpi`` /
    ``blas`` where the check declares them): a test runs only in the
    programming environments whose extras declare that stack.
    """

    #: The check's :class:`~clusterbench.bench.source.Source`.
    source = None
    #: The compiler (the programming environment's ``extras.compiler``).
    compiler = parameter(COMPILERS)
    #: The program to run (the Spack package's executable once loaded).
    spack_executable = variable(str)
    #: What the offline provider is, for the fallback message ('' if none).
    offline_provider = variable(str, value='')

    @run_after('init')
    def _select_stack(self):
        if self.source is not None and self.source.spack:
            self.spack_package = self.source.spack
        if self.source is not None and self.source.prefix:
            self.offline_provider = self.offline_provider or INSTALLED
        select_stack(self)

    @run_after('init')
    def _spack_sessions_only(self):
        self.check_build_mode()
        if self.build_mode == 'offline' and not self.offline_provider:
            # Nothing to build offline: this check exists in Spack sessions.
            self.valid_systems = []

    def offline_build(self):
        """Set up the program without Spack: by default the installed one (a
        prefix, an environment, the release built by ``<name>_build``)."""
        if self.source is None or not self.source.prefix:
            raise ReframeError(f'{self.name}: no offline provider')
        self.executable = quote(installed(self, self.source, self.spack_executable))

    @run_before('compile')
    def _nothing_to_build(self):
        # An installed program (or one its fixture built): an empty build.
        if not self.build_system:
            self.build_system = 'CustomBuild'
            self.build_system.commands = []

    @run_after('setup')
    def _choose_build(self):
        if self.build_mode == 'offline':
            self.build_provider = 'offline'
            self.offline_build()
            return
        spack = find_spack()
        if spack is None:
            if not self.offline_provider:
                self.skip(
                    f'spack not on PATH (nor $CLUSTERBENCH_SPACK): '
                    f'{self.spack_package} is built only through Spack'
                )
            getlogger().warning(
                f'{self.display_name}: spack not on PATH (nor $CLUSTERBENCH_SPACK): '
                f'falling back to the offline provider, {self.offline_provider}'
            )
            self.build_provider = 'offline (spack not on PATH)'
            self.offline_build()
            return
        rel = self.spack_build(spack)
        self.prerun_cmds = [
            f'eval `spack -e {quote(rel)} load --sh {words(self.spack_spec)}`',
            *self.prerun_cmds,
        ]
        self.executable = quote(self.spack_executable)
