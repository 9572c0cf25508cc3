"""Slurm: the one scheduler of the seam (:mod:`clusterbench.site.scheduler`).

How Slurm ends a job (its states, and the nodes srun says it lost), and
what ``site init`` reads of it: its partitions and their nodes' facts
(``scontrol``, split by the nodes' features) and its MPI plugins (``srun
--mpi=list``). Readers return facts or a :class:`Todo` saying why not.
"""

import dataclasses
import re

from clusterbench.core.errors import ClusterbenchError
from clusterbench.site.sitefacts import Todo, command, said

#: The ReFrame scheduler backends that are Slurm.
NAMES = ('slurm', 'squeue')

# -- how a job ended -----------------------------------------------------------

#: States in which Slurm ended a job itself, and why.
ENDED = {
    'NODE_FAIL': 'a node of the job was lost',
    'TIMEOUT': 'the time limit was reached',
    'CANCELLED': 'the job was cancelled',
    'BOOT_FAIL': 'a node failed to boot',
    'OUT_OF_MEMORY': 'out of memory',
}

# What srun prints when a node of the job stops answering. A node lost while
# a step starts, or while it runs, can end the job FAILED, not NODE_FAIL: srun
# gives up on the node before slurmctld has noticed that it is gone.
_SRUN_LOST = (
    re.compile(r'srun: error: Task launch for StepId=\S+ failed on node (\S+?):'),
    re.compile(r'srun: error: Node failure on (\S+)'),
)
# The same, with the node's index in the step's node list.
_SRUN_LOST_INDEX = re.compile(
    r'srun: error: step_launch_notify_io_failure: .*slurmstepd on node (\d+)'
)


def lost_nodes(stderr_text, nodes=()):
    """Nodes srun names as unreachable in a job's stderr, in order, once each
    (*nodes*: the job's node list, which srun's node indices refer to)."""
    found = []
    for line in stderr_text.splitlines():
        for pattern in _SRUN_LOST:
            match = pattern.search(line)
            if match and match.group(1) not in found:
                found.append(match.group(1))
        match = _SRUN_LOST_INDEX.search(line)
        if match:
            index = int(match.group(1))
            node = nodes[index] if index < len(nodes) else f'node {index}'
            if node not in found:
                found.append(node)
    return found


def job_end(state, stderr_text, nodes=()):
    """(how, why) Slurm ended a job in *state* whose stderr is
    *stderr_text* (*nodes*: its node list), or None if Slurm did not."""
    for name, why in ENDED.items():
        if name in state.split(','):
            return name, why
    lost = lost_nodes(stderr_text, nodes)
    if lost:
        return state or '?', f'srun lost {",".join(lost)}: a node of the job was lost'
    return None


# -- what site init reads ------------------------------------------------------


def parse_records(text):
    """``scontrol show ... -o`` output: one dict per line of ``Key=Value``.

    Values may contain spaces only where Slurm prints them last on the line
    (``Reason=...``); everything is split on the ``Key=`` boundaries.
    """
    records = []
    for line in text.splitlines():
        if not line.strip():
            continue
        pairs = re.findall(r'(\S+?)=(.*?)(?=\s+\S+?=|\s*$)', line.strip())
        records.append(dict(pairs))
    return records


#: What scontrol prints, exit 0, where there is nothing to show.
_NOTHING = re.compile(r'No (partitions|nodes) in the system')


def _records(text, command, key):
    """parse_records(*text*), each of which must have *key*: a record without
    it (output cut short, ``PartitionNa``) is one line naming *command* and
    the record, not a partition or node quietly lost."""
    records = []
    lines = [line for line in text.splitlines() if line.strip()]
    for number, line in enumerate(lines, start=1):
        if _NOTHING.match(line.strip()):
            continue
        record = parse_records(line)[0]
        if not record.get(key):
            shown = line.strip()
            shown = shown if len(shown) <= 80 else shown[:77] + '...'
            raise ClusterbenchError(
                f'{command}: record {number} has no {key} (output cut short?): '
                f'{shown!r}'
            )
        records.append(record)
    return records


def _none(value):
    return value in (None, '', '(null)', 'N/A', 'none')


def hostnames(hostlist, env=None):
    """``scontrol show hostnames``: a Slurm host list expanded."""
    code, out, _ = command(['scontrol', 'show', 'hostnames', hostlist], env=env)
    return out.split() if code == 0 else []


@dataclasses.dataclass
class Partition:
    name: str
    nodes: list
    #: Per-node facts where all nodes agree; Todo where they do not.
    cpus: object
    sockets: object
    cores_per_socket: object
    threads_per_core: object
    mem_mb: object
    features: list
    gres: object
    default: bool
    #: The Slurm partition (a ReFrame partition of nodes that share a set of
    #: features is named after both: compute-ib).
    slurm_name: str = ''
    #: The features that select these nodes (``--constraint=ib``), if split.
    constraint: list = dataclasses.field(default_factory=list)
    #: Each node's address (NodeAddr), for the route between two of them.
    addresses: dict = dataclasses.field(default_factory=dict)


