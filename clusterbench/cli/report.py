"""`clusterbench report`: one self-contained HTML report from run reports
and/or the results database (the work is clusterbench.report's).

Also ``python -m clusterbench.cli.report``.
"""

import argparse
import os
import sys

from clusterbench import report
from clusterbench.cli import common
from clusterbench.core import outputpath
from clusterbench.core.errors import run_command

DEFAULT_OUTPUT = report.DEFAULT_OUTPUT


def add_parser(sub):
    rpt = sub.add_parser(
        'report',
        help='write one self-contained HTML report (plots embedded, the CSV of '
        'every plot beside it) from run reports and/or the results database',
    )
    add_arguments(rpt)
    rpt.set_defaults(func=run)


def run(args):
    # Before anything is read: the page and its CSV folder can be made.
    outputpath.check(args.output)
    stem = os.path.splitext(args.output)[0]
    outputpath.check(f'{stem}-data')
    if args.history:
        args.config = common.history_config(args)
    return report.run(args)


def parser(prog='clusterbench report'):
    p = argparse.ArgumentParser(
        prog=prog,
        description='Write a self-contained HTML report (and the CSV of every '
        'plot) from ReFrame run reports and/or stored sessions.',
    )
    add_arguments(p)
    return p


def add_arguments(p):
    """The options of ``clusterbench report`` (also for the CLI's subparser)."""
    p.add_argument(
        'reports',
        nargs='*',
        metavar='REPORT',
        help='ReFrame JSON run reports, or session directories holding report.json',
    )
    p.add_argument(
        '--history',
        metavar='QUERY',
        help="also take the sessions of ReFrame's results database matching "
        "QUERY, e.g. 'now-7d:now'",
    )
    common.add_history_config(p)
    p.add_argument(
        '-o',
        '--output',
        default=DEFAULT_OUTPUT,
        help=f'the HTML file to write (default {DEFAULT_OUTPUT}); the CSVs go '
        'to <name>-data/ beside it',
    )
    p.add_argument('--title', default='clusterbench benchmark report')
    common.add_references(
        p,
        help='judge against the references in DIR (default: $RFM_REFERENCE_PREFIX'
        ' if set, else those ReFrame recorded in each report)',
    )
    p.add_argument(
        '--baseline',
        metavar='SYSTEM[:PARTITION]',
        help='the system the executive page compares the others with '
        '(default: the first system:partition)',
    )
    return p


def main(argv=None):
    return run_command('clusterbench', run, parser().parse_args(argv))


if __name__ == '__main__':
    sys.exit(main())
