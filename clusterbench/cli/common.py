"""What several subcommands share: the reference directory they announce and
how a table of verdicts is printed."""

import sys

from clusterbench.judging import view as verdictview
from clusterbench.references import directory as refdir

REFERENCES_HELP = (
    'reference directory (default: $RFM_REFERENCE_PREFIX, else reference_data)'
)


def show(table, args, details=''):
    print(
        verdictview.render(
            table,
            args.format,
            args.strict,
            args.verbose,
            args.show_all,
            details=details,
        )
    )


def references(args):
    """The reference directory of this command, announced as the header line
    of its text output."""
    directory = refdir.resolve(args.references or getattr(args, 'directory', None))
    refdir.announce(directory)
    return directory


def announce_beside(args, directory):
    """Say which references judged a table: a header line above it, or on
    stderr beside CSV/JSON (said only once the table stands, so that an
    error stays one line)."""
    refdir.announce(
        directory or refdir.RECORDED,
        sys.stdout if args.format == 'table' else sys.stderr,
    )
