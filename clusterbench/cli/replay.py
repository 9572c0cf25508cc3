"""`clusterbench replay`: re-judge stored outputs against the current
references without re-running anything."""

from clusterbench.cli import common
from clusterbench.core.errors import reader_may_leave
from clusterbench.judging import verdict
from clusterbench.references import directory as refdir
from clusterbench.results import replay


def run(args):
    directory = refdir.resolve(args.references)
    notes = []
    table = replay.replay(args.path, directory, args.threshold, notes)
    code = verdict.exit_code(table, args.strict)  # whether or not all is read
    with reader_may_leave():
        common.announce_beside(args, directory)
        common.show(table, args, notes=notes)
    return code


def add_parser(sub):
    rep = sub.add_parser(
        'replay',
        help='re-judge stored outputs against the current references '
        'without re-running anything',
    )
    rep.add_argument('path', help='a session directory of results/ or a report')
    common.add_references(rep)
    common.add_verdict_arguments(rep)
    rep.set_defaults(func=run)
