"""``python -m clusterbench.cli.conditions wrap|wait-quiet``, as job scripts
run it: the parser (the measuring is clusterbench.noisyhost.conditions')."""

import argparse
import sys

from clusterbench.cli import numbers
from clusterbench.noisyhost import conditions, hostprobe, quiet


def parser():
    ap = argparse.ArgumentParser(prog='python -m clusterbench.cli.conditions')
    sub = ap.add_subparsers(dest='command', required=True)
    wrap = sub.add_parser('wrap', help='run a launcher and measure around it')
    wrap.add_argument('-o', '--output', required=True)
    wrap.add_argument('--ranks', type=_COUNT, default=1)
    wrap.add_argument(
        '--cpus-per-rank',
        type=_COUNT,
        default=1,
        help="the CPUs each rank was given (its threads): the ranks' share is of "
        'ranks x this',
    )
    wrap.add_argument(
        '--local',
        action='store_true',
        help="the ranks are the launcher's descendants: measure their CPU time",
    )
    wrap.add_argument(
        '--no-probe', action='store_true', help='do not run the host probe first'
    )
    wrap.add_argument(
        '--probe-resources',
        type=_resources,
        default=hostprobe.RESOURCES,
        help="what the host probe measures on the ranks' cores: a comma list of "
        f'{", ".join(hostprobe.RESOURCES)} (all by default; "none": one core only)',
    )
    wrap.add_argument('argv', nargs=argparse.REMAINDER)
    waiting = sub.add_parser('wait-quiet', help='wait until this machine is quiet')
    waiting.add_argument('--timeout', type=numbers.SECONDS, default=60.0)
    waiting.add_argument('--quiet-for', type=numbers.SECONDS, default=3.0)
    return ap


def _resources(text):
    found = tuple(r for r in text.split(',') if r and r != 'none')
    unknown = sorted(set(found) - set(hostprobe.RESOURCES))
    if unknown:
        raise argparse.ArgumentTypeError(
            f'{unknown[0]!r}: one of {", ".join(hostprobe.RESOURCES)} or none'
        )
    return found


#: Ranks, or CPUs of a rank: a million is no node's.
_COUNT = numbers.Number('a number', 1, 10**6, whole=True)


def main(argv=None):
    ap = parser()
    args = ap.parse_args(argv)
    if args.command == 'wait-quiet':
        return 0 if quiet.wait_quiet(args.timeout, args.quiet_for) else 1
    command = args.argv[1:] if args.argv[:1] == ['--'] else args.argv
    if not command:
        ap.error('wrap: no command after --')
    return conditions.run_wrapped(
        command,
        args.output,
        args.ranks,
        args.local,
        probe=not args.no_probe,
        cpus_per_rank=args.cpus_per_rank,
        resources=args.probe_resources,
    )


if __name__ == '__main__':
    sys.exit(main())
