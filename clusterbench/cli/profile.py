"""`clusterbench profile FILE`: show an MPI profile written by src/mpiprof.

Also a program of its own, with a cross-check against the CG solver's own
MPI counters (here, not in bench/, because it needs the solver's parser):

    python -m clusterbench.cli.profile show mpiprof.json
    python -m clusterbench.cli.profile check mpiprof.json cgsolver.out
"""

import argparse
import sys

from clusterbench.bench import profile
from clusterbench.core import inputfile
from clusterbench.core.errors import ClusterbenchError, parse_and_run
from clusterbench.parsers import cgsolver


def show(args):
    print(profile.format_profile(profile.load(args.profile)))
    return 0


def check(args):
    try:
        text = inputfile.read_bytes(args.output).decode('utf-8', 'replace')
    except OSError as err:
        raise ClusterbenchError(f'{args.output}: cannot read: {err.strerror}') from None
    rows = profile.cross_check(
        profile.load(args.profile), cgsolver.parse(text, args.output)
    )
    for counter, solver, seen, ok in rows:
        print(
            f'{counter:<16} solver {solver:>12}  profile {seen:>12}  '
            f'{"ok" if ok else "MISMATCH"}'
        )
    return 0 if all(ok for *_, ok in rows) else 1


def add_parser(sub):
    prof = sub.add_parser('profile', help='show an MPI profile (mpiprof JSON)')
    prof.add_argument('profile', metavar='file')
    prof.set_defaults(func=show)


def parser():
    ap = argparse.ArgumentParser(
        prog='python -m clusterbench.cli.profile', description='Read mpiprof profiles.'
    )
    sub = ap.add_subparsers(dest='command', required=True)
    shw = sub.add_parser('show', help='MPI share, per-call breakdown, histograms')
    shw.add_argument('profile')
    shw.set_defaults(func=show)
    chk = sub.add_parser('check', help="compare with cgsolver's own MPI counters")
    chk.add_argument('profile')
    chk.add_argument('output', help='cgsolver output (with its CGSOLVER_JSON line)')
    chk.set_defaults(func=check)
    return ap


def main(argv=None):
    return parse_and_run(parser(), 'clusterbench', argv)


if __name__ == '__main__':
    sys.exit(main())
