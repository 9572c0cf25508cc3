"""The test cluster's Slurm: a node's slurmd, and the node states Slurm reports.

Shared by bring-up (:mod:`.cluster`) and fault injection (:mod:`.faults`).
"""

import os
import subprocess

from clusterbench.testcluster.procs import Starter


def start_slurmd(state, node, env=None):
    """Start node *node*'s slurmd in its namespace, pinned to its core."""
    log = os.path.join(state.run_dir, 'nodes', node['name'], 'slurmd.log')
    # nsenter --net, not `ip netns exec`: that remounts /sys, and slurmd then
    # cannot find the cgroup mounts. A UTS namespace gives the node its name.
    cmd = [
        'nsenter',
        f'--net=/run/netns/{node["netns"]}',
        'unshare',
        '--uts',
        'sh',
        '-c',
        f'hostname {node["name"]} && exec taskset -c {node["cpu"]} '
        f'slurmd -D -N {node["name"]} -f {state.slurm_conf}',
    ]
    return Starter(state).spawn(f'slurmd:{node["name"]}', cmd, log, env or state.env())


def node_states(state):
    """``{node: state}`` as Slurm sees them (lower case, flags stripped)."""
    try:
        out = subprocess.run(
            ['sinfo', '-h', '-N', '-o', '%N %T'],
            capture_output=True,
            text=True,
            env=state.env(),
            timeout=10,
            check=False,
        ).stdout
    except subprocess.TimeoutExpired:
        out = ''
    states = {n['name']: 'unknown' for n in state.nodes()}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] in states:
            states[parts[0]] = parts[1].rstrip('*~#!%$@^-').lower()
    return states
