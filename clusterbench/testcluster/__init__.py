"""A real Slurm test cluster of N nodes on this machine (system ``box``).

``clusterbench testcluster up --nodes 2`` brings it up in seconds,
``status`` shows it, ``fault`` injects the faults acceptance must catch, and
``down`` tears it down, leaving no process, namespace, cgroup or file behind.
See :mod:`clusterbench.testcluster.cluster` (bring-up),
:mod:`clusterbench.testcluster.teardown` and ``site_configs/box.py``.
"""

from clusterbench.testcluster.cluster import (
    CLUSTER,
    DEFAULT_RUN_DIR,
    PARTITION,
    BringUpError,
    State,
    node_states,
    status,
    up,
)
from clusterbench.testcluster.teardown import down, remaining

__all__ = [
    'CLUSTER',
    'DEFAULT_RUN_DIR',
    'PARTITION',
    'BringUpError',
    'State',
    'down',
    'node_states',
    'remaining',
    'status',
    'up',
]
