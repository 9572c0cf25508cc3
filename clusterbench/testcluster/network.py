"""The test cluster's network: a bridge, and one namespace and veth per node.

Names and addresses of the bridge, the namespaces and the veths, their
creation (recorded in the state as it happens, so that a teardown after a
failed bring-up removes exactly what was made), and finding any of ours
left behind.
"""

import os
import subprocess

from clusterbench.testcluster.procs import BringUpError

SUBNET = '10.99.0'
HOST_ADDR = f'{SUBNET}.1'
BRIDGE = 'cbbox0'
NETNS_PREFIX = 'cbbox-'


def node_addr(index):
    return f'{SUBNET}.{10 + index}'


def netns_name(name):
    return f'{NETNS_PREFIX}{name}'


def veth_name(name):
    """The root-namespace end of a node's veth (its namespace end is eth0)."""
    return f'{NETNS_PREFIX}{name}'


def run(cmd, what, env=None, timeout=30, input=None):
    try:
        proc = subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout,
            input=input,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise BringUpError(f'{what}: timed out after {timeout} s') from None
    if proc.returncode:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        raise BringUpError(
            f'{what}: {detail[-1] if detail else f"exit code {proc.returncode}"}'
        )
    return proc.stdout


def create(state, nodes):
    """The bridge and one namespace per node, recorded as they are made."""
    created = state.setdefault('network', {'bridge': None, 'netns': []})
    run(['ip', 'link', 'add', BRIDGE, 'type', 'bridge'], f'creating bridge {BRIDGE}')
    created['bridge'] = BRIDGE
    state.save()
    batch = [
        f'addr add {HOST_ADDR}/24 dev {BRIDGE}',
        f'link set {BRIDGE} up',
    ]
    for node in nodes:
        ns = node['netns']
        run(['ip', 'netns', 'add', ns], f'creating network namespace {ns}')
        created['netns'].append(ns)
        state.save()
        batch += [
            f'link add {node["veth"]} type veth peer name eth0 netns {ns}',
            f'link set {node["veth"]} master {BRIDGE} up',
        ]
    run(['ip', '-batch', '-'], 'configuring the bridge', input='\n'.join(batch))
    for node in nodes:
        inside = [
            'link set lo up',
            f'addr add {node["addr"]}/24 dev eth0',
            'link set eth0 up',
        ]
        run(
            ['ip', '-n', node['netns'], '-batch', '-'],
            f"configuring {node['name']}'s network",
            input='\n'.join(inside),
        )


def our_netns():
    """The network namespaces of the test cluster that exist now."""
    try:
        return sorted(n for n in os.listdir('/run/netns') if n.startswith(NETNS_PREFIX))
    except FileNotFoundError:
        return []


def our_links():
    """The bridge and veths of the test cluster that exist now."""
    try:
        names = os.listdir('/sys/class/net')
    except FileNotFoundError:
        return []
    return sorted(n for n in names if n == BRIDGE or n.startswith(NETNS_PREFIX))
