"""What every collector of node facts shares: the absent marker, the command
runner and the reads that never raise.

A fact that cannot be had is the string ``'absent'``, and the reader's
``absent`` dict says why, keyed by the fact's dotted path.
"""

import os
import subprocess

FORMAT = 'clusterbench-hwinfo/1'
ABSENT = 'absent'


def run_command(argv, timeout=20):
    """(exit code, stdout + stderr) of *argv*, or None if it cannot run.

    LD_PRELOAD is dropped: a profiler preloaded for the benchmark must not
    load into the version queries.
    """
    env = {k: v for k, v in os.environ.items() if k != 'LD_PRELOAD'}
    proc = _completed(argv, timeout, env)
    if proc is None:
        return None
    return proc.returncode, (proc.stdout or '') + (proc.stderr or '')


def last_line_of(argv, timeout, env=None):
    """The last line *argv* printed, if it exited 0 within *timeout*; None
    if it printed nothing, failed, timed out or could not run. For what a
    child is asked so that the caller does not load it itself (a library
    with threads, a module system's environment)."""
    proc = _completed(argv, timeout, env)
    lines = (proc.stdout or '').strip().splitlines() if proc else []
    return lines[-1] if proc and proc.returncode == 0 and lines else None


def _completed(argv, timeout, env):
    """The finished process of *argv*, or None if it could not run or did
    not finish within *timeout*."""
    try:
        return subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError, ValueError):
        return None


def first_line(text):
    for line in (text or '').splitlines():
        if line.strip():
            return line.strip()
    return None


class FactReader:
    """Root-relative reads and commands, each giving a value or an absent fact
    with its reason. Subclasses set ``absent``, ``run`` and ``which``."""

    def missing(self, key, reason):
        self.absent[key] = reason
        return ABSENT

    def read(self, *parts):
        """Stripped text of a file, or None (missing, unreadable, EINVAL)."""
        try:
            with open(os.path.join(*parts), errors='replace') as f:
                return f.read().strip()
        except (OSError, ValueError):
            return None

    def read_int(self, *parts):
        text = self.read(*parts)
        try:
            return int(text) if text is not None else None
        except ValueError:
            return None

    def listdir(self, *parts):
        try:
            return sorted(os.listdir(os.path.join(*parts)))
        except OSError:
            return None

    def command(self, key, argv, pick=None):
        """First line (or *pick* of the output) of a command, else absent."""
        if self.which(argv[0]) is None:
            return self.missing(key, f'{argv[0]} not installed')
        result = self.run(argv)
        if result is None:
            return self.missing(key, f'{" ".join(argv)} could not run')
        code, text = result
        value = pick(text) if pick else first_line(text)
        if code != 0 or not value:
            return self.missing(key, f'{" ".join(argv)} failed (exit {code})')
        return value
