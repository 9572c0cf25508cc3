"""HPCG 3.1 (the reference code) built by Spack from the partition's environment."""

import glob
import os

import reframe as rfm
from reframe.core.builtins import (
    parameter,
    run_after,
    run_before,
    variable,
)
from reframe.core.exceptions import ReframeError, SanityError

from clusterbench.bench.source import Source
from clusterbench.checks.plugins.judged import JudgedCheck
from clusterbench.checks.plugins.references import BASE_INDEX
from clusterbench.checks.plugins.spack import MPI_FLAVOURS
from clusterbench.checks.provisioning import Provisioned
from clusterbench.checks.resources import node_cores
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


class HPCGBase(Provisioned, JudgedCheck, rfm.RegressionTest):
    """HPCG on all cores of ``num_nodes`` nodes, one rank per core, built by Spack.

    Each rank gets a ``local_size``^3 grid (a multiple of 8, at least 16)
    and the timed phase lasts ``run_seconds`` (HPCG asks 1800 s for an
    official result; shorter runs are rated VALID all the same). A figure is
    recorded only when HPCG rated the run VALID with every verification
    test PASSED and ran the processes requested.
    """

    descr = 'HPCG built by Spack from the partition environment'
    valid_systems = ['*']
    source = Source('hpcg', 'HPCG', spack='hpcg')
    spack_executable = 'xhpcg'
    reference_file = 'hpcg.yaml'
    reference_index = [*BASE_INDEX, 'mpi', 'compiler', 'local_size']
    mpi = parameter(MPI_FLAVOURS)
    num_nodes = variable(int, value=1)
    local_size = variable(int, value=104)
    run_seconds = variable(int, value=60)
    time_limit = '1h'
    output_program = 'xhpcg'
    output_parser = hpcg

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

    def output_path(self):
        found = sorted(glob.glob(os.path.join(self.stagedir, SUMMARY_GLOB)))
        if len(found) > 1:
            raise SanityError(
                f'{len(found)} HPCG summary files ({SUMMARY_GLOB}), expected one'
            )
        # None written: the pattern names the missing file.
        return found[0] if found else os.path.join(self.stagedir, SUMMARY_GLOB)

    def output_expected(self):
        return {'nprocs': self.num_tasks}
