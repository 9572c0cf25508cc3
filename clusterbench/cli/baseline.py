"""`clusterbench baseline`: record the references of a new system or CPU kind
from several spaced, interleaved sessions (see docs/baseline.md)."""

import argparse
import os

from clusterbench.cli import common, numbers
from clusterbench.core import paths
from clusterbench.core.errors import ClusterbenchError
from clusterbench.judging import selection
from clusterbench.references import directory as refdir
from clusterbench.references import proposalview
from clusterbench.references import update as refupdate
from clusterbench.results import suggested
from clusterbench.sessions import baseline, runner


def run(args):
    selection.check_system_name(args.system)
    references = refdir.written(args.references)
    given, notes = baseline.reports_of(args.reports or [])
    rounds = args.sessions
    if rounds is None:
        have = baseline.fewest_sessions(given)
        rounds = max(0, baseline.MIN_SESSIONS - have) if given else 3
    if rounds and args.dry_run:
        print(f'baseline: dry run: {rounds} session(s) not run')
        rounds = 0
    # The sessions are judged against the directory written; one made for
    # them goes again unless written: an empty reference_data/ left behind
    # would read as the centre's references.
    made = _missing(references) if rounds else []
    try:
        if rounds:
            os.makedirs(references, exist_ok=True)
        return _baseline(args, references, given, notes, rounds)
    finally:
        for folder in made:
            if os.path.isdir(folder) and not os.listdir(folder):
                os.rmdir(folder)


def _missing(path):
    """The directories that making *path* makes, deepest first."""
    missing = []
    path = os.path.abspath(path)
    while not os.path.lexists(path):
        missing.append(path)
        path = os.path.dirname(path)
    return missing


def _options(args):
    """This baseline's options, which a suggested one repeats."""
    return suggested.of(
        args.system,
        args.config,
        args.checks,
        args.results,
        args.references,
        args.wait_quiet,
        args.reframe_args,
    )


def _baseline(args, references, given, notes, rounds):
    recorded = []
    if rounds:
        _record(args, references, rounds, recorded)
    if not given + recorded:
        raise ClusterbenchError('baseline: no session: give --from SESSION...')
    for line in notes:
        print(line)
    found = baseline.propose(given + recorded, k=args.k, one_sided=args.one_sided)
    print(
        f'\nbaseline: {len(found.sessions)} undisturbed session(s) of '
        f'{len(found.reports)} given or recorded'
    )
    for line in found.left_out.lines():
        print(f'baseline: {line}')
    refdir.announce(references)
    # As `references update --write`: an interrupted update is completed or
    # undone before the references now in place are read.
    done = []
    if not args.dry_run and os.path.isdir(references):
        done = refupdate.repair_first(found.proposals, references)
    for line in proposalview.lines(found.proposals, references):
        print(line)
    why_not = baseline.refusal(found, args.system, options=_options(args))
    if why_not and not found.proposals and not args.dry_run:
        raise ClusterbenchError(why_not)  # whatever --force or --complete-only say
    if why_not and args.complete_only:
        found = _complete_only(found, why_not)
    elif args.dry_run and why_not:
        print(f'\n{why_not}')
    elif why_not and not args.force:
        raise ClusterbenchError(why_not)
    if args.dry_run:
        print('\n(dry run: nothing written)')
        return 0
    # (write() makes the directory: one line where it cannot.)
    written = refupdate.write(
        found.proposals, references, found.reports, results=args.results, notes=done
    )
    for line in done:
        print(line)
    for path in written:
        print(f'wrote {path}')
    for line in baseline.wide_lines(found.proposals, references):
        print(line)
    return 0


def _complete_only(found, why_not):
    """*found* without the figures fewer sessions back, named."""
    short = found.short()
    print(
        f'\nbaseline: --complete-only: {len(short)} figure(s) with fewer than '
        f'{baseline.MIN_SESSIONS} undisturbed sessions stay without a reference '
        '(`no reference` in every run until recorded; sessions in brackets):'
    )
    for line in proposalview.short_lines(short):
        print(f'  {line}')
    found = found.complete()
    if not found.proposals:
        raise ClusterbenchError(why_not)
    return found


