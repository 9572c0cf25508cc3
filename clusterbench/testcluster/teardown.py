"""Teardown of the test cluster, and what a clean teardown must not leave.

Stops only what ``state.json`` records (processes checked by PID *and* start
time, never by name) and what runs in the cluster's own namespaces, then
removes namespaces, veths and bridge, the cgroups of injected faults, and the
run directory.
"""

import contextlib
import os
import shutil
import subprocess
import time

from clusterbench.testcluster import faults
from clusterbench.testcluster.network import our_links, our_netns
from clusterbench.testcluster.procs import (
    is_zombie,
    kill_netns_processes,
    stop_processes,
)
from clusterbench.testcluster.state import DEFAULT_RUN_DIR, STATE_FILE, State, locked


def down(run_dir=DEFAULT_RUN_DIR, out=None):
    """Tear the cluster down; return ``(seconds, leftovers)``.

    Stops only what the state records (and what runs in the cluster's own
    namespaces), then removes namespaces, bridge, cgroups and the run directory.
    ``leftovers`` lists anything that could not be removed (empty when clean).
    """
    t0 = time.monotonic()
    with locked(run_dir):
        state = State.load(run_dir)
        if state is None:
            state = State(run_dir, {})
        tear_down(state)
        leftovers = remaining(run_dir)
    seconds = round(time.monotonic() - t0, 2)
    if out:
        status = 'clean' if not leftovers else 'left: ' + '; '.join(leftovers)
        print(f'test cluster down in {seconds:.1f} s ({status})', file=out)
    return seconds, leftovers


def tear_down(state):
    """Remove what *state* records; the caller holds the run directory's lock."""
    network = state.get('network', {})
    # Namespaces we made, plus any left by an earlier crash (names are ours).
    namespaces = sorted(set(network.get('netns', [])) | set(our_netns()))
    # 1. The nodes: slurmd and everything it started, killed where they run.
    for ns in namespaces:
        kill_netns_processes(ns)
    for node in state.nodes():
        if node.get('slurmd'):
            stop_processes([node['slurmd']], grace=0)
    # 2. The daemons, newest first.
    daemons = state.get('daemons', {})
    for key in ('slurmctld', 'slurmdbd', 'mariadbd', 'munged'):
        if key in daemons:
            stop_processes([daemons[key]], grace=3.0)
    # 3. Faults that outlive processes (cgroups); tc and nftables go with the
    # devices and namespaces below.
    faults.clear_all(state, quiet=True)
    # 4. Network.
    for ns in namespaces:
        subprocess.run(['ip', 'netns', 'del', ns], capture_output=True, check=False)
    for link in our_links():
        subprocess.run(['ip', 'link', 'del', link], capture_output=True, check=False)
    # 5. Files.
    if os.path.isdir(state.run_dir) and os.path.exists(
        os.path.join(state.run_dir, STATE_FILE)
    ):
        shutil.rmtree(state.run_dir, ignore_errors=True)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(os.path.abspath(state.run_dir) + '.lock')


def remaining(run_dir=DEFAULT_RUN_DIR):
    """What a clean teardown must not leave: each leftover as one line."""
    left = []
    if os.path.exists(run_dir):
        left.append(f'run directory {run_dir}')
    left += [f'network namespace {n}' for n in our_netns()]
    left += [f'network device {n}' for n in our_links()]
    left += [f'cgroup {p}' for p in faults.our_cgroups()]
    for pid in _pids_using(run_dir):
        left.append(f'process {pid} ({_comm(pid)}) using {run_dir}')
    return left


def _comm(pid):
    try:
        with open(f'/proc/{pid}/comm') as f:
            return f.read().strip()
    except OSError:
        return '?'


def _pids_using(run_dir):
    """Processes whose command line names the run directory (ours, if any)."""
    found = []
    needle = os.path.abspath(run_dir).encode()
    for entry in os.listdir('/proc'):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f'/proc/{entry}/cmdline', 'rb') as f:
                cmdline = f.read()
        except OSError:
            continue
        if needle in cmdline and not is_zombie(int(entry)):
            found.append(int(entry))
    return found
