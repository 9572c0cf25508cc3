"""`clusterbench paths`: where the checks, site configs and references in use
are (the work is clusterbench.core.paths')."""

from clusterbench.core import paths


def run(args):
    if args.name:
        print(paths.get(args.name))
    else:
        print('\n'.join(paths.lines()))
    return 0


def add_parser(sub):
    parser = sub.add_parser(
        'paths', help='where the checks, site configs and references in use are'
    )
    parser.add_argument(
        'name',
        nargs='?',
        choices=sorted(paths.DIRECTORIES),
        help='print only this directory (for scripts: -c "$(clusterbench paths '
        'checks)")',
    )
    parser.set_defaults(func=run)
