"""ReFrame's keeper: a process between `clusterbench run` and its ReFrame
that outlives ReFrame until every process ReFrame left behind is gone.

ReFrame ends a job of a ``local`` partition by killing the job's process
group, and Open MPI's ranks are in groups of their own: a job cancelled
(ReFrame stopped by a signal) or ended at its time limit left its ranks
running, reparented to init, computing beside the next session's benchmark
once the node lock was free. The keeper is a child subreaper (prctl
``PR_SET_CHILD_SUBREAPER``): what ReFrame's processes leave orphaned becomes
its child. When ReFrame has exited, the keeper ends them (SIGTERM, SIGKILL
after GRACE seconds), says so in one line, and only then exits. It has the
node lock's file open (inherited, as ReFrame has), so the lock is held until
the last of them is gone.

A dying parent sends SIGTERM (``PR_SET_DEATHSIG``): `clusterbench run` to
the keeper, however it dies (``kill -9`` included), and the keeper to
ReFrame. The keeper passes SIGTERM and SIGHUP on to ReFrame, which then
cancels its jobs and stops; a ReFrame that has not ended REFRAME_GRACE
seconds later is killed (SIGKILL): one stuck where a signal cannot reach it
(a perflog post to a server that never answers ignores the SIGTERM) would
otherwise hold the node lock for ever.

It runs as a script (``python -I reaper.py reframe ...``): it imports the
standard library only.
"""

import ctypes
import os
import signal
import subprocess
import sys
import time

#: prctl(2) options.
_PR_SET_DEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36

#: Seconds a leftover process has between SIGTERM and SIGKILL.
GRACE = 5.0
#: Seconds ReFrame has, after the SIGTERM or SIGHUP passed on to it, to cancel
#: its jobs and end before it is killed.
REFRAME_GRACE = 60.0


def _prctl():
    return ctypes.CDLL(None, use_errno=True).prctl


def supported():
    return sys.platform.startswith('linux')


def command(argv):
    """*argv* run under the keeper (Linux; elsewhere *argv* alone)."""
    if not supported():
        return list(argv)
    return [sys.executable, '-I', os.path.abspath(__file__), *argv]


def dies_with_parent(sig=signal.SIGTERM):
    """A ``preexec_fn`` that has the child sent *sig* when this process
    dies (Linux; elsewhere None: the child outlives it)."""
    if not supported():
        return None
    # Looked up here: the child, between fork and exec, only calls it.
    prctl = _prctl()
    parent = os.getpid()

    def preexec():
        prctl(_PR_SET_DEATHSIG, int(sig), 0, 0, 0)
        if os.getppid() != parent:
            # The parent died before the request was made: nobody will send it.
            os.kill(os.getpid(), sig)

    return preexec


def keep(argv):
    """Run *argv*; once it has exited, end what it left; its wait status."""
    _prctl()(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    child, pending = [], []

    def forward(signum, _frame):
        if child:
            _send(child[0], signum)
            _kill_unless_ended(child[0], child[1])
        else:
            pending.append(signum)

    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, forward)
    # The terminal sends Ctrl-C to ReFrame as well: a handler, not SIG_IGN,
    # which ReFrame would inherit.
    signal.signal(signal.SIGINT, lambda *_: None)
    proc = subprocess.Popen(argv, close_fds=False, preexec_fn=dies_with_parent())
    child += [proc.pid, _pidfd(proc.pid)]
    for signum in pending:
        _send(proc.pid, signum)
        _kill_unless_ended(*child)
    status = _wait_for(proc.pid)
    signal.setitimer(signal.ITIMER_REAL, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here
    ended = end_leftovers()
    if ended:
        _say(
            f'clusterbench: ended {len(ended)} process(es) that ReFrame left '
            f'running: {", ".join(ended)}'
        )
    return status


def _pidfd(pid):
    """A descriptor of process *pid* (None where the kernel has none): a
    signal sent through it never reaches another process given its pid."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _kill_unless_ended(pid, pidfd, grace=REFRAME_GRACE):
    """Kill ReFrame (*pid*) if it has not ended *grace* seconds from now (the
    first call counts)."""
    if signal.getitimer(signal.ITIMER_REAL)[0]:
        return

    def kill(_signum, _frame):
        _say(
            f'clusterbench: ReFrame (pid {pid}) had not ended {grace:g} s after '
            'SIGTERM: killed'
        )
        try:
            if pidfd is None:
                os.kill(pid, signal.SIGKILL)
            else:
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        except ProcessLookupError:
            pass

    signal.signal(signal.SIGALRM, kill)
    signal.setitimer(signal.ITIMER_REAL, grace)


def _wait_for(pid):
    """*pid*'s wait status; orphans that exit meanwhile are reaped."""
    while True:
        reaped, status = os.waitpid(-1, 0)
        if reaped == pid:
            return status


def end_leftovers(grace=GRACE):
    """End this process's children: 'name (pid N)' of each."""
    ended, signalled, deadline = [], set(), time.monotonic() + grace
    while True:
        _reap()
        left = children()
        if not left:
            return ended
        late = time.monotonic() > deadline
        for pid, name in left:
            if pid not in signalled:
                signalled.add(pid)
                ended.append(f'{name} (pid {pid})')
                _send(pid, signal.SIGTERM)
            elif late:
                _send(pid, signal.SIGKILL)
        time.sleep(0.1)


def children(parent=None):
    """(pid, name) of the processes whose parent is *parent* (this one)."""
    parent = parent or os.getpid()
    found = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open(f'/proc/{entry}/stat') as f:
                stat = f.read()
        except OSError:
            continue
        # "pid (name) state ppid ...": the name may hold spaces and ')'.
        name = stat[stat.find('(') + 1 : stat.rfind(')')]
        fields = stat[stat.rfind(')') + 1 :].split()
        if len(fields) > 1 and fields[1] == str(parent) and fields[0] != 'Z':
            found.append((int(entry), name))
    return found


def _reap():
    while True:
        try:
            reaped, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if not reaped:
            return


def _send(pid, signum):
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def _say(line):
    try:
        os.write(1, f'{line}\n'.encode())
    except OSError:
        pass  # `clusterbench run` is gone: nobody reads it


def main(argv):
    status = keep(argv)
    if os.WIFSIGNALED(status):
        # Ended by a signal: so is the keeper, for its parent to see.
        sig = os.WTERMSIG(status)
        if sig not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    return os.waitstatus_to_exitcode(status)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
