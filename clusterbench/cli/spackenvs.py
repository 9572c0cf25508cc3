"""`clusterbench spack-envs`: validate spack_envs/ and every spack.lock
without Spack."""

import os

from clusterbench.core import paths
from clusterbench.site import spackenv


def add_parser(sub):
    envs = sub.add_parser(
        'spack-envs', help='validate spack_envs/ and every spack.lock (no Spack needed)'
    )
    envs.add_argument(
        'directory',
        nargs='?',
        help='default: spack_envs here (also when absent beside site_configs/: '
        'the site has none), else ours',
    )
    envs.set_defaults(func=lambda args: spackenv.main([_directory(args.directory)]))


def _directory(given):
    if given:
        return given
    # A centre's directory with its site configs and no Spack environment.
    if os.path.isdir(paths.DIRECTORIES['site_configs']):
        return paths.DIRECTORIES['spack_envs']
    return paths.default('spack_envs')
