"""The Slurm test cluster: up in seconds, nodes really apart, clear failures,
and a teardown that leaves no process, namespace, cgroup or file behind."""

import os
import socket
import stat
import subprocess
import sys
import time

import pytest
from rfm import captured

from clusterbench.testcluster import cluster, faults, teardown, testing

REASON = testing.unavailable()
pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(REASON is not None, reason=REASON or ''),
]


def cli(*args, env=None, timeout=120):
    return captured(
        [sys.executable, '-m', 'clusterbench.cli.testcluster', *args],
        env=env,
        timeout=timeout,
    )


def nothing_left():
    assert teardown.remaining() == []
    assert not [n for n in os.listdir('/sys/class/net') if n.startswith('cbbox')]
    assert not os.path.exists('/run/netns') or not [
        n for n in os.listdir('/run/netns') if n.startswith('cbbox')
    ]
    assert faults.our_cgroups() == []


def test_two_nodes_up_apart_on_the_network_and_down_clean():
    # How long bring-up takes is no test's business: 93 s on a loaded 2-vCPU
    # host where a quiet one takes seconds.
    with testing.cluster_up(2) as state:
        healthy, text = cluster.status()
        assert healthy, text
        assert cluster.node_states(state) == {'n1': 'idle', 'n2': 'idle'}

        # One job over both nodes: each task has its node's name and address.
        job = subprocess.run(
            ['srun', '-N2', '-n2', 'sh', '-c', 'echo $(hostname) $(ip -4 -o addr)'],
            capture_output=True,
            text=True,
            env=state.env(),
            timeout=60,
            check=False,
        )
        assert job.returncode == 0, job.stderr
        seen = {}
        for line in job.stdout.splitlines():
            name, rest = line.split(' ', 1)
            seen[name] = rest
        assert set(seen) == {'n1', 'n2'}
        assert '10.99.0.11/24' in seen['n1'] and '10.99.0.12/24' not in seen['n1']
        assert '10.99.0.12/24' in seen['n2']

        # Accounting answers (ReFrame's slurm backend polls sacct).
        deadline = time.monotonic() + 20
        while True:
            acct = subprocess.run(
                ['sacct', '-X', '-n', '-P', '-S', 'today', '-o', 'jobid,state'],
                capture_output=True,
                text=True,
                env=state.env(),
                timeout=30,
                check=False,
            )
            if 'COMPLETED' in acct.stdout or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert 'COMPLETED' in acct.stdout, acct.stdout + acct.stderr

        # Something that outlives processes, for teardown to remove: a cgroup.
        faults.inject(state, 'slow', 'n2', quota=0.5)
        assert faults.our_cgroups()
        daemons = dict(state['daemons'])
    # cluster_up asserted a clean teardown; and again, from the outside:
    nothing_left()
    assert not any(cluster.alive(p) for p in daemons.values())
    assert testing.down_seconds and testing.down_seconds[-1] < 30


def test_the_command_line_up_status_fault_down():
    up = cli('up', '--nodes', '1')
    try:
        assert up.returncode == 0, up.stderr
        assert 'test cluster box: 1 node(s)' in up.stdout
        assert 'export SLURM_CONF=' in up.stdout
        status = cli('status')
        assert status.returncode == 0 and 'slurm state idle' in status.stdout
        fault = cli('fault', 'link', 'n1', '--rate', '500mbit')
        assert fault.returncode == 0, fault.stderr
        assert 'fault on n1: link' in cli('status').stdout
        again = cli('up')
        assert again.returncode == 2
        assert again.stderr.startswith('testcluster: error: a test cluster is already')
        assert len(again.stderr.splitlines()) == 1
    finally:
        down = cli('down')
    assert down.returncode == 0, down.stdout + down.stderr
    assert '(clean)' in down.stdout
    nothing_left()
    gone = cli('status')
    assert gone.returncode == 1 and 'no test cluster recorded' in gone.stdout


def test_a_busy_port_fails_bring_up_in_one_line_and_leaves_nothing():
    with socket.socket() as busy:
        busy.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        busy.bind(('0.0.0.0', cluster.CTLD_PORT))
        busy.listen()
        proc = cli('up')
    assert proc.returncode == 2
    assert proc.stderr == (
        f'testcluster: error: TCP port(s) {cluster.CTLD_PORT} in use (slurmctld, '
        'slurmdbd of the test cluster need them)\n'
    )
    nothing_left()


def test_a_daemon_dying_at_start_is_named_and_everything_rolled_back(tmp_path):
    # A slurmctld that refuses to start, first on PATH.
    fake = tmp_path / 'slurmctld'
    fake.write_text(
        '#!/bin/sh\necho "slurmctld: fatal: this controller is broken"\nexit 1\n'
    )
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    t0 = time.monotonic()
    proc = cli('up', env={'PATH': f'{tmp_path}:{os.environ["PATH"]}'})
    assert proc.returncode == 2
    assert proc.stderr == (
        'testcluster: error: slurmctld exited at start (code 1): slurmctld: '
        'fatal: this controller is broken\n'
    )
    assert time.monotonic() - t0 < 60
    nothing_left()
