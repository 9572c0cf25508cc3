"""`clusterbench trend`: each figure against the date of its session, with its
reference band and the session where it moved or the drift (SVG, PNG and
CSV). DISTURBED samples are left out of every change point and said; the
references are those of --references, else $RFM_REFERENCE_PREFIX, else the
ones ReFrame recorded in each report (as `compare` judges)."""

import os
import sys

from clusterbench.cli import common, numbers
from clusterbench.core import outputpath
from clusterbench.core.errors import ClusterbenchError, reader_may_leave
from clusterbench.judging import disturbed, trend
from clusterbench.references import directory as refdir
from clusterbench.references import lookup as reflookup
from clusterbench.results import history, replay, runreport


def run(args):
    from clusterbench.report import trendplot

    if not args.reports and not args.history:
        raise ClusterbenchError('no sessions: give --history QUERY and/or REPORT files')
    # Before the sessions are read: STEM.svg, .png and .csv can be made.
    outputpath.check(args.output)
    outputpath.check(f'{args.output}.svg')
    datas = []
    for path in args.reports:
        found = replay.find_report(path)
        datas.append((found, runreport.load(found)))
    if args.history:
        for session in history.sessions(args.history, common.history_config(args)):
            uuid = (session.get('session_info') or {}).get('uuid', '?')
            datas.append((f'stored session {uuid}', session))
    references = refdir.chosen(args.references)
    if references:
        for _, data in datas:
            reflookup.rejudge(data, references)
    left_out = disturbed.LeftOut()
    series = trend.collect(
        history.distinct_sessions(datas), args.pattern, args.min_shift, left_out
    )
    if not series:
        raise ClusterbenchError(
            f'no figure matches {args.pattern!r} in {len(datas)} session(s)'
        )
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    # Written before anything is printed: a reader that stops reading
    # (`| head -1`) does not stop the files.
    written = trendplot.write(series, args.output)
    with reader_may_leave():
        refdir.announce(references or refdir.RECORDED, sys.stdout)
        for line in left_out.lines():
            print(line)
        for one in series:
            print(trend.describe(one))
        for path in written:
            print(f'wrote {path}')
    return 0


def add_parser(sub):
    trd = sub.add_parser(
        'trend',
        help='each figure against the date of its session, with its reference '
        'band and the session where it moved (SVG, PNG and CSV)',
    )
    trd.add_argument(
        'pattern',
        metavar='FIGURE-PATTERN',
        help='regular expression searched in TEST:FIGURE, e.g. gflops or '
        '"CGSolverCheck.*:time"',
    )
    trd.add_argument(
        'reports', nargs='*', metavar='REPORT', help='run reports or session dirs'
    )
    trd.add_argument(
        '--history',
        metavar='QUERY',
        help="sessions of ReFrame's results database, e.g. 'now-30d:now'",
    )
    common.add_history_config(trd)
    trd.add_argument(
        '-o',
        '--output',
        default='results/trend',
        help='stem of the files written: STEM.svg, STEM.png, STEM.csv '
        '(default results/trend)',
    )
    trd.add_argument(
        '--min-shift',
        type=numbers.Number('a fraction (0.05 is 5 %)', 0, 1),
        default=trend.DEFAULT_MIN_SHIFT,
        help='smallest relative move named as a change point (default 0.05)',
    )
    trd.add_argument(
        '--references',
        metavar='DIR',
        help='judge each session against the references in DIR (default: '
        '$RFM_REFERENCE_PREFIX if set, else those ReFrame recorded in the report)',
    )
    trd.set_defaults(func=run)
