"""The HPL problem of a check that runs HPL (HPCC's or a standalone xhpl)."""

import reframe as rfm
from reframe.core.builtins import variable

from clusterbench.bench import hpl_sizing
from clusterbench.checks.resources import node_memory_bytes


class HPLProblem(rfm.RegressionTestPlugin):
    """N from the nodes' memory, NB, and the most nearly square P x Q grid."""

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

    def size_hpl_problem(self):
        """Set ``hpl_problem`` for ``num_tasks`` ranks on ``num_nodes`` nodes."""
        p, q = hpl_sizing.process_grid(self.num_tasks)
        n = self.hpl_n
        if not n:
            memory = node_memory_bytes(self.current_partition) * self.num_nodes
            n = hpl_sizing.problem_size(
                memory, self.hpl_mem_fraction, self.hpl_nb, self.num_tasks
            )
        self.hpl_problem = {'n': n, 'nb': self.hpl_nb, 'p': p, 'q': q}
        self.hpl_order = n
