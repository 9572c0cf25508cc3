"""The one exception type that the command line turns into a one-line error,
and what a closed stdout (`| head`) does to a command's exit code.

A reader that goes away (`clusterbench run | head -1`) ends the printing,
never the command: stdout then points at /dev/null, and the command goes on
to decide its verdict and exits with it. `run`, `ab` and `baseline` thus
measure on to the end (a session is never left half made, and `run | tee`
that loses its tee still fails on a regression). Only a command that
stopped before it decided (a broken pipe that reached :func:`run_command`)
exits with :data:`EXIT_READER_LEFT`, never 0.
"""

import contextlib
import os
import sys

from clusterbench.core.controlchars import escaped

#: The exit code of a command its reader stopped before it decided: a
#: shell's for a death by SIGPIPE.
EXIT_READER_LEFT = 141


class ClusterbenchError(Exception):
    """A user-facing error: its message names the file, key or test at fault."""


def stdout_gone():
    """Point stdout at /dev/null once its reader went away, as Python's note on
    SIGPIPE says: the flush at exit would fail again otherwise ("Exception
    ignored ... BrokenPipeError" on stderr, and exit 120)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


class _ReaderMayLeave:
    """stdout whose reader may go away: the first broken pipe points it at
    /dev/null, and what is written after that is dropped, not raised."""

    def __init__(self, stream):
        self._stream = stream
        self.gone = False

    def write(self, text):
        if self.gone:
            return len(text)
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._leave()
            return len(text)

    def flush(self):
        if self.gone:
            return
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._leave()

    def _leave(self):
        self.gone = True
        stdout_gone()
        # What the stream still buffers now goes to /dev/null.
        with contextlib.suppress(OSError, ValueError):
            self._stream.flush()

    def __getattr__(self, name):
        return getattr(self._stream, name)


@contextlib.contextmanager
def stdout_may_close():
    """Run a command inside this block: its stdout's reader may go away at
    any write (see the module's note); sys.stdout is restored after it."""
    if isinstance(sys.stdout, _ReaderMayLeave):
        yield
        return
    before = sys.stdout
    sys.stdout = _ReaderMayLeave(before)
    try:
        yield
    finally:
        sys.stdout = before


@contextlib.contextmanager
def reader_may_leave():
    """Print inside this block what a reader may stop reading (`| head -1`):
    a closed stdout ends the printing, not the command, whose exit code (a
    verdict's, decided before printing) stands."""
    try:
        yield
        sys.stdout.flush()
    except BrokenPipeError:
        stdout_gone()


def run_command(prog, func, args):
    """Run a command's function: a ClusterbenchError is one line, exit 2
    (its text escaped: it may name a file or key from untrusted input)."""
    decided, code = False, 0
    try:
        with stdout_may_close():
            code = func(args)
            decided = True
            # A closed pipe shows at this flush, not at exit where it would
            # cost the code just returned.
            sys.stdout.flush()
    except ClusterbenchError as err:
        print(f'{prog}: error: {escaped(str(err))}', file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # Written past stdout_may_close() (a stream held from before it):
        # the reader went away, which is no error of ours, but a command
        # stopped before it decided has no verdict to give: never 0.
        stdout_gone()
        if not decided:
            return EXIT_READER_LEFT
    return code


def parse_and_run(parser, name, argv=None, prog=None):
    """Parse *argv* with *parser* (``prog`` renames it: ``clusterbench NAME``)
    and run the chosen subcommand's ``func`` through :func:`run_command`."""
    if prog:
        parser.prog = prog
    args = parser.parse_args(argv)
    return run_command(prog or name, args.func, args)
