"""The one exception type that the command line turns into a one-line error,
and what a closed stdout (`| head`) does to a command's exit code."""

import contextlib
import os
import sys


class ClusterbenchError(Exception):
    """A user-facing error: its message names the file, key or test at fault."""


def stdout_gone():
    """Point stdout at /dev/null once its reader went away, as Python's note on
    SIGPIPE says: the flush at exit would fail again otherwise ("Exception
    ignored ... BrokenPipeError" on stderr, and exit 120)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


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
    """Run a command's function: a ClusterbenchError is one line, exit 2."""
    code = 0
    try:
        code = func(args)
        # A closed pipe shows at this flush, not at exit where it would cost
        # the code just returned.
        sys.stdout.flush()
    except ClusterbenchError as err:
        print(f'{prog}: error: {err}', file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader (e.g. `| head`) went away; that is not an error of ours.
        # A command with a verdict prints it inside reader_may_leave(), so
        # this is reached only before a command knew its exit code (or after
        # it returned it, above).
        stdout_gone()
    return code


def parse_and_run(parser, name, argv=None, prog=None):
    """Parse *argv* with *parser* (``prog`` renames it: ``clusterbench NAME``)
    and run the chosen subcommand's ``func`` through :func:`run_command`."""
    if prog:
        parser.prog = prog
    args = parser.parse_args(argv)
    return run_command(prog or name, args.func, args)
