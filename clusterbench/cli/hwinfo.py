"""``python -m clusterbench.cli.hwinfo``, as job scripts run it: the parser
and what it prints (the facts are clusterbench.machine.hwinfo's)."""

import argparse
import os
import sys

from clusterbench.core import jsontext
from clusterbench.machine import hwinfo


def parser():
    ap = argparse.ArgumentParser(
        prog='python -m clusterbench.cli.hwinfo',
        description='Hardware and software facts of this node, as JSON.',
    )
    ap.add_argument('--proc', default='/proc', help='proc root (default /proc)')
    ap.add_argument('--sys', default='/sys', help='sysfs root (default /sys)')
    ap.add_argument('--etc', default='/etc', help='etc root (default /etc)')
    ap.add_argument('--output-dir', help='write DIR/<hostname>.json, once per node')
    ap.add_argument('--summary', action='store_true', help='print the digest as text')
    return ap


def main(argv=None):
    args = parser().parse_args(argv)
    for what in ('proc', 'sys', 'etc'):
        root = getattr(args, what)
        if not os.path.isdir(root):
            print(
                f'clusterbench: error: --{what} {root}: no such directory',
                file=sys.stderr,
            )
            return 2
    facts = hwinfo.collect(proc=args.proc, sys=args.sys, etc=args.etc)
    if args.summary:
        print('\n'.join(hwinfo.format_summary(hwinfo.summary(facts), indent='')))
    elif args.output_dir:
        try:
            hwinfo.write_per_node(args.output_dir, facts)
        except OSError as err:
            raise SystemExit(
                f'clusterbench: error: {args.output_dir}: cannot write: {err.strerror}'
            ) from None
    else:
        print(jsontext.dumps(facts, indent=1))
    return 0


if __name__ == '__main__':
    sys.exit(main())
