"""The one exception type that the command line turns into a one-line error."""


class ClusterbenchError(Exception):
    """A user-facing error: its message names the file, key or test at fault."""


def run_command(prog, func, args):
    """Run a command's function: a ClusterbenchError is one line, exit 2."""
    import os
    import sys

    try:
        return func(args)
    except ClusterbenchError as err:
        print(f'{prog}: error: {err}', file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader (e.g. `| head`) went away; that is not an error of ours.
        sys.stdout = open(os.devnull, 'w')
        return 0


def parse_and_run(parser, name, argv=None, prog=None):
    """Parse *argv* with *parser* (``prog`` renames it: ``clusterbench NAME``)
    and run the chosen subcommand's ``func`` through :func:`run_command`."""
    if prog:
        parser.prog = prog
    args = parser.parse_args(argv)
    return run_command(prog or name, args.func, args)
