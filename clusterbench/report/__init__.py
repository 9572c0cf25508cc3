"""``clusterbench report``: stored runs -> one self-contained HTML report.

    clusterbench report REPORT... [--history QUERY] [-o results/report.html]

Takes ReFrame JSON reports (or session directories of ``results/``) and/or
sessions of ReFrame's results database, and writes one HTML file with every
plot embedded, plus the data of every plot as CSV in ``<name>-data/`` beside
it. See :mod:`clusterbench.report.assemble` for what is computed.

Imports: core, machine, site, bench, references, judging, results, acceptance
"""

import argparse
import sys
import time

from clusterbench.core.errors import ClusterbenchError, run_command
from clusterbench.references import directory as refdir
from clusterbench.references import lookup as reflookup

DEFAULT_OUTPUT = 'results/report.html'


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
    p.add_argument(
        '--config',
        default='site_configs/local.py',
        help='site config whose results database --history reads',
    )
    p.add_argument(
        '-o',
        '--output',
        default=DEFAULT_OUTPUT,
        help=f'the HTML file to write (default {DEFAULT_OUTPUT}); the CSVs go '
        'to <name>-data/ beside it',
    )
    p.add_argument('--title', default='clusterbench benchmark report')
    p.add_argument(
        '--references',
        metavar='DIR',
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


def run(args, out=sys.stdout):
    """Build and write the report for parsed *args*; return the exit code."""
    from clusterbench.report import assemble, render

    if not args.reports and not args.history:
        raise ClusterbenchError('nothing to report: give REPORT files or --history')
    start = time.perf_counter()
    runs = assemble.load_reports(args.reports)
    if args.history:
        runs += assemble.load_history(args.history, args.config)
    references = refdir.chosen(getattr(args, 'references', None))
    for one in runs if references else ():
        reflookup.rejudge(one.data, references)
    data = assemble.assemble(
        runs,
        title=args.title,
        references=refdir.resolve(getattr(args, 'references', None)),
        baseline=getattr(args, 'baseline', None),
    )
    html, data_dir, plots, _ = render.write(data, args.output)
    elapsed = time.perf_counter() - start
    refdir.announce(references or refdir.RECORDED, out)
    print(
        f'wrote {html} ({len(data.configs)} configuration(s), '
        f'{len(data.benchmarks)} figure(s), {len(plots)} plot(s)) and the '
        f'CSVs in {data_dir}/ in {elapsed:.1f} s',
        file=out,
    )
    return 0


def main(argv=None):
    return run_command('clusterbench', run, parser().parse_args(argv))


if __name__ == '__main__':
    sys.exit(main())
