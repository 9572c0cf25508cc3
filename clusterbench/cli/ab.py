"""`clusterbench ab`: validate a change (MPI, compiler flags, BIOS, firmware)
by paired runs of A and B within one session."""

import argparse
import io
import json
import os
import shlex
import sys

from clusterbench.cli import common
from clusterbench.core import csvfile
from clusterbench.core.errors import ClusterbenchError, reader_may_leave
from clusterbench.judging import selection
from clusterbench.judging import view as verdictview
from clusterbench.references import directory as refdir
from clusterbench.results import ab


def _arms(args):
    arms = {}
    for name in ('A', 'B'):
        low = name.lower()
        system = getattr(args, f'{low}_system') or args.system
        selection.check_system_name(system)
        options = shlex.split(getattr(args, low) or '')
        env = getattr(args, f'{low}_env')
        if env:
            options += ['-p', env]
        arms[name] = ab.Arm(name, system, tuple(options))
    same = (arms['A'].system, arms['A'].options) == (
        arms['B'].system,
        arms['B'].options,
    )
    if same and not args.same:
        raise ClusterbenchError(
            'A and B are the same configuration: give --a/--b, --a-env/--b-env '
            'or --a-system/--b-system (or --same for an A/A run)'
        )
    return arms


def run(args):
    directory = args.source
    if not directory:
        arms = _arms(args)

        def config_of(system):
            return args.config or f'site_configs/{system.split(":")[0]}.py'

        directory = ab.run(
            config_of,
            args.checks,
            arms,
            args.results,
            refdir.resolve(args.references),
            args.repeats,
            [a for a in args.reframe_args if a != '--'],
            sys.stderr if args.format != 'table' else sys.stdout,
        )
        print(f'ReFrame output: {os.path.join(directory, ab.LOG)}', file=sys.stderr)
    compared, failures = ab.judge(directory)
    table = ab.rows(compared, failures)
    code = ab.exit_code(table)
    with reader_may_leave():
        print(_render(table, args.format, directory))
    return code


def _render(table, fmt, directory):
    if fmt == 'json':
        return json.dumps(
            {
                'directory': directory,
                'figures': [dict(zip(ab.COLUMNS, r)) for r in table],
            },
            indent=1,
        )
    if fmt == 'csv':
        out = io.StringIO()
        writer = csvfile.writer(out, lineterminator='\n')
        writer.writerow(ab.COLUMNS)
        writer.writerows(table)
        return out.getvalue().rstrip('\n')
    width = verdictview.terminal_width()
    lines = [f'A/B: {directory}']
    widths = [
        max(len(str(r[i])) for r in [ab.COLUMNS, *table])
        for i in range(len(ab.COLUMNS))
    ]
    for row in [ab.COLUMNS, *table]:
        lines.append(
            '  '.join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip()[:width]
        )
    worse = sum(r[9] == ab.WORSE for r in table)
    better = sum(r[9] == ab.BETTER for r in table)
    unresolved = sum(r[9] == ab.UNRESOLVED for r in table)
    failed = sum(r[9] == ab.FAILED for r in table)
    lines.append(
        f'{worse} {ab.WORSE}, {better} {ab.BETTER}, {unresolved} {ab.UNRESOLVED}, '
        f'{failed} FAILED'
    )
    return '\n'.join(lines)


def _repeats(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f'a number of blocks, 1 or more, not {text!r}')
    return value


def add_parser(sub):
    p = sub.add_parser(
        'ab',
        help='is B slower than A? paired runs (A B B A) within one session, '
        "each figure's ratio B/A with its 95 %% interval",
    )
    p.add_argument(
        '--system', default='local', help='system of both arms (default: local)'
    )
    p.add_argument(
        '--a', metavar='OPTIONS', help="ReFrame options of A, e.g. '-S cflags=-O3'"
    )
    p.add_argument('--b', metavar='OPTIONS', help='ReFrame options of B')
    p.add_argument('--a-env', metavar='ENV', help='programming environment of A')
    p.add_argument('--b-env', metavar='ENV', help='programming environment of B')
    p.add_argument('--a-system', metavar='SYSTEM[:PARTITION]', help='system of A')
    p.add_argument('--b-system', metavar='SYSTEM[:PARTITION]', help='system of B')
    p.add_argument(
        '--same', action='store_true', help='allow A and B to be the same (an A/A run)'
    )
    p.add_argument(
        '--repeats',
        type=_repeats,
        default=3,
        metavar='N',
        help='blocks of A B B A (default 3; 2 or more give an interval)',
    )
    p.add_argument('--config', help='site config (default: site_configs/<system>.py)')
    p.add_argument('--checks', default='reframe_checks')
    p.add_argument('--results', default='results')
    p.add_argument(
        '--from',
        dest='source',
        metavar='DIR',
        help='judge a stored comparison again (its directory) instead of running',
    )
    common.add_references(p)
    p.add_argument('--format', choices=('table', 'csv', 'json'), default='table')
    p.add_argument(
        'reframe_args',
        nargs=argparse.REMAINDER,
        help='after "--": ReFrame options of both arms, e.g. -n CGSolverCheck',
    )
    p.set_defaults(func=run)
