"""Our sparse conjugate-gradient solver (src/cgsolver), built per environment."""

import os

import reframe as rfm
from reframe.core.builtins import (
    parameter,
    run_after,
    run_before,
    variable,
)

from clusterbench.checks.ownbuild import OwnProgramBuild
from clusterbench.checks.plugins.judged import JudgedCheck
from clusterbench.checks.plugins.observed import Observed
from clusterbench.checks.plugins.profiling import agrees_with_cgsolver
from clusterbench.checks.plugins.references import BASE_INDEX
from clusterbench.checks.resources import node_cores
from clusterbench.checks.shell import quote, quote_all
from clusterbench.parsers import cgsolver


class CGSolverBuild(OwnProgramBuild):
    """Builds ``cgsolver`` (``src/cgsolver``); one build per environment."""

    programs = ('cgsolver',)

    @property
    def executable_path(self):
        return self.program_path('cgsolver')

    def build_flags(self):
        """The compiler and flags the solver was built with, as its Makefile
        recorded them (``obj/.build-flags``), or '' when it did not."""
        build = os.path.dirname(self.executable_path)
        path = os.path.join(build, 'obj', '.build-flags')
        try:
            with open(path) as f:
                return ' '.join(f.read().split())
        except OSError:
            return ''


class CGSolverBase(
    Observed,
    JudgedCheck,
    rfm.RunOnlyRegressionTest,
):
    """Runs the solver on a generated 3-D Poisson problem.

    Parameters: stencil, CG variant and ranks per node (``'1'`` or ``'all'``
    cores). The problem class is a variable (``-S problem_class=C``, or
    ``-P problem_class:A,B,C`` to sweep). Subclasses provide the build as a
    fixture named ``cgsolver_build`` (see :class:`CGSolverBuild`).
    """

    descr = 'Sparse CG solver (3-D Poisson), MPI'
    valid_systems = ['*']
    valid_prog_environs = ['+mpi']
    reference_file = 'cgsolver.yaml'
    reference_index = [
        *BASE_INDEX,
        'problem_class',
        'stencil',
        'variant',
        'ranks_per_node',
    ]
    problem_class = variable(str, value='B')
    stencil = parameter([7, 27])
    variant = parameter(['classic', 'pipelined'])
    ranks_per_node = parameter(['1', 'all'])
    num_nodes = variable(int, value=1)
    scaling = variable(str, value='strong')
    precond = variable(str, value='none')
    tolerance = variable(float, value=1e-8)
    #: The compiler and flags of the solver's build, kept in the run report:
    #: a portable figure that fails names an unoptimised build from them.
    build_flags = variable(str, value='')
    time_limit = '30m'
    output_program = 'cgsolver'
    output_parser = cgsolver
    exit_reasons = {2: 'verification failed'}

    @run_after('setup')
    def _configure(self):
        cores = node_cores(self.current_partition)
        per_node = cores if self.ranks_per_node == 'all' else int(self.ranks_per_node)
        self.num_tasks_per_node = per_node
        self.num_tasks = per_node * self.num_nodes
        self.num_cpus_per_task = 1
        self.env_vars['OMP_NUM_THREADS'] = '1'
        self.executable = quote(self.cgsolver_build.executable_path)
        self.executable_opts = quote_all(
            [
                '--class',
                self.problem_class,
                '--stencil',
                str(self.stencil),
                '--variant',
                self.variant,
                '--precond',
                self.precond,
                '--scaling',
                self.scaling,
                '--tol',
                str(self.tolerance),
            ]
        )

    @run_before('run')
    def _record_build_flags(self):
        self.build_flags = self.cgsolver_build.build_flags()

    def output_expected(self):
        return {
            'ranks': self.num_tasks,
            'class': self.problem_class,
            'stencil': self.stencil,
            'variant': self.variant,
            'precond': self.precond,
            'scaling': self.scaling,
        }

    def further_sanity(self):
        if not self.mpi_profile:
            return []
        # Our solver counts its own MPI calls: the profile must agree.
        return [agrees_with_cgsolver(self.mpi_profile_path, self.verified_result())]