def _common(nodes, key, what):
    values = sorted({n.get(key, '') for n in nodes})
    if len(values) == 1 and not _none(values[0]):
        return values[0]
    if len(values) > 1:
        detail = ', '.join(
            f'{v} on {sum(n.get(key) == v for n in nodes)} node(s)' for v in values
        )
        return Todo(f'nodes differ in {what} ({detail}): split the partition')
    return Todo(f'Slurm does not report {what} ({key})')


def _int(value):
    if isinstance(value, Todo):
        return value
    try:
        return int(value)
    except ValueError:  # a value cut short, or not Slurm's
        return Todo(f'Slurm reports {value!r}, not a number')


def partitions(env=None):
    """The partitions Slurm shows, with their nodes' facts, or a Todo."""
    code, out, err = command(['scontrol', 'show', 'partition', '-o'], env=env)
    if code != 0:
        return Todo(f'scontrol show partition failed: {said(out, err)}')
    parts = _records(out, 'scontrol show partition', 'PartitionName')
    code, out, err = command(['scontrol', 'show', 'node', '-o'], env=env)
    if code != 0:
        return Todo(f'scontrol show node failed: {said(out, err)}')
    nodes = {
        rec['NodeName']: rec for rec in _records(out, 'scontrol show node', 'NodeName')
    }
    result = []
    for rec in parts:
        names = (
            hostnames(rec.get('Nodes', ''), env) if not _none(rec.get('Nodes')) else []
        )
        members = [nodes[n] for n in names if n in nodes]
        groups = _feature_groups(members)
        for features, group in groups:
            name = rec['PartitionName']
            split = len(groups) > 1
            if split:
                # A ReFrame name: a feature's other characters become _.
                tail = re.sub(r'[^A-Za-z0-9_]', '_', '_'.join(features) or 'plain')
                name = f'{name}-{tail}'
            result.append(_partition(name, rec, group, features, split and features))
    return result


def _features_of(node):
    return tuple(
        sorted(f for f in node.get('AvailableFeatures', '').split(',') if not _none(f))
    )


def _feature_groups(members):
    """The nodes of a partition by their set of features, in Slurm's order:
    [(features, nodes)]; one group where all nodes have the same features."""
    groups = {}
    for node in members:
        groups.setdefault(_features_of(node), []).append(node)
    return list(groups.items()) or [((), [])]


def _partition(name, rec, members, features, constraint):
    gres = _common(members, 'Gres', 'generic resources') if members else None
    if isinstance(gres, Todo) and 'does not report' in gres.reason:
        gres = None  # no gres on any node: nothing to declare
    return Partition(
        name=name,
        nodes=[n['NodeName'] for n in members],
        cpus=_int(_common(members, 'CPUTot', 'CPUs')),
        sockets=_int(_common(members, 'Sockets', 'sockets')),
        cores_per_socket=_int(_common(members, 'CoresPerSocket', 'cores per socket')),
        threads_per_core=_int(_common(members, 'ThreadsPerCore', 'threads per core')),
        mem_mb=_int(_common(members, 'RealMemory', 'memory (RealMemory)')),
        features=list(features),
        gres=gres,
        default=rec.get('Default') == 'YES',
        slurm_name=rec['PartitionName'],
        constraint=list(constraint or []),
        addresses={n['NodeName']: n.get('NodeAddr', n['NodeName']) for n in members},
    )


def mpi_plugins(env=None):
    """The MPI plugins of ``srun --mpi=list`` (``pmix``, ``pmi2``, ...), or a Todo."""
    code, out, err = command(['srun', '--mpi=list'], env=env)
    text = out + err
    if code != 0:
        return Todo(f'srun --mpi=list failed: {said(text)}')
    names = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith('specific') or not line:
            continue
        # 22.05: "MPI plugin types are..." then one "\tname" a line; 23.x:
        # "MPI plugin types are..." then "\tname" too, or "srun: name".
        match = re.fullmatch(r'(?:srun:\s*)?([a-z][\w]*)', line)
        if match:
            names.append(match.group(1))
    return names or Todo(f'srun --mpi=list listed no plugin: {said(text)}')


#: Which Slurm MPI plugin starts each MPI flavour's ranks, best first.
PLUGIN_FOR_MPI = {
    'openmpi': ('pmix', 'pmi2'),
    'mpich': ('pmi2', 'pmix'),
    'mvapich': ('pmi2', 'pmix'),
    'mvapich2': ('pmi2', 'pmix'),
    'intel-oneapi-mpi': ('pmi2', 'pmix'),
}


def plugin_for(mpi, plugins):
    """The ``srun --mpi=`` plugin for *mpi*, or a Todo."""
    if isinstance(plugins, Todo):
        return plugins
    for name in PLUGIN_FOR_MPI.get(mpi, ()):
        if name in plugins:
            return name
    return Todo(
        f'no Slurm MPI plugin for {mpi} among {plugins} '
        f'(want one of {list(PLUGIN_FOR_MPI.get(mpi, ()))})'
    )
