"""`clusterbench ab`: judge a change by running A and B in turn (ABBA, BAAB) within
one session, and print each figure's ratio B/A with its 99 % interval."""

import argparse
import shlex
import sys
from collections import Counter

from clusterbench.cli import common, numbers
from clusterbench.core import paths, scriptnames
from clusterbench.core.errors import ClusterbenchError
from clusterbench.judging import paired, stats, verdict, vocabulary
from clusterbench.references import directory as refdir
from clusterbench.sessions import ab

#: What A and B may differ in: option -> the arm's (system, ReFrame args).
CHANGES = {
    'environs': lambda system, v: (system, ['-p', v]),
    'settings': lambda system, v: (system, ['-S', v]),
    'partitions': lambda system, v: (f'{system.split(":")[0]}:{v}', []),
    'nodelists': lambda system, v: (system, ['-J', f'nodelist={v}']),
}
#: What kind of name each value is (core.scriptnames): it reaches a job script.
KINDS = {'environs': 'name', 'partitions': 'name', 'nodelists': 'directive'}
#: Blocks of four ReFrame sessions each: a thousand is days of measuring.
_BLOCKS = numbers.count_of('blocks', 1000)
#: A resolution: ±100 % resolves nothing, 0 never ends.
_RESOLVE = numbers.Number(
    'a resolution (0.06 asks for ±6 %)', 0, 1, above=True, below=True
)


def arms(args):
    given = [name for name in CHANGES if getattr(args, name)]
    if len(given) != 1:
        raise ClusterbenchError(
            'ab: give exactly one of --environs, --settings, --partitions, '
            '--nodelists (what B changes against A)'
        )
    make = CHANGES[given[0]]
    values = getattr(args, given[0])
    if given[0] in KINDS:
        for value in values:
            scriptnames.check(KINDS[given[0]], value, f'--{given[0]}')
    return {
        arm: ab.Arm(*make(args.system, value))
        for arm, value in zip((paired.A, paired.B), values)
    }


def run(args):
    if args.judge:
        prefix = args.judge
    else:
        if args.repeats < 2:
            raise ClusterbenchError(
                f'--repeats {args.repeats}: at least 2 blocks '
                '(one block gives no interval)'
            )
        if args.max_blocks is not None and args.max_blocks < args.repeats:
            raise ClusterbenchError(
                f'--max-blocks {args.max_blocks}: at least --repeats ({args.repeats})'
            )
        extra = list(args.reframe_args)
        prefix = ab.run(
            args.config or paths.system_config(args.system),
            args.checks or paths.default('checks'),
            arms(args),
            args.results,
            refdir.resolve(args.references),
            ab.Blocks(
                args.repeats, args.max_blocks, args.resolve, args.confidence / 100
            ),
            extra=extra,
            # CSV and JSON on stdout are the table alone: ReFrame goes aside.
            out=sys.stdout if args.format == 'table' else sys.stderr,
            wait=not args.no_wait,
        )
    plan, samples, missing, failed = ab.load(prefix)
    rows = paired.judge(samples, args.confidence / 100) + paired.failure_rows(failed)
    code = paired.exit_code(rows, args.strict, args.threshold)
    stopped = ab.interrupted(plan, samples)
    if stopped and args.strict and code == verdict.EXIT_OK:
        code = verdict.EXIT_STRICT  # the session did not do what was asked
    nothing = paired.judged_nothing(rows)
    if nothing and code == verdict.EXIT_OK:
        code = verdict.EXIT_STRICT  # could not judge: never a pass
    if args.format == 'table':
        print(f'\nA/B session: {prefix}')
        for name in (paired.A, paired.B):
            arm = plan['arms'][name]
            print(f'  {name}: --system {arm["system"]} {" ".join(arm["args"])}')
        if plan.get('extra'):
            print(f'  both: {shlex.join(plan["extra"])}')
        ran = f'{stopped} (interrupted)' if stopped else _blocks(plan, samples)
        print(f'  {ran}; {len(plan["legs"])} legs run\n')
    for path in missing:
        print(f'no report: {path} (left out)')
    print(paired.render(rows, args.format))
    if stopped:
        # Last, where `tail` looks; beside CSV and JSON, which stay the table.
        print(
            f'interrupted: {stopped}; the verdicts are of those blocks alone'
            + (' (exit 3 under --strict)' if code != verdict.EXIT_REGRESSION else ''),
            file=sys.stdout if args.format == 'table' else sys.stderr,
        )
    if nothing:
        print(
            _judged_nothing(samples, code),
            file=sys.stdout if args.format == 'table' else sys.stderr,
        )
    return code


