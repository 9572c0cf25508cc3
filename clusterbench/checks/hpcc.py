"""HPC Challenge (Debian's ``hpcc``): HPL, DGEMM, STREAM, PingPong, ring, FFT, RA."""

import os

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import run_after, run_before, sanity_function, variable
from reframe.core.exceptions import SanityError

from clusterbench.bench import hpl_sizing
from clusterbench.checks.declaredlink import DeclaredLinkPeak
from clusterbench.checks.hplproblem import HPLProblem
from clusterbench.checks.instrumented import Instrumented
from clusterbench.checks.jobstate import JobStateCheck
from clusterbench.checks.references import BASE_INDEX, ExternalReferences
from clusterbench.checks.resources import node_cores
from clusterbench.checks.shell import quote
from clusterbench.core.errors import ClusterbenchError
from clusterbench.parsers import hpcc

OUTPUT_FILE = 'hpccoutf.txt'
# The shell's "command not found", which the job script's own test returns.
MISSING_BINARY = 127
INPUT_FILE = 'hpccinf.txt'

# hpcc 1.5 reads HPL.dat's lines (results to its own file), then PTRANS's.
_PTRANS = """\
##### This line (no. 32) is ignored (it serves as a separator). ######
0            Number of additional problem sizes for PTRANS
1200         values of N
0            number of additional blocking sizes for PTRANS
40           values of NB
"""


def hpccinf(problem):
    """The hpccinf.txt of one HPL problem ``{'n', 'nb', 'p', 'q'}``."""
    return hpl_sizing.hpl_dat(problem, device=8) + _PTRANS


@sn.deferrable
def _verified_summary(path, nprocs, n, exitcode=0):
    if exitcode == MISSING_BINARY:
        raise SanityError('hpcc not found on the nodes (Debian: apt-get install hpcc)')
    if exitcode:
        raise SanityError(f'hpcc exited with code {exitcode} (see rfm_job.err)')
    try:
        with open(path) as output:
            text = output.read()
    except OSError as err:
        raise SanityError(f'{OUTPUT_FILE} not written: {err.strerror}') from None
    try:
        return hpcc.verify(text, nprocs, n, source=OUTPUT_FILE)
    except ClusterbenchError as err:
        raise SanityError(str(err)) from None


@sn.deferrable
def _link_efficiency(bandwidth_gbs, peak_mbs):
    return 100.0 * bandwidth_gbs * 1000.0 / peak_mbs


@sn.deferrable
def _figure(summary, name):
    return hpcc.figures(summary, OUTPUT_FILE)[name][0]


class HPCCBase(
    HPLProblem,
    Instrumented,
    DeclaredLinkPeak,
    JobStateCheck,
    ExternalReferences,
    rfm.RunOnlyRegressionTest,
):
    """Runs ``hpcc`` on all cores of ``num_nodes`` nodes; records every figure.

    HPL's order N fills ``hpl_mem_fraction`` of the nodes' memory (set
    ``hpl_n`` to force it); NB is ``hpl_nb``; the P x Q grid is the most nearly
    square one for the rank count. The other HPCC kernels size themselves from
    the memory HPL uses. A figure is only recorded when HPCC reports
    ``Success=1``, HPL passed its residual check, and the process count and N
    are the ones requested.
    """

    descr = 'HPC Challenge: HPL, DGEMM, STREAM, PingPong, ring, MPIFFT, RandomAccess'
    valid_systems = ['*']
    valid_prog_environs = ['+hpcc']
    executable = 'hpcc'
    reference_file = 'hpcc.yaml'
    # HPL's N: figures of another problem size are not comparable.
    reference_index = [*BASE_INDEX, 'hpl_order']
    num_nodes = variable(int, value=1)
    time_limit = '1h'

    @run_after('setup')
    def _size_job(self):
        cores = node_cores(self.current_partition)
        # PingPong and the rings need two ranks; a one-core node oversubscribes.
        self.num_tasks_per_node = max(cores, 2) if self.num_nodes == 1 else cores
        self.num_tasks = self.num_tasks_per_node * self.num_nodes
        self.num_cpus_per_task = 1
        # One rank per core: threaded BLAS would oversubscribe the cores.
        self.env_vars['OMP_NUM_THREADS'] = '1'
        self.env_vars['OPENBLAS_NUM_THREADS'] = '1'
        self.size_hpl_problem()
        self.read_link_peak(
            self.num_nodes > 1,
            "one node: HPCC's PingPong pairs do not cross a link, no efficiency",
        )
        self.keep_files = [INPUT_FILE, OUTPUT_FILE]
        # Checked on the node that runs the job, not where ReFrame runs.
        self.executable = quote(self.executable)
        self.prerun_cmds = [
            f'command -v {self.executable} >/dev/null || exit {MISSING_BINARY}'
        ]

    @run_before('run')
    def _write_input(self):
        with open(os.path.join(self.stagedir, INPUT_FILE), 'w') as inp:
            inp.write(hpccinf(self.hpl_problem))

    @sanity_function
    def verified(self):
        summary = _verified_summary(
            os.path.join(self.stagedir, OUTPUT_FILE),
            float(self.num_tasks),
            float(self.hpl_problem['n']),
            self.job.exitcode,
        )
        return sn.assert_true(summary)

    @run_before('performance')
    def _set_perf_variables(self):
        summary = _verified_summary(
            os.path.join(self.stagedir, OUTPUT_FILE),
            float(self.num_tasks),
            float(self.hpl_problem['n']),
        )
        units = {name: unit for name, unit, _ in hpcc.FIGURES.values()}
        units['hpl_dgemm_efficiency'] = '%'
        self.perf_variables = {
            name: sn.make_performance_function(_figure(summary, name), unit)
            for name, unit in units.items()
        }
        if self.link_peak:
            # Across nodes the slowest PingPong pair is one that crosses the
            # link: its bandwidth against the declared peak (GB/s = 1000 MB/s).
            self.perf_variables['pingpong_link_efficiency'] = (
                sn.make_performance_function(
                    _link_efficiency(
                        _figure(summary, 'pingpong_bandwidth_min'),
                        self.link_peak['peak_mbs'],
                    ),
                    '%',
                )
            )
