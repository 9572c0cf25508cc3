"""What several subcommands share: the options of a command that judges, the
reference directory they announce and how a table of verdicts is printed."""

import argparse
import sys

from clusterbench.cli import numbers
from clusterbench.core import paths
from clusterbench.judging import verdict
from clusterbench.judging import view as verdictview
from clusterbench.references import directory as refdir
from clusterbench.results import portable

#: Where each default comes from (core.paths): the current directory's, else
#: clusterbench's own, the checkout's or the wheel's (`clusterbench paths`).
OURS = "clusterbench's own (see `clusterbench paths`)"
#: The references in use: one rule (references.directory).
REFERENCES_HELP = (
    'reference directory (default: $RFM_REFERENCE_PREFIX, else reference_data/ '
    f'here when it holds a reference file, else {OURS}; `clusterbench paths '
    'references` prints it)'
)
#: A command that writes references never writes into the wheel's copy.
WRITTEN_REFERENCES_HELP = (
    'reference directory (default: $RFM_REFERENCE_PREFIX, else reference_data/ '
    "here when it holds a reference file, else the checkout's; from a wheel, "
    'reference_data/ here, made when written)'
)
CONFIG_HELP = f'site config (default: site_configs/<system>.py here, else {OURS})'
CHECKS_HELP = f'check directory (default: reframe_checks/ here, else {OURS})'
HISTORY_CONFIG_HELP = (
    'site config whose results database --history reads (default: '
    f'site_configs/local.py here, else {OURS})'
)


def count_of(what, most=None):
    """An argparse type: a whole number of *what*, 0 or more (numbers.count_of)."""
    return numbers.count_of(what, most)


def add_references(parser, help=REFERENCES_HELP):
    """``--references DIR``, the one name of a reference directory; the old
    spelling ``--directory`` still works, unlisted."""
    parser.add_argument('--references', metavar='DIR', help=help)
    parser.add_argument('--directory', dest='references', help=argparse.SUPPRESS)


def add_history_config(parser):
    """``--config``, the site config whose results database ``--history``
    reads; see :func:`history_config`."""
    parser.add_argument('--config', help=HISTORY_CONFIG_HELP)


def history_config(args):
    """The site config of ``--history``: ``--config``, else ``local``'s, the
    current directory's or clusterbench's own (every system's database is
    the same results/results.db unless a site config moves it)."""
    return args.config or paths.system_config('local')


def add_verdict_arguments(parser):
    """--format, --strict, --detection-threshold, -v and --all of every
    command that judges."""
    parser.add_argument('--format', choices=verdictview.FORMATS, default='table')
    parser.add_argument(
        '--strict',
        action='store_true',
        help='also fail (exit 3) on a figure with no reference, FASTER, '
        'DISTURBED or INCONCLUSIVE: for a CI gate',
    )
    parser.add_argument(
        '--detection-threshold',
        dest='threshold',
        type=numbers.CHANGE,
        default=verdict.DETECTION_THRESHOLD,
        metavar='FRACTION',
        help='a figure worse than its reference by this much but inside a '
        'band wider than this on its bad side is INCONCLUSIVE, not pass '
        '(default %(default)s, as `references check --max-tolerance`)',
    )
    # Its old name, kept working; it never was a tolerance.
    parser.add_argument(
        '--max-tolerance', dest='threshold', type=numbers.CHANGE, help=argparse.SUPPRESS
    )
    parser.add_argument(
        '-v',
        '--verbose',
        action='store_true',
        help='every figure in the table, also those that pass; and the '
        "session's run conditions, MPI profiles and node facts in full",
    )
    parser.add_argument(
        '--all',
        dest='show_all',
        action='store_true',
        help='each skipped test on its own line, not one line per reason',
    )


def show(table, args, details='', notes=()):
    """The table in ``args.format``; for a person, *notes* (what to do about
    what it shows) and *details* under it and the summary last, where
    ``tail`` finds it. CSV and JSON stay the table alone."""
    if args.format == 'table':
        notes = [*notes, *portable.no_verdict_lines(table)]
        details = '\n\n'.join(part for part in ('\n'.join(notes), details) if part)
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


def references(args, written=False):
    """The reference directory of this command (one that is *written*: see
    refdir.written), announced as the header line of its text output."""
    directory = (refdir.written if written else refdir.resolve)(args.references)
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
