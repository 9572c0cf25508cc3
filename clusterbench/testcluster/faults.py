"""Faults injected into the test cluster, for acceptance to catch.

Each fault is recorded in the cluster's state and undone by :func:`clear`
(teardown undoes what outlives the nodes' namespaces and devices: cgroups).

* ``slow``: a CPU quota on the node (cgroup v1 ``cpu.cfs_quota_us``) holding
  its slurmd, so every job it starts inherits it. The period is short (10 ms)
  so that even a short benchmark is throttled evenly.
* ``link``: a bandwidth cap (``tc ... tbf``) on both ends of the node's veth.
* ``loss``: nftables in the node's namespace dropping a few percent of its
  packets, in and out.
* ``lost``: the node loses power: its slurmd and everything it runs killed.
"""

import contextlib
import os
import subprocess
import time

from clusterbench.core.errors import ClusterbenchError
from clusterbench.testcluster import procs, slurm

CGROUP_NAME = 'clusterbench-box'
NFT_TABLE = 'cbbox_fault'
KINDS = ('slow', 'link', 'loss', 'lost')


class FaultError(ClusterbenchError):
    """A fault could not be injected or cleared."""


def _record(state, name, kind, detail):
    state.setdefault('faults', {}).setdefault(name, {})[kind] = detail
    state.save()


def _forget(state, name, kind):
    faults = state.setdefault('faults', {})
    faults.get(name, {}).pop(kind, None)
    if name in faults and not faults[name]:
        del faults[name]
    state.save()


def _cmd(cmd, what, input=None):
    proc = subprocess.run(
        cmd, capture_output=True, text=True, input=input, timeout=20, check=False
    )
    if proc.returncode:
        lines = (proc.stderr or proc.stdout).strip().splitlines()
        raise FaultError(f'{what}: {lines[-1] if lines else proc.returncode}')
    return proc.stdout


# -- slow node ------------------------------------------------------------


def _cpu_cgroup_of(pid):
    """The cgroup v1 path of *pid* in the cpu hierarchy ('/' if none)."""
    with open(f'/proc/{pid}/cgroup') as f:
        for line in f:
            _, controllers, path = line.rstrip('\n').split(':', 2)
            if 'cpu' in controllers.split(','):
                return path
    return '/'


def _move(pids, cgroup_dir):
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, OSError):
            with open(os.path.join(cgroup_dir, 'cgroup.procs'), 'w') as f:
                f.write(str(pid))


def quota_for(slowdown):
    """The CPU quota that makes a node about *slowdown* times slower now.

    On a busy host a process already gets only a share of a core (about
    cores / load); a quota above that share slows nothing, so the quota is
    that share divided by the slowdown.
    """
    load = os.getloadavg()[0]
    share = min(1.0, (os.cpu_count() or 1) / max(load, 1.0))
    return max(0.01, round(share / slowdown, 3))


def slow_node(state, name, quota=0.25, period_us=10000):
    """Limit node *name* to *quota* of one core (cgroup v1 CFS bandwidth)."""
    node = state.node(name)
    if not os.path.isdir(procs.CGROUP_CPU):
        raise FaultError(f'no cgroup v1 cpu hierarchy at {procs.CGROUP_CPU}')
    if not 0 < quota <= 1:
        raise FaultError(f'quota must be in (0, 1], not {quota}')
    pids = procs.netns_pids(node['netns'])
    if not pids:
        raise FaultError(f'{name}: nothing runs on the node (is it lost?)')
    parent = os.path.join(procs.CGROUP_CPU, CGROUP_NAME)
    path = os.path.join(parent, name)
    origin = _cpu_cgroup_of(pids[0])
    os.makedirs(path, exist_ok=True)
    _record(state, name, 'slow', {'cgroup': path, 'origin': origin, 'quota': quota})
    with open(os.path.join(path, 'cpu.cfs_period_us'), 'w') as f:
        f.write(str(period_us))
    with open(os.path.join(path, 'cpu.cfs_quota_us'), 'w') as f:
        f.write(str(max(1000, int(quota * period_us))))
    _move(pids, path)


def _unslow(state, name, detail):
    path = detail['cgroup']
    origin = os.path.join(procs.CGROUP_CPU, detail.get('origin', '/').lstrip('/'))
    for _ in range(50):
        try:
            with open(os.path.join(path, 'cgroup.procs')) as f:
                pids = [int(p) for p in f.read().split()]
        except FileNotFoundError:
            break
        _move(pids, origin if os.path.isdir(origin) else procs.CGROUP_CPU)
        try:
            os.rmdir(path)
            break
        except FileNotFoundError:
            break
        except OSError:
            time.sleep(0.05)
    with contextlib.suppress(OSError):
        os.rmdir(os.path.dirname(path))
    _forget(state, name, 'slow')


# -- degraded link -------------------------------------------------------------


