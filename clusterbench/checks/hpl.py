"""HPL (``xhpl``) built by Spack from the partition's environment."""

import os

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import (
    parameter,
    run_after,
    run_before,
    sanity_function,
    variable,
)
from reframe.core.exceptions import SanityError

from clusterbench import hpl_sizing
from clusterbench.checks.hplproblem import HPLProblem
from clusterbench.checks.jobstate import JobStateCheck
from clusterbench.checks.references import BASE_INDEX, ExternalReferences
from clusterbench.checks.resources import node_cores
from clusterbench.checks.spack import BLAS_PROVIDERS, MPI_FLAVOURS, SpackBuilt
from clusterbench.errors import ClusterbenchError
from clusterbench.parsers import hpl

INPUT_FILE = 'HPL.dat'


def hpl_dat(problem):
    """The HPL.dat of one problem ``{'n', 'nb', 'p', 'q'}``; results to stdout."""
    return hpl_sizing.hpl_dat(problem, device=6)


@sn.deferrable
def _verified_tests(path, exitcode, n, nprocs):
    if exitcode:
        raise SanityError(f'xhpl exited with code {exitcode} (see rfm_job.err)')
    with open(path) as out:
        text = out.read()
    try:
        return hpl.verify(text, source='xhpl output', n=n, nprocs=nprocs)
    except ClusterbenchError as err:
        raise SanityError(str(err)) from None


@sn.deferrable
def _figure(tests, name):
    return hpl.figures(tests)[name][0]


class HPLBase(
    HPLProblem, SpackBuilt, JobStateCheck, ExternalReferences, rfm.RegressionTest
):
    """HPL on all cores of ``num_nodes`` nodes, built by Spack.

    The MPI flavour, compiler and BLAS are parameters (each combination runs
    in the programming environment that declares it, with its own
    references). N fills ``hpl_mem_fraction`` of the nodes' memory (or is
    ``hpl_n``); the grid is the most nearly square one. A figure is recorded
    only when every test passed HPL's scaled-residual check and N and P x Q
    are the ones requested. HPL has no offline provider of its own: offline,
    HPCCCheck (Debian's hpcc) runs HPL.
    """

    descr = 'HPL built by Spack from the partition environment'
    valid_systems = ['*']
    spack_package = 'hpl'
    spack_executable = 'xhpl'
    reference_file = 'hpl.yaml'
    reference_index = [*BASE_INDEX, 'mpi', 'compiler', 'blas', 'hpl_order']
    mpi = parameter(MPI_FLAVOURS)
    blas = parameter(BLAS_PROVIDERS)
    num_nodes = variable(int, value=1)
    time_limit = '1h'

    @run_after('setup')
    def _size_job(self):
        cores = node_cores(self.current_partition)
        self.num_tasks_per_node = cores
        self.num_tasks = cores * self.num_nodes
        self.num_cpus_per_task = 1
        self.env_vars['OMP_NUM_THREADS'] = '1'
        self.env_vars['OPENBLAS_NUM_THREADS'] = '1'
        self.size_hpl_problem()
        self.keep_files = [*self.keep_files, INPUT_FILE]

    @run_before('run')
    def _write_input(self):
        with open(os.path.join(self.stagedir, INPUT_FILE), 'w') as inp:
            inp.write(hpl_dat(self.hpl_problem))

    def _tests(self):
        return _verified_tests(
            os.path.join(self.stagedir, self.job.stdout),
            self.job.exitcode,
            self.hpl_problem['n'],
            self.num_tasks,
        )

    @sanity_function
    def verified(self):
        return sn.assert_true(self._tests())

    @run_before('performance')
    def _set_perf_variables(self):
        tests = self._tests()
        self.perf_variables = {
            'hpl': sn.make_performance_function(_figure(tests, 'hpl'), 'GFlop/s'),
            'hpl_time': sn.make_performance_function(_figure(tests, 'hpl_time'), 's'),
        }
