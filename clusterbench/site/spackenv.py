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

This module is the public face (the command is ``clusterbench spack-envs``,
:mod:`clusterbench.cli.spackenvs`, also ``python -m clusterbench.cli.spackenvs
[DIR]``); the work is in its parts: spackmanifest
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
    'relative',
    'site_config_problems',
    'stack_problems',
    'without_spack',
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


if __name__ == '__main__':
    # The program is the command line's (argparse lives in cli alone).
    print(
        'clusterbench: error: clusterbench.site.spackenv is a library: '
        'run python -m clusterbench.cli.spackenvs',
        file=sys.stderr,
    )
    sys.exit(2)
