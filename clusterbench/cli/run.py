"""`clusterbench run`: run the suite on a system with ReFrame, then print the
verdicts."""

import argparse
import sys

from clusterbench.cli import common, numbers
from clusterbench.core import outputpath, paths
from clusterbench.core.errors import ClusterbenchError, reader_may_leave
from clusterbench.judging import selection, verdict
from clusterbench.judging import view as verdictview
from clusterbench.noisyhost import confirm
from clusterbench.references import directory as refdir
from clusterbench.results import details as sessionreport
from clusterbench.results import portable
from clusterbench.sessions import runner, setvars


def run(args):
    selection.check_system_name(args.system)
    if args.confirm > confirm.MAX_RUNS:
        raise ClusterbenchError(f'--confirm {args.confirm}: at most {confirm.MAX_RUNS}')
    if args.junit:
        outputpath.check(args.junit)  # before the session, not after it
    extra = list(args.reframe_args)
    config = args.config or paths.system_config(args.system)
    checks = args.checks or paths.default('checks')
    setvars.check(config, checks, args.system, extra)
    # What runs goes beside a table; a table for a program leaves stdout to it.
    progress = sys.stdout if args.format == 'table' else sys.stderr
    session = runner.run(
        config,
        checks,
        args.system,
        args.results,
        refdir.resolve(args.references),
        extra=extra,
        out=progress,
        wait=not args.no_wait,
        threshold=args.threshold,
        confirm_runs=args.confirm,
        wait_quiet=args.wait_quiet,
        confirm_wait=args.confirm_wait,
    )
    return show(
        session, args.format, args.strict, args.verbose, args.show_all, args.junit
    )


def exit_code(session, strict=False):
    """A regression or failure is 1, also when a check did not load, an
    output was not saved or ReFrame failed a session for more than figures;
    else the verdicts' code (3 for --strict findings)."""
    code = verdict.exit_code(session.table, strict)
    if code == verdict.EXIT_REGRESSION:
        return code
    if (
        session.not_loaded
        or session.no_space
        or session.not_stored
        or session.failed_otherwise
    ):
        return verdict.EXIT_REGRESSION
    return code


def show(session, fmt='table', strict=False, verbose=False, show_all=False, junit=None):
    """Print the verdicts of *session* in *fmt* (and write them to *junit* as
    JUnit XML); return the exit code, decided before anything is printed (a
    reader that stops reading must not turn a regression into exit 0)."""
    table, code = session.table, exit_code(session, strict)
    if junit:
        with open(junit, 'w') as xml:
            xml.write(verdictview.render(table, 'junit', strict) + '\n')
    with reader_may_leave():
        if fmt == 'table':
            _show_table(session, strict, verbose, show_all)
        else:
            print(f'Results: {session.directory}', file=sys.stderr)
            print(verdictview.render(table, fmt, strict, verbose, show_all))
            for line in session.notes:
                print(line, file=sys.stderr)
            if session.not_stored:
                print(
                    f'not stored in the results database: {session.not_stored}',
                    file=sys.stderr,
                )
    return code


def _show_table(session, strict, verbose, show_all):
    """The table, then what the session recorded besides its figures (in
    full with -v, else a one-line digest), and the summary last."""
    print(f'\nResults: {session.directory}\n')
    if verbose:
        details = sessionreport.text(session.reports, verdictview.terminal_width())
    else:
        details = sessionreport.digest(session.reports)
    lines = [*session.notes, *portable.no_verdict_lines(session.table)]
    if session.no_space:
        lines.append(
            f'incomplete: {session.directory}: {runner.NO_SPACE_TEXT} '
            f'({session.no_space})'
        )
    if session.not_stored:
        lines.append(f'not stored in the results database: {session.not_stored}')
    if details:
        lines += ['', details]
    print(
        verdictview.render(
            session.table,
            'table',
            strict,
            verbose,
            show_all,
            not_loaded=session.not_loaded,
            details='\n'.join(lines).strip('\n'),
        )
    )


def add_parser(sub):
    run_ = sub.add_parser(
        'run', help='run the suite on a system with ReFrame, then print the verdicts'
    )
    run_.add_argument(
        '--system', default='local', help='system or system:partition (default: local)'
    )
    run_.add_argument('--config', help=common.CONFIG_HELP)
    run_.add_argument('--checks', help=common.CHECKS_HELP)
    run_.add_argument('--results', default='results')
    common.add_references(
        run_,
        help=common.REFERENCES_HELP
        + '; ReFrame is given the same (RFM_REFERENCE_PREFIX)',
    )
    common.add_verdict_arguments(run_)
    run_.add_argument(
        '--junit',
        metavar='FILE',
        help='also write the verdicts as JUnit XML (one testcase per figure) '
        'beside the table; --format junit prints them instead',
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
        type=numbers.SECONDS,
        const=60.0,
        default=0.0,
        metavar='SECONDS',
        help='before each test on a local partition with the noisy-host '
        'profile, wait (at most SECONDS, default 60) until the machine has been '
        'quiet for 3 s; says so when it gives up',
    )
    run_.add_argument(
        '--confirm',
        type=common.count_of('runs'),
        default=confirm.DEFAULT_RUNS,
        metavar='N',
        help='on a partition with the noisy-host profile, run a test case with '
        'a figure SLOWER or FLAGGED (portable figures too) N more '
        'times, after the other tests, and judge each figure on all its runs '
        f'(default {confirm.DEFAULT_RUNS}, at most {confirm.MAX_RUNS}; 0: judge '
        'the first run alone)',
    )
    run_.add_argument(
        '--confirm-wait',
        type=numbers.SECONDS,
        default=confirm.DEFAULT_WAIT,
        metavar='SECONDS',
        help='before the confirmation runs, wait at most SECONDS until the '
        f'machine has been quiet for 3 s (default {confirm.DEFAULT_WAIT:g}; 0: '
        'do not wait)',
    )
    run_.add_argument(
        'reframe_args',
        nargs=argparse.REMAINDER,
        help='after "--": more ReFrame options, e.g. -S hpl_n=4000',
    )
    run_.set_defaults(func=run)
