"""The test cluster's processes: started, recognised and stopped by PID *and*
start time, so that a reused PID is never taken for one of ours; the
daemons' start-up and their logs; the processes in a node's namespace.

Shared by bring-up and teardown (:mod:`.cluster`) and by fault injection
(:mod:`.faults`); it imports neither.
"""

import contextlib
import os
import signal
import subprocess
import time

from clusterbench.core.errors import ClusterbenchError

#: The cgroup v1 cpu hierarchy (fault injection throttles a node's processes there).
CGROUP_CPU = '/sys/fs/cgroup/cpu'


class BringUpError(ClusterbenchError):
    """The cluster could not be brought up (one line saying why)."""


def _start_time(pid):
    try:
        with open(f'/proc/{pid}/stat') as f:
            stat = f.read()
    except OSError:
        return None
    # The command name may hold spaces and parentheses: split after the last ')'.
    return int(stat.rsplit(')', 1)[1].split()[19])


def is_zombie(pid):
    try:
        with open(f'/proc/{pid}/stat') as f:
            return f.read().rsplit(')', 1)[1].split()[0] == 'Z'
    except OSError:
        return True


def alive(proc):
    """True while the recorded process (``{'pid', 'start'}``) still runs."""
    if not proc or not proc.get('pid'):
        return False
    start = _start_time(proc['pid'])
    return start is not None and start == proc['start'] and not is_zombie(proc['pid'])


def _reap(pid):
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def stop_processes(procs, grace=2.0):
    """SIGTERM the recorded processes still alive, SIGKILL them after *grace*."""
    procs = [p for p in procs if alive(p)]
    for proc in procs:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc['pid'], signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        for proc in procs:
            _reap(proc['pid'])
        procs = [p for p in procs if alive(p)]
        if not procs:
            return
        time.sleep(0.05)
    for proc in procs:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc['pid'], signal.SIGKILL)
        _reap(proc['pid'])
    deadline = time.monotonic() + 2
    while any(alive(p) for p in procs) and time.monotonic() < deadline:
        time.sleep(0.05)


def netns_pids(netns):
    """PIDs of the processes in a node's namespace: its slurmd and its jobs."""
    out = subprocess.run(
        ['ip', 'netns', 'pids', netns], capture_output=True, text=True, check=False
    )
    return [int(p) for p in out.stdout.split()]


def kill_netns_processes(netns, sig=signal.SIGKILL):
    """Signal everything running in *netns* until nothing is left (2 s at most).

    Only processes started there by the cluster's own slurmd live in these
    namespaces; a node that loses them is a node that lost its power.
    """
    deadline = time.monotonic() + 2
    while True:
        pids = netns_pids(netns)
        if not pids or time.monotonic() > deadline:
            return pids
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
            _reap(pid)
        time.sleep(0.05)


def last_error(log):
    """The last error-looking line of a daemon's log (for a one-line failure)."""
    try:
        with open(log, errors='replace') as f:
            lines = [ln.strip() for ln in f if ln.strip()]
    except OSError:
        return 'no log written'
    for line in reversed(lines):
        if any(w in line.lower() for w in ('error', 'fatal', 'failed', 'cannot')):
            return line
    return lines[-1] if lines else 'empty log'


class Starter:
    """Starts the daemons, recording each in the state as soon as it runs."""

    def __init__(self, state):
        self.state = state
        self.run_dir = state.run_dir

    def path(self, *parts):
        return os.path.join(self.run_dir, *parts)

    def spawn(self, key, cmd, log, env=None, user=None):
        with open(log, 'ab') as out:
            proc = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                user=user,
                group=user,
                start_new_session=True,
                close_fds=True,
            )
        start = None
        for _ in range(100):
            start = _start_time(proc.pid)
            if start is not None:
                break
            time.sleep(0.01)
        record = {'pid': proc.pid, 'start': start, 'cmd': cmd[0], 'log': log}
        if key.startswith('slurmd:'):
            self.state.node(key.split(':', 1)[1])['slurmd'] = record
        else:
            self.state.setdefault('daemons', {})[key] = record
        self.state.save()
        return proc

    def wait_for(self, what, ready, procs, log, timeout=20.0):
        deadline = time.monotonic() + timeout
        while not ready():
            for proc in procs:
                if proc.poll() is not None:
                    raise BringUpError(
                        f'{what} exited at start (code {proc.returncode}): '
                        f'{last_error(log)}'
                    )
            if time.monotonic() > deadline:
                raise BringUpError(
                    f'{what} not ready after {timeout:.0f} s: {last_error(log)}'
                )
            time.sleep(0.05)
