"""The node lock serves its waiters in the order they came, and a waiting
session names the session that holds the node now (issue 30, finding 8).

Real processes and the real lock (``flock`` and the queue beside it), in a
lock directory of this test's own; no ReFrame: who measures is not the point.
"""

import os
import subprocess
import sys
import time

from conftest import PROJECT

#: A session: takes the node's lock (waiting for it), says so, and holds it
#: until its release file exists.
SESSION = """
import os, sys, time
from clusterbench.sessions.nodelock import NodeLock
directory, name, release = sys.argv[1:]
lock = NodeLock(directory=directory, host='testnode')
lock.acquire(wait=True)
lock.record(f'pid {os.getpid()}, session {name}')
print(f'took {name}', flush=True)
while not os.path.exists(release):
    time.sleep(0.05)
lock.release()
"""


def wait_for(predicate, what, timeout=120):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f'timed out waiting for {what}'
        time.sleep(0.05)


class Session:
    def __init__(self, tmp, name):
        self.name = name
        self.out, self.err = tmp / f'{name}.out', tmp / f'{name}.err'
        self.release = tmp / f'{name}.release'
        with open(self.out, 'w') as out, open(self.err, 'w') as err:
            self.proc = subprocess.Popen(
                [sys.executable, '-c', SESSION, str(tmp / 'locks'), name]
                + [str(self.release)],
                stdout=out,
                stderr=err,
                env={**os.environ, 'PYTHONPATH': PROJECT},
            )

    def took(self):
        return f'took {self.name}' in self.out.read_text()

    def waiting_for(self, holder):
        return f'(pid {holder.proc.pid}, session {holder.name};' in self.err.read_text()

    def end(self):
        self.release.touch()
        assert self.proc.wait(timeout=60) == 0, self.err.read_text()


def test_waiters_are_served_in_order_and_told_the_current_holder(tmp_path):
    (tmp_path / 'locks').mkdir()
    first = Session(tmp_path, 'first')
    wait_for(first.took, 'the first session to take the node')
    second = Session(tmp_path, 'second')
    wait_for(lambda: second.waiting_for(first), 'the second to wait')
    third = Session(tmp_path, 'third')
    wait_for(lambda: third.waiting_for(first), 'the third to wait')
    fourth = Session(tmp_path, 'fourth')
    wait_for(lambda: fourth.waiting_for(first), 'the fourth to wait')
    first.end()
    # The one that came first is served first; the others are told who holds
    # the node now, not the session that has left.
    wait_for(second.took, 'the second session to take the node')
    wait_for(lambda: third.waiting_for(second), 'the third to name the second')
    wait_for(lambda: fourth.waiting_for(second), 'the fourth to name the second')
    assert not third.took() and not fourth.took()
    second.end()
    wait_for(third.took, 'the third session to take the node')
    assert not fourth.took()
    third.end()
    wait_for(fourth.took, 'the fourth session to take the node')
    fourth.end()
    # Nothing left queued.
    assert os.listdir(tmp_path / 'locks' / 'clusterbench-run-testnode.queue') == []
