"""``clusterbench testcluster up|down|status|fault|clear``: the parser and
what it prints; the work is :mod:`clusterbench.testcluster`'s.

Also ``python -m clusterbench.cli.testcluster``.
"""

import argparse
import sys

from clusterbench.cli import numbers
from clusterbench.core.errors import ClusterbenchError, parse_and_run
from clusterbench.testcluster import cluster, faults, teardown


def _up(args):
    cluster.up(args.nodes, args.run_dir, out=sys.stdout)
    return 0


def _down(args):
    _, leftovers = teardown.down(args.run_dir, out=sys.stdout)
    return 1 if leftovers else 0


def _status(args):
    healthy, text = cluster.status(args.run_dir)
    print(text)
    return 0 if healthy else 1


def _state(args):
    state = cluster.State.load(args.run_dir)
    if state is None:
        raise ClusterbenchError(f'no test cluster recorded in {args.run_dir}')
    return state


def _fault(args):
    options = {}
    if args.kind == 'slow':
        options['quota'] = (
            faults.quota_for(args.slowdown) if args.slowdown else args.quota
        )
    elif args.kind == 'link':
        options['rate'] = args.rate
    elif args.kind == 'loss':
        options['percent'] = args.percent
    faults.inject(_state(args), args.kind, args.node, **options)
    detail = ', '.join(f'{k} {v}' for k, v in options.items())
    print(
        f'{args.kind} fault injected on {args.node}'
        + (f' ({detail})' if detail else '')
    )
    return 0


def _clear(args):
    faults.clear(_state(args), args.node)
    print(f'faults cleared on {args.node or "every node"}')
    return 0


def parser():
    top = argparse.ArgumentParser(prog='clusterbench testcluster', description=__doc__)
    top.add_argument(
        '--run-dir',
        default=cluster.DEFAULT_RUN_DIR,
        help='state, configuration and logs (default: %(default)s, '
        'or $CLUSTERBENCH_BOX_DIR)',
    )
    sub = top.add_subparsers(dest='command', required=True)
    upp = sub.add_parser('up', help='bring up a Slurm cluster of N nodes')
    upp.add_argument(
        '--nodes',
        type=numbers.Number('a number of nodes', 1, cluster.MAX_NODES, whole=True),
        default=2,
    )
    upp.set_defaults(func=_up)
    sub.add_parser('down', help='tear it down, leaving nothing').set_defaults(
        func=_down
    )
    sub.add_parser('status', help='daemons, nodes and faults').set_defaults(
        func=_status
    )
    flt = sub.add_parser('fault', help='inject a fault into one node')
    flt.add_argument('kind', choices=faults.KINDS)
    flt.add_argument('node')
    flt.add_argument(
        '--quota',
        type=numbers.Number('a CPU share', 0, 1, above=True),
        default=0.25,
        help='slow: CPU share',
    )
    flt.add_argument(
        '--slowdown',
        type=numbers.Number('times slower', 1, 1000),
        help='slow: the quota that slows the node this many times at the '
        "host's present load (instead of --quota)",
    )
    flt.add_argument('--rate', default='1gbit', help='link: tc rate')
    flt.add_argument(
        '--percent',
        type=numbers.Number('a percentage', 0, 100, whole=True),
        default=2,
        help='loss: %% dropped',
    )
    flt.set_defaults(func=_fault)
    clr = sub.add_parser('clear', help='undo the faults of a node (or all)')
    clr.add_argument('node', nargs='?')
    clr.set_defaults(func=_clear)
    return top


def main(argv=None, prog=None):
    return parse_and_run(parser(), 'testcluster', argv, prog)


if __name__ == '__main__':
    sys.exit(main())
