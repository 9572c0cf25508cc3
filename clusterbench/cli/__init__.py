"""The ``clusterbench`` command line: one module per subcommand.

Each module here has ``add_parser(sub)``, which adds its subcommand and sets
``func``, the function that runs it; ``main`` parses and runs it through
``run_command`` (one-line errors). The whole programs ``acceptance``,
``mirror`` and ``testcluster`` (modules here too, each with its own parser,
also run as ``python -m clusterbench.cli.acceptance`` and ``...testcluster``)
get everything after their name. This package only parses and prints: the
work is in the packages it imports.
"""

import argparse
import importlib
import sys

from clusterbench import __version__
from clusterbench.core.errors import run_command, stdout_may_close

#: The modules of the subcommands parsed here, in the order of ``clusterbench -h``.
#: Imported when the parser is made, not with this package, so that
#: ``python -m clusterbench.cli.profile`` runs a module not yet imported.
SUBCOMMANDS = (
    'compare',
    'ab',
    'references',
    'profile',
    'spackenvs',
    'replay',
    'run',
    'baseline',
    'trend',
    'report',
    'paths',
    'site',
)

#: Subcommands that are whole programs of their own: name -> (module, help).
DELEGATED = {
    'acceptance': (
        'clusterbench.cli.acceptance',
        'node and fabric acceptance, and scaling (see: clusterbench acceptance -h)',
    ),
    'mirror': (
        'clusterbench.cli.mirror',
        'download the default benchmark releases into DIR for an air-gapped '
        'site, or --check one (see: clusterbench mirror -h)',
    ),
    'testcluster': (
        'clusterbench.cli.testcluster',
        'the Slurm test cluster box: up, down, status, fault, clear '
        '(see: clusterbench testcluster -h)',
    ),
}


def parser():
    top = argparse.ArgumentParser(
        prog='clusterbench', description='The ``clusterbench`` command line.'
    )
    top.add_argument('--version', action='version', version=__version__)
    sub = top.add_subparsers(dest='command', required=True)
    for name in SUBCOMMANDS:
        importlib.import_module(f'{__name__}.{name}').add_parser(sub)
    for name, (_, what) in DELEGATED.items():
        # Listed here; main() hands everything after the name to the module.
        sub.add_parser(name, help=what, add_help=False)
    return top


def main(argv=None):
    # Before the subcommands are imported: a stream a module keeps as a
    # default (`out=sys.stdout`) is then one that its reader may close.
    with stdout_may_close():
        argv = sys.argv[1:] if argv is None else list(argv)
        if argv and argv[0] in DELEGATED:
            module = importlib.import_module(DELEGATED[argv[0]][0])
            return module.main(argv[1:], prog=f'clusterbench {argv[0]}')
        args = parser().parse_args(argv)
        if getattr(args, 'reframe_args', None) and args.reframe_args[0] == '--':
            args.reframe_args = args.reframe_args[1:]
        return run_command('clusterbench', args.func, args)
