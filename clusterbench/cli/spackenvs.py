"""`clusterbench spack-envs`: validate spack_envs/ and every spack.lock
without Spack (the checks are clusterbench.site.spackenv's).

Also ``python -m clusterbench.site.spackenv [DIR]``.
"""

import os
import sys

from clusterbench.site import spackenv


def check(directory=None):
    """Print the problems of the Spack environments under *directory* (default:
    the project's) and of the site configs beside it; 1 if any, else 0."""
    root = os.path.abspath(directory) if directory else spackenv.ENVS_ROOT
    problems = spackenv.check_tree(root)
    for problem in problems:
        print(problem, file=sys.stderr)
    names = spackenv.find_environments(root)
    if not problems:
        print(f'{len(names)} Spack environments and their locks follow the conventions')
    # The site configs beside the environments (a checkout's, or the wheel's).
    configs_dir = os.path.join(os.path.dirname(root), 'site_configs')
    config_problems = []
    if os.path.isdir(configs_dir):
        try:
            configs = spackenv.load_site_configs(configs_dir)
        except spackenv.SpackEnvError as err:
            config_problems = [str(err)]
        else:
            project = os.path.dirname(root)
            config_problems, _ = spackenv.site_config_problems(configs, root, project)
            config_problems += spackenv.stack_problems(configs, root, project)
        for problem in config_problems:
            print(problem, file=sys.stderr)
        if not config_problems:
            print(
                f'{len(configs)} site configs and their Spack environments agree '
                f'(MPI, compiler, BLAS, module versions)'
            )
    return 1 if problems or config_problems or not names else 0


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    return check(args[0] if args else None)


def add_parser(sub):
    envs = sub.add_parser(
        'spack-envs', help='validate spack_envs/ and every spack.lock (no Spack needed)'
    )
    envs.add_argument('directory', nargs='?', default='spack_envs')
    envs.set_defaults(func=lambda args: check(args.directory))
