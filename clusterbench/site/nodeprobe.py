"""What ``clusterbench site init`` asks the compute nodes, each through a
short ``srun`` job: the processor (ReFrame's detection), the CPU kind
(clusterbench's own host facts, which also proves that the nodes see this
venv at the same path), and whether two "nodes" are one host.

Like :mod:`clusterbench.site.sitefacts`, every reader returns facts or a
:class:`~clusterbench.site.sitefacts.Todo` saying why not.
"""

import json
import os
import re
import shutil
import sys

from clusterbench.site.sitefacts import Todo, command, said


def srun_options(part):
    """The srun options that select *part*'s nodes (a Partition, or the name
    of a Slurm partition)."""
    if isinstance(part, str):
        return [f'--partition={part}']
    options = [f'--partition={part.slurm_name or part.name}']
    if part.constraint:
        options.append(f'--constraint={"&".join(part.constraint)}')
    return options


def node_topology(partition, env=None, timeout=180):
    """ReFrame's processor facts of one node of *partition* (a short job that
    prints them: no shared filesystem needed), or a Todo."""
    reframe = os.path.join(os.path.dirname(sys.executable), 'reframe')
    if not os.path.exists(reframe):
        reframe = shutil.which('reframe') or 'reframe'
    code, out, err = command(
        [
            'srun',
            *srun_options(partition),
            '--nodes=1',
            '--ntasks=1',
            '--time=5',
            reframe,
            '--detect-host-topology',
        ],
        timeout=timeout,
        env=env,
    )
    try:
        facts = json.loads(out[out.index('{') :]) if code == 0 else None
    except ValueError:
        facts = None
    if isinstance(facts, dict):
        return facts
    # ReFrame's own complaint, not srun's "task 0: Exited with exit code 1".
    own = [
        line
        for line in (out + err).splitlines()
        if line.strip() and not line.startswith('srun:')
    ]
    errors = [line for line in own if 'error' in line.lower()]
    return Todo(
        f'srun reframe --detect-host-topology on {partition} gave no facts '
        f'(exit {code}): {said(*(errors[:1] or own or [out + err]))}'
    )


def node_kind(partition, env=None, timeout=180):
    """The ``cpu_kind`` (vendor-family-model, the key of references) of one
    node of *partition*, read there by clusterbench's own host facts, or a
    Todo. Job scripts run this venv's Python on the nodes: a node that does
    not see it at the same path says so here."""
    code, out, err = command(
        [
            'srun',
            *srun_options(partition),
            '--nodes=1',
            '--ntasks=1',
            '--time=5',
            sys.executable,
            '-m',
            'clusterbench.cli.hwinfo',
        ],
        timeout=timeout,
        env=env,
    )
    try:
        kind = json.loads(out)['cpu']['kind'] if code == 0 else None
    except (ValueError, KeyError, TypeError):
        kind = None
    if isinstance(kind, str) and re.fullmatch(r'[A-Za-z0-9_.x-]+', kind):
        return kind
    return Todo(
        f'{sys.executable} -m clusterbench.cli.hwinfo on a node of '
        f'{partition.name} gave no CPU kind (exit {code}: {said(out, err)}); the '
        f'nodes must see this venv at the same path'
    )


def shared_host_device(partition, env=None, timeout=180):
    """Where two nodes of *partition* are one host (the same boot id:
    namespaces or containers of one machine), the network device between
    them; None where they are separate machines (or the partition has one
    node). MPI would otherwise pass "inter-node" messages through shared
    memory. A Todo when it cannot be told."""
    if len(partition.nodes) < 2:
        return None
    first, second = partition.nodes[:2]
    code, out, err = command(
        [
            'srun',
            *srun_options(partition),
            f'--nodelist={first},{second}',
            '--nodes=2',
            '--ntasks-per-node=1',
            '--time=5',
            'cat',
            '/proc/sys/kernel/random/boot_id',
        ],
        timeout=timeout,
        env=env,
    )
    ids = out.split()
    if code != 0 or len(ids) != 2:
        return Todo(f'boot ids of {first} and {second}: {said(out, err)}')
    if ids[0] != ids[1]:
        return None
    peer = partition.addresses.get(second, second)
    code, out, err = command(
        [
            'srun',
            *srun_options(partition),
            f'--nodelist={first}',
            '--nodes=1',
            '--ntasks=1',
            '--time=5',
            'ip',
            '-o',
            'route',
            'get',
            peer,
        ],
        timeout=timeout,
        env=env,
    )
    found = re.search(r'\bdev (\S+)', out) if code == 0 else None
    if found:
        return found.group(1)
    return Todo(
        f'{first} and {second} are one host (same boot id), and ip route get '
        f'{peer} on {first} named no device: {said(out, err)}'
    )
