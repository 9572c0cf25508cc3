"""STREAM (stream.c 5.10, OpenMP) built by Spack from the partition's environment."""

import os

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.backends import getlauncher
from reframe.core.builtins import run_after, run_before, sanity_function, variable
from reframe.core.exceptions import SanityError

from clusterbench.checks.jobstate import JobStateCheck
from clusterbench.checks.references import BASE_INDEX, ExternalReferences
from clusterbench.checks.resources import node_cores
from clusterbench.checks.spack import SpackBuilt
from clusterbench.errors import ClusterbenchError
from clusterbench.parsers import stream


@sn.deferrable
def _verified(path, exitcode, threads):
    if exitcode:
        raise SanityError(f'stream exited with code {exitcode} (see rfm_job.err)')
    with open(path) as out:
        text = out.read()
    try:
        return stream.verify(text, source='STREAM output', threads=threads)
    except ClusterbenchError as err:
        raise SanityError(str(err)) from None


@sn.deferrable
def _figure(result, name):
    return stream.figures(result)[name][0]


class StreamBase(SpackBuilt, JobStateCheck, ExternalReferences, rfm.RegressionTest):
    """STREAM on one node, one OpenMP thread per core, built by Spack.

    The array size is the environment's (``stream_array_size`` of the root
    spec: 80M elements, 1.8 GiB). A figure is recorded only when STREAM
    printed ``Solution Validates`` and counted the threads requested. No MPI:
    the compiler is the only stack parameter. STREAM has no offline provider
    of its own: offline, HPCCCheck runs HPCC's STREAM.
    """

    descr = 'STREAM built by Spack from the partition environment'
    valid_systems = ['*']
    spack_package = 'stream'
    spack_executable = 'stream_c.exe'
    reference_file = 'stream.yaml'
    reference_index = [*BASE_INDEX, 'compiler']
    #: OpenMP threads: the node's cores (set at setup).
    threads = variable(int, value=0)
    time_limit = '10m'

    @run_after('setup')
    def _size_job(self):
        self.threads = node_cores(self.current_partition)
        self.num_tasks = 1
        self.num_tasks_per_node = 1
        self.num_cpus_per_task = self.threads
        self.env_vars['OMP_NUM_THREADS'] = str(self.threads)
        self.env_vars['OMP_PROC_BIND'] = 'spread'

    @run_before('run')
    def _no_mpi_launcher(self):
        self.job.launcher = getlauncher('local')()

    def _result(self):
        return _verified(
            os.path.join(self.stagedir, self.job.stdout),
            self.job.exitcode,
            self.threads,
        )

    @sanity_function
    def verified(self):
        return sn.assert_true(self._result())

    @run_before('performance')
    def _set_perf_variables(self):
        result = self._result()
        self.perf_variables = {
            name: sn.make_performance_function(_figure(result, name), 'GB/s')
            for name in (f'stream_{k}' for k in stream.KERNELS)
        }
