"""HPCG 3.1 (the reference code) built by Spack from the partition's environment."""

import glob
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
from reframe.core.exceptions import ReframeError, SanityError

from clusterbench.checks.jobstate import JobStateCheck
from clusterbench.checks.references import BASE_INDEX, ExternalReferences
from clusterbench.checks.resources import node_cores
from clusterbench.checks.spack import MPI_FLAVOURS, SpackBuilt
from clusterbench.core.errors import ClusterbenchError
from clusterbench.parsers import hpcg

INPUT_FILE = 'hpcg.dat'
SUMMARY_GLOB = 'HPCG-Benchmark_*.txt'


def hpcg_dat(local_size, seconds):
    n = local_size
    return (
        'HPCG benchmark input file (written by clusterbench)\n'
        'Sandia National Laboratories; University of Tennessee, Knoxville\n'
        f'{n} {n} {n}\n'
        f'{seconds}\n'
    )


@sn.deferrable
def _verified(stagedir, exitcode, nprocs):
    if exitcode:
        raise SanityError(f'xhpcg exited with code {exitcode} (see rfm_job.err)')
    found = sorted(glob.glob(os.path.join(stagedir, SUMMARY_GLOB)))
    if len(found) != 1:
        raise SanityError(
            f'{len(found)} HPCG summary files ({SUMMARY_GLOB}), expected one'
        )
    with open(found[0]) as out:
        text = out.read()
    try:
        return hpcg.verify(text, source=os.path.basename(found[0]), nprocs=nprocs)
    except ClusterbenchError as err:
        raise SanityError(str(err)) from None


@sn.deferrable
def _figure(values, name):
    return hpcg.figures(values)[name][0]


class HPCGBase(SpackBuilt, JobStateCheck, ExternalReferences, rfm.RegressionTest):
    """HPCG on all cores of ``num_nodes`` nodes, one rank per core, built by Spack.

    Each rank gets a ``local_size``^3 grid (a multiple of 8, at least 16)
    and the timed phase lasts ``run_seconds`` (HPCG asks 1800 s for an
    official result; shorter runs are rated VALID all the same). A figure is
    recorded only when HPCG rated the run VALID with every verification
    test PASSED and ran the processes requested.
    """

    descr = 'HPCG built by Spack from the partition environment'
    valid_systems = ['*']
    spack_package = 'hpcg'
    spack_executable = 'xhpcg'
    reference_file = 'hpcg.yaml'
    reference_index = [*BASE_INDEX, 'mpi', 'compiler', 'local_size']
    mpi = parameter(MPI_FLAVOURS)
    num_nodes = variable(int, value=1)
    local_size = variable(int, value=104)
    run_seconds = variable(int, value=60)
    time_limit = '1h'

    @run_after('setup')
    def _size_job(self):
        if self.local_size < 16 or self.local_size % 8:
            raise ReframeError(
                f'local_size={self.local_size}: HPCG needs a multiple of 8, >= 16'
            )
        cores = node_cores(self.current_partition)
        self.num_tasks_per_node = cores
        self.num_tasks = cores * self.num_nodes
        self.num_cpus_per_task = 1
        self.env_vars['OMP_NUM_THREADS'] = '1'
        self.keep_files = [*self.keep_files, INPUT_FILE, SUMMARY_GLOB]

    @run_before('run')
    def _write_input(self):
        with open(os.path.join(self.stagedir, INPUT_FILE), 'w') as inp:
            inp.write(hpcg_dat(self.local_size, self.run_seconds))

    def _values(self):
        return _verified(self.stagedir, self.job.exitcode, self.num_tasks)

    @sanity_function
    def verified(self):
        return sn.assert_true(self._values())

    @run_before('performance')
    def _set_perf_variables(self):
        values = self._values()
        self.perf_variables = {
            name: sn.make_performance_function(_figure(values, name), unit)
            for name, (_, unit) in hpcg.FIGURES.items()
        }
