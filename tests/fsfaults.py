"""Faults at the file operations of a real `clusterbench` command.

Python's audit hooks (PEP 578) are called before every open, rename, removal,
directory creation and listing a process makes. This runs `clusterbench`
with such a hook that watches the operations on one directory and traces
them, kills the process (SIGKILL) before operation K, or pauses it there:

    python tests/fsfaults.py DIRECTORY trace:FILE -- references update ...
    python tests/fsfaults.py DIRECTORY kill:K -- ...
    python tests/fsfaults.py DIRECTORY pause:K:HOLD -- ...

(``pause`` creates HOLD/paused and waits until HOLD/go exists.) Product code
has no hook: the store is stopped where a crash would stop it, between two
of its operations on the file system. A trace line is ``K OPERATION PATH``
(``K rename SRC -> DST`` for a rename), paths relative to DIRECTORY.
"""

import os
import signal
import subprocess
import sys
import time

HERE = os.path.abspath(__file__)
_OPERATIONS = {
    'open': 'open',
    'os.rename': 'rename',
    'os.remove': 'remove',
    'os.mkdir': 'mkdir',
    'os.listdir': 'list',
    'os.scandir': 'list',
}


def command(directory, mode, *args):
    """The argument vector of `clusterbench *args*` with *mode* on *directory*."""
    return [sys.executable, HERE, str(directory), mode, '--', *args]


def run(directory, mode, *args, env=None, wait=True, timeout=300, **kwargs):
    cmd = command(directory, mode, *args)
    if not wait:
        return subprocess.Popen(
            cmd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            **kwargs,
        )
    return subprocess.run(
        cmd, env=env, capture_output=True, text=True, timeout=timeout, **kwargs
    )


def read_trace(path):
    """[(operation, relative paths)] of a trace, in order (K is index + 1)."""
    events = []
    with open(path) as f:
        for line in f:
            _, what, rest = line.rstrip('\n').split(' ', 2)
            events.append((what, tuple(rest.split(' -> '))))
    return events


def paths(trace):
    """The set of paths a trace names so far (empty before it exists)."""
    if not os.path.exists(trace):
        return set()
    return {paths for _, paths in read_trace(trace)}


def renamed_to(events, rel):
    """K of the operation after the rename onto *rel* (the first point at
    which a kill finds it renamed)."""
    (k,) = [
        k for k, (what, paths) in enumerate(events, 1)
        if what == 'rename' and paths[-1] == rel
    ]  # fmt: skip
    return k + 1


def commit_point(events, journal):
    """The first K at which a kill leaves the update committed: the
    operation after the rename of its journal into place."""
    return renamed_to(events, journal)


def transaction(events):
    """(first, last) K between which a kill leaves leftovers: from the
    operation after the first temporary file was opened to the removal of
    the journal."""
    first = next(
        k for k, (what, paths) in enumerate(events, 1)
        if what == 'open' and '.txn-' in paths[0]
    )  # fmt: skip
    last = max(
        k for k, (what, paths) in enumerate(events, 1)
        if what == 'remove' and paths[0].endswith('.update.journal')
    )  # fmt: skip
    return first + 1, last


def one_of_each_kind(events, points, commit):
    """Of the kill *points* (K: before operation K), the first of each kind
    on each side of *commit*: the same operation on another reference file
    (or its provenance) leaves the same kind of state, so a test that kills
    once per kind sees every state the transaction can be left in."""
    seen, chosen = set(), []
    for k in points:
        what, paths = events[k - 1]
        kind = (k >= commit, what, tuple(_role(p) for p in paths))
        if kind not in seen:
            seen.add(kind)
            chosen.append(k)
    return chosen


def _role(path):
    """*path* with the name of its reference file left out."""
    head, _, name = path.rpartition('/')
    if name.endswith('.yaml'):
        name = 'FILE.yaml'
    elif '.yaml.txn-' in name:
        name = '.FILE.yaml.txn'
    return f'{head}/{name}'


class _Faults:
    def __init__(self, directory, mode):
        self.root = os.path.realpath(directory)
        self.mode, _, self.arg = mode.partition(':')
        self.count = 0
        self.busy = False

    def relative(self, path):
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not isinstance(path, str):
            return None  # a file descriptor
        path = os.path.realpath(os.path.join(os.getcwd(), path))
        if path != self.root and not path.startswith(self.root + os.sep):
            return None
        return os.path.relpath(path, self.root)

    def __call__(self, event, args):
        what = _OPERATIONS.get(event)
        if what is None or self.busy:
            return
        paths = [self.relative(a) for a in args[: 2 if what == 'rename' else 1]]
        if not any(paths):
            return
        self.busy = True  # the hook's own files are no operations
        try:
            self.count += 1
            self.act(what, ' -> '.join(p or '?' for p in paths))
        finally:
            self.busy = False

    def act(self, what, paths):
        if self.mode == 'trace':
            with open(self.arg, 'a') as trace:
                trace.write(f'{self.count} {what} {paths}\n')
        elif self.mode == 'kill' and self.count == int(self.arg):
            os.kill(os.getpid(), signal.SIGKILL)
        elif self.mode == 'pause':
            at, _, hold = self.arg.partition(':')
            if self.count == int(at):
                open(os.path.join(hold, 'paused'), 'w').close()
                while not os.path.exists(os.path.join(hold, 'go')):
                    time.sleep(0.02)


def main(argv):
    directory, mode, dashes, *args = argv
    assert dashes == '--', argv
    sys.addaudithook(_Faults(directory, mode))
    from clusterbench import cli

    return cli.main(args)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
