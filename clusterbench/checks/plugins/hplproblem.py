"""The HPL problem of a check that runs HPL (HPCC's or a standalone xhpl).

N from the nodes' memory, NB, and the most nearly square P x Q grid. The
check declares ``hpl_mem_fraction``, ``hpl_nb``, ``hpl_n`` (force N: 0 sizes
from memory), ``hpl_problem`` and ``hpl_order``; its setup hook calls
:func:`size` once ``num_tasks`` and ``num_nodes`` are set.
"""

from clusterbench.bench import hpl_sizing
from clusterbench.checks.resources import node_memory_bytes


def size(check):
    """Set *check*'s ``hpl_problem`` (N, NB, P, Q) and ``hpl_order`` (N) for
    its ``num_tasks`` ranks on ``num_nodes`` nodes."""
    p, q = hpl_sizing.process_grid(check.num_tasks)
    n = check.hpl_n
    if not n:
        memory = node_memory_bytes(check.current_partition) * check.num_nodes
        n = hpl_sizing.problem_size(
            memory, check.hpl_mem_fraction, check.hpl_nb, check.num_tasks
        )
    check.hpl_problem = {'n': n, 'nb': check.hpl_nb, 'p': p, 'q': q}
    check.hpl_order = n
