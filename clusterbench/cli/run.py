"""`clusterbench run`: run the suite on a system with ReFrame, then print the
verdicts."""

import argparse

from clusterbench.cli.common import REFERENCES_HELP
from clusterbench.core.errors import ClusterbenchError
from clusterbench.judging import selection
from clusterbench.judging import view as verdictview
from clusterbench.references import directory as refdir
from clusterbench.results import confirm, runner


def run(args):
    selection.check_system_name(args.system)
    if args.confirm > confirm.MAX_RUNS:
        raise ClusterbenchError(f'--confirm {args.confirm}: at most {confirm.MAX_RUNS}')
    extra = list(args.reframe_args)
    if args.wait_quiet:
        # The checks' hook waits before each test on a local partition.
        extra = ['-S', f'wait_quiet={args.wait_quiet:g}', *extra]
    return runner.run(
        args.config or f'site_configs/{args.system.split(":")[0]}.py',
        args.checks,
        args.system,
        args.results,
        refdir.resolve(args.references),
        extra=extra,
        strict=args.strict,
        verbose=args.verbose,
        show_all=args.show_all,
        junit=args.junit,
        wait=not args.no_wait,
        threshold=args.threshold,
        confirm_runs=args.confirm,
    )


def _runs(text):
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f'a number of runs, 0 or more, not {text!r}')
    return value


def add_parser(sub):
    run_ = sub.add_parser(
        'run', help='run the suite on a system with ReFrame, then print the verdicts'
    )
    run_.add_argument(
        '--system', default='local', help='system or system:partition (default: local)'
    )
    run_.add_argument(
        '--config', help='site config (default: site_configs/<system>.py)'
    )
    run_.add_argument('--checks', default='reframe_checks')
    run_.add_argument('--results', default='results')
    run_.add_argument(
        '--references',
        metavar='DIR',
        help=REFERENCES_HELP + '; ReFrame is given the same (RFM_REFERENCE_PREFIX)',
    )
    verdictview.add_arguments(run_, formats=False)
    run_.add_argument(
        '--junit',
        metavar='FILE',
        help='also write the verdicts as JUnit XML (one testcase per figure)',
    )
    run_.add_argument(
        '--no-wait',
        action='store_true',
        help='refuse, rather than wait, when another session is measuring on '
        'this node (local partitions)',
    )
    run_.add_argument(
        '--wait-quiet',
        nargs='?',
        type=float,
        const=60.0,
        default=0.0,
        metavar='SECONDS',
        help='before each test on a local partition, wait (at most SECONDS, '
        'default 60) until the machine has been quiet for 3 s; says so when '
        'it gives up',
    )
    run_.add_argument(
        '--confirm',
        type=_runs,
        default=confirm.DEFAULT_RUNS,
        metavar='N',
        help='run a test case with a figure SLOWER or FLAGGED N more '
        'times and judge each figure on all its runs (default '
        f'{confirm.DEFAULT_RUNS}, at most {confirm.MAX_RUNS}; 0: judge the first '
        'run alone)',
    )
    run_.add_argument(
        'reframe_args',
        nargs=argparse.REMAINDER,
        help='after "--": more ReFrame options, e.g. -S hpl_n=4000',
    )
    run_.set_defaults(func=run)
