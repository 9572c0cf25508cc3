"""``clusterbench mirror DIR``: the parser of :mod:`clusterbench.bench.mirror`,
which downloads the default releases for an air-gapped site."""

import argparse

from clusterbench.bench import mirror
from clusterbench.core.errors import parse_and_run


def _run(args):
    wanted = mirror.releases(args)
    if args.check:
        problems = mirror.check(args.directory, wanted)
    else:
        problems = mirror.fill(args.directory, wanted)
    return 1 if problems else 0


def parser():
    top = argparse.ArgumentParser(
        prog='clusterbench mirror',
        description='Download the default benchmark releases into DIR (verified), '
        'or --check a mirror.',
    )
    top.add_argument('directory', metavar='DIR')
    top.add_argument(
        '--check', action='store_true', help='verify DIR, download nothing'
    )
    top.add_argument('--only', nargs='+', metavar='NAME', help='only these releases')
    top.add_argument('--url', action='append', metavar='NAME=URL')
    top.add_argument('--sha256', action='append', metavar='NAME=HEX')
    top.set_defaults(func=_run)
    return top


def main(argv=None, prog=None):
    return parse_and_run(parser(), 'clusterbench mirror', argv, prog)
