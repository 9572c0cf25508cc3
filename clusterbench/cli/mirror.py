"""``clusterbench mirror DIR``: the parser of :mod:`clusterbench.bench.mirror`,
which downloads the default releases for an air-gapped site."""

import argparse

from clusterbench.bench import mirror, sources
from clusterbench.core.errors import parse_and_run


def _run(args):
    wanted = mirror.releases(args)
    if args.check:
        problems = mirror.check(args.directory, wanted)
    else:
        problems = mirror.fill(args.directory, wanted)
    return 1 if problems else 0


class _Parser(argparse.ArgumentParser):
    """``--only NAME...`` takes every word after it, DIR too when DIR comes
    last (``--check --only imb DIR``): a last word that names no release is
    DIR."""

    def parse_known_args(self, args=None, namespace=None):
        parsed, rest = super().parse_known_args(args, namespace)
        only = parsed.only or []
        if parsed.directory is None and len(only) > 1:
            if only[-1] not in sources.DEFAULTS:
                parsed.directory = only.pop()
        if parsed.directory is None:
            self.error('the following arguments are required: DIR')
        return parsed, rest


def parser():
    top = _Parser(
        prog='clusterbench mirror',
        usage='%(prog)s [-h] [--check] [--only NAME [NAME ...]] [--url NAME=URL] '
        '[--sha256 NAME=HEX] DIR',
        description='Download the default benchmark releases into DIR (verified), '
        'or --check a mirror.',
    )
    top.add_argument('directory', metavar='DIR', nargs='?')
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
