"""`clusterbench spack-envs`: validate spack_envs/ and every spack.lock
without Spack (the checks are clusterbench.site.spackenv's).

Also ``python -m clusterbench.cli.spackenvs [DIR]``.
"""

import os
import sys

from clusterbench.core import paths
from clusterbench.site import spackenv


def check(directory=None):
    """Print the problems of the Spack environments under *directory* (default:
    the project's) and of the site configs beside it; 1 if any, else 0."""
    root = os.path.abspath(directory) if directory else spackenv.ENVS_ROOT
    unlocked = []
    problems = spackenv.check_tree(root, unlocked)
    for problem in problems:
        print(problem, file=sys.stderr)
    for path in unlocked:
        where = spackenv.relative(path)
        print(
            f'{where}: not concretized yet (no {spackenv.LOCKFILE}): '
            f'spack -e {where} concretize, then commit the lock'
        )
    names = spackenv.find_environments(root) if os.path.isdir(root) else []
    if not problems and names:
        print(f'{len(names)} Spack environments and their locks follow the conventions')
    # The site configs beside the environments (a checkout's, or the wheel's).
    configs_dir = os.path.join(os.path.dirname(root), 'site_configs')
    config_problems, configs = [], {}
    if os.path.isdir(configs_dir):
        config_problems, configs = _site_configs(configs_dir, root)
    if not names and not configs:
        print(f'{root}: no Spack environment and no site config', file=sys.stderr)
    return 1 if problems or config_problems or not (names or configs) else 0


def _site_configs(configs_dir, root):
    """Print what the site configs beside *root* disagree on; return
    (problems, configs)."""
    try:
        configs = spackenv.load_site_configs(configs_dir)
    except spackenv.SpackEnvError as err:
        print(err, file=sys.stderr)
        return [str(err)], {}
    project = os.path.dirname(root)
    problems, _ = spackenv.site_config_problems(configs, root, project)
    problems += spackenv.stack_problems(configs, root, project)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        return problems, configs
    for system in spackenv.without_spack(configs, root):
        print(
            f'{system}: no Spack environments ({spackenv.relative(root)}/{system}/ '
            f'absent): its software comes from modules or the system'
        )
    print(
        f'{len(configs)} site configs and their Spack environments agree '
        f'(MPI, compiler, BLAS, module versions)'
    )
    return problems, configs


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    return check(args[0] if args else None)


def add_parser(sub):
    envs = sub.add_parser(
        'spack-envs', help='validate spack_envs/ and every spack.lock (no Spack needed)'
    )
    envs.add_argument(
        'directory',
        nargs='?',
        help='default: spack_envs/ here (also when absent beside site_configs/: '
        "the site has none), else clusterbench's own (see `clusterbench paths`)",
    )
    envs.set_defaults(func=lambda args: check(_directory(args.directory)))


def _directory(given):
    if given:
        return given
    # A centre's directory with its site configs and no Spack environment.
    if os.path.isdir(paths.DIRECTORIES['site_configs']):
        return paths.DIRECTORIES['spack_envs']
    return paths.default('spack_envs')


if __name__ == '__main__':
    sys.exit(main())
