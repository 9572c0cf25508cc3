"""`clusterbench paths`: where the checks, site configs and references in use
are (the work is clusterbench.core.paths'; the references in use are
clusterbench.references.directory's)."""

from clusterbench.core import paths
from clusterbench.references import directory as refdir


def run(args):
    references = refdir.resolve()
    if args.name == 'references':
        # The path alone, for scripts: --references "$(clusterbench paths references)".
        print(references)
    elif args.name == 'sources':
        print(paths.get(args.name))
    elif args.name:
        # What the commands read: the current directory's (a centre's
        # site_configs/ after `site init`) else the project tree's.
        print(paths.default(args.name))
    else:
        shown = {'references': f'{references}  ({references.why})'}
        print('\n'.join(paths.lines(shown)))
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
