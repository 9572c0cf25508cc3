"""What a partition's nodes offer: cores and memory, from config or this host."""

import os

from reframe.core.exceptions import ReframeError

from clusterbench.site import contract


def node_cores(partition):
    """Physical cores per node: the processor facts, else this host's CPUs."""
    proc = partition.processor
    if proc.num_cpus:
        return max(1, proc.num_cpus // (proc.num_cpus_per_core or 1))
    if contract.runs_here(partition):
        return os.cpu_count() or 1
    raise ReframeError(
        f'partition {partition.fullname!r}: no processor facts; '
        f'declare "processor" in its site configuration'
    )


def partition_nodes(partition):
    """Nodes of a partition: ``extras.num_nodes`` if declared; 1 for a local
    or ssh partition; None for a batch scheduler that declares none (several
    nodes: the scheduler decides)."""
    declared = contract.PartitionSpec.of(partition).num_nodes
    if declared:
        return int(declared)
    if partition.scheduler.registered_name in ('local', 'ssh'):
        return 1
    return None


def node_memory_bytes(partition):
    """Memory per node: the partition's ``extras.mem_per_node`` (bytes).

    A local partition that declares none is this host, so its MemTotal serves.
    """
    declared = contract.PartitionSpec.of(partition).mem_per_node
    if declared:
        return int(declared)
    if contract.runs_here(partition):
        with open('/proc/meminfo') as meminfo:
            for line in meminfo:
                if line.startswith('MemTotal:'):
                    return int(line.split()[1]) * 1024
    raise ReframeError(
        f'partition {partition.fullname!r}: declare extras.mem_per_node '
        f'(bytes) in its site configuration'
    )
