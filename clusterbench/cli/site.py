"""`clusterbench site init`: write a site configuration from the cluster
(:mod:`clusterbench.site.siteinit`), then validate it with one tiny
``clusterbench run`` on every partition."""

import os
import sys

from clusterbench.cli import run as runcommand
from clusterbench.core import paths
from clusterbench.sessions import runner
from clusterbench.site import siteinit


def init(args, out=sys.stdout):
    config_path, partitions = siteinit.init(args, out=out)
    if args.no_check:
        return 0
    status = 0
    for part in partitions:
        nodes = siteinit.validation_nodes(part)
        print(
            f'\n== {args.system}:{part.name}: CGSolverCheck, class S, '
            f'{nodes} node(s) ==',
            file=out,
            flush=True,
        )
        session = runner.run(
            config_path,
            paths.get('checks'),
            f'{args.system}:{part.name}',
            os.path.join(os.path.abspath(args.out), 'results'),
            paths.get('references'),
            extra=[*siteinit.VALIDATION, '-S', f'num_nodes={nodes}'],
            out=out,
        )
        status |= runcommand.show(session)
    return status


def add_parser(sub):
    parser = sub.add_parser(
        'site', help='generate a site configuration from the cluster'
    )
    actions = parser.add_subparsers(dest='action', required=True)
    init_ = actions.add_parser(
        'init',
        help='write site_configs/NAME.py and a spack_envs/NAME/ skeleton from the '
        'cluster, then run one tiny check on every partition',
    )
    init_.add_argument('--system', required=True, metavar='NAME')
    init_.add_argument(
        '--scheduler', default='slurm', help='slurm (the only one site init reads)'
    )
    init_.add_argument(
        '--access',
        action='append',
        default=[],
        metavar='OPTION',
        help='a scheduler option every job gets, e.g. --access=--account=NAME '
        '--access=--qos=NAME --access=--reservation=NAME (repeatable)',
    )
    init_.add_argument(
        '--out',
        default='.',
        metavar='DIR',
        help='where site_configs/ and spack_envs/ are (default: the current '
        'directory, e.g. the checkout)',
    )
    init_.add_argument('--force', action='store_true', help='overwrite existing files')
    init_.add_argument(
        '--no-check', action='store_true', help='do not run the validating check'
    )
    init_.set_defaults(func=init)
