"""The one exception type that the command line turns into a one-line error."""


class ClusterbenchError(Exception):
    """A user-facing error: its message names the file, key or test at fault."""
