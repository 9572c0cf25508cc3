"""Waiting for a quiet machine before a test (``clusterbench run
--wait-quiet``, the checks' ``wait_quiet`` variable, and ``python -m
clusterbench.cli.conditions wait-quiet``), where the noisy-host profile
is on."""

import time

from clusterbench.noisyhost import conditions


def quiet_now(seconds=1.0, proc='/proc'):
    """(busy share, steal share) of the node over the next *seconds*."""
    first, _ = conditions.read_stat(proc)
    time.sleep(seconds)
    second, _ = conditions.read_stat(proc)
    if not first or not second:
        return 0.0, 0.0
    delta = {k: max(0.0, second[k] - first[k]) for k in conditions.STAT_FIELDS}
    total = sum(delta.values()) or 1.0
    return sum(delta[k] for k in conditions.BUSY) / total, delta['steal'] / total


def wait_quiet(timeout, quiet_for=3.0, max_busy=0.05, max_steal=0.02, say=print):
    """Wait until the machine has been quiet (busy <= *max_busy*, steal <=
    *max_steal*) for *quiet_for* seconds in a row, at most *timeout* seconds.
    Returns True when it was; says so when it gives up."""
    deadline = time.monotonic() + timeout
    quiet_since = None
    busy = steal = 0.0
    while True:
        busy, steal = quiet_now(1.0)
        now = time.monotonic()
        if busy <= max_busy and steal <= max_steal:
            quiet_since = quiet_since or now - 1.0
            if now - quiet_since >= quiet_for:
                return True
        else:
            quiet_since = None
        if now >= deadline:
            say(
                f'clusterbench: the machine was not quiet for {quiet_for:g} s within '
                f'{timeout:g} s (last second: busy {busy:.0%}, steal {steal:.0%}); '
                'running anyway'
            )
            return False
