"""The ``clusterbench`` command line."""

import argparse
import os
import sys

from clusterbench import __version__, refdata, runner, runreport, verdict
from clusterbench.errors import ClusterbenchError

FORMATS = {
    'table': verdict.format_table,
    'csv': verdict.format_csv,
    'json': verdict.format_json,
}


def _compare(args):
    figures, failures = [], []
    for path in args.reports:
        figs, fails = runreport.figures_and_failures(path)
        figures += figs
        failures += fails
    table = verdict.rows(figures, failures)
    print(FORMATS[args.format](table))
    if args.format == 'table':
        print(f'\n{verdict.summary(table)}')
    return 1 if verdict.anything_wrong(table) else 0


def _check_references(args):
    for path, tests in refdata.check_directory(args.directory).items():
        figures = sum(tests.values())
        print(f'{path}: {len(tests)} test(s), {figures} reference figure(s): ok')
    return 0


def _run(args):
    return runner.run(
        args.config or f'site_configs/{args.system.split(":")[0]}.py',
        args.checks,
        args.system,
        args.results,
        args.references,
        extra=args.reframe_args,
    )


def parser():
    top = argparse.ArgumentParser(prog='clusterbench', description=__doc__)
    top.add_argument('--version', action='version', version=__version__)
    sub = top.add_subparsers(dest='command', required=True)

    cmp = sub.add_parser(
        'compare',
        help='judge the figures of ReFrame JSON reports against their references',
    )
    cmp.add_argument('reports', nargs='+', metavar='REPORT')
    cmp.add_argument('--format', choices=sorted(FORMATS), default='table')
    cmp.set_defaults(func=_compare)

    refs = sub.add_parser('references', help='work with reference_data/')
    refs_sub = refs.add_subparsers(dest='action', required=True)
    chk = refs_sub.add_parser('check', help='validate every reference file')
    chk.add_argument('directory', nargs='?', default='reference_data')
    chk.set_defaults(func=_check_references)

    run = sub.add_parser(
        'run', help='run the suite on a system with ReFrame, then print the verdicts'
    )
    run.add_argument(
        '--system', default='local', help='system or system:partition (default: local)'
    )
    run.add_argument('--config', help='site config (default: site_configs/<system>.py)')
    run.add_argument('--checks', default='reframe_checks')
    run.add_argument('--results', default='results')
    run.add_argument('--references', default='reference_data')
    run.add_argument(
        'reframe_args',
        nargs=argparse.REMAINDER,
        help='after "--": more ReFrame options, e.g. -S hpl_n=4000',
    )
    run.set_defaults(func=_run)
    return top


def main(argv=None):
    args = parser().parse_args(argv)
    if getattr(args, 'reframe_args', None) and args.reframe_args[0] == '--':
        args.reframe_args = args.reframe_args[1:]
    try:
        return args.func(args)
    except ClusterbenchError as err:
        print(f'clusterbench: error: {err}', file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader (e.g. `| head`) went away; that is not an error of ours.
        sys.stdout = open(os.devnull, 'w')
        return 0


if __name__ == '__main__':
    sys.exit(main())