def _record(args, references, rounds, recorded):
    config = args.config or paths.system_config(args.system)
    checks = args.checks or paths.default('checks')
    runner.check_inputs(config, checks, [args.system])

    extra = list(args.reframe_args)
    if args.wait_quiet:
        # As `clusterbench run --wait-quiet`: the checks' hook waits.
        extra = ['-S', f'wait_quiet={args.wait_quiet:g}', *extra]

    def one(number):
        made = len(recorded)
        try:
            runner.run(
                config,
                checks,
                args.system,
                args.results,
                references,
                extra=baseline.round_options(number, extra),
                confirm_runs=0,
                reports=recorded,
            )
        except ClusterbenchError as err:
            kept = ' '.join(os.path.dirname(r) for r in recorded[:made])
            keep = f'; give {kept} to --from to keep them' if kept else ''
            raise ClusterbenchError(f'round {number + 1}: {err}{keep}') from None
        if len(recorded) == made:
            raise ClusterbenchError(f'round {number + 1}: no session was recorded')

    def say(line):
        print(line, flush=True)

    baseline.record(rounds, args.spacing, one, say)


def add_parser(sub):
    base = sub.add_parser(
        'baseline',
        help='record the references of a new system or CPU kind: N sessions, '
        'spaced and interleaved, DISTURBED samples left out, a floor per kind '
        'of figure (see docs/baseline.md)',
    )
    base.add_argument(
        '--system', default='local', help='system or system:partition (default: local)'
    )
    base.add_argument('--config', help=common.CONFIG_HELP)
    base.add_argument('--checks', help=common.CHECKS_HELP)
    base.add_argument('--results', default='results')
    base.add_argument(
        '--references',
        metavar='DIR',
        help=common.WRITTEN_REFERENCES_HELP + '; the sessions are judged '
        'against it and the references are written into it',
    )
    base.add_argument(
        '--sessions',
        type=common.count_of('sessions', 1000),
        metavar='N',
        help='sessions to run (default 3; with --from, as many as make 3 '
        'undisturbed sessions)',
    )
    base.add_argument(
        '--spacing',
        type=numbers.Number('minutes', 0, 7 * 24 * 60),
        default=5.0,
        metavar='MINUTES',
        help='minutes between two sessions (default 5)',
    )
    base.add_argument(
        '--wait-quiet',
        nargs='?',
        type=numbers.SECONDS,
        const=60.0,
        default=0.0,
        metavar='SECONDS',
        help='as `clusterbench run --wait-quiet`: before each test, wait (at '
        'most SECONDS, default 60) until the machine has been quiet for 3 s',
    )
    base.add_argument(
        '--from',
        dest='reports',
        nargs='+',
        metavar='SESSION',
        help='sessions recorded earlier that count too: session directories '
        'results/<system>/<stamp>/ or their report.json',
    )
    base.add_argument(
        '--k',
        type=numbers.MULTIPLE,
        default=3.0,
        help='tolerance = max(floor of the kind of figure, k x robust spread '
        'of the session medians, reach to the farthest session median + 3 %%) '
        '(default 3)',
    )
    base.add_argument(
        '--one-sided',
        action='store_true',
        help='bound only the bad side of each figure (see references update)',
    )
    base.add_argument(
        '--force',
        action='store_true',
        help=f'write even when a figure has fewer than {baseline.MIN_SESSIONS} '
        'undisturbed sessions',
    )
    base.add_argument(
        '--complete-only',
        action='store_true',
        help=f'write only the figures that {baseline.MIN_SESSIONS} undisturbed '
        'sessions back; the others stay without a reference, named (on a '
        'shared machine where some figures are often DISTURBED)',
    )
    base.add_argument(
        '--dry-run',
        action='store_true',
        help='run no session and write nothing: show the proposal from the '
        '--from sessions',
    )
    base.add_argument(
        'reframe_args',
        nargs=argparse.REMAINDER,
        help='after "--": more ReFrame options for every session, e.g. -n HPCC',
    )
    base.set_defaults(func=run)