def cap_link(state, name, rate='1gbit', burst='256kb', latency='10ms'):
    """A token-bucket bandwidth cap on both ends of node *name*'s link."""
    node = state.node(name)
    tbf = ['root', 'tbf', 'rate', rate, 'burst', burst, 'latency', latency]
    _record(state, name, 'link', {'rate': rate})
    _cmd(['tc', 'qdisc', 'replace', 'dev', node['veth'], *tbf], f'{name}: tc on veth')
    _cmd(
        ['tc', '-n', node['netns'], 'qdisc', 'replace', 'dev', 'eth0', *tbf],
        f'{name}: tc on eth0',
    )


def _uncap(state, name, detail):
    node = state.node(name)
    for cmd in (
        ['tc', 'qdisc', 'del', 'dev', node['veth'], 'root'],
        ['tc', '-n', node['netns'], 'qdisc', 'del', 'dev', 'eth0', 'root'],
    ):
        subprocess.run(cmd, capture_output=True, check=False)
    _forget(state, name, 'link')


# -- lossy link ----------------------------------------------------------------


def lossy_link(state, name, percent=2):
    """nftables in node *name*'s namespace drops *percent* % of its packets."""
    node = state.node(name)
    if not 0 < percent < 100:
        raise FaultError(f'percent must be in (0, 100), not {percent}')
    rules = f"""
table inet {NFT_TABLE} {{
  chain out {{
    type filter hook output priority 0; policy accept;
    oifname "eth0" numgen random mod 100 < {int(percent)} drop
  }}
  chain in {{
    type filter hook input priority 0; policy accept;
    iifname "eth0" numgen random mod 100 < {int(percent)} drop
  }}
}}
"""
    _record(state, name, 'loss', {'percent': int(percent)})
    _cmd(
        ['nsenter', f'--net=/run/netns/{node["netns"]}', 'nft', '-f', '-'],
        f'{name}: nftables',
        input=rules,
    )


def _unloss(state, name, detail):
    node = state.node(name)
    subprocess.run(
        [
            'nsenter',
            f'--net=/run/netns/{node["netns"]}',
            'nft',
            'delete',
            'table',
            'inet',
            NFT_TABLE,
        ],
        capture_output=True,
        check=False,
    )
    _forget(state, name, 'loss')


# -- lost node -----------------------------------------------------------------


def kill_node(state, name):
    """Node *name* is lost: its slurmd and every process of its jobs killed."""
    node = state.node(name)
    _record(state, name, 'lost', {'at': time.time()})
    left = procs.kill_netns_processes(node['netns'])
    if left:
        raise FaultError(f'{name}: processes {left} survived SIGKILL')


def _revive(state, name, detail):
    """Power the node back on: a new slurmd, back in service (ReturnToService=2)."""
    node = state.node(name)
    procs.kill_netns_processes(node['netns'])
    slurm.start_slurmd(state, node)
    _forget(state, name, 'lost')
    deadline = time.monotonic() + 30
    while slurm.node_states(state).get(name) not in ('idle', 'mixed', 'allocated'):
        if time.monotonic() > deadline:
            raise FaultError(f'{name}: not back in service 30 s after its restart')
        time.sleep(0.2)


_UNDO = {'slow': _unslow, 'link': _uncap, 'loss': _unloss, 'lost': _revive}


def inject(state, kind, name, **options):
    """Inject fault *kind* (one of :data:`KINDS`) into node *name*."""
    if kind not in KINDS:
        raise FaultError(f'unknown fault {kind!r} (one of {", ".join(KINDS)})')
    if kind in state.get('faults', {}).get(name, {}):
        raise FaultError(f'{name} already has a {kind} fault; clear it first')
    {'slow': slow_node, 'link': cap_link, 'loss': lossy_link, 'lost': kill_node}[kind](
        state, name, **options
    )


def clear(state, name=None):
    """Undo the faults of node *name* (all nodes when ``None``)."""
    for node, faults in sorted(state.get('faults', {}).items()):
        if name is not None and node != name:
            continue
        # A lost node first comes back, then its other faults go.
        for kind in sorted(faults, key=lambda k: k != 'lost'):
            _UNDO[kind](state, node, faults[kind])


def clear_all(state, quiet=False):
    """Teardown's part: cgroups (the rest goes with namespaces and devices)."""
    for node, faults in list(state.get('faults', {}).items()):
        if 'slow' in faults:
            try:
                _unslow(state, node, faults['slow'])
            except (OSError, ClusterbenchError):
                if not quiet:
                    raise
    parent = os.path.join(procs.CGROUP_CPU, CGROUP_NAME)
    if os.path.isdir(parent):
        for child in os.listdir(parent):
            if os.path.isdir(os.path.join(parent, child)):
                with contextlib.suppress(OSError):
                    os.rmdir(os.path.join(parent, child))
        with contextlib.suppress(OSError):
            os.rmdir(parent)


def our_cgroups():
    """Cgroup directories of the cluster still present (any v1 hierarchy)."""
    found = []
    root = '/sys/fs/cgroup'
    with contextlib.suppress(OSError):
        for controller in os.listdir(root):
            path = os.path.join(root, controller, CGROUP_NAME)
            if os.path.isdir(path):
                found.append(path)
    return found
