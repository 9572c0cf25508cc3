"""HPC Challenge (Debian's ``hpcc``): HPL, DGEMM, STREAM, PingPong, ring, FFT, RA."""

import os

import reframe as rfm
from reframe.core.builtins import run_after, run_before, variable

from clusterbench.bench import hpl_sizing
from clusterbench.checks import needsfeature
from clusterbench.checks.plugins import hplproblem
from clusterbench.checks.plugins.judged import JudgedCheck
from clusterbench.checks.plugins.observed import Observed
from clusterbench.checks.plugins.references import BASE_INDEX
from clusterbench.checks.resources import node_cores
from clusterbench.checks.shell import quote
from clusterbench.parsers import declarations, hpcc
from clusterbench.site import contract

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


class HPCCBase(
    Observed,
    JudgedCheck,
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
    #: Fraction of the nodes' memory HPL's matrix may use. The default keeps
    #: the default suite short yet N large enough for HPL to reach >85% of
    #: DGEMM on a 2-core, 24 GiB node; acceptance runs use 0.5-0.8.
    hpl_mem_fraction = variable(float, value=0.035)
    hpl_nb = variable(int, value=192)
    #: Force HPL's N (0: size from memory).
    hpl_n = variable(int, value=0)
    #: The HPL problem actually run (N, NB, P, Q); kept in the run report.
    hpl_problem = variable(dict, value={})
    #: HPL's N as run: in the reference index, so a run of another size
    #: (``-S hpl_n=1000``, another memory fraction) gets *no reference* and
    #: never updates the reference of the default size.
    hpl_order = variable(int, value=0)
    # What to do on one-core batch nodes, said by the skip.
    one_core_advice = 'give -S HPCCCheck.num_nodes=2 (one rank per node)'
    time_limit = '1h'
    output_program = 'hpcc'
    output_parser = hpcc
    output_file = OUTPUT_FILE
    exit_reasons = {
        MISSING_BINARY: 'hpcc not found on the nodes; Debian: apt-get install hpcc'
    }

    @run_after('init')
    def _a_case_where_no_environment_has_hpcc(self):
        needsfeature.keep_one_case(self, 'hpcc')

    @run_after('setup')
    def _size_job(self):
        needsfeature.skip_without(self, 'hpcc')
        cores = node_cores(self.current_partition)
        # A batch scheduler refuses two ranks on a one-core node ("CPU count
        # per node can not be satisfied"): say what runs there instead.
        self.skip_if(
            cores < 2
            and self.num_nodes == 1
            and not contract.runs_here(self.current_partition),
            'one core per node: HPCC needs two ranks for PingPong; '
            + self.one_core_advice,
        )
        # PingPong and the rings need two ranks; a one-core node oversubscribes.
        self.num_tasks_per_node = max(cores, 2) if self.num_nodes == 1 else cores
        self.num_tasks = self.num_tasks_per_node * self.num_nodes
        self.num_cpus_per_task = 1
        # One rank per core: threaded BLAS would oversubscribe the cores.
        self.env_vars['OMP_NUM_THREADS'] = '1'
        self.env_vars['OPENBLAS_NUM_THREADS'] = '1'
        hplproblem.size(self)
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

    def output_expected(self):
        return {'nprocs': float(self.num_tasks), 'n': float(self.hpl_problem['n'])}

    def output_figures(self, result):
        figures = hpcc.figures(result, OUTPUT_FILE)
        if self.link_peak:
            # Across nodes the slowest PingPong pair is one that crosses the
            # link: its bandwidth against the declared peak (GB/s = 1000 MB/s).
            slowest = figures['pingpong_bandwidth_min'][0]
            figures['pingpong_link_efficiency'] = (
                100.0 * slowest * 1000.0 / self.link_peak['peak_mbs'],
                declarations.LINK_EFFICIENCY.unit,
            )
        return figures
