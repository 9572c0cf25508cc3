"""A suite of MPI benchmarks built from its release in each environment
(the generic fixtures; OSU and IMB declare theirs in their own modules).

An installed prefix (``-S <suite>_prefix``, ``CLUSTERBENCH_<SUITE>_PREFIX``),
an environment that provides the suite (feature ``osu``/``imb``) or a Spack
session win; otherwise the suite's release (``<suite>_url``/``_sha256``,
fetched and verified once per session, see :mod:`clusterbench.checks.release`)
is built once per environment with the environment's MPI compiler wrappers,
and the checks take the built tree as their prefix.
"""

import os
import shlex

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import run_after, run_before, sanity_function, variable

from clusterbench.bench import sources
from clusterbench.checks.plugins.spack import find_spack
from clusterbench.checks.plugins.writablestage import stage_sources_writable


def explicit_prefix(test, suite):
    """The suite's prefix given by variable or environment variable, or ''."""
    return getattr(test, f'{suite}_prefix') or os.environ.get(
        f'CLUSTERBENCH_{suite.upper()}_PREFIX', ''
    )


class PrefixWins(rfm.RegressionTestPlugin):
    """A release not needed when the suite is installed or built by Spack."""

    def provided_otherwise(self):
        prefix = explicit_prefix(self, self.release)
        if prefix:
            return f'{self.release}_prefix={prefix} given'
        return super().provided_otherwise()


class SuiteBuild(rfm.CompileOnlyRegressionTest):
    """Builds a suite from its release in one environment (scope environment).

    ``built`` says whether it did; ``reason`` why not (a prefix or an
    environment provides it, Spack builds it, or the release cannot be had).
    """

    valid_systems = ['*']
    valid_prog_environs = ['+mpi']
    sourcesdir = None
    #: osu or imb (set by the subclass).
    suite = variable(str)
    build_mode = variable(str, value='offline')
    built = variable(bool, value=False)
    reason = variable(str, value='')
    build_provider = variable(str, value='')

    def build_commands(self, cc, cxx):
        raise NotImplementedError

    @run_before('compile', always_last=True)
    def _stage_sources_writable(self):
        stage_sources_writable(self)

    @run_after('setup')
    def _choose(self):
        env = self.current_environ
        release = getattr(self, f'{self.suite}_release')
        self.build_system = 'CustomBuild'
        self.build_system.commands = []
        prefix = explicit_prefix(self, self.suite)
        if prefix:
            self.reason = f'{self.suite}_prefix={prefix} given'
        elif self.suite in env.features:
            self.reason = f'environment {env.name} provides {self.suite}'
        elif self.build_mode == 'spack' and find_spack():
            self.reason = 'built by Spack'
        elif not release.available:
            self.reason = release.reason
        else:
            self.sourcesdir = sources.single_top(release.tree)
            self.build_system.commands = self.build_commands(
                shlex.quote(env.cc), shlex.quote(env.cxx)
            )
            self.built = True
            self.build_provider = f'release {release.url} ({release.origin})'

    @sanity_function
    def finished(self):
        return sn.assert_true(True)
