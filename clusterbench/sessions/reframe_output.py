"""What ReFrame says while it runs: shown as it comes, and read for trouble.

Plain ReFrame treats a check that does not load as a warning: a check file
that does not import, or a test whose construction raised (a malformed
reference file, say), is skipped with a yellow ``WARNING: skipping test ...``
and the session goes on and exits 0 (``Ran 0/0 test case(s)`` is a pass).
``clusterbench run`` counts those lines instead, and a session with any of
them fails. A full disk is noticed the same way: ReFrame only warns when it
cannot write its report or save its log.

ReFrame runs under its keeper (clusterbench.sessions.reaper): it ends with
the session that runs it, however that dies (``kill -9`` included), and
nothing it started outlives it. An orphaned ReFrame, or a job's ranks, would
otherwise go on measuring, unseen, beside whatever runs next.
"""

import re
import subprocess
import sys
from dataclasses import dataclass, field

from clusterbench.sessions import reaper

_COLOUR = re.compile(r'\x1b\[[0-9;]*m')
_NOT_LOADED = re.compile(
    r"^WARNING: skipping (?:incompatible )?test (?:file )?('[^']*'|\"[^\"]*\"):? (.*)$"
)
_PLACE = re.compile(r'^\| (\S+:\d+)$')
_STOPPED = re.compile(r'^ERROR: run session stopped: (.*)$')
_NOT_STORED = re.compile(r'^WARNING: failed to store results in the database: (.*)$')
#: clusterbench.site.httpperflog's warning, through ReFrame's.
_NOT_SENT = re.compile(
    r'^WARNING: could not log performance data for .*?: (perflogs: not sent .*)$'
)
NO_SPACE = 'No space left on device'


@dataclass
class Outcome:
    status: int
    #: One line per check file or test that ReFrame skipped, with its reason.
    not_loaded: list = field(default_factory=list)
    #: Why ReFrame stopped the whole session, if it did.
    stopped: str = ''
    #: ReFrame's lines that say the disk was full.
    no_space: list = field(default_factory=list)
    #: Why ReFrame could not store the session in its results database (the
    #: history), if it could not: it only warns.
    not_stored: str = ''
    #: Why the perflogs did not reach a site's time-series store, if so.
    not_sent: str = ''
    _follows_warning: bool = False

    def read(self, line):
        line = _COLOUR.sub('', line).rstrip()
        place = _PLACE.match(line)
        if place and self._follows_warning:
            # ReFrame puts where a user error happened on the next line.
            self.not_loaded[-1] += f' ({place.group(1)})'
        self._follows_warning = False
        found = _NOT_LOADED.match(line)
        if found:
            reason = found.group(2).removesuffix(" (rerun with '-v' for a backtrace)")
            self.not_loaded.append(f'{found.group(1)}: {reason.rstrip(":")}')
            self._follows_warning = True
        found = _STOPPED.match(line)
        if found:
            self.stopped = found.group(1)
        found = _NOT_STORED.match(line)
        if found:
            self.not_stored = found.group(1)
        found = _NOT_SENT.match(line)
        if found and not self.not_sent:
            self.not_sent = found.group(1)
        if NO_SPACE in line:
            self.no_space.append(line)


def run(argv, out=None, env=None, keep_fds=(), started=None):
    """Run *argv* (a ReFrame command, in environment *env*), copying its
    output to *out* line by line; return its :class:`Outcome`.

    ReFrame and its keeper inherit the descriptors *keep_fds* (the node
    lock's) and end with this process; *started* is called with the
    keeper's pid.
    """
    out = out or sys.stdout
    outcome = Outcome(0)
    with subprocess.Popen(
        reaper.command(argv),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors='replace',
        bufsize=1,
        env=env,
        pass_fds=keep_fds,
        preexec_fn=reaper.dies_with_parent(),
    ) as proc:
        if started:
            started(proc.pid)
        for line in proc.stdout:
            out.write(line)
            out.flush()
            outcome.read(line)
    outcome.status = proc.returncode
    return outcome
