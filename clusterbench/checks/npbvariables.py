"""The variables NPB's build fixture, its release and its runs share.

One class, not a stack of plugins: it declares the release's URL and sha256,
records its skips and makes its path variables absolute itself, so that an
NPB check holds one project class for all of it (issue 42: a check that reads
in one place).
"""

import reframe as rfm
from reframe.core.builtins import run_after, variable
from reframe.core.exceptions import ReframeError

from clusterbench.bench import npb_rules, sources
from clusterbench.checks.plugins import launchdir, skipreason
from clusterbench.checks.resources import node_cores

#: The ways to provide NPB, said in the one line of a test skipped without
#: it (the last one follows ``or``).
NOT_PROVIDED = (
    '-S npb_source=<unpacked NPB3.4-MPI tree>',
    '-S npb_prefix=<directory with the <bench>.{npb_class}.x binaries>',
    '-S npb_module=<module>',
    'build it with -S build_mode=spack (spack on PATH) from {spack_env}',
)


class NPBVariables(rfm.RegressionTestPlugin):
    """The variables the build fixture and the run share: set them with -S.

    ``-S name=value`` reaches the fixture and the run alike; a class set for
    one test only (``-S NPBCheck.npb_class=...``) or swept with ``-P`` does not
    reach the build of a source tree or Spack, and such a run is skipped with
    that reason (``-P npb_ranks:...`` works with 3.4 and installed binaries).
    """

    #: The NPB release (fetched only when nothing else provides NPB).
    npb_url = variable(str, value=sources.DEFAULTS['npb'].url)
    npb_sha256 = variable(str, value=sources.DEFAULTS['npb'].sha256)
    #: NPB problem class: S W A B C D E (F with 3.4).
    npb_class = variable(str, value=npb_rules.DEFAULT_CLASS)
    #: Processes; 0: the largest valid count not above the nodes' cores.
    npb_ranks = variable(int, value=0)
    num_nodes = variable(int, value=1)
    #: An unpacked NPB3.4-MPI (or NPB3.3-MPI) release.
    npb_source = variable(str, value='')
    #: A directory (or its bin/) with installed NPB executables.
    npb_prefix = variable(str, value='')
    #: A module that puts NPB executables on PATH.
    npb_module = variable(str, value='')
    #: The Spack environment to build npb in (default: the partition's).
    npb_spack_env = variable(str, value='')
    #: Compiler flags of a source build (gfortran >= 10 gets the flags NPB
    #: needs added to the Fortran ones).
    npb_fflags = variable(str, value='-O3')
    npb_cflags = variable(str, value='-O3')

    # A skip keeps its reason in the run report (plugins/skipreason.py).
    skip_reason = skipreason.skip_reason
    skip = skipreason.skip

    @run_after('init')
    def _paths_from_launch_dir(self):
        launchdir.make_absolute(self)

    def _npb_cores(self):
        return node_cores(self.current_partition) * self.num_nodes

    def _npb_ranks(self, benchmark):
        if self.npb_ranks:
            return self.npb_ranks
        return npb_rules.default_ranks(benchmark, self.npb_class, self._npb_cores())

    def _explicit_ranks_valid(self, benchmark):
        """A process count given with -S that NPB refuses fails, naming it.

        (The default count is the largest valid one, or the test is skipped
        with the reason.)
        """
        if self.npb_ranks:
            problem = npb_rules.rank_problem(benchmark, self.npb_class, self.npb_ranks)
            if problem:
                raise ReframeError(f'npb_ranks={self.npb_ranks}: {problem}')

    def _npb_not_provided(self, *more):
        """The line saying how to provide NPB; *more*: other ways, last."""
        # Only NPBBinaries asks, a SpackBuild: the partition's environment.
        spack_env = self.expected_spack_env()
        ways = [
            w.format(npb_class=self.npb_class, spack_env=spack_env)
            for w in NOT_PROVIDED
        ]
        ways += more
        return f'NPB not provided: give {", ".join(ways[:-1])}, or {ways[-1]}'
