"""The build fixture of the project's own C programs (``src/<program>``).

Each is built with the environment's MPI C compiler by its Makefile, once
per environment (a fixture of scope ``environment``), out of tree: objects
left in the source tree never leak into a build. A site layer sets
``sourcesdir``; a subclass names what the build must have made.
"""

import os

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import run_before, sanity_function

from clusterbench.checks.plugins.writablestage import stage_sources_writable
from clusterbench.checks.shell import quote


class OwnProgramBuild(rfm.CompileOnlyRegressionTest):
    build_system = 'Make'
    build_locally = True
    #: The programs this build makes, in ``build/`` of the stage directory.
    programs = ()

    @run_before('compile', always_last=True)
    def _stage_sources_writable(self):
        stage_sources_writable(self)

    @run_before('compile')
    def _use_environment_compiler(self):
        self.build_system.options = [
            f'CC={quote(self.current_environ.cc)}',
            'BUILD=build',
        ]
        self.build_system.max_concurrency = 2

    def program_path(self, name):
        return os.path.join(self.stagedir, 'build', name)

    @sanity_function
    def built(self):
        return sn.all(
            [
                sn.assert_true(
                    os.path.isfile(self.program_path(name)), msg=f'{name} was not built'
                )
                for name in self.programs
            ]
        )
