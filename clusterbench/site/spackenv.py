"""The Spack environments of spack_envs/: parsing, conventions, locks.

Everything here works without Spack: a ``spack.yaml`` is read with its
includes (paths relative to the environment), its ``definitions`` and its
``specs`` (plain specs, ``$name`` references and matrices) are expanded the
way Spack expands them, and the committed ``spack.lock`` (JSON) is checked
against it. Problems are reported one per line, each naming the file and the
key at fault.

Layout: ``spack_envs/<system>/<partition>-<environ>/`` holds the environment
of one ReFrame programming environment of a partition;
``spack_envs/<system>/<partition>/`` one shared by all of a partition's
programming environments (several MPI flavours, ``unify: false``); files
shared between environments live in ``spack_envs/common/`` (or beside the
partitions of a system) and are included, never copied.

This module is the public face and the checker (``python -m
clusterbench.site.spackenv``); the work is in its parts: spackmanifest
(``spack.yaml``), spacklock (``spack.lock``) and spackstacks (site configs
against environments).
"""

import os
import sys

from clusterbench.site.spacklock import find_root, load_lock, lock_problems
from clusterbench.site.spackmanifest import (
    ENVS_ROOT,
    LOCKFILE,
    MANIFEST,
    MPI_PROVIDERS,
    TEMPLATE_SYSTEMS,
    SpackEnvError,
    canonical_spec,
    convention_problems,
    expected_roots,
    find_environments,
    load,
    relative,
)
from clusterbench.site.spackstacks import (
    environment_for,
    load_site_configs,
    site_config_problems,
    stack_problems,
    without_spack,
)

__all__ = [
    'ENVS_ROOT',
    'LOCKFILE',
    'MANIFEST',
    'MPI_PROVIDERS',
    'TEMPLATE_SYSTEMS',
    'SpackEnvError',
    'canonical_spec',
    'check_tree',
    'convention_problems',
    'environment_for',
    'expected_roots',
    'find_environments',
    'find_root',
    'load',
    'load_lock',
    'load_site_configs',
    'lock_problems',
    'main',
    'site_config_problems',
    'stack_problems',
]


def check_tree(root=ENVS_ROOT, unlocked=None):
    """Every convention and lock problem of every environment under *root*.

    An environment with no spack.lock at all (one site init just wrote) is
    no problem if *unlocked* (a list) is given: its path goes there, to be
    said; it is concretized once the site has Spack.
    """
    problems = []
    for name in find_environments(root):
        try:
            env = load(os.path.join(root, name))
        except SpackEnvError as err:
            problems.append(str(err))
            continue
        problems.extend(convention_problems(env))
        if unlocked is not None and not os.path.exists(env.lock_path):
            unlocked.append(env.path)
            continue
        problems.extend(lock_problems(env))
    return problems


def main(argv=None):
    """``python -m clusterbench.site.spackenv [DIR]``: print problems, exit 1 if any."""
    args = sys.argv[1:] if argv is None else argv
    root = os.path.abspath(args[0]) if args else ENVS_ROOT
    unlocked = []
    problems = check_tree(root, unlocked)
    for problem in problems:
        print(problem, file=sys.stderr)
    for path in unlocked:
        print(
            f'{relative(path)}: not concretized yet (no {LOCKFILE}): '
            f'spack -e {relative(path)} concretize, then commit the lock'
        )
    names = find_environments(root) if os.path.isdir(root) else []
    if not problems and names:
        print(f'{len(names)} Spack environments and their locks follow the conventions')
    # The site configs beside the environments (a checkout's, or the wheel's).
    configs_dir = os.path.join(os.path.dirname(root), 'site_configs')
    config_problems, configs = [], {}
    if os.path.isdir(configs_dir):
        try:
            configs = load_site_configs(configs_dir)
        except SpackEnvError as err:
            config_problems = [str(err)]
        else:
            project = os.path.dirname(root)
            config_problems, _ = site_config_problems(configs, root, project)
            config_problems += stack_problems(configs, root, project)
        for problem in config_problems:
            print(problem, file=sys.stderr)
        for system in without_spack(configs, root) if not config_problems else []:
            print(
                f'{system}: no Spack environments ({relative(root)}/{system}/ absent): '
                f'its software comes from modules or the system'
            )
        if not config_problems:
            print(
                f'{len(configs)} site configs and their Spack environments agree '
                f'(MPI, compiler, BLAS, module versions)'
            )
    if not names and not configs:
        print(f'{root}: no Spack environment and no site config', file=sys.stderr)
    return 1 if problems or config_problems or not (names or configs) else 0


if __name__ == '__main__':
    raise SystemExit(main())
