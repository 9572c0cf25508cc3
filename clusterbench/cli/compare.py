"""`clusterbench compare`: judge the figures of run reports against their
references, or against the samples of other runs."""

from clusterbench.cli import common, numbers
from clusterbench.core.errors import reader_may_leave
from clusterbench.judging import verdict
from clusterbench.judging import view as verdictview
from clusterbench.references import directory as refdir
from clusterbench.results import details as sessionreport
from clusterbench.results import guide, history, judgedsession


def run(args):
    references = refdir.chosen(args.references)
    against = bool(args.against or args.history)
    # Each session with its confirmation runs (results.judgedsession).
    found = judgedsession.load(args.reports, references, against)
    baseline = None
    if args.against:
        baseline = judgedsession.load(args.against, references, against).figures
    elif args.history:
        baseline = history.figures(args.history, common.history_config(args))
    judged, table = judgedsession.judge(
        found,
        baseline,
        tolerance=args.tolerance,
        threshold=args.threshold,
    )
    notes = [] if against else guide.lines(judged, found.cases, references)
    details = ''
    if args.format == 'table' and args.verbose:
        details = sessionreport.text(found.reports, verdictview.terminal_width())
    elif args.format == 'table':
        details = sessionreport.digest(found.reports)
    # Decided before printing: a reader that stops reading (`| head -1`)
    # must not turn a regression into exit 0.
    code = verdict.exit_code(table, args.strict)
    with reader_may_leave():
        common.announce_beside(args, references)
        common.show(table, args, details, notes)
    return code


def add_parser(sub):
    cmp = sub.add_parser(
        'compare',
        help='judge the figures of ReFrame JSON reports against their references',
    )
    cmp.add_argument(
        'reports',
        nargs='+',
        metavar='REPORT',
        help='a ReFrame JSON report, or a session directory of results/; a '
        "session's confirmation runs (confirm/*/report.json beside its "
        'report) are judged with it',
    )
    common.add_verdict_arguments(cmp)
    base = cmp.add_mutually_exclusive_group()
    base.add_argument(
        '--against',
        nargs='+',
        metavar='REPORT',
        help='judge against the samples of other runs instead of the references',
    )
    base.add_argument(
        '--history',
        metavar='QUERY',
        help="judge against stored sessions of ReFrame's results "
        "database, e.g. 'now-7d:now'",
    )
    common.add_history_config(cmp)
    cmp.add_argument(
        '--tolerance',
        type=numbers.Number('a fraction (0.05 is 5 %)', 0, 1),
        default=0.05,
        help='relative band for --against/--history figures that '
        'have no reference (default 0.05)',
    )
    common.add_references(
        cmp,
        help='judge against the references in DIR (default: $RFM_REFERENCE_PREFIX'
        ' if set, else those ReFrame recorded in the report)',
    )
    cmp.set_defaults(func=run)