def _judged_nothing(samples, code):
    """Why no figure of speed was paired, and what to do: the last line."""
    timed = [s for s in samples if not vocabulary.is_deterministic(s.variable, s.unit)]
    reasons = Counter(s.disturbed for s in timed if s.disturbed)
    if timed and len(reasons) and all(s.disturbed for s in timed):
        why = f'every leg was DISTURBED ({reasons.most_common(1)[0][0]})'
    elif reasons:
        why = 'the DISTURBED legs left fewer than two blocks with both arms'
    else:
        why = 'no figure was measured in both arms'
    return (
        f'nothing judged: {why}; no figure of speed was paired (exit {code}, '
        'could not judge). Run it again on a quiet machine or on nodes no other '
        'job shares: `-- -S wait_quiet=60` waits up to 60 s for quiet before '
        'each leg on a local partition; --max-blocks M measures more blocks'
    )


def _blocks(plan, samples):
    """'10 blocks (ABBA, BAAB in turn), 2 with a DISTURBED leg (measured
    again), until every figure resolved ±6.0 % (at most 32 blocks)'."""
    run = {leg['block'] for leg in plan['legs']}
    disturbed = {s.block for s in samples if s.disturbed}
    most = plan.get('max_blocks', len(run))
    text = f'{len(run)} blocks (ABBA, BAAB in turn)'
    if disturbed:
        text += f', {len(disturbed)} with a DISTURBED leg (measured again)'
    if plan.get('resolve'):
        text += f', until every figure resolved ±{100 * plan["resolve"]:.1f} %'
    if disturbed or plan.get('resolve'):
        text += f' (at most {most} blocks)'
    return text


def add_parser(sub):
    p = sub.add_parser(
        'ab',
        help='validate a change: run A and B in turn (ABBA, BAAB) in one session and '
        'print each figure B/A with its 99 %% interval',
    )
    change = p.add_argument_group('what B changes against A (exactly one)')
    change.add_argument('--environs', nargs=2, metavar=('A', 'B'))
    change.add_argument(
        '--settings', nargs=2, metavar=('A', 'B'), help='two -S NAME=VALUE'
    )
    change.add_argument(
        '--partitions', nargs=2, metavar=('A', 'B'), help='two partitions of --system'
    )
    change.add_argument(
        '--nodelists', nargs=2, metavar=('A', 'B'), help='two Slurm node lists'
    )
    p.add_argument(
        '--repeats',
        type=_BLOCKS,
        default=8,
        metavar='N',
        help='blocks, ABBA and BAAB in turn (default 8; each runs A twice and B twice)',
    )
    p.add_argument(
        '--max-blocks',
        type=_BLOCKS,
        metavar='M',
        help='a block with a DISTURBED leg is measured again, at the end, up to M '
        'blocks in all (default: twice --repeats, four times with --resolve)',
    )
    p.add_argument(
        '--resolve',
        type=_RESOLVE,
        metavar='FRACTION',
        help='after --repeats blocks, run more until every figure resolves a '
        'change of FRACTION (0.06: ±6 %%), or --max-blocks ran',
    )
    p.add_argument(
        '--confidence',
        type=int,
        choices=[round(level * 100) for level in stats.CONFIDENCES],
        default=round(paired.CONFIDENCE * 100),
        metavar='PERCENT',
        help="the interval's confidence: 99 (default; about 1 in 100 unchanged "
        'figures is found changed) or 95 (narrower, 1 in 20)',
    )
    p.add_argument(
        '--judge',
        metavar='DIR',
        help='run nothing: judge the stored A/B session DIR again',
    )
    p.add_argument(
        '--system', default='local', help='system or system:partition (default: local)'
    )
    p.add_argument('--config', help=common.CONFIG_HELP)
    p.add_argument('--checks', help=common.CHECKS_HELP)
    p.add_argument('--results', default='results')
    p.add_argument('--references', metavar='DIR', help=common.REFERENCES_HELP)
    p.add_argument('--format', choices=('table', 'csv', 'json'), default='table')
    p.add_argument(
        '--strict',
        action='store_true',
        help='exit 3 when a figure is not paired or could not resolve '
        '--detection-threshold',
    )
    # One name with `run` and `compare`: the change a figure must resolve.
    p.add_argument(
        '--detection-threshold',
        dest='threshold',
        type=numbers.CHANGE,
        default=verdict.DETECTION_THRESHOLD,
        metavar='FRACTION',
        help='the change each figure must resolve under --strict (default %(default)s)',
    )
    # Its first name, kept working.
    p.add_argument(
        '--max-change', dest='threshold', type=numbers.CHANGE, help=argparse.SUPPRESS
    )
    p.add_argument(
        '--no-wait',
        action='store_true',
        help='refuse, rather than wait, when another session measures on this node',
    )
    p.add_argument(
        'reframe_args',
        nargs=argparse.REMAINDER,
        help='after "--": ReFrame options of both arms, e.g. -n CGSolverCheck',
    )
    p.set_defaults(func=run)
